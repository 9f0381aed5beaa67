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
	# the lists are written before the connection goes on: whether every login
	# made it in time on a loaded machine does not matter here
	{ dispatch -F fds.cfg run --fanout 8 -H "fd[1-8]" -- true >out 2>err || cat err; } &&
	for i in $(seq 1 8); do
		for f in exec-fds.fd$i proxy-fds.fd$i; do
			test -s $f &&
			cut -d" " -f1 $f >got &&
			printf "0\n1\n2\n" >want &&
			test_cmp want got || { echo "$f:"; cat $f; exit 1; }
		done
	done
'

# envN: the fan sshd (AcceptEnv DISPATCH_TEST_ENV_*) with SendEnv and SetEnv
cat >env.cfg <<EOF
Host env*
    HostName 127.0.0.1
    Port $((DISPATCH_TESTBED_PORT_BASE + 10))
    User $DISPATCH_TESTBED_USER
    IdentityFile $TB/keys/id_ed25519
    UserKnownHostsFile $TB/known_hosts
    BatchMode yes
    SendEnv DISPATCH_TEST_ENV_SEND* DISPATCH_TEST_ENV_NOT
    SendEnv -DISPATCH_TEST_ENV_NOT
    SetEnv DISPATCH_TEST_ENV_SET="set value" DISPATCH_TEST_ENV_REFUSED_BY_NONE=x OTHER_REFUSED=1
EOF
show_env='env | grep "^DISPATCH_TEST_ENV_\|^OTHER_REFUSED" | sort'

test_expect_success 'SendEnv and SetEnv reach the remote command; values never logged' '
	DISPATCH_TEST_ENV_SEND1=s3cr3t-one DISPATCH_TEST_ENV_SEND2="two words" \
	DISPATCH_TEST_ENV_NOT=dropped \
		dispatch -v -F env.cfg run -H env1 -- "$show_env" >out 2>err &&
	cat >want <<-\EOT &&
	DISPATCH_TEST_ENV_REFUSED_BY_NONE=x
	DISPATCH_TEST_ENV_SEND1=s3cr3t-one
	DISPATCH_TEST_ENV_SEND2=two words
	DISPATCH_TEST_ENV_SET=set value
	EOT
	test_cmp want out &&
	test_grep "env1: sending environment variables DISPATCH_TEST_ENV_SEND1, DISPATCH_TEST_ENV_SEND2, DISPATCH_TEST_ENV_SET, DISPATCH_TEST_ENV_REFUSED_BY_NONE, OTHER_REFUSED (" err &&
	! grep "s3cr3t\|set value\|two words" err
'

test_expect_success 'through a ControlMaster: the variables travel in the new-session request' '
	cat env.cfg >mux.cfg &&
	printf "    ControlPath $TRASH/cm-%%n\n" >>mux.cfg &&
	ssh -F mux.cfg -fN -o ControlMaster=yes -o ControlPersist=60 env1 </dev/null &&
	rc=0 &&
	{ DISPATCH_TEST_ENV_SEND1=via-mux dispatch -v -F mux.cfg run -H env1 -- "$show_env" \
		>out 2>err || rc=$?; } &&
	ssh -F mux.cfg -O exit env1 2>/dev/null &&
	test $rc = 0 &&
	test_grep "env1: via master" err &&
	test_grep "env1: sending environment variables DISPATCH_TEST_ENV_SEND1, DISPATCH_TEST_ENV_SET," err &&
	! grep via-mux err &&
	test_grep "^DISPATCH_TEST_ENV_SEND1=via-mux$" out
'

test_done
