#!/usr/bin/env bash
# The whole test suite, as CI runs it: install what is missing, then
#   1. build (Release) into build/ and run every test with ctest;
#   2. build everything again with AddressSanitizer + UndefinedBehaviorSanitizer into
#      build-asan/ (-DMINI_GPT_SANITIZE=ON) and run the whole ctest suite there, so the
#      tests that start mini-gpt start the sanitized one;
#   3. the fuzz smoke: each libFuzzer target (tests/fuzz/) for 60 s (scripts/fuzz.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
elapsed() { echo "test.sh: $1 done after $(( SECONDS - start )) s"; }

bash scripts/setup.sh
bash scripts/build.sh -DMINI_GPT_BENCHMARKS=ON  # the kernel micro-benchmarks are compiled too, so they cannot rot
elapsed "release build"
# One test at a time: each already uses every core, and two OpenMP pools spinning on
# two cores would slow both down many times over.
ctest --test-dir build --output-on-failure
elapsed "release tests"

mkdir -p build-asan
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Release -DMINI_GPT_SANITIZE=ON > build-asan/configure.log 2>&1 ||
  { cat build-asan/configure.log; exit 1; }
cmake --build build-asan -j"$(nproc)" > build-asan/build.log 2>&1 || { tail -n 60 build-asan/build.log; exit 1; }
elapsed "sanitizer build"
ctest --test-dir build-asan --output-on-failure
elapsed "sanitizer tests"

bash scripts/fuzz.sh all 60
elapsed "fuzz smoke"
