#!/bin/bash
# t7610: container jobs on the 2-node SLURM test cluster (SLURM 22.05 only: the
# runtimes are the host's). Real Charliecloud (hpc: container_runtime: charliecloud,
# the directory image DISPATCH_TESTBED_IMAGE): each rank prints the image's
# os-release and its rank, the master address comes out right without scontrol,
# outputs belong to the test user. The Pyxis stand-in of the test bed (a SPANK
# plugin with Pyxis's option names, tests/testbed/spank/): the options reach srun's
# tasks on both nodes with an absolute /bin/bash; with the plugin off on node2 the
# bootstrap's not-inside check fires; with no plugin the check before submitting
# says srun has no --container-image. Also: a missing image file (exit 4), a
# relative one for Pyxis (exit 2).
. "$(dirname "$0")/lib.sh"

testbed_up
[ "${DISPATCH_TESTBED_SLURM:-1}" = 1 ] || [ "${DISPATCH_TESTBED_SLURM:-}" = 22.05 ] ||
	skip_rest "the container runtimes are the host's (SLURM 22.05)"
[ -n "${DISPATCH_TESTBED_IMAGE:-}" ] && [ -n "${DISPATCH_TESTBED_SQSH:-}" ] ||
	fail_rest "the test bed exports no DISPATCH_TESTBED_IMAGE / DISPATCH_TESTBED_SQSH"
grep -q "container_runtime: charliecloud" "$DISPATCH_INVENTORY" ||
	fail_rest "the test bed's inventory gives hpc no container_runtime: charliecloud"
export DISPATCH_STATE_DIR="$TRASH/state"
CL=$DISPATCH_TESTBED_DIR/cluster
IMG=$DISPATCH_TESTBED_IMAGE
SQSH=$DISPATCH_TESTBED_SQSH

# Pyxis hosts on the same cluster: hpc itself, hpc-nopyxis (no plugin loaded) and
# hpc-nopyxis2 (the plugin off on node2), in an inventory of our own.
cp "$DISPATCH_INVENTORY" inv.yaml &&
for h in hpc hpc-nopyxis hpc-nopyxis2; do
	printf '  %s:\n    ssh: %s\n    cluster: testbed\n    type: slurm\n    partitions: [gpu, cpu]\n    cpu_partitions: [cpu]\n    mem: 1000M\n    container_runtime: pyxis\n' \
		"px-$h" "$h"
done >>inv.yaml
export DISPATCH_INVENTORY=$PWD/inv.yaml

jfield() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); [d := d[k] for k in sys.argv[2:]]; print(d)' "$@"; }

test_expect_success 'Charliecloud: two ranks in the image, master address without scontrol' '
	dispatch --json submit -H hpc -N 2 -J chjob --container-image "$IMG" -- \
		"echo rank=\$DISPATCH_NODE_RANK of=\$DISPATCH_NNODES master=\$DISPATCH_MASTER_ADDR \$(. /etc/os-release; echo \$ID-\$VERSION_ID) ch=\${CH_RUNNING:+yes} scontrol=\$(command -v scontrol || echo none); echo done >ch-$$-\$DISPATCH_NODE_RANK.txt" \
		>sub.json &&
	job=$(jfield sub.json job) && log=$(jfield sub.json log) &&
	test "$(jfield sub.json container runtime)" = charliecloud &&
	dispatch wait --timeout 120 "$job" &&
	test_grep "^rank=0 of=2 master=node1 debian-12 ch=yes scontrol=none\$" "$log" &&
	test_grep "^rank=1 of=2 master=node1 debian-12 ch=yes scontrol=none\$" "$log" &&
	test_grep "^dispatch: node1 runs in $IMG: Debian GNU/Linux 12 (bookworm)" "$log" &&
	test_grep "^dispatch: node2 runs in $IMG: Debian GNU/Linux 12 (bookworm)" "$log" &&
	test "$(stat -c %U "$CL/work/ch-$$-0.txt")" = "$DISPATCH_TESTBED_USER" &&
	test "$(stat -c %U "$CL/work/ch-$$-1.txt")" = "$DISPATCH_TESTBED_USER" &&
	test "$(stat -c %U "$log")" = "$DISPATCH_TESTBED_USER"
'

test_expect_success 'the example training job (its job file: 2 nodes, a GPU each) runs in the image' '
	dispatch --json submit-packed -H hpc --repo "$TEST_SRCDIR/examples/train" --dirty \
		-f "$TEST_SRCDIR/examples/train/job.yaml" --cpus-per-task 1 --container-image "$IMG" >sub.json &&
	job=$(jfield sub.json job) && log=$(jfield sub.json log) &&
	dispatch wait --timeout 300 "$job" &&
	test_grep "^node 0/2 on node1: job ${job%@hpc}, master node1:" "$log" &&
	test_grep "^node 1/2 on node2: job ${job%@hpc}, master node1:" "$log" &&
	test_grep "^node 0: done\$" "$log" && test_grep "^node 1: done\$" "$log" &&
	test "$(grep -c " rank [0-3]: done on node[12], 289 parameters, checksum [0-9a-f]*\$" "$log")" = 4 &&
	test "$(sed -n "s/.* checksum \([0-9a-f]*\)\$/\1/p" "$log" | sort -u | wc -l)" = 1 &&
	test_grep "^dispatch: node2 runs in $IMG: Debian" "$log"
'

test_expect_success 'Pyxis: the options reach the tasks on both nodes; /bin/bash is absolute' '
	dispatch --json submit -H px-hpc -N 2 --container-image "$SQSH" -- \
		"echo rank=\$DISPATCH_NODE_RANK host=\$(hostname) marker=\$(test -d /run/dispatch-stage && echo yes) \$(. /etc/os-release; echo \$ID-\$VERSION_ID) pwd=\$PWD" \
		>sub.json &&
	job=$(jfield sub.json job) && log=$(jfield sub.json log) &&
	test_grep "/bin/bash " "$(jfield sub.json stage_dir)/sbatch.sh" &&
	test_grep -- "--container-image='"'"'$SQSH'"'"' " "$(jfield sub.json stage_dir)/sbatch.sh" &&
	dispatch wait --timeout 120 "$job" &&
	test_grep "^rank=0 host=node1 marker=yes debian-12 pwd=$CL/work\$" "$log" &&
	test_grep "^rank=1 host=node2 marker=yes debian-12 pwd=$CL/work\$" "$log"
'

test_expect_success 'Pyxis off on node2: the bootstrap there says it is not inside' '
	dispatch --json submit -H px-hpc-nopyxis2 -N 2 --container-image "$SQSH" -- "echo ran-\$DISPATCH_NODE_RANK" >sub.json &&
	job=$(jfield sub.json job) && log=$(jfield sub.json log) &&
	test_expect_code 1 dispatch wait --timeout 120 "$job" &&
	test_grep "^dispatch: node2 is not inside container $SQSH: is pyxis installed there?\$" "$log" &&
	! grep -q "^ran-1\$" "$log"
'

test_expect_success 'no Pyxis plugin: the check before submitting says so (exit 1)' '
	test_expect_code 1 dispatch submit -H px-hpc-nopyxis --container-image "$SQSH" -- true 2>err &&
	test_grep "^dispatch: px-hpc-nopyxis: srun has no --container-image (Pyxis is not installed)\$" err
'

test_expect_success 'an image file that is not there: exit 4; a relative one for Pyxis: exit 2' '
	test_expect_code 4 dispatch submit -H px-hpc --container-image /nonexistent/x.sqsh -- true 2>err &&
	test_grep "^dispatch: container image '"'"'/nonexistent/x.sqsh'"'"' not found on px-hpc\$" err &&
	test_expect_code 4 dispatch submit -H hpc --container-image /nonexistent/dir -- true 2>err &&
	test_grep "^dispatch: container image '"'"'/nonexistent/dir'"'"' not found on hpc\$" err &&
	test_expect_code 2 dispatch submit -H px-hpc --container-image images/x.sqsh -- true 2>err &&
	test_grep "Pyxis would read it as a registry image" err
'

test_done
