#!/bin/bash
# bench/usage-real-gpu.sh [SECONDS]: what only a machine with an NVIDIA GPU and
# PyTorch can confirm for the usage sampler (submit --sample; status --usage): one
# command, on the GPU machine itself. It runs dispatch's sampler
# (lib/jobs/usage_sample.sh, one long-lived `nvidia-smi -lms`) at one sample a second
# beside a short real training (a bf16 matmul loop on GPU 0: SECONDS, default 60, of
# which the first and last 10 s idle, so the series shows the load), then reads the
# file with dispatch's reader (usage_read.sh) and prints:
#  - the sampler's own CPU per sample, nvidia-smi's included (from /proc: the
#    sampler's process group), and in % of a core at one sample per 30 s;
#  - the figures status --usage shows (mean and peak utilisation, peak memory,
#    energy, the 48-point series, CPU seconds and peak RSS of the training);
#  - PASS or FAIL: a mean between 30% and 100%, a peak of 90% or more, energy > 0.
# Paste its output into bench/README.md. Nothing outside a temporary directory is
# changed.
set -u
T=${1:-60}
here=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
command -v nvidia-smi >/dev/null || { echo "FAIL no nvidia-smi"; exit 1; }
python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null ||
	{ echo "FAIL no PyTorch with CUDA"; exit 1; }
body() { awk 'body { print } /^$/ && !body { body = 1 }' "$here/lib/jobs/$1"; }
body usage_sample.sh >"$tmp/sample.sh"
body usage_read.sh >"$tmp/read.sh"
uuid=$(nvidia-smi --query-gpu=uuid --format=csv,noheader -i 0)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader -i 0
echo "$(nproc) CPUs, GPU 0: $uuid, $T s"

# the job: this shell's children, as a bootstrap's; the sampler beside it
export CUDA_VISIBLE_DEVICES=$uuid
setsid bash -c '. "$1"; dispatch_sample 1 "$2"' _ "$tmp/sample.sh" "$tmp/usage.bench.$(hostname)" &
sp=$!
python3 - "$T" <<'EOF'
import sys, time, torch
t = float(sys.argv[1])
time.sleep(10)
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
end = time.time() + t - 20
while time.time() < end:
    for _ in range(20):
        a = (a @ a).clamp_(-1, 1)
    torch.cuda.synchronize()
del a
torch.cuda.empty_cache()
time.sleep(10)
EOF
# the sampler group's CPU (user+sys with waited children), nvidia-smi's included
tck=$(getconf CLK_TCK)
ticks=0
for f in /proc/[0-9]*/stat; do
	read -r -a st <"$f" 2>/dev/null || continue
	[ "${st[4]}" = "$sp" ] && ticks=$((ticks + st[13] + st[14] + st[15] + st[16]))
done
kill -- "-$sp" 2>/dev/null
wait "$sp" 2>/dev/null
n=$(grep -c '^[0-9]' "$tmp/usage.bench.$(hostname)")
awk -v n="$n" -v ms=$((ticks * 1000 / tck)) 'BEGIN {
	printf "sampler: %d samples, %.2f ms CPU per sample (nvidia-smi included) -> %.4f %% of a core at one per 30 s\n",
		n, ms / n, ms / n / 30000 * 100 }'
(. "$tmp/read.sh" && dispatch_usage_read bench "$tmp") | tee "$tmp/marks"
awk -F'|' '/@MARK_USAGE_GPU@|dispatch-usage-gpu/ {
	ok = $4 >= 30 && $4 <= 100 && $5 >= 90 && $7 > 0
	printf "%s mean %s%%, peak %s%%, energy %s Wh\n", ok ? "PASS" : "FAIL", $4, $5, $7 }' "$tmp/marks"
