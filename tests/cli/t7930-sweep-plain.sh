#!/bin/bash
# t7930: a sweep (--sweep, dispatch-submit(1) SWEEPS) on plain hosts of the test bed:
# a 2x3 grid over two hosts (-H sb[1-2]: box1 and box2, each with 2 fake GPUs and a
# GPU lock directory of this file's own) with --gpus 1 per task and --max-parallel 3,
# the lease records polled while it runs (never more than 3 running in all, never two
# on one GPU of a host), each task a plain job of its own (status, wait) with its own
# parameters, index, the sweep's id and size, and its host's share of the cap (2 and
# 1, the tasks dealt 0, 1, 0, 0, 1, 0); one connection per host, the tasks' stage
# dirs linking the one upload; the ledger's row per task; hostile values (quotes, $(...), backquotes, a
# newline) reach the command whole and never run; a task held by the cap is PENDING
# with the reason and cancelled as any plain job; tasks that are runs
# (--max-restarts), each with its own run id and attempts; --solve's spread; submit
# --wait; what is refused. Tasks
# sleep 2 s at most; gates never wait on the clock.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-testbed-gpu.sh"

tb_up
claim_boxes box1 box2
export DISPATCH_STATE_DIR="$TRASH/state"
CL=$DISPATCH_TESTBED_DIR/cluster
OUT=$CL/work/t7930-$$
mkdir -p "$OUT" && chmod 777 "$OUT" || exit 1
LD=/tmp/dispatch-gpus-t7930-$$
mkdir -m 1777 "$LD-1" "$LD-2" || exit 1
printf '%s, NVIDIA A100-SXM4-80GB, 81920\n' GPU-7930a000-0000-4000-8000-000000000000 \
	GPU-7930a111-1111-4111-8111-111111111111 >gpus1
printf '%s, NVIDIA A100-SXM4-80GB, 81920\n' GPU-7930b000-0000-4000-8000-000000000000 \
	GPU-7930b111-1111-4111-8111-111111111111 >gpus2
fake_gpus box1 gpus1 && fake_gpus box2 gpus2 || fail_rest "no fake GPUs on box1 and box2"
awk -v ld="$LD" '{ print }
	/^hosts:$/ { print "  sb1:\n    ssh: box1\n    cluster: testbed\n    gpu_lock_dir: " ld "-1";
		print "  sb2:\n    ssh: box2\n    cluster: testbed\n    gpu_lock_dir: " ld "-2" }' \
	"$DISPATCH_INVENTORY" >inv.yaml || exit 1
export DISPATCH_INVENTORY=$PWD/inv.yaml

cleanup_t7930() {
	local p
	touch "$OUT/go" 2>/dev/null
	for p in $(sqlite3 "$DISPATCH_STATE_DIR/ledger.db" "select pid from jobs where pid > 1" 2>/dev/null); do
		kill -KILL -- "-$p" 2>/dev/null
	done
	rm -rf "$OUT" "$LD-1" "$LD-2"
	tb_cleanup
}
trap cleanup_t7930 EXIT

jq_() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($1)" "$2"; }
Q="'"
# Each task: what it saw, its GPU, and when it ran (ns), then 2 s of running.
TASK='s=$(date +%s%N); sleep 2; printf "%s|%s|%s|%s|%s|%s|%s|%s|%s|%s\n" "$DISPATCH_SWEEP_INDEX" "$DISPATCH_SWEEP_SIZE" "$DISPATCH_SWEEP_ID" "$DISPATCH_PARAM_LR" "$DISPATCH_PARAM_SEED" {lr} "s={seed}" "$CUDA_VISIBLE_DEVICES" "$s" "$(date +%s%N)" >'"$OUT"'/task-$DISPATCH_SWEEP_INDEX; echo "DISPATCH_METRIC acc=0.$DISPATCH_SWEEP_INDEX"'
NL='
'
BADVALS="v=it's,\$(touch $OUT/pwned),\`touch $OUT/pwned2\`,a  b;c,x${NL}touch $OUT/pwned3"
BADCMD="printf '<%s>\\n' {v} '[{v}]' >$OUT/bad-\$DISPATCH_SWEEP_INDEX"
# running LOCKDIR: the running records of a lock directory, "GPUS" a line each
running() { cat "$1"/job.* 2>/dev/null | awk -F'|' '$2 == "running" { print $4 }'; }
# reasons JOB...: their states and reasons, as status --json gives them
reasons() {
	dispatch --json status "$@" >st.json &&
		python3 -c 'import json; print(*[j["state"] + "|" + j["reason"] for j in json.load(open("st.json"))["jobs"]], sep="\n")'
}

test_expect_success 'the dry run: the tasks, the host each goes to, the caps' '
	dispatch submit -H "sb[1-2]" --sweep lr=0.1,0.01 --sweep seed=1..3 --max-parallel 3 --dry-run \
		-- python train.py --lr {lr} --seed {seed} >dry &&
	test_grep "^==> the sweep.s 6 tasks <==$" dry &&
	test_grep "^TASK  HOST  lr    seed$" dry &&
	test_grep "^1     sb2   0.1   2$" dry &&
	test_grep "^5     sb1   0.01  3$" dry &&
	test_grep "^==> sb1: bootstrap.sh <==$" dry && test_grep "^==> sb2: bootstrap.sh <==$" dry &&
	dispatch --json submit -H sb1,sb2 --sweep lr=0.1,0.01 --sweep seed=1..3 --max-parallel 3 \
		--dry-run -- true >dry.json &&
	test "$(jq_ "[(h[\"host\"], h[\"tasks\"], h[\"max_parallel\"]) for h in d[\"sweep\"][\"hosts\"]]" dry.json)" = \
		"[(${Q}sb1${Q}, [0, 2, 3, 5], 2), (${Q}sb2${Q}, [1, 4], 1)]" &&
	test "$(jq_ "[r[\"host\"] for r in d[\"sweep\"][\"runs\"]]" dry.json)" = \
		"[${Q}sb1${Q}, ${Q}sb2${Q}, ${Q}sb1${Q}, ${Q}sb1${Q}, ${Q}sb2${Q}, ${Q}sb1${Q}]"
'

test_expect_success '--solve spreads a sweep over the plain hosts that fit, least loaded first' '
	# sb1 and sb2 with their chips (and hpc, which a GPU sweep of plain hosts leaves
	# out); GPU 0 of sb1 busy: sb2 (2 free) before sb1 (1 free), though sb1 is first
	awk "/^hosts:\$/ { exit } { print }" inv.yaml | sed "/^priority:/,/^\$/d" >solve.yaml &&
	printf "%s\n" "hosts:" "  sb1: {ssh: box1, cluster: testbed, type: plain, chips: {a100-sxm4-80gb: 2}}" \
		"  sb2: {ssh: box2, cluster: testbed, type: plain, chips: {a100-sxm4-80gb: 2}}" >>solve.yaml &&
	printf "%s\n" "GPU-7930a000-0000-4000-8000-000000000000, 4000" >apps1 &&
	fake_gpus box1 gpus1 apps1 &&
	DISPATCH_INVENTORY=$PWD/solve.yaml dispatch --json submit --solve --check --gpus 1 \
		--sweep i=1..3 --dry-run -- true >solve.json &&
	fake_gpus box1 gpus1 &&
	test "$(jq_ "[(h[\"host\"], h[\"tasks\"]) for h in d[\"sweep\"][\"hosts\"]]" solve.json)" = \
		"[(${Q}sb2${Q}, [0, 2]), (${Q}sb1${Q}, [1])]" &&
	DISPATCH_INVENTORY=$PWD/solve.yaml dispatch --json submit --solve --no-check --gpus 1 \
		--sweep i=1..3 --dry-run -- true >paper.json &&
	test "$(jq_ "[(h[\"host\"], h[\"tasks\"]) for h in d[\"sweep\"][\"hosts\"]]" paper.json)" = \
		"[(${Q}sb1${Q}, [0, 2]), (${Q}sb2${Q}, [1])]"
'

test_expect_success 'refused: a SLURM host in the list, a list without --sweep' '
	test_expect_code 2 dispatch submit -H sb1,hpc --sweep a=1,2 -- true 2>err &&
	test_grep "a sweep over several hosts runs on plain hosts of the inventory: .hpc. is a SLURM host" err &&
	test_expect_code 2 dispatch submit -H sb1,sb2 -- true 2>err &&
	test_grep "takes one host, not the list .sb1,sb2. (a list is for a sweep on plain hosts)" err
'

test_expect_success 'submit --wait: attached to every run until all ended, its exit how they ended' '
	test_expect_code 1 dispatch submit -H box3 -J t7930wait --sweep i=1..3 --wait -- \
		"sleep {i}; test {i} != 2" >out &&
	test_grep "^sweep sweep-[0-9a-f]*: 3 runs on box3 (0,1,2)$" out &&
	sed -n "2,4p" out >jobs &&
	for j in $(cat jobs); do dispatch status "$j" || return 1; done >st &&
	test "$(grep -c " COMPLETED " st) $(grep -c " FAILED " st)" = "2 1" &&
	dispatch --json submit -H box3 -J t7930waitj --sweep i=1,2 --wait -- true >w.json &&
	test "$(jq_ "len(d[\"sweep\"][\"runs\"])" w.json)" = 2 &&
	for j in $(jq_ "\" \".join(r[\"job\"] for r in d[\"sweep\"][\"runs\"])" w.json); do
		dispatch status "$j" || return 1
	done >stj &&
	test "$(grep -c " COMPLETED " stj)" = 2
'

test_expect_success 'a 2x3 grid on two hosts, --gpus 1, --max-parallel 3: at most 3 at once, never two on a GPU' '
	dispatch -v --json submit -H "sb[1-2]" -J t7930grid --gpus 1 --sweep lr=0.1,0.01 --sweep seed=1..3 \
		--max-parallel 3 -- "$TASK" >sub.json 2>sub.err &&
	# one connection per host, one upload: the tasks link the sweep stage dir files
	test "$(grep -c "^dispatch: box[12]: logged in as " sub.err)" = 2 &&
	test "$(grep -c "^dispatch: starting [0-9] tasks of sweep " sub.err)" = 2 &&
	sid=$(jq_ "d[\"sweep\"][\"id\"]" sub.json) &&
	jq_ "\"\\n\".join(r[\"job\"] for r in d[\"sweep\"][\"runs\"])" sub.json >jobs &&
	test "$(wc -l <jobs)" = 6 &&
	test "$(jq_ "[r[\"host\"] for r in d[\"sweep\"][\"runs\"]].count(\"sb1\")" sub.json)" = 4 &&
	j0=$(sed -n 1p jobs) && st0=$CL/work/.dispatch/${j0%@sb1} &&
	test -L "$st0/bootstrap.sh" && test -f "${st0%-0}/bootstrap.sh" &&
	most=0 && left=6 &&
	for i in $(seq 1 300); do
		r1=$(running "$LD-1") && r2=$(running "$LD-2") &&
		n=$(printf "%s\n" $r1 $r2 | awk NF | wc -l) &&
		if [ "$n" -gt "$most" ]; then most=$n; fi &&
		test "$(printf "%s\n" $r1 | sort | uniq -d)" = "" &&
		test "$(printf "%s\n" $r2 | sort | uniq -d)" = "" &&
		test "$(printf "%s\n" $r1 | awk NF | wc -l)" -le 2 &&
		test "$(printf "%s\n" $r2 | awk NF | wc -l)" -le 1 &&
		left=$(for k in 0 1 2 3 4 5; do [ -e "$OUT/task-$k" ] || echo $k; done | wc -l) &&
		if [ "$left" = 0 ]; then break; fi &&
		sleep 0.1
	done &&
	test "$left" = 0 && test "$most" -ge 2 && test "$most" -le 3 &&
	timeout 60 "$DISPATCH" wait --interval 0.5 $(cat jobs) >w &&
	test "$(grep -c " COMPLETED exit 0 " w)" = 6 &&
	for i in 0 1 2 3 4 5; do
		lr=0.1 && if [ "$i" -ge 3 ]; then lr=0.01; fi &&
		seed=$((i % 3 + 1)) &&
		test "$(cut -d "|" -f 1-7 "$OUT/task-$i")" = "$i|6|$sid|$lr|$seed|$lr|s=$seed" || exit 1
	done &&
	# never two tasks on one GPU of a host at once (their own clocks, in ns)
	for h in sb1 sb2; do
		for i in $(jq_ "\" \".join(str(r[\"index\"]) for r in d[\"sweep\"][\"runs\"] if r[\"host\"] == \"$h\")" sub.json); do
			cut -d "|" -f 8-10 "$OUT/task-$i" || exit 1
		done | sort -t "|" -k1,1 -k2,2n >"iv-$h" &&
		awk -F"|" "\$1 == \"\" { exit 1 } \$1 == g && \$2 < e { exit 1 } { g = \$1; e = \$3 }" "iv-$h" || exit 1
	done &&
	test "$(cut -d "|" -f 8 "$OUT"/task-* | sort -u | wc -l)" -ge 2 &&
	# the ledger: a row per task, its host and index
	sqlite3 "$DISPATCH_STATE_DIR/ledger.db" "select host, sweep_id, sweep_size, sweep_first, sweep_tasks from jobs where sweep_id = ${Q}$sid${Q} order by sweep_first" >rows &&
	printf "%s|$sid|6|%s|%s\n" sb1 0 0 sb2 1 1 sb1 2 2 sb1 3 3 sb2 4 4 sb1 5 5 >want &&
	test_cmp want rows &&
	j4=$(sed -n 5p jobs) &&
	test "${j4##*-}" = 4@sb2 &&
	test "$(sqlite3 "$DISPATCH_STATE_DIR/ledger.db" "select job_id from jobs where sweep_first = 4 and sweep_id = ${Q}$sid${Q}")@sb2" = "$j4" &&
	dispatch status "$j4" >st &&
	test_grep "^$j4 *COMPLETED" st &&
	test_grep "^$j4: $sid task 4/6: lr=0.01 seed=2$" st &&
	# the sweep as one, over both hosts: its table with each task metric, its wait
	dispatch status --sort -acc "$sid" >sw &&
	test_grep "^sweep $sid (t7930grid): 6 tasks on sb1, sb2$" sw &&
	test_grep "^4     0.01  2     COMPLETED  0 .* 0.4  ${j4}$" sw &&
	test "$(sed -n "3p;8p" sw | cut -c1)" = "$(printf "5\n0")" &&
	test_grep "^6 tasks: 6 COMPLETED$" sw &&
	dispatch wait --timeout 60 "$sid" >sw2 &&
	test_grep "^6 tasks: 6 COMPLETED$" sw2
'

test_expect_success 'hostile values reach the command whole and never run' '
	dispatch --json submit -H box3 -J t7930bad --sweep "$BADVALS" -- "$BADCMD" >bad.json &&
	jq_ "\" \".join(r[\"job\"] for r in d[\"sweep\"][\"runs\"])" bad.json >badjobs &&
	timeout 60 "$DISPATCH" wait --interval 0.5 $(cat badjobs) >w &&
	printf "<%s>\n" "it${Q}s" "[it${Q}s]" >want0 && test_cmp want0 "$OUT/bad-0" &&
	printf "<%s>\n" "\$(touch $OUT/pwned)" "[\$(touch $OUT/pwned)]" >want1 && test_cmp want1 "$OUT/bad-1" &&
	printf "<%s>\n" "\`touch $OUT/pwned2\`" "[\`touch $OUT/pwned2\`]" >want2 && test_cmp want2 "$OUT/bad-2" &&
	printf "<%s>\n" "a  b;c" "[a  b;c]" >want3 && test_cmp want3 "$OUT/bad-3" &&
	printf "<%s>\n" "x${NL}touch $OUT/pwned3" "[x${NL}touch $OUT/pwned3]" >want4 && test_cmp want4 "$OUT/bad-4" &&
	test ! -e "$OUT/pwned" && test ! -e "$OUT/pwned2" && test ! -e "$OUT/pwned3"
'

test_expect_success 'submit --retry: the failed task again in its own stage dir, its next attempt' '
	dispatch submit -H box3 -J t7930retry --sweep i=1..3 -- \
		"echo try-{i}; test {i} != 2 || { test -f $OUT/fixed2 && sleep 2; }" >re &&
	sid=$(sed -n "1s/^sweep \([^:]*\):.*/\1/p" re) && j1=$(sed -n 3p re) &&
	test_expect_code 1 timeout 60 "$DISPATCH" wait --interval 0.2 "$sid" >w &&
	test_grep "^3 tasks: 2 COMPLETED, 1 FAILED$" w &&
	touch "$OUT/fixed2" &&
	dispatch submit --retry "$sid" >again &&
	printf "%s\n" "sweep $sid: 1 task again (1)" "$j1" >want &&
	test_cmp want again &&
	timeout 60 "$DISPATCH" wait --interval 0.2 "$sid" >w2 &&
	test_grep "^3 tasks: 3 COMPLETED$" w2 &&
	test_grep "^1     2  COMPLETED  0 .* $j1$" w2 &&
	stage=$CL/work/.dispatch/${j1%@box3} &&
	test "$(cut -d " " -f 1,2 "$stage/attempts")" = "0 FAILED" &&
	dispatch logs "$j1" >log &&
	test "$(grep -c "^try-2$" log)" = 2 &&
	test_grep "^dispatch: attempt 1 of a retry after FAILED (dispatch submit --retry)$" log &&
	dispatch submit --retry "$sid" >none 2>err &&
	test_must_be_empty none &&
	test_grep "no task to retry (3 tasks: 3 COMPLETED)" err
'

test_expect_success 'a task held by the cap is PENDING with the reason; cancelled as any plain job' '
	dispatch submit -H box3 -J t7930cap --sweep i=1..3 --max-parallel 1 -- \
		"touch $OUT/cap-{i}; while [ ! -e $OUT/go ]; do sleep 0.05; done" >cap &&
	test_grep "^sweep sweep-[0-9a-f]*: 3 runs on box3 (0,1,2)$" cap &&
	# one runs, the other two wait, the later of them behind the earlier (which
	# of the three, started at once, runs first is for their launchers to settle)
	printf "%s\n" "PENDING|waiting for a sweep slot: max-parallel 1 on this host, 1 running" \
		"PENDING|waiting for a sweep slot: max-parallel 1 on this host, 1 running, 1 ahead" \
		"RUNNING|" >want &&
	for i in $(seq 1 150); do
		reasons $(sed -n "2,4p" cap) | sort >got &&
		if cmp -s want got; then break; fi &&
		sleep 0.2
	done &&
	test_cmp want got &&
	reasons $(sed -n "2,4p" cap) >order &&
	n=$(grep -n "1 running, 1 ahead" order | cut -d: -f1) &&
	held=$(sed -n "$((n + 1))p" cap) &&
	dispatch cancel "$held" &&
	touch "$OUT/go" &&
	timeout 60 "$DISPATCH" wait --interval 0.2 $(sed -n "2,4p" cap | grep -v -x -F "$held") &&
	test_expect_code 1 timeout 60 "$DISPATCH" wait --interval 0.2 "$held" >w &&
	test_grep "^$held CANCELLED" w &&
	test "$(ls "$OUT" | grep -c "^cap-")" = 2 &&
	test ! -e "$OUT/cap-$n"
'

test_expect_success 'cancel SWEEP: every run of the sweep, running or held by the cap, on both hosts' '
	dispatch submit -H "sb[1-2]" -J t7930can --sweep i=1..4 --max-parallel 2 -- \
		"touch $OUT/can-{i}; sleep 300" >can &&
	sid=$(sed -n "1s/^sweep \([^:]*\):.*/\1/p" can) &&
	for i in $(seq 1 150); do
		if [ "$(ls "$OUT" | grep -c "^can-")" = 2 ]; then break; fi &&
		sleep 0.2
	done &&
	dispatch status "$sid" >st &&
	# (which task of a host runs first is for its launchers to settle, and the
	# order of the counts with it)
	test_grep -e "^4 tasks: 2 RUNNING, 2 PENDING$" -e "^4 tasks: 2 PENDING, 2 RUNNING$" st &&
	dispatch cancel "$sid" >c &&
	test_expect_code 1 timeout 60 "$DISPATCH" wait --interval 0.2 "$sid" >w &&
	test_grep "^4 tasks: 4 CANCELLED$" w &&
	test "$(ls "$OUT" | grep -c "^can-")" = 2
'

test_expect_success 'tasks that are runs: each its own run id and attempts; one fails once, then completes' '
	dispatch --json submit -H box3 -J t7930run --sweep k=1,2 --max-restarts 1 --restart-on error -- \
		"echo \"\$DISPATCH_RUN_ID \$DISPATCH_ATTEMPT\" >>$OUT/run-{k}; if [ {k} = 2 ] && [ \"\$DISPATCH_ATTEMPT\" = 0 ]; then exit 3; fi" >run.json &&
	jq_ "\" \".join(r[\"job\"] for r in d[\"sweep\"][\"runs\"])" run.json >runjobs &&
	timeout 90 "$DISPATCH" wait --interval 0.5 $(cat runjobs) >w &&
	r0=$(jq_ "d[\"sweep\"][\"runs\"][0][\"run_id\"]" run.json) &&
	r1=$(jq_ "d[\"sweep\"][\"runs\"][1][\"run_id\"]" run.json) &&
	test "${r0%-0}" = "${r1%-1}" && test "$r0" != "$r1" &&
	test "$(cat "$OUT/run-1")" = "$r0 0" &&
	printf "%s\n" "$r1 0" "$r1 1" >want && test_cmp want "$OUT/run-2" &&
	j1=$(cut -d " " -f 2 runjobs) &&
	test_grep "^$j1 COMPLETED exit 0 attempt 2/2 " w &&
	test "$(sqlite3 "$DISPATCH_STATE_DIR/ledger.db" "select run_id, max_restarts from jobs where job_id = ${Q}${j1%@box3}${Q}")" = "$r1|1"
'

test_done
