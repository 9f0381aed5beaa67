#!/bin/bash
# bench/notebook-startup.sh [DISPATCH] [ROUNDS]: on the test bed (SLURM host hpc and
# plain host box1, Debian's Jupyter from tests/install-deps), how long
# `dispatch notebook --cancel-on-exit` takes from its start to the printed URL (job
# submitted, scheduled, server up and answering, tunnel listening), then the first
# cell through that URL (a kernel started, code run over its websocket:
# tests/cli/lib-jupyter.py), then Ctrl-C (SIGINT) to dispatch's exit, the job
# cancelled. Root, as the test bed. See bench/README.md.
set -eu
DISPATCH=$(realpath "${1:-build/dispatch}")
ROUNDS=${2:-3}
SRC=$(cd "$(dirname "$0")/.." && pwd)
eval "$(bash "$SRC/tests/testbed/up" 2>/dev/null)"
W=$(mktemp -d /tmp/dispatch-bench-notebook.XXXXXX)
trap 'rm -rf "$W"' EXIT
export DISPATCH_STATE_DIR=$W/state
for PY3 in python3 /usr/bin/python3; do "$PY3" -c 'import websocket' 2>/dev/null && break; done
git init -q "$W/repo" && echo "print(1)" >"$W/repo/main.py" &&
	git -C "$W/repo" add . && git -C "$W/repo" -c user.name=b -c user.email=b@b commit -qm bench
cd "$W/repo"
now() { date +%s.%N; }
for host in hpc box1; do
	for i in $(seq 1 "$ROUNDS"); do
		t0=$(now)
		"$DISPATCH" notebook -H "$host" --cancel-on-exit >"$W/out" 2>"$W/err" &
		pid=$!
		for _ in $(seq 1 1200); do
			grep -q '^http' "$W/out" && break
			sleep 0.05
		done
		t1=$(now)
		"$PY3" "$SRC/tests/cli/lib-jupyter.py" "$(head -1 "$W/out")" 'print(1)' >/dev/null 2>&1
		t2=$(now)
		kill -INT "$pid"
		wait "$pid" || true
		t3=$(now)
		awk -v h="$host" -v i="$i" -v a="$t0" -v b="$t1" -v c="$t2" -v d="$t3" 'BEGIN {
			printf "%s round %d: URL after %.1f s, first cell %.1f s, Ctrl-C to exit (cancelled) %.1f s\n",
				h, i, b - a, c - b, d - c }'
	done
done
