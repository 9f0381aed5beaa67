#!/bin/bash
# t5240: dispatch cp -r of a tree whose target does not exist yet, as one tar stream
# on one exec channel (lib/transport/tarcopy.c) against real sshd (tests/testbed):
# both ways with no SFTP session at all (the sshd log says), the same bytes, modes and
# link targets, times with -p, the umask without; into an existing directory the
# tree goes under it, and a second copy merges (over SFTP); --sftp copies file by
# file; --json names every item once under its final name; an unreadable file (a
# FIFO here) is named, the rest copied, exit 1, both ways. A hostile host (an sshd whose
# ForceCommand answers any command with a crafted tar stream: names that climb out,
# an absolute name, a file through a link, a hard link out, a device) gets its sound
# entries copied and the others refused by name, nothing written outside the target,
# exit 1. sshd killed in the middle of an upload and of a download, and Ctrl-C in a
# download: nothing under the target's name, no temporary directory left here.
# Shares t5200's test bed instance (DISPATCH_TESTBED_DIR=/tmp/dispatch-testbed-t5200
# tests/testbed/down removes it).
. "$(dirname "$0")/lib.sh"

. "$TEST_SRCDIR/tests/cli/lib-cp.sh"
cp_testbed
R=t5240.$$
cleanup() {
	own_down cptarkill
	own_down cptarevil
	if [ -f "$TRASH/.pids" ]; then
		while read -r p; do kill "$p" 2>/dev/null; done <"$TRASH/.pids"
	fi
	chmod -R u+rwx "$RHOME/$R" 2>/dev/null
	rm -rf "${RHOME:?}/$R" "$TRASH"
}
trap cleanup EXIT
umask 022
mkdir -p "$RHOME/$R" && chown "$U" "$RHOME/$R"

# "TYPE MODE SIZE PATH -> TARGET" for each entry under $1, sorted; then checksums
listing() {
	(cd "$1" && find . -mindepth 1 -printf '%y %m %s %p -> %l\n' | sort &&
		find . -type f -print0 | sort -z | xargs -0 md5sum)
}
# sftp subsystems an sshd (box1 unless named) started so far
subsystems() { grep -c "subsystem .sftp." "$TB/sshd/${1:-box1}/log" || true; }

test_expect_success 'setup: files of assorted modes, an empty directory, links, odd names' '
	mkdir -p tree/sub/deeper tree/empty &&
	echo hello >tree/a.txt &&
	printf "#!/bin/sh\n" >tree/sub/run.sh && chmod 755 tree/sub/run.sh &&
	head -c 3000000 /dev/urandom >tree/sub/deeper/big.bin &&
	: >tree/zero && chmod 600 tree/zero &&
	echo spaced >"tree/with space" && echo nl >"tree/new
line" && chmod 640 "tree/with space" &&
	ln -s sub/run.sh tree/link && ln -s /nonexistent/target tree/dangling &&
	chmod 750 tree/sub && chmod 700 tree/empty &&
	for i in $(seq 1 40); do echo "$i" >tree/sub/f$i; done &&
	touch -d "2001-02-03 04:05:06" tree/a.txt tree/sub/f7 &&
	listing tree >want
'

test_expect_success 'a new tree up and down as one tar stream: no SFTP session, the same tree (-p)' '
	before=$(subsystems) &&
	dispatch cp -rp tree box1:$R/up &&
	dispatch cp -rp box1:$R/up back &&
	test "$(subsystems)" = "$before" &&
	listing "$RHOME/$R/up" >got && test_cmp want got &&
	listing back >got && test_cmp want got &&
	test "$(stat -c %Y "$RHOME/$R/up/sub/f7")" = "$(stat -c %Y tree/sub/f7)" &&
	test "$(stat -c %Y back/a.txt)" = "$(stat -c %Y tree/a.txt)" &&
	ls -a "$RHOME/$R" >names && ! grep -q dispatch-cp names &&
	ls -a . >names && ! grep -q dispatch-cp names
'

test_expect_success 'without -p: no times kept, the umask applies (a 0666 file is 0644 here)' '
	chmod 666 "$RHOME/$R/up/zero" &&
	dispatch cp -r box1:$R/up plain &&
	test "$(stat -c %a plain/zero)" = 644 &&
	test "$(stat -c %Y plain/a.txt)" != "$(stat -c %Y tree/a.txt)"
'

test_expect_success 'into an existing directory the tree goes under it; a second copy merges over SFTP' '
	before=$(subsystems) &&
	dispatch cp -r tree box1:$R/up &&
	test "$(subsystems)" = "$before" &&
	listing "$RHOME/$R/up/tree" >got && test_cmp want got &&
	echo extra >"$RHOME/$R/up/tree/extra" &&
	dispatch cp -r tree box1:$R/up &&
	test "$(subsystems)" -gt "$before" &&
	test "$(cat "$RHOME/$R/up/tree/extra")" = extra
'

test_expect_success '--sftp copies a new tree file by file' '
	before=$(subsystems) &&
	dispatch cp -rp --sftp tree box1:$R/bysftp &&
	test "$(subsystems)" -gt "$before" &&
	listing "$RHOME/$R/bysftp" >got && test_cmp want got
'

test_expect_success '--json names every item once, under its final name' '
	dispatch --json cp -r tree box1:$R/json >up.json &&
	dispatch --json cp -r box1:$R/json jdown >down.json &&
	python3 - <<-\EOF
	import json, os
	n = sum(len(fs) + len(ds) for _, ds, fs in os.walk("tree")) + 1
	for f, top in (("up.json", "'"$R"'/json"), ("down.json", "jdown")):
	    d = json.load(open(f))
	    dests = [i["dest"] for i in d["items"]]
	    assert len(dests) == len(set(dests)) == n, (f, len(dests), n)
	    assert top in dests and top + "/sub/deeper/big.bin" in dests, (f, dests)
	    assert not any("//" in x for x in dests), dests
	    nf = sum(os.path.isfile(os.path.join(r, f)) and not os.path.islink(os.path.join(r, f))
	             for r, _, fs in os.walk("tree") for f in fs)
	    assert d["files"] == sum(i["type"] == "file" for i in d["items"]) == nf, (d["files"], nf)
	EOF
'

test_expect_success 'an unreadable file in a tree: named once, the rest copied, exit 1, both ways' '
	chmod 000 "$RHOME/$R/up/sub/f3" &&
	test_expect_code 1 dispatch cp -r box1:$R/up part 2>err &&
	chmod 644 "$RHOME/$R/up/sub/f3" &&
	test_grep "f3: Cannot open: Permission denied" err &&
	test "$(wc -l <err)" = 1 &&
	test ! -e part/sub/f3 && test -f part/sub/f4 && test -f part/sub/deeper/big.bin &&
	cp -r tree tree2 && mkfifo tree2/sub/pipe &&
	test_expect_code 1 dispatch cp -r tree2 box1:$R/partup 2>err &&
	test_grep "skipping .tree2/sub/pipe.: not a regular file" err &&
	test "$(wc -l <err)" = 1 &&
	test ! -e "$RHOME/$R/partup/sub/pipe" && test -f "$RHOME/$R/partup/sub/f6" &&
	test_expect_code 1 dispatch cp -r tree2 box1:$R/partup 2>/dev/null &&
	test_expect_code 1 dispatch cp -r tree2 box1:$R/partup 2>err &&
	test_grep "skipping .tree2/sub/pipe.: not a regular file" err &&
	test "$(wc -l <err)" = 1
'

EPORT=$((DISPATCH_TESTBED_PORT_BASE + 35))
OUTSIDE=$TRASH/outside

test_expect_success 'a hostile host: climbing, absolute, through-a-link names refused, nothing outside' '
	mkdir "$OUTSIDE" &&
	cat >"$RHOME/$R/evil.py" <<-EOF &&
	import io, sys, tarfile
	out = tarfile.open(fileobj=sys.stdout.buffer, mode="w|", format=tarfile.GNU_FORMAT)
	def add(name, kind=tarfile.REGTYPE, data=b"", link=""):
	    t = tarfile.TarInfo(name)
	    t.type, t.size, t.linkname, t.mode = kind, len(data), link, 0o644
	    out.addfile(t, io.BytesIO(data) if data else None)
	add("./dir", tarfile.DIRTYPE)
	add("./dir/ok.txt", data=b"ok\n")
	add("./dir/../escape.txt", data=b"x")
	add("/abs.txt", data=b"x")
	add("./other/x", data=b"x")
	add("./dir/link", tarfile.SYMTYPE, link="$OUTSIDE")
	add("./dir/link/pwned", data=b"x")
	add("./dir/hl", tarfile.LNKTYPE, link="../../etc/passwd")
	add("./dir/dev", tarfile.CHRTYPE)
	add("./dir/\033[31mred", data=b"red\n")
	out.close()
	EOF
	chown "$U" "$RHOME/$R/evil.py" &&
	own_sshd cptarevil $EPORT "ForceCommand python3 $RHOME/$R/evil.py" &&
	mkdir evil && cd evil &&
	test_expect_code 1 dispatch -F ../kcfg cp -r cptarevil:dir out 2>../err &&
	cd .. &&
	test "$(cat evil/out/ok.txt)" = ok && test "$(cat "evil/out/$(printf "\033")[31mred")" = red &&
	test -L evil/out/link &&
	ls -A "$OUTSIDE" >outside.ls && test_must_be_empty outside.ls &&
	test ! -e evil/escape.txt && test ! -e evil/abs.txt && test ! -e evil/other &&
	test ! -e evil/out/hl && test ! -e evil/out/dev &&
	test_grep "refusing ../dir/../escape.txt" err &&
	test_grep "refusing ./abs.txt" err &&
	test_grep "refusing ../other/x" err &&
	test_grep "cannot copy .cptarevil:dir/link/pwned.: a name on its way is not a directory" err &&
	test_grep "skipping .cptarevil:dir/dev.: not a regular file" err &&
	test_grep "cannot write .hl." err &&
	! grep -q "$(printf "\033")" err &&
	ls -A evil >names && test "$(cat names)" = out
'
own_down cptarevil

KPORT=$((DISPATCH_TESTBED_PORT_BASE + 36))
# cut: stop COMMAND-PATTERN once WHEN (a test) holds, kill the sshd, go on; its exit
# status in rc
cut_copy() {
	for i in $(seq 1500); do
		eval "$2" && break
		sleep 0.02
	done &&
	pkill -STOP -f -- "$1" &&
	own_down cptarkill &&
	pkill -CONT -f -- "$1"
}

test_expect_success 'sshd killed in a tar upload, then in a tar download: exit 255, no target, nothing left here' '
	own_sshd cptarkill $KPORT &&
	mkdir kill && for i in $(seq 100 179); do head -c 2000000 /dev/urandom >kill/m$i; done &&
	{ dispatch -F kcfg cp -r kill cptarkill:$R/kill 2>err & } &&
	pid=$! &&
	cut_copy "-F kcfg cp -r kill cptarkill:" "ls -a $RHOME/$R | grep -q dispatch-cp" &&
	rc=0 && { wait $pid || rc=$?; } &&
	{ test "$rc" = 255 || { echo "rc=$rc"; cat err; false; }; } &&
	test ! -e "$RHOME/$R/kill" &&
	cp -r kill "$RHOME/$R/kill" && chown -R "$U" "$RHOME/$R/kill" &&
	own_sshd cptarkill $KPORT &&
	{ dispatch -F kcfg cp -r cptarkill:$R/kill kdown 2>err & } &&
	pid=$! &&
	cut_copy "-F kcfg cp -r cptarkill:" "ls -a | grep -q dispatch-cp" &&
	rc=0 && { wait $pid || rc=$?; } &&
	{ test "$rc" = 255 || { echo "rc=$rc"; cat err; false; }; } &&
	test ! -e kdown && ls -a >names && ! grep -q dispatch-cp names
'

# Ctrl-C: through bench/delay-relay.py (200 ms round trips), so that the download
# of 160 MB is seconds long and the signal finds it in the middle.
DPORT=$((DISPATCH_TESTBED_PORT_BASE + 37))
test_expect_success 'Ctrl-C in a tar download: exit 130, no target, nothing left here' '
	own_sshd cptarkill $KPORT &&
	{ python3 "$TEST_SRCDIR/bench/delay-relay.py" $DPORT 127.0.0.1:$KPORT 200 >relay.out 2>&1 </dev/null & } &&
	echo $! >>"$TRASH/.pids" &&
	for i in $(seq 250); do grep -q ready relay.out && break; sleep 0.02; done &&
	printf "Host slowkill\n\tHostName 127.0.0.1\n\tPort %s\n\tHostKeyAlias [127.0.0.1]:%s\n" \
		$DPORT $KPORT >slowcfg &&
	sed "s/^Host cptarkill\$/Host cptarkill slowkill/" kcfg >>slowcfg &&
	{ dispatch -F slowcfg cp -r slowkill:$R/kill kint 2>err & } &&
	pid=$! &&
	for i in $(seq 1500); do
		ls -a | grep -q dispatch-cp && break
		sleep 0.02
	done &&
	pkill -INT -f -- "-F slowcfg cp -r slowkill:" &&
	rc=0 && { wait $pid || rc=$?; } &&
	{ test "$rc" = 130 || { echo "rc=$rc"; cat err; false; }; } &&
	test ! -e kint && ls -a >names && ! grep -q dispatch-cp names
'

test_done
