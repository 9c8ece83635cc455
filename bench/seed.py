#!/usr/bin/env python3
"""Seeds a realistic status page through the management API, then writes 90
days of component status history into the SQLite file directly (history is
only ever appended by status changes, so replaying 90 days through the API
would take 90 days).

usage: seed.py BASE_URL API_KEY SQLITE_PATH
"""
import json
import random
import sqlite3
import sys
import time
import urllib.request

base, key, db_path = sys.argv[1], sys.argv[2], sys.argv[3]
random.seed(42)


def call(method, path, body=None):
    req = urllib.request.Request(
        base + path,
        method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": "Bearer " + key, "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req) as r:
        return json.load(r)["data"]


def iso(ms):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ms / 1000))


page = call("POST", "/api/v1/statuspages", {"name": "Acme Cloud", "slug": "acme", "description": "Every Acme service",
                                            "isPublic": True})
pid = page["id"]
call("PATCH", f"/api/v1/statuspages/{pid}", {"timeZone": "Europe/Berlin", "uptimeDays": 90})
groups = [call("POST", "/api/v1/component-groups", {"name": f"Region {g}", "statusPageId": pid})["id"] for g in range(8)]
components = []
for n in range(50):
    c = call("POST", "/api/v1/components", {"name": f"Service {n}", "description": f"The service number {n}",
                                            "statusPageId": pid, "groupId": groups[n % 8]})
    components.append(c["id"])
statuses = ["investigating", "identified", "monitoring"]
for n in range(200):
    inc = call("POST", "/api/v1/incidents", {"title": f"Incident {n}: elevated error rates", "statusPageId": pid,
                                             "impact": random.choice(["minor", "major", "critical"]),
                                             "message": "We are investigating reports of errors.",
                                             "componentIds": random.sample(components, 3)})
    for s in statuses[1:]:
        call("POST", f"/api/v1/incidents/{inc['id']}/updates", {"message": f"Status is now {s}.", "status": s})
    if n < 197:  # three stay open
        call("POST", f"/api/v1/incidents/{inc['id']}/resolve", {"message": "Resolved."})
now = int(time.time() * 1000)
for n in range(20):
    start = now + (n - 5) * 86_400_000
    call("POST", "/api/v1/maintenance", {"title": f"Maintenance {n}", "description": "Planned work",
                                         "statusPageId": pid, "scheduledStartTime": iso(start),
                                         "scheduledEndTime": iso(start + 7_200_000),
                                         "componentIds": random.sample(components, 4)})

db = sqlite3.connect(db_path)
rows = []
for c in components:
    t = now - 91 * 86_400_000
    rows.append((c, "operational", t))
    while True:
        t += random.randint(2, 10) * 86_400_000 // 3
        if t >= now - 3_600_000:
            break
        rows.append((c, random.choice(["degraded", "partial_outage", "major_outage"]), t))
        t += random.randint(10, 240) * 60_000
        rows.append((c, "operational", t))
db.execute(f"DELETE FROM component_status_history WHERE component_id IN ({','.join(map(str, components))})")
db.executemany("INSERT INTO component_status_history (component_id, status, changed_at) VALUES (?, ?, ?)", rows)
db.commit()
print(f"seeded page {pid}: 50 components in 8 groups, 200 incidents, 20 maintenance windows, {len(rows)} status changes")
