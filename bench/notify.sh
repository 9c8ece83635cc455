#!/usr/bin/env bash
# Notification fan-out, on both databases: one incident update on a page
# with 100,000 confirmed email subscribers and 1,000 webhook subscribers.
# Measures the time from the update's commit (its 201) to the last message
# accepted by Postfix's `smtp-sink` (a real SMTP server fast enough not to
# be the limit) and a local webhook receiver, deliveries per second,
# Upstate's peak resident memory while it works, and that each subscriber
# got the message exactly once (smtp-sink's dump names every recipient).
#
#   bash bench/notify.sh                          # a release build of this tree
#   EMAILS=10000 HOOKS=100 bash bench/notify.sh   # a quicker run
#   BACKENDS=sqlite UPSTATE_BIN=/tmp/upstate bash bench/notify.sh
#
# Targets: all 100,000 emails in under 30 s; under 100 MB resident; each
# exactly once. Ratios are printed against those targets (times scaled to
# 100,000 for smaller runs). Results and what limits them: docs/performance.md.
# Needs smtp-sink (Debian's `postfix`), curl, psql and python3.
set -euo pipefail
cd "$(dirname "$0")/.."
EMAILS="${EMAILS:-100000}"
HOOKS="${HOOKS:-1000}"
BACKENDS="${BACKENDS:-sqlite postgres}"
PG="${BENCH_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432/postgres}"
PORT=18910
SMTP_PORT=18911
HOOK_PORT=18912
SINK=$(command -v smtp-sink || echo /usr/sbin/smtp-sink)
[ -x "$SINK" ] || { echo "bench: smtp-sink is missing (apt-get install postfix)" >&2; exit 1; }

. bench/lib.sh
need_tools curl python3 psql
bench_binary
WORK=$(mktemp -d)
chmod 755 "$WORK"
PGDB="upstate_bench_notify_$$"
cleanup() {
  kill $(jobs -p) 2>/dev/null || true
  pkill -f "smtp-sink.*127.0.0.1:$SMTP_PORT" 2>/dev/null || true
  psql "$PG" -qc "DROP DATABASE IF EXISTS $PGDB WITH (FORCE)" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT
export RUST_LOG=warn
export UPSTATE_API_RATE_PER_MINUTE=0 UPSTATE_API_RATE_PER_HOUR=0
export UPSTATE_SMTP_URL="smtp://127.0.0.1:$SMTP_PORT" UPSTATE_SMTP_FROM="Status <status@example.com>"
export UPSTATE_OUTGOING_ALLOW="127.0.0.1/32" UPSTATE_PUBLIC_URL="http://127.0.0.1:$PORT"

printf '%-9s %8s %10s %12s %14s %10s %11s\n' backend messages "commit→last" "deliveries/s" "x of 30 s" "peak RSS" "exactly once"
for backend in $BACKENDS; do
  DIR="$WORK/$backend"
  mkdir -p "$DIR/mail"
  # smtp-sink drops root for nobody, who writes the dump.
  chmod 777 "$DIR/mail"
  if [ "$backend" = sqlite ]; then
    URL="sqlite://$DIR/upstate.db"
  else
    psql "$PG" -qc "DROP DATABASE IF EXISTS $PGDB WITH (FORCE)" >/dev/null 2>&1
    psql "$PG" -qc "CREATE DATABASE $PGDB" >/dev/null
    URL="${PG%/*}/$PGDB"
  fi
  export UPSTATE_DATABASE_URL="$URL" UPSTATE_DATA_DIR="$DIR"
  "$BIN" migrate >/dev/null
  KEY=$("$BIN" api-key create --name bench --scopes admin | tail -n 1)
  bench_serve "$BIN" "$URL" "$DIR" "$PORT"
  SERVER=$STARTED
  api() { curl -sf -X "$1" -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' "http://127.0.0.1:$PORT$2" ${3:+-d "$3"}; }
  id() { python3 -c 'import json,sys; print(json.load(sys.stdin)["data"]["id"])'; }
  PAGE=$(api POST /api/v1/statuspages '{"name":"Acme","slug":"acme"}' | id)
  INCIDENT=$(api POST /api/v1/incidents "{\"title\":\"Checkout errors\",\"statusPageId\":$PAGE,\"message\":\"Looking\"}" | id)
  # The incident's own fan-out (to nobody yet) is done before subscribers exist.
  sleep 2
  # Confirmed subscribers as the confirmation link leaves them: 100,000
  # sign-ups through the API would be the bench's whole time.
  python3 - "$PAGE" "$EMAILS" "$HOOKS" "$HOOK_PORT" >"$DIR/subscribers.csv" <<'PY'
import csv, secrets, sys, time
page, emails, hooks, port = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
now = int(time.time() * 1000)
w = csv.writer(sys.stdout)
for i in range(emails):
    w.writerow([page, "email", f"reader{i}@example.com", secrets.token_hex(24), now, now])
for i in range(hooks):
    w.writerow([page, "webhook", f"http://127.0.0.1:{port}/hook/{i}", secrets.token_hex(24), now, now])
PY
  COLS="page_id, kind, target, token, verified_at, created_at"
  if [ "$backend" = sqlite ]; then
    python3 - "$DIR/upstate.db" "$DIR/subscribers.csv" "$COLS" <<'PY'
import csv, sqlite3, sys
c = sqlite3.connect(sys.argv[1], timeout=30)
with c, open(sys.argv[2]) as f:
    c.executemany(f"INSERT INTO subscribers ({sys.argv[3]}) VALUES (?, ?, ?, ?, ?, ?)", csv.reader(f))
PY
  else
    psql "$URL" -qc "\\copy subscribers ($COLS) FROM '$DIR/subscribers.csv' WITH (FORMAT csv)"
  fi

  "$SINK" -u nobody -c -m 256 -D "$DIR/mail/dump" "127.0.0.1:$SMTP_PORT" 1024 >"$DIR/sink.out" 2>&1 &
  python3 bench/notify_peers.py "$HOOK_PORT" >"$DIR/hooks.out" 2>"$DIR/hooks.err" &
  HOOKER=$!
  sleep 1
  PEAK=0
  START=$(date +%s.%N)
  api POST "/api/v1/incidents/$INCIDENT/updates" '{"status":"identified","message":"A bad deploy; rolling back."}' >/dev/null
  while :; do
    RSS=$(ps -o rss= -p "$SERVER" | tr -d ' ')
    [ "$RSS" -gt "$PEAK" ] && PEAK=$RSS
    # smtp-sink -c rewrites "sess=… quit=… mesg=N" after each message.
    MAIL=$( (tail -c 200 "$DIR/sink.out" | tr '\r' '\n' | grep -o 'mesg=[0-9]*' || true) | tail -n 1 | cut -d= -f2)
    HOOKED=$(tail -n 1 "$DIR/hooks.out" 2>/dev/null | python3 -c 'import json,sys; print(json.loads(sys.stdin.read() or "{}").get("hooks", 0))')
    NOW=$(date +%s.%N)
    [ "${MAIL:-0}" -ge "$EMAILS" ] && [ "$HOOKED" -ge "$HOOKS" ] && break
    if awk "BEGIN {exit !($NOW - $START > 300)}"; then echo "bench: gave up after 300 s with ${MAIL:-0} mails and $HOOKED hooks" >&2; break; fi
    sleep 0.2
  done
  kill "$SERVER"; wait "$SERVER" 2>/dev/null || true
  pkill -f "smtp-sink.*127.0.0.1:$SMTP_PORT" 2>/dev/null || true
  sleep 0.5
  # Each subscriber once: every recipient of the dump, counted.
  ONCE=$(grep '^X-Rcpt-Args:' "$DIR/mail/dump" | sort | uniq -c | awk -v want="$EMAILS" \
    '$1 != 1 { twice++ } { n++ } END { if (n == want && !twice) print "yes"; else printf "no (%d, %d twice)\n", n, twice }')
  awk -v s="$START" -v e="$NOW" -v m="${MAIL:-0}" -v h="$HOOKED" -v peak="$PEAK" -v want="$EMAILS" -v b="$backend" -v once="$ONCE" 'BEGIN {
    t = e - s; printf "%-9s %8d %9.1fs %12.0f %13.2fx %8.1f MB %11s\n", b, m + h, t, (m + h) / t, (t / 30) * (100000 / want), peak / 1024, once }'
  kill "$HOOKER" 2>/dev/null || true
  [ "$backend" = postgres ] && psql "$PG" -qc "DROP DATABASE IF EXISTS $PGDB WITH (FORCE)" >/dev/null 2>&1
done
