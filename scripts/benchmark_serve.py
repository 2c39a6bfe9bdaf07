"""`benchmark.py --serve`: how long `mini-gpt serve` takes to recompute the live page for a
64-symbol text (the target is 50 ms on the server).

    python3 scripts/benchmark.py --serve                         # trains a 30-step model of the default shape
    python3 scripts/benchmark.py --serve --checkpoint runs/default/best.safetensors --repeats 50

One recompute is what the page asks after a keystroke: /api/patterns (every head's weights,
summaries and importances), /api/next, /api/attribution, /api/logit-lens and /api/trace at
the last position, sent at once over their own connections as the browser sends them (the
server computes two at a time, --threads 2, each on one core). Each text is the corpus's
first 64 symbols shifted by one symbol per repeat, so no two recomputes are alike. Printed:
the median and the range of the whole recompute, and of each endpoint alone (sent one at a
time). A benchmark, not a test: it never fails on timing. benchmark.py calls this module
with its options; the server's start and the model come from serve_common.py.
"""
import concurrent.futures
import http.client
import os
import shutil
import signal
import statistics
import tempfile
import time
import urllib.parse

import script_io
import serve_common


def get(port, path, params):
    # A server that died or stopped answering is the benchmark's failure (exit 1), named as
    # such, not taken for a failed write to standard output.
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        c.request("GET", path + "?" + urllib.parse.urlencode(params))
        r = c.getresponse()
        body = r.read()
        c.close()
    except (OSError, http.client.HTTPException) as e:
        raise script_io.ScriptError(f"mini-gpt serve stopped answering {path}: {e}", 1) from None
    if r.status != 200:
        raise script_io.ScriptError(f"mini-gpt serve answered {path} with {r.status}: {body[:200]!r}", 1)
    return body


def page_requests(text):
    P = len(text) - 1
    return [("/api/patterns", {"text": text}),
            ("/api/next", {"text": text, "position": P, "temperature": 1, "top_k": 0}),
            ("/api/attribution", {"text": text, "position": P}),
            ("/api/logit-lens", {"text": text, "position": P}),
            ("/api/trace", {"trace": "3.1", "text": text, "position": P})]


def summary(ms):
    return f"median {statistics.median(ms):.1f} ms (min {min(ms):.1f}, max {max(ms):.1f}, n {len(ms)})"


def serve_table(args):
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    work = tempfile.mkdtemp(prefix="mini-gpt-bench-serve-")
    served = None
    try:
        checkpoint = args.checkpoint
        if checkpoint is None:
            checkpoint = os.path.join(serve_common.train_run(args.binary, root, os.path.join(work, "run")), "best.safetensors")
        try:
            served = serve_common.Served(args.binary, "--checkpoint", checkpoint, "--threads", "2")
        except serve_common.ServeDidNotStart as e:  # a missing or refused checkpoint: mini-gpt's own line
            raise script_io.ScriptError(f"mini-gpt serve did not start: {e.reason.removeprefix('mini-gpt: error: ')}",
                                          2 if e.status == 2 else 1) from None
        with open(os.path.join(root, "data", "corpus.txt"), encoding="utf-8") as f:
            corpus = f.read(4096).replace("\n", "")
        texts = [corpus[k:k + 64] for k in range(args.repeats + 5)]
        pool = concurrent.futures.ThreadPoolExecutor(max_workers=8)
        whole, alone = [], {path: [] for path, _ in page_requests(texts[0])}
        for k, text in enumerate(texts):
            started = time.perf_counter()
            list(pool.map(lambda r: get(served.port, *r), page_requests(text)))
            elapsed = 1000 * (time.perf_counter() - started)
            if k >= 5:  # the first few warm the caches
                whole.append(elapsed)
            for path, params in page_requests(text):
                started = time.perf_counter()
                get(served.port, path, params)
                if k >= 5:
                    alone[path].append(1000 * (time.perf_counter() - started))
        pool.shutdown()
        with open("/proc/cpuinfo") as f:
            cpu = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "unknown")
        print(f"serve: a recompute of the live page for a 64-symbol text, {checkpoint}, on {cpu}")
        print(f"  the page's five requests at once: {summary(whole)} (target 50 ms)")
        for path, ms in alone.items():
            print(f"  {path} alone: {summary(ms)}")
    finally:
        if served:
            served.stop(signal.SIGTERM)
        shutil.rmtree(work, ignore_errors=True)
    return 0
