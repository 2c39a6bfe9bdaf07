#!/usr/bin/env bash
# The whole test suite: install what is missing, build (Release), run every test with ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
# One test at a time: each already uses every core, and two OpenMP pools spinning on
# two cores would slow both down many times over.
ctest --test-dir build --output-on-failure
