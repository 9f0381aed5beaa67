#!/bin/bash
# t5800: users whose login shell is not bash (tcsh, fish, zsh, dash, mksh: the test
# bed's TB_SHELL_USERS, on its real sshd hosts and SLURM login node). sshd hands every
# command to `$SHELL -c`; for each user, side by side: dispatch run prints what
# OpenSSH's ssh prints for the same commands (the user's own shell reads them) and
# has the login environment; a plain-host job is submitted, waited for, its log read,
# another cancelled; cp both ways (a file, and a new tree as tar streams); a SLURM job's bootstrap runs (COMPLETED, its output
# in the log) with the user's login environment; hosts show and discover; for tcsh
# and fish also dispatch shell and top in a running job, and run, run --timeout,
# submit, wait and logs through an OpenSSH master. Each user's login files (csh's
# ~/.login, fish's config when it is a login shell, zsh's ~/.zprofile, ~/.profile)
# set DT_LOGIN.
# Waits are bounded (timeout, dispatch wait --timeout); nothing is timed.
. "$(dirname "$0")/lib.sh"

testbed_up
SHELLS="tcsh fish zsh dash mksh"
P=${DISPATCH_TESTBED_PREFIX:-dtb}
# The users' cluster directories: in their homes, one per test bed instance and run.
D=dt-$P-$$

home_of() { getent passwd "dispatch-$1" | cut -d: -f6; }
for sh in $SHELLS; do
	id -u "dispatch-$sh" >/dev/null 2>&1 ||
		fail_rest "no user dispatch-$sh: the test bed makes it (tests/testbed/up, TB_SHELL_USERS)"
done

cleanup() {
	local sh h
	for sh in $SHELLS; do
		h=$(home_of "$sh")
		[ -z "$h" ] || rm -rf "${h:?}/$D"
	done
	if [ -f "$TRASH/.pids" ]; then
		while read -r p; do kill "$p" 2>/dev/null; done <"$TRASH/.pids"
	fi
	rm -rf "$TRASH"
}
trap cleanup EXIT

# put USER FILE: stdin into USER's FILE (under its home), owned by USER; a rename, as
# other runs of this file may read it meanwhile.
put() {
	local f
	f="$(home_of "$1")/$2"
	mkdir -p "$(dirname "$f")"
	chown "dispatch-$1:" "$(dirname "$f")"
	cat >"$f.$$" && chown "dispatch-$1:" "$f.$$" && mv -f "$f.$$" "$f"
}
echo 'setenv DT_LOGIN tcsh-login' | put tcsh .login
printf 'if status is-login\n\tset -gx DT_LOGIN fish-login\nend\n' | put fish .config/fish/config.fish
echo 'export DT_LOGIN=zsh-login' | put zsh .zprofile
echo 'DT_LOGIN=dash-login; export DT_LOGIN' | put dash .profile
echo 'DT_LOGIN=mksh-login; export DT_LOGIN' | put mksh .profile

# The inventory: per user a plain host (box1) and a SLURM host (the login node hpc).
{
	printf 'clusters:\n'
	for sh in $SHELLS; do
		h="$(home_of "$sh")/$D"
		printf '  c-%s:\n    root: %s/root\n    work: %s/work\n    log: %s/log\n' "$sh" "$h" "$h" "$h"
	done
	printf 'hosts:\n'
	for sh in $SHELLS; do
		printf '  b-%s:\n    ssh: dispatch-%s@box1\n    cluster: c-%s\n    type: plain\n    chips: {}\n' "$sh" "$sh" "$sh"
		# a lock directory of the user's own: /tmp/dispatch-gpus, made first by
		# another user of the box (the test bed's), is refused (dispatch-submit(1))
		printf '    gpu_lock_dir: %s/gpus\n' "$(home_of "$sh")/$D"
		printf '  h-%s:\n    ssh: dispatch-%s@hpc\n    cluster: c-%s\n    type: slurm\n' "$sh" "$sh" "$sh"
		printf '    partitions: [{name: gpu, default: true}, cpu]\n    cpu_partitions: [cpu]\n'
		printf '    chips:\n      a100-sxm4-80gb: 4\n    mem: 1000M\n'
	done
} >"$TRASH/inventory.yaml"
export DISPATCH_INVENTORY=$TRASH/inventory.yaml

# Commands that each shell reads its own way, through ssh and through dispatch run.
# (No login file here prints anything, so a login shell prints what ssh's does.)
CMDS=(
	'echo "a  b" '"'"'c  d'"'"' "it'"'"'s"'
	'echo one two three | wc -w'
	'exit 3'
	'echo $nosuchvar_t5800'
)

# Through an OpenSSH master (tcsh and fish): the config dispatch reads names the
# master of each user@host; masters are stopped at exit by pid.
mkdir -m 700 "$TRASH/cm"
{ printf 'Host *\n  ControlPath %s/cm/%%r@%%n\n\n' "$TRASH"; cat "$DISPATCH_SSH_CONFIG"; } >"$TRASH/ssh_config"
track() { echo "$1" >>"$TRASH/.pids"; }
mux_checks() {
	local sh=$1 u=dispatch-$1 pid job
	ssh -F "$DISPATCH_SSH_CONFIG" -fN -o ControlMaster=yes -o ControlPath="$TRASH/cm/$u@box1" \
		-o ControlPersist=600 "$u@box1" </dev/null
	pid=$(ssh -F "$DISPATCH_SSH_CONFIG" -o ControlPath="$TRASH/cm/$u@box1" -O check "$u@box1" 2>&1 |
		sed -n "s/.*(pid=\([0-9]*\)).*/\1/p")
	test -n "$pid"
	track "$pid"
	export DISPATCH_SSH_CONFIG=$TRASH/ssh_config
	timeout 60 "$DISPATCH" -v run -H "b-$sh" -- 'echo $DT_LOGIN' >out 2>err </dev/null
	grep "via master" err
	echo "$sh-login" >want
	diff want out
	rc=0
	timeout 60 "$DISPATCH" run --timeout 30 -H "b-$sh" -- "exit 3" </dev/null || rc=$?
	test "$rc" = 3
	job=$(timeout 120 "$DISPATCH" submit -H "b-$sh" -J "mx-$sh" -- 'echo "mux-$DT_LOGIN"')
	timeout 120 "$DISPATCH" wait --timeout 100 "$job"
	timeout 60 "$DISPATCH" logs "$job" >log
	grep -x "mux-$sh-login" log
}

# per_user SH: the whole sequence for dispatch-SH; the first failing step fails it.
per_user() {
	local sh=$1 u=dispatch-$1 i=0 c job rc
	set -e
	mkdir -p "$sh" && cd "$sh"
	for c in "${CMDS[@]}"; do
		i=$((i + 1))
		rc=0
		timeout 60 ssh -F "$DISPATCH_SSH_CONFIG" -l "$u" box1 "$c" >ssh.out 2>ssh.err </dev/null || rc=$?
		echo "[$rc]" >>ssh.out
		rc=0
		timeout 60 "$DISPATCH" run -H "$u@box1" -- "$c" >run.out 2>run.err </dev/null || rc=$?
		echo "[$rc]" >>run.out
		echo "cmd $i: $c"
		diff ssh.out run.out
		diff ssh.err run.err
	done
	echo "run: login environment"
	echo "$sh-login" >want
	timeout 60 "$DISPATCH" run -H "b-$sh" -- 'echo $DT_LOGIN' >out </dev/null
	diff want out

	echo "plain: submit, wait, logs"
	job=$(timeout 120 "$DISPATCH" submit -H "b-$sh" -J "sh-$sh" -- \
		'echo "job-$DT_LOGIN" "it'"'"'s"; echo to-err >&2')
	timeout 120 "$DISPATCH" wait --timeout 100 "$job"
	timeout 60 "$DISPATCH" logs "$job" >log
	grep -x "job-$sh-login it's" log
	timeout 60 "$DISPATCH" status "$job" >st
	grep " COMPLETED " st

	echo "plain: cancel"
	job=$(timeout 120 "$DISPATCH" submit -H "b-$sh" -J "sl-$sh" -- 'sleep 300')
	case $sh in
	tcsh | fish)
		echo "plain: shell and top in the running job"
		timeout 60 "$DISPATCH" shell "$job" -- sh -c 'echo "in-$DISPATCH_JOB_ID"' </dev/null >out
		echo "in-${job%@*}" >want
		diff want out
		timeout 60 "$DISPATCH" top -n 1 --procs "$job" >top 2>&1
		grep " sleep$" top
		;;
	esac
	timeout 60 "$DISPATCH" cancel "$job"
	rc=0
	timeout 120 "$DISPATCH" wait --timeout 100 "$job" || rc=$?
	test "$rc" != 0
	timeout 60 "$DISPATCH" status "$job" >st
	grep " CANCELLED " st

	echo "cp: both ways"
	printf 'x%.0s' $(seq 1 5000) >up.txt
	timeout 60 "$DISPATCH" cp up.txt "b-$sh:$D/up.txt"
	timeout 60 "$DISPATCH" cp "b-$sh:$D/up.txt" down.txt
	cmp up.txt down.txt
	echo "cp -r: a new tree both ways, as tar streams"
	rm -rf tree.up tree.down && mkdir -p tree.up/sub && cp up.txt tree.up/sub/a.txt
	timeout 60 "$DISPATCH" cp -r tree.up "b-$sh:$D/tree"
	timeout 60 "$DISPATCH" cp -r "b-$sh:$D/tree" tree.down
	cmp up.txt tree.down/sub/a.txt

	echo "hosts show, discover"
	timeout 60 "$DISPATCH" hosts show "h-$sh" >hs
	grep "^node1 " hs
	timeout 60 "$DISPATCH" hosts discover "$u@hpc" >hd
	grep "type: slurm" hd

	echo "slurm: submit, wait, logs"
	job=$(timeout 120 "$DISPATCH" submit -H "h-$sh" -J "sb-$sh" -- 'echo "slurm-$DT_LOGIN"')
	timeout 200 "$DISPATCH" wait --timeout 180 "$job"
	timeout 60 "$DISPATCH" status "$job" >st
	grep " COMPLETED " st
	timeout 60 "$DISPATCH" logs "$job" >log
	grep -x "slurm-$sh-login" log
	case $sh in
	tcsh | fish)
		echo "through an OpenSSH master: run, run --timeout, submit, wait, logs"
		mux_checks "$sh"
		;;
	esac
	echo "done"
}

declare -A pids
for sh in $SHELLS; do
	(per_user "$sh") >"$TRASH/$sh.log" 2>&1 &
	pids[$sh]=$!
done
for sh in $SHELLS; do
	rc=0
	wait "${pids[$sh]}" || rc=$?
	echo "$rc" >"$TRASH/$sh.rc"
done
for sh in $SHELLS; do
	test_expect_success "$sh: run as ssh, a plain job (wait, logs, cancel), cp, hosts, a SLURM job" '
		cat "$TRASH/$sh.log" &&
		test "$(cat "$TRASH/$sh.rc")" = 0 && test "$(tail -n1 "$TRASH/$sh.log")" = done
	'
done

test_done
