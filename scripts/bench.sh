#!/usr/bin/env bash
# Runs scripts/bench.py with the project's Python (set by the Makefile).
set -euo pipefail
cd "$(dirname "$0")/.."
exec "${PYTHON:-python3}" scripts/bench.py "$@"
