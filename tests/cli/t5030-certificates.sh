#!/bin/bash
# t5030: OpenSSH certificates against sshd instances of this test's own (127.0.0.1,
# ports 25301-25305), each case also run with OpenSSH's ssh on the same config, which
# must agree (both log in, or both refuse):
#  - user certificates (sshd's TrustedUserCAKeys, no authorized_keys at all): ED25519,
#    RSA (signed with rsa-sha2-512) and ECDSA from files beside the key, one given by
#    CertificateFile, all three through a real ssh-agent; an expired one is refused,
#    and dispatch says it expired;
#  - host certificates (@cert-authority in known_hosts, no plain host key listed):
#    accepted for the host name and for HostKeyAlias; refused for an unknown CA, a
#    revoked CA, a revoked host key, a wrong principal, an expiry; a server that offers
#    its host key only as a certificate is refused by dispatch, explicitly (libssh2
#    1.11.1 cannot verify such a key exchange; ssh can);
#  - run on each, cp on one.
# Needs root (sshd, a test user); logs in as a non-root user, as tests/testbed does.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip_rest "not root: starts sshd and logs in as a test user"
SSHD=$(command -v sshd || echo /usr/sbin/sshd)
if ! [ -x "$SSHD" ] || ! command -v ssh >/dev/null || ! command -v ssh-agent >/dev/null; then
	skip_rest "needs OpenSSH's sshd, ssh and ssh-agent"
fi

USER_=${DISPATCH_TESTBED_USER:-dispatch-test}
if ! id -u "$USER_" >/dev/null 2>&1; then
	useradd -m -s /bin/bash -c "dispatch testbed" "$USER_" || fail_rest "cannot create user $USER_"
fi
# useradd leaves the account locked, which sshd refuses even for keys (TESTBED.md)
[ "$(getent shadow "$USER_" | cut -d: -f2)" = "*" ] || usermod -p '*' "$USER_"

PORT=25300
SRV=$TRASH/srv
K=$TRASH/keys
# sshd reads the CA files (and the test user's shell the cwd) with the user's rights
chmod 755 "$TRASH"
mkdir -p "$SRV" "$K" "$K/elsewhere" /run/sshd

cleanup() {
	local p
	for p in "$SRV"/*/pid; do
		[ -f "$p" ] && kill "$(cat "$p")" 2>/dev/null
	done
	[ -z "${SSH_AGENT_PID:-}" ] || kill "$SSH_AGENT_PID" 2>/dev/null
	rm -rf "$TRASH"
}
trap cleanup EXIT
[ -z "${T5030_KEEP:-}" ] || trap - EXIT   # debugging: keep the servers and files

kg() { ssh-keygen -q -N '' -C "$2" -t "$3" -f "$1" "${@:4}"; }
# sign OUT-OF KEY.pub with CA: ssh-keygen writes KEY-cert.pub
sign() { local ca=$1 pub=$2; shift 2; ssh-keygen -q -s "$ca" "$@" "$pub"; }

# The CAs: users (ED25519 and RSA), hosts, and one that no known_hosts line trusts.
kg "$K/user_ca" user-ca ed25519
kg "$K/user_ca_rsa" user-ca-rsa rsa -b 3072
kg "$K/host_ca" host-ca ed25519
kg "$K/other_ca" other-ca ed25519
cat "$K/user_ca.pub" "$K/user_ca_rsa.pub" >"$SRV/user_cas"

# User keys with their certificates beside them (ssh's -cert.pub), an expired one,
# and one whose certificate lives elsewhere (CertificateFile).
kg "$K/ued" ued ed25519 && sign "$K/user_ca" "$K/ued.pub" -I ued-cert -n "$USER_" -V -1h:+1d -z 1
kg "$K/ursa" ursa rsa -b 2048 &&
	sign "$K/user_ca_rsa" "$K/ursa.pub" -t rsa-sha2-512 -I ursa-cert -n "$USER_" -V -1h:+1d -z 2
kg "$K/uec" uec ecdsa -b 384 &&
	sign "$K/user_ca_rsa" "$K/uec.pub" -t rsa-sha2-256 -I uec-cert -n "$USER_" -V -1h:+1d -z 5
kg "$K/uold" uold ed25519 &&
	sign "$K/user_ca" "$K/uold.pub" -I uold-cert -n "$USER_" -V 20200101:20200102 -z 3
kg "$K/ufar" ufar ed25519 && sign "$K/user_ca" "$K/ufar.pub" -I ufar-cert -n "$USER_" -V -1h:+1d -z 4 &&
	mv "$K/ufar-cert.pub" "$K/elsewhere/ufar.cert"
# public halves only, for IdentitiesOnly with the agent: ued's key and certificate, and
# ued's key without its certificate
cp "$K/ued.pub" "$K/agentonly.pub" && cp "$K/ued-cert.pub" "$K/agentonly-cert.pub"
cp "$K/ued.pub" "$K/agentkeyonly.pub"
chmod 600 "$K"/ued "$K"/ursa "$K"/uec "$K"/uold "$K"/ufar

# sshd NAME PORT HOST-CERT-OPTIONS... : an sshd with an ED25519 host key whose
# certificate host_ca signs with the options given (none: no certificate)
sshd_up() {
	local name=$1 port=$2 d=$SRV/$1
	shift 2
	mkdir -p "$d"
	kg "$d/host_ed25519" "host-$name" ed25519
	kg "$d/host_ecdsa" "host-$name" ecdsa
	{
		printf '%s\n' "Port $port" "ListenAddress 127.0.0.1" "HostKey $d/host_ed25519" \
			"HostKey $d/host_ecdsa" "PidFile $d/pid" "TrustedUserCAKeys $SRV/user_cas" \
			"AuthorizedKeysFile none" "PasswordAuthentication no" \
			"KbdInteractiveAuthentication no" "UsePAM no" "StrictModes no" \
			"AllowUsers $USER_" "MaxAuthTries 20" "LogLevel VERBOSE" \
			"Subsystem sftp internal-sftp"
		if [ $# -gt 0 ]; then
			sign "$K/host_ca" "$d/host_ed25519.pub" -h "$@"
			echo "HostCertificate $d/host_ed25519-cert.pub"
		fi
	} >"$d/sshd_config"
	[ -z "${EXTRA:-}" ] || echo "$EXTRA" >>"$d/sshd_config"
	if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
		echo "port $port is in use already" >"$d/log"
		return 1
	fi
	"$SSHD" -f "$d/sshd_config" -E "$d/log" || return 1
	# up when it answers with its banner (bounded: 100 tries)
	local _
	for _ in $(seq 100); do
		if exec 3<>"/dev/tcp/127.0.0.1/$port" 2>/dev/null; then
			if read -r -t 5 line <&3 && [ "${line#SSH-}" != "$line" ]; then
				exec 3>&-
				return 0
			fi
			exec 3>&-
		fi
		sleep 0.1
	done
	return 1
}

sshd_failed() { fail_rest "sshd '$1' did not start: $(tail -n 3 "$SRV/$1/log" 2>/dev/null)"; }
sshd_up users $((PORT + 1)) || sshd_failed users
sshd_up hcert $((PORT + 2)) -I hcert -n 127.0.0.1,certhost -V -1h:+1d -z 10 || sshd_failed hcert
sshd_up hwrong $((PORT + 3)) -I hwrong -n elsewhere.example -V -1h:+1d -z 11 ||
	sshd_failed hwrong
sshd_up hexpired $((PORT + 4)) -I hexpired -n 127.0.0.1 -V 20200101:20200102 -z 12 ||
	sshd_failed hexpired
EXTRA="HostKeyAlgorithms ssh-ed25519-cert-v01@openssh.com" \
	sshd_up honly $((PORT + 5)) -I honly -n 127.0.0.1 -V -1h:+1d -z 13 || sshd_failed honly

# known_hosts files: the users' sshd by its plain key; the certificate hosts only by
# their CA, under several policies.
echo "[127.0.0.1]:$((PORT + 1)) $(cut -d' ' -f1,2 "$SRV/users/host_ed25519.pub")" >"$TRASH/kh_plain"
echo "@cert-authority [127.0.0.1]:* $(cat "$K/host_ca.pub")" >"$TRASH/kh_ca"
echo "@cert-authority certhost $(cat "$K/host_ca.pub")" >"$TRASH/kh_alias"
echo "@cert-authority [127.0.0.1]:* $(cat "$K/other_ca.pub")" >"$TRASH/kh_other"
{ cat "$TRASH/kh_ca"; echo "@revoked * $(cat "$K/host_ca.pub")"; } >"$TRASH/kh_revoked_ca"
{ cat "$TRASH/kh_ca"; echo "@revoked * $(cat "$SRV/hcert/host_ed25519.pub")"; } >"$TRASH/kh_revoked_key"
{ cat "$TRASH/kh_ca"; echo "[127.0.0.1]:$((PORT + 3)) $(cut -d' ' -f1,2 "$SRV/hwrong/host_ed25519.pub")"; } >"$TRASH/kh_wrong_known"

cat >"$TRASH/config" <<EOF
Host u-ed
    Port $((PORT + 1))
    IdentityFile $K/ued
Host u-rsa
    Port $((PORT + 1))
    IdentityFile $K/ursa
Host u-ec
    Port $((PORT + 1))
    IdentityFile $K/uec
Host u-old
    Port $((PORT + 1))
    IdentityFile $K/uold
Host u-far
    Port $((PORT + 1))
    IdentityFile $K/ufar
    CertificateFile $K/elsewhere/ufar.cert
Host u-nocert
    Port $((PORT + 1))
    IdentityFile $K/ufar
Host u-agent
    Port $((PORT + 1))
    IdentityFile $K/none
    IdentitiesOnly no
    IdentityAgent $TRASH/agent.sock
Host u-far-agent
    Port $((PORT + 1))
    IdentityFile $K/none
    CertificateFile $K/elsewhere/ufar.cert
    IdentitiesOnly no
    IdentityAgent $TRASH/agent.sock
Host u-agent-only
    Port $((PORT + 1))
    IdentityFile $K/agentonly
    IdentityAgent $TRASH/agent.sock
Host u-agent-keyonly
    Port $((PORT + 1))
    IdentityFile $K/agentkeyonly
    IdentityAgent $TRASH/agent.sock
Host u-*
    UserKnownHostsFile $TRASH/kh_plain
Host h-ok
    Port $((PORT + 2))
    UserKnownHostsFile $TRASH/kh_ca
Host h-alias
    Port $((PORT + 2))
    HostKeyAlias certhost
    UserKnownHostsFile $TRASH/kh_alias
Host h-jump
    Port $((PORT + 2))
    ProxyJump u-ed
    UserKnownHostsFile $TRASH/kh_ca
Host h-other
    Port $((PORT + 2))
    UserKnownHostsFile $TRASH/kh_other
Host h-revoked-ca
    Port $((PORT + 2))
    UserKnownHostsFile $TRASH/kh_revoked_ca
Host h-revoked-key
    Port $((PORT + 2))
    UserKnownHostsFile $TRASH/kh_revoked_key
Host h-wrong
    Port $((PORT + 3))
    UserKnownHostsFile $TRASH/kh_ca
Host h-nocert
    Port $((PORT + 1))
    UserKnownHostsFile $TRASH/kh_ca
Host h-wrong-known
    Port $((PORT + 3))
    UserKnownHostsFile $TRASH/kh_wrong_known
Host h-expired
    Port $((PORT + 4))
    UserKnownHostsFile $TRASH/kh_ca
Host h-only
    Port $((PORT + 5))
    UserKnownHostsFile $TRASH/kh_ca
Host h-*
    IdentityFile $K/ued
Host *
    HostName 127.0.0.1
    User $USER_
    IdentitiesOnly yes
    IdentityAgent none
    GlobalKnownHostsFile /dev/null
    StrictHostKeyChecking yes
    BatchMode yes
    ConnectTimeout 10
EOF
export DISPATCH_SSH_CONFIG=$TRASH/config

# both HOST: dispatch and ssh log in and agree on `id -un`
both() {
	dispatch run -H "$1" -- id -un >dp.out &&
	ssh -F "$TRASH/config" "$1" id -un </dev/null >ssh.out &&
	echo "$USER_" >want && test_cmp want dp.out && test_cmp want ssh.out
}
# neither HOST: both refuse (exit 255); dispatch's message in err
neither() {
	test_expect_code 255 dispatch run -H "$1" -- true 2>err &&
	test_expect_code 255 ssh -F "$TRASH/config" "$1" true </dev/null 2>ssh.err
}
# accepted_last NAME TYPE ID: the last login sshd NAME accepted was with a TYPE
# certificate of that ID (sshd logs "Accepted publickey ... ED25519-CERT ... ID x")
accepted_last() {
	grep "Accepted publickey for $USER_" "$SRV/$1/log" | tail -n 1 >last &&
	test_grep " $2 .* ID $3 " last
}

test_expect_success 'user ED25519 certificate beside its key (no authorized_keys)' '
	dispatch run -H u-ed -- id -un >out && echo "$USER_" >want && test_cmp want out &&
	accepted_last users ED25519-CERT ued-cert &&
	both u-ed
'

test_expect_success 'user RSA certificate beside its key, rsa-sha2-512 signatures' '
	dispatch run -H u-rsa -- id -un >out && test_cmp want out &&
	accepted_last users RSA-CERT ursa-cert &&
	both u-rsa
'

test_expect_success 'user ECDSA (P-384) certificate beside its key, signed rsa-sha2-256' '
	dispatch run -H u-ec -- id -un >out && test_cmp want out &&
	accepted_last users ECDSA-CERT uec-cert &&
	both u-ec
'

test_expect_success 'CertificateFile: a certificate away from its key' '
	dispatch run -H u-far -- id -un >out && test_cmp want out &&
	accepted_last users ED25519-CERT ufar-cert &&
	both u-far
'

test_expect_success 'the same key without its certificate is refused (the cert did it)' '
	neither u-nocert &&
	test_grep "key .*ufar: refused by the server" err
'

test_expect_success 'an expired user certificate is refused, and dispatch says it expired' '
	neither u-old &&
	test_grep "certificate .*uold-cert.pub: refused by the server (ED25519 user certificate .uold-cert. (serial 3) signed by ED25519 CA SHA256:[^ ]* has expired: valid from 2020-01-01T00:00:00Z to 2020-01-02T00:00:00Z)" err &&
	grep -c "Accepted publickey" "$SRV/users/log" >n1 &&
	test_expect_code 255 dispatch run -H u-old -- true 2>/dev/null &&
	grep -c "Accepted publickey" "$SRV/users/log" >n2 && test_cmp n1 n2
'

eval "$(ssh-agent -s -a "$TRASH/agent.sock")" >/dev/null
test_expect_success 'agent: the RSA certificate ssh-add loaded with its key' '
	ssh-add "$K/ursa" 2>added && test_grep "Certificate added" added &&
	dispatch run -H u-agent -- id -un >out && test_cmp want out &&
	accepted_last users RSA-CERT ursa-cert &&
	both u-agent
'

test_expect_success 'agent: the ED25519 certificate, the RSA one gone' '
	ssh-add -D 2>/dev/null && ssh-add "$K/ued" 2>added && test_grep "Certificate added" added &&
	dispatch run -H u-agent -- id -un >out && test_cmp want out &&
	accepted_last users ED25519-CERT ued-cert &&
	both u-agent
'

test_expect_success 'agent with IdentitiesOnly: only the certificate an identity file has beside it' '
	ssh-add -D 2>/dev/null && ssh-add "$K/ursa" "$K/ued" 2>added &&
	test "$(grep -c "Certificate added" added)" = 2 &&
	dispatch run -H u-agent-only -- id -un >out && test_cmp want out &&
	accepted_last users ED25519-CERT ued-cert &&
	both u-agent-only &&
	accepted_last users ED25519-CERT ued-cert &&
	neither u-agent-keyonly &&
	test_grep "agent: 1 key refused" err
'

test_expect_success 'agent: the ECDSA certificate' '
	ssh-add -D 2>/dev/null && ssh-add "$K/uec" 2>added && test_grep "Certificate added" added &&
	dispatch run -H u-agent -- id -un >out && test_cmp want out &&
	accepted_last users ECDSA-CERT uec-cert &&
	both u-agent
'

test_expect_success 'CertificateFile whose key only the agent holds: the agent signs' '
	ssh-add -D 2>/dev/null && ssh-add "$K/ufar" 2>added && ! grep "Certificate added" added &&
	dispatch run -H u-far-agent -- id -un >out && test_cmp want out &&
	accepted_last users ED25519-CERT ufar-cert &&
	both u-far-agent &&
	ssh-add -D 2>/dev/null &&
	neither u-far-agent &&
	test_grep "certificate .*ufar.cert: neither an identity file nor the agent holds its key" err
'

test_expect_success 'agent: an expired certificate is refused, and said so' '
	ssh-add -D 2>/dev/null && ssh-add "$K/uold" 2>/dev/null &&
	neither u-agent &&
	test_grep "agent certificate .* refused by the server (ED25519 user certificate .uold-cert. .* has expired" err
'

test_expect_success 'host certificate signed by the CA known_hosts names: accepted' '
	both h-ok &&
	dispatch -v run -H h-ok -- true 2>log &&
	test_grep "server host certificate fetched" log
'

test_expect_success 'host certificate for HostKeyAlias (its principal), CA under that name' '
	both h-alias
'

test_expect_success 'through ProxyJump: the certificate is fetched through the hop too' '
	both h-jump &&
	dispatch -v run -H h-jump -- true 2>log &&
	test_grep "h-jump: server host certificate fetched" log &&
	test_grep "h-jump: connecting to 127.0.0.1 port $((PORT + 2)) through u-ed" log
'

test_expect_success 'cp to and from a host known only by its CA' '
	echo "through a certificate" >local &&
	dispatch cp local h-ok:t5030.$$ &&
	dispatch cp h-ok:t5030.$$ back &&
	test_cmp local back &&
	dispatch run -H h-ok -- rm t5030.$$
'

test_expect_success 'host certificate of a CA no @cert-authority line names: refused' '
	neither h-other &&
	test_grep "host certificate for .h-other. (\[127.0.0.1\]:$((PORT + 2))) refused: ED25519 host certificate .hcert. (serial 10) signed by ED25519 CA SHA256:.*: no @cert-authority line for .\[127.0.0.1\]:$((PORT + 2)). names that CA; and the ED25519 key SHA256:[^ ]* it holds is not in known_hosts either" err
'

test_expect_success '@revoked CA: refused' '
	neither h-revoked-ca &&
	test_grep "refused: .*the CA key SHA256:[^ ]* is REVOKED by $TRASH/kh_revoked_ca:2" err
'

test_expect_success '@revoked host key, with a valid certificate: refused' '
	neither h-revoked-key &&
	test_grep "is REVOKED: the server sent ED25519 key SHA256:[^ ]*, which $TRASH/kh_revoked_key:2 marks @revoked" err
'

test_expect_success 'host certificate for another name: refused, the principals named' '
	neither h-wrong &&
	test_grep "ED25519 host certificate .hwrong. (serial 11) .* is not valid for .127.0.0.1.: its principals are elsewhere.example" err
'

test_expect_success 'a CA for the host, but a server without a certificate: refused, and said so' '
	neither h-nocert &&
	test_grep "is not known: the server sent ED25519 key" err &&
	test_grep "kh_ca:1 names a CA for this host, but the server showed no ED25519 host certificate" err
'

test_expect_success 'a failing certificate is taken as its plain key, which known_hosts lists' '
	both h-wrong-known
'

test_expect_success 'expired host certificate: refused' '
	neither h-expired &&
	test_grep "ED25519 host certificate .hexpired. .* has expired: valid from 2020-01-01T00:00:00Z to 2020-01-02T00:00:00Z" err
'

test_expect_success 'a server that offers only its certificate: ssh logs in, dispatch says why not' '
	ssh -F "$TRASH/config" h-only id -un </dev/null >ssh.out && test_cmp want ssh.out &&
	test_expect_code 255 dispatch run -H h-only -- true 2>err &&
	test_grep "offers its host key only as a certificate" err &&
	test_grep "libssh2 1.11.1 cannot verify a key exchange signed with a certificate" err
'

test_done
