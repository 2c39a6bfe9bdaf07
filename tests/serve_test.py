#!/usr/bin/python3
"""`mini-gpt serve` over HTTP (issue 44), against a 30-step run of the default model's shape:

  1. every endpoint's answer is, byte for byte, what `inspect-heads --format json` prints for
     the same options (patterns, trace, attribution, logit-lens, patch, composition, roles, circuit),
     and /api/next's logits are the logit lens's last stage (to float rounding), its probabilities
     their softmax at the temperature over the top_k;
  2. every bad request is answered with its status and a JSON {"error"} (400, 403, 404, 405,
     413, 429), and the server keeps serving; a query string of kMaxQueryBytes is read, one
     byte more is refused;
  3. 200 concurrent requests are each answered 200 or 429, none hangs, and the server serves
     afterwards;
  4. the watched run: a line appended to metrics.jsonl is a new evaluation; a replaced
     latest.safetensors that is truncated, or whose data fails its checksum, leaves the last
     good model served with the reason given; a good one is loaded;
  5. a port in use is one line and exit 2; --host other than loopback warns in one line;
     SIGINT exits 130 and SIGTERM 143, each within a second.
Prints the bad-request table and the counts.
Usage: serve_test.py MINI_GPT_BINARY SOURCE_DIR
"""
import collections
import concurrent.futures
import http.client
import json
import math
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
import serve_common  # noqa: E402
import test_checks  # noqa: E402
from test_checks import check, fail  # noqa: E402

MAX_QUERY_BYTES = 8000  # serve/server.h's kMaxQueryBytes


def request(port, method, target, headers=None, body=None, timeout=30):
    """(status, body bytes) of one request on its own connection."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    c.request(method, target, body=body, headers=headers or {})
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, data


def get(port, path, **params):
    query = urllib.parse.urlencode(params)
    return request(port, "GET", path + ("?" + query if query else ""))


def cli(binary, *args):
    r = subprocess.run([binary, "inspect-heads", *args, "--format", "json"], capture_output=True)
    if r.returncode != 0:
        fail(f"inspect-heads {' '.join(args)} exited {r.returncode}: {r.stderr.decode().strip()}")
    return r.stdout


def equality(binary, port, checkpoint, probe):
    """Each mode's JSON from the server against the command line's, byte for byte."""
    texts = [serve_common.SHOWCASE, "灰鞋子是小马的。灰鞋子是谁的？灰鞋子是小", "小", "红铅笔是小陈的。红铅笔是谁的？"]
    cases = []  # (mode, query options, command line options)
    for t in texts:
        n = len(t)
        cases.append(("patterns", {"text": t}, ["--text", t, "--probe", probe]))
        cases.append(("patterns", {"text": t, "position": n - 1}, ["--text", t, "--position", str(n - 1), "--probe", probe]))
        cases.append(("patterns", {"text": t, "layer": 1, "head": 0}, ["--text", t, "--layer", "1", "--head", "0", "--probe", probe]))
        for layer in range(4):
            for head in range(2):
                for p in sorted({0, n // 2, n - 1}):
                    cases.append(("trace", {"trace": f"{layer}.{head}", "text": t, "position": p},
                                  ["--trace", f"{layer}.{head}", "--text", t, "--position", str(p)]))
        for p in sorted({0, n - 1}):
            cases.append(("attribution", {"text": t, "position": p}, ["--attribution", "--text", t, "--position", str(p)]))
            cases.append(("logit-lens", {"text": t, "position": p}, ["--logit-lens", "--text", t, "--position", str(p)]))
        cases.append(("attribution", {"text": t, "answer": "马", "against": "林"},
                      ["--attribution", "--text", t, "--answer", "马", "--against", "林"]))
        cases.append(("logit-lens", {"text": t, "answer": "马", "top": 3}, ["--logit-lens", "--text", t, "--answer", "马", "--top", "3"]))
        # /api/next is inspect-heads --next-symbol (one row of the request layer's table).
        cases.append(("next", {"text": t, "temperature": 0.5, "top_k": 3},
                      ["--next-symbol", "--text", t, "--temperature", "0.5", "--top-k", "3"]))
        cases.append(("next", {"text": t, "ablate": "0.1,1.0", "top_p": 0.9, "answer": "马"},
                      ["--next-symbol", "--text", t, "--ablate", "0.1,1.0", "--top-p", "0.9", "--answer", "马"]))
    for clean, corrupt in [(serve_common.SHOWCASE, serve_common.SHOWCASE.replace("小马的", "小林的")),
                           ("灰鞋子是小马的。灰鞋子是谁的？灰鞋子是小", "灰鞋子是小陈的。灰鞋子是谁的？灰鞋子是小")]:
        cases.append(("patch", {"clean": clean, "corrupt": corrupt}, ["--patch", "--clean", clean, "--corrupt", corrupt]))
        cases.append(("patch", {"clean": clean, "corrupt": corrupt, "answer": "马", "against": "林"},
                      ["--patch", "--clean", clean, "--corrupt", corrupt, "--answer", "马", "--against", "林"]))
    cases.append(("composition", {}, ["--composition"]))
    cases.append(("roles", {}, ["--roles", "--probe", probe]))
    cases.append(("explain", {}, ["--explain", "--probe", probe]))
    cases.append(("circuit", {}, ["--circuit", "--probe", probe]))
    per_mode = {}
    for mode, params, args in cases:
        if mode in ("roles", "explain", "circuit"):  # over the whole probe set, once per model: a minute or more
            query = urllib.parse.urlencode(params)  # under the sanitizers on a busy host
            status, body = request(port, "GET", f"/api/{mode}" + ("?" + query if query else ""), timeout=600)
        else:
            status, body = get(port, f"/api/{mode}", **params)
        check(status == 200, f"/api/{mode} {params}: status {status}: {body[:300]!r}")
        expected = cli(binary, "--checkpoint", checkpoint, *args)
        check(body == expected, f"/api/{mode} {params}: {len(body)} bytes differ from inspect-heads' {len(expected)}")
        per_mode[mode] = per_mode.get(mode, 0) + 1
    # /api/next: its logits are the logit lens's last stage (the model's output), its
    # probabilities softmax(logits / temperature) over the top_k.
    for t in texts:
        for temperature, top_k in [(1.0, 10), (0.7, 10), (2.0, 5)]:
            _, lens_body = get(port, "/api/logit-lens", text=t)
            final = json.loads(lens_body)["stages"][-1]["top"]
            status, body = get(port, "/api/next", text=t, temperature=temperature, top_k=top_k)
            check(status == 200, f"/api/next: {status} {body[:200]!r}")
            nxt = json.loads(body)
            check([e["symbol"] for e in nxt["top"][:top_k]] == [e["symbol"] for e in final[:top_k]],
                  f"/api/next on {t!r}: top symbols {[e['symbol'] for e in nxt['top']]} against the lens's {final}")
            # The lens reads the last stream through ln_f again: the same logits to float rounding.
            check(all(abs(a["logit"] - b["logit"]) <= 1e-5 * max(1.0, abs(b["logit"])) for a, b in zip(nxt["top"], final[:top_k])),
                  f"/api/next's logits {nxt['top']} differ from the lens's {final}")
            z = [math.exp((e["logit"] - nxt["top"][0]["logit"]) / temperature) for e in nxt["top"][:top_k]]
            for e, w in zip(nxt["top"], z):
                check(abs(e["probability"] - w / sum(z)) < 1e-6, f"/api/next: probability {e} against {w / sum(z)}")
            check(all(e["probability"] == 0 for e in nxt["top"][top_k:]), "/api/next: a symbol outside the top_k has probability")
            per_mode["next"] = per_mode.get("next", 0) + 1
        # top_p: the shortest prefix whose probability reaches p, renormalised (what `sample` draws from).
        _, full_body = get(port, "/api/next", text=t)
        full = json.loads(full_body)["top"]
        status, body = get(port, "/api/next", text=t, top_p=0.6)
        check(status == 200, f"/api/next top_p: {status} {body[:200]!r}")
        nucleus = json.loads(body)
        kept, mass = 0, 0.0
        while kept < len(full) and mass < 0.6:
            mass += full[kept]["probability"]
            kept += 1
        check(nucleus["top_p"] == 0.6, f"/api/next top_p: {nucleus.get('top_p')}")
        if mass >= 0.6:  # the nucleus ends within the 10 listed: each kept one divided by its mass, the rest 0
            for rank, (e, f) in enumerate(zip(nucleus["top"], full)):
                want = f["probability"] / mass if rank < kept else 0.0
                check(abs(e["probability"] - want) < 1e-6, f"/api/next top_p 0.6 rank {rank}: {e['probability']} against {want}")
        else:  # a flat model: all 10 listed are kept, each scaled by the same 1 / mass > 1
            ratios = [e["probability"] / f["probability"] for e, f in zip(nucleus["top"], full)]
            check(ratios[0] > 1 and max(ratios) - min(ratios) < 1e-6 * ratios[0],
                  f"/api/next top_p 0.6 on a flat model: ratios {ratios}")
    return per_mode


def bad_requests(port):
    """Each bad request, its status and a JSON error; returns the table's rows."""
    long_text = "小" * 65
    q = lambda **p: "?" + urllib.parse.urlencode(p)  # noqa: E731
    cases = [
        ("an option the mode does not read", "GET", "/api/composition" + q(text="小"), {}, None, 400),
        ("an unknown option", "GET", "/api/patterns" + q(text="小", colour="red"), {}, None, 400),
        ("an option that names a file: checkpoint", "GET", "/api/patterns" + q(text="小", checkpoint="/etc/passwd"), {}, None, 400),
        ("an option that names a file: probe", "GET", "/api/roles" + q(probe="/etc/passwd"), {}, None, 400),
        ("an option that names a file: html", "GET", "/api/patterns" + q(text="小", html="/tmp/x.html"), {}, None, 400),
        ("an option that names a file: svg", "GET", "/api/patch" + q(clean="小", corrupt="马", svg="/tmp/x.svg"), {}, None, 400),
        ("an option that names a file: run", "GET", "/api/patterns" + q(text="小", run="/tmp"), {}, None, 400),
        ("a text longer than block_size", "GET", "/api/patterns" + q(text=long_text), {}, None, 400),
        ("a symbol outside the vocabulary", "GET", "/api/next" + q(text="小☃"), {}, None, 400),
        ("an empty text", "GET", "/api/patterns" + q(text=""), {}, None, 400),
        ("no text", "GET", "/api/attribution", {}, None, 400),
        ("a position past the text", "GET", "/api/next" + q(text="小马", position=5), {}, None, 400),
        ("a position that is no integer", "GET", "/api/trace" + q(trace="0.0", text="小马", position="1x"), {}, None, 400),
        ("a head the model lacks", "GET", "/api/trace" + q(trace="9.9", text="小马", position=1), {}, None, 400),
        ("an ablation of a head the model lacks", "GET", "/api/next" + q(text="小马", ablate="7.0"), {}, None, 400),
        ("a negative temperature", "GET", "/api/next" + q(text="小马", temperature=-1), {}, None, 400),
        ("a temperature of nan", "GET", "/api/next" + q(text="小马", temperature="nan"), {}, None, 400),
        ("an option given twice", "GET", "/api/patterns?text=%E5%B0%8F&text=%E9%A9%AC", {}, None, 400),
        ("texts of unequal length to patch", "GET", "/api/patch" + q(clean="小马", corrupt="小"), {}, None, 400),
        ("invalid UTF-8 in the text", "GET", "/api/patterns?text=%FF%FE", {}, None, 400),
        ("format other than json", "GET", "/api/patterns" + q(text="小", format="table"), {}, None, 400),
        ("a Host header of another site (DNS rebinding)", "GET", "/", {"Host": f"evil.example:{port}"}, None, 403),
        ("a Host header with the wrong port", "GET", "/api/info", {"Host": "127.0.0.1:1"}, None, 403),
        ("an unknown path", "GET", "/nowhere", {}, None, 404),
        ("an unknown mode", "GET", "/api/circuits", {}, None, 404),
        ("a step at which the run kept no model", "GET", "/api/patterns" + q(text="小", step=7), {}, None, 404),
        ("a step that is no whole number", "GET", "/api/patterns" + q(text="小", step="-1"), {}, None, 400),
        ("a run index past the runs", "GET", "/api/patterns" + q(text="小", run=1), {}, None, 400),
        ("a path below a mode", "GET", "/api/patterns/x", {}, None, 404),
        ("POST", "POST", "/api/patterns", {}, b"text=x", 405),
        ("PUT", "PUT", "/", {}, b"x", 405),
        ("DELETE", "DELETE", "/api/info", {}, None, 405),
        ("OPTIONS", "OPTIONS", "/api/next", {}, None, 405),
        (f"a query string of {MAX_QUERY_BYTES + 1} bytes", "GET", "/api/next?text=" + "a" * (MAX_QUERY_BYTES - 4), {}, None, 413),
        ("a query string of 16,385 bytes", "GET", "/api/next?text=" + "a" * (16385 - 5), {}, None, 413),
        ("a body of 1 MB", "POST", "/api/next", {}, b"x" * (1 << 20), 413),
    ]
    # The errors a page words in its own language carry a code and its numbers beside the
    # English "error" (serve/api.cpp error_json, words.js serverError); every other, code "".
    codes = {
        "a text longer than block_size": {"code": "too_long", "length": 65, "block_size": 64},
        "a symbol outside the vocabulary": {"code": "unknown_symbol", "position": 1},
        "an empty text": {"code": "empty_text"},
        "an unknown path": {"code": "not_found"},
        "an unknown mode": {"code": "not_found"},
        "a path below a mode": {"code": "not_found"},
        "a step at which the run kept no model": {"code": "step_not_kept", "step": 7},
    }
    rows = []
    for what, method, target, headers, body, expected in cases:
        try:
            status, data = request(port, method, target, headers, body)
        except (ConnectionError, http.client.HTTPException) as e:
            fail(f"{what}: the connection failed: {e}")
        check(status == expected, f"{what}: status {status}, expected {expected}: {data[:300]!r}")
        try:
            error = json.loads(data)["error"]
        except (ValueError, KeyError, TypeError):
            fail(f"{what}: the answer is not JSON {{\"error\": ...}}: {data[:300]!r}")
        check(isinstance(error, str) and error, f"{what}: an empty error")
        answer = json.loads(data)
        for key, value in codes.get(what, {"code": ""}).items():
            check(answer.get(key) == value, f"{what}: {key} is {answer.get(key)!r}, expected {value!r}: {answer}")
        rows.append((what, status, error))
        status, _ = get(port, "/api/info")
        check(status == 200, f"after {what}: the server answers {status}")
    # A query string of exactly the limit is read (a 400 about its content, not a 413).
    status, data = request(port, "GET", "/api/next?text=" + "a" * (MAX_QUERY_BYTES - 5))
    check(len("text=" + "a" * (MAX_QUERY_BYTES - 5)) == MAX_QUERY_BYTES and status == 400 and b"block_size" in data,
          f"a query of {MAX_QUERY_BYTES} bytes: {status} {data[:200]!r}")
    rows.append((f"a query string of {MAX_QUERY_BYTES} bytes (read: its text is too long)", status, json.loads(data)["error"]))
    # Bytes that are no HTTP at all.
    for garbage in (b"GARBAGE\r\n\r\n", b"GET\r\n\r\n", b"\x00\xff" * 100 + b"\r\n\r\n"):
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        s.sendall(garbage)
        reply = b""
        try:
            while True:
                chunk = s.recv(4096)
                if not chunk:
                    break
                reply += chunk
        except socket.timeout:
            pass
        s.close()
        status = int(reply.split(b" ", 2)[1]) if reply.startswith(b"HTTP/1.1 ") else None
        check(status == 400, f"garbage {garbage[:20]!r}: answered {reply[:100]!r}")
        rows.append((f"bytes that are no HTTP request ({garbage[:12]!r}...)", status, json.loads(reply.split(b"\r\n\r\n", 1)[1])["error"]))
    return rows


def flood(port, n=200):
    """N requests at once: each 200 or 429, none hung; the server serves afterwards."""
    text = serve_common.SHOWCASE

    busy_codes = []

    def one(_):
        try:
            status, data = get(port, "/api/patterns", text=text)
            if status == 429:
                busy_codes.append(json.loads(data).get("code"))
            return status
        except Exception as e:  # noqa: BLE001 - any failure is a finding
            return f"{type(e).__name__}: {e}"
    started = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=n) as pool:
        statuses = list(pool.map(one, range(n), timeout=120))
    elapsed = time.monotonic() - started
    counts = dict(collections.Counter(map(str, statuses)))
    check(all(s in (200, 429) for s in statuses), f"{n} concurrent requests: {counts}")
    check(all(c == "busy" for c in busy_codes), f"a 429's code is not \"busy\": {set(busy_codes)}")
    status, _ = get(port, "/api/patterns", text=text)
    check(status == 200, f"after {n} concurrent requests the server answers {status}")
    return counts, elapsed


def wait_for(what, condition, timeout=20):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.2)
    fail(f"{what}: not within {timeout} s")


def watched_run(port, run):
    """Lines appended to metrics.jsonl; replaced checkpoints, bad and good."""
    status = lambda: json.loads(get(port, "/api/run")[1])  # noqa: E731
    before = status()
    evals = before["curves"]["evals_total"]
    with open(os.path.join(run, "metrics.jsonl"), "a") as f:
        f.write(json.dumps({"step": 999, "loss": 1.0, "val_loss": 0.9, "probe_accuracy": 0.5,
                            "probe_accuracy_by_kind": {"who": 0.5}, "head_roles": [{"layer": 0, "head": 0, "induction": 0.3}]}) + "\n")
        f.write('{"step": 1000, "loss"')  # a line still being written: not counted yet
    after = wait_for("the appended evaluation", lambda: (lambda s: s if s["curves"]["evals_total"] == evals + 1 else None)(status()))
    check(after["curves"]["evals"][-1]["step"] == 999, f"the new evaluation: {after['curves']['evals'][-1]}")
    generation = after["model"]["generation"]
    latest = os.path.join(run, "latest.safetensors")
    good = open(latest, "rb").read()
    step = json.loads(get(port, "/api/info")[1])["step"]

    def replace(data):
        tmp = latest + ".new"
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, latest)
    reasons = []
    previous = ""
    for what, data, said in [("truncated", good[: len(good) // 2], "truncated"),
                             ("a bad checksum", good[:-100] + bytes(b ^ 0x55 for b in good[-100:]), "checksum")]:
        replace(data)
        s = wait_for(f"the {what} checkpoint's reason",
                     lambda: (lambda s: s if s["model"]["reload_error"] not in ("", previous) else None)(status()))
        previous = s["model"]["reload_error"]
        check(said in previous and "still serving step" in previous, f"the {what} checkpoint's reason: {previous}")
        info = json.loads(get(port, "/api/info")[1])
        check(info["step"] == step and info["generation"] == generation,
              f"after a {what} checkpoint the server serves step {info['step']} generation {info['generation']}")
        check(get(port, "/api/next", text="小")[0] == 200, f"after a {what} checkpoint the server does not compute")
        reasons.append((what, previous))
    replace(good)
    # Loading it scores its roles and composition on one core: 6 s on a quiet 2-core host,
    # 30 to 40 s beside other builds and tests at a load of 9 (3496b83's server as well).
    s = wait_for("the good checkpoint's load", lambda: (lambda s: s if s["model"]["generation"] == generation + 1 else None)(status()),
                 timeout=120)
    check(s["model"]["reload_error"] == "", f"after a good checkpoint: {s['model']}")
    return reasons


def main():
    binary, source = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    work = tempfile.mkdtemp(prefix="mini-gpt-serve-")
    started = []  # every server started, stopped on any way out (a failed check exits at once)
    try:
        run = serve_common.train_run(binary, source, os.path.join(work, "run"))
        checkpoint = os.path.join(run, "best.safetensors")
        probe = os.path.join(source, "data", "probe.jsonl")
        served = serve_common.Served(binary, "--checkpoint", checkpoint, "--probe", probe, "--run", run,
                                     "--threads", "2", "--queue", "4")
        started.append(served)
        port = served.port
        check(served.url == f"http://127.0.0.1:{port}", f"the address printed: {served.first_line!r}")
        status, page = get(port, "/")
        check(status == 200 and b"mini-gpt live" in page and b"http://" not in page.replace(b"http://www.w3.org", b""),
              "the page: 200, and nothing fetched from another address")

        per_mode = equality(binary, port, checkpoint, probe)
        print("endpoint equality, checks per mode: " + ", ".join(f"{m} {n}" for m, n in sorted(per_mode.items())) +
              f" ({sum(per_mode.values())} in all)", flush=True)
        # step=N: the model the run kept at that evaluation, as inspect-heads reads it (issue 57).
        kept = os.path.join(run, "evals", "step_0000020.safetensors")
        for mode, params, args in [("patterns", {"text": "灰鞋子是谁的？"}, ["--text", "灰鞋子是谁的？", "--probe", probe]),
                                   ("attribution", {"text": "灰鞋子是谁的？"}, ["--attribution", "--text", "灰鞋子是谁的？"])]:
            status, body = get(port, f"/api/{mode}", step=20, **params)
            check(status == 200 and body == cli(binary, "--checkpoint", kept, *args),
                  f"/api/{mode}?step=20 differs from inspect-heads on {kept}: {status} {body[:200]!r}")
            check(body != get(port, f"/api/{mode}", **params)[1], f"/api/{mode}?step=20 is the served model's")
        print("step=20: patterns and attribution equal inspect-heads on evals/step_0000020.safetensors", flush=True)

        rows = bad_requests(port)
        print("bad requests (status, the error the server gave):")
        for what, status, error in rows:
            print(f"  {status}  {what}: {error[:110]}")
        counts, elapsed = flood(port)
        print(f"200 concurrent requests (2 threads, a queue of 4): {counts} in {elapsed:.1f} s; the server served afterwards")
        check(counts.get("429", 0) > 0, f"no request was refused 429 when 200 came at once: {counts}")

        for what, reason in watched_run(port, run):
            print(f"replaced checkpoint, {what}: {reason}")

        # A port in use: one line, exit 2.
        r = subprocess.run([binary, "serve", "--checkpoint", checkpoint, "--port", str(port)], capture_output=True,
                           text=True, timeout=120)
        lines = r.stderr.strip().splitlines()
        check(r.returncode == 2 and len(lines) == 1 and lines[0].startswith("mini-gpt: error: cannot listen on"),
              f"a port in use: exit {r.returncode}, stderr {r.stderr!r}")
        print(f"port in use: exit {r.returncode}: {lines[0]}")

        status, elapsed_term, out, err = served.stop(signal.SIGTERM)
        check(status == 143 and elapsed_term < 1.0, f"SIGTERM: exit {status} after {elapsed_term:.2f} s; {err!r}")
        # Any host but loopback: one warning line; SIGINT stops it.
        other = serve_common.Served(binary, "--checkpoint", checkpoint, "--host", "0.0.0.0")
        started.append(other)
        check(get(other.port, "/api/info")[0] == 200, "bound to 0.0.0.0, a request with Host 127.0.0.1:PORT is served")
        status, elapsed_int, out, err = other.stop(signal.SIGINT)
        warnings = [l for l in err.splitlines() if l]
        check(status == 130 and elapsed_int < 1.0, f"SIGINT: exit {status} after {elapsed_int:.2f} s")
        check(len(warnings) == 1 and "warning" in warnings[0] and "anyone" in warnings[0], f"--host 0.0.0.0: stderr {err!r}")
        print(f"SIGTERM: exit 143 after {elapsed_term:.2f} s; SIGINT: exit 130 after {elapsed_int:.2f} s; "
              f"--host 0.0.0.0: {warnings[0]}")
    finally:
        for s in started:
            if s.process.poll() is None:
                s.process.kill()
                s.process.wait()
        shutil.rmtree(work, ignore_errors=True)
    print(f"serve_test: {test_checks.passed} checks passed")


if __name__ == "__main__":
    main()
