#!/bin/bash
# t5720: the SLURM login node hpc through the user's OpenSSH master (started here
# with `ssh -fN -o ControlMaster=yes`): submit-packed with a snapshot over 1 MiB
# (uploaded over SFTP through the master), logs -f until the job ends, queue and
# cancel, and no login of dispatch's own (-v says "via master", never "logged in": hpc's
# sshd log cannot tell, other runs share this instance); then the master killed while wait runs: the
# wait retries, goes on directly, and ends with the job's real state and exit status.
# Uses the default testbed instance; nothing is timed, waits are bounded.
. "$(dirname "$0")/lib.sh"

testbed_up
export DISPATCH_STATE_DIR="$TRASH/state"
TB=$DISPATCH_TESTBED_DIR
tag=mx$$

track() { echo "$1" >>"$TRASH/.pids"; }
cleanup() {
	local p
	if [ -f "$TRASH/.pids" ]; then
		while read -r p; do kill "$p" 2>/dev/null; done <"$TRASH/.pids"
	fi
	rm -rf "$TRASH" "$TB/cluster/work/t5720-gate-$$"
}
trap cleanup EXIT

mkdir -m 700 "$TRASH/cm"
BASECFG=$DISPATCH_SSH_CONFIG
{ printf 'Host hpc\n  ControlPath %s/cm/%%n\n\n' "$TRASH"; cat "$BASECFG"; } >"$TRASH/ssh_config"
export DISPATCH_SSH_CONFIG=$TRASH/ssh_config

start_master() {
	local host=$1 sock=$TRASH/cm/$1 pid
	ssh -F "$BASECFG" -fN -o ControlMaster=yes -o ControlPath="$sock" \
		-o ControlPersist=600 "$host" </dev/null || return 1
	pid=$(ssh -F "$BASECFG" -o ControlPath="$sock" -O check "$host" 2>&1 |
		sed -n 's/.*(pid=\([0-9]*\)).*/\1/p')
	[ -n "$pid" ] || return 1
	track "$pid"
	echo "$pid"
}
# through_master FILE: -v output of a command that went through the master only
through_master() { test_grep "hpc: via master" "$1" && ! grep "logged in" "$1"; }
jfield() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }

mh=$(start_master hpc) || fail_rest "cannot start an ssh master on hpc"

test_expect_success 'submit-packed to hpc through the master, logs -f until it ends; no login of its own' '
	git init -q repo &&
	cat >repo/run.sh <<-\RUN &&
	for i in 1 2 3 4; do echo "tick $i"; sleep 1; done
	RUN
	(cd repo && head -c 2500000 /dev/urandom >big.bin &&
		git add -A && git -c user.name=t -c user.email=t@t commit -q -m one) &&
	sum=$(sha256sum <repo/big.bin | cut -d" " -f1) &&
	dispatch -v --json submit-packed -H hpc -p cpu -J "$tag-packed" --repo repo -- \
		"sha256sum <big.bin; sh run.sh" >sub.json 2>err &&
	test_grep "hpc: via master $TRASH/cm/hpc (pid $mh)" err &&
	job=$(jfield sub.json job) &&
	through_master err &&
	timeout 150 "$DISPATCH" -v logs -f "$job" >out 2>err &&
	through_master err &&
	test_grep "^$sum " out && test_grep -x "tick 4" out &&
	dispatch -v status "$job" >st 2>err && through_master err && test_grep "COMPLETED" st
'

test_expect_success 'queue and cancel through the master' '
	job=$(dispatch -v submit -H hpc -p cpu -J "$tag-sleep" -- "sleep 300" 2>err) &&
	through_master err &&
	dispatch -v queue -H hpc --me >q 2>err && through_master err && test_grep "$tag-sleep" q &&
	dispatch -v cancel "$job" >out 2>err && through_master err && test_grep "cancelled" out
'

test_expect_success 'the master killed during wait: wait goes on directly, FAILED exit 3' '
	gate=$TB/cluster/work/t5720-gate-$$ && rm -f "$gate" &&
	job=$(dispatch submit -H hpc -p cpu -J "$tag-gated" -- \
		"while [ ! -e $gate ]; do sleep 0.5; done; exit 3") &&
	{ "$DISPATCH" --json -v wait --interval 1 --timeout 200 "$job" >w.json 2>w.err & } &&
	wpid=$! && track $wpid &&
	for i in $(seq 100); do grep -q "hpc: via master" w.err && break; sleep 0.1; done &&
	test_grep "hpc: via master" w.err &&
	kill "$mh" &&
	for i in $(seq 100); do kill -0 "$mh" 2>/dev/null || break; sleep 0.1; done &&
	for i in $(seq 300); do grep -q "hpc: direct" w.err && break; sleep 0.1; done &&
	touch "$gate" &&
	rc=0 && { wait $wpid || rc=$?; } &&
	test "$rc" = 1 &&
	test_grep "hpc: direct (not through a master" w.err &&
	python3 - w.json <<-PY
	import json, sys
	d = json.load(open(sys.argv[1]))
	j = d["jobs"][0]
	assert j["state"] == "FAILED", j
	assert j["exit_code"] == 3, j
	PY
'

test_done
