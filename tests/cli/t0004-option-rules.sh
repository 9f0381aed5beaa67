#!/bin/bash
# The rules between a command's options (cmd/options.c, declared beside each option
# table): each broken rule is reported in its own words, with exit 2 and the hint to
# -h, and a job file or command that is wrong is reported before them (submit).
. "$TEST_SRCDIR/tests/cli/lib.sh"

# rule_is 'WORDS' ARGS...: dispatch ARGS exits 2 saying "dispatch: WORDS".
rule_is() {
	local want=$1
	shift
	test_expect_code 2 dispatch "$@" 2>err &&
	echo "dispatch: $want" >want &&
	head -n 1 err >first &&
	test_cmp want first &&
	grep -q "^Try 'dispatch .* -h' for the options.$" err
}

test_expect_success 'submit: -H, --solve and --check' '
	rule_is "-H and --solve exclude each other: name the host, or let the solver pick one" \
		submit -H a --solve -- true &&
	rule_is "--check goes with --solve" submit -H a --check -- true &&
	rule_is "--no-check goes with --solve" submit -H a --no-check -- true &&
	rule_is "--cluster goes with --solve" submit -H a --cluster c -- true &&
	rule_is "--exclude-cluster goes with --solve" notebook -H a --exclude-cluster c &&
	rule_is "--check and --no-check exclude each other" submit --solve --check --no-check -- true &&
	rule_is "submit needs a host: give -H HOST, or --solve to pick one from the inventory" \
		submit -- true &&
	rule_is "submit needs a host: give -H HOST, or --solve to pick one from the inventory" \
		submit-packed --dry-run -- true
'

test_expect_success 'submit: --emit, --wait, --follow, --dry-run and --json' '
	rule_is "--emit writes the scripts of a dry run: add --dry-run" submit -H a --emit d -- true &&
	rule_is "--wait waits for a submitted job: not with --dry-run" \
		submit -H a --dry-run --wait -- true &&
	rule_is "--follow waits for a submitted job: not with --dry-run" \
		submit -H a --wait --follow --dry-run -- true &&
	rule_is "--follow prints the job'"'"'s output: use --wait with --json" \
		submit --json -H a --follow -- true &&
	rule_is "--follow prints the job'"'"'s output: use --wait with --json" \
		submit -H a --follow --json -- true
'

test_expect_success 'submit-packed and notebook: --ref and --dirty; notebook: --detach' '
	rule_is "--ref and --dirty exclude each other: a commit'"'"'s files, or the work tree as it is" \
		submit-packed -H a --ref v1 --dirty -- true &&
	rule_is "--ref and --dirty exclude each other: a commit'"'"'s files, or the work tree as it is" \
		notebook -H a --dirty --ref v1 &&
	rule_is "--detach leaves the job running: not with --cancel-on-exit" \
		notebook -H a --detach --cancel-on-exit &&
	rule_is "-H and --solve exclude each other: name the host, or let the solver pick one" \
		notebook -H a --solve
'

test_expect_success 'submit: the command and the job file come before the rules' '
	test_expect_code 2 dispatch submit 2>err &&
	grep -q "^dispatch: no command to run: give it after" err &&
	test_expect_code 2 dispatch submit -f nothing-here.yaml --check -- true 2>err &&
	grep -q "^dispatch: cannot read job file '"'"'nothing-here.yaml'"'"'" err
'

test_expect_success 'hosts: --check and what goes with it' '
	rule_is "-H goes with --check" hosts -H a &&
	rule_is "--timeout goes with --check" hosts -H a --timeout 3 &&
	rule_is "-H goes with --check" hosts --fanout 3 -H a &&
	rule_is "--names and --check do not go together" hosts --check --names
'

test_expect_success 'hostlist: exactly one of --expand and --fold' '
	rule_is "'"'"'hostlist'"'"' needs exactly one of --expand and --fold" hostlist a &&
	rule_is "'"'"'hostlist'"'"' needs exactly one of --expand and --fold" hostlist --fold --expand a
'

test_expect_success 'queue: --me or -u; ship: one of --ref, --dirty and --files' '
	rule_is "--me and -u cannot go together" queue -u bob --me &&
	rule_is "--ref, --dirty and --files do not go together: choose one" ship --dirty --files x &&
	rule_is "--ref, --dirty and --files do not go together: choose one" ship --ref v1 --dirty h:p &&
	rule_is "--ref, --dirty and --files do not go together: choose one" ship --files --ref v1 x
'

test_done
