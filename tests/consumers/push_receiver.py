"""A browser's side of web push, for the tests: makes a P-256 key pair and
an auth secret as a browser would, prints the subscription as one JSON line,
then receives what Upstate sends to its endpoint (as a push service would),
checks the VAPID signature (RFC 8292) and decrypts the payload (RFC 8291,
aes128gcm, with PyPI http_ece), printing one JSON line per message.
POSTs to a path ending in /gone are answered 410 (an expired subscription).
"""
import base64
import json
import os
import sys
import time
from http.server import BaseHTTPRequestHandler, HTTPServer

import http_ece
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature


def b64d(s):
    return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))


def b64e(b):
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()


private = ec.generate_private_key(ec.SECP256R1())
public = private.public_key().public_bytes(
    serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
)
auth = os.urandom(16)


def check_vapid(header, origin):
    """The claims of a valid `vapid t=..., k=...` Authorization, or an error."""
    if not header.startswith("vapid "):
        return {"error": "no vapid scheme: " + header[:20]}
    parts = dict(p.strip().split("=", 1) for p in header[6:].split(","))
    token, key = parts["t"], parts["k"]
    head, body, sig = token.split(".")
    raw = b64d(sig)
    der = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
    signer = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), b64d(key))
    signer.verify(der, (head + "." + body).encode(), ec.ECDSA(hashes.SHA256()))
    claims = json.loads(b64d(body))
    ok = claims.get("aud") == origin and time.time() < claims.get("exp", 0) <= time.time() + 86400
    return {"ok": ok, "claims": claims, "key": key}


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        data = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        origin = "http://%s:%d" % self.server.server_address
        out = {
            "path": self.path,
            "headers": {k.lower(): v for k, v in self.headers.items()},
        }
        try:
            out["vapid"] = check_vapid(self.headers.get("Authorization", ""), origin)
            plain = http_ece.decrypt(data, private_key=private, auth_secret=auth, version="aes128gcm")
            out["payload"] = json.loads(plain)
        except Exception as e:  # noqa: BLE001 - reported to the test
            out["error"] = "%s: %s" % (type(e).__name__, e)
        print(json.dumps(out), flush=True)
        gone = self.path.endswith("/gone")
        self.send_response(410 if gone else 201)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


server = HTTPServer(("127.0.0.1", 0), Handler)
host, port = server.server_address
print(json.dumps({"base": "http://%s:%d" % (host, port), "p256dh": b64e(public), "auth": b64e(auth)}), flush=True)
server.serve_forever()
