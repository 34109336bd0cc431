#!/usr/bin/env bash
# Model-checks the lease protocol (lease/model): the real protocol must pass every property,
# and each mutant (a guard removed) must yield a counterexample, printed as a trace.
#
# Bounds (defaults in lease/model/src/bounds.rs, Bounds::small): 2 holders, true time 0..=5,
# wall clocks from 2 behind the registry's to 2 ahead (the skew limit is 1), TTL 3,
# quarantine 1, safety margin 1, one loss of records, 2 claims, 2 messages in flight. About
# 1.5 minutes on two cores. Larger, for example:
#   FERROFLAKE_MODEL_HOLDERS=3 FERROFLAKE_MODEL_TIME=6 scripts/test-lease-model.sh
# Variables: FERROFLAKE_MODEL_{HOLDERS,TIME,BEHIND,AHEAD,WIPES,RESTORES,CLAIMS,IN_FLIGHT,TTL,
# QUARANTINE,THREADS}. The restore checks run with one restore, no wipe, 3 claims and every
# clock on the registry's.
set -euo pipefail
cd "$(dirname "$0")/.."
# Two tests at a time: the mutants' checks run on one thread each (breadth-first on one
# thread finds the shortest counterexample), so two of them fill the two cores.
cargo test --release -p ferroflake-lease-model -- --nocapture --test-threads=2
