#!/usr/bin/env bash
# Installs what mini-gpt needs to build and test, from Debian 12's packages, and does
# nothing when everything is already present. Run as root (or with sudo available).
set -euo pipefail

packages=(
  g++ cmake make            # toolchain
  libdnnl-dev               # oneDNN 2.6 (matmul, layer norm, eltwise, softmax)
  ocl-icd-opencl-dev        # oneDNN's CMake config calls find_package(OpenCL REQUIRED); libdnnl-dev only recommends it
  libopenblas-openmp-dev    # OpenBLAS built on OpenMP: one thread pool shared with oneDNN
  libcli11-dev              # command line
  nlohmann-json3-dev        # configs, checkpoint headers, metrics
  libgtest-dev              # tests
  libbenchmark-dev          # kernel micro-benchmarks
  python3                   # the corpus generator (standard library only)
  clang libclang-rt-14-dev  # fuzzing: clang++ and libFuzzer (libclang_rt.fuzzer) with its ASan/UBSan
  libomp-dev                # clang++'s OpenMP runtime, for the fuzz build (g++'s ASan build uses libgomp)
  libopenmpi-dev openmpi-bin  # data-parallel training: `mpirun -np N mini-gpt train` (CMake option MINI_GPT_MPI)
  qemu-user                 # the test that runs the baseline build on an emulated pre-AVX CPU (Nehalem)
  chromium chromium-driver python3-selenium  # the head explorer's test in a real (headless) browser
  fonts-noto-cjk            # CJK glyphs for that browser (and the README's screenshot)
)

# --list: print the packages, one a line (scripts/check_bare_setup.sh purges exactly these).
if [ "${1:-}" = "--list" ]; then
  printf '%s\n' "${packages[@]}"
  exit 0
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all packages present"
  exit 0
fi

echo "setup: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
