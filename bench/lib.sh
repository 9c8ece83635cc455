# Shared by the bench scripts: source it from the repository root.

# Sets BIN to the binary to measure: $UPSTATE_BIN when given (a build of
# another commit, to compare two back to back), else a fresh release build.
bench_binary() {
  if [ -n "${UPSTATE_BIN:-}" ]; then
    BIN="$UPSTATE_BIN"
  else
    cargo build --release --quiet
    BIN="$PWD/target/release/upstate"
  fi
}

# Stops with a message when a tool the bench drives is missing (each is a
# Debian package of the same name, but psql: postgresql-client).
need_tools() {
  for tool in "$@"; do
    command -v "$tool" >/dev/null || { echo "bench: $tool is missing (apt-get install $*)" >&2; exit 1; }
  done
}
