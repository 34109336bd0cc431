#!/usr/bin/env bash
# Benchmarks the installed ferroflake package next to its peers, in a venv of its own (the
# peers never enter the test venv), with a `ferroflake serve` beside it for the segments
# taken over HTTP (benches/service.sh). Usage: bindings-python/bench/run.sh [--rounds N]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venv="$root/target/python-bench/venv"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
  "$root/bindings-python" uuid-utils snowflake-id flakeid
source "$root/benches/service.sh"
trap stop_bench_service EXIT
start_bench_service
cd "$venv"
"$venv/bin/python" "$here/bench_ids.py" "$@"
