#!/usr/bin/env bash
set -euo pipefail
echo "suite c: not written yet"
