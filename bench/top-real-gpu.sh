#!/bin/sh
# What only a machine with NVIDIA GPUs can confirm for `dispatch top` (the test bed
# replays nvidia-smi's formats; it has no driver). Run it on a GPU node, or on a
# SLURM login node with a running job of yours that holds GPUs:
#
#	bench/top-real-gpu.sh            # on a GPU node: fields and values
#	bench/top-real-gpu.sh JOBID      # on a login node: through srun --overlap
#
# It prints, and says PASS or FAIL for each:
#  - which of the fields dispatch asks for this driver has (--help-query-gpu), and
#    that a query of exactly those succeeds (nvidia-smi fails it on one unknown);
#  - the values as dispatch reads them ("[N/A]" where a MIG GPU has no utilisation);
#  - with JOBID: what a step of the job sees: SLURM_STEP_GPUS against the minor
#    numbers nvidia-smi reports (with device constraints the indices are
#    renumbered from 0, the minor numbers are not: dispatch filters by them).
# Paste its output into an issue; nothing is changed on the machine.
set -u
fields="uuid pci.bus_id index minor_number name utilization.gpu memory.used memory.total power.draw power.limit temperature.gpu clocks_event_reasons.active clocks_throttle_reasons.active"
probe='
h=$(nvidia-smi --help-query-gpu 2>&1) || { echo "FAIL nvidia-smi --help-query-gpu: $h" | head -n 1; exit 1; }
q=
for f in '"$fields"'; do
	case $f in clocks_throttle_reasons.*) case $q in *clocks_event_reasons*) continue ;; esac ;; esac
	case $h in *"\"$f\""*) q=$q${q:+,}$f; echo "field $f: present" ;; *) echo "field $f: absent" ;; esac
done
echo "node $(hostname) SLURM_STEP_GPUS=${SLURM_STEP_GPUS-unset} CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES-unset}"
echo "query $q"
if nvidia-smi --query-gpu="$q" --format=csv,noheader,nounits; then echo "PASS the probed query"; else echo "FAIL the probed query"; fi
nvidia-smi --query-gpu=index,minor_number,pci.bus_id --format=csv,noheader
'
if [ $# -eq 0 ]; then
	sh -c "$probe"
else
	n=$(squeue -h -j "$1" -o %D) || exit 1
	srun --jobid="$1" --overlap --nodes="$n" --ntasks-per-node=1 --gpus-per-node=1 -l -u \
		--input=none -t 2 sh -c "$probe"
	echo "(the step got one GPU per node: SLURM_STEP_GPUS should name a minor number listed above)"
fi
command -v journalctl >/dev/null 2>&1 && { journalctl -k -q --no-pager 2>/dev/null | grep -c NVRM | sed 's/^/kernel log NVRM lines readable without root: /'; }
