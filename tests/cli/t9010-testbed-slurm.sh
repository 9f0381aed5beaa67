#!/bin/bash
# t9010: the testbed's SLURM cluster (tests/testbed/parts/30-slurm): through the
# login node hpc (OpenSSH's client, as the non-root test user) sinfo shows node1
# and node2 idle, a GPU job sees CUDA_VISIBLE_DEVICES, a 2-node job runs on both
# nodes, sacct reports COMPLETED, FAILED 3:0 and CANCELLED, SLURM's tools here reach
# the cluster with the exported SLURM_CONF, and down leaves nothing behind. The
# checks are tests/testbed/selftest-slurm (TAP). Skips unless root with network
# namespaces.
. "$(dirname "$0")/lib.sh"

skip() {
	echo "ok 1 # skip $1"
	echo "1..1"
	exit 0
}
[ "$(id -u)" = 0 ] || skip "not root: the testbed starts daemons and creates network namespaces"
unshare --net true 2>/dev/null || skip "cannot create network namespaces here"

bash "$TEST_SRCDIR/tests/testbed/selftest-slurm"
