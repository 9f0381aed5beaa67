#!/bin/bash
# t7400: dispatch top on the test cluster, with the fake nvidia-smi of
# lib-testbed-gpu.sh (fake_smi) on the login node's PATH, which srun hands to the
# steps on the nodes: a two-node job with one GPU per node shows one row per node,
# the step's GPU only (minor 0 of the two the fake node has), in lines and --json
# (null for [N/A]); a session makes exactly one step per group of nodes (sacct);
# the driver-535 field names; constrained steps (renumbered); NVML failure and no
# nvidia-smi flagged; a hanging nvidia-smi is stale; --procs: the job's processes on
# both nodes with the GPU each holds, through the same one step per session; a job
# without GPUs: its processes' CPU and memory; pending/unknown jobs exit 1/4.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-testbed-gpu.sh"
DATA=$TEST_SRCDIR/tests/unit/data/nvidia-smi
U0=GPU-2b5a3e1c-9d2f-4c8a-b1e7-5f0a6d3c2e91
U1=GPU-7c1e9f40-3a6b-4d2e-8f5c-0b9a1d7e6c34

tb_up
claim_boxes hpc # its fake nvidia-smi (t7470 fakes hpc too)

# [WRAP=SCRIPT] run_job ARGS...: an sbatch'ed sleeper (or SCRIPT) that runs; prints its id.
# It sleeps 600 s (the clean-up cancels it): at 200 s, the job of the last case had
# ended COMPLETED before it was cancelled, in a CI rehearsal's sanitize pass at a
# high load (the file took 220 s).
run_job() {
	local id s i
	id=$(dispatch run -H hpc -- sbatch --parsable -p gpu --mem=100 -t 15 -o /dev/null "$@" --wrap "'${WRAP:-sleep 600}'") || return 1
	id=${id%%;*}
	echo "$id" >>"$TRASH/jobs"
	for i in $(seq 180); do
		s=$(dispatch run -H hpc -- squeue -h -j "$id" -o %T) || return 1
		[ "$s" = RUNNING ] && { echo "$id"; return 0; }
		sleep 0.5
	done
	echo "job $id still $s after 90 s" >&2
	return 1
}
jq_() { python3 -c "import json,sys; d=[json.loads(l) for l in open(sys.argv[1])]; print($1)" "$2"; }

test_expect_success 'setup: a two-node job with one GPU per node, fake A100s' '
	fake_smi hpc "$DATA/a100-node.query" all &&
	job=$(run_job -N2 --gres=gpu:1) && echo "$job" >job
'
job=$(cat job 2>/dev/null)

test_expect_success 'lines: one row per node, the step GPU only, sampled twice' '
	dispatch top -H hpc --interval 1 -n 2 "$job" >out &&
	test "$(grep -c "^node1  *00000000:07:00.0  *87%  *40833/81920  *312/400  *61C  *sw_power_cap" out)" = 2 &&
	test "$(grep -c "^node2  *00000000:07:00.0" out)" = 2 &&
	! grep -q 00000000:0F:00.0 out
'

test_expect_success 'one srun step per session: both nodes hold one GPU, one group (sacct)' '
	dispatch run -H hpc -- sacct -n -P -j "$job" -o JobID >steps &&
	test "$(grep -c "^$job\.[0-9]" steps)" = 1
'

test_expect_success '--json: one document per sample, nulls for [N/A], --node' '
	fake_smi hpc "$DATA/h100-mig.query" all &&
	dispatch --json top -H hpc --interval 1 -n 1 --node node2 "$job" >j &&
	test "$(wc -l <j)" = 1 &&
	test "$(jq_ "\",\".join(n[\"node\"] for n in d[0][\"nodes\"])" j)" = node2 &&
	test "$(jq_ "d[0][\"nodes\"][0][\"gpus\"][0][\"utilization_pct\"]" j)" = None &&
	test "$(jq_ "d[0][\"nodes\"][0][\"gpus\"][0][\"bus_id\"]" j)" = 00000000:18:00.0
'

test_expect_success 'constrained step: renumbered GPUs, still keyed by bus id' '
	fake_smi hpc "$DATA/a100-node.query" constrained &&
	dispatch --json top -H hpc --interval 1 -n 1 "$job" >j &&
	test "$(jq_ "len(d[0][\"nodes\"][0][\"gpus\"])" j)" = 1 &&
	test "$(jq_ "d[0][\"nodes\"][1][\"gpus\"][0][\"uuid\"]" j)" = GPU-2b5a3e1c-9d2f-4c8a-b1e7-5f0a6d3c2e91
'

test_expect_success 'NVML failure: nvidia-smi-failed with its message' '
	fake_smi hpc "$DATA/a100-node.query" nvml &&
	dispatch top -H hpc --interval 1 -n 1 "$job" >out &&
	test_grep "^node1 .*nvidia-smi-failed" out &&
	test_grep "node1: nvidia-smi: NVIDIA-SMI has failed" out
'

test_expect_success 'hang: the nodes go stale' '
	fake_smi hpc "$DATA/a100-node.query" hang &&
	dispatch top -H hpc --interval 1 -n 4 "$job" >out &&
	test_grep "^node2 .*stale" out
'

test_expect_success 'no nvidia-smi on the nodes: flagged, --procs still lists the processes' '
	fake_gpus_off hpc &&
	dispatch top -H hpc --interval 1 -n 1 "$job" >out &&
	test_grep "^node1 .*no-nvidia-smi" out &&
	test_grep "^node2 .*no-nvidia-smi" out &&
	dispatch top -H hpc --interval 1 -n 2 --procs "$job" >out &&
	test_grep "^node1  *-  *[0-9][0-9]*  *-  *[0-9]*%  *[0-9]*  *$DISPATCH_TESTBED_USER  *slurm_script$" out &&
	test_grep "^node2: 0 processes of the job, CPU 0%, RSS 0 MiB$" out &&
	! grep -q "holds a GPU" out
'

test_expect_success 'a job without GPUs: none of the node'"'"'s GPUs, a note' '
	fake_smi hpc "$DATA/a100-node.query" all &&
	cpujob=$(run_job -N1 -p cpu) &&
	dispatch top -H hpc --interval 1 -n 1 "$cpujob" >out &&
	test_grep "^node[12] .*no-gpus-allocated" out &&
	test_grep "the job holds no GPUs there" out &&
	! grep -q 00000000: out &&
	dispatch top -H hpc --interval 1 -n 2 --procs "$cpujob" >out &&
	test_grep "^node[12]: 2 processes of the job, CPU [0-9]*%, RSS [0-9]* MiB (the job holds no GPUs: its processes. CPU and memory only)$" out &&
	test_grep "^node[12]  *-  *[0-9][0-9]*  *-  *[0-9]*%  *[0-9]*  *$DISPATCH_TESTBED_USER  *sleep$" out &&
	! grep -q "the job holds no GPUs there" out &&
	dispatch run -H hpc -- scancel "$cpujob"
'

test_expect_success '--health: each node'"'"'s GPU health and XID source from the same step' '
	fake_smi hpc "$DATA/a100-health.query" all &&
	dispatch top -H hpc --interval 1 -n 2 --health "$job" >out &&
	test "$(grep -c "^node[12]: GPU health$" out)" = 2 &&
	test "$(grep -c "^00000000:0F:00.0  *2  *-  *Yes  *No  *-  *unhealthy$" out)" = 2 &&
	test "$(grep -c "^XID errors" out)" = 2 &&
	dispatch --json top -H hpc --interval 1 -n 1 --health "$job" >j &&
	test "$(jq_ "[[g[\"healthy\"] for g in n[\"health\"][\"gpus\"]] for n in d[0][\"nodes\"]]" j)" = "[[True, False], [True, False]]" &&
	jq_ "sorted(set(n[\"health\"][\"xid_source\"] for n in d[0][\"nodes\"]))" j >src &&
	test_grep "^\[.\(journalctl\|dmesg\|unavailable\).\]$" src &&
	dispatch --json top -H hpc --interval 1 -n 1 "$job" >j &&
	test "$(jq_ "\"health\" in d[0][\"nodes\"][0]" j)" = False
'

# The job of --procs: a step on both nodes whose sleep holds a GPU (the stand-in
# lists a process whose CUDA_VISIBLE_DEVICES names a fixture GPU's UUID, here both:
# the row shown is the one the step got), beside the batch script on node1; top
# starts once squeue shows that step (bounded).
test_expect_success '--procs: the job'"'"'s processes on both nodes, each on its GPU, one step per session' '
	fake_smi hpc "$DATA/a100-node.query" all &&
	pjob=$(WRAP="srun env CUDA_VISIBLE_DEVICES=$U0,$U1 DISPATCH_FAKE_GPU_MIB=555 sleep 600 & sleep 600; wait" run_job -N2 --gres=gpu:1) &&
	for _ in $(seq 120); do
		dispatch run -H hpc -- squeue -h -s -j "$pjob" -o %i >st && grep -qx "$pjob\.0" st && break
		sleep 0.5
	done &&
	grep -qx "$pjob\.0" st &&
	dispatch top -H hpc --interval 1 -n 3 --procs "$pjob" >out &&
	test_grep "^node1  *00000000:[0-9A-F:.]*  *[0-9][0-9]*  *555  *[0-9]*%  *[0-9]*  *$DISPATCH_TESTBED_USER  *sleep$" out &&
	test_grep "^node2  *00000000:[0-9A-F:.]*  *[0-9][0-9]*  *555  *[0-9]*%  *[0-9]*  *$DISPATCH_TESTBED_USER  *sleep$" out &&
	test_grep "^node1  *-  *[0-9][0-9]*  *-  *[0-9]*%  *[0-9]*  *$DISPATCH_TESTBED_USER  *slurm_script$" out &&
	test_grep "^node2: 1 process of the job, CPU [0-9]*%, RSS [0-9]* MiB$" out &&
	! grep -q "^node2 .*slurm_script$" out &&
	! grep -q " \(sh\|nvidia-smi\|scontrol\|awk\|ps\)$" out &&
	dispatch --json top -H hpc --interval 1 -n 3 --procs "$pjob" >j &&
	test "$(jq_ "[[p[\"command\"] for g in n[\"gpus\"] for p in g[\"processes\"]] for n in d[-1][\"nodes\"]]" j)" = "[['"'"'sleep'"'"'], ['"'"'sleep'"'"']]" &&
	test "$(jq_ "[p[\"memory_used_mib\"] for n in d[-1][\"nodes\"] for g in n[\"gpus\"] for p in g[\"processes\"]]" j)" = "[555, 555]" &&
	test "$(jq_ "[n[\"processes\"][\"found_by\"] for n in d[-1][\"nodes\"]]" j)" = "['"'"'listpids'"'"', '"'"'listpids'"'"']" &&
	test "$(jq_ "sorted(p[\"command\"] for p in d[-1][\"nodes\"][0][\"processes\"][\"without_gpu\"])" j)" = "['"'"'sleep'"'"', '"'"'slurm_script'"'"', '"'"'srun'"'"', '"'"'srun'"'"']" &&
	test "$(jq_ "d[-1][\"nodes\"][1][\"processes\"][\"without_gpu\"]" j)" = "[]" &&
	test "$(jq_ "d[-1][\"nodes\"][0][\"processes\"][\"without_gpu\"][0][\"user\"]" j)" = "$DISPATCH_TESTBED_USER" &&
	dispatch run -H hpc -- sacct -n -P -j "$pjob" -o JobID >steps &&
	test "$(grep -c "^$pjob\.[0-9]" steps)" = 3 &&
	dispatch run -H hpc -- scancel "$pjob"
'

test_expect_success 'a job that is not running: exit 1 with its state; unknown: 4' '
	dispatch run -H hpc -- scancel "$job" &&
	test_expect_code 1 dispatch top -H hpc -n 1 "$job" 2>err &&
	test_grep "is \(CANCELLED\|COMPLETING\)" err &&
	test_expect_code 4 dispatch top -H hpc -n 1 999999 2>err &&
	test_grep "not found on .hpc." err
'

test_done
