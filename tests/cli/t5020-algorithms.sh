#!/bin/bash
# t5020: algorithms, each host checked against OpenSSH's own ssh in the same test.
# sshd's of this test on 127.0.0.1 (ports BASE+30..36): a hardened one (-etm MACs,
# chacha20/AES-GCM/AES-CTR, curve25519 and group16/18, ed25519 and rsa-sha2 host keys;
# run, cp, forward, --timeout, strict kex, and what dispatch negotiates against what
# ssh negotiates), one with only an RSA host key, a user whose only key is RSA (from a
# file and through ssh-agent, rsa-sha2-512 in sshd's log; PubkeyAcceptedAlgorithms
# choosing rsa-sha2-256 or leaving a key type out), a server that takes RSA only as
# SHA-1 ssh-rsa, a post-quantum-only one (directly and through one and two ProxyJump
# hops) and two whose MACs dispatch does not offer. Its own test bed instance (for
# the user, keys and ports); the sshd's are stopped at exit, the instance stays up
# (DISPATCH_TESTBED_DIR=/tmp/dispatch-testbed-t5020 tests/testbed/down removes it).
. "$(dirname "$0")/lib.sh"

export DISPATCH_TESTBED_SLURM=0
export DISPATCH_TESTBED_DIR=/tmp/dispatch-testbed-t5020
export DISPATCH_TESTBED_PORT_BASE=26200 DISPATCH_TESTBED_PREFIX=dta6 DISPATCH_TESTBED_NET=10.181 DISPATCH_TESTBED_FAN=2
testbed_up
TB=$DISPATCH_TESTBED_DIR
BASE=$DISPATCH_TESTBED_PORT_BASE
# What the sshd's read, the test user's side included: not in $TRASH (mode 700).
D=$TB/t5020
mkdir -p "$D" && chmod 755 "$D"

: >"$TRASH/local.pids"
cleanup() {
	local p
	for p in $(cat "$TRASH/local.pids"); do kill "$p" 2>/dev/null; done
	rm -rf "$TRASH"
}
trap cleanup EXIT

keygen() { # FILE TYPE [BITS]
	[ -f "$1" ] || ssh-keygen -q -t "$2" ${3:+-b "$3"} -N "" -C "t5020-$2" -f "$1" </dev/null >/dev/null
}
keygen "$D/host_ed25519" ed25519
keygen "$D/host_rsa" rsa 3072
keygen "$D/id_rsa" rsa 3072
cp "$D/id_rsa.pub" "$D/authorized_rsa"
chmod 644 "$D"/*.pub "$D/authorized_rsa"

# sshd_up NAME PORT [LINE...]: an sshd on 127.0.0.1:PORT, the LINEs first (the first
# value of a keyword wins) and HostKey lines only from them; stopped at exit
sshd_up() {
	local name=$1 port=$2 _
	shift 2
	{
		printf '%s\n' "$@"
		cat <<-EOF
		Port $port
		ListenAddress 127.0.0.1
		PidFile $D/$name.pid
		AuthorizedKeysFile $TB/authorized_keys
		PasswordAuthentication no
		KbdInteractiveAuthentication no
		UsePAM no
		StrictModes no
		AllowUsers $DISPATCH_TESTBED_USER
		AllowTcpForwarding yes
		MaxAuthTries 10
		LogLevel VERBOSE
		Subsystem sftp $D/sftp-logged $name
		EOF
	} >"$D/$name.conf"
	# one left by a run that could not clean up (killed): stop it first
	local old
	old=$(cat "$D/$name.pid" 2>/dev/null) || old=
	if [ -n "$old" ] && grep -q "$D/$name.conf" "/proc/$old/cmdline" 2>/dev/null; then
		kill "$old"
		for _ in $(seq 50); do kill -0 "$old" 2>/dev/null || break; sleep 0.1; done
	fi
	if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
		echo "port $port (sshd $name) is taken by another process" >&2
		return 1
	fi
	: >"$D/$name.log"
	: >"$D/$name-sftp.log"
	chmod 666 "$D/$name-sftp.log"   # written as the test user
	/usr/sbin/sshd -D -f "$D/$name.conf" -E "$D/$name.log" &
	local pid=$!
	echo $pid >>"$TRASH/local.pids"
	for _ in $(seq 100); do
		kill -0 $pid 2>/dev/null || break
		(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && return 0
		sleep 0.1
	done
	echo "sshd $name did not come up on port $port:" >&2
	cat "$D/$name.log" >&2
	return 1
}

mkdir -p /run/sshd
# OpenSSH's sftp-server with its log (INFO: each request) in $D/NAME-sftp.log
sftp_server=/usr/lib/openssh/sftp-server
[ -x "$sftp_server" ] || sftp_server=/usr/libexec/sftp-server
printf '#!/bin/sh\nexec %s -e -l INFO 2>>"%s/$1-sftp.log"\n' "$sftp_server" "$D" >"$D/sftp-logged"
chmod 755 "$D/sftp-logged"
ED="HostKey $D/host_ed25519"
sshd_up hard $((BASE + 30)) "$ED" "HostKey $D/host_rsa" \
	"KexAlgorithms curve25519-sha256,curve25519-sha256@libssh.org,diffie-hellman-group16-sha512,diffie-hellman-group18-sha512" \
	"Ciphers chacha20-poly1305@openssh.com,aes256-gcm@openssh.com,aes128-gcm@openssh.com,aes256-ctr,aes192-ctr,aes128-ctr" \
	"MACs hmac-sha2-512-etm@openssh.com,hmac-sha2-256-etm@openssh.com" \
	"HostKeyAlgorithms ssh-ed25519,rsa-sha2-512,rsa-sha2-256" \
	"LogLevel DEBUG3" || fail_rest "sshd hard"
sshd_up rsahost $((BASE + 31)) "HostKey $D/host_rsa" || fail_rest "sshd rsahost"
sshd_up rsauser $((BASE + 32)) "$ED" "AuthorizedKeysFile $D/authorized_rsa" "LogLevel DEBUG2" ||
	fail_rest "sshd rsauser"
sshd_up rsasha1 $((BASE + 33)) "$ED" "AuthorizedKeysFile $D/authorized_rsa" \
	"PubkeyAcceptedAlgorithms ssh-rsa" "LogLevel DEBUG2" || fail_rest "sshd rsasha1"
sshd_up pq $((BASE + 34)) "$ED" "KexAlgorithms sntrup761x25519-sha512@openssh.com" || fail_rest "sshd pq"
sshd_up macsha1 $((BASE + 35)) "$ED" "Ciphers aes128-ctr,aes256-ctr" "MACs hmac-sha1-etm@openssh.com" ||
	fail_rest "sshd macsha1"
sshd_up umac $((BASE + 36)) "$ED" "Ciphers aes128-ctr,aes256-ctr" \
	"MACs umac-128-etm@openssh.com,umac-64-etm@openssh.com" || fail_rest "sshd umac"

# known_hosts: the ED25519 key, but the RSA one for rsahost
edkey=$(cut -d" " -f1,2 "$D/host_ed25519.pub")
rsakey=$(cut -d" " -f1,2 "$D/host_rsa.pub")
{
	for p in 30 32 33 34 35 36; do echo "[127.0.0.1]:$((BASE + p)) $edkey"; done
	echo "[127.0.0.1]:$((BASE + 31)) $rsakey"
} >"$TRASH/known_hosts"
host() { # ALIAS PORT [LINE...]
	printf 'Host %s\n\tPort %s\n' "$1" "$2"
	shift 2
	[ $# = 0 ] || printf '\t%s\n' "$@"
}
{
	host hard $((BASE + 30))
	host hard-ctr $((BASE + 30)) "Ciphers aes256-ctr"
	host hard-gcm $((BASE + 30)) "Ciphers aes128-gcm@openssh.com"
	host hard-ecdsa $((BASE + 30)) "HostKeyAlgorithms ecdsa-sha2-nistp256"
	# OpenSSH's own default sshd, but ssh would take sntrup761x25519-sha512
	host rsahost $((BASE + 31)) "KexAlgorithms -sntrup*"
	host rsauser $((BASE + 32)) "IdentityFile $D/id_rsa"
	host rsaagent $((BASE + 32)) "IdentityFile $TRASH/agent-only"
	host rsa256 $((BASE + 32)) "IdentityFile $D/id_rsa" "PubkeyAcceptedAlgorithms rsa-sha2-256"
	host no-ed25519 $((BASE + 30)) "PubkeyAcceptedAlgorithms -ssh-ed25519"
	host rsasha1 $((BASE + 33)) "IdentityFile $D/id_rsa"
	host rsasha1-ok $((BASE + 33)) "IdentityFile $D/id_rsa" "PubkeyAcceptedAlgorithms ssh-rsa"
	host pq $((BASE + 34))
	host pq-via-hard $((BASE + 34)) "ProxyJump hard"
	host pq-via-two $((BASE + 34)) "ProxyJump rsahost,hard"
	host macsha1 $((BASE + 35))
	host macsha1-added $((BASE + 35)) "MACs +hmac-sha1-etm@openssh.com"
	host umac $((BASE + 36))
	cat <<-EOF
	Host *
		HostName 127.0.0.1
		User $DISPATCH_TESTBED_USER
		IdentityFile $TB/keys/id_ed25519
		IdentitiesOnly yes
		UserKnownHostsFile $TRASH/known_hosts
		StrictHostKeyChecking yes
		BatchMode yes
		ConnectTimeout 10
	EOF
} >"$TRASH/cfg"
export DISPATCH_SSH_CONFIG=$TRASH/cfg
unset DISPATCH_INVENTORY

# ssh_neg ALIAS: what OpenSSH's ssh negotiates with ALIAS (after running true there),
# as "kex K, host key H, cipher C" lines
ssh_neg() {
	ssh -v -F "$TRASH/cfg" "$1" true </dev/null 2>"$TRASH/ssh.err" || { cat "$TRASH/ssh.err" >&2; return 1; }
	tr -d "\r" <"$TRASH/ssh.err" | sed -n -e "s/^debug1: kex: algorithm: \(.*\)/kex \1/p" \
		-e "s/^debug1: kex: host key algorithm: \(.*\)/hostkey \1/p" \
		-e "s/^debug1: kex: client->server cipher: \([^ ]*\) MAC: \([^ ]*\) .*/cipher \1\nmac \2/p"
}
# dp_neg ALIAS: the same of dispatch, from -v
dp_neg() {
	dispatch -v run -H "$1" -- true 2>"$TRASH/dp.err" || { cat "$TRASH/dp.err" >&2; return 1; }
	sed -n "s/^.*: negotiated kex \([^,]*\), host key \([^,]*\), cipher \([^,]*\), MAC \(.*\)/kex \1\nhostkey \2\ncipher \3\nmac \4/p" \
		"$TRASH/dp.err"
}
# same_as_ssh ALIAS: dispatch negotiates kex, host key and cipher as ssh does (the MAC
# too, unless the cipher brings its own)
same_as_ssh() {
	ssh_neg "$1" >ssh.neg && dp_neg "$1" >dp.neg &&
	test "$(wc -l <ssh.neg)" = 4 && test "$(wc -l <dp.neg)" = 4 &&
	if grep -q "^mac <implicit>" ssh.neg; then sed -i "/^mac /d" ssh.neg dp.neg; fi &&
	test_cmp ssh.neg dp.neg
}

test_expect_success 'the library at run time is 1.11.1 or later' '
	dispatch -v -V >out &&
	test_grep "^libssh2 1\.1[1-9]\.[0-9]* \|^libssh2 1\.[2-9][0-9]\." out
'

test_expect_success 'offered by default: OpenSSH 9.2 order, no SHA-1 kex or MACs, no CBC' '
	dispatch -v run -H hard -- true 2>err &&
	test_grep "hard: offering kex curve25519-sha256,curve25519-sha256@libssh.org,ecdh-sha2-nistp256,ecdh-sha2-nistp384,ecdh-sha2-nistp521,diffie-hellman-group-exchange-sha256,diffie-hellman-group16-sha512,diffie-hellman-group18-sha512,diffie-hellman-group14-sha256\$" err &&
	test_grep "hard: offering ciphers chacha20-poly1305@openssh.com,aes128-ctr,aes192-ctr,aes256-ctr,aes128-gcm@openssh.com,aes256-gcm@openssh.com\$" err &&
	test_grep "hard: offering MACs hmac-sha2-256-etm@openssh.com,hmac-sha2-512-etm@openssh.com,hmac-sha2-256,hmac-sha2-512\$" err &&
	test_grep "hard: offering host keys ssh-ed25519,ecdsa-sha2-nistp256,ecdsa-sha2-nistp384,ecdsa-sha2-nistp521,rsa-sha2-512,rsa-sha2-256\$" err &&
	! grep -E "offering .*(sha1|cbc|arcfour|3des|md5|ssh-dss|ssh-rsa)" err
'

test_expect_success 'hardened sshd: dispatch negotiates what ssh negotiates' '
	same_as_ssh hard &&
	test_grep -x "cipher chacha20-poly1305@openssh.com" dp.neg &&
	test_grep -x "kex curve25519-sha256" dp.neg
'

test_expect_success 'hardened sshd, AES-CTR: an -etm MAC, as ssh' '
	same_as_ssh hard-ctr &&
	test_grep -x "mac hmac-sha2-256-etm@openssh.com" dp.neg
'

test_expect_success 'hardened sshd, AES-GCM, as ssh' '
	same_as_ssh hard-gcm &&
	test_grep -x "cipher aes128-gcm@openssh.com" dp.neg
'

test_expect_success 'hardened sshd: strict key exchange (Terrapin) is on' '
	before=$(grep -c "will use strict KEX ordering" "$D/hard.log" || :) &&
	dispatch run -H hard -- true &&
	after=$(grep -c "will use strict KEX ordering" "$D/hard.log") &&
	test "$after" -gt "$before"
'

test_expect_success 'hardened sshd: run, stdin and exit status' '
	head -c 200000 /dev/urandom >in &&
	dispatch run -H hard -- cat <in >out && cmp in out &&
	test_expect_code 3 dispatch run -H hard -- exit 3
'

# sftp-server's log (at INFO) says how each file took its final name: posix-rename,
# as libssh2 1.11 can ask for it (1.10 had only the plain rename, after an unlink).
test_expect_success 'hardened sshd: cp there and back, renamed into place with posix-rename' '
	head -c 300000 /dev/urandom >blob &&
	dispatch run -H hard -- "mkdir -p /tmp/t5020.$$" &&
	dispatch cp blob hard:/tmp/t5020.$$/blob &&
	test_grep "posix-rename old \".*\" new \"/tmp/t5020.$$/blob\"" "$D/hard-sftp.log" &&
	dispatch cp blob hard:/tmp/t5020.$$/blob &&
	test "$(grep -c "posix-rename old \".*\" new \"/tmp/t5020.$$/blob\"" "$D/hard-sftp.log")" = 2 &&
	! grep "remove name \"/tmp/t5020.$$/blob\"" "$D/hard-sftp.log" &&
	dispatch cp hard:/tmp/t5020.$$/blob back &&
	dispatch run -H hard -- "rm -rf /tmp/t5020.$$" &&
	cmp blob back
'

test_expect_success 'hardened sshd: forward' '
	mkdir www && echo "through the hardened host" >www/page &&
	wport=$((BASE + 40)) &&
	{ python3 -m http.server --bind 127.0.0.1 --directory www $wport >/dev/null 2>&1 & echo $! >>"$TRASH/local.pids"; } &&
	for i in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/$wport) 2>/dev/null && break; sleep 0.1; done &&
	dispatch forward --background hard 0:$wport >bg.out 2>bg.err &&
	pid=$(cat bg.out) && echo $pid >>"$TRASH/local.pids" &&
	port=$(sed -n "s/.*forwarding 127.0.0.1:\([0-9]*\) .*/\1/p" bg.err) &&
	test -n "$port" && test "$port" != "$wport" &&
	python3 -c "import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(\"http://127.0.0.1:%s/page\" % sys.argv[1], timeout=60).read().decode())" $port >got &&
	kill $pid &&
	test_cmp www/page got
'

test_expect_success 'hardened sshd: --timeout stops the command with a signal request (killpg)' '
	before=$(grep -c "signal TERM, killpg" "$D/hard.log" || :) &&
	test_expect_code 3 dispatch run -H hard --timeout 1 -- "sleep 4343; echo never" >out 2>err &&
	test_must_be_empty out &&
	after=$(grep -c "signal TERM, killpg" "$D/hard.log") &&
	test "$after" -gt "$before" &&
	for i in $(seq 50); do pgrep -f "^sleep 434[3]" >/dev/null || break; sleep 0.1; done &&
	! pgrep -f "^sleep 434[3]"
'

test_expect_success 'no common host key algorithm: what each side has, as ssh fails too' '
	test_expect_code 255 ssh -F "$TRASH/cfg" hard-ecdsa true </dev/null 2>/dev/null &&
	test_expect_code 255 dispatch -v run -H hard-ecdsa -- true 2>err &&
	test_grep "no common host key algorithm: server offers ssh-ed25519,rsa-sha2-512,rsa-sha2-256; dispatch has ecdsa-sha2-nistp256\$" err &&
	! grep "trying again" err
'

test_expect_success 'only an RSA host key: rsa-sha2-512, as ssh' '
	same_as_ssh rsahost &&
	test_grep -x "hostkey rsa-sha2-512" dp.neg
'

test_expect_success 'a user whose only key is RSA (3072 bits), from a file: signs with rsa-sha2-512' '
	ssh -F "$TRASH/cfg" rsauser true </dev/null &&
	before=$(grep -c "attempting public key rsa-sha2-512 " "$D/rsauser.log" || :) &&
	dispatch run -H rsauser -- echo in >out &&
	echo in >want && test_cmp want out &&
	after=$(grep -c "attempting public key rsa-sha2-512 " "$D/rsauser.log") &&
	test "$after" -gt "$before" &&
	! grep "attempting public key ssh-rsa " "$D/rsauser.log"
'

test_expect_success 'PubkeyAcceptedAlgorithms rsa-sha2-256: the RSA key signs with that, as ssh' '
	ssh -F "$TRASH/cfg" rsa256 true </dev/null &&
	before=$(grep -c "attempting public key rsa-sha2-256 " "$D/rsauser.log" || :) &&
	dispatch run -H rsa256 -- true &&
	after=$(grep -c "attempting public key rsa-sha2-256 " "$D/rsauser.log") &&
	test "$after" -gt "$before"
'

test_expect_success 'PubkeyAcceptedAlgorithms -ssh-ed25519: the ED25519 key is not tried, as ssh' '
	test_expect_code 255 ssh -F "$TRASH/cfg" no-ed25519 true </dev/null 2>/dev/null &&
	test_expect_code 255 dispatch run -H no-ed25519 -- true 2>err &&
	test_grep "key $TB/keys/id_ed25519: not tried, PubkeyAcceptedAlgorithms leaves out its type ssh-ed25519" err
'

test_expect_success 'the same RSA key through ssh-agent: rsa-sha2-512' '
	eval "$(ssh-agent -s)" >/dev/null &&
	echo $SSH_AGENT_PID >>"$TRASH/local.pids" &&
	ssh-add -q "$D/id_rsa" 2>/dev/null &&
	cp "$D/id_rsa.pub" "$TRASH/agent-only.pub" &&
	test ! -e "$TRASH/agent-only" &&
	ssh -F "$TRASH/cfg" rsaagent true </dev/null &&
	before=$(grep -c "attempting public key rsa-sha2-512 " "$D/rsauser.log" || :) &&
	dispatch run -H rsaagent -- echo agent >out &&
	echo agent >want && test_cmp want out &&
	after=$(grep -c "attempting public key rsa-sha2-512 " "$D/rsauser.log") &&
	test "$after" -gt "$before" &&
	kill $SSH_AGENT_PID
'

# OpenSSH names every signature algorithm it has in server-sig-algs, so the refusal
# cannot say which one the server wanted: it says which one was made, and the fix.
test_expect_success 'a server that takes RSA only as SHA-1 ssh-rsa: refused, what was signed and the fix' '
	test_expect_code 255 ssh -F "$TRASH/cfg" rsasha1 true </dev/null 2>/dev/null &&
	test_expect_code 255 dispatch run -H rsasha1 -- true 2>err &&
	test_grep "key $D/id_rsa: refused by the server (an RSA key, signed with the first of rsa-sha2-512,rsa-sha2-256 the server names; .*needs PubkeyAcceptedAlgorithms ssh-rsa" err
'

test_expect_success 'PubkeyAcceptedAlgorithms ssh-rsa: logs in there with ssh-rsa, as ssh' '
	ssh -F "$TRASH/cfg" rsasha1-ok true </dev/null &&
	before=$(grep -c "attempting public key ssh-rsa " "$D/rsasha1.log" || :) &&
	dispatch run -H rsasha1-ok -- echo sha1 >out &&
	echo sha1 >want && test_cmp want out &&
	after=$(grep -c "attempting public key ssh-rsa " "$D/rsasha1.log") &&
	test "$after" -gt "$before"
'

test_expect_success 'post-quantum key exchange only: 255 and why, where ssh connects' '
	ssh -F "$TRASH/cfg" pq true </dev/null &&
	test_expect_code 255 dispatch -v run -H pq -- true 2>err &&
	test_grep "no common key exchange: server offers only post-quantum key exchange (sntrup761x25519-sha512@openssh.com), which no released libssh2 implements; this server needs OpenSSH.s ssh" err &&
	! grep "trying again" err
'

test_expect_success 'the same through one and two ProxyJump hops: the offer is read through them' '
	for h in pq-via-hard pq-via-two; do
		ssh -F "$TRASH/cfg" $h true </dev/null &&
		test_expect_code 255 dispatch run -H $h -- true 2>err &&
		test_grep "no common key exchange: server offers only post-quantum key exchange (sntrup761x25519-sha512@openssh.com)" err ||
		exit 1
	done
'

test_expect_success 'server MACs hmac-sha1-etm only: no common MAC, with both lists' '
	ssh -F "$TRASH/cfg" macsha1 true </dev/null &&
	test_expect_code 255 dispatch run -H macsha1 -- true 2>err &&
	test_grep "no common MAC: server offers hmac-sha1-etm@openssh.com; dispatch has hmac-sha2-256-etm@openssh.com,hmac-sha2-512-etm@openssh.com,hmac-sha2-256,hmac-sha2-512\$" err
'

test_expect_success 'MACs +hmac-sha1-etm@openssh.com in ssh_config brings it back' '
	dispatch -v run -H macsha1-added -- echo ok >out 2>err &&
	test_grep -x ok out &&
	test_grep "negotiated .*, MAC hmac-sha1-etm@openssh.com\$" err
'

test_expect_success 'server MACs umac only: no common MAC' '
	ssh -F "$TRASH/cfg" umac true </dev/null &&
	test_expect_code 255 dispatch run -H umac -- true 2>err &&
	test_grep "no common MAC: server offers umac-128-etm@openssh.com,umac-64-etm@openssh.com; dispatch has hmac-sha2-256-etm@openssh.com" err
'

test_done
