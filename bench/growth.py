#!/usr/bin/env python3
"""Data for bench/growth.sh, at a chosen size.

  growth.py seed BASE KEY COMPONENTS MONITORS
      A page `acme` with COMPONENTS components in groups of 25, MONITORS
      paused HTTP monitors on them, and a few incidents (one open), through
      the management API: the rows every bigger size is grown from.
  growth.py rebuild BASE KEY ROUNDS
      Median and worst ms of the first summary and HTML read after a write.
  growth.py admin BASE EMAIL PASSWORD ROUNDS
      Median and worst ms of each admin screen, signed in.
  growth.py grow EXPORT OUT INCIDENTS DAYS
      Reads `upstate export`'s document of such an install and writes one
      with INCIDENTS resolved incidents (each with two updates and a
      component) spread over DAYS days, and DAYS days of status changes for
      every component: `upstate import` then writes them through the store,
      checked as any import is. Prints the id of an incident from the
      middle of that history. Copies of rows the API wrote keep the
      document true to today's schema without this script knowing it.
  growth.py audit BACKEND DATABASE_URL EVENTS DAYS
      Appends EVENTS audit events over the last DAYS days to the chain of
      a stopped install (the import does not carry the audit log, and a
      million writes through the API would take the bench an hour). Each
      is hashed as the store hashes it, so `upstate audit verify` passes.
"""
import hashlib
import subprocess
import json
import random
import sys
import time
import urllib.error
import urllib.request

DAY_MS = 86_400_000


def call(base, key, path, body):
    req = urllib.request.Request(
        base + path,
        method="POST",
        data=json.dumps(body).encode(),
        headers={"Authorization": "Bearer " + key, "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(req) as r:
            return json.load(r)["data"]
    except urllib.error.HTTPError as e:
        sys.exit(f"{path}: {e.code} {e.read().decode()}")


def seed(base, key, components, monitors):
    page = call(base, key, "/api/v1/statuspages", {"name": "Acme Cloud", "slug": "acme", "isPublic": True})
    pid = page["id"]
    groups = [
        call(base, key, "/api/v1/component-groups", {"name": f"Region {g}", "statusPageId": pid})["id"]
        for g in range((components + 24) // 25)
    ]
    ids = []
    for n in range(components):
        c = call(base, key, "/api/v1/components",
                 {"name": f"Service {n}", "description": f"The service number {n}",
                  "statusPageId": pid, "groupId": groups[n // 25]})
        ids.append(c["id"])
    for n in range(monitors):
        call(base, key, "/api/monitors",
             {"componentId": ids[n % len(ids)], "kind": "http", "intervalSeconds": 30, "enabled": False,
              "target": f"http://127.0.0.1:9/m/{n}"})
    for n in range(4):
        inc = call(base, key, "/api/v1/incidents",
                   {"title": f"Incident {n}: elevated error rates", "statusPageId": pid, "impact": "minor",
                    "message": "We are investigating reports of errors.", "componentIds": ids[n:n + 2]})
        if n:
            call(base, key, f"/api/v1/incidents/{inc['id']}/updates",
                 {"status": "resolved", "message": "Errors are back to normal levels."})


def grow(export, out, incidents, days):
    with open(export) as f:
        doc = json.load(f)
    t = doc["tables"]
    now = int(time.time() * 1000)
    random.seed(7)

    def next_id(rows):
        return max((r["id"] for r in rows), default=0) + 1

    resolved = [i for i in t["incidents"] if i.get("resolved_at")]
    model = resolved[0]
    updates = [u for u in t["incident_updates"] if u["incident_id"] == model["id"]]
    links = [link for link in t["incident_components"] if link["incident_id"] == model["id"]]
    components = [c["id"] for c in t["components"]]
    iid, uid = next_id(t["incidents"]), next_id(t["incident_updates"])
    span = days * DAY_MS
    for n in range(incidents):
        start = now - span + (span * n) // incidents + random.randrange(60_000)
        end = start + random.randrange(5, 240) * 60_000
        row = dict(model, id=iid, title=f"Past incident {n}", created_at=start, updated_at=end, resolved_at=end)
        for k in ("started_at", "identified_at", "monitoring_at"):
            if k in row and row[k] is not None:
                row[k] = start
        t["incidents"].append(row)
        for j, u in enumerate(updates):
            t["incident_updates"].append(dict(u, id=uid, incident_id=iid, created_at=(start, end)[min(j, 1)],
                                              **({"updated_at": end} if "updated_at" in u else {})))
            uid += 1
        for link, c in zip(links, random.sample(components, len(links))):
            t["incident_components"].append(dict(link, incident_id=iid, component_id=c))
        iid += 1
    # A day's status changes for every component: down for a while, back up.
    history = t.get("component_status_history", [])
    model = history[0] if history else {"id": 0, "component_id": 0, "status": "operational", "changed_at": 0}
    if days:
        hid = next_id(history)
        for c in components:
            for d in range(days):
                at = now - (days - d) * DAY_MS + random.randrange(DAY_MS // 2)
                for status, when in (("partial_outage", at), ("operational", at + random.randrange(60_000, 3_600_000))):
                    history.append(dict(model, id=hid, component_id=c, status=status, changed_at=when))
                    hid += 1
        t["component_status_history"] = history
    with open(out, "w") as f:
        json.dump(doc, f)
    # An incident from the middle of the history, for its page.
    print(t["incidents"][len(t["incidents"]) // 2]["id"])


def timed(url, headers=None, method="GET", body=None):
    """Milliseconds to the whole answer."""
    req = urllib.request.Request(url, method=method, headers=headers or {},
                                 data=None if body is None else json.dumps(body).encode())
    start = time.perf_counter()
    with urllib.request.urlopen(req) as r:
        r.read()
    return (time.perf_counter() - start) * 1000


def spread(times):
    times = sorted(times)
    return f"{times[len(times) // 2]:.1f} {times[-1]:.1f}"


def rebuild(base, key, rounds):
    """The first public reads after one write: the summary (the snapshot
    rebuilt) and the HTML page (rebuilt and rendered)."""
    auth = {"Authorization": "Bearer " + key, "Content-Type": "application/json"}
    body = json.load(urllib.request.urlopen(base + "/api/public/status/acme/components"))
    comps = body["components"] if "components" in body else body["data"]
    target = comps[len(comps) // 2]["id"]
    summary, html = [], []
    builds = snapshot_builds(base)
    for _ in range(rounds):
        # Each write changes the status, so each moves the page on.
        timed(f"{base}/api/v1/components/{target}", auth, "PATCH", {"status": "degraded"})
        summary.append(timed(f"{base}/api/public/status/acme"))
        timed(f"{base}/api/v1/components/{target}", auth, "PATCH", {"status": "operational"})
        html.append(timed(f"{base}/s/acme"))
    # Each of those reads built the page again, or it measured a cache.
    built = snapshot_builds(base) - builds
    if built < 2 * rounds:
        sys.exit(f"only {built} snapshot builds for {2 * rounds} reads after a write")
    print(spread(summary), spread(html))


def snapshot_builds(base):
    with urllib.request.urlopen(base + "/api/metrics") as r:
        for line in r.read().decode().splitlines():
            if line.startswith("upstate_snapshot_builds_total "):
                return int(float(line.split()[1]))
    sys.exit("no upstate_snapshot_builds_total in /api/metrics")


def admin(base, email, password, rounds):
    """Each admin screen's answer time as a signed-in owner: median and worst."""
    req = urllib.request.Request(base + "/api/auth/login", method="POST",
                                 data=json.dumps({"email": email, "password": password}).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req) as r:
        cookie = r.headers["set-cookie"].split(";")[0]
    out = []
    for path in ("/admin", "/admin/monitors", "/admin/incidents", "/admin/audit",
                 "/admin/audit?action=subscriber", "/api/audit-events?limit=50", "/admin/subscribers"):
        times = [timed(base + path, {"Cookie": cookie}) for _ in range(rounds)]
        out.append(f"{path}={spread(times).replace(' ', '/')}")
    print(" ".join(out))


ACTIONS = [("incident.create", "incident"), ("incident.update", "incident"),
           ("component.update", "component"), ("incident.resolve", "incident"),
           ("maintenance.create", "maintenance"), ("user.login", "user"),
           ("monitor.update", "monitor"), ("subscriber.create", "subscriber")]


def audit(backend, url, events, days):
    """EVENTS hashed events after the chain's head, as rows of audit_events."""
    rows_of = {"sqlite": sqlite_rows, "postgres": postgres_rows}[backend]
    (seq, prev), write = rows_of(url)
    now = int(time.time() * 1000)
    start = now - days * DAY_MS
    step = max(1, (now - start) // max(events, 1))
    rows = []
    # Rare actions are rare: a filter on one must not find it among the latest.
    for n in range(events):
        seq += 1
        action, target = ACTIONS[n % 7] if n % 1000 else ACTIONS[7]
        at = start + n * step
        summary = {"n": n % 97, "title": f"Event {seq}"}  # serde_json sorts keys
        canonical = json.dumps({"seq": seq, "at": at, "actor_kind": "api_key", "actor_id": 1,
                                "actor_label": "bench", "action": action, "target_type": target,
                                "target_id": n % 5000 + 1, "summary": summary, "client_addr": "127.0.0.1",
                                "user_agent": None}, separators=(",", ":"), sort_keys=False)
        h = hashlib.sha256(prev.encode() + canonical.encode()).hexdigest()
        rows.append((seq, at, "api_key", 1, "bench", action, target, n % 5000 + 1,
                     json.dumps(summary, separators=(",", ":"), sort_keys=True), "127.0.0.1", None, prev, h))
        prev = h
    write(rows, (seq, prev))


COLUMNS = ("seq, at, actor_kind, actor_id, actor_label, action, target_type, target_id, summary, "
           "client_addr, user_agent, prev_hash, hash")


def sqlite_rows(url):
    import sqlite3
    db = sqlite3.connect(url.removeprefix("sqlite://").split("?")[0])
    head = db.execute("SELECT seq, hash FROM audit_head WHERE id = 1").fetchone()

    def write(rows, last):
        with db:
            db.executemany(f"INSERT INTO audit_events ({COLUMNS}) VALUES ({', '.join('?' * 13)})", rows)
            db.execute("UPDATE audit_head SET seq = ?, hash = ? WHERE id = 1", last)
        db.close()
    return head, write


def postgres_rows(url):
    out = subprocess.run(["psql", url, "-Atqc", "SELECT seq || ' ' || hash FROM audit_head WHERE id = 1"],
                         check=True, capture_output=True, text=True).stdout.split()
    head = (int(out[0]), out[1])

    def write(rows, last):
        import csv
        import io
        buf = io.StringIO()
        w = csv.writer(buf)
        for r in rows:
            w.writerow(["" if v is None else v for v in r])
        subprocess.run(["psql", url, "-qc", f"\\copy audit_events ({COLUMNS}) FROM STDIN WITH (FORMAT csv)"],
                       input=buf.getvalue(), check=True, text=True)
        subprocess.run(["psql", url, "-qc",
                        f"UPDATE audit_head SET seq = {last[0]}, hash = '{last[1]}' WHERE id = 1; ANALYZE audit_events"],
                       check=True)
    return head, write


if __name__ == "__main__":
    if sys.argv[1] == "seed":
        seed(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
    elif sys.argv[1] == "rebuild":
        rebuild(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    elif sys.argv[1] == "admin":
        admin(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
    elif sys.argv[1] == "audit":
        audit(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
    elif sys.argv[1] == "grow":
        grow(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
    else:
        sys.exit(__doc__)
