"""The receiving end of bench/notify.sh: an SMTP sink (aiosmtpd) and a
webhook receiver in one asyncio process, counting what they accept.
Prints one JSON line a second: {"mail": n, "hooks": n, "last": unix time of
the last message}. Usage: notify_peers.py SMTP_PORT HTTP_PORT
"""
import asyncio
import json
import sys
import time

from aiosmtpd.controller import Controller

counts = {"mail": 0, "hooks": 0, "last": 0.0}


class Sink:
    async def handle_DATA(self, server, session, envelope):
        counts["mail"] += 1
        counts["last"] = time.time()
        return "250 OK"


async def hook(reader, writer):
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":", 1)[1])
            if length:
                await reader.readexactly(length)
            counts["hooks"] += 1
            counts["last"] = time.time()
            writer.write(b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n")
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


async def main():
    smtp_port, http_port = int(sys.argv[1]), int(sys.argv[2])
    controller = Controller(Sink(), hostname="127.0.0.1", port=smtp_port)
    controller.start()
    server = await asyncio.start_server(hook, "127.0.0.1", http_port, backlog=1024)
    async with server:
        while True:
            print(json.dumps(counts), flush=True)
            await asyncio.sleep(1)


asyncio.run(main())
