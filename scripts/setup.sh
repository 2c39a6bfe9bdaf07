#!/usr/bin/env bash
# Installs what mini-gpt needs from Debian 12's packages, and does nothing when everything
# is already present. Run as root (or with sudo available).
#   bash scripts/setup.sh           what building and running mini-gpt need (the main job)
#   bash scripts/setup.sh --tests   that, and what only the tests need (scripts/test.sh)
#   bash scripts/setup.sh --list [--tests]   print the packages, one a line
set -euo pipefail

# Building and running: the main job installs these and nothing else.
run_packages=(
  g++ cmake make            # toolchain
  libdnnl-dev               # oneDNN 2.6 (matmul, layer norm, eltwise, softmax)
  ocl-icd-opencl-dev        # oneDNN's CMake config calls find_package(OpenCL REQUIRED); libdnnl-dev only recommends it
  libopenblas-openmp-dev    # OpenBLAS built on OpenMP: one thread pool shared with oneDNN
  libcli11-dev              # command line
  nlohmann-json3-dev        # configs, checkpoint headers, metrics
  python3                   # the corpus generator and the main job's helpers (standard library only)
)
# Only the tests: the suite, fuzzing, the emulated CPU, the browser and its fonts, the
# kernel micro-benchmarks, data-parallel training's test over MPI.
test_packages=(
  libgtest-dev              # the test suite
  libbenchmark-dev          # kernel micro-benchmarks (compiled by --full so they cannot rot)
  clang libclang-rt-14-dev  # fuzzing: clang++ and libFuzzer (libclang_rt.fuzzer) with its ASan/UBSan
  libomp-dev                # clang++'s OpenMP runtime, for the fuzz build (g++'s ASan build uses libgomp)
  libopenmpi-dev openmpi-bin  # data-parallel training: `mpirun -np N mini-gpt train` (CMake option MINI_GPT_MPI)
  qemu-user                 # the test that runs the baseline build on an emulated pre-AVX CPU (Nehalem)
  chromium chromium-driver python3-selenium  # the head explorer's test in a real (headless) browser
  fonts-noto-cjk            # CJK glyphs for that browser (and the README's screenshot)
)

list=0
tests=0
for arg in "$@"; do
  case "$arg" in
    --list) list=1 ;;
    --tests) tests=1 ;;
    *) echo "setup.sh: error: unknown option '$arg' (usage: bash scripts/setup.sh [--tests] [--list])" >&2; exit 2 ;;
  esac
done
packages=("${run_packages[@]}")
[ $tests -eq 0 ] || packages+=("${test_packages[@]}")

# --list: print the packages, one a line (scripts/check_bare_setup.sh purges exactly these).
if [ $list -eq 1 ]; then
  printf '%s\n' "${packages[@]}"
  exit 0
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

what="building and running"
[ $tests -eq 0 ] || what="building, running and testing"
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all packages for $what present"
  exit 0
fi

echo "setup: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
