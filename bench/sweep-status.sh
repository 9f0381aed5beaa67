#!/bin/bash
# bench/sweep-status.sh [DISPATCH] [N]: a sweep of N tasks (default 2000) on the test
# cluster, submitted and then asked about, against what a user runs by hand instead:
#   submit  dispatch submit --sweep i=0..N-1 (one sbatch per array of the sweep, the
#           parameter table in the one bootstrap uploaded once)
#           vs scp of the same sbatch script, then ssh ... sbatch --array
#   status  dispatch status SWEEP (one exchange: squeue, sacct and the metrics of
#           every task read on the host)
#           vs ssh hpc 'squeue ...; sacct ...; grep DISPATCH_METRIC LOGS' by hand
# Every SSH connection goes through bench/byte-relay.py, which counts its bytes both
# ways. As root, on the test bed (brought up when it is not). Prints per way: runs,
# mean seconds, connections, bytes sent and received per run.
set -eu
cd "$(dirname "$0")/.."
D=$(realpath "${1:-build/dispatch}")
N=${2:-2000}
RUNS=${RUNS:-5}
eval "$(tests/testbed/up 2>/dev/null)"
W=$(mktemp -d /tmp/dispatch-bench-sweep.XXXXXX)
export DISPATCH_STATE_DIR=$W/state
relay=
trap '[ -z "$relay" ] || kill "$relay"; rm -rf "$W"' EXIT

# hpc through the counting relay (its host key as for its own port)
hpc_port=$(awk '$1 == "Host" { h = $2 } h == "hpc" && $1 == "Port" { print $2; exit }' "$DISPATCH_SSH_CONFIG")
coproc RELAY { exec python3 bench/byte-relay.py 0 "127.0.0.1:$hpc_port" "$W/counts"; }
relay=$RELAY_PID
read -r ready port <&"${RELAY[0]}"
[ "$ready" = ready ]
cat >"$W/ssh_config" <<EOF
Host hpc
	Port $port
	HostKeyAlias [127.0.0.1]:$hpc_port
Include $DISPATCH_SSH_CONFIG
EOF
export DISPATCH_SSH_CONFIG=$W/ssh_config

# runs of "$@" (RUNS of them): "RUNS SECONDS CONNECTIONS SENT RECEIVED", per run
measure() {
	local runs=$1 t0 t1
	shift
	: >"$W/counts"
	t0=$(date +%s%N)
	for _ in $(seq 1 "$runs"); do
		"$@" >/dev/null
	done
	t1=$(date +%s%N)
	sleep 0.5 # (the relay writes a connection's count as it closes)
	awk -v runs="$runs" -v ns=$((t1 - t0)) '{ c++; up += $1; down += $2 }
		END { printf "%d %.3f %d %d %d\n", runs, ns / 1e9 / runs, c / runs, up / runs, down / runs }' "$W/counts"
}
row() { # WHAT: a line of the table
	read -r runs secs conns up down
	printf '| %s | %d | %s s | %d | %d | %d |\n' "$1" "$runs" "$secs" "$conns" "$up" "$down"
}

# shellcheck disable=SC2016 # the task's own variables, expanded by the task
TASK='for s in $(seq 1 20); do echo "step $s"; echo "DISPATCH_METRIC loss=$s.$DISPATCH_SWEEP_INDEX"; echo "DISPATCH_METRIC acc=0.$s"; done'
printf '| way | runs | mean | connections | bytes sent | bytes received |\n|---|---|---|---|---|---|\n'
measure 1 "$D" --json submit -H hpc -J bench-sweep -p cpu --mem 50 --sweep "i=0..$((N - 1))" \
	--max-parallel 4 -- "$TASK" | row "dispatch submit (a $N-task sweep)"
sid=$(sqlite3 "$DISPATCH_STATE_DIR/ledger.db" "select sweep_id from jobs where sweep_id is not null limit 1")
"$D" submit -H hpc -J bench-sweep --dry-run --emit "$W/emit" --sweep "i=0..$((N - 1))" \
	--max-parallel 4 -p cpu --mem 50 -- "$TASK" >/dev/null
hand_submit() {
	scp -q -F "$DISPATCH_SSH_CONFIG" "$W/emit/sbatch.sh" "$W/emit/bootstrap.sh" hpc:/tmp/ &&
		ssh -F "$DISPATCH_SSH_CONFIG" hpc "sbatch --hold --array=0-999%4 -J bench-hand /tmp/sbatch.sh" >"$W/hand-job"
}
measure 1 hand_submit | row "by hand: scp the scripts, ssh sbatch --array (held, then cancelled)"
ssh -F "$DISPATCH_SSH_CONFIG" hpc "scancel $(awk '{print $NF}' "$W/hand-job")"

"$D" wait --interval 10 --timeout 7200 "$sid" >/dev/null || true
measure "$RUNS" "$D" status "$sid" | row "dispatch status SWEEP ($N tasks, 2 metrics printed 20 times each)"
ids=$(sqlite3 "$DISPATCH_STATE_DIR/ledger.db" "select group_concat(job_id) from jobs where sweep_id = '$sid'")
logs=$(sqlite3 "$DISPATCH_STATE_DIR/ledger.db" "select log_path from jobs where sweep_id = '$sid'" |
	sed 's/%a/*/' | tr '\n' ' ')
by_hand() {
	ssh -F "$DISPATCH_SSH_CONFIG" hpc "squeue -h -j $ids -o '%i|%T|%M|%r'; sacct -n -P -X -j $ids -o JobID,State,ExitCode,Elapsed; grep -H '^DISPATCH_METRIC ' $logs"
}
measure "$RUNS" by_hand | row "by hand: ssh hpc 'squeue; sacct; grep DISPATCH_METRIC' (every line of every task)"
"$D" status "$sid" | tail -1
