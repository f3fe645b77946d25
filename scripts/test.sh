#!/usr/bin/env bash
# Sets everything up (scripts/setup.sh) and runs the whole test suite with CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
ctest --test-dir build --output-on-failure -j "$(nproc)" --timeout 600
