#!/usr/bin/env python3
"""Concurrent writers for bench/writes.sh: WRITERS threads, each on its own
keep-alive connection, for SECONDS, mixing what a bad day brings at once:
incidents created with two components moving (half the writers name them
one way round, half the other), updated with the components swapped,
posted to, resolved, and plain component status changes as monitors make
them. Prints one line: writes, writes/s, p50 ms, p99 ms, errors (non-2xx),
and the error statuses seen.

usage: writers.py BASE_URL API_KEY WRITERS SECONDS [edits]

With `edits`, writers only rewrite component descriptions: every write is a
change the page's readers and live streams see, and the data held stays the
same size (a status change would add to the status history): what a soak
wants.
"""
import http.client
import json
import sys
import threading
import time
import urllib.parse

base, key, writers, seconds = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
edits_only = len(sys.argv) > 5 and sys.argv[5] == "edits"
u = urllib.parse.urlparse(base)


class Conn:
    def __init__(self):
        self.c = http.client.HTTPConnection(u.hostname, u.port, timeout=30)

    def call(self, method, path, body=None):
        data = None if body is None else json.dumps(body)
        headers = {"Authorization": "Bearer " + key, "Content-Type": "application/json"}
        self.c.request(method, path, body=data, headers=headers)
        r = self.c.getresponse()
        payload = r.read()
        return r.status, payload


setup = Conn()
status, body = setup.call("POST", "/api/v1/statuspages", {"name": "Bench", "slug": "bench"})
page = json.loads(body)["data"]["id"]
comps = []
for name in ["API", "Database", "Web", "Queue"]:
    status, body = setup.call("POST", "/api/v1/components", {"name": name, "statusPageId": page})
    comps.append(json.loads(body)["data"]["id"])

latencies = []
errors = {}
lock = threading.Lock()
deadline = time.monotonic() + seconds


def writer(n):
    c = Conn()
    a, b = (comps[0], comps[1]) if n % 2 == 0 else (comps[1], comps[0])
    mine, errs = [], {}
    round_ = 0

    def timed(method, path, body):
        t = time.monotonic()
        status, payload = c.call(method, path, body)
        mine.append((time.monotonic() - t) * 1000)
        if not 200 <= status < 300:
            errs[status] = errs.get(status, 0) + 1
        return status, payload

    while edits_only and time.monotonic() < deadline:
        for text in ("Serving", "Serving well"):
            timed("PATCH", f"/api/v1/components/{comps[n % len(comps)]}", {"description": text})
    while time.monotonic() < deadline:
        round_ += 1
        status, payload = timed("POST", "/api/v1/incidents", {
            "title": f"w{n} r{round_}", "statusPageId": page, "message": "Looking",
            "componentStatuses": [{"componentId": a, "status": "major_outage"},
                                  {"componentId": b, "status": "degraded"}]})
        if status != 201:
            continue
        iid = json.loads(payload)["data"]["id"]
        steps = [
            ("PATCH", f"/api/v1/components/{comps[2 + n % 2]}/status", {"status": "partial_outage"}),
            ("PATCH", f"/api/v1/incidents/{iid}", {"status": "identified", "componentStatuses": [
                {"componentId": b, "status": "major_outage"}, {"componentId": a, "status": "degraded"}]}),
            ("POST", f"/api/v1/incidents/{iid}/updates", {"message": "Fix deployed", "status": "monitoring"}),
            ("PATCH", f"/api/v1/components/{comps[2 + n % 2]}/status", {"status": "operational"}),
            ("POST", f"/api/v1/incidents/{iid}/resolve", {"message": "Fixed", "componentStatuses": [
                {"componentId": a, "status": "operational"}, {"componentId": b, "status": "operational"}]}),
        ]
        for method, path, body in steps:
            if time.monotonic() >= deadline:
                break
            timed(method, path, body)
    with lock:
        latencies.extend(mine)
        for k, v in errs.items():
            errors[k] = errors.get(k, 0) + v


started = time.monotonic()
threads = [threading.Thread(target=writer, args=(i,)) for i in range(writers)]
for t in threads:
    t.start()
for t in threads:
    t.join()
elapsed = time.monotonic() - started
latencies.sort()


def pct(p):
    return latencies[min(len(latencies) - 1, int(len(latencies) * p))] if latencies else 0.0


bad = sum(errors.values())
seen = ",".join(f"{k}x{v}" for k, v in sorted(errors.items())) or "-"
print(f"{len(latencies)} {len(latencies) / elapsed:.0f} {pct(0.5):.1f} {pct(0.99):.1f} {bad} {seen}")
