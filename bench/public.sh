#!/usr/bin/env bash
# Public reads: Upstate's release binary against nginx serving the same
# bytes from files, in rounds that take turns on this machine, so a busy
# moment falls on both. Optionally a second binary (another commit's build)
# takes its turn in each round too, for a before/after on the same machine.
#
#   cargo build --release && bash bench/public.sh     # needs wrk and nginx
#   UPSTATE_BIN=/tmp/upstate-after BASELINE_BIN=/tmp/upstate-before bash bench/public.sh
#
# ROUNDS (default 5) rounds of RUN_SECONDS (default 4) per wrk run, CONNS
# connections (default 64), two wrk threads. Prints each round, the median
# of each, the ratios against nginx (summary JSON, and the HTML status page
# with brotli as browsers ask for it), p99, the other public routes once,
# and resident memory idle and at the peak. Targets (docs/performance.md):
# summary >= 1.1x nginx, HTML >= 1.0x, p99 < 2 ms, 0 non-2xx, idle RSS < 30 MB.
# Builds nothing and writes nothing into the repository.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS="${ROUNDS:-5}"
SECONDS_PER_RUN="${RUN_SECONDS:-4}"
CONNS="${CONNS:-64}"
PORT=18900
BASE_PORT=18902
NGINX_PORT=18901

. bench/lib.sh
need_tools wrk nginx curl python3
bench_binary
WORK=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; [ -f "$WORK/nginx.pid" ] && kill "$(cat "$WORK/nginx.pid")" 2>/dev/null; rm -rf "$WORK"' EXIT
export RUST_LOG=warn
export UPSTATE_API_RATE_PER_MINUTE=0 UPSTATE_API_RATE_PER_HOUR=0
export UPSTATE_PUBLIC_RATE_SUMMARY=0 UPSTATE_PUBLIC_RATE_COMPONENTS=0 UPSTATE_PUBLIC_RATE_INCIDENTS=0
export UPSTATE_PUBLIC_RATE_MAINTENANCE=0 UPSTATE_PUBLIC_RATE_UPTIME=0 UPSTATE_PUBLIC_RATE_PAGE=0

# start BINARY PORT DIR: serves DIR's database; sets STARTED to its pid.
start() { bench_serve "$1" "sqlite://$3/upstate.db" "$3" "$2"; }

# The page every binary serves: seeded once (50 components in 8 groups,
# 60 incidents), the same database file for each.
mkdir -p "$WORK/a"
KEY=$(UPSTATE_DATABASE_URL="sqlite://$WORK/a/upstate.db" UPSTATE_DATA_DIR="$WORK/a" \
  "$BIN" api-key create --name bench --scopes admin | tail -n 1)
start "$BIN" "$PORT" "$WORK/a"
python3 bench/seed.py "http://127.0.0.1:$PORT" "$KEY" "$WORK/a/upstate.db"
kill "$STARTED"; wait "$STARTED" 2>/dev/null || true
if [ -n "${BASELINE_BIN:-}" ]; then
  mkdir -p "$WORK/b"
  cp "$WORK/a/upstate.db" "$WORK/a/secret.key" "$WORK/b/" 2>/dev/null || cp "$WORK/a/upstate.db" "$WORK/b/"
  start "$BASELINE_BIN" "$BASE_PORT" "$WORK/b"
  BASELINE=$STARTED
fi
start "$BIN" "$PORT" "$WORK/a"
SERVER=$STARTED

rss_kb() { ps -o rss= -p "$1" | tr -d ' '; }
U="http://127.0.0.1:$PORT/api/public/status/acme"
for path in "" /components /incidents /maintenance /uptime; do curl -sf "$U$path" >/dev/null; done
curl -sf "$U" >"$WORK/summary.json"
curl -sf -H 'Accept-Encoding: br' "http://127.0.0.1:$PORT/s/acme" >"$WORK/page.html.br"
IDLE_KB=$(rss_kb "$SERVER")

# nginx serves the same bytes: the summary, and the page as brotli.
mkdir -p "$WORK/www"
cp "$WORK/summary.json" "$WORK/www/summary.json"
cp "$WORK/page.html.br" "$WORK/www/page.html"
cat >"$WORK/nginx.conf" <<CONF
user root;
worker_processes auto;
daemon on;
pid $WORK/nginx.pid;
error_log $WORK/nginx-error.log;
events { worker_connections 1024; }
http {
  access_log off;
  sendfile on;
  tcp_nopush on;
  keepalive_requests 100000;
  server {
    listen 127.0.0.1:$NGINX_PORT;
    location = /summary.json { root $WORK/www; default_type application/json; add_header Cache-Control "public, max-age=30"; add_header Access-Control-Allow-Origin "*"; }
    location = /page.html { root $WORK/www; default_type text/html; add_header Content-Encoding br; add_header Cache-Control "public, max-age=30"; }
  }
}
CONF
nginx -c "$WORK/nginx.conf" -p "$WORK"
sleep 0.5

# One wrk run: prints "req/s p50 p99 non-2xx" (latencies in ms).
run_wrk() {
  wrk -t2 -c"$CONNS" -d"${SECONDS_PER_RUN}s" --latency "${@:2}" "$1" >"$WORK/wrk.txt" 2>&1
  wrk_figures "$WORK/wrk.txt"
}

PEAK_KB=$IDLE_KB
sample_rss() { while kill -0 "$SERVER" 2>/dev/null; do r=$(rss_kb "$SERVER"); [ -n "$r" ] && [ "$r" -gt "$PEAK_KB" ] && PEAK_KB=$r && echo "$r" >"$WORK/peak"; sleep 0.2; done; }
sample_rss & SAMPLER=$!

# Who takes a turn in each round: name and the two URLs (summary, page).
targets=("upstate|$U|http://127.0.0.1:$PORT/s/acme")
[ -n "${BASELINE_BIN:-}" ] && targets+=("baseline|http://127.0.0.1:$BASE_PORT/api/public/status/acme|http://127.0.0.1:$BASE_PORT/s/acme")
targets+=("nginx|http://127.0.0.1:$NGINX_PORT/summary.json|http://127.0.0.1:$NGINX_PORT/page.html")

printf '%-6s %-9s %-8s %10s %9s %9s %8s\n' round who what "req/s" "p50 ms" "p99 ms" non-2xx
: >"$WORK/rounds"
for round in $(seq 1 "$ROUNDS"); do
  for t in "${targets[@]}"; do
    IFS='|' read -r who summary page <<<"$t"
    read -r rps p50 p99 bad < <(run_wrk "$summary")
    printf '%-6s %-9s %-8s %10s %9s %9s %8s\n' "$round" "$who" summary "$rps" "$p50" "$p99" "$bad"
    echo "$who summary $rps $p99 $bad" >>"$WORK/rounds"
    read -r rps p50 p99 bad < <(run_wrk "$page" -H "Accept-Encoding: br")
    printf '%-6s %-9s %-8s %10s %9s %9s %8s\n' "$round" "$who" html "$rps" "$p50" "$p99" "$bad"
    echo "$who html $rps $p99 $bad" >>"$WORK/rounds"
  done
done
kill "$SAMPLER" 2>/dev/null || true
PEAK_KB=$(cat "$WORK/peak" 2>/dev/null || echo "$IDLE_KB")

# The median of each (who, what) over the rounds, and the ratios.
median() { grep "^$1 $2 " "$WORK/rounds" | awk -v f="$3" '{ print $f }' | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
echo
printf '%-9s %-8s %10s %9s %8s\n' who what "median/s" "p99 ms" non-2xx
for t in "${targets[@]}"; do
  who=${t%%|*}
  for what in summary html; do
    bad=$(grep "^$who $what " "$WORK/rounds" | awk '{ s += $5 } END { print s + 0 }')
    printf '%-9s %-8s %10s %9s %8s\n' "$who" "$what" "$(median "$who" "$what" 3)" "$(median "$who" "$what" 4)" "$bad"
  done
done
echo
for what in summary html; do
  up=$(median upstate "$what" 3); ng=$(median nginx "$what" 3)
  echo "$what: upstate/nginx = $(awk -v a="$up" -v b="$ng" 'BEGIN { printf "%.2f", a / b }')x   (target >= $([ "$what" = summary ] && echo 1.1 || echo 1.0)x)"
  if [ -n "${BASELINE_BIN:-}" ]; then
    base=$(median baseline "$what" 3)
    echo "$what: upstate/baseline = $(awk -v a="$up" -v b="$base" 'BEGIN { printf "%.2f", a / b }')x"
  fi
done
echo "summary: p99 = $(median upstate summary 4) ms   (target < 2 ms)"

# The other public routes, once each.
echo
for path in /components /incidents /maintenance /uptime; do
  read -r rps p50 p99 bad < <(run_wrk "$U$path")
  printf '%-42s %10s %9s %9s %8s\n' "upstate /api/public/status/acme$path" "$rps" "$p50" "$p99" "$bad"
done
PAGE=http://127.0.0.1:$PORT/s/acme
weight=0
for url in "$PAGE" "http://127.0.0.1:$PORT$(curl -s "$PAGE" | grep -o '/assets/status.css?v=[0-9a-f]*')" \
           "http://127.0.0.1:$PORT$(curl -s "$PAGE" | grep -o '/assets/status.js?v=[0-9a-f]*')"; do
  weight=$((weight + $(curl -s -H 'accept-encoding: br' "$url" | wc -c)))
done
echo "status page: $((weight / 1024)) KB over the wire with its assets (brotli)   (target < 100 KB)"
echo "resident memory: idle $((IDLE_KB / 1024)) MB, peak under load $((PEAK_KB / 1024)) MB   (target < 30 MB)"
