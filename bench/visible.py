#!/usr/bin/env python3
"""Writes a component's status on one instance every 100 ms and measures how
long each write takes to show on another instance's public API (bench/instances.sh).

usage: visible.py WRITE_BASE READ_BASE API_KEY COMPONENT_ID SLUG SECONDS

Prints "writes N p50_ms p99_ms max_ms failed F".
"""
import json
import sys
import time
import urllib.error
import urllib.request

write_base, read_base, key, component, slug, seconds = sys.argv[1:7]
component, seconds = int(component), float(seconds)


def call(method, url, body=None, auth=True):
    req = urllib.request.Request(
        url,
        method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Content-Type": "application/json", **({"Authorization": "Bearer " + key} if auth else {})},
    )
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.load(r)


def status_on_reader():
    page = call("GET", f"{read_base}/api/public/status/{slug}", auth=False)
    return next(c["status"] for c in page["components"] if str(c["id"]) == str(component))


lags, failed = [], 0
statuses = ["degraded", "operational"]
end = time.monotonic() + seconds
n = 0
while time.monotonic() < end:
    want = statuses[n % 2]
    n += 1
    started = time.monotonic()
    try:
        call("PATCH", f"{write_base}/api/v1/components/{component}/status", {"status": want})
        written = time.monotonic()
        while status_on_reader() != want:
            if time.monotonic() - written > 5:
                raise TimeoutError("not visible within 5 s")
            time.sleep(0.002)
        lags.append((time.monotonic() - written) * 1000)
    except (urllib.error.URLError, TimeoutError, OSError):
        failed += 1
    time.sleep(max(0.0, 0.1 - (time.monotonic() - started)))

lags.sort()
pick = lambda q: lags[min(len(lags) - 1, int(q * len(lags)))] if lags else float("nan")
print(f"writes {len(lags)} p50_ms {pick(0.5):.1f} p99_ms {pick(0.99):.1f} max_ms {max(lags) if lags else float('nan'):.1f} failed {failed}")
