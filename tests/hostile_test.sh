#!/usr/bin/env bash
# Hostile use (issue 19): mini-gpt run on crafted inputs, one class of abuse after another:
# run directories trained over, outputs that would clobber what is at the path, inputs
# that block or never end (FIFOs, /dev/zero, huge counts), JSON nested 60,000 deep,
# failed writes to stdout, overrides whose order used to matter, seeds and strings out of
# range (NUL, invalid UTF-8), SIGTERM, non-finite or malformed checkpoints; and (issue 33)
# the Python scripts held to the same rules, run folders that would crash or stall the
# head explorer, MPI ranks started with different settings, error text that echoes
# control characters or 50 MB values, inspect-heads --compare on texts it used to take;
# and (issue 45) the new modes, the scripts and the program's start: a one-symbol
# vocabulary, block_size 1, probe sets that made paths quadratic, weights that overflow,
# tampered floor records and checkpoint headers, signals during writes, closed pipes,
# thread counts, the loader, valgrind and qemu, every script's usage errors; and (issue 53)
# slow, idle and greedy clients of serve, results that overflow, config values float32
# cannot hold, every terminating signal during a write, two runs racing for one folder.
# Every case runs under a timeout and is checked for: the expected exit status; for a
# refusal, exactly one "mini-gpt: error: ..." line on stderr (the last, besides train's
# banner) containing an expected phrase; no crash (no signal exit but the intended ones);
# no hang (the timeout); and no clobbered file (type, inode, size and checksum of every
# victim file before and after the case, and no writer's temporary ".NAME.tmp.PID" left).
# A crash is a signal exit, an "internal check failed" line or a sanitizer's report.
# The last line is the summary,
#   hostile_test: N cases, R refused with one line, crashes C, hangs H, clobbered files F, other failures O
#
#   bash tests/hostile_test.sh BUILD/mini-gpt [SOURCE_DIR]    (ctest runs it as hostile_test)
# SOURCE_DIR (default: this file's checkout) gives the configs, corpus and scripts, so that
# the battery can measure another checkout's binary and scripts (an older commit's).
set -uo pipefail

binary=$(realpath "${1:?usage: hostile_test.sh PATH/TO/mini-gpt [SOURCE_DIR]}")
source_dir=$(cd "${2:-$(dirname "$0")/..}" && pwd)
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
  local now left
  now=$(snapshot)
  if [[ $now != "$victims_before" ]]; then
    clobbered=$((clobbered + 1))
    note_failure "victims changed: $(diff <(echo "$victims_before") <(echo "$now") | grep '^[<>]' | head -n 4 | tr '\n' ' ')"
    return
  fi
  # A writer's temporary left behind (mini-gpt's ".NAME.tmp.PID", the scripts' ".NAME.*.tmp"),
  # unless a run started in the background may be writing one right now.
  [[ -z $background ]] || return 0
  left=$(find "$work" \( -name '.*.tmp.[0-9]*' -o -name '.*.tmp' \) -print 2> /dev/null | head -n 3)
  if [[ -n $left ]]; then
    clobbered=$((clobbered + 1))
    note_failure "a temporary file was left behind: $(tr '\n' ' ' <<< "$left")"
    find "$work" \( -name '.*.tmp.[0-9]*' -o -name '.*.tmp' \) -delete 2> /dev/null
  fi
}

# run_case LABEL STATUS PHRASE [STDOUT] -- ARGS...: runs mini-gpt ARGS with stdout to STDOUT
# ("file" by default, "full" for /dev/full, "closed" for a closed descriptor, "pipe" for a
# pipe whose reader has exited). The command
# run is "${runner[@]}" ARGS, and errors are expected as "$prog: error: ..."; both are
# changed for the scripts' cases.
runner=("$binary") prog=mini-gpt
run_case() {
  label=$1 expected=$2 phrase=$3 out_mode=file
  shift 3
  if [[ $1 != -- ]]; then out_mode=$1; shift; fi
  shift  # --
  cases=$((cases + 1))
  record_victims
  local status started=$EPOCHREALTIME
  case $out_mode in
    full) timeout -s KILL "$timeout_s" "${runner[@]}" "$@" < /dev/null > /dev/full 2> err.txt; status=$? ;;
    closed) timeout -s KILL "$timeout_s" "${runner[@]}" "$@" < /dev/null >&- 2> err.txt; status=$? ;;
    # A reader that has gone before the output comes (`| true`): the status is mini-gpt's.
    pipe) timeout -s KILL "$timeout_s" "${runner[@]}" "$@" < /dev/null 2> err.txt | true; status=${PIPESTATUS[0]} ;;
    *) timeout -s KILL "$timeout_s" "${runner[@]}" "$@" < /dev/null > out.txt 2> err.txt; status=$? ;;
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
  if grep -aqE 'internal check failed|ERROR: AddressSanitizer|ERROR: LeakSanitizer|runtime error: |Invalid read of|Invalid write of' err.txt; then
    crashes=$((crashes + 1)); note_failure "an internal error or a memory error: $(grep -aE 'internal check|Sanitizer|runtime error|Invalid' err.txt | head -n 1 | cut -c1-300)"; return
  fi
  if grep -q '^Traceback' err.txt; then
    crashes=$((crashes + 1)); note_failure "a Python traceback: $(tail -n 1 err.txt | cut -c1-300)"; return
  fi
  if (( status != expected )); then
    note_failure "exit status $status, expected $expected: $(tail -n 2 err.txt | cut -c1-300)"; return
  fi
  (( expected == 1 || expected == 2 )) || return 0
  # A refusal: one error line, the last one, naming what is wrong; the only other lines
  # allowed are train's banner ("mini-gpt VERSION; kernels: ...") and progress ("step N/M ...").
  local errors others last
  errors=$(grep -c "^$prog: error: " err.txt)
  others=$(grep -v "^$prog: error: " err.txt | grep -v '^step [0-9]*/[0-9]* ' | grep -vc '^mini-gpt [^:]*; kernels: ')
  last=$(tail -n 1 err.txt)
  if (( errors != 1 || others != 0 )) || [[ $last != "$prog: error: "* ]]; then
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
# the data and header checksums are dropped so that the edit, not a checksum, is what is judged.
# With a fourth argument "keep", the checksums stay (and so judge the edit).
craft() {
  python3 - "$1" "$2" "$3" "${4:-}" <<'PY'
import json, struct, sys
src, dst, edit, keep = sys.argv[1:]
raw = open(src, "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
header = json.loads(raw[8:8 + n])
data = bytearray(raw[8 + n:])
meta = header["__metadata__"]
if keep != "keep":
    meta.pop("data_sha256", None)
    meta.pop("header_sha256", None)
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

# --- 7. The scripts keep the binary's promises (issue 33): one line "SCRIPT: error: ...",
# exit 2 for bad input and 1 for a failed write, no traceback, no read without bound, no
# write through a link or onto a device, no script injected into the SVG.
plot=(python3 "$source_dir/scripts/plot_metrics.py")
make_corpus=(python3 "$source_dir/scripts/make_corpus.py")
# metrics_with NAME LINE: a run folder NAME whose metrics.jsonl is run A's and then LINE.
metrics_with() {
  mkdir -p "$1" && cp runs/A/metrics.jsonl "$1/" && printf '%s\n' "$2" >> "$1/metrics.jsonl"
}
# no_raw_controls FILE: fails the case when FILE holds a C0 (but tab and newline), DEL, C1,
# U+2028 or U+2029 character.
no_raw_controls() {
  if LC_ALL=C grep -aqP '[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]|\xe2\x80[\xa8\xa9]' "$1"; then
    note_failure "$1 holds a raw control character: $(head -c 200 "$1" | cat -v)"
  fi
}
python3 - runs/A/metrics.jsonl > injected.jsonl <<'PY'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
row = json.loads(lines[-1])
row["head_roles"][0]["layer"] = "</text><script>window.__pwned=1</script><text>"
row["head_roles"][1]["head"] = "<script>alert(1)</script>"
print("\n".join(lines[:-1] + [json.dumps(row)]))
PY
mkdir -p runs/injected && mv injected.jsonl runs/injected/metrics.jsonl
metrics_with runs/nostep '{"loss": 1.0}'
metrics_with runs/strloss '{"step": 21, "loss": "abc", "val_loss": Infinity, "probe_accuracy": 1e999}'
metrics_with runs/nullroles '{"step": 21, "loss": 1.0, "val_loss": 2.0, "head_roles": [null, {"head": 1}, 5]}'
metrics_with runs/deeproles "{\"step\": 21, \"loss\": 1.0, \"val_loss\": 2.0, \"head_roles\": $(python3 -c "print('[' * 100000 + ']' * 100000)")}"
mkdir -p runs/badutf8 && cp runs/A/metrics.jsonl runs/badutf8/ && printf '{"step": 21, "loss": 1.0, "x": "\xff"}\n' >> runs/badutf8/metrics.jsonl
mkdir -p runs/huge && truncate -s 300M runs/huge/metrics.jsonl
mkfifo fifo.jsonl
ln -s target.txt link.jsonl
mkdir -p runs/linked_corpus && ln -s ../../target.txt runs/linked_corpus/corpus.txt
victims+=(link.jsonl fifo.jsonl runs/linked_corpus/corpus.txt)
runner=("${plot[@]}") prog=plot_metrics
run_case "plot: layer and head that inject a script" 0 "" -- runs/injected -o injected.svg
if grep -qi '<script' injected.svg; then note_failure "injected.svg holds a <script>"; fi
python3 -c "import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])" injected.svg 2>/dev/null ||
  note_failure "injected.svg is not well-formed XML"
grep -q "skipped 2 head_roles entries" err.txt || note_failure "plot_metrics does not say it skipped the injected entries: $(cat err.txt)"
run_case "plot: -o a symlink" 2 "is a symbolic link" -- runs/A -o link.svg
run_case "plot: -o a folder" 2 "is a directory" -- runs/A -o folder.svg
run_case "plot: -o /dev/full" 2 "is a character device" -- runs/A -o /dev/full
run_case "plot: -o a FIFO" 2 "is a FIFO" -- runs/A -o fifo.svg
run_case "plot: -o in a missing folder" 1 "cannot write output" -- runs/A -o missing/x.svg
run_case "plot: -o empty" 2 "output path is empty" -- runs/A -o ""
run_case "plot: /dev/zero" 2 "is a character device, not a regular file" -- /dev/zero -o new.svg
run_case "plot: a FIFO" 2 "is a FIFO, not a regular file" -- fifo.jsonl -o new.svg
run_case "plot: 300 MB of metrics" 2 "more than the limit" -- runs/huge -o new.svg
run_case "plot: a missing run" 2 "cannot read: No such file" -- runs/none -o new.svg
run_case "plot: a line without step" 2 '"step" must be a finite number' -- runs/nostep -o new.svg
run_case "plot: string and infinite losses" 0 "" -- runs/strloss -o gaps.svg
if grep -qiE 'nan|inf' gaps.svg; then note_failure "gaps.svg draws NaN or inf: $(grep -oiE '.{20}(nan|inf).{20}' gaps.svg | head -n 1)"; fi
run_case "plot: head_roles [null, no layer, 5]" 0 "" -- runs/nullroles -o roles.svg
run_case "plot: head_roles nested 100,000 deep" 2 "nested too deep" -- runs/deeproles -o new.svg
run_case "plot: invalid UTF-8" 2 "invalid UTF-8 at byte offset" -- runs/badutf8 -o new.svg
run_case "plot: --smooth 0" 2 "--smooth: must be in [1, " -- runs/A --smooth 0
run_case "plot: --smooth -5" 2 "--smooth: must be in [1, " -- runs/A --smooth -5
run_case "plot: --floor inf" 2 "--floor: must be a finite number" -- runs/A --floor inf
run_case "plot: --floor nan" 2 "--floor: must be a finite number" -- runs/A --floor nan
run_case "plot: --loss-max -inf" 2 "--loss-max: must be a finite number" -- runs/A --loss-max=-inf
run_case "plot: an ESC in the run's name" 2 "cannot read" -- "$(printf 'runs/\x1b[2J\xc2\x9b')" -o new.svg
no_raw_controls err.txt
run_case "plot: an unknown option" 2 "unrecognized arguments" -- runs/A --bogus
run_case "plot: to /dev/full" 1 "cannot write to standard output" full -- runs/A -o new.svg
runner=("${make_corpus[@]}") prog=make_corpus
run_case "make_corpus: --probe-out a symlink" 2 "is a symbolic link" -- --probe-seed 7 --probe-out link.jsonl
run_case "make_corpus: --probe-out a folder" 2 "is a directory" -- --probe-seed 7 --probe-out folder.svg
run_case "make_corpus: --probe-out names a folder" 2 "names a folder" -- --probe-seed 7 --probe-out runs/
run_case "make_corpus: --probe-out /dev/full" 2 "is a character device" -- --probe-seed 7 --probe-out /dev/full
run_case "make_corpus: --probe-out in a missing folder" 1 "cannot write --probe-out" -- --probe-seed 7 --probe-out missing/p.jsonl
run_case "make_corpus: --probe-items 0" 2 "--probe-items: must be in [1, " -- --probe-seed 7 --probe-items 0 --probe-out p.jsonl
run_case "make_corpus: --probe-items 10^12" 2 "--probe-items: must be in [1, " -- --probe-seed 7 --probe-items 1000000000000 --probe-out p.jsonl
run_case "make_corpus: --symbols 5" 2 "--symbols: must be in [" -- --symbols 5 --out corpus_out
run_case "make_corpus: --out on a symlinked corpus.txt" 2 "is a symbolic link" -- --out runs/linked_corpus
run_case "make_corpus: a fresh probe set" 0 "" -- --probe-seed 7 --probe-items 20 --probe-out p.jsonl
[[ $(wc -l < p.jsonl) == 20 ]] || note_failure "make_corpus wrote $(wc -l < p.jsonl) probe items, expected 20"
runner=("$binary") prog=mini-gpt

# --- 8. Run folders the head explorer reads (--run), probe kinds echoed on stdout, error
# text that quotes control characters or huge values, --compare's text.
run_case "explorer: --run with head_roles nested 100,000 deep" 0 "" -- "${inspect[@]}" --run runs/deeproles --html deep.html
grep -q '"skipped":1' deep.html || note_failure "deep.html does not count the deep line as skipped"
python3 - runs/many/metrics.jsonl <<'PY'
import json, os, sys
os.makedirs(os.path.dirname(sys.argv[1]), exist_ok=True)
with open(sys.argv[1], "w") as f:
    for step in range(1, 130_001):
        f.write(json.dumps({"step": step, "loss": 2.0, "val_loss": 2.1, "probe_accuracy_by_kind": {"who": "abc", "what": 1e308},
                            "head_roles": [None] if step % 2 else [{"layer": "</script>", "head": 0}, {"layer": 0, "head": 1, "induction": 0.5}]}) + "\n")
PY
run_case "explorer: --run with 130,000 evaluations" 0 "" -- "${inspect[@]}" --run runs/many --html many.html
python3 - many.html <<'PY' || note_failure "many.html: the run data is not thinned and checked"
import json, sys
page = open(sys.argv[1], encoding="utf-8").read()
start = page.index('id="explorer-data">') + len('id="explorer-data">')
run = json.loads(page[start:page.index("</script>", start)])["run"]
assert run["evals_total"] == 130000 and len(run["evals"]) <= 1001, (run["evals_total"], len(run["evals"]))
assert all(isinstance(h["layer"], int) for e in run["evals"] for h in e.get("head_roles", []))
assert all(e.get("by_kind", {}) == {"what": 1e308} for e in run["evals"])
PY
printf '{"prompt": "%s", "answer": "%s", "kind": "\\u001b[2J\\u009b31m\\nwho\\u2028"}\n' \
  "$(python3 -c 'import sys; t = open(sys.argv[1], encoding="utf-8").read(); print(t[:5])' "$corpus")" \
  "$(python3 -c 'import sys; t = open(sys.argv[1], encoding="utf-8").read(); print(t[5])' "$corpus")" > kinds.jsonl
run_case "eval: a probe kind with ESC, CSI, newline and U+2028" 0 "" -- eval --checkpoint "$ckpt" --text-file text.txt --probe kinds.jsonl
no_raw_controls out.txt
grep -q '?\[2J?31m?who?' out.txt || note_failure "eval does not show the kind escaped: $(cat -v out.txt | tail -n 1)"
run_case "C1 and U+2028 in a path" 2 "does not exist" -- eval --checkpoint "$ckpt" --text-file "$(printf 'x\xc2\x85y\xc2\x9b[31m\xe2\x80\xa8z')"
no_raw_controls err.txt
run_case "a 100,000-character path" 2 "... (100001 characters) File name too long" -- eval --checkpoint "$ckpt" --text-file "$(printf '/%.0sx' {1..50000})"
(( $(wc -c < err.txt) < 400 )) || note_failure "the error line is $(wc -c < err.txt) bytes"
printf '{"data": {"path": "/%s"}}' "$(head -c 900000 /dev/zero | tr '\0' 'p')" > long_path.json
run_case "a 900,000-character corpus path in a config" 2 "(900002 characters) File name too long" -- train --config long_path.json --threads 1
(( $(wc -c < err.txt) < 600 )) || note_failure "the error line is $(wc -c < err.txt) bytes"
python3 -c 'import sys; sys.stdout.write("{\"prompt\": \"ab\", \"answer\": \"a\", \"kind\": [" + "1," * 25000000 + "1]}\n")' > bigkind.jsonl
run_case "a probe kind of 50 MB, wrongly typed" 2 '"kind" must be a string, found [1,1,1' -- \
  eval --checkpoint "$ckpt" --text-file text.txt --probe bigkind.jsonl
(( $(wc -c < err.txt) < 400 )) || note_failure "the error line is $(wc -c < err.txt) bytes"
rm -f bigkind.jsonl
compare=(inspect-heads --compare "$ckpt" "$ckpt" --threads 1)
run_case "--compare --text ''" 2 "--text is empty" -- "${compare[@]}" --text ""
run_case "--compare a text over block_size" 2 "more than the model's block_size of 16" -- "${compare[@]}" \
  --text "$(python3 -c 'import sys; print(open(sys.argv[1], encoding="utf-8").read().replace("\n", "")[:17])' "$corpus")"
run_case "--compare a text within block_size" 0 "" -- "${compare[@]}" --text "${inspect[4]}"

# --- 10. Issue 45: the new modes, the scripts and the program's start keep every promise.
# Each part names the issue's class; the cases are its examples and their neighbours.
corpus_text() { python3 -c 'import sys; t = open(sys.argv[1], encoding="utf-8").read().replace("\n", ""); print(t[int(sys.argv[2]):int(sys.argv[3])], end="")' "$corpus" "$@"; }
text10=$(corpus_text 0 10)

# Class 1: a model whose vocabulary has one symbol has no competitor, and a block_size of 1
# leaves a context shift nothing to keep. Training it on the default probe set (every
# prompt outside its vocabulary) also tests class 9: no "writing heads.html" without a page.
python3 -c "print('a' * 4000, end='')" > one.txt
printf '{"prompt": "aaaa", "answer": "a", "kind": "k", "source": 1}\n{"prompt": "aaaaa", "answer": "a", "kind": "j", "source": 2}\n' > one_probe.jsonl
run_case "train a one-symbol vocabulary (probe prompts all outside it)" 0 "" -- \
  "${train[@]}" --out runs/one --max-steps 3 --set data.path="$work/one.txt" --set train.eval_interval=2
if grep -q "heads.html" err.txt out.txt || [[ -e runs/one/heads.html ]]; then
  note_failure "a run with no probe prompt in its vocabulary speaks of heads.html: $(grep -h heads.html err.txt out.txt | head -n 1)"
fi
one=runs/one/latest.safetensors
one_inspect=(inspect-heads --checkpoint "$one" --threads 1)
run_case "one symbol: --patch" 2 "no other symbol" -- "${one_inspect[@]}" --patch --clean aaaa --corrupt aaaa
run_case "one symbol: --patch --answer a" 2 "no other symbol" -- "${one_inspect[@]}" --patch --clean aaa --corrupt aaa --answer a
run_case "one symbol: --patch --svg" 2 "no other symbol" -- "${one_inspect[@]}" --patch --clean aaaa --corrupt aaaa --svg one_patch.svg
[[ ! -e one_patch.svg ]] || note_failure "a refused --patch wrote its --svg"
run_case "one symbol: --patch --against a" 2 "names the answer itself" -- "${one_inspect[@]}" --patch --clean aaa --corrupt aaa --answer a --against a
run_case "one symbol: --attribution" 2 "no other symbol" -- "${one_inspect[@]}" --attribution --text aaaa
run_case "one symbol: --attribution --answer a --format json" 2 "no other symbol" -- "${one_inspect[@]}" --attribution --text aaaa --answer a --format json
run_case "one symbol: --attribution --probe" 2 "no other symbol" -- "${one_inspect[@]}" --attribution --probe one_probe.jsonl
run_case "one symbol: --html" 2 "no other symbol" -- "${one_inspect[@]}" --text aaaa --html one.html
[[ ! -e one.html ]] || note_failure "a refused --html wrote its page"
run_case "one symbol: --html --probe" 2 "no other symbol" -- "${one_inspect[@]}" --text aaaa --html one.html --probe one_probe.jsonl
run_case "one symbol: --explain" 2 "no other symbol" -- "${one_inspect[@]}" --explain --probe one_probe.jsonl
run_case "one symbol: --patch --probe (issue 53: refused, no competitor)" 2 "no other symbol" -- "${one_inspect[@]}" --patch --probe one_probe.jsonl
run_case "one symbol: --patch --probe --swap key" 2 "no other symbol" -- "${one_inspect[@]}" --patch --probe one_probe.jsonl --swap key
run_case "one symbol: --circuit" 2 "no other symbol" -- "${one_inspect[@]}" --circuit --probe one_probe.jsonl
run_case "one symbol: --logit-lens" 0 "" -- "${one_inspect[@]}" --logit-lens --text aaaa
run_case "one symbol: --composition" 0 "" -- "${one_inspect[@]}" --composition
run_case "one symbol: --roles --probe (its direct logit column)" 2 "no other symbol" -- "${one_inspect[@]}" --roles --probe one_probe.jsonl
run_case "one symbol: --trace" 0 "" -- "${one_inspect[@]}" --trace 0.0 --position 2 --text aaaa
run_case "one symbol: sample" 0 "" -- sample --checkpoint "$one" --max-new-tokens 20 --threads 1
run_case "one symbol: sample --context-shift" 0 "" -- sample --checkpoint "$one" --max-new-tokens 40 --context-shift --threads 1
run_case "one symbol: eval --probe" 0 "" -- eval --checkpoint "$one" --probe one_probe.jsonl --threads 1
run_case "train block_size 1" 0 "" -- "${train[@]}" --out runs/b1 --max-steps 3 --set model.block_size=1
b1=runs/b1/latest.safetensors
run_case "block_size 1: sample --context-shift" 0 "" -- sample --checkpoint "$b1" --context-shift --max-new-tokens 30 --threads 1
[[ $(python3 -c 'import sys; print(len(open(sys.argv[1], encoding="utf-8").read()))' out.txt) -ge 30 ]] ||
  note_failure "block_size 1 --context-shift printed $(wc -c < out.txt) bytes, not 30 symbols"
run_case "block_size 1: sample --context-shift, two symbols" 0 "" -- sample --checkpoint "$b1" --context-shift --max-new-tokens 2 --threads 1
run_case "block_size 1: sample --context-shift --prompt" 0 "" -- sample --checkpoint "$b1" --context-shift --prompt "$text10" --max-new-tokens 5 --threads 1
run_case "block_size 1: sample (window)" 0 "" -- sample --checkpoint "$b1" --max-new-tokens 30 --threads 1
run_case "block_size 1: sample --no-cache" 0 "" -- sample --checkpoint "$b1" --max-new-tokens 30 --no-cache --threads 1
run_case "block_size 1: eval" 0 "" -- eval --checkpoint "$b1" --text-file text.txt --threads 1

# Class 4: non-finite results of finite weights are refused where they arise (exit 1), a
# head whose W_O is zero composes with nothing (0, not -nan), a floor record is checked.
craft "$ckpt" huge.safetensors 'import array
a = array.array("f"); a.frombytes(bytes(data))
for i in range(len(a)): a[i] = max(-3e38, min(3e38, a[i] * 1e30))
data[:] = a.tobytes()'
# Composition needs two layers: a short run of the tiny config with n_layer 2.
"$binary" "${train[@]}" --out runs/L2 --max-steps 3 --set model.n_layer=2 > /dev/null 2>&1 || note_failure "the two-layer run did not train"
craft runs/L2/latest.safetensors huge2.safetensors 'import array
a = array.array("f"); a.frombytes(bytes(data))
for i in range(len(a)): a[i] = max(-3e38, min(3e38, a[i] * 1e30))
data[:] = a.tobytes()'
craft runs/L2/latest.safetensors zero_wo.safetensors 'e = header["blocks.0.attn.out_proj.weight"]["data_offsets"]
data[e[0]:e[1]] = bytes(e[1] - e[0])'
huge_inspect=(inspect-heads --checkpoint huge.safetensors --threads 1)
run_case "huge weights: eval --json" 1 "the mean loss is" -- eval --checkpoint huge.safetensors --text-file text.txt --json --threads 1
grep -qi 'nan' out.txt && note_failure "eval printed a NaN: $(cat out.txt)"
run_case "huge weights: eval" 1 "the mean loss is" -- eval --checkpoint huge.safetensors --text-file text.txt --threads 1
run_case "huge weights: sample" 1 "logit is" -- sample --checkpoint huge.safetensors --max-new-tokens 20 --threads 1
run_case "huge weights: sample --temperature 0" 1 "logit is" -- sample --checkpoint huge.safetensors --max-new-tokens 20 --temperature 0 --threads 1
run_case "huge weights: sample --no-cache" 1 "logit is" -- sample --checkpoint huge.safetensors --max-new-tokens 5 --no-cache --threads 1
run_case "huge weights: --attribution --format json" 1 "overflow float32" -- "${huge_inspect[@]}" --attribution --text "$text10" --format json
run_case "huge weights: --attribution --probe" 1 "overflow float32" -- "${huge_inspect[@]}" --attribution --probe "$source_dir/data/probe.jsonl"
run_case "huge weights: --patch" 1 "overflow float32" -- "${huge_inspect[@]}" --patch --clean "$text10" --corrupt "$(corpus_text 10 20)"
run_case "huge weights: --logit-lens" 1 "overflow float32" -- "${huge_inspect[@]}" --logit-lens --text "$text10"
run_case "huge weights: --composition" 1 "composition score is" -- inspect-heads --checkpoint huge2.safetensors --composition --threads 1
run_case "zero W_O: --composition" 0 "" -- inspect-heads --checkpoint zero_wo.safetensors --composition --threads 1
grep -qi 'nan' out.txt && note_failure "--composition with a zero W_O printed NaN: $(grep -i nan out.txt | head -n 1)"
run_case "zero W_O: --composition --format json" 0 "" -- inspect-heads --checkpoint zero_wo.safetensors --composition --format json --threads 1
python3 -c 'import json, sys; json.load(open(sys.argv[1]))' out.txt 2> /dev/null || note_failure "--composition --format json is not JSON"

# Floor records: a model trained on a copy of the corpus, with a floors.json beside it.
mkdir -p fl && cp "$corpus" fl/corpus.txt
"$binary" "${train[@]}" --out runs/fl --max-steps 2 --set data.path="$work/fl/corpus.txt" > /dev/null 2>&1 ||
  note_failure "the floor records' run did not train"
floors() {  # floors.json for text.txt: FLOOR ABOUT [KEY=VALUE python edits of the record r]
  python3 - "$@" <<'PY'
import hashlib, json, sys
floor, about = float(sys.argv[1]), sys.argv[2]
sha = lambda p: hashlib.sha256(open(p, "rb").read()).hexdigest()
r = {"corpus_sha256": sha("fl/corpus.txt"), "block_size": 16, "val_fraction": 0.1, "validation_story_rows": 0.5,
     "texts": [{"sha256": sha("text.txt"), "floor": floor, "about": about}]}
for edit in sys.argv[3:]:
    exec(edit)
open("fl/floors.json", "w").write(json.dumps(r))
PY
}
floors 99 "the text"
run_case "floor record: floor 99" 2 "floor must be in [0, 13.93]" -- eval --checkpoint runs/fl/latest.safetensors --text-file text.txt --threads 1
floors -1e300 "the text"
run_case "floor record: floor -1e300" 2 "floor must be in [0, 13.93]" -- eval --checkpoint runs/fl/latest.safetensors --text-file text.txt --threads 1
floors 0.5 "the text" 'r["val_fraction"] = 5'
run_case "floor record: val_fraction 5" 2 "val_fraction must be a number in (0, 1)" -- eval --checkpoint runs/fl/latest.safetensors --text-file text.txt --threads 1
floors 0.5 "the text" 'r["validation_story_rows"] = 1e308'
run_case "floor record: validation floor 1e308" 2 "validation_story_rows must be in" -- eval --checkpoint runs/fl/latest.safetensors --text-file text.txt --threads 1
floors 0.5 "$(printf 'the \033[2J\033]0;pwned\007text\302\233')"
run_case "floor record: ESC, OSC and CSI in about" 0 "" -- eval --checkpoint runs/fl/latest.safetensors --text-file text.txt --threads 1
no_raw_controls out.txt
grep -q '^floor 0.500000 nats/symbol' out.txt || note_failure "eval does not print the floor: $(cat -v out.txt | tail -n 1)"
run_case "floor record: --json with a floor" 0 "" -- eval --checkpoint runs/fl/latest.safetensors --text-file text.txt --json --threads 1
grep -q '"floor": 0.5' out.txt || note_failure "eval --json does not give the floor: $(cat out.txt)"
rm -f fl/floors.json

# The checkpoint's header, config included, is covered by header_sha256 (docs/checkpoint.md).
craft "$ckpt" rope_base.safetensors 'c = json.loads(meta["config"]); c["model"]["rope_base"] = 77.0; meta["config"] = json.dumps(c)' keep
craft "$ckpt" rope_base_unsummed.safetensors 'c = json.loads(meta["config"]); c["model"]["rope_base"] = 77.0; meta["config"] = json.dumps(c)'
craft "$ckpt" bad_header_sum.safetensors 'meta["header_sha256"] = "0" * 64' keep
craft "$ckpt" step_edit.safetensors 'meta["step"] = "7"' keep
craft "$ckpt" vocab_edit.safetensors 'v = json.loads(meta["vocab"]); v[-1] = chr(ord(v[-1]) + 1); meta["vocab"] = json.dumps(v)' keep
craft "$ckpt" respaced.safetensors 'header = dict(reversed(list(header.items()))); header["__metadata__"] = dict(sorted(meta.items(), reverse=True))' keep
run_case "header: an edited model.rope_base" 2 "header checksum mismatch" -- eval --checkpoint rope_base.safetensors --text-file text.txt --threads 1
run_case "header: an edited model.rope_base (sample)" 2 "header checksum mismatch" -- sample --checkpoint rope_base.safetensors --threads 1
run_case "header: an edited model.rope_base (resume)" 2 "header checksum mismatch" -- "${train[@]}" --resume rope_base.safetensors --out runs/rb --max-steps 30
run_case "header: a wrong header_sha256" 2 "header checksum mismatch" -- eval --checkpoint bad_header_sum.safetensors --text-file text.txt --threads 1
run_case "header: an edited step" 2 "header checksum mismatch" -- eval --checkpoint step_edit.safetensors --text-file text.txt --threads 1
run_case "header: an edited vocabulary" 2 "header checksum mismatch" -- eval --checkpoint vocab_edit.safetensors --text-file text.txt --threads 1
run_case "header: the same content spelled otherwise loads" 0 "" -- eval --checkpoint respaced.safetensors --text-file text.txt --threads 1
run_case "header: no header_sha256 loads (the documented residual risk)" 0 "" -- eval --checkpoint rope_base_unsummed.safetensors --text-file text.txt --threads 1

# Class 2: bounded time and memory. 80,000 duplicate probe rows (patching looked at every
# other row for each), 200,000 distinct kinds (each kind was looked up among all), a
# 1 GB line in metrics.jsonl (a resume read it whole). Each must end well within the limit:
# the probe cases within 20 s (about a second when linear; quadratic, half a minute and more).
python3 - "$corpus" <<'PY'
import json, sys
t = open(sys.argv[1], encoding="utf-8").read().replace("\n", "")
symbols = []
for c in t:
    if c not in symbols:
        symbols.append(c)
    if len(symbols) == 12:
        break
c = symbols
# value swap: the source holds the answer; key swap: c[0] is the key, once before the
# source and again as the question's last symbol.
item = {"prompt": c[0] + c[1] + c[2] + c[3] + c[4] + c[0], "answer": c[1], "kind": "who", "source": 1}
with open("dup.jsonl", "w", encoding="utf-8") as f:
    f.write((json.dumps(item, ensure_ascii=False) + "\n") * 80000)
with open("kinds.jsonl", "w", encoding="utf-8") as f:
    for i in range(200000):
        f.write(json.dumps({"prompt": c[0] + c[1], "answer": c[2], "kind": f"k{i}"}, ensure_ascii=False) + "\n")
PY
timeout_s=20
run_case "--patch --probe 80,000 duplicate rows --swap key" 0 "" -- inspect-heads --checkpoint "$ckpt" --threads 1 --patch --probe dup.jsonl --swap key
run_case "--patch --probe 80,000 duplicate rows --swap value" 0 "" -- inspect-heads --checkpoint "$ckpt" --threads 1 --patch --probe dup.jsonl
run_case "eval --probe 200,000 distinct kinds" 0 "" -- eval --checkpoint "$ckpt" --probe kinds.jsonl --json --threads 1
timeout_s=${HOSTILE_TEST_TIMEOUT:-60}
rm -f kinds.jsonl
if [[ -z ${ASAN_OPTIONS:-} ]]; then
  cp -r runs/A runs/bigline && truncate -s +1G runs/bigline/metrics.jsonl
  ulimit -S -v 3000000
  run_case "--resume past a 1 GB metrics.jsonl line, under ulimit -v 3 GB" 0 "" -- \
    "${train[@]}" --resume runs/bigline/latest.safetensors --max-steps 22
  ulimit -S -v unlimited
  (( $(stat -c %s runs/bigline/metrics.jsonl) < 1000000 )) || note_failure "the 1 GB line was kept"
  rm -rf runs/bigline
fi

# Class 3: nothing lost or left behind. make_corpus checks floors.json before it writes;
# Ctrl-C or SIGTERM during --html or --svg removes the temporary; a benchmark removes its
# temporary folder; threads that cannot start leave no run folder.
for kind in link fifo folder; do
  mkdir -p "mc_$kind" && echo "old corpus" > "mc_$kind/corpus.txt" && echo "old probe" > "mc_$kind/probe.jsonl"
  case $kind in
    link) ln -s ../target.txt "mc_$kind/floors.json" ;;
    fifo) mkfifo "mc_$kind/floors.json" ;;
    folder) mkdir "mc_$kind/floors.json" ;;
  esac
  victims+=("mc_$kind/corpus.txt" "mc_$kind/probe.jsonl" "mc_$kind/floors.json")
done
runner=(python3 "$source_dir/scripts/make_corpus.py") prog=make_corpus
run_case "make_corpus: floors.json a symlink" 2 "is a symbolic link" -- --out mc_link --symbols 500000
run_case "make_corpus: floors.json a FIFO" 2 "is a FIFO" -- --out mc_fifo --symbols 500000
run_case "make_corpus: floors.json a folder" 2 "is a directory" -- --out mc_folder --symbols 500000
runner=("$binary") prog=mini-gpt

exec_with_default_signals='import os, signal, sys
for s in (signal.SIGINT, signal.SIGQUIT): signal.signal(s, signal.SIG_DFL)
os.execv(sys.argv[1], sys.argv[1:])'
# kill_during_write LABEL SIGNAL STATUS OUT -- ARGS: runs mini-gpt ARGS in the background
# and sends SIGNAL the moment OUT's temporary appears (up to 40 tries, until one lands).
kill_during_write() {
  local label_=$1 signal=$2 wanted=$3 out=$4 landed=0 tries=0 pid status=0
  shift 5
  label=$label_ cases=$((cases + 1))
  record_victims
  local dir base
  dir=$(dirname "$out") base=$(basename "$out")
  while (( landed == 0 && tries < 40 )); do
    tries=$((tries + 1))
    rm -f "$out"
    # (Started through python, which gives it SIGINT's and SIGQUIT's default actions: bash
    # starts a background job with both ignored, and mini-gpt keeps a signal its parent ignores.)
    python3 -c "$exec_with_default_signals" \
      "$binary" "$@" < /dev/null > /dev/null 2> err.txt &
    pid=$!
    while kill -0 "$pid" 2> /dev/null; do
      if compgen -G "$dir/.$base.tmp.*" > /dev/null; then kill "-$signal" "$pid"; landed=1; break; fi
    done
    wait "$pid" 2> /dev/null; status=$?  # (the shell would report the signal on stderr)
  done
  if (( landed == 0 )); then
    note_failure "the signal never landed during the write in $tries tries"
  elif (( status != wanted && status != 0 )); then
    if (( status > 128 )); then crashes=$((crashes + 1)); fi
    note_failure "exit status $status after SIG$signal during the write, expected $wanted: $(tail -n 2 err.txt)"
  fi
  check_victims
}
long_text=$(corpus_text 0 16)
kill_during_write "SIGTERM while --html writes" TERM 143 page.html -- inspect-heads --checkpoint "$ckpt" --text "$long_text" --html page.html --threads 1
kill_during_write "SIGINT while --html writes" INT 130 page.html -- inspect-heads --checkpoint "$ckpt" --text "$long_text" --html page.html --threads 1
kill_during_write "SIGTERM while --svg writes" TERM 143 heads.svg -- inspect-heads --checkpoint "$ckpt" --text "$long_text" --svg heads.svg --threads 1
kill_during_write "SIGHUP while --svg writes" HUP 129 heads.svg -- inspect-heads --checkpoint "$ckpt" --text "$long_text" --svg heads.svg --threads 1

mkdir -p bench_tmp
runner=(env TMPDIR="$work/bench_tmp" python3 "$source_dir/scripts/benchmark.py") prog=benchmark
run_case "benchmark: leaves no temporary folder" 0 "" -- --binary "$binary" --rounds 1 --only-sampling --no-profile \
  --sample-tokens 2 --long-tokens 4 --threads 1 --reference /nonexistent/torch_reference.py
[[ -z $(ls -A bench_tmp) ]] || { clobbered=$((clobbered + 1)); note_failure "benchmark left $(ls -A bench_tmp | head -n 2 | tr '\n' ' ')"; rm -rf bench_tmp/*; }
run_case "benchmark: --rounds 0" 2 "--rounds: must be in [1, " -- --rounds 0
run_case "benchmark: --rounds abc" 2 "--rounds: expected an integer" -- --rounds abc
run_case "benchmark: --threads -1" 2 "--threads: must be in [1, 256]" -- --threads -1
run_case "benchmark: --threads 0" 2 "--threads: must be in [1, 256]" -- --threads 0
run_case "benchmark: --train-steps 0" 2 "--train-steps: must be in [1, " -- --train-steps 0
run_case "benchmark: --small-repeats 0" 2 "--small-repeats: must be in [1, " -- --small-repeats 0 --busy 1
runner=("$binary") prog=mini-gpt

if [[ -z ${ASAN_OPTIONS:-} ]]; then
  # A model wide enough for its products to run on a team (the tiny one runs every loop on
  # one thread, so libgomp would never start one). A thread's stack is RLIMIT_STACK (1 GB
  # here): 15 of them do not fit in 4 GB, and libgomp used to end the process at its first
  # parallel loop, after train had made the run folder, with its own line.
  wide=(--set model.n_embd=64 --set model.block_size=64 --set train.batch_size=32)
  "$binary" "${train[@]}" --out runs/wide --max-steps 2 "${wide[@]}" > /dev/null 2>&1 || note_failure "the wide run did not train"
  stack_limit=$(ulimit -S -s)
  ulimit -S -s 1000000; ulimit -S -v 4000000
  run_case "train --threads 16 when threads cannot start" 1 "cannot start 16 threads" -- \
    train --config "$config" --threads 16 --max-steps 3 --out runs/nothreads "${wide[@]}"
  [[ ! -e runs/nothreads ]] || note_failure "a failed thread start left the run folder runs/nothreads"
  run_case "sample --threads 16 when threads cannot start" 1 "cannot start 16 threads" -- \
    sample --checkpoint runs/wide/latest.safetensors --threads 16 --max-new-tokens 3 --prompt "$(corpus_text 0 40)"
  run_case "eval --threads 8 when threads cannot start" 1 "cannot start 8 threads" -- \
    eval --checkpoint runs/wide/latest.safetensors --text-file text.txt --threads 8
  ulimit -S -v unlimited; ulimit -S -s "$stack_limit"
fi

# Class 5: one process, started once: the loader, valgrind and qemu run all of it, and
# libgomp reads the short spin from the process's own getenv.
loader=$(ls /lib64/ld-linux-x86-64.so.2 2> /dev/null || true)
if [[ -n $loader && -z ${ASAN_OPTIONS:-} ]]; then
  runner=("$loader" "$binary")
  run_case "the loader runs eval" 0 "" -- eval --checkpoint "$ckpt" --text-file text.txt --threads 1
  run_case "the loader runs sample" 0 "" -- sample --checkpoint "$ckpt" --max-new-tokens 5 --threads 1
  run_case "the loader runs --version" 0 "" -- --version
  run_case "the loader: a refusal is one line" 2 "does not exist" -- eval --checkpoint "$ckpt" --text-file missing.txt
  runner=("$binary")
fi
if command -v valgrind > /dev/null && [[ -z ${ASAN_OPTIONS:-} ]]; then
  runner=(valgrind -q --error-exitcode=99 "$binary")
  run_case "valgrind runs --version" 0 "" -- --version
  grep -q '^mini-gpt ' out.txt || note_failure "valgrind mini-gpt --version printed: $(head -c 200 out.txt)"
  runner=("$binary")
fi
if command -v qemu-x86_64 > /dev/null && [[ -z ${ASAN_OPTIONS:-} ]]; then
  runner=(env OPENBLAS_CORETYPE=Nehalem qemu-x86_64 -cpu Nehalem "$binary")
  run_case "qemu -cpu Nehalem runs --version on the baseline kernels" 0 "" -- --version
  grep -q 'kernels: baseline (this CPU runs baseline;' out.txt || note_failure "under qemu -cpu Nehalem: $(tail -n 1 out.txt)"
  runner=("$binary")
fi
runner=(env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT OMP_DISPLAY_ENV=verbose "$binary")
run_case "libgomp reads the short spin, once" 0 "" -- --version
(( $(grep -c "GOMP_SPINCOUNT = '3000'" err.txt) == 1 && $(grep -c "GOMP_SPINCOUNT = '300000'" err.txt) == 0 )) ||
  note_failure "OMP_DISPLAY_ENV shows GOMP_SPINCOUNT $(grep -o "GOMP_SPINCOUNT = '[0-9]*'" err.txt | tr '\n' ' ')"
runner=(env OMP_DISPLAY_ENV=verbose GOMP_SPINCOUNT=77 "$binary")
run_case "a user's GOMP_SPINCOUNT is kept" 0 "" -- --version
grep -q "GOMP_SPINCOUNT = '77'" err.txt || note_failure "GOMP_SPINCOUNT=77 was not kept"

# Class 6: one error line and thread counts. libgomp's own warning about a bad
# OMP_NUM_THREADS is the runtime's (once); mini-gpt's line stays one; counts past 256 are cut.
runner=(env OMP_NUM_THREADS=abc "$binary")
cases=$((cases + 1)); label="a bad OMP_NUM_THREADS: libgomp's warning once, our error one line"; record_victims
timeout -s KILL "$timeout_s" "${runner[@]}" eval --checkpoint "$ckpt" --text-file missing.txt < /dev/null > out.txt 2> err.txt; status=$?
if (( status != 2 )); then note_failure "exit $status: $(tail -n 2 err.txt)"
elif (( $(grep -c '^mini-gpt: error: ' err.txt) != 1 )); then note_failure "not one error line: $(cat err.txt)"
elif (( $(grep -c 'libgomp' err.txt) > 1 )); then note_failure "libgomp warned $(grep -c libgomp err.txt) times"
else refused=$((refused + 1)); fi
check_victims
runner=(env OMP_NUM_THREADS=300 "$binary")
run_case "OMP_NUM_THREADS=300, --threads 0: at most 256" 0 "" -- train --config "$config" --threads 0 --max-steps 2 --out runs/omp300 \
  --set 'data.probe_path=""' 
grep -q '"threads":300' runs/omp300/metrics.jsonl 2> /dev/null && note_failure "metrics.jsonl records 300 threads"
run_case "OMP_NUM_THREADS=300 sample" 0 "" -- sample --checkpoint "$ckpt" --max-new-tokens 3
runner=("$binary")
run_case "sample to a closed pipe" 1 "cannot write to standard output" pipe -- sample --checkpoint "$ckpt" --max-new-tokens 2000 --threads 1
run_case "eval to a closed pipe" 1 "cannot write to standard output" pipe -- eval --checkpoint "$ckpt" --text-file text.txt --threads 1
run_case "inspect-heads to a closed pipe" 1 "cannot write to standard output" pipe -- "${inspect[@]}" --threads 1
run_case "inspect-heads --format json to a closed pipe" 1 "cannot write to standard output" pipe -- "${inspect[@]}" --format json --threads 1
run_case "--version to a closed pipe" 1 "cannot write to standard output" pipe -- --version
run_case "train to a closed pipe" 1 "cannot write to standard output" pipe -- "${train[@]}" --out runs/pipe --max-steps 2

# Class 9: messages. A 254-byte output name; the value --top-p was given; the file eval
# found too short; a resume that cannot go on; train's banner on stderr.
name254=$(printf 'n%.0s' {1..250}).svg name255=$(printf 'n%.0s' {1..251}).svg name256=$(printf 'n%.0s' {1..252}).svg
run_case "--svg with a 254-byte name" 0 "" -- "${inspect[@]}" --svg "$name254"
[[ -s $name254 ]] || note_failure "no $name254"
run_case "--svg with a 255-byte name" 0 "" -- "${inspect[@]}" --svg "$name255"
run_case "--svg with a 256-byte name" 1 "File name too long" -- "${inspect[@]}" --svg "$name256"
run_case "--html with a 254-byte name" 0 "" -- "${inspect[@]}" --html "${name254%.svg}.htm"
rm -f "$name254" "$name255" "${name254%.svg}.htm"
run_case "--top-p 1.0000001" 2 "found 1.0000001" -- sample --checkpoint "$ckpt" --top-p 1.0000001
run_case "--top-p 0" 2 "must be in (0, 1], found 0" -- sample --checkpoint "$ckpt" --top-p 0
run_case "--top-p -0.25" 2 "found -0.25" -- sample --checkpoint "$ckpt" --top-p -0.25
run_case "--temperature -0.5" 2 "found -0.5" -- sample --checkpoint "$ckpt" --temperature -0.5
corpus_text 0 2 > short.txt
run_case "eval on a too-short text names it" 2 "short.txt" -- eval --checkpoint "$ckpt" --text-file short.txt
printf '%s' "$text10" > short10.txt
run_case "eval on a text of 10 symbols (block 16) names it" 2 "short10.txt: text has 10 symbols" -- eval --checkpoint "$ckpt" --text-file short10.txt
craft "$ckpt" far_step.safetensors 'meta["step"] = "999999999999999999"'
mkdir -p runs/far && mv far_step.safetensors runs/far/latest.safetensors
run_case "resume from step 10^18-1" 2 "no step left to train to" -- "${train[@]}" --resume runs/far/latest.safetensors --max-steps 1000000000000
run_case "resume from step 10^18-1, default --max-steps" 2 "no step left to train to" -- "${train[@]}" --resume runs/far/latest.safetensors
run_case "train's banner on stderr" 0 "" -- "${train[@]}" --out runs/banner --max-steps 2
grep -q '; kernels: ' out.txt && note_failure "train's banner is on stdout"
grep -q '^mini-gpt .*; kernels: ' err.txt || note_failure "train's banner is not on stderr: $(head -n 1 err.txt)"

# Classes 2 and 8: the scripts. Usage errors are exit 2 and one line; nothing runs without
# bound (each case under ulimit -v 4 GB, so that an unbounded one fails, not the machine).
ulimit -S -v 4000000
runner=(python3 "$source_dir/scripts/fit_gelu_tail.py") prog=fit_gelu_tail
run_case "fit_gelu_tail: --degree -1" 2 "--degree: must be in [1, 30]" -- --degree -1
run_case "fit_gelu_tail: --degree 0" 2 "--degree: must be in [1, 30]" -- --degree 0
run_case "fit_gelu_tail: --degree 31" 2 "--degree: must be in [1, 30]" -- --degree 31
run_case "fit_gelu_tail: --degree 10^23" 2 "--degree: must be in [1, 30]" -- --degree 99999999999999999999999
run_case "fit_gelu_tail: --degree abc" 2 "--degree: expected an integer" -- --degree abc
run_case "fit_gelu_tail: --degree 8" 0 "" -- --degree 8
grep -q 'constexpr float kTail\[\]' out.txt || note_failure "fit_gelu_tail printed no constants"
runner=(python3 "$source_dir/scripts/check_layers.py") prog=check_layers
run_case "check_layers: a missing folder" 2 "is not a folder" -- "$work/no_such_src"
run_case "check_layers: a file" 2 "is not a folder" -- "$work/text.txt"
run_case "check_layers: two folders" 2 "unrecognized arguments" -- "$source_dir/src" "$source_dir/src"
run_case "check_layers: --bogus" 2 "unrecognized arguments" -- --bogus
cp -r "$source_dir/src" layers_src
mkfifo layers_src/core/fifo.h
ln -s /dev/zero layers_src/core/zero.cpp
ln -s ../../target.txt layers_src/core/outside.h
ln -s / layers_src/core/root_link
run_case "check_layers: a FIFO, /dev/zero, a link out of the tree and to / in it" 0 "" -- "$work/layers_src"
grep -q ' 0 upward, sideways or refused includes' out.txt || note_failure "check_layers: $(tail -n 1 out.txt)"
rm -rf layers_src
runner=("${plot[@]}") prog=plot_metrics
run_case "plot: --floor=-1e308" 2 "--floor: must be in [0, 1000]" -- runs/A --floor=-1e308 -o new.svg
run_case "plot: --floor 2000" 2 "--floor: must be in [0, 1000]" -- runs/A --floor 2000 -o new.svg
run_case "plot: --loss-max 1e309" 2 "--loss-max: must be a finite number" -- runs/A --loss-max 1e309 -o new.svg
run_case "plot: --floor 0.5 --loss-max 0.45000000000000007" 2 "is not at least 0.001 above the axis's bottom" -- \
  runs/A --floor 0.5 --loss-max 0.45000000000000007 -o new.svg
run_case "plot: --loss-max just above the bottom" 2 "is not at least 0.001 above" -- runs/A --floor 0.5 --loss-max 0.4501 -o new.svg
run_case "plot: --floor 0.5 --loss-max 0.46 draws" 0 "" -- runs/A --floor 0.5 --loss-max 0.46 -o narrow.svg
(( $(grep -c '<text' narrow.svg) < 200 )) || note_failure "narrow.svg holds $(grep -c '<text' narrow.svg) texts"
runner=(python3 "$source_dir/scripts/make_corpus.py") prog=make_corpus
run_case "make_corpus: --probe-items 400000" 2 "--probe-items: must be in [1, 200000]" -- --probe-seed 7 --probe-items 400000 --probe-out big.jsonl
run_case "make_corpus: --probe-items 200001" 2 "--probe-items: must be in [1, 200000]" -- --probe-seed 7 --probe-items 200001 --probe-out big.jsonl
runner=(/usr/bin/python3 "$source_dir/scripts/screenshot_explorer.py") prog=screenshot_explorer
echo "<html></html>" > tiny.html
run_case "screenshot_explorer: --head abc" 2 "--head: expected a head, L3.H1 or 3.1" -- tiny.html shot.png --head abc
run_case "screenshot_explorer: --head 1" 2 "--head: expected a head, L3.H1 or 3.1" -- tiny.html shot.png --head 1
run_case "screenshot_explorer: --head 1.-1" 2 "--head: expected a head, L3.H1 or 3.1" -- tiny.html shot.png --head 1.-1
run_case "screenshot_explorer: --query -1" 2 "--query: must be in [0, " -- tiny.html shot.png --query -1
run_case "screenshot_explorer: a missing page" 2 "cannot read" -- missing.html shot.png
ulimit -S -v unlimited
if [[ -x /usr/bin/chromium && -x /usr/bin/chromedriver ]] && /usr/bin/python3 -c 'import selenium' 2> /dev/null; then
  "$binary" "${inspect[@]}" --html shot_page.html > /dev/null 2>&1
  run_case "screenshot_explorer: --head 9.9 on a page of 1 x 2 heads" 2 "--head L9.H9: the page shows no such head" -- \
    shot_page.html shot.png --head 9.9
  run_case "screenshot_explorer: --query 999" 2 "--query 999: the page's text has no such position" -- \
    shot_page.html shot.png --query 999
fi
runner=("$binary") prog=mini-gpt

# --- 11. Issue 53: slow and greedy clients of serve, nothing non-finite printed, config
# values as float32 holds them, every terminating signal cleaned up, the lock before any
# write. Each part names the issue's class; the cases are its examples and their neighbours.
ulimit -S -c 0  # SIGQUIT's default action dumps a core: none here

# Class 1 and 2: the server bounds every client in time and size (tests/serve_hostile.py
# holds the clients). One server with --threads 1 --queue 2, so that an idle connection
# holding a thread would show at once.
serve_hostile() {  # LABEL CASE
  label=$1 cases=$((cases + 1))
  record_victims
  timeout -s KILL 90 python3 "$source_dir/tests/serve_hostile.py" "$serve_port" "$background" "$2" > out.txt 2> err.txt
  local status=$?
  if (( status == 137 )); then hangs=$((hangs + 1)); note_failure "no end within 90 s"
  elif (( status != 0 )); then note_failure "$(tail -n 2 out.txt err.txt | tr '\n' ' ' | cut -c1-400)"
  elif ! kill -0 "$background" 2> /dev/null; then crashes=$((crashes + 1)); note_failure "the server is gone: $(tail -n 2 serve_err.txt)"
  fi
  check_victims
}
"$binary" serve --checkpoint "$ckpt" --port 0 --threads 1 --queue 2 --text "$text10" > serve_out.txt 2> serve_err.txt &
background=$!
serve_port=""
for _ in $(seq 200); do
  serve_port=$(grep -o 'http://127.0.0.1:[0-9]*' serve_out.txt 2> /dev/null | head -n 1 | cut -d: -f3)
  [[ -n $serve_port ]] && break
  sleep 0.05
done
if [[ -z $serve_port ]]; then
  cases=$((cases + 1)); label="serve starts"; note_failure "serve did not start: $(tail -n 2 serve_err.txt)"
else
  serve_hostile "two clients trickling a header line every 2 s" slow-headers
  serve_hostile "two idle connections" idle-two
  serve_hostile "six idle connections at --threads 1 --queue 2" idle-many
  serve_hostile "80 idle connections, more than are read at once" idle-flood
  serve_hostile "a 64 MiB chunked body" chunked-64m
  serve_hostile "64,000 header lines of 1 KB" header-lines
  serve_hostile "a header line of 20,000 bytes" header-bytes
  serve_hostile "a GET with a 100,000-byte body" get-body
  serve_hostile "a GET with a 5-byte body" get-body-small
  for method in TRACE CONNECT PROPFIND FOO OPTIONS; do serve_hostile "method $method" "method-$method"; done
  serve_hostile "control characters in what an error quotes" control-characters
  serve_hostile "a request cut short" half-request-closed
fi
kill -TERM "$background" 2> /dev/null; wait "$background" 2> /dev/null; background=""

# Class 6: serve and the run it follows. A metrics.jsonl line over 4 MiB, written in three
# parts with polls between, is skipped and counted, never joined and drawn.
cp -r runs/A runs/watched
"$binary" serve --checkpoint "$ckpt" --port 0 --run runs/watched > serve_out.txt 2> serve_err.txt &
background=$!
serve_port=""
for _ in $(seq 200); do
  serve_port=$(grep -o 'http://127.0.0.1:[0-9]*' serve_out.txt 2> /dev/null | head -n 1 | cut -d: -f3)
  [[ -n $serve_port ]] && break
  sleep 0.05
done
cases=$((cases + 1)); label="a metrics.jsonl line over 4 MiB written in three parts"; record_victims
run_status() { python3 -c 'import json, sys, urllib.request; r = json.load(urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/api/run", timeout=10)); print(r["curves"]["evals_total"], r["curves"]["skipped"])' "$serve_port" 2> /dev/null; }
sleep 1.2
before=$(run_status)
python3 -c 'import sys; sys.stdout.write("{\"step\": 21, \"loss\": 9.5, \"val_loss\": 9.5, \"pad\": \"" + "x" * (5 << 19))' >> runs/watched/metrics.jsonl
sleep 1.2
python3 -c 'import sys; sys.stdout.write("x" * (4 << 19))' >> runs/watched/metrics.jsonl
sleep 1.2
printf '"}\n' >> runs/watched/metrics.jsonl
sleep 1.5
after=$(run_status)
if [[ -z $before || -z $after ]]; then note_failure "/api/run did not answer: $before / $after"
elif [[ ${before%% *} != "${after%% *}" ]]; then note_failure "the long line was drawn: evals $before -> $after"
elif (( ${after##* } != ${before##* } + 1 )); then note_failure "the long line was not counted as skipped: $before -> $after"
fi
check_victims
kill -TERM "$background" 2> /dev/null; wait "$background" 2> /dev/null; background=""
run_case "serve --text of invalid UTF-8" 2 "invalid UTF-8" -- serve --checkpoint "$ckpt" --port 0 --text $'\xff\xfe'
run_case "serve --text with a lone continuation byte" 2 "invalid UTF-8" -- serve --checkpoint "$ckpt" --port 0 --text $'a\x80b'
run_case "--logit-lens --top 50 lists 50 per stage" 0 "" -- inspect-heads --checkpoint "$ckpt" --logit-lens --text "$text10" --top 50 --format json --threads 1
python3 -c 'import json, sys; s = json.load(open(sys.argv[1]))["stages"]; sys.exit(0 if all(len(x["top"]) == 50 for x in s) else 1)' out.txt ||
  note_failure "--logit-lens --top 50 did not list 50 symbols per stage"

# Class 3: non-finite results of finite weights are refused where they arise. head.weight
# filled with 3e38: every weight finite, every logit of the vocabulary head inf or nan.
craft "$ckpt" head3e38.safetensors 'import array
e = header["head.weight"]["data_offsets"]
data[e[0]:e[1]] = array.array("f", [3e38] * ((e[1] - e[0]) // 4)).tobytes()'
h38=(--checkpoint head3e38.safetensors --threads 1)
run_case "head 3e38: inspect-heads --text" 1 "the loss on the text is" -- inspect-heads "${h38[@]}" --text "$text10"
grep -qi 'nan' out.txt && note_failure "inspect-heads printed a NaN: $(grep -i nan out.txt | head -n 1)"
run_case "head 3e38: inspect-heads --text --format json" 1 "the loss on the text is" -- inspect-heads "${h38[@]}" --text "$text10" --format json
grep -q 'null' out.txt && note_failure "inspect-heads printed null: $(grep null out.txt | head -n 1 | cut -c1-200)"
run_case "head 3e38: eval --probe" 1 "logit is" -- eval "${h38[@]}" --probe "$source_dir/data/probe.jsonl"
run_case "head 3e38: eval --probe --json" 1 "logit is" -- eval "${h38[@]}" --probe "$source_dir/data/probe.jsonl" --json
run_case "head 3e38: eval --text-file" 1 "the mean loss is" -- eval "${h38[@]}" --text-file text.txt
run_case "head 3e38: --roles --probe" 1 "logit is" -- inspect-heads "${h38[@]}" --roles --probe "$source_dir/data/probe.jsonl"
run_case "head 3e38: sample" 1 "logit is" -- sample "${h38[@]}" --max-new-tokens 5

# Class 4: a probe set the model cannot read (not one item's prompt and answer in its
# vocabulary) is refused by every probe mode, not scored as an empty table.
printf '{"prompt": "\u2603\u2603\u2603", "answer": "\u2603", "kind": "who", "source": 1}\n{"prompt": "xyz", "answer": "x", "kind": "what", "source": 0}\n' > alien_probe.jsonl
for mode in "--explain" "--roles" "--attribution" "--patch" "--patch --swap key"; do
  # shellcheck disable=SC2086  # $mode is one or three words
  run_case "a probe set outside the vocabulary: $mode --probe" 2 "none of its 2 items can be read" -- \
    inspect-heads --checkpoint "$ckpt" --threads 1 $mode --probe alien_probe.jsonl
done
run_case "a probe set outside the vocabulary: --text --probe --format json" 2 "none of its 2 items can be read" -- \
  inspect-heads --checkpoint "$ckpt" --threads 1 --text "$text10" --probe alien_probe.jsonl --format json

# Config values checked as float32 holds them (each refused before anything is written).
for pair in "train.beta2=0.99999999|train.beta2" "train.beta1=0.99999999|train.beta1" "model.dropout=0.99999999|model.dropout" \
            "train.eps=1e-300|train.eps" "train.eps=1e-40|train.eps" "model.norm_eps=1e-50|model.norm_eps" \
            "train.lr=1e39|train.lr" "train.grad_clip=1e39|train.grad_clip" "train.weight_decay=1e300|train.weight_decay" \
            "model.rope_base=1e-46|model.rope_base"; do
  run_case "--set ${pair%%|*}" 2 "${pair#*|} must be" -- "${train[@]}" --out runs/f32 --max-steps 2 --set "${pair%%|*}"
  [[ ! -e runs/f32 ]] || { note_failure "a refused config made its run folder"; rm -rf runs/f32; }
done
run_case "--set train.beta2=0.9999999 (below 1 in float32) trains" 0 "" -- "${train[@]}" --out runs/f32ok --max-steps 2 --set train.beta2=0.9999999

# Class 5: every signal whose default action ends the process removes the temporary.
kill_during_write "SIGQUIT while --html writes" QUIT 131 page.html -- inspect-heads --checkpoint "$ckpt" --text "$long_text" --html page.html --threads 1
kill_during_write "SIGUSR1 while --html writes" USR1 138 page.html -- inspect-heads --checkpoint "$ckpt" --text "$long_text" --html page.html --threads 1
kill_during_write "SIGUSR2 while --svg writes" USR2 140 heads.svg -- inspect-heads --checkpoint "$ckpt" --text "$long_text" --svg heads.svg --threads 1
kill_during_write "SIGALRM while --svg writes" ALRM 142 heads.svg -- inspect-heads --checkpoint "$ckpt" --text "$long_text" --svg heads.svg --threads 1
kill_during_write "SIGXFSZ while --html writes" XFSZ 153 page.html -- inspect-heads --checkpoint "$ckpt" --text "$long_text" --html page.html --threads 1
kill_during_write "SIGRTMIN while --html writes" RTMIN 162 page.html -- inspect-heads --checkpoint "$ckpt" --text "$long_text" --html page.html --threads 1
# train's checkpoint write: each try a fresh run folder of a model wide enough (n_embd 256,
# a 10 MB checkpoint) for its write to be caught, and at most 200 steps, so that every try
# ends by itself; SIGNAL is sent when the checkpoint's temporary appears.
for pair in QUIT:131 USR2:140; do
  sig=${pair%%:*} wanted=${pair#*:}
  cases=$((cases + 1)); label="SIG$sig while train writes a checkpoint"; record_victims
  landed=0 status=0
  for try in $(seq 10); do
    rm -rf "runs/sig$try"
    python3 -c "$exec_with_default_signals" "$binary" "${train[@]}" --out "runs/sig$try" --max-steps 200 --set train.checkpoint_interval=1 \
      --set model.n_embd=256 --set train.batch_size=1 --set train.eval_interval=1000 < /dev/null > /dev/null 2> err.txt &
    pid=$!
    started=$SECONDS
    while kill -0 "$pid" 2> /dev/null && (( SECONDS - started < 60 )); do
      if compgen -G "runs/sig$try/.latest.safetensors.tmp.*" > /dev/null; then kill "-$sig" "$pid"; landed=1; break; fi
    done
    wait "$pid" 2> /dev/null; status=$?
    (( landed )) && break
  done
  if (( ! landed )); then note_failure "the signal never landed during a checkpoint write"
  elif (( status != wanted )); then note_failure "exit status $status after SIG$sig, expected $wanted: $(tail -n 1 err.txt)"
  fi
  check_victims
  rm -rf runs/sig*
done

# Class 7: the scripts. main_job.sh --help starts no stage; benchmark.py --serve names a
# missing checkpoint (exit 2) and leaves no server behind when stopped while it starts.
runner=(bash "$source_dir/scripts/main_job.sh") prog=main_job
run_case "main_job.sh --help starts nothing" 0 "" -- --help
grep -q 'main_job: \[1/' out.txt && note_failure "main_job.sh --help started its first stage"
run_case "main_job.sh with an unknown argument" 2 "unknown argument" -- --fast
runner=(python3 "$source_dir/scripts/benchmark.py") prog=benchmark
run_case "benchmark --serve with a missing checkpoint" 2 "missing.safetensors" -- --binary "$binary" --serve --checkpoint missing.safetensors --repeats 1
runner=("$binary") prog=mini-gpt
for sig in TERM INT; do
  cases=$((cases + 1)); label="benchmark --serve stopped by SIG$sig while its server starts"; record_victims
  python3 -c 'import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execv(sys.executable, [sys.executable] + sys.argv[1:])' \
    "$source_dir/scripts/benchmark.py" --binary "$binary" --serve --checkpoint "$ckpt" --repeats 1000 < /dev/null > /dev/null 2> err.txt &
  bench=$!
  child=""
  for _ in $(seq 400); do child=$(pgrep -P "$bench" -f "serve --port 0" | head -n 1); [[ -n $child ]] && break; sleep 0.01; done
  kill "-$sig" "$bench"
  wait "$bench" 2> /dev/null; status=$?
  sleep 0.5
  if [[ -z $child ]]; then note_failure "the server never started"
  elif kill -0 "$child" 2> /dev/null; then note_failure "mini-gpt serve (pid $child) was left running"; kill -9 "$child"
  elif (( status != 143 && status != 130 )); then note_failure "exit $status: $(tail -n 1 err.txt)"
  fi
  check_victims
done

# Two trainings started into one new folder: the second is refused naming the first's pid
# (exit 2), or finds its run (exit 2), never "is not writable" (exit 1).
cases=$((cases + 1)); label="two trainings started into one new folder"; record_victims
for try in $(seq 8); do
  "$binary" "${train[@]}" --out "runs/race$try" --max-steps 3 < /dev/null > /dev/null 2> race_a.txt &
  a=$!
  "$binary" "${train[@]}" --out "runs/race$try" --max-steps 3 < /dev/null > /dev/null 2> race_b.txt &
  b=$!
  wait "$a"; sa=$?; wait "$b"; sb=$?
  for pair in "$sa:race_a.txt" "$sb:race_b.txt"; do
    s=${pair%%:*} f=${pair#*:}
    if (( s != 0 && s != 2 )); then note_failure "try $try: exit $s: $(tail -n 1 "$f")"; break 2; fi
  done
  (( sa == 0 || sb == 0 )) || { note_failure "try $try: neither trained: $(tail -n 1 race_a.txt) / $(tail -n 1 race_b.txt)"; break; }
done
check_victims
rm -rf runs/race*

# --- 9. MPI ranks started with different settings refuse before the first step (every
# rank one line, exit 2; a different model used to end in a double free, exit 134).
mpirun_bin=$(command -v mpirun || true)
tac "$corpus" > reversed.txt  # the same vocabulary, other batches
if [[ -n $mpirun_bin ]] && ldd "$binary" 2>/dev/null | grep -q libmpi && [[ -z ${ASAN_OPTIONS:-} ]]; then
  mpi=("$mpirun_bin" --oversubscribe --bind-to none --mca btl self,tcp --mca btl_tcp_if_include lo
       --mca oob_tcp_if_include lo)
  (( EUID == 0 )) && mpi+=(--allow-run-as-root)
  for pair in "--seed 8|train.seed is 7 on rank 0 but 8 on rank 1" \
              "--set model.n_embd=32|model.n_embd is 16 on rank 0 but 32 on rank 1" \
              "--set data.path=$work/reversed.txt|corpus is train "; do
    extra=${pair%%|*} phrase=${pair#*|}
    cases=$((cases + 1)); label="MPI ranks with different settings: $extra"
    record_victims
    rm -rf runs/mpi
    # shellcheck disable=SC2086  # $extra is two words
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout -s KILL "$timeout_s" "${mpi[@]}" \
      -np 1 "$binary" "${train[@]}" --out runs/mpi --max-steps 5 : -np 1 "$binary" "${train[@]}" --out runs/mpi --max-steps 5 $extra \
      < /dev/null > out.txt 2> err.txt
    status=$?
    if (( status == 137 )); then hangs=$((hangs + 1)); note_failure "no exit within ${timeout_s} s"
    elif (( status != 2 )); then note_failure "exit status $status, expected 2: $(grep -a 'error' err.txt | head -n 2)"
    elif (( $(grep -c "^mini-gpt: error: rank [01] of 2: ranks disagree before the first step: .*$phrase" err.txt) != 2 )); then
      note_failure "not one line per rank naming the key: $(grep -a 'mini-gpt' err.txt | head -n 3)"
    elif [[ -e runs/mpi/metrics.jsonl ]]; then note_failure "a step was written"
    else refused=$((refused + 1))
    fi
    check_victims
  done
else
  echo "hostile_test: no mpirun, a build without MPI or a sanitizer build: the MPI cases are skipped" >&2
fi

echo "hostile_test: $cases cases, $refused refused with one line, crashes $crashes, hangs $hangs," \
     "clobbered files $clobbered, other failures $((failures - crashes - hangs - clobbered))"
(( failures == 0 ))
