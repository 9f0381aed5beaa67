#!/bin/bash
# t7040: --max-restarts on a plain host (box1 of tests/testbed): the launcher runs
# the command again after a time limit while restarts remain (DISPATCH_ATTEMPT 0, 1,
# ...), giving back its max_jobs slot and queueing again at the back (a job that
# came meanwhile runs first); past the cap the job is FAILED, "gave up after N
# restarts: TIMEOUT, ...". A non-zero exit restarts only with --restart-on error.
# Short limits (0:04: the stop signal 2 s before) keep it quick. A run whose launcher
# was lost (SIGKILLed with its job, as a reboot leaves it) is LOST for status and
# started again by wait, once however many waits see it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-boxq.sh"
. "$TEST_SRCDIR/tests/cli/lib-webhook.sh"
boxq_setup t7040
webhook_start 127.0.0.1 || fail_rest "the webhook did not start"
# boxn: box1 with a webhook for its runs
awk -v url="$HOOK_URL" '{ print }
	/^hosts:$/ { print "  boxn:\n    ssh: box1\n    cluster: testbed\n    notify_url: " url }' \
	"$DISPATCH_INVENTORY" >inv-n.yaml && chmod 600 inv-n.yaml || exit 1
export DISPATCH_INVENTORY=$PWD/inv-n.yaml

state() {
	dispatch --json status "$1" >st.json &&
		python3 -c 'import json; j = json.load(open("st.json"))["jobs"][0]; print(j["state"], j["reason"], sep="|")'
}

test_expect_success 'a run restarted after each time limit, queued behind a later job, then COMPLETED' '
	blk=$(dispatch submit -H boxq -J blocker -- "while [ ! -e $G/blocker ]; do sleep 0.1; done") &&
	r=$(dispatch submit -H boxq -J run --time 0:04 --max-restarts 3 -- \
		"echo \"\$DISPATCH_ATTEMPT\" >>$G/attempts; if [ \"\$DISPATCH_ATTEMPT\" = 2 ]; then exit 0; fi; while :; do sleep 0.1; done") &&
	o=$(dispatch submit -H boxq -J other -- "echo other >>$G/attempts") &&
	test "$(state "$o")" = "PENDING|waiting for a job slot: max_jobs 1, 1 running" &&
	touch "$G/blocker" &&
	timeout 120 "$DISPATCH" wait --interval 0.5 "$r" "$o" "$blk" >out &&
	test "$(state "$r")" = "COMPLETED|" &&
	printf "%s\n" 0 other 1 2 >want && test_cmp want "$G/attempts" &&
	stage=$CL/work/.dispatch/${r%@boxq} &&
	test "$(cut -d " " -f 1,2 "$stage/attempts")" = "$(printf "0 TIMEOUT\n1 TIMEOUT")" &&
	test_grep "restarting (restart 1 of 3)" "$CL/log/${r%@boxq}.out" &&
	# what wait and status show of the run: the attempt, and the ends before it
	test_grep "^$r COMPLETED exit 0 attempt 3/4 " out &&
	test_grep "^$r: run-[0-9a-f]* ended: attempt 1 TIMEOUT 20[0-9T:-]*Z on [a-z0-9.-]*; attempt 2 TIMEOUT " out &&
	dispatch status "$r" >st.txt &&
	test_grep "COMPLETED attempt 3/4" st.txt &&
	dispatch --json status "$r" >st.json &&
	python3 -c "import json; j = json.load(open(\"st.json\"))[\"jobs\"][0]; print(j[\"attempt\"], j[\"max_attempts\"], *[a[\"state\"] for a in j[\"attempts\"]], j[\"wandb_url\"])" >got &&
	echo "3 4 TIMEOUT TIMEOUT None" >want && test_cmp want got
'

test_expect_success 'restarts exhausted: FAILED, gave up after 1 restarts: TIMEOUT' '
	r=$(dispatch submit -H box1 -J gives --time 0:04 --max-restarts 1 -- "while :; do sleep 0.1; done") &&
	test_expect_code 1 timeout 120 "$DISPATCH" wait --interval 0.5 "$r" >out &&
	test "$(state "$r")" = "FAILED|gave up after 1 restarts: TIMEOUT; attempt 2 ended TIMEOUT" &&
	test_grep "^$r FAILED .*attempt 2/2" out
'

test_expect_success 'a non-zero exit restarts only with --restart-on error' '
	a=$(dispatch submit -H box1 -J err1 --max-restarts 2 -- "echo \$DISPATCH_ATTEMPT >>$G/err1; exit 3") &&
	b=$(dispatch submit -H box1 -J err2 --max-restarts 2 --restart-on error -- "echo \$DISPATCH_ATTEMPT >>$G/err2; [ \$DISPATCH_ATTEMPT = 1 ]") &&
	test_expect_code 1 timeout 120 "$DISPATCH" wait --interval 0.5 "$a" &&
	timeout 120 "$DISPATCH" wait --interval 0.5 "$b" &&
	test "$(cat "$G/err1")" = 0 &&
	test "$(cat "$G/err2" | tr "\n" " ")" = "0 1 "
'

# lose PLAIN-JOB: what a reboot leaves, the launcher and every process of the job's
# session SIGKILLed (no exit status written)
lose() {
	local p
	p=$(cut -d " " -f 1 "$CL/work/.dispatch/${1%@*}/pid") && [ "${p:-0}" -gt 1 ] &&
		pkill -KILL -s "$p" &&
		# until none runs (zombies wait for init to reap them)
		timeout 10 sh -c "while ps -e -o sid= -o stat= | awk -v s=$p '\$1 == s && \$2 !~ /^Z/ { f = 1 } END { exit !f }'; do sleep 0.1; done"
}

test_expect_success 'a job whose launcher is gone is LOST; wait says so and exits 1' '
	j=$(dispatch submit -H box1 -J lost1 -- "while :; do sleep 0.1; done") &&
	timeout 60 "$DISPATCH" wait --until running --interval 0.5 "$j" &&
	lose "$j" &&
	test "$(state "$j")" = "LOST|" &&
	test "$(jq -r ".jobs[0].why" st.json)" = "its launcher is gone and left no exit status: killed with SIGKILL, or the host rebooted" &&
	test_expect_code 1 timeout 60 "$DISPATCH" wait --interval 0.5 "$j" >out &&
	test_grep "^$j LOST" out
'

test_expect_success 'a lost run: two waits start it again once, it resumes and completes' '
	r=$(dispatch submit -H box1 -J lostrun --max-restarts 2 -- \
		"echo \"\$DISPATCH_ATTEMPT \$(cat \"\$DISPATCH_CHECKPOINT_DIR/ck\" 2>/dev/null)\" >>$G/lstarts;
		 echo saved >\"\$DISPATCH_CHECKPOINT_DIR/ck\"; while [ ! -e $G/lfinish ]; do sleep 0.1; done") &&
	timeout 60 "$DISPATCH" wait --until running --interval 0.5 "$r" &&
	lose "$r" &&
	test "$(state "$r" | cut -d "|" -f 1)" = LOST &&
	# a slow start (3 s before the new launcher is there): the second wait comes
	# while the first starts it, and must leave it be
	stage=$CL/work/.dispatch/${r%@box1} &&
	{ echo "sleep 3" && cat "$stage/launch.sh"; } >slow && cat slow >"$stage/launch.sh" &&
	{ timeout 120 "$DISPATCH" wait --interval 0.5 "$r" >w1 2>&1 & } &&
	{ timeout 120 "$DISPATCH" wait --interval 0.5 "$r" >w2 2>&1 & } &&
	timeout 60 sh -c "until [ \"\$(wc -l <$G/lstarts)\" -ge 2 ]; do sleep 0.2; done" &&
	touch "$G/lfinish" &&
	wait &&
	test_grep "^$r COMPLETED exit 0 attempt 2/3 " w1 &&
	test_grep "^$r COMPLETED exit 0 attempt 2/3 " w2 &&
	printf "%s\n" "0 " "1 saved" >want && test_cmp want "$G/lstarts" &&
	test "$(cut -d " " -f 1,2 "$stage/attempts")" = "0 LOST" &&
	test "$(ls -d "$stage"/lost.* | wc -l)" = 1 &&
	test_grep "attempt 1 ended LOST (no launcher, no exit status): restarting (restart 1 of 2)" "$CL/log/${r%@box1}.out" &&
	dispatch status "$r" >st.txt &&
	test_grep "COMPLETED attempt 2/3" st.txt &&
	test_grep "attempt 1 LOST 20[0-9T:-]*Z on " st.txt
'

test_expect_success 'a lost run out of restarts: FAILED, given up; a run that does not restart on lost stays LOST' '
	r=$(dispatch submit -H box1 -J lostcap --max-restarts 1 -- "while :; do sleep 0.1; done") &&
	timeout 60 "$DISPATCH" wait --until running --interval 0.5 "$r" &&
	lose "$r" &&
	timeout 60 "$DISPATCH" wait --until running --interval 0.5 "$r" &&
	lose "$r" &&
	test_expect_code 1 timeout 60 "$DISPATCH" wait --interval 0.5 "$r" &&
	test "$(state "$r")" = "FAILED|gave up after 1 restarts: LOST; attempt 2 ended LOST" &&
	n=$(dispatch submit -H box1 -J lostno --max-restarts 1 --restart-on timeout -- "while :; do sleep 0.1; done") &&
	timeout 60 "$DISPATCH" wait --until running --interval 0.5 "$n" &&
	lose "$n" &&
	test_expect_code 1 timeout 60 "$DISPATCH" wait --interval 0.5 "$n" &&
	test "$(state "$n" | cut -d "|" -f 1)" = LOST
'

test_expect_success 'a run POSTs its end to the host'"'"'s webhook, once, the URL in no argv, log, ledger or output' '
	ok=$(dispatch submit -H boxn -J hook-ok --max-restarts 1 -- "echo ran") &&
	bad=$(dispatch submit -H boxn -J hook-bad --max-restarts 1 -- "exit 3") &&
	can=$(dispatch submit -H boxn -J hook-can --max-restarts 1 -- "sleep 300") &&
	plain=$(dispatch submit -H boxn -J hook-none -- "echo not a run") &&
	timeout 60 "$DISPATCH" wait --interval 0.5 "$ok" "$plain" >out1 &&
	test_expect_code 1 timeout 60 "$DISPATCH" wait --interval 0.5 "$bad" >out2 &&
	dispatch cancel "$can" >out3 &&
	test_expect_code 1 timeout 60 "$DISPATCH" wait --interval 0.5 "$can" >out4 &&
	webhook_posts 3 | sort >posts &&
	stage() { echo "${1%@boxn}"; } &&
	runid_of() { sqlite3 "$DISPATCH_STATE_DIR/ledger.db" "select run_id from jobs where job_id = '"'"'$(stage "$1")'"'"'"; } &&
	{
		echo "dispatch: run $(runid_of "$bad") (job $(stage "$bad") on boxn) ended FAILED after 1 attempt(s): exit status 3|0" &&
		echo "dispatch: run $(runid_of "$can") (job $(stage "$can") on boxn) ended CANCELLED after 1 attempt(s)|0" &&
		echo "dispatch: run $(runid_of "$ok") (job $(stage "$ok") on boxn) ended COMPLETED after 1 attempt(s)|0"
	} | sort >want &&
	test_cmp want posts &&
	test "$(stat -c %a "$CL/work/.dispatch/$(stage "$ok")/notify_url")" = 600 &&
	! grep -rl "$HOOK_TOKEN" "$CL/log" "$CL/work/.dispatch/$(stage "$ok")"/*.sh out1 out2 out3 out4 &&
	! grep -c "$HOOK_TOKEN" "$DISPATCH_STATE_DIR/ledger.db" &&
	dispatch --json status "$ok" "$bad" >st.json && ! grep -c "$HOOK_TOKEN" st.json
'

test_done
