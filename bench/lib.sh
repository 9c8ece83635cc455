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
