#!/usr/bin/env bash
# `ferroflake serve` (release build) under wrk on loopback: Leaf's segment and snowflake
# routes at 1 and 32 connections, and in the same run /v1/constant, a route that returns a
# constant through the same axum stack (outside the metrics layer): the HTTP floor of this
# machine. Each route runs on four servers one after the other: plain HTTP; with a tokens
# file (every request sends `Authorization: Bearer`); over TLS (a self-signed P-256
# certificate, wrk's connections kept alive, so the handshake is paid once per
# connection); over TLS with a token. On each server the three routes take turns in
# runs of DURATION/ROUNDS. Prints a markdown table (req/s, p50, p99, each as a
# share of the plain floor's at the same connections); with FERROFLAKE_BENCH_REPORT set,
# also writes one JSON line per row there. On the plain server, the CPU time the service
# spends on the Leaf segment route's runs (/proc/PID/stat utime + stime before and after
# each) and the requests wrk had answered there also go to the report, one `cost` line per
# connection count: what the service pays per ID when every ID is a request.
#
#   bash benches/serve.sh            # 10 s per row in 5 runs; DURATION=5s for a quicker look,
#                                    # VARIANTS="plain token" for some servers only
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${DURATION:-10s}
port=${PORT:-18790}
command -v wrk >/dev/null || { echo "wrk is missing: apt-get install wrk" >&2; exit 1; }
command -v openssl >/dev/null || { echo "openssl is missing: apt-get install openssl" >&2; exit 1; }
cargo build --release -q -p ferroflake-cli
bin=${CARGO_TARGET_DIR:-target}/release/ferroflake
dir=$(mktemp -d)
report=${FERROFLAKE_BENCH_REPORT:-}
[ -z "$report" ] || : >"$report"
server=
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; wait 2>/dev/null; rm -rf "$dir"' EXIT
"$bin" segment create bench --start 1 --step 100000 --store "$dir/s.db" >/dev/null
# The token variants' file: one token that may take IDs and read (the floor needs `read`).
token=bench-token-$$-$RANDOM
printf '[[token]]\nname = "bench"\nsha256 = "%s"\nscopes = ["issue:*", "read"]\n' \
  "$(printf %s "$token" | sha256sum | cut -d' ' -f1)" >"$dir/tokens.toml"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 \
  -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 \
  -keyout "$dir/key.pem" -out "$dir/cert.pem" 2>/dev/null

# start VARIANT: a server with the variant's flags; sets $base and $auth (wrk's flags).
start() {
  local flags=() scheme=http
  auth=()
  case $1 in
    token | tls+token) flags+=(--tokens-file "$dir/tokens.toml"); auth=(-H "Authorization: Bearer $token") ;;
  esac
  case $1 in
    tls | tls+token) flags+=(--tls-cert "$dir/cert.pem" --tls-key "$dir/key.pem"); scheme=https ;;
  esac
  "$bin" serve --listen "127.0.0.1:$port" --lease "$dir/leases" --lease-ttl-ms 1000 \
    --lease-max-ttl-ms 1000 --store "$dir/s.db" --preload bench "${flags[@]}" 2>"$dir/log" &
  server=$!
  base="$scheme://127.0.0.1:$port"
  for _ in $(seq 1 100); do
    curl -fsk "$base/readyz" >/dev/null 2>&1 && break
    sleep 0.1
  done
  curl -fsk "$base/readyz" >/dev/null || { echo "server ($1) not ready:" >&2; cat "$dir/log" >&2; exit 1; }
}

# stop: SIGTERM, and wait for the exit (the lease is released, the port freed).
stop() {
  kill "$server"
  wait "$server" || { echo "server exited with $?:" >&2; cat "$dir/log" >&2; exit 1; }
  server=
}

# wrk's latency (e.g. 61.00us, 1.20ms) in microseconds.
micros() {
  awk -v v="$1" 'BEGIN {
    n = v + 0; u = v; sub(/^[0-9.]+/, "", u)
    if (u == "us") print n; else if (u == "ms") print n * 1000; else if (u == "s") print n * 1000000; else print n
  }'
}

# run NAME PATH CONNECTIONS -> "rps p50us p99us requests"
run() {
  local out rps p50 p99 requests
  out=$(wrk -t1 -c"$3" -d"$duration" --latency "${auth[@]}" "$base$2")
  rps=$(awk '/^Requests\/sec:/ {print $2}' <<<"$out")
  p50=$(micros "$(awk '$1 == "50%" {print $2}' <<<"$out")")
  p99=$(micros "$(awk '$1 == "99%" {print $2}' <<<"$out")")
  requests=$(awk '/ requests in / {print $1}' <<<"$out")
  if grep -q "Non-2xx" <<<"$out"; then echo "$1: non-2xx answers:" >&2; echo "$out" >&2; exit 1; fi
  echo "$rps $p50 $p99 $requests"
}

# The server's CPU time so far (utime + stime, fields 14 and 15 of /proc/PID/stat), in
# clock ticks.
ticks() { sed 's/.*) //' "/proc/$server/stat" | awk '{ print $12 + $13 }'; }
clk_tck=$(getconf CLK_TCK)

# json_row VARIANT ROUTE CONNECTIONS RPS P50_US P99_US: one line of $report (when set).
json_row() {
  [ -z "$report" ] || printf '{"variant":"%s","route":"%s","connections":%d,"rps":%s,"p50_us":%s,"p99_us":%s,"duration":"%s","rounds":%d}\n' \
    "$1" "$2" "$3" "$4" "$5" "$6" "$duration" "$rounds" >>"$report"
}

# ratio A B: A / B to two decimals.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

# The plain floor's figures per connection count, which every row is compared with.
declare -A floor_rps floor_p50 floor_p99
routes=(/v1/constant /api/segment/get/bench /api/snowflake/get/bench)
# The routes take turns in short runs, so that the machine's drift during a row (another
# process, the CPU's clock) falls on every route alike: req/s is the mean of a route's
# runs, p50 and p99 the medians of its runs'.
seconds=${duration%s}
rounds=${ROUNDS:-5}
[ "$rounds" -le "$seconds" ] || rounds=$seconds
slice=$((seconds / rounds))s
# median of the numbers on stdin
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo "| server | route | connections | req/s | p50 | p99 | req/s × floor | p50 × floor | p99 × floor |"
echo "|---|---|---|---|---|---|---|---|---|"
# VARIANTS: a subset for a quicker look (the plain floor is measured whenever plain is in it).
for variant in ${VARIANTS:-plain token tls tls+token}; do
  start "$variant"
  for c in 1 32; do
    declare -A runs=()
    for _ in $(seq 1 "$rounds"); do
      for route in "${routes[@]}"; do
        before=$(ticks)
        line=$(duration=$slice run "$variant $route" "$route" "$c")
        runs[$route]+="$line $(($(ticks) - before))"$'\n'
      done
    done
    for route in "${routes[@]}"; do
      rps=$(awk 'NF { s += $1; n++ } END { print s / n }' <<<"${runs[$route]}")
      p50=$(awk 'NF { print $2 }' <<<"${runs[$route]}" | median)
      p99=$(awk 'NF { print $3 }' <<<"${runs[$route]}" | median)
      if [ "$variant" = plain ] && [ "$route" = /v1/constant ]; then
        floor_rps[$c]=$rps floor_p50[$c]=$p50 floor_p99[$c]=$p99
      fi
      label="\`$route\`"
      [ "$variant/$route" = plain//v1/constant ] && label="\`/v1/constant\` (floor)"
      printf '| %s | %s | %d | %.0f | %.0f µs | %.0f µs | %s | %s | %s |\n' "$variant" "$label" "$c" \
        "$rps" "$p50" "$p99" "$(ratio "$rps" "${floor_rps[$c]}")" \
        "$(ratio "$p50" "${floor_p50[$c]}")" "$(ratio "$p99" "${floor_p99[$c]}")"
      json_row "$variant" "$route" "$c" "$rps" "$p50" "$p99"
      if [ -n "$report" ] && [ "$variant/$route" = plain//api/segment/get/bench ]; then
        awk -v c="$c" -v tck="$clk_tck" -v d="$duration" 'NF { n += $4; t += $5 } END {
          printf "{\"kind\":\"cost\",\"variant\":\"plain\",\"route\":\"/api/segment/get/bench\",\"connections\":%d,\"requests\":%d,\"ids\":%d,\"cpu_s\":%.3f,\"clk_tck\":%d,\"duration\":\"%s\"}\n", c, n, n, t / tck, tck, d
        }' <<<"${runs[$route]}" >>"$report"
      fi
    done
    unset runs
  done
  stop
done
echo
echo "machine: $(nproc) cores, $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo); load before: $(cut -d' ' -f1-3 /proc/loadavg)"
