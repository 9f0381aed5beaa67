#!/usr/bin/env python3
"""lib-listfds.py FILE [CMD ARG...]: write the descriptors this process holds (those it
inherited: Python's own are close-on-exec and closed) to FILE, one "FD TARGET" a line,
then exec CMD if given. For tests that check what a child of dispatch inherits."""
import os
import sys

fds = []
for name in os.listdir("/proc/self/fd"):
    try:
        target = os.readlink("/proc/self/fd/" + name)
    except OSError:
        continue  # the directory being listed, closed by now
    if target.startswith("/proc/") and target.endswith("/fd"):
        continue
    fds.append((int(name), target))
with open(sys.argv[1], "w") as f:
    for n, t in sorted(fds):
        f.write("%d %s\n" % (n, t))
if len(sys.argv) > 2:
    os.execvp(sys.argv[2], sys.argv[2:])
