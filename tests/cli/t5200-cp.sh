#!/bin/bash
# t5200: dispatch cp against real sshd (tests/testbed): a tree with an executable, a
# restricted directory and symlinks there and back (contents, modes, link targets),
# a file of several copy buffers with an odd size both ways (bytes and mode),
# through ProxyJump too, overwriting, several sources, missing sources, --json, the
# progress line only on a terminal, and sshd killed in the middle of a copy each way
# (a clear error, exit 255, no partial file under the final name). Usage errors run
# without the testbed. Its own testbed instance (shared with t5210, left up for
# reuse): DISPATCH_TESTBED_DIR=/tmp/dispatch-testbed-t5200 tests/testbed/down
# removes it.
. "$(dirname "$0")/lib.sh"

test_expect_success 'no remote side is a usage error' '
	test_expect_code 2 dispatch cp a b 2>err &&
	test_grep "no remote side" err
'

test_expect_success 'two remote sides are a usage error' '
	test_expect_code 2 dispatch cp h1:a h2:b 2>err &&
	test_grep "both remote" err &&
	test_expect_code 2 dispatch cp h1:a h2:b . 2>err &&
	test_grep "sources on two hosts" err
'

test_expect_success 'paths with a colon after a slash, or starting with ./ or /, are local' '
	test_expect_code 2 dispatch cp ./a:b /x:y 2>err &&
	test_grep "no remote side" err &&
	test_expect_code 2 dispatch cp dir/a:b c 2>err &&
	test_grep "no remote side" err
'

. "$TEST_SRCDIR/tests/cli/lib-cp.sh"
cp_testbed
# Remote paths of this run: under the test user's home, which every testbed host
# shares (one file system), removed at the end.
R=t5200.$$
trap 'dispatch run -H box1 -- "rm -rf $R" >/dev/null 2>&1; rm -rf "$TRASH"' EXIT
dispatch run -H box1 -- "mkdir $R"

# "TYPE MODE PATH -> TARGET" for each entry under $1, sorted
listing() {
	(cd "$1" && find . -mindepth 1 -printf '%y %m %p -> %l\n' | sort)
}

test_expect_success 'setup: a tree with an executable, a restricted directory and symlinks' '
	mkdir -p tree/sub/deeper tree/empty &&
	echo hello >tree/a.txt &&
	printf "#!/bin/sh\necho run\n" >tree/sub/run.sh && chmod 755 tree/sub/run.sh &&
	head -c 3000000 /dev/urandom >tree/sub/deeper/big.bin &&
	: >tree/zero && chmod 600 tree/zero &&
	ln -s sub/run.sh tree/link && ln -s /nonexistent/target tree/dangling &&
	chmod 750 tree/sub && chmod 700 tree/empty
'

test_expect_success 'round trip of a tree: contents, modes and link targets' '
	dispatch cp -r tree box1:$R/up &&
	dispatch run -H box1 -- "cd $R/up && find . -mindepth 1 -printf \"%y %m %p -> %l\n\" | sort" >remote &&
	listing tree >want && test_cmp want remote &&
	dispatch cp -r box1:$R/up back &&
	listing back >got && test_cmp want got &&
	diff -r --no-dereference tree back &&
	test "$(./back/sub/run.sh)" = run
'

test_expect_success 'a file of several copy buffers and an odd size: the same bytes and mode both ways' '
	head -c 7340033 /dev/urandom >odd.bin && chmod 640 odd.bin &&
	dispatch cp odd.bin box1:$R/odd.bin &&
	dispatch run -H box1 -- "stat -c %a $R/odd.bin; cksum <$R/odd.bin" >remote &&
	{ echo 640 && cksum <odd.bin; } >want && test_cmp want remote &&
	dispatch cp box1:$R/odd.bin odd.back &&
	cmp odd.bin odd.back && test "$(stat -c %a odd.back)" = 640
'

test_expect_success 'through ProxyJump, and into an existing directory under its own name' '
	dispatch cp -r tree inner:$R &&
	mkdir via && dispatch cp -r inner:$R/tree via &&
	listing tree >want && listing via/tree >got && test_cmp want got
'

test_expect_success 'no temporary files are left behind' '
	dispatch run -H box1 -- "find $R -name \".*.dispatch-*\"" >tmps &&
	test_must_be_empty tmps &&
	find back via -name ".*.dispatch-*" >tmps && test_must_be_empty tmps
'

test_expect_success 'an existing file is replaced, remote and local, and ~ is the remote home' '
	echo one >f && dispatch cp f "box1:~/$R/f" &&
	echo two >f && dispatch cp f "box1:$R/f" &&
	dispatch run -H box1 -- cat $R/f >got && echo two >want && test_cmp want got &&
	echo old >g && dispatch cp "box1:~/$R/f" g && test_cmp want g
'

test_expect_success 'several sources into a directory; not into a file' '
	echo 1 >s1 && echo 2 >s2 &&
	dispatch cp s1 s2 box1:$R/up &&
	dispatch run -H box1 -- "cat $R/up/s1 $R/up/s2" >got && printf "1\n2\n" >want && test_cmp want got &&
	test_expect_code 1 dispatch cp s1 s2 box1:$R/f 2>err &&
	test_grep "target .box1:$R/f. is not a directory" err
'

test_expect_success 'a missing source: exit 4, the others still copied' '
	mkdir many &&
	test_expect_code 4 dispatch cp box1:$R/nosuch box1:$R/up/s1 many 2>err &&
	test_grep "cannot stat .box1:$R/nosuch.: No such file or directory" err &&
	test_cmp s1 many/s1 &&
	test_expect_code 4 dispatch cp nosuch box1:$R 2>err &&
	test_grep "cannot stat .nosuch.: No such file or directory" err
'

test_expect_success 'a directory without -r is refused' '
	test_expect_code 1 dispatch cp tree box1:$R/norec 2>err &&
	test_grep "omitting directory .tree. (use -r" err &&
	test_expect_code 1 dispatch cp box1:$R/up norec 2>err &&
	test_grep "omitting directory .box1:$R/up." err &&
	test ! -e norec
'

test_expect_success '-p keeps modification times' '
	echo t >timed && touch -d "2001-02-03 04:05:06" timed &&
	dispatch cp -p timed box1:$R/timed &&
	dispatch cp -p box1:$R/timed timed.back &&
	test "$(stat -c %Y timed.back)" = "$(stat -c %Y timed)" &&
	dispatch cp box1:$R/timed timed.now &&
	test "$(stat -c %Y timed.now)" != "$(stat -c %Y timed)"
'

test_expect_success '--json: files, bytes, seconds and every item' '
	dispatch --json cp -r tree box1:$R/json >out &&
	python3 - out "$R" <<-\EOF
	import json, sys
	doc = json.load(open(sys.argv[1]))
	assert set(doc) == {"files", "bytes", "skipped", "deleted", "seconds", "items"}, doc
	assert doc["skipped"] == 0 and doc["deleted"] == [], doc
	assert doc["files"] == 4 and doc["bytes"] == 6 + 19 + 3000000, doc
	items = {i["src"]: i for i in doc["items"]}
	run = items["tree/sub/run.sh"]
	assert run["dest"] == sys.argv[2] + "/json/sub/run.sh", run
	assert run["mode"] == "0755" and run["bytes"] == 19 and run["type"] == "file", run
	assert items["tree/link"]["type"] == "symlink", items["tree/link"]
	assert items["tree/sub"]["type"] == "dir" and items["tree/sub"]["mode"] == "0750", items["tree/sub"]
	EOF
'

test_expect_success 'the progress line only on a terminal, and never with -q' '
	dispatch cp tree/sub/deeper/big.bin box1:$R/p1 2>err &&
	test_must_be_empty err &&
	script -qec "$DISPATCH cp tree/sub/deeper/big.bin box1:$R/p2" /dev/null >tty &&
	test_grep "big.bin *100%" tty &&
	script -qec "$DISPATCH -q cp tree/sub/deeper/big.bin box1:$R/p3" /dev/null >tty &&
	! grep "100%" tty
'

# sshd killed in the middle of a copy: an sshd of our own, on a port of its own.
KPORT=$((DISPATCH_TESTBED_PORT_BASE + 30))
kill_sshd() { (. "$TEST_SRCDIR/tests/testbed/lib.sh" && tb_sshd_down cpkill) 2>/dev/null; }
start_sshd() { (. "$TEST_SRCDIR/tests/testbed/lib.sh" && tb_sshd_up cpkill "" 127.0.0.1 "$KPORT") 2>/dev/null; }
# wait_for GLOB: until a file matching GLOB exists with more than 8 MB in it (30 s)
wait_for() {
	local i f
	for ((i = 0; i < 300; i++)); do
		for f in $1; do
			[ -f "$f" ] && [ "$(stat -c %s "$f")" -gt 8000000 ] && return 0
		done
		sleep 0.1
	done
	echo "no $1 growing" >&2
	return 1
}

test_expect_success 'setup: an sshd to kill' '
	start_sshd &&
	cat >kcfg <<-EOF &&
	Host cpkill
		HostName 127.0.0.1
		Port $KPORT
		User $DISPATCH_TESTBED_USER
		IdentityFile $TB/keys/id_ed25519
		IdentitiesOnly yes
		UserKnownHostsFile $PWD/kh
		BatchMode yes
	EOF
	echo "[127.0.0.1]:$KPORT $(cut -d" " -f1,2 "$TB/sshd/cpkill/host_ed25519.pub")" >kh &&
	dispatch -F kcfg run -H cpkill -- "mkdir -p $R/kill" &&
	truncate -s 4G huge
'

test_expect_success 'sshd killed during an upload: exit 255, nothing under the final name' '
	{ dispatch -F kcfg cp huge cpkill:$R/kill/huge 2>err & } &&
	pid=$! &&
	wait_for "$RHOME/$R/kill/.huge.dispatch-*" &&
	kill_sshd &&
	rc=0 && { wait $pid || rc=$?; } &&
	{ test "$rc" = 255 || { echo "rc=$rc"; cat err; false; }; } &&
	test_grep "connection to .cpkill. lost" err &&
	test ! -e "$RHOME/$R/kill/huge"
'

test_expect_success 'sshd killed during a download: exit 255, no file left at all' '
	start_sshd &&
	truncate -s 4G "$RHOME/$R/kill/remote-huge" &&
	mkdir down &&
	{ dispatch -F kcfg cp cpkill:$R/kill/remote-huge down/ 2>err & } &&
	pid=$! &&
	wait_for "down/.remote-huge.dispatch-*" &&
	kill_sshd &&
	rc=0 && { wait $pid || rc=$?; } &&
	{ test "$rc" = 255 || { echo "rc=$rc"; cat err; false; }; } &&
	test_grep "connection to .cpkill. lost" err &&
	ls -A down >left && test_must_be_empty left
'
kill_sshd

test_done
