#!/bin/bash
# t7410: why a job waits and why it ended, made to happen on the test cluster: a
# held job and one depending on it (status, --json), a job whose script exits 3
# (wait's line and --json), a cancelled one; the last 20 lines of a failed job's
# stderr (its output when they are one file) in wait, status and submit --wait, on
# the cluster and a plain host, --no-tail; elapsed times and limits read alike from
# squeue and sacct. Uses the default testbed instance.
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
	test_grep "^$id@hpc CANCELLED.*: cancelled \(by $DISPATCH_TESTBED_USER (uid $(id -u "$DISPATCH_TESTBED_USER"))\|(scancel, or an administrator)\)$" out
'

LOGDIR="$DISPATCH_TESTBED_DIR/cluster/log"
# 25 lines on stdout and 25 on stderr, then exit 3
NOISY="'for i in \$(seq 1 25); do echo out \$i; echo err \$i >&2; done; exit 3'"

test_expect_success 'the tail of one file for output and errors: wait, status, --json, --no-tail' '
	id=$(sb -o "$LOGDIR/t7410-%j.out" --wrap "$NOISY") &&
	test_expect_code 1 dispatch wait -H hpc --interval 1 "$id" >out &&
	test_grep "^$id@hpc FAILED exit 3 .*: its script exited with code 3$" out &&
	test_grep "^  last 20 lines of $LOGDIR/t7410-$id.out:$" out &&
	test "$(grep -c "^  | " out)" = 20 &&
	test_grep "^  | out 16$" out && test_grep "^  | err 25$" out &&
	! grep -q -e "| out 15$" out &&
	dispatch status -H hpc "$id" >st &&
	test_grep "^$id@hpc: its script exited with code 3$" st &&
	test "$(grep -c "^  | " st)" = 20 &&
	dispatch --json status -H hpc "$id" >j &&
	test "$(jq_ "len(d[\"jobs\"][0][\"log_tail\"])" j)" = 20 &&
	test "$(jq_ "d[\"jobs\"][0][\"log_tail\"][-1]" j)" = "err 25" &&
	test "$(jq_ "d[\"jobs\"][0][\"log_path\"]" j)" = "$LOGDIR/t7410-$id.out" &&
	test_expect_code 1 dispatch --json wait -H hpc --interval 1 "$id" >j &&
	test "$(jq_ "d[\"jobs\"][0][\"log_tail\"][0]" j)" = "out 16" &&
	test_expect_code 1 dispatch wait -H hpc --no-tail --interval 1 "$id" >out &&
	! grep -q -e "| " out &&
	dispatch --json status -H hpc --no-tail "$id" >j &&
	test "$(jq_ "d[\"jobs\"][0][\"log_tail\"]" j)" = None
'

test_expect_success 'a separate error file: its tail, not the output' '
	id=$(sb -o "$LOGDIR/t7410-%j.out" -e "$LOGDIR/t7410-%j.err" --wrap "$NOISY") &&
	test_expect_code 1 dispatch wait -H hpc --interval 1 "$id" >out &&
	test_grep "^  last 20 lines of $LOGDIR/t7410-$id.err:$" out &&
	test "$(grep -c "^  | err " out)" = 20 &&
	! grep -q -e "| out" out
'

test_expect_success 'a job that wrote no file: said so, the wait still answers' '
	id=$(sb --wrap "$EXIT3") &&
	test_expect_code 1 dispatch wait -H hpc --interval 1 "$id" >out &&
	test_grep "^$id@hpc FAILED exit 3" out &&
	test_grep "^  (no log tail for $id@hpc: /dev/null is empty)$" out
'

test_expect_success 'elapsed and time limit read the same from squeue (running) and sacct (ended)' '
	id=$(sb --wrap "$SLEEP60") &&
	for i in $(seq 1 90); do
		dispatch --json status -H hpc "$id" >j &&
		test "$(jq_ "d[\"jobs\"][0][\"state\"]" j)" = RUNNING && break
		sleep 1
	done &&
	test "$(jq_ "d[\"jobs\"][0][\"state\"]" j)" = RUNNING &&
	test "$(jq_ "d[\"jobs\"][0][\"time_limit\"]" j)" = "2:00" &&
	dispatch run -H hpc -- scancel "$id" &&
	test_expect_code 1 dispatch --json wait -H hpc --interval 1 "$id" >j &&
	test "$(jq_ "d[\"jobs\"][0][\"state\"]" j)" = CANCELLED &&
	# slurmdbd records the state and the limit in separate messages: wait for both.
	for i in $(seq 1 60); do
		dispatch run -H hpc -- sacct -n -X -P -j "$id" -o State,Timelimit >acct &&
		grep -q "^CANCELLED.*|00:02:00$" acct && break
		sleep 1
	done &&
	test_grep "^CANCELLED.*|00:02:00$" acct &&
	dispatch --json status -H hpc "$id" >j &&
	test "$(jq_ "d[\"jobs\"][0][\"time_limit\"]" j)" = "2:00" &&
	jq_ "d[\"jobs\"][0][\"elapsed\"]" j >el &&
	test_grep "^[0-9]*:[0-9][0-9]$" el
'

test_expect_success 'plain host: submit --wait shows the failed job with its output tail' '
	test_expect_code 1 dispatch submit -H box1 -J t7410tail --wait -- \
		"for i in \$(seq 1 25); do echo plain \$i; done; exit 4" >out 2>err &&
	test_grep " FAILED exit 4" out &&
	test_grep "^  last 20 lines of .*:$" out &&
	test_grep "^  | plain 6$" out && test_grep "^  | plain 25$" out &&
	! grep -q -e "| plain 5$" out &&
	job=$(sed -n "s/^\([^ ]*@box1\) FAILED.*/\1/p" out) &&
	dispatch --json status "$job" >j &&
	test "$(jq_ "d[\"jobs\"][0][\"log_tail\"][-1]" j)" = "plain 25" &&
	test_expect_code 1 dispatch submit -H box1 -J t7410tail --wait --no-tail -- "exit 4" >out &&
	! grep -q -e "last .* lines" out
'

test_done
