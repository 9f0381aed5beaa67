#!/bin/bash
# bench/gpu-sampler-cost.sh [N]: on a machine with an NVIDIA GPU, what one sample of
# a job's GPUs costs, for the sampler a job would run beside its command (issue
# "What the GPUs did": well under 0.1 % of a core at one sample per 30 s). Two ways
# to sample, each idle and (with PyTorch) while a bf16 matmul loop runs:
#   spawn  one `nvidia-smi --query-gpu=... --format=csv,noheader,nounits` per sample
#          (N of them): wall and CPU time (user+sys of the child, from bash's times)
#   loop   one long-lived `nvidia-smi ... -lms 1000` for N seconds: its CPU time
#          (utime+stime from /proc/PID/stat) over the lines it printed
#   apps   one `nvidia-smi --query-compute-apps=pid,gpu_uuid,used_memory` per sample
# and what each costs at one sample per 30 s, in % of one core. Changes nothing.
set -u
N=${1:-20}
q=uuid,utilization.gpu,memory.used,power.draw,temperature.gpu,clocks_event_reasons.active
tck=$(getconf CLK_TCK)

# cpu_ms: the children's user+sys so far, in ms (bash's `times`, second line; run
# in this shell, not in a command substitution's subshell, which has children of its own)
tf=$(mktemp)
trap 'rm -f "$tf" "$tf.c"' EXIT
cpu_ms() {
	times >"$tf"
	sed -n 2p "$tf" | awk '{
		n = 0
		for (i = 1; i <= 2; i++) { split($i, a, "m"); sub("s", "", a[2]); n += a[1] * 60 + a[2] }
		printf "%d\n", n * 1000 }'
}
now_ms() { date +%s%3N; }

spawn() { # LABEL ARGS...
	local label=$1 c0 t0 c1 t1 i
	shift
	cpu_ms >"$tf.c"
	c0=$(cat "$tf.c")
	t0=$(now_ms)
	for ((i = 0; i < N; i++)); do nvidia-smi "$@" >/dev/null 2>&1; done
	t1=$(now_ms)
	cpu_ms >"$tf.c"
	c1=$(cat "$tf.c")
	awk -v l="$label" -v n="$N" -v w=$((t1 - t0)) -v c=$((c1 - c0)) 'BEGIN {
		printf "%-12s %3d calls: %6.1f ms wall, %5.1f ms CPU per sample -> %.4f %% of a core at one per 30 s\n",
			l, n, w / n, c / n, c / n / 30000 * 100 }'
}

loop() { # LABEL
	local pid lines u s
	nvidia-smi --query-gpu=$q --format=csv,noheader,nounits -lms 1000 >/tmp/gpu-sampler-loop.$$ 2>&1 &
	pid=$!
	sleep "$N"
	read -r u s < <(awk '{ print $14, $15 }' "/proc/$pid/stat")
	kill "$pid"
	wait "$pid" 2>/dev/null
	lines=$(wc -l </tmp/gpu-sampler-loop.$$)
	rm -f /tmp/gpu-sampler-loop.$$
	awk -v l="$1" -v n="$lines" -v c=$(((u + s) * 1000 / tck)) 'BEGIN {
		printf "%-12s %3d lines: %5d ms CPU in all (start included), %.1f ms per sample -> %.4f %% of a core at one per 30 s\n",
			l, n, c, c / n, c / n / 30000 * 100 }'
}

measure() { # PHASE
	spawn "spawn-$1" --query-gpu=$q --format=csv,noheader,nounits
	spawn "apps-$1" --query-compute-apps=pid,gpu_uuid,used_memory --format=csv,noheader,nounits
	loop "loop-$1"
}

echo "$(nvidia-smi --query-gpu=name,driver_version,persistence_mode --format=csv,noheader) | $(nproc) CPUs | N=$N"
measure idle
if python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
	python3 - "$((N * 3 + 30))" <<'PY' &
import sys, time, torch
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
end = time.time() + int(sys.argv[1])
while time.time() < end:
    for _ in range(20):
        c = a @ b
    torch.cuda.synchronize()
PY
	py=$!
	i=0
	while [ $i -lt 100 ] && [ "$(nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits | head -n 1)" -lt 50 ]; do
		sleep 0.2
		i=$((i + 1))
	done
	echo "load: $(nvidia-smi --query-gpu=utilization.gpu,power.draw --format=csv,noheader)"
	measure busy
	kill "$py" 2>/dev/null
	wait "$py" 2>/dev/null
else
	echo "no PyTorch with CUDA: idle only"
fi
