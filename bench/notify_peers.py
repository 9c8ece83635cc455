"""The webhook end of bench/notify.sh (mail goes to Postfix's smtp-sink):
a receiver that answers 204 to every request and counts them. Prints one
JSON line a second: {"hooks": n, "last": unix time of the last one}.
Usage: notify_peers.py HTTP_PORT
"""
import asyncio
import json
import sys
import time

counts = {"hooks": 0, "last": 0.0}


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
    server = await asyncio.start_server(hook, "127.0.0.1", int(sys.argv[1]), backlog=1024)
    async with server:
        while True:
            print(json.dumps(counts), flush=True)
            await asyncio.sleep(1)


asyncio.run(main())
