#!/bin/bash
# t7210: dispatch wait through outages and under load, on the SLURM host hpc of its
# own testbed instance: the login node's sshd killed with its sessions mid-wait, then
# started again (the wait says it retries, reconnects and ends COMPLETED, exit 0);
# slurmctld stopped mid-wait while one job completes and one fails, then started
# again (squeue's "slurm_load_jobs error" is retried over the same connection and
# the wait ends COMPLETED + FAILED exit 3, exit 1); 50 jobs in one wait, where
# slurmctld's own RPC counters (sdiag) show at most one job-info RPC per poll; and
# where squeue has --only-job-state, polls that change nothing ask the states alone.
# Its own instance because it stops daemons and counts the controller's RPCs: the
# shared default one must see neither. Two runs of this file (build and build-san)
# take turns (a lock); each SLURM release (DISPATCH_TESTBED_SLURM) has an instance of
# its own. DISPATCH_TESTBED_DIR=/tmp/dispatch-testbed-t7210
# tests/testbed/down removes the instance.
. "$(dirname "$0")/lib.sh"

testbed_own t7210 "29000 dsw7 10.171" "30500 dsw24 10.125" "34500 dsw26 10.127"
TB=$DISPATCH_TESTBED_DIR
S=$TB/slurm
jget() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); exec("print(" + sys.argv[2] + ")")' "$@"; }

# until_grep PATTERN FILE SECONDS: until a line of FILE matches (bounded).
until_grep() {
	local i
	for i in $(seq 1 $(($3 * 5))); do
		grep -q -- "$1" "$2" 2>/dev/null && return 0
		sleep 0.2
	done
	echo "no '$1' in $2 after $3 s:" >&2
	cat "$2" >&2
	return 1
}

# until_file FILE SECONDS: until FILE is not empty (bounded).
until_file() {
	local i
	for i in $(seq 1 $(($2 * 5))); do
		[ -s "$1" ] && return 0
		sleep 0.2
	done
	echo "no $1 after $2 s" >&2
	return 1
}

# descendants PID: PID's children, grandchildren, ...
descendants() {
	local c
	for c in $(ps -o pid= --ppid "$1"); do
		echo "$c"
		descendants "$c"
	done
}

# gone PID...: every PID has exited (bounded: 5 s).
gone() {
	local p left
	for _ in $(seq 1 25); do
		left=
		for p; do ! kill -0 "$p" 2>/dev/null || left=1; done
		[ -z "$left" ] && return 0
		sleep 0.2
	done
	echo "still running: $*" >&2
	return 1
}

# The first case's subject is dispatch's own: a connection cut mid-wait, a retry and
# a new connection; squeue's words in between are those of any poll (t7200 reads them
# on every release). So it runs on the 22.05 instance only; on a newer release's
# (DISPATCH_TESTBED_SLURM) it is skipped: the cases after it read what SLURM says
# (squeue's error with slurmctld down, sdiag's RPC counts, --only-job-state) and run
# on every release.
case ${DISPATCH_TESTBED_SLURM:-} in
24.11 | trixie | 26.05 | forky) release_run=yes ;;
*) release_run=no ;;
esac
if [ $release_run = yes ]; then
	test_count=$((test_count + 1))
	echo "ok $test_count # skip sshd killed mid-wait: not a SLURM release's subject (on 22.05 only)"
else
test_expect_success 'sshd of the login node killed and started again mid-wait: exit 0' '
	job=$(dispatch submit -H hpc -J sshd -p cpu -- "sleep 8") &&
	{ (dispatch -v --json wait --interval 1 --timeout 150 "$job" >s.json 2>s.err; echo $? >s.rc) 8>&- & } &&
	until_grep ": RUNNING" s.err 30 &&
	sshd=$(cat "$TB/sshd/hpc/pid") &&
	pids="$(descendants "$sshd") $sshd" &&
	kill $pids && gone $pids &&
	until_grep "cannot ask .hpc. about its jobs" s.err 30 &&
	up >/dev/null &&
	until_file s.rc 60 &&
	cat s.err >&2 &&
	test "$(cat s.rc)" = 0 &&
	test_grep "answers again" s.err &&
	! grep "Unexpected error" s.err &&
	test "$(jget s.json "d[\"jobs\"][0][\"state\"], d[\"jobs\"][0][\"exit_code\"]")" = "COMPLETED 0" &&
	test "$(jget s.json "d[\"hosts\"][0][\"failed_polls\"] >= 1, d[\"hosts\"][0][\"connections\"] >= 2")" = "True True"
'
fi

test_expect_success 'slurmctld stopped and started mid-wait: the jobs end as they did, exit 1 (status meanwhile: cannot ask, not "not found")' '
	ok=$(dispatch submit -H hpc -J ctldok -p cpu -- "sleep 6") &&
	bad=$(dispatch submit -H hpc -J ctldbad -p cpu -- "sleep 6; exit 3") &&
	{ (dispatch -v --json wait --interval 1 --timeout 150 "$ok" "$bad" >c.json 2>c.err; echo $? >c.rc) 8>&- & } &&
	until_grep "^dispatch: $ok: RUNNING" c.err 30 &&
	until_grep "^dispatch: $bad: RUNNING" c.err 30 &&
	ctld=$(cat "$S/run/slurmctld.pid") &&
	kill "$ctld" && gone "$ctld" &&
	until_grep "cannot ask .hpc. about its jobs: slurm_load_jobs error" c.err 60 &&
	test_expect_code 1 dispatch status "$ok" >st.out 2>st.err &&
	test_grep "cannot ask .hpc. for the jobs. state: squeue failed" st.err &&
	! grep -q "not found" st.err &&
	up >/dev/null &&
	until_file c.rc 90 &&
	cat c.err >&2 &&
	test "$(cat c.rc)" = 1 &&
	test_grep "answers again" c.err &&
	test "$(jget c.json "\" \".join(\"%s:%s\" % (j[\"state\"], j[\"exit_code\"]) for j in d[\"jobs\"])")" = "COMPLETED:0 FAILED:3" &&
	test "$(jget c.json "d[\"hosts\"][0][\"failed_polls\"] >= 1, d[\"hosts\"][0][\"connections\"]")" = "True 1"
'

# The job-info RPCs in sdiag's "by message type" section: REQUEST_JOB_INFO (squeue
# with several -j ids), _SINGLE (one id), REQUEST_JOB_USER_INFO (squeue -u).
job_info_rpcs() {
	sdiag | awk '/by message type/ { on = 1; next } /by user/ { on = 0 }
		on && $1 ~ /^REQUEST_JOB_(INFO|INFO_SINGLE|USER_INFO)$/ {
			sub(/.*count:/, ""); n += $1 }
		END { print n + 0 }'
}

test_expect_success '50 jobs in one wait: at most one job-info RPC per poll (sdiag)' '
	seq 1 50 | xargs -P 5 -I{} "$DISPATCH" submit -H hpc -J "many{}" -p cpu -- true >jobs &&
	test "$(sort -u jobs | wc -l)" = 50 &&
	before=$(job_info_rpcs) &&
	SECONDS=0 &&
	dispatch --json wait --interval 2 --timeout 200 $(cat jobs) >m.json &&
	took=$SECONDS &&
	after=$(job_info_rpcs) &&
	rpcs=$((after - before)) &&
	squeues=$(jget m.json "d[\"hosts\"][0][\"squeue_calls\"]") &&
	polls=$(jget m.json "d[\"polls\"]") &&
	echo "50 jobs: $polls polls, $squeues squeue calls, $rpcs job-info RPCs, $took s" | tee figures &&
	test "$(jget m.json "\" \".join(sorted(set(j[\"state\"] for j in d[\"jobs\"]))), len(d[\"jobs\"])")" = "COMPLETED 50" &&
	test "$polls" -ge 2 &&  # else one poll could pass for any number of RPCs per poll
	test "$rpcs" -ge 1 &&
	test "$rpcs" -le "$squeues" &&
	test "$squeues" -le "$polls"
'
# REQUEST_JOB_STATE: squeue --only-job-state (23.11.5 and later), the states alone.
job_state_rpcs() {
	sdiag | awk '/by message type/ { on = 1; next } /by user/ { on = 0 }
		on && $1 == "REQUEST_JOB_STATE" { sub(/.*count:/, ""); n += $1 }
		END { print n + 0 }'
}

# Where squeue has --only-job-state, every poll asks the states first (one
# REQUEST_JOB_STATE) and the full job records only when a state changed; elsewhere
# every poll is one job-info RPC, as before. Exact counts, whatever the timing.
case $(sinfo --version) in
*\ 2[0-2].* | *\ 23.0[0-9].* | *\ 23.11.[0-4]) only_state=no ;;
*) only_state=yes ;;
esac
test_expect_success "4 running jobs in one wait: states alone when nothing changed (--only-job-state: $only_state)" '
	for i in 1 2 3 4; do dispatch submit -H hpc -J "st$i" -p cpu -- "sleep 6" || exit 1; done >sjobs &&
	info0=$(job_info_rpcs) && state0=$(job_state_rpcs) &&
	dispatch --json wait --interval 1 --timeout 200 $(cat sjobs) >s.json &&
	info=$(($(job_info_rpcs) - info0)) && state=$(($(job_state_rpcs) - state0)) &&
	squeues=$(jget s.json "d[\"hosts\"][0][\"squeue_calls\"]") &&
	same=$(jget s.json "d[\"hosts\"][0][\"state_only_polls\"]") &&
	polls=$(jget s.json "d[\"polls\"]") &&
	echo "4 jobs of 6 s: $polls polls, $same of them states alone; RPCs: $state job-state, $info job-info" | tee -a figures &&
	test "$(jget s.json "\" \".join(sorted(set(j[\"state\"] for j in d[\"jobs\"])))")" = COMPLETED &&
	if [ $only_state = yes ]; then
		test "$state" = "$squeues" &&
		test "$info" = $((squeues - same))
	else
		test "$same" = 0 && test "$state" = 0 && test "$info" = "$squeues"
	fi
'
[ ! -s figures ] || sed 's/^/# /' figures

test_done
