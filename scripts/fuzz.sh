#!/usr/bin/env bash
# Runs the libFuzzer targets of tests/fuzz/ (checkpoint, config, utf8), each for SECONDS
# on one core, building them first with clang++ into build-fuzz/ (or $MINI_GPT_FUZZ_BUILD).
#   bash scripts/fuzz.sh TARGET|all SECONDS
# Each target starts from its committed seeds (tests/fuzz/TARGET/) plus what earlier runs
# of this build folder found (BUILD/corpus/TARGET/, where new inputs go; the repository's
# seeds are never written to). A crash, leak, timeout or over-limit allocation fails the
# script; the reproducer stays in BUILD/artifacts/ (its path and a hex dump are printed)
# and replays with: BUILD/tests/fuzz/fuzz_TARGET REPRODUCER
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { echo "usage: bash scripts/fuzz.sh checkpoint|config|utf8|all SECONDS" >&2; exit 2; }
[ $# -eq 2 ] || usage
all_targets=(utf8 config checkpoint)
case "$1" in
  all) targets=("${all_targets[@]}") ;;
  checkpoint|config|utf8) targets=("$1") ;;
  *) usage ;;
esac
[[ "$2" =~ ^[0-9]+$ ]] && [ "$2" -gt 0 ] || usage
seconds=$2

build=${MINI_GPT_FUZZ_BUILD:-build-fuzz}
if [ ! -f "$build/CMakeCache.txt" ]; then
  mkdir -p "$build"
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
    -DMINI_GPT_FUZZ=ON -DMINI_GPT_TESTS=OFF > "$build/configure.log" 2>&1 || { cat "$build/configure.log"; exit 1; }
fi
cmake --build "$build" -j"$(nproc)" --target "${targets[@]/#/fuzz_}" > "$build/build.log" 2>&1 ||
  { tail -n 60 "$build/build.log"; exit 1; }

# Leaks are errors; UB stops the run. One thread: the targets never compute with the
# kernels, and a spinning OpenMP pool would take the second core from other work.
export ASAN_OPTIONS=detect_leaks=1:strict_string_checks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp:print_suppressions=0
export OMP_NUM_THREADS=1

mkdir -p "$build/artifacts"
failed=()
for target in "${targets[@]}"; do
  corpus="$build/corpus/$target"
  mkdir -p "$corpus"
  dict=()
  [ -f "tests/fuzz/$target.dict" ] && dict=(-dict="tests/fuzz/$target.dict")
  log="$build/fuzz-$target.log"
  echo "fuzz $target: ${seconds}s"
  # -malloc_limit_mb: the issue's bound, no single allocation over 1 GB from any input;
  # -timeout: one input taking over 10 s counts as a hang.
  status=0
  "$build/tests/fuzz/fuzz_$target" "$corpus" "tests/fuzz/$target" "${dict[@]}" \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 \
    -print_final_stats=1 -artifact_prefix="$build/artifacts/$target-" > "$log" 2>&1 || status=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
  coverage=$(grep -o 'cov: [0-9]* ft: [0-9]* corp: [0-9]*' "$log" | tail -n 1 || true)
  echo "fuzz $target: ${runs:-?} executions (${speed:-?}/s), ${coverage:-no coverage line}"
  if [ "$status" -ne 0 ]; then
    failed+=("$target")
    echo "fuzz $target: FAILED (exit $status); the end of $log:"
    grep -v '^#[0-9]' "$log" | tail -n 40
    for artifact in $(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log"); do
      echo "reproducer: $artifact ($(stat -c %s "$artifact") bytes); replay: $build/tests/fuzz/fuzz_$target $artifact"
      od -A d -t x1z -v "$artifact" | head -n 32
    done
  fi
done

if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: FAILED: ${failed[*]}"
  exit 1
fi
echo "fuzz: ${#targets[@]} targets ran ${seconds}s each, no failure"
