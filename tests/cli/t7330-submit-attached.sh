#!/bin/bash
# t7330: submit --wait and --follow on the testbed (SLURM host hpc, plain host box1):
# --follow streams both nodes' lines of a 2-node job and ends with the job's end;
# --wait exits as wait does (1 for a failed job; --json prints submit's one
# document); on a plain host too. Ctrl-C (SIGINT) once detaches: exit 130, the job
# keeps running; a second one while the first is being handled cancels it. Option
# errors need no testbed. Job names start with ja$$. The binary runs in the
# background itself (not the dispatch function, whose subshell would take the signal).
. "$(dirname "$0")/lib.sh"

jget() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); exec("print(" + sys.argv[2] + ")")' "$@"; }

test_expect_success 'option errors exit 2' '
	test_expect_code 2 dispatch submit -H hpc --wait --dry-run -- true 2>err && test_grep "dry-run" err &&
	test_expect_code 2 dispatch --json submit -H hpc --follow -- true 2>err && test_grep "follow" err
'

testbed_up
export DISPATCH_STATE_DIR="$TRASH/state"
N=ja$$

# until_state JOB STATE: bounded (120 s) wait until status says STATE
until_state() {
	local i
	for i in $(seq 1 240); do
		dispatch status "$1" 2>/dev/null | grep -q " $2 " && return 0
		sleep 0.5
	done
	echo "job $1 never got to $2" >&2
	return 1
}
# until_file FILE PATTERN: bounded (120 s) wait until FILE has a line matching PATTERN
until_file() {
	local i
	for i in $(seq 1 240); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.5
	done
	echo "no '$2' in $1" >&2
	return 1
}

test_expect_success '--follow: both nodes stream, then the end line; exit 0' '
	dispatch submit -H hpc -J "${N}f" -p cpu --nodes 2 --follow -- \
		"for i in 1 2 3; do echo \"\$(hostname) line \$i\"; sleep 1; done" >out 2>err &&
	job=$(head -1 out) &&
	test_grep "^node1 line 3$" out && test_grep "^node2 line 3$" out &&
	test "$(tail -1 out | cut -d" " -f1-4)" = "$job COMPLETED exit 0"
'

test_expect_success '--wait: a failing job exits 1; --json prints only submit'"'"'s document' '
	test_expect_code 1 dispatch submit -H hpc -J "${N}w" -p cpu --wait -- "exit 3" >out &&
	test_grep "FAILED exit 3" out &&
	test_expect_code 1 dispatch --json submit -H hpc -J "${N}j" -p cpu --wait -- "exit 3" >j.json &&
	test -n "$(jget j.json "d[\"job\"]")"
'

test_expect_success '--follow on a plain host' '
	dispatch submit -H box1 -J "${N}p" --follow -- "echo plain one; echo plain two" >out &&
	test_grep "^plain two$" out && tail -1 out | grep " COMPLETED exit 0"
'

test_expect_success 'Ctrl-C once detaches (exit 130); the job keeps running' '
	"$DISPATCH" submit -H hpc -J "${N}d" -p cpu --wait -- "sleep 300" >d.out 2>d.err &
	pid=$! &&
	until_file d.out "@hpc" && job=$(head -1 d.out) &&
	until_state "$job" RUNNING &&
	kill -INT $pid &&
	rc=0 && { wait $pid || rc=$?; } &&
	test "$rc" = 130 &&
	test_grep "detached from job $job" d.err &&
	dispatch status "$job" | grep " RUNNING " &&
	dispatch cancel "$job" >/dev/null
'

test_expect_success 'Ctrl-C twice cancels the job' '
	"$DISPATCH" submit -H hpc -J "${N}c" -p cpu --wait -- "sleep 300" >c.out 2>c.err &
	pid=$! &&
	until_file c.out "@hpc" && job=$(head -1 c.out) &&
	until_state "$job" RUNNING &&
	kill -INT $pid && until_file c.err "detaching" && kill -INT $pid &&
	rc=0 && { wait $pid || rc=$?; } &&
	test "$rc" = 1 &&
	test_grep "cancelled job $job" c.err &&
	test_expect_code 1 dispatch --json wait --interval 1 "$job" >w.json &&
	test "$(jget w.json "d[\"jobs\"][0][\"state\"]")" = CANCELLED
'

test_done
