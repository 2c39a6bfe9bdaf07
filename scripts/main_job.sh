#!/usr/bin/env bash
# The main job: install, build, train the default config, then sample from the trained
# model and show what its attention heads read on a question from the corpus.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
./build/mini-gpt train --config configs/default.json
./build/mini-gpt eval --checkpoint runs/default/best.safetensors --text-file data/corpus.txt
