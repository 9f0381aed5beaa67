#!/bin/bash
# dispatch ship against git archive: for several commits the same members in the same
# order (names as bytes, types, modes, link targets, sizes, mtimes, contents), and the
# same tree once extracted by tar; for --dirty, the files a commit of the work tree
# would hold. The fixture has what breaks naive archivers: an executable, symlinks to
# a file and a directory, a 200-character path, a name and a link target longer than
# ustar holds (pax), non-UTF-8 and unicode names, spaces
# and a newline in names, an empty file, a 20 MB random file, export-ignore, a
# submodule and nested .gitignore files; text filters (eol, ident, autocrlf); and
# export-subst.
. "$TEST_SRCDIR/tests/cli/lib.sh"

tarcmp() { python3 "$TEST_SRCDIR/tests/cli/lib-tarcmp.py" "$@"; }
export GIT_AUTHOR_NAME=T GIT_AUTHOR_EMAIL=t@example.com GIT_COMMITTER_NAME=T GIT_COMMITTER_EMAIL=t@example.com
export GIT_CONFIG_GLOBAL="$HOME/.gitconfig"
git config --global protocol.file.allow always
git config --global init.defaultBranch main

commit() { # commit DATE MESSAGE
	GIT_AUTHOR_DATE="$1" GIT_COMMITTER_DATE="$1" git commit -q -m "$2"
}

long=$(printf 'a%.0s' $(seq 60))/$(printf 'b%.0s' $(seq 60))/$(printf 'c%.0s' $(seq 74)).txt
latin1=$(printf 'caf\351.txt')
# one name and one link target longer than ustar's 100 bytes: pax headers
longname=$(printf 'p%.0s' $(seq 150)).txt

test_expect_success 'set up the fixture repository' '
	git init -q subrepo &&
	(cd subrepo && echo sub >s.txt && git add s.txt && commit "2001-01-01 00:00:00 +0000" sub) &&
	git init -q repo &&
	cd repo &&
	printf "#!/bin/sh\necho hi\n" >run.sh && chmod +x run.sh &&
	echo hello >hello.txt &&
	ln -s hello.txt link-to-file &&
	mkdir -p dir/sub && echo nested >dir/sub/f.txt &&
	ln -s dir link-to-dir &&
	mkdir -p "$(dirname "$long")" && echo long >"$long" &&
	test ${#long} -eq 200 &&
	echo latin1 >"$latin1" &&
	echo unicode >"ünïcødé-名前.txt" &&
	echo space >"with space.txt" &&
	echo newline >"new
line.txt" &&
	: >empty &&
	echo pax >"$longname" && ln -s "$longname" link-long &&
	printf "secret.txt export-ignore\nprivate export-ignore\n*.crlf text eol=crlf\nident.txt ident\n" >.gitattributes &&
	printf "one\ntwo\n" >dos.crlf && printf "\$Id\$\n" >ident.txt &&
	echo s >secret.txt && mkdir private && echo p >private/p.txt &&
	printf "*.log\nbuild/\n" >.gitignore &&
	printf "*.tmp\n!keep.tmp\n" >dir/.gitignore &&
	git add -A &&
	commit "2020-02-02 02:02:02 +0000" one &&
	head -c 20000000 /dev/urandom >big.bin &&
	git submodule -q add ../subrepo sub &&
	echo more >dir/more.txt &&
	git add -A &&
	commit "2021-03-03 03:03:03 +0100" two &&
	git tag v2 &&
	git rm -q hello.txt && chmod -x run.sh && echo changed >dir/sub/f.txt && git add -A &&
	commit "2022-04-04 04:04:04 -0700" three &&
	git archive HEAD~1 | tar -tf - >../names &&
	test_grep -x "sub/" ../names &&
	! test_grep -e secret.txt -e private ../names &&
	git archive HEAD dos.crlf | tar -xOf - | od -c | test_grep "\\r"
'

for rev in HEAD~2 v2 HEAD main; do
	test_expect_success "--ref $rev: the members of git archive, in its order" '
		dispatch ship --repo repo --ref "$rev" --output got.tar.gz &&
		gzip -t got.tar.gz &&
		git -C repo archive --format=tar "$rev" >want.tar &&
		tarcmp members got.tar.gz want.tar
	'
done

test_expect_success '--ref without any .gitattributes, and with core.autocrlf' '
	git -C subrepo archive --format=tar HEAD >want.tar &&
	dispatch ship --repo subrepo --output got.tar.gz &&
	tarcmp members got.tar.gz want.tar &&
	git clone -q subrepo crlf && git -C crlf config core.autocrlf true &&
	git -C crlf archive --format=tar HEAD >want.tar &&
	tar -xOf want.tar s.txt | od -c | test_grep "\\r" &&
	dispatch ship --repo crlf --output got.tar.gz &&
	tarcmp members got.tar.gz want.tar
'

# export-subst: what version tools put in .git_archival.txt (setuptools-scm, hatch-vcs)
# and every placeholder dispatch knows, in two files (git expands one %(describe) per
# archive, the first in tree order); refs of every kind; HEAD on a branch and detached.
test_expect_success 'export-subst: $Format:...$ expanded as git archive does' '
	git init -q subst && (
		cd subst &&
		printf "node: \$Format:%%H\$\nnode-date: \$Format:%%cI\$\ndescribe-name: \$Format:%%(describe:tags=true,match=*[0-9]*)\$\nref-names: \$Format:%%D\$\n" >.git_archival.txt &&
		printf "%s\n" ".git_archival.txt export-subst" "all.txt export-subst" >.gitattributes &&
		printf "\$Format:%%H %%h %%T %%t %%P %%p|%%an <%%ae> %%al|%%ad|%%aD|%%ai|%%aI|%%as|%%at|%%cn %%ce %%cd %%cI|%%s|%%b|%%B|%%d|%%x41%%n%%%%|%%Z|%%(describe)|%%x4|\$ \$Format\$ \$Format:%%h\n" >all.txt &&
		git add -A &&
		GIT_AUTHOR_DATE="2021-03-04 05:06:07 -0530" GIT_COMMITTER_DATE="2022-01-02 03:04:05 +1345" \
			git commit -q -m "first line
second line

the body" &&
		git tag v1.0 && echo more >>all.txt && git add -A && commit "2023-05-06 07:08:09 +0200" two &&
		git tag -a v1.1 -m v1.1 && git branch other && git update-ref refs/remotes/origin/main HEAD
	) &&
	for rev in HEAD HEAD~1; do
		git -C subst archive --format=tar $rev >want.tar &&
		dispatch ship --repo subst --ref $rev --output got.tar.gz &&
		tarcmp members got.tar.gz want.tar || return 1
	done &&
	tar -xOf want.tar .git_archival.txt | test_grep "^describe-name: v1.0$" &&
	git -C subst checkout -q --detach &&
	git -C subst archive --format=tar HEAD >want.tar &&
	dispatch ship --repo subst --output got.tar.gz &&
	tarcmp members got.tar.gz want.tar &&
	tar -xzOf got.tar.gz .git_archival.txt | test_grep "^ref-names: HEAD, tag: v1.1, origin/main, other, main$"
'

test_expect_success '--ref of a tree: the same members, each dated 1980-01-01' '
	dispatch ship --repo repo --ref "v2^{tree}" --output got.tar.gz &&
	git -C repo archive --format=tar "v2^{tree}" >want.tar &&
	tarcmp members got.tar.gz want.tar --any-mtime &&
	python3 -c "
import sys, tarfile
sys.exit(0 if {m.mtime for m in tarfile.open(sys.argv[1])} == {315532800} else 1)
" got.tar.gz
'

test_expect_success '--ref: tar extracts the same tree as from git archive' '
	rm -rf x-got x-want && mkdir x-got x-want &&
	dispatch ship --repo repo --ref v2 --output got.tar.gz &&
	tar -xzf got.tar.gz -C x-got &&
	git -C repo archive v2 | tar -xf - -C x-want &&
	tarcmp tree x-got x-want &&
	test -L "x-got/link-to-dir" && test -x x-got/run.sh && test -d x-got/sub &&
	test -f "x-got/$latin1" && test -f "x-got/$long"
'

test_expect_success 'the same commit gives the same bytes, from a clone too' '
	dispatch ship --repo repo --ref v2 --output a.tar.gz &&
	dispatch ship --repo repo/dir --ref v2 --output b.tar.gz &&
	cmp a.tar.gz b.tar.gz &&
	git clone -q --no-checkout repo clone &&
	dispatch ship --repo clone --ref v2 --output c.tar.gz &&
	cmp a.tar.gz c.tar.gz
'

test_expect_success 'a clean work tree: --dirty writes the bytes --ref HEAD writes' '
	(cd repo && git submodule -q update --init && echo x >ignored.log && mkdir -p build && echo y >build/z &&
	 rm dos.crlf ident.txt && git checkout -- dos.crlf ident.txt) &&
	dispatch ship --repo repo --output ref.tar.gz &&
	dispatch ship --repo repo --dirty --output dirty.tar.gz 2>err &&
	test_grep "0 modified, 0 untracked" err &&
	cmp ref.tar.gz dirty.tar.gz
'

test_expect_success 'make the work tree dirty' '
	cd repo &&
	echo unstaged >>dir/more.txt &&
	echo staged >>"with space.txt" && git add "with space.txt" &&
	rm empty &&
	chmod +x "$latin1" &&
	rm link-to-file && echo now-a-file >link-to-file &&
	echo untracked >new.txt &&
	mkdir -p newdir/deeper && echo a >newdir/a && echo b >newdir/deeper/b &&
	ln -s ../hello.txt newdir/dangling &&
	echo keep >dir/keep.tmp && echo drop >dir/drop.tmp &&
	echo drop >debug.log && echo drop >build/out &&
	echo s2 >>secret.txt &&
	echo "new file" >"newline
too.txt"
'

# What --dirty must hold: tracked and untracked-not-ignored files that exist, less
# export-ignore, copied as they are (symlinks as symlinks); submodules as directories.
expected_dirty() {
	rm -rf want && mkdir want &&
	(cd repo && git ls-files -z --cached --others --exclude-standard | sort -zu) |
	while IFS= read -r -d "" p; do
		[ -e "repo/$p" ] || [ -L "repo/$p" ] || continue
		[ "$(git -C repo check-attr export-ignore -- "$p" | sed "s/.*: //")" = set ] && continue
		case "$p" in private/*) continue ;; esac
		mkdir -p "want/$(dirname "$p")"
		if [ -d "repo/$p" ] && [ ! -L "repo/$p" ]; then mkdir -p "want/$p"; else cp -P -p "repo/$p" "want/$p"; fi
	done
}

test_expect_success '--dirty: the files on disk now, untracked included, ignored not' '
	dispatch ship --repo repo --dirty --output dirty.tar.gz 2>err &&
	gzip -t dirty.tar.gz &&
	rm -rf got && mkdir got && tar -xzf dirty.tar.gz -C got &&
	expected_dirty &&
	tarcmp tree got want &&
	test -L got/newdir/dangling && test -f got/dir/keep.tmp && test ! -e got/dir/drop.tmp &&
	test ! -e got/empty && test ! -e got/debug.log && test ! -e got/secret.txt
'

test_expect_success '--dirty: the summary counts what git status counts' '
	dispatch ship --repo repo --dirty --output dirty.tar.gz 2>err &&
	git -C repo status --porcelain -uall --ignore-submodules=all -- . ":!secret.txt" >st &&
	untracked=$(grep -c "^??" st) &&
	deleted=$(grep -c "^.D\|^D" st) &&
	modified=$(( $(wc -l <st) - untracked - deleted )) &&
	test $modified -ge 4 && test $untracked -ge 6 && test $deleted -eq 1 &&
	test_grep "snapshot of the work tree: $modified modified, $untracked untracked, $deleted deleted" err
'

test_expect_success '--dirty: every mtime is the HEAD commit time' '
	python3 -c "
import sys, tarfile
times = {m.mtime for m in tarfile.open(sys.argv[1])}
sys.exit(0 if times == {int(sys.argv[2])} else 1)
" dirty.tar.gz "$(git -C repo log -1 --format=%ct)"
'

test_expect_success 'the same dirty tree twice: the same bytes' '
	dispatch ship --repo repo --dirty --output d1.tar.gz 2>/dev/null &&
	dispatch ship --repo repo --dirty --output d2.tar.gz 2>/dev/null &&
	cmp d1.tar.gz d2.tar.gz
'

test_done
