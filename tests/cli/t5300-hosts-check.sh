#!/bin/bash
# t5300: dispatch hosts --check. Without root: usage errors, a refused port, and two
# servers that never answer (one accepts and stays silent, one has a full accept
# queue so that its SYNs are dropped) must give 'timeout' within --timeout. With the
# testbed (its own instance, as t5000: own directory, ports 27000, net 10.160,
# prefix dth5; left up for reuse, DISPATCH_TESTBED_DIR=/tmp/dispatch-testbed-t5300
# tests/testbed/down removes it): every status in one call, inventory and alias
# names, ProxyJump, --json.
. "$(dirname "$0")/lib.sh"

test_expect_success '--timeout, -H and --fanout go with --check' '
	test_expect_code 2 dispatch -F /dev/null hosts --timeout 3 2>err &&
	test_grep "goes with --check" err &&
	test_expect_code 2 dispatch -F /dev/null hosts -H box1 2>err &&
	test_expect_code 2 dispatch -F /dev/null hosts --fanout 2 2>err
'

test_expect_success 'bad --check arguments are usage errors' '
	test_expect_code 2 dispatch -F /dev/null hosts --check --timeout 0 2>err &&
	test_grep "timeout" err &&
	test_expect_code 2 dispatch -F /dev/null hosts --check --fanout x 2>err &&
	test_expect_code 2 dispatch -F /dev/null hosts --check --names 2>err &&
	test_expect_code 2 dispatch -F /dev/null hosts --check -H "box[1-" 2>err &&
	test_expect_code 2 dispatch -F /dev/null hosts --check -H "" 2>err &&
	test_grep "names no hosts" err
'

test_expect_success 'no hosts to check: exit 0, nothing printed' '
	dispatch -F /dev/null hosts --check >out &&
	test_must_be_empty out &&
	dispatch -F /dev/null --json hosts --check >out &&
	python3 -c "import json; assert json.load(open(\"out\")) == {\"hosts\": []}"
'

# A closed port, and two servers that never speak SSH. The closed port stays bound
# (never listening: a connection is refused) for as long as the servers run, so the
# kernel cannot hand it to one of them (it did: "closed" timed out, being "hole").
python3 - >ports <<-\EOF &
import socket, sys, time
closed = socket.socket()
closed.bind(("127.0.0.1", 0))
silent = socket.socket()
silent.bind(("127.0.0.1", 0))
silent.listen(16)
# Backlog 0 holds one connection; once the queue is full, new SYNs are dropped.
hole = socket.socket()
hole.bind(("127.0.0.1", 0))
hole.listen(0)
fill = []
for _ in range(3):
    c = socket.socket()
    c.setblocking(False)
    try:
        c.connect(hole.getsockname())
    except BlockingIOError:
        pass
    fill.append(c)
print(closed.getsockname()[1], silent.getsockname()[1], hole.getsockname()[1], flush=True)
held = []
silent.settimeout(600)
while True:
    held.append(silent.accept()[0])
EOF
servers=$!
trap 'kill $servers 2>/dev/null; rm -rf "$TRASH"' EXIT
for _ in $(seq 50); do [ -s ports ] && break; sleep 0.1; done
read -r closed silent hole <ports
cat >cfg-local <<EOF
Host closed
	HostName 127.0.0.1
	Port $closed
Host silent
	HostName 127.0.0.1
	Port $silent
Host hole
	HostName 127.0.0.1
	Port $hole
Host *
	User nobody
	UserKnownHostsFile $TRASH/kh
EOF

test_expect_success 'a refused port is unreachable, exit 1' '
	test_expect_code 1 dispatch -F cfg-local hosts --check -H closed >out 2>err &&
	test_grep "^closed  *unreachable  *-  *cannot connect to .closed. (127.0.0.1 port $closed): Connection refused" out &&
	test_grep "1 of 1 host failed" err
'

test_expect_success 'servers that never answer time out within --timeout' '
	test -n "$silent" && test -n "$hole" &&
	rc=0 &&
	{ timeout 30 "$DISPATCH" -F cfg-local --json hosts --check --timeout 2 >out || rc=$?; } &&
	test $rc = 1 &&
	python3 - out <<-\EOF
	import json, sys
	hosts = json.load(open(sys.argv[1]))["hosts"]
	assert [h["name"] for h in hosts] == ["closed", "silent", "hole"], hosts
	st = {h["name"]: h["status"] for h in hosts}
	assert st == {"closed": "unreachable", "silent": "timeout", "hole": "timeout"}, hosts
	assert "key exchange" in hosts[1]["detail"], hosts[1]
	assert "timed out after 2 s" in hosts[2]["detail"], hosts[2]
	assert all(h["latency_ms"] is None for h in hosts), hosts
	EOF
'

export DISPATCH_TESTBED_DIR=/tmp/dispatch-testbed-t5300
export DISPATCH_TESTBED_PORT_BASE=27000 DISPATCH_TESTBED_PREFIX=dth5 DISPATCH_TESTBED_NET=10.160
export DISPATCH_TESTBED_SLURM=0
testbed_up

test_expect_success 'every status in one call: ok, unreachable, hostkey, auth, ProxyJump' '
	test_expect_code 1 dispatch hosts --check -H box1,down1,badkey1,pass1,inner >out 2>err &&
	test_grep "^HOST  *STATUS  *LATENCY  *DETAIL$" out &&
	test_grep "^box1  *ok  *[0-9][0-9]* ms  *$DISPATCH_TESTBED_USER@127.0.0.1:$((DISPATCH_TESTBED_PORT_BASE + 1))$" out &&
	test_grep "^down1  *unreachable  *-  *cannot connect to .down1.*Connection refused" out &&
	test_grep "^badkey1  *hostkey  *-  *host key for .badkey1.* has CHANGED" out &&
	test_grep "^pass1  *auth  *-  *cannot log in to .pass1.*needs a passphrase (BatchMode)" out &&
	test_grep "^inner  *ok  *[0-9][0-9]* ms  *$DISPATCH_TESTBED_USER@$DISPATCH_TESTBED_NET.1.2:22$" out &&
	test "$(wc -l <out)" = 6 &&
	test_grep "3 of 5 hosts failed the check" err
'

test_expect_success 'all hosts ok: exit 0' '
	dispatch hosts --check -H "box[1-3],inner2,fan[1-4]" >out &&
	test "$(grep -c " ok " out)" = 8
'

test_expect_success 'without -H: the inventory hosts, then the ssh config aliases' '
	test_expect_code 1 dispatch hosts --check --fanout 8 >out &&
	dispatch hosts --names >want &&
	sed 1d out | cut -d" " -f1 >got &&
	test_cmp want got &&
	test_grep "^inner-direct  *unreachable " out &&
	test_grep "^bastion  *ok " out
'

test_expect_success '--json: name, ssh, status, latencies, detail, via' '
	cat >inv.yaml <<-EOF &&
	clusters:
	  c: {root: /r, work: /w}
	hosts:
	  gpu:
	    ssh: box2
	    cluster: c
	EOF
	test_expect_code 1 dispatch -i inv.yaml --json hosts --check -H gpu,down1,badkey1,pass1,inner >out &&
	python3 - out <<-\EOF
	import json, os, sys
	hosts = json.load(open(sys.argv[1]))["hosts"]
	keys = {"name", "ssh", "status", "latency_ms", "connect_ms", "exec_ms", "detail", "via"}
	for h in hosts:
	    assert set(h) == keys, h
	by = {h["name"]: h for h in hosts}
	assert list(by) == ["gpu", "down1", "badkey1", "pass1", "inner"], hosts
	assert by["gpu"]["ssh"] == "box2" and by["down1"]["ssh"] == "down1", hosts
	assert {n: h["status"] for n, h in by.items()} == {"gpu": "ok", "down1": "unreachable",
	    "badkey1": "hostkey", "pass1": "auth", "inner": "ok"}, hosts
	for n in ("gpu", "inner"):
	    h = by[n]
	    assert abs(h["latency_ms"] - h["connect_ms"] - h["exec_ms"]) <= 1, h
	    assert h["connect_ms"] > 0 and h["exec_ms"] >= 0, h
	port = int(os.environ["DISPATCH_TESTBED_PORT_BASE"]) + 2
	assert by["gpu"]["detail"].endswith("@127.0.0.1:%d" % port), by["gpu"]
	for n in ("down1", "badkey1", "pass1"):
	    assert by[n]["latency_ms"] is None and n in by[n]["detail"], by[n]
	    assert by[n]["via"] is None, by[n]
	assert by["gpu"]["via"] == "direct" and by["inner"]["via"] == "direct", hosts
	EOF
'

test_done
