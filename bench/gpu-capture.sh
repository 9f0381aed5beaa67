#!/bin/sh
# bench/gpu-capture.sh OUTDIR: on a machine with an NVIDIA GPU (and PyTorch, for the
# load), capture what nvidia-smi prints for every query dispatch sends, idle and
# under load, as files for tests/unit/data/nvidia-smi/ (the test bed has no driver,
# so the other fixtures there are written by hand in nvidia-smi's format):
#   help-query-gpu.txt      nvidia-smi --help-query-gpu (the fields this driver has)
#   capture.txt             every query, in sections "## COMMAND" (idle, then busy)
#   timeline.csv            timestamp and utilisation/memory/power every 200 ms for
#                           ~16 s: idle, a matmul loop, idle (what a job's life looks like)
#   top-real-gpu.txt        bench/top-real-gpu.sh's checks
#   smi-q.txt               nvidia-smi -q (the whole report, for reference)
# Nothing on the machine is changed; the load is a PyTorch bf16 matmul loop of ~8 s.
set -u
out=${1:?usage: bench/gpu-capture.sh OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
top="uuid,pci.bus_id,index,minor_number,name,utilization.gpu,memory.used,memory.total,power.draw,power.limit,temperature.gpu,clocks_event_reasons.active"
health="uuid,pci.bus_id,ecc.errors.uncorrected.volatile.total,ecc.errors.uncorrected.aggregate.total,retired_pages.pending,remapped_rows.pending,remapped_rows.failure,gpu_recovery_action"
queries() { # label
	for q in "--query-gpu=uuid,name,memory.total" "--query-compute-apps=gpu_uuid,used_memory" \
		"--query-compute-apps=pid,gpu_uuid,used_memory" "--query-gpu=$top" "--query-gpu=$health"; do
		echo "## $1: nvidia-smi $q --format=csv,noheader,nounits"
		nvidia-smi "$q" --format=csv,noheader,nounits 2>&1
		echo "## exit $?"
	done
	echo "## $1: nvidia-smi --query-gpu=$top --format=csv (with header and units)"
	nvidia-smi --query-gpu="$top" --format=csv 2>&1
}
nvidia-smi --help-query-gpu >"$out/help-query-gpu.txt" 2>&1
nvidia-smi -q >"$out/smi-q.txt" 2>&1
sh "$here/top-real-gpu.sh" >"$out/top-real-gpu.txt" 2>&1
queries idle >"$out/capture.txt"

nvidia-smi --query-gpu=timestamp,index,utilization.gpu,utilization.memory,memory.used,power.draw,temperature.gpu,clocks.sm,clocks_event_reasons.active \
	--format=csv,noheader,nounits -lms 200 >"$out/timeline.csv" 2>&1 &
smi=$!
sleep 3
python3 - <<'PY' &
import time, torch
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
end = time.time() + 10
while time.time() < end:
    for _ in range(20):
        c = a @ b
    torch.cuda.synchronize()
time.sleep(0.5)
PY
py=$!
# the load is on once the GPU's memory holds the matrices (PyTorch takes seconds to start)
i=0
while [ $i -lt 100 ] && [ "$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | head -n 1)" -lt 500 ]; do
	sleep 0.2
	i=$((i + 1))
done
sleep 1
queries busy >>"$out/capture.txt"
wait "$py"
sleep 4
kill "$smi" 2>/dev/null
wait "$smi" 2>/dev/null
echo "captured into $out: $(ls "$out" | tr '\n' ' ')"
