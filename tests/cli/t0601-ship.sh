#!/bin/bash
# dispatch ship --output: errors and their exit statuses, --files, the atomic output
# file, stdout, the --json report checked against the file itself, and a snapshot of
# many compression blocks (one gzip member, the same bytes each time, read by gzip,
# GNU tar, busybox tar and Python's tarfile, file and stream modes).
. "$TEST_SRCDIR/tests/cli/lib.sh"

export GIT_AUTHOR_NAME=T GIT_AUTHOR_EMAIL=t@example.com GIT_COMMITTER_NAME=T GIT_COMMITTER_EMAIL=t@example.com
export GIT_CONFIG_GLOBAL="$HOME/.gitconfig"
git config --global init.defaultBranch main

names() { python3 -c 'import sys, tarfile; [print(m.name) for m in tarfile.open(sys.argv[1])]' "$1"; }

test_expect_success 'set up a repository' '
	git init -q repo &&
	(cd repo &&
	 mkdir -p src/pkg data && echo a >src/a.py && echo b >src/pkg/b.py && echo d >data/d.csv &&
	 printf "*.secret\n" >.gitignore && echo top >top.txt &&
	 git add -A && git commit -q -m one &&
	 echo s >src/key.secret && echo u >src/untracked.py)
'

test_expect_success 'an unknown ref: exit 4, and no output file left behind' '
	test_expect_code 4 dispatch ship --repo repo --ref nope --output out.tar.gz 2>err &&
	test_grep "unknown revision '"'"'nope'"'"'" err &&
	test ! -e out.tar.gz &&
	test -z "$(ls -A | grep "^\.out\.tar\.gz")"
'

test_expect_success 'a failed run leaves an existing output file alone' '
	echo precious >keep.tar.gz &&
	test_expect_code 4 dispatch ship --repo repo --ref nope --output keep.tar.gz 2>err &&
	test "$(cat keep.tar.gz)" = precious
'

test_expect_success 'not a git repository: exit 2' '
	mkdir plain &&
	test_expect_code 2 dispatch ship --repo plain --output out.tar.gz 2>err &&
	test_grep "not in a git repository" err &&
	test_expect_code 2 dispatch ship --repo does-not-exist --output out.tar.gz 2>err &&
	test_grep "does-not-exist" err
'

test_expect_success 'a bare repository: --ref works, --dirty and --files do not' '
	git clone -q --bare repo bare.git &&
	dispatch ship --repo bare.git --output bare.tar.gz &&
	dispatch ship --repo repo --output nonbare.tar.gz &&
	cmp bare.tar.gz nonbare.tar.gz &&
	test_expect_code 2 dispatch ship --repo bare.git --dirty --output out.tar.gz 2>err &&
	test_grep "bare repository" err
'

test_expect_success 'an empty repository: --ref fails (exit 4), --dirty works' '
	git init -q empty && echo x >empty/x.txt &&
	test_expect_code 4 dispatch ship --repo empty --output out.tar.gz 2>err &&
	test_grep "has no commits yet" err &&
	dispatch ship --repo empty --dirty --output empty.tar.gz 2>err &&
	test_grep "0 modified, 1 untracked" err &&
	test "$(names empty.tar.gz)" = x.txt
'

test_expect_success '--files: a path outside the repository is refused (exit 2)' '
	echo out >outside.txt &&
	test_expect_code 2 dispatch ship --repo repo --output out.tar.gz --files ../outside.txt 2>err &&
	test_grep "outside the repository" err &&
	test_expect_code 2 dispatch ship --repo repo --output out.tar.gz --files "$PWD/outside.txt" 2>err &&
	test_grep "outside the repository" err &&
	test_expect_code 2 dispatch ship --repo repo --output out.tar.gz --files src/../../outside.txt 2>err &&
	test_grep "outside the repository" err
'

test_expect_success '--files: a missing path is not found (exit 4)' '
	test_expect_code 4 dispatch ship --repo repo --output out.tar.gz --files nope.txt 2>err &&
	test_grep "nope.txt" err
'

test_expect_success '--files: directories recursively, not-ignored files only; a named ignored file comes' '
	dispatch ship --repo repo --output f.tar.gz --files src top.txt src/key.secret 2>err &&
	names f.tar.gz >got &&
	printf "%s\n" src src/a.py src/key.secret src/pkg src/pkg/b.py src/untracked.py top.txt >want &&
	test_cmp want got
'

test_expect_success '--files: paths relative to --repo, also a subdirectory of it' '
	dispatch ship --repo repo/src --output f2.tar.gz --files pkg ../data/d.csv 2>err &&
	names f2.tar.gz >got &&
	printf "%s\n" data data/d.csv src src/pkg src/pkg/b.py >want &&
	test_cmp want got &&
	dispatch ship --repo repo --output f3.tar.gz --files "$PWD/repo/data" 2>err &&
	test "$(names f3.tar.gz | tr "\n" " ")" = "data data/d.csv "
'

test_expect_success 'usage errors: exit 2' '
	test_expect_code 2 dispatch ship --repo repo 2>err &&
	test_grep "needs a destination: HOST:PATH, or --output FILE" err &&
	test_expect_code 2 dispatch ship --repo repo --output o.tar.gz --ref HEAD --dirty 2>err &&
	test_grep "do not go together" err &&
	test_expect_code 2 dispatch ship --repo repo --output o.tar.gz --files 2>err &&
	test_grep "needs the paths" err &&
	test_expect_code 2 dispatch ship --repo repo --output o.tar.gz stray 2>err &&
	test_grep "stray" err &&
	test_expect_code 2 dispatch --json ship --repo repo --output - 2>err &&
	test_grep "both want stdout" err
'

test_expect_success 'an unwritable output directory: exit 1' '
	test_expect_code 1 dispatch ship --repo repo --output no/such/dir/o.tar.gz 2>err &&
	test_grep "cannot create" err
'

test_expect_success '--output -: the tarball on stdout, the same bytes as in a file' '
	dispatch ship --repo repo --output - >stdout.tar.gz &&
	dispatch ship --repo repo --output file.tar.gz &&
	cmp stdout.tar.gz file.tar.gz &&
	gzip -t stdout.tar.gz
'

test_expect_success 'a snapshot of many blocks: one gzip member that gzip, GNU tar, busybox tar and tarfile read, the same bytes every time' '
	git init -q big &&
	(cd big &&
	 for i in $(seq 1 40); do seq $((i * 1000)) $((i * 1000 + 9000)) >text$i.txt; done &&
	 head -c 2000000 /dev/urandom >noise.bin && head -c 300000 /dev/zero >zeros &&
	 git add -A && git -c user.name=t -c user.email=t@t commit -qm big) &&
	dispatch ship --repo big --output big1.tar.gz &&
	dispatch ship --repo big --output big2.tar.gz &&
	cmp big1.tar.gz big2.tar.gz &&
	test "$(stat -c %s big1.tar.gz)" -gt 2000000 &&
	gzip -t big1.tar.gz &&
	git -C big archive HEAD >want.tar &&
	gzip -dc big1.tar.gz >got.tar &&
	tar -tzf big1.tar.gz >gnu.list && tar -tf want.tar >want.list && test_cmp want.list gnu.list &&
	mkdir gnux wantx && tar -xzf big1.tar.gz -C gnux && tar -xf want.tar -C wantx && diff -r wantx gnux &&
	busybox tar -tzf big1.tar.gz >bb.list && test_cmp want.list bb.list &&
	mkdir bbx && busybox tar -xzf big1.tar.gz -C bbx && diff -r wantx bbx &&
	python3 - big1.tar.gz got.tar want.tar <<-\PY
	import gzip, sys, tarfile, zlib
	data = open(sys.argv[1], "rb").read()
	d = zlib.decompressobj(31)
	raw = d.decompress(data)
	assert d.eof and d.unused_data == b"", "not a single gzip member"
	assert raw == open(sys.argv[2], "rb").read(), "zlib and gzip differ"
	names = [m.name for m in tarfile.open(sys.argv[1])]
	stream = [m.name for m in tarfile.open(sys.argv[1], "r|gz")]
	want = [n for n in tarfile.open(sys.argv[3]).getnames() if n != "pax_global_header"]
	assert names == stream == want, (names, stream, want)
	PY
'

test_expect_success '--output - into a closed pipe fails' '
	( trap "" PIPE; dispatch ship --repo repo --output - 2>err | true; test "${PIPESTATUS[0]}" -ne 0 ) ||
	{ cat err; exit 1; }
'

test_expect_success 'the output file gets the usual permissions (umask), not mkstemp 0600' '
	(umask 022 && dispatch ship --repo repo --output perm.tar.gz) &&
	test "$(stat -c %a perm.tar.gz 2>/dev/null || stat -f %Lp perm.tar.gz)" = 644
'

test_expect_success '--json: what it says matches the file' '
	dispatch --json ship --repo repo --output j.tar.gz >j.json &&
	python3 - j.json j.tar.gz "$(git -C repo rev-parse HEAD)" "$(git -C repo rev-parse HEAD^{tree})" <<-\PY
	import hashlib, json, os, sys, tarfile
	doc = json.load(open(sys.argv[1]))
	data = open(sys.argv[2], "rb").read()
	members = list(tarfile.open(sys.argv[2]))
	assert doc["output"] == "j.tar.gz", doc
	assert doc["sha256"] == hashlib.sha256(data).hexdigest(), doc
	assert doc["bytes"] == len(data), doc
	assert doc["files"] == sum(1 for m in members if not m.isdir()), doc
	assert doc["commit"] == sys.argv[3] and doc["tree"] == sys.argv[4], doc
	assert doc["ref"] == "HEAD" and doc["mode"] == "ref" and doc["dirty"] is None, doc
	assert doc["mtime"] == members[0].mtime, doc
	PY
'

test_expect_success '--json --dirty: the counts' '
	(cd repo && echo change >>top.txt && rm data/d.csv) &&
	dispatch --json ship --repo repo --dirty --output d.tar.gz >d.json 2>err &&
	test_grep "1 modified, 1 untracked, 1 deleted" err &&
	python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
assert d[\"mode\"] == \"dirty\" and d[\"tree\"] is None and d[\"ref\"] is None, d
assert d[\"dirty\"] == {\"modified\": 1, \"untracked\": 1, \"deleted\": 1}, d
" d.json &&
	dispatch -q ship --repo repo --dirty --output d.tar.gz 2>err &&
	test_must_be_empty err
'

test_expect_success '--dirty: a tracked file replaced by a directory is gone, its files untracked' '
	git init -q tc &&
	(cd tc && echo a >typechg && echo b >keep && git add . &&
	 git -c user.name=t -c user.email=t@t commit -qm one &&
	 rm typechg && mkdir typechg && echo x >typechg/inside) &&
	dispatch ship --repo tc --dirty --output tc.tar.gz 2>err &&
	test_grep "0 modified, 1 untracked, 1 deleted" err &&
	tar -tzf tc.tar.gz >list &&
	printf "%s\n" keep typechg/ typechg/inside >want &&
	test_cmp want list
'

test_done
