#!/bin/bash
# t7300: dispatch queue on the testbed cluster (host hpc): the table's columns and
# --json's fields for held jobs named 'a b|c' and with '|' and a newline that
# imitates a whole row (both squeue --json and the '|' format, forced with
# DISPATCH_QUEUE_FORMAT), a running job's node list, the filters -u, --me, -p, -t
# against what each job is, -H with two hosts (two aliases of the login node, each
# reached through a counting ProxyCommand: one connection per host), a host that is
# down next to one that is up, and usage errors (exit 2).
# Jobs are held (they take no CPU) and cancelled at the end; other tests share the
# cluster, so every check looks only at this file's jobs or at properties of all.
. "$(dirname "$0")/lib.sh"

testbed_up
command -v socat >/dev/null || fail_rest "no socat for the counting ProxyCommand (tests/install-deps installs it)"
export DISPATCH_STATE_DIR="$TRASH/state"
TBUSER=$DISPATCH_TESTBED_USER
tag=jq$$
ids=
cleanup() {
	[ -n "$ids" ] && "$DISPATCH" run -H hpc -- scancel $ids >/dev/null 2>&1
	[ -n "${rootid:-}" ] && scancel "$rootid" >/dev/null 2>&1
	rm -rf "$TRASH"
}
trap cleanup EXIT

# sbatch as the test user through dispatch run; prints the job id
sub() {
	dispatch run -H hpc -- sbatch --parsable "$@"
}
q() { python3 "$TEST_SRCDIR/tests/cli/lib-queue.py" "$@"; }

NLNAME="$tag nl
999|cpu|root|RUNNING|0:01|1|node1|None|forged"

test_expect_success 'setup: held jobs with awkward names, one running, one of root' '
	a=$(sub -p cpu --hold -J "'"'"'$tag a b|c'"'"'" --wrap true) &&
	b=$(sub -p gpu --hold -J "'"'"'$tag|two'"'"'" --wrap true) &&
	c=$(dispatch run -H hpc -- "SBATCH_JOB_NAME=\"\$(printf '"'"'%s\n%s'"'"' '"'"'$tag nl'"'"' '"'"'999|cpu|root|RUNNING|0:01|1|node1|None|forged'"'"')\" sbatch --parsable -p cpu --hold --wrap true") &&
	r=$(sub -p cpu -J "$tag-run" --wrap "\"sleep 100\"") &&
	echo "$a $b $c $r" >ids && echo "$a" >a && echo "$b" >b && echo "$c" >c && echo "$r" >r &&
	sbatch --parsable -p cpu --hold -J "$tag-root" --wrap true >rootid &&
	for i in $(seq 1 120); do
		dispatch --json queue -H hpc -t R >run.json &&
		q has run.json "$r@hpc" && break
		sleep 1
	done &&
	q has run.json "$r@hpc"
'
ids=$(cat "$TRASH/ids" 2>/dev/null)
rootid=$(cat "$TRASH/rootid" 2>/dev/null)
a=$(cat "$TRASH/a" 2>/dev/null) b=$(cat "$TRASH/b" 2>/dev/null)
c=$(cat "$TRASH/c" 2>/dev/null) r=$(cat "$TRASH/r" 2>/dev/null)

test_expect_success 'the table: its columns, a held job and a running one' '
	dispatch queue -H hpc >out &&
	head -1 out | tr -s " " >head &&
	echo "JOBID PARTITION NAME USER STATE ELAPSED NODES NODELIST(REASON)" >want &&
	test_cmp want head &&
	test_grep -E "^$a@hpc +cpu +$tag a b\|c +$TBUSER +PENDING +0:00 +1 +\(JobHeldUser\) release it with: scontrol release $a$" out &&
	test_grep -E "^$b@hpc +gpu +$tag\|two +$TBUSER +PENDING +0:00 +1 +\(JobHeldUser\) release it with: scontrol release $b$" out &&
	test_grep -E "^$r@hpc +cpu +$tag-run +$TBUSER +RUNNING +[0-9]+:[0-9][0-9] +1 +node[12]$" out
'

test_expect_success 'the table shows a newline in a name escaped, on one line' '
	dispatch queue -H hpc >out &&
	test_grep -E "^$c@hpc +cpu +$tag nl\\\\n999\|cpu\|root\|RUNNING" out &&
	! grep "^999" out
'

for fmt in json text; do
	test_expect_success "--json ($fmt format): every field, names whole, no forged row" '
		DISPATCH_QUEUE_FORMAT='$fmt' dispatch --json queue -H hpc -t all >q.json &&
		q host q.json hpc format='$fmt' slurm_version=$TB_SLURM_VERSION ok=True error=None &&
		q job q.json "$a@hpc" id="$a" host=hpc partition=cpu "name=$tag a b|c" user=$TBUSER \
			state=PENDING elapsed=0:00 node_count=1 nodes= reason=JobHeldUser &&
		q job q.json "$b@hpc" partition=gpu "name=$tag|two" &&
		q job q.json "$c@hpc" "name=$NLNAME" &&
		q job q.json "$r@hpc" state=RUNNING reason=None node_count=1 &&
		q nodes q.json "$r@hpc" &&
		! q has q.json 999@hpc
	'
done

test_expect_success '-u, --me: only those users'"'"' jobs' '
	dispatch --json queue -H hpc -u root >q.json &&
	q all q.json user=root && q has q.json "$rootid@hpc" && ! q has q.json "$a@hpc" &&
	dispatch --json queue -H hpc --me >q.json &&
	q all q.json user=$TBUSER && q has q.json "$a@hpc" && ! q has q.json "$rootid@hpc" &&
	dispatch --json queue -H hpc -u "root,$TBUSER" >q.json &&
	q has q.json "$a@hpc" && q has q.json "$rootid@hpc"
'

test_expect_success '-p, -t: only those partitions and states' '
	dispatch --json queue -H hpc -p gpu >q.json &&
	q all q.json partition=gpu && q has q.json "$b@hpc" && ! q has q.json "$a@hpc" &&
	dispatch --json queue -H hpc -t pd >q.json &&
	q all q.json state=PENDING && q has q.json "$a@hpc" && ! q has q.json "$r@hpc" &&
	dispatch --json queue -H hpc -t RUNNING,cd -p cpu >q.json &&
	q all q.json partition=cpu && q states q.json RUNNING COMPLETED && q has q.json "$r@hpc" &&
	! q has q.json "$a@hpc" &&
	dispatch --json queue -H hpc >q.json && q active q.json
'

test_expect_success '-H with two hosts: one connection each, every job under each host' '
	port=$(awk "/^Host hpc\$/ {h=1} h && \$1 == \"Port\" {print \$2; exit}" "$DISPATCH_SSH_CONFIG") &&
	for h in hpc1 hpc2; do
		sed -n "/^Host hpc\$/,/^\$/p" "$DISPATCH_SSH_CONFIG" | sed "s/^Host hpc\$/Host $h/" &&
		echo "	HostKeyAlias [127.0.0.1]:$port" &&
		echo "	ProxyCommand sh -c '"'"'echo %n >>$TRASH/connections; exec socat - TCP:%h:%p'"'"'" &&
		echo
	done >two.conf &&
	cat "$DISPATCH_SSH_CONFIG" >>two.conf &&
	: >connections &&
	dispatch -F two.conf --json queue -H "hpc[1-2]" --me >q.json &&
	sort connections >got && printf "hpc1\nhpc2\n" >want && test_cmp want got &&
	q host q.json hpc1 ok=True && q host q.json hpc2 ok=True &&
	q job q.json "$a@hpc1" "name=$tag a b|c" && q job q.json "$a@hpc2" "name=$tag a b|c" &&
	dispatch -F two.conf queue -H hpc1,hpc2 --me >out &&
	test_grep -E "^$a@hpc1 " out && test_grep -E "^$a@hpc2 " out
'

test_expect_success 'a host that is down: its error, the other host'"'"'s jobs, exit 255' '
	test_expect_code 255 dispatch --json queue -H down1,hpc --me >q.json 2>err &&
	test_grep "down1" err &&
	q host q.json down1 ok=False && q host q.json hpc ok=True && q has q.json "$a@hpc"
'

test_expect_success 'usage errors: bad -t state, --me with -u (exit 2)' '
	test_expect_code 2 dispatch queue -H hpc -t BOGUS 2>err && test_grep "unknown job state '"'"'BOGUS'"'"'" err &&
	test_expect_code 2 dispatch queue -H hpc --me -u root 2>err && test_grep "cannot go together" err
'

test_done
