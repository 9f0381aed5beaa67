#!/bin/bash
# t7500: dispatch shell JOB on the test bed, driven on a real pseudo-terminal
# (tests/cli/pty-drive.py, 33x111 at the start): on hpc a login shell inside a running
# two-node job runs on the compute node (node1; node2 with --node 2) with the job's
# SLURM_JOB_ID; `stty size` there shows the driving terminal's size, and the new
# one after the driver resizes its terminal (SIGWINCH); the shell's exit status
# comes back; -- CMD runs CMD (its words as they are, with and without a terminal);
# on box1 the shell opens in the job's work dir (where its command runs: --chdir);
# pending, ended and unknown jobs, bad --node and --json are refused. Then the same through an OpenSSH master
# (ControlPath), which gets the terminal itself and SIGWINCH relayed, and run -t
# through it starts with the right size.
. "$(dirname "$0")/lib.sh"

testbed_up
TB=$DISPATCH_TESTBED_DIR

# Jobs and masters started here are stopped at exit, each by its id.
cleanup() {
	local j p
	if [ -f "$TRASH/.jobs" ]; then
		while read -r j; do "$DISPATCH" run -H hpc -- scancel "$j" >/dev/null 2>&1; done <"$TRASH/.jobs"
	fi
	if [ -f "$TRASH/.plain" ]; then
		while read -r j; do "$DISPATCH" cancel "$j" >/dev/null 2>&1; done <"$TRASH/.plain"
	fi
	if [ -f "$TRASH/.pids" ]; then
		while read -r p; do kill "$p" 2>/dev/null; done <"$TRASH/.pids"
	fi
	rm -rf "$TRASH" "$TB/cluster/work/t7500 dir"
}
trap cleanup EXIT

# sbatch_job ARGS...: an sbatch'ed job (its id); run_job waits until it runs.
sbatch_job() {
	local id
	id=$(dispatch run -H hpc -- sbatch --parsable -p gpu --mem=100 -t 5 -o /dev/null "$@") || return 1
	id=${id%%;*}
	echo "$id" >>"$TRASH/.jobs"
	echo "$id"
}
run_job() {
	local id s i
	id=$(sbatch_job "$@" --wrap "'sleep 300'") || return 1
	for i in $(seq 180); do
		s=$(dispatch run -H hpc -- squeue -h -j "$id" -o %T) || return 1
		[ "$s" = RUNNING ] && { echo "$id"; return 0; }
		sleep 0.5
	done
	echo "job $id still $s after 90 s" >&2
	return 1
}
# on_tty ARGS... -- CMD...: CMD on a 33x111 pseudo-terminal; transcript in ./tty
on_tty() {
	python3 "$TEST_SRCDIR/tests/cli/pty-drive.py" --timeout 30 --size 33x111 --log tty "$@" 2>drive
}
# The dialogue: what the shell says about itself at the 33x111 start, then a resize
# to 40x132 and the size the shell sees once the window change arrived (it waits
# for it, up to 5 s: `stty size` must come to say 40 132), then exit 3.
PROMPT='[$#] '
SAY='echo "at=$(hostname) job=${SLURM_JOB_ID:-$DISPATCH_JOB_ID} pwd=$PWD size=$(stty size)"\n'
RESIZED='for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25; do [ "$(stty size)" = "40 132" ] && break; sleep 0.2; done; echo "resized=$(stty size)"; exit 3\n'
dialogue() {
	test_expect_code 3 on_tty --expect "$PROMPT" --send "$SAY" --expect 'size=33 111' \
		--resize 40x132 --expect "$PROMPT" --send "$RESIZED" -- "$@"
}

test_expect_success 'setup: a running two-node job' '
	job=$(run_job -N2) && echo "$job" >job
'
job=$(cat job 2>/dev/null)

test_expect_success 'a shell on the first node: its hostname, SLURM_JOB_ID, the terminal size, resized, exit 3' '
	dialogue "$DISPATCH" shell -H hpc "$job" &&
	test_grep "at=node1 job=$job pwd=.* size=33 111" tty &&
	test_grep "resized=40 132" tty &&
	test_grep -x "echo on" drive
'

test_expect_success '--node 2: the second node, by position and by name' '
	dialogue "$DISPATCH" shell -H hpc --node 2 "$job" &&
	test_grep "at=node2 job=$job .*size=33 111" tty &&
	test_grep "resized=40 132" tty &&
	dispatch shell -H hpc --node node2 "$job" -- hostname </dev/null >out &&
	echo node2 >want && test_cmp want out
'

# The words of -- CMD reach the node as they are: spaces, $, quotes, globs.
ARGS_SH='echo "at=$(hostname) job=$SLURM_JOB_ID"; printf "%s|" "$@"; echo; exit 5'
WORDS=("a b" '$HOME' "it's" '*')
WANT_WORDS='a b|$HOME|'"it's"'|*|'
test_expect_success '-- CMD without a terminal: its words as they are, its output, its exit status' '
	test_expect_code 5 dispatch shell -H hpc "$job" -- sh -c "$ARGS_SH" sh "${WORDS[@]}" </dev/null >out &&
	printf "at=node1 job=%s\n%s\n" "$job" "$WANT_WORDS" >want &&
	test_cmp want out &&
	echo hello | dispatch shell -H hpc "$job" -- cat >out &&
	echo hello >want && test_cmp want out
'

test_expect_success '-- CMD on a terminal: it gets a pty of the terminal'"'"'s size' '
	on_tty -- "$DISPATCH" shell -H hpc --node 2 "$job" -- sh -c "echo tty=\$(tty) size=\$(stty size)" &&
	test_grep "tty=/dev/pts/[0-9]* size=33 111" tty
'

test_expect_success 'a pending job: exit 1 with its state; an ended one: exit 1; unknown: 4' '
	pending=$(sbatch_job --begin=now+3600 --wrap true) &&
	test_expect_code 1 dispatch shell -H hpc "$pending" </dev/null 2>err &&
	test_grep "job .$pending. is PENDING (reason: BeginTime): dispatch shell needs a running job" err &&
	ended=$(sbatch_job --wait --wrap true) &&
	test_expect_code 1 dispatch shell -H hpc "$ended" -- true </dev/null 2>err &&
	test_grep "job .$ended. is COMPLETED" err &&
	test_expect_code 4 dispatch shell -H hpc 999999 </dev/null 2>err &&
	test_grep "job .999999. not found on .hpc." err &&
	test_expect_code 4 dispatch shell 424242 </dev/null 2>err
'

test_expect_success 'usage errors: a node the job does not have, --json' '
	test_expect_code 2 dispatch shell -H hpc --node 3 "$job" </dev/null 2>err &&
	test_grep "runs on node\[1-2\]" err &&
	test_expect_code 2 dispatch shell -H hpc --node node7 "$job" </dev/null 2>err &&
	test_expect_code 2 dispatch --json shell -H hpc "$job" </dev/null 2>err &&
	test_grep "a shell is interactive and prints no document" err &&
	test_expect_code 2 dispatch shell -H hpc "$job" hostname </dev/null 2>err &&
	test_grep "a command only after --" err
'

test_expect_success 'box1 (plain host): the shell opens in the job'"'"'s work dir, with its DISPATCH_JOB_ID' '
	dispatch --json submit -H box1 -- sleep 300 >sub.json &&
	pjob=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[\"job\"])" sub.json) &&
	pid=${pjob%@*} && echo "$pjob" >>"$TRASH/.plain" &&
	dialogue "$DISPATCH" shell "$pjob" &&
	test_grep "at=[^ ]* job=$pid pwd=$TB/cluster/work size=33 111" tty &&
	test_grep "resized=40 132" tty &&
	dispatch shell "$pjob" -- pwd </dev/null >out &&
	echo "$TB/cluster/work" >want && test_cmp want out &&
	test_expect_code 2 dispatch shell --node 2 "$pjob" </dev/null 2>err &&
	test_grep "runs on one plain host" err &&
	dispatch cancel "$pjob" >/dev/null
'

test_expect_success 'box1: with --chdir, the shell opens where the command runs' '
	mkdir -p "$TB/cluster/work/t7500 dir" &&
	dispatch --json submit -H box1 --chdir "$TB/cluster/work/t7500 dir" -- sleep 300 >sub.json &&
	pjob=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[\"job\"])" sub.json) &&
	echo "$pjob" >>"$TRASH/.plain" &&
	for i in $(seq 50); do
		dispatch shell "$pjob" -- pwd </dev/null >out &&
		grep -q "t7500 dir" out && break
		sleep 0.2
	done &&
	echo "$TB/cluster/work/t7500 dir" >want && test_cmp want out &&
	dispatch cancel "$pjob" >/dev/null
'

test_expect_success 'box1: an ended job: exit 1 with its state' '
	dispatch --json submit -H box1 -- true >sub.json &&
	pjob=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[\"job\"])" sub.json) &&
	dispatch wait --timeout 60 "$pjob" &&
	test_expect_code 1 dispatch shell "$pjob" </dev/null 2>err &&
	test_grep "is COMPLETED" err
'

# Through a master: hpc's ControlPath names a master started as a user would.
mkdir -m 700 "$TRASH/cm"
BASECFG=$DISPATCH_SSH_CONFIG
{ printf 'Host hpc\n  ControlPath %s/cm/%%n\n\n' "$TRASH"; cat "$BASECFG"; } >"$TRASH/ssh_config"
export DISPATCH_SSH_CONFIG=$TRASH/ssh_config
ssh -F "$BASECFG" -fN -o ControlMaster=yes -o ControlPath="$TRASH/cm/hpc" -o ControlPersist=600 hpc </dev/null ||
	fail_rest "cannot start an ssh master on hpc"
mpid=$(ssh -F "$BASECFG" -o ControlPath="$TRASH/cm/hpc" -O check hpc 2>&1 | sed -n 's/.*(pid=\([0-9]*\)).*/\1/p')
[ -n "$mpid" ] || fail_rest "the master on hpc gave no pid"
echo "$mpid" >>"$TRASH/.pids"

test_expect_success 'through the master: the terminal'"'"'s size, resized (SIGWINCH relayed), exit 3' '
	dialogue "$DISPATCH" -v shell -H hpc --node 2 "$job" &&
	test_grep "hpc: via master" tty &&
	test_grep "at=node2 job=$job .*size=33 111" tty &&
	test_grep "resized=40 132" tty &&
	test_grep -x "echo on" drive
'

test_expect_success 'through the master: run -t starts with the terminal'"'"'s size (not 0x0)' '
	on_tty -- "$DISPATCH" -v run -t -H hpc -- stty size &&
	test_grep "hpc: via master" tty &&
	test_grep "^33 111" tty
'

test_done
