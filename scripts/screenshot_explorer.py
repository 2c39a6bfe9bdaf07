#!/usr/bin/python3
"""A PNG of a head explorer page, or of `mini-gpt serve`'s live page, as headless Chromium shows it at 1280 x 800.

    /usr/bin/python3 scripts/screenshot_explorer.py PAGE.html OUT.png [--query P] [--head L3.H1] [--lang en|zh]
    /usr/bin/python3 scripts/screenshot_explorer.py http://127.0.0.1:PORT/ OUT.png [--head L3.H1] [--ablate L3.H1] [--patch P=S] [--lang en|zh]

Opens the page from disk (or the live page from a running `mini-gpt serve`) in a browser that
asks for English or Chinese (--lang; the page's first language follows it), waits for its
ready marker and its thumbnails, optionally pins query position P and opens head L3.H1 (also
written 3.1; on the live page: ablates a head by its "zero it" button, and patches position P
with symbol S by a click on the symbol in the text and one on S), then saves the window (the
README's data/explorer.png, data/serve.png and their .zh-CN.png are made this way). Needs
Debian's chromium, chromium-driver and python3-selenium.
"""
import argparse
import os
import time

import script_io


def head_spec(text):
    """argparse type: a head, "L3.H1" (as every output names it) or "3.1"."""
    parts = text.split(".")
    if len(parts) == 2 and parts[0].startswith("L") and parts[1].startswith("H"):
        parts = [parts[0][1:], parts[1][1:]]
    if len(parts) != 2 or not all(p.isdigit() and len(p) <= 6 for p in parts):
        raise argparse.ArgumentTypeError(f"expected a head, L3.H1 or 3.1 (layer and head), found {script_io.quoted(text)}")
    return int(parts[0]), int(parts[1])


def patch_spec(text):
    """argparse type: "P=S", a position and the one symbol to put there."""
    position, sep, symbol = text.partition("=")
    if not sep or not position.isdigit() or len(position) > 6 or len(symbol) != 1:
        raise argparse.ArgumentTypeError(f"expected P=S (a position and one symbol, e.g. 5=林), found {script_io.quoted(text)}")
    return int(position), symbol


def click(driver, element_id, refusal):
    """Clicks the element, or refuses in one line, REFUSAL, when the page has none (a head
    or position it does not show is a usage error; the driver's own message carries its
    stack trace)."""
    from selenium.common.exceptions import NoSuchElementException
    try:
        driver.find_element("id", element_id).click()
    except NoSuchElementException:
        raise script_io.ScriptError(refusal)


def live_page(driver, args):
    """The live page of `mini-gpt serve`: ready, then each click waited for until drawn."""
    from selenium.common.exceptions import NoSuchElementException
    from selenium.webdriver.support.ui import WebDriverWait
    updates = lambda: driver.execute_script("return Number(document.body.dataset.updates || 0)")  # noqa: E731

    def after(action):
        before = updates()
        action()
        WebDriverWait(driver, 60).until(lambda d: updates() > before)
    driver.get(args.page)
    WebDriverWait(driver, 60).until(lambda d: d.execute_script("return document.body.dataset.ready === '1'"))
    if args.head:
        layer, head = args.head
        after(lambda: click(driver, f"heat-{layer}-{head}", f"--head L{layer}.H{head}: the page shows no such head"))
    if args.ablate:
        layer, head = args.ablate
        after(lambda: click(driver, f"ablate-{layer}-{head}", f"--ablate L{layer}.H{head}: the page shows no such head"))
    if args.patch:
        position, symbol = args.patch
        try:
            driver.find_element("id", "click-swap").click()
            driver.find_element("id", f"sym-{position}").click()
            choice = next((b for b in driver.find_elements("css selector", "#swap-palette button")
                           if b.get_attribute("data-symbol") == symbol), None)
            if choice is None:
                raise NoSuchElementException(symbol)
            after(choice.click)
            driver.find_element("id", "click-query").click()
        except NoSuchElementException:
            raise script_io.ScriptError(f"--patch {position}={symbol}: the page offers no such position or symbol")


def main():
    parser = script_io.ArgumentParser(prog="screenshot_explorer", description=__doc__.splitlines()[0])
    parser.add_argument("page")
    parser.add_argument("out")
    parser.add_argument("--query", type=script_io.int_in(0, 10**6), help="pin this query position")
    parser.add_argument("--head", type=head_spec, help="open this head, L.H")
    parser.add_argument("--ablate", type=head_spec, help="live page: ablate this head, L.H")
    parser.add_argument("--patch", type=patch_spec, help="live page: replace the symbol at position P with S, P=S")
    parser.add_argument("--width", type=script_io.int_in(100, 8000), default=1280)
    parser.add_argument("--height", type=script_io.int_in(100, 8000), default=800)
    parser.add_argument("--lang", choices=("en", "zh"), default="en", help="the language the browser asks for (the page's first)")
    args = parser.parse_args()
    live = args.page.startswith("http://")
    if not live:
        script_io.read_text(args.page, "page", 256 << 20)  # a regular file of UTF-8 text, or one line saying why
        if args.ablate or args.patch:
            raise script_io.ScriptError("--ablate and --patch act on the live page (an http:// address), not on a page file")
    script_io.check_output_path(args.out)

    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.support.ui import WebDriverWait

    language = "zh-CN" if args.lang == "zh" else "en-US"

    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                 f"--window-size={args.width},{args.height}", "--force-device-scale-factor=1", f"--lang={language}"):
        options.add_argument(flag)
    options.add_experimental_option("prefs", {"intl.accept_languages": language})
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    try:
        driver.set_window_size(args.width, args.height)
        if live:
            live_page(driver, args)
        else:
            driver.get("file://" + os.path.abspath(args.page))
            WebDriverWait(driver, 60).until(lambda d: d.execute_script("return document.body.dataset.gridDrawn === '1'"))
            if args.head:
                layer, head = args.head
                click(driver, f"cell-{layer}-{head}", f"--head L{layer}.H{head}: the page shows no such head")
        if args.query is not None:
            click(driver, f"sym-{args.query}", f"--query {args.query}: the page's text has no such position")
        driver.execute_script("window.scrollTo(0, 0); document.activeElement && document.activeElement.blur()")
        time.sleep(0.3)
        # The viewport must be exactly width x height: correct for the window's own frame.
        inner = driver.execute_script("return [window.innerWidth, window.innerHeight]")
        driver.set_window_size(2 * args.width - inner[0], 2 * args.height - inner[1])
        time.sleep(0.3)
        png = driver.get_screenshot_as_png()
    finally:
        driver.quit()
    script_io.write_atomically(args.out, png)  # never through a link at OUT
    print(f"{script_io.printable(args.out)}: {len(png) / 1e3:.0f} kB")


if __name__ == "__main__":
    script_io.run_main("screenshot_explorer", main)
