#!/bin/bash
# t7200: dispatch wait on the testbed cluster (hpc) and plain host box1: a job that
# completes (exit 0), fails (exit 1, its exit code shown), is cancelled, runs into
# its --time limit (sbatch's TIMEOUT; runs in the background meanwhile); jobs on two
# hosts at once (hpc and box1); a requeued job is waited through its second run;
# --until running prints the first node, and notices a
# job that ended without being seen running; --timeout gives 3. Option errors need
# no testbed. Job names start with jw$$ (other tests share the cluster).
. "$(dirname "$0")/lib.sh"

test_expect_success 'option errors exit 2' '
	test_expect_code 2 dispatch wait --until soon 1@hpc 2>err && test_grep "running.*done" err &&
	test_expect_code 2 dispatch wait --interval x 1@hpc 2>err && test_grep "interval" err &&
	test_expect_code 2 dispatch wait --timeout 0 1@hpc 2>err &&
	test_expect_code 2 dispatch wait 2>err
'

testbed_up
export DISPATCH_STATE_DIR="$TRASH/state"
N=jw$$
jget() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); exec("print(" + sys.argv[2] + ")")' "$@"; }

# The --time 1 job takes a minute or two: its wait runs in the background while the
# other tests run, and the last test collects it.
if tjob=$(dispatch submit -H hpc -J "${N}time" -p cpu --time 1 -- "sleep 300"); then
	(dispatch --json wait --interval 5 "$tjob" >timeout.json 2>timeout.err; echo $? >timeout.rc) &
else
	echo "submit failed" >timeout.err && echo 99 >timeout.rc
fi

# A requeued job (scontrol requeue by its owner, as a preemption would) goes back to
# PENDING with a BeginTime two minutes on (SLURM's own delay), then runs again: its
# wait must not end at the requeue. Also in the background, collected at the end.
if rjob=$(dispatch submit -H hpc -J "${N}requeue" -p cpu --requeue -- \
	'sleep 4; echo "run ${SLURM_RESTART_COUNT:-0}"'); then
	(dispatch -v --json wait --interval 2 --timeout 400 "$rjob" >requeue.json 2>requeue.err
		echo $? >requeue.rc) &
	for i in $(seq 1 100); do
		grep -q ": RUNNING" requeue.err 2>/dev/null && break
		sleep 0.2
	done
	dispatch run -H hpc -- scontrol requeue "${rjob%@hpc}" 2>>requeue.err ||
		echo "scontrol requeue failed" >>requeue.err
else
	echo "submit failed" >requeue.err && echo 99 >requeue.rc
fi

test_expect_success 'a job that completes: exit 0, one summary line' '
	job=$(dispatch submit -H hpc -J "${N}ok" -p cpu -- "sleep 2") &&
	dispatch wait --interval 1 "$job" >out &&
	test "$(wc -l <out)" = 1 &&
	test_grep "^$job COMPLETED exit 0 elapsed " out
'

test_expect_success 'a job that fails: exit 1, its exit code shown' '
	job=$(dispatch submit -H hpc -J "${N}fail" -p cpu -- "sleep 1; exit 3") &&
	test_expect_code 1 dispatch wait --interval 1 "${job%@hpc}" -H hpc >out &&
	test_grep "^$job FAILED exit 3 " out &&
	test_expect_code 1 dispatch --json wait "$job" >w.json &&
	test "$(jget w.json "d[\"jobs\"][0][\"exit_code\"], d[\"jobs\"][0][\"state\"], d[\"jobs\"][0][\"ended\"]")" = "3 FAILED True"
'

test_expect_success '--until running prints the first node; a cancelled job: exit 1' '
	job=$(dispatch submit -H hpc -J "${N}cancel" -p cpu --nodes 2 -- "sleep 300") &&
	dispatch wait --until running --interval 1 --timeout 120 "$job" >out &&
	test_grep -E "^$job RUNNING on node[12]$" out &&
	dispatch --json wait --until running "$job" >r.json &&
	test "$(jget r.json "d[\"jobs\"][0][\"first_node\"]")" = node1 &&
	{ (dispatch --json wait --interval 1 "$job" >c.json; echo $? >c.rc) & } &&
	sleep 2 && dispatch cancel "$job" >/dev/null &&
	for i in $(seq 1 300); do [ -s c.rc ] && break; sleep 0.2; done &&
	test "$(cat c.rc)" = 1 &&
	test "$(jget c.json "d[\"jobs\"][0][\"state\"]")" = CANCELLED
'

test_expect_success '--until running: a job that ended unseen ends the wait by its end state' '
	ok=$(dispatch submit -H hpc -J "${N}quick" -p cpu -- true) &&
	bad=$(dispatch submit -H hpc -J "${N}quickfail" -p cpu -- "exit 4") &&
	dispatch wait --interval 1 "$ok" >/dev/null &&
	test_expect_code 1 dispatch wait --interval 1 "$bad" >/dev/null &&
	dispatch wait --until running "$ok" >out &&
	test_grep "^$ok COMPLETED exit 0 .*ended before it was seen running" out &&
	test_expect_code 1 dispatch wait --until running "$bad" >out &&
	test_grep "^$bad FAILED exit 4 .*ended before it was seen running" out
'

test_expect_success '--timeout: exit 3, the job as last seen' '
	job=$(dispatch submit -H hpc -J "${N}long" -p cpu -- "sleep 300") &&
	test_expect_code 3 dispatch wait --interval 1 --timeout 3 "$job" >out 2>err &&
	test_grep "timed out" err &&
	test_grep -E "^$job (PENDING|RUNNING).*still waiting" out &&
	dispatch cancel "$job" >/dev/null
'

test_expect_success 'jobs on two hosts (hpc and plain box1) in one wait' '
	s=$(dispatch submit -H hpc -J "${N}mix" -p cpu -- "sleep 3") &&
	p=$(dispatch submit -H box1 -J "${N}mix" -- "sleep 4") &&
	pf=$(dispatch submit -H box1 -J "${N}mixfail" -- "sleep 1; exit 5") &&
	dispatch --json wait --interval 1 "$s" "$p" >w.json &&
	test "$(jget w.json "\" \".join(j[\"state\"] + \"/\" + j[\"type\"] for j in d[\"jobs\"])")" = "COMPLETED/slurm COMPLETED/plain" &&
	test "$(jget w.json "\" \".join(sorted(h[\"host\"] for h in d[\"hosts\"]))")" = "box1 hpc" &&
	test_expect_code 1 dispatch wait --interval 1 "$s" "$pf" >out &&
	test_grep "^$s COMPLETED exit 0" out && test_grep "^$pf FAILED exit 5" out
'

test_expect_success 'a job over its --time limit: TIMEOUT, exit 1' '
	for i in $(seq 1 1500); do [ -s timeout.rc ] && break; sleep 0.2; done &&
	cat timeout.err >&2 &&
	test "$(cat timeout.rc)" = 1 &&
	test "$(jget timeout.json "d[\"jobs\"][0][\"state\"]")" = TIMEOUT
'

test_expect_success 'a requeued job: the wait goes on through PENDING and ends with its second run' '
	for i in $(seq 1 2000); do [ -s requeue.rc ] && break; sleep 0.2; done &&
	cat requeue.err >&2 &&
	test "$(cat requeue.rc)" = 0 &&
	test "$(jget requeue.json "d[\"jobs\"][0][\"state\"]")" = COMPLETED &&
	sed -n "/: RUNNING/,\$p" requeue.err | grep -q ": PENDING" &&
	log=$(dispatch logs "$rjob") &&
	test "$log" = "run 1"
'

test_done
