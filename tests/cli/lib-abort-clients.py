#!/usr/bin/env python3
# lib-abort-clients.py URL [N]: N clients (default 20) that each ask the server at URL
# for a large static file and hang up (a TCP reset) after its first bytes, while the
# answer still flows: a tunnel must carry on for the others.
import socket
import struct
import sys
import urllib.parse

u = urllib.parse.urlsplit(sys.argv[1])
n = int(sys.argv[2]) if len(sys.argv) > 2 else 20
path = "/static/components/jquery/jquery.min.js"
for _ in range(n):
    s = socket.create_connection((u.hostname, u.port), timeout=30)
    s.sendall(f"GET {path} HTTP/1.1\r\nHost: {u.netloc}\r\n\r\n".encode())
    s.recv(16)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()
