#!/usr/bin/env bash
set -euo pipefail
echo "suite python: not written yet"
