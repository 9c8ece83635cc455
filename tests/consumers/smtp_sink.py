"""A real SMTP server for the tests (aiosmtpd): accepts every message and
prints each as one JSON line, parsed by Python's own email parser: the
envelope, every header, and the text/plain and text/html parts decoded.

Usage: smtp_sink.py PORT   (prints "ready" once it accepts connections)
"""
import json
import sys
import time
from email import message_from_bytes, policy

from aiosmtpd.controller import Controller


class Keep:
    async def handle_DATA(self, server, session, envelope):
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


controller = Controller(Keep(), hostname="127.0.0.1", port=int(sys.argv[1]))
controller.start()
print("ready", flush=True)
try:
    while True:
        time.sleep(3600)
finally:
    controller.stop()
