#!/bin/bash
# t7460: why a job failed, each end made to happen on the test cluster: a job over
# its --mem (the cluster kills a step over its memory: parts/30-slurm's
# OverMemoryKill; the job ends FAILED with signal 9 and dispatch says out of memory,
# MaxRSS against the limit, node and step: the srun step 0 that dispatch's job script
# runs the command in) through submit --wait, status and
# --json; one past its --time (TIMEOUT, elapsed against the limit; submitted first,
# collected last: SLURM needs 60-95 s for it); a node's daemons killed mid-job
# (NODE_FAIL); cancelled by the test user and by root, by name; killed by signals
# (SIGSEGV, and SIGKILL that is not memory); a plain host's job that exits 4 and one
# killed by SIGKILL. Its own testbed instance because it kills and restarts a node's
# slurmd (the shared default one must not see that); two runs (build, build-san)
# take turns (a lock). DISPATCH_TESTBED_DIR=/tmp/dispatch-testbed-t7460
# tests/testbed/down removes the instance.
. "$(dirname "$0")/lib.sh"

testbed_own t7460 "32600 dfl7 10.174" "33100 dfl24 10.175" "33600 dfl26 10.176"
S=$DISPATCH_TESTBED_DIR/slurm
LOG=$DISPATCH_TESTBED_DIR/cluster/log
TUID=$(id -u "$DISPATCH_TESTBED_USER")
jq_() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($1)" "$2"; }

# node2 back in service whatever a test left (its slurmd started again by up, the
# DOWN state resumed), and this file's jobs cancelled
restore() {
	up >/dev/null 2>&1 || true
	scontrol update nodename=node2 state=resume >/dev/null 2>&1 || true
	# shellcheck disable=SC2046
	[ ! -s "$TRASH/jobs" ] || scancel $(cat "$TRASH/jobs") >/dev/null 2>&1 || true
	rm -rf "$TRASH"
}
trap restore EXIT

# sb SBATCH-ARGS...: a raw sbatch on the login node; prints the id
sb() {
	local id
	id=$(dispatch run -H hpc -- sbatch --parsable -p cpu --mem=50 -o "$LOG/t7460-%j.out" "$@") || return 1
	id=${id%%;*}
	echo "$id" >>"$TRASH/jobs"
	echo "$id"
}

# until_running ID: until squeue says RUNNING (bounded: 90 s, the cluster may be busy)
until_running() {
	local i
	for i in $(seq 1 180); do
		[ "$(squeue -h -j "$1" -o %T)" = RUNNING ] && return 0
		sleep 0.5
	done
	echo "job $1 not RUNNING after 90 s: $(squeue -h -j "$1" -o '%T %r')" >&2
	return 1
}

# The TIMEOUT job first: --time=1 is a minute, and slurmctld checks time limits every
# 30 s (then KillWait=5): it ends 60-95 s after it starts, while the others run.
SLEEP300="'sleep 300'"
timeout_job=$(sb -t 1 --wrap "$SLEEP300") || fail_rest "sbatch of the TIMEOUT job failed"

HOG="python3 -c 'import time; a = b\"x\" * (300 << 20); time.sleep(30)'"
test_expect_success 'over its --mem: submit --wait and status say out of memory, MaxRSS of the limit, node, step' '
	test_expect_code 1 dispatch submit -H hpc -J t7460oom -p cpu --mem 100M -t 5 --wait -- "$HOG" >out &&
	test_grep "^[0-9]*@hpc FAILED \(exit 9\|exit 137\|signal 9\) .*: ran out of memory: MaxRSS [0-9.]* MiB of 100.0 MiB limit, on \(node[12]\), step 0; killed for using more than its --mem$" out &&
	test_grep "^  | slurmstepd-node[12]: error: Exceeded job memory limit" out &&
	job=$(sed -n "s/^\([0-9]*@hpc\) FAILED.*/\1/p" out) &&
	dispatch status "$job" >st &&
	test_grep "^$job: ran out of memory: MaxRSS [0-9.]* MiB of 100.0 MiB limit" st &&
	dispatch --json status --no-tail "$job" >j &&
	test "$(jq_ "d[\"jobs\"][0][\"failure\"][\"out_of_memory\"], d[\"jobs\"][0][\"failure\"][\"mem_limit_bytes\"], d[\"jobs\"][0][\"failure\"][\"max_rss_step\"]" j)" = "True 104857600 0" &&
	test "$(jq_ "d[\"jobs\"][0][\"failure\"][\"max_rss_bytes\"] > 104857600" j)" = True &&
	node=$(sed -n "s/.*MaxRSS .*limit, on \(node[12]\), step 0;.*/\1/p" out) &&
	test "$(jq_ "d[\"jobs\"][0][\"failure\"][\"max_rss_node\"]" j)" = "$node"
'

SEGV="'kill -SEGV \$\$'"
KILL9="'kill -KILL \$\$'"
test_expect_success 'killed by a signal: SIGSEGV, and a SIGKILL under its memory is not out of memory' '
	segv=$(sb --wrap "$SEGV") && kill9=$(sb --wrap "$KILL9") &&
	test_expect_code 1 dispatch wait -H hpc --interval 1 --timeout 120 --no-tail "$segv" "$kill9" >out &&
	test_grep "^$segv@hpc FAILED signal 11 .*: killed by signal 11 (SIGSEGV)$" out &&
	test_grep "^$kill9@hpc FAILED signal 9 .*: killed by signal 9 (SIGKILL)$" out &&
	test_expect_code 1 dispatch --json wait -H hpc --interval 1 --timeout 120 "$kill9" >j &&
	test "$(jq_ "d[\"jobs\"][0][\"failure\"][\"out_of_memory\"], d[\"jobs\"][0][\"failure\"][\"signal\"]" j)" = "False 9"
'

SLEEP120="'sleep 120'"
test_expect_success 'cancelled by the test user and by root: named (the cluster passwd), uid in --json' '
	byuser=$(sb --wrap "$SLEEP120") && byroot=$(sb --wrap "$SLEEP120") &&
	dispatch run -H hpc -- scancel "$byuser" && scancel "$byroot" &&
	test_expect_code 1 dispatch wait -H hpc --interval 1 --timeout 120 --no-tail "$byuser" "$byroot" >out &&
	test_grep "^$byuser@hpc CANCELLED.*: cancelled by $DISPATCH_TESTBED_USER (uid $TUID)$" out &&
	test_grep "^$byroot@hpc CANCELLED.*: cancelled by root (uid 0)$" out &&
	dispatch --json status -H hpc "$byuser" >j &&
	test "$(jq_ "d[\"jobs\"][0][\"failure\"][\"cancelled_by\"], d[\"jobs\"][0][\"failure\"][\"cancelled_by_uid\"]" j)" = "$DISPATCH_TESTBED_USER $TUID"
'

# node2's daemons killed (slurmd, the job's slurmstepd and processes: the node died).
# slurmctld would call it DOWN after SlurmdTimeout (300 s); an administrator, or its
# health check, says so at once: scontrol update state=down. slurmd is started again
# (up) and the node resumed (ReturnToService=2, else state=resume).
test_expect_success 'a node that died under the job: NODE_FAIL, which node is down and why (sinfo)' '
	nf=$(sb -w node2 --no-requeue --wrap "$SLEEP120") &&
	until_running "$nf" &&
	pids=$(node_pids node2) &&
	test -n "$pids" &&
	kill -KILL $pids &&
	scontrol update nodename=node2 state=down reason="t7460: its slurmd was killed" &&
	test_expect_code 1 dispatch wait -H hpc --interval 1 --timeout 120 "$nf" >out &&
	test_grep "^$nf@hpc NODE_FAIL .*: a node it ran on failed: node2 down\*\? (t7460: its slurmd was killed)$" out &&
	dispatch --json status -H hpc --no-tail "$nf" >j &&
	test "$(jq_ "d[\"jobs\"][0][\"failure\"][\"state\"], d[\"jobs\"][0][\"failure\"][\"nodes\"]" j)" = "NODE_FAIL node2" &&
	jq_ "d[\"jobs\"][0][\"failure\"][\"failed_nodes\"]" j >fn &&
	test_grep "^node2 down\*\? (t7460: its slurmd was killed)$" fn &&
	up >/dev/null &&
	{ scontrol update nodename=node2 state=resume 2>/dev/null || true; }
'

test_expect_success 'node2 takes jobs again after it came back' '
	for i in $(seq 1 60); do
		sinfo -h -n node2 -p cpu -o %t | grep -q -E "^(idle|mix|alloc)$" && break
		sleep 1
	done &&
	sinfo -h -n node2 -p cpu -o %t | grep -q -E "^(idle|mix|alloc)$"
'

test_expect_success 'plain host: an exit code and a signal, said as for SLURM jobs' '
	test_expect_code 1 dispatch submit -H box1 -J t7460exit --wait --no-tail -- "exit 4" >out &&
	test_grep "@box1 FAILED exit 4 .*: its command exited with code 4$" out &&
	test_expect_code 1 dispatch submit -H box1 -J t7460kill --wait --no-tail -- "kill -KILL \$\$" >out &&
	test_grep "@box1 FAILED exit 137 .*: killed by signal 9 (SIGKILL)$" out &&
	job=$(sed -n "s/^\([^ ]*@box1\) FAILED.*/\1/p" out) &&
	dispatch status --no-tail "$job" >st &&
	test_grep "^$job: killed by signal 9 (SIGKILL)$" st &&
	dispatch --json status --no-tail "$job" >j &&
	test "$(jq_ "d[\"jobs\"][0][\"why\"]" j)" = "killed by signal 9 (SIGKILL)" &&
	test "$(jq_ "d[\"jobs\"][0][\"failure\"][\"signal_name\"], d[\"jobs\"][0][\"failure\"][\"max_rss_bytes\"]" j)" = "SIGKILL None"
'

test_expect_success 'past its --time: TIMEOUT, elapsed against the limit' '
	test_expect_code 1 dispatch wait -H hpc --interval 2 --timeout 200 --no-tail "$timeout_job" >out &&
	test_grep "^$timeout_job@hpc TIMEOUT .*: reached its time limit (--time) and was killed: ran 1:[0-9][0-9] of 1:00$" out &&
	dispatch --json status -H hpc --no-tail "$timeout_job" >j &&
	test "$(jq_ "d[\"jobs\"][0][\"failure\"][\"state\"], d[\"jobs\"][0][\"failure\"][\"time_limit\"]" j)" = "TIMEOUT 1:00"
'

# What status asks of a host with detail, whatever the number of jobs: one exchange
# for where they stand, one for how the failed ones ended, why the pending one waits
# and where each writes, one for all the log tails (sshd's VERBOSE log of this
# instance's hpc: a "Starting session: command" line each; no other file uses it).
test_expect_success 'status of every failed job here and a held one: three exchanges, a tail (or why none) each' '
	held=$(sb -H --wrap true) &&
	n=$(grep -c . "$TRASH/jobs") && test "$n" -ge 7 &&
	sshd_log=$DISPATCH_TESTBED_DIR/sshd/hpc/log &&
	before=$(grep -c "Starting session: command" "$sshd_log") &&
	dispatch status -H hpc $(cat "$TRASH/jobs") >out 2>err &&
	after=$(grep -c "Starting session: command" "$sshd_log") &&
	test $((after - before)) = 3 &&
	test_grep "release it with: scontrol release $held" out &&
	test "$(grep -c "^  .*$LOG/t7460-[0-9]*\.out" out)" = $((n - 1))
'

test_done
