#!/usr/bin/env bash
set -euo pipefail
echo "suite lease: not written yet"
