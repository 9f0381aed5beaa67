#!/bin/bash
# t5400: hosts show and hosts discover against the test bed: the SLURM cluster
# through its login node hpc (partitions, nodes, a running job's GPUs counted as
# used), plain hosts with no GPU tool, and a plain host with a fake nvidia-smi
# (tests/cli/lib-testbed-gpu.sh) printing an 8-GPU box with 3 busy. The discovered
# entries are loaded back as an inventory. Skips unless root (testbed).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-testbed-gpu.sh"
DATA=$TEST_SRCDIR/tests/unit/data

test_expect_success 'show and discover need one host' '
	test_expect_code 2 dispatch hosts show 2>err &&
	test_grep "needs one HOST" err
'

tb_up
claim_boxes box2 box3
# box3's GPU lock directory is the file's own (never made: no leases): every box of
# every test bed instance shares this machine's /tmp, and a --gpus job of another file
# (t7420) holds GPU 0 in the default one while it runs (a CI run's "5 free now" failed so)
awk -v ld="/tmp/dispatch-gpus-t5400-$$" '{ print } /^  box3:$/ { print "    gpu_lock_dir: " ld }' \
	"$DISPATCH_INVENTORY" >inv.yaml || exit 1
export DISPATCH_INVENTORY=$PWD/inv.yaml

test_expect_success 'show: partitions and nodes of the SLURM cluster' '
	dispatch hosts show hpc >out &&
	test_grep "^hpc: SLURM ${TB_SLURM_VERSION%.*}" out &&
	test_grep "^gpu\* *UP *2 *4 *UNLIMITED" out &&
	test_grep "^cpu  *UP" out &&
	test_grep "^node1  *[A-Z+]* *[0-9]/2 *a100 [0-2]/2 *gpu,cpu" out &&
	test_grep "^node2 " out
'

test_expect_success 'show: GPUs of a running job count as used on its node' '
	job=$(submit_gpu_job node1) &&
	dispatch hosts show hpc >out &&
	test_grep "^node1  *[A-Z+]* *[12]/2 *a100 2/2 " out &&
	dispatch --json hosts show hpc >show.json &&
	test "$(jq ".nodes[] | select(.name == \"node1\") | .gpus[0].used" show.json)" = 2 &&
	test "$(jq ".nodes[] | select(.name == \"node1\") | .gpus[0].free" show.json)" = 0 &&
	test "$(jq -r ".nodes[] | select(.name == \"node1\") | .gpus[0].type" show.json)" = a100 &&
	test "$(jq ".partitions[] | select(.name == \"gpu\") | .default" show.json)" = true &&
	test "$(jq ".partitions[] | select(.name == \"gpu\") | .gpus[0].total" show.json)" = 4 &&
	test "$(jq -r .kind show.json)" = slurm &&
	dispatch run -H hpc -- scancel "$job" &&
	wait_gpus_free node1 &&
	dispatch --json hosts show hpc >show.json &&
	test "$(jq ".nodes[] | select(.name == \"node1\") | .gpus[0].used" show.json)" = 0
'

test_expect_success 'discover: the SLURM host, GRES type a100 mapped back by gres_mapping' '
	dispatch hosts discover hpc >entry &&
	test_grep "^hpc:" entry &&
	test_grep "^  type: slurm" entry &&
	test_grep "^    - {name: gpu, default: true}" entry &&
	test_grep "^    a100-sxm4-80gb: 4 " entry &&
	dispatch --json hosts discover hpc >d.json &&
	test "$(jq -r ".partitions[0].name" d.json)" = gpu &&
	test "$(jq ".chips[\"a100-sxm4-80gb\"]" d.json)" = 4
'

test_expect_success 'discover without gres_mapping: a comment suggests one' '
	printf "clusters:\n  tb: {root: /r, work: /w}\nhosts: {}\n" >bare.yaml &&
	dispatch -i bare.yaml hosts discover hpc >entry &&
	test_grep "# gres type .a100. (4 GPUs) has no gres_mapping" entry &&
	test_grep "cluster: tb" entry
'

test_expect_success 'a plain host without nvidia-smi: nothing to show, chips {}' '
	dispatch hosts show box2 >out &&
	test_grep "no nvidia-smi on the host" out &&
	dispatch hosts discover box2 >entry &&
	test_grep "^  chips: {}" entry &&
	dispatch --json hosts show box2 >s.json &&
	test "$(jq -r .kind s.json)" = plain &&
	test "$(jq .gpu_tool s.json)" = null
'

test_expect_success 'a plain host with nvidia-smi: GPUs, chips and busy ones' '
	fake_gpus box3 "$DATA/nvidia-smi/dgx-a100-80gb-3-busy.gpus" "$DATA/nvidia-smi/dgx-a100-80gb-3-busy.apps" &&
	dispatch hosts show box3 >out &&
	test_grep "^box3: nvidia-smi, 8 GPUs (5 free now)" out &&
	test_grep "^0  *a100-sxm4-80gb  *81920 MiB  *2  *40833 MiB  *busy" out &&
	test_grep "^3  *a100-sxm4-80gb .* 42 MiB  *free" out &&
	dispatch --json hosts show box3 >s.json &&
	test "$(jq "[.gpus[] | select(.busy)] | length" s.json)" = 3 &&
	dispatch hosts discover box3 >entry &&
	test_grep "^    a100-sxm4-80gb: 8 " entry
'

test_expect_success 'the discovered entries load as an inventory' '
	{
		printf "gres_mapping:\n  a100-sxm4-80gb: a100\nclusters:\n  testbed: {root: /r, work: /w}\nhosts:\n" &&
		for h in hpc box2 box3; do
			dispatch hosts discover $h | sed "s/^/  /" || exit 1
		done
	} >found.yaml &&
	dispatch -i found.yaml --json hosts >hosts.json &&
	test "$(jq -r "[.hosts[] | select(.source == \"inventory\") | .name] | join(\",\")" hosts.json)" = hpc,box2,box3 &&
	test "$(jq ".hosts[] | select(.name == \"box3\") | .chips[\"a100-sxm4-80gb\"]" hosts.json)" = 8 &&
	test "$(jq -r ".hosts[] | select(.name == \"hpc\") | .type" hosts.json)" = slurm
'

test_expect_success 'an unreachable host: exit 255' '
	test_expect_code 255 dispatch hosts show down1 2>err &&
	test_grep "down1" err
'

test_done
