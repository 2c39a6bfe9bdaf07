#!/usr/bin/env python3
"""Capture every output of inspect-heads and serve's API, to check a refactoring changed none.

    python3 tests/inspect_bytes_check.py capture BINARY OUT_DIR [--default CKPT --default-probe FILE
                                                                  --default-run DIR] [--timeline-run DIR]
    python3 tests/inspect_bytes_check.py compare BEFORE_DIR AFTER_DIR

`capture` runs every inspect-heads mode (the tables, --format json, --svg, --html) with
typical and bad options, then starts `serve` on a free port and asks every /api/ route
with typical and bad queries, on two checkpoints: the default model (--default, e.g. a copy
of runs/default/best.safetensors with its probe set and run directory) and
tests/fixtures/heads_ref.safetensors (2 layers x 2 heads, block_size 16, with a probe set of
its vocabulary written into the temporary folder). Each case is one file OUT_DIR/NAME holding its exit
status (or HTTP status), stdout, stderr and every file it wrote, so `compare` is a diff of
two folders. Without --default, the fixture tests/fixtures/failed_who.safetensors stands in
for the default model (its own probe: tests/fixtures/circuit_probe.jsonl).

`compare` prints each case whose bytes differ, with the first differing lines, and exits 1
if any does. Issue 54's refactoring (the request layer) is checked with it: captured once
from the base, then after every step.
"""

import argparse
import difflib
import http.client
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import urllib.parse

SOURCE_DIR = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
FIXTURES = os.path.join(SOURCE_DIR, "tests", "fixtures")

# The fixture's own probe set, in its 15-symbol vocabulary (prompts within block_size 16).
FIXTURE_PROBE = (
    '{"prompt": "小丁拿着红色的苹果。谁拿着红色的苹果？", "answer": "小", "kind": "who"}\n'
    '{"prompt": "小丁拿着红色的苹果。谁拿着红色的苹果？小", "answer": "丁", "kind": "who"}\n'
    '{"prompt": "小丁拿着红色的苹", "answer": "果", "kind": "what"}\n'
    '{"prompt": "谁拿着红色的苹", "answer": "果", "kind": "what"}\n'
)


def normalised(data, work=None):
    """DATA with the paths that differ between two checkouts or runs named alike: the
    checkout's folder as SOURCE, the case's scratch folder as WORK."""
    if work:
        data = data.replace(work.encode(), b"WORK")
    return data.replace(SOURCE_DIR.encode(), b"SOURCE")


def run_case(out_dir, name, args, binary, files=()):
    """Runs BINARY ARGS in a fresh folder; writes OUT_DIR/NAME: status, stdout, stderr and
    each of FILES (relative to that folder) it wrote."""
    work = tempfile.mkdtemp(prefix="bytes-")
    try:
        env = dict(os.environ, OMP_WAIT_POLICY="passive")
        proc = subprocess.run([binary] + args, cwd=work, capture_output=True, timeout=600, env=env)
        parts = [f"status {proc.returncode}\n".encode(), b"--- stdout\n", proc.stdout, b"--- stderr\n", proc.stderr]
        for f in files:
            path = os.path.join(work, f)
            parts.append(f"--- file {f}\n".encode())
            if os.path.exists(path):
                with open(path, "rb") as handle:
                    parts.append(handle.read())
            else:
                parts.append(b"(not written)\n")
        with open(os.path.join(out_dir, name), "wb") as handle:
            handle.write(normalised(b"".join(parts), work))
    finally:
        shutil.rmtree(work, ignore_errors=True)


def inspect_cases(model):
    """(name, arguments, files written) for every inspect-heads mode on MODEL."""
    ck, text, probe = ["--checkpoint", model["ckpt"]], model["text"], model["probe"]
    clean, corrupt, p = model["clean"], model["corrupt"], str(model["position"])
    cases = [
        ("default-table", ck + ["--text", text], []),
        ("default-layer-head", ck + ["--text", text, "--layer", "1", "--head", "0"], []),
        ("default-position", ck + ["--text", text, "--position", p], []),
        ("default-weights", ck + ["--text", text, "--weights", "--layer", "0", "--head", "1"], []),
        ("default-json", ck + ["--text", text, "--format", "json"], []),
        ("default-json-probe", ck + ["--text", text, "--format", "json", "--probe", probe], []),
        ("default-json-weights-position", ck + ["--text", text, "--format", "json", "--weights", "--position", p], []),
        ("default-svg", ck + ["--text", text, "--svg", "out.svg"], ["out.svg"]),
        ("trace-table", ck + ["--trace", "1.0", "--text", text, "--position", p], []),
        ("trace-json", ck + ["--trace", "0.1", "--text", text, "--position", p, "--format", "json", "--top", "3"], []),
        ("roles-table", ck + ["--roles", "--probe", probe], []),
        ("roles-json", ck + ["--roles", "--probe", probe, "--format", "json"], []),
        ("roles-mean", ck + ["--roles", "--probe", probe, "--mean-ablation"], []),
        ("circuits", ck + ["--circuits", "--layer", "0", "--head", "1", "--top", "4"], []),
        ("circuits-svg", ck + ["--circuits", "--layer", "1", "--head", "0", "--svg", "c.svg"], ["c.svg"]),
        ("compare-table", ["--compare", model["ckpt"], model["ckpt"], "--text", text], []),
        ("compare-json", ["--compare", model["ckpt"], model["ckpt"], "--probe", probe, "--format", "json"], []),
        ("attribution-table", ck + ["--attribution", "--text", text], []),
        ("attribution-json", ck + ["--attribution", "--text", text, "--position", p, "--format", "json"], []),
        ("attribution-probe", ck + ["--attribution", "--probe", probe], []),
        ("attribution-probe-json", ck + ["--attribution", "--probe", probe, "--format", "json"], []),
        ("logit-lens-table", ck + ["--logit-lens", "--text", text, "--top", "5"], []),
        ("logit-lens-json", ck + ["--logit-lens", "--text", text, "--format", "json"], []),
        ("composition-table", ck + ["--composition", "--top", "5"], []),
        ("composition-json", ck + ["--composition", "--format", "json"], []),
        ("patch-table", ck + ["--patch", "--clean", clean, "--corrupt", corrupt, "--top", "5"], []),
        ("patch-json", ck + ["--patch", "--clean", clean, "--corrupt", corrupt, "--format", "json"], []),
        ("patch-svg", ck + ["--patch", "--clean", clean, "--corrupt", corrupt, "--svg", "p.svg"], ["p.svg"]),
        ("patch-probe", ck + ["--patch", "--probe", probe], []),
        ("patch-probe-key-json", ck + ["--patch", "--probe", probe, "--swap", "key", "--format", "json"], []),
        ("explain-table", ck + ["--explain", "--probe", probe], []),
        ("explain-json", ck + ["--explain", "--probe", probe, "--format", "json"], []),
        # Issue 58: --circuit and --score-split.
        ("circuit-table", ck + ["--circuit", "--probe", probe, "--top", "5"], []),
        ("circuit-json", ck + ["--circuit", "--probe", probe, "--format", "json"], []),
        ("circuit-key-threshold", ck + ["--circuit", "--probe", probe, "--swap", "key", "--threshold", "0.05"], []),
        ("score-split-table", ck + ["--score-split", "1.0", "--text", text, "--top", "3"], []),
        ("score-split-json", ck + ["--score-split", "L1.H1", "--text", text, "--position", p, "--format", "json"], []),
        ("html", ck + ["--html", "e.html", "--text", text, "--probe", probe], ["e.html"]),
        ("html-position", ck + ["--html", "e.html", "--text", text, "--position", p], ["e.html"]),
        # Bad uses: each one line and exit 2.
        ("bad-no-text", ck, []),
        ("bad-empty-text", ck + ["--text", ""], []),
        ("bad-layer", ck + ["--text", text, "--layer", "99"], []),
        ("bad-position", ck + ["--text", text, "--position", "999"], []),
        ("bad-two-modes", ck + ["--roles", "--composition"], []),
        ("bad-unused-option", ck + ["--composition", "--text", text], []),
        ("bad-trace-no-position", ck + ["--trace", "0.0", "--text", text], []),
        ("bad-trace-name", ck + ["--trace", "x.1", "--text", text, "--position", "1"], []),
        ("bad-trace-layer", ck + ["--trace", "9.0", "--text", text, "--position", "1"], []),
        ("bad-trace-json-position", ck + ["--trace", "0.0", "--text", text, "--position", "99", "--format", "json"], []),
        ("bad-answer", ck + ["--attribution", "--text", text, "--answer", "ab"], []),
        ("bad-answer-vocab", ck + ["--logit-lens", "--text", text, "--answer", "Z"], []),
        ("bad-against-same", ck + ["--attribution", "--text", text, "--answer", clean[0], "--against", clean[0]], []),
        ("bad-patch-missing", ck + ["--patch", "--clean", clean], []),
        ("bad-patch-length", ck + ["--patch", "--clean", clean, "--corrupt", corrupt[:-1]], []),
        ("bad-patch-swap", ck + ["--patch", "--clean", clean, "--corrupt", corrupt, "--swap", "key"], []),
        ("bad-patch-probe-clean", ck + ["--patch", "--probe", probe, "--clean", clean], []),
        ("bad-circuits-no-head", ck + ["--circuits", "--layer", "0"], []),
        ("bad-circuit-threshold", ck + ["--circuit", "--probe", probe, "--threshold", "2"], []),
        ("bad-circuit-threshold-word", ck + ["--circuit", "--probe", probe, "--threshold", "x"], []),
        ("bad-circuit-text", ck + ["--circuit", "--probe", probe, "--text", text], []),
        ("bad-threshold-alone", ck + ["--text", text, "--threshold", "0.1"], []),
        ("bad-score-split-no-text", ck + ["--score-split", "0.0"], []),
        ("bad-score-split-name", ck + ["--score-split", "x", "--text", text], []),
        ("bad-score-split-layer", ck + ["--score-split", "9.0", "--text", text], []),
        ("bad-score-split-position", ck + ["--score-split", "0.0", "--text", text, "--position", "999"], []),
        ("bad-html-no-text", ck + ["--html", "e.html"], ["e.html"]),
        ("bad-html-folder", ck + ["--html", "nofolder/e.html", "--text", text], []),
        ("bad-html-run", ck + ["--html", "e.html", "--text", text, "--run", "norun"], []),
        ("bad-probe-default", ck + ["--text", text, "--probe", probe], []),
        ("bad-text-symbol", ck + ["--text", "Zq"], []),
        ("bad-text-long", ck + ["--text", text * 10], []),
        ("bad-logit-lens-no-text", ck + ["--logit-lens"], []),
        ("bad-attribution-no-text", ck + ["--attribution"], []),
        ("bad-compare-no-text", ["--compare", model["ckpt"], model["ckpt"], "--probe", "/nonexistent.jsonl"], []),
        ("bad-layer-word", ck + ["--text", text, "--layer", "x"], []),
        ("bad-layer-negative", ck + ["--text", text, "--layer", "-1"], []),
        ("bad-position-negative", ck + ["--trace", "0.0", "--text", text, "--position", "-2"], []),
        ("bad-top-zero", ck + ["--composition", "--top", "0"], []),
        ("bad-top-word", ck + ["--logit-lens", "--text", text, "--top", "many"], []),
        ("bad-format", ck + ["--text", text, "--format", "xml"], []),
        ("bad-swap", ck + ["--patch", "--probe", probe, "--swap", "both"], []),
        ("bad-compare-one", ["--compare", model["ckpt"], "--text", text], []),
        ("bad-weights-value", ck + ["--text", text, "--weights=2"], []),
        ("bad-seed-checkpoint", ck + ["--text", text, "--seed", "3"], []),
        ("bad-no-model", ["--text", text], []),
        ("bad-both-sources", ck + ["--config", "/nonexistent.json", "--text", text], []),
        ("bad-layer-twice", ck + ["--text", text, "--layer", "0", "--layer", "1"], []),
    ]
    # eval's table and JSON (cli/eval_command.cpp's fields, report's writer since issue 54).
    cases += [
        ("eval-probe", ["eval", "--checkpoint", model["ckpt"], "--probe", probe], []),
        ("eval-probe-json", ["eval", "--checkpoint", model["ckpt"], "--probe", probe, "--json"], []),
        ("eval-ablate-json", ["eval", "--checkpoint", model["ckpt"], "--probe", probe, "--ablate", "0.1", "--ablate",
                              "1.0", "--mean-ablation", "--json"], []),
        ("eval-ablate", ["eval", "--checkpoint", model["ckpt"], "--probe", probe, "--ablate", "1.1"], []),
        ("eval-text-json", ["eval", "--checkpoint", model["ckpt"], "--text-file", model["text_file"], "--json"], []),
        ("eval-both", ["eval", "--checkpoint", model["ckpt"], "--text-file", model["text_file"], "--probe", probe], []),
        ("bad-eval-nothing", ["eval", "--checkpoint", model["ckpt"]], []),
    ]
    if model.get("run"):
        cases.append(("html-run", ck + ["--html", "e.html", "--text", text, "--run", model["run"]], ["e.html"]))
    if model.get("timeline_run"):  # issue 57's --timeline, on a run that kept its evaluations' models
        run = model["timeline_run"]
        cases += [
            ("timeline-table", ["--timeline", "--run", run], []),
            ("timeline-json", ["--timeline", "--run", run, "--format", "json"], []),
            ("bad-timeline-no-run", ["--timeline"], []),
            ("bad-timeline-not-folder", ["--timeline", "--run", "nofolder"], []),
            ("bad-timeline-checkpoint", ck + ["--timeline", "--run", run], []),
            ("bad-timeline-text", ["--timeline", "--run", run, "--text", text], []),
        ]
    return [(name, (args[:1] + ["--threads", "1"] + args[1:]) if args[0] == "eval" else
             ["inspect-heads", "--threads", "1"] + args, files) for name, args, files in cases]


def api_queries(model):
    """(name, path with query) for every /api/ route on MODEL, typical and bad."""
    text, clean, corrupt, p = model["text"], model["clean"], model["corrupt"], str(model["position"])
    q = urllib.parse.urlencode
    return [
        ("info", "/api/info"),
        ("run", "/api/run"),
        ("page", "/"),
        ("patterns", "/api/patterns?" + q({"text": text})),
        ("patterns-layer", "/api/patterns?" + q({"text": text, "layer": 1, "head": 0, "position": p, "weights": 1})),
        ("trace", "/api/trace?" + q({"trace": "1.1", "text": text, "position": p, "top": 4})),
        ("attribution", "/api/attribution?" + q({"text": text, "position": p})),
        ("attribution-answer", "/api/attribution?" + q({"text": text, "answer": clean[-1], "against": clean[0]})),
        ("logit-lens", "/api/logit-lens?" + q({"text": text, "top": 3})),
        ("patch", "/api/patch?" + q({"clean": clean, "corrupt": corrupt, "top": 4})),
        ("composition", "/api/composition"),
        ("composition-format", "/api/composition?format=json"),
        ("roles", "/api/roles"),
        ("next", "/api/next?" + q({"text": text})),
        ("next-temperature", "/api/next?" + q({"text": text, "position": p, "temperature": 0.5, "top_k": 3})),
        ("next-greedy", "/api/next?" + q({"text": text, "temperature": 0})),
        ("next-ablate", "/api/next?" + q({"text": text, "ablate": "0.0,1.1", "answer": clean[-1]})),
        # Bad queries: each 400 (or 404) with one line.
        ("bad-mode", "/api/nosuch"),
        ("bad-path", "/nosuch"),
        ("bad-file-option", "/api/patterns?" + q({"text": text, "probe": "x"})),
        ("bad-unknown-option", "/api/trace?" + q({"text": text, "layer": 1})),
        ("bad-twice", "/api/patterns?text=a&text=b"),
        ("bad-integer", "/api/patterns?" + q({"text": text, "layer": "x"})),
        ("bad-layer-range", "/api/patterns?" + q({"text": text, "layer": 99})),
        ("bad-format", "/api/patterns?" + q({"text": text, "format": "table"})),
        ("bad-flag", "/api/patterns?" + q({"text": text, "weights": "yes"})),
        ("bad-no-text", "/api/patterns"),
        ("bad-empty-text", "/api/patterns?text="),
        ("bad-long-text", "/api/logit-lens?" + q({"text": text * 10})),
        ("bad-symbol", "/api/attribution?" + q({"text": "Zq"})),
        ("bad-trace-no-position", "/api/trace?" + q({"trace": "0.0", "text": text})),
        ("bad-trace-no-head", "/api/trace?" + q({"text": text, "position": 1})),
        ("bad-trace-name", "/api/trace?" + q({"trace": "a", "text": text, "position": 1})),
        ("bad-trace-layer", "/api/trace?" + q({"trace": "9.0", "text": text, "position": 1})),
        ("bad-trace-no-text", "/api/trace?" + q({"trace": "0.0", "position": 1})),
        ("bad-attribution-no-text", "/api/attribution"),
        ("bad-logit-lens-no-text", "/api/logit-lens"),
        ("bad-answer", "/api/logit-lens?" + q({"text": text, "answer": "ab"})),
        ("bad-against-same", "/api/attribution?" + q({"text": text, "answer": clean[0], "against": clean[0]})),
        ("bad-patch-missing", "/api/patch?" + q({"clean": clean})),
        ("bad-patch-length", "/api/patch?" + q({"clean": clean, "corrupt": corrupt[:-1]})),
        ("bad-top", "/api/composition?top=0"),
        ("bad-next-no-text", "/api/next"),
        ("bad-next-temperature", "/api/next?" + q({"text": text, "temperature": -1})),
        ("bad-next-temperature-nan", "/api/next?" + q({"text": text, "temperature": "nan"})),
        ("bad-next-top-k", "/api/next?" + q({"text": text, "top_k": -1})),
        ("bad-next-ablate", "/api/next?" + q({"text": text, "ablate": "9.9"})),
        ("bad-next-ablate-name", "/api/next?" + q({"text": text, "ablate": "x"})),
        ("bad-next-position", "/api/next?" + q({"text": text, "position": 999})),
        ("bad-next-against", "/api/next?" + q({"text": text, "answer": clean[0], "against": clean[0]})),
        ("bad-roles-option", "/api/roles?text=a"),
        ("bad-layer-negative", "/api/patterns?" + q({"text": text, "layer": -1})),
        ("bad-next-top-p", "/api/next?" + q({"text": text, "top_p": 0.5})),
        ("bad-text-file", "/api/patterns?" + q({"text": text, "text_file": "x"})),
        ("bad-dashed", "/api/logit-lens?" + q({"text": text, "--top": 3})),
        # Issue 57: /api/explain; run= and step= without a watched run.
        ("explain", "/api/explain"),
        ("bad-explain-option", "/api/explain?top=3"),
        ("bad-explain-probe", "/api/explain?probe=x"),
        # Issue 58: /api/circuit (computed once per model, at the default threshold).
        ("circuit", "/api/circuit"),
        ("bad-circuit-threshold", "/api/circuit?threshold=0.1"),
        ("bad-circuit-swap", "/api/circuit?swap=key"),
        ("bad-score-split", "/api/score-split?" + q({"score_split": "0.0", "text": text})),
        ("bad-run-no-run", "/api/patterns?" + q({"text": text, "run": 0})),
        ("bad-step-no-run", "/api/patterns?" + q({"text": text, "step": 10})),
        ("bad-run-twice", "/api/composition?run=0&run=0"),
        ("bad-step-twice", "/api/composition?step=1&step=2"),
    ]


def run_queries(text):
    """(name, path with query) for serve --run DIR: run= and step= on every kind of path."""
    q = urllib.parse.urlencode
    return [
        ("info", "/api/info"),
        ("info-step", "/api/info?step=20"),
        ("patterns-step", "/api/patterns?" + q({"text": text, "step": 20})),
        ("attribution-step", "/api/attribution?" + q({"text": text, "step": 30, "run": 0})),
        ("next-step", "/api/next?" + q({"text": text, "step": 10})),
        ("composition-run", "/api/composition?run=0"),
        ("roles-step", "/api/roles?step=40"),
        ("explain-step", "/api/explain?step=20"),
        ("explain", "/api/explain"),
        ("bad-step-not-kept", "/api/patterns?" + q({"text": text, "step": 7})),
        ("bad-step-negative", "/api/patterns?" + q({"text": text, "step": -1})),
        ("bad-step-word", "/api/composition?step=x"),
        ("bad-run-past", "/api/composition?run=1"),
        ("bad-run-word", "/api/composition?run=first"),
        ("bad-run-twice", "/api/composition?run=0&run=0"),
        ("bad-step-twice", "/api/explain?step=10&step=20"),
        ("bad-step-run-path", "/api/run?step=x"),
    ]


def serve_and_ask(serve_args, queries, out_dir, prefix):
    """Starts `mini-gpt serve` with SERVE_ARGS on a free port and writes each (name, target) of
    QUERIES' answer (status, content type, body with the port normalised) to OUT_DIR/PREFIX-name."""
    env = dict(os.environ, OMP_WAIT_POLICY="passive")
    proc = subprocess.Popen(serve_args + ["--port", "0", "--threads", "1"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env)
    try:
        first = proc.stdout.readline().decode()
        if "http://" not in first:
            raise SystemExit(f"serve did not start: {first!r} {proc.stderr.read().decode()!r}")
        port = int(first.split("http://", 1)[1].split("/", 1)[0].rsplit(":", 1)[1])
        for name, target in queries:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
            c.request("GET", target)
            r = c.getresponse()
            body = normalised(r.read().replace(f":{port}".encode(), b":PORT"))
            c.close()
            with open(os.path.join(out_dir, f"{prefix}-{name}"), "wb") as handle:
                handle.write(f"status {r.status}\ncontent-type {r.getheader('Content-Type')}\n--- body\n".encode() + body)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    return len(queries)


def serve_run_cases(binary, out_dir, run, text):
    """serve --run RUN, asked run_queries (issue 57's run= and step=)."""
    return serve_and_ask([binary, "serve", "--run", run], run_queries(text), out_dir, "run-serve")


def serve_cases(binary, out_dir, prefix, model, with_probe):
    args = [binary, "serve", "--checkpoint", model["ckpt"]] + (["--probe", model["probe"]] if with_probe else [])
    serve_and_ask(args, api_queries(model), out_dir, prefix)


def capture(args):
    os.makedirs(args.out_dir, exist_ok=True)
    # At one path for every capture: the outputs name it.
    fixture_probe = os.path.join(tempfile.gettempdir(), "inspect_bytes_fixture_probe.jsonl")
    with open(fixture_probe, "w", encoding="utf-8") as handle:
        handle.write(FIXTURE_PROBE)
    if args.default:
        default = {"ckpt": os.path.abspath(args.default), "probe": os.path.abspath(args.default_probe),
                   "run": os.path.abspath(args.default_run) if args.default_run else None}
    else:
        default = {"ckpt": os.path.join(FIXTURES, "failed_who.safetensors"),
                   "probe": os.path.join(FIXTURES, "circuit_probe.jsonl"), "run": None}
    default["timeline_run"] = os.path.abspath(args.timeline_run) if args.timeline_run else None
    default.update(text="小韩拿着黑花瓶。小曹买了绿帽子。小郑看见橙杯子。小韩有什么？小韩拿着", position=20,
                   clean="小韩拿着黑花瓶。小韩有什么？小韩拿着", corrupt="小韩拿着绿花瓶。小韩有什么？小韩拿着")
    fixture = {"ckpt": os.path.join(FIXTURES, "heads_ref.safetensors"), "probe": fixture_probe, "run": None,
               "text": "小丁拿着红色的苹果。谁拿着苹果？", "position": 12,
               "clean": "小丁拿着红色的苹果。谁拿着", "corrupt": "小丁拿着红色的果果。谁拿着"}
    for name, model in (("default", default), ("fixture", fixture)):
        model["text_file"] = os.path.join(tempfile.gettempdir(), f"inspect_bytes_{name}_text.txt")
        with open(model["text_file"], "w", encoding="utf-8") as handle:
            handle.write(model["text"] * 6)
    binary = os.path.abspath(args.binary)
    count = 0
    for prefix, model in (("default", default), ("fixture", fixture)):
        for name, case_args, files in inspect_cases(model):
            run_case(args.out_dir, f"{prefix}-inspect-{name}", case_args, binary, files)
            count += 1
        for with_probe in (True, False):
            serve_prefix = f"{prefix}-serve{'-probe' if with_probe else ''}"
            serve_cases(binary, args.out_dir, serve_prefix, model, with_probe)
            count += len(api_queries(model))
    if args.timeline_run:
        count += serve_run_cases(binary, args.out_dir, os.path.abspath(args.timeline_run), "小韩拿着黑花瓶。小韩有什么？")
    print(f"inspect_bytes_check: {count} outputs captured into {args.out_dir}")
    return 0


def compare(args):
    names = sorted(set(os.listdir(args.before)) | set(os.listdir(args.after)))
    differ = []
    for name in names:
        a, b = os.path.join(args.before, name), os.path.join(args.after, name)
        if not (os.path.exists(a) and os.path.exists(b)):
            differ.append(name)
            print(f"{name}: only in {'before' if os.path.exists(a) else 'after'}")
            continue
        with open(a, "rb") as fa, open(b, "rb") as fb:
            da, db = fa.read(), fb.read()
        if da != db:
            differ.append(name)
            print(f"--- {name} differs")
            la = da.decode("utf-8", "replace").splitlines()
            lb = db.decode("utf-8", "replace").splitlines()
            for line in list(difflib.unified_diff(la, lb, lineterm="", n=0))[2:12]:
                print("  " + line[:400])
    print(f"inspect_bytes_check: {len(names)} outputs compared, {len(names) - len(differ)} equal, {len(differ)} differ")
    return 1 if differ else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("capture")
    c.add_argument("binary")
    c.add_argument("out_dir")
    c.add_argument("--default", help="the default model's checkpoint (default: a fixture)")
    c.add_argument("--default-probe", help="its probe set")
    c.add_argument("--default-run", help="its run directory (for --html --run)")
    c.add_argument("--timeline-run", help="a run that kept its evaluations' models (evals/): --timeline on it, and "
                   "serve --run on it with run= and step=")
    d = sub.add_parser("compare")
    d.add_argument("before")
    d.add_argument("after")
    args = parser.parse_args()
    if args.command == "capture" and args.default and not args.default_probe:
        parser.error("--default needs --default-probe")
    return capture(args) if args.command == "capture" else compare(args)


if __name__ == "__main__":
    sys.exit(main())
