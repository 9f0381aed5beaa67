# Sourced by testbed tests that need the default test bed's SLURM cluster and GPUs
# on plain hosts (t5400, t5410).
#
# tb_up: brings the default instance up (idempotent, shared with other tests; never
# taken down here: the test runner does that) or skips the rest of the file.
#
# fake_gpus BOX GPUS [APPS]: a fake nvidia-smi on one sshd of the test bed, printing
# the fixture files GPUS (--query-gpu) and APPS (--query-compute-apps). There are no
# GPUs here; the rest is real: the SSH session, the login shell, dispatch's remote
# command and its parsing. The test user's home is shared by every host of the test
# bed, so the fake is put on PATH only for sessions of that one sshd: a line in
# ~/.profile adds ~/.fake-nvidia-smi/PORT (PORT from $SSH_CONNECTION) when that
# directory exists. fake_gpus_off BOX removes it (done at exit for every BOX).

skip_rest() {
	echo "ok $((test_count + 1)) # skip $1"
	test_count=$((test_count + 1))
	test_done
	exit $?
}

tb_up() {
	[ "$(id -u)" = 0 ] || skip_rest "not root: the testbed starts daemons and creates network namespaces"
	unshare --net true 2>/dev/null || skip_rest "cannot create network namespaces here"
	local exports
	exports=$(bash "$TEST_SRCDIR/tests/testbed/up" 2>"$TRASH/up.log") ||
		fail_rest "tests/testbed/up failed: $(tail -1 "$TRASH/up.log")"
	eval "$exports"
	TB_HOME=$(getent passwd "$DISPATCH_TESTBED_USER" | cut -d: -f6)
	[ -n "$TB_HOME" ] || skip_rest "no home for $DISPATCH_TESTBED_USER"
}

# The sshd port of a test bed alias, from the generated ssh config.
box_port() {
	awk -v h="$1" '$1 == "Host" { on = ($2 == h) } on && $1 == "Port" { print $2; exit }' \
		"$DISPATCH_SSH_CONFIG"
}

fake_gpus() {
	local port dir
	port=$(box_port "$1")
	[ -n "$port" ] || return 1
	dir=$TB_HOME/.fake-nvidia-smi/$port
	if ! grep -q 'fake-nvidia-smi' "$TB_HOME/.profile" 2>/dev/null; then
		cat >>"$TB_HOME/.profile" <<'PROFILE'
# dispatch tests (tests/cli/lib-testbed-gpu.sh): a fake nvidia-smi for one sshd
if [ -n "$SSH_CONNECTION" ] && [ -d "$HOME/.fake-nvidia-smi/${SSH_CONNECTION##* }" ]; then
	PATH="$HOME/.fake-nvidia-smi/${SSH_CONNECTION##* }:$PATH"
fi
PROFILE
	fi
	mkdir -p "$dir"
	cp "$2" "$dir/gpus"
	if [ -n "${3:-}" ]; then cp "$3" "$dir/apps"; else : >"$dir/apps"; fi
	cat >"$dir/nvidia-smi" <<'FAKE'
#!/bin/sh
# fake nvidia-smi (tests/cli/lib-testbed-gpu.sh): only the two queries dispatch makes
d=$(dirname "$0")
case "$*" in
"--query-gpu=uuid,name,memory.total --format=csv,noheader,nounits") cat "$d/gpus" ;;
"--query-compute-apps=gpu_uuid,used_memory --format=csv,noheader,nounits") cat "$d/apps" ;;
*) echo "fake nvidia-smi: unexpected arguments: $*" >&2; exit 2 ;;
esac
FAKE
	chmod 755 "$TB_HOME/.fake-nvidia-smi" "$dir" "$dir/nvidia-smi"
	chmod 644 "$dir/gpus" "$dir/apps"
	echo "$1" >>"$TRASH/fake-boxes"
}

fake_gpus_off() {
	local port
	port=$(box_port "$1")
	[ -n "$port" ] && rm -rf "${TB_HOME:?}/.fake-nvidia-smi/$port"
}

# At exit: fakes removed, jobs this test submitted cancelled (lists kept in files:
# test bodies run in subshells).
tb_cleanup() {
	local b
	if [ -f "$TRASH/fake-boxes" ]; then
		for b in $(sort -u "$TRASH/fake-boxes"); do fake_gpus_off "$b"; done
	fi
	# shellcheck disable=SC2046
	[ -s "$TRASH/jobs" ] && "$DISPATCH" run -H hpc -- scancel $(cat "$TRASH/jobs") >/dev/null 2>&1
	rm -rf "$TRASH"
}
trap tb_cleanup EXIT

# submit_gpu_job NODE: a job holding NODE's two a100 for up to 120 s; prints its id
# once it runs (fails after 90 s pending: the cluster is shared with other tests).
submit_gpu_job() {
	local id state i
	id=$(dispatch run -H hpc -- sbatch --parsable -p gpu -w "$1" --gres=gpu:a100:2 -t 5 \
		-o /dev/null --wrap "'sleep 120'") || return 1
	id=${id%%;*}
	echo "$id" >>"$TRASH/jobs"
	for i in $(seq 180); do
		state=$(dispatch run -H hpc -- squeue -h -j "$id" -o %T) || return 1
		[ "$state" = RUNNING ] && { echo "$id"; return 0; }
		sleep 0.5
	done
	echo "job $id still $state after 90 s" >&2
	return 1
}

# wait_gpus_free NODE...: waits (up to 90 s) until scontrol itself (raw, not through
# dispatch's parsing) says no GPU of each NODE is in use: the cluster is shared with
# other tests, whose jobs may hold GPUs for a while.
wait_gpus_free() {
	local n i ok
	for i in $(seq 90); do
		ok=1
		for n; do
			dispatch run -H hpc -- scontrol -o -d show node "$n" | grep -q 'GresUsed=gpu:a100:0(' || ok=0
		done
		[ $ok = 1 ] && return 0
		sleep 1
	done
	echo "the GPUs of $* are still in use after 90 s (other tests' jobs?)" >&2
	return 1
}
