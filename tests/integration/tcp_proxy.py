#!/usr/bin/env python3
"""Loopback TCP forwarder for restart tests: listen on 127.0.0.1:LISTEN and
relay every connection to 127.0.0.1:TARGET. Killing it (by pid) cuts the
daemon's connection to the server without touching either process."""
import asyncio
import sys


async def pipe(reader, writer):
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        writer.close()


async def handle(client_r, client_w, target):
    try:
        server_r, server_w = await asyncio.open_connection("127.0.0.1", target)
    except OSError:
        client_w.close()
        return
    await asyncio.gather(pipe(client_r, server_w), pipe(server_r, client_w))


async def main(listen, target):
    srv = await asyncio.start_server(lambda r, w: handle(r, w, target), "127.0.0.1", listen)
    async with srv:
        await srv.serve_forever()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]), int(sys.argv[2])))
