#!/bin/bash
# The committed completion scripts are exactly what the binary generates, and they load.
. "$TEST_SRCDIR/tests/cli/lib.sh"

test_expect_success 'completions/dispatch.bash is up to date' '
	dispatch completion bash >got &&
	test_cmp "$TEST_SRCDIR/completions/dispatch.bash" got
'

test_expect_success 'completions/_dispatch (zsh) is up to date' '
	dispatch completion zsh >got &&
	test_cmp "$TEST_SRCDIR/completions/_dispatch" got
'

test_expect_success 'completions/dispatch.fish is up to date' '
	dispatch completion fish >got &&
	test_cmp "$TEST_SRCDIR/completions/dispatch.fish" got
'

test_expect_success 'the bash script parses and completes commands and options' '
	bash -n "$TEST_SRCDIR/completions/dispatch.bash" &&
	bash -c "
		. \"$TEST_SRCDIR/completions/dispatch.bash\"
		COMP_WORDS=(dispatch comp); COMP_CWORD=1; _dispatch
		printf \"%s\n\" \"\${COMPREPLY[@]}\"
		COMP_WORDS=(dispatch completion --js); COMP_CWORD=2; _dispatch
		printf \"%s\n\" \"\${COMPREPLY[@]}\"
	" >out &&
	test_grep "^completion$" out &&
	test_grep "^--json$" out
'

test_expect_success 'subcommands complete from the table (hosts show, hosts discover, hosts resolve)' '
	bash -c "
		. \"$TEST_SRCDIR/completions/dispatch.bash\"
		COMP_WORDS=(dispatch hosts sh); COMP_CWORD=2; _dispatch
		printf \"%s\n\" \"\${COMPREPLY[@]}\"
		COMP_WORDS=(dispatch hosts di); COMP_CWORD=2; _dispatch
		printf \"%s\n\" \"\${COMPREPLY[@]}\"
		COMP_WORDS=(dispatch hosts re); COMP_CWORD=2; _dispatch
		printf \"%s\n\" \"\${COMPREPLY[@]}\"
	" >out &&
	test_grep "^show$" out &&
	test_grep "^discover$" out &&
	test_grep "^resolve$" out &&
	test_grep "seen_subcommand_from hosts. -a show " "$TEST_SRCDIR/completions/dispatch.fish" &&
	dispatch completion --json | python3 -c "
import json, sys
doc = json.load(sys.stdin)
hosts = [c for c in doc[\"commands\"] if c[\"name\"] == \"hosts\"][0]
subs = [(s[\"name\"], s[\"usage\"], s[\"min_args\"], s[\"max_args\"]) for s in hosts[\"subcommands\"]]
assert subs == [(\"hosts show\", \"[--health] HOST\", 1, 1), (\"hosts discover\", \"HOST\", 1, 1),
                (\"hosts resolve\", \"HOST\", 1, 1)], subs
"
'

test_expect_success 'every command in the table has a completion entry' '
	for c in $(dispatch completion --json | python3 -c "import json,sys; print(\" \".join(c[\"name\"] for c in json.load(sys.stdin)[\"commands\"]))"); do
		test_grep "^	$c)" "$TEST_SRCDIR/completions/dispatch.bash" >/dev/null || exit 1
		test_grep "seen_subcommand_from $c " "$TEST_SRCDIR/completions/dispatch.fish" >/dev/null ||
		test_grep "use_subcommand -a $c " "$TEST_SRCDIR/completions/dispatch.fish" >/dev/null || exit 1
	done
'

test_expect_success 'the zsh script parses' '
	if command -v zsh >/dev/null; then zsh -n "$TEST_SRCDIR/completions/_dispatch"; fi
'

test_expect_success 'no completion for an unknown shell, exit 2' '
	test_expect_code 2 dispatch completion tcsh 2>err &&
	test_grep "tcsh" err
'

test_done
