#!/usr/bin/env bash
# C-ABI call overhead: ferroflake_generator_next_id from C (static and shared library) next
# to the Rust call on the same generator type, in one run, repeated ROUNDS times (default 3)
# because the machine is shared; then the same for a leased generator's next_id (embedded
# registry) and a segment key's next_id (SQLite, step 2^30). Prints each measurement, then
# the lowest of each; with FERROFLAKE_BENCH_REPORT set, also writes the lowest as JSON lines
# there: one per clock ("clock": "manual", "fast", "system"), then one with "clock":
# "leased" and one with "clock": "segment", each with the same "ns" callers plus a
# "source" key ("leased": "generator_clock", "registry"; "segment": "store", "step"); then
# one each for "mask" and "unmask" (a 63-bit mask of one number per call, "bits": 63).
# Usage: ffi-c/bench/run.sh [ROUNDS]      (not part of the tests)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
rounds="${1:-3}"
target_dir="${CARGO_TARGET_DIR:-$root/target}"
prefix="$target_dir/ferroflake-c"
out="$target_dir/c-bench"
mkdir -p "$out"

bash ffi-c/build-c.sh "$prefix" >/dev/null
cargo bench -p ferroflake-ffi --bench next_id --no-run 2>/dev/null
cflags=(-std=c99 -O2 -I"$prefix/include")
gcc "${cflags[@]}" ffi-c/bench/next_id.c "$prefix/lib/libferroflake.a" -lpthread -ldl -lm \
  -o "$out/next_id-static"
gcc "${cflags[@]}" ffi-c/bench/next_id.c -L"$prefix/lib" -lferroflake \
  -Wl,-rpath,"$prefix/lib" -o "$out/next_id-shared"

results="$out/results.txt"
: >"$results"
for round in $(seq 1 "$rounds"); do
  echo "--- round $round"
  cargo bench -q -p ferroflake-ffi --bench next_id 2>/dev/null | tee -a "$results"
  "$out/next_id-static" c-static | tee -a "$results"
  "$out/next_id-shared" c-shared | tee -a "$results"
done

echo "--- ns per call: lowest of $rounds rounds x 15 runs of ${FERROFLAKE_BENCH_ITERATIONS:-1000000} calls"
python3 - "$results" "$rounds" <<'PY'
import json, os, sys
rows = {}
for line in open(sys.argv[1]):
    who, clock, ns = line.split()
    rows.setdefault(clock, {}).setdefault(who, []).append(float(ns))
callers = ["rust", "rust-out-of-line", "rust-via-c-abi", "c-static", "c-shared"]
print("%-8s" % "clock" + "".join("%17s" % c for c in callers) + "%18s" % "c-static - rust")
cases = ["manual", "fast", "system"] + [c for c in ["leased", "segment", "mask", "unmask"] if c in rows]
for clock in cases:
    med = {c: min(rows[clock][c]) for c in callers}
    print("%-8s" % clock + "".join("%17.2f" % med[c] for c in callers)
          + "%18.2f" % (med["c-static"] - med["rust"]))
report = os.environ.get("FERROFLAKE_BENCH_REPORT")
if report:
    iterations = int(os.environ.get("FERROFLAKE_BENCH_ITERATIONS", "1000000"))
    with open(report, "w") as out:
        sources = {
            "leased": {"source": "leased", "generator_clock": "system", "registry": "embedded"},
            "segment": {"source": "segment", "store": "sqlite", "step": 1 << 30},
            "mask": {"source": "mask", "bits": 63},
            "unmask": {"source": "unmask", "bits": 63},
        }
        for clock in cases:
            lowest = {c: min(rows[clock][c]) for c in callers}
            row = {"clock": clock, "rounds": int(sys.argv[2]), "iterations": iterations,
                   "ns": lowest}
            row.update(sources.get(clock, {}))
            out.write(json.dumps(row) + "\n")
PY
