#!/bin/bash
# SPDX-License-Identifier: MIT
# bench/cp-kill-loop.sh [DISPATCH] [RUNS]: a manual check, not a timed test. It runs
# t5220's case "sshd killed during a tree upload" RUNS times (50) under load (two
# busy processes, `yes >/dev/null`, for the whole loop) and prints how long each
# `dispatch cp -r` took to end after its sshd was killed, then the maximum. A run
# that has not ended 60 s after the kill is a hang: it is killed, counted and named.
#
# Each run: an sshd of its own (tests/testbed/lib.sh's tb_sshd_up, the test bed's
# keys and user) on DISPATCH_TESTBED_PORT_BASE + 35; 100 files of 2 MB uploaded with
# `dispatch cp -r`; once 20 of them are in place (as the test waits for) the sshd
# and its sessions are killed (tb_sshd_down, as the test does). KILL_AT=N kills once
# more than N entries (temporary files included) are there instead; KILL_AT=random
# picks N from 0 to 25 for each run (0: as soon as the first file is opened, while
# the pool's channels are still opening). Needs the test bed instance that the
# DISPATCH_TESTBED_* settings name to be up (`eval "$(tests/testbed/up)"`, with
# DISPATCH_TESTBED_SLURM=0 it needs no cluster); root, as the test bed.
set -euo pipefail

DISPATCH=$(realpath "${1:-build/dispatch}")
RUNS=${2:-50}
KILL_AT=${KILL_AT:-20}
SRC=$(cd "$(dirname "$0")/.." && pwd)
: "${DISPATCH_TESTBED_DIR:?set the DISPATCH_TESTBED_* settings of a test bed instance that is up}"
TB=$DISPATCH_TESTBED_DIR
U=${DISPATCH_TESTBED_USER:-dispatch-test}
PORT=$((${DISPATCH_TESTBED_PORT_BASE:-22000} + 35))
RHOME=$(getent passwd "$U" | cut -d: -f6)
W=$(mktemp -d /tmp/dispatch-cp-kill.XXXXXX)
R=cp-kill-loop.$$
LOAD=()
cleanup() {
	local p
	for p in "${LOAD[@]}"; do kill "$p" 2>/dev/null || true; done
	(. "$SRC/tests/testbed/lib.sh" && tb_sshd_down cploop) 2>/dev/null || true
	rm -rf "$W" "${RHOME:?}/$R"
}
trap cleanup EXIT

cd "$W"
mkdir kill
for i in $(seq 100 199); do head -c 2000000 /dev/urandom >kill/m$i; done
cat >kcfg <<EOF
Host cploop
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
	(. "$SRC/tests/testbed/lib.sh" && tb_sshd_up cploop "" 127.0.0.1 "$PORT") 2>/dev/null
	# its pid now: sshd unlinks its pid file when it gets SIGTERM, and under load the
	# previous run's sshd may do so after this one wrote it (then tb_sshd_down would
	# find no pid and kill nothing, and the copy would go on)
	spid=$(cat "$TB/sshd/cploop/pid")
	echo "[127.0.0.1]:$PORT $(cut -d' ' -f1,2 "$TB/sshd/cploop/host_ed25519.pub")" >kh
	rm -rf "${RHOME:?}/$R"
	mkdir -p "$RHOME/$R" && chown "$U" "$RHOME/$R"
	"$DISPATCH" -F kcfg cp -r kill "cploop:$R/kill" 2>err &
	pid=$!
	at=$KILL_AT
	[ "$at" != random ] || at=$((RANDOM % 26))
	for _ in $(seq 600); do
		[ "$(ls -A "$RHOME/$R/kill" 2>/dev/null | wc -l)" -gt "$at" ] && break
		sleep 0.02
	done
	(. "$SRC/tests/testbed/lib.sh" && tb_kill_tree "$spid") 2>/dev/null
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
	printf 'run %2d (kill after %s): ended %5.2f s after the kill, exit %s, %s\n' "$run" "$at" "$secs" "$rc" \
		"$(grep -m1 -o 'connection to .cploop. lost.*' err || echo 'no loss reported')"
	if [ "$(echo "$secs > $max" | bc)" = 1 ]; then max=$secs; fi
done
printf 'runs %s, hangs %s, longest end after the kill %.2f s (load average: %s)\n' \
	"$RUNS" "$hangs" "$max" "$(cut -d' ' -f1-3 /proc/loadavg)"
[ $hangs = 0 ]
