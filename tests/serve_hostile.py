#!/usr/bin/python3
"""Slow, idle and greedy clients of `mini-gpt serve` (issue 53), one case per call, for
tests/hostile_test.sh: exits 0 when the server kept its promise (docs/cli.md, serve), else
prints what it did instead on one line and exits 1. Every request loop is bounded in count
and time; only 127.0.0.1 is reached.

Usage: serve_hostile.py PORT PID CASE   (PID: the server's, for its memory)
"""
import json
import os
import socket
import sys
import time

PORT, PID, CASE = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
HOST = f"127.0.0.1:{PORT}"


def connect():
    s = socket.create_connection(("127.0.0.1", PORT), timeout=10)
    s.settimeout(10)
    return s


def reply_of(s, limit=15.0):
    """(status, body) of the answer on S, reading until the server closes (at most LIMIT s)."""
    data = b""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        try:
            s.settimeout(max(0.05, deadline - time.monotonic()))
            chunk = s.recv(65536)
        except socket.timeout:
            break
        except ConnectionError:
            break
        if not chunk:
            break
        data += chunk
    if not data.startswith(b"HTTP/1.1 "):
        return None, data
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), body


def get(target, limit=10.0):
    s = connect()
    s.sendall(f"GET {target} HTTP/1.1\r\nHost: {HOST}\r\n\r\n".encode())
    started = time.monotonic()
    status, body = reply_of(s, limit)
    s.close()
    return status, body, time.monotonic() - started


def rss_kb():
    with open(f"/proc/{PID}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def fail(message):
    print(f"serve_hostile {CASE}: {message}")
    sys.exit(1)


def info_within(seconds, what):
    status, _, took = get("/api/info", seconds + 1)
    if status != 200 or took > seconds:
        fail(f"/api/info beside {what}: status {status} after {took:.2f} s (promised 200 at once)")
    return took


def slow_headers():
    """Two clients send a header line every 2 s: the server answers others at once, and
    closes each slow one by its request deadline (5 s), not when it stops sending."""
    slow = [connect() for _ in range(2)]
    for s in slow:
        s.sendall(f"GET /api/info HTTP/1.1\r\nHost: {HOST}\r\n".encode())
    started = time.monotonic()
    closed_at = [None, None]
    worst = 0.0
    for round_ in range(6):  # 12 s of trickling
        for i, s in enumerate(slow):
            if closed_at[i] is None:
                try:
                    s.sendall(f"X-Slow-{round_}: 1\r\n".encode())
                except OSError:
                    closed_at[i] = time.monotonic() - started
        worst = max(worst, info_within(1.0, "two clients trickling header lines"))
        time.sleep(1.8)
        for i, s in enumerate(slow):
            if closed_at[i] is None:
                s.setblocking(False)
                try:
                    if s.recv(65536, socket.MSG_PEEK) is not None:
                        closed_at[i] = time.monotonic() - started
                except BlockingIOError:
                    pass
                except OSError:
                    closed_at[i] = time.monotonic() - started
                s.setblocking(True)
    for s in slow:
        s.close()
    if any(t is None or t > 7.5 for t in closed_at):
        fail(f"the trickling clients were closed at {closed_at} s (promised by the 5 s request deadline)")


def idle_connections(n, seconds):
    idle = [connect() for _ in range(n)]
    time.sleep(0.3)
    try:
        took = info_within(seconds, f"{n} idle connections")
    finally:
        for s in idle:
            s.close()
    return took


def chunked_body():
    """64 MiB sent in chunks: refused 413 once 8,000 bytes have come, memory flat."""
    before = rss_kb()
    s = connect()
    s.sendall(f"POST /api/next HTTP/1.1\r\nHost: {HOST}\r\nTransfer-Encoding: chunked\r\n\r\n".encode())
    chunk = b"%x\r\n" % 65536 + b"x" * 65536 + b"\r\n"
    sent = 0
    try:
        for _ in range(1024):
            s.sendall(chunk)
            sent += len(chunk)
    except OSError:
        pass
    status, body = reply_of(s, 10)
    s.close()
    grown = rss_kb() - before
    if status != 413 or grown > 20000:
        fail(f"a 64 MiB chunked body: status {status}, the server grew {grown} kB ({sent} bytes sent)")


def many_headers():
    before = rss_kb()
    s = connect()
    s.sendall(f"GET /api/info HTTP/1.1\r\nHost: {HOST}\r\n".encode())
    line = b"X-Pad: " + b"a" * 1000 + b"\r\n"
    try:
        for _ in range(64000):
            s.sendall(line)
    except OSError:
        pass
    status, _ = reply_of(s, 10)
    s.close()
    grown = rss_kb() - before
    if status != 431 or grown > 20000:
        fail(f"64,000 header lines of 1 KB: status {status} (promised 431), the server grew {grown} kB")


def raw(request, expected):
    s = connect()
    try:
        s.sendall(request)
    except OSError:
        pass
    status, body = reply_of(s, 10)
    s.close()
    if status != expected:
        fail(f"{request[:60]!r}: status {status}, expected {expected}: {body[:200]!r}")
    try:
        json.loads(body)["error"]
    except (ValueError, KeyError, TypeError):
        fail(f"{request[:60]!r}: the answer is not JSON {{\"error\"}}: {body[:200]!r}")


def control_characters():
    bad = [chr(c) for c in range(0x20)] + ["\x7f", "\u0085", "\u2028", "\u2029", "\u202e"]
    for value in ["%0A", "%1B", "%0D%0A", "%E2%80%A8", "%E2%80%AE", "%C2%85", "%7F", "%FF"]:
        for target in (f"/api/next?text=%E5%B0%8F&ablate={value}", f"/api/patterns?text=%E5%B0%8F&x{value}=1",
                       f"/api/next?text={value}", f"/no{value}where"):
            status, body, _ = get(target)
            if status == 200:  # a text the vocabulary holds ("\n" is a symbol of the corpus)
                continue
            try:
                error = json.loads(body)["error"]
            except (ValueError, KeyError, TypeError):
                fail(f"{target}: not JSON {{\"error\"}}: {status} {body[:200]!r}")
            if any(c in error for c in bad):
                fail(f"{target}: the error carries a raw control character: {error!r}")


def cases():
    if CASE == "slow-headers":
        slow_headers()
    elif CASE == "idle-two":
        idle_connections(2, 0.5)
    elif CASE == "idle-many":  # with --threads 1 --queue 2: six idle, the seventh answered at once
        idle_connections(6, 0.5)
    elif CASE == "idle-flood":  # more idle connections than are read at once: the newest still answered
        idle_connections(80, 1.0)
    elif CASE == "chunked-64m":
        chunked_body()
    elif CASE == "header-lines":
        many_headers()
    elif CASE == "get-body":
        raw(f"GET /api/info HTTP/1.1\r\nHost: {HOST}\r\nContent-Length: 100000\r\n\r\n".encode() + b"x" * 100000, 413)
    elif CASE == "get-body-small":  # a body within the limit is not the request's business
        s = connect()
        s.sendall(f"GET /api/info HTTP/1.1\r\nHost: {HOST}\r\nContent-Length: 5\r\n\r\nhello".encode())
        status, _ = reply_of(s)
        s.close()
        if status != 200:
            fail(f"a GET with a 5-byte body: {status}")
    elif CASE == "header-bytes":
        raw(f"GET /api/info HTTP/1.1\r\nHost: {HOST}\r\nX-Big: {'a' * 20000}\r\n\r\n".encode(), 431)
    elif CASE.startswith("method-"):
        method = CASE[len("method-"):]
        target = f"127.0.0.1:{PORT}" if method == "CONNECT" else ("*" if method == "OPTIONS" else "/api/info")
        raw(f"{method} {target} HTTP/1.1\r\nHost: {HOST}\r\n\r\n".encode(), 405)
    elif CASE == "control-characters":
        control_characters()
    elif CASE == "half-request-closed":  # a request cut short, then the client leaves: the server serves on
        s = connect()
        s.sendall(b"GET /api/info HTTP/1.1\r\nHo")
        s.close()
        info_within(0.5, "a request cut short")
    else:
        fail("no such case")


if __name__ == "__main__":
    try:
        cases()
    except OSError as e:
        fail(f"{type(e).__name__}: {e}")
