#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A TCP relay that adds round-trip delay, for kernels without netem.

    bench/delay-relay.py LISTEN_PORT TARGET_HOST:TARGET_PORT RTT_MS

Listens on 127.0.0.1:LISTEN_PORT; each connection is relayed to the target, and
every chunk read on either side is held for RTT_MS/2 before it is written to the
other, so a request and its answer take RTT_MS more than they would. Bandwidth is
not limited: what bounds a transfer through it is how much the protocol keeps in
flight (SSH channel windows, outstanding SFTP requests), as on a long fat path.
A side that stops reading holds back the other once 64 MiB are queued.
Prints "ready" on stdout once it listens. Python 3 standard library only.
"""
import asyncio
import sys

QUEUE_LIMIT = 64 << 20


async def pipe(reader, writer, delay):
    loop = asyncio.get_running_loop()
    queue = asyncio.Queue()
    queued = 0
    room = asyncio.Event()
    room.set()

    async def send():
        nonlocal queued
        while True:
            due, data = await queue.get()
            wait = due - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            if data is None:
                break
            writer.write(data)
            queued -= len(data)
            if queued < QUEUE_LIMIT:
                room.set()
            await writer.drain()
        try:
            writer.write_eof()
        except (OSError, RuntimeError):
            pass

    sender = asyncio.create_task(send())
    try:
        while True:
            await room.wait()
            data = await reader.read(256 << 10)
            queue.put_nowait((loop.time() + delay, data or None))
            if not data:
                break
            queued += len(data)
            if queued >= QUEUE_LIMIT:
                room.clear()
        await sender
    except (OSError, asyncio.CancelledError):
        sender.cancel()


async def main():
    port, target, rtt = int(sys.argv[1]), sys.argv[2], float(sys.argv[3])
    host, tport = target.rsplit(":", 1)
    delay = rtt / 2000.0

    async def client(creader, cwriter):
        try:
            treader, twriter = await asyncio.open_connection(host, int(tport))
        except OSError:
            cwriter.close()
            return
        await asyncio.gather(pipe(creader, twriter, delay), pipe(treader, cwriter, delay),
                             return_exceptions=True)
        for w in (cwriter, twriter):
            w.close()

    server = await asyncio.start_server(client, "127.0.0.1", port)
    print("ready", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit("usage: delay-relay.py LISTEN_PORT TARGET_HOST:TARGET_PORT RTT_MS")
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
