"""A real SMTP server for the tests (aiosmtpd): accepts every message and
prints each as one JSON line, parsed by Python's own email parser: the
envelope, every header, and the text/plain and text/html parts decoded.

Usage: smtp_sink.py PORT [SECONDS]   (prints "ready" once it accepts
connections; with SECONDS, each message is answered that much later, as a
slow relay does)
"""
import asyncio
import json
import sys
import time
from email import message_from_bytes, policy

from aiosmtpd.controller import Controller


class Keep:
    async def handle_DATA(self, server, session, envelope):
        await asyncio.sleep(SLOW)
        msg = message_from_bytes(envelope.content, policy=policy.default)
        parts = {}
        for part in msg.walk():
            kind = part.get_content_type()
            if kind in ("text/plain", "text/html"):
                parts[kind] = part.get_content()
        print(json.dumps({
            "mail_from": envelope.mail_from,
            "rcpt_tos": envelope.rcpt_tos,
            "headers": {k.lower(): str(v) for k, v in msg.items()},
            "parts": parts,
        }), flush=True)
        return "250 2.0.0 Message accepted for delivery"


SLOW = float(sys.argv[2]) if len(sys.argv) > 2 else 0.0
controller = Controller(Keep(), hostname="127.0.0.1", port=int(sys.argv[1]))
controller.start()
print("ready", flush=True)
try:
    while True:
        time.sleep(3600)
finally:
    controller.stop()
