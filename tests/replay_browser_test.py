#!/usr/bin/python3
"""The step slider of `mini-gpt serve --run` in a real browser (issue 57).

Two tiny runs (configs/tiny.json, 60 steps, an evaluation every 10; the first with block
0's queries and keys held to step 30, the second with one head), followed at once by
`serve --run A --run B`, in headless Chromium through Selenium:

  1. / shows both runs' pages side by side, each in a frame with its own slider;
  2. run A's slider goes to the evaluation at step 20: two heads' weights from the query
     position, the attribution at it and the chain found are those `inspect-heads` prints
     (--format json, --attribution, --explain) on A's evals/step_0000020.safetensors (to
     1e-6), and they differ from the latest model's;
  3. the events on the slider are `inspect-heads --timeline --run A --format json`'s, each
     at the first kept evaluation at or after its step; A's metrics.jsonl is given a known
     accuracy series (who: 0.1, 0.2, 0.6, 0.7, 0.96, 0.97), so that who crossing 0.5 at 30 and
     0.95 at 50 are among them, with the q/k hold's end at 30;
  4. "latest" returns the page to the model served now;
  5. no error in the browser console.
Usage: replay_browser_test.py MINI_GPT_BINARY SOURCE_DIR
"""
import os
import contextlib
import shutil
import signal
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
import serve_common  # noqa: E402
import test_checks  # noqa: E402
from test_checks import attribution_gap, check, check_console, fail, require_browser, start_browser  # noqa: E402
from test_checks import check_event_marks, give_known_accuracy, move_slider, train_tiny_run  # noqa: E402
from test_checks import inspect_json as cli_json, weights_shown  # noqa: E402

TEXT = "灰鞋子是谁的？灰鞋子是小"  # within tiny.json's block_size of 16
STEP = 20


def model_step(driver):
    return driver.execute_script("return document.body.dataset.modelStep || ''")


def wait(driver, what, condition, timeout=60):
    from selenium.webdriver.support.ui import WebDriverWait
    try:
        WebDriverWait(driver, timeout, poll_frequency=0.05).until(condition)
    except Exception:
        fail(f"{what}: not seen within {timeout} s; status {driver.find_element('id', 'status-line').text!r}, "
             f"console {driver.get_log('browser')}")


def main():
    binary, source = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    require_browser()
    work = tempfile.mkdtemp(prefix="mini-gpt-replay-browser-")
    # Whatever ends the test, the browser, the server and the folder go (in that order).
    with contextlib.ExitStack() as cleanup:
        cleanup.callback(shutil.rmtree, work, ignore_errors=True)
        run_a, run_b = os.path.join(work, "a"), os.path.join(work, "b")
        printed = train_tiny_run(binary, source, run_a, "train.freeze_block0_qk_to_step=30")
        check("formation events of" in printed and "train.freeze_block0_qk_to_step" in printed,
              f"train printed no formation events: {printed[-600:]}")
        # train's end leaves the chains to --timeline (one --explain per kept model) and says so.
        check("chain before" not in printed and f"inspect-heads --timeline --run {run_a}" in printed,
              f"train's end should name --timeline for the chains, not find them: {printed[-600:]}")
        train_tiny_run(binary, source, run_b, "model.n_head=1", "train.seed=8")
        kept = sorted(test_checks.KNOWN_WHO_ACCURACY)
        # A known accuracy series for who (the tiny run's own is near 0): its crossings are known.
        give_known_accuracy(run_a)
        probe = os.path.join(source, "data", "probe.jsonl")
        served = serve_common.Served(binary, "--run", run_a, "--run", run_b, "--probe", probe, "--text", TEXT)
        cleanup.callback(served.stop, signal.SIGTERM)
        driver = start_browser("1800,1000")
        cleanup.callback(driver.quit)

        # 1. Both runs side by side.
        driver.get(served.url + "/")
        frames = driver.find_elements("css selector", "iframe")
        check([f.get_attribute("id") for f in frames] == ["run-frame-0", "run-frame-1"], "two frames side by side")
        driver.switch_to.frame("run-frame-1")
        wait(driver, "run B's page", lambda d: d.execute_script("return document.body.dataset.ready === '1'"))
        wait(driver, "run B's slider", lambda d: not d.find_element("id", "replay-section").get_attribute("hidden"))
        check("1 heads" in driver.find_element("id", "model-line").text, "frame 1 shows run B's one-head model")
        check(driver.find_element("id", "step-slider").get_attribute("max") == "5", "run B's slider spans 6 evaluations")
        driver.switch_to.default_content()
        print("serve --run A --run B: both pages side by side, each with its slider")

        # 2. Run A's page, its slider moved to step 20.
        driver.get(served.url + "/?run=0")
        wait(driver, "run A's page", lambda d: d.execute_script("return document.body.dataset.ready === '1'"))
        wait(driver, "run A's slider", lambda d: d.find_elements("css selector", "#event-marks .mark"))
        wait(driver, "the latest model's numbers", lambda d: model_step(d) == "latest")
        P = len(TEXT) - 1
        latest = {h: weights_shown(driver, 0, h)[1] for h in (0, 1)}
        move_slider(driver, kept.index(STEP))
        wait(driver, f"the numbers at step {STEP}", lambda d: model_step(d) == str(STEP))
        model = os.path.join(run_a, "evals", f"step_{STEP:07d}.safetensors")
        expected = cli_json(binary, "--checkpoint", model, "--text", TEXT)
        moved = 0.0
        for head in (0, 1):
            query, shown = weights_shown(driver, 0, head)
            row = expected["layers"][0]["heads"][head]["projected_weights"][P][: P + 1]
            worst = max(abs(a - b) for a, b in zip(shown, row))
            check(query == P and len(shown) == P + 1 and worst <= 1e-6,
                  f"head 0.{head} at step {STEP}: page and inspect-heads differ by {worst}")
            moved = max(moved, max(abs(a - b) for a, b in zip(shown, latest[head])))
        check(moved > 1e-4, f"the weights at step {STEP} are the latest's ({moved})")
        attribution = cli_json(binary, "--checkpoint", model, "--attribution", "--text", TEXT, "--position", str(P))
        worst = attribution_gap(driver, attribution)
        check(worst <= 1e-6, f"the attribution at step {STEP} differs from inspect-heads --attribution by {worst}")
        explained = cli_json(binary, "--checkpoint", model, "--explain", "--probe", probe)
        wait(driver, f"the chain at step {STEP}",
             lambda d: d.find_elements("css selector", f"#chain-table[data-step='{STEP}']"))
        for k in explained["kinds"]:
            row = driver.find_element("id", f"chain-{k['kind']}")
            check(row.get_attribute("data-writer") == (k["writer"] or "") and
                  row.get_attribute("data-carrier") == (k["carrier"] or ""),
                  f"the chain of {k['kind']} at step {STEP}: page {row.get_attribute('data-writer')} "
                  f"{row.get_attribute('data-carrier')}, --explain {k['writer']} {k['carrier']}")
        check(f"step {STEP}" in driver.find_element("id", "step-label").text, "the slider's label names the step")
        print(f"slider at step {STEP}: heads 0.0 and 0.1, the attribution ({len(attribution['parts'])} parts) and "
              f"{len(explained['kinds'])} kinds' chains equal inspect-heads on evals/step_{STEP:07d} "
              f"(weights moved by up to {moved:.4f} from the latest model's)")

        # 3. The events on the slider, against --timeline.
        timeline = cli_json(binary, "--timeline", "--run", run_a)["events"]
        shown = check_event_marks(driver, timeline, kept)
        items = driver.find_elements("css selector", "#event-list li")
        check(len(items) == len(timeline) and all(e["headline"] in li.get_attribute("textContent")
                                                  for e, li in zip(timeline, items)),
              "the event list says --timeline's headlines")
        # The mark of the hold's end sits where the slider puts evaluation 30.
        x = driver.execute_script(
            "const m = [...document.querySelectorAll('#event-marks .mark')].find((m) => m.dataset.type === 'schedule');"
            "return parseFloat(m.style.left);")
        width = driver.execute_script("return document.getElementById('step-slider').getBoundingClientRect().width")
        expected_x = 8 + kept.index(30) * (width - 16) / (len(kept) - 1)
        check(abs(x - expected_x) < 0.5, f"the hold's mark at x {x}, the slider's step 30 at {expected_x}")
        print(f"{len(timeline)} events marked on the slider at their steps, as --timeline finds them: " +
              ", ".join(f"{s} {t}" for s, t, _ in shown))

        # In Chinese the same events are worded from their fields (words.js's eventHeadline).
        from selenium.webdriver.support.ui import Select
        Select(driver.find_element("id", "lang-switch")).select_by_value("zh")
        hold = next(k for k, e in enumerate(timeline) if e["type"] == "schedule")
        accuracy = next(k for k, e in enumerate(timeline) if e["type"] == "accuracy" and e["subject"] == "who")
        wait(driver, "the events in Chinese",
             lambda d: "第0层的查询和键不再固定" in d.find_element("id", f"event-{hold}").get_attribute("textContent"))
        line = driver.find_element("id", f"event-{accuracy}").get_attribute("textContent")
        level = f"{timeline[accuracy]['level']:.2f}"
        check("谁的" in line and "准确率" in line and level in line and timeline[accuracy]["headline"] not in line,
              f"the accuracy event in Chinese: {line!r}")
        print(f"中文 events: {driver.find_element('id', f'event-{hold}').get_attribute('textContent')!r}; {line!r}")
        Select(driver.find_element("id", "lang-switch")).select_by_value("en")
        wait(driver, "the events in English again",
             lambda d: timeline[hold]["headline"] in d.find_element("id", f"event-{hold}").get_attribute("textContent"))

        # 4. Back to the latest model.
        driver.find_element("id", "step-latest").click()
        wait(driver, "the latest model again", lambda d: model_step(d) == "latest")
        check(weights_shown(driver, 0, 0)[1] == latest[0], "latest shows the served model's weights again")

        check_console(driver)
    print(f"replay_browser_test: {test_checks.passed} checks passed")


if __name__ == "__main__":
    main()
