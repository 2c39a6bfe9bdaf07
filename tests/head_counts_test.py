"""scripts/compare_head_counts.py on tiny runs (issue 50): one head against two, trained for
20 steps each at D 16, its table per run (per-kind accuracy, val loss, parameters, attention
memory, training time, --explain), the heads matched across head counts, a second call that
reads the runs instead of training them again, and its one-line usage errors.

    python3 tests/head_counts_test.py BUILD/mini-gpt SOURCE_DIR
"""
import os
import subprocess
import sys
import tempfile

import test_checks
from test_checks import check


def main():
    binary, source = sys.argv[1], sys.argv[2]
    script = os.path.join(source, "scripts", "compare_head_counts.py")
    config = os.path.join(source, "configs", "tiny.json")
    with tempfile.TemporaryDirectory() as work:
        out = os.path.join(work, "runs")
        command = [sys.executable, script, "--config", config, "--steps", "20", "--heads", "1,2", "--out", out,
                   "--threads", "1", "--binary", binary]
        r = subprocess.run(command, capture_output=True, text=True, timeout=300)
        check(r.returncode == 0, f"the script failed: {r.stderr}")
        text = r.stdout
        for expected in ["h1: training 20 steps", "h2: training 20 steps",
                         "== n_head 1: D 16, d 16, 1 layer;", "== n_head 2: D 16, d 8, 1 layer;",
                         "parameters         5,776 (attention: 4D^2 = 1,024 per layer at any head count)",
                         "attention memory   256 projected_weights per text of 16 (1 x 1 x 16 x 16)",
                         "attention memory   512 projected_weights per text of 16 (1 x 2 x 16 x 16)",
                         "by kind            colour ", "training time", "--explain:", "writer",
                         "== heads of n_head 1 matched to heads of n_head 2",
                         "A has 1 layer x 1 head, B 1 layer x 2 heads", "nearest A L0.H0"]:
            check(expected in text, f"{expected!r} not in the output:\n{text}")
        check(os.path.isfile(os.path.join(out, "h1.train.txt")), "train's output not kept beside the run")
        again = subprocess.run(command, capture_output=True, text=True, timeout=300)
        check(again.returncode == 0 and "read, not trained again" in again.stdout, f"second call: {again.stdout}{again.stderr}")
        check(again.stdout.count("== n_head") == 2, "the second call's tables")
        longer = subprocess.run(command[:4] + ["--steps", "21"] + command[6:], capture_output=True, text=True, timeout=300)
        check(longer.returncode == 2 and longer.stderr.count("\n") == 1 and "give another --out" in longer.stderr,
              f"a run of another length: {longer.returncode} {longer.stderr!r}")
        for args, message in [(["--heads", "3"], "not divisible by 3"), (["--heads", "x"], "head counts"),
                              (["--heads", "1,1"], "distinct"), (["--full", "--steps", "5"], "not allowed with"),
                              (["--config", os.path.join(work, "missing.json")], "missing.json")]:
            bad = subprocess.run([sys.executable, script, "--config", config, "--out", os.path.join(work, "bad"),
                                  "--binary", binary] + args, capture_output=True, text=True, timeout=60)
            check(bad.returncode == 2, f"{args}: exit {bad.returncode}, {bad.stderr!r}")
            check(bad.stderr.startswith("compare_head_counts: error: ") and bad.stderr.count("\n") == 1
                  and message in bad.stderr, f"{args}: {bad.stderr!r}")
    print(f"head_counts_test: {test_checks.passed} checks passed")


if __name__ == "__main__":
    main()
