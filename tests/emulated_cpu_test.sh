#!/usr/bin/env bash
# mini-gpt on a CPU without AVX: the build targets baseline x86-64 and picks its kernels
# at run time, so under qemu-user emulating a Nehalem (SSE4.2, no AVX) it must train and
# sample with the baseline kernels instead of dying with an illegal instruction.
#   bash tests/emulated_cpu_test.sh MINI_GPT_BINARY SOURCE_DIR
set -euo pipefail
binary=$1
source_dir=$2
qemu=$(command -v qemu-x86_64 || true)
[ -n "$qemu" ] || { echo "emulated_cpu_test: qemu-x86_64 not found (scripts/setup.sh installs qemu-user)"; exit 1; }
# OpenBLAS chooses its own kernels from cpuid, and under qemu-user it takes the emulated
# Nehalem for a Haswell (OPENBLAS_VERBOSE=2 prints "Core: Haswell") and runs AVX2 code,
# which dies here; a real Nehalem gets its Nehalem kernels, so that is what it is told.
# (train reaches OpenBLAS at its end: heads.html's OV copy scores use LAPACK's dgeev.)
run() { OPENBLAS_CORETYPE=Nehalem "$qemu" -cpu Nehalem "$binary" "$@"; }

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

version=$(run --version)
echo "$version"
grep -q 'kernels: baseline (this CPU runs baseline;' <<< "$version" ||
  { echo "emulated_cpu_test: expected the baseline kernels on a Nehalem"; exit 1; }

run train --config "$source_dir/configs/tiny.json" --max-steps 3 --out "$dir/run" --threads 1 > "$dir/train.log" 2>&1 ||
  { cat "$dir/train.log"; echo "emulated_cpu_test: train failed under qemu -cpu Nehalem"; exit 1; }
tail -n 3 "$dir/train.log"
grep -q '^trained 3 steps' "$dir/train.log" || { echo "emulated_cpu_test: train did not report 3 steps"; exit 1; }
grep -q 'kernels: baseline' "$dir/train.log" || { echo "emulated_cpu_test: train's first line does not name the baseline kernels"; exit 1; }

text=$(run sample --checkpoint "$dir/run/latest.safetensors" --prompt "小丁" --max-new-tokens 20 --seed 1 --threads 1)
echo "sample: $text"
# 2 prompt symbols and 20 new ones (newlines included).
[ "$(printf '%s' "$text" | wc -m)" -ge 22 ] || { echo "emulated_cpu_test: sample printed too little"; exit 1; }
echo "emulated_cpu_test: trained 3 steps and sampled 20 symbols on an emulated Nehalem"
