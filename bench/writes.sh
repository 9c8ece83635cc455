#!/usr/bin/env bash
# Concurrent writes on both databases: WRITERS (default 8) clients at once,
# each creating, updating, posting to and resolving incidents that move two
# shared components in opposite orders, and changing component statuses as
# monitors do (bench/writers.py). SQLite is the reference, run first and
# again last, around PostgreSQL.
#
#   bash bench/writes.sh                       # a release build of this tree
#   UPSTATE_BIN=/tmp/upstate bash bench/writes.sh   # a binary built elsewhere
#   DURATION=30 WRITERS=16 bash bench/writes.sh
#   BENCH_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/postgres (default)
#
# Targets: 0 errors on both; PostgreSQL at least 0.5x SQLite's writes/s.
# Prints figures and ratios; writes nothing into the repository (results go
# to docs/performance.md by hand).
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION="${DURATION:-15}"
WRITERS="${WRITERS:-8}"
PG="${BENCH_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432/postgres}"
PORT=18910

. bench/lib.sh
need_tools curl python3 psql
bench_binary
WORK=$(mktemp -d)
DBNAME="upstate_bench_writes_$$"
cleanup() {
  kill $(jobs -p) 2>/dev/null || true
  psql "$PG" -qc "DROP DATABASE IF EXISTS $DBNAME WITH (FORCE)" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT
export RUST_LOG=warn UPSTATE_API_RATE_PER_MINUTE=0 UPSTATE_API_RATE_PER_HOUR=0

# One run on a fresh database: prints "writes writes/s p50 p99 errors seen".
run() {
  local url=$1
  export UPSTATE_DATABASE_URL="$url"
  local key
  key=$("$BIN" api-key create --name bench --scopes admin | tail -n 1)
  "$BIN" serve --addr "127.0.0.1:$PORT" >"$WORK/server.out" 2>"$WORK/server.err" &
  local server=$!
  for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$PORT/api/health" >/dev/null && break; sleep 0.1; done
  python3 bench/writers.py "http://127.0.0.1:$PORT" "$key" "$WRITERS" "$DURATION"
  kill "$server"; wait "$server" 2>/dev/null || true
  if grep -qi "deadlock" "$WORK/server.err"; then
    echo "bench: the server met a deadlock:" >&2; grep -i deadlock "$WORK/server.err" | head -3 >&2
  fi
}

fresh_pg() {
  psql "$PG" -qc "DROP DATABASE IF EXISTS $DBNAME WITH (FORCE)" >/dev/null 2>&1
  psql "$PG" -qc "CREATE DATABASE $DBNAME" >/dev/null
  echo "${PG%/*}/$DBNAME"
}

printf '%-22s %8s %9s %8s %8s %7s  %s\n' "run ($WRITERS writers)" writes "writes/s" "p50 ms" "p99 ms" errors seen
read -r sw1 sr1 sp50 sp99 se1 sseen < <(run "sqlite://$WORK/a.db")
printf '%-22s %8s %9s %8s %8s %7s  %s\n' "sqlite" "$sw1" "$sr1" "$sp50" "$sp99" "$se1" "$sseen"
read -r pw pr pp50 pp99 pe pseen < <(run "$(fresh_pg)")
printf '%-22s %8s %9s %8s %8s %7s  %s\n' "postgresql" "$pw" "$pr" "$pp50" "$pp99" "$pe" "$pseen"
read -r sw2 sr2 sp50 sp99 se2 sseen < <(run "sqlite://$WORK/b.db")
printf '%-22s %8s %9s %8s %8s %7s  %s\n' "sqlite (again)" "$sw2" "$sr2" "$sp50" "$sp99" "$se2" "$sseen"

ratio=$(awk -v p="$pr" -v a="$sr1" -v b="$sr2" 'BEGIN { printf "%.2f", p / ((a + b) / 2) }')
echo
echo "postgresql/sqlite writes/s = ${ratio}x   (target >= 0.50x)"
echo "errors: sqlite $((se1 + se2)), postgresql $pe   (target 0)"
