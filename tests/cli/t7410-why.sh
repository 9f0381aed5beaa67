#!/bin/bash
# t7410: why a job waits and why it ended, made to happen on the test cluster: a
# held job and one depending on it (status, --json), a job whose script exits 3
# (wait's line and --json), a cancelled one. Uses the default testbed instance.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-testbed-gpu.sh"

tb_up
export DISPATCH_STATE_DIR="$TRASH/state"
sb() {
	local id
	id=$(dispatch run -H hpc -- sbatch --parsable -p cpu --mem=50 -t 2 -o /dev/null "$@") || return 1
	id=${id%%;*}
	echo "$id" >>"$TRASH/jobs"
	echo "$id"
}
# the --wrap text, quoted once more for the remote shell of dispatch run
EXIT3="'exit 3'"
SLEEP60="'sleep 60'"
jq_() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($1)" "$2"; }

test_expect_success 'held, and a dependency on it: status says why in words' '
	held=$(sb -H --wrap true) &&
	dep=$(sb --dependency=afterok:$held --wrap true) &&
	sleep 1 &&
	dispatch status -H hpc "$held" "$dep" >out &&
	test_grep "^$held@hpc: held by its user: .scontrol release. lets it run (JobHeldUser)" out &&
	test_grep "^$dep@hpc: waiting for the jobs it depends on (--dependency) to end (Dependency)" out &&
	dispatch --json status -H hpc "$held" >j &&
	jq_ "d[\"jobs\"][0][\"why\"]" j >why &&
	test_grep "^held by its user: .* (JobHeldUser)$" why &&
	dispatch run -H hpc -- scancel "$held" "$dep"
'

test_expect_success 'a script that exits 3: wait says so, in text and --json' '
	id=$(sb --wrap "$EXIT3") &&
	test_expect_code 1 dispatch wait -H hpc --interval 1 "$id" >out &&
	test_grep "^$id@hpc FAILED exit 3 .*: its script exited with code 3$" out &&
	test_expect_code 1 dispatch --json wait -H hpc --interval 1 "$id" >j &&
	test "$(jq_ "d[\"jobs\"][0][\"why\"]" j)" = "its script exited with code 3"
'

test_expect_success 'a cancelled job' '
	id=$(sb --wrap "$SLEEP60") &&
	dispatch run -H hpc -- scancel "$id" &&
	test_expect_code 1 dispatch wait -H hpc --interval 1 "$id" >out &&
	test_grep "^$id@hpc CANCELLED.*: cancelled (scancel, or an administrator)$" out
'

test_done
