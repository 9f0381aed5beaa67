#!/bin/bash
# t5600: dispatch ship HOST:PATH against real sshd (tests/testbed): the tree extracted
# on box1, and on inner through the bastion, is the tree git archive's tarball gives
# when the same remote tar extracts it as the same user (names, modes, sizes, link
# targets, sha256 of every file); --dirty; PATH quoting and ~/; tar's and mkdir's
# own messages on failure (exit 1); a bad ref or a non-repository fails (4, 2)
# without connecting; no temporary file on either side; --json; the progress bar
# only on a terminal. Usage errors run without the testbed.
# Its own testbed instance (directory, ports, namespaces, network), as t5000's;
# DISPATCH_TESTBED_DIR=/tmp/dispatch-testbed-t5600 tests/testbed/down removes it.
. "$(dirname "$0")/lib.sh"

export GIT_AUTHOR_NAME=T GIT_AUTHOR_EMAIL=t@example.com GIT_COMMITTER_NAME=T GIT_COMMITTER_EMAIL=t@example.com
export GIT_CONFIG_GLOBAL="$HOME/.gitconfig"
git config --global init.defaultBranch main

test_expect_success 'no destination, or an operand that is not HOST:PATH: exit 2' '
	test_expect_code 2 dispatch ship 2>err &&
	test_grep "needs a destination: HOST:PATH, or --output FILE" err &&
	test_expect_code 2 dispatch ship box1 2>err &&
	test_grep "'"'"'box1'"'"' is not HOST:PATH" err &&
	test_expect_code 2 dispatch ship :dir 2>err &&
	test_grep "is not HOST:PATH" err
'

test_expect_success 'a ~USER that is not a plain name is refused, not run: exit 2' '
	test_expect_code 2 dispatch ship "box1:~x\$(touch pwned)/d" 2>err &&
	test_grep "cannot expand" err &&
	test ! -e pwned
'

test_expect_success 'ship HOST:PATH --files needs paths; a stray operand is refused' '
	test_expect_code 2 dispatch ship box1:d --files 2>err &&
	test_grep "needs the paths" err &&
	test_expect_code 2 dispatch ship box1:d stray 2>err &&
	test_grep "unexpected argument '"'"'stray'"'"'" err
'

export DISPATCH_TESTBED_SLURM=0
export DISPATCH_TESTBED_DIR=/tmp/dispatch-testbed-t5600
export DISPATCH_TESTBED_PORT_BASE=28000 DISPATCH_TESTBED_PREFIX=dts5 DISPATCH_TESTBED_NET=10.163
testbed_up

# A fresh directory in the test user's home for this run (every host of the testbed
# shares the file system), removed at the end.
REMOTE=$(dispatch run -H box1 -- 'mktemp -d "$HOME/t5600.XXXXXX"') ||
	skip_rest "cannot make a directory on box1"
export REMOTE
case $REMOTE in "$(dispatch run -H box1 -- 'echo $HOME')"/t5600.*) ;; *) skip_rest "odd remote dir '$REMOTE'" ;; esac

# Everything that tells two extracted trees apart: path, type, mode, size, link
# target, and each file's sha256.
listing() { # listing HOST DIR
	dispatch run -H "$1" -- "cd '$2' && find . -printf '%p %y %m %s %l\n' | LC_ALL=C sort &&
		find . -type f -exec sha256sum {} + | LC_ALL=C sort -k2"
}

test_expect_success 'set up a repository: executable, symlinks, unicode name, 20 MB file' '
	git init -q repo &&
	(cd repo &&
	 printf "#!/bin/sh\necho hi\n" >run.sh && chmod +x run.sh &&
	 echo hello >hello.txt && ln -s hello.txt link && ln -s sub link-dir &&
	 mkdir -p sub/deeper && echo deep >sub/deeper/f.txt &&
	 echo unicode >"ünïcødé-名前.txt" && echo space >"with space.txt" &&
	 head -c 20971520 /dev/urandom >big.bin &&
	 printf "*.log\n" >.gitignore && echo ignored >x.log &&
	 git add -A && git commit -q -m one)
'

test_expect_success 'the reference: git archive, extracted on box1 by the same tar and user' '
	git -C repo archive HEAD >ref.tar &&
	dispatch run -H box1 -- "mkdir '"'"'$REMOTE/ref'"'"' && tar -xf - -C '"'"'$REMOTE/ref'"'"'" <ref.tar &&
	listing box1 "$REMOTE/ref" >want &&
	test_grep "^./run.sh f 755 " want &&
	test_grep "^./link l 777 9 hello.txt\$" want &&
	test_grep "^./big.bin f [0-7]* 20971520 \$" want &&
	test_grep "名前" want
'

test_expect_success 'ship to box1: the same tree as git archive gives' '
	mkdir work tmp && git -C repo status --porcelain --ignored >status-before &&
	(cd work && TMPDIR=../tmp dispatch ship --repo ../repo "box1:$REMOTE/box1" >../out 2>../err) &&
	test_must_be_empty out && test_must_be_empty err &&
	listing box1 "$REMOTE/box1" >got &&
	test_cmp want got
'

test_expect_success 'no temporary file left, locally or on the host' '
	test -z "$(ls -A work)" && test -z "$(ls -A tmp)" &&
	git -C repo status --porcelain --ignored >status-after &&
	test_cmp status-before status-after &&
	dispatch run -H box1 -- "ls -A '"'"'$REMOTE'"'"'" >remote-ls &&
	printf "box1\nref\n" >want-ls && test_cmp want-ls remote-ls
'

test_expect_success 'ship to inner through the bastion, into ~/ (the remote home)' '
	rel=${REMOTE##*/} &&
	dispatch ship --repo repo "inner:~/$rel/inner" &&
	dispatch run -H inner -- "echo \$SSH_CONNECTION" >conn &&
	test_grep " $DISPATCH_TESTBED_NET.1.2 22\$" conn &&
	listing inner "$REMOTE/inner" >got &&
	test_cmp want got
'

test_expect_success 'a PATH with spaces, quotes and a $ is taken literally' '
	dispatch ship --repo repo "box1:$REMOTE/a b'"'"'c\$HOME" &&
	dispatch run -H box1 -- "cat '"'"'$REMOTE'"'"'/a\\ b\\'"'"'c\\\$HOME/hello.txt" >got &&
	echo hello >want-hello && test_cmp want-hello got
'

test_expect_success 'shipping again over the same PATH replaces the files' '
	(cd repo && echo again >hello.txt && git commit -q -am two) &&
	dispatch ship --repo repo "box1:$REMOTE/box1" &&
	dispatch run -H box1 -- "cat '"'"'$REMOTE/box1/hello.txt'"'"'" >got &&
	echo again >want-again && test_cmp want-again got
'

test_expect_success '--dirty ships an uncommitted edit and an untracked file, not an ignored one' '
	(cd repo && echo edited >hello.txt && echo new >untracked.txt) &&
	dispatch ship --repo repo --dirty "box1:$REMOTE/dirty" 2>err &&
	test_grep "1 modified, 1 untracked" err &&
	dispatch run -H box1 -- "cd '"'"'$REMOTE/dirty'"'"' && cat hello.txt untracked.txt" >got &&
	printf "edited\nnew\n" >want-dirty && test_cmp want-dirty got &&
	dispatch run -H box1 -- "test -f '"'"'$REMOTE/dirty/big.bin'"'"' && test ! -e '"'"'$REMOTE/dirty/x.log'"'"'" &&
	(cd repo && git checkout -q hello.txt && rm untracked.txt)
'

test_expect_success '--json: host and path, and the bytes --output writes' '
	dispatch --json ship --repo repo "box1:$REMOTE/json" >json &&
	dispatch ship --repo repo --output same.tar.gz &&
	python3 - json same.tar.gz <<-EOF
	import hashlib, json, os, sys
	d = json.load(open(sys.argv[1]))
	data = open(sys.argv[2], "rb").read()
	assert d["output"] is None, d
	assert d["host"] == "box1", d
	assert d["path"] == os.environ["REMOTE"] + "/json", d
	assert d["mode"] == "ref" and d["dirty"] is None, d
	assert d["bytes"] == len(data), (d, len(data))
	assert d["sha256"] == hashlib.sha256(data).hexdigest(), d
	EOF
'

test_expect_success 'tar cannot write into PATH: its own message, then exit 1' '
	dispatch run -H box1 -- "mkdir '"'"'$REMOTE/ro'"'"' && chmod 555 '"'"'$REMOTE/ro'"'"'" &&
	test_expect_code 1 dispatch ship --repo repo "box1:$REMOTE/ro" 2>err &&
	test_grep "^tar: run.sh: Cannot open: Permission denied\$" err &&
	test_grep "^dispatch: extracting into .box1:$REMOTE/ro. failed (remote exit status 2)\$" err &&
	dispatch run -H box1 -- "chmod 755 '"'"'$REMOTE/ro'"'"'"
'

test_expect_success 'PATH cannot be created: mkdir says why, exit 1, no hang on 20 MB unread' '
	dispatch run -H box1 -- "touch '"'"'$REMOTE/file'"'"'" &&
	test_expect_code 1 dispatch ship --repo repo "box1:$REMOTE/file/sub" 2>err &&
	test_grep "^mkdir: cannot create directory .*Not a directory" err &&
	test_grep "^dispatch: extracting into .box1:$REMOTE/file/sub. failed (remote exit status 1)\$" err
'

test_expect_success 'a bad ref: exit 4 without connecting (down1 refuses connections)' '
	test_expect_code 4 dispatch -v ship --repo repo --ref nope down1:x 2>err &&
	test_grep "unknown revision .nope." err &&
	! grep "connecting" err &&
	test_expect_code 2 dispatch ship --repo "$TRASH/home" down1:x 2>err &&
	test_grep "not in a git repository" err
'

test_expect_success 'a host that refuses: exit 255' '
	test_expect_code 255 dispatch ship --repo repo down1:x 2>err &&
	test_grep "cannot connect to .down1." err
'

test_expect_success 'the progress bar: on a terminal only, and never with -q' '
	command -v script >/dev/null || { echo "no script(1): skipped"; exit 0; } &&
	script -qec "$DISPATCH ship --repo repo box1:$REMOTE/tty" /dev/null >tty &&
	test_grep "shipping to box1:$REMOTE/tty: [0-9.]* MiB, [0-9.]* [KMG]*i*B/s, done\\." tty &&
	script -qec "$DISPATCH -q ship --repo repo box1:$REMOTE/tty" /dev/null >tty-q &&
	! grep "shipping" tty-q &&
	dispatch ship --repo repo "box1:$REMOTE/tty" 2>notty &&
	test_must_be_empty notty
'

dispatch run -H box1 -- "chmod -R u+w '$REMOTE' 2>/dev/null; rm -rf '$REMOTE'" >/dev/null 2>&1

test_done
