#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""A hostile SFTP server for t5230: an sshd's sftp Subsystem, a relay in front of
OpenSSH's own sftp-server that renames entries in its directory listings.

Usage (sshd_config): Subsystem sftp /usr/bin/python3 lib-sftp-relay.py RULES

RULES is a JSON object {"NAME": "LISTED", ...}: an entry NAME of any directory is
listed (SSH_FXP_NAME answers to SSH_FXP_READDIR) as LISTED, which may hold anything
("../x", "a/b", "/abs", ".", "..", "", a NUL, the name of another entry); those
entries come first in their answer, in the order of RULES. A request for a path
ending in "/LISTED" or holding "/LISTED/" (or being LISTED) is served as the same
path with NAME there (open, stat, lstat, opendir, readlink, realpath), so that a
client that follows the listing gets the entry's contents. Everything else passes unchanged both ways.
"""
import json
import os
import struct
import subprocess
import sys
import threading

SERVER = "/usr/lib/openssh/sftp-server"
INIT, OPEN, LSTAT, OPENDIR, READDIR, REALPATH, STAT, READLINK = 1, 3, 7, 11, 12, 16, 17, 19
NAME = 104
PATH_FIRST = {OPEN, LSTAT, OPENDIR, REALPATH, STAT, READLINK}


def enc(s):
    return s.encode("utf-8", "surrogateescape")


with open(sys.argv[1], encoding="utf-8") as f:
    LISTED = {enc(k): enc(v) for k, v in json.load(f).items()}
ORDER = list(LISTED)
BACK = {}
for name, listed in LISTED.items():
    BACK.setdefault(listed, name)


def read_exact(fd, n):
    buf = b""
    while len(buf) < n:
        chunk = os.read(fd, n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


def read_packet(fd):
    head = read_exact(fd, 4)
    if head is None:
        return None
    return read_exact(fd, struct.unpack(">I", head)[0])


def write_packet(fd, body):
    data = struct.pack(">I", len(body)) + body
    while data:
        data = data[os.write(fd, data):]


def get_str(b, off):
    n = struct.unpack_from(">I", b, off)[0]
    return b[off + 4:off + 4 + n], off + 4 + n


def put_str(s):
    return struct.pack(">I", len(s)) + s


def attrs_end(b, off):
    flags = struct.unpack_from(">I", b, off)[0]
    off += 4
    if flags & 1:
        off += 8
    if flags & 2:
        off += 8
    if flags & 4:
        off += 4
    if flags & 8:
        off += 8
    if flags & 0x80000000:
        count = struct.unpack_from(">I", b, off)[0]
        off += 4
        for _ in range(2 * count):
            _, off = get_str(b, off)
    return off


def served_path(path):
    for listed, name in BACK.items():
        if path == listed:
            return name
        if path.endswith(b"/" + listed):
            return path[:len(path) - len(listed)] + name
        at = path.find(b"/" + listed + b"/")
        if listed and at >= 0:
            return path[:at + 1] + name + path[at + 1 + len(listed):]
    return path


def relisted(body):
    count = struct.unpack_from(">I", body, 5)[0]
    off = 9
    renamed, kept = [], []
    for _ in range(count):
        name, o = get_str(body, off)
        longname, o = get_str(body, o)
        end = attrs_end(body, o)
        attrs = body[o:end]
        off = end
        if name in LISTED:
            renamed.append((ORDER.index(name), put_str(LISTED[name]) + put_str(longname) + attrs))
        else:
            kept.append(put_str(name) + put_str(longname) + attrs)
    renamed = [entry for _, entry in sorted(renamed)]
    return body[:9] + b"".join(renamed + kept) + body[off:]


readdirs = set()
lock = threading.Lock()
server = subprocess.Popen([SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
to_server, from_server = server.stdin.fileno(), server.stdout.fileno()


def answers():
    while True:
        body = read_packet(from_server)
        if body is None:
            os._exit(0)
        if body[0] == NAME:
            with lock:
                mine = body[1:5] in readdirs
                readdirs.discard(body[1:5])
            if mine:
                body = relisted(body)
        write_packet(1, body)


threading.Thread(target=answers, daemon=True).start()
while True:
    body = read_packet(0)
    if body is None:
        break
    kind = body[0]
    if kind == READDIR:
        with lock:
            readdirs.add(body[1:5])
    elif kind in PATH_FIRST:
        path, end = get_str(body, 5)
        body = body[:5] + put_str(served_path(path)) + body[end:]
    write_packet(to_server, body)
server.stdin.close()
server.wait()
