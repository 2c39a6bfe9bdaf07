#!/usr/bin/env bash
# The test suite.
#   bash scripts/test.sh          install what is missing, build Release into build/, run
#                                 every unit, integration, golden, hostile and browser test
#   bash scripts/test.sh --full   the same, then (what CI runs, .ci/run):
#                                 the kernel micro-benchmarks compiled (so they cannot rot);
#                                 everything built again with AddressSanitizer and
#                                 UndefinedBehaviorSanitizer into build-asan/ and the whole
#                                 ctest suite run there (the tests that start mini-gpt start
#                                 the sanitized one); the fuzz smoke, each libFuzzer target
#                                 of tests/fuzz/ for 60 s (scripts/fuzz.sh).
# ctest runs as many tests at once as there are cores: the tests run single-threaded
# (tests/CMakeLists.txt sets OMP_NUM_THREADS=1 for them), and the few that time
# something or use every core on purpose run alone (RUN_SERIAL, PROCESSORS).
set -euo pipefail
cd "$(dirname "$0")/.."

full=0
case "${1:-}" in
  "") ;;
  --full) full=1 ;;
  *) echo "usage: bash scripts/test.sh [--full]" >&2; exit 2 ;;
esac
[ $# -le 1 ] || { echo "usage: bash scripts/test.sh [--full]" >&2; exit 2; }

start=$SECONDS
elapsed() { echo "test.sh: $1 done after $(( SECONDS - start )) s"; }
jobs=$(nproc)

bash scripts/setup.sh --tests
# The tests and MPI named on: a build/ that the main job configured without them (it
# installs neither GoogleTest nor MPI) keeps those options in its cache otherwise.
if [ $full -eq 1 ]; then
  bash scripts/build.sh -DMINI_GPT_TESTS=ON -DMINI_GPT_MPI=ON -DMINI_GPT_BENCHMARKS=ON
else
  bash scripts/build.sh -DMINI_GPT_TESTS=ON -DMINI_GPT_MPI=ON -DMINI_GPT_BENCHMARKS=OFF
fi
elapsed "release build"
ctest --test-dir build --output-on-failure -j"$jobs"
elapsed "release tests"
[ $full -eq 1 ] || exit 0

mkdir -p build-asan
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Release -DMINI_GPT_SANITIZE=ON > build-asan/configure.log 2>&1 ||
  { cat build-asan/configure.log; exit 1; }
cmake --build build-asan -j"$jobs" > build-asan/build.log 2>&1 || { tail -n 60 build-asan/build.log; exit 1; }
elapsed "sanitizer build"
ctest --test-dir build-asan --output-on-failure -j"$jobs"
elapsed "sanitizer tests"

bash scripts/fuzz.sh all 60
elapsed "fuzz smoke"
