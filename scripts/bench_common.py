"""The measuring helpers the benchmarks share: benchmark.py (mini-gpt against the PyTorch
reference), benchmark_busy.py (`--busy N`) and benchmark_nanogpt.py (`--nanogpt PATH`) import
them from here, and none of those imports another that imports it back.

Running commands with their peak memory (run), the fair environment of the PyTorch side and the
peak (fair_env), which kernels each side ran (kernels_report, openblas_choice, print_machine),
mini-gpt's and the reference's training rates (ours_train, torch_train, timed_rate) and the
median (min-max) cells of the tables (spread, spread_1, ratio_spread).
"""

import json
import os
import re
import statistics
import subprocess
import tempfile

import script_io

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OPENBLAS_OPENMP = "/usr/lib/x86_64-linux-gnu/openblas-openmp"
# Removed from the PyTorch side's and the peak's environment (never from mini-gpt's).
UNFAIR_VARS = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")


def fair_env(**extra):
    """This environment without UNFAIR_VARS, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if k not in UNFAIR_VARS}
    env.update(extra)
    return env


def run(cmd, env=None, cwd=ROOT):
    """Runs cmd; returns (stdout, stderr, peak RSS in MB)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=env, cwd=cwd)
        _, status, usage = os.wait4(proc.pid, 0)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode("utf-8", "replace"), err.read().decode("utf-8", "replace")
    if os.waitstatus_to_exitcode(status) != 0:
        raise script_io.ScriptError(f"{' '.join(cmd)} failed: {stderr.strip()[-300:]}", 1)
    return stdout, stderr, usage.ru_maxrss / 1024.0


def last_json(text):
    for line in reversed(text.strip().splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    raise script_io.ScriptError(f"no JSON line in output: {text[-300:]}", 1)


def torch_available():
    try:
        return subprocess.run(["/usr/bin/python3", "-c", "import torch"], capture_output=True).returncode == 0
    except OSError:
        return False


# openblas_get_corename() of every OpenBLAS the running process has mapped, through ctypes
# on the loaded library itself (so OPENBLAS_CORETYPE's effect shows), or of the given paths.
CORENAME_CODE = """
import ctypes, os
def openblas_cores(paths=None):
    if paths is None:
        paths = set()
        for line in open("/proc/self/maps"):
            path = line.split()[-1]
            if os.path.basename(path).startswith(("libblas", "libopenblas")):
                paths.add(os.path.realpath(path))
    cores = set()
    for path in sorted(paths):
        try:
            f = ctypes.CDLL(path).openblas_get_corename
        except (OSError, AttributeError):
            continue
        f.restype = ctypes.c_char_p
        cores.add(f().decode("ascii", "replace"))
    return sorted(cores)
"""

PEAK_SCRIPT = CORENAME_CODE + """
import json, time
import numpy as np
best = {}
for n in (1024, 2048):
    a = np.random.rand(n, n).astype(np.float32)
    b = np.random.rand(n, n).astype(np.float32)
    a @ b
    best[n] = 0.0
    for _ in range(3):
        reps, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < 0.5:
            a @ b
            reps += 1
        best[n] = max(best[n], 2.0 * n ** 3 * reps / (time.perf_counter() - t0) / 1e9)
print(json.dumps({"gflops": best, "openblas_core": openblas_cores()}))
"""


def numpy_peak(threads, core=None):
    """numpy's float32 GEMM on OpenBLAS's OpenMP build at `threads`, fair environment
    (OPENBLAS_CORETYPE=core if given): ({size: GFLOP/s}, [OpenBLAS core]) or (None, why not)."""
    env = fair_env(OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads), LD_LIBRARY_PATH=OPENBLAS_OPENMP,
                   **({"OPENBLAS_CORETYPE": core} if core else {}))
    try:
        proc = subprocess.run(["/usr/bin/python3", "-c", PEAK_SCRIPT], capture_output=True, text=True, env=env)
    except OSError as e:
        return None, str(e)
    if proc.returncode != 0:
        return None, (proc.stderr.strip().splitlines() or ["numpy failed"])[-1]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    return {int(n): g for n, g in result["gflops"].items()}, result["openblas_core"]


# OpenBLAS cores (OPENBLAS_CORETYPE names) and the /proc/cpuinfo flags each one's kernels need.
OPENBLAS_CORE_FLAGS = (
    ("Haswell", {"avx2", "fma"}),
    ("SkylakeX", {"avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"}),
    ("Cooperlake", {"avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl", "avx512_bf16"}),
    ("SapphireRapids", {"avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl", "avx512_bf16", "amx_bf16"}),
)


def cpu_flags():
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def openblas_choice(threads):
    """numpy's sgemm under OpenBLAS's own kernel choice and under each core this CPU's flags
    can run. Returns (core to force or None for OpenBLAS's own pick, [(label, {size: GFLOP/s}
    or None, cores or why not)]), the fastest at its largest size winning."""
    flags = cpu_flags()
    trials = [(None, "OpenBLAS's own pick")] + [(core, f"OPENBLAS_CORETYPE={core}")
                                                  for core, need in OPENBLAS_CORE_FLAGS if need <= flags]
    measured, best, best_gflops = [], None, 0.0
    for core, label in trials:
        gflops, note = numpy_peak(threads, core)
        measured.append((label, gflops, note))
        if gflops and max(gflops.values()) > best_gflops * 1.02:  # a forced core must beat the own pick clearly
            best, best_gflops = core, max(gflops.values())
    return best, measured






def kernels_report(args, work):
    """Which kernels mini-gpt runs: its own variant, oneDNN's ISA, its OpenBLAS's core."""
    report = {}
    stdout, _, _ = run([args.binary, "--version"])
    m = re.search(r"^kernels: (.*)$", stdout, re.M)
    report["variant"] = m.group(1) if m else "not reported by --version"
    # One training step under DNNL_VERBOSE=1: oneDNN prints the ISA it dispatches to.
    stdout, stderr, _ = run([args.binary, "train", "--config", "configs/default.json", "--out",
                             os.path.join(work, "dnnl-verbose"), "--max-steps", "1", "--threads", str(args.threads),
                             "--set", "train.eval_interval=1000000", "--set", 'data.probe_path=""'],
                            env=dict(os.environ, DNNL_VERBOSE="1"))
    m = re.search(r"^(?:dnnl|onednn)_verbose,info,cpu,isa:(.*)$", stdout + stderr, re.M)
    report["onednn_isa"] = m.group(1).strip() if m else "no isa line (DNNL_VERBOSE unsupported?)"
    m = re.search(r"^(?:dnnl|onednn)_verbose,info,oneDNN (v[^ ,]*)", stdout + stderr, re.M)
    report["onednn_version"] = m.group(1) if m else "?"
    # mini-gpt's OpenBLAS (the --backend openblas GEMMs), in mini-gpt's own environment.
    lib = os.path.join(OPENBLAS_OPENMP, "libopenblas.so.0")
    try:
        ldd = subprocess.run(["ldd", args.binary], capture_output=True, text=True).stdout
        m = re.search(r"libopenblas\S*\s*=>\s*(\S+)", ldd)
        lib = m.group(1) if m else lib
    except OSError:
        pass
    proc = subprocess.run(["/usr/bin/python3", "-c", CORENAME_CODE + "print(','.join(openblas_cores([%r])))" % lib],
                          capture_output=True, text=True)
    report["openblas_lib"] = lib
    report["openblas_core"] = proc.stdout.strip() or "unknown"
    return report




def metrics_by_step(metrics_path):
    """A run's metrics.jsonl lines, by step."""
    lines = {}
    with open(metrics_path, encoding="utf-8") as f:
        for line in f:
            record = json.loads(line)
            lines[record["step"]] = record
    return lines


def tokens_per_step(config_path):
    with open(config_path, encoding="utf-8") as f:
        config = json.load(f)
    return config["train"]["batch_size"] * config["model"]["block_size"]


def timed_rate(metrics_path, first, last, config_path=os.path.join(ROOT, "configs", "default.json")):
    """Tokens/s of steps first+1..last of a run of config_path, from metrics.jsonl: each line's
    tokens_per_s is the run's tokens so far over its summed step times, so those times are recovered."""
    lines = metrics_by_step(metrics_path)
    per_step = tokens_per_step(config_path)
    step_time = {s: s * per_step / lines[s]["tokens_per_s"] for s in (first, last) if s > 0}
    return (last - first) * per_step / (step_time[last] - step_time.get(first, 0.0))


def train_command(args, threads):
    """mini-gpt training on configs/default.json at `threads` (0: its default), no evaluations."""
    return [args.binary, "train", "--config", "configs/default.json", "--threads", str(threads),
            "--set", "train.eval_interval=1000000", "--set", "data.probe_path=\"\""]


def ours_train(args, threads, out_dir):
    """mini-gpt's training tokens/s over the timed steps (after args.warmup) and its peak RSS in MB."""
    _, _, rss = run(train_command(args, threads) + ["--out", out_dir, "--max-steps",
                                                    str(args.warmup + args.train_steps)])
    return timed_rate(os.path.join(out_dir, "metrics.jsonl"), args.warmup, args.warmup + args.train_steps), rss


def torch_train(args, threads, env):
    """The reference's train-bench on configs/default.json at `threads`, in `env` (the fair
    environment): (tokens/s, {OpenBLAS cores}, peak RSS in MB)."""
    stdout, _, rss = run(["/usr/bin/python3", args.reference, "train-bench", "--config",
                          os.path.join(ROOT, "configs", "default.json"), "--steps", str(args.train_steps),
                          "--warmup", str(args.warmup), "--threads", str(threads), "--blas", "openblas-openmp"],
                         env=env)
    bench = last_json(stdout)
    return bench["tokens_per_s"], set(bench.get("openblas_core", {}).values()), rss


def cpu_line():
    """The CPU as /proc/cpuinfo names it: model, family/model, logical CPUs, and the vector flags
    that decide the kernels."""
    info = {}
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            for line in f:
                key, _, value = line.partition(":")
                info.setdefault(key.strip(), value.strip())
    except OSError:
        return "CPU: unknown (/proc/cpuinfo unreadable)"
    wanted = ("avx2", "fma", "avx512f", "avx512bw", "avx512dq", "avx512vl", "avx512_vnni", "avx512_bf16",
              "amx_bf16", "amx_tile")
    flags = [f for f in wanted if f in cpu_flags()]
    return (f"CPU: {info.get('model name', 'unknown')} (family {info.get('cpu family', '?')}, model "
            f"{info.get('model', '?')}), {os.cpu_count()} logical CPUs; flags: {' '.join(flags) or 'no AVX2'}")


def source_commit():
    """The commit of the tree the benchmark runs from (and the binary, if built from it)."""
    try:
        head = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
    except OSError:
        return "unknown (no git)"
    return (head or "unknown (not a git checkout)") + (" with uncommitted changes" if dirty else "")


def spread_1(values, digits=1):
    return f"{statistics.median(values):.{digits}f} ({min(values):.{digits}f}-{max(values):.{digits}f})"


def spread(values):
    med = statistics.median(values)
    return f"{med:,.0f} ({min(values):,.0f}-{max(values):,.0f})"


def print_machine(kernels, openblas_core, openblas_trials, torch_cores,
                  torch_label="PyTorch (train-bench --blas openblas-openmp)"):
    """The CPU, the commit, and which kernels ran on each side (torch_cores None: no PyTorch side)."""
    print(f"\n{cpu_line()}\nmini-gpt source: commit {source_commit()}")
    removed = ", ".join(f"{k}={os.environ[k]}" for k in UNFAIR_VARS if k in os.environ) or "neither was set"
    print(f"kernels that ran ({', '.join(UNFAIR_VARS)} removed for the PyTorch side and the peak: {removed}):")
    if openblas_trials:
        print("- OpenBLAS kernel choice for the PyTorch side and the peak (numpy sgemm, GFLOP/s): "
              + "; ".join(f"{label}: " + (f"{max(g.values()):.1f} (core {', '.join(note)})" if g else f"failed: {note}")
                          for label, g, note in openblas_trials)
              + f"; chosen: {('OPENBLAS_CORETYPE=' + openblas_core) if openblas_core else 'its own pick'}")
    print(f"- mini-gpt: own kernels {kernels['variant']}; oneDNN {kernels['onednn_version']} ISA "
          f"{kernels['onednn_isa']}; its OpenBLAS ({kernels['openblas_lib']}, environment as is) "
          f"core {kernels['openblas_core']}")
    if torch_cores is not None:
        print(f"- {torch_label}: OpenBLAS core {', '.join(sorted(torch_cores)) or 'unknown'}")


def ratio_spread(numerators, denominators):
    """The median (min-max) of the rounds' ratios, round by round."""
    pairs = [x / y for x, y in zip(numerators, denominators)]
    return f"{statistics.median(pairs):.2f}x ({min(pairs):.2f}-{max(pairs):.2f})"
