#!/usr/bin/env bash
# Hostile use (issue 19): mini-gpt run on crafted inputs, one class of abuse after another:
# run directories trained over, outputs that would clobber what is at the path, inputs
# that block or never end (FIFOs, /dev/zero, huge counts), JSON nested 60,000 deep,
# failed writes to stdout, overrides whose order used to matter, seeds and strings out of
# range (NUL, invalid UTF-8), SIGTERM, non-finite or malformed checkpoints.
# Every case runs under a timeout and is checked for: the expected exit status; for a
# refusal, exactly one "mini-gpt: error: ..." line on stderr (the last, besides train's
# banner) containing an expected phrase; no crash (no signal exit but the intended ones);
# no hang (the timeout); and no clobbered file (type, inode, size and checksum of every
# victim file before and after the case).
#
#   bash tests/hostile_test.sh BUILD/mini-gpt     (ctest runs it as hostile_test)
set -uo pipefail

binary=${1:?usage: hostile_test.sh PATH/TO/mini-gpt}
source_dir=$(cd "$(dirname "$0")/.." && pwd)
timeout_s=${HOSTILE_TEST_TIMEOUT:-60}
work=$(mktemp -d "${TMPDIR:-/tmp}/mini-gpt-hostile.XXXXXX")
background=""
cleanup() {
  if [[ -n $background ]]; then kill -9 "$background" 2>/dev/null; fi
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work" || exit 1

cases=0 refused=0 crashes=0 hangs=0 clobbered=0 failures=0
note_failure() {
  failures=$((failures + 1))
  echo "hostile_test: FAILED: case $cases ($label): $*" >&2
}

# Files no case may change: their type, inode and size (one stat) and, for regular files,
# their checksum (one sha256sum), compared before and after every case.
victims=()
victims_before=""
snapshot() {
  local regular=() v
  for v in "${victims[@]}"; do [[ -f $v && ! -L $v ]] && regular+=("$v"); done
  stat -c '%n %F %i %s' -- "${victims[@]}" 2>&1
  sha256sum -- "${regular[@]}" 2>&1
}
record_victims() { victims_before=$(snapshot); }
check_victims() {
  local now
  now=$(snapshot)
  if [[ $now != "$victims_before" ]]; then
    clobbered=$((clobbered + 1))
    note_failure "victims changed: $(diff <(echo "$victims_before") <(echo "$now") | grep '^[<>]' | head -n 4 | tr '\n' ' ')"
  fi
}

# run_case LABEL STATUS PHRASE [STDOUT] -- ARGS...: runs mini-gpt ARGS with stdout to STDOUT
# ("file" by default, "full" for /dev/full, "closed" for a closed descriptor).
run_case() {
  label=$1 expected=$2 phrase=$3 out_mode=file
  shift 3
  if [[ $1 != -- ]]; then out_mode=$1; shift; fi
  shift  # --
  cases=$((cases + 1))
  record_victims
  local status started=$EPOCHREALTIME
  case $out_mode in
    full) timeout -s KILL "$timeout_s" "$binary" "$@" < /dev/null > /dev/full 2> err.txt; status=$? ;;
    closed) timeout -s KILL "$timeout_s" "$binary" "$@" < /dev/null >&- 2> err.txt; status=$? ;;
    *) timeout -s KILL "$timeout_s" "$binary" "$@" < /dev/null > out.txt 2> err.txt; status=$? ;;
  esac
  judge "$status" "$expected" "$phrase"
  check_victims
  if [[ -n ${HOSTILE_TEST_TIMES:-} ]]; then
    echo "case $cases ($label): $(( (${EPOCHREALTIME/./} - ${started/./}) / 1000 )) ms" >&2
  fi
}

# judge STATUS EXPECTED PHRASE: the verdict on a finished case (stderr in err.txt).
judge() {
  local status=$1 expected=$2 phrase=$3
  if (( status == 137 )); then
    hangs=$((hangs + 1)); note_failure "no exit within ${timeout_s} s (killed)"; return
  fi
  if (( status > 128 && status != 130 && status != 143 )); then
    crashes=$((crashes + 1)); note_failure "killed by signal $((status - 128)): $(tail -c 300 err.txt)"; return
  fi
  if (( status != expected )); then
    note_failure "exit status $status, expected $expected: $(tail -n 2 err.txt | cut -c1-300)"; return
  fi
  (( expected == 1 || expected == 2 )) || return 0
  # A refusal: one error line, the last one, naming what is wrong; the only other lines
  # allowed are train's banner ("mini-gpt VERSION; kernels: ...") and progress ("step N/M ...").
  local errors others last
  errors=$(grep -c '^mini-gpt: error: ' err.txt)
  others=$(grep -v '^mini-gpt: error: ' err.txt | grep -v '^step [0-9]*/[0-9]* ' | grep -vc '^mini-gpt [^:]*; kernels: ')
  last=$(tail -n 1 err.txt)
  if (( errors != 1 || others != 0 )) || [[ $last != "mini-gpt: error: "* ]]; then
    note_failure "stderr is not one error line: $(head -c 400 err.txt)"; return
  fi
  if [[ $last != *"$phrase"* ]]; then
    note_failure "the error does not say \"$phrase\": $(cut -c1-300 <<< "$last")"; return
  fi
  refused=$((refused + 1))
}

config=$source_dir/configs/tiny.json
corpus=$source_dir/data/corpus.txt
train=(train --config "$config" --threads 1)

# --- Set-up: a short run A, a copy of it as the victim of every case, inputs.
"$binary" "${train[@]}" --out runs/A --max-steps 20 > /dev/null 2>&1 || { echo "hostile_test: set-up run failed" >&2; exit 1; }
cp -r runs/A runs/victim
ckpt=runs/A/latest.safetensors
mkfifo fifo.svg fifo.json fifo.txt fifo.safetensors
echo "mine" > target.txt
ln -s target.txt link.svg
mkdir folder.svg
head -n 40 "$corpus" > text.txt
for f in runs/victim/*; do victims+=("$f"); done
victims+=(target.txt link.svg fifo.svg fifo.json fifo.txt folder.svg /dev/null "$ckpt")

# --- 1. A run is never trained over.
run_case "resume into another run's folder" 2 "is not the folder of --resume" -- \
  "${train[@]}" --out runs/victim --resume "$ckpt" --max-steps 30
run_case "fresh run into a run's folder" 2 "already holds a run" -- "${train[@]}" --out runs/victim --max-steps 30
mkdir -p runs/confonly && cp runs/A/config.json runs/confonly/ && victims+=(runs/confonly/config.json)
run_case "fresh run into a folder with only config.json" 2 "config.json" -- "${train[@]}" --out runs/confonly --max-steps 2
run_case "resume at its own step" 2 "nothing to train" -- "${train[@]}" --resume "$ckpt" --max-steps 20
run_case "resume below its own step" 2 "pass a --max-steps above 20" -- "${train[@]}" --resume "$ckpt" --max-steps 5
run_case "--out empty" 2 "train.out_dir" -- "${train[@]}" --out "" --max-steps 2
run_case "--out names a regular file" 1 "cannot create run directory" -- "${train[@]}" --out target.txt/run --max-steps 2
run_case "resume into a new folder (a branch)" 0 "" -- "${train[@]}" --resume "$ckpt" --out runs/branch --max-steps 22
cp -r runs/A runs/own
run_case "resume without --out stays in its folder" 0 "" -- "${train[@]}" --resume runs/own/latest.safetensors --max-steps 22
grep -q '"step":22' runs/own/metrics.jsonl || note_failure "the resumed run did not write into its checkpoint's folder"
[[ ! -e runs/default ]] || note_failure "a resume without --out wrote the config's out_dir runs/default"
# Two writers: the second is refused at once while the first holds the lock; once the
# first is SIGKILLed, the lock is gone with it and the run resumes.
"$binary" "${train[@]}" --out runs/locked --max-steps 100000 --set train.checkpoint_interval=5 > /dev/null 2>&1 &
background=$!
for _ in $(seq 600); do [[ -e runs/locked/latest.safetensors ]] && break; sleep 0.05; done
run_case "second writer of a run directory" 2 "is in use by another mini-gpt process (pid $background)" -- \
  "${train[@]}" --resume runs/locked/latest.safetensors --max-steps 100000
kill -9 "$background"; wait "$background" 2>/dev/null; background=""
checkpoint_step() { head -c 65536 "$1" | grep -ao '"step":"[0-9]*"' | tr -dc 0-9; }
run_case "resume after the lock holder was killed" 0 "" -- \
  "${train[@]}" --resume runs/locked/latest.safetensors --max-steps $(( $(checkpoint_step runs/locked/latest.safetensors) + 5 ))

# --- 2. Outputs never clobber.
# (The text: the corpus's first 10 symbols, so that they are in the vocabulary.)
inspect=(inspect-heads --checkpoint "$ckpt" --text "$(python3 -c 'import sys; print(open(sys.argv[1], encoding="utf-8").read().replace("\n", "")[:10])' "$corpus")")
run_case "--svg at a FIFO" 2 "is a FIFO" -- "${inspect[@]}" --svg fifo.svg
run_case "--svg at a symlink" 2 "is a symbolic link" -- "${inspect[@]}" --svg link.svg
run_case "--svg at a folder" 2 "is a directory" -- "${inspect[@]}" --svg folder.svg
run_case "--svg at /dev/null" 2 "is a character device" -- "${inspect[@]}" --svg /dev/null
run_case "--svg empty" 2 "output path is empty" -- "${inspect[@]}" --svg ""
run_case "--svg names a folder" 2 "names a folder" -- "${inspect[@]}" --svg "runs/"
run_case "--svg in a missing folder" 1 "cannot write" -- "${inspect[@]}" --svg missing/x.svg
run_case "--svg at a regular file" 0 "" -- "${inspect[@]}" --svg new.svg
ln -s ../../target.txt runs/victim/metrics-link && victims+=(runs/victim/metrics-link)
mkdir -p runs/planted && cp runs/A/latest.safetensors runs/planted/ && ln -sf ../../target.txt runs/planted/metrics.jsonl
run_case "metrics.jsonl planted as a symlink" 2 "is a symbolic link" -- \
  "${train[@]}" --resume runs/planted/latest.safetensors --max-steps 40

# --- 3. Bounded inputs: nothing blocks, nothing is read without bound.
truncate -s 65M big.txt
python3 -c "print('{' + '\"a\":' * 0 + '[' * 60000 + ']' * 60000 + '}')" > deep_inner.json
python3 -c "print('[' * 60000 + ']' * 60000)" > deep.json
run_case "config is a FIFO" 2 "is a FIFO" -- train --config fifo.json
run_case "config is /dev/zero" 2 "character device" -- train --config /dev/zero
run_case "config is a folder" 2 "directory" -- train --config runs
run_case "config nested 60000 deep" 2 "nested deeper than 64" -- train --config deep.json
run_case "config section nested deep" 2 "nested deeper than 64" -- train --config deep_inner.json
run_case "corpus is a FIFO" 2 "is a FIFO" -- "${train[@]}" --out runs/x --set data.path="$work/fifo.txt"
run_case "corpus is /dev/zero" 2 "character device" -- "${train[@]}" --out runs/x --set data.path=/dev/zero
run_case "probe set is a FIFO" 2 "is a FIFO" -- "${train[@]}" --out runs/x --set data.probe_path="$work/fifo.txt"
run_case "checkpoint is a FIFO (sample)" 2 "not a regular file" -- sample --checkpoint fifo.safetensors
run_case "checkpoint is a FIFO (resume)" 2 "not a regular file" -- "${train[@]}" --resume fifo.safetensors --out runs/x
run_case "checkpoint is /dev/zero" 2 "not a regular file" -- eval --checkpoint /dev/zero --text-file text.txt
run_case "--prompt-file /dev/zero" 2 "character device" -- sample --checkpoint "$ckpt" --prompt-file /dev/zero
run_case "--prompt-file FIFO" 2 "is a FIFO" -- sample --checkpoint "$ckpt" --prompt-file fifo.txt
run_case "--prompt-file over 64 MB" 2 "more than the limit" -- sample --checkpoint "$ckpt" --prompt-file big.txt
run_case "--prompt-file empty path" 2 "path is empty" -- sample --checkpoint "$ckpt" --prompt-file ""
run_case "--text-file /dev/zero" 2 "character device" -- eval --checkpoint "$ckpt" --text-file /dev/zero
run_case "--text-file FIFO" 2 "is a FIFO" -- eval --checkpoint "$ckpt" --text-file fifo.txt
run_case "--text-file over 64 MB" 2 "more than the limit" -- eval --checkpoint "$ckpt" --text-file big.txt
run_case "inspect --config FIFO" 2 "is a FIFO" -- inspect-heads --config fifo.json --text "x"
python3 -c "print('{\"prompt\": ' + '[' * 60000 + ']' * 60000 + '}')" > deep_probe.jsonl
run_case "probe line nested deep" 2 "deep_probe.jsonl:1: invalid JSON at line 1 column 75: nested deeper than 64" -- \
  "${train[@]}" --out runs/x --set data.probe_path="$work/deep_probe.jsonl"
run_case "--set value nested deep" 2 "train.lr must be a number" -- \
  "${train[@]}" --set "train.lr=$(python3 -c "print('[' * 60000)")"
run_case "train.threads 100000" 2 "train.threads must be in [0, 256]" -- "${train[@]}" --set train.threads=100000
run_case "train.threads 2^32" 2 "train.threads must be in [0, 256]" -- "${train[@]}" --set train.threads=4294967296
run_case "train.threads 1e18" 2 "train.threads must be in [0, 256]" -- "${train[@]}" --set train.threads=1e18
run_case "train.threads -1" 2 "train.threads must be in [0, 256]" -- "${train[@]}" --set train.threads=-1
run_case "--threads 2^32" 2 "--threads: must be an integer in [0, 256]" -- "${train[@]}" --threads 4294967296
run_case "--threads 257 (sample)" 2 "--threads: must be an integer in [0, 256]" -- sample --checkpoint "$ckpt" --threads 257
# More threads than cores under an address-space limit (`ulimit -v`): OpenBLAS reserves
# 128 MB per thread it is told of and used to spin forever when it could not. (Not under
# ASan, whose shadow memory needs more address space than any such limit.)
if [[ -z ${ASAN_OPTIONS:-} ]]; then
  ulimit -S -v 2000000
  run_case "--threads 16 under ulimit -v 2 GB" 0 "" -- train --config "$config" --threads 16 --max-steps 3 --out runs/t16
  ulimit -S -v unlimited
fi
run_case "train.eval_batches 1e12" 2 "train.eval_batches must be <=" -- "${train[@]}" --set train.eval_batches=1e12
run_case "train.eval_batches past the data" 2 "at most" -- "${train[@]}" --out runs/x --set train.eval_batches=1000000
run_case "train.batch_size 2^40" 2 "train.batch_size must be <=" -- "${train[@]}" --set train.batch_size=1099511627776
run_case "train.max_steps 1e15" 2 "train.max_steps must be <=" -- "${train[@]}" --set train.max_steps=1e15

# --- 4. Every write checked, stdout included.
run_case "sample to /dev/full" 1 "cannot write to standard output" full -- sample --checkpoint "$ckpt" --max-new-tokens 20 --seed 1
run_case "sample to a closed stdout" 1 "cannot write to standard output" closed -- sample --checkpoint "$ckpt" --max-new-tokens 20 --seed 1
run_case "eval to /dev/full" 1 "cannot write to standard output" full -- eval --checkpoint "$ckpt" --text-file text.txt
run_case "eval to a closed stdout" 1 "cannot write to standard output" closed -- eval --checkpoint "$ckpt" --text-file text.txt
run_case "inspect-heads to /dev/full" 1 "cannot write to standard output" full -- "${inspect[@]}"
run_case "inspect-heads to a closed stdout" 1 "cannot write to standard output" closed -- "${inspect[@]}" --format json
run_case "train to /dev/full" 1 "cannot write to standard output" full -- "${train[@]}" --out runs/full --max-steps 2
run_case "train to a closed stdout" 1 "cannot write to standard output" closed -- "${train[@]}" --out runs/closed --max-steps 2
run_case "--help to /dev/full" 1 "cannot write to standard output" full -- --help

# --- 5. The whole resolved config is validated once, after every --set.
for order in "model.n_embd=18 model.n_head=6 model.position=learned" "model.position=learned model.n_head=6 model.n_embd=18"; do
  sets=(); for s in $order; do sets+=(--set "$s"); done
  run_case "order: $order" 0 "" -- "${train[@]}" --out "runs/order$cases" --max-steps 1 "${sets[@]}"
done
for order in "train.lr=1e-5 train.min_lr=1e-6" "train.min_lr=1e-6 train.lr=1e-5"; do
  sets=(); for s in $order; do sets+=(--set "$s"); done
  run_case "order: $order" 0 "" -- "${train[@]}" --out "runs/order$cases" --max-steps 1 "${sets[@]}"
done
run_case "still refused in any order" 2 "needs an even head width" -- \
  "${train[@]}" --set model.position=rope --set model.n_head=6 --set model.n_embd=18
run_case "--seed -1" 2 "--seed: must be an integer in [0, 2^64 - 1" -- "${train[@]}" --seed -1
run_case "--seed 2^64" 2 "--seed: must be an integer in [0, 2^64 - 1" -- "${train[@]}" --seed 18446744073709551616
run_case "--seed 2^64+1" 2 "--seed: must be an integer in [0, 2^64 - 1" -- "${train[@]}" --seed 18446744073709551617
run_case "sample --seed 1e3" 2 "--seed: must be an integer" -- sample --checkpoint "$ckpt" --seed 1e3
run_case "inspect --seed -5" 2 "--seed: must be an integer" -- inspect-heads --config "$config" --seed -5 --text "x"
run_case "train.seed 2^64" 2 "train.seed must be a non-negative integer below 2^64" -- "${train[@]}" --set train.seed=18446744073709551616
run_case "--seed 2^64-1 trains" 0 "" -- "${train[@]}" --out runs/seedmax --max-steps 1 --seed 18446744073709551615
run_case "--max-steps 0" 2 "--max-steps: must be an integer in [1, " -- "${train[@]}" --max-steps 0
printf '{"data": {"path": "corpus.txt\\u0000/etc/passwd"}}' > nul_path.json
run_case "NUL in data.path" 2 "data.path holds a NUL byte" -- train --config nul_path.json
printf '{"train": {"out_dir": "runs/a\\u0000b"}}' > nul_out.json
run_case "NUL in train.out_dir" 2 "train.out_dir holds a NUL byte" -- train --config nul_out.json --set data.path="$corpus"
[[ ! -e runs/a ]] || note_failure "a NUL in out_dir left a folder runs/a"
printf '{"train": {"lr": 1e-3}}\0garbage' > nul_tail.json
run_case "JSON then NUL garbage" 2 "NUL byte" -- train --config nul_tail.json
run_case "--out invalid UTF-8" 2 "train.out_dir: invalid UTF-8" -- "${train[@]}" --out "$(printf 'runs/\xff')"
run_case "--set data.path invalid UTF-8" 2 "invalid UTF-8" -- "${train[@]}" --set "data.path=$(printf 'a\xfe')"

# --- 6. SIGTERM, non-finite weights, malformed metadata.
"$binary" "${train[@]}" --out runs/term --max-steps 100000 --set train.checkpoint_interval=100000 > /dev/null 2> err.txt &
background=$!
for _ in $(seq 600); do [[ -e runs/term/best.safetensors ]] && break; sleep 0.05; done
cases=$((cases + 1)); label="SIGTERM finishes the step and writes latest"
kill -TERM "$background"
status=0; timeout -s KILL "$timeout_s" tail --pid="$background" -f /dev/null || status=137
wait "$background"; status=$?; background=""
if (( status == 143 )); then
  "$binary" eval --checkpoint runs/term/latest.safetensors --text-file text.txt > /dev/null 2>&1 ||
    note_failure "latest.safetensors after SIGTERM does not load"
  grep -q "terminated (SIGTERM) at step" err.txt || note_failure "no 'terminated (SIGTERM)' line: $(tail -n 1 err.txt)"
  ls -a runs/term | grep -q '\.tmp' && note_failure "a temporary file was left: $(ls -a runs/term)"
else
  note_failure "exit status $status after SIGTERM, expected 143"
fi

# craft SRC DST EDIT: rewrites a checkpoint with python: EDIT is python code run with
# `meta` (the __metadata__ dict) and `data` (a bytearray of the data section) in scope;
# the data checksum is dropped so that the edit, not the checksum, is what is judged.
craft() {
  python3 - "$1" "$2" "$3" <<'PY'
import json, struct, sys
src, dst, edit = sys.argv[1:]
raw = open(src, "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
header = json.loads(raw[8:8 + n])
data = bytearray(raw[8 + n:])
meta = header["__metadata__"]
meta.pop("data_sha256", None)
exec(edit)
text = json.dumps(header, separators=(",", ":")).encode()
text += b" " * ((8 - len(text) % 8) % 8)
open(dst, "wb").write(struct.pack("<Q", len(text)) + text + bytes(data))
PY
}
craft "$ckpt" nan.safetensors 'data[0:4] = struct.pack("<f", float("nan"))'
craft "$ckpt" inf.safetensors 'data[400:404] = struct.pack("<f", float("-inf"))'
craft "$ckpt" bestval.safetensors 'meta["best_val_loss"] = "abc"'
craft "$ckpt" sampler.safetensors 'meta["sampler_state"] = "1,2,x"'
craft "$ckpt" deepconfig.safetensors 'meta["config"] = "[" * 60000 + "]" * 60000'
craft "$ckpt" deepvocab.safetensors 'meta["vocab"] = "[" * 60000 + "]" * 60000'
craft "$ckpt" deepheader.safetensors 'meta["x"] = "y"; header["__deep__"] = 0'
python3 - deepheader.safetensors <<'PY'
import struct, sys
raw = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
text = raw[8:8 + n].replace(b'"__deep__":0', b'"__deep__":' + b"[" * 60000 + b"]" * 60000)
text += b" " * ((8 - len(text) % 8) % 8)
open(sys.argv[1], "wb").write(struct.pack("<Q", len(text)) + text + raw[8 + n:])
PY
mkdir -p runs/meta && cp bestval.safetensors runs/meta/latest.safetensors && cp sampler.safetensors runs/meta/s.safetensors
run_case "NaN weight (eval)" 2 "holds a non-finite value (nan)" -- eval --checkpoint nan.safetensors --text-file text.txt
run_case "-inf weight (sample)" 2 "holds a non-finite value (-inf)" -- sample --checkpoint inf.safetensors
run_case "NaN weight (resume)" 2 "non-finite" -- "${train[@]}" --resume nan.safetensors --out runs/x --max-steps 30
run_case "malformed best_val_loss" 2 "__metadata__.best_val_loss must be a finite number" -- \
  "${train[@]}" --resume runs/meta/latest.safetensors --max-steps 30
run_case "malformed sampler_state" 2 "s.safetensors: __metadata__.sampler_state" -- \
  "${train[@]}" --resume runs/meta/s.safetensors --max-steps 30
run_case "config metadata nested deep" 2 "__metadata__.config: invalid JSON" -- eval --checkpoint deepconfig.safetensors --text-file text.txt
run_case "vocab metadata nested deep" 2 "nested deeper than 64" -- eval --checkpoint deepvocab.safetensors --text-file text.txt
run_case "header nested deep" 2 "header: invalid JSON" -- eval --checkpoint deepheader.safetensors --text-file text.txt
run_case "--max-steps bound is sane" 2 "[1, 1000000000000]" -- "${train[@]}" --max-steps -3

echo "hostile_test: $cases cases, $refused refused with one line, crashes $crashes, hangs $hangs," \
     "clobbered files $clobbered, other failures $((failures - crashes - hangs - clobbered))"
(( failures == 0 ))
