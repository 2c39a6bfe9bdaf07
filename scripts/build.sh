#!/usr/bin/env bash
# Configures and builds mini-gpt (Release) into build/.
#   bash scripts/build.sh [--target T ...] [CMAKE_ARG ...]
# --target builds only T (repeatable; default: everything, tests included); other
# arguments go to cmake's configure step. The whole log is kept in build.log; on a
# terminal one progress line shows the percent done, and on failure the errors (and the
# lines around them) are shown.
set -euo pipefail
cd "$(dirname "$0")/.."

targets=()
configure_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --target)
      [ $# -ge 2 ] || { echo "build.sh: error: --target needs a target name" >&2; exit 2; }
      targets+=(--target "$2"); shift 2 ;;
    *) configure_args+=("$1"); shift ;;
  esac
done

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "${configure_args[@]}" > build.log 2>&1 || { cat build.log; exit 1; }

# make prints "[ 42%] Building ..."; on a terminal the latest percent is redrawn in place.
show_progress() {
  local line percent=""
  while IFS= read -r line; do
    printf '%s\n' "$line" >> build.log
    if [ -t 1 ] && [[ "$line" =~ ^\[\ *([0-9]+)%\] ]] && [ "${BASH_REMATCH[1]}" != "$percent" ]; then
      percent=${BASH_REMATCH[1]}
      printf '\rbuild: %3s%% done' "$percent"
    fi
  done
  if [ -n "$percent" ]; then printf '\r\033[K'; fi
}

if ! cmake --build build -j"$(nproc)" "${targets[@]}" 2>&1 | show_progress; then
  grep -n -B2 -A6 -E 'error:|\*\*\*' build.log | head -n 120
  echo "build.sh: the build failed; the whole log is build.log"
  exit 1
fi
tail -n 1 build.log
