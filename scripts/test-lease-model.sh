#!/usr/bin/env bash
# Model-checks the lease protocol (lease/model): the real protocol must pass every property,
# and each mutant (a guard removed) must yield a counterexample, printed as a trace (but a
# claim sent again to a second server: its test shows the model reaches no new state with it).
#
# Bounds (defaults in lease/model/src/bounds.rs, Bounds::small): 2 holders, true time 0..=5,
# wall clocks from 2 behind the registry's to 2 ahead (the skew limit is 1), TTL 3,
# quarantine 1, safety margin 1, one loss of records, 2 claims, 2 messages in flight. About
# 1.5 minutes on two cores. Larger, for example:
#   FERROFLAKE_MODEL_HOLDERS=3 FERROFLAKE_MODEL_TIME=6 scripts/test-lease-model.sh
# Variables: FERROFLAKE_MODEL_{HOLDERS,TIME,BEHIND,AHEAD,WIPES,RESTORES,CLAIMS,IN_FLIGHT,
# RETRIES,TTL,QUARANTINE,THREADS}. The restore checks run with one restore, no wipe, 3 claims
# and every clock on the registry's. RETRIES (default 0) is how many requests may be sent
# again in a run: a renewal or a release given up on at one server of a service and sent to
# the next, the first copy left in flight to be applied late. The retry check runs with at
# least one and every clock on the registry's (about 10 s); with the clocks' full range too,
# FERROFLAKE_MODEL_RETRIES=1 makes the main check about 2.5 times larger.
set -euo pipefail
cd "$(dirname "$0")/.."
# Two tests at a time: the mutants' checks run on one thread each (breadth-first on one
# thread finds the shortest counterexample), so two of them fill the two cores.
cargo test --release -p ferroflake-lease-model -- --nocapture --test-threads=2
