#!/bin/bash
# t7900: a sweep (--sweep, dispatch-submit(1) SWEEPS) on the test cluster: a 2x3
# grid as one SLURM job array of 6 tasks, --max-parallel 2 (squeue polled while it
# runs: never more than 2 running), each task with its own parameters in
# DISPATCH_PARAM_* and in the command's {NAME} (bare and inside quotes), its index
# and the sweep's id and size; hostile values (quotes, $(...), backquotes, spaces)
# reach the command whole and never run; the dry run's table of tasks; what is
# refused (--array with --sweep, a bad name); tasks that are runs, each requeued
# alone. Uses the default test bed instance.
. "$(dirname "$0")/lib.sh"

testbed_up
export DISPATCH_STATE_DIR="$TRASH/state"
OUT=$DISPATCH_TESTBED_DIR/cluster/work/t7900-$$
mkdir -p "$OUT" && chmod 777 "$OUT" || exit 1
trap 'rm -rf "$OUT" "$TRASH"' EXIT
jq_() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($1)" "$2"; }
Q="'"
# Each task: a line of what it saw, its metrics (loss twice: the last counts), then
# a few seconds of running (so that the throttle shows in squeue).
TASK='printf "%s|%s|%s|%s|%s|%s|%s\n" "$DISPATCH_SWEEP_INDEX" "$DISPATCH_SWEEP_SIZE" "$DISPATCH_SWEEP_ID" "$DISPATCH_PARAM_LR" "$DISPATCH_PARAM_SEED" {lr} "s={seed}" >'"$OUT"'/task-$DISPATCH_SWEEP_INDEX; echo DISPATCH_METRIC loss=9; echo "DISPATCH_METRIC acc=0.$DISPATCH_SWEEP_INDEX"; echo "DISPATCH_METRIC loss=$((7 - DISPATCH_SWEEP_INDEX)).5"; sleep 4'
# A sweep of runs (--max-restarts 1 --restart-on error): task 0 completes, task 1
# fails its first attempt only, task 2 every attempt; each says its run id and attempt.
RUNTASK='echo "$DISPATCH_RUN_ID $DISPATCH_ATTEMPT" >>'"$OUT"'/run-{f}; test {f} = 0 || { test {f} = 1 && test "$DISPATCH_ATTEMPT" -ge 1; }'
BADVALS="v=it's,\$(touch $OUT/pwned),\`touch $OUT/pwned2\`,a  b;c"
BADCMD="printf '<%s>\\n' {v} '[{v}]' \"\$(printf '(%s)' \"{v}\")\" >$OUT/bad-\$DISPATCH_SWEEP_INDEX"

test_expect_success 'the dry run shows the tasks, the array and each task'"'"'s line' '
	dispatch submit -H hpc --sweep lr=0.1,0.01 --sweep seed=1..5:2 --max-parallel 2 --dry-run \
		-- python train.py --lr {lr} --seed {seed} >dry &&
	test_grep "^==> the sweep.s 6 tasks <==$" dry &&
	test_grep "^TASK  lr    seed$" dry &&
	test_grep "^5     0.01  5$" dry &&
	test_grep "^sbatch --array=.0-5%2. .*/sbatch.sh 0$" dry && ! grep "^#SBATCH --array" dry &&
	test_grep "^#SBATCH --output=.*/%x-%A_%a.out$" dry &&
	test_grep "^4) export DISPATCH_PARAM_LR=.0.01. DISPATCH_PARAM_SEED=.3. ;;$" dry &&
	grep "^dispatch_command=" dry >cmdline &&
	test_grep "{DISPATCH_PARAM_LR}.*{DISPATCH_PARAM_SEED}" cmdline &&
	! grep "0\.01" cmdline
'

test_expect_success 'refused: --array with --sweep, a bad name, --max-parallel alone' '
	test_expect_code 2 dispatch submit -H hpc --sweep a=1,2 --array 0-1 -- true 2>err &&
	test_grep "sweep makes the job array itself: drop --array" err &&
	test_expect_code 2 dispatch submit -H hpc --sweep 1a=1,2 -- true 2>err &&
	test_grep "expected NAME=V1,V2" err &&
	test_expect_code 2 dispatch submit -H hpc --max-parallel 2 -- true 2>err &&
	test_grep "max-parallel 2 needs --sweep" err
'

test_expect_success 'a 2x3 grid: one array of 6, at most 2 running, each task its parameters' '
	dispatch --json submit -H hpc -J t7900grid -p cpu --mem 50 --sweep lr=0.1,0.01 \
		--sweep seed=1..3 --max-parallel 2 -- "$TASK" >sub.json &&
	job=$(jq_ "d[\"job\"]" sub.json) && id=${job%@hpc} &&
	test "$(jq_ "d[\"sweep\"][\"tasks\"], d[\"sweep\"][\"params\"]" sub.json)" = "6 [${Q}lr${Q}, ${Q}seed${Q}]" &&
	sid=$(jq_ "d[\"sweep\"][\"id\"]" sub.json) &&
	echo "$sid $id" >"$TRASH/grid" &&
	most=0 && left=x &&
	for i in $(seq 1 240); do
		n=$(squeue -h -j "$id" -t RUNNING -o %i | wc -l) &&
		if [ "$n" -gt "$most" ]; then most=$n; fi &&
		left=$(squeue -h -j "$id" -o %i | wc -l) &&
		if [ "$left" = 0 ]; then break; fi &&
		sleep 0.5
	done &&
	test "$left" = 0 && test "$most" -ge 1 && test "$most" -le 2 &&
	dispatch wait --timeout 60 "$job" >w &&
	test "$(sacct -n -X -j "$id" -o JobID%20 | grep -c "^ *${id}_[0-5] *$")" = 6 &&
	for i in 0 1 2 3 4 5; do
		lr=0.1 && if [ "$i" -ge 3 ]; then lr=0.01; fi &&
		seed=$((i % 3 + 1)) &&
		test "$(cat "$OUT/task-$i")" = "$i|6|$sid|$lr|$seed|$lr|s=$seed" || exit 1
	done &&
	test "$(sqlite3 "$DISPATCH_STATE_DIR/ledger.db" "select sweep_id, sweep_size from jobs where job_id = ${Q}$id${Q}")" = "$sid|6" &&
	# status: each task with its values
	dispatch status "$job" >st &&
	test_grep "^${id}_4@hpc: $sid task 4/6: lr=0.01 seed=2$" st &&
	test "$(grep -c "^${id}_[0-5]@hpc: $sid task " st)" = 6 &&
	dispatch --json status "$job" >st.json &&
	test "$(jq_ "[(j[\"sweep\"][\"index\"], j[\"sweep\"][\"params\"][\"lr\"]) for j in d[\"jobs\"] if j[\"id\"] == \"${id}_3\"][0]" st.json)" = "(3, ${Q}0.01${Q})"
'

test_expect_success 'status SWEEP: a row per task with its values and last metrics, --sort, --json' '
	read -r sid id <"$TRASH/grid" &&
	dispatch status "$sid" >st &&
	test_grep "^sweep $sid (t7900grid): 6 tasks on hpc$" st &&
	test_grep "^TASK  lr    seed  STATE      EXIT  ELAPSED  loss  acc  JOB$" st &&
	test_grep "^4     0.01  2     COMPLETED  0     0:0[0-9]   *3.5   0.4  ${id}_4@hpc$" st &&
	test "$(grep -c "COMPLETED  0 " st)" = 6 &&
	test_grep "^6 tasks: 6 COMPLETED$" st &&
	# the start of the id is enough; --sort by a metric, by a parameter descending
	dispatch status --sort loss "${sid%????????}" >sorted &&
	test "$(sed -n "3,8p" sorted | cut -c1)" = "$(printf "%s
" 5 4 3 2 1 0)" &&
	dispatch status --sort -seed "$sid" >sorted &&
	test "$(sed -n "3,8p" sorted | cut -c1)" = "$(printf "%s
" 2 5 1 4 0 3)" &&
	test_expect_code 2 dispatch status --sort nope "$sid" 2>err &&
	test_grep "has no parameter or metric .nope. (it has: lr, seed, loss, acc" err &&
	test_expect_code 2 dispatch status "$sid" "$id@hpc" 2>err &&
	test_grep "give sweeps and jobs to separate calls" err &&
	test_expect_code 4 dispatch status sweep-0123456789abcdef 2>err &&
	test_grep "unknown sweep .sweep-0123456789abcdef." err &&
	dispatch --json status "$sid" >st.json &&
	test "$(jq_ "[(t[\"index\"], t[\"params\"][\"seed\"], t[\"state\"], t[\"metrics\"][\"loss\"], t[\"job\"]) for t in d[\"sweeps\"][0][\"tasks\"]][4]" st.json)" = "(4, ${Q}2${Q}, ${Q}COMPLETED${Q}, ${Q}3.5${Q}, ${Q}${id}_4@hpc${Q})" &&
	test "$(jq_ "d[\"sweeps\"][0][\"states\"], d[\"sweeps\"][0][\"jobs\"]" st.json)" = "{${Q}COMPLETED${Q}: 6} [${Q}${id}@hpc${Q}]" &&
	# wait on the sweep: its table, exit 0 as every task completed
	dispatch wait --timeout 60 "$sid" >w &&
	test_grep "^6 tasks: 6 COMPLETED$" w &&
	# logs of one task
	dispatch logs --task 4 "$sid" >log4 &&
	test_grep "^DISPATCH_METRIC loss=3.5$" log4 &&
	test_expect_code 2 dispatch logs "$sid" 2>err &&
	test_grep "is a sweep: say which task with --task K" err &&
	test_expect_code 4 dispatch logs --task 6 "$sid" 2>err &&
	test_grep "has no task 6 (its tasks: 0 to 5)" err
'

test_expect_success 'cancel SWEEP: every task, running or pending; jobs --sweep' '
	dispatch --json submit -H hpc -J t7900cancel -p cpu --mem 50 --sweep i=1..4 \
		--max-parallel 1 -- "sleep 300" >can.json &&
	sid=$(jq_ "d[\"sweep\"][\"id\"]" can.json) && job=$(jq_ "d[\"job\"]" can.json) &&
	dispatch wait --until running --timeout 60 "$job" >/dev/null &&
	dispatch status "$sid" >st &&
	test_grep "^4 tasks: 1 RUNNING, 3 PENDING$" st &&
	dispatch cancel "$sid" >c &&
	test_expect_code 1 dispatch wait --timeout 60 "$sid" >w &&
	test_grep "^4 tasks: 4 CANCELLED$" w &&
	dispatch --json jobs --sweep "$sid" >jobs.json &&
	test "$(jq_ "[(j[\"job\"], j[\"sweep\"]) for j in d[\"jobs\"]]" jobs.json)" = "[(${Q}$job${Q}, ${Q}$sid${Q})]"
'

test_expect_success 'submit --retry SWEEP: only the failed task again, from the same stage' '
	dispatch --json submit -H hpc -J t7900retry -p cpu --mem 50 --sweep i=0..3 \
		--max-parallel 2 -- "echo try-{i}; test {i} != 2 || test -f $OUT/fixed" >r.json &&
	sid=$(jq_ "d[\"sweep\"][\"id\"]" r.json) &&
	test_expect_code 1 dispatch wait --timeout 120 "$sid" >w &&
	test_grep "^4 tasks: 3 COMPLETED, 1 FAILED$" w &&
	test_expect_code 2 dispatch submit --retry "$sid" -- true 2>err &&
	test_grep "give no COMMAND" err &&
	test_expect_code 2 dispatch submit --retry "$sid" -t 5 2>err &&
	test_grep "only --max-parallel may change" err &&
	touch "$OUT/fixed" &&
	dispatch submit --retry "${sid%????????}" >retry &&
	test_grep "^sweep $sid: 1 task again (2) on hpc as [0-9]*@hpc$" retry &&
	dispatch wait --timeout 120 "$sid" >w2 &&
	test_grep "^4 tasks: 4 COMPLETED$" w2 &&
	rid=$(sed -n "s/.* as \([0-9]*\)@hpc$/\1/p" retry) &&
	test_grep "^2     2  COMPLETED .* ${rid}_0@hpc$" w2 &&
	test "$(sqlite3 "$DISPATCH_STATE_DIR/ledger.db" "select sweep_tasks, sweep_parallel from jobs where job_id = ${Q}$rid${Q}")" = "2|2" &&
	dispatch logs --task 2 "$sid" >log2 &&
	test_grep "^try-2$" log2 &&
	dispatch submit --retry "$sid" >none 2>err &&
	test_must_be_empty none &&
	test_grep "no task to retry (4 tasks: 4 COMPLETED)" err &&
	# refused: a submission of the sweep whose outcome is unknown; a stage dir an
	# older dispatch wrote (its tasks cannot run alone)
	db=$DISPATCH_STATE_DIR/ledger.db &&
	sqlite3 "$db" "update jobs set state = ${Q}unknown${Q} where job_id = ${Q}$rid${Q}" &&
	test_expect_code 1 dispatch submit --retry "$sid" 2>err &&
	test_grep "has an unknown outcome (token dsp-[0-9a-f]*): it may run; look for it before a retry" err &&
	sqlite3 "$db" "update jobs set state = ${Q}COMPLETED${Q} where job_id = ${Q}$rid${Q}" &&
	script=$(sqlite3 "$db" "select script_path from jobs where sweep_id = ${Q}$sid${Q} limit 1") &&
	sed -i "s/DISPATCH_SWEEP_FIRST/DISPATCH_OFFSET/g" "$script" &&
	sqlite3 "$db" "delete from jobs where job_id = ${Q}$rid${Q}" &&
	test_expect_code 2 dispatch submit --retry "$sid" 2>err &&
	test_grep "was written by an older dispatch, which cannot run some of its tasks alone" err
'

test_expect_success 'tasks that are runs: each requeued alone, its own attempts and run id' '
	dispatch --json submit -H hpc -J t7900runs -p cpu --mem 50 --sweep f=0,1,2 \
		--max-restarts 1 --restart-on error -- "$RUNTASK" >runs.json &&
	sid=$(jq_ "d[\"sweep\"][\"id\"]" runs.json) && job=$(jq_ "d[\"job\"]" runs.json) &&
	test_expect_code 1 dispatch wait --timeout 300 "$sid" >w &&
	test_grep "^3 tasks: 2 COMPLETED, 1 FAILED$" w &&
	test_grep "^0     0  COMPLETED attempt 1/2 " w &&
	test_grep "^1     1  COMPLETED attempt 2/2 " w &&
	test_grep "^2     2  FAILED attempt 2/2 " w &&
	dispatch --json status "$sid" >st.json &&
	jq_ "\"\\n\".join(\"%s %s %s %s\" % (t[\"index\"], t[\"run_id\"], t[\"attempt\"], \",\".join(a[\"state\"] for a in t[\"attempts\"])) for t in d[\"sweeps\"][0][\"tasks\"])" st.json >got &&
	run=$(sed -n "1s/^0 \(run-[0-9a-f]*\)-0 .*/\1/p" got) && test -n "$run" &&
	printf "0 %s-0 1 \n1 %s-1 2 FAILED\n2 %s-2 2 FAILED\n" "$run" "$run" "$run" >want &&
	test_cmp want got &&
	printf "%s-0 0\n" "$run" >want0 && test_cmp want0 "$OUT/run-0" &&
	printf "%s-1 0\n%s-1 1\n" "$run" "$run" >want1 && test_cmp want1 "$OUT/run-1" &&
	printf "%s-2 0\n%s-2 1\n" "$run" "$run" >want2 && test_cmp want2 "$OUT/run-2" &&
	dispatch status "${job%@hpc}_2@hpc" >st2 &&
	test_grep "gave up after 1 restarts: FAILED" st2
'

test_expect_success 'hostile values reach the command whole and never run' '
	dispatch --json submit -H hpc -J t7900bad -p cpu --mem 50 --sweep "$BADVALS" \
		-- "$BADCMD" >bad.json &&
	job=$(jq_ "d[\"job\"]" bad.json) &&
	dispatch wait --timeout 120 "$job" >w &&
	printf "<%s>\n" "it${Q}s" "[it${Q}s]" "(it${Q}s)" >want0 && test_cmp want0 "$OUT/bad-0" &&
	printf "<%s>\n" "\$(touch $OUT/pwned)" "[\$(touch $OUT/pwned)]" "(\$(touch $OUT/pwned))" >want1 && test_cmp want1 "$OUT/bad-1" &&
	printf "<%s>\n" "\`touch $OUT/pwned2\`" "[\`touch $OUT/pwned2\`]" "(\`touch $OUT/pwned2\`)" >want2 && test_cmp want2 "$OUT/bad-2" &&
	printf "<%s>\n" "a  b;c" "[a  b;c]" "(a  b;c)" >want3 && test_cmp want3 "$OUT/bad-3" &&
	test ! -e "$OUT/pwned" && test ! -e "$OUT/pwned2"
'

test_done
