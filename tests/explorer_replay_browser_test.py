#!/usr/bin/python3
"""The explorer's step slider (inspect-heads --html FILE --run DIR --replay, issue 57) in a
real browser.

A tiny run (configs/tiny.json, 60 steps, an evaluation every 10, block 0's queries and keys
held to step 30) keeps six evaluation models; its metrics.jsonl is given a known accuracy
series for who (0.1, 0.2, 0.6, 0.7, 0.96, 0.97), so that who crossing 0.5 at 30 and 0.95 at 50
are among its events, with the hold's end at 30. The explorer of its latest model is written
with --replay and opened from disk in headless Chromium through Selenium:

  1. the slider spans the six kept evaluations and starts on the page's own model;
  2. moved to the evaluation at step 20, the page shows that evaluation's numbers, each equal
     to `inspect-heads` on RUN/evals/step_0000020.safetensors (--format json): every head's
     weights from the query, the next symbol's ten (--next-symbol), the attribution
     (--attribution) and each head's role and scores (the default view's JSON); they differ
     from the latest model's; the chain is --explain's on that model where the page keeps one
     (the evaluations around each event and the last), and said absent elsewhere;
  3. the events under the slider are `inspect-heads --timeline --run DIR`'s, each at the first
     kept evaluation at or after its step, at the x the slider gives that evaluation, with
     the known three among them; a click on an event's button moves the page there;
  4. "the page's model" returns to the latest model's numbers; in Chinese the slider's words
     are Chinese;
  5. no error in the browser console.
Prints the page's size, and the size per kept evaluation.
Usage: explorer_replay_browser_test.py MINI_GPT_BINARY SOURCE_DIR
"""
import contextlib
import os
import shutil
import subprocess
import sys
import tempfile

import test_checks
from test_checks import attribution_gap, check, check_console, fail, require_browser, start_browser
from test_checks import check_event_marks, give_known_accuracy, inspect_json as cli_json, move_slider, train_tiny_run, weights_shown

TEXT = "灰鞋子是谁的？灰鞋子是小"  # within tiny.json's block_size of 16
STEP = 20


def wait(driver, what, condition, timeout=30):
    from selenium.webdriver.support.ui import WebDriverWait
    try:
        WebDriverWait(driver, timeout, poll_frequency=0.05).until(condition)
    except Exception:
        fail(f"{what}: not seen within {timeout} s; console {driver.get_log('browser')}")


def shown_step(driver):
    return driver.execute_script("return document.body.dataset.step || ''")


def all_weights(driver, layers):
    """Every head's readout at the query, layer by layer (the layer select shows one layer)."""
    from selenium.webdriver.support.ui import Select
    out = {}
    for layer in range(layers):
        Select(driver.find_element("id", "layer-select")).select_by_value(str(layer))
        wait(driver, f"layer {layer}'s readout",
             lambda d: d.find_element("id", "readout-table").get_attribute("data-layer") == str(layer))
        h = 0
        while driver.find_elements("id", f"readout-{layer}-{h}"):
            out[(layer, h)] = weights_shown(driver, layer, h)
            h += 1
    return out


def main():
    binary, source = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    require_browser()
    work = tempfile.mkdtemp(prefix="mini-gpt-explorer-replay-")
    with contextlib.ExitStack() as cleanup:
        cleanup.callback(shutil.rmtree, work, ignore_errors=True)
        run = os.path.join(work, "run")
        train_tiny_run(binary, source, run, "train.freeze_block0_qk_to_step=30")
        kept = sorted(test_checks.KNOWN_WHO_ACCURACY)
        give_known_accuracy(run)
        probe = os.path.join(source, "data", "probe.jsonl")
        latest = os.path.join(run, "latest.safetensors")
        page = os.path.join(work, "replay.html")
        r = subprocess.run([binary, "inspect-heads", "--checkpoint", latest, "--text", TEXT, "--probe", probe,
                            "--run", run, "--replay", "--html", page, "--threads", "1"], capture_output=True, text=True)
        check(r.returncode == 0, f"inspect-heads --html --replay: exit {r.returncode}: {r.stderr.strip()}")
        check(f"a step slider over 6 evaluations of {run}" in r.stdout, f"the written line: {r.stdout!r}")
        plain = os.path.join(work, "plain.html")
        subprocess.run([binary, "inspect-heads", "--checkpoint", latest, "--text", TEXT, "--probe", probe,
                        "--run", run, "--html", plain, "--threads", "1"], check=True, capture_output=True)
        size, plain_size = os.path.getsize(page), os.path.getsize(plain)
        print(f"page with the slider: {size} bytes; without: {plain_size}; "
              f"{(size - plain_size) / len(kept):.0f} bytes per kept evaluation (T = {len(TEXT)})")

        driver = start_browser("1400,1000")
        cleanup.callback(driver.quit)
        driver.get("file://" + page)
        wait(driver, "the page", lambda d: d.execute_script("return document.body.dataset.ready === '1'"))

        # 1. The slider over the six evaluations, on the page's model.
        check(not driver.find_element("id", "replay-section").get_attribute("hidden"), "the slider's section is shown")
        slider = driver.find_element("id", "step-slider")
        check(slider.get_attribute("max") == str(len(kept) - 1), f"the slider spans {slider.get_attribute('max')}")
        check(shown_step(driver) == "page", f"the page opens on its own model, not {shown_step(driver)!r}")
        n_layer = len(cli_json(binary, "--checkpoint", latest, "--text", TEXT)["layers"])
        before = all_weights(driver, n_layer)

        # 2. Step 20: every number the slider redraws, against inspect-heads on that model.
        move_slider(driver, kept.index(STEP))
        wait(driver, f"the page at step {STEP}", lambda d: shown_step(d) == str(STEP))
        model = os.path.join(run, "evals", f"step_{STEP:07d}.safetensors")
        P = len(TEXT) - 1
        expected = cli_json(binary, "--checkpoint", model, "--text", TEXT, "--probe", probe)
        at_step = all_weights(driver, n_layer)
        check(len(at_step) == sum(len(layer["heads"]) for layer in expected["layers"]), "every head is read")
        worst = moved = 0.0
        for (layer, head), (query, shown) in at_step.items():
            row = expected["layers"][layer]["heads"][head]["projected_weights"][P][: P + 1]
            check(query == P and len(shown) == P + 1, f"head L{layer}.H{head}'s readout at query {query}")
            worst = max(worst, max(abs(a - b) for a, b in zip(shown, row)))
            moved = max(moved, max(abs(a - b) for a, b in zip(shown, before[(layer, head)][1])))
        check(worst <= 1e-6, f"the weights at step {STEP} differ from inspect-heads by {worst}")
        check(moved > 1e-4, f"the weights at step {STEP} are the latest model's ({moved})")
        nxt = cli_json(binary, "--checkpoint", model, "--next-symbol", "--text", TEXT)
        rows = driver.find_elements("css selector", "#next-table tr[id^='next-row-']")
        check(len(rows) == len(nxt["top"]), f"{len(rows)} next-symbol rows, --next-symbol has {len(nxt['top'])}")
        next_gap = 0.0
        for row, e in zip(rows, nxt["top"]):
            check(row.get_attribute("data-symbol") == e["symbol"], f"next symbol {row.get_attribute('data-symbol')!r} "
                  f"is not --next-symbol's {e['symbol']!r}")
            next_gap = max(next_gap, abs(float(row.get_attribute("data-probability")) - e["probability"]),
                           abs(float(row.get_attribute("data-logit")) - e["logit"]))
        check(next_gap <= 1e-6, f"the next symbol at step {STEP} differs from --next-symbol by {next_gap}")
        attribution = cli_json(binary, "--checkpoint", model, "--attribution", "--text", TEXT, "--position", str(P))
        attribution_worst = attribution_gap(driver, attribution)
        check(attribution_worst <= 1e-6, f"the attribution at step {STEP} differs by {attribution_worst}")
        roles_checked = 0
        for layer, entry in enumerate(expected["layers"]):
            for head, h in enumerate(entry["heads"]):
                cell = driver.find_element("id", f"cell-{layer}-{head}")
                for key, attr in [("previous_token", "data-previous-token"), ("induction", "data-induction"),
                                  ("answer_finding", "data-answer-finding")]:
                    want, got = h["roles"][key], cell.get_attribute(attr)
                    check((want is None and got in ("", "null")) or abs(float(got) - want) <= 1e-9,
                          f"L{layer}.H{head} {key}: page {got}, inspect-heads {want}")
                check(cell.get_attribute("data-role") == h["roles"]["role"],
                      f"L{layer}.H{head}'s role: page {cell.get_attribute('data-role')!r}, inspect-heads {h['roles']['role']!r}")
                roles_checked += 1
        timeline = cli_json(binary, "--timeline", "--run", run)["events"]
        chained = {e["before_step"] for e in timeline} | {e["after_step"] for e in timeline} | {kept[-1]}
        note = driver.find_element("id", "chain-note")
        check(note.get_attribute("data-step") == str(STEP), "the chain's note is of the step shown")
        if STEP in chained:
            explained = cli_json(binary, "--checkpoint", model, "--explain", "--probe", probe)
            from selenium.webdriver.support.ui import Select
            for k in explained["kinds"]:
                Select(driver.find_element("id", "chain-kind")).select_by_value(k["kind"])
                check(note.get_attribute("data-writer") == (k["writer"] or "") and
                      note.get_attribute("data-carrier") == (k["carrier"] or ""),
                      f"the chain of {k['kind']} at step {STEP}: page {note.get_attribute('data-writer')} "
                      f"{note.get_attribute('data-carrier')}, --explain {k['writer']} {k['carrier']}")
            chain_said = f"{len(explained['kinds'])} kinds' chains equal --explain's"
        else:
            check(f"step {STEP}" in note.text, f"no chain at step {STEP} is said: {note.text!r}")
            chain_said = "no chain kept there, said so"
        check(f"step {STEP}" in driver.find_element("id", "step-label").text, "the step's label names it")
        print(f"slider at step {STEP}: {len(at_step)} heads' weights (worst {worst:.1e}), the next symbol's "
              f"{len(rows)} (worst {next_gap:.1e}), the attribution's {len(attribution['parts'])} parts (worst "
              f"{attribution_worst:.1e}) and {roles_checked} heads' roles equal inspect-heads on "
              f"evals/step_{STEP:07d}; {chain_said}; the weights moved by up to {moved:.4f} from the page's model")

        # 3. The events under the slider, against --timeline.
        shown = check_event_marks(driver, timeline, kept)
        width = driver.execute_script("return document.getElementById('step-slider').getBoundingClientRect().width")
        curves = driver.execute_script("return document.getElementById('step-curves').getBoundingClientRect().width")
        check(abs(width - curves) < 0.5, f"the curves ({curves} px) are not as wide as the slider ({width} px)")
        for m, (_, _, index) in zip(driver.find_elements("css selector", "#event-marks .mark"), shown):
            x = float(m.get_attribute("style").split("left:")[1].split("px")[0])
            check(abs(x - (8 + index * (width - 16) / (len(kept) - 1))) < 0.5, f"mark at x {x} is not evaluation {index}'s")
        items = driver.find_elements("css selector", "#event-list li")
        check(len(items) == len(timeline), f"{len(items)} events listed, --timeline has {len(timeline)}")
        hold = next(k for k, e in enumerate(timeline) if e["type"] == "schedule")
        driver.find_element("id", "event-details").click()
        driver.find_element("css selector", f"#event-{hold} button").click()
        wait(driver, "the hold's end shown", lambda d: shown_step(d) == "30")
        check(driver.find_element("id", "step-slider").get_attribute("value") == str(kept.index(30)),
              "the slider moved to the event's evaluation")
        print(f"{len(timeline)} events marked under the slider at their steps, as --timeline finds them: " +
              ", ".join(f"{s} {t}" for s, t, _ in shown))

        # 4. Back to the page's model; the words in Chinese.
        driver.find_element("id", "step-page-model").click()
        wait(driver, "the page's model again", lambda d: shown_step(d) == "page")
        check(all_weights(driver, n_layer) == before, "the page's model's weights again")
        from selenium.webdriver.support.ui import Select
        Select(driver.find_element("id", "lang-switch")).select_by_value("zh")
        wait(driver, "the slider in Chinese",
             lambda d: "本页的模型" in d.find_element("id", "step-label").text and
             "回放训练" in d.find_element("id", "replay-title").text)
        move_slider(driver, 0)
        wait(driver, "step 10 in Chinese", lambda d: "第 10 步的评估" in d.find_element("id", "step-label").text)
        Select(driver.find_element("id", "lang-switch")).select_by_value("en")

        check_console(driver)
    print(f"explorer_replay_browser_test: {test_checks.passed} checks passed")


if __name__ == "__main__":
    main()
