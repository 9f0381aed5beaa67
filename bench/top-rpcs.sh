#!/bin/bash
# bench/top-rpcs.sh [DISPATCH] [N]: what watching a running 2-node GPU job for N
# refreshes (2 s apart) costs the SLURM controller, from its own RPC counters
# (sdiag, every message type summed), for
#   - dispatch top -n N (one connection, one srun --overlap step per session)
#   - a loop of one srun per node per refresh (what a user or a naive tool does:
#     `srun --jobid=J --overlap -w NODE nvidia-smi ...`, here each through
#     `dispatch run -H hpc`, so the SSH side is as cheap as it gets)
# and, as the floor, the same time with nothing watching (node pings, accounting).
# Also the client's CPU time (user+sys) per refresh for each way. As root, on the
# test bed (brought up if it is not), with the test bed's stand-in nvidia-smi.
set -eu
cd "$(dirname "$0")/.."
D=$(realpath "${1:-build/dispatch}")
N=${2:-20}
eval "$(tests/testbed/up 2>/dev/null)"
TRASH=$(mktemp -d /tmp/dispatch-bench-top.XXXXXX)
DISPATCH_STATE_DIR=$TRASH/state
DISPATCH=$D
export DISPATCH_STATE_DIR TRASH DISPATCH
dispatch() { "$D" "$@"; }
testbed_up() { :; }
# shellcheck source=../tests/cli/lib-testbed-gpu.sh
. tests/cli/lib-testbed-gpu.sh   # fake_smi; its EXIT trap cancels the job and removes TRASH
export TB_HOME
TB_HOME=$(getent passwd "$DISPATCH_TESTBED_USER" | cut -d: -f6)
fake_smi hpc tests/unit/data/nvidia-smi/a100-node.query all

rpcs() {
	sdiag | awk '/by message type/ { on = 1; next } /by user/ { on = 0 }
		on && /count:/ { sub(/.*count:/, ""); n += $1 }
		END { print n + 0 }'
}
# every message type's count, "TYPE COUNT" lines
bytype() {
	sdiag | awk '/by message type/ { on = 1; next } /by user/ { on = 0 }
		on && /count:/ { t = $1; sub(/.*count:/, ""); print t, $1 + 0 }'
}
# the types whose count grew since the snapshot in file $1
grew() {
	bytype | awk 'NR == FNR { was[$1] = $2; next } $2 > was[$1] { printf "  %s +%d", $1, $2 - was[$1] }' "$1" -
	echo
}
steps() { "$D" run -H hpc -- sacct -n -P -j "$1" -o JobID | grep -c "^$1\.[0-9]" || true; }
cpu() { awk '{ print $14 + $15 + $16 + $17 }' /proc/$$/stat; } # this shell's and its children's ticks

id=$("$D" run -H hpc -- sbatch --parsable -N2 --gres=gpu:1 -t 10 -o /dev/null --wrap "'sleep 600'")
id=${id%%;*}
echo "$id" >>"$TRASH/jobs"
for _ in $(seq 120); do
	[ "$("$D" run -H hpc -- squeue -h -j "$id" -o %T)" = RUNNING ] && break
	sleep 0.5
done
nodes=$("$D" run -H hpc -- squeue -h -j "$id" -o %N)
hz=$(getconf CLK_TCK)

line() { # NAME RPCS SECONDS STEPS TICKS
	printf '%-34s %3d refreshes: %5d RPCs (%5.1f per refresh, %4.1f over idle), %3d steps, %4d s, client CPU %5.1f ms per refresh\n' \
		"$1" "$N" "$2" "$(echo "$2 / $N" | bc -l)" "$(echo "($2 - $idle * $3 / $idle_s) / $N" | bc -l)" \
		"$4" "$3" "$(echo "$5 * 1000 / $hz / $N" | bc -l)"
}

# idle: the same span with nothing watching
idle_s=$((N * 2))
before=$(rpcs)
sleep "$idle_s"
idle=$(( $(rpcs) - before ))
printf '%-34s %d s: %d RPCs (%s)\n' "idle (floor)" "$idle_s" "$idle" "$(sinfo --version)"

s0=$(steps "$id")
bytype >"$TRASH/types"
before=$(rpcs) c0=$(cpu)
SECONDS=0
"$D" top -H hpc --interval 2 -n "$N" "$id" >/dev/null
took=$SECONDS
after=$(rpcs) c1=$(cpu)
line "dispatch top -n $N" "$((after - before))" "$took" "$(( $(steps "$id") - s0 ))" "$((c1 - c0))"
grew "$TRASH/types"

s0=$(steps "$id")
bytype >"$TRASH/types"
before=$(rpcs) c0=$(cpu)
SECONDS=0
for _ in $(seq "$N"); do
	for n in $("$D" hostlist --expand "$nodes"); do
		"$D" run -H hpc -- srun --jobid="$id" --overlap -w "$n" -N1 -n1 --gpus=1 \
			nvidia-smi --query-gpu=uuid,utilization.gpu,memory.used --format=csv,noheader,nounits >/dev/null
	done
	sleep 2
done
took=$SECONDS
after=$(rpcs) c1=$(cpu)
line "srun per node per refresh" "$((after - before))" "$took" "$(( $(steps "$id") - s0 ))" "$((c1 - c0))"
grew "$TRASH/types"
