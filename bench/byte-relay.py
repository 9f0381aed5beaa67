#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A TCP relay that counts the bytes each connection carries.

    bench/byte-relay.py LISTEN_PORT TARGET_HOST:TARGET_PORT COUNT_FILE

Listens on 127.0.0.1:LISTEN_PORT (0: a free port) and relays each connection to the target; when a
connection closes, appends "SENT RECEIVED" (bytes from the client, bytes to it) to
COUNT_FILE. Prints "ready PORT" on stdout once it listens. Python 3 standard library only.
"""
import asyncio
import sys


async def pipe(reader, writer, count):
    try:
        while True:
            data = await reader.read(256 << 10)
            if not data:
                break
            count[0] += len(data)
            writer.write(data)
            await writer.drain()
        writer.write_eof()
    except (OSError, RuntimeError):
        pass


async def main():
    port, target, out = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    host, tport = target.rsplit(":", 1)

    async def client(creader, cwriter):
        try:
            treader, twriter = await asyncio.open_connection(host, int(tport))
        except OSError:
            cwriter.close()
            return
        up, down = [0], [0]
        await asyncio.gather(pipe(creader, twriter, up), pipe(treader, cwriter, down),
                             return_exceptions=True)
        for w in (cwriter, twriter):
            w.close()
        with open(out, "a") as f:
            f.write(f"{up[0]} {down[0]}\n")

    server = await asyncio.start_server(client, "127.0.0.1", port)
    print("ready", server.sockets[0].getsockname()[1], flush=True)
    async with server:
        await server.serve_forever()


asyncio.run(main())
