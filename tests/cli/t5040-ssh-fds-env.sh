#!/bin/bash
# t5040: what dispatch hands to the processes it starts and to the sessions it opens,
# against real sshd (tests/testbed, its own instance as t5000: own directory, ports
# 35200, net 10.191, prefix dte5; left up for reuse, DISPATCH_TESTBED_DIR=
# /tmp/dispatch-testbed-t5040 tests/testbed/down removes it):
#  - the children that fan-out threads fork (Match exec, ProxyCommand) inherit no
#    descriptor but their 0, 1 and 2: every socket, pipe and file dispatch makes is
#    close-on-exec from the start;
#  - SetEnv and SendEnv reach the remote command, as ssh sends them, and cp's SFTP
#    subsystem through a master (an sshd of the test's own whose sftp Subsystem
#    writes down its environment, then runs OpenSSH's sftp-server);
#  - ~ in the config is the passwd entry's home, not $HOME, for a real login
#    (identity file and known_hosts) and for the master's ControlPath.
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

# sftpenv: an sshd of this test's own (AcceptEnv DISPATCH_TEST_ENV_*) whose sftp
# Subsystem writes its environment to a file of its own, then is OpenSSH's sftp-server.
# ssh -s sftp sends SendEnv and SetEnv on the session before asking for the subsystem;
# through a master, dispatch's new-session request carries them (the master passes on
# those its SendEnv names). Directly, libssh2 opens SFTP channels itself, with no way to
# send a request before the subsystem's: none is sent there (dispatch-cp(1)).
SFTP_SERVER=
for f in /usr/lib/openssh/sftp-server /usr/libexec/openssh/sftp-server /usr/libexec/sftp-server; do
	[ -x "$f" ] && SFTP_SERVER=$f && break
done
U=$DISPATCH_TESTBED_USER
RHOME=$(getent passwd "$U" | cut -d: -f6)
R=$RHOME/t5040.$$
SPORT=$((DISPATCH_TESTBED_PORT_BASE + 40))
sftpenv_down() { (. "$TEST_SRCDIR/tests/testbed/lib.sh" && tb_sshd_down sftpenv) 2>/dev/null; }
trap 'sftpenv_down; rm -rf "${R:?}" "$TRASH"' EXIT

test_expect_success 'cp through a master: SendEnv reaches the sftp subsystem' '
	test -n "$SFTP_SERVER" &&
	mkdir -p "$R/envs" &&
	printf "#!/bin/sh\nenv >%s/envs/env.\$\$\nexec %s\n" "$R" "$SFTP_SERVER" >"$R/sftp-env" &&
	chmod 755 "$R/sftp-env" && echo data >"$R/file" &&
	chown -R "$U" "$R" &&
	(. "$TEST_SRCDIR/tests/testbed/lib.sh" && tb_sshd_up sftpenv "" 127.0.0.1 "$SPORT" \
		"AcceptEnv DISPATCH_TEST_ENV_*" "Subsystem sftp $R/sftp-env") 2>/dev/null &&
	echo "[127.0.0.1]:$SPORT $(cut -d" " -f1,2 "$TB/sshd/sftpenv/host_ed25519.pub")" >skh &&
	cat >sftp.cfg <<-EOF &&
	Host sftpenv
	    HostName 127.0.0.1
	    Port $SPORT
	    User $U
	    IdentityFile $TB/keys/id_ed25519
	    IdentitiesOnly yes
	    UserKnownHostsFile $TRASH/skh
	    BatchMode yes
	    SendEnv DISPATCH_TEST_ENV_SEND*
	    ControlPath $TRASH/scm-%n
	EOF
	# the master starts without the variable: what the subsystem gets, dispatch sent
	ssh -F sftp.cfg -fN -o ControlMaster=yes -o ControlPersist=60 sftpenv </dev/null &&
	rc=0 &&
	{ DISPATCH_TEST_ENV_SEND1=via-mux-sftp dispatch -v -F sftp.cfg cp sftpenv:$R/file got \
		>out 2>err || rc=$?; } &&
	ssh -F sftp.cfg -O exit sftpenv 2>/dev/null &&
	test $rc = 0 &&
	test_grep "sftpenv: via master" err &&
	echo data >want && test_cmp want got &&
	cat "$R"/envs/env.* >envs &&
	test_grep "^DISPATCH_TEST_ENV_SEND1=via-mux-sftp$" envs
'

# ~ in the config is the passwd entry's home (ssh's, misc.c's tilde_expand), never
# $HOME: with HOME empty and elsewhere, the key, known_hosts and the master's socket
# are found under the passwd home, for a login and through a master.
test_expect_success '~ is the passwd home for a login and for ControlPath, not $HOME' '
	pwh=$TRASH/pwhome &&
	mkdir -p "$pwh" "$TRASH/envhome" &&
	cp "$TB/keys/id_ed25519" "$pwh/key" && cp "$TB/known_hosts" "$pwh/kh" &&
	cat >home.cfg <<-EOF &&
	Host home*
	    HostName 127.0.0.1
	    Port $((DISPATCH_TESTBED_PORT_BASE + 10))
	    User $DISPATCH_TESTBED_USER
	    IdentityFile ~/key
	    IdentitiesOnly yes
	    UserKnownHostsFile ~/kh
	    BatchMode yes
	Host home2
	    ControlPath ~/cm-%n
	EOF
	test_passwd_home "$pwh" &&
	HOME=$TRASH/envhome dispatch -v -F home.cfg run -H home1 -- echo logged-in >out 2>err &&
	echo logged-in >want && test_cmp want out &&
	test_grep "home1: direct" err &&
	ssh -F home.cfg -i "$pwh/key" -o UserKnownHostsFile="$pwh/kh" -o ControlPath="$pwh/cm-home2" \
		-fN -o ControlMaster=yes -o ControlPersist=60 home2 </dev/null &&
	rc=0 &&
	{ HOME=$TRASH/envhome dispatch -v -F home.cfg run -H home2 -- echo via >out 2>err || rc=$?; } &&
	ssh -F home.cfg -o ControlPath="$pwh/cm-home2" -O exit home2 2>/dev/null &&
	test_passwd_home "$HOME" &&
	test $rc = 0 &&
	test_grep "home2: via master" err
'

test_done
