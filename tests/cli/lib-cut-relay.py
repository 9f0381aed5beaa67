#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""A TCP relay in front of an sshd for cp's connections (t5250): each connection's
bytes pass at a bounded rate, and it can refuse connections after the first few, or
cut one in the middle.

Usage: lib-cut-relay.py PORTFILE TARGET_PORT RATE MAX CUT CUT_AFTER LIFETIME

It listens on an ephemeral port of 127.0.0.1 and writes it to PORTFILE once
listening; each accepted connection is relayed to 127.0.0.1:TARGET_PORT, at most
RATE bytes a second each way (0: no limit). Connections after the first MAX (0: no
limit) are closed as soon as they are accepted: a server that takes one login at a
time. Connection number CUT (from 1; 0: none) is reset once CUT_AFTER bytes went
through it, both ways together, and "cut" is printed on stderr. Every connection
number and its fate is printed on stderr ("conn 2: refused"). It exits after
LIFETIME seconds whatever happens (a test that fails before killing it leaves no
process behind).
"""
import os
import socket
import struct
import sys
import threading
import time

portfile, target = sys.argv[1], int(sys.argv[2])
rate, most, cut, cut_after, lifetime = (int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]),
                                        int(sys.argv[6]), float(sys.argv[7]))
lock = threading.Lock()


def reset(socks):
    # SO_LINGER 0: the close sends RST, as a dead path or a killed process would; the
    # shutdown first wakes the other direction's thread out of its recv (a close
    # alone would wait for that recv to return before it takes effect)
    for s in socks:
        try:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            s.shutdown(socket.SHUT_RD)
        except OSError:
            pass
    for s in socks:
        s.close()


def pump(a, b, conn):
    start, sent = time.monotonic(), 0
    try:
        while True:
            data = a.recv(65536)
            if not data:
                break
            with lock:
                conn["bytes"] += len(data)
                over = conn["cut"] and conn["bytes"] >= cut_after
            if over:
                print("cut", file=sys.stderr, flush=True)
                reset((a, b))
                return
            b.sendall(data)
            sent += len(data)
            if rate:
                ahead = sent / rate - (time.monotonic() - start)
                if ahead > 0:
                    time.sleep(ahead)
    except OSError:
        pass
    for s in (a, b):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def serve(client, number):
    if most and number > most:
        print("conn %d: refused" % number, file=sys.stderr, flush=True)
        client.close()
        return
    print("conn %d: relayed" % number, file=sys.stderr, flush=True)
    try:
        server = socket.create_connection(("127.0.0.1", target))
    except OSError as e:
        print("conn %d: %s" % (number, e), file=sys.stderr, flush=True)
        client.close()
        return
    conn = {"bytes": 0, "cut": number == cut}
    threading.Thread(target=pump, args=(client, server, conn), daemon=True).start()
    threading.Thread(target=pump, args=(server, client, conn), daemon=True).start()


def main():
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    with open(portfile + ".new", "w") as f:
        f.write("%d\n" % listener.getsockname()[1])
    os.rename(portfile + ".new", portfile)
    threading.Timer(lifetime, lambda: os._exit(0)).start()
    number = 0
    while True:
        client, _ = listener.accept()
        number += 1
        threading.Thread(target=serve, args=(client, number), daemon=True).start()


main()
