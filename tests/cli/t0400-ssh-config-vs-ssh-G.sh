#!/bin/bash
# dispatch hosts resolve against the real thing: for tricky configs and several host
# names, `ssh -G -F CONFIG HOST` and `dispatch -F CONFIG hosts resolve HOST` (dispatch's
# resolution, printed in ssh -G's format) must agree on every keyword dispatch uses;
# what the config sets and dispatch does not use is listed, never dropped.
#
# Both take ~ and %d from the passwd entry (not $HOME): nss_wrapper gives ssh, as lib.sh
# gives dispatch, the passwd entry whose home is the test's HOME, so neither ever reads
# the real ~/.ssh. The last test points HOME elsewhere.
. "$TEST_SRCDIR/tests/cli/lib.sh"

unset DISPATCH_SSH_CONFIG DISPATCH_INVENTORY
if ! command -v ssh >/dev/null; then
	echo "1..0 # SKIP needs ssh"
	exit 0
fi
nss_wrapper=$NSS_WRAPPER_LIB
me=$(id -un)
PW_HOME=$HOME # the passwd entry's home (test_passwd_home changes it)

KEYS='user|hostname|port|hostkeyalias|identityfile|certificatefile|identitiesonly|identityagent|proxyjump|proxycommand|connecttimeout|serveraliveinterval|serveralivecountmax|stricthostkeychecking|userknownhostsfile|globalknownhostsfile|batchmode|kexalgorithms|ciphers|macs|hostkeyalgorithms|pubkeyacceptedalgorithms|controlmaster|controlpath|controlpersist|canonicalizehostname|canonicaldomains|canonicalizemaxdots|canonicalizefallbacklocal|canonicalizepermittedcnames|sendenv|setenv'

# ssh -G prints IdentityFile and CertificateFile before ~ and %-expansion (it expands when loading keys):
# expand it here, independently of lib/, with the values ssh printed.
expand_identityfiles() {
	awk -v home="$PW_HOME" -v luser="$me" -v alias="$1" '
	function expand(s,   out, i, c, n) {
		out = ""
		if (s == "~") return home
		if (substr(s, 1, 2) == "~/") { out = home "/"; s = substr(s, 3) }
		for (i = 1; i <= length(s); i++) {
			c = substr(s, i, 1)
			if (substr(s, i, 2) == "${" && (n = index(substr(s, i), "}"))) {
				out = out ENVIRON[substr(s, i + 2, n - 3)]
				i += n - 1
				continue
			}
			if (c != "%") { out = out c; continue }
			n = substr(s, ++i, 1)
			if (n == "%") out = out "%"
			else if (n == "h") out = out host
			else if (n == "r") out = out ruser
			else if (n == "u") out = out luser
			else if (n == "d") out = out home
			else if (n == "n") out = out alias
			else if (n == "p") out = out port
			else out = out "%" n
		}
		return out
	}
	/^user / { ruser = substr($0, 6) }
	/^hostname / { host = substr($0, 10) }
	/^port / { port = $2 }
	/^identityfile / { print "identityfile " expand(substr($0, 14)); next }
	/^certificatefile / { print "certificatefile " expand(substr($0, 17)); next }
	{ print }'
}

# compare CONFIG HOST...: both succeed and agree, or both fail
compare() {
	local config=$1 dest rc_ssh rc_dp
	shift
	for dest in "$@"; do
		local alias=${dest#ssh://}
		alias=${alias#*@}
		alias=${alias%:*}
		local F=(-F "$config")
		[ "$config" = - ] && F=() # the default files, as dispatch without -F
		# With CANON_HOSTS, both resolve names through that hosts file (nss_wrapper),
		# for CanonicalizeHostname (DEEPBIND off and ASan told so: for the sanitize build).
		local pre=(env)
		[ -n "${CANON_HOSTS:-}" ] &&
			pre=(env LD_PRELOAD="$nss_wrapper" NSS_WRAPPER_HOSTS="$CANON_HOSTS"
			     NSS_WRAPPER_PASSWD="$TRASH/.passwd" NSS_WRAPPER_GROUP="$TRASH/.group"
			     NSS_WRAPPER_DISABLE_DEEPBIND=1
			     ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0")
		rc_ssh=0
		LD_PRELOAD=$nss_wrapper NSS_WRAPPER_PASSWD=$TRASH/.passwd NSS_WRAPPER_GROUP=$TRASH/.group \
			NSS_WRAPPER_HOSTS=${CANON_HOSTS:-} \
			ssh -G "${F[@]}" "$dest" </dev/null >"$TRASH/ssh.raw" 2>"$TRASH/ssh.err" || rc_ssh=$?
		sed -i "s/^canonicalizePermittedcnames /canonicalizepermittedcnames /" "$TRASH/ssh.raw"
		rc_dp=0
		"${pre[@]}" "$DISPATCH" "${F[@]}" hosts resolve "$dest" >"$TRASH/dp.all" 2>"$TRASH/dp.err" || rc_dp=$?
		grep -v "^#" "$TRASH/dp.all" >"$TRASH/dp.raw"
		if [ $rc_ssh -ne 0 ] || [ $rc_dp -ne 0 ]; then
			if [ $rc_ssh -ne 0 ] && [ $rc_dp -ne 0 ]; then
				continue
			fi
			echo "$config $dest: ssh exit $rc_ssh, dispatch exit $rc_dp" >&2
			cat "$TRASH/ssh.err" "$TRASH/dp.err" >&2
			return 1
		fi
		grep -E "^($KEYS) " "$TRASH/ssh.raw" | expand_identityfiles "$alias" |
			sort -s -k1,1 >"$TRASH/ssh.out"
		sort -s -k1,1 "$TRASH/dp.raw" >"$TRASH/dp.out"
		if ! diff -u "$TRASH/ssh.out" "$TRASH/dp.out" >"$TRASH/diff"; then
			echo "$config $dest: ssh -G (-) and dispatch (+) differ:" >&2
			cat "$TRASH/diff" >&2
			return 1
		fi
	done
}

mkdir -p "$HOME/.ssh/conf.d" "$HOME/.ssh/nested"

cat >"$TRASH/patterns" <<'CONF'
# Host patterns: several per line, negation, wildcards, defaults last
Host web1 web2
    HostName %h.Example.ORG
    User deploy
    Port 2201
Host !web2 web*
    User webber
    IdentityFile ~/.ssh/id_web_%h
Host *.internal !bastion.internal
    ProxyJump bastion.internal
Host db?
    HostName DB-%h.example.com
    IdentityFile %d/.ssh/db_%r_%u
Host !* never
    User never
Host 10.0.0.*
    User ip-user
Host *
    User fallback
    Port 22
    IdentityFile ~/.ssh/id_default
    IdentityFile ~/.ssh/id_web_%h
    ServerAliveInterval 30
    ServerAliveCountMax 5
    ConnectTimeout 1m30s
CONF
test_expect_success 'host patterns, negation, first value wins' '
	compare "$TRASH/patterns" web1 web2 web3 WEB1 foo.internal bastion.internal \
		db1 db12 never other 10.0.0.7 alice@web1 ssh://bob@web3:2222 ssh://db2
'

cat >"$TRASH/syntax" <<'CONF'
HOST=eq
  HostName="eq.example.com"
  USER = "john smith"
  port= 2022
  IDENTITYFILE "~/.ssh/key with spaces"
  IdentityFile '/abs/single quoted'
  IdentityFile /esc\ aped
  identityfile ~/.ssh/dup
  IdentityFile ~/.ssh/dup
  StrictHostKeyChecking accept-new
  BatchMode=yes
  IdentitiesOnly true
	# a tab-indented comment
Host "quoted host" plain
  User quoted
Host strict-no
  StrictHostKeyChecking no
Host strict-off
  StrictHostKeyChecking off
Host strict-yes
  StrictHostKeyChecking YES
Host strict-ask
  stricthostkeychecking ask
Host strict-false
  StrictHostKeyChecking false
Host strict-*
  StrictHostKeyChecking yes
  BatchMode no
  ConnectTimeout none
Host strict-*
  ConnectTimeout 12
  ServerAliveInterval 2h
CONF
test_expect_success 'key=value, quotes, escapes, case, StrictHostKeyChecking spellings' '
	compare "$TRASH/syntax" eq plain strict-no strict-off strict-yes strict-ask \
		strict-false strict-other
'

cat >"$HOME/.ssh/conf.d/10-a.conf" <<'CONF'
Host inc-a
    User a-user
    Include nested/level1.conf
CONF
cat >"$HOME/.ssh/conf.d/20-b.conf" <<'CONF'
Host inc-a inc-b
    User b-user
    Port 2020
CONF
cat >"$HOME/.ssh/conf.d/ignored.txt" <<'CONF'
Host inc-a inc-b inc-c
    User not-included
CONF
cat >"$HOME/.ssh/nested/level1.conf" <<'CONF'
IdentityFile ~/.ssh/level1
Include nested/level2.conf
Host inc-b
    ProxyCommand none
Host inc-c
    ProxyJump via-level1
CONF
cat >"$HOME/.ssh/nested/level2.conf" <<'CONF'
ConnectTimeout 7
Host *
    BatchMode yes
CONF
cat >"$HOME/.ssh/extra.conf" <<'CONF'
Host extra
    HostName extra.example
CONF
cat >"$TRASH/include" <<'CONF'
Include conf.d/*.conf
Include ~/.ssh/extra.conf /nonexistent/*.conf
Host inc-outer inc-c
    Include nested/level1.conf
Host after inc-c
    User after-user
    Include nested/level2.conf nested/level2.conf
CONF
test_expect_success 'Include: globs, ~ and relative paths, nesting, inactive blocks' '
	compare "$TRASH/include" inc-a inc-b inc-c inc-outer extra after other
'

cat >"$TRASH/match" <<'CONF'
Host m1
    User m1-user
Match host m1 exec "false"
    User matched
    Port 1
Match originalhost nomatch
    Port 2
    Include conf.d/*.conf
Host m2
    Port 2222
Match user nobody-at-all
    IdentityFile ~/.ssh/never
Match all
    User all-user
Host *
    User star
    IdentityFile ~/.ssh/star
CONF
test_expect_success 'Match blocks that do not match are skipped' '
	compare "$TRASH/match" m1 m2 inc-a other
'

cat >"$TRASH/proxy" <<'CONF'
Host pj-multi
    ProxyJump alice@hop1:2222,hop2,bob@hop3:23
Host pj-uri
    ProxyJump ssh://carol@hop4:2200
Host pj-none
    ProxyJump none
Host pj-none pj-cmd
    ProxyCommand nc %h %p
Host pc-none
    ProxyCommand none
Host pc-none pc-then-jump
    ProxyJump ignored
Host pc-first
    ProxyCommand=ssh -W %h:%p "gate way"   # the comment stays, as in ssh
Host pc-first
    ProxyJump ignored2
Host *
    ProxyJump default-hop
CONF
test_expect_success 'ProxyJump with several hops and none, ProxyCommand and none' '
	compare "$TRASH/proxy" pj-multi pj-uri pj-none pj-cmd pc-none pc-then-jump pc-first other
'

cat >"$TRASH/files" <<'CONF'
Host kh
    UserKnownHostsFile ~/.ssh/kh1 %d/kh_%h_%r %d/kh_%u_%n_%p
    GlobalKnownHostsFile /etc/ssh/g1 /etc/ssh/g2
    IdentityAgent ~/agent.%h.sock
    User remote
    HostName KH.Example.com
    Port 2200
Host kh-none
    UserKnownHostsFile none
    IdentityAgent none
Host kh-env
    IdentityAgent ${HOME}/env-agent
    IdentityFile ${HOME}/env-key
Host *
    UserKnownHostsFile ~/.ssh/second
    GlobalKnownHostsFile /etc/ssh/second
    IdentityAgent SSH_AUTH_SOCK
CONF
test_expect_success 'known hosts files, IdentityAgent, %-tokens and ~' '
	compare "$TRASH/files" kh kh-none kh-env other
'

cat >"$TRASH/certs" <<'CONF'
Host cert1
    CertificateFile ~/.ssh/id_ed25519-cert.pub
    CertificateFile %d/certs/%r@%h-cert.pub
    certificatefile=~/.ssh/id_ed25519-cert.pub
    User carol
    HostName Cert1.Example
Host cert-*
    CertificateFile "~/.ssh/with space-cert.pub"
    CertificateFile ${HOME}/env-cert.pub
    IdentityFile ~/.ssh/id_cert
Host *
    CertificateFile ~/.ssh/all-%n-%p-%u-cert.pub
CONF
test_expect_success 'CertificateFile accumulates (duplicates dropped), ~, %-tokens, ${VAR}' '
	compare "$TRASH/certs" cert1 cert-x other ssh://bob@cert1:2222
'

cat >"$TRASH/ignore" <<'CONF'
IgnoreUnknown Frob*,UseKeychain
Frobnicate yes
UseKeychain yes
Host x
    User x-user
    # keywords dispatch does not use are accepted and skipped
    ForwardAgent yes
    SendEnv LANG LC_*
    ControlPath ~/.ssh/cm-%C
CONF
test_expect_success 'IgnoreUnknown and keywords dispatch does not use' '
	compare "$TRASH/ignore" x y
'

cat >"$TRASH/algs" <<'CONF'
# The algorithm lists: replace, + appends, ^ puts first, - removes (patterns), first
# value wins; key algorithms take patterns everywhere
Host replace
    KexAlgorithms curve25519-sha256,diffie-hellman-group14-sha256
    Ciphers aes256-gcm@openssh.com,aes128-ctr
    MACs hmac-sha2-512-etm@openssh.com
    HostKeyAlgorithms ssh-ed25519,rsa-sha2-512
    PubkeyAcceptedAlgorithms rsa-sha2-256,ssh-ed25519
Host plus
    KexAlgorithms +diffie-hellman-group14-sha1,curve25519-sha256
    Ciphers +aes128-cbc,3des-cbc
    MACs +hmac-md5,hmac-sha2-256
    HostKeyAlgorithms +ssh-rsa,ssh-dss
    PubkeyAcceptedKeyTypes +ssh-rsa
Host caret
    KexAlgorithms ^diffie-hellman-group16-sha512
    Ciphers ^aes256-ctr,aes128-cbc
    MACs ^hmac-sha2-512
    HostKeyAlgorithms ^rsa-sha2-256,ssh-rsa
    PubkeyAcceptedAlgorithms ^ssh-rsa
Host minus
    KexAlgorithms -sntrup*,ecdh-sha2-*
    Ciphers -chacha20-poly1305@openssh.com,*-ctr
    MACs -umac-*,*-sha1*
    HostKeyAlgorithms -*-cert-v01@openssh.com,sk-*
    PubkeyAcceptedAlgorithms -ecdsa*,!rsa-sha2-512
Host wild
    HostKeyAlgorithms ssh-ed25519*,rsa-sha2-*
    PubkeyAcceptedAlgorithms +*-cert-v01@openssh.com
Host empty-name
    Ciphers aes128-ctr,,aes256-ctr
Host nothing-left
    KexAlgorithms -*
Host *
    KexAlgorithms curve25519-sha256
    MACs hmac-sha2-256-etm@openssh.com,hmac-sha2-256
CONF
test_expect_success 'KexAlgorithms, Ciphers, MACs, HostKeyAlgorithms, PubkeyAcceptedAlgorithms' '
	compare "$TRASH/algs" replace plus caret minus wild empty-name nothing-left other
'

cat >"$TRASH/control" <<'CONF'
# connection sharing: ControlPath with every token ssh 9.2 expands there
Host cm-all
    HostName CM.Example.ORG
    User remote
    Port 2201
    ControlMaster auto
    ControlPath ~/.ssh/cm-%C-%h-%p-%r-%n-%l-%L-%u-%i-%%-%k
    ControlPersist 8h
Host cm-alias
    HostName cm-real
    HostKeyAlias cm-key
    ControlPath %d/cm-%k-%C
    ControlMaster autoask
    ControlPersist 0
Host cm-none
    ControlPath NONE
    ControlMaster yes
    ControlPersist yes
Host cm-env
    ControlPath ${HOME}/sock-%C
    ControlMaster=ask
    ControlPersist 1m30s
Host cm-jump
    ProxyJump alice@hop:23,carol@hop2:2200
    ControlPath "/tmp/cm %C"
    ControlMaster TRUE
    ControlPersist false
Host cm-*
    ControlPath ~/never-%n
    ControlMaster no
    ControlPersist 10
Host *
    ControlPersist no
CONF
test_expect_success 'ControlMaster, ControlPath (tokens, %C, ~, ${VAR}, none), ControlPersist' '
	compare "$TRASH/control" cm-all cm-alias cm-none cm-env cm-jump cm-other other \
		ssh://bob@cm-all:2022 ssh://cm-alias:99
'

printf 'Host x\n  Port 0\n' >"$TRASH/bad1"
printf 'Host x\n  Frobnicate yes\n' >"$TRASH/bad2"
printf 'Host y\n  User\n' >"$TRASH/bad3"
printf 'Host x\n  User "unterminated\n' >"$TRASH/bad4"
printf 'Host y\n  BatchMode maybe\n' >"$TRASH/bad5"
printf 'Include %s\n' "$TRASH/bad6" >"$TRASH/bad6"
printf 'Host y\n  IdentityFile a b\n' >"$TRASH/bad7"
printf 'Host x\n  HostName %%z\n' >"$TRASH/bad8"
printf 'Host y\n  ConnectTimeout 5x\n' >"$TRASH/bad9"
printf 'Host y\n  ProxyJump a,,b\n' >"$TRASH/bad10"
printf 'Host x\n  KexAlgorithms curve25519-sha256,nope\n' >"$TRASH/bad11"
printf 'Host y\n  Ciphers +aes*-ctr\n' >"$TRASH/bad12"
printf 'Host x\n  MACs ^\n' >"$TRASH/bad13"
printf 'Host y\n  HostKeyAlgorithms ssh-ed25519,nope*\n' >"$TRASH/bad14"
printf 'Host x\n  KexAlgorithms curve25519-sha256,!ecdh*\n' >"$TRASH/bad15"
printf 'Host x\n  CertificateFile a b\n' >"$TRASH/bad16"
printf 'Host x\n  ControlMaster maybe\n' >"$TRASH/bad17"
printf 'Host y\n  ControlPersist 5x\n' >"$TRASH/bad18"
printf 'Host x\n  ControlPath /tmp/%%z\n' >"$TRASH/bad19"
printf 'Host y\n  ControlPath a b\n' >"$TRASH/bad20"
printf 'Host x\n  ControlPath ${DISPATCH_T0400_UNSET}/s\n' >"$TRASH/bad21"
test_expect_success 'configs ssh rejects are rejected' '
	for f in bad1 bad2 bad3 bad4 bad5 bad6 bad7 bad8 bad9 bad10 bad11 bad12 bad13 bad14 bad15 bad16 \
		 bad17 bad18 bad19 bad20 bad21; do
		compare "$TRASH/$f" x &&
		test_expect_code 2 dispatch -F "$TRASH/$f" hosts resolve x 2>err &&
		test_grep "$f" err || exit 1
	done
'

test_expect_success 'a missing -F file is an error for both' '
	compare "$TRASH/does-not-exist" x &&
	test_expect_code 2 dispatch -F "$TRASH/does-not-exist" hosts resolve x 2>err &&
	test_grep "does-not-exist" err
'

test_expect_success 'the default files: ~/.ssh/config, then the system one' '
	compare - x inc-a &&
	cp "$TRASH/patterns" "$HOME/.ssh/config" &&
	compare - web1 web3 db1 other &&
	printf "Include ../../include\n" >"$HOME/.ssh/config" &&
	compare - inc-a inc-c other
'

cat >"$TRASH/unused" <<'CONF'
Host u
  HostName u.example.org
  HostKeyAlias u-key
  SendEnv LANG LC_*
  SetEnv A=1
  ConnectionAttempts 3
  ControlMaster auto
  ControlPath ~/.ssh/cm-%C
  ForwardAgent yes
Host other
  Compression yes
CONF
test_expect_success 'keywords dispatch does not use are listed, the matching block only; --json' '
	compare "$TRASH/unused" u &&
	dispatch -F "$TRASH/unused" hosts resolve u >out &&
	test_grep "^hostkeyalias u-key$" out &&
	test "$(grep "^#" out)" = "# not used by dispatch: connectionattempts forwardagent" &&
	test_grep "^sendenv LC_\*$" out &&
	test_grep "^setenv A=1$" out &&
	test_grep "^controlmaster auto$" out &&
	dispatch -F "$TRASH/unused" --json hosts resolve u >out.json &&
	python3 -c "
import json
d = json.load(open(\"out.json\"))
assert d[\"host\"] == \"u\" and d[\"settings\"][\"hostname\"] == \"u.example.org\", d
assert isinstance(d[\"settings\"][\"identityfile\"], list), d
assert d[\"not_used\"] == [\"connectionattempts\", \"forwardagent\"], d
assert d[\"settings\"][\"sendenv\"] == [\"LANG\", \"LC_*\"], d
assert d[\"settings\"][\"setenv\"] == [\"A=1\"], d
" &&
	dispatch -F "$TRASH/unused" hosts resolve other >out &&
	test "$(grep "^#" out)" = "# not used by dispatch: compression"
'

test_expect_success 'an inventory host resolves through its ssh target' '
	printf "clusters:\n  c: {root: /r, work: /w}\nhosts:\n  box:\n    ssh: u\n    cluster: c\n" >inv.yaml &&
	dispatch -i inv.yaml -F "$TRASH/unused" hosts resolve box >out &&
	test_grep "^hostname u.example.org$" out
'

cat >"$TRASH/match" <<'CONF'
# Match evaluated as ssh does: host (after HostName so far), originalhost, user (the
# destination's, else User so far, else the local one), localuser, exec (with
# %-tokens), negations, the second pass for final/canonical, and all
Host web*
  User webuser
Match host db.internal
  Port 2201
Match originalhost db
  HostName db.internal
Match host db.internal
  Port 2202
Match user alice
  IdentityFile ~/.ssh/alice
Match !user alice host *.internal
  ConnectTimeout 7
Match localuser nobody-here
  ServerAliveInterval 11
Match localuser !nobody-here,*
  ServerAliveInterval 12
Match exec "test %h = web1 && test %n = web1 && test %p = 22"
  ServerAliveCountMax 9
Match exec false
  BatchMode yes
Match !exec "false"
  IdentitiesOnly yes
Match final host *.internal
  ProxyJump jump.example
Match canonical
  HostKeyAlias canon
Match !final
  StrictHostKeyChecking accept-new
Match all
  User fallback
CONF
test_expect_success 'Match: host, originalhost, user, localuser, exec, final, canonical, negations, all' '
	compare "$TRASH/match" web1 db alice@db bob@web2 other DB &&
	dispatch -F "$TRASH/match" hosts resolve db >out &&
	test_grep "^hostname db.internal$" out &&
	test_grep "^port 2202$" out &&
	test_grep "^proxyjump jump.example$" out
'

printf '10.0.0.5 login.cluster.example.edu\n10.0.0.6 gpu1.lab.example.org\n10.0.0.7 web.lab.example.org\n10.0.0.8 alias.lab.example.org\n' >"$TRASH/canon-hosts"
cat >"$TRASH/canon" <<'CONF'
# CanonicalizeHostname against names in the test's own hosts file: yes (direct only),
# always (through a jump too), MaxDots, FallbackLocal no, a trailing dot, an address,
# and the second pass (Host and Match canonical see the canonical name)
Host login
  Port 2022
Host gpu1 web
  ProxyJump none
Host strict*
  CanonicalizeFallbackLocal no
Host always*
  CanonicalizeHostname always
  ProxyJump bastion
Host login.cluster.example.edu
  ServerAliveInterval 33
Match canonical host *.lab.example.org
  User canon
Match !canonical
  ConnectTimeout 4
Host dots*
  CanonicalizeMaxDots 2
Host *
  CanonicalizeHostname yes
  CanonicalDomains cluster.example.edu lab.example.org
  CanonicalizeMaxDots 0
  CanonicalizePermittedCNAMEs *.lab.example.org:*.example.org
CONF
test_expect_success 'CanonicalizeHostname, CanonicalDomains, MaxDots, FallbackLocal, the second pass' '
	CANON_HOSTS=$TRASH/canon-hosts compare "$TRASH/canon" login gpu1 web alias nothere a.b strictx \
		always1 login.cluster.example.edu. 10.0.0.5 dots.x &&
	LD_PRELOAD=$nss_wrapper NSS_WRAPPER_HOSTS=$TRASH/canon-hosts NSS_WRAPPER_DISABLE_DEEPBIND=1 \
		ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
		"$DISPATCH" -F "$TRASH/canon" hosts resolve login >out &&
	test_grep "^hostname login.cluster.example.edu$" out &&
	test_grep "^serveraliveinterval 33$" out &&
	test_grep "^port 2022$" out
'

cat >"$TRASH/canon-second" <<'CONF'
# The second pass comes with CanonicalizeHostname yes or always whether or not the name
# canonicalized, through a ProxyCommand too; Host then sees the host as the first pass
# left it (HostName applied, lower case)
Host web1
  HostName WEB1.example.org
Host web1.example.org
  User second-pass
Match canonical
  Port 2001
Match canonical host web1.example.org
  ServerAliveInterval 44
Host proxied
  ProxyCommand nc %h %p
Host *
  CanonicalizeHostname yes
  CanonicalDomains nowhere.invalid
CONF
printf 'Host web1\n  HostName WEB1.example.org\nMatch final\n  Port 2000\nHost web1.example.org\n  User fromfinal\n' >"$TRASH/final-second"
test_expect_success 'the second pass: a name that does not canonicalize, a proxied one, Match final' '
	CANON_HOSTS=$TRASH/canon-hosts compare "$TRASH/canon-second" web1 nothere proxied &&
	CANON_HOSTS=$TRASH/canon-hosts compare "$TRASH/final-second" web1 other &&
	dispatch -F "$TRASH/canon-second" hosts resolve web1 >out &&
	test_grep "^user second-pass$" out &&
	test_grep "^port 2001$" out &&
	test_grep "^serveraliveinterval 44$" out &&
	dispatch -F "$TRASH/canon-second" hosts resolve proxied >out &&
	test_grep "^port 2001$" out &&
	dispatch -F "$TRASH/final-second" hosts resolve web1 >out &&
	test_grep "^user fromfinal$" out
'

# Match exec's %C is ssh's connection hash (the SHA-1 of %l%h%p%r); each side writes it
cat >"$TRASH/exec-C" <<CONF
Match exec "echo %C >>$TRASH/exec-C.out"
  User hashed
Match exec "test %C = %C && test %n = web1"
  Port 2003
CONF
test_expect_success 'Match exec takes %C as ssh does' '
	rm -f exec-C.out &&
	compare "$TRASH/exec-C" web1 &&
	test $(wc -l <exec-C.out) = 2 &&
	test $(sort -u exec-C.out | wc -l) = 1 &&
	printf "%s%s%s%s" "$(hostname)" web1 22 "$me" | sha1sum | cut -d" " -f1 >want &&
	head -1 exec-C.out >got &&
	test_cmp want got &&
	dispatch -F "$TRASH/exec-C" hosts resolve web1 >out &&
	test_grep "^user hashed$" out &&
	test_grep "^port 2003$" out
'

printf 'Match exec "true %%Z"\n  User x\n' >"$TRASH/exec-bad"
test_expect_success 'an unknown token in Match exec is named once' '
	test_expect_code 2 dispatch -F "$TRASH/exec-bad" hosts resolve web1 2>err &&
	echo "dispatch: $TRASH/exec-bad:1: match exec '"'true %Z'"': unknown token '"'%Z'"'" >want &&
	test_cmp want err
'

cat >"$TRASH/env" <<'CONF'
# SendEnv accumulates over lines and blocks, -PATTERN drops what it matches; SetEnv:
# the first line's words, a repeated name the first
Host e1
  SendEnv LANG LC_* DISPATCH_T*
  SetEnv A=1 "B=two words" A=3
Host e*
  SendEnv -LC_* FOO
  SetEnv C=4
Match final
  SendEnv BAR
CONF
test_expect_success 'SendEnv and SetEnv' '
	compare "$TRASH/env" e1 e2 other &&
	printf "Host *\n  SetEnv novalue\n" >bad-setenv &&
	compare bad-setenv x &&
	test_expect_code 2 dispatch -F bad-setenv hosts resolve x 2>err &&
	test_grep "bad-setenv:2: invalid .setenv. .novalue. (use NAME=value)" err &&
	printf "Host *\n  SendEnv A=b\n" >bad-sendenv &&
	compare bad-sendenv x &&
	test_expect_code 2 dispatch -F bad-sendenv hosts resolve x 2>err &&
	test_grep "bad-sendenv:2: invalid environment name .A=b. in .sendenv." err
'

printf 'Include loop.conf\nHost *\n  Port 2\n' >"$HOME/.ssh/loop.conf"
printf 'Host *\n  Include loop.conf\n' >"$TRASH/loop"
printf 'Include ~/.ssh/none-such-*.conf missing.conf\nMatch originalhost x exec "test -d %%d"\n  Include nested/level2.conf\nHost x\n  User after\n' >"$TRASH/missing"
test_expect_success 'Include: a looping file fails for both; missing files are skipped; Include under Match' '
	compare "$TRASH/loop" x &&
	test_expect_code 2 dispatch -F "$TRASH/loop" hosts resolve x 2>err &&
	compare "$TRASH/missing" x y
'

# ~, %d and the user config are the passwd entry's home in ssh (ssh.c, misc.c's
# tilde_expand), never $HOME; Include alone reads $HOME, through glob(3)'s GLOB_TILDE.
# With HOME somewhere else, dispatch agrees with ssh -G, and says the passwd home.
# (Last in this file: it changes the passwd entry for the rest.)
PWH=$TRASH/pwhome
mkdir -p "$PWH/.ssh" "$TRASH/envhome/.ssh"
cat >"$PWH/.ssh/config" <<'CONF'
Host tilde
    Include inc-port.conf
    Include ~/inc-user.conf
    IdentityFile ~/.ssh/id_tilde
    IdentityFile %d/id_pct_d
    CertificateFile ~/cert-%h
    UserKnownHostsFile ~/kh %d/kh2
    IdentityAgent ~/agent.sock
    ControlPath %d/cm-%C
Host ctl
    ControlPath ~/ctl-%h
CONF
printf 'Port 1111\n' >"$PWH/.ssh/inc-port.conf"
printf 'Port 2222\n' >"$TRASH/envhome/.ssh/inc-port.conf"
printf 'User pw-user\n' >"$PWH/inc-user.conf"
printf 'User env-user\n' >"$TRASH/envhome/inc-user.conf"
printf 'Host *\n    Port 9\n    User from-HOME\n' >"$TRASH/envhome/.ssh/config"
cp "$PWH/.ssh/config" "$TRASH/tilde"
test_expect_success '~ and %d are the passwd home, not $HOME (Include: $HOME), as in ssh' '
	test_passwd_home "$PWH" &&
	export HOME=$TRASH/envhome PW_HOME=$PWH &&
	compare - tilde ctl other &&
	compare "$TRASH/tilde" tilde ctl other &&
	dispatch hosts resolve tilde >out &&
	test_grep "^port 2222\$" out &&
	test_grep "^user env-user\$" out &&
	test_grep "^identityfile $PWH/.ssh/id_tilde\$" out &&
	test_grep "^identityfile $PWH/id_pct_d\$" out &&
	test_grep "^certificatefile $PWH/cert-tilde\$" out &&
	test_grep "^userknownhostsfile $PWH/kh $PWH/kh2\$" out &&
	test_grep "^identityagent $PWH/agent.sock\$" out &&
	test_grep "^controlpath $PWH/cm-[0-9a-f]*\$" out &&
	dispatch hosts resolve other >out &&
	test_grep "^userknownhostsfile $PWH/.ssh/known_hosts $PWH/.ssh/known_hosts2\$" out &&
	test_grep "^identityfile $PWH/.ssh/id_rsa\$" out &&
	! grep -i "from-HOME\|envhome" out &&
	dispatch hosts >out &&
	test_grep "^ *tilde" out
'

test_done
