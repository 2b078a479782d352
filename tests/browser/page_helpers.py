"""The page helpers the browser tests share (report_test.py, views_test.py, run_files_test.py and
measure_switch_test.py; scripts/bench/report_page.py too), over cdp.Browser:
  - MODEL: the bundled stories260K model;
  - run(*args): runs a command, raising AssertionError with its stderr if it fails;
  - report_and_dump(attnviz, args, folder, formats, dump_path, dump_args=()): `attnviz heatmaps
    ARGS --format FORMATS -o FOLDER`, then `attnviz dump ARGS DUMP_ARGS -o DUMP_PATH`; returns the
    dump, read;
  - float32(x), expected_value(weight): a weight as float32, and as a tooltip shows it (4
    significant digits);
  - browser_in(prefix): a context manager giving (browser, folder): a headless chromium and a
    temporary folder, both gone on leaving;
  - Page(browser, path): opens a file:// page in that browser, offline, 1600 x 1200, and waits for
    its load; its methods hover (x, y), hover_cell (a large-map cell; returns the tooltip), click
    (a selector), key, state, large_map and check_quiet (no request, dialog, console error or
    exception);
  - new_page(browser): detaches from the current page and attaches to a fresh one;
  - go(page, fragment): moves to a #fragment and waits until the page has followed it;
  - screenshot(page, name): with SCREENS=DIR, saves a screenshot of the page there as NAME."""
import base64
import contextlib
import json
import os
import struct
import subprocess
import tempfile
import time

from cdp import Browser

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODEL = os.path.join(ROOT, "data", "stories260k", "stories260K.gguf")


def run(*args):
    done = subprocess.run(list(args), capture_output=True, text=True)
    if done.returncode != 0:
        raise AssertionError(f"{' '.join(args)} failed ({done.returncode}): {done.stderr}")


def report_and_dump(attnviz, args, folder, formats, dump_path, dump_args=()):
    """`attnviz heatmaps ARGS --format FORMATS -o FOLDER`, then `attnviz dump ARGS DUMP_ARGS -o
    DUMP_PATH`; returns the dump, read."""
    run(attnviz, "heatmaps", *args, "--format", formats, "-o", folder)
    run(attnviz, "dump", *args, *dump_args, "-o", dump_path)
    with open(dump_path, encoding="utf-8") as f:
        return json.load(f)


def float32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def expected_value(weight):
    """The dump's value as the page must show it: its float32, 4 significant digits."""
    return float("%.4g" % float32(weight))


@contextlib.contextmanager
def browser_in(prefix):
    """A headless chromium and a temporary folder named PREFIX…, both gone on leaving: (browser, folder)."""
    with tempfile.TemporaryDirectory(prefix=prefix) as out:
        browser = Browser()
        try:
            yield browser, out
        finally:
            browser.close()


class Page:
    def __init__(self, browser, path):
        self.b = browser
        self.url = "file://" + path
        b = browser
        b.send("Page.enable")
        b.send("Runtime.enable")
        b.send("Network.enable")
        b.send("Network.emulateNetworkConditions",
               {"offline": True, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1})
        b.send("Emulation.setDeviceMetricsOverride",
               {"width": 1600, "height": 1200, "deviceScaleFactor": 1, "mobile": False})
        b.events.clear()
        started = time.time()
        b.send("Page.navigate", {"url": self.url})
        b.wait_for("Page.loadEventFired")
        self.load_s = time.time() - started
        self.ready_ms = float(b.evaluate("document.body.dataset.ready"))

    def check_quiet(self):
        """No request but the page itself, no dialog, no console error, no exception."""
        for event in self.b.events:
            method = event.get("method")
            params = event.get("params", {})
            if method == "Network.requestWillBeSent":
                assert params["request"]["url"] == self.url, f"the page requested {params['request']['url']}"
            assert method != "Page.javascriptDialogOpening", f"a dialog opened: {params}"
            assert method != "Runtime.exceptionThrown", f"an exception: {params}"
            if method == "Runtime.consoleAPICalled":
                assert params["type"] not in ("error", "assert"), f"console: {params}"

    def large_map(self):
        return self.b.evaluate("""(() => {
          const c = document.querySelector('#large canvas'), r = c.getBoundingClientRect();
          return {x: r.left, y: r.top, width: c.width, height: c.height};
        })()""")

    def hover(self, x, y):
        self.b.send("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y})

    def hover_cell(self, i, j, n_q, n_k):
        box = self.large_map()
        cell_x, cell_y = box["width"] / n_k, box["height"] / n_q
        y = box["y"] + (i + 0.5) * cell_y
        if not 0 <= y < self.b.evaluate("window.innerHeight"):  # below the fold: scroll the window to it
            self.b.evaluate(f"window.scrollBy(0, {y} - window.innerHeight / 2)")
            box = self.large_map()
        self.hover(box["x"] + (j + 0.5) * cell_x, box["y"] + (i + 0.5) * cell_y)
        return self.b.evaluate("""(() => {
          const t = document.getElementById('tip');
          return {hidden: t.hidden, head: t.querySelector('.tip-head').textContent,
                  query: t.querySelector('.tip-query').textContent, key: t.querySelector('.tip-key').textContent,
                  value: t.querySelector('.tip-value').textContent};
        })()""")

    def click(self, selector):
        x, y = self.b.evaluate(f"""(() => {{
          const r = document.querySelector("{selector}").getBoundingClientRect();
          return [r.left + r.width / 2, r.top + r.height / 2]; }})()""")
        for kind in ("mousePressed", "mouseReleased"):
            self.b.send("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1})

    def key(self, name, code):
        for kind in ("keyDown", "keyUp"):
            self.b.send("Input.dispatchKeyEvent", {"type": kind, "key": name, "code": name,
                                                    "windowsVirtualKeyCode": code})

    def state(self):
        return self.b.evaluate("window.attnviz.state()")


def new_page(browser):
    """Detaches from the current page and attaches to a fresh one."""
    browser.send("Target.detachFromTarget", {"sessionId": browser.session}, session=False)
    target = browser.send("Target.createTarget", {"url": "about:blank"}, session=False)["targetId"]
    browser.session = browser.send("Target.attachToTarget", {"targetId": target, "flatten": True},
                                   session=False)["sessionId"]
    browser.events.clear()


def go(page, fragment):
    """Moves to `fragment` and waits until the page has followed it (hashchange is asynchronous)."""
    page.b.evaluate(f"location.hash = {json.dumps(fragment)}")
    for _ in range(200):
        if page.b.evaluate("document.body.dataset.hash") == fragment:
            return
        time.sleep(0.01)
    raise AssertionError(f"the page did not follow {fragment}")


def screenshot(page, name):
    folder = os.environ.get("SCREENS")
    if not folder:
        return
    os.makedirs(folder, exist_ok=True)
    shot = page.b.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": False})
    with open(os.path.join(folder, name), "wb") as f:
        f.write(base64.b64decode(shot["data"]))

