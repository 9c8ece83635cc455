#!/usr/bin/env bash
# Notification fan-out benchmark: one incident update on a page with
# 100,000 confirmed email subscribers and 1,000 webhook subscribers. Measures
# the time from the update's commit (its 201) to the last message accepted
# by a local SMTP sink (aiosmtpd) and a local webhook receiver, deliveries
# per second, and Upstate's peak resident memory while it works.
#
#   bash bench/notify.sh                 # needs python3 and scripts/test-deps' venv
#   EMAILS=10000 HOOKS=100 bash bench/notify.sh   # a quicker run
#   UPSTATE_BIN=/tmp/upstate bash bench/notify.sh  # a binary built elsewhere
#
# Targets: all 101,000 in under 60 s; under 100 MB resident. Ratios are
# printed against those targets (times scaled to 101,000 for smaller runs).
# Results and what limits them: docs/performance.md.
set -euo pipefail
cd "$(dirname "$0")/.."
EMAILS="${EMAILS:-100000}"
HOOKS="${HOOKS:-1000}"
PORT=18910
SMTP_PORT=18911
HOOK_PORT=18912
PY=target/consumers/venv/bin/python
[ -x "$PY" ] && "$PY" -c 'import aiosmtpd' 2>/dev/null || { echo "bench: run scripts/test-deps first (aiosmtpd)" >&2; exit 1; }

. bench/lib.sh
bench_binary
WORK=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; cp "$WORK/server.err" /tmp/notify-server.err 2>/dev/null; rm -rf "$WORK"' EXIT
export UPSTATE_DATABASE_URL="sqlite://$WORK/upstate.db" RUST_LOG=warn
export UPSTATE_API_RATE_PER_MINUTE=0 UPSTATE_API_RATE_PER_HOUR=0
export UPSTATE_SMTP_URL="smtp://127.0.0.1:$SMTP_PORT" UPSTATE_SMTP_FROM="Status <status@example.com>"
export UPSTATE_OUTGOING_ALLOW="127.0.0.1/32" UPSTATE_PUBLIC_URL="http://127.0.0.1:$PORT"

"$BIN" migrate >/dev/null
KEY=$("$BIN" api-key create --name bench --scopes admin | tail -n 1)
"$BIN" serve --addr "127.0.0.1:$PORT" >"$WORK/server.out" 2>"$WORK/server.err" &
SERVER=$!
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$PORT/api/health" >/dev/null && break; sleep 0.1; done
api() { curl -sf -X "$1" -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' "http://127.0.0.1:$PORT$2" ${3:+-d "$3"}; }
PAGE=$(api POST /api/v1/statuspages '{"name":"Acme","slug":"acme"}' | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["data"]["id"])')
INCIDENT=$(api POST /api/v1/incidents "{\"title\":\"Checkout errors\",\"statusPageId\":$PAGE,\"message\":\"Looking\"}" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["data"]["id"])')
# Let the incident's own fan-out (to nobody yet) finish before subscribers exist.
sleep 2
echo "seeding $EMAILS email and $HOOKS webhook subscribers ..."
"$PY" - "$WORK/upstate.db" "$PAGE" "$EMAILS" "$HOOKS" "$HOOK_PORT" <<'PY'
import sqlite3, sys, time, secrets
db, page, emails, hooks, port = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
c = sqlite3.connect(db, timeout=30)
now = int(time.time() * 1000)
rows = [(page, "email", f"reader{i}@example.com", secrets.token_hex(24), now, now) for i in range(emails)]
rows += [(page, "webhook", f"http://127.0.0.1:{port}/hook/{i}", secrets.token_hex(24), now, now) for i in range(hooks)]
c.executemany("INSERT INTO subscribers (page_id, kind, target, token, verified_at, created_at) VALUES (?, ?, ?, ?, ?, ?)", rows)
c.commit()
PY

"$PY" bench/notify_peers.py "$SMTP_PORT" "$HOOK_PORT" >"$WORK/peers.out" 2>"$WORK/peers.err" &
sleep 1
TOTAL=$((EMAILS + HOOKS))
PEAK=0
START=$(date +%s.%N)
api POST "/api/v1/incidents/$INCIDENT/updates" '{"status":"identified","message":"A bad deploy; rolling back."}' >/dev/null
while :; do
  RSS=$(ps -o rss= -p "$SERVER" | tr -d ' ')
  [ "$RSS" -gt "$PEAK" ] && PEAK=$RSS
  LINE=$(tail -n 1 "$WORK/peers.out")
  DONE=$(echo "$LINE" | "$PY" -c 'import json,sys; j=json.loads(sys.stdin.read()); print(j["mail"] + j["hooks"])')
  NOW=$(date +%s.%N)
  if [ "$DONE" -ge "$TOTAL" ]; then break; fi
  if awk "BEGIN {exit !($NOW - $START > 300)}"; then echo "bench: gave up after 300 s with $DONE of $TOTAL" >&2; break; fi
  sleep 0.5
done
LAST=$(tail -n 1 "$WORK/peers.out" | "$PY" -c 'import json,sys; print(json.loads(sys.stdin.read())["last"])')
"$PY" - "$START" "$LAST" "$DONE" "$TOTAL" "$PEAK" <<'PY'
import sys
start, last, done, total, peak = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
secs = last - start
print(f"messages accepted: {done} of {total}")
print(f"commit to last message: {secs:.1f} s   (target 60 s for 101,000: {secs / 60 * 101000 / total:.2f}x of target, scaled)")
print(f"deliveries per second: {done / secs:.0f}")
print(f"peak resident memory: {peak / 1024:.1f} MB   (target 100 MB: {peak / 1024 / 100:.2f}x)")
PY
