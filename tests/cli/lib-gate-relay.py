#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""A TCP relay that lets nothing through until every one of its ports has a client:
a command that asks several hosts at once passes it, one that asks them in turn
waits at the first host until the gate gives up (and from then on every connection
is closed at once).

Usage: lib-gate-relay.py PORTFILE HOLD LIFETIME HOST:PORT...

It listens on 127.0.0.1, one ephemeral port per HOST:PORT, writes those ports to
PORTFILE (one line, space-separated, in the targets' order) once listening, and
relays each accepted connection to its target once the gate is open. HOLD: seconds
the first held connection waits for the others before the gate shuts for good.
Prints "gate: open" or "gate: shut" on stderr when it decides. It exits after
LIFETIME seconds whatever happens (a test that fails before killing it leaves no
process behind).
"""
import os
import socket
import sys
import threading
import time

portfile, hold, lifetime, targets = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4:]
lock = threading.Condition()
seen = set()
state = {"gate": None, "first": None}   # gate: None (holding), "open", "shut"


def pump(a, b):
    try:
        while True:
            data = a.recv(65536)
            if not data:
                break
            b.sendall(data)
    except OSError:
        pass
    for s in (a, b):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def serve(conn, index):
    with lock:
        seen.add(index)
        if state["first"] is None:
            state["first"] = time.monotonic()
        if state["gate"] is None and len(seen) == len(targets):
            state["gate"] = "open"
            print("gate: open", file=sys.stderr, flush=True)
            lock.notify_all()
        while state["gate"] is None:
            left = state["first"] + hold - time.monotonic()
            if left <= 0:
                state["gate"] = "shut"
                print("gate: shut", file=sys.stderr, flush=True)
                lock.notify_all()
                break
            lock.wait(left)
        gate = state["gate"]
    if gate != "open":
        conn.close()
        return
    host, port = targets[index].rsplit(":", 1)
    try:
        up = socket.create_connection((host, int(port)))
    except OSError:
        conn.close()
        return
    threading.Thread(target=pump, args=(up, conn), daemon=True).start()
    pump(conn, up)


def listen(sock, index):
    while True:
        conn, _ = sock.accept()
        threading.Thread(target=serve, args=(conn, index), daemon=True).start()


socks = []
for i in range(len(targets)):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(16)
    socks.append(s)
tmp = portfile + ".tmp"
with open(tmp, "w") as f:
    f.write(" ".join(str(s.getsockname()[1]) for s in socks) + "\n")
os.rename(tmp, portfile)
for i, s in enumerate(socks):
    threading.Thread(target=listen, args=(s, i), daemon=True).start()
threading.Event().wait(lifetime)
os._exit(0)
