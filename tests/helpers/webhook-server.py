#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A webhook for the tests of a run's end (lib/jobs/run_notify.sh).

  webhook-server.py ADDR DIR

Listens on ADDR, an ephemeral port, written to DIR/port. Each POST appends a line to
DIR/posts: {"path", "body", "argv_hits"}, argv_hits the processes (other than this
one) whose command line holds the secret in DIR/token while the request is being
answered (the sender is waiting for the answer then), so a test can tell that the URL
reached no argv. Never given the secret on its own command line. Exits when DIR/stop
appears or DIR goes (checked twice a second), or after an hour.
"""
import http.server
import json
import os
import sys
import threading
import time

addr, d = sys.argv[1], sys.argv[2]
token = open(os.path.join(d, "token"), "rb").read().strip()


def argv_hits():
    n = 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                if token in f.read():
                    n += 1
        except OSError:
            pass
    return n


class Hook(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0"))).decode("utf-8", "replace")
        rec = {"path": self.path, "body": body, "argv_hits": argv_hits()}
        with open(os.path.join(d, "posts"), "a") as f:
            f.write(json.dumps(rec) + "\n")
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args):
        pass


srv = http.server.ThreadingHTTPServer((addr, 0), Hook)
with open(os.path.join(d, "port.tmp"), "w") as f:
    f.write("%d\n" % srv.server_address[1])
os.rename(os.path.join(d, "port.tmp"), os.path.join(d, "port"))
threading.Thread(target=srv.serve_forever, daemon=True).start()
end = time.time() + 3600
while time.time() < end and os.path.isdir(d) and not os.path.exists(os.path.join(d, "stop")):
    time.sleep(0.5)
srv.shutdown()
