"""`benchmark.py --nanogpt PATH --text FILE`: quality per minute against nanoGPT's own code.

    python3 scripts/benchmark.py --nanogpt ~/nanoGPT --text data/tinyshakespeare.txt   # 2 threads each
    # a quick check that it runs end to end (its figures mean nothing):
    python3 scripts/benchmark.py --nanogpt ~/nanoGPT --text data/tinyshakespeare.txt --nanogpt-iters 20

PATH is a checkout of github.com/karpathy/nanoGPT (the project ships none of its code). Its
train.py, model.py, configurator.py, config/train_shakespeare_char.py and
data/shakespeare_char/prepare.py are copied into a scratch folder, so nothing is written into
the checkout; FILE is copied there as data/shakespeare_char/input.txt, prepare.py encodes it,
and /usr/bin/python3 runs nanoGPT's README CPU recipe:

    train.py config/train_shakespeare_char.py --device=cpu --compile=False --eval_iters=20
      --log_interval=1 --block_size=64 --batch_size=12 --n_layer=4 --n_head=4 --n_embd=128
      --max_iters=2000 --lr_decay_iters=2000 --dropout=0.0 --always_save_checkpoint=True

(--always_save_checkpoint=True only makes it keep the model of its last evaluation, after
2,000 updates, rather than the best one; training is unchanged). Its environment is
benchmark.py's fair one for PyTorch (OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE removed, the
fastest OpenBLAS core this CPU runs, OpenBLAS's OpenMP build) with OMP_NUM_THREADS and
OPENBLAS_NUM_THREADS at --threads (torch takes its thread count from OMP_NUM_THREADS).

Then mini-gpt trains configs/shakespeare.json (the same shape and schedule: 4 layers, 4
heads, 128 wide, block 64, batch 12, lr 1e-3 cosine to 1e-4 after 100 warm-up steps) at
--threads for nanoGPT's wall time: a 250-step run (evaluating and checkpointing every 50
steps) measures the time of a step, of an evaluation with its checkpoints, and of the start
and end, and train.max_steps is the most steps that fit nanoGPT's wall time from process
start to exit (the cosine schedule spans them). Both wall times are printed.

The same validation text for both. nanoGPT's prepare.py takes the last 10 % of the text's
characters, data[int(n * 0.9):]; mini-gpt's data.val_fraction 0.1 takes symbols
[floor((1 - 0.1) * n), n), the same split for a text without carriage returns (which
prepare.py would turn into newlines, so such a text is refused). Each side's own figure
(nanoGPT's "val loss", mini-gpt's final val loss) is a mean over 20 batches of random windows
of that tail, drawn differently. So both final models are also scored on the same windows:
`mini-gpt eval --text-file TAIL` (non-overlapping 64-symbol windows from the tail's start,
every symbol after the first predicted: 1,742 windows, 111,488 predictions on
tinyshakespeare) and the same windows through nanoGPT's own model.py on its final
checkpoint. That pair is the comparison.
"""

import json
import math
import os
import re
import shutil
import subprocess
import tempfile
import time

import script_io
from bench_common import (CORENAME_CODE, OPENBLAS_OPENMP, ROOT, fair_env, kernels_report, last_json, openblas_choice,
                          metrics_by_step, print_machine, run, source_commit, timed_rate, tokens_per_step,
                          torch_available)

NANOGPT_FILES = ("train.py", "model.py", "configurator.py", "config/train_shakespeare_char.py",
                 "data/shakespeare_char/prepare.py")
CONFIG = os.path.join(ROOT, "configs", "shakespeare.json")
RATE_STEPS, RATE_EVAL_INTERVAL = 250, 50

# nanoGPT's final checkpoint on mini-gpt eval's windows: argv = checkpoint, meta.pkl, text.
NANOGPT_EVAL = CORENAME_CODE + """
import json, pickle, sys
import torch
from model import GPT, GPTConfig
ckpt = torch.load(sys.argv[1], map_location="cpu")
model = GPT(GPTConfig(**ckpt["model_args"]))
prefix = "_orig_mod."
model.load_state_dict({k[len(prefix):] if k.startswith(prefix) else k: v for k, v in ckpt["model"].items()})
model.eval()
with open(sys.argv[2], "rb") as f:
    stoi = pickle.load(f)["stoi"]
with open(sys.argv[3], encoding="utf-8", newline="") as f:
    ids = torch.tensor([stoi[c] for c in f.read()], dtype=torch.long)
T = ckpt["model_args"]["block_size"]
windows = (len(ids) - 1) // T  # as mini-gpt's evaluate_windows: inputs [kT, kT+T), targets one later
total = 0.0
with torch.no_grad():
    for first in range(0, windows, 64):
        B = min(64, windows - first)
        x = ids[first * T:(first + B) * T].view(B, T)
        y = ids[first * T + 1:(first + B) * T + 1].view(B, T)
        _, loss = model(x, y)
        total += loss.item() * B * T
print(json.dumps({"loss": total / (windows * T), "predictions": windows * T, "iter_num": ckpt["iter_num"],
                  "threads": torch.get_num_threads(), "torch": torch.__version__, "openblas_core": openblas_cores()}))
"""


def minutes(seconds):
    return f"{int(seconds // 60)}m{seconds % 60:04.1f}s"


def nanogpt_commit(checkout):
    try:
        proc = subprocess.run(["git", "-C", checkout, "rev-parse", "HEAD"], capture_output=True, text=True)
    except OSError:
        return "unknown (no git)"
    return proc.stdout.strip() if proc.returncode == 0 else "unknown (not a git checkout)"


def scratch_copy(checkout, scratch, text):
    """nanoGPT's files that the recipe runs, and the text as its input.txt, in `scratch`."""
    for name in NANOGPT_FILES:
        source = os.path.join(checkout, name)
        if not os.path.isfile(source):
            raise script_io.ScriptError(f"--nanogpt {script_io.quoted(checkout)} is not a nanoGPT checkout: "
                                        f"no {name}", 2)
        os.makedirs(os.path.dirname(os.path.join(scratch, name)), exist_ok=True)
        shutil.copyfile(source, os.path.join(scratch, name))
    script_io.write_atomically(os.path.join(scratch, "data", "shakespeare_char", "input.txt"), text, "input.txt")


def train_nanogpt(args, scratch, env):
    """Runs the recipe; returns (wall seconds, nanoGPT's last "val loss", its step)."""
    iters = args.nanogpt_iters
    # The recipe evaluates (and, with always_save_checkpoint, saves) every 250 iterations; a
    # shorter smoke run evaluates at its end instead, so that there is a checkpoint to score.
    eval_interval = 250 if iters % 250 == 0 else iters
    cmd = ["/usr/bin/python3", "train.py", "config/train_shakespeare_char.py", "--device=cpu", "--compile=False",
           "--eval_iters=20", "--log_interval=1", "--block_size=64", "--batch_size=12", "--n_layer=4", "--n_head=4",
           "--n_embd=128", f"--max_iters={iters}", f"--lr_decay_iters={iters}", "--dropout=0.0",
           "--always_save_checkpoint=True"] + ([f"--eval_interval={eval_interval}"] if eval_interval != 250 else [])
    start = time.perf_counter()
    stdout, _, _ = run(cmd, env=env, cwd=scratch)
    wall = time.perf_counter() - start
    evals = re.findall(r"^step (\d+): train loss [\d.]+, val loss ([\d.]+)$", stdout, re.M)
    if not evals:
        raise script_io.ScriptError(f"nanoGPT printed no evaluation: {stdout.strip()[-300:]}", 1)
    return wall, float(evals[-1][1]), int(evals[-1][0])


def steps_for(args, work, text_path, wall_budget):
    """train.max_steps that fits wall_budget, from a RATE_STEPS-step run of the same config."""
    out_dir = os.path.join(work, "mini-gpt-rate")
    start = time.perf_counter()
    run([args.binary, "train", "--config", CONFIG, "--out", out_dir, "--threads", str(args.threads),
         "--max-steps", str(RATE_STEPS), "--set", f"data.path={text_path}",
         "--set", f"train.eval_interval={RATE_EVAL_INTERVAL}", "--set", f"train.checkpoint_interval={RATE_EVAL_INTERVAL}"])
    wall = time.perf_counter() - start
    metrics = metrics_by_step(os.path.join(out_dir, "metrics.jsonl"))
    symbols_per_step = tokens_per_step(CONFIG)
    step_s = symbols_per_step / timed_rate(os.path.join(out_dir, "metrics.jsonl"), 20, RATE_STEPS, CONFIG)
    all_steps_s = RATE_STEPS * symbols_per_step / metrics[RATE_STEPS]["tokens_per_s"]
    # elapsed_s at the last step: the loop's wall time, with the evaluations before it.
    evaluation_s = max(0.0, metrics[RATE_STEPS]["elapsed_s"] - all_steps_s) / (RATE_STEPS // RATE_EVAL_INTERVAL - 1)
    fixed_s = wall - metrics[RATE_STEPS]["elapsed_s"]  # start-up, the last evaluation, the files at the end
    with open(CONFIG, encoding="utf-8") as f:
        eval_interval = json.load(f)["train"]["eval_interval"]
    per_step = step_s + evaluation_s / eval_interval
    steps = max(1, math.floor((wall_budget - fixed_s) / per_step))
    shutil.rmtree(out_dir)
    return steps, f"{step_s * 1000:.1f} ms a step, {evaluation_s:.2f} s an evaluation, {fixed_s:.1f} s start and end"


def compare(args):
    if args.threads < 1:
        raise script_io.ScriptError(f"--threads must be at least 1 with --nanogpt, found {args.threads}", 2)
    if not torch_available():
        raise script_io.ScriptError("--nanogpt needs PyTorch for /usr/bin/python3 (bash scripts/setup_reference.sh)", 1)
    checkout = os.path.abspath(args.nanogpt)
    text_path = os.path.abspath(args.text)
    text = script_io.read_text(text_path, "--text", 256 << 20)
    if "\r" in text:
        raise script_io.ScriptError(f"--text {script_io.quoted(args.text)} holds carriage returns, which nanoGPT's "
                                    "prepare.py reads as newlines: the two validation splits would differ", 2)
    n = len(text)
    n_train = int(n * 0.9)  # prepare.py's split
    if n_train != math.floor((1.0 - 0.1) * n) or n - n_train < 65:
        raise script_io.ScriptError(f"--text: {n} symbols do not split the same way for both, with 65 to validate", 2)
    threads = str(args.threads)
    with tempfile.TemporaryDirectory(prefix="mini-gpt-nanogpt-") as work:
        scratch = os.path.join(work, "nanogpt")
        scratch_copy(checkout, scratch, text)
        val_path = os.path.join(work, "val.txt")
        script_io.write_atomically(val_path, text[n_train:], "validation text")
        kernels = kernels_report(args, work)
        openblas_core, openblas_trials = openblas_choice(args.threads)
        old_path = [p for p in os.environ.get("LD_LIBRARY_PATH", "").split(":") if p]
        env = fair_env(OMP_NUM_THREADS=threads, OPENBLAS_NUM_THREADS=threads, MKL_NUM_THREADS=threads,
                       LD_LIBRARY_PATH=":".join([OPENBLAS_OPENMP] + old_path),
                       **({"OPENBLAS_CORETYPE": openblas_core} if openblas_core else {}))
        run(["/usr/bin/python3", os.path.join("data", "shakespeare_char", "prepare.py")], env=env, cwd=scratch)

        nano_wall, nano_own, nano_step = train_nanogpt(args, scratch, env)
        stdout, _, _ = run(["/usr/bin/python3", "-c", NANOGPT_EVAL, os.path.join("out-shakespeare-char", "ckpt.pt"),
                            os.path.join("data", "shakespeare_char", "meta.pkl"), val_path], env=env, cwd=scratch)
        nano = last_json(stdout)

        steps, rate_note = steps_for(args, work, text_path, nano_wall)
        out_dir = os.path.join(work, "mini-gpt")
        start = time.perf_counter()
        stdout, _, _ = run([args.binary, "train", "--config", CONFIG, "--out", out_dir, "--threads", threads,
                            "--max-steps", str(steps), "--set", f"data.path={text_path}"])
        ours_wall = time.perf_counter() - start
        ours_own = float(re.search(r"^final val loss ([\d.]+)", stdout, re.M).group(1))
        stdout, _, _ = run([args.binary, "eval", "--checkpoint", os.path.join(out_dir, "latest.safetensors"),
                            "--text-file", val_path, "--json", "--threads", threads])
        ours = last_json(stdout)
    if ours["predictions"] != nano["predictions"]:
        raise script_io.ScriptError(f"the two scored {ours['predictions']} and {nano['predictions']} predictions", 1)

    tokens = 12 * 64
    print(f"nanoGPT {nanogpt_commit(checkout)} (README CPU recipe, {args.nanogpt_iters} iterations, torch "
          f"{nano['torch']} at {nano['threads']} threads, OpenBLAS core {', '.join(nano['openblas_core']) or 'unknown'}) "
          f"against mini-gpt {source_commit()} (configs/shakespeare.json, --threads {threads}: {steps:,} steps from "
          f"a {RATE_STEPS}-step rate run, {rate_note})")
    print(f"validation: the last 10 % of {args.text} ({n - n_train:,} symbols); the same windows for both: "
          f"{ours['predictions']:,} predictions in non-overlapping 64-symbol windows (mini-gpt eval's)\n")
    print("| | steps | tokens seen | wall time, start to exit | val loss, same windows | own val estimate (20 random batches) |")
    print("| --- | --- | --- | --- | --- | --- |")
    print(f"| nanoGPT | {nano['iter_num']:,} | {nano['iter_num'] * tokens:,} | {minutes(nano_wall)} | "
          f"**{nano['loss']:.4f}** | {nano_own:.4f} (step {nano_step}) |")
    print(f"| mini-gpt | {steps:,} | {steps * tokens:,} | {minutes(ours_wall)} ({100 * ours_wall / nano_wall:.0f} % "
          f"of nanoGPT's) | **{ours['loss']:.4f}** | {ours_own:.4f} (step {steps}) |")
    print_machine(kernels, openblas_core, openblas_trials, set(nano["openblas_core"]), "nanoGPT's PyTorch")
