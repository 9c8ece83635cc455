#!/usr/bin/env bash
# How big the SQLite database of 1,000 monitors checked every 30 s grows at
# steady state (the retention of docs/monitors.md, "Measurements"): raw
# checks for 1 day, minute sums for 2 days, hour sums for 90 days and day
# sums for a year. Makes the schema with `upstate migrate`, fills the tables
# with rows shaped like real ones (1% failures with an error text, latencies
# spread over the histogram), and prints the size against the 1 GB budget.
#
#   bench/monitor-storage.sh            # 1,000 monitors
#   MONITORS=100 bench/monitor-storage.sh
#   UPSTATE_BIN=/tmp/upstate bench/monitor-storage.sh   # a binary built elsewhere
set -euo pipefail
cd "$(dirname "$0")/.."
MONITORS=${MONITORS:-1000}
INTERVAL_S=30
BUDGET_MB=1024
command -v sqlite3 >/dev/null || { echo "needs the sqlite3 command (apt install sqlite3)"; exit 1; }
. bench/lib.sh
bench_binary
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
db="$dir/upstate.db"
"$BIN" --database-url "sqlite://$db" migrate >/dev/null

per_day=$((86400 / INTERVAL_S))
now_ms=$(($(date +%s) * 1000))
echo "monitors: $MONITORS, every ${INTERVAL_S}s ($per_day checks a day each)"
start=$(date +%s)
sqlite3 "$db" >/dev/null <<SQL
PRAGMA journal_mode = OFF;
PRAGMA synchronous = OFF;
INSERT INTO status_pages (name, slug, accent_color, is_public, show_subscribe, show_uptime, uptime_days, time_zone, created_at, updated_at)
  VALUES ('bench', 'bench', '#2563eb', 1, 1, 1, 90, 'UTC', $now_ms, $now_ms);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $MONITORS)
INSERT INTO components (page_id, name, status, position, created_at, updated_at)
SELECT (SELECT id FROM status_pages), 'c' || i, 'operational', i, $now_ms, $now_ms FROM n;
INSERT INTO monitors (component_id, kind, config, enabled, next_run_at, created_at, updated_at)
SELECT id, 'http', '{"kind":"http","target":"https://example.com/health"}', 1, $now_ms, $now_ms, $now_ms FROM components;

-- Raw checks: one day.
WITH RECURSIVE t(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM t WHERE k < $per_day - 1)
INSERT INTO monitor_checks (monitor_id, at, ok, latency_ms, status_code, error)
SELECT m.id, $now_ms - t.k * ${INTERVAL_S}000 - (m.id % 1000),
       (t.k + m.id) % 100 <> 0,
       20 + ((t.k * 7919 + m.id * 104729) % 480),
       CASE WHEN (t.k + m.id) % 100 = 0 THEN 503 ELSE 200 END,
       CASE WHEN (t.k + m.id) % 100 = 0 THEN 'answered HTTP 503 (expected 200-299)' END
FROM monitors m, t;
SQL
# Sums: (span in ms, how many spans are kept, checks per span).
fill() {
  local span=$1 kept=$2 per=$3
  sqlite3 "$db" >/dev/null <<SQL
PRAGMA journal_mode = OFF;
PRAGMA synchronous = OFF;
WITH RECURSIVE t(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM t WHERE k < $kept - 1)
INSERT INTO monitor_stats (monitor_id, span_ms, bucket, checks, failures, timed, latency_sum,
  latency_min, latency_max, h0, h1, h2, h3, h4, h5, h6, h7, h8, h9, h10, h11)
SELECT m.id, $span, ($now_ms / $span - t.k) * $span, $per, $per / 100, $per, $per * 260,
       20, 499, 0, 0, $per / 10, $per / 10, $per / 5, $per / 2, $per / 10, 0, 0, 0, 0, 0
FROM monitors m, t;
SQL
}
fill 60000 $((2 * 1440)) 2
fill 3600000 $((90 * 24)) 120
fill 86400000 365 $per_day
sqlite3 "$db" "VACUUM;"
took=$(($(date +%s) - start))

rows() { sqlite3 "$db" "SELECT COUNT(*) FROM $1"; }
size=$(stat -c %s "$db")
mb=$(awk -v s="$size" 'BEGIN { printf "%.0f", s / 1048576 }')
echo "rows: checks $(rows monitor_checks), sums $(rows monitor_stats) (filled in ${took}s)"
echo "database: ${mb} MB; budget ${BUDGET_MB} MB; ratio $(awk -v a="$mb" -v b="$BUDGET_MB" 'BEGIN { printf "%.2f", a / b }')"
