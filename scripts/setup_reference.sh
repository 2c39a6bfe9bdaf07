#!/usr/bin/env bash
# Installs what scripts/torch_reference.py needs (Debian 12's PyTorch and numpy for
# /usr/bin/python3), and requests, which nanoGPT's data/shakespeare_char/prepare.py imports
# (`benchmark.py --nanogpt`); does nothing when all are present. Only the benchmark and
# the regeneration of tests/fixtures/golden_* need them: the test suite does not.
# Run as root (or with sudo available).
set -euo pipefail

packages=(python3-torch python3-numpy python3-requests)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup_reference: all packages present"
  exit 0
fi

echo "setup_reference: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
