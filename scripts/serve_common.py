"""What the serve tests share (tests/serve_test.py, tests/serve_browser_test.py, and
scripts/benchmark.py --serve): a short training run of the default model's shape, and a
`mini-gpt serve` started on a free port, read back from the line it prints."""
import os
import select
import shutil
import signal
import subprocess
import time

# The main job's showcase question (scripts/main_job.sh), the page's first text.
SHOWCASE = "红铅笔是小陈的。灰鞋子是小马的。黄雨伞是小林的。灰鞋子是谁的？灰鞋子是小"


def train_run(binary, source_dir, out, steps=30, eval_interval=10):
    """A run of configs/default.json's model for STEPS steps on one thread: metrics.jsonl
    with evaluations (and their head_roles), latest.safetensors and best.safetensors."""
    if os.path.exists(out):
        shutil.rmtree(out)
    r = subprocess.run([binary, "train", "--config", os.path.join(source_dir, "configs", "default.json"),
                        "--max-steps", str(steps), "--threads", "1", "--out", out,
                        "--set", f"train.eval_interval={eval_interval}"],
                       capture_output=True, text=True, cwd=source_dir)
    if r.returncode != 0:
        raise RuntimeError(f"training the test model failed ({r.returncode}): {r.stderr.strip()}")
    return out


class ServeDidNotStart(RuntimeError):
    """The server exited (or never printed its address): .status (its exit status, 2 for a
    refused input) and .reason (its last stderr line)."""

    def __init__(self, status, reason):
        super().__init__(f"serve did not start (exit {status}): {reason}")
        self.status, self.reason = status, reason


class Served:
    """`mini-gpt serve ARGS --port 0`, started and waited for; .port, .url, .stop(sig)."""

    def __init__(self, binary, *args, timeout=180):
        self.process = subprocess.Popen([binary, "serve", "--port", "0", *args], stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True)
        # Whatever ends the wait (a signal turned exception, Ctrl-C, a refusal), the server
        # goes with it: never left running, orphaned.
        try:
            deadline = time.monotonic() + timeout
            line = ""
            while time.monotonic() < deadline:
                ready, _, _ = select.select([self.process.stdout], [], [], 0.5)
                if ready:
                    line = self.process.stdout.readline()
                    break
                if self.process.poll() is not None:
                    break
            if "http://" not in line:
                self.process.kill()
                self.process.wait()
                err = self.process.stderr.read().strip().splitlines()
                raise ServeDidNotStart(self.process.returncode, err[-1] if err else line.strip())
        except BaseException:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()
            raise
        self.url = line.split("open ", 1)[1].split(" ", 1)[0].rstrip("/")
        self.port = int(self.url.rsplit(":", 1)[1])
        self.first_line = line

    def stop(self, sig=signal.SIGTERM, timeout=10):
        """Sends SIG; returns (exit status, seconds until it exited, stdout, stderr)."""
        started = time.monotonic()
        self.process.send_signal(sig)
        try:
            out, err = self.process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            out, err = self.process.communicate()
            return None, time.monotonic() - started, out, err
        return self.process.returncode, time.monotonic() - started, out, err
