#!/bin/bash
# t9000: the testbed (tests/testbed/up, down) brings up real sshd hosts that
# OpenSSH's own client can use as the ssh_config says (plain, fan-out, ProxyJump
# over one and two hops, dead host, changed host key, passphrase key), and down
# leaves nothing behind. The checks are tests/testbed/selftest (TAP); this runs it
# with HOME in a trash directory. Skips unless root with network namespaces.
. "$(dirname "$0")/lib.sh"

skip() {
	echo "ok 1 # skip $1"
	echo "1..1"
	exit 0
}
[ "$(id -u)" = 0 ] || skip "not root: the testbed starts sshd and creates network namespaces"
unshare --net true 2>/dev/null || skip "cannot create network namespaces here"

bash "$TEST_SRCDIR/tests/testbed/selftest"
