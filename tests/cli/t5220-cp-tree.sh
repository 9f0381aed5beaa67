#!/bin/bash
# t5220: dispatch cp of trees with several files in flight (lib/transport/sftp.c's
# pool of SFTP channels; --sftp where a new tree would go as a tar stream, t5240) against real sshd (tests/testbed): many small files of
# assorted modes with a few large ones among them, both ways, byte for byte, each
# file once, modes kept with -p (a mode either umask drops too), through more than
# one channel; -p's times on a tree; through ProxyJump; an unreadable file in the middle
# of a download and an unwritable directory in the middle of an upload (the error
# names each file, the others arrive, exit 1, no temporary file left); servers that
# allow 1 and 3 sessions (MaxSessions: the copy uses what it gets); and sshd killed
# in the middle of a tree upload (exit 255, every file under its final name
# complete); --update copies what changed only and --delete removes what the source
# lacks (a symbolic link removed, never followed), both ways. Shares t5200's test bed instance (DISPATCH_TESTBED_DIR=
# /tmp/dispatch-testbed-t5200 tests/testbed/down removes it).
. "$(dirname "$0")/lib.sh"

. "$TEST_SRCDIR/tests/cli/lib-cp.sh"
cp_testbed
R=t5220.$$
trap 'chmod -R u+rwx "$RHOME/$R" 2>/dev/null; dispatch run -H box1 -- "rm -rf $R" >/dev/null 2>&1; rm -rf "$TRASH"' EXIT
dispatch run -H box1 -- "mkdir $R"

# "TYPE MODE SIZE PATH" for each entry under $1, sorted; then each file's checksum
listing() {
	(cd "$1" && find . -mindepth 1 -printf '%y %m %s %p\n' | sort &&
		find . -type f -print0 | sort -z | xargs -0 md5sum)
}
rlisting() {
	dispatch run -H box1 -- "cd $1 && find . -mindepth 1 -printf '%y %m %s %p\n' | sort &&
		find . -type f -print0 | sort -z | xargs -0 md5sum"
}
# sftp subsystems an sshd (box1 unless named) started so far
subsystems() { grep -c "subsystem .sftp." "$TB/sshd/${1:-box1}/log" || true; }

test_expect_success 'setup: 400 files in 4 directories, modes of all kinds, 4 large ones among them' '
	python3 - tree <<-\EOF &&
	import os, random, sys
	root = sys.argv[1]
	rnd = random.Random(5220)
	modes = [0o644, 0o755, 0o600, 0o640, 0o444, 0o700, 0o664, 0o777, 0o750, 0o604]
	for i in range(400):
	    d = os.path.join(root, "d%d" % (i % 4), "sub" if i % 7 == 0 else "")
	    os.makedirs(d, exist_ok=True)
	    p = os.path.join(d, "f%03d" % i)
	    size = 3000000 + rnd.randint(0, 99999) if i in (37, 150, 151, 333) else rnd.randint(0, 9000)
	    with open(p, "wb") as f:
	        f.write(rnd.randbytes(size))
	    os.chmod(p, modes[i % len(modes)])
	EOF
	chmod 555 tree/d2/sub && chmod 750 tree/d1 &&
	test "$(find tree -type f | wc -l)" = 400
'

test_expect_success 'a tree up: every file once, the same bytes and modes (-p), on several channels' '
	before=$(subsystems) &&
	dispatch cp -rp --sftp tree box1:$R/up &&
	after=$(subsystems) &&
	listing tree >want && rlisting $R/up >got && test_cmp want got &&
	{ test $((after - before)) -gt 2 || { echo "only $((after - before)) SFTP channels"; false; }; }
'

test_expect_success 'the tree down: every file once, the same bytes and modes' '
	dispatch cp -rp box1:$R/up back &&
	listing back >got && test_cmp want got
'

test_expect_success '-p keeps the times of every file in a tree, both ways' '
	find tree -type f -exec touch -d "2001-02-03 04:05:06" {} + &&
	dispatch cp -rp tree box1:$R/timed &&
	dispatch run -H box1 -- "find $R/timed -type f -printf \"%T@ %m\n\"" | sort | uniq -c >got &&
	find tree -type f -printf "%T@ %m\n" | sort | uniq -c >want.t && test_cmp want.t got &&
	dispatch cp -rp box1:$R/timed timed &&
	find timed -type f -printf "%T@ %m\n" | sort | uniq -c >got && test_cmp want.t got
'

test_expect_success '--update copies only what changed, both ways; --delete removes what the source lacks, never through a link' '
	rm -rf inc && cp -a tree inc &&
	dispatch --json cp -rp -u inc box1:$R >u1.json &&
	dispatch --json cp -rp -u inc box1:$R >u2.json &&
	python3 -c "import json; d = json.load(open(\"u2.json\")); assert d[\"files\"] == 0 and d[\"skipped\"] == 400, (d[\"files\"], d[\"skipped\"])" &&
	f=$(cd inc && find . -type f | sort | head -n 10) &&
	for x in $f; do echo changed >>"inc/$x" || exit 1; done &&
	g=$(cd inc && find . -type f | sort | sed -n 11p) &&
	rm "inc/$g" &&
	dispatch run -H box1 -- "mkdir -p $R/outside && echo keep >$R/outside/precious && ln -s ../../outside $R/inc/d0/trap && mkdir $R/inc/extra && echo x >$R/inc/extra/y" &&
	test_expect_code 2 dispatch cp -r --delete inc box1:$R 2>err &&
	test_grep "give --update too" err &&
	dispatch --json -v cp -rp -u --delete inc box1:$R >u3.json 2>u3.err &&
	python3 - "$g" <<-\EOF &&
	import json, sys
	d = json.load(open("u3.json"))
	assert d["files"] == 10 and d["skipped"] == 389, (d["files"], d["skipped"])
	gone = sorted(x.split("/inc/", 1)[1] for x in d["deleted"])
	assert gone == sorted(["d0/trap", "extra", "extra/y", sys.argv[1][2:]]), gone
	EOF
	test_grep "deleted symlink .*/inc/d0/trap" u3.err &&
	test "$(dispatch run -H box1 -- "cat $R/outside/precious")" = keep &&
	listing inc >want.inc && rlisting $R/inc >got && test_cmp want.inc got &&
	mkdir down &&
	dispatch --json cp -rp -u box1:$R/inc down >d1.json &&
	dispatch --json cp -rp -u box1:$R/inc down >d2.json &&
	python3 -c "import json; d = json.load(open(\"d2.json\")); assert d[\"files\"] == 0 and d[\"skipped\"] == 399, d[\"skipped\"]" &&
	echo stray >down/inc/stray &&
	dispatch --json cp -rp -u --delete box1:$R/inc down >d3.json &&
	python3 -c "import json; d = json.load(open(\"d3.json\")); assert [x.rsplit(\"/\", 1)[1] for x in d[\"deleted\"]] == [\"stray\"], d[\"deleted\"]" &&
	listing down/inc >got && test_cmp want.inc got
'

test_expect_success 'through ProxyJump both ways' '
	dispatch cp -rp tree inner:$R/via &&
	dispatch cp -rp inner:$R/via via &&
	listing via >got && test_cmp want got
'

test_expect_success 'an unreadable file in the middle of a download: named, the others copied, exit 1' '
	chmod 000 "$RHOME/$R/up/d1/f201" &&
	test_expect_code 1 dispatch cp -rp --sftp box1:$R/up part 2>err &&
	chmod 644 "$RHOME/$R/up/d1/f201" &&
	test_grep "cannot open .box1:$R/up/d1/f201.: Permission denied" err &&
	test "$(wc -l <err)" = 1 &&
	test ! -e part/d1/f201 &&
	listing tree | grep -v "d1/f201\$" >want.part && listing part >got && test_cmp want.part got &&
	find part -name ".*.dispatch-*" >tmps && test_must_be_empty tmps
'

test_expect_success 'an unwritable directory in the middle of an upload: each file named, exit 1' '
	dispatch run -H box1 -- "mkdir -p $R/up2/tree/d3/sub && chmod 555 $R/up2/tree/d3/sub" &&
	test_expect_code 1 dispatch cp -r tree box1:$R/up2 2>err &&
	find tree/d3/sub -type f | sort >want.names &&
	sed -n "s|^dispatch: cannot create a file beside .box1:$R/up2/\(.*\).: Permission denied\$|\1|p" err |
		sort >got.names &&
	test_cmp want.names got.names &&
	test "$(wc -l <err)" = "$(wc -l <want.names)" &&
	chmod -R u+rwx "$RHOME/$R/up2" &&
	(cd tree && find . -path ./d3/sub -prune -o -type f -print | sort) >want.files &&
	(cd "$RHOME/$R/up2/tree" && find . -path ./d3/sub -prune -o -type f -print | sort) >got.files &&
	test_cmp want.files got.files &&
	find "$RHOME/$R/up2" -name ".*.dispatch-*" >tmps && test_must_be_empty tmps
'

# sshds of our own (as t5200's): a server that allows fewer sessions, and one
# killed in the middle of a tree upload.
test_expect_success 'a server that refuses more sessions: the copy goes on with those it gave' '
	own_sshd cpmax1 $((DISPATCH_TESTBED_PORT_BASE + 32)) "MaxSessions 1" &&
	own_sshd cpmax3 $((DISPATCH_TESTBED_PORT_BASE + 33)) "MaxSessions 3" &&
	for h in cpmax1 cpmax3; do
		before=$(subsystems $h) &&
		dispatch -F kcfg cp -rp --sftp tree $h:$R/$h &&
		dispatch -F kcfg cp -rp --sftp $h:$R/$h $h.back &&
		listing $h.back >got && test_cmp want got &&
		echo "$h $(($(subsystems $h) - before))" >>channels ||
		return 1
	done &&
	printf "cpmax1 2\ncpmax3 6\n" >want.channels && test_cmp want.channels channels
'
own_down cpmax1
own_down cpmax3

# sshd killed in the middle of a tree upload.
KPORT=$((DISPATCH_TESTBED_PORT_BASE + 31))

test_expect_success 'sshd killed during a tree upload: exit 255, every file in place complete' '
	own_sshd cptree $KPORT &&
	mkdir kill && for i in $(seq 100 199); do head -c 2000000 /dev/urandom >kill/m$i; done &&
	{ dispatch -F kcfg cp -r --sftp kill cptree:$R/kill 2>err & } &&
	pid=$! &&
	for i in $(seq 1500); do
		test "$(ls "$RHOME/$R/kill" 2>/dev/null | wc -l)" -ge 5 && break
		sleep 0.02
	done &&
	# the client stopped first, so that the kill finds the upload in the middle
	# however fast the machine (at 20 files, a quiet machine had sent all 100
	# before sshd went down), then woken to find the connection gone
	pkill -STOP -f -- "-F kcfg cp -r --sftp kill cptree:" &&
	own_down cptree &&
	pkill -CONT -f -- "-F kcfg cp -r --sftp kill cptree:" &&
	rc=0 && { wait $pid || rc=$?; } &&
	{ test "$rc" = 255 || { echo "rc=$rc"; cat err; false; }; } &&
	test_grep "connection to .cptree. lost" err &&
	n=0 && for f in "$RHOME/$R/kill"/m*; do
		test -e "$f" || continue
		cmp "$f" "kill/${f##*/}" || { echo "$f is not complete"; false; } || return 1
		n=$((n + 1))
	done &&
	{ test "$n" -lt 100 || { echo "all 100 arrived before the kill"; false; }; }
'
own_down cptree

test_done
