#!/usr/bin/env bash
# Fetches tinyshakespeare (the text nanoGPT's shakespeare_char numbers use) into
# data/tinyshakespeare.txt for configs/shakespeare.json, and checks its md5.
# It is never committed; pass another copy with --set data.path=FILE instead.
set -euo pipefail
cd "$(dirname "$0")/.."
url="https://raw.githubusercontent.com/karpathy/char-rnn/master/data/tinyshakespeare/input.txt"
want="6fb458f1232090904fb40fe944165e91"
out="data/tinyshakespeare.txt"
if [ ! -f "$out" ]; then
  tmp="$out.part"
  curl -fsSL "$url" -o "$tmp" || wget -q "$url" -O "$tmp"
  mv "$tmp" "$out"
fi
got=$(md5sum "$out" | cut -d' ' -f1)
if [ "$got" != "$want" ]; then
  echo "fetch_shakespeare: error: $out has md5 $got, expected $want" >&2
  exit 1
fi
echo "$out ok"
