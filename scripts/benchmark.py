#!/usr/bin/env python3
"""Measure mini-gpt against the PyTorch reference, side by side, and print the ratios.

    python3 scripts/benchmark.py                      # 5 alternating rounds, 2 threads
    python3 scripts/benchmark.py --rounds 3 --threads 1

Each round runs, one after the other: mini-gpt training on configs/default.json shapes
(batch 32, T 64), the reference's train-bench at its best BLAS setting (OpenBLAS's OpenMP
build), mini-gpt sampling with the KV cache, and the reference's sample-bench with and
without --kv-cache. Alternating the programs spreads the machine's noise over both, and
only ratios measured in one run mean much. Peak resident memory comes from wait4's rusage
of each child. Where `/usr/bin/python3 -c 'import torch'` fails, the PyTorch side is
skipped, saying so. A benchmark, not a test: it never fails on timing.
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(cmd, env=None):
    """Runs cmd; returns (stdout, stderr, peak RSS in MB)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=env, cwd=ROOT)
        _, status, usage = os.wait4(proc.pid, 0)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode("utf-8", "replace"), err.read().decode("utf-8", "replace")
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"benchmark: error: {' '.join(cmd)} failed:\n{stderr.strip()}")
    return stdout, stderr, usage.ru_maxrss / 1024.0


def last_json(text):
    for line in reversed(text.strip().splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    raise SystemExit(f"benchmark: error: no JSON line in output:\n{text}")


def torch_available():
    try:
        return subprocess.run(["/usr/bin/python3", "-c", "import torch"], capture_output=True).returncode == 0
    except OSError:
        return False


def spread(values):
    med = statistics.median(values)
    return f"{med:,.0f} ({min(values):,.0f}-{max(values):,.0f})"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--train-steps", type=int, default=100, help="timed steps per training measurement")
    parser.add_argument("--sample-tokens", type=int, default=63, help="new symbols per sample (63 fits block_size 64)")
    parser.add_argument("--binary", default=os.path.join(ROOT, "build", "mini-gpt"))
    parser.add_argument("--reference", default=os.path.join(ROOT, "..", "shared", "reference", "torch_ref.py"))
    args = parser.parse_args()
    if not os.path.exists(args.binary):
        raise SystemExit(f"benchmark: error: {args.binary} not found; run scripts/build.sh first")
    with_torch = torch_available() and os.path.exists(args.reference)
    if not with_torch:
        print("benchmark: PyTorch side skipped (/usr/bin/python3 cannot import torch, or no reference at "
              f"{args.reference})")
    ref_config = os.path.join(os.path.dirname(args.reference), "default.json")

    work = tempfile.mkdtemp(prefix="mini-gpt-bench-")
    ckpt = os.path.join(work, "model.safetensors")
    t = str(args.threads)
    results = {k: [] for k in ("ours_train", "ours_train_rss", "ours_sample", "ours_first_ms", "ours_sample_nocache",
                               "torch_train", "torch_train_rss", "torch_sample_kv", "torch_sample")}
    for r in range(args.rounds):
        out_dir = os.path.join(work, f"run{r}")
        stdout, _, rss = run([args.binary, "train", "--config", "configs/default.json", "--out", out_dir,
                              "--max-steps", str(args.train_steps), "--threads", t,
                              "--set", "train.eval_interval=1000000", "--set", "data.probe_path=\"\""])
        results["ours_train"].append(float(re.search(r"\(([\d.]+) tokens/s\)", stdout).group(1)))
        results["ours_train_rss"].append(rss)
        if not os.path.exists(ckpt):
            os.replace(os.path.join(out_dir, "latest.safetensors"), ckpt)
        for no_cache in (False, True):
            _, stderr, _ = run([args.binary, "sample", "--checkpoint", ckpt, "--seed", "1", "--num-samples", "8",
                                "--max-new-tokens", str(args.sample_tokens), "--threads", t, "--stats"]
                               + (["--no-cache"] if no_cache else []))
            m = re.search(r"time to first symbol ([\d.]+) ms; .*: ([\d.]+) symbols/s", stderr)
            results["ours_sample_nocache" if no_cache else "ours_sample"].append(float(m.group(2)))
            if not no_cache:
                results["ours_first_ms"].append(float(m.group(1)))
        if with_torch:
            stdout, _, rss = run(["/usr/bin/python3", args.reference, "train-bench", "--config", ref_config,
                                  "--steps", str(args.train_steps), "--warmup", "20", "--threads", t,
                                  "--blas", "openblas-openmp"])
            results["torch_train"].append(last_json(stdout)["tokens_per_s"])
            results["torch_train_rss"].append(rss)
            for kv in (True, False):
                stdout, _, _ = run(["/usr/bin/python3", args.reference, "sample-bench", "--config", ref_config,
                                    "--new-tokens", str(args.sample_tokens * 8), "--threads", t,
                                    "--blas", "openblas-openmp"] + (["--kv-cache"] if kv else []))
                results["torch_sample_kv" if kv else "torch_sample"].append(last_json(stdout)["tokens_per_s"])
        print(f"round {r + 1}/{args.rounds}: mini-gpt {results['ours_train'][-1]:,.0f} tok/s"
              + (f", PyTorch {results['torch_train'][-1]:,.0f} tok/s" if with_torch else ""), flush=True)

    def ratio(a, b):
        pairs = [x / y for x, y in zip(results[a], results[b])]
        return f"{statistics.median(pairs):.2f}x ({min(pairs):.2f}-{max(pairs):.2f})"

    print(f"\n{args.rounds} rounds, {args.threads} threads; median (min-max)\n")
    print("| measure | mini-gpt | PyTorch | ratio |")
    print("| --- | --- | --- | --- |")
    torch_cell = (lambda k: spread(results[k])) if with_torch else (lambda k: "skipped")
    ratio_cell = ratio if with_torch else (lambda a, b: "-")
    print(f"| training tokens/s | {spread(results['ours_train'])} | {torch_cell('torch_train')} | "
          f"{ratio_cell('ours_train', 'torch_train')} |")
    print(f"| sampling symbols/s, KV cache | {spread(results['ours_sample'])} | {torch_cell('torch_sample_kv')} | "
          f"{ratio_cell('ours_sample', 'torch_sample_kv')} |")
    print(f"| sampling symbols/s, no cache | {spread(results['ours_sample_nocache'])} | {torch_cell('torch_sample')} | "
          f"{ratio_cell('ours_sample_nocache', 'torch_sample')} |")
    print(f"| time to first symbol, ms | {statistics.median(results['ours_first_ms']):.2f} | | |")
    if with_torch:
        rss = [y / x for x, y in zip(results["ours_train_rss"], results["torch_train_rss"])]
        print(f"| training peak RSS, MB | {statistics.median(results['ours_train_rss']):.0f} | "
              f"{statistics.median(results['torch_train_rss']):.0f} | PyTorch/mini-gpt {statistics.median(rss):.2f}x |")
    else:
        print(f"| training peak RSS, MB | {statistics.median(results['ours_train_rss']):.0f} | skipped | - |")


if __name__ == "__main__":
    sys.exit(main())
