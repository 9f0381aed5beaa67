#!/bin/bash
# t7310: dispatch logs on the testbed (SLURM host hpc, plain host box1): a finished
# SLURM job's output and --stderr (both files, as written); a job sbatch'ed directly
# (not in the ledger), found through scontrol with its -o pattern filled in; -f on a
# job that prints a line a second: the first line arrives before the job writes its
# last one (arrival stamped here, writing stamped by the job: one machine, one clock),
# and -f returns by itself once the job ended, with the whole output; the same on a
# plain host; unknown jobs exit 4 with a message. Uses the default testbed instance.
. "$(dirname "$0")/lib.sh"

testbed_up
export DISPATCH_STATE_DIR="$TRASH/state"
LOGDIR=$DISPATCH_TESTBED_DIR/cluster/log
tag=jl$$

jfield() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }
# slurm_state ID: the job's state as squeue (-t all) or else sacct has it
slurm_state() {
	dispatch run -H hpc -- "s=\$(squeue -h -t all -j $1 -o %T 2>/dev/null); [ -n \"\$s\" ] || s=\$(sacct -n -X -P -j $1 -o State 2>/dev/null); echo \$s"
}
# wait_end ID: until SLURM has the job in a final state (bounded: 120 s); prints it
wait_end() {
	local i s
	for i in $(seq 1 240); do
		s=$(slurm_state "$1") || return 1
		case $s in COMPLETED | FAILED | CANCELLED* | TIMEOUT | OUT_OF_MEMORY | NODE_FAIL) echo "$s"; return 0 ;; esac
		sleep 0.5
	done
	echo "job $1 did not end" >&2
	return 1
}
# stamp: each line of stdin with the time it arrived here
stamp() {
	while IFS= read -r l; do printf '%s %s\n' "$(date +%s.%N)" "$l"; done
}
# check_follow STAMPED N WORD: N lines "WORD i WRITTEN" in order, the first one seen
# before the job wrote the last one
check_follow() {
	cut -d" " -f2- "$1" >lines &&
	test "$(wc -l <lines)" = "$2" &&
	test "$(cut -d" " -f1-2 lines | tr "\n" " ")" = "$(for i in $(seq 1 "$2"); do printf "%s %s " "$3" "$i"; done)" &&
	first_seen=$(head -1 "$1" | cut -d" " -f1) &&
	last_written=$(tail -1 "$1" | cut -d" " -f4) &&
	echo "first line seen at $first_seen, last written at $last_written" &&
	python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) < float(sys.argv[2]) else 1)" "$first_seen" "$last_written"
}

test_expect_success 'a finished SLURM job: its output, and --stderr its error file' '
	dispatch --json submit -H hpc -J "$tag-done" -p cpu --error "$LOGDIR/$tag-%j.err" -- \
		"echo out one; echo err one >&2; echo out two" >sub.json &&
	job=$(jfield sub.json job) && test "$(wait_end "$(jfield sub.json id)")" = COMPLETED &&
	dispatch logs "$job" >out &&
	printf "out one\nout two\n" >want && test_cmp want out &&
	test_cmp "$(jfield sub.json log)" out &&
	dispatch logs --stderr "$job" >err &&
	test_grep -x "err one" err &&
	test_cmp "$LOGDIR/$tag-$(jfield sub.json id).err" err &&
	dispatch logs -H hpc "$(jfield sub.json id)" >out2 && test_cmp want out2
'

test_expect_success 'a job dispatch did not submit: found through scontrol, pattern filled in' '
	id=$(dispatch run -H hpc -- sbatch --parsable -p cpu -J "'"'"'$tag raw'"'"'" \
		-o "'"'"'$LOGDIR/$tag dir %x-%j.out'"'"'" --wrap "'"'"'echo raw output; echo raw err >&2'"'"'") &&
	case $id in [0-9]*) ;; *) false ;; esac &&
	test "$(wait_end "$id")" = COMPLETED &&
	dispatch logs "$id@hpc" >out &&
	test_cmp "$LOGDIR/$tag dir $tag raw-$id.out" out &&
	test_grep -x "raw output" out && test_grep -x "raw err" out &&
	dispatch logs -H hpc --stderr "$id" >err && test_cmp out err &&
	test_expect_code 4 dispatch logs "$id" 2>msg &&
	test_grep "name its host" msg
'

test_expect_success 'logs -f streams a SLURM job that prints every second, returns when it ends' '
	dispatch --json submit -H hpc -J "$tag-tick" -p cpu -- \
		"for i in 1 2 3 4 5 6; do echo \"tick \$i \$(date +%s.%N)\"; sleep 1; done" >sub.json &&
	job=$(jfield sub.json job) &&
	{ timeout 150 "$DISPATCH" logs -f "$job"; echo $? >rc; } | stamp >stamped &&
	cat stamped && test "$(cat rc)" = 0 &&
	check_follow stamped 6 tick &&
	cut -d" " -f2- stamped >lines && test_cmp "$(jfield sub.json log)" lines &&
	test "$(slurm_state "$(jfield sub.json id)")" = COMPLETED
'

test_expect_success 'logs -f on a job that already ended prints it all and returns' '
	job=$(jfield sub.json job) &&
	timeout 60 "$DISPATCH" logs -f "$job" >out &&
	test_cmp "$(jfield sub.json log)" out
'

test_expect_success 'a plain-host job: logs -f streams it until it ends, then logs prints it' '
	dispatch --json submit -H box1 -- \
		"for i in 1 2 3 4 5; do echo \"tock \$i \$(date +%s.%N)\"; sleep 1; done" >sub.json &&
	job=$(jfield sub.json job) &&
	{ timeout 60 "$DISPATCH" logs -f "$job"; echo $? >rc; } | stamp >stamped &&
	cat stamped && test "$(cat rc)" = 0 &&
	check_follow stamped 5 tock &&
	dispatch logs "$job" >out &&
	cut -d" " -f2- stamped >lines && test_cmp lines out &&
	test_expect_code 4 dispatch logs --stderr "$job" 2>err &&
	test_grep "plain host" err
'

test_expect_success 'unknown jobs: exit 4 and what is missing' '
	test_expect_code 4 dispatch logs 999999@hpc 2>err &&
	test_grep "999999@hpc" err && test_grep "SLURM on '"'"'hpc'"'"'" err &&
	test_expect_code 4 dispatch logs -f 999999@hpc 2>err &&
	test_grep "999999@hpc" err &&
	test_expect_code 4 dispatch logs 999999 2>err &&
	test_grep "unknown job '"'"'999999'"'"'" err &&
	test_expect_code 4 dispatch logs dispatch-20000101-000000-0000@box1 2>err &&
	test_grep "dispatch did not submit it" err
'

test_done
