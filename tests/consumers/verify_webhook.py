"""Verifies an Upstate webhook with the Standard Webhooks reference library.

Usage: verify_webhook.py SECRET  (reads {"headers": {...}, "body": "..."} on stdin)
Prints the verified payload as JSON; exits non-zero when the signature does
not verify.
"""
import json
import sys

from standardwebhooks.webhooks import Webhook

request = json.load(sys.stdin)
payload = Webhook(sys.argv[1]).verify(request["body"], request["headers"])
print(json.dumps(payload))
