#!/bin/bash
# SPDX-License-Identifier: MIT
# bench/cp-kill-loop.sh [DISPATCH] [RUNS]: a manual check, not a timed test. It runs
# t5220's case "sshd killed during a tree upload" RUNS times (50) under load (two
# busy processes, `yes >/dev/null`, for the whole loop) and prints how long each
# `dispatch cp -r` took to end after its sshd was killed, then the maximum. A run
# that has not ended 60 s after the kill is a hang: it is killed, counted and named.
#
# Each run: an sshd of its own (tests/testbed/lib.sh's tb_sshd_up, the test bed's
# keys and user) on DISPATCH_TESTBED_PORT_BASE + 31; 100 files of 2 MB uploaded with
# `dispatch cp -r`; once 20 of them are in place the sshd and its sessions are
# killed (tb_sshd_down, as the test does). Needs the test bed instance that the
# DISPATCH_TESTBED_* settings name to be up (`eval "$(tests/testbed/up)"`, with
# DISPATCH_TESTBED_SLURM=0 it needs no cluster); root, as the test bed.
set -euo pipefail

DISPATCH=$(realpath "${1:-build/dispatch}")
RUNS=${2:-50}
SRC=$(cd "$(dirname "$0")/.." && pwd)
: "${DISPATCH_TESTBED_DIR:?set the DISPATCH_TESTBED_* settings of a test bed instance that is up}"
TB=$DISPATCH_TESTBED_DIR
U=${DISPATCH_TESTBED_USER:-dispatch-test}
PORT=$((${DISPATCH_TESTBED_PORT_BASE:-22000} + 31))
RHOME=$(getent passwd "$U" | cut -d: -f6)
W=$(mktemp -d /tmp/dispatch-cp-kill.XXXXXX)
R=cp-kill-loop.$$
LOAD=()
cleanup() {
	local p
	for p in "${LOAD[@]}"; do kill "$p" 2>/dev/null || true; done
	(. "$SRC/tests/testbed/lib.sh" && tb_sshd_down cpkill) 2>/dev/null || true
	rm -rf "$W" "${RHOME:?}/$R"
}
trap cleanup EXIT

cd "$W"
mkdir kill
for i in $(seq 100 199); do head -c 2000000 /dev/urandom >kill/m$i; done
cat >kcfg <<EOF
Host cpkill
	HostName 127.0.0.1
	Port $PORT
	User $U
	IdentityFile $TB/keys/id_ed25519
	IdentitiesOnly yes
	UserKnownHostsFile $W/kh
	BatchMode yes
EOF

yes >/dev/null &
LOAD+=($!)
yes >/dev/null &
LOAD+=($!)

max=0 hangs=0
for run in $(seq "$RUNS"); do
	(. "$SRC/tests/testbed/lib.sh" && tb_sshd_up cpkill "" 127.0.0.1 "$PORT") 2>/dev/null
	echo "[127.0.0.1]:$PORT $(cut -d' ' -f1,2 "$TB/sshd/cpkill/host_ed25519.pub")" >kh
	rm -rf "${RHOME:?}/$R"
	mkdir -p "$RHOME/$R" && chown "$U" "$RHOME/$R"
	"$DISPATCH" -F kcfg cp -r kill "cpkill:$R/kill" 2>err &
	pid=$!
	for _ in $(seq 600); do
		[ "$(ls "$RHOME/$R/kill" 2>/dev/null | wc -l)" -ge 20 ] && break
		sleep 0.05
	done
	(. "$SRC/tests/testbed/lib.sh" && tb_sshd_down cpkill) 2>/dev/null
	t0=$(date +%s.%N)
	rc=0 ended=0
	for _ in $(seq 600); do
		kill -0 "$pid" 2>/dev/null || { ended=1; break; }
		sleep 0.1
	done
	if [ $ended = 0 ]; then
		echo "run $run: HANG (no end 60 s after the kill)"
		hangs=$((hangs + 1))
		kill -9 "$pid" 2>/dev/null || true
	fi
	wait "$pid" || rc=$?
	secs=$(echo "$(date +%s.%N) - $t0" | bc)
	printf 'run %2d: ended %5.2f s after the kill, exit %s, %s\n' "$run" "$secs" "$rc" \
		"$(grep -m1 -o 'connection to .cpkill. lost.*' err || echo 'no loss reported')"
	if [ "$(echo "$secs > $max" | bc)" = 1 ]; then max=$secs; fi
done
printf 'runs %s, hangs %s, longest end after the kill %.2f s (load average: %s)\n' \
	"$RUNS" "$hangs" "$max" "$(cut -d' ' -f1-3 /proc/loadavg)"
[ $hangs = 0 ]
