#!/usr/bin/env bash
# Three instances on one PostgreSQL behind nginx, against one instance alone
# behind the same nginx, on this machine (the same two cores: the ratio shows
# the overhead of running three, not scale).
#
#   bash bench/instances.sh     # needs wrk, nginx, curl, python3, psql and a
#                               # PostgreSQL at $UPSTATE_BENCH_POSTGRES_URL
#   UPSTATE_BIN=/tmp/upstate bash bench/instances.sh   # a binary built elsewhere
#
# Reports:
#   - public read throughput (summary JSON through nginx) of three instances
#     against one, with a write every 100 ms going on;
#   - write-to-visible latency across instances (a write on A, polled on B's
#     public API until it shows): target p99 under 1 s;
#   - failed requests while one of the three is restarted mid-run (SIGTERM,
#     started again on its port): target 0;
#   - failed public reads while PostgreSQL itself restarts (pg_ctlcluster
#     restart; skipped unless BENCH_RESTART_POSTGRES=1, since it restarts
#     the machine's server): target 0.
# Writes nothing into the repository (figures go to docs/performance.md by hand).
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION="${DURATION:-10s}"
CONNS="${CONNS:-32}"
PG="${UPSTATE_BENCH_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432/postgres}"
PORTS=(18911 18912 18913)
LB_PORT=18910

. bench/lib.sh
need_tools wrk nginx curl python3 psql
bench_binary
WORK=$(mktemp -d)
DB="upstate_bench_instances_$$"
cleanup() {
  kill $(jobs -p) 2>/dev/null || true
  [ -f "$WORK/nginx.pid" ] && kill "$(cat "$WORK/nginx.pid" 2>/dev/null)" 2>/dev/null || true
  sleep 0.5
  psql "$PG" -qc "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT
psql "$PG" -qc "CREATE DATABASE $DB" >/dev/null
export UPSTATE_DATABASE_URL="${PG%/*}/$DB" RUST_LOG=warn
export UPSTATE_SECRET_KEY=$(python3 -c 'import base64,os;print(base64.b64encode(os.urandom(32)).decode())')
export UPSTATE_API_RATE_PER_MINUTE=0 UPSTATE_API_RATE_PER_HOUR=0 UPSTATE_TRUSTED_PROXIES=127.0.0.1
export UPSTATE_PUBLIC_RATE_SUMMARY=0 UPSTATE_PUBLIC_RATE_COMPONENTS=0 UPSTATE_PUBLIC_RATE_INCIDENTS=0
export UPSTATE_PUBLIC_RATE_MAINTENANCE=0 UPSTATE_PUBLIC_RATE_UPTIME=0 UPSTATE_PUBLIC_RATE_PAGE=0

declare -A PIDS
start_instance() {
  local port=$1
  "$BIN" serve --addr "127.0.0.1:$port" >"$WORK/$port.out" 2>>"$WORK/$port.err" &
  PIDS[$port]=$!
  for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$port/api/health" >/dev/null && return; sleep 0.1; done
  echo "bench: instance on $port did not start" >&2; cat "$WORK/$port.err" >&2; exit 1
}

# nginx in front of the given ports, with the README's docs/nginx.conf.
start_nginx() {
  [ -f "$WORK/nginx.pid" ] && { kill "$(cat "$WORK/nginx.pid")"; sleep 0.3; }
  local servers=""
  for port in "$@"; do servers+="    server 127.0.0.1:$port;\n"; done
  python3 - "$WORK" "$LB_PORT" "$servers" <<'PY'
import sys
work, port, servers = sys.argv[1], sys.argv[2], sys.argv[3].replace("\\n", "\n")
site = open("docs/nginx.conf").read()
site = site.replace("    server 127.0.0.1:8081;\n    server 127.0.0.1:8082;\n    server 127.0.0.1:8083;\n", servers)
site = site.replace("listen 80;", f"listen 127.0.0.1:{port};")
open(f"{work}/nginx.conf", "w").write(f"""daemon off;
master_process off;
pid {work}/nginx.pid;
error_log {work}/nginx.log warn;
events {{ worker_connections 4096; }}
http {{
  access_log off;
  client_body_temp_path {work}/body; proxy_temp_path {work}/proxy;
  fastcgi_temp_path {work}/fastcgi; uwsgi_temp_path {work}/uwsgi; scgi_temp_path {work}/scgi;
{site}
}}
""")
PY
  # One process in the foreground (no master and workers): nothing is left
  # behind when the bench ends.
  nginx -p "$WORK" -c "$WORK/nginx.conf" </dev/null >/dev/null 2>&1 &
  for _ in $(seq 1 50); do curl -sf "http://127.0.0.1:$LB_PORT/api/health" >/dev/null && return; sleep 0.1; done
  echo "bench: nginx did not start" >&2; cat "$WORK/nginx.log" >&2; exit 1
}

# One wrk run against nginx: prints "req/s p99_ms failed".
run_wrk() {
  wrk -t2 -c"$CONNS" -d"$1" --latency "http://127.0.0.1:$LB_PORT/api/public/status/acme" >"$WORK/wrk.txt" 2>&1
  awk '
    function ms(v) { if (v ~ /us$/) return substr(v, 1, length(v)-2)/1000; if (v ~ /ms$/) return substr(v, 1, length(v)-2)+0; if (v ~ /s$/) return substr(v, 1, length(v)-1)*1000; return v }
    /Requests\/sec/ { rps = $2 }
    $1 == "99%" { p99 = ms($2) }
    /Non-2xx/ { bad += $NF }
    /Socket errors/ { gsub(",", ""); bad += $4 + $6 + $8 + $10 }
    END { printf "%.0f %.3f %d\n", rps, p99, bad }' "$WORK/wrk.txt"
}

KEY=$("$BIN" api-key create --name bench --scopes admin | tail -n 1)
for port in "${PORTS[@]}"; do start_instance "$port"; done
A="http://127.0.0.1:${PORTS[0]}"
B="http://127.0.0.1:${PORTS[1]}"
page=$(curl -sf -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' \
  -d '{"name":"Acme","slug":"acme"}' "$A/api/v1/statuspages" | python3 -c 'import json,sys;print(json.load(sys.stdin)["data"]["id"])')
comp=""
for name in API Web Database Queue Search Mail CDN Billing; do
  id=$(curl -sf -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' \
    -d "{\"name\":\"$name\",\"statusPageId\":$page}" "$A/api/v1/components" | python3 -c 'import json,sys;print(json.load(sys.stdin)["data"]["id"])')
  comp=${comp:-$id}
done
for port in "${PORTS[@]}"; do curl -sf "http://127.0.0.1:$port/api/public/status/acme" >/dev/null; done

secs=${DURATION%s}
echo "== reads through nginx, a write every 100 ms ($DURATION, $CONNS connections)"
start_nginx "${PORTS[0]}"
python3 bench/visible.py "$A" "$A" "$KEY" "$comp" acme "$secs" >"$WORK/one-writes.txt" &
writer=$!
read -r one_rps one_p99 one_bad < <(run_wrk "$DURATION")
wait "$writer"
start_nginx "${PORTS[@]}"
python3 bench/visible.py "$A" "$B" "$KEY" "$comp" acme "$secs" >"$WORK/three-writes.txt" &
writer=$!
read -r three_rps three_p99 three_bad < <(run_wrk "$DURATION")
wait "$writer"
printf "one instance:    %6s req/s  p99 %7s ms  failed %s\n" "$one_rps" "$one_p99" "$one_bad"
printf "three instances: %6s req/s  p99 %7s ms  failed %s\n" "$three_rps" "$three_p99" "$three_bad"
python3 -c "print(f'three / one: {$three_rps / $one_rps:.2f}x (same cores: the cost of three)')"
echo "write on A, visible on A (one instance):   $(cat "$WORK/one-writes.txt")"
echo "write on A, visible on B (three instances): $(cat "$WORK/three-writes.txt")"

echo "== one instance restarted mid-run (SIGTERM, started again on its port)"
(
  sleep 3
  kill -TERM "${PIDS[${PORTS[1]}]}"
  wait "${PIDS[${PORTS[1]}]}" 2>/dev/null || true
  "$BIN" serve --addr "127.0.0.1:${PORTS[1]}" >"$WORK/restarted.out" 2>>"$WORK/restarted.err" &
  echo $! >"$WORK/restarted.pid"
  wait
) &
restarter=$!
read -r r_rps r_p99 r_bad < <(run_wrk "$DURATION")
printf "during the restart: %6s req/s  p99 %7s ms  failed %s (target 0)\n" "$r_rps" "$r_p99" "$r_bad"

if [ "${BENCH_RESTART_POSTGRES:-0}" = 1 ]; then
  echo "== PostgreSQL restarted mid-run (pg_ctlcluster restart)"
  ( sleep 3; pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | sort -V | tail -n 1)" main restart ) &
  read -r p_rps p_p99 p_bad < <(run_wrk "$DURATION")
  printf "during the restart: %6s req/s  p99 %7s ms  failed public reads %s (target 0)\n" "$p_rps" "$p_p99" "$p_bad"
else
  echo "== PostgreSQL restart skipped (BENCH_RESTART_POSTGRES=1 restarts this machine's server)"
fi
kill "$restarter" 2>/dev/null || true
[ -f "$WORK/restarted.pid" ] && kill "$(cat "$WORK/restarted.pid")" 2>/dev/null || true
