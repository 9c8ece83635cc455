#!/usr/bin/env bash
# 1,000 HTTP monitors checked every 30 s against a local target (nginx),
# on SQLite, the way `cargo run --release` runs. After a warm-up (the burst
# of first checks at creation, then one whole interval), it watches a window
# and prints:
#   - lateness: start of each check minus the time it was due (from the
#     runner's own debug log, one line per check), p50 / p99 / max;
#   - checks per second, against the 33.3/s the schedule asks for, and the
#     requests nginx saw in the same window;
#   - CPU of Upstate (its utime + stime over the window) and resident memory.
# Targets (issue 13): p99 lateness under 1 s, under 5% of one core, under
# 100 MB resident.
#
#   bash bench/monitors.sh                       # needs nginx, curl, python3
#   MONITORS=200 WINDOW=60 bash bench/monitors.sh
#   UPSTATE_BIN=/tmp/upstate bash bench/monitors.sh   # a binary built elsewhere
set -euo pipefail
cd "$(dirname "$0")/.."
MONITORS=${MONITORS:-1000}
INTERVAL=${INTERVAL:-30}
WINDOW=${WINDOW:-120}
PORT=18910
TARGET_PORT=18911

. bench/lib.sh
need_tools nginx curl python3
bench_binary
WORK=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; [ -f "$WORK/nginx.pid" ] && kill "$(cat "$WORK/nginx.pid")" 2>/dev/null; rm -rf "$WORK"' EXIT

# The target: nginx answers every path with 200 and logs when it was asked.
cat >"$WORK/nginx.conf" <<CONF
user root;
worker_processes 1;
daemon on;
pid $WORK/nginx.pid;
error_log $WORK/nginx-error.log;
events { worker_connections 2048; }
http {
  log_format arrival '\$msec \$request_uri';
  access_log $WORK/target.log arrival;
  keepalive_requests 100000;
  server {
    listen 127.0.0.1:$TARGET_PORT;
    location / { default_type text/plain; return 200 "ok\n"; }
  }
}
CONF
nginx -c "$WORK/nginx.conf" -p "$WORK"

export UPSTATE_DATABASE_URL="sqlite://$WORK/upstate.db"
export UPSTATE_MONITOR_ALLOW="127.0.0.1"
export UPSTATE_API_RATE_PER_MINUTE=0 UPSTATE_API_RATE_PER_HOUR=0
# One debug line per check carries its lateness; nothing else is logged.
export RUST_LOG="warn,upstate_jobs::monitors=debug"
KEY=$("$BIN" api-key create --name bench --scopes admin | tail -n 1)
"$BIN" serve --addr "127.0.0.1:$PORT" >"$WORK/server.out" 2>"$WORK/server.log" &
SERVER=$!
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$PORT/api/health" >/dev/null && break; sleep 0.1; done

echo "monitors: $MONITORS HTTP monitors every ${INTERVAL}s against nginx on 127.0.0.1:$TARGET_PORT (SQLite)"
python3 - "http://127.0.0.1:$PORT" "$KEY" "$MONITORS" "$INTERVAL" "$TARGET_PORT" <<'PY'
import json, sys, urllib.request
base, key, count, interval, port = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
def call(path, body):
    req = urllib.request.Request(base + path, method="POST", data=json.dumps(body).encode(),
                                 headers={"Authorization": "Bearer " + key, "Content-Type": "application/json"})
    with urllib.request.urlopen(req) as r:
        return json.load(r)["data"]
page = call("/api/v1/statuspages", {"name": "Bench", "slug": "bench", "isPublic": True})
for n in range(count):
    c = call("/api/v1/components", {"name": f"Service {n}", "statusPageId": page["id"]})
    call("/api/monitors", {"componentId": c["id"], "kind": "http", "intervalSeconds": interval,
                           "target": f"http://127.0.0.1:{port}/m/{n}"})
PY
WARMUP=$((INTERVAL + 5))
echo "created; warming up for ${WARMUP}s, then watching ${WINDOW}s"
sleep "$WARMUP"

ticks() { awk '{ print $14 + $15 }' "/proc/$SERVER/stat"; }
rss_kb() { ps -o rss= -p "$SERVER" | tr -d ' '; }
LOG_FROM=$(wc -l <"$WORK/server.log")
TARGET_FROM=$(wc -l <"$WORK/target.log")
T0=$(ticks); S0=$(date +%s.%N)
PEAK_KB=0
for _ in $(seq 1 "$WINDOW"); do
  r=$(rss_kb); [ "$r" -gt "$PEAK_KB" ] && PEAK_KB=$r
  sleep 1
done
T1=$(ticks); S1=$(date +%s.%N)
tail -n +"$((LOG_FROM + 1))" "$WORK/server.log" >"$WORK/window.log"
TARGET_SEEN=$(( $(wc -l <"$WORK/target.log") - TARGET_FROM ))
FAILED=$(grep -c ' ok=false' "$WORK/window.log" || true)

python3 - "$WORK/window.log" "$S0" "$S1" "$T0" "$T1" "$(getconf CLK_TCK)" "$MONITORS" "$INTERVAL" \
  "$TARGET_SEEN" "$PEAK_KB" "$FAILED" <<'PY'
import re, sys
path, s0, s1, t0, t1, hz, monitors, interval, seen, peak_kb, failed = sys.argv[1:]
window = float(s1) - float(s0)
late = sorted(int(m.group(1)) for m in map(re.compile(r"late_ms=(\d+)").search, open(path)) if m)
if not late:
    sys.exit("bench: no checks in the window (is the runner logging at debug?)")
def q(p):
    return late[min(len(late) - 1, int(p * len(late)))]
expected = int(monitors) / int(interval)
cpu = (int(t1) - int(t0)) / int(hz) / window * 100
rate = len(late) / window
print()
print(f"window: {window:.0f} s, {len(late)} checks, {failed} failed")
print(f"checks/s: {rate:.1f} (schedule asks {expected:.1f}: {rate / expected:.2f}x); nginx saw {int(seen) / window:.1f}/s")
print(f"lateness: p50 {q(0.50)} ms, p99 {q(0.99)} ms, max {late[-1]} ms   (target p99 < 1000 ms: {q(0.99) / 1000:.3f}x)")
print(f"cpu: {cpu:.1f}% of one core   (target < 5%: {cpu / 5:.2f}x)")
print(f"resident memory: peak {int(peak_kb) // 1024} MB   (target < 100 MB: {int(peak_kb) / 1024 / 100:.2f}x)")
PY
