#!/usr/bin/env bash
# The main job: install, build, train configs/default.json, then sample from the trained
# model and show what its attention heads read at the answer of a probe question.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh

run=runs/default
if [ -e "$run" ]; then  # keep an earlier run: mini-gpt never trains over one
  kept="$run.$(date +%Y%m%d-%H%M%S)"
  mv "$run" "$kept"
  echo "moved the earlier $run to $kept"
fi
./build/mini-gpt train --config configs/default.json --out "$run"

# A held-out question (data/probe.jsonl): whose are the grey shoes? The answer is 马.
question="红铅笔是小陈的。灰鞋子是小马的。黄雨伞是小林的。灰鞋子是谁的？灰鞋子是小"

echo; echo "== sample (greedy) from: $question"
./build/mini-gpt sample --checkpoint "$run/best.safetensors" --prompt "$question" --temperature 0 --max-new-tokens 40

echo; echo "== sample (temperature 0.8, seed 1)"
./build/mini-gpt sample --checkpoint "$run/best.safetensors" --temperature 0.8 --seed 1 --max-new-tokens 120

echo; echo "== inspect-heads: what each head reads at the last symbol (the answer position)"
last=$(( $(printf '%s' "$question" | python3 -c 'import sys; print(len(sys.stdin.read()))') - 1 ))
./build/mini-gpt inspect-heads --checkpoint "$run/best.safetensors" --text "$question" --position "$last" \
  --svg "$run/heads.svg"
echo "wrote $run/heads.svg (open it in a browser)"

echo; echo "== eval on the validation tail, and the probe per question kind"
python3 -c "import sys; sys.stdout.write(open('data/corpus.txt', encoding='utf-8').read()[-50000:])" > "$run/val_tail.txt"
./build/mini-gpt eval --checkpoint "$run/best.safetensors" --text-file "$run/val_tail.txt" --probe data/probe.jsonl
