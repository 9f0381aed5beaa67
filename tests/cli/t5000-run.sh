#!/bin/bash
# t5000: dispatch run against real sshd (tests/testbed): exit statuses and signals
# passed through, stderr kept apart, 1 MB each way, a dead host, a changed host key,
# a passphrase in BatchMode, ProxyJump over two hops, --timeout, -t; then many hosts:
# 32-host fan-out with a dead host, -b, --json. Usage errors run without the testbed.
# The testbed here is its own instance (own directory, ports, namespaces and
# network), so that other testbed tests running alongside (t9000 brings the default
# one up and down) cannot pull it away. It stays up for the next run (up is
# idempotent); DISPATCH_TESTBED_DIR=/tmp/dispatch-testbed-t5000 tests/testbed/down
# removes it.
. "$(dirname "$0")/lib.sh"

test_expect_success 'no hosts is a usage error' '
	test_expect_code 2 dispatch run -- true 2>err &&
	test_grep "no hosts" err
'

test_expect_success 'a bad --fanout is a usage error' '
	test_expect_code 2 dispatch run -H h --fanout 0 -- true 2>err &&
	test_grep "fanout" err
'

test_expect_success 'a bad hostlist is a usage error' '
	test_expect_code 2 dispatch run -H "box[1-" -- true 2>err
'

export DISPATCH_TESTBED_SLURM=0
export DISPATCH_TESTBED_DIR=/tmp/dispatch-testbed-t5000
export DISPATCH_TESTBED_PORT_BASE=24500 DISPATCH_TESTBED_PREFIX=dtr5 DISPATCH_TESTBED_NET=10.157
testbed_up
TB=$DISPATCH_TESTBED_DIR


test_expect_success 'exit status passed through' '
	test_expect_code 7 dispatch run -H box1 -- exit 7 &&
	dispatch run -H box1 -- true
'

test_expect_success 'a signal N gives 128+N' '
	test_expect_code 143 dispatch run -H box1 -- '"'"'kill -TERM $$'"'"' &&
	test_expect_code 137 dispatch run -H box1 -- '"'"'kill -KILL $$'"'"'
'

test_expect_success 'stdout and stderr stay apart' '
	dispatch run -H box2 -- "echo to-out; echo to-err >&2" >out 2>err &&
	echo to-out >want-out && echo to-err >want-err &&
	test_cmp want-out out && test_cmp want-err err
'

test_expect_success 'the command runs in a login shell, words joined as ssh joins them' '
	dispatch run -H box1 -- echo "a  b" ";" shopt -q login_shell "&&" echo login >out &&
	printf "a b\nlogin\n" >want && test_cmp want out
'

test_expect_success '1 MB in through stdin and back out, intact' '
	head -c 1048576 /dev/urandom >in &&
	dispatch run -H box1 -- cat <in >out &&
	cmp in out &&
	dispatch run -H box1 -- "head -c 1048576 /dev/zero | tr \\\\0 x" >big &&
	test "$(wc -c <big)" = 1048576 &&
	test "$(tr -d x <big | wc -c)" = 0
'

test_expect_success 'stdin end reaches the remote side' '
	printf "abc\n" | dispatch run -H box3 -- "cat; echo end" >out &&
	printf "abc\nend\n" >want && test_cmp want out
'

# A server that drops its first connection before the key exchange and then carries
# the next ones to box1: a failure before anything was sent is tried again.
test_expect_success 'a connection dropped before the key exchange is tried again' '
	port=$((DISPATCH_TESTBED_PORT_BASE + 90)) &&
	cat >flaky.py <<-\PY &&
	import socket, sys, threading
	srv = socket.socket(); srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
	srv.bind(("127.0.0.1", int(sys.argv[1]))); srv.listen(8); srv.settimeout(20)
	print("ready", flush=True)
	def pipe(a, b):
	    while (d := a.recv(65536)):
	        b.sendall(d)
	    b.shutdown(socket.SHUT_WR)
	c, _ = srv.accept(); c.close()              # the first: dropped at once
	c, _ = srv.accept()
	up = socket.create_connection(("127.0.0.1", int(sys.argv[2])))
	threading.Thread(target=pipe, args=(up, c), daemon=True).start()
	pipe(c, up)
	PY
	{ python3 flaky.py $port $((DISPATCH_TESTBED_PORT_BASE + 1)) >flaky.out & } &&
	for i in $(seq 50); do test -s flaky.out && break; sleep 0.1; done &&
	cat >cfg <<-EOF &&
	Host flaky
		HostName 127.0.0.1
		Port $port
		HostKeyAlias [127.0.0.1]:$((DISPATCH_TESTBED_PORT_BASE + 1))
		User $DISPATCH_TESTBED_USER
		IdentityFile $TB/keys/id_ed25519
		UserKnownHostsFile $TB/known_hosts
		BatchMode yes
	EOF
	dispatch -v -F cfg run -H flaky -- echo ran >out 2>err &&
	echo ran >want && test_cmp want out &&
	test_grep "flaky: .*trying again in [0-9.]* s" err &&
	test "$(grep -c "flaky: connecting to 127.0.0.1 port $port" err)" = 2
'

# Once the command is sent, a broken connection is never a reason to send it again.
test_expect_success 'a connection lost after the command started: 255, the command ran once' '
	rm -f "$TB/cluster/work/ran-once" &&
	test_expect_code 255 dispatch run -H box2 -- "echo run >>$TB/cluster/work/ran-once; p=\$\$;
		while p=\$(ps -o ppid= -p \$p | tr -d \" \") && [ \"\${p:-0}\" -gt 1 ]; do
			[ \"\$(ps -o comm= -p \$p)\" = sshd ] && kill -9 \$p && break
		done; sleep 5" 2>err &&
	test_grep "connection to .box2. lost" err &&
	test "$(cat "$TB/cluster/work/ran-once")" = run
'

test_expect_success 'a dead host: 255 and a clear message' '
	test_expect_code 255 dispatch run -H down1 -- true 2>err &&
	test_grep "cannot connect to .down1. (127.0.0.1 port $((DISPATCH_TESTBED_PORT_BASE + 5))): Connection refused" err
'

test_expect_success 'a changed host key: 255, the fingerprint and the known_hosts line' '
	fp=$(ssh-keygen -lf "$TB/sshd/badkey1/host_ed25519.pub" | cut -d" " -f2) &&
	line=$(grep -n "^\[127.0.0.1\]:$((DISPATCH_TESTBED_PORT_BASE + 4)) " "$TB/known_hosts" | cut -d: -f1) &&
	test -n "$fp" && test -n "$line" &&
	test_expect_code 255 dispatch run -H badkey1 -- true 2>err &&
	test_grep "host key for .badkey1.* has CHANGED" err &&
	test_grep -F "$fp" err &&
	test_grep -F "$TB/known_hosts:$line" err
'

test_expect_success 'an unknown host key is refused, and accept-new records it' '
	cat >cfg <<-EOF &&
	Host newkey
		HostName 127.0.0.1
		Port $((DISPATCH_TESTBED_PORT_BASE + 2))
		User $DISPATCH_TESTBED_USER
		IdentityFile $TB/keys/id_ed25519
		UserKnownHostsFile $PWD/kh
		BatchMode yes
	EOF
	test_expect_code 255 dispatch -F cfg run -H newkey -- true 2>err &&
	test_grep "is not known" err &&
	test_expect_code 255 dispatch -F cfg run -H newkey -- true 2>/dev/null &&
	test ! -e kh &&
	sed -i "s/BatchMode yes/BatchMode yes\n\tStrictHostKeyChecking accept-new/" cfg &&
	dispatch -F cfg run -H newkey -- true &&
	grep "^\[127.0.0.1\]:$((DISPATCH_TESTBED_PORT_BASE + 2)) ssh-ed25519 " kh &&
	cp kh kh.before &&
	dispatch -F cfg run -H newkey -- true &&
	test_cmp kh.before kh
'

test_expect_success 'the host key type known_hosts holds is the one asked for' '
	port=$((DISPATCH_TESTBED_PORT_BASE + 2)) &&
	cat >cfg <<-EOF &&
	Host ecdsakey
		HostName 127.0.0.1
		Port $port
		User $DISPATCH_TESTBED_USER
		IdentityFile $TB/keys/id_ed25519
		UserKnownHostsFile $PWD/kh-ecdsa
		BatchMode yes
	EOF
	echo "[127.0.0.1]:$port $(cut -d" " -f1,2 "$TB/sshd/box2/host_ecdsa.pub")" >kh-ecdsa &&
	dispatch -v -F cfg run -H ecdsakey -- echo ok >out 2>err &&
	echo ok >want && test_cmp want out &&
	test_grep "server host key: ECDSA" err &&
	dispatch -v run -H box2 -- true 2>err &&
	test_grep "server host key: ED25519" err
'

test_expect_success 'a key that needs a passphrase in BatchMode: 255, the key named' '
	test_expect_code 255 dispatch run -H pass1 -- true 2>err &&
	test_grep "key $TB/keys/id_pass needs a passphrase (BatchMode)" err &&
	test_grep "agent: no agent" err
'

test_expect_success 'ProxyJump over one and two hops' '
	dispatch run -H inner -- "echo \$SSH_CONNECTION" >one &&
	test_grep " $DISPATCH_TESTBED_NET.1.2 22\$" one &&
	before=$(grep -c "Accepted publickey" "$TB/sshd/box1/log") &&
	dispatch run -H inner2 -- "echo \$SSH_CONNECTION" >two &&
	test_grep " $DISPATCH_TESTBED_NET.1.2 22\$" two &&
	after=$(grep -c "Accepted publickey" "$TB/sshd/box1/log") &&
	test "$after" -gt "$before" &&  # the first hop was box1
	head -c 300000 /dev/urandom >in &&
	dispatch run -H inner2 -- cat <in >out && cmp in out
'

test_expect_success 'ProxyCommand carries the session' '
	cat >cfg <<-EOF &&
	Host pc
		HostName 127.0.0.1
		Port $((DISPATCH_TESTBED_PORT_BASE + 1))
		User $DISPATCH_TESTBED_USER
		IdentityFile $TB/keys/id_ed25519
		UserKnownHostsFile $TB/known_hosts
		BatchMode yes
		ProxyCommand bash -c '"'"'exec 3<>/dev/tcp/%h/%p; cat <&3 & exec cat >&3'"'"'
	EOF
	dispatch -F cfg run -H pc -- echo through-proxy >out &&
	test_grep -x through-proxy out
'

test_expect_success 'the agent: a passphrase key loaded there logs in' '
	eval "$(ssh-agent -s)" >/dev/null &&
	trap "kill $SSH_AGENT_PID" EXIT &&
	printf "#!/bin/sh\ncat %s\n" "$DISPATCH_TESTBED_PASSPHRASE_FILE" >askpass && chmod +x askpass &&
	SSH_ASKPASS=$PWD/askpass SSH_ASKPASS_REQUIRE=force DISPLAY=: ssh-add "$TB/keys/id_pass" </dev/null 2>/dev/null &&
	dispatch run -H pass1 -- echo agent-ok >out &&
	test_grep -x agent-ok out &&
	SSH_AUTH_SOCK=$PWD/nosuch test_expect_code 255 dispatch run -H pass1 -- true 2>err &&
	test_grep "agent: cannot connect to $PWD/nosuch" err
'

test_expect_success 'inner is not reachable without the jump' '
	test_expect_code 255 dispatch run -H inner-direct -- true 2>err
'

test_expect_success '--timeout stops the remote command and exits 3' '
	test_expect_code 3 dispatch run -H box1 --timeout 1 -- "sleep 4242; echo never" >out 2>err &&
	test_grep "timed out after 1 s" err &&
	test_must_be_empty out &&
	sleep 0.5 &&
	! pgrep -f "^sleep 424[2]"
'

# A server that takes the connection and never says a word: --timeout bounds the
# connecting too (else ConnectTimeout 5 times three attempts, and exit 255).
test_expect_success '--timeout counts the connecting: a silent host exits 3' '
	port=$((DISPATCH_TESTBED_PORT_BASE + 91)) &&
	cat >silent.py <<-\PY &&
	import socket, sys, time
	srv = socket.socket(); srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
	srv.bind(("127.0.0.1", int(sys.argv[1]))); srv.listen(8)
	print("ready", flush=True)
	held, end = [], time.time() + 15
	srv.settimeout(1)
	while time.time() < end:
	    try:
	        held.append(srv.accept()[0])
	    except socket.timeout:
	        pass
	PY
	{ python3 silent.py $port >silent.out & } && spid=$! &&
	for i in $(seq 50); do test -s silent.out && break; sleep 0.1; done &&
	{ printf "Host silent\n\tHostName 127.0.0.1\n\tPort %s\n\tConnectTimeout 5\n\tBatchMode yes\n\n" $port &&
	  cat "$DISPATCH_SSH_CONFIG"; } >cfg &&
	test_expect_code 3 dispatch -F cfg run --timeout 2 -H silent -- true 2>err &&
	test_grep "dispatch: --timeout of 2 s ran out while connecting to .silent." err &&
	test_expect_code 1 dispatch -F cfg --json run --timeout 2 -H silent,box1 -- true >j.json 2>err &&
	python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
h = {x[\"host\"]: x for x in d[\"hosts\"]}
assert \"ran out while connecting\" in h[\"silent\"][\"error\"], h
assert h[\"box1\"][\"exit_status\"] == 0, h
" j.json &&
	kill $spid
'

test_expect_success '-t gives the command a terminal' '
	dispatch run -H box1 -t -- "test -t 0 && test -t 1 && echo tty" </dev/null >out &&
	test_grep "^tty" out &&
	test_expect_code 1 dispatch run -H box1 -- "test -t 1" </dev/null
'

fan=$(seq -f "fan%g" 1 32 | paste -sd, -)

test_expect_success '32 hosts with a dead one: exit 1, summary, every other output' '
	test_expect_code 1 dispatch run -H "$fan,down1" -- "echo hello; echo oops >&2" >out 2>err &&
	for i in $(seq 1 32); do test_grep -x "fan$i: hello" out >/dev/null || exit 1; done &&
	test "$(wc -l <out)" = 32 &&
	test "$(grep -c ": oops\$" err)" = 32 &&
	test_grep "1 of 33 hosts failed: down1 (could not connect)" err
'

test_expect_success 'partial last lines are completed, exit statuses summarized' '
	test_expect_code 1 dispatch run -H "box[1-3]" -- "printf no-newline; [ \$(id -u) = 0 ] || exit 5" >out 2>err &&
	test_grep -x "box1: no-newline" out &&
	test_grep -x "box3: no-newline" out &&
	test_grep "3 of 3 hosts failed: box\[1-3\] (exit status 5)" err
'

test_expect_success '-b gathers identical outputs' '
	dispatch run -b -H "box[1-3],fan1" -- "echo same; echo line2" >out &&
	cat >want <<-EOF &&
	---------------
	box[1-3],fan1 (4)
	---------------
	same
	line2
	EOF
	test_cmp want out
'

test_expect_success '-b keeps different outputs apart' '
	dispatch run -b -H "box1,box2" -- "echo \$SSH_CONNECTION | cut -d\" \" -f4" >out &&
	test_grep -x "box1 (1)" out &&
	test_grep -x "box2 (1)" out &&
	test_grep -x "$((DISPATCH_TESTBED_PORT_BASE + 1))" out
'

test_expect_success '--all runs on every inventory host' '
	test -n "${DISPATCH_INVENTORY:-}" &&
	dispatch run --all -- echo up >out &&
	sort out >got &&
	dispatch --json hosts | python3 -c "import json, sys; [print(h[\"name\"] + \": up\") for h in json.load(sys.stdin)[\"hosts\"] if h[\"source\"] == \"inventory\"]" | sort >want &&
	test_grep "^box1: up" want &&
	test_cmp want got
'

test_expect_success '--json: one document, per-host results' '
	test_expect_code 1 dispatch --json run -H "box[1-2],down1" -- "echo out; echo err >&2; exit 2" >out &&
	python3 - out <<-\EOF
	import json, sys
	doc = json.load(open(sys.argv[1]))
	hosts = doc["hosts"]
	assert [h["host"] for h in hosts] == ["box1", "box2", "down1"], hosts
	for h in hosts:
	    assert set(h) == {"host", "exit_status", "stdout", "stderr", "error", "timed_out", "seconds"}, h
	    assert isinstance(h["seconds"], (int, float))
	for h in hosts[:2]:
	    assert h["exit_status"] == 2 and h["stdout"] == "out\n" and h["stderr"] == "err\n" and h["error"] is None, h
	assert hosts[2]["exit_status"] is None and "Connection refused" in hosts[2]["error"], hosts[2]
	EOF
'

test_expect_success '--json on one host with a timeout' '
	test_expect_code 1 dispatch --json run -H box1 --timeout 1 -- "echo started; sleep 4243" >out &&
	python3 -c "import json,sys; h=json.load(open(\"out\"))[\"hosts\"][0]; assert h[\"timed_out\"] and h[\"stdout\"] == \"started\n\", h"
'

test_done
