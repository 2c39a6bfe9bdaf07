"""`benchmark.py --busy N`: how training and small commands fare on a machine that is not quiet.

    python3 scripts/benchmark.py --busy 2 --rounds 2
    # a quick check that it runs end to end (its figures mean nothing):
    python3 scripts/benchmark.py --busy 1 --rounds 1 --train-steps 5 --warmup 2

A busy process is a single-threaded pure-CPU loop (a Python `for` loop, as a compile job or a
browser tab would be), started before each measurement and killed after it. Each round
measures, for no busy process and then for 1..N of them, one after the other:

  - training tokens/s on configs/default.json, timed as benchmark.py's training row (--warmup
    untimed steps, then --train-steps timed): mini-gpt at its default thread count
    (`--threads 0`) and at `--threads 1`; the PyTorch reference's train-bench at --threads
    (default 2) and at 1 thread, in benchmark.py's fair environment (OPENBLAS_CORETYPE and
    OPENBLAS_L2_SIZE removed, the fastest OpenBLAS core forced);
  - the wall time, from start to exit, of small commands on the default model's shape (the
    checkpoint the first training run wrote, or --checkpoint): `inspect-heads --text T
    --format json`, `--attribution` and `--roles` (over data/probe.jsonl) on T, the first 64
    symbols of data/corpus.txt; `eval --text-file F` on its first 65 (eval's one window: 64
    inputs and their 64 targets); `sample --max-new-tokens 64`. Each runs --small-repeats
    times (default 8) at the default thread count and at `--threads 1`, alternating which goes
    first, under
    one set of busy processes; the round's figure is the median of its repeats (one run
    of 30-50 ms is at the mercy of the scheduler's next tick).

The table gives the median (min-max) of the rounds, each busy column's share of the quiet
speed (the median of the rounds' shares), and mini-gpt/PyTorch per column (default threads
against PyTorch at --threads, one thread against one). benchmark.py calls this module with its
options; the helpers are bench_common.py's.
"""

import contextlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import script_io
from bench_common import (ROOT, fair_env, kernels_report, openblas_choice, ours_train, print_machine,
                          ratio_spread, run, spread, spread_1, torch_train)

# A single-threaded pure-CPU loop that ends by itself when its parent has gone (reparented),
# so a benchmark killed with SIGKILL leaves no spinning process behind.
BUSY_LOOP = """
import os
parent = os.getppid()
while os.getppid() == parent:
    for _ in range(1000000):
        pass
"""


@contextlib.contextmanager
def busy_processes(count):
    """`count` busy loops for the duration of the with-block, killed and reaped after it."""
    procs = []
    try:
        for _ in range(count):
            procs.append(subprocess.Popen([sys.executable, "-c", BUSY_LOOP], stdin=subprocess.DEVNULL))
        if procs:
            time.sleep(0.2)  # past the interpreter's start, into the loop
        yield
    finally:
        for proc in procs:
            proc.kill()
        for proc in procs:
            proc.wait()


def small_inputs(work):
    """(the 64-symbol text for inspect-heads, the path of the 65-symbol file for eval)."""
    corpus = script_io.read_text(os.path.join(ROOT, "data", "corpus.txt"), "corpus", 64 << 20)
    if len(corpus) < 65:
        raise script_io.ScriptError("data/corpus.txt holds fewer than 65 symbols", 1)
    eval_file = os.path.join(work, "eval-65.txt")
    script_io.write_atomically(eval_file, corpus[:65], "eval text")
    return corpus[:64], eval_file


def busy_table(args, with_torch):
    rounds = args.rounds
    if rounds < 1 or args.train_steps < 1 or args.warmup < 0 or args.threads < 1 or args.small_repeats < 1:
        raise script_io.ScriptError("--rounds, --train-steps, --small-repeats and --threads (PyTorch's) must be at least 1, "
                                    "--warmup at least 0", 2)
    if args.checkpoint is not None:
        if not os.path.isfile(args.checkpoint):
            raise script_io.ScriptError(f"--checkpoint {script_io.quoted(args.checkpoint)} is not a file", 2)
        args.checkpoint = os.path.abspath(args.checkpoint)  # the commands run in ROOT
    loads = range(args.busy + 1)
    with tempfile.TemporaryDirectory(prefix="mini-gpt-busy-") as work:
        kernels = kernels_report(args, work)
        openblas_core, openblas_trials = openblas_choice(args.threads) if with_torch else (None, [])
        torch_env = fair_env(**({"OPENBLAS_CORETYPE": openblas_core} if openblas_core else {}))
        torch_cores = set()
        ckpt = args.checkpoint or os.path.join(work, "model.safetensors")
        text, eval_file = small_inputs(work)

        def ours(threads):
            out_dir = os.path.join(work, "train")
            rate, _ = ours_train(args, threads, out_dir)
            if not os.path.exists(ckpt):
                os.replace(os.path.join(out_dir, "latest.safetensors"), ckpt)
            shutil.rmtree(out_dir)
            return rate

        def torch(threads):
            rate, cores, _ = torch_train(args, threads, torch_env)
            torch_cores.update(cores)
            return rate

        training = [("mini-gpt, default threads (--threads 0)", lambda: ours(0)),
                    ("mini-gpt, --threads 1", lambda: ours(1))]
        if with_torch:
            training += [(f"PyTorch, {args.threads} threads", lambda: torch(args.threads)),
                         ("PyTorch, 1 thread", lambda: torch(1))]
        probe = os.path.join(ROOT, "data", "probe.jsonl")
        small = [("inspect-heads --format json", ["inspect-heads", "--text", text, "--format", "json"]),
                 ("inspect-heads --attribution", ["inspect-heads", "--text", text, "--attribution"]),
                 ("inspect-heads --roles", ["inspect-heads", "--roles", "--probe", probe]),
                 ("eval --text-file", ["eval", "--text-file", eval_file]),
                 ("sample --max-new-tokens 64", ["sample", "--max-new-tokens", "64"])]
        rates = {(name, load): [] for name, _ in training for load in loads}
        seconds = {(name, threads, load): [] for name, _ in small for threads in (0, 1) for load in loads}
        for r in range(rounds):
            for load in loads:
                for name, measure in training:
                    with busy_processes(load):
                        rates[(name, load)].append(measure())
                for name, command in small:
                    repeats = {0: [], 1: []}
                    with busy_processes(load):
                        for repeat in range(args.small_repeats):
                            # ABBA: each count goes first as often (the first of a pair ran
                            # 1-2 ms slower in a fixed order, the same binary or not).
                            for threads in ((0, 1) if repeat % 2 == 0 else (1, 0)):
                                start = time.perf_counter()
                                run([args.binary, command[0], "--checkpoint", ckpt, "--threads", str(threads)]
                                    + command[1:])
                                repeats[threads].append(time.perf_counter() - start)
                    for threads in (0, 1):
                        seconds[(name, threads, load)].append(statistics.median(repeats[threads]))
            print(f"round {r + 1}/{rounds}: " + "; ".join(
                f"{load} busy: " + ", ".join(f"{rates[(name, load)][-1]:,.0f}" for name, _ in training)
                for load in loads) + " tok/s", flush=True)

    header = "| | " + " | ".join("quiet" if load == 0 else f"{load} busy" for load in loads) + " |"
    rule = "| --- |" + " --- |" * len(loads)
    threads_note = (f"OMP_NUM_THREADS={os.environ['OMP_NUM_THREADS']}" if "OMP_NUM_THREADS" in os.environ
                    else f"OMP_NUM_THREADS unset, {len(os.sched_getaffinity(0))} cores free to this process")
    print(f"\ntraining tokens/s, configs/default.json, {args.train_steps} timed steps after {args.warmup}; "
          f"{rounds} round{'s' * (rounds > 1)}, median (min-max); a busy column's share of quiet is the median of the rounds' shares; "
          f"mini-gpt's default: --threads 0 ({threads_note})\n")
    print(header)
    print(rule)
    for name, _ in training:
        quiet = rates[(name, 0)]
        cells = [spread(quiet)]
        for load in loads[1:]:
            busy = rates[(name, load)]
            share = statistics.median(b / q for b, q in zip(busy, quiet))
            cells.append(f"{spread(busy)}, {100 * share:.0f} % of quiet")
        print(f"| {name} | " + " | ".join(cells) + " |")
    if with_torch:
        pairs = [(training[0][0], training[2][0], f"mini-gpt default / PyTorch {args.threads} threads"),
                 (training[1][0], training[3][0], "mini-gpt / PyTorch, 1 thread each")]
        for ours_name, torch_name, label in pairs:
            print(f"| {label} | " + " | ".join(ratio_spread(rates[(ours_name, load)], rates[(torch_name, load)])
                                              for load in loads) + " |")

    print(f"\nsmall commands, wall time in s from start to exit, median (min-max) of {rounds} round{'s' * (rounds > 1)}, "
          f"each round the median of {args.small_repeats} runs of each thread count, in ABBA order; "
          f"checkpoint {args.checkpoint or 'the first training run of round 1'}; a 64-symbol text "
          "(eval: 65, one window)\n")
    print(header)
    print(rule)
    for name, _ in small:
        for threads, label in ((0, "default threads"), (1, "--threads 1")):
            print(f"| {name}, {label} | " + " | ".join(spread_1(seconds[(name, threads, load)], 3)
                                                     for load in loads) + " |")
        print(f"| {name}, default / --threads 1 | " + " | ".join(
            ratio_spread(seconds[(name, 0, load)], seconds[(name, 1, load)]) for load in loads) + " |")
    print_machine(kernels, openblas_core, openblas_trials, torch_cores if with_torch else None)
