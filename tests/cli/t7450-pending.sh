#!/bin/bash
# t7450: why a job pends, with the numbers, made to happen on the test cluster and
# read by status (its "why:" line, --json's "pending") and queue (the detail after
# the reason): a job asking for both GPUs of node1 while another holds one
# (Resources: the request against the partition's free CPUs and GPUs, the expected
# start), a held job (how to release it), a dependency on it and on a running job
# (their states), a QOS limit set with sacctmgr (MaxTRESPerUser=gres/gpu=1: which
# limit, its value), a node drained with a reason holding '|' asked for with -w
# (ReqNodeNotAvail: the node and its whole reason; resumed at once), a partition with
# MaxTime=5 (PartitionTimeLimit). All in one remote script per call. Every job, the
# QOS, the drain and the partition are undone at exit.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-testbed-gpu.sh"

tb_up
export DISPATCH_STATE_DIR="$TRASH/state"
QOS=t7450q
PART=t7450p
REASON='t7450 bad gpu | fan'
resume() { scontrol update nodename=node2 state=resume >/dev/null 2>&1; }
cleanup_t7450() {
	resume
	# shellcheck disable=SC2046
	[ -s "$TRASH/jobs" ] && scancel $(cat "$TRASH/jobs") >/dev/null 2>&1
	scontrol delete partitionname="$PART" >/dev/null 2>&1
	sacctmgr -i modify user "$DISPATCH_TESTBED_USER" set qos-="$QOS" >/dev/null 2>&1
	sacctmgr -i delete qos "$QOS" >/dev/null 2>&1
	tb_cleanup
}
trap cleanup_t7450 EXIT
sb() {
	local id
	id=$(dispatch run -H hpc -- sbatch --parsable --mem=50 -o /dev/null "$@") || return 1
	id=${id%%;*}
	echo "$id" >>"$TRASH/jobs"
	echo "$id"
}
SLEEP300="'sleep 300'"
jq_() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($1)" "$2"; }
# Until squeue gives job $1 a state and reason matching one of the case patterns
# after it (a reason can take a scheduler cycle to appear): bounded, 60 s.
wait_reason() {
	local id=$1 r p
	shift
	for _ in $(seq 1 60); do
		r=$(squeue -h -j "$id" -o '%T %r' 2>/dev/null)
		for p in "$@"; do
			# shellcheck disable=SC2254
			case "$r" in $p) return 0 ;; esac
		done
		sleep 1
	done
	echo "job $id: '$r', not $*" >&2
	return 1
}

test_expect_success 'setup: a QOS with MaxTRESPerUser=gres/gpu=1, a partition with MaxTime=5' '
	sacctmgr -i add qos "$QOS" MaxTRESPerUser=gres/gpu=1 >/dev/null &&
	sacctmgr -i modify user "$DISPATCH_TESTBED_USER" set qos+="$QOS" >/dev/null &&
	scontrol create partitionname="$PART" nodes="node[1-2]" maxtime=5
'

test_expect_success 'Resources and the QOS limit: the request against what is free, the limit' '
	run=$(sb -p gpu --qos="$QOS" --gres=gpu:1 -w node1 -t 5 --wrap "$SLEEP300") &&
	wait_reason "$run" "RUNNING*" &&
	res=$(sb -p gpu --gres=gpu:2 -w node1 -t 2 --wrap true) &&
	qos=$(sb -p gpu --qos="$QOS" --gres=gpu:1 -t 2 --wrap true) &&
	wait_reason "$res" "PENDING Resources" "PENDING Priority" &&
	wait_reason "$qos" "PENDING QOSMax*PerUser*" &&
	dispatch status -H hpc "$res" "$qos" >out &&
	test_grep "^$res@hpc: .*(\(Resources\|Priority\))$" out &&
	test_grep "^  why: asks 1 node, 1 CPU, 50M memory, gres[:/]gpu:2 per node, --time 2:00; partition gpu has [0-9] of [24] CPUs, [0-3] of [24] GPUs, [0-9]*M of [0-9]*M memory free on [12] of 2 nodes up; expected start \(N/A\|20[0-9-]*T[0-9:]*\)$" out &&
	test_grep "^$qos@hpc: .*(QOSMax[A-Za-z]*PerUser[A-Za-z]*)$" out &&
	test_grep "^  why: QOS $QOS: MaxTRESPU=gres/gpu=1$" out &&
	dispatch --json status -H hpc "$res" "$qos" >j &&
	jq_ "d[\"jobs\"][0][\"pending\"][\"detail\"][\"request\"][\"cpus\"]" j >cpus &&
	test "$(cat cpus)" = 1 &&
	jq_ "d[\"jobs\"][0][\"pending\"][\"detail\"][\"free\"]" j >free &&
	jq_ "0 <= d[\"jobs\"][0][\"pending\"][\"detail\"][\"free\"][\"gpus\"] < d[\"jobs\"][0][\"pending\"][\"detail\"][\"free\"][\"gpus_total\"]" j >fits &&
	test "$(cat fits)" = True &&
	test "$(jq_ "d[\"jobs\"][1][\"pending\"][\"detail\"][\"limit\"][\"value\"]" j)" = gres/gpu=1 &&
	test "$(jq_ "d[\"jobs\"][1][\"pending\"][\"detail\"][\"limit\"][\"qos\"]" j)" = "$QOS" &&
	dispatch queue -H hpc --me -t PD >q &&
	test_grep "^$res@hpc .* (\(Resources\|Priority\)) asks 1 node, 1 CPU, .*; expected start " q &&
	test_grep "^$qos@hpc .* (QOSMax[A-Za-z]*PerUser[A-Za-z]*) QOS $QOS: MaxTRESPU=gres/gpu=1$" q &&
	dispatch --json queue -H hpc --me -t PD >qj &&
	test "$(jq_ "[j[\"pending\"][\"detail\"][\"limit\"][\"name\"] for j in d[\"jobs\"] if j[\"id\"] == \"$qos\"][0]" qj)" = MaxTRESPU &&
	scancel "$run" "$res" "$qos"
'

test_expect_success 'held, and a dependency on it and on a running job: how to release, their states' '
	run=$(sb -p cpu -t 5 --wrap "$SLEEP300") &&
	held=$(sb -H -p cpu -t 2 --wrap true) &&
	dep=$(sb -p cpu -t 2 --dependency=afterok:$held:$run --wrap true) &&
	wait_reason "$run" "RUNNING*" &&
	wait_reason "$dep" "PENDING Dependency" &&
	dispatch status -H hpc "$held" "$dep" >out &&
	test "$(table_cell out "$held@hpc" STATE) $(table_cell out "$held@hpc" REASON)" = "PENDING JobHeldUser" &&
	test "$(table_cell out "$dep@hpc" STATE) $(table_cell out "$dep@hpc" REASON)" = "PENDING Dependency" &&
	test_grep "^  why: release it with: scontrol release $held$" out &&
	test_grep "^  why: waits on $held (afterok: PENDING, JobHeldUser), $run (afterok: RUNNING)$" out &&
	dispatch --json status -H hpc "$held" "$dep" >j &&
	test "$(jq_ "d[\"jobs\"][0][\"pending\"][\"detail\"][\"release\"]" j)" = "scontrol release $held" &&
	test "$(jq_ "[(x[\"job\"], x[\"state\"]) for x in d[\"jobs\"][1][\"pending\"][\"detail\"][\"depends_on\"]]" j)" = "[('"'"'$held'"'"', '"'"'PENDING'"'"'), ('"'"'$run'"'"', '"'"'RUNNING'"'"')]" &&
	dispatch queue -H hpc --me -t PD >q &&
	test_grep "^$dep@hpc .* (Dependency) waits on $held (afterok: PENDING, JobHeldUser), $run (afterok: RUNNING)$" q &&
	scancel "$run" "$held" "$dep"
'

test_expect_success 'a drained node asked for with -w: the node and its whole drain reason' '
	scontrol update nodename=node2 state=drain reason="$REASON" &&
	node=$(sb -p cpu -w node2 -t 2 --wrap true) &&
	wait_reason "$node" "PENDING ReqNodeNotAvail*" &&
	dispatch status -H hpc "$node" >out &&
	dispatch --json queue -H hpc --me -t PD >qj &&
	resume &&
	test_grep "^$node@hpc: a node it asked for .*(ReqNodeNotAvail.*)$" out &&
	test_grep "^  why: node2 drain[a-z]*: $REASON (root, 20[0-9-]*T[0-9:]*)$" out &&
	test "$(jq_ "[j[\"pending\"][\"detail\"][\"nodes\"][0][\"reason\"] for j in d[\"jobs\"] if j[\"id\"] == \"$node\"][0]" qj)" = "$REASON" &&
	scancel "$node"
'

test_expect_success 'PartitionTimeLimit: the job'"'"'s --time against the partition'"'"'s MaxTime' '
	part=$(sb -p "$PART" -t 10 --wrap true) &&
	wait_reason "$part" "PENDING PartitionTimeLimit" &&
	dispatch status -H hpc "$part" >out &&
	test_grep "^$part@hpc: its --time is longer than the partition allows: it will never start (PartitionTimeLimit)$" out &&
	test_grep "^  why: asks --time 10:00; partition $PART allows 5:00 (MaxTime)$" out &&
	dispatch --json status -H hpc "$part" >j &&
	test "$(jq_ "d[\"jobs\"][0][\"pending\"][\"detail\"][\"max_time\"]" j)" = 5:00 &&
	test "$(jq_ "d[\"jobs\"][0][\"pending\"][\"words\"]" j)" = "its --time is longer than the partition allows: it will never start" &&
	scancel "$part"
'

test_expect_success 'a running job has no "pending" (--json: null)' '
	run=$(sb -p cpu -t 2 --wrap "$SLEEP300") &&
	wait_reason "$run" "RUNNING*" &&
	dispatch --json status -H hpc "$run" >j &&
	test "$(jq_ "d[\"jobs\"][0][\"pending\"]" j)" = None &&
	scancel "$run"
'

test_done
