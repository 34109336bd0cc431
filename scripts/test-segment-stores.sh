#!/usr/bin/env bash
# Segment stores on real servers started here on 127.0.0.1 (scripts/servers/ctl.sh):
# PostgreSQL, MariaDB (MySQL's protocol) and Redis. Unit tests and the SQLite process tests,
# then per server: the store conformance suite, a Leaf table filled by hand, 4 processes x
# 2 threads on a step of 10, SIGKILL mid-segment then restart, give-back on shutdown; the
# store-fault suite (a record lost, all records lost, the table moved back, a dump restored,
# a value garbled, under running processes and new ones: all stop, no duplicate); the
# SQL servers killed mid-run (errors, then recovery, no duplicate); Redis flushed, restarted
# and evicting (it must fail closed); MariaDB with autocommit off server-wide or its log flushed once a second
# and PostgreSQL with fsync off (refused unless accepted by name); PostgreSQL and
# MariaDB restarted, crashed, and put back to a copy of their data (every key held). Run
# scripts/install-deps.sh first.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/rust-tests.sh
source scripts/lib.sh
require_tools redis-server redis-cli mariadbd mariadb psql

# Build everything first, so the servers are not kept waiting.
rust_tests_build

start_test_servers postgres mysql redis

# Unit tests and the SQLite tests (the server tests are #[ignore]d here).
rust_tests_by_file 'package(ferroflake-segment-stores)'
# Every server test, one test file at a time (their deadlines were set for that). The ones
# that kill, flush or reconfigure a server run one at a time, after the rest (Leaf's table
# tests one at a time among themselves: .config/nextest.toml).
rust_tests_by_file 'package(ferroflake-segment-stores) & !binary(redis_faults) & !binary(mysql_faults) & !binary(postgres_faults) & !binary(sql_restores) & !binary(faults) & !test(/server_killed/)' \
  --run-ignored only
# The store-fault suite: one test at a time per server, the servers side by side.
rust_tests 'package(ferroflake-segment-stores) & binary(faults)' --run-ignored only
rust_tests 'package(ferroflake-segment-stores) & binary(processes) & test(/server_killed/)' \
  --run-ignored only --no-capture
rust_tests 'package(ferroflake-segment-stores) & (binary(redis_faults) | binary(mysql_faults) | binary(postgres_faults))' \
  --run-ignored only --no-capture
rust_tests 'package(ferroflake-segment-stores) & binary(sql_restores)' --run-ignored only --no-capture
echo "segment stores passed in $(elapsed) s"
