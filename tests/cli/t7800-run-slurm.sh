#!/bin/bash
# t7800: runs that outlive their jobs on the test cluster (dispatch-submit(1) RUNS),
# the jobs side by side: examples/train (160 steps of a second) under --time 3
# --max-restarts 4 (stopped by USR1 before each time limit, it checkpoints, the
# wrapper requeues it, the next attempt resumes) ends COMPLETED after two attempts or
# more with the checksum of an uninterrupted run of the same steps. (--time 3: SLURM
# sends --signal up to 30 s early, its time limit check runs every 30 s, and PyTorch
# takes up to a minute to start on a loaded test machine: under --time 1 an attempt
# may get the signal before its first step. 130 to 160 s into an attempt, 160 steps
# cannot be done in the first, and two attempts get through them.) a run that never finishes gives up after
# --max-restarts 2 (FAILED, "gave up after 2 restarts: TIMEOUT, TIMEOUT", wait exits
# 1); exit 1 is not restarted by default, and is with --restart-on error. Each run
# POSTs its end to a webhook of the file's own. A node that dies under a run (SLURM
# requeues it), a run cancelled during its requeue (it stays cancelled), and a run
# preempted by a job of a higher QOS, PreemptMode REQUEUE and CANCEL (it resumes).
# SLURM makes a requeued job eligible cred_expire + 1 s later (its BeginTime; the test
# bed's cred_expire is 30 s). Not sooner: a requeued job started within it (a test
# once moved its StartTime to now) is killed as "non-startable: Job credential
# revoked", FAILED with exit 1 and not a line in its log.
# Its own instance: its training jobs hold the cluster's nodes for minutes, which
# would keep the other files' jobs pending on the default instance.
. "$(dirname "$0")/lib.sh"
. "$TEST_SRCDIR/tests/cli/lib-webhook.sh"

testbed_own t7800 "36000 drn7 10.177" "36500 drn24 10.178" "37000 drn26 10.179"
# The training's cases need PyTorch on the nodes (tests/install-deps installs
# python3-torch on the host, tests/testbed/chroot in a release's chroot when its
# mirror has it): without it they are skipped and the others run (a time limit's
# requeues with the LOOP job).
TORCH=yes
dispatch run -H hpc -- python3 -c "'import torch.distributed'" >/dev/null 2>&1 || TORCH=
# test_expect_unless WHY NAME BODY: test_expect_success NAME BODY, skipped (WHY said)
# when WHY is not empty
test_expect_unless() {
	if [ -z "$1" ]; then
		test_expect_success "$2" "$3"
	else
		test_count=$((test_count + 1))
		echo "ok $test_count # skip $1: $2"
	fi
}
NO_TORCH=
[ -n "$TORCH" ] || NO_TORCH="no PyTorch on the test cluster's nodes"
# The cases of a node killed, a cancel during a requeue and preemption run on 22.05
# alone (the wrapper's code is the same on every release; on 24.11 and 26.05 they
# would add some 300 s each to CI).
REL=
case ${DISPATCH_TESTBED_SLURM:-} in 24.11 | trixie | 26.05 | forky) REL=$DISPATCH_TESTBED_SLURM ;; esac
ONLY_2205=
[ -z "$REL" ] || ONLY_2205="on 22.05 only"

# a webhook on the host side of the nodes' network, hpc's runs' (notify_url)
webhook_start "$DISPATCH_TESTBED_NET.2.1" || fail_rest "the webhook did not start"
awk -v url="$HOOK_URL" '{ print } /^  hpc:$/ { print "    notify_url: " url }' \
	"$DISPATCH_INVENTORY" >"$TRASH/inv.yaml" && chmod 600 "$TRASH/inv.yaml" || exit 1
export DISPATCH_INVENTORY=$TRASH/inv.yaml
grep -q "^    notify_url: " "$DISPATCH_INVENTORY" || fail_rest "no place for hpc's notify_url in the inventory"
jq_() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($1)" "$2"; }

# The jobs of this file, for the clean-up (ids-slow: more of them).
: >"$TRASH/ids"
: >"$TRASH/ids-slow"
cleanup() {
	webhook_stop
	# shellcheck disable=SC2046
	[ ! -s "$TRASH/ids" ] || scancel $(cat "$TRASH/ids" "$TRASH/ids-slow") >/dev/null 2>&1 || true
	# node2 back in service, if a case killed it
	if [ -f "$TRASH/node2-killed" ]; then
		up >/dev/null 2>&1 || true
		scontrol update nodename=node2 state=resume >/dev/null 2>&1 || true
	fi
}
trap cleanup EXIT


# submit NAME ARGS...: dispatch --json submit ARGS; prints JOB@hpc, records the id
submit() {
	local name=$1 job
	shift
	dispatch --json "$@" >"$TRASH/$name.json" || return 1
	job=$(jq_ 'd["job"]' "$TRASH/$name.json") || return 1
	echo "${job%@*}" >>"$TRASH/ids"
	echo "$job"
}

TRAIN=(-p cpu -c 1 --mem 600 -x node2 --env MASTER_ADDR=127.0.0.1 --env PYTHONUNBUFFERED=1)
STEPS="python3 train.py --procs-per-node 1 --steps 160 --log-every 50 --checkpoint-every 10"
LOOP='n=$(cat "$DISPATCH_CHECKPOINT_DIR/n" 2>/dev/null || echo 0)
echo "attempt $DISPATCH_ATTEMPT of $DISPATCH_RUN_ID from $n"
trap "echo \$n >\"\$DISPATCH_CHECKPOINT_DIR/n\"; exit 0" USR1
while :; do n=$((n + 1)); sleep 1; done'

run= plain=
if [ -n "$TORCH" ]; then
	run=$(submit run submit-packed -H hpc --repo "$TEST_SRCDIR/examples/train" -J t7800run \
		"${TRAIN[@]}" -t 3 --max-restarts 4 --grace 20 -- "$STEPS --step-seconds 1") ||
		fail_rest "submitting the interrupted training failed"
	plain=$(submit plain submit-packed -H hpc --repo "$TEST_SRCDIR/examples/train" -J t7800plain \
		"${TRAIN[@]}" -- "$STEPS") || fail_rest "submitting the uninterrupted training failed"
fi
norun=$(submit norun submit -H hpc -J t7800norun -p cpu --mem 50 -- true) ||
	fail_rest "submitting a job that is not a run failed"
capped=$(submit capped submit -H hpc -J t7800cap -p cpu --mem 50 -t 1 --max-restarts 2 \
	--grace 15 -- "$LOOP") || fail_rest "submitting the capped run failed"
exit1=$(submit exit1 submit -H hpc -J t7800exit1 -p cpu --mem 50 --max-restarts 2 -- 'exit 1') ||
	fail_rest "submitting exit 1 failed"
again=$(submit again submit -H hpc -J t7800again -p cpu --mem 50 --max-restarts 2 \
	--restart-on error -- 'echo "attempt $DISPATCH_ATTEMPT"; [ "$DISPATCH_ATTEMPT" -ge 1 ]') ||
	fail_rest "submitting the run restarted on error failed"

# run_id ID: the ledger's run id of job ID ("None" for none)
run_id() {
	python3 -c "import sqlite3, sys
print(sqlite3.connect(sys.argv[1]).execute(\"SELECT run_id FROM jobs WHERE job_id = ?\", (sys.argv[2],)).fetchone()[0])" \
		"$DISPATCH_STATE_DIR/ledger.db" "$1"
}

test_expect_success 'a run has an id in the ledger; a job that is not a run has none' '
	runid=$(run_id "${capped%@*}") &&
	case $runid in run-????????????????) ;; *) false ;; esac &&
	test "$(run_id "${norun%@*}")" = None
'

test_expect_success 'exit 1 is not restarted by default' '
	test_expect_code 1 dispatch wait --interval 1 --timeout 120 --no-tail "$exit1" >out &&
	test_grep "^$exit1 FAILED exit 1 " out &&
	test "$(scontrol -o show job "${exit1%@*}" | sed -n "s/.* Restarts=\([0-9]*\) .*/\1/p")" = 0
'

test_expect_success '--restart-on error restarts exit 1: attempt 1 completes' '
	dispatch wait --interval 1 --timeout 400 --no-tail "$again" >out &&
	test_grep "^$again COMPLETED exit 0 attempt 2/3 " out &&
	test_grep "^$again: run-[0-9a-f]* ended: attempt 1 FAILED 20[0-9T:-]*Z on [a-z0-9]*$" out &&
	test "$(scontrol -o show job "${again%@*}" | sed -n "s/.* Restarts=\([0-9]*\) .*/\1/p")" = 1 &&
	dispatch logs "$again" >log &&
	test_grep "^attempt 0$" log && test_grep "^attempt 1$" log &&
	test_grep "attempt 1 ended FAILED, requeued (restart 1 of 2)" log
'

test_expect_success 'restarts exhausted: FAILED, gave up after 2 restarts: TIMEOUT, TIMEOUT; wait exits 1' '
	test_expect_code 1 dispatch wait --interval 2 --timeout 500 "$capped" >out &&
	test_grep "^$capped FAILED exit 1 attempt 3/3 " out &&
	test_grep "gave up after 2 restarts: TIMEOUT, TIMEOUT; attempt 3 ended TIMEOUT" out &&
	test "$(scontrol -o show job "${capped%@*}" | sed -n "s/.* Restarts=\([0-9]*\) .*/\1/p")" = 2 &&
	dispatch logs "$capped" >log &&
	test "$(grep -c "^attempt [012] of run-" log)" = 3 &&
	test_grep "^attempt 2 of run-.* from [1-9][0-9]*$" log
'

# sq ID FORMAT: squeue's field for job ID ("" once it left the queue)
sq() { squeue -h -j "$1" -o "$2" 2>/dev/null; }

# node2's daemons killed under a run (the node died) and the node set DOWN, as
# t7460 does: SLURM requeues the run itself (it is requeueable); its next attempt
# writes the attempt SLURM ended from the accounting (NODE_FAIL). node2 back (up, resume), the run
# completes on it (node1 excluded).
test_expect_unless "$ONLY_2205" 'a node that died under a run: SLURM requeues it and its next attempt completes' '
	nf=$(submit nf submit -H hpc -J t7800nf -p cpu --mem 50 -x node1 --max-restarts 2 -- \
		"if [ \"\$DISPATCH_ATTEMPT\" -ge 1 ]; then echo resumed; exit 0; fi; sleep 300") &&
	for i in $(seq 1 120); do [ "$(sq "${nf%@*}" %T)" = RUNNING ] && break; sleep 1; done &&
	test "$(sq "${nf%@*}" %N)" = node2 &&
	sleep 2 &&
	: >"$TRASH/node2-killed" &&
	pids=$(node_pids node2) && test -n "$pids" &&
	kill -KILL $pids &&
	scontrol update nodename=node2 state=down reason="t7800: its slurmd was killed" &&
	for i in $(seq 1 60); do [ "$(sq "${nf%@*}" %T)" = PENDING ] && break; sleep 1; done &&
	test "$(sq "${nf%@*}" %T)" = PENDING &&
	up >/dev/null &&
	{ scontrol update nodename=node2 state=resume 2>/dev/null || true; } &&
	rm -f "$TRASH/node2-killed" &&
	dispatch wait --interval 2 --timeout 300 --no-tail "$nf" >out &&
	test_grep "^$nf COMPLETED exit 0 attempt 2/3 " out &&
	test_grep "^$nf: run-[0-9a-f]* ended: attempt 1 NODE_FAIL 20[0-9T:-]*Z on node2$" out &&
	webhook_posts 4 >posts &&
	test_grep "(job ${nf%@*} on hpc) ended COMPLETED after 2 attempt(s)|0$" posts
'

# A run cancelled while it waits to start again (PENDING for its BeginTime): nothing
# restarts it.
test_expect_unless "$ONLY_2205" 'a run cancelled during its requeue stays cancelled' '
	dispatch --json submit -H hpc -J t7800cr -p cpu --mem 50 -t 1 --max-restarts 3 --grace 15 \
		-- "$LOOP" >cr.json &&
	cr=$(jq_ "d[\"job\"]" cr.json) && echo "${cr%@*}" >>"$TRASH/ids-slow" &&
	for i in $(seq 1 240); do
		[ "$(sq "${cr%@*}" %T)" = PENDING ] &&
			[ "$(scontrol -o show job "${cr%@*}" | sed -n "s/.* Restarts=\([0-9]*\) .*/\1/p")" = 1 ] &&
			break
		sleep 1
	done &&
	test "$(sq "${cr%@*}" %T)" = PENDING &&
	dispatch queue -H hpc >q &&
	test_grep "^${cr%@*}@hpc .* PENDING attempt 2/4 " q &&
	dispatch --json queue -H hpc >q.json &&
	test "$(jq_ "[(j[\"attempt\"], j[\"max_attempts\"], j[\"attempts\"]) for j in d[\"jobs\"] if j[\"id\"] == \"${cr%@*}\"][0]" q.json)" = "(2, 4, None)" &&
	dispatch cancel "$cr" &&
	test_expect_code 1 dispatch wait --interval 1 --timeout 60 --no-tail "$cr" >out &&
	test_grep "^$cr CANCELLED .*attempt 2/4" out &&
	sleep 5 &&
	test "$(sacct -n -X -D -j "${cr%@*}" -o State%20 | grep -c RUNNING)" = 0 &&
	test "$(scontrol -o show job "${cr%@*}" | sed -n "s/.* JobState=\([A-Z]*\) .*/\1/p")" = CANCELLED
'

# Preemption (the test bed's PreemptType=preempt/qos, parts/30-slurm's qos_up): a job
# of QOS high on node2 preempts a run there. PreemptMode=REQUEUE (QOS normal): SLURM
# requeues the run itself, its next attempt writes the end from the accounting.
# PreemptMode=CANCEL (QOS lowcancel, GraceTime 20 s): SLURM sends the steps SIGTERM
# and would end the job; the wrapper sees the job's PreemptTime and requeues it.
# preempt_run QOS: the run on node2, preempted; prints JOB@hpc
preempt_run() {
	local r hi i
	# its requeue waits for its BeginTime (30 s), after the high job (5 s)
	dispatch --json submit -H hpc -J "t7800$1" -p cpu --qos "$1" --mem 50 -c 2 -x node1 \
		--max-restarts 2 -- \
		"if [ \"\$DISPATCH_ATTEMPT\" -ge 1 ]; then echo resumed; exit 0; fi; trap \"exit 0\" TERM; while :; do sleep 1; done" \
		>"$TRASH/pre-$1.json" || return 1
	r=$(jq_ "d[\"job\"]" "$TRASH/pre-$1.json") || return 1
	echo "${r%@*}" >>"$TRASH/ids-slow"
	for i in $(seq 1 120); do [ "$(sq "${r%@*}" %T)" = RUNNING ] && break; sleep 1; done
	[ "$(sq "${r%@*}" %N)" = node2 ] || return 1
	sleep 2
	hi=$(dispatch run -H hpc -- sbatch --parsable -p cpu --qos high -c 2 -w node2 --mem 50 \
		--wrap "'sleep 5'") || return 1
	echo "${hi%%;*}" >>"$TRASH/ids"
	echo "$r"
}

test_expect_unless "$ONLY_2205" 'a run preempted by a higher QOS (PreemptMode=REQUEUE) resumes after it' '
	pr=$(preempt_run normal) &&
	dispatch wait --interval 2 --timeout 300 --no-tail "$pr" >out &&
	test_grep "^$pr COMPLETED exit 0 attempt 2/3 " out &&
	test_grep "^$pr: run-[0-9a-f]* ended: attempt 1 PREEMPTED 20[0-9T:-]*Z on node2$" out
'

test_expect_unless "$ONLY_2205" 'a run preempted with PreemptMode=CANCEL: the wrapper requeues it, it resumes' '
	pc=$(preempt_run lowcancel) &&
	dispatch wait --interval 2 --timeout 300 --no-tail "$pc" >out &&
	test_grep "^$pc COMPLETED exit 0 attempt 2/3 " out &&
	test_grep "^$pc: run-[0-9a-f]* ended: attempt 1 PREEMPTED 20[0-9T:-]*Z on node2$" out &&
	dispatch logs "$pc" >log &&
	test_grep "preempted at 20" log &&
	test_grep "attempt 1 ended PREEMPTED, requeued (restart 1 of 2)" log &&
	test_grep "^resumed$" log
'

# A job (not a run) preempted for good (QOS lowcancel): wait ends with it, PREEMPTED
# (on 22.05 FAILED: its script's own exit after the steps' SIGTERM is recorded
# first). On 24.11 and later wait's polls ask squeue for states only while nothing
# changed, which must not keep a PREEMPTED end from being taken (test-wait too).
test_expect_success 'a job preempted for good: wait ends' '
	dispatch --json submit -H hpc -J t7800gone -p cpu --qos lowcancel --mem 50 -c 2 -x node1 \
		-- "sleep 300" >gone.json &&
	g=$(jq_ "d[\"job\"]" gone.json) && echo "${g%@*}" >>"$TRASH/ids" &&
	for i in $(seq 1 120); do [ "$(sq "${g%@*}" %T)" = RUNNING ] && break; sleep 1; done &&
	test "$(sq "${g%@*}" %N)" = node2 &&
	hi=$(dispatch run -H hpc -- sbatch --parsable -p cpu --qos high -c 2 -w node2 --mem 50 \
		--wrap "'"'"'sleep 5'"'"'") && echo "${hi%%;*}" >>"$TRASH/ids" &&
	test_expect_code 1 dispatch wait --interval 2 --timeout 120 --no-tail "$g" >out &&
	test_grep "^$g \(PREEMPTED\|FAILED\) " out
'

test_expect_unless "$NO_TORCH" 'time limits: the training resumes from its checkpoint and ends with the uninterrupted checksum' '
	dispatch wait --interval 2 --timeout 300 --no-tail "$plain" >out &&
	test_grep " COMPLETED exit 0 " out &&
	dispatch wait --interval 2 --timeout 500 --no-tail "$run" >out &&
	test_grep "^$run COMPLETED exit 0 " out &&
	restarts=$(scontrol -o show job "${run%@*}" | sed -n "s/.* Restarts=\([0-9]*\) .*/\1/p") &&
	test "$restarts" -ge 1 &&
	test_grep "^$run COMPLETED exit 0 attempt $((restarts + 1))/5 " out &&
	test_grep "^$run: run-[0-9a-f]* ended: attempt 1 TIMEOUT " out &&
	dispatch --json status "$run" >st.json &&
	python3 -c "import json; j = json.load(open(\"st.json\"))[\"jobs\"][0]; print(j[\"attempt\"], len(j[\"attempts\"]), j[\"attempts\"][0][\"state\"])" >got &&
	echo "$((restarts + 1)) $restarts TIMEOUT" >want && test_cmp want got &&
	dispatch logs "$run" >log &&
	test_grep "^stopped at step [0-9]*: USR1$" log &&
	test_grep "^resumed from step [0-9]* (attempt 1)$" log &&
	test_grep "attempt 1 ended TIMEOUT, requeued (restart 1 of 4)" log &&
	dispatch logs "$plain" >plain.log &&
	want=$(sed -n "s/.* done on .*, checksum \([0-9a-f]*\)$/\1/p" plain.log) &&
	got=$(sed -n "s/.* done on .*, checksum \([0-9a-f]*\)$/\1/p" log) &&
	test -n "$want" && test "$got" = "$want" &&
	test "$(grep -c "step 160/160" log)" = 1
'

test_expect_success 'each run POSTed its end to the webhook once, from the node, the URL in no argv, log or ledger' '
	n=3 && if [ -n "$TORCH" ]; then n=$((n + 1)); fi && if [ -z "$REL" ]; then n=$((n + 3)); fi &&
	webhook_posts $n >posts &&
	# the run preempted with PreemptMode=REQUEUE: its command exits 0 on the
	# SIGTERM of the preemption, which the wrapper must not take for its end (the
	# record of the job says COMPLETING, Restarts one more): its real end alone
	if [ -z "$REL" ]; then
		pn=$(jq_ "d[\"job\"]" "$TRASH/pre-normal.json") &&
		test "$(grep -c -F "(job ${pn%@*} on hpc)" posts)" = 1 &&
		test_grep "(job ${pn%@*} on hpc) ended COMPLETED after 2 attempt(s)|0$" posts
	fi &&
	test "$(wc -l <posts)" = $n &&
	if [ -n "$TORCH" ]; then
		restarts=$(scontrol -o show job "${run%@*}" | sed -n "s/.* Restarts=\([0-9]*\) .*/\1/p") &&
		test_grep "^dispatch: run run-[0-9a-f]* (job ${run%@*} on hpc) ended COMPLETED after $((restarts + 1)) attempt(s)|0$" posts &&
		dispatch logs "$run" >>log
	fi &&
	test_grep "^dispatch: run run-[0-9a-f]* (job ${capped%@*} on hpc) ended FAILED after 3 attempt(s): gave up after 2 restarts: TIMEOUT, TIMEOUT; attempt 3 ended TIMEOUT|0$" posts &&
	test_grep "^dispatch: run run-[0-9a-f]* (job ${exit1%@*} on hpc) ended FAILED after 1 attempt(s): exit status 1|0$" posts &&
	test_grep "^dispatch: run run-[0-9a-f]* (job ${again%@*} on hpc) ended COMPLETED after 2 attempt(s)|0$" posts &&
	! grep -F "(job ${norun%@*} on hpc)" posts &&
	dispatch logs "$capped" >>log && ! grep -c "$HOOK_TOKEN" log &&
	! grep -c "$HOOK_TOKEN" "$DISPATCH_STATE_DIR/ledger.db"
'

test_done
