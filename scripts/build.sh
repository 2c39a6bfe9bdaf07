#!/usr/bin/env bash
# Configures and builds mini-gpt (Release) into build/. Extra arguments go to cmake.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "$@" > build.log 2>&1 || { cat build.log; exit 1; }
# The whole log is kept; on failure its errors (and the lines around them) are shown, on
# success only the last lines.
if ! cmake --build build -j"$(nproc)" >> build.log 2>&1; then
  grep -n -B2 -A6 -E 'error|Error' build.log | head -n 120
  echo "build.sh: the build failed; the whole log is build.log"
  exit 1
fi
tail -n 2 build.log
