#!/usr/bin/env bash
# Kills (issue 7): a training run is SIGKILLed at 20 seeded random moments and resumed
# from latest.safetensors after each, and must end bit for bit where a run that was never
# killed ends. Every other kill is timed (a seeded delay after launch: during start-up,
# a step, an evaluation or a checkpoint write); the others are aimed at checkpoint
# writes by polling for the writer's temporary file ".NAME.tmp.PID" and killing on sight.
# After each kill: latest (and best) still load with `mini-gpt eval`, and the run
# directory holds nothing but the run's files and hidden temporaries of the writers'
# naming, which the next run removes. At the end no temporary is left and latest, best,
# every evaluation's kept model (evals/) and metrics.jsonl (timings aside) equal the
# uninterrupted run's.
#
#   bash tests/kill_test.sh BUILD/mini-gpt     (ctest runs it as kill_test)
# KILL_TEST_SEED and KILL_TEST_KILLS change the seed and the count.
set -euo pipefail

binary=${1:?usage: kill_test.sh PATH/TO/mini-gpt}
source_dir=$(cd "$(dirname "$0")/.." && pwd)
kills_wanted=${KILL_TEST_KILLS:-20}
prng_state=${KILL_TEST_SEED:-20240607}
started=$EPOCHREALTIME

work=$(mktemp -d "${TMPDIR:-/tmp}/mini-gpt-kill-test.XXXXXX")
pid=""
cleanup() {
  if [[ -n $pid ]]; then kill -9 "$pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

fail() {
  echo "kill_test: FAILED: $*" >&2
  exit 1
}

# The tiny config, made long enough to be killed 20 times: a checkpoint every 4 steps
# (each one is a fsync'ed write, so a good share of the run is spent writing them) and
# dropout on, so the resumed dropout RNG is checked too. One thread: the same seed and
# thread count give the same arithmetic.
run=$work/run
max_steps=800
train_args=(train --config "$source_dir/configs/tiny.json" --out "$run" --threads 1 --seed 11
            --max-steps $max_steps --set train.checkpoint_interval=4 --set train.eval_interval=100
            --set model.dropout=0.1)

# A few whole lines of the corpus (whole lines are whole UTF-8) for `eval`.
head -n 40 "$source_dir/data/corpus.txt" > "$work/eval.txt"

# A 31-bit linear congruential generator (the ANSI C constants), so the moments depend
# only on the seed, not on bash's $RANDOM.
random_below() {  # sets `drawn` to a number in [0, $1) (no subshell: the state must advance)
  prng_state=$(( (prng_state * 1103515245 + 12345) % 2147483648 ))
  drawn=$(( (prng_state >> 8) % $1 ))
}
now_ms() { local t=${EPOCHREALTIME/./}; echo $(( t / 1000 )); }

# The files a run directory may hold between runs: the run's own, and the hidden
# temporaries of the atomic writer (".NAME.tmp.PID"), and the lock file ".lock".
check_run_dir_contents() {
  local name
  for path in "$run"/* "$run"/.[!.]*; do
    [[ -e $path ]] || continue
    name=${path##*/}
    case $name in
      latest.safetensors | best.safetensors | metrics.jsonl | config.json | heads.html) ;;
      .latest.safetensors.tmp.[0-9]* | .best.safetensors.tmp.[0-9]* | .metrics.jsonl.tmp* | .config.json.tmp* | .write-test) ;;
      .heads.html.tmp.[0-9]*) ;;  # the head explorer, written after the last step (a kill may catch it half-way)
      .lock) ;;  # the run's flock (io/dir_lock.h); the kernel released it with the killed holder
      evals) ;;  # every evaluation's model (io/evaluation_models.h), checked below
      *) fail "unexpected file $name in the run directory after kill $kills" ;;
    esac
  done
  for path in "$run"/evals/* "$run"/evals/.[!.]*; do
    [[ -e $path ]] || continue
    name=${path##*/}
    case $name in
      step_[0-9][0-9][0-9][0-9][0-9][0-9][0-9].safetensors) ;;
      .step_[0-9]*.safetensors.tmp.[0-9]*) ;;  # a kept model's write the kill cut short
      *) fail "unexpected file evals/$name in the run directory after kill $kills" ;;
    esac
  done
}

temporaries() { # prints the temporary files in the run directory and its evals/, space-separated
  local found=()
  for path in "$run"/.[!.]*; do [[ -e $path && ${path##*/} != .lock ]] && found+=("${path##*/}"); done
  for path in "$run"/evals/.[!.]*; do [[ -e $path ]] && found+=("evals/${path##*/}"); done
  echo "${found[*]:-}"
}

latest_step() {  # the step in latest.safetensors's metadata
  head -c 65536 "$run/latest.safetensors" | grep -ao '"step":"[0-9]*"' | tr -dc 0-9
}

checks_load() {  # $1 checkpoint
  "$binary" eval --checkpoint "$1" --text-file "$work/eval.txt" --json > "$work/eval.json" 2> "$work/eval.err" ||
    fail "after kill $kills, $1 does not load: $(cat "$work/eval.err")"
}

# Whether process $1 still runs: an exited child stays a zombie until waited for, and
# `kill -0` still finds it.
running() {
  local stat
  read -r stat 2> /dev/null < "/proc/$1/stat" || return 1
  [[ $stat != *") Z "* ]]
}

# Waits for the $2-th checkpoint write of process $1 and SIGKILLs it while the temporary
# file is there. Returns 1 when the process ended first.
kill_at_checkpoint_write() {
  local target=$1 wanted=$2 seen=0 inside=0 polls=0
  local latest_temp="$run/.latest.safetensors.tmp.$target" best_temp="$run/.best.safetensors.tmp.$target"
  while true; do
    if [[ -e $latest_temp || -e $best_temp ]]; then
      if (( !inside )); then
        inside=1
        seen=$(( seen + 1 ))
        if (( seen == wanted )); then
          kill -9 "$target"
          return 0
        fi
      fi
    else
      inside=0
    fi
    if (( ++polls % 256 == 0 )) && ! running "$target"; then return 1; fi
  done
}

# 1. The run that is never killed; its duration scales the timed kills.
t0=$(now_ms)
"$binary" "${train_args[@]}" > "$work/reference.out" 2> "$work/reference.err" ||
  fail "the uninterrupted run failed: $(tail -n 1 "$work/reference.err")"
# Up to its last checkpoint: after it the run only writes heads.html (the head explorer),
# and a timed kill there would find the run already trained.
duration_ms=$(( $(date -r "$run/latest.safetensors" +%s%3N) - t0 ))
mv "$run" "$work/reference"  # same --out for both runs, so even the metadata must match

# 2. The same run, killed again and again.
kills=0 timed=0 aimed=0 mid_write=0 stale_removed=0 finished=0
while (( kills < kills_wanted )); do
  stale=$(temporaries)
  step_before=-1
  if [[ -e $run/latest.safetensors ]]; then
    step_before=$(latest_step)
    "$binary" "${train_args[@]}" --resume "$run/latest.safetensors" > "$work/train.out" 2> "$work/train.err" &
  else
    "$binary" "${train_args[@]}" > "$work/train.out" 2> "$work/train.err" &
  fi
  pid=$!
  if [[ ! -e $run/latest.safetensors ]]; then
    # Until the first checkpoint there is nothing to resume from: kill only after it.
    until [[ -e $run/latest.safetensors ]] || ! running "$pid"; do sleep 0.01; done
    [[ -e $run/latest.safetensors ]] || fail "the first run wrote no checkpoint: $(tail -n 1 "$work/train.err")"
  fi
  if (( kills % 2 == 0 )); then
    # Timed: uniform over [0, duration/10) after launch (start-up included, where the
    # process is still loading the corpus and the checkpoint).
    random_below $(( duration_ms / 10 + 1 ))
    sleep "$(( drawn / 1000 )).$(printf %03d $(( drawn % 1000 )))"
    running "$pid" && kill -9 "$pid" && timed=$(( timed + 1 ))
  else
    random_below 4
    kill_at_checkpoint_write "$pid" $(( 1 + drawn )) && aimed=$(( aimed + 1 ))
  fi
  set +e
  { wait "$pid"; } 2> /dev/null  # (bash would report each "Killed" job)
  status=$?
  set -e
  killed_pid=$pid
  pid=""
  if (( status == 0 )); then finished=1; break; fi
  # A SIGKILL gives 137; a zombie that `kill` still found may have exited on its own first.
  (( status == 137 )) || fail "the training process exited with $status, not killed: $(tail -n 1 "$work/train.err")"
  kills=$(( kills + 1 ))
  # Its own half-written checkpoint, when the kill landed inside a write.
  if [[ -e $run/.latest.safetensors.tmp.$killed_pid || -e $run/.best.safetensors.tmp.$killed_pid ]]; then
    mid_write=$(( mid_write + 1 ))
  fi
  # A run that got as far as writing a checkpoint had started up, and so must have
  # removed the temporaries earlier kills left.
  if [[ -n $stale ]] && (( $(latest_step) != step_before )); then
    for name in $stale; do
      [[ ! -e $run/$name ]] || fail "after kill $kills, $name from an earlier kill is still in the run directory"
    done
    stale_removed=$(( stale_removed + 1 ))
  fi
  check_run_dir_contents
  checks_load "$run/latest.safetensors"
  [[ -e $run/best.safetensors ]] && checks_load "$run/best.safetensors"
done
(( finished == 0 )) || fail "the run finished after only $kills kills; make it longer"
step_at_last_kill=$(latest_step)

# 3. The last resume runs to the end.
"$binary" "${train_args[@]}" --resume "$run/latest.safetensors" > "$work/train.out" 2> "$work/train.err" ||
  fail "the final resume failed: $(tail -n 1 "$work/train.err")"
remaining=$(temporaries)
[[ -z $remaining ]] || fail "temporary files left in the finished run directory: $remaining"
check_run_dir_contents

# 4. Bit for bit: the data sections (every tensor, moments included), then the headers
# (names, shapes, offsets and metadata: step, RNG and sampler states), of latest and best.
data_section() {  # $1 file: prints the bytes after the 8-byte length and the header
  local header_bytes
  header_bytes=$(od -An -tu8 -N8 "$1" | tr -d ' ')
  tail -c +$(( 9 + header_bytes )) "$1"
}
for name in latest.safetensors best.safetensors; do
  cmp -s <(data_section "$work/reference/$name") <(data_section "$run/$name") ||
    fail "$name: the tensor data differ from the uninterrupted run's"
  cmp -s "$work/reference/$name" "$run/$name" || fail "$name: the header differs from the uninterrupted run's"
done
# Every evaluation's kept model, byte for byte (the same --out: the same metadata too).
kept=$(cd "$work/reference/evals" && ls)
[[ $kept == "$(cd "$run/evals" && ls)" ]] || fail "evals/ holds $(cd "$run/evals" && ls | tr '\n' ' '), not $kept"
for name in $kept; do
  cmp -s "$work/reference/evals/$name" "$run/evals/$name" || fail "evals/$name differs from the uninterrupted run's"
done
for dir in "$work/reference" "$run"; do
  "$binary" eval --checkpoint "$dir/latest.safetensors" --text-file "$work/eval.txt" --json > "$dir.eval.json"
done
cmp -s "$work/reference.eval.json" "$run.eval.json" ||
  fail "eval losses differ: $(cat "$work/reference.eval.json") vs $(cat "$run.eval.json")"
# metrics.jsonl replays the same steps, losses, rates and val losses; only timings differ.
strip_timings() { sed -E 's/"(elapsed_s|tokens_per_s)":[^,}]*,?//g' "$1"; }
cmp -s <(strip_timings "$work/reference/metrics.jsonl") <(strip_timings "$run/metrics.jsonl") ||
  fail "metrics.jsonl differs from the uninterrupted run's (timings aside)"

elapsed_ms=$(( $(now_ms) - ${started/./} / 1000 ))
echo "kill_test: survived $kills kills ($timed timed, $aimed aimed at checkpoint writes; $mid_write landed" \
     "mid-write and left a temporary file; $stale_removed times a resumed run was seen removing" \
     "earlier ones); final latest, best, the $(echo $kept | wc -w) kept evaluation models and" \
     "metrics equal the uninterrupted run's bit for bit ($(cat "$run.eval.json")); the last kill" \
     "came after step $step_at_last_kill of $max_steps;" \
     "uninterrupted run ${duration_ms} ms, whole test $(( elapsed_ms / 1000 )).$(printf %03d $(( elapsed_ms % 1000 ))) s"
