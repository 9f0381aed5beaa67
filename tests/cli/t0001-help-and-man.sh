#!/bin/bash
# Every command answers -h without any config, and its man page's SYNOPSIS says
# exactly what -h says (git t0012, t0450). Every option is documented in the page.
. "$TEST_SRCDIR/tests/cli/lib.sh"

commands=$(dispatch completion --json | python3 -c 'import json,sys; print(" ".join(c["name"] for c in json.load(sys.stdin)["commands"]))')

test_expect_success 'the command table is not empty' '
	test -n "$commands"
'

# The SYNOPSIS lines of a scdoc page, with scdoc markup taken out:
# backslash escapes keep the next character, unescaped * and _ are formatting.
synopsis_of() {
	sed -n '/^# SYNOPSIS/,/^# /{/^# /d;/^$/d;p}' "$1" |
	sed -e 's/\\\(.\)/\x01\1/g' -e 's/\([^\x01]\|^\)[*_]/\1/g' -e 's/\([^\x01]\|^\)[*_]/\1/g' -e 's/\x01//g'
}

for cmd in $commands; do
	test_expect_success "dispatch $cmd -h works with no config and exits 0" "
		dispatch $cmd -h >out 2>err &&
		test_must_be_empty err &&
		test_grep '^usage: dispatch $cmd' out
	"
	test_expect_success "man/dispatch-$cmd.1.scd exists and its SYNOPSIS matches -h" "
		page=\$TEST_SRCDIR/man/dispatch-$cmd.1.scd &&
		test -f \$page &&
		dispatch $cmd -h | sed -n 's/^\\(usage\\|   or\\): //p' >want &&
		synopsis_of \$page >got &&
		test_cmp want got
	"
	test_expect_success "every option of $cmd is in its man page" "
		dispatch completion --json | python3 -c '
import json, sys
doc = json.load(sys.stdin)
cmd = [c for c in doc[\"commands\"] if c[\"name\"] == \"$cmd\"][0]
page = open(sys.argv[1]).read().replace(\"\\\\\", \"\")
missing = [o.get(\"long\") or o[\"short\"] for o in cmd[\"options\"] if (o.get(\"long\") or o[\"short\"]) not in page]
print(\"missing from the man page:\", missing) if missing else None
sys.exit(1 if missing else 0)
' \$TEST_SRCDIR/man/dispatch-$cmd.1.scd
	"
done

test_expect_success 'dispatch -h lists every command' '
	dispatch -h >out &&
	for c in $commands; do test_grep "^    $c " out || exit 1; done
'

test_expect_success 'man/dispatch.1.scd names every command' '
	for c in $commands; do test_grep "dispatch-$c" "$TEST_SRCDIR/man/dispatch.1.scd" >/dev/null || exit 1; done
'

test_expect_success 'every man page is registered in man/meson.build' '
	for p in "$TEST_SRCDIR"/man/*.scd; do
		n=$(basename "$p" .scd)
		test_grep "'"'"'$n'"'"'" "$TEST_SRCDIR/man/meson.build" >/dev/null || exit 1
	done
'

test_expect_success 'scdoc accepts every page' '
	if command -v scdoc >/dev/null; then
		for p in "$TEST_SRCDIR"/man/*.scd; do scdoc <"$p" >/dev/null || exit 1; done
	fi
'

test_done
