#!/bin/bash
# bench/wait-load.sh [DISPATCH] [N]: what waiting on N jobs costs the SLURM
# controller, read from its own RPC counters (sdiag), for
#   - dispatch wait JOB... (one squeue per poll for all jobs, sacct for the ended)
#   - the reference's way: every poll, one SSH command and one `squeue -j ID` per
#     job (here: `dispatch run -H hpc -- squeue ...`, so the SSH side is as cheap as
#     it gets), until each job has left the active states
# Both poll every 2 s and wait on the same kind of batch (N jobs of `sleep 5` on the
# test cluster's cpu partition, 4 at a time). As root, on the test bed (it is
# brought up if it is not). Prints one line per way: polls, job-info RPCs, SSH
# connections, seconds.
set -eu
cd "$(dirname "$0")/.."
D=$(realpath "${1:-build/dispatch}")
N=${2:-20}
eval "$(tests/testbed/up 2>/dev/null)"
DISPATCH_STATE_DIR=$(mktemp -d /tmp/dispatch-bench-wait.XXXXXX)
export DISPATCH_STATE_DIR
trap 'rm -rf "$DISPATCH_STATE_DIR"' EXIT

rpcs() {
	sdiag | awk '/by message type/ { on = 1; next } /by user/ { on = 0 }
		on && $1 ~ /^REQUEST_JOB_(INFO|INFO_SINGLE|USER_INFO)$/ { sub(/.*count:/, ""); n += $1 }
		END { print n + 0 }'
}

batch() {
	local i
	for i in $(seq 1 "$N"); do
		"$D" submit -H hpc -J "bench-wait-$1-$i" -p cpu -- "sleep 5"
	done
}

# REQUEST_JOB_STATE: squeue --only-job-state (23.11.5 and later), the states alone
state_rpcs() {
	sdiag | awk '/by message type/ { on = 1; next } /by user/ { on = 0 }
		on && $1 == "REQUEST_JOB_STATE" { sub(/.*count:/, ""); n += $1 }
		END { print n + 0 }'
}

# dispatch wait
jobs=$(batch d)
before=$(rpcs) sbefore=$(state_rpcs)
SECONDS=0
"$D" --json wait --interval 2 $jobs >"$DISPATCH_STATE_DIR/w.json"
took=$SECONDS
after=$(rpcs) safter=$(state_rpcs)
polls=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["polls"])' "$DISPATCH_STATE_DIR/w.json")
printf '%-28s %3d jobs: %4d polls %6d job-info RPCs %5d SSH connections %4d s (%s; %d job-state RPCs)\n' \
	"dispatch wait" "$N" "$polls" "$((after - before))" 1 "$took" "$(sinfo --version)" "$((safter - sbefore))"

# one squeue per job per poll, one SSH command each
jobs=$(batch r)
before=$(rpcs)
SECONDS=0
polls=0 conns=0
left=$jobs
while [ -n "$left" ]; do
	polls=$((polls + 1))
	still=
	for j in $left; do
		conns=$((conns + 1))
		state=$("$D" run -H hpc -- squeue -h -j "${j%@hpc}" -o %T 2>/dev/null) || state=
		case $state in PENDING | RUNNING | CONFIGURING | COMPLETING) still="$still $j" ;; esac
	done
	left=$still
	[ -z "$left" ] || sleep 2
done
took=$SECONDS
after=$(rpcs)
printf '%-28s %3d jobs: %4d polls %6d job-info RPCs %5d SSH connections %4d s\n' \
	"squeue -j per job (ref.)" "$N" "$polls" "$((after - before))" "$conns" "$took"
