#!/bin/bash
# t7000: jobs on a plain host (box1 of tests/testbed) end to end: the job runs
# detached and outlives the client's connection, sees its env values unchanged,
# status follows it to COMPLETED or FAILED with the exit code, cancel gives
# CANCELLED and the processes are gone; scripts and dirs are private; submit-packed
# at a ref and with --dirty runs that code (in --repo's subdirectory), a large
# snapshot is uploaded once for several jobs (a progress line on a terminal only);
# 20 concurrent submissions are all in the ledger. Uses the default testbed
# instance (tests/testbed/up serialises).
. "$(dirname "$0")/lib.sh"

testbed_up
# Our own ledger: the testbed's is shared with other tests.
export DISPATCH_STATE_DIR="$TRASH/state"
CL=$DISPATCH_TESTBED_DIR/cluster
DB=$DISPATCH_STATE_DIR/ledger.db

# wait_end JOB: until status says the job is no longer active (bounded).
wait_end() {
	local i
	for i in $(seq 1 300); do
		dispatch --json status "$1" >st.json || return 1
		if python3 -c 'import json,sys; sys.exit(0 if not json.load(open("st.json"))["jobs"][0]["active"] else 1)'; then
			return 0
		fi
		sleep 0.2
	done
	echo "job $1 did not end" >&2
	return 1
}
field() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["jobs"][0][sys.argv[2]])' st.json "$1"; }
jfield() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }

test_expect_success 'a job outlives the connection, sees its env unchanged, and completes' '
	gate=$CL/work/gate-$$ &&
	dispatch --json submit -H box1 -J envjob --env "V1=a b  c" --env "V2=it'"'"'s \"q\" \$HOME \`x\`" -- \
		"while [ ! -e $gate ]; do sleep 0.1; done; printf \"%s\n\" \"\$V1\" \"\$V2\" \"\$DISPATCH_JOB_ID\"" >sub.json &&
	job=$(jfield sub.json job) && log=$(jfield sub.json log) &&
	case $job in envjob-*@box1) ;; *) false ;; esac &&
	dispatch status "$job" >st &&
	test_grep " RUNNING " st &&
	touch "$gate" && chmod 666 "$gate" &&
	wait_end "$job" &&
	test "$(field state)" = COMPLETED && test "$(field exit_code)" = 0 &&
	printf "%s\n" "a b  c" "it'"'"'s \"q\" \$HOME \`x\`" "${job%@box1}" >want &&
	test_cmp want "$log" &&
	rm -f "$gate"
'

test_expect_success 'the stage dir and its scripts are private; the ledger has the job' '
	stage=$(jfield sub.json stage_dir) &&
	test "$(stat -c %a "$stage")" = 700 &&
	test "$(stat -c %a "$stage/bootstrap.sh")" = 700 &&
	test "$(stat -c %U "$stage/bootstrap.sh")" = "$DISPATCH_TESTBED_USER" &&
	test "$(sqlite3 "$DB" "select job_id || \"|\" || host || \"|\" || state || \"|\" || (pid > 1) from jobs where token = \"$(jfield sub.json token)\"")" = \
		"$(jfield sub.json id)|box1|submitted|1"
'

test_expect_success 'a failing job shows FAILED and its exit code' '
	job=$(dispatch submit -H box1 -J failjob -- "exit 3") &&
	wait_end "$job" &&
	test "$(field state)" = FAILED && test "$(field exit_code)" = 3 &&
	dispatch status "${job%@box1}" >st && test_grep "^failjob.* FAILED  *3 " st
'

test_expect_success 'cancel gives CANCELLED and no process of the job is left' '
	job=$(dispatch submit -H box1 -J canceljob -- "sleep 31$$; echo not-reached") &&
	dispatch --json status "$job" >st.json && test "$(field state)" = RUNNING &&
	pgid=$(sqlite3 "$DB" "select pid from jobs where job_id = \"${job%@box1}\"") &&
	dispatch cancel "$job" >out && test_grep "cancelled" out &&
	wait_end "$job" &&
	test "$(field state)" = CANCELLED && test "$(field exit_code)" = 143 &&
	for i in $(seq 1 50); do pgrep -g "$pgid" >/dev/null || break; sleep 0.1; done &&
	! pgrep -g "$pgid" >/dev/null &&
	! pgrep -u "$DISPATCH_TESTBED_USER" -fx "sleep 31$$" >/dev/null &&
	! grep -q not-reached "$CL/log/${job%@box1}.out" &&
	dispatch --json cancel "$job" >c.json && test_grep "\"ended\"" c.json
'

test_expect_success 'a bare unknown id exits 4; a malformed one exits 2' '
	test_expect_code 4 dispatch status 12345 2>err && test_grep "12345@HOST" err &&
	test_expect_code 2 dispatch status "a b" 2>err
'

# A repository with a subdirectory, v1 committed and tagged, then edited.
git init -q repo && (
	cd repo && mkdir -p sub &&
	echo "echo code=v1 dir=\${PWD##*/}" >sub/run.sh &&
	git add . && git -c user.email=t@t -c user.name=t commit -qm v1 && git tag v1 &&
	echo "echo code=v2" >sub/run.sh &&
	git -c user.email=t@t -c user.name=t commit -qam v2 &&
	echo "echo code=dirty; cat untracked.txt" >sub/run.sh &&
	echo "untracked-here" >sub/untracked.txt
)

test_expect_success 'submit-packed --ref runs the code of that ref, in --repo'"'"'s subdirectory' '
	dispatch --json submit-packed -H box1 --repo repo/sub --ref v1 -- "sh run.sh" >sub.json &&
	job=$(jfield sub.json job) && wait_end "$job" &&
	test "$(field state)" = COMPLETED &&
	echo "code=v1 dir=sub" >want && test_cmp want "$(jfield sub.json log)" &&
	test "$(jfield sub.json commit)" = "$(git -C repo rev-parse v1)"
'

test_expect_success 'submit-packed --dirty runs an uncommitted edit and an untracked file' '
	dispatch --json submit-packed -H box1 --repo repo/sub --dirty -- "sh run.sh" >sub.json 2>err &&
	test_grep "1 modified, 1 untracked" err &&
	job=$(jfield sub.json job) && wait_end "$job" &&
	printf "code=dirty\nuntracked-here\n" >want && test_cmp want "$(jfield sub.json log)" &&
	test "$(jfield sub.json dirty)" = True
'

test_expect_success 'a large snapshot is uploaded once for several jobs' '
	git init -q big && head -c 3000000 /dev/urandom >big/blob &&
	git -C big add blob && git -C big -c user.email=t@t -c user.name=t commit -qm big &&
	want=$(sha256sum <big/blob) &&
	for i in 1 2 3; do
		dispatch -v submit-packed -H box1 --repo big -J bigjob$$ -- "sha256sum <blob" >job$i 2>err$i || exit 1
	done &&
	test_grep "uploaded the code" err1 &&
	test_grep "on the host already" err2 && test_grep "on the host already" err3 &&
	! grep -q "uploaded the code" err3 &&
	for i in 1 2 3; do wait_end "$(cat job$i)" || exit 1; done &&
	test "$(ls $CL/log/bigjob$$-*.out | wc -l)" = 3 &&
	for f in $CL/log/bigjob$$-*.out; do test "$(cat "$f")" = "$want" || exit 1; done &&
	! grep -q "^DISPATCH_PAYLOAD" $CL/work/.dispatch/bigjob$$-*/bootstrap.sh
'

test_expect_success 'the code upload draws a progress line on a terminal, never elsewhere' '
	! grep -q "uploading the code" err1 &&
	head -c 2000000 /dev/urandom >big/blob2 &&
	git -C big add blob2 && git -C big -c user.email=t@t -c user.name=t commit -qm more &&
	script -qec "$DISPATCH submit-packed -H box1 --repo big -J barjob$$ -- true" /dev/null >tty &&
	test_grep "uploading the code to box1: *100%" tty &&
	echo more >big/blob3 && git -C big add blob3 && git -C big -c user.email=t@t -c user.name=t commit -qm more &&
	script -qec "$DISPATCH -q submit-packed -H box1 --repo big -J barjob$$ -- true" /dev/null >tty &&
	! grep -q "uploading the code" tty
'

test_expect_success '20 concurrent submissions are all recorded in the ledger' '
	before=$(sqlite3 "$DB" "select count(*) from jobs") &&
	for i in $(seq 1 20); do
		dispatch submit -H box1 -J conc -- true >conc.$i 2>conc.err.$i &
	done &&
	wait &&
	cat conc.[0-9]* | sort -u >ids && test "$(wc -l <ids)" = 20 &&
	test "$(sqlite3 "$DB" "select count(*) from jobs where state = \"submitted\" and name = \"conc\"")" = 20 &&
	test "$(sqlite3 "$DB" "select count(*) from jobs")" = $((before + 20))
'

test_done
