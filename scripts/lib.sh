# What the test scripts share: tools that must be there, test servers started for the run
# and stopped at its end, the time since the script began. Sourced, from the project root:
#   source scripts/lib.sh

# The script's start, for `elapsed`.
lib_started=$(date +%s)

# Seconds since the script sourced this file.
elapsed() {
  echo "$(( $(date +%s) - lib_started ))"
}

# Exits with a hint if any of the named commands is missing.
require_tools() {
  local tool
  for tool in "$@"; do
    command -v "$tool" >/dev/null ||
      { echo "missing $tool: run scripts/install-deps.sh" >&2; exit 1; }
  done
}

# Commands run when the script exits, last added first.
lib_at_exit=()
lib_run_at_exit() {
  local i
  for (( i = ${#lib_at_exit[@]} - 1; i >= 0; i-- )); do
    eval "${lib_at_exit[i]}" || true
  done
}
trap lib_run_at_exit EXIT

# Runs the command string $1 when the script exits, before those added earlier.
at_exit() {
  lib_at_exit+=("$1")
}

# scripts/servers/ctl.sh, on the servers of this run.
ctl() {
  bash scripts/servers/ctl.sh "$@"
}

# Starts the named test servers (etcd, redis, zookeeper, postgres, mysql) on loopback under
# a fresh FF_SERVERS_DIR, exports FERROFLAKE_TEST_<NAME> with each one's address, and
# stops them all when the script exits.
start_test_servers() {
  local server
  FF_SERVERS_DIR=$(mktemp -d)
  export FF_SERVERS_DIR
  at_exit 'ctl stop-all; rm -rf "$FF_SERVERS_DIR"'
  for server in "$@"; do
    ctl start "$server"
  done
  for server in "$@"; do
    export "FERROFLAKE_TEST_${server^^}=$(ctl url "$server")"
  done
  echo "servers up under $FF_SERVERS_DIR ($(elapsed) s)"
}
