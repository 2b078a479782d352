"""The HTML report in a real browser (issue 14): Debian's chromium, headless, driven over the
DevTools protocol with the network off. Checks, against attnviz's own dumps:
  - the page loads from file:// and makes no other request; it is interactive in under 1 s;
  - hovering cells shows query/key index and token and the weight rounded to 4 significant digits
    (exactly the dump's float32, rounded), or "masked";
  - arrow keys and clicks on thumbnails switch heads and layers; hovering a token label outlines its row or column on
    every map shown;
  - a screenshot of the large map has, at every cell centre, the PNG's colour at that cell;
  - tokens that are markup or script show as text and run nothing;
  - past 2^20 values the page stores 16-bit steps and says so; a block's tooltip is within half
    a step of the dump's maximum.
Usage: report_test.py ATTNVIZ"""
import json
import os
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from cdp import Browser  # noqa: E402
from png_pixels import read_png  # noqa: E402
from svg_cells import svg_cells  # noqa: E402

MODEL = os.path.join(ROOT, "data", "stories260k", "stories260K.gguf")
# 64 tokens: BOS, the prompt and a greedy continuation.
PROMPT = "Once upon a time"
GENERATE = 59
MAX_PAGE_BYTES = 1_000_000
MAX_READY_MS = 1000
MASKED = {(191, 191, 191), (235, 235, 235)}


def run(*args):
    done = subprocess.run(list(args), capture_output=True, text=True)
    if done.returncode != 0:
        raise AssertionError(f"{' '.join(args)} failed ({done.returncode}): {done.stderr}")


def float32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def expected_value(weight):
    """The dump's value as the page must show it: its float32, 4 significant digits."""
    return float("%.4g" % float32(weight))


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


def check_tooltips(page, layer, head, cells):
    """Hovers each (i, j) of the large map and compares the tooltip with the dump's layer."""
    n_q, n_k = len(layer["query_tokens"]), len(layer["key_tokens"])
    for i, j in cells:
        tip = page.hover_cell(i, j, n_q, n_k)
        assert not tip["hidden"], f"no tooltip over cell ({i}, {j})"
        assert tip["query"] == f"query {i} \u201c{layer['query_tokens'][i]}\u201d", tip
        assert tip["key"] == f"key {j} \u201c{layer['key_tokens'][j]}\u201d", tip
        weight = layer["weights"][head][i][j]
        masked = layer["causal"] and j > i
        if masked:
            assert tip["value"] == "masked", tip
        else:
            label, _, shown = tip["value"].rpartition(" ")
            assert label == "attention weight", tip
            assert float(shown) == expected_value(weight), f"cell ({i}, {j}): page {shown}, dump {weight}"
            assert len(shown.replace("0.", "", 1).lstrip("0").replace(".", "").split("e")[0]) == 4, shown


def compare_screenshot(page, png_path, svg_path, n_q, n_k):
    """Screenshot colours at the large map's cell centres against the PNG's at its cell centres."""
    box = page.large_map()
    shot = page.b.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True, "clip": {
        "x": box["x"], "y": box["y"], "width": box["width"], "height": box["height"], "scale": 1}})
    import base64
    width, height, shot_pixel = read_png(base64.b64decode(shot["data"]))
    assert (width, height) == (box["width"], box["height"]), (width, height, box)
    with open(png_path, "rb") as f:
        _, _, png_pixel = read_png(f.read())
    centres = svg_cells(svg_path)[0]
    assert len(centres) == n_q * n_k
    cell = box["width"] // n_k
    compared = 0
    for (x, y, kind), index in zip(centres, range(n_q * n_k)):
        i, j = divmod(index, n_k)
        shown = shot_pixel(j * cell + cell // 2, i * cell + cell // 2)
        expected = png_pixel(x, y)
        if kind == "m":
            assert shown in MASKED and expected in MASKED, (i, j, shown, expected)
        else:
            assert shown == expected, f"cell ({i}, {j}): screenshot {shown}, PNG {expected}"
        compared += 1
    return compared


def model_report(browser, attnviz, out):
    folder = os.path.join(out, "model")
    common = ["--model", MODEL, "--text", PROMPT, "--generate", str(GENERATE)]
    run(attnviz, "heatmaps", *common, "--format", "png,svg,html", "-o", folder)
    run(attnviz, "dump", *common, "-o", os.path.join(out, "model.json"))
    with open(os.path.join(out, "model.json"), encoding="utf-8") as f:
        dump = json.load(f)
    layers = dump["layers"]
    page_path = os.path.join(folder, "index.html")
    size = os.path.getsize(page_path)
    n = len(layers[0]["query_tokens"])
    heads = layers[0]["num_heads"]
    print(f"model report: {len(layers)} layers x {heads} heads x {n} tokens, {size} bytes")
    assert n == 64, n
    assert size <= MAX_PAGE_BYTES, f"{size} bytes"

    page = Page(browser, page_path)
    print(f"model report: interactive after {page.ready_ms:.0f} ms (load event after {page.load_s * 1000:.0f} ms)")
    assert page.ready_ms < MAX_READY_MS, page.ready_ms
    assert page.state() == {"view": 0, "head": 0}
    check_tooltips(page, layers[0], 0, [(0, 0), (1, 0), (1, 1), (5, 3), (63, 0), (63, 63), (10, 40), (0, 63)])

    page.key("ArrowRight", 39)
    page.key("ArrowDown", 40)
    assert page.state() == {"view": 1, "head": 1}, page.state()
    assert page.b.evaluate("document.getElementById('panel-title').textContent") == "L1H1 \u00b7 head 1 of 8"
    check_tooltips(page, layers[1], 1, [(7, 2), (33, 32), (63, 17), (4, 9)])
    page.key("ArrowLeft", 37)
    page.key("ArrowUp", 38)
    page.key("ArrowUp", 38)
    assert page.state() == {"view": 0, "head": 0}, page.state()
    # Clicks: a thumbnail of the current layer, then a cell of the layers x heads overview.
    page.click("#thumbs .thumb[data-head='3'] canvas")
    assert page.state() == {"view": 0, "head": 3}, page.state()
    page.click("#overview td[data-view='4'][data-head='7'] canvas")
    assert page.state() == {"view": 4, "head": 7}, page.state()
    check_tooltips(page, layers[4], 7, [(20, 19), (63, 62)])

    # Hovering query label 6 outlines row 6 on the 8 thumbnails and the large map; key label 12
    # outlines column 12.
    for axis, index, prop in (("query", 6, "top"), ("key", 12, "left")):
        centre = page.b.evaluate(f"""(() => {{
          const label = document.querySelector('.label[data-{axis}="{index}"]');
          label.scrollIntoView({{block: "center"}});  // below the fold once the page grew (issue 23)
          const r = label.getBoundingClientRect();
          return [r.left + r.width / 2, r.top + r.height / 2]; }})()""")
        page.hover(*centre)
        outlines = page.b.evaluate(f"""[...document.querySelectorAll('.hl')].map(h =>
          [h.style.display, parseInt(h.style.{prop}), h.parentNode.querySelector('canvas').width / {n}])""")
        assert len(outlines) == heads + 1, outlines
        for display, at, cell in outlines:
            assert display == "block" and at == index * cell, (axis, outlines)
    page.b.evaluate("window.scrollTo(0, 0)")
    page.hover(1, 1)

    compared = compare_screenshot(page, os.path.join(folder, "layer_4", "head_7.png"),
                                  os.path.join(folder, "layer_4", "head_7.svg"), n, n)
    print(f"model report: {compared} cell colours of the screenshot equal the PNG's")
    page.check_quiet()


def injection_report(browser, attnviz, out):
    folder = os.path.join(out, "injection")
    source = os.path.join(HERE, "injection.json")
    run(attnviz, "heatmaps", source, "--causal", "--format", "html", "-o", folder)
    run(attnviz, "dump", source, "--causal", "-o", os.path.join(out, "injection.json"))
    with open(os.path.join(out, "injection.json"), encoding="utf-8") as f:
        dump = json.load(f)
    page = Page(browser, os.path.join(folder, "index.html"))
    n = len(dump["query_tokens"])
    check_tooltips(page, dump, 0, [(i, j) for i in range(n) for j in range(n)])
    page.key("ArrowRight", 39)
    check_tooltips(page, dump, 1, [(i, j) for i in range(n) for j in range(n)])
    ran = page.b.evaluate("""({images: document.querySelectorAll('img').length,
      scripts: document.scripts.length, labels: [...document.querySelectorAll('#large .qlabels .label')].map(l => l.textContent),
      title: document.title})""")
    assert ran["images"] == 0 and ran["scripts"] == 2, ran
    assert ran["labels"][0] == dump["query_tokens"][0][:23] + "\u2026", ran
    assert ran["labels"][2] == "<!--", ran
    page.check_quiet()
    print(f"injection report: {n} markup tokens shown as text, nothing ran")


def long_report(browser, attnviz, out):
    """Past 2^20 values the page stores 16-bit steps and says so; past 640 tokens each map pixel
    is a block of cells, and the tooltip names the block and its max."""
    with open(os.path.join(ROOT, "tests", "fixtures", "fa.json"), encoding="utf-8") as f:
        sentence = json.load(f)
    n = 730  # 2 heads x 730 x 730 = 1 065 800 values > 2^20
    sentence["tokens"] = [f"t{i}" for i in range(n)]
    sentence["embeddings"] = [[((i * 7 + k * 3) % 11) / 5 - 1 for k in range(4)] for i in range(n)]
    source = os.path.join(out, "long_sentence.json")
    with open(source, "w", encoding="utf-8") as f:
        json.dump(sentence, f)
    folder = os.path.join(out, "long")
    run(attnviz, "heatmaps", source, "--format", "html", "-o", folder)
    run(attnviz, "dump", source, "-o", os.path.join(out, "long.json"))
    with open(os.path.join(out, "long.json"), encoding="utf-8") as f:
        weights = json.load(f)["weights"]
    page = Page(browser, os.path.join(folder, "index.html"))
    note = page.b.evaluate("document.getElementById('note').textContent")
    assert "16-bit steps" in note, note
    box = page.large_map()
    assert box["width"] == 365, box  # 730 tokens in blocks of 2, one pixel each
    # A thinned axis labels each token with its position (issue 23): "#28 t28".
    labels = page.b.evaluate("[...document.querySelectorAll('#large .qlabels .label')].map(l => l.textContent)")
    stride = int(labels[1].split()[0][1:])
    assert stride > 1 and labels[:3] == [f"#{k * stride} t{k * stride}" for k in range(3)], labels[:3]
    half_step = 0.5 / 65535  # this run's weights span about 0..1
    for bi, bj in ((0, 0), (100, 37), (364, 364)):
        page.hover(box["x"] + bj + 0.5, box["y"] + bi + 0.5)
        tip = page.b.evaluate("""[...document.querySelectorAll('#tip > div')].map(d => d.textContent)""")
        assert tip[1] == f"queries {2 * bi}–{2 * bi + 1}" and tip[2] == f"keys {2 * bj}–{2 * bj + 1}", tip
        block_max = max(weights[0][i][j] for i in (2 * bi, 2 * bi + 1) for j in (2 * bj, 2 * bj + 1))
        label, _, shown = tip[3].rpartition(" ")
        assert label == "max attention weight", tip
        assert abs(float(shown) - block_max) <= half_step + 5e-4 * block_max, (tip, block_max)
    print(f"long report: {n} tokens, {os.path.getsize(os.path.join(folder, 'index.html'))} bytes (16-bit), "
          f"interactive after {page.ready_ms:.0f} ms, block tooltips within half a 16-bit step of the dump")
    page.check_quiet()


def new_page(browser):
    """Detaches from the current page and attaches to a fresh one."""
    browser.send("Target.detachFromTarget", {"sessionId": browser.session}, session=False)
    target = browser.send("Target.createTarget", {"url": "about:blank"}, session=False)["targetId"]
    browser.session = browser.send("Target.attachToTarget", {"targetId": target, "flatten": True},
                                   session=False)["sessionId"]
    browser.events.clear()


def main():
    attnviz = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory(prefix="attnviz-report-") as out:
        browser = Browser()
        try:
            model_report(browser, attnviz, out)
            new_page(browser)
            injection_report(browser, attnviz, out)
            new_page(browser)
            long_report(browser, attnviz, out)
        finally:
            browser.close()
    print("report_test: all checks passed")


if __name__ == "__main__":
    main()
