#!/bin/bash
# t7490: stages in one allocation (dispatch-submit(1) STAGES): --stage runs in order
# on every node of one job, each start and end marked in the log, the job stopping
# at the first stage that fails; status and wait say which stage failed, --json
# lists the stages; a run resumes at the stage that was interrupted, the stages
# before it not run again; a job file's stages: list; --stage with a sweep refused.
. "$(dirname "$0")/lib.sh"

jfield() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$@"; }

test_expect_success 'refused: --stage with a sweep; a job file stages must be commands' '
	test_expect_code 2 dispatch submit -H hpc --stage true --sweep a=1,2 2>err &&
	test_grep "stage and a sweep do not go together" err &&
	printf "stages:\n  - [a]\n" >bad.yaml &&
	test_expect_code 2 dispatch submit -H hpc -f bad.yaml 2>err &&
	test_grep "bad.yaml:2:5: each item of .stages. must be a string" err
'

testbed_up
export DISPATCH_STATE_DIR="$TRASH/state"
DB=$DISPATCH_STATE_DIR/ledger.db
ledger_jobs_cancelled_at_exit

test_expect_success 'SLURM, two nodes: stage 2 of 3 fails; wait and status say so; the log marks each' '
	# stage 2 fails on the first node (after the other had time for stage 1); srun
	# then ends the other node, which waits in stage 2. The second node starts its
	# stages 3 s late (its setup sleeps): the first task has written stage 1 done
	# by then, which is this attempt, not an earlier one to resume from
	job=$(dispatch submit -H hpc -p cpu -N 2 \
		--setup "if [ \"\$SLURM_NODEID\" = 1 ]; then sleep 3; fi" \
		--stage "echo prep-\$(hostname)" \
		--stage "if [ \"\$SLURM_NODEID\" = 0 ]; then sleep 6; echo train-fails; exit 3; fi; sleep 60" \
		--stage "echo eval") &&
	test_expect_code 1 dispatch wait --timeout 120 "$job" >w &&
	# (the job exit status: what srun made of both tasks ends, 3 or the signal)
	test_grep "^$job FAILED exit [0-9]* .*: in stage 2/3: its script exited with code [0-9]*$" w &&
	ledger_log "$job" >out &&
	test "$(grep -c "^dispatch-stage 1/3 start$" out)" = 2 &&
	test "$(grep -c "^dispatch-stage 1/3 exit 0$" out)" = 2 &&
	test "$(grep -c "^dispatch-stage 2/3 exit 3$" out)" = 1 &&
	test_grep "^prep-node1$" out && test_grep "^prep-node2$" out && test_grep "^train-fails$" out &&
	! grep -q "^eval$" out &&
	! grep -q "dispatch-stage 3/3" out &&
	dispatch --json status "$job" >st.json &&
	python3 -c "import json; j = json.load(open(\"st.json\"))[\"jobs\"][0]; assert j[\"stages\"] == [{\"stage\": 1, \"state\": \"done\", \"exit\": 0}, {\"stage\": 2, \"state\": \"failed\", \"exit\": 3}, {\"stage\": 3, \"state\": \"not run\", \"exit\": None}], j[\"stages\"]; assert j[\"why\"].startswith(\"in stage 2/3: its script exited with code \"), j[\"why\"]"
'

test_expect_success 'a run resumes at the interrupted stage: the stages before it not again' '
	u=t7490.$$ &&
	job=$(dispatch submit -H box1 --max-restarts 1 --restart-on error \
		--stage "echo one >>$u.ones" \
		--stage "if [ -e $u.seen ]; then echo second-try; else touch $u.seen; exit 4; fi" \
		--stage "cat $u.ones") &&
	dispatch wait --timeout 120 "$job" >w &&
	test_grep "COMPLETED exit 0 attempt 2/2" w &&
	ledger_log "$job" >out &&
	cat >expect <<-\EOF &&
	dispatch-stage 1/3 start
	dispatch-stage 1/3 exit 0
	dispatch-stage 2/3 start
	dispatch-stage 2/3 exit 4
	dispatch-stage 1/3 done (an earlier attempt)
	dispatch-stage 2/3 start
	second-try
	dispatch-stage 2/3 exit 0
	dispatch-stage 3/3 start
	one
	dispatch-stage 3/3 exit 0
	EOF
	grep -v "^dispatch: attempt" out >got &&
	test_cmp expect got &&
	dispatch --json status "$job" >st.json &&
	python3 -c "import json; j = json.load(open(\"st.json\"))[\"jobs\"][0]; assert [s[\"state\"] for s in j[\"stages\"]] == [\"done\"] * 3, j"
'

test_expect_success 'a job file stages: list, then the command: the last stage' '
	printf "stages:\n  - echo first\n  - echo second\ncommand: echo last\n" >j.yaml &&
	job=$(dispatch submit -H box1 -f j.yaml) &&
	dispatch wait --timeout 60 "$job" >/dev/null &&
	ledger_log "$job" | grep -v "^dispatch-stage" >out &&
	printf "first\nsecond\nlast\n" >expect &&
	test_cmp expect out &&
	test "$(sqlite3 "$DB" "select name from jobs where job_id = \"${job%@*}\"")" = echo
'

test_done
