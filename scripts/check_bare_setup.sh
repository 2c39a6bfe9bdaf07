#!/usr/bin/env bash
# Proves that scripts/setup.sh installs everything the build needs, the hard way: purges
# every package setup.sh installs together with what they pulled in, runs setup.sh on the
# stripped machine, then configures and builds a fresh clone of this repository.
#
# It CHANGES THE MACHINE (removes compilers and libraries, then installs them again), so it
# is never part of CI or of scripts/test.sh; run it by hand, as root, when set-up changes:
#   bash scripts/check_bare_setup.sh          the main job's set-up (setup.sh), then the mini-gpt build
#   bash scripts/check_bare_setup.sh --tests  the tests' set-up (setup.sh --tests), then the whole build
# Either way it purges both sets first, and says how many packages the set-up installed,
# their installed size and how long it took.
# python3 is kept: the base image has it, and removing Debian's python3 would take every
# python3-* package of the machine with it. Everything else setup.sh lists is purged.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
setup_args=()
build_args=(--target mini-gpt -DMINI_GPT_TESTS=OFF)
case "${1:-}" in
  "") ;;
  --tests) setup_args=(--tests); build_args=(-DMINI_GPT_TESTS=ON -DMINI_GPT_MPI=ON) ;;
  *) echo "check_bare_setup: error: unknown option '$1' (usage: bash scripts/check_bare_setup.sh [--tests])" >&2; exit 2 ;;
esac
[ "$(id -u)" -eq 0 ] || { echo "check_bare_setup: run as root (it purges and installs packages)"; exit 2; }
start=$SECONDS

mapfile -t listed < <(bash scripts/setup.sh --list --tests)
purge=()
for p in "${listed[@]}"; do
  [ "$p" = python3 ] && continue
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" && purge+=("$p")
done
echo "check_bare_setup: ${#listed[@]} packages in setup.sh; purging the ${#purge[@]} installed (all but python3):"
echo "  ${purge[*]}"
export DEBIAN_FRONTEND=noninteractive
before=$(dpkg-query -W -f='${Status}\n' | grep -c "install ok installed")
if [ ${#purge[@]} -gt 0 ]; then apt-get purge -y -qq --auto-remove "${purge[@]}" > /tmp/check_bare_purge.log 2>&1; fi
# What oneDNN's CMake config needs (OpenCL) came in as a dependency, not by name: the
# same for the rest of what the purged packages pulled in.
apt-get autoremove -y -qq --purge >> /tmp/check_bare_purge.log 2>&1
after=$(dpkg-query -W -f='${Status}\n' | grep -c "install ok installed")
echo "check_bare_setup: purged $((before - after)) packages in all (log: /tmp/check_bare_purge.log)"
left=()
for p in "${purge[@]}" ocl-icd-opencl-dev libdnnl2 libopenblas0-openmp; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" && left+=("$p")
done
[ ${#left[@]} -eq 0 ] || { echo "check_bare_setup: still installed after the purge: ${left[*]}"; exit 1; }
for f in /usr/lib/x86_64-linux-gnu/cmake/dnnl/dnnl-config.cmake /usr/include/CL/cl.h /usr/bin/g++; do
  [ ! -e "$f" ] || { echo "check_bare_setup: $f is still there after the purge"; exit 1; }
done
echo "check_bare_setup: none of them is left (no g++, no oneDNN, no OpenCL headers)"

installed_kib() { dpkg-query -W -f='${Status}\t${Installed-Size}\n' | awk -F'\t' '$1 == "install ok installed" { s += $2 } END { print s + 0 }'; }
count_before=$(dpkg-query -W -f='${Status}\n' | grep -c "install ok installed")
kib_before=$(installed_kib)
setup_start=$SECONDS
echo "check_bare_setup: bash scripts/setup.sh ${setup_args[*]}"
bash scripts/setup.sh "${setup_args[@]}" | tail -n 1
count_after=$(dpkg-query -W -f='${Status}\n' | grep -c "install ok installed")
kib_after=$(installed_kib)
echo "check_bare_setup: setup.sh ${setup_args[*]} installed $((count_after - count_before)) packages," \
  "$(( (kib_after - kib_before) / 1024 )) MiB installed size, in $((SECONDS - setup_start)) s"

clone=$(mktemp -d)/mini-gpt
git clone -q "$repo" "$clone"
echo "check_bare_setup: fresh clone at $clone (HEAD $(git -C "$clone" rev-parse --short HEAD)); bash scripts/build.sh ${build_args[*]}"
(cd "$clone" && bash scripts/build.sh "${build_args[@]}")
"$clone/build/mini-gpt" --version
echo "check_bare_setup: set-up and build from a fresh clone passed on a purged machine in $((SECONDS - start)) s"
