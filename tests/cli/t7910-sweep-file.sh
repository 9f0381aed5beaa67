#!/bin/bash
# t7910: a sweep from a file (--sweep-file, dispatch-submit(1) SWEEPS): the dry run's
# table of tasks for a grid: file (the product, ranges, values as written) and a
# list: file (task by task); a job file's sweep-file: beside the job file; what is
# refused, each with the file's line and column and exit status 2; and on the test
# cluster a list of 3 tasks as one job array, each task with its own values in
# DISPATCH_PARAM_* and in the command's {NAME} (hostile ones whole, never run), the
# ledger's sweep read back by status. Uses the default test bed instance.
. "$(dirname "$0")/lib.sh"

testbed_up
export DISPATCH_STATE_DIR="$TRASH/state"
OUT=$DISPATCH_TESTBED_DIR/cluster/work/t7910-$$
mkdir -p "$OUT" && chmod 777 "$OUT" || exit 1
trap 'rm -rf "$OUT" "$TRASH"' EXIT
Q="'"

cat >grid.yaml <<'EOF'
# the product: lr slowest, seed fastest
grid:
  lr: [0.10, 0.01]
  seed: "1..3"
EOF
cat >list.yaml <<'EOF'
list:
  - {lr: 0.1, seed: 1}
  - {seed: 7, lr: 0.010}
EOF
mkdir -p jobs/sweeps elsewhere
cat >jobs/sweeps/sw.yaml <<'EOF'
list:
  - {opt: adam}
  - {opt: sgd}
EOF
cat >jobs/job.yaml <<'EOF'
sweep-file: sweeps/sw.yaml
command: python train.py --opt {opt}
EOF
cat >bad-names.yaml <<'EOF'
list:
  - {lr: 0.1, seed: 1}
  - {lr: 0.01, sed: 7}
EOF
cat >bad-missing.yaml <<'EOF'
list:
  - {lr: 0.1, seed: 1}
  - {lr: 0.01}
EOF
cat >bad-value.yaml <<'EOF'
grid:
  lr: [0.1, {a: 1}]
EOF
cat >bad-range.yaml <<'EOF'
grid:
  lr: 0.1
EOF
cat >bad-both.yaml <<'EOF'
grid: {a: [1]}
list: [{a: 1}]
EOF
cat >bad-name.yaml <<'EOF'
grid:
  lr: [1]
  LR: [2]
EOF
# The run: three tasks, one with hostile values.
cat >run.yaml <<EOF
list:
  - {lr: 0.10, seed: 1}
  - {seed: 7, lr: "1e-3"}
  - {lr: "a  b;c", seed: "\$(touch $OUT/pwned)"}
EOF
TASK='printf "%s|%s|%s|%s|%s|%s\n" "$DISPATCH_SWEEP_INDEX" "$DISPATCH_SWEEP_SIZE" "$DISPATCH_PARAM_LR" "$DISPATCH_PARAM_SEED" {lr} "s={seed}" >'"$OUT"'/task-$DISPATCH_SWEEP_INDEX'

test_expect_success 'a grid file: the dry run shows its product, the array and each task' '
	dispatch submit -H hpc --sweep-file grid.yaml --max-parallel 2 --dry-run \
		-- python train.py --lr {lr} --seed {seed} >dry &&
	test_grep "^==> the sweep.s 6 tasks <==$" dry &&
	test_grep "^TASK  lr    seed$" dry &&
	test_grep "^0     0.10  1$" dry &&
	test_grep "^5     0.01  3$" dry &&
	test_grep "^sbatch --array=.0-5%2. .*/sbatch.sh 0$" dry &&
	test_grep "^#SBATCH --output=.*/%x-%A_%a.out$" dry &&
	test_grep "^4) export DISPATCH_PARAM_LR=.0.01. DISPATCH_PARAM_SEED=.2. ;;$" dry
'

test_expect_success 'a list file: the dry run shows its tasks in order, values as written' '
	dispatch submit -H hpc --sweep-file list.yaml --dry-run -- echo {lr} {seed} >dry &&
	test_grep "^==> the sweep.s 2 tasks <==$" dry &&
	test_grep "^TASK  lr     seed$" dry &&
	test_grep "^0     0.1    1$" dry &&
	test_grep "^1     0.010  7$" dry &&
	test_grep "^sbatch --array=.0-1. .*/sbatch.sh 0$" dry &&
	test_grep "^1) export DISPATCH_PARAM_LR=.0.010. DISPATCH_PARAM_SEED=.7. ;;$" dry
'

test_expect_success 'a job file names its sweep file beside itself, from any directory' '
	dispatch submit -H hpc -f jobs/job.yaml --dry-run >dry &&
	test_grep "^1     sgd$" dry &&
	(cd elsewhere && dispatch submit -H hpc -f ../jobs/job.yaml --dry-run >../dry2) &&
	test_grep "^1     sgd$" dry2 &&
	test_grep "^1) export DISPATCH_PARAM_OPT=.sgd. ;;$" dry2
'

test_expect_success 'refused, each with the file, line and column, exit 2' '
	test_expect_code 2 dispatch submit -H hpc --sweep-file bad-names.yaml --dry-run -- true 2>err &&
	test_grep "^dispatch: bad-names.yaml:3:16: task 1 has .sed., which task 0 (line 2) has not (did you mean .seed.?)" err &&
	test_expect_code 2 dispatch submit -H hpc --sweep-file bad-missing.yaml -- true 2>err &&
	test_grep "^dispatch: bad-missing.yaml:3:5: task 1 has no .seed.: every task of .list. gives the names of task 0 (line 2: lr, seed)$" err &&
	test_expect_code 2 dispatch submit -H hpc --sweep-file bad-value.yaml -- true 2>err &&
	test_grep "^dispatch: bad-value.yaml:2:13: a value of .lr. is a mapping: each value is one scalar" err &&
	test_expect_code 2 dispatch submit -H hpc --sweep-file bad-range.yaml -- true 2>err &&
	test_grep "^dispatch: bad-range.yaml:2:7: .lr: 0.1. is neither a list nor a range of integers A..B\[:STEP\] (one value is a list of one: \[0.1\])$" err &&
	test_expect_code 2 dispatch submit -H hpc --sweep-file bad-both.yaml -- true 2>err &&
	test_grep "^dispatch: bad-both.yaml:2:1: both .grid. and .list.: a sweep file gives one" err &&
	test_expect_code 2 dispatch submit -H hpc --sweep-file bad-name.yaml -- true 2>err &&
	test_grep "^dispatch: bad-name.yaml:3:3: .LR. is given twice (as .lr. and .LR.: both would be DISPATCH_PARAM_LR)$" err &&
	test_expect_code 2 dispatch submit -H hpc --sweep-file nope.yaml -- true 2>err &&
	test_grep "^dispatch: cannot read sweep file .nope.yaml.: No such file or directory" err &&
	printf "sweep-file: sweeps/bad.yaml\ncommand: true\n" >jobs/bad.yaml &&
	printf "list:\n  - {a: 1}\n  - {b: 2}\n" >jobs/sweeps/bad.yaml &&
	test_expect_code 2 dispatch submit -H hpc -f jobs/bad.yaml 2>err &&
	test_grep "^dispatch: jobs/sweeps/bad.yaml:3:6: task 1 has .b., which task 0 (line 2) has not" err
'

test_expect_success 'refused: --sweep with --sweep-file, --max-parallel alone; a plain host takes it' '
	test_expect_code 2 dispatch submit -H hpc --sweep-file grid.yaml --sweep a=1,2 -- true 2>err &&
	test_grep "^dispatch: --sweep and --sweep-file .grid.yaml. exclude each other: give the parameters in one of them" err &&
	test_expect_code 2 dispatch submit -H hpc -f jobs/job.yaml --sweep a=1,2 2>err &&
	test_grep "exclude each other" err &&
	test_expect_code 2 dispatch submit -H hpc --max-parallel 2 -- true 2>err &&
	test_grep "max-parallel 2 needs --sweep or --sweep-file" err &&
	test_expect_code 2 dispatch submit -H hpc --sweep-file grid.yaml --array 0-1 -- true 2>err &&
	test_grep "sweep-file makes the job array itself: drop --array" err &&
	dispatch submit -H box1 --sweep-file grid.yaml --dry-run -- true >dry &&
	test_grep "^==> the sweep.s 6 tasks <==$" dry &&
	test_grep "^5     box1  0.01  3$" dry
'

test_expect_success 'a list of 3 on the cluster: each task its own values, hostile ones whole' '
	dispatch --json submit -H hpc -J t7910list -p cpu --mem 50 --sweep-file run.yaml \
		-- "$TASK" >sub.json &&
	job=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[\"job\"])" sub.json) &&
	id=${job%@hpc} &&
	sid=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[\"sweep\"][\"id\"])" sub.json) &&
	dispatch wait --timeout 120 "$job" >w &&
	printf "%s\n" "0|3|0.10|1|0.10|s=1" >want0 && test_cmp want0 "$OUT/task-0" &&
	printf "%s\n" "1|3|1e-3|7|1e-3|s=7" >want1 && test_cmp want1 "$OUT/task-1" &&
	printf "%s\n" "2|3|a  b;c|\$(touch $OUT/pwned)|a  b;c|s=\$(touch $OUT/pwned)" >want2 &&
	test_cmp want2 "$OUT/task-2" &&
	test ! -e "$OUT/pwned" &&
	sqlite3 "$DISPATCH_STATE_DIR/ledger.db" "select sweep_params from jobs where job_id = ${Q}$id${Q}" >params &&
	test_grep "^{\"list\":{\"names\":\[\"lr\",\"seed\"\],\"tasks\":\[\[\"0.10\",\"1\"\]," params &&
	dispatch status "$job" >st &&
	test_grep "^${id}_1@hpc: $sid task 1/3: lr=1e-3 seed=7$" st &&
	test_grep "^${id}_2@hpc: $sid task 2/3: lr=a  b;c seed=\$(touch $OUT/pwned)$" st
'

test_done
