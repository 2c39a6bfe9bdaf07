#!/usr/bin/env bash
# The objects of kernels/cpu/, compiled with -march=x86-64-v3 and -v4, must define no
# symbol but their own variant's kernels (mg::CpuKernels<V>::...). Any other global or
# weak definition (an inline function or template instance emitted out of line) could be
# the copy the linker keeps for every caller, and then a baseline caller on a CPU without
# AVX2 would die with an illegal instruction.
#   bash tests/cpu_objects_test.sh "OBJ;OBJ;..." [...]   (one list per variant, from CMake)
set -euo pipefail
status=0
checked=0
for list in "$@"; do
  IFS=';' read -r -a objects <<< "$list"
  for object in "${objects[@]}"; do
    checked=$((checked + 1))
    # Defined symbols with external linkage: upper-case type letters, plus u/V/W (unique, weak).
    # DW.ref.__gxx_personality_v0 is data, not code: the pointer to the C++ exception
    # personality routine that an object with unwinding cleanups carries (the sanitizer
    # build adds some), the same in every object, so which copy the linker keeps is moot.
    bad=$(nm -C --defined-only "$object" | awk '$2 ~ /^[A-Zuvw]$/ { $1 = ""; $2 = ""; print }' |
          grep -v -e '^  mg::CpuKernels<(mg::CpuVariant)[0-9]>::' -e '^  DW\.ref\.__gxx_personality_v0$' || true)
    if [ -n "$bad" ]; then
      echo "cpu_objects_test: $object defines symbols outside its variant's kernels:"
      echo "$bad" | sed 's/^/    /'
      status=1
    fi
  done
done
[ "$checked" -gt 0 ] || { echo "cpu_objects_test: no object files given"; exit 1; }
[ "$status" -eq 0 ] && echo "cpu_objects_test: $checked objects, each defines only its own variant's kernels"
exit "$status"
