#!/bin/bash
# t5210: dispatch forward against real sshd (tests/testbed): 50 parallel HTTP
# requests through one forward (to a python http.server on the host behind the
# bastion, so through ProxyJump too), a port where nothing listens yet (the client
# is closed, the forward lives on), Ctrl-C, --background, --json, and a busy local
# port (an error before connecting). Shares t5200's testbed instance.
. "$(dirname "$0")/lib.sh"

test_expect_success 'bad ports are usage errors' '
	test_expect_code 2 dispatch forward h 0 2>err &&
	test_grep "bad remote port" err &&
	test_expect_code 2 dispatch forward h x:80 2>err &&
	test_grep "bad local port .x." err &&
	test_expect_code 2 dispatch forward h 80:70000 2>err
'

# hold_port: a listener on a free local port; its port in $PWD/held.port
hold_port() {
	python3 -c '
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen()
open("held.port", "w").write(str(s.getsockname()[1]))
time.sleep(120)' &
	held_pid=$!
	for _ in $(seq 50); do [ -s held.port ] && return 0; sleep 0.1; done
	return 1
}

test_expect_success 'a busy local port fails before any connection is made' '
	hold_port &&
	port=$(cat held.port) &&
	test_expect_code 1 dispatch forward no-such-host.invalid $port:80 2>err &&
	kill $held_pid &&
	test_grep "local port $port is already in use" err &&
	! grep "no-such-host" err
'

skip_rest() {
	echo "ok $((test_count + 1)) # skip $1"
	test_count=$((test_count + 1))
	test_done
	exit $?
}
[ "$(id -u)" = 0 ] || skip_rest "not root: the testbed starts sshd and creates network namespaces"
unshare --net true 2>/dev/null || skip_rest "cannot create network namespaces here"
[ -f "$TEST_SRCDIR/tests/testbed/up" ] || skip_rest "no tests/testbed in this tree"

export DISPATCH_TESTBED_SLURM=0
export DISPATCH_TESTBED_DIR=/tmp/dispatch-testbed-t5200
export DISPATCH_TESTBED_PORT_BASE=25000 DISPATCH_TESTBED_PREFIX=dtc5 DISPATCH_TESTBED_NET=10.158 DISPATCH_TESTBED_FAN=2
exports=$(bash "$TEST_SRCDIR/tests/testbed/up" 2>"$TRASH/up.log") ||
	fail_rest "tests/testbed/up failed: $(tail -1 "$TRASH/up.log")"
eval "$exports"

# The web server runs on inner (its own network namespace, so its port cannot clash
# with ours) in a directory of this run; remote pids are recorded to be killed.
R=t5210.$$
WPORT=$((DISPATCH_TESTBED_PORT_BASE + 80))
LATE=$((DISPATCH_TESTBED_PORT_BASE + 81))
: >"$TRASH/remote-inner.pids"
: >"$TRASH/remote-box1.pids"
: >"$TRASH/local.pids"
cleanup() {
	local p
	for p in $(cat "$TRASH/local.pids"); do kill "$p" 2>/dev/null; done
	for p in $(cat "$TRASH/remote-inner.pids"); do dispatch run -H inner -- "kill $p" >/dev/null 2>&1; done
	for p in $(cat "$TRASH/remote-box1.pids"); do dispatch run -H box1 -- "kill $p" >/dev/null 2>&1; done
	dispatch run -H inner -- "rm -rf $R" >/dev/null 2>&1
	rm -rf "$TRASH"
}
trap cleanup EXIT

# web HOST PORT: an http.server on HOST's localhost:PORT serving $R; waits until it
# answers, and fails when it is not ours that does (the port was taken)
web() {
	dispatch run -H "$1" -- "cd $R && { setsid python3 -m http.server --bind 127.0.0.1 $2 >/dev/null 2>&1 </dev/null & pid=\$!; } &&
		echo \$pid && for i in \$(seq 50); do python3 -c \"import socket; socket.create_connection(('127.0.0.1', $2))\" 2>/dev/null && break; sleep 0.1; done &&
		kill -0 \$pid" >>"$TRASH/remote-$1.pids"
}

# fetch PORT N: N parallel GETs of f1..fN through 127.0.0.1:PORT, each body checked
# against the sums the host gave (sums.txt)
fetch() {
	python3 - "$1" "$2" <<-\EOF
	import concurrent.futures, hashlib, sys, urllib.request
	port, n = int(sys.argv[1]), int(sys.argv[2])
	want = dict(line.split()[::-1] for line in open("sums.txt"))
	def get(i):
	    body = urllib.request.urlopen("http://127.0.0.1:%d/f%d" % (port, i), timeout=60).read()
	    return hashlib.sha256(body).hexdigest() == want["f%d" % i]
	with concurrent.futures.ThreadPoolExecutor(n) as ex:
	    results = list(ex.map(get, range(1, n + 1)))
	assert all(results), results
	EOF
}

test_expect_success 'setup: 50 files and a web server on inner' '
	dispatch run -H inner -- "mkdir $R && cd $R && for i in \$(seq 1 50); do head -c \$((i * 40000 + i)) /dev/urandom >f\$i; done && sha256sum f*" >sums.txt &&
	test "$(wc -l <sums.txt)" = 50 &&
	web inner $WPORT
'

test_expect_success 'foreground: 50 parallel requests, all bodies right; Ctrl-C ends it cleanly' '
	{ "$DISPATCH" --json forward inner 0:$WPORT >fwd.json 2>fwd.err & } &&
	pid=$! && echo $pid >>"$TRASH/local.pids" &&
	for i in $(seq 100); do [ -s fwd.json ] && python3 -c "import json; json.load(open(\"fwd.json\"))" 2>/dev/null && break; sleep 0.1; done &&
	port=$(python3 -c "import json; d = json.load(open(\"fwd.json\")); assert d[\"remote_port\"] == $WPORT and d[\"host\"] == \"inner\" and d[\"pid\"] == $pid, d; print(d[\"local_port\"])") &&
	fetch $port 50 &&
	fetch $port 50 &&
	kill -INT $pid &&
	rc=0 && { wait $pid || rc=$?; } &&
	test "$rc" = 0 &&
	test_must_be_empty fwd.err
'

test_expect_success 'nothing listening remotely closes that client only; the forward lives on' '
	{ "$DISPATCH" -v forward box1 0:$LATE >/dev/null 2>fwd.err & } &&
	pid=$! && echo $pid >>"$TRASH/local.pids" &&
	for i in $(seq 100); do grep -q "forwarding 127.0.0.1:" fwd.err && break; sleep 0.1; done &&
	port=$(sed -n "s/.*forwarding 127.0.0.1:\([0-9]*\) .*/\1/p" fwd.err) &&
	! curl -sf http://127.0.0.1:$port/f1 >/dev/null &&
	test_grep "cannot open a channel to localhost port $LATE on .box1." fwd.err &&
	kill -0 $pid &&
	web box1 $LATE &&
	for i in $(seq 50); do curl -sf -o f3 http://127.0.0.1:$port/f3 && break; sleep 0.1; done &&
	test "$(sha256sum <f3 | cut -d" " -f1)" = "$(grep " f3\$" sums.txt | cut -d" " -f1)" &&
	kill $pid && wait $pid
'

test_expect_success '--background prints the PID of a forward that serves, until killed' '
	dispatch forward --background inner 0:$WPORT >bg.out 2>bg.err &&
	pid=$(cat bg.out) && echo $pid >>"$TRASH/local.pids" &&
	kill -0 $pid &&
	port=$(sed -n "s/.*forwarding 127.0.0.1:\([0-9]*\) .*/\1/p" bg.err) &&
	fetch $port 20 &&
	kill $pid &&
	for i in $(seq 50); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done &&
	! kill -0 $pid 2>/dev/null &&
	! curl -s http://127.0.0.1:$port/f1 >/dev/null
'

test_expect_success '--background --json: the document names the detached PID' '
	dispatch --json forward --background inner 0:$WPORT >bg.json &&
	pid=$(python3 -c "import json; print(json.load(open(\"bg.json\"))[\"pid\"])") &&
	echo $pid >>"$TRASH/local.pids" &&
	port=$(python3 -c "import json; print(json.load(open(\"bg.json\"))[\"local_port\"])") &&
	fetch $port 5 &&
	kill $pid
'

test_expect_success 'a host that cannot be reached: 255' '
	test_expect_code 255 dispatch forward down1 0:80 2>err &&
	test_grep "cannot connect to .down1." err
'

test_done
