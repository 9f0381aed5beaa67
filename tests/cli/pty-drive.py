#!/usr/bin/env python3
"""Runs a command on a fresh pseudo-terminal (its controlling terminal, a new
session) and plays a short dialogue with it, always bounded in time.

    pty-drive.py [--timeout S] [--log FILE] [--size ROWSxCOLS]
                 [--expect REGEX (--send TEXT | --send-file FILE | --resize ROWSxCOLS)]...
                 -- CMD...

Each --expect waits (at most --timeout seconds, default 20) until everything the
command wrote to the terminal since the previous match matches REGEX (Python re,
searched), then the paired --send writes TEXT to the terminal (backslash escapes
such as \\n, \\r and \\x03 are decoded), or --send-file writes FILE's content
(without its final newline) and a newline: a secret that then appears in no
command line, not even the driver's. --size sets the terminal's size before the
command starts (default: the pty's, 0x0), --resize changes it as a terminal window
does (TIOCSWINSZ, and the kernel sends SIGWINCH to the command's foreground
process group). After the last pair it reads until the
command exits (same bound). The whole terminal transcript goes to --log (default:
stdout).

Exit status: the command's own (128+N for a signal N); 124 when a prompt did not
come or the command did not end in time (the command is killed, the transcript so
far is kept); 126 when the command ended without writing an expected prompt; 125
when the driver itself failed. After the command ended, the driver writes 'echo
on' or 'echo off' to stderr: the terminal's ECHO flag, which a prompt for a secret
must have turned back on.
"""
import argparse
import codecs
import fcntl
import os
import pty
import re
import select
import signal
import struct
import sys
import termios
import time


def decode(text):
    return codecs.decode(text, "unicode_escape")


def size(text):
    rows, cols = text.split("x")
    return (int(rows), int(cols))


def set_size(fd, rows_cols):
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows_cols[0], rows_cols[1], 0, 0))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--timeout", type=float, default=20.0)
    ap.add_argument("--log")
    ap.add_argument("--expect", action="append", default=[])
    ap.add_argument("--send", action="append", dest="send", default=[],
                    type=lambda t: decode(t).encode())
    ap.add_argument("--send-file", action="append", dest="send",
                    type=lambda f: open(f, "rb").read().rstrip(b"\n") + b"\n")
    ap.add_argument("--resize", action="append", dest="send", type=size)
    ap.add_argument("--size", type=size)
    ap.add_argument("cmd", nargs="+")
    args = ap.parse_args()
    if len(args.expect) != len(args.send):
        print("pty-drive: every --expect needs its --send", file=sys.stderr)
        return 125

    master, slave = pty.openpty()
    if args.size:
        set_size(master, args.size)
    pid = os.fork()
    if pid == 0:
        try:
            os.close(master)
            os.setsid()
            os.dup2(slave, 0)
            os.dup2(slave, 1)
            os.dup2(slave, 2)
            # A descriptor opened before setsid does not become the controlling
            # terminal by itself: TIOCSCTTY makes it so.
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)
            if slave > 2:
                os.close(slave)
            os.execvp(args.cmd[0], args.cmd)
        except OSError as e:
            os.write(2, ("pty-drive: cannot run %s: %s\n" % (args.cmd[0], e)).encode())
        os._exit(127)

    # The slave stays open here too, so that its termios can be read after the
    # command ended and reading the master never fails early with EIO.
    log = open(args.log, "wb") if args.log else sys.stdout.buffer
    pending = b""       # output not yet matched by an --expect

    def read_some(deadline):
        """Reads what the command wrote within 0.2 s: the bytes (maybe b""), or
        None when the deadline has passed."""
        nonlocal pending
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        r, _, _ = select.select([master], [], [], min(left, 0.2))
        data = b""
        if r:
            try:
                data = os.read(master, 4096)
            except OSError:
                data = b""
            pending += data
            log.write(data)
            log.flush()
        return data

    def give_up(what):
        print("pty-drive: timed out after %g s waiting for %s" % (args.timeout, what),
              file=sys.stderr)
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass
        os.waitpid(pid, 0)
        return 124

    status = None
    for want, answer in zip(args.expect, args.send):
        rx = re.compile(want.encode())
        deadline = time.monotonic() + args.timeout
        while not rx.search(pending):
            data = read_some(deadline)
            if data is None:
                return give_up(repr(want))
            if not data and status is None:
                done, st = os.waitpid(pid, os.WNOHANG)
                status = st if done else None
            if not data and status is not None:
                break   # it ended and wrote everything: the prompt will not come
        m = rx.search(pending)
        if not m:
            print("pty-drive: the command ended before %r" % want, file=sys.stderr)
            return 126
        pending = pending[m.end():]
        if isinstance(answer, tuple):
            set_size(master, answer)
        else:
            os.write(master, answer)

    deadline = time.monotonic() + args.timeout
    while True:
        data = read_some(deadline)
        if data is None:
            return give_up("the command to end")
        if not data and status is None:
            done, st = os.waitpid(pid, os.WNOHANG)
            status = st if done else None
        if not data and status is not None:
            break
    echo = termios.tcgetattr(slave)[3] & termios.ECHO
    print("echo %s" % ("on" if echo else "off"), file=sys.stderr)
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


if __name__ == "__main__":
    sys.exit(main())
