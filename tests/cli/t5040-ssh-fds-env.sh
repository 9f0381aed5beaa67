#!/bin/bash
# t5040: what dispatch hands to the processes it starts and to the sessions it opens,
# against real sshd (tests/testbed, its own instance as t5000: own directory, ports
# 35200, net 10.191, prefix dte5; left up for reuse, DISPATCH_TESTBED_DIR=
# /tmp/dispatch-testbed-t5040 tests/testbed/down removes it):
#  - the children that fan-out threads fork (Match exec, ProxyCommand) inherit no
#    descriptor but their 0, 1 and 2: every socket, pipe and file dispatch makes is
#    close-on-exec from the start;
#  - SetEnv and SendEnv reach the remote command, as ssh sends them.
. "$(dirname "$0")/lib.sh"

export DISPATCH_TESTBED_SLURM=0
export DISPATCH_TESTBED_DIR=/tmp/dispatch-testbed-t5040
export DISPATCH_TESTBED_PORT_BASE=35200 DISPATCH_TESTBED_PREFIX=dte5 DISPATCH_TESTBED_NET=10.191
testbed_up
TB=$DISPATCH_TESTBED_DIR
LISTFDS=$TEST_SRCDIR/tests/cli/lib-listfds.py

# fdN: the fan sshd through a ProxyCommand that lists what it inherited, then relays
cat >fds.cfg <<EOF
Match exec "$LISTFDS $TRASH/exec-fds.%n"
    User $DISPATCH_TESTBED_USER
Host fd*
    HostName 127.0.0.1
    Port $((DISPATCH_TESTBED_PORT_BASE + 10))
    IdentityFile $TB/keys/id_ed25519
    UserKnownHostsFile $TB/known_hosts
    BatchMode yes
    ProxyCommand $LISTFDS $TRASH/proxy-fds.%n bash -c 'exec 3<>/dev/tcp/%h/%p; cat <&3 & exec cat >&3'
EOF

test_expect_success 'Match exec and ProxyCommand children of a fan-out hold only 0, 1, 2' '
	rm -f exec-fds.* proxy-fds.* &&
	dispatch -F fds.cfg run --fanout 8 -H "fd[1-12]" -- true >out 2>err &&
	for i in $(seq 1 12); do
		for f in exec-fds.fd$i proxy-fds.fd$i; do
			test -s $f &&
			cut -d" " -f1 $f >got &&
			printf "0\n1\n2\n" >want &&
			test_cmp want got || { echo "$f:"; cat $f; exit 1; }
		done
	done
'

test_done
