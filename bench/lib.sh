# Shared by the bench scripts: source it from the repository root.

# Sets BIN to the binary to measure: $UPSTATE_BIN when given (a build of
# another commit, to compare two back to back), else this tree's release
# build. A bench builds nothing: a build beside the load would be measured
# too (`cargo build --release` first).
bench_binary() {
  BIN="${UPSTATE_BIN:-$PWD/target/release/upstate}"
  if [ ! -x "$BIN" ]; then
    echo "bench: no binary at $BIN: run \`cargo build --release\` or set UPSTATE_BIN" >&2
    exit 1
  fi
}

# Stops with a message when a tool the bench drives is missing (each is a
# Debian package of the same name, but psql: postgresql-client).
need_tools() {
  for tool in "$@"; do
    command -v "$tool" >/dev/null || { echo "bench: $tool is missing (apt-get install $*)" >&2; exit 1; }
  done
}

# bench_serve BINARY DATABASE_URL DIR PORT: serves DATABASE_URL with DIR as
# its data directory (its key) and logs; sets STARTED to its pid once
# /api/health answers.
bench_serve() {
  UPSTATE_DATABASE_URL="$2" UPSTATE_DATA_DIR="$3" \
    "$1" serve --addr "127.0.0.1:$4" >"$3/server.out" 2>"$3/server.err" &
  STARTED=$!
  for _ in $(seq 1 300); do curl -sf "http://127.0.0.1:$4/api/health" >/dev/null && return; sleep 0.1; done
  echo "bench: $1 did not start" >&2; cat "$3/server.err" >&2; exit 1
}

# wrk_figures FILE: wrk --latency's report as "req/s p50 p99 non-2xx"
# (latencies in ms).
wrk_figures() {
  awk '
    function ms(v) { if (v ~ /us$/) return substr(v, 1, length(v)-2)/1000; if (v ~ /ms$/) return substr(v, 1, length(v)-2)+0; if (v ~ /s$/) return substr(v, 1, length(v)-1)*1000; return v }
    /Requests\/sec/ { rps = $2 }
    $1 == "50%" { p50 = ms($2) }
    $1 == "99%" { p99 = ms($2) }
    /Non-2xx/ { bad = $NF }
    END { printf "%.0f %.3f %.3f %s\n", rps, p50, p99, (bad == "" ? 0 : bad) }' "$1"
}
