#!/bin/bash
# t5250: dispatch cp of one large file over several connections at once
# (lib/transport/sftp_ranges.c) against real sshd (tests/testbed), through
# tests/cli/lib-cut-relay.py where the test needs the connections slowed, refused or
# cut: the same bytes both ways, one login per connection and --json saying how many
# moved bytes; --connections 1, a file under --split-size and a read-only upload on
# one; a server that takes one login at a time gets the file whole on one; the second
# connection cut in the middle, both ways: exit 255, nothing under the final name, no
# temporary file left on either side; the copy's own connection cut: exit 255,
# nothing under the final name; Ctrl-C in a download and in an upload (alone too):
# exit 130, one line, nothing left; a full disk on either side: the file named, exit
# 1, nothing left.
# Shares t5200's test bed instance (DISPATCH_TESTBED_DIR=/tmp/dispatch-testbed-t5200
# tests/testbed/down removes it).
. "$(dirname "$0")/lib.sh"

. "$TEST_SRCDIR/tests/cli/lib-cp.sh"
cp_testbed
R=t5250.$$
CPORT=$((DISPATCH_TESTBED_PORT_BASE + 38))
cleanup() {
	own_down cpconn
	pkill -f -- "lib-cut-relay.py $TRASH/" 2>/dev/null
	umount "$RHOME/$R/full" 2>/dev/null
	umount "$TRASH/full" 2>/dev/null
	rm -rf "${RHOME:?}/$R"
}
trap cleanup EXIT
umask 022
mkdir -p "$RHOME/$R" && chown "$U" "$RHOME/$R"

# logins cpconn's sshd took so far
logins() { grep -c "Accepted publickey for $U" "$TB/sshd/cpconn/log" || true; }
# relay NAME RATE MAX CUT CUT_AFTER: lib-cut-relay.py in front of cpconn, as host NAME
# of kcfg; its notes in NAME.relay
relay() {
	{ python3 "$TEST_SRCDIR/tests/cli/lib-cut-relay.py" "$TRASH/$1.port" $CPORT "$2" "$3" "$4" "$5" 120 \
		>/dev/null 2>"$1.relay" </dev/null & } &&
	for _ in $(seq 500); do test -s "$1.port" && break; sleep 0.02; done &&
	printf "Host %s\n\tHostName 127.0.0.1\n\tPort %s\n\tHostKeyAlias [127.0.0.1]:%s\n" \
		"$1" "$(cat "$1.port")" $CPORT >"$1.cfg" &&
	sed "s/^Host cpconn\$/Host cpconn $1/" kcfg >>"$1.cfg"
}
# connections JSON: how many connections moved the one file of a cp --json
connections() {
	python3 -c "import json, sys; d = json.load(open(sys.argv[1])); print(d[\"items\"][0][\"connections\"])" "$1"
}
# no temporary file beside the copies, on either side
nothing_left() {
	ls -A "$RHOME/$R" . | { grep "\.dispatch-" || true; } >left
	test_must_be_empty left
}

test_expect_success 'setup: an sshd of its own, a file of 40 MiB' '
	own_sshd cpconn $CPORT &&
	head -c 41943040 /dev/urandom >big &&
	chmod 640 big && touch -d "2001-02-03 04:05:06" big
'

# 8 MiB/s each way per connection: alone the first would take 5 s, so the second,
# up in well under that, takes half of what is left.
test_expect_success 'up and down over two connections: the same bytes, two logins each, -p kept' '
	relay slow 8388608 0 0 0 &&
	before=$(logins) &&
	dispatch -F slow.cfg --json cp -p --split-size 8M --connections 2 big slow:$R/big >up.json &&
	test "$(logins)" = $((before + 2)) &&
	cmp big "$RHOME/$R/big" &&
	test "$(connections up.json)" = 2 &&
	test "$(stat -c %a.%Y "$RHOME/$R/big")" = "$(stat -c %a.%Y big)" &&
	dispatch -F slow.cfg --json cp -p --split-size 8M slow:$R/big down >down.json &&
	test "$(logins)" = $((before + 4)) &&
	cmp big down &&
	test "$(connections down.json)" = 2 &&
	test "$(stat -c %a.%Y down)" = "$(stat -c %a.%Y big)" &&
	nothing_left
'

test_expect_success '--connections 1, and a file under --split-size: one login' '
	before=$(logins) &&
	dispatch -F kcfg --json cp --connections 1 --split-size 8M big cpconn:$R/one >one.json &&
	test "$(connections one.json)" = 1 &&
	dispatch -F kcfg --json cp cpconn:$R/one small >small.json &&
	test "$(connections small.json)" = 1 &&
	test "$(logins)" = $((before + 2)) &&
	cmp big "$RHOME/$R/one" && cmp big small &&
	nothing_left
'

test_expect_success 'a read-only file up: one connection (the others could not open it to write)' '
	head -c 20971520 big >ro && chmod 444 ro &&
	dispatch -F kcfg --json cp --split-size 8M ro cpconn:$R/ro >ro.json &&
	test "$(connections ro.json)" = 1 &&
	cmp ro "$RHOME/$R/ro" &&
	test "$(stat -c %a "$RHOME/$R/ro")" = 444 &&
	nothing_left
'

test_expect_success 'a server that takes one login at a time: the file whole over one connection' '
	relay single 8388608 1 0 0 &&
	dispatch -F single.cfg --json cp --split-size 8M big single:$R/single >single.json &&
	cmp big "$RHOME/$R/single" &&
	test "$(connections single.json)" = 1 &&
	test_grep "conn 2: refused" single.relay &&
	nothing_left
'

test_expect_success 'one connection cut in the middle of an upload, then of a download: 255, nothing left' '
	relay cutup 8388608 0 2 4194304 &&
	test_expect_code 255 dispatch -F cutup.cfg cp --split-size 8M big cutup:$R/cut 2>err &&
	test_grep "cut" cutup.relay &&
	test_grep "connection to .cutup. lost" err &&
	test ! -e "$RHOME/$R/cut" &&
	nothing_left &&
	relay cutdown 8388608 0 2 4194304 &&
	test_expect_code 255 dispatch -F cutdown.cfg cp --split-size 8M cutdown:$R/big cut 2>err &&
	test_grep "cut" cutdown.relay &&
	test_grep "connection to .cutdown. lost" err &&
	test ! -e cut &&
	nothing_left
'

# The copy's own connection cut: the temporary file there cannot be removed (nothing
# reaches the host any more), but nothing has the final name.
test_expect_success 'the copy s own connection cut in an upload: 255, nothing under the final name' '
	relay cutfirst 8388608 0 1 8388608 &&
	test_expect_code 255 dispatch -F cutfirst.cfg cp --split-size 8M big cutfirst:$R/cut1 2>err &&
	test_grep "cut" cutfirst.relay &&
	test_grep "connection to .cutfirst. lost" err &&
	test ! -e "$RHOME/$R/cut1" &&
	rm -f "$RHOME/$R"/.cut1.dispatch-* &&
	nothing_left
'

test_expect_success 'Ctrl-C in a download over two connections: 130, nothing left' '
	relay slowint 4194304 0 0 0 &&
	{ dispatch -F slowint.cfg cp --split-size 8M slowint:$R/big int 2>err & } &&
	pid=$! &&
	for _ in $(seq 1000); do grep -q "conn 2" slowint.relay && break; sleep 0.02; done &&
	sleep 1 &&
	pkill -INT -f -- "-F slowint.cfg cp --split-size 8M" &&
	rc=0 && { wait $pid || rc=$?; } &&
	{ test "$rc" = 130 || { echo "rc=$rc"; cat err; false; }; } &&
	test_grep "interrupted" err &&
	test "$(wc -l <err)" = 1 &&
	test ! -e int &&
	nothing_left
'

# Interrupted, an upload waits for what libssh2 was given to write (a request sent in
# part would swallow the close and the removal that follow: the copy hung until the
# connection died, the temporary file left there), as one file and over two
# connections.
test_expect_success 'Ctrl-C in an upload, alone and over two connections: 130, nothing left there' '
	relay slowup 4194304 0 0 0 &&
	for split in 1G 8M; do
		{ dispatch -F slowup.cfg cp --split-size $split big slowup:$R/intup 2>err & } &&
		pid=$! &&
		for _ in $(seq 1000); do
			ls -A "$RHOME/$R" | grep -q "^\.intup\.dispatch-" && break
			sleep 0.02
		done &&
		sleep 1 &&
		pkill -INT -f -- "-F slowup.cfg cp --split-size $split" &&
		rc=0 && { wait $pid || rc=$?; } &&
		{ test "$rc" = 130 || { echo "rc=$rc"; cat err; false; }; } &&
		test_grep "interrupted" err && test "$(wc -l <err)" = 1 &&
		test ! -e "$RHOME/$R/intup" &&
		nothing_left || return 1
	done
'

test_expect_success 'a full disk, here and there: the file named, exit 1, nothing left' '
	mkdir full "$RHOME/$R/full" &&
	mount -t tmpfs -o size=16m tmpfs full &&
	mount -t tmpfs -o size=16m tmpfs "$RHOME/$R/full" && chown "$U" "$RHOME/$R/full" &&
	test_expect_code 1 dispatch -F kcfg cp --split-size 8M cpconn:$R/big full/big 2>err &&
	test_grep "cannot write .*big.*No space left on device" err &&
	ls -A full >left && test_must_be_empty left &&
	test_expect_code 1 dispatch -F kcfg cp --split-size 8M big cpconn:$R/full/big 2>err &&
	test_grep "cannot write .cpconn:$R/full/\.big\.dispatch-" err &&
	ls -A "$RHOME/$R/full" >left && test_must_be_empty left
'

test_done
