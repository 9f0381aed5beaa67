#!/bin/bash
# t5410: solve --check against the test bed moves to the node or host whose GPUs
# are free. SLURM: two inventory entries on the cluster, each kept to one node by
# exclude; a job holding node1's two a100 moves the choice to the node2 one (and
# the offline solve does not move). Plain: boxes with a fake nvidia-smi
# (tests/cli/lib-testbed-gpu.sh), one with 3 of 8 GPUs busy. An unreachable host is
# skipped with a warning. Skips unless root (testbed).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-testbed-gpu.sh"
DATA=$TEST_SRCDIR/tests/unit/data

test_expect_success '--check goes with --solve in submit' '
	test_expect_code 2 dispatch submit -H x --check --dry-run -- true 2>err &&
	test_grep "check goes with --solve" err
'

tb_up
claim_boxes box1 box2

cat >halves.yaml <<'INV'
gres_mapping:
  a100-sxm4-80gb: a100
clusters:
  testbed: {root: /tmp/r, work: /tmp/w}
hosts:
  gone:
    ssh: down1
    cluster: testbed
    type: slurm
    partitions: [gpu]
  half1:
    ssh: hpc
    cluster: testbed
    type: slurm
    partitions: [gpu]
    exclude: [node2]
  half2:
    ssh: hpc
    cluster: testbed
    type: slurm
    partitions: [gpu]
    exclude: ['node[0-1]']
INV

test_expect_success 'SLURM: node1 free: the first half; the dead host skipped' '
	wait_gpus_free node1 &&
	dispatch -i halves.yaml -v solve --check --chip a100-sxm4-80gb --chips 2 >out 2>err &&
	test_grep "^host: *half1" out &&
	test_grep "warning: skipping .gone.: cannot connect" err &&
	test_grep "half1: fits now: node1 has 2 free a100 GPUs on partition gpu" err
'

test_expect_success 'SLURM: node1 GPUs taken: solve --check moves to the node2 half' '
	wait_gpus_free node2 &&
	job=$(submit_gpu_job node1) &&
	dispatch -i halves.yaml -v solve --check --chip a100-sxm4-80gb --chips 2 >out 2>err &&
	test_grep "^host: *half2" out &&
	test_grep "^partition: *gpu" out &&
	test_grep "half1: busy now: no node with 2 free a100 GPUs" err &&
	test_grep "half2: fits now: node2 has 2 free a100 GPUs" err &&
	dispatch -i halves.yaml --json solve --check --chip a100-sxm4-80gb --chips 2 >s.json 2>/dev/null &&
	test "$(jq -r .host s.json)" = half2 &&
	test "$(jq .checked s.json)" = true &&
	dispatch -i halves.yaml solve --chip a100-sxm4-80gb --chips 2 >offline &&
	test_grep "^host: *gone" offline &&
	dispatch -i halves.yaml -v submit --solve --check --chip a100-sxm4-80gb --gpus 2 --dry-run -- true >script 2>err &&
	test_grep "solve: half2: fits now" err &&
	dispatch run -H hpc -- scancel "$job"
'

# The boxes' GPU lock directories are the file's own (never made: no leases): every
# box of every test bed instance shares this machine's /tmp, and a --gpus job of
# another file (t7420) holds GPU 0 in the default one while it runs.
cat >boxes.yaml <<INV
clusters:
  testbed: {root: /tmp/r, work: /tmp/w}
hosts:
  gone: {ssh: down1, cluster: testbed, type: plain, chips: {a100-sxm4-80gb: 8}}
  box1: {ssh: box1, cluster: testbed, type: plain, chips: {a100-sxm4-80gb: 8}, gpu_lock_dir: /tmp/dispatch-gpus-t5410-$$}
  box2: {ssh: box2, cluster: testbed, type: plain, chips: {a100-sxm4-80gb: 8}, gpu_lock_dir: /tmp/dispatch-gpus-t5410-$$}
INV

test_expect_success 'plain: 3 of box1 GPUs busy: 5 fit there, 6 go to box2' '
	fake_gpus box1 "$DATA/nvidia-smi/dgx-a100-80gb-3-busy.gpus" "$DATA/nvidia-smi/dgx-a100-80gb-3-busy.apps" &&
	fake_gpus box2 "$DATA/nvidia-smi/dgx-a100-80gb-3-busy.gpus" &&
	dispatch -i boxes.yaml -v solve --check --chip a100-sxm4-80gb --chips 5 >out 2>err &&
	test_grep "^host: *box1" out &&
	test_grep "box1: fits now: 5 of its 8 a100-sxm4-80gb free (GPU 2,3,5,6,7)" err &&
	dispatch -i boxes.yaml -v solve --check --chip a100-sxm4-80gb --chips 6 >out 2>err &&
	test_grep "^host: *box2" out &&
	test_grep "box1: busy now: 5 of 8 a100-sxm4-80gb free, needs 6" err
'

test_expect_success 'plain: busy_gpu_memory 50G: the 40321 MiB process leaves GPU 0 free (hosts show too)' '
	sed "s|  box1: {ssh: box1,|  box1: {busy_gpu_memory: 50G, ssh: box1,|" boxes.yaml >big.yaml &&
	dispatch -i big.yaml -v solve --check --chip a100-sxm4-80gb --chips 6 >out 2>err &&
	test_grep "^host: *box1" out &&
	test_grep "box1: fits now: 6 of its 8 a100-sxm4-80gb free (GPU 0,2,3,5,6,7)" err &&
	dispatch -i big.yaml --json hosts show box1 >show.json &&
	python3 -c "import json; g = json.load(open(\"show.json\"))[\"gpus\"]; assert [x[\"index\"] for x in g if x[\"busy\"]] == [1, 4], g" &&
	dispatch -i boxes.yaml -v solve --check --chip a100-sxm4-80gb --chips 6 >out 2>err &&
	test_grep "^host: *box2" out
'

test_expect_success 'plain: box1 GPUs freed: 6 go to box1 again' '
	fake_gpus box1 "$DATA/nvidia-smi/dgx-a100-80gb-3-busy.gpus" &&
	dispatch -i boxes.yaml solve --check --chip a100-sxm4-80gb --chips 6 >out 2>/dev/null &&
	test_grep "^host: *box1" out
'

test_expect_success 'plain: nothing free anywhere: exit 1, no fallback to a plain host' '
	fake_gpus box2 "$DATA/nvidia-smi/dgx-a100-80gb-3-busy.gpus" "$DATA/nvidia-smi/dgx-a100-80gb-3-busy.apps" &&
	fake_gpus box1 "$DATA/nvidia-smi/dgx-a100-80gb-3-busy.gpus" "$DATA/nvidia-smi/dgx-a100-80gb-3-busy.apps" &&
	test_expect_code 1 dispatch -i boxes.yaml solve --check --chips 6 >out 2>err &&
	test_must_be_empty out &&
	test_grep "nothing fits 6 GPUs" err
'

test_done
