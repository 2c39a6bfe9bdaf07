#!/usr/bin/env bash
# The main job: install, build mini-gpt, train configs/default.json, then sample from the
# trained model, show what its attention heads read at the answer of a probe question, and
# score it per question kind. Each stage ends with one line saying how long it took.
set -euo pipefail

# It takes no argument: --help prints this and nothing starts; anything else is refused
# before any stage runs (one line, exit 2).
usage="usage: bash scripts/main_job.sh   (no options: install, build, train configs/default.json into runs/default, sample, inspect the heads, explain, evaluate)"
if [ $# -gt 0 ]; then
  case "$1" in
    -h|--help) echo "$usage"; exit 0 ;;
    *) printf 'main_job: error: unknown argument "%s": the main job takes none (--help)\n' "$(printf '%s' "$1" | head -c 200 | tr -c '[:print:]' '?')" >&2; exit 2 ;;
  esac
fi
cd "$(dirname "$0")/.."

start=$SECONDS
stage_start=$SECONDS
stage=0
stages=7
duration() { local s=$1; if [ "$s" -ge 60 ]; then printf '%dm%02ds' $((s / 60)) $((s % 60)); else printf '%ds' "$s"; fi; }
begin() { stage=$((stage + 1)); stage_start=$SECONDS; echo; echo "main_job: [$stage/$stages] $1 ..."; }
done_stage() { echo "main_job: [$stage/$stages] $1 done in $(duration $((SECONDS - stage_start))) (total $(duration $((SECONDS - start))))"; }

begin "set-up check (Debian packages for building and running; the tests' own come with scripts/test.sh)"
bash scripts/setup.sh
done_stage "set-up check"

begin "build (mini-gpt only; the whole log is build.log)"
# Configured without the tests (GoogleTest is the tests' package; scripts/test.sh names them
# on again). MPI is on where it is installed, as always: the main job installs none.
bash scripts/build.sh --target mini-gpt -DMINI_GPT_TESTS=OFF
done_stage "build"

run=runs/default
if [ -e "$run" ]; then  # keep an earlier run: mini-gpt never trains over one
  kept="$run.$(date +%Y%m%d-%H%M%S)"
  mv "$run" "$kept"
  echo "moved the earlier $run to $kept"
fi
begin "train configs/default.json into $run"
./build/mini-gpt train --config configs/default.json --out "$run"
done_stage "train"

# A held-out question (data/probe.jsonl): whose are the grey shoes? The answer is 马.
question="红铅笔是小陈的。灰鞋子是小马的。黄雨伞是小林的。灰鞋子是谁的？灰鞋子是小"

begin "sample"
echo "== greedy, from: $question  (the answer is 马)"
./build/mini-gpt sample --checkpoint "$run/best.safetensors" --prompt "$question" --temperature 0 --max-new-tokens 40
echo "== temperature 0.8, seed 1"
./build/mini-gpt sample --checkpoint "$run/best.safetensors" --temperature 0.8 --seed 1 --max-new-tokens 120
done_stage "sample"

begin "inspect-heads: what each head reads at the last symbol (the answer position)"
last=$(( $(printf '%s' "$question" | python3 -c 'import sys; print(len(sys.stdin.read()))') - 1 ))
./build/mini-gpt inspect-heads --checkpoint "$run/best.safetensors" --text "$question" --position "$last" \
  --svg "$run/heads.svg"
echo "wrote $run/heads.svg"
done_stage "inspect-heads"

begin "inspect-heads --explain: the chain this run formed for each kind, with its evidence"
./build/mini-gpt inspect-heads --checkpoint "$run/best.safetensors" --probe data/probe.jsonl --explain
done_stage "explain"

begin "eval: the validation tail, and the probe per question kind"
python3 -c "import sys; sys.stdout.write(open('data/corpus.txt', encoding='utf-8').read()[-50000:])" > "$run/val_tail.txt"
./build/mini-gpt eval --checkpoint "$run/best.safetensors" --text-file "$run/val_tail.txt" --probe data/probe.jsonl
done_stage "eval"

echo
echo "main_job: all done in $(duration $((SECONDS - start)))"
if [ -f "$run/heads.html" ]; then
  echo "the head explorer: $PWD/$run/heads.html"
  echo "open it with: python3 -m webbrowser file://$PWD/$run/heads.html"
fi
echo "live, on any text you type: ./build/mini-gpt serve --checkpoint $run/best.safetensors (then open http://127.0.0.1:8000/)"
