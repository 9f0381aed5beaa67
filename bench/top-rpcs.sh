#!/bin/bash
# bench/top-rpcs.sh [DISPATCH] [N]: what watching a running 2-node GPU job for N
# refreshes (2 s apart) costs the SLURM controller, from its own RPC counters
# (sdiag, every message type summed), for
#   - dispatch top -n N (one connection, one srun --overlap step per session)
#   - a loop of one srun per node per refresh (what a user or a naive tool does:
#     `srun --jobid=J --overlap -w NODE nvidia-smi ...`, here each through
#     `dispatch run -H hpc`, so the SSH side is as cheap as it gets)
#   - dispatch top --procs -n N (the same, each node listing the job's processes)
# and, as the floor, the same time with nothing watching (node pings, accounting).
# Also the client's CPU time (user+sys) per refresh for each way, and the login
# node's: the CPU time of the login node's sshd 'hpc' (its listener, the sessions'
# sshd processes, the shells, srun and everything they start and reap), from
# /proc/PID/stat (utime+stime+cutime+cstime of the listener and of every live
# descendant), before and after. For top, taken between its first and its last
# sample, while the session's processes live (the steady cost per refresh, without
# the login; a session's processes killed at its end may be reaped by init, so a
# figure over the whole session would miss them); for the loop, over all of it
# (each srun's session ends normally and is reaped: a login per srun is its cost). As
# root, on the test bed (brought up if it is not), with the test bed's stand-in
# nvidia-smi; nothing else may use the test bed's hpc sshd meanwhile.
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
# the login node's ticks: hpc's sshd listener and every live process under it, each
# with the children it reaped (a process's name may hold blanks: fields after ")")
listener=$(cat "$DISPATCH_TESTBED_DIR/sshd/hpc/pid")
# login_procs: "NAME TICKS" for the listener and each live process under it
login_procs() {
	local p
	for p in $(ps -e -o pid= -o ppid= | awk -v r="$listener" '
		{ pp[$1] = $2 }
		END { for (x in pp) { y = x
			for (d = 0; d < 64 && y != r && (y in pp); d++) y = pp[y]
			if (y == r) print x } }'); do
		cat "/proc/$p/stat" 2>/dev/null
	done | awk '{ i = index($0, "("); j = length($0)
		while (j > i && substr($0, j, 1) != ")") j--
		name = substr($0, i + 1, j - i - 1); gsub(/ /, "_", name)
		split(substr($0, j + 2), f, " ")
		print name, f[12] + f[13] + f[14] + f[15] }'
}
login_cpu() { login_procs | awk '{ t += $2 } END { print t + 0 }'; }
# by_name A B: the ticks each process name gained from snapshot A to B
by_name() {
	awk 'NR == FNR { a[$1] += $2; next } { b[$1] += $2 }
		END { for (k in b) if (b[k] - a[k] > 0) printf "  %s %+d", k, b[k] - a[k]; print "" }' "$1" "$2"
}

# waits (up to 10 s) until the sessions under the listener are gone (reaped: their
# CPU is then in the listener's cutime/cstime)
settle() {
	local _
	for _ in $(seq 100); do
		[ -z "$(ps -o pid= --ppid "$listener")" ] && return 0
		sleep 0.1
	done
}

id=$("$D" run -H hpc -- sbatch --parsable -N2 --gres=gpu:1 -t 10 -o /dev/null --wrap "'sleep 600'")
id=${id%%;*}
echo "$id" >>"$TRASH/jobs"
for _ in $(seq 120); do
	[ "$("$D" run -H hpc -- squeue -h -j "$id" -o %T)" = RUNNING ] && break
	sleep 0.5
done
nodes=$("$D" run -H hpc -- squeue -h -j "$id" -o %N)
hz=$(getconf CLK_TCK)

line() { # NAME RPCS SECONDS STEPS TICKS LOGIN_TICKS
	printf '%-34s %3d refreshes: %5d RPCs (%5.1f per refresh, %4.1f over idle), %3d steps, %4d s, client CPU %5.1f ms, login node CPU %5.1f ms per refresh\n' \
		"$1" "$N" "$2" "$(echo "$2 / $N" | bc -l)" "$(echo "($2 - $idle * $3 / $idle_s) / $N" | bc -l)" \
		"$4" "$3" "$(echo "$5 * 1000 / $hz / $N" | bc -l)" "$(echo "$6 * 1000 / $hz / $N" | bc -l)"
}

# top_row NAME ARGS...: one dispatch top session of N + 2 samples; the login node's
# CPU between the first sample and the N + 1st (N refreshes)
top_row() {
	local name=$1 s0 before took after la lb _
	shift
	s0=$(steps "$id")
	settle
	bytype >"$TRASH/types"
	rm -f "$TRASH/fifo" && mkfifo "$TRASH/fifo"
	before=$(rpcs)
	SECONDS=0
	# dispatch's own CPU: what its subshell reaped (the snapshots below are this
	# shell's children, not dispatch's)
	( me=$BASHPID
	  "$D" --json top -H hpc --interval 2 -n $((N + 2)) "$@" "$id" >"$TRASH/fifo"
	  sed 's/.*) //' "/proc/$me/stat" | awk '{ print $14 + $15 }' >"$TRASH/client" ) &
	exec 3<"$TRASH/fifo"
	read -r _ <&3
	login_procs >"$TRASH/login-a"
	for _ in $(seq "$N"); do read -r _ <&3; done
	login_procs >"$TRASH/login-b"
	cat <&3 >/dev/null
	exec 3<&-
	wait
	took=$SECONDS
	settle
	after=$(rpcs)
	la=$(awk '{ t += $2 } END { print t + 0 }' "$TRASH/login-a")
	lb=$(awk '{ t += $2 } END { print t + 0 }' "$TRASH/login-b")
	line "$name" "$((after - before))" "$took" "$(( $(steps "$id") - s0 ))" "$(cat "$TRASH/client")" "$((lb - la))"
	printf '  login node: ticks (1/%d s) per process name between the samples:' "$hz"
	by_name "$TRASH/login-a" "$TRASH/login-b"
	grew "$TRASH/types"
}

# idle: the same span with nothing watching
idle_s=$((N * 2))
before=$(rpcs)
sleep "$idle_s"
idle=$(( $(rpcs) - before ))
printf '%-34s %d s: %d RPCs (%s)\n' "idle (floor)" "$idle_s" "$idle" "$(sinfo --version)"

top_row "dispatch top -n $N"
top_row "dispatch top --procs -n $N" --procs

s0=$(steps "$id")
settle
bytype >"$TRASH/types"
before=$(rpcs) c0=$(cpu) l0=$(login_cpu)
SECONDS=0
for _ in $(seq "$N"); do
	for n in $("$D" hostlist --expand "$nodes"); do
		"$D" run -H hpc -- srun --jobid="$id" --overlap -w "$n" -N1 -n1 --gpus=1 \
			nvidia-smi --query-gpu=uuid,utilization.gpu,memory.used --format=csv,noheader,nounits >/dev/null
	done
	sleep 2
done
took=$SECONDS
c1=$(cpu) # before settle's and sdiag's processes
settle
after=$(rpcs) l1=$(login_cpu)
line "srun per node per refresh" "$((after - before))" "$took" "$(( $(steps "$id") - s0 ))" "$((c1 - c0))" "$((l1 - l0))"
grew "$TRASH/types"
