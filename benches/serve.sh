#!/usr/bin/env bash
# `ferroflake serve` (release build) under wrk on loopback: Leaf's segment and snowflake
# routes at 1 and 32 connections, and in the same run /v1/constant, a route that returns a
# constant through the same axum stack (outside the metrics layer): the HTTP floor of this
# machine. Prints a markdown table (req/s, p50, p99, share of the floor's req/s); with
# FERROFLAKE_BENCH_REPORT set, also writes one JSON line per row there.
#
#   bash benches/serve.sh            # 10 s per run; DURATION=5s for a quicker look
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${DURATION:-10s}
port=${PORT:-18790}
command -v wrk >/dev/null || { echo "wrk is missing: apt-get install wrk" >&2; exit 1; }
cargo build --release -q -p ferroflake-cli
bin=${CARGO_TARGET_DIR:-target}/release/ferroflake
dir=$(mktemp -d)
report=${FERROFLAKE_BENCH_REPORT:-}
[ -z "$report" ] || : >"$report"
server=
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; wait 2>/dev/null; rm -rf "$dir"' EXIT
"$bin" segment create bench --start 1 --step 100000 --store "$dir/s.db" >/dev/null
"$bin" serve --listen "127.0.0.1:$port" --lease "$dir/leases" --lease-ttl-ms 1000 \
  --lease-max-ttl-ms 1000 --store "$dir/s.db" --preload bench 2>"$dir/log" &
server=$!
base="http://127.0.0.1:$port"
for _ in $(seq 1 100); do
  curl -fs "$base/readyz" >/dev/null 2>&1 && break
  sleep 0.1
done
curl -fs "$base/readyz" >/dev/null || { echo "server not ready:" >&2; cat "$dir/log" >&2; exit 1; }

# wrk's latency (e.g. 61.00us, 1.20ms) in microseconds.
micros() {
  awk -v v="$1" 'BEGIN {
    n = v + 0; u = v; sub(/^[0-9.]+/, "", u)
    if (u == "us") print n; else if (u == "ms") print n * 1000; else if (u == "s") print n * 1000000; else print n
  }'
}

# run NAME PATH CONNECTIONS -> "rps p50us p99us"
run() {
  local out rps p50 p99
  out=$(wrk -t1 -c"$3" -d"$duration" --latency "$base$2")
  rps=$(awk '/^Requests\/sec:/ {print $2}' <<<"$out")
  p50=$(micros "$(awk '$1 == "50%" {print $2}' <<<"$out")")
  p99=$(micros "$(awk '$1 == "99%" {print $2}' <<<"$out")")
  if grep -q "Non-2xx" <<<"$out"; then echo "$1: non-2xx answers:" >&2; echo "$out" >&2; exit 1; fi
  echo "$rps $p50 $p99"
}

# json_row ROUTE CONNECTIONS RPS P50_US P99_US: one line of $report (when it is set).
json_row() {
  [ -z "$report" ] || printf '{"route":"%s","connections":%d,"rps":%s,"p50_us":%s,"p99_us":%s,"duration":"%s"}\n' \
    "$1" "$2" "$3" "$4" "$5" "$duration" >>"$report"
}

echo "| route | connections | req/s | p50 | p99 | req/s vs floor |"
echo "|---|---|---|---|---|---|"
for c in 1 32; do
  read -r floor_rps floor_p50 floor_p99 < <(run floor /v1/constant "$c")
  printf '| `/v1/constant` (floor) | %d | %.0f | %.0f µs | %.0f µs | 100%% |\n' "$c" "$floor_rps" "$floor_p50" "$floor_p99"
  json_row /v1/constant "$c" "$floor_rps" "$floor_p50" "$floor_p99"
  for route in /api/segment/get/bench /api/snowflake/get/bench; do
    read -r rps p50 p99 < <(run "$route" "$route" "$c")
    share=$(awk -v a="$rps" -v b="$floor_rps" 'BEGIN { printf "%.0f", 100 * a / b }')
    printf '| `%s` | %d | %.0f | %.0f µs | %.0f µs | %s%% |\n' "$route" "$c" "$rps" "$p50" "$p99" "$share"
    json_row "$route" "$c" "$rps" "$p50" "$p99"
  done
done
echo
echo "machine: $(nproc) cores, $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo); load before: $(cut -d' ' -f1-3 /proc/loadavg)"
