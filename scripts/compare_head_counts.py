#!/usr/bin/env python3
"""One head against two (and four): lesson 12's question put to the corpus. Trains the same
config at n_head 1, 2 and 4 (D stays 64, so d = 64, 32, 16), then prints one table per run
and the heads of the runs matched across head counts.

    python3 scripts/compare_head_counts.py                 # short: 2,000 steps per run
    python3 scripts/compare_head_counts.py --full          # the config's whole budget (the default: 19,531 steps)
    python3 scripts/compare_head_counts.py --steps 300 --heads 1,2 --out runs/heads_short

Each run trains into OUT/h1, OUT/h2, OUT/h4 (`mini-gpt train --set model.n_head=H`; its
stdout is kept in OUT/hH.train.txt; a run directory that already holds a finished run of that
length is read, not trained again). Per
run it prints: the probe accuracy per question kind (and any other `probe_accuracy_by_...`
breakdown metrics.jsonl holds, such as distractor tags), the validation loss over the
validation rows' entropy floor, the parameters, the attention memory (the projected_weights
one text and one batch keep: n_layer x H x T x T floats), the training time, and the run's
`inspect-heads --explain`. Then `inspect-heads --compare` of each run against the next
(h1 against h2, h2 against h4), whose heads differ in number. --plot FILE draws the runs'
curves with scripts/plot_metrics.py.

Errors are one line, `compare_head_counts: error: ...`: exit 2 for bad usage, 1 when a
command fails (its own error line is quoted).
"""

import argparse
import json
import os
import re
import subprocess
import sys

import script_io

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SHORT_STEPS = 2000


def heads_list(text):
    try:
        heads = [int(h) for h in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be head counts separated by commas, found {script_io.quoted(text)}")
    if not heads or any(h < 1 or h > 64 for h in heads) or len(set(heads)) != len(heads):
        raise argparse.ArgumentTypeError(f"must be distinct head counts in [1, 64], found {script_io.quoted(text)}")
    return heads


def run(command, what):
    """Runs COMMAND, returns its stdout; a failure is one line naming WHAT and its last error line."""
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if result.returncode != 0:
        lines = [l for l in result.stderr.splitlines() if l.strip()]
        raise script_io.ScriptError(f"{what} failed (exit {result.returncode}): {lines[-1] if lines else 'no message'}",
                                    2 if result.returncode == 2 else 1)
    return result.stdout


def last_evaluation(run_dir):
    """The last metrics.jsonl line with a val_loss, and the last line: (evaluation, last)."""
    path = os.path.join(run_dir, "metrics.jsonl")
    text = script_io.read_text(path, "metrics.jsonl", 256 << 20)
    evaluation = last = None
    for line in text.splitlines():
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(row, dict):
            last = row
            if "val_loss" in row:
                evaluation = row
    if evaluation is None:
        raise script_io.ScriptError(f"{script_io.quoted(path)}: no evaluation line")
    return evaluation, last


def parameter_count(checkpoint):
    """The model's parameters in a checkpoint: every tensor but the optimizer's (optim.*)."""
    with open(checkpoint, "rb") as f:
        size = int.from_bytes(f.read(8), "little")
        if size <= 0 or size > (100 << 20):
            raise script_io.ScriptError(f"{script_io.quoted(checkpoint)}: not a safetensors file")
        header = json.loads(f.read(size))
    total = 0
    for name, entry in header.items():
        if name == "__metadata__" or name.startswith("optim."):
            continue
        count = 1
        for n in entry["shape"]:
            count *= n
        total += count
    return total


def train(args, heads, run_dir, steps):
    binary = args.binary
    done = os.path.exists(os.path.join(run_dir, "latest.safetensors"))
    if done:
        _, last = last_evaluation(run_dir)
        if last.get("step") == steps:
            print(f"h{heads}: {run_dir} holds a finished run of {steps} steps: read, not trained again", flush=True)
            return None
        raise script_io.ScriptError(f"{script_io.quoted(run_dir)} holds a run of {last.get('step')} steps, not {steps}: "
                                    "give another --out")
    command = [binary, "train", "--config", args.config, "--out", run_dir, "--max-steps", str(steps),
               "--set", f"model.n_head={heads}"]
    if args.threads is not None:
        command += ["--threads", str(args.threads)]
    print(f"h{heads}: training {steps} steps into {run_dir}", flush=True)
    return run(command, f"train n_head={heads}")


def report(args, heads, run_dir, train_output):
    evaluation, last = last_evaluation(run_dir)
    with open(os.path.join(run_dir, "config.json"), encoding="utf-8") as f:
        config = json.load(f)
    model, batch = config["model"], config["train"]["batch_size"]
    D, T, L = model["n_embd"], model["block_size"], model["n_layer"]
    log = run_dir + ".train.txt"  # train's stdout, kept beside the run directory
    if train_output is not None:
        script_io.write_atomically(log, train_output.encode("utf-8"), "train's output")
    elif os.path.isfile(log):
        train_output = script_io.read_text(log, "train's output", 1 << 20)
    match = re.search(r"final val loss [0-9.]+ \(floor ([0-9.]+)", train_output or "")
    floor = float(match.group(1)) if match else None
    best = os.path.join(run_dir, "best.safetensors")
    attention = L * heads * T * T
    print(f"\n== n_head {heads}: D {D}, d {D // heads}, {L} {'layer' if L == 1 else 'layers'}; {run_dir}")
    print(f"  steps              {last.get('step')} (last evaluation at {evaluation.get('step')})")
    val = evaluation["val_loss"]
    print(f"  val loss           {val:.4f}" + (f" (floor {floor:.4f}, +{val - floor:.4f})" if floor is not None else " (floor not recorded)"))
    print(f"  parameters         {parameter_count(best):,} (attention: 4D^2 = {4 * D * D:,} per layer at any head count)")
    print(f"  attention memory   {attention:,} projected_weights per text of {T} ({L} x {heads} x {T} x {T}), "
          f"{attention * 4 * batch / 1e6:.1f} MB per batch of {batch} in float32")
    resumed = re.search(r"trained \d+ steps \(from step (\d+) to (\d+)\)", train_output or "")
    # metrics.jsonl's elapsed_s counts one process: a resumed run's covers its last part only.
    part = f" (steps {resumed.group(1)} to {resumed.group(2)} only: the run was resumed)" if resumed else ""
    print(f"  training time      {last.get('elapsed_s', 0):.1f} s{part}")
    print(f"  probe accuracy     {evaluation.get('probe_accuracy', float('nan')):.3f}")
    for key in sorted(k for k in evaluation if k.startswith("probe_accuracy_by_")):
        breakdown = evaluation[key]
        if isinstance(breakdown, dict):
            cells = "  ".join(f"{name} {value:.3f}" for name, value in sorted(breakdown.items())
                              if isinstance(value, (int, float)))
            print(f"  {key[len('probe_accuracy_'):].replace('_', ' '):<18} {cells}")
    explain = run([args.binary, "inspect-heads", "--checkpoint", best, "--explain"] +
                  (["--probe", args.probe] if args.probe else []), f"inspect-heads --explain of n_head={heads}")
    print("  --explain:")
    for line in explain.splitlines():
        print("    " + line)


def main():
    parser = script_io.ArgumentParser(prog="compare_head_counts", description=__doc__,
                                      formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default=os.path.join(ROOT, "configs", "default.json"))
    parser.add_argument("--heads", type=heads_list, default=[1, 2, 4], help="head counts, default 1,2,4")
    budget = parser.add_mutually_exclusive_group()
    budget.add_argument("--full", action="store_true", help="train the config's whole max_steps")
    budget.add_argument("--steps", type=script_io.int_in(1, 10**9), help=f"steps per run (default {SHORT_STEPS})")
    parser.add_argument("--out", default=os.path.join(ROOT, "runs", "head_counts"))
    parser.add_argument("--probe", help="probe set for --explain and --compare (default: the config's)")
    parser.add_argument("--threads", type=script_io.int_in(0, 256))
    parser.add_argument("--plot", help="draw the runs' curves into this SVG (scripts/plot_metrics.py)")
    parser.add_argument("--binary", default=os.path.join(ROOT, "build", "mini-gpt"))
    args = parser.parse_args()
    if not os.path.isfile(args.binary):
        raise script_io.ScriptError(f"--binary {script_io.quoted(args.binary)} is not a file: build mini-gpt first")
    config_text = script_io.read_text(args.config, "--config", 1 << 20)
    try:
        config = json.loads(config_text)
    except json.JSONDecodeError as e:
        raise script_io.ScriptError(f"--config {script_io.quoted(args.config)}: not JSON: {e}")
    D = config.get("model", {}).get("n_embd", 64)
    for h in args.heads:
        if D % h:
            raise script_io.ScriptError(f"--heads: n_embd {D} is not divisible by {h}")
    steps = config.get("train", {}).get("max_steps") if args.full else (args.steps or SHORT_STEPS)
    os.makedirs(args.out, exist_ok=True)
    runs = []
    for h in args.heads:
        run_dir = os.path.join(args.out, f"h{h}")
        runs.append((h, run_dir, train(args, h, run_dir, steps)))
    for h, run_dir, output in runs:
        report(args, h, run_dir, output)
    for (ha, a, _), (hb, b, _) in zip(runs, runs[1:]):
        command = [args.binary, "inspect-heads", "--compare", os.path.join(a, "best.safetensors"),
                   os.path.join(b, "best.safetensors")] + (["--probe", args.probe] if args.probe else [])
        print(f"\n== heads of n_head {ha} matched to heads of n_head {hb}")
        print(run(command, f"inspect-heads --compare h{ha} h{hb}"), end="")
    if args.plot:
        run([sys.executable, os.path.join(HERE, "plot_metrics.py")] + [r for _, r, _ in runs] + ["-o", args.plot],
            "plot_metrics.py")
        print(f"\ncurves: {args.plot}")


if __name__ == "__main__":
    script_io.run_main("compare_head_counts", main)
