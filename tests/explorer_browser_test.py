#!/usr/bin/python3
"""The head explorer (inspect-heads --html, train's heads.html) in a real browser.

Drives headless Chromium through Selenium (Debian: chromium, chromium-driver,
python3-selenium; fonts-noto-cjk draws the symbols) over pages opened from disk:

  1. a short training run (configs/tiny.json, 30 steps) writes heads.html; it loads cleanly;
  2. a fresh model of the default shape (configs/default.json, --seed 3) on a probe
     question, with --probe and --run: hovering a query symbol shows, for two heads, the
     weights `inspect-heads --format json` prints (to 1e-6); a keyboard move and a layer
     switch do too; the trace of head 1.1 at one position shows three numbers of
     `--trace 1.1 --position P --format json`; the role names match the JSON's;
  3. a hostile run (130,000 evaluations, head_roles [null] and entries whose layer is a
     string, strings and +-1e308 in the per-kind accuracies): the page mini-gpt writes, and
     the same page with the raw values put back into its data (as a page edited by hand
     would hold them), both become ready, draw no NaN and run no injected script;
  4. an 8-layer x 8-head model with block_size 256 (a config written here) on 256
     symbols: "no probe" is said, a hovered weight matches, and the page is ready in
     under 2 s.
In page 2 the circuit section (issue 30) is held to inspect-heads --attribution, --patch
and --composition: the attribution bars, each head's patching restoration, the graph's edges.
Issue 56, on page 2 and a page whose text holds a newline: the page opens on the layer and
head of the largest direct logit attribution at the last position; the model line names
RoPE; the newline shows as \n; the open head's heatmap carries symbol labels on its rows and
columns, and a thumbnail's hover names its query and key symbols; the top three of each head
are not in a scroll box; the patching heatmap has its colour legend and the line on a
negative share; the cards say "probe drop if zeroed"; heads are named L1.H1 everywhere.
Then the languages: English in a browser that asks for English; the switch to 中文 redraws
in place (lang zh-CN, the kinds with their questions, Chinese role names) and is remembered
on reload; a browser that asks for zh-CN opens in Chinese; every English word has a Chinese
one (the tables of src/report/page/words.js); what the C++ sends as keys (the texts of the
role scores, the attribution's parts, why patching or the circuits are not drawn) is drawn
in Chinese too.
Any error in the browser console fails the test. Prints each page's size and load time.
Usage: explorer_browser_test.py MINI_GPT_BINARY SOURCE_DIR
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

from test_checks import check, fail, require_browser, start_browser
import test_checks

# The target for the 8 x 8, 256-symbol page is 2 s to "ready"; this test measures it and
# prints it against that target. It fails only when even the best of three loads takes
# FREEZE_LIMIT_MS, a page that froze: a timed assertion at the target itself would fail on
# a busy or slower machine (the project's rule: speed is measured, not asserted by tests).
TARGET_MS = 2000.0
FREEZE_LIMIT_MS = 10000.0
QUESTION = "红铅笔是小陈的。灰鞋子是小马的。黄雨伞是小林的。灰鞋子是谁的？灰鞋子是小"








def run(binary, *args):
    started = time.monotonic()
    r = subprocess.run([binary, *args], capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"mini-gpt {' '.join(args)} exited {r.returncode}: {r.stderr.strip()}")
    return r.stdout, time.monotonic() - started




def open_page(driver, path, what):
    """Navigates to the file, waits for the page's ready marker; returns its load time in ms."""
    from selenium.webdriver.support.ui import WebDriverWait
    driver.get("file://" + os.path.abspath(path))
    try:
        WebDriverWait(driver, 30).until(lambda d: d.execute_script("return document.body && document.body.dataset.ready === '1'"))
    except Exception:
        fail(f"{what}: the page never set its ready marker; console: {driver.get_log('browser')}")
    ready_ms = float(driver.execute_script("return document.body.dataset.readyMs"))
    mark = driver.execute_script("const m = performance.getEntriesByName('explorer-ready'); return m.length ? m[0].startTime : null")
    check(mark is not None and abs(mark - ready_ms) < 50, f"{what}: performance mark explorer-ready at {mark}, readyMs {ready_ms}")
    WebDriverWait(driver, 60).until(lambda d: d.execute_script("return document.body.dataset.gridDrawn === '1'"))
    grid_ms = driver.execute_script("return performance.now()")
    return ready_ms, grid_ms


def expect_clean_console(driver, what):
    entries = driver.get_log("browser")
    errors = [e for e in entries if e.get("level") in ("SEVERE", "ERROR")]
    check(not errors, f"{what}: errors in the browser console: {errors}")


def hover(driver, element_id):
    from selenium.webdriver.common.action_chains import ActionChains
    element = driver.find_element("id", element_id)
    driver.execute_script("arguments[0].scrollIntoView({block: 'center', inline: 'center'})", element)
    ActionChains(driver).move_to_element(element).perform()


def readout(driver, layer, head):
    row = driver.find_element("id", f"readout-{layer}-{head}")
    return int(row.get_attribute("data-query")), [float(x) for x in row.get_attribute("data-weights").split()], row.text


def expect_weights(driver, layer, head, position, expected, what):
    query, shown, text = readout(driver, layer, head)
    check(query == position, f"{what}: readout of head {layer}.{head} is for query {query}, expected {position}")
    check(len(shown) == position + 1, f"{what}: {len(shown)} weights shown for query {position}")
    worst = max(abs(a - b) for a, b in zip(shown, expected[:position + 1]))
    check(worst <= 1e-6, f"{what}: head {layer}.{head} query {position}: page and JSON differ by {worst}")
    # The visible text names the largest weight first: "马 (13) 0.9130000 ...".
    top = max(range(position + 1), key=lambda s: expected[s])
    marker = f"({top}) "
    check(marker in text, f"{what}: the largest weight's key {top} is not first in the visible readout {text!r}")
    shown_top = float(text.split(marker, 1)[1].split()[0])
    check(abs(shown_top - expected[top]) <= 1e-6, f"{what}: the readout shows {shown_top} for key {top}, the JSON {expected[top]}")
    return worst


def check_opening_view(driver, binary, config, text, T):
    """Issue 56: the page opens on the head with the largest direct logit attribution at the
    last position (inspect-heads --attribution), its layer in the strips; RoPE is named."""
    attribution = json.loads(run(binary, "inspect-heads", "--config", config, "--seed", "3", "--attribution", "--text", text,
                                 "--format", "json")[0])
    heads = [p for p in attribution["parts"] if p["layer"] is not None and p["head"] is not None]
    best = max(heads, key=lambda p: abs(p["difference"]))
    layer = driver.find_element("id", "layer-select").get_attribute("value")
    check(layer == str(best["layer"]), f"the page opens on layer {layer}, the writer {best['name']} is in layer {best['layer']}")
    title = driver.find_element("id", "detail-title").text
    check(f"L{best['layer']}.H{best['head']}" in title, f"the page opens head {title!r}, not {best['name']}")
    check(driver.find_element("id", f"readout-{best['layer']}-{best['head']}").get_attribute("data-query") == str(T - 1),
          "the strips do not show the opening layer")
    model_line = driver.find_element("id", "model-line").text
    check("RoPE positions" in model_line and "0 positions" not in model_line, f"the model line: {model_line!r}")
    print(f"opens on {best['name']} (direct logit attribution {best['difference']:+.4f} at the last position), layer {layer}")


def dark_pixels(driver, canvas_id, x0, y0, x1, y1):
    """Pixels of the canvas (CSS box x0..x1, y0..y1) drawn darker than a light grey: text."""
    return driver.execute_script("""
        const c = document.getElementById(arguments[0]), r = window.devicePixelRatio || 1;
        const d = c.getContext('2d').getImageData(arguments[1] * r, arguments[2] * r, (arguments[3] - arguments[1]) * r,
                                                   (arguments[4] - arguments[2]) * r).data;
        let n = 0;
        for (let i = 0; i < d.length; i += 4) if (d[i + 3] > 128 && d[i] + d[i + 1] + d[i + 2] < 300) n++;
        return n;""", canvas_id, x0, y0, x1, y1)


def check_page_defects(driver, patch):
    """Issue 56's page defects on the default-shape page: labelled heatmaps, the top three
    whole, the patching legend, the head names."""
    from selenium.webdriver.common.action_chains import ActionChains
    # The open head's heatmap: symbols down its left margin (24 px) and across its top (20 px).
    left = dark_pixels(driver, "detail-canvas", 0, 20, 24, 200)
    top = dark_pixels(driver, "detail-canvas", 24, 0, 300, 20)
    check(left > 50 and top > 50, f"the large heatmap has no symbol labels ({left} dark pixels left, {top} on top)")
    # A thumbnail's hover names the query and key symbols under the pointer.
    thumb = driver.find_element("id", "thumb-3-1")
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", thumb)
    ActionChains(driver).move_to_element_with_offset(thumb, 41, 41).perform()  # the bottom-right half: a key before the query
    hover_text = driver.find_element("id", "grid-hover").text
    check(hover_text.startswith("L3.H1: query ") and "→ key " in hover_text, f"thumbnail hover: {hover_text!r}")
    # The top three of every head: whole, no scroll box.
    readout = driver.execute_script("const r = document.getElementById('readout'); return [getComputedStyle(r).overflowY, "
                                    "r.scrollHeight, r.clientHeight, r.querySelectorAll('tr.readout-head').length]")
    check(readout[0] == "visible" and readout[1] <= readout[2] + 1 and readout[3] == 2,
          f"the top three sit in a scroll box (overflow {readout[0]}, {readout[1]} px in {readout[2]} px)")
    # The patching heatmap's legend: three stops and the line on a negative share.
    legend = driver.find_element("id", "patching-legend").text
    for words in ("−1", "0: no change", "+1", "A negative share"):
        check(words in legend, f"the patching legend lacks {words!r}: {legend!r}")
    warning = driver.find_element("id", "patching-warning")
    gap = abs(patch["clean"] - patch["corrupt"])
    check(warning.is_displayed() == (gap < 1), f"the gap warning shown {warning.is_displayed()} at a gap of {gap}")
    check((patch["warning"] is not None) == (gap < 1), f"--patch's warning {patch['warning']!r} at a gap of {gap}")
    # One name: the patching table, the graph, the strips.
    check(driver.find_element("id", "patch-head-1-1").text.startswith("L1.H1"), "the patching table names heads otherwise")
    layer = driver.find_element("id", "layer-select").get_attribute("value")
    labels = driver.find_element("id", "strip-labels").text.split()
    check(labels == [f"L{layer}.H0", f"L{layer}.H1"], f"the strips of layer {layer} are labelled {labels}")
    nodes = [n.text for n in driver.find_elements("css selector", "#circuit-graph g.node text")]
    check("L2.H1" in nodes, f"the graph names its nodes {nodes}")
    print("issue 56 on the default page: labelled heatmap, thumbnail hover, top three whole, patching legend, L.H names")


def check_newline_page(driver, binary, config, scratch):
    """A text with a newline: its symbol shows as \n in the text row, the readout and the labels."""
    page = os.path.join(scratch, "newline.html")
    text = "小丁拿着红色的苹果。\n小丁有什么？"
    run(binary, "inspect-heads", "--config", config, "--seed", "3", "--text", text, "--html", page)
    open_page(driver, page, "newline page")
    newline = driver.find_element("id", "sym-10").text
    check(newline == "\\n", f"the newline shows as {newline!r}")
    driver.find_element("id", "sym-12").click()
    values = driver.execute_script("return document.querySelector('#readout .row-values').textContent")
    check("10 \\n 0." in values, f"the readout's weights name the newline otherwise: {values!r}")
    labels = driver.execute_script("return JSON.parse(document.getElementById('explorer-data').textContent).labels[10]")
    check(labels == "\\n", f"the page's label of the newline is {labels!r}")
    print("a newline shows as \\n")


def check_languages(driver, page):
    """English first in an English browser; the switch to Chinese redraws in place and is
    remembered; a Chinese browser opens in Chinese; both tables have the same keys."""
    from selenium.webdriver.support.ui import Select
    driver.execute_script("localStorage.clear()")
    open_page(driver, page, "English page")
    check(driver.execute_script("return document.documentElement.lang") == "en", "an English browser opens in English")
    check(driver.find_element("id", "grid-title").text == "All heads", "the grid's title is not English")
    missing = driver.execute_script("const t = mgWords.tables; return Object.keys(t.en).filter((k) => !(k in t.zh))")
    check(not missing, f"words with no Chinese: {missing}")
    extra = driver.execute_script("const t = mgWords.tables; return Object.keys(t.zh).filter((k) => !(k in t.en))")
    check(not extra, f"Chinese words with no English: {extra}")
    query = driver.find_element("id", "readout-table").get_attribute("data-query")
    Select(driver.find_element("id", "lang-switch")).select_by_value("zh")
    check(driver.execute_script("return document.documentElement.lang") == "zh-CN", "the switch did not set lang zh-CN")
    check(driver.find_element("id", "grid-title").text == "全部的头", f"grid title {driver.find_element('id', 'grid-title').text!r}")
    check(driver.find_element("id", "readout-table").get_attribute("data-query") == query, "the switch lost the query")
    kinds = [o.text for o in Select(driver.find_element("id", "chain-kind")).options]
    check("谁的 (who)" in kinds and any(k.startswith("有什么") for k in kinds), f"the kinds: {kinds}")
    cells = " ".join(c.text for c in driver.find_elements("css selector", ".head-cell"))
    check("置零后检测准确率下降" in cells and "probe drop" not in cells, "the cards are not in Chinese")
    check("L3.H1" in cells, "the cards lost the heads' names")
    legend = driver.find_element("id", "patching-legend").text
    check("恢复比例为负" in legend, f"the legend is not in Chinese: {legend!r}")
    # The circuit of edges (--circuit) redrawn in Chinese: its title, kinds, note, legend and label.
    check(driver.find_element("id", "edge-circuit-title").text == "完整回路：逐条边修补找出",
          f"the circuit's title: {driver.find_element('id', 'edge-circuit-title').text!r}")
    circuit_kinds = [o.text for o in Select(driver.find_element("id", "edge-circuit-kind")).options]
    check("谁的 (who)" in circuit_kinds, f"the circuit's kinds: {circuit_kinds}")
    circuit_note = driver.find_element("id", "edge-circuit-note").text
    check("忠实度（faithfulness）" in circuit_note and "进入头的边" in circuit_note and "Edges into" not in circuit_note,
          f"the circuit's note is not in Chinese: {circuit_note!r}")
    label = driver.find_element("css selector", "#edge-circuit svg").get_attribute("aria-label")
    check(label.endswith(" 的回路"), f"the circuit's label: {label!r}")
    driver.find_element("id", "glossary-link").click()
    check(driver.execute_script("return document.getElementById('glossary').open"), "the header's glossary link does not open it")
    glossary = driver.find_element("id", "glossary-table").text
    check("读取比例" in glossary and "projected_weights" in glossary and "第3层·头1" in glossary, "the glossary")
    expect_clean_console(driver, "Chinese page")
    open_page(driver, page, "Chinese page, reloaded")
    check(driver.execute_script("return document.documentElement.lang") == "zh-CN", "the choice was not remembered")
    check(driver.find_element("id", "probe-line").text.startswith("检测集"), "the reloaded page's probe line is not Chinese")
    driver.execute_script("localStorage.clear()")
    zh_driver = start_browser(lang="zh-CN")
    try:
        open_page(zh_driver, page, "page in a Chinese browser")
        check(zh_driver.execute_script("return document.documentElement.lang") == "zh-CN",
              f"a browser asking for {zh_driver.execute_script('return navigator.language')} opens in English")
        # What the C++ sends as keys, in Chinese: the texts of the role scores, the attribution's parts.
        probe_line = zh_driver.find_element("id", "probe-line").text
        check("道检测题（" in probe_line and "probe prompts" not in probe_line, f"the probe line: {probe_line!r}")
        parts = dict(zh_driver.execute_script("return [...document.querySelectorAll('#attribution-table tr')]"
                                              ".map((r) => [r.dataset.name, r.cells[0].textContent])"))
        expected = {"embed": "字符嵌入", "L0.mlp": "第0层 MLP", "L1.H1": "L1.H1", "ln_f.bias": "ln_f 的偏置（ln_f.bias）"}
        check(all(parts.get(k) == v for k, v in expected.items()), f"the attribution's parts: {parts}")
        print(f"中文: …{probe_line[probe_line.rfind('·'):]!r}; parts {parts['embed']}, {parts['L0.mlp']}, {parts['ln_f.bias']}")
        expect_clean_console(zh_driver, "page in a Chinese browser")
    finally:
        zh_driver.quit()
    print("languages: English first, the switch to 中文 in place and remembered, a zh-CN browser opens in Chinese")


def main():
    if len(sys.argv) != 3:
        fail("usage: explorer_browser_test.py MINI_GPT_BINARY SOURCE_DIR")
    binary, source = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    require_browser()
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select

    scratch = tempfile.mkdtemp(prefix="explorer_browser_test.")
    driver = None
    try:
        driver = start_browser()
        # The first 60 questions of the shipped probe set: enough for every kind, and the
        # ablation of 8 heads stays quick; and the page's question (the main job's showcase,
        # held out from the corpus, not drawn into the probe) with its source, 马 of its fact.
        probe = os.path.join(scratch, "probe60.jsonl")
        with open(os.path.join(source, "data", "probe.jsonl"), encoding="utf-8") as src, open(probe, "w", encoding="utf-8") as dst:
            dst.writelines(src.readlines()[:60])
            dst.write(json.dumps({"answer": "马", "kind": "who", "prompt": QUESTION, "source": QUESTION.index("马")},
                                 ensure_ascii=False) + "\n")

        # 1. A short training run writes heads.html at its end.
        run_dir = os.path.join(scratch, "run")
        out, seconds = run(binary, "train", "--config", os.path.join(source, "configs", "tiny.json"), "--out", run_dir,
                           "--max-steps", "30", "--threads", "1", "--set", "train.eval_interval=10")
        heads_html = os.path.join(run_dir, "heads.html")
        check(os.path.isfile(heads_html) and "head explorer " + heads_html in out, f"train wrote no heads.html: {out}")
        ready, _ = open_page(driver, heads_html, "train's heads.html")
        check("probe:" in driver.find_element("id", "probe-line").text, "heads.html names no probe")
        check(len(driver.find_elements("css selector", "#run svg")) >= 2, "heads.html draws no run curves")
        expect_clean_console(driver, "train's heads.html")
        print(f"train's heads.html: {os.path.getsize(heads_html) / 1e6:.2f} MB, ready after {ready:.0f} ms")

        # The run's metrics with per-evaluation head roles added, as the per-eval role
        # scores will write them, so the role curves are drawn too.
        roles_run = os.path.join(scratch, "roles_run")
        os.mkdir(roles_run)
        with open(os.path.join(run_dir, "metrics.jsonl")) as src, open(os.path.join(roles_run, "metrics.jsonl"), "w") as dst:
            for line in src:
                m = json.loads(line)
                if "val_loss" in m:
                    m["head_roles"] = [{"layer": 0, "head": h, "previous_token": 0.1 * h + m["step"] / 100,
                                        "induction": 0.2} for h in range(2)]
                dst.write(json.dumps(m) + "\n")

        # 2. The default shape, fresh, with a probe set and a run.
        config = os.path.join(source, "configs", "default.json")
        page_a = os.path.join(scratch, "default.html")
        out, gen_a = run(binary, "inspect-heads", "--config", config, "--seed", "3", "--text", QUESTION, "--probe", probe,
                         "--run", roles_run, "--html", page_a)
        check("head explorer written to " + page_a in out, f"inspect-heads --html said: {out}")
        model_json, _ = run(binary, "inspect-heads", "--config", config, "--seed", "3", "--text", QUESTION, "--probe", probe,
                            "--format", "json")
        inspection = json.loads(model_json)
        weights = {(l["layer"], h["head"]): h["projected_weights"] for l in inspection["layers"] for h in l["heads"]}
        ready_a, grid_a = open_page(driver, page_a, "default model")
        T = len(inspection["tokens"])
        check(T == 36, f"the question has {T} symbols")

        P = 35  # the answer position
        check_opening_view(driver, binary, config, QUESTION, T)
        Select(driver.find_element("id", "layer-select")).select_by_value("0")
        hover(driver, "sym-20")
        hover(driver, f"sym-{P}")
        worst = 0.0
        for h in (0, 1):
            worst = max(worst, expect_weights(driver, 0, h, P, weights[(0, h)][P], "hover"))
        driver.find_element("id", "sym-12").click()  # pin 12, then move with the keyboard
        driver.switch_to.active_element.send_keys(Keys.ARROW_LEFT)
        for h in (0, 1):
            worst = max(worst, expect_weights(driver, 0, h, 11, weights[(0, h)][11], "keyboard"))
        Select(driver.find_element("id", "layer-select")).select_by_value("2")
        hover(driver, "sym-30")
        for h in (0, 1):
            worst = max(worst, expect_weights(driver, 2, h, 30, weights[(2, h)][30], "layer 2"))
        print(f"weights checked against --format json: 6 rows of 2 heads, largest difference {worst:.2e}")
        # The chain of each kind (--explain's JSON on the same probe): named and ringed in the graph.
        explained, _ = run(binary, "inspect-heads", "--config", config, "--seed", "3", "--probe", probe, "--explain",
                           "--format", "json")
        for kind in json.loads(explained)["kinds"]:
            Select(driver.find_element("id", "chain-kind")).select_by_value(kind["kind"])
            note = driver.find_element("id", "chain-note")
            check(note.get_attribute("data-writer") == (kind["writer"] or ""),
                  f"chain of {kind['kind']}: writer {note.get_attribute('data-writer')} on the page, {kind['writer']} from --explain")
            check(note.get_attribute("data-carrier") == (kind["carrier"] or ""),
                  f"chain of {kind['kind']}: carrier {note.get_attribute('data-carrier')} on the page, {kind['carrier']} from --explain")
            rings = driver.find_elements("css selector", "#circuit-graph .chain-ring")
            check(len(rings) == (2 if kind["carrier"] else 1), f"chain of {kind['kind']}: {len(rings)} heads ringed")
        print("the chain of every kind named and ringed as --explain finds it")
        # The circuit of edges of each kind (--circuit's JSON on the same probe): one path per kept edge,
        # each named by its sender and receiver, its own effect as the JSON's.
        circuit_out, _ = run(binary, "inspect-heads", "--config", config, "--seed", "3", "--probe", probe, "--circuit",
                             "--format", "json")
        for kind in json.loads(circuit_out)["kinds"]:
            Select(driver.find_element("id", "edge-circuit-kind")).select_by_value(kind["kind"])
            kept = {(e["sender"], e["receiver"]): e["own"] for e in kind["edges"] if e["kept"]}
            paths = driver.find_elements("css selector", "#edge-circuit .circuit-edge")
            drawn = {(p.get_attribute("data-sender"), p.get_attribute("data-receiver")): float(p.get_attribute("data-own"))
                     for p in paths}
            check(set(drawn) == set(kept) and all(abs(drawn[e] - kept[e]) <= 1e-6 * max(1.0, abs(kept[e])) for e in kept),
                  f"circuit of {kind['kind']}: the page draws {sorted(drawn)}, --circuit keeps {sorted(kept)}")
            check(f"faithfulness {kind['faithfulness']:.3f}" in driver.find_element("id", "edge-circuit-note").text,
                  f"circuit of {kind['kind']}: the note does not give its faithfulness")
        print("the circuit of every kind drawn edge for edge as --circuit finds it")

        # Roles: the grid's names are the JSON's; with a probe, every head has an ablation cost.
        questions = {"who": "谁的", "colour": "什么颜色…", "what": "有什么…", "holder": "谁拿着", "which_colour": "什么颜色"}
        for l in range(4):
            for h in range(2):
                role = next(x for x in inspection["layers"][l]["heads"] if x["head"] == h)["roles"]["role"]
                # Each kind in a role with its question: carrier(colour,what) -> carrier(colour 什么颜色…,what 有什么…).
                role = re.sub(r"\(([^)]*)\)", lambda m: "(" + ",".join(f"{k} {questions[k]}" for k in m.group(1).split(",")) + ")", role)
                cell = driver.find_element("id", f"cell-{l}-{h}").text
                check(f"L{l}.H{h} {role}" in cell, f"grid cell L{l}.H{h} shows {cell!r}, the JSON's role is {role}")
                check("probe drop if zeroed " in cell and "loss if zeroed" not in cell,
                      f"grid cell L{l}.H{h} does not name its cost 'probe drop if zeroed': {cell!r}")

        # The trace of head 1.1 at position 30 against --trace --format json.
        driver.find_element("id", "cell-1-1").click()
        Select(driver.find_element("id", "trace-position")).select_by_value("30")
        trace_out, _ = run(binary, "inspect-heads", "--config", config, "--seed", "3", "--text", QUESTION, "--trace", "1.1",
                           "--position", "30", "--format", "json")
        trace = json.loads(trace_out)
        title = driver.find_element("id", "trace-title").text
        check("L1.H1, query position 30" in title, f"trace title {title!r}")
        for element_id, expected in (("trace-dot-13", trace["dots"][13]), ("trace-score-13", trace["scores"][13]),
                                     ("trace-weight-5", trace["weights"][5])):
            shown = float(driver.find_element("id", element_id).text)
            check(abs(shown - expected) <= 1e-6, f"trace {element_id}: page {shown}, JSON {expected}")
        x0 = float(driver.find_element("id", "trace-x").text.strip("[]").split(",")[0])
        check(abs(x0 - trace["x"][0]) <= 1e-6, f"trace x_t[0]: page {x0}, JSON {trace['x'][0]}")
        up = driver.find_element("id", "trace-up-0").get_attribute("data-symbol")
        check(up == trace["top_up"][0]["symbol"], f"trace top logit {up}, JSON {trace['top_up'][0]['symbol']}")
        print("trace 1.1 at position 30 checked against --trace --format json: q.k_13, /sqrt(d)_13, weight_5, x_t[0], top logit")

        # Circuits and the run's curves are on the page.
        copy = driver.find_element("id", "circuit-copy").text
        check("copy score" in copy, f"circuits: {copy!r}")
        options = [o.get_attribute("value") for o in Select(driver.find_element("id", "run-role-select")).options]
        check("previous_token" in options and "induction" in options, f"head-role curves offer {options}")
        check(len(driver.find_elements("css selector", "#run-roles polyline")) == 2, "the role chart has no line per head")
        # The circuit section against the circuit modes' JSON: the attribution bars at the
        # answer position, each head's patching restoration for the page's question against
        # the partner the page names, and the composition graph's edges.
        hover(driver, f"sym-{P}")
        circuit = driver.execute_script("return JSON.parse(document.getElementById('explorer-data').textContent).circuit")
        attribution = json.loads(run(binary, "inspect-heads", "--config", config, "--seed", "3", "--attribution", "--text",
                                     QUESTION, "--format", "json")[0])
        table = driver.find_element("id", "attribution-table")
        check(int(table.get_attribute("data-position")) == P, f"attribution bars at {table.get_attribute('data-position')}")
        worst = test_checks.attribution_gap(driver, attribution)
        check(worst <= 1e-6, f"attribution bars differ from --attribution by {worst}")
        patching = circuit["patching"]
        check(patching["available"], f"no patching on the probe question: {patching}")
        patch = json.loads(run(binary, "inspect-heads", "--config", config, "--seed", "3", "--patch", "--clean", QUESTION,
                               "--corrupt", patching["corrupt"], "--answer", patching["answer"], "--against",
                               patching["against"], "--format", "json")[0])
        patch_worst = max(abs(float(driver.find_element("id", f"patch-head-{l}-{h}").get_attribute("data-value")) -
                              patch["heads"][l][h]) for l in range(4) for h in range(2))
        check(patch_worst <= 1e-6, f"patching heads differ from --patch by {patch_worst}")
        check(patching["corrupt"] in driver.find_element("id", "patching-note").text, "the page does not name its partner")
        composition = json.loads(run(binary, "inspect-heads", "--config", config, "--seed", "3", "--composition",
                                     "--format", "json")[0])
        base = composition["baseline"]
        strong = sorted((max(p[m] / base[m] for m in "qkv") for p in composition["pairs"]), reverse=True)
        expected_edges = min(40, sum(1 for r in strong if r >= 1.5))
        nodes = driver.find_elements("css selector", "#circuit-graph g.node")
        check(len(nodes) == 8, f"the graph has {len(nodes)} head nodes, the model 8 heads")
        edges = driver.find_elements("css selector", "#circuit-graph line.edge")
        check(len(edges) == expected_edges, f"the graph draws {len(edges)} edges, --composition has {expected_edges} above 1.5 x")
        if edges:
            first = edges[0]
            writer, reader = first.get_attribute("data-writer"), first.get_attribute("data-reader")
            pair = next(p for p in composition["pairs"] if ".".join(map(str, p["writer"])) == writer and
                        ".".join(map(str, p["reader"])) == reader)
            mode = first.get_attribute("data-mode")
            check(abs(float(first.get_attribute("data-score")) - pair[mode]) <= 1e-6, f"edge {writer}->{reader} score")
        print(f"circuit section checked against --attribution, --patch and --composition: bars within {worst:.1e}, "
              f"heads within {patch_worst:.1e}, {len(edges)} graph edges")
        check_page_defects(driver, patch)
        expect_clean_console(driver, "default model")
        size_a = os.path.getsize(page_a)

        # 3. A hostile run: 130,000 evaluations, odd values everywhere.
        hostile_run = os.path.join(scratch, "hostile_run")
        os.mkdir(hostile_run)
        raw_evals = []
        with open(os.path.join(hostile_run, "metrics.jsonl"), "w") as dst:
            for step in range(1, 130_001):
                roles = [None] if step % 2 else [{"layer": 0, "head": 1, "induction": 0.5, "induction_by_kind": {"who": "s", "what": 0.2}},
                                                 {"layer": "</text><script>window.__pwned=1</script>", "head": 0, "induction": 0.1}]
                by_kind = {"who": "abc", "what": 1e308, "colour": -1e308, "x": 0.25}
                dst.write(json.dumps({"step": step, "loss": 2.0 + 1.0 / step, "val_loss": 2.1, "probe_accuracy": 0.5,
                                      "probe_accuracy_by_kind": by_kind, "head_roles": roles}) + "\n")
                raw_evals.append({"step": step, "val_loss": 2.1, "probe_accuracy": None if step % 3 else 0.5,
                                  "by_kind": by_kind, "head_roles": roles})
        page_h = os.path.join(scratch, "hostile.html")
        out, gen_h = run(binary, "inspect-heads", "--checkpoint", os.path.join(run_dir, "latest.safetensors"), "--text",
                         QUESTION[:10], "--run", hostile_run, "--html", page_h, "--threads", "1")
        with open(page_h, encoding="utf-8") as f:
            page = f.read()
        start = page.index('<script type="application/json" id="explorer-data">') + len('<script type="application/json" id="explorer-data">')
        end = page.index("</script>", start)
        embedded = json.loads(page[start:end])
        check(embedded["run"]["evals_total"] == 130_000 and len(embedded["run"]["evals"]) <= 1001,
              f"the hostile run is not thinned: {embedded['run']['evals_total']} evaluations, {len(embedded['run']['evals'])} embedded")
        kept = embedded["run"]["evals"][-1]
        check(kept["by_kind"] == {"what": 1e308, "colour": -1e308, "x": 0.25}, f"by_kind embedded as {kept['by_kind']}")
        check(all(isinstance(h["layer"], int) for e in embedded["run"]["evals"] for h in e.get("head_roles", [])),
              "a head_roles entry with a string layer reached the page")
        # The same page with the raw evaluations, unchecked and unthinned, in its data.
        embedded["run"]["evals"] = raw_evals
        embedded["run"]["train"]["loss"][0] = "x"
        page_raw = os.path.join(scratch, "hostile_raw.html")
        with open(page_raw, "w", encoding="utf-8") as f:
            f.write(page[:start] + json.dumps(embedded).replace("<", "\\u003c") + page[end:])
        for path, what in ((page_h, "hostile run"), (page_raw, "hostile run, raw values in the page")):
            ready_h, _ = open_page(driver, path, what)
            charts = driver.execute_script("return document.querySelectorAll('#run svg').length")
            check(charts >= 3, f"{what}: {charts} run charts")
            attributes = driver.execute_script(
                "return [...document.querySelectorAll('#run svg *')].flatMap((e) => [...e.attributes].map((a) => a.value)).join(' ')")
            check("NaN" not in attributes and "Infinity" not in attributes, f"{what}: NaN or Infinity in an SVG attribute")
            check(driver.execute_script("return window.__pwned === undefined"), f"{what}: the injected script ran")
            check("130000 evaluations" in driver.find_element("id", "run").text, f"{what}: the hint does not count 130000 evaluations")
            expect_clean_console(driver, what)
            print(f"{what}: ready after {ready_h:.0f} ms ({os.path.getsize(path) / 1e6:.1f} MB)")

        # 4. 8 layers x 8 heads, block_size 256, on 256 symbols, no probe.
        with open(os.path.join(source, "data", "corpus.txt"), encoding="utf-8") as f:
            long_text = f.read(256)
        big_config = os.path.join(scratch, "big.json")
        with open(big_config, "w") as f:
            json.dump({"model": {"n_layer": 8, "n_head": 8, "n_embd": 64, "block_size": 256},
                       "train": {"seed": 5},
                       "data": {"path": os.path.join(source, "data", "corpus.txt"), "probe_path": ""}}, f)
        page_b = os.path.join(scratch, "big.html")
        out, gen_b = run(binary, "inspect-heads", "--config", big_config, "--text", long_text, "--position", "200",
                         "--html", page_b)
        check("traces at positions 200,255" in out, f"the big page's traces: {out}")
        loads = []
        for _ in range(3):
            ready_b, grid_b = open_page(driver, page_b, "8 x 8 model")
            loads.append((ready_b, grid_b))
        check("no probe" in driver.find_element("id", "probe-line").text, "the big page does not say 'no probe'")
        check("positions 200, 255 only" in driver.find_element("id", "trace-note").text, "the big page does not say which positions have traces")
        row_json, _ = run(binary, "inspect-heads", "--config", big_config, "--text", long_text, "--layer", "5", "--head", "6",
                          "--position", "200", "--format", "json")
        row = json.loads(row_json)["layers"][0]["heads"][0]["position_weights"]
        Select(driver.find_element("id", "layer-select")).select_by_value("5")
        hover(driver, "sym-200")
        expect_weights(driver, 5, 6, 200, row, "8 x 8 model")
        check("no patching on this page" in driver.find_element("id", "patching-note").text,
              "the big page (no probe) does not say why it has no patching")
        dom_nodes = driver.execute_script("return document.getElementsByTagName('*').length")
        # O(T) elements (the symbols, the trace's score table), never one per cell of a T x T matrix.
        check(dom_nodes < 4000, f"the big page has {dom_nodes} elements")
        expect_clean_console(driver, "8 x 8 model")
        # Issue 56: the same page in Chinese says why there is no patching, and over which
        # texts the roles are scored, in Chinese; circuits not drawn (a vocabulary over 256,
        # put into a copy of its data, as circuits_json writes it) too.
        driver.execute_script("localStorage.setItem('mini-gpt.lang', 'zh')")
        open_page(driver, page_b, "8 x 8 model in Chinese")
        patching_note = driver.find_element("id", "patching-note").text
        check(patching_note == "本页没有激活修补：没有检测集：问题的改动对照文本要从检测集中取", f"no patching: {patching_note!r}")
        probe_line = driver.find_element("id", "probe-line").text
        check("仅这段文本" in probe_line and "alone" not in probe_line, f"the big page's probe line: {probe_line!r}")
        with open(page_b, encoding="utf-8") as f:
            page = f.read()
        start = page.index('<script type="application/json" id="explorer-data">') + len('<script type="application/json" id="explorer-data">')
        end = page.index("</script>", start)
        embedded = json.loads(page[start:end])
        embedded["circuits"] = {"available": False, "reason": "the vocabulary has 300 symbols, more than the 256 the page draws",
                                "reason_key": "vocab_too_large", "vocab_size": 300, "max_vocab_size": 256}
        page_v = os.path.join(scratch, "big_vocab.html")
        with open(page_v, "w", encoding="utf-8") as f:
            f.write(page[:start] + json.dumps(embedded).replace("<", "\\u003c") + page[end:])
        open_page(driver, page_v, "circuits not drawn, in Chinese")
        not_drawn = driver.find_element("id", "circuits-not-drawn").text
        check(not_drawn == "未画出：词表有 300 个字符，超过本页能画的 256 个", f"circuits not drawn: {not_drawn!r}")
        expect_clean_console(driver, "8 x 8 model in Chinese")
        driver.execute_script("localStorage.clear()")
        print(f"中文: {patching_note!r}; {not_drawn!r}")
        size_b = os.path.getsize(page_b)
        best = min(r for r, _ in loads)
        median = sorted(r for r, _ in loads)[1]

        print(f"default model (4 x 2 heads, 36 symbols): {size_a / 1e6:.2f} MB, written in {gen_a:.1f} s, "
              f"ready after {ready_a:.0f} ms, all thumbnails after {grid_a:.0f} ms")
        print(f"8 x 8 model (block_size 256, 256 symbols): {size_b / 1e6:.2f} MB, written in {gen_b:.1f} s, "
              f"{dom_nodes} elements; loads: " +
              ", ".join(f"ready {r:.0f} ms / thumbnails {g:.0f} ms" for r, g in loads))
        check(best < FREEZE_LIMIT_MS, f"the 8 x 8 page is ready after {best:.0f} ms at best of 3: frozen")
        print(f"load target {TARGET_MS:.0f} ms: median {median:.0f} ms, best {best:.0f} ms "
              f"({'within' if best < TARGET_MS else 'OVER'} the target at best of 3; load average "
              f"{os.getloadavg()[0]:.1f})")
        check_newline_page(driver, binary, config, scratch)
        check_languages(driver, page_a)
        print(f"explorer_browser_test: {test_checks.passed} checks passed")
    finally:
        if driver is not None:
            driver.quit()
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
