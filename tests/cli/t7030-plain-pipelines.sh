#!/bin/bash
# t7030: the launcher of a plain host (box1 of tests/testbed) holds jobs for their
# --dependency and enforces --time. Three chained jobs (train -> eval -> report,
# afterok) run in order, the later ones PENDING "Dependency" meanwhile (status, queue);
# a failed parent leaves its afterok child PENDING "DependencyNeverSatisfied" (until
# cancelled) and starts its afternotok child; a held job takes no slot of a host's
# max_jobs (nor a GPU lease: the same queue); an unknown job id is refused at submit.
# --time: the stop signal (SIGUSR1) at the limit minus the grace (half of a short
# limit), then TERM at the limit and state TIMEOUT (status, wait's exit 1, --json);
# a job that ignores TERM is killed 30 s later. Jobs wait on gate files, and the
# clock only where the time limit is what is tested.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-boxq.sh"
boxq_setup t7030

# job NAME ARGS... -- : a job that appends NAME to $G/order once its gate file $G/NAME
# (or $G/all) is there; prints the job.
job() {
	local name=$1
	shift
	dispatch submit -H "${HOST:-box1}" -J "$name" "$@" -- \
		"while [ ! -e $G/$name ] && [ ! -e $G/all ]; do sleep 0.05; done; echo $name >>$G/order; exit ${RC:-0}"
}
# state JOB: "STATE|REASON" as status --json gives them
state() {
	dispatch --json status "$1" >st.json &&
		python3 -c 'import json; j = json.load(open("st.json"))["jobs"][0]; print(j["state"], j["reason"], sep="|")'
}
# wait_state JOB STATE [REASON]: until the job is in STATE (with REASON), bounded: 60 s
wait_state() {
	local i s
	for i in $(seq 1 300); do
		s=$(state "$1") || return 1
		if [ "${s%%|*}" = "$2" ] && { [ $# = 2 ] || [ "${s#*|}" = "$3" ]; }; then
			return 0
		fi
		sleep 0.2
	done
	echo "job $1 is $s, not $2 ${3:-}" >&2
	return 1
}

test_expect_success 'train -> eval -> report: held PENDING (Dependency) until the one before completed' '
	tr=$(job train) &&
	ev=$(job eval --dependency "afterok:$tr") &&
	rp=$(job report --dependency "afterok:${ev%@box1}") &&
	touch "$G/eval" "$G/report" &&
	wait_state "$tr" RUNNING &&
	wait_state "$ev" PENDING Dependency && wait_state "$rp" PENDING Dependency &&
	dispatch status "$ev" >out && test_grep "PENDING" out &&
	test "$(table_cell out "$ev" REASON)" = Dependency &&
	dispatch queue -H box1 >out &&
	test_grep "${ev%@box1}.*PENDING.*Dependency" out &&
	test_grep "${rp%@box1}.*PENDING.*Dependency" out &&
	test ! -e "$G/order" &&
	touch "$G/train" &&
	timeout 120 "$DISPATCH" wait --interval 0.2 "$rp" >out &&
	test_grep COMPLETED out &&
	printf "%s\n" train eval report >want && test_cmp want "$G/order" &&
	test "$(state "$ev")" = "COMPLETED|"
'

test_expect_success 'a failed parent: its afterok child never runs, its afternotok child does' '
	rm -f "$G/order" &&
	fa=$(RC=3 job fail) &&
	ok=$(job okchild --dependency "afterok:$fa") &&
	nok=$(job notokchild --dependency "afternotok:$fa") &&
	any=$(job anychild --dependency "afterany:$fa,afterok:$nok") &&
	touch "$G/okchild" "$G/notokchild" "$G/anychild" &&
	wait_state "$ok" PENDING Dependency && wait_state "$nok" PENDING Dependency &&
	touch "$G/fail" &&
	timeout 120 "$DISPATCH" wait --interval 0.2 "$nok" "$any" &&
	wait_state "$ok" PENDING DependencyNeverSatisfied &&
	test_expect_code 3 dispatch wait --interval 0.2 --timeout 2 "$ok" >out &&
	test_grep PENDING out &&
	test "$(state "$fa")" = "FAILED|" &&
	grep -qx notokchild "$G/order" && grep -qx anychild "$G/order" &&
	! grep -qx okchild "$G/order" &&
	dispatch cancel "$ok" &&
	wait_state "$ok" CANCELLED &&
	! grep -qx okchild "$G/order"
'

test_expect_success 'a held job takes no slot (max_jobs 1): a later job runs meanwhile' '
	a=$(job parent) &&
	b=$(HOST=boxq job held --dependency "afterok:$a") &&
	c=$(HOST=boxq job free) &&
	wait_state "$b" PENDING Dependency &&
	wait_state "$c" RUNNING &&
	dispatch queue -H boxq >out &&
	test_grep "${b%@boxq}.*PENDING.*Dependency" out &&
	test_grep "${c%@boxq}.*RUNNING" out &&
	touch "$G/parent" && wait_state "$a" COMPLETED &&
	wait_state "$b" PENDING "waiting for a job slot: max_jobs 1, 1 running" &&
	touch "$G/free" "$G/held" &&
	timeout 120 "$DISPATCH" wait --interval 0.2 "$b" "$c"
'

test_expect_success 'singleton: a job waits for the earlier live job of its name' '
	s1=$(job single) &&
	s2=$(job single --dependency singleton) &&
	wait_state "$s1" RUNNING &&
	wait_state "$s2" PENDING Dependency &&
	touch "$G/single" &&
	timeout 120 "$DISPATCH" wait --interval 0.2 "$s1" "$s2"
'

test_expect_success 'a dependency on no job of the host is refused at submit' '
	test_expect_code 1 dispatch submit -H box1 --dependency afterok:nosuch-20260101-000000-abcd -- true 2>err &&
	test_grep "no job .nosuch-20260101-000000-abcd. on" err &&
	test_expect_code 1 dispatch submit -H box1 --dependency aftercorr:5 -- true 2>err &&
	test_grep "aftercorr is not supported on a plain host" err
'

test_expect_success '--time: the stop signal first, then TERM at the limit: TIMEOUT' '
	t1=$(dispatch submit -H box1 -J timed --time 0:08 -- \
		"trap \"date +%s.%N >$G/stop-t1\" USR1; trap \"date +%s.%N >$G/term-t1; exit 143\" TERM; echo \"\$DISPATCH_STOP_SIGNAL\" >$G/sig-t1; while :; do sleep 0.1; done") &&
	t2=$(dispatch submit -H box1 -J stubborn --time 0:08 -- \
		"trap \"\" TERM; trap \"date +%s.%N >$G/stop-t2\" USR1; while :; do sleep 0.1; done") &&
	test_expect_code 1 timeout 60 "$DISPATCH" wait --interval 0.2 "$t1" >out &&
	test_grep TIMEOUT out &&
	test -s "$G/stop-t1" && test -s "$G/term-t1" &&
	test "$(cat "$G/sig-t1")" = USR1 &&
	python3 -c "import sys; s, t = float(open(sys.argv[1]).read()), float(open(sys.argv[2]).read()); sys.exit(0 if 3 <= t - s <= 6 else \"stop to TERM: %.2f s\" % (t - s))" "$G/stop-t1" "$G/term-t1" &&
	dispatch --json status "$t1" >st.json &&
	python3 -c "import json; j = json.load(open(\"st.json\"))[\"jobs\"][0]; assert j[\"state\"] == \"TIMEOUT\" and not j[\"active\"], j" &&
	dispatch status "$t1" >out && test_grep "TIMEOUT" out &&
	test_expect_code 1 dispatch --json wait "$t1" >w.json &&
	python3 -c "import json; j = json.load(open(\"w.json\"))[\"jobs\"][0]; assert j[\"state\"] == \"TIMEOUT\", j" &&
	test_expect_code 1 timeout 90 "$DISPATCH" wait --interval 0.5 "$t2" >out &&
	test_grep TIMEOUT out &&
	{ test -s "$G/stop-t2" || { echo "t2 never got the stop signal"; false; }; } &&
	pg=$(sqlite3 "$DISPATCH_STATE_DIR/ledger.db" "select pid from jobs where job_id = \"${t2%@box1}\"") &&
	test -n "$pg" &&
	# (the launcher writes the exit status, then exits: a moment where it is still
	# there, longer on a loaded machine)
	for i in $(seq 300); do pgrep -s "$pg" >/dev/null || break; sleep 0.1; done &&
	{ ! pgrep -s "$pg" >/dev/null || { echo "left in session $pg:"; ps -s "$pg" -o pid,stat,args; false; }; }
'

test_done
