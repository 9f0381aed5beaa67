#!/bin/bash
# t5710: dispatch's commands through the user's OpenSSH master (lib/transport/ssh_mux.c
# behind lib/transport/ssh.h). Masters are started here as a user would start them,
# with `ssh -fN -o ControlMaster=yes -o ControlPath=...`; the ssh config dispatch reads
# names the same ControlPath. Checked: -v says "via master" or "direct" per host, exit
# statuses and signals as direct, a timeout stops the remote command, hosts --check
# --json says via, fan-out mixing hosts with and without masters, sockets that must
# not be used (another user's, stale) fall back to direct, cp both ways, forward,
# submit/status/wait/logs to a plain host, ship HOST:PATH, a keyboard-interactive
# login used once by twenty commands. Waits are bounded; nothing is timed.
#
# The testbed is an instance of its own, without SLURM; it stays up for the next run
# (DISPATCH_TESTBED_DIR=/tmp/dispatch-testbed-t5710 tests/testbed/down removes it).
. "$(dirname "$0")/lib.sh"

export DISPATCH_TESTBED_SLURM=0
export DISPATCH_TESTBED_DIR=/tmp/dispatch-testbed-t5710
export DISPATCH_TESTBED_PORT_BASE=31710 DISPATCH_TESTBED_PREFIX=dmx71 DISPATCH_TESTBED_NET=10.188
command -v setpriv >/dev/null || skip_rest "needs setpriv (util-linux)"
testbed_up
TB=$DISPATCH_TESTBED_DIR
U=$DISPATCH_TESTBED_USER

track() { echo "$1" >>"$TRASH/.pids"; }
cleanup() {
	local p
	if [ -f "$TRASH/.pids" ]; then
		while read -r p; do kill "$p" 2>/dev/null; done <"$TRASH/.pids"
	fi
	umount "$TB/cluster/work/t5710-$$/full" 2>/dev/null
	rm -rf "$TRASH" "$TB/cluster/work/t5710-$$"
}
trap cleanup EXIT

# The config dispatch reads: every host's master at $TRASH/cm/ALIAS.
mkdir -m 700 "$TRASH/cm"
BASECFG=$DISPATCH_SSH_CONFIG
{ printf 'Host *\n  ControlPath %s/cm/%%n\n\n' "$TRASH"; cat "$BASECFG"; } >"$TRASH/ssh_config"
export DISPATCH_SSH_CONFIG=$TRASH/ssh_config

# start_master HOST: a master as a user would start one, at $TRASH/cm/HOST; prints its pid.
start_master() {
	local host=$1 sock=$TRASH/cm/$1 pid
	ssh -F "$BASECFG" -fN -o ControlMaster=yes -o ControlPath="$sock" \
		-o ControlPersist=600 "$host" </dev/null || return 1
	pid=$(ssh -F "$BASECFG" -o ControlPath="$sock" -O check "$host" 2>&1 |
		sed -n 's/.*(pid=\([0-9]*\)).*/\1/p')
	[ -n "$pid" ] || return 1
	track "$pid"
	echo "$pid"
}
accepted() { grep -c "Accepted publickey" "$TB/sshd/$1/log" || :; }

m1=$(start_master box1) || fail_rest "cannot start an ssh master on box1"

test_expect_success 'run through a master: output, and -v says so' '
	before=$(accepted box1) &&
	dispatch -v run -H box1 -- "echo hi; echo there >&2" >out 2>err &&
	echo hi >want && test_cmp want out &&
	test_grep "^there" err &&
	test_grep "box1: via master $TRASH/cm/box1 (pid $m1)" err &&
	test "$(accepted box1)" = "$before"
'

test_expect_success 'a host without a master connects directly, and -v says why' '
	dispatch -v run -H box2 -- "echo hi" >out 2>err &&
	echo hi >want && test_cmp want out &&
	test_grep "box2: direct (not through a master: .*no master" err
'

test_expect_success 'exit statuses and signals through the master as direct: 7, 143' '
	test_expect_code 7 dispatch run -H box1 -- exit 7 &&
	test_expect_code 7 dispatch run -H box2 -- exit 7 &&
	test_expect_code 143 dispatch run -H box1 -- '"'"'kill -TERM $$'"'"' 2>err &&
	test_must_be_empty err &&
	test_expect_code 143 dispatch run -H box2 -- '"'"'kill -TERM $$'"'"' &&
	test_expect_code 137 dispatch run -H box1 -- '"'"'kill -KILL $$'"'"'
'

test_expect_success 'stdin passes through the master' '
	head -c 300000 /dev/urandom >in &&
	dispatch run -H box1 -- cat <in >out && cmp in out
'

test_expect_success 'a timeout through the master stops the remote command' '
	pidfile=$TB/cluster/work/t5710-timeout.pid &&
	rm -f "$pidfile" &&
	test_expect_code 3 dispatch run -H box1 --timeout 2 -- \
		"echo \$\$ >$pidfile; echo started; sleep 300; echo not-reached" >out 2>err &&
	test_grep "timed out" err &&
	pid=$(cat "$pidfile") && test -n "$pid" &&
	for i in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done &&
	! kill -0 "$pid" 2>/dev/null &&
	! grep dispatch-session-pid out err
'

test_expect_success 'a fan-out mixes hosts with and without masters' '
	dispatch -v run -H box1,box2,box3 -- "echo \$((6*7))" >out 2>err &&
	test_grep "^box1: 42" out && test_grep "^box2: 42" out && test_grep "^box3: 42" out &&
	test_grep "box1: via master" err && test_grep "box2: direct" err &&
	test_grep "box3: direct" err
'

test_expect_success 'hosts --check --json reports via' '
	dispatch --json hosts --check -H box1,box2 >check.json &&
	python3 - check.json <<-PY
	import json, sys
	d = {h["name"]: h for h in json.load(open(sys.argv[1]))["hosts"]}
	assert d["box1"]["via"] == "master", d
	assert d["box2"]["via"] == "direct", d
	assert d["box1"]["status"] == "ok" and d["box2"]["status"] == "ok", d
	PY
'

WPORT=$((DISPATCH_TESTBED_PORT_BASE + 91))
LATE=$((DISPATCH_TESTBED_PORT_BASE + 92))
mkdir "$TRASH/www"
for i in $(seq 1 20); do head -c $((i * 30011)) /dev/urandom >"$TRASH/www/f$i"; done
(cd "$TRASH/www" && sha256sum f*) >"$TRASH/sums.txt"
# serve PORT: an http.server on 127.0.0.1:PORT (box1's localhost: the same machine)
serve() {
	(cd "$TRASH/www" && exec python3 -m http.server --bind 127.0.0.1 "$1" >/dev/null 2>&1 </dev/null) &
	track $!
	for i in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$1/f1" && return 0; sleep 0.1; done
	return 1
}
# fetch PORT N: N parallel GETs of f1..fN, each body checked
fetch() {
	python3 - "$1" "$2" "$TRASH/sums.txt" <<-\EOF
	import concurrent.futures, hashlib, sys, urllib.request
	port, n = int(sys.argv[1]), int(sys.argv[2])
	want = dict(line.split()[::-1] for line in open(sys.argv[3]))
	def get(i):
	    body = urllib.request.urlopen("http://127.0.0.1:%d/f%d" % (port, i), timeout=60).read()
	    return hashlib.sha256(body).hexdigest() == want["f%d" % i]
	with concurrent.futures.ThreadPoolExecutor(n) as ex:
	    results = list(ex.map(get, range(1, n + 1)))
	assert all(results), results
	EOF
}
# forward_up LOG: the local port of the forward whose -v log is LOG, once it listens
forward_up() {
	for i in $(seq 100); do grep -q "forwarding 127.0.0.1:" "$1" && break; sleep 0.1; done
	sed -n "s/.*forwarding 127.0.0.1:\([0-9]*\) .*/\1/p" "$1"
}

test_expect_success 'forward through the master: 20 parallel requests, each a stdio forward' '
	serve $WPORT &&
	before=$(accepted box1) &&
	{ "$DISPATCH" -v forward box1 0:$WPORT >/dev/null 2>fwd.err & } &&
	pid=$! && track $pid &&
	port=$(forward_up fwd.err) && test -n "$port" &&
	test_grep "box1: via master" fwd.err &&
	fetch $port 20 && fetch $port 20 &&
	test_grep "connection 40: handed to the master" fwd.err &&
	for i in $(seq 100); do [ "$(grep -c "connection [0-9]* closed" fwd.err)" = 40 ] && break; sleep 0.1; done &&
	test "$(grep -c "connection [0-9]* closed" fwd.err)" = 40 &&
	kill -INT $pid && rc=0 && { wait $pid || rc=$?; } && test "$rc" = 0 &&
	test "$(accepted box1)" = "$before"
'

test_expect_success 'forward through the master: nothing listening closes that client only' '
	{ "$DISPATCH" -v forward box1 0:$LATE >/dev/null 2>fwd2.err & } &&
	pid=$! && track $pid &&
	port=$(forward_up fwd2.err) && test -n "$port" &&
	! curl -sf -o /dev/null http://127.0.0.1:$port/f1 &&
	kill -0 $pid &&
	serve $LATE &&
	curl -sf -o f3 http://127.0.0.1:$port/f3 && cmp f3 "$TRASH/www/f3" &&
	kill $pid && wait $pid
'

R=$TB/cluster/work/t5710-$$
mkdir -p "$R" && chown "$U" "$R"
# "TYPE MODE PATH -> TARGET" for each entry under $1, sorted
listing() {
	(cd "$1" && find . -mindepth 1 -printf '%y %m %p -> %l\n' | sort)
}

test_expect_success 'cp through the master both ways: contents, modes, links; no new login' '
	mkdir -p tree/sub/deeper tree/empty &&
	echo hello >tree/a.txt &&
	printf "#!/bin/sh\necho run\n" >tree/sub/run.sh && chmod 755 tree/sub/run.sh &&
	head -c 5000017 /dev/urandom >tree/sub/deeper/big.bin &&
	: >tree/zero && chmod 600 tree/zero &&
	ln -s sub/run.sh tree/link && ln -s /nonexistent/target tree/dangling &&
	chmod 750 tree/sub && chmod 700 tree/empty &&
	before=$(accepted box1) &&
	dispatch -v cp -r tree box1:$R/up 2>err &&
	test_grep "box1: via master" err &&
	listing tree >want && listing "$R/up" >remote && test_cmp want remote &&
	dispatch cp -r box1:$R/up back &&
	listing back >got && test_cmp want got &&
	diff -r --no-dereference tree back &&
	test "$(accepted box1)" = "$before" &&
	find "$R" back -name ".*.dispatch-*" >tmps && test_must_be_empty tmps
'

test_expect_success 'cp through the master: a file replaced, -p keeps times, a missing source' '
	echo new >a.txt && chmod 640 a.txt && touch -d "2001-02-03 04:05:06" a.txt &&
	dispatch cp -p a.txt box1:$R/up/a.txt &&
	test "$(cat "$R/up/a.txt")" = new &&
	test "$(stat -c "%a %Y" "$R/up/a.txt")" = "$(stat -c "%a %Y" a.txt)" &&
	dispatch cp box1:$R/up/a.txt got.txt && test "$(cat got.txt)" = new &&
	test_expect_code 4 dispatch cp box1:$R/nothing-here x 2>err &&
	test_grep "nothing-here" err
'

# A file system of 2 MB on the host (a tmpfs): the writes of a 6 MB upload fail in
# the middle, those of a 2.5 MB one in its last 2 MB, while up to 64 of 32 kB are
# in flight (sftp_mux.c's window: the last ones are answered when the file is
# finished).
test_expect_success 'cp through the master: writes that fail mid-file fail the file, nothing left' '
	mkdir "$R/full" && mount -t tmpfs -o size=2m tmpfs "$R/full" && chown "$U" "$R/full" &&
	head -c 6000000 /dev/urandom >six.bin && head -c 2500000 six.bin >end.bin &&
	test_expect_code 1 dispatch cp six.bin box1:$R/full/six.bin 2>err &&
	test_grep "six.bin" err &&
	ls -A "$R/full" >left && test_must_be_empty left &&
	test_expect_code 1 dispatch cp end.bin box1:$R/full/end.bin 2>err &&
	test_grep "end.bin" err &&
	ls -A "$R/full" >left && umount "$R/full" && test_must_be_empty left &&
	dispatch cp six.bin box1:$R/six.bin && cmp six.bin "$R/six.bin"
'

# Reads keep a sliding window of requests in flight across calls (sftp_mux.c): files
# of many windows, of odd sizes, of one byte and of none come back whole.
test_expect_success 'cp through the master: files of many windows, odd sizes, one byte, none, down' '
	head -c 9437201 /dev/urandom >odd.bin && printf x >one.bin && : >none.bin &&
	for f in odd.bin one.bin none.bin six.bin; do
		dispatch cp $f box1:$R/$f && dispatch cp box1:$R/$f back-$f && cmp $f back-$f || return 1
	done
'

# bound_socket PATH: a socket file that nothing listens on (as a master that died leaves)
bound_socket() {
	python3 -c 'import socket, sys; s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' "$1"
}

test_expect_success 'a stale socket: dispatch connects directly and -v says why' '
	bound_socket "$TRASH/cm/box2" && test -S "$TRASH/cm/box2" &&
	dispatch -v run -H box2 -- "echo ok" >out 2>err &&
	echo ok >want && test_cmp want out &&
	test_grep "box2: direct (not through a master: .*stale" err &&
	rm -f "$TRASH/cm/box2"
'

test_expect_success 'a socket of another user is not used: direct, and -v says why' '
	( python3 -c "import socket, sys, time; s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(4); print(\"ready\", flush=True); time.sleep(600)" "$TRASH/cm/box3" >ready & echo $! >listener.pid ) &&
	track "$(cat listener.pid)" &&
	for i in $(seq 100); do test -s ready && break; sleep 0.1; done &&
	chown "$U" "$TRASH/cm/box3" &&
	dispatch -v run -H box3 -- "echo ok" >out 2>err &&
	echo ok >want && test_cmp want out &&
	test_grep "box3: direct (not through a master: .*belongs to uid $(id -u "$U")" err &&
	kill "$(cat listener.pid)" && rm -f "$TRASH/cm/box3"
'

# ProxyJump: inner is reached only through bastion. A master on the hop carries
# dispatch's own SSH session to inner (libssh2 over a stdio forward of the master);
# a master on inner itself carries everything (it holds the hops already).
test_expect_success 'ProxyJump: the hop'"'"'s master carries the connection to inner' '
	mb=$(start_master bastion) &&
	before=$(accepted bastion) &&
	dispatch -v run -H inner -- "hostname -I 2>/dev/null || hostname; echo inner-ok" >out 2>err &&
	test_grep "^inner-ok" out &&
	test_grep "inner: connecting to .* through the master of ProxyJump hop bastion" err &&
	test_grep "inner: logged in" err &&
	dispatch cp tree/a.txt inner:$R/via-hop.txt &&
	test "$(cat "$R/via-hop.txt")" = hello &&
	test "$(accepted bastion)" = "$before" &&
	kill "$mb"
'

test_expect_success 'ProxyJump: a master on the destination itself is used as it is' '
	mi=$(start_master inner) &&
	before_b=$(accepted bastion) && before_i=$(accepted inner) &&
	dispatch -v run -H inner -- "echo inner-ok" >out 2>err &&
	echo inner-ok >want && test_cmp want out &&
	test_grep "inner: via master" err &&
	test "$(accepted bastion)" = "$before_b" && test "$(accepted inner)" = "$before_i" &&
	kill "$mi"
'

# A post-quantum-only sshd (KexAlgorithms sntrup761x25519-sha512@openssh.com, as in
# t5020): no libssh2 release can connect to it, OpenSSH's ssh can, and so can
# dispatch through ssh's master.
PQ=$TB/t5710
PQPORT=$((DISPATCH_TESTBED_PORT_BASE + 93))
mkdir -p "$PQ" && chmod 755 "$PQ"
[ -f "$PQ/host_ed25519" ] || ssh-keygen -q -t ed25519 -N "" -C t5710 -f "$PQ/host_ed25519" </dev/null >/dev/null
mkdir -p /run/sshd
cat >"$PQ/pq.conf" <<EOF
KexAlgorithms sntrup761x25519-sha512@openssh.com
HostKey $PQ/host_ed25519
Port $PQPORT
ListenAddress 127.0.0.1
PidFile $PQ/pq.pid
AuthorizedKeysFile $TB/authorized_keys
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
AllowUsers $U
AllowTcpForwarding yes
LogLevel VERBOSE
Subsystem sftp internal-sftp
EOF
old=$(cat "$PQ/pq.pid" 2>/dev/null) || old=
if [ -n "$old" ] && grep -q "$PQ/pq.conf" "/proc/$old/cmdline" 2>/dev/null; then
	kill "$old"
	for _ in $(seq 50); do kill -0 "$old" 2>/dev/null || break; sleep 0.1; done
fi
: >"$PQ/pq.log"
/usr/sbin/sshd -D -f "$PQ/pq.conf" -E "$PQ/pq.log" &
track $!
for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$PQPORT") 2>/dev/null && break; sleep 0.1; done
echo "[127.0.0.1]:$PQPORT $(cut -d" " -f1,2 "$PQ/host_ed25519.pub")" >"$TRASH/pq_known_hosts"
# pq's Host block, then the config dispatch reads (ControlPath first) and ssh's
printf 'Host pq\n\tHostName 127.0.0.1\n\tPort %s\n\tUser %s\n\tIdentityFile %s\n\tIdentitiesOnly yes\n\tUserKnownHostsFile %s\n\tStrictHostKeyChecking yes\n\tBatchMode yes\n\n' \
	"$PQPORT" "$U" "$TB/keys/id_ed25519" "$TRASH/pq_known_hosts" >"$TRASH/pq-host"
cat "$TRASH/pq-host" "$DISPATCH_SSH_CONFIG" >"$TRASH/ssh_config.pq"
cat "$TRASH/pq-host" "$BASECFG" >"$TRASH/ssh_config.pqbase"

test_expect_success 'post-quantum only: direct fails with its message; through a master it runs, copies, forwards' '
	export DISPATCH_SSH_CONFIG=$TRASH/ssh_config.pq &&
	test_expect_code 255 dispatch run -H pq -- true 2>err &&
	test_grep "server offers only post-quantum key exchange (sntrup761x25519-sha512@openssh.com)" err &&
	ssh -F "$TRASH/ssh_config.pqbase" -fN -o ControlMaster=yes -o ControlPath="$TRASH/cm/pq" \
		-o ControlPersist=600 pq </dev/null &&
	track "$(ssh -F "$TRASH/ssh_config.pqbase" -o ControlPath="$TRASH/cm/pq" -O check pq 2>&1 |
		sed -n "s/.*(pid=\([0-9]*\)).*/\1/p")" &&
	dispatch -v run -H pq -- "echo pq-ok" >out 2>err &&
	echo pq-ok >want && test_cmp want out && test_grep "pq: via master" err &&
	test_expect_code 7 dispatch run -H pq -- "exit 7" &&
	dispatch cp -r tree pq:$R/pqtree &&
	listing tree >want && listing "$R/pqtree" >got && test_cmp want got &&
	dispatch cp pq:$R/pqtree/sub/deeper/big.bin big.back && cmp big.back tree/sub/deeper/big.bin &&
	{ "$DISPATCH" -v forward pq 0:$WPORT </dev/null >/dev/null 2>pqfwd.err & } &&
	fpid=$! && track $fpid &&
	port=$(forward_up pqfwd.err) && test -n "$port" && fetch $port 10 &&
	kill -INT $fpid && wait $fpid
'

# A master that dies in the middle of a wait is a dropped connection: the next poll
# fails, the one after connects directly (box2 has a key login), and the wait ends
# with the job's real state and exit status.
test_expect_success 'the master dies during wait: wait goes on directly, right state and status' '
	m2=$(start_master box2) &&
	gate=$TB/cluster/work/t5710-gate-$$ && rm -f "$gate" &&
	job=$(dispatch submit -H box2 -J gated -- "while [ ! -e $gate ]; do sleep 0.2; done; echo released; exit 5") &&
	{ "$DISPATCH" --json -v wait --interval 1 "$job" >wait.json 2>wait.err & } &&
	wpid=$! && track $wpid &&
	for i in $(seq 100); do grep -q "box2: via master" wait.err && break; sleep 0.1; done &&
	test_grep "box2: via master" wait.err &&
	kill "$m2" &&
	for i in $(seq 100); do kill -0 "$m2" 2>/dev/null || break; sleep 0.1; done &&
	! kill -0 "$m2" 2>/dev/null &&
	for i in $(seq 300); do grep -q "box2: direct" wait.err && break; sleep 0.1; done &&
	touch "$gate" &&
	rc=0 && { wait $wpid || rc=$?; } &&
	test "$rc" = 1 &&
	test_grep "box2: direct (not through a master" wait.err &&
	python3 - wait.json <<-PY
	import json, sys
	d = json.load(open(sys.argv[1]))
	j = d["jobs"][0] if "jobs" in d else d[0]
	assert j["state"] == "FAILED", j
	assert j["exit_code"] == 5, j
	PY
'

# A snapshot over 1 MiB is uploaded (sftp_files: a new file, its size, a rename that
# never replaces) rather than put inside the script: through the master too.
test_expect_success 'submit-packed through the master: the snapshot uploaded over SFTP, once' '
	git init -q bigrepo && (cd bigrepo && head -c 3000000 /dev/urandom >big.bin &&
		git add -A && git -c user.name=t -c user.email=t@t commit -q -m big) &&
	sum=$(sha256sum <bigrepo/big.bin | cut -d" " -f1) &&
	before=$(accepted box1) &&
	j1=$(dispatch -v submit-packed -H box1 --repo bigrepo -J big1 -- "sha256sum <big.bin" 2>err1) &&
	test_grep "box1: via master" err1 &&
	j2=$(dispatch -v submit-packed -H box1 --repo bigrepo -J big2 -- "sha256sum <big.bin" 2>err2) &&
	dispatch wait "$j1" "$j2" &&
	dispatch logs "$j1" >l1 && test_grep "^$sum " l1 &&
	dispatch logs "$j2" >l2 && test_grep "^$sum " l2 &&
	test "$(accepted box1)" = "$before"
'

# kbd1 asks for a password at every login (keyboard-interactive through PAM): a
# stand-in for a second factor. One login by ssh (sshpass answers its prompt; the
# master stays in the foreground under it), then twenty dispatch commands of all
# kinds with no terminal, and kbd1's sshd has seen exactly one authentication.
if command -v sshpass >/dev/null; then
	sed "s|^hosts:\$|hosts:\n  kbd1:\n    ssh: kbd1\n    cluster: testbed\n    type: plain\n    chips: {}|" \
		"$DISPATCH_INVENTORY" >"$TRASH/inventory.yaml"
	kauth() { grep -c "Accepted keyboard-interactive/pam" "$TB/sshd/kbd1/log" || :; }
	test_expect_success 'a keyboard-interactive login once, then twenty commands of all kinds' '
		export DISPATCH_INVENTORY=$TRASH/inventory.yaml &&
		grep -q "^  kbd1:" "$DISPATCH_INVENTORY" &&
		test_expect_code 255 dispatch run -H kbd1 -- true </dev/null 2>err &&
		before=$(kauth) &&
		{ sshpass -f "$DISPATCH_TESTBED_KBD_PASSWORD_FILE" ssh -F "$BASECFG" \
			-o BatchMode=no -o NumberOfPasswordPrompts=1 -N -o ControlMaster=yes \
			-o ControlPath="$TRASH/cm/kbd1" kbd1 </dev/null >/dev/null 2>&1 & } &&
		track $! &&
		for i in $(seq 200); do ssh -F "$BASECFG" -o ControlPath="$TRASH/cm/kbd1" -O check kbd1 2>/dev/null && break; sleep 0.1; done &&
		test "$(kauth)" = $((before + 1)) &&
		n=0 && ok() { n=$((n + 1)); } &&
		dispatch -v run -H kbd1 -- "echo one" </dev/null >out 2>err && ok &&
		echo one >want && test_cmp want out && test_grep "kbd1: via master" err &&
		test_expect_code 7 dispatch run -H kbd1 -- "exit 7" </dev/null && ok &&
		test_expect_code 143 dispatch run -H kbd1 -- '"'"'kill -TERM $$'"'"' </dev/null && ok &&
		dispatch run -H kbd1,box1 -- "echo fan" </dev/null >out && ok &&
		test_grep "^kbd1: fan" out && test_grep "^box1: fan" out &&
		dispatch --json hosts --check -H kbd1 </dev/null >check.json && ok &&
		test_grep "\"via\":[[:space:]]*\"master\"" check.json &&
		dispatch hosts show kbd1 </dev/null >show && ok &&
		job=$(dispatch submit -H kbd1 -J kjob -- "echo in-the-job; exit 0" </dev/null) && ok &&
		dispatch wait "$job" </dev/null && ok &&
		dispatch status "$job" </dev/null >st && ok && test_grep "COMPLETED" st &&
		dispatch logs "$job" </dev/null >log && ok && test_grep "^in-the-job" log &&
		job2=$(dispatch submit -H kbd1 -J ksleep -- "sleep 300" </dev/null) && ok &&
		dispatch cancel "$job2" </dev/null >out && ok && test_grep "cancelled" out &&
		echo kbd-file >k.txt &&
		dispatch cp k.txt kbd1:$R/k.txt </dev/null && ok &&
		dispatch cp kbd1:$R/k.txt k2.txt </dev/null && ok && cmp k.txt k2.txt &&
		dispatch cp -r tree kbd1:$R/ktree </dev/null && ok &&
		listing tree >want && listing "$R/ktree" >got && test_cmp want got &&
		git init -q repo && (cd repo && echo shipped >s.txt && chmod 755 s.txt &&
			git add -A && git -c user.name=t -c user.email=t@t commit -q -m one) &&
		dispatch ship --repo repo kbd1:$R/kship </dev/null >/dev/null && ok &&
		test "$(cat "$R/kship/s.txt")" = shipped && test -x "$R/kship/s.txt" &&
		job3=$(dispatch submit-packed -H kbd1 --repo repo -J kpacked -- "cat s.txt" </dev/null) && ok &&
		dispatch wait "$job3" </dev/null && ok &&
		dispatch logs "$job3" </dev/null >log3 && ok && test_grep "^shipped" log3 &&
		{ "$DISPATCH" -v forward kbd1 0:$WPORT </dev/null >/dev/null 2>kfwd.err & } &&
		fpid=$! && track $fpid &&
		port=$(forward_up kfwd.err) && test -n "$port" && fetch $port 5 && ok &&
		kill -INT $fpid && wait $fpid &&
		echo "$n commands" &&
		test "$n" -ge 20 &&
		test "$(kauth)" = $((before + 1)) &&
		! grep -i "password" "$TB/sshd/kbd1/log" | grep -v "keyboard-interactive/pam" | grep -qi "failed"
	'
fi

test_done
