#!/usr/bin/env bash
# Hostile use (issue 19): mini-gpt run on crafted inputs, one class of abuse after another:
# run directories trained over, outputs that would clobber what is at the path, inputs
# that block or never end (FIFOs, /dev/zero, huge counts), JSON nested 60,000 deep,
# failed writes to stdout, overrides whose order used to matter, seeds and strings out of
# range (NUL, invalid UTF-8), SIGTERM, non-finite or malformed checkpoints; and (issue 33)
# the Python scripts held to the same rules, run folders that would crash or stall the
# head explorer, MPI ranks started with different settings, error text that echoes
# control characters or 50 MB values, inspect-heads --compare on texts it used to take.
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
# ("file" by default, "full" for /dev/full, "closed" for a closed descriptor). The command
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
