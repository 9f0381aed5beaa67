#!/bin/bash
# t7920: a sweep larger than the cluster's MaxArraySize (dispatch-submit(1) SWEEPS),
# on a test bed instance of its own whose SLURM has MaxArraySize=4 (the default
# instance is shared by the files running beside this one: its configuration stays
# SLURM's default). A 10-task sweep goes as 3 job arrays (tasks 0-3, 4-7, 8-9, each
# with task ids 0-3 at most), one sbatch.sh for all: every task runs once with its
# own parameters and index (SLURM_ARRAY_TASK_ID plus the array's first index), sacct
# has the 3 arrays, the ledger a row per array (sweep_first, sweep_tasks), status
# says each task's values, and --max-parallel 2 holds across the arrays (squeue
# polled while they run). The dry run shows one sbatch per array.
. "$(dirname "$0")/lib.sh"

export DISPATCH_TESTBED_MAX_ARRAY_SIZE=4
testbed_own t7920 "37500 dsa7 10.183" "38000 dsa24 10.184" "38500 dsa26 10.185"
OUT=$DISPATCH_TESTBED_DIR/cluster/work/t7920-$$
mkdir -p "$OUT" && chmod 777 "$OUT" || exit 1
trap 'rm -rf "$OUT" "$TRASH"' EXIT
jq_() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($1)" "$2"; }
Q="'"
# Each task: a line of what it saw (appended: a task that ran twice shows), then a
# few seconds of running, so that the throttle shows in squeue.
TASK='printf "%s|%s|%s|%s|%s|%s\n" "$DISPATCH_SWEEP_INDEX" "$DISPATCH_SWEEP_SIZE" "$DISPATCH_SWEEP_ID" "$DISPATCH_PARAM_LR" "$DISPATCH_PARAM_SEED" {seed} >>'"$OUT"'/task-$DISPATCH_SWEEP_INDEX; sleep 3'

test_expect_success 'the cluster has MaxArraySize 4: an array of 10 is refused' '
	scontrol show config | grep -q "^MaxArraySize *= 4$" &&
	! sbatch -p cpu --array=0-9 --wrap true 2>err &&
	test_grep "array" err
'

test_expect_success 'the dry run shows one sbatch per array, each after the one before' '
	dispatch submit -H hpc --sweep n=1..1002 --max-parallel 3 --dependency afterok:7 \
		--dry-run -- echo {n} >dry &&
	test_grep "^==> sbatch, once per job array" dry &&
	test_grep "^sbatch --array=.0-1000%3. .*/sbatch.sh 0$" dry &&
	test_grep "^sbatch --array=.0%3. --dependency=.afterok:7,afterany:<array 1>. .*/sbatch.sh 1001$" dry &&
	! grep "^#SBATCH --array" dry
'

test_expect_success 'a 10-task sweep: 3 arrays, each task once with its values, at most 2 running' '
	dispatch --json submit -H hpc -J t7920grid -p cpu --mem 50 --sweep lr=0.1,0.01 \
		--sweep seed=1..5 --max-parallel 2 -- "$TASK" >sub.json &&
	sid=$(jq_ "d[\"sweep\"][\"id\"]" sub.json) &&
	test "$(jq_ "[(a[\"first\"], a[\"tasks\"]) for a in d[\"sweep\"][\"arrays\"]]" sub.json)" = \
		"[(0, ${Q}0-3${Q}), (4, ${Q}4-7${Q}), (8, ${Q}8-9${Q})]" &&
	ids=$(jq_ "\",\".join(a[\"job\"].split(\"@\")[0] for a in d[\"sweep\"][\"arrays\"])" sub.json) &&
	test "$(jq_ "d[\"job\"]" sub.json)" = "${ids%%,*}@hpc" &&
	most=0 && left=x &&
	for i in $(seq 1 360); do
		n=$(squeue -h -j "$ids" -t RUNNING -o %i | wc -l) &&
		if [ "$n" -gt "$most" ]; then most=$n; fi &&
		left=$(squeue -h -j "$ids" -o %i | wc -l) &&
		if [ "$left" = 0 ]; then break; fi &&
		sleep 0.5
	done &&
	test "$left" = 0 && test "$most" -ge 1 && test "$most" -le 2 &&
	dispatch wait --timeout 60 $(echo "$ids" | sed "s/\([0-9]*\)/\1@hpc/g; s/,/ /g") >w &&
	for i in 0 1 2 3 4 5 6 7 8 9; do
		lr=0.1 && if [ "$i" -ge 5 ]; then lr=0.01; fi &&
		seed=$((i % 5 + 1)) &&
		test "$(cat "$OUT/task-$i")" = "$i|10|$sid|$lr|$seed|$seed" || exit 1
	done &&
	# sacct: the 3 arrays, task ids below 4 (4 + 4 + 2 tasks)
	sacct -n -X -j "$ids" -o JobID%20 >acct &&
	test "$(grep -c "^ *[0-9]*_[0-3] *$" acct)" = 10 &&
	test "$(sed "s/_.*//; s/ //g" acct | sort -u | wc -l)" = 3 &&
	# the ledger: a row per array, one sweep
	sqlite3 "$DISPATCH_STATE_DIR/ledger.db" "select sweep_size, sweep_first, sweep_tasks, state from jobs where sweep_id = ${Q}$sid${Q} order by row" >rows &&
	printf "10|0|0-3|submitted\n10|4|4-7|submitted\n10|8|8-9|submitted\n" >want &&
	test_cmp want rows &&
	# status: an array task says its sweep index (its task id plus its first)
	second=$(echo "$ids" | cut -d, -f2) &&
	dispatch status "$second@hpc" >st &&
	test_grep "^${second}_1@hpc: $sid task 5/10: lr=0.01 seed=1$" st &&
	# the sweep as one: every task from its own array, the table in sweep order
	third=$(echo "$ids" | cut -d, -f3) &&
	dispatch wait --timeout 60 "$sid" >sw &&
	test_grep "^10 tasks: 10 COMPLETED$" sw &&
	test_grep "^5     0.01  1     COMPLETED .* ${second}_1@hpc$" sw &&
	test_grep "^9     0.01  5     COMPLETED .* ${third}_1@hpc$" sw
'

test_expect_success 'text output: every array; without --max-parallel no chain' '
	dispatch submit -H hpc -J t7920text -p cpu --mem 50 --sweep k=1..5 -- true >sub &&
	test_grep "^sweep sweep-[0-9a-f]*: 5 tasks on hpc as [0-9]*@hpc (0-3), [0-9]*@hpc (4)$" sub &&
	last=$(sed "s/.*, \([0-9]*\)@hpc (4)$/\1/" sub) &&
	scontrol show job "$last" >job &&
	test_grep "Dependency=(null)" job &&
	dispatch wait --timeout 120 $(grep -o "[0-9]*@hpc" sub) >w
'

test_done
