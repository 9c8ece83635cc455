#!/usr/bin/env bash
# Public read API benchmark: Upstate's release binary against nginx serving the
# same summary bytes as a static file, on this machine, with the same load.
#
#   bash bench/public.sh            # needs wrk and nginx (apt-get install wrk nginx)
#   UPSTATE_BIN=/tmp/upstate-before bash bench/public.sh   # a binary built elsewhere
#                                   # (to compare two commits back to back)
#
# Targets: summary at 0.9x nginx's requests/s or better, p99 under 5 ms, and
# under 30 MB resident memory. Prints figures and ratios; writes nothing into
# the repository (results go to docs/performance.md by hand).
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION="${DURATION:-15s}"
CONNS="${CONNS:-64}"
PORT=18900
NGINX_PORT=18901

. bench/lib.sh
need_tools wrk nginx curl python3
bench_binary
WORK=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; [ -f "$WORK/nginx.pid" ] && kill "$(cat "$WORK/nginx.pid")" 2>/dev/null; rm -rf "$WORK"' EXIT
export UPSTATE_DATABASE_URL="sqlite://$WORK/upstate.db" RUST_LOG=warn
export UPSTATE_API_RATE_PER_MINUTE=0 UPSTATE_API_RATE_PER_HOUR=0
export UPSTATE_PUBLIC_RATE_SUMMARY=0 UPSTATE_PUBLIC_RATE_COMPONENTS=0 UPSTATE_PUBLIC_RATE_INCIDENTS=0
export UPSTATE_PUBLIC_RATE_MAINTENANCE=0 UPSTATE_PUBLIC_RATE_UPTIME=0 UPSTATE_PUBLIC_RATE_PAGE=0

start_server() {
  "$BIN" serve --addr "127.0.0.1:$PORT" >"$WORK/server.out" 2>"$WORK/server.err" &
  SERVER=$!
  for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$PORT/api/health" >/dev/null && return; sleep 0.1; done
  echo "bench: server did not start" >&2; cat "$WORK/server.err" >&2; exit 1
}

KEY=$("$BIN" api-key create --name bench --scopes admin | tail -n 1)
start_server
python3 bench/seed.py "http://127.0.0.1:$PORT" "$KEY" "$WORK/upstate.db"
kill "$SERVER"; wait "$SERVER" 2>/dev/null || true
start_server

rss_kb() { ps -o rss= -p "$SERVER" | tr -d ' '; }
U="http://127.0.0.1:$PORT/api/public/status/acme"
for path in "" /components /incidents /maintenance /uptime; do curl -sf "$U$path" >/dev/null; done
curl -sf "$U" >"$WORK/summary.json"
IDLE_KB=$(rss_kb)

# One wrk run: prints "req/s p50 p99" (latencies in ms).
run_wrk() {
  wrk -t2 -c"$CONNS" -d"$DURATION" --latency "${@:2}" "$1" >"$WORK/wrk.txt" 2>&1
  awk '
    function ms(v) { if (v ~ /us$/) return substr(v, 1, length(v)-2)/1000; if (v ~ /ms$/) return substr(v, 1, length(v)-2)+0; if (v ~ /s$/) return substr(v, 1, length(v)-1)*1000; return v }
    /Requests\/sec/ { rps = $2 }
    $1 == "50%" { p50 = ms($2) }
    $1 == "99%" { p99 = ms($2) }
    /Non-2xx/ { bad = $NF }
    END { printf "%.0f %.3f %.3f %s\n", rps, p50, p99, (bad == "" ? 0 : bad) }' "$WORK/wrk.txt"
}

PEAK_KB=$IDLE_KB
sample_rss() { while kill -0 "$SERVER" 2>/dev/null; do r=$(rss_kb); [ -n "$r" ] && [ "$r" -gt "$PEAK_KB" ] && PEAK_KB=$r && echo "$r" >"$WORK/peak"; sleep 0.2; done; }
sample_rss & SAMPLER=$!

printf '%-34s %10s %9s %9s %8s\n' "route" "req/s" "p50 ms" "p99 ms" "non-2xx"
SUMMARY_RPS=0; SUMMARY_P99=0
for path in "" /components /incidents /maintenance /uptime; do
  read -r rps p50 p99 bad < <(run_wrk "$U$path")
  [ -z "$path" ] && SUMMARY_RPS=$rps && SUMMARY_P99=$p99
  printf '%-34s %10s %9s %9s %8s\n' "upstate /api/public/status/acme$path" "$rps" "$p50" "$p99" "$bad"
done
# The HTML status page people open, from the same snapshot, compressed as
# browsers ask for it (50 components x 90 uptime cells: 560 KB before brotli).
read -r rps p50 p99 bad < <(run_wrk "http://127.0.0.1:$PORT/s/acme" -H "Accept-Encoding: br")
printf '%-34s %10s %9s %9s %8s\n' "upstate /s/acme (HTML, br)" "$rps" "$p50" "$p99" "$bad"
kill "$SAMPLER" 2>/dev/null || true
PEAK_KB=$(cat "$WORK/peak" 2>/dev/null || echo "$IDLE_KB")

mkdir -p "$WORK/www"
cp "$WORK/summary.json" "$WORK/www/summary.json"
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
    location / { root $WORK/www; default_type application/json; add_header Cache-Control "public, max-age=30"; add_header Access-Control-Allow-Origin "*"; }
  }
}
CONF
nginx -c "$WORK/nginx.conf" -p "$WORK"
sleep 0.5
read -r nrps np50 np99 nbad < <(run_wrk "http://127.0.0.1:$NGINX_PORT/summary.json")
printf '%-34s %10s %9s %9s %8s\n' "nginx static summary.json" "$nrps" "$np50" "$np99" "$nbad"

ratio=$(awk -v a="$SUMMARY_RPS" -v b="$nrps" 'BEGIN { printf "%.2f", a / b }')
echo
echo "summary: upstate/nginx = ${ratio}x   (target >= 0.90x)"
echo "summary: p99 = ${SUMMARY_P99} ms            (target < 5 ms)"
PAGE=http://127.0.0.1:$PORT/s/acme
weight=0
for url in "$PAGE" "http://127.0.0.1:$PORT$(curl -s "$PAGE" | grep -o '/assets/status.css?v=[0-9a-f]*')" \
           "http://127.0.0.1:$PORT$(curl -s "$PAGE" | grep -o '/assets/status.js?v=[0-9a-f]*')"; do
  weight=$((weight + $(curl -s -H 'accept-encoding: br' "$url" | wc -c)))
done
echo "status page: $((weight / 1024)) KB over the wire with its assets (brotli)   (target < 100 KB)"
echo "resident memory: idle $((IDLE_KB / 1024)) MB, peak under load $((PEAK_KB / 1024)) MB   (target < 30 MB)"
