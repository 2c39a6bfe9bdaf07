"""What the Python tests share: a failure printed as one FAIL line and exit 1, a count of the
checks passed, and (for the browser tests) the Debian packages they need and headless
Chromium started as each test starts it. Imported by tests/explorer_browser_test.py,
tests/serve_browser_test.py and tests/serve_test.py; it imports none of them."""
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
