#!/usr/bin/env bash
# Soak: mixed load for a long while, watching what must stay flat. Public
# reads (the JSON summary and the HTML page) from wrk, live event streams
# held open by curl, and writers editing the page's components
# (bench/writers.py in its `edits` mix, 2 at a time, so snapshots rebuild
# and the streams carry events while the data held stays the same), all at once for
# DURATION seconds (default 1800; bounded: the script ends itself). Every
# SAMPLE seconds it records the server's resident memory, open file
# descriptors and the delivery queue (`upstate_deliveries{status="pending"}`
# from /api/metrics, read only at the end so no scrape runs the metrics
# upkeep for it).
#
#   DURATION=120 bash bench/soak.sh            # a quick run
#   UPSTATE_BIN=/tmp/upstate bash bench/soak.sh
#
# Targets: resident memory flat after warm-up (the last sample within 10%
# of the one at the end of warm-up, the first fifth of the run) and under
# 64 MB; descriptors flat; the queue drained at the end. Needs wrk, curl,
# python3.
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION="${DURATION:-1800}"
SAMPLE="${SAMPLE:-10}"
STREAMS="${STREAMS:-20}"
PORT=18920
. bench/lib.sh
need_tools wrk curl python3
bench_binary
WORK=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$WORK"' EXIT
export UPSTATE_DATABASE_URL="sqlite://$WORK/upstate.db" RUST_LOG=warn
export UPSTATE_API_RATE_PER_MINUTE=0 UPSTATE_API_RATE_PER_HOUR=0
export UPSTATE_PUBLIC_RATE_SUMMARY=0 UPSTATE_PUBLIC_RATE_PAGE=0

KEY=$("$BIN" api-key create --name bench --scopes admin | tail -n 1)
"$BIN" serve --addr "127.0.0.1:$PORT" >"$WORK/server.out" 2>"$WORK/server.err" &
SERVER=$!
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$PORT/api/health" >/dev/null && break; sleep 0.1; done
B="http://127.0.0.1:$PORT"
rss_kb() { awk '/^VmRSS/ { print $2 }' "/proc/$SERVER/status"; }
fds() { ls "/proc/$SERVER/fd" | wc -l; }

END=$((SECONDS + DURATION))
# The writers make the page ("bench", four components) before they start.
python3 bench/writers.py "$B" "$KEY" 2 "$DURATION" edits >"$WORK/writes.txt" &
for _ in $(seq 1 50); do curl -sf "$B/api/public/status/bench" >/dev/null && break; sleep 0.1; done
for _ in $(seq 1 "$STREAMS"); do
  curl -sN --max-time "$DURATION" "$B/api/public/status/bench/events" >/dev/null 2>&1 &
done
wrk -t1 -c16 -d"${DURATION}s" "$B/api/public/status/bench" >"$WORK/wrk1.txt" 2>&1 &
wrk -t1 -c8 -d"${DURATION}s" -H "Accept-Encoding: br" "$B/s/bench" >"$WORK/wrk2.txt" 2>&1 &

printf '%8s %10s %6s\n' "seconds" "rss MB" "fds"
WARM=$((DURATION / 5))
WARM_KB=""; LAST_KB=0; PEAK_KB=0; FIRST_FDS=""; LAST_FDS=0
start=$SECONDS
while [ "$SECONDS" -lt "$END" ]; do
  sleep "$SAMPLE"
  kb=$(rss_kb); n=$(fds); t=$((SECONDS - start))
  printf '%8d %10.1f %6d\n' "$t" "$(awk -v k="$kb" 'BEGIN { print k / 1024 }')" "$n"
  [ -z "$FIRST_FDS" ] && FIRST_FDS=$n
  [ -z "$WARM_KB" ] && [ "$t" -ge "$WARM" ] && WARM_KB=$kb
  [ "$kb" -gt "$PEAK_KB" ] && PEAK_KB=$kb
  LAST_KB=$kb; LAST_FDS=$n
done
wait $(jobs -p | grep -v "^$SERVER$") 2>/dev/null || true
sleep 3
pending=$(curl -s "$B/api/metrics" | awk '/^upstate_deliveries\{status="pending"\}/ { print $2 }')
reads=$(awk '/Requests\/sec/ { s += $2 } END { printf "%.0f", s }' "$WORK/wrk1.txt" "$WORK/wrk2.txt")
echo
echo "reads/s (summary + page): $reads; writes: $(cat "$WORK/writes.txt")"
echo "rss: after warm-up $((WARM_KB / 1024)) MB, at the end $((LAST_KB / 1024)) MB, peak $((PEAK_KB / 1024)) MB   (targets: end within 10% of warm-up, under 64 MB)"
echo "rss end/warm-up = $(awk -v a="$LAST_KB" -v b="$WARM_KB" 'BEGIN { printf "%.2f", a / b }')x"
echo "fds: first $FIRST_FDS, last $LAST_FDS; pending deliveries at the end: ${pending:-?}"
