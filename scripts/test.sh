#!/usr/bin/env bash
# Sets everything up (scripts/setup.sh), runs the whole test suite with CTest, then a minute
# of each fuzz target (scripts/fuzz.sh, its own sanitized build in build-fuzz/).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
ctest --test-dir build --output-on-failure -j "$(nproc)" --timeout 600
scripts/fuzz.sh --seconds 60
