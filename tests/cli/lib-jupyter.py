#!/usr/bin/env python3
# A Jupyter client for the notebook tests, through the URL dispatch printed: creates a
# kernel (REST), runs CODE in it over the kernel's websocket channels (Jupyter's
# messaging protocol), prints what the cell wrote, and deletes the kernel unless
# --keep. Usage: lib-jupyter.py URL CODE [--keep]
import json
import sys
import time
import urllib.parse
import urllib.request
import uuid

import websocket  # python3-websocket


def main():
    url, code = sys.argv[1], sys.argv[2]
    keep = "--keep" in sys.argv[3:]
    u = urllib.parse.urlsplit(url)
    token = urllib.parse.parse_qs(u.query)["token"][0]
    base = f"{u.scheme}://{u.netloc}"
    auth = {"Authorization": f"token {token}"}

    def api(method, path, body=None):
        req = urllib.request.Request(base + path, method=method, headers=auth,
                                     data=None if body is None else json.dumps(body).encode())
        with urllib.request.urlopen(req, timeout=30) as r:
            data = r.read()
            return json.loads(data) if data else None

    kernel = api("POST", "/api/kernels", {"name": "python3"})
    # (the handshake waits for the new kernel: 10 s timed out once in a CI
    # rehearsal's sanitize pass, beside two SLURM lanes, after the POST had answered)
    ws = websocket.create_connection(
        f"ws://{u.netloc}/api/kernels/{kernel['id']}/channels?token={token}",
        header=[f"Authorization: token {token}"], timeout=60)
    msg_id = uuid.uuid4().hex
    ws.send(json.dumps({
        "header": {"msg_id": msg_id, "username": "test", "session": uuid.uuid4().hex,
                   "msg_type": "execute_request", "version": "5.3"},
        "parent_header": {}, "metadata": {}, "channel": "shell",
        "content": {"code": code, "silent": False, "store_history": False,
                    "user_expressions": {}, "allow_stdin": False},
    }))
    # The reply (shell channel) and the end of the output (iopub's idle) come in
    # either order; the whole exchange is bounded.
    out, status, idle = [], None, False
    deadline = time.monotonic() + 120
    while status is None or not idle:
        if time.monotonic() > deadline:
            sys.exit("no answer from the kernel within 120 s")
        try:
            m = json.loads(ws.recv())
        except websocket.WebSocketTimeoutException:
            continue
        if m.get("parent_header", {}).get("msg_id") != msg_id:
            continue
        t = m["msg_type"]
        if t == "stream":
            out.append(m["content"]["text"])
        elif t == "error":
            out.append("\n".join(m["content"]["traceback"]))
        elif t == "execute_reply":
            status = m["content"]["status"]
        elif t == "status" and m["content"]["execution_state"] == "idle":
            idle = True
    ws.close()
    if not keep:
        api("DELETE", f"/api/kernels/{kernel['id']}")
    sys.stdout.write("".join(out))
    print(f"kernel {kernel['id']} status {status}", file=sys.stderr)
    sys.exit(0 if status == "ok" else 1)


main()
