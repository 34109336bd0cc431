#!/usr/bin/env bash
set -euo pipefail
echo "suite node: not written yet"
