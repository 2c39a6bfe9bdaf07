#!/usr/bin/env python3
"""Measure mini-gpt against the PyTorch reference, side by side, and print the ratios.

    python3 scripts/benchmark.py                      # 5 alternating rounds, 2 threads
    python3 scripts/benchmark.py --rounds 3 --threads 1
    python3 scripts/benchmark.py --only-sampling      # the sampling rows alone, no training or profiles
    # a quick check that it runs end to end (its figures mean nothing):
    python3 scripts/benchmark.py --rounds 1 --train-steps 5 --warmup 2 --sample-tokens 8 --profile-steps 3 --reference-steps 1
    python3 scripts/benchmark.py --busy 2 --rounds 2   # on a busy machine: scripts/benchmark_busy.py
    python3 scripts/benchmark.py --nanogpt PATH --text FILE   # against nanoGPT: scripts/benchmark_nanogpt.py
    python3 scripts/benchmark.py --serve [--checkpoint CKPT]   # mini-gpt serve's recompute: scripts/benchmark_serve.py

Each round runs, one after the other: mini-gpt training on configs/default.json shapes
(batch 32, T 64); train-bench of the PyTorch reference, scripts/torch_reference.py, on the
same config file at its best BLAS setting (OpenBLAS's OpenMP build). Both sides time the
same way: --warmup untimed steps (first calls, caches, JIT kernels), then --train-steps
timed ones; mini-gpt's rate over those comes from the step times its metrics.jsonl records; mini-gpt sampling with
the KV cache; and the reference's sample-bench with and without --kv-cache. Then long
generation, --long-tokens (2,000) symbols from a one-symbol prompt, far past block_size:
mini-gpt's exact window mode (the last block_size symbols rebuilt at positions 0..T-1 per
symbol) and its --context-shift, against the reference's sample-bench --kv-cache, whose
loop past block_size slides its KV cache one position per symbol (RoPE: the newest T-1
keys kept, positions counting on; neither exact like the window nor recomputed). Alternating the
programs spreads the machine's noise over both, and only ratios measured in one run mean
much. Each round also measures the machine's sgemm peak right after mini-gpt's training,
and training's share of the peak is taken per round, against its own round's peak, then
the median (as the ratios to PyTorch are): on a guest whose speed drifts by a third from
minute to minute, a peak measured once, at the end, would set every round against a fast
or a slow moment. The peak is the best of two libraries' float32 GEMM on 1024 and 2048
squares at the same thread count, best of 3: OpenBLAS's OpenMP build through numpy, and
oneDNN through mini-gpt's kernel benchmark (`gemm_square/onednn/...` of
build/tests/bench/mini-gpt-kernels-bench, built with -DMINI_GPT_BENCHMARKS=ON; without it
only OpenBLAS's figure counts, saying so). Then `mini-gpt train --profile` under each GEMM
backend (oneDNN, OpenBLAS, reference): where a step's time goes per op family, and the
achieved GFLOP/s as a share of the rounds' median peak.

A fair comparison: the PyTorch side and the peak run with OPENBLAS_CORETYPE and
OPENBLAS_L2_SIZE removed from their environment (a machine that sets OPENBLAS_CORETYPE=Haswell
keeps OpenBLAS off its AVX-512 kernels, halving PyTorch's GEMMs and the peak); mini-gpt's own
commands run in the environment as it is. The benchmark prints which kernels ran: the
OpenBLAS core (openblas_get_corename, through ctypes on the library each process loaded)
for PyTorch, numpy and mini-gpt's OpenBLAS; the oneDNN ISA (the `dnnl_verbose,info,cpu,isa:`
line of a one-step mini-gpt run under DNNL_VERBOSE=1); and mini-gpt's own kernel variant
(`mini-gpt --version`).

OpenBLAS picks its kernels from the CPU's family and model, and a CPU newer than the
library (Debian 12's 0.3.21 on an Emerald Rapids Xeon, family 6 model 207) falls back to
Prescott, its SSE3 kernels: 37 GFLOP/s where Cooperlake's run 222. So before the rounds the
benchmark times numpy's sgemm under OpenBLAS's own choice and under each core the CPU's
flags can run (Haswell: avx2 and fma; SkylakeX: AVX-512 F/CD/BW/DQ/VL; Cooperlake: and
avx512_bf16; SapphireRapids: and amx_bf16), and runs the PyTorch side and the peak with
the fastest (OPENBLAS_CORETYPE set to it only when it beats OpenBLAS's own pick), printing
every figure.

Peak resident memory comes from wait4's rusage of each child. Where `/usr/bin/python3 -c
'import torch'` fails, the PyTorch side is skipped, saying so (`bash
scripts/setup_reference.sh` installs it). A benchmark, not a test: it never fails on timing.
"""

import argparse
import json
import os
import re
import statistics
import shutil
import subprocess
import tempfile

import benchmark_busy
import benchmark_nanogpt
import benchmark_serve
import script_io
from bench_common import (ROOT, fair_env, kernels_report, last_json, numpy_peak, openblas_choice, ours_train,
                          print_machine, ratio_spread, run, spread, spread_1, torch_available, torch_train,
                          train_command)


def onednn_peak(args):
    """oneDNN's float32 GEMM on the same squares at the same threads, from the kernel
    benchmark's gemm_square/onednn cases, fair environment: ({size: GFLOP/s}, None) or
    (None, why not)."""
    if not os.path.exists(args.kernels_bench):
        return None, f"{args.kernels_bench} not built (cmake -DMINI_GPT_BENCHMARKS=ON)"
    pattern = f"^gemm_square/onednn/(1024|2048)/threads:{args.threads}/real_time$"
    env = fair_env(OMP_NUM_THREADS=str(args.threads))
    proc = subprocess.run([args.kernels_bench, f"--benchmark_filter={pattern}", "--benchmark_format=json",
                           "--benchmark_repetitions=3"], capture_output=True, text=True, env=env, cwd=ROOT)
    if proc.returncode != 0:
        return None, (proc.stderr.strip().splitlines() or ["failed"])[-1]
    try:
        benchmarks = json.loads(proc.stdout)["benchmarks"]
    except (ValueError, KeyError):
        benchmarks = []
    best = {}
    for b in benchmarks:
        if b.get("run_type") == "iteration" and "GFLOP/s" in b:
            n = int(b["name"].split("/")[2])
            best[n] = max(best.get(n, 0.0), b["GFLOP/s"])  # the counter is in GFLOP/s already
    if not best:
        return None, f"no benchmark matched {pattern} (thread counts: 1, 2 and the core count)"
    return best, None

def machine_peak(args, openblas_core):
    """The sgemm peak now: (GFLOP/s or None, {"openblas": ({size: GFLOP/s} or None, cores or why not),
    "onednn": (... , why not)})."""
    parts = {"openblas": numpy_peak(args.threads, openblas_core), "onednn": onednn_peak(args)}
    best = [max(g.values()) for g, _ in parts.values() if g]
    return (max(best) if best else None), parts

def train_profile(args, backend, steps, out_dir):
    """Runs `mini-gpt train --profile`; returns {family: (ms/step, share %)}, GEMM and step GFLOP/s."""
    stdout, _, _ = run([args.binary, "train", "--config", "configs/default.json", "--out", out_dir,
                        "--max-steps", str(steps), "--threads", str(args.threads), "--backend", backend,
                        "--profile", "--set", "train.eval_interval=1000000", "--set", 'data.probe_path=""'])
    families = {m.group(1): (float(m.group(2)), float(m.group(3)))
                for m in re.finditer(r"^(\S+)\s+([\d.]+)\s+([\d.]+)%\s+[\d.]+$", stdout, re.M)}
    step_ms = float(re.search(r"\): ([\d.]+) ms/step", stdout).group(1))
    gflops = re.search(r"GEMMs ([\d.]+), whole step ([\d.]+)", stdout)
    return families, step_ms, float(gflops.group(1)), float(gflops.group(2))


def main():
    parser = script_io.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=script_io.int_in(1, 1000), default=5)
    parser.add_argument("--threads", type=script_io.int_in(1, 256), default=2)
    parser.add_argument("--train-steps", type=script_io.int_in(1, 10**6), default=100,
                        help="timed steps per training measurement")
    parser.add_argument("--warmup", type=script_io.int_in(0, 10**6), default=20,
                        help="untimed training steps before them, on both sides")
    parser.add_argument("--sample-tokens", type=script_io.int_in(1, 10**6), default=63,
                        help="new symbols per sample (63 fits block_size 64)")
    parser.add_argument("--long-tokens", type=script_io.int_in(1, 10**7), default=2000,
                        help="symbols of the long-generation rows")
    parser.add_argument("--only-sampling", action="store_true",
                        help="the sampling rows alone: no training measurement, peak or profiles (a 5-step "
                             "checkpoint is trained once, untimed)")
    parser.add_argument("--binary", default=os.path.join(ROOT, "build", "mini-gpt"))
    parser.add_argument("--profile-steps", type=script_io.int_in(2, 10**6), default=30,
                        help="steps per profiled run (oneDNN, OpenBLAS)")
    parser.add_argument("--reference-steps", type=script_io.int_in(2, 10**6), default=3,
                        help="steps of the slow reference backend's profile")
    parser.add_argument("--no-profile", action="store_true", help="skip the sgemm peak and the per-backend profiles")
    parser.add_argument("--reference", default=os.path.join(ROOT, "scripts", "torch_reference.py"))
    parser.add_argument("--kernels-bench", default=os.path.join(ROOT, "build", "tests", "bench",
                                                                "mini-gpt-kernels-bench"),
                        help="mini-gpt's Google Benchmark binary, for oneDNN's share of the sgemm peak")
    busy = parser.add_argument_group("the busy-machine table (scripts/benchmark_busy.py)")
    busy.add_argument("--busy", type=script_io.int_in(1, 64), metavar="N",
                      help="instead of the rows above: training tokens/s and small commands' wall times, quiet "
                           "and with 1..N busy single-threaded processes")
    busy.add_argument("--checkpoint", help="the model of the small commands (default: the one --busy trains)")
    busy.add_argument("--small-repeats", type=script_io.int_in(1, 1000), metavar="N",
                      help="runs of each small command per round and thread count, in ABBA order (default 8)")
    serve = parser.add_argument_group("mini-gpt serve's recompute (scripts/benchmark_serve.py)")
    serve.add_argument("--serve", action="store_true", help="time the live page's recompute for a 64-symbol text on "
                       "the server (with --checkpoint, of that model; else of a 30-step one trained here)")
    serve.add_argument("--repeats", type=script_io.int_in(1, 10000), default=30, help="recomputes timed by --serve")
    nano = parser.add_argument_group("nanoGPT's CPU recipe side by side (scripts/benchmark_nanogpt.py)")
    nano.add_argument("--nanogpt", metavar="PATH", help="a nanoGPT checkout (never written to): run its README "
                      "CPU recipe and configs/shakespeare.json for its wall time, at --threads each")
    nano.add_argument("--text", metavar="FILE", help="tinyshakespeare's input.txt, for --nanogpt")
    nano.add_argument("--nanogpt-iters", type=script_io.int_in(1, 1000000), default=2000,
                      help="nanoGPT's max_iters (default 2000, the recipe's; fewer only for a smoke test)")
    args = parser.parse_args()
    if args.busy is not None and args.nanogpt is not None:
        raise script_io.ScriptError("--busy and --nanogpt are two different runs; give one", 2)
    if (args.checkpoint is not None) and args.busy is None and not args.serve:
        raise script_io.ScriptError("--checkpoint is for --busy's small commands and --serve", 2)
    if args.small_repeats is not None and args.busy is None:
        raise script_io.ScriptError("--small-repeats is for --busy's small commands", 2)
    if args.small_repeats is None:
        args.small_repeats = 8
    if (args.text is not None) != (args.nanogpt is not None):
        raise script_io.ScriptError("--nanogpt PATH and --text FILE go together", 2)
    args.binary = os.path.abspath(args.binary)  # the commands run in ROOT
    if not os.path.exists(args.binary):
        raise script_io.ScriptError(f"{args.binary} not found; run scripts/build.sh first", 2)
    if args.nanogpt is not None:
        return benchmark_nanogpt.compare(args)
    if args.serve:
        return benchmark_serve.serve_table(args)
    with_torch = torch_available() and os.path.exists(args.reference)
    if not with_torch:
        print("benchmark: PyTorch side skipped (/usr/bin/python3 cannot import torch, or no reference at "
              f"{args.reference})")
    if args.busy is not None:
        return benchmark_busy.busy_table(args, with_torch)
    ref_config = os.path.join(ROOT, "configs", "default.json")  # the config mini-gpt trains on below

    # The runs' folders live in a temporary folder, removed on every way out (an error,
    # Ctrl-C, SIGTERM: script_io.run_main turns them into exceptions).
    work = tempfile.mkdtemp(prefix="mini-gpt-bench-")
    try:
        return rounds_table(args, work, with_torch, ref_config)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def rounds_table(args, work, with_torch, ref_config):
    """The rounds of training and sampling on both sides, their table and the profiles."""
    ckpt = os.path.join(work, "model.safetensors")
    t = str(args.threads)
    kernels = kernels_report(args, work)
    # The PyTorch side: OpenBLAS on the fastest kernels this CPU runs (its own pick unless that is slower).
    openblas_core, openblas_trials = openblas_choice(args.threads) if (with_torch or not args.no_profile) else (None, [])
    torch_env = fair_env(**({"OPENBLAS_CORETYPE": openblas_core} if openblas_core else {}))
    torch_cores = set()
    results = {k: [] for k in ("ours_train", "ours_train_rss", "ours_sample", "ours_first_ms", "ours_sample_nocache",
                               "ours_long_window", "ours_long_shift", "torch_train", "torch_train_rss",
                               "torch_sample_kv", "torch_sample", "torch_long_kv", "peak", "peak_parts")}
    with_peak = not (args.no_profile or args.only_sampling)
    mflop_per_token = 1.41
    if args.only_sampling:
        run(train_command(args, args.threads) + ["--out", os.path.join(work, "checkpoint"), "--max-steps", "5"])
        os.replace(os.path.join(work, "checkpoint", "latest.safetensors"), ckpt)

    def ours_sample(extra):
        """symbols/s and time to first symbol (ms) of `mini-gpt sample ... --stats`."""
        _, stderr, _ = run([args.binary, "sample", "--checkpoint", ckpt, "--seed", "1", "--threads", t, "--stats"]
                           + extra)
        m = re.search(r"time to first symbol ([\d.]+) ms; .*: ([\d.]+) symbols/s", stderr)
        return float(m.group(2)), float(m.group(1))

    def torch_sample(new_tokens, kv):
        stdout, _, _ = run(["/usr/bin/python3", args.reference, "sample-bench", "--config", ref_config,
                            "--new-tokens", str(new_tokens), "--threads", t, "--blas", "openblas-openmp"]
                           + (["--kv-cache"] if kv else []), env=torch_env)
        return last_json(stdout)["tokens_per_s"]

    for r in range(args.rounds):
        if not args.only_sampling:
            out_dir = os.path.join(work, f"run{r}")
            rate, rss = ours_train(args, args.threads, out_dir)
            results["ours_train"].append(rate)
            results["ours_train_rss"].append(rss)
            if with_peak:  # the machine's peak at this moment, for this round's share of it
                peak_now, parts = machine_peak(args, openblas_core)
                results["peak"].append(peak_now)
                results["peak_parts"].append(parts)
            if not os.path.exists(ckpt):
                os.replace(os.path.join(out_dir, "latest.safetensors"), ckpt)
        within = ["--num-samples", "8", "--max-new-tokens", str(args.sample_tokens)]
        rate, first_ms = ours_sample(within)
        results["ours_sample"].append(rate)
        results["ours_first_ms"].append(first_ms)
        results["ours_sample_nocache"].append(ours_sample(within + ["--no-cache"])[0])
        results["ours_long_window"].append(ours_sample(["--max-new-tokens", str(args.long_tokens)])[0])
        results["ours_long_shift"].append(ours_sample(["--max-new-tokens", str(args.long_tokens), "--context-shift"])[0])
        if with_torch:
            if not args.only_sampling:
                rate, cores, rss = torch_train(args, args.threads, torch_env)
                results["torch_train"].append(rate)
                torch_cores.update(cores)
                results["torch_train_rss"].append(rss)
            results["torch_sample_kv"].append(torch_sample(args.sample_tokens * 8, True))
            results["torch_sample"].append(torch_sample(args.sample_tokens * 8, False))
            results["torch_long_kv"].append(torch_sample(args.long_tokens, True))
        if args.only_sampling:
            print(f"round {r + 1}/{args.rounds}: mini-gpt window {results['ours_long_window'][-1]:,.0f} symbols/s"
                  + (f", PyTorch sliding KV {results['torch_long_kv'][-1]:,.0f}" if with_torch else ""), flush=True)
        else:
            share = ""
            if with_peak and results["peak"][-1]:
                share = (f" ({100 * results['ours_train'][-1] * mflop_per_token / 1e3 / results['peak'][-1]:.0f}% "
                         f"of the round's sgemm peak, {results['peak'][-1]:.1f} GFLOP/s)")
            print(f"round {r + 1}/{args.rounds}: mini-gpt {results['ours_train'][-1]:,.0f} tok/s{share}"
                  + (f", PyTorch {results['torch_train'][-1]:,.0f} tok/s" if with_torch else ""), flush=True)

    def ratio(a, b):
        return ratio_spread(results[a], results[b])

    print(f"\n{args.rounds} rounds, {args.threads} threads; median (min-max)\n")
    print("| measure | mini-gpt | PyTorch | ratio |")
    print("| --- | --- | --- | --- |")
    torch_cell = (lambda k: spread(results[k])) if with_torch else (lambda k: "skipped")
    ratio_cell = ratio if with_torch else (lambda a, b: "-")
    if not args.only_sampling:
        print(f"| training tokens/s | {spread(results['ours_train'])} | {torch_cell('torch_train')} | "
              f"{ratio_cell('ours_train', 'torch_train')} |")
    print(f"| sampling symbols/s, KV cache | {spread(results['ours_sample'])} | {torch_cell('torch_sample_kv')} | "
          f"{ratio_cell('ours_sample', 'torch_sample_kv')} |")
    print(f"| sampling symbols/s, no cache | {spread(results['ours_sample_nocache'])} | {torch_cell('torch_sample')} | "
          f"{ratio_cell('ours_sample_nocache', 'torch_sample')} |")
    long = f"{args.long_tokens:,} symbols/s"
    print(f"| {long}, mini-gpt window vs PyTorch sliding KV | {spread(results['ours_long_window'])} | "
          f"{torch_cell('torch_long_kv')} | {ratio_cell('ours_long_window', 'torch_long_kv')} |")
    print(f"| {long}, mini-gpt --context-shift vs PyTorch sliding KV | {spread(results['ours_long_shift'])} | "
          f"{torch_cell('torch_long_kv')} | {ratio_cell('ours_long_shift', 'torch_long_kv')} |")
    print(f"| time to first symbol, ms | {statistics.median(results['ours_first_ms']):.2f} | | |")
    if with_torch and not args.only_sampling:
        rss = [y / x for x, y in zip(results["ours_train_rss"], results["torch_train_rss"])]
        print(f"| training peak RSS, MB | {statistics.median(results['ours_train_rss']):.0f} | "
              f"{statistics.median(results['torch_train_rss']):.0f} | PyTorch/mini-gpt {statistics.median(rss):.2f}x |")
    elif not args.only_sampling:
        print(f"| training peak RSS, MB | {statistics.median(results['ours_train_rss']):.0f} | skipped | - |")

    print_machine(kernels, openblas_core, openblas_trials, torch_cores if with_torch else None)

    if not with_peak:
        return

    def library_line(name, label):
        measured = [parts[name][0] for parts in results["peak_parts"] if parts[name][0]]
        if not measured:
            return f"- {label}: not measured: {results['peak_parts'][-1][name][1]}"
        cells = []
        for n in sorted(measured[0]):
            values = [m[n] for m in measured if n in m]
            cells.append(f"{n}: {statistics.median(values):.1f} ({min(values):.1f}-{max(values):.1f})")
        note = results["peak_parts"][-1][name][1]
        return f"- {label}: " + ", ".join(cells) + (f" (core {', '.join(note)})" if name == "openblas" and note else "")

    print(f"\nsgemm peak, {args.threads} threads, float32 squares, GFLOP/s, best of 3, measured in each round "
          "right after mini-gpt's training; median (min-max) of the rounds:")
    print(library_line("openblas", "OpenBLAS (OpenMP build) through numpy"))
    print(library_line("onednn", f"oneDNN through mini-gpt-kernels-bench (ISA {kernels['onednn_isa']})"))
    peaks = [p for p in results["peak"] if p]
    peak = statistics.median(peaks) if peaks else None
    print("- peak, the better of the two: " + (spread_1(peaks) if peaks else "not measured"))
    if peaks:
        shares = [100 * t * mflop_per_token / 1e3 / p for t, p in zip(results["ours_train"], results["peak"]) if p]
        print(f"training against its round's peak, at {mflop_per_token} MFLOP/token: median "
              f"{statistics.median(shares):.0f}% ({min(shares):.0f}-{max(shares):.0f}%) of the sgemm peak "
              f"({statistics.median(results['ours_train']) * mflop_per_token / 1e3:.1f} GFLOP/s at the median)")
    profiles = {}
    for backend in ("onednn", "openblas", "reference"):
        steps = args.reference_steps if backend == "reference" else args.profile_steps
        profiles[backend] = train_profile(args, backend, steps, os.path.join(work, f"profile-{backend}"))
    names = list(profiles["onednn"][0].keys())
    print(f"\nprofile of a training step (mini-gpt train --profile, {args.threads} threads; "
          f"{args.profile_steps} steps, reference backend {args.reference_steps}, first step left out)\n")
    print("| op family | " + " | ".join(f"{b} ms/step (share)" for b in profiles) + " |")
    print("| --- |" + " --- |" * len(profiles))
    for name in names:
        cells = [f"{p[0][name][0]:.2f} ({p[0][name][1]:.1f}%)" for p in profiles.values()]
        print(f"| {name} | " + " | ".join(cells) + " |")
    print("| step | " + " | ".join(f"{p[1]:.2f}" for p in profiles.values()) + " |")
    pct = (lambda g: f" ({100 * g / peak:.0f}% of the median peak)") if peak else (lambda g: "")
    print("| GEMM GFLOP/s | " + " | ".join(f"{p[2]:.1f}{pct(p[2])}" for p in profiles.values()) + " |")
    print("| step GFLOP/s | " + " | ".join(f"{p[3]:.1f}{pct(p[3])}" for p in profiles.values()) + " |")


if __name__ == "__main__":
    script_io.run_main("benchmark", main)
