#!/bin/bash
# t7400: dispatch jobs on the testbed (SLURM host hpc, plain host box1): the ledger's
# history newest first, states asked live (one command per host), ends stored back
# and never asked again (shown with an ssh config that reaches no host), the filters,
# --no-refresh and --json; two listings at once on one ledger; status and wait with
# no JOB point at jobs. Option errors need no testbed. Job names start with jb$$.
. "$(dirname "$0")/lib.sh"

jget() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); exec("print(" + sys.argv[2] + ")")' "$@"; }

test_expect_success 'an empty ledger: nothing listed, exit 0' '
	DISPATCH_STATE_DIR=$TRASH/empty dispatch jobs >out &&
	test_must_be_empty out &&
	DISPATCH_STATE_DIR=$TRASH/empty dispatch --json jobs >e.json &&
	test "$(jget e.json "d[\"jobs\"]")" = "[]"
'

test_expect_success 'option errors exit 2' '
	test_expect_code 2 dispatch jobs --since yesterday 2>err && test_grep "not a time" err &&
	test_expect_code 2 dispatch jobs --since 2026-02-31 2>err &&
	test_expect_code 2 dispatch jobs -n 0 2>err &&
	test_expect_code 2 dispatch jobs --state , 2>err &&
	test_expect_code 2 dispatch jobs extra 2>err
'

test_expect_success 'status and wait with no JOB point at dispatch jobs' '
	test_expect_code 2 dispatch status 2>err && test_grep "dispatch jobs" err &&
	test_expect_code 2 dispatch wait 2>err && test_grep "dispatch jobs" err
'

testbed_up
export DISPATCH_STATE_DIR="$TRASH/state"
N=jb$$

test_expect_success 'submit three jobs: two on hpc that end, one on box1 that runs' '
	ok=$(dispatch submit -H hpc -J "${N}-ok" -p cpu -- true) &&
	bad=$(dispatch submit -H hpc -J "${N}-bad" -p cpu -- "exit 3") &&
	run=$(dispatch submit -H box1 -J "${N}-run" -- "sleep 600") &&
	echo "$ok $bad $run" >ids &&
	dispatch wait --interval 1 "$ok" >/dev/null &&
	test_expect_code 1 dispatch wait --interval 1 "$bad" >/dev/null
'
read -r ok bad run <ids 2>/dev/null

test_expect_success 'jobs: newest first, the states asked live' '
	dispatch jobs >out &&
	test "$(wc -l <out)" = 4 &&
	test_grep "^JOB  *HOST  *NAME  *SUBMITTED  *COMMIT  *STATE$" out &&
	sed -n 2p out | grep "^${run%@box1}  *box1  *${N}-run  .*  RUNNING$" &&
	sed -n 3p out | grep "^${bad%@hpc}  *hpc  *${N}-bad  .*  FAILED$" &&
	sed -n 4p out | grep "^${ok%@hpc}  *hpc  *${N}-ok  .*  COMPLETED$"
'

test_expect_success '--json: the fields, live states' '
	dispatch --json jobs >j.json &&
	test "$(jget j.json "len(d[\"jobs\"])")" = 3 &&
	jget j.json "\"\\n\".join(\" \".join(str(j[k]) for k in (\"job\", \"type\", \"state\", \"live\", \"ended\")) for j in d[\"jobs\"])" >got &&
	printf "%s\n" "$run plain RUNNING True False" "$bad slurm FAILED False True" "$ok slurm COMPLETED False True" >want &&
	test_cmp want got &&
	test "$(jget j.json "d[\"jobs\"][1][\"name\"], d[\"jobs\"][1][\"cluster\"], d[\"jobs\"][1][\"commit\"], d[\"jobs\"][1][\"dirty\"]")" = "${N}-bad testbed None False"
'

# The first listing stored the hpc jobs' ends: with an ssh config that reaches no
# host, listing them asks nothing and succeeds; the running job still needs its host.
test_expect_success 'ended jobs are stored and never asked about again' '
	dispatch -F /dev/null jobs -H hpc >out 2>err &&
	test_must_be_empty err &&
	test_grep "FAILED$" out && test_grep "COMPLETED$" out &&
	test_expect_code 255 dispatch -F /dev/null jobs >out 2>err &&
	test_grep "box1" err && test_grep "last knew" err &&
	test_grep "  submitted$" out && test_grep "COMPLETED$" out
'

test_expect_success '--no-refresh shows the ledger: ends stored, the running job as submitted' '
	dispatch -F /dev/null --json jobs --no-refresh >n.json &&
	test "$(jget n.json "*[j[\"state\"] for j in d[\"jobs\"]]")" = "submitted FAILED COMPLETED" &&
	test "$(jget n.json "*[j[\"live\"] for j in d[\"jobs\"]]")" = "False False False"
'

test_expect_success 'filters: --host, --name, --state, -n, --since' '
	dispatch --json jobs -H box1 >f.json && test "$(jget f.json "*[j[\"job\"] for j in d[\"jobs\"]]")" = "$run" &&
	dispatch --json jobs --name "${N}-[ob]*" >f.json &&
	test "$(jget f.json "*[j[\"job\"] for j in d[\"jobs\"]]")" = "$bad $ok" &&
	dispatch --json jobs --state failed,completed -n 1 >f.json &&
	test "$(jget f.json "*[j[\"job\"] for j in d[\"jobs\"]]")" = "$bad" &&
	dispatch --json jobs --state RUNNING >f.json &&
	test "$(jget f.json "*[j[\"job\"] for j in d[\"jobs\"]]")" = "$run" &&
	dispatch --json jobs -n 2 >f.json && test "$(jget f.json "len(d[\"jobs\"])")" = 2 &&
	dispatch --json jobs --since 1d >f.json && test "$(jget f.json "len(d[\"jobs\"])")" = 3 &&
	dispatch jobs --since "$(date -d tomorrow +%Y-%m-%d)" >out && test_must_be_empty out
'

test_expect_success 'two listings at once on one ledger both succeed' '
	{ dispatch jobs >a.out 2>a.err; echo $? >a.rc; } &
	{ dispatch jobs >b.out 2>b.err; echo $? >b.rc; } &
	wait &&
	test "$(cat a.rc) $(cat b.rc)" = "0 0" &&
	test_cmp a.out b.out
'

# A relay in front of hpc and box1 that holds every connection until both have one:
# status must ask its hosts at once (asked in turn, hpc would wait there until the
# gate shuts, 10 s later, and fail).
gate_config() {
	hp=$(ssh -G -F "$DISPATCH_SSH_CONFIG" hpc | sed -n "s/^port //p") &&
	bp=$(ssh -G -F "$DISPATCH_SSH_CONFIG" box1 | sed -n "s/^port //p") &&
	{ python3 "$TEST_SRCDIR/tests/cli/lib-gate-relay.py" ports 10 120 "127.0.0.1:$hp" \
		"127.0.0.1:$bp" >/dev/null 2>gate.log & } &&
	echo $! >gate.pid &&
	for i in $(seq 50); do test -s ports && break; sleep 0.1; done &&
	read -r gh gb <ports &&
	printf "Host hpc\n\tPort %s\n\tHostKeyAlias [127.0.0.1]:%s\nHost box1\n\tPort %s\n\tHostKeyAlias [127.0.0.1]:%s\n" \
		"$gh" "$hp" "$gb" "$bp" >gate.cfg &&
	cat "$DISPATCH_SSH_CONFIG" >>gate.cfg
}

test_expect_success 'status asks its hosts at once (a gate opens only for both)' '
	gate_config &&
	{ dispatch -F gate.cfg status "$ok" "$run" >out 2>err; echo $? >rc; } &&
	kill "$(cat gate.pid)" && test "$(cat rc)" = 0 &&
	test_grep "^gate: open" gate.log &&
	test_grep "^${ok%@hpc}@hpc  *COMPLETED" out &&
	test_grep "^${run%@box1}@box1  *RUNNING" out
'

test_expect_success 'jobs asks its hosts at once too (a job on hpc that may change)' '
	hold=$(dispatch submit -H hpc -J "${N}-hold" -p cpu -- "sleep 600") &&
	rm -f ports && gate_config &&
	{ dispatch -F gate.cfg jobs >out 2>err; echo $? >rc; } &&
	kill "$(cat gate.pid)" && dispatch cancel "$hold" >/dev/null &&
	{ dispatch wait --interval 1 "$hold" >/dev/null 2>&1 || :; } &&
	dispatch jobs -H hpc >/dev/null &&
	test "$(cat rc)" = 0 && test_grep "^gate: open" gate.log &&
	test_grep "^${run%@box1}  *box1 .* RUNNING$" out &&
	test_grep "^${hold%@hpc}  *hpc .* \(PENDING\|RUNNING\)$" out
'

test_expect_success 'a cancelled plain job: CANCELLED, stored' '
	dispatch cancel "$run" >/dev/null &&
	dispatch jobs -H box1 >out && test_grep "CANCELLED$" out &&
	dispatch -F /dev/null jobs >out && test "$(grep -c "CANCELLED$\|FAILED$\|COMPLETED$" out)" = 4
'

test_done
