#!/bin/bash
# t9020: the test bed's containers (tests/testbed/parts/40-containers): the cached
# image and its exports, rootless podman on box1 (exit status, bind mount, file
# owner, a killed run removed by name), Charliecloud on both nodes of the SLURM
# cluster, the Pyxis stand-in through srun and sbatch with its switches (hpc-nopyxis,
# hpc-nopyxis2). The checks are tests/testbed/selftest-containers (TAP), on the
# instance the DISPATCH_TESTBED_* settings name, as the other cli tests. Skips unless
# root with network namespaces.
. "$(dirname "$0")/lib.sh"

skip() {
	echo "ok 1 # skip $1"
	echo "1..1"
	exit 0
}
[ "$(id -u)" = 0 ] || skip "not root: the testbed starts daemons and creates network namespaces"
unshare --net true 2>/dev/null || skip "cannot create network namespaces here"

bash "$TEST_SRCDIR/tests/testbed/selftest-containers"
