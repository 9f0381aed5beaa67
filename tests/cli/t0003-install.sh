#!/bin/bash
# meson install: the binary, the man pages and the three completions arrive where
# each shell looks for them, the -D<shell>_completions options leave them out, and
# the installed bash completion loads through bash-completion and completes.
. "$TEST_SRCDIR/tests/cli/lib.sh"

meson_option() { # NAME: the build directory's value (a list's joined by colons)
	meson introspect "$TEST_BUILDDIR" --buildoptions | python3 -c "
import json, sys
v = [o[\"value\"] for o in json.load(sys.stdin) if o[\"name\"] == \"$1\"][0]
print(\":\".join(v) if isinstance(v, list) else v)"
}
prefix=$(meson_option prefix)
datadir=$(meson_option datadir)
mandir=$(meson_option mandir)
case $datadir in /*) ;; *) datadir=$prefix/$datadir ;; esac
case $mandir in /*) ;; *) mandir=$prefix/$mandir ;; esac
dest=$TRASH/dest
if pkg-config --exists bash-completion; then
	bashdir=$(pkg-config --define-variable=datadir="$datadir" --variable=completionsdir bash-completion)
else
	bashdir=$datadir/bash-completion/completions
fi

test_expect_success 'meson install into a DESTDIR puts every file at its path' '
	meson install -C "$TEST_BUILDDIR" --no-rebuild --quiet --destdir "$dest" >/dev/null &&
	test -x "$dest$prefix/bin/dispatch" &&
	test_cmp "$TEST_SRCDIR/completions/dispatch.bash" "$dest$bashdir/dispatch" &&
	test_cmp "$TEST_SRCDIR/completions/_dispatch" "$dest$datadir/zsh/site-functions/_dispatch" &&
	test_cmp "$TEST_SRCDIR/completions/dispatch.fish" "$dest$datadir/fish/vendor_completions.d/dispatch.fish" &&
	if command -v scdoc >/dev/null; then
		for page in "$TEST_SRCDIR"/man/*.1.scd; do
			p=$(basename "$page" .scd) &&
			test -s "$dest$mandir/man1/$p" || exit 1
		done
	fi
'

# bash-completion finds completions/NAME under each $XDG_DATA_DIRS entry when the
# command is first completed: the installed file, and no other, has to be there.
test_expect_success 'bash-completion loads the installed script: dispatch sub<TAB>' '
	test -f /usr/share/bash-completion/bash_completion || exit 0
	XDG_DATA_DIRS=$dest$datadir bash --norc --noprofile -c "
		. /usr/share/bash-completion/bash_completion
		complete -p dispatch 2>/dev/null && exit 1
		__load_completion dispatch || exit 1
		complete -p dispatch
		COMP_WORDS=(dispatch sub); COMP_CWORD=1; COMP_LINE=\"dispatch sub\"; COMP_POINT=12
		_dispatch dispatch sub dispatch
		printf \"%s\n\" \"\${COMPREPLY[@]}\"
		compgen -F _dispatch -- sub 2>/dev/null
	" >out &&
	test_grep "^complete -F _dispatch dispatch$" out &&
	test_grep "^submit$" out &&
	test_grep "^submit-packed$" out &&
	test "$(grep -c "^sub" out)" -ge 2 &&
	! grep -v -e "^complete " -e "^submit" out
'

test_expect_success '-D<shell>_completions=false leaves that completion out' '
	meson setup "$TRASH/b" "$TEST_SRCDIR" --prefix=/usr -Dbash_completions=false \
		-Dzsh_completions=false "-Dpkg_config_path=$(meson_option pkg_config_path)" >setup.log &&
	meson introspect "$TRASH/b" --installed >installed.json &&
	python3 -c "
import json
dest = sorted(json.load(open(\"installed.json\")).values())
comp = [d for d in dest if \"bash-completion\" in d or \"site-functions\" in d or \"fish\" in d]
assert comp == [\"/usr/share/fish/vendor_completions.d/dispatch.fish\"], comp
assert \"/usr/bin/dispatch\" in dest, dest
"
'

test_done
