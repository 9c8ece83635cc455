#!/usr/bin/env bash
# Cost as the data grows, on both databases: what a visitor and an operator
# wait for when a page has many components, a long history and many
# monitors.
#
#   bash bench/growth.sh                         # a release build of this tree
#   UPSTATE_BIN=/tmp/upstate bash bench/growth.sh
#   BACKENDS=sqlite SIZES="10 1000" INCIDENTS=10000 AUDIT=10000 bash bench/growth.sh
#   BENCH_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/postgres (default)
#
# 1. Public reads at SIZES components (default 10, 100 and 1,000, in groups
#    of 25): the summary JSON and the HTML page (brotli), req/s, p99 and
#    bytes at 64 connections. Throughput may fall with the bytes, not faster:
#    "MB/s" is req/s times bytes.
# 2. A long history: the largest size with INCIDENTS resolved incidents
#    (default 100,000) over DAYS days (365) and a status change a day per
#    component, written by `upstate import` (bench/growth.py makes the
#    document from an export of the seeded install, so the store checks
#    every row as it checks any import), MONITORS paused monitors (1,000),
#    AUDIT audit events (1,000,000; hashed into the chain by growth.py).
#    Measured: the first summary and HTML read after one write (the
#    snapshot rebuilt; target < 50 ms), the status page, the history page,
#    an old incident's page and 365 days of uptime under load, compressed
#    as browsers ask (p99 < 10 ms), and the admin screens signed in
#    (< 100 ms each).
#
# Builds nothing; prints one table per part; writes nothing into the
# repository (figures go to docs/performance.md by hand).
set -euo pipefail
cd "$(dirname "$0")/.."
BACKENDS="${BACKENDS:-sqlite postgres}"
SIZES="${SIZES:-10 100 1000}"
INCIDENTS="${INCIDENTS:-100000}"
DAYS="${DAYS:-365}"
MONITORS="${MONITORS:-1000}"
AUDIT="${AUDIT:-1000000}"
RUN_SECONDS="${RUN_SECONDS:-3}"
PG="${BENCH_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432/postgres}"
PORT=18920
BASE="http://127.0.0.1:$PORT"
EMAIL=owner@example.com
PASSWORD="bench bench bench"

. bench/lib.sh
need_tools wrk curl python3 psql
bench_binary
WORK=$(mktemp -d)
PGDBS=()
cleanup() {
  kill $(jobs -p) 2>/dev/null || true
  for db in "${PGDBS[@]}"; do psql "$PG" -qc "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1 || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT
export RUST_LOG=warn
export UPSTATE_API_RATE_PER_MINUTE=0 UPSTATE_API_RATE_PER_HOUR=0
export UPSTATE_PUBLIC_RATE_SUMMARY=0 UPSTATE_PUBLIC_RATE_COMPONENTS=0 UPSTATE_PUBLIC_RATE_INCIDENTS=0
export UPSTATE_PUBLIC_RATE_MAINTENANCE=0 UPSTATE_PUBLIC_RATE_UPTIME=0 UPSTATE_PUBLIC_RATE_PAGE=0

# fresh BACKEND NAME: a new empty database; sets URL and DIR.
fresh() {
  DIR="$WORK/$1-$2"
  mkdir -p "$DIR"
  if [ "$1" = sqlite ]; then
    URL="sqlite://$DIR/upstate.db"
  else
    local db="upstate_bench_growth_$$_$2"
    PGDBS+=("$db")
    psql "$PG" -qc "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1
    psql "$PG" -qc "CREATE DATABASE $db" >/dev/null
    URL="${PG%/*}/$db"
  fi
}
cli() { UPSTATE_DATABASE_URL="$URL" UPSTATE_DATA_DIR="$DIR" "$BIN" "$@"; }
start() { bench_serve "$BIN" "$URL" "$DIR" "$PORT"; SERVER=$STARTED; }
stop() { kill "$SERVER"; wait "$SERVER" 2>/dev/null || true; }

# wrk URL CONNS [wrk args]: prints "req/s p99-ms non-2xx".
load() {
  wrk -t2 -c"$2" -d"${RUN_SECONDS}s" --latency "${@:3}" "$1" >"$WORK/wrk.txt" 2>&1
  wrk_figures "$WORK/wrk.txt" | awk '{ printf "%s %.2f %s\n", $1, $3, $4 }'
}
bytes() { curl -s "${@:2}" "$1" | wc -c; }
mbs() { awk -v r="$1" -v b="$2" 'BEGIN { printf "%.1f", r * b / 1e6 }'; }

for backend in $BACKENDS; do
  echo "== $backend: public reads by size (64 connections, ${RUN_SECONDS}s each)"
  printf '%-6s %9s %9s %8s %7s %5s   %9s %9s %8s %7s %5s\n' size "sum B" "sum r/s" "sum p99" "MB/s" bad \
    "html B" "html r/s" "html p99" "MB/s" bad
  for size in $SIZES; do
    fresh "$backend" "c$size"
    KEY=$(cli api-key create --name bench --scopes admin | tail -n 1)
    start
    python3 bench/growth.py seed "$BASE" "$KEY" "$size" 0
    sb=$(bytes "$BASE/api/public/status/acme")
    hb=$(bytes "$BASE/s/acme" -H 'Accept-Encoding: br')
    read -r sr sp sbad < <(load "$BASE/api/public/status/acme" 64)
    read -r hr hp hbad < <(load "$BASE/s/acme" 64 -H 'Accept-Encoding: br')
    printf '%-6s %9s %9s %8s %7s %5s   %9s %9s %8s %7s %5s\n' "$size" "$sb" "$sr" "$sp" "$(mbs "$sr" "$sb")" "$sbad" \
      "$hb" "$hr" "$hp" "$(mbs "$hr" "$hb")" "$hbad"
    stop
  done

  largest=$(echo "$SIZES" | tr ' ' '\n' | sort -n | tail -n 1)
  if [ "$MONITORS" -gt "$largest" ]; then
    echo "bench: MONITORS ($MONITORS) must not exceed the largest size ($largest): one monitor per component" >&2
    exit 1
  fi
  echo
  echo "== $backend: $largest components, $INCIDENTS incidents over $DAYS days, $MONITORS monitors"
  fresh "$backend" seed
  KEY=$(cli api-key create --name bench --scopes admin | tail -n 1)
  start
  python3 bench/growth.py seed "$BASE" "$KEY" "$largest" "$MONITORS"
  stop
  cli export --out "$WORK/seed.json" >/dev/null
  old=$(python3 bench/growth.py grow "$WORK/seed.json" "$WORK/grown.json" "$INCIDENTS" "$DAYS")
  fresh "$backend" grown
  printf '%s\n' "$PASSWORD" | cli user create --email "$EMAIL" --name Owner --role owner --password-stdin >/dev/null
  KEY=$(cli api-key create --name bench --scopes admin | tail -n 1)
  t0=$(date +%s.%N)
  cli import "$WORK/grown.json" >"$DIR/import.out"
  echo "import: $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.0f", b - a }') s for $(du -m "$WORK/grown.json" | cut -f1) MB"
  python3 bench/growth.py audit "$backend" "$URL" "$AUDIT" "$DAYS"
  start
  curl -sf "$BASE/api/public/status/acme" >/dev/null
  read -r rs_med rs_max rh_med rh_max < <(python3 bench/growth.py rebuild "$BASE" "$KEY" 20)
  printf '%-44s %9s %9s   %s\n' "first read after a write" "median ms" "worst ms" "(target < 50 ms)"
  printf '%-44s %9s %9s\n' "  summary (snapshot rebuilt)" "$rs_med" "$rs_max" "  HTML page (rebuilt and rendered)" "$rh_med" "$rh_max"
  printf '%-44s %9s %9s %8s %9s   %s\n' "under load (8 connections, brotli)" "req/s" "p99 ms" non-2xx "bytes" "(target p99 < 10 ms)"
  # A folded group's own page: its members' bars.
  group=$(curl -s "$BASE/s/acme" | grep -o 'components?group=[0-9]*' | head -n 1)
  for path in /s/acme "/s/acme/$group" /s/acme/history "/s/acme/history?month=$(date -u -d '-6 months' +%Y-%m)" "/s/acme/incidents/$old" \
      "/api/public/status/acme/uptime?days=365" /api/public/status/acme/incidents; do
    read -r r p bad < <(load "$BASE$path" 8 -H 'Accept-Encoding: br')
    printf '%-44s %9s %9s %8s %9s\n' "  $path" "$r" "$p" "$bad" "$(bytes "$BASE$path" -H 'Accept-Encoding: br')"
  done
  echo "admin screens signed in, median/worst ms of 5, $AUDIT audit events (target < 100 ms):"
  echo "  $(python3 bench/growth.py admin "$BASE" "$EMAIL" "$PASSWORD" 5)"
  stop
  echo
done
