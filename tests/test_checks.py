"""What the Python tests share: a failure printed as one FAIL line and exit 1, a count of the
checks passed, and (for the browser tests) the Debian packages they need and headless
Chromium started as each test starts it; for the step sliders' tests, a tiny run with kept
evaluations and a known accuracy series, and the slider moved. Imported by
tests/explorer_browser_test.py, tests/serve_browser_test.py, tests/serve_test.py,
tests/replay_browser_test.py and tests/explorer_replay_browser_test.py; it imports none of them."""
import os
import shutil
import sys

passed = 0  # checks passed so far


def fail(message):
    print("FAIL: " + message, flush=True)
    sys.exit(1)


def check(condition, message):
    global passed
    if not condition:
        fail(message)
    passed += 1


def require_browser():
    """Every piece a browser test needs, or a failure naming the Debian package that is missing."""
    missing = []
    if not shutil.which("chromium"):
        missing.append("chromium")
    if not shutil.which("chromedriver"):
        missing.append("chromium-driver")
    try:
        import selenium  # noqa: F401
    except ImportError:
        missing.append("python3-selenium")
    if not os.path.exists("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc"):
        missing.append("fonts-noto-cjk")
    if missing:
        fail("the browser test needs the Debian packages " + " ".join(missing) +
             " (install them with: bash scripts/setup.sh --tests, or apt-get install " + " ".join(missing) + ")")


def start_browser(window_size="1280,800", lang="en-US"):
    """Headless Chromium through chromedriver, its console log kept (driver.get_log('browser')),
    asking for LANG (navigator.language), each session with a profile of its own."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 f"--window-size={window_size}", "--hide-scrollbars", f"--lang={lang}"):
        options.add_argument(flag)
    options.add_experimental_option("prefs", {"intl.accept_languages": lang})
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def inspect_json(binary, *args):
    """`mini-gpt inspect-heads ARGS --format json`, parsed; a failure names the command."""
    import json
    import subprocess
    r = subprocess.run([binary, "inspect-heads", *args, "--format", "json"], capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"inspect-heads {' '.join(args)}: exit {r.returncode}: {r.stderr.strip()}")
    return json.loads(r.stdout)


def weights_shown(driver, layer, head):
    """The live page's readout of head LAYER.HEAD: (its query position, its weights there)."""
    row = driver.find_element("id", f"readout-{layer}-{head}")
    return int(row.get_attribute("data-query")), [float(x) for x in row.get_attribute("data-weights").split()]


def attribution_gap(driver, attribution):
    """Checks that the page's attribution rows (attr-part-I) name ATTRIBUTION's parts
    (inspect-heads --attribution --format json) in order; returns their largest difference."""
    worst = 0.0
    for i, part in enumerate(attribution["parts"]):
        row = driver.find_element("id", f"attr-part-{i}")
        check(row.get_attribute("data-name") == part["name"], f"attribution part {i} is {row.get_attribute('data-name')}")
        worst = max(worst, abs(float(row.get_attribute("data-value")) - part["difference"]))
    return worst


def check_console(driver):
    """No error in the browser's console."""
    entries = [e for e in driver.get_log("browser") if e.get("level") in ("SEVERE", "ERROR")]
    check(not entries, f"errors in the browser console: {entries}")


def train_tiny_run(binary, source, out, *sets):
    """configs/tiny.json trained 60 steps at --threads 1 with an evaluation (and a kept model)
    every 10 steps and the --set values SETS, into OUT; train's stdout."""
    import subprocess
    args = [binary, "train", "--config", os.path.join(source, "configs", "tiny.json"), "--max-steps", "60",
            "--threads", "1", "--out", out, "--set", "train.eval_interval=10"]
    for s in sets:
        args += ["--set", s]
    r = subprocess.run(args, capture_output=True, text=True, cwd=source)
    if r.returncode != 0:
        fail(f"training {out} failed ({r.returncode}): {r.stderr.strip()}")
    kept = sorted(int(n[5:12]) for n in os.listdir(os.path.join(out, "evals")) if n.startswith("step_"))
    check(kept == [10, 20, 30, 40, 50, 60], f"{out} kept {kept}")
    return r.stdout


# who's accuracy at each evaluation of a tiny run, known (its own is near 0): who crosses 0.5 at
# step 30 and 0.95 at 50.
KNOWN_WHO_ACCURACY = {10: 0.1, 20: 0.2, 30: 0.6, 40: 0.7, 50: 0.96, 60: 0.97}


def give_known_accuracy(run):
    """RUN's metrics.jsonl with who's accuracy KNOWN_WHO_ACCURACY at each evaluation (no tags)."""
    import json
    metrics = os.path.join(run, "metrics.jsonl")
    lines = [json.loads(line) for line in open(metrics, encoding="utf-8")]
    for line in lines:
        if "val_loss" in line:
            line["probe_accuracy_by_kind"] = {"who": KNOWN_WHO_ACCURACY[line["step"]]}
            line.pop("probe_accuracy_by_tag", None)
    with open(metrics, "w", encoding="utf-8") as f:
        f.writelines(json.dumps(line) + "\n" for line in lines)


def move_slider(driver, index):
    """The step slider (#step-slider) set to INDEX as a user's drag would: its input event."""
    slider = driver.find_element("id", "step-slider")
    driver.execute_script("arguments[0].value = arguments[1]; arguments[0].dispatchEvent(new Event('input'))",
                          slider, str(index))


def check_event_marks(driver, timeline, kept):
    """The slider's marks (#event-marks .mark) are TIMELINE's events (inspect-heads --timeline's
    JSON), in order, each at the first of the KEPT steps at or after its step, and the
    KNOWN_WHO_ACCURACY run's known three (who crossing 0.5 at 30 and 0.95 at 50, the q/k hold's
    end at 30) among them; returns the marks as (step, type, index)."""
    marks = driver.find_elements("css selector", "#event-marks .mark")
    shown = [(int(m.get_attribute("data-step")), m.get_attribute("data-type"), int(m.get_attribute("data-index")))
             for m in marks]
    wanted = [(e["step"], e["type"], next((i for i, s in enumerate(kept) if s >= e["step"]), len(kept) - 1))
              for e in timeline]
    check(shown == wanted, f"the slider's marks {shown} are not --timeline's {wanted}")
    for step, kind, subject in [(30, "accuracy", "who"), (30, "schedule", "train.freeze_block0_qk_to_step"),
                                (50, "accuracy", "who")]:
        check(any(e["step"] == step and e["type"] == kind and e["subject"] == subject for e in timeline) and
              (step, kind, kept.index(step)) in shown, f"the known event {kind} {subject} at {step} is not marked there")
    return shown
