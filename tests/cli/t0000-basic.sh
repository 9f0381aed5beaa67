#!/bin/bash
# The dispatcher itself: version, unknown commands and options, exit codes.
. "$TEST_SRCDIR/tests/cli/lib.sh"

test_expect_success 'dispatch -V prints the version' '
	dispatch -V >out &&
	test_grep "^dispatch [0-9]" out
'

# The libssh2 actually loaded, not the headers: an rpath gone wrong would load
# Debian 12's 1.10.0 from /usr/lib.
test_expect_success 'dispatch -v -V: the libssh2 loaded at run time is 1.11.1 or later' '
	dispatch -v -V >out &&
	v=$(sed -n "s/^libssh2 \([0-9][0-9.]*\) (built against [0-9.]*)\$/\1/p" out) &&
	test -n "$v" &&
	test "$(printf "1.11.1\n%s\n" "$v" | sort -V | head -n1)" = 1.11.1
'

# Debian 12's own libssh2 (1.10.0) forced in with LD_LIBRARY_PATH: no connection is
# tried on it. Where the system has no older libssh2 there is nothing to check.
test_expect_success 'an older libssh2 loaded at run time is refused, and named' '
	lib=$(ldconfig -p 2>/dev/null | sed -n "s/^[[:space:]]*libssh2\.so\.1 .* => \(.*\)/\1/p" | head -n1) &&
	if [ -n "$lib" ] &&
	   old=$(LD_LIBRARY_PATH=$(dirname "$lib") "$DISPATCH" -v -V | sed -n "s/^libssh2 \([0-9.]*\) .*/\1/p") &&
	   [ "$(printf "1.11.1\n%s\n" "$old" | sort -V | head -n1)" != 1.11.1 ]; then
		LD_LIBRARY_PATH=$(dirname "$lib") test_expect_code 255 dispatch run -H 127.0.0.1:1 -- true 2>err &&
		test_grep "libssh2 $old was loaded, but dispatch needs 1.11.1 or later" err
	fi
'

# Each library as the loaded one reports it: with libgit2, zlib and SQLite swapped at
# run time the line changes (the LD_LIBRARY_PATH test above shows it for libssh2).
test_expect_success 'dispatch -V names every library with a version, text and --json alike' '
	dispatch -V >out &&
	for lib in libssh2 openssl libgit2 libarchive zlib sqlite libyaml; do
		test_grep "^$lib [0-9][0-9.]*[0-9a-z]*\$" out || return 1
	done &&
	test "$(wc -l <out)" -eq 8 &&
	dispatch --json -V >json &&
	python3 -c "
import json, sys
doc = json.load(open(\"json\"))
text = dict(l.split(\" \", 1) for l in open(\"out\").read().splitlines())
assert doc[\"version\"] == text.pop(\"dispatch\"), doc
assert sorted(doc[\"libraries\"]) == sorted(text), (doc, text)
for name, v in doc[\"libraries\"].items():
    assert v[\"version\"] == text[name] and v[\"built_against\"], (name, v)
    assert v[\"static\"] is False, (name, v)  # meson test builds link them all shared
"
'

test_expect_success 'dispatch -V: SQLite is the loaded one, as python3 also loads it' '
	dispatch -V >out &&
	want=$(python3 -c "import sqlite3; print(sqlite3.sqlite_version)") &&
	test_grep "^sqlite $want\$" out
'

test_expect_success 'no command: usage on stderr, exit 2' '
	test_expect_code 2 dispatch 2>err &&
	test_grep "usage: dispatch" err
'

test_expect_success 'unknown command suggests the close one, exit 2' '
	test_expect_code 2 dispatch completon 2>err &&
	test_grep "did you mean .completion." err
'

test_expect_success 'unknown option names itself and the help, exit 2' '
	test_expect_code 2 dispatch completion --nope bash 2>err &&
	test_grep "option .--nope. is unknown" err &&
	test_grep "dispatch completion -h" err
'

test_expect_success 'option missing its value is an error' '
	test_expect_code 2 dispatch -i 2>err &&
	test_grep "needs a value" err
'

test_expect_success 'a flag given a value is an error' '
	test_expect_code 2 dispatch completion --json=1 2>err &&
	test_grep "takes no value" err
'

test_expect_success 'too many operands, exit 2' '
	test_expect_code 2 dispatch completion bash zsh 2>err &&
	test_grep "too many arguments" err
'

test_expect_success 'typed option values: one wording, whatever the command, exit 2' '
	test_expect_code 2 dispatch -F /dev/null run -H h --fanout 0 -- true 2>err &&
	test_grep "^dispatch: --fanout wants a number from 1 to 4096, not .0.$" err &&
	test_grep "dispatch run -h" err &&
	test_expect_code 2 dispatch -F /dev/null hosts --check --fanout 5000 2>err &&
	test_grep "^dispatch: --fanout wants a number from 1 to 4096, not .5000.$" err &&
	test_expect_code 2 dispatch -F /dev/null hosts --check --timeout 1.5 2>err &&
	test_grep "^dispatch: --timeout wants a number of seconds from 1 to 86400, not .1.5.$" err &&
	test_expect_code 2 dispatch wait --interval 0.05 1@h 2>err &&
	test_grep "^dispatch: --interval wants seconds (0.1 or more), not .0.05.$" err &&
	test_expect_code 2 dispatch wait --timeout 0 1@h 2>err &&
	test_grep "^dispatch: --timeout wants a positive number of seconds, not .0.$" err &&
	test_expect_code 2 dispatch wait --until soon 1@h 2>err &&
	test_grep "^dispatch: --until wants .running. or .done., not .soon.$" err
'

test_expect_success 'a bad value is reported after an unknown option, and -h still wins' '
	test_expect_code 2 dispatch wait --interval x --nope 1@h 2>err &&
	test_grep "option .--nope. is unknown" err &&
	dispatch wait --interval x -h >out &&
	test_grep "^usage: dispatch wait" out
'

test_expect_success 'explicit inventory that does not exist is exit 2 with the path' '
	test_expect_code 2 dispatch -i /nonexistent/inv.yaml hosts 2>err &&
	test_grep "/nonexistent/inv.yaml" err
'

test_expect_success 'writing to a closed stdout is an error, not silence' '
	if [ -w /dev/full ]; then
		test_expect_code 1 dispatch completion bash >/dev/full 2>err &&
		test_grep "cannot write" err
	fi
'

test_done
