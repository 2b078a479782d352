"""attribution.html in headless chromium (issue 34 §3): attribute's own page, no longer the
attention report (whose head view drew "attention lines" from layers to heads, whose text view
read L0L1L2L3L4, and whose title showed twice). On the bundled stories260K model, against the
run's own attribution.json:
  - one title; two maps (direct logit attribution, ablation), each a table of 5 layers x 8 heads;
  - every cell's value is attribution.json's dla / ablation [layer][head] (as float32, the maps'
    type), its hover text (title) names the head and the value to 3 significant digits, and its
    colour is red for a value > 0, blue for < 0, the map's largest |value| the most saturated;
  - the top heads listed are the 3 largest dla and the 3 most negative ablation values, as the
    command prints them;
  - no element of the attention report, no console error, no request.
Usage: attribution_page_test.py ATTNVIZ"""
import json
import os
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from page_helpers import MODEL, browser_in  # noqa: E402

TEXT = "Once upon a time, there was a little girl named Lily"


def float32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def fixed(value):
    """attribute's own number format: three decimals, or three significant digits for a value that
    would read 0.000."""
    text = "%.3f" % value
    if value != 0 and float(text) == 0:
        text = "%.3g" % value
    return text


def ranked(table, sign):
    heads = [(v, f"L{l}H{h}") for l, row in enumerate(table) for h, v in enumerate(row)]
    heads.sort(key=lambda item: -sign * item[0])
    return ", ".join(f"{name} {fixed(v)}" for v, name in heads[:3])


def open_page(browser, path):
    b = browser
    for domain in ("Page.enable", "Runtime.enable", "Network.enable"):
        b.send(domain)
    b.send("Network.emulateNetworkConditions",
           {"offline": True, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1})
    b.events.clear()
    b.send("Page.navigate", {"url": "file://" + path})
    b.wait_for("Page.loadEventFired")


def main():
    attnviz = os.path.abspath(sys.argv[1])
    with browser_in("attnviz-attribution-page-") as (browser, out):
        folder = os.path.join(out, "attribution")
        done = subprocess.run([attnviz, "attribute", "--model", MODEL, "--text", TEXT, "--format", "png,html", "-o", folder],
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        with open(os.path.join(folder, "attribution.json"), encoding="utf-8") as f:
            reference = json.load(f)
        path = os.path.join(folder, "attribution.html")
        open_page(browser, path)
        page = browser.evaluate("""(() => ({
          title: document.title, h1: [...document.querySelectorAll('h1')].map(h => h.textContent),
          top: [...document.querySelectorAll('#top li')].map(li => li.textContent),
          report: document.querySelectorAll('#head-lines, #attnviz-data, canvas').length,
          cells: [...document.querySelectorAll('table.map td.v')].map(td => ({
            map: Number(td.closest('table').dataset.map), layer: Number(td.dataset.layer), head: Number(td.dataset.head),
            value: Number(td.dataset.value), text: td.textContent, title: td.title,
            colour: getComputedStyle(td).backgroundColor.match(/\\d+/g).map(Number)}))}))()""")
        assert page["h1"] == [page["title"]], (page["h1"], page["title"])
        assert page["report"] == 0, "elements of the attention report on the attribution page"
        tables = [reference["dla"], reference["ablation"]]
        assert len(page["cells"]) == sum(len(t) * len(t[0]) for t in tables) == 2 * 5 * 8, len(page["cells"])
        checked = 0
        for m, table in enumerate(tables):
            cells = [c for c in page["cells"] if c["map"] == m]
            limit = max(abs(float32(v)) for row in table for v in row)
            for c in cells:
                want = float32(table[c["layer"]][c["head"]])
                assert abs(c["value"] - want) <= 1e-6 * max(1e-3, abs(want)), (m, c, want)
                name = f"L{c['layer']}H{c['head']}"
                assert c["title"].startswith(f"{name}: {'%.3g' % want} ("), (c["title"], want)
                assert c["text"] == "%.3g" % want, (c["text"], want)
                r, g, b = c["colour"]
                if want > 0.05 * limit:
                    assert r > b, (m, name, want, c["colour"])
                elif want < -0.05 * limit:
                    assert b > r, (m, name, want, c["colour"])
                checked += 1
            # The most saturated cell (the least white: lowest channel sum) is the largest |value|.
            darkest = min(cells, key=lambda c: sum(c["colour"]))
            assert abs(abs(darkest["value"]) - limit) <= 1e-6 * limit, (m, darkest, limit)
        want_top = ["top direct logit attribution: " + ranked(reference["dla"], 1),
                    "largest drop in log p when ablated: " + ranked(reference["ablation"], -1)]
        assert page["top"] == want_top, (page["top"], want_top)
        for line in want_top:
            assert line in done.stdout, (line, done.stdout)
        url = "file://" + path
        for event in browser.events:
            method, params = event.get("method"), event.get("params", {})
            if method == "Network.requestWillBeSent":
                assert params["request"]["url"] == url, f"the page requested {params['request']['url']}"
            assert method != "Runtime.exceptionThrown", f"an exception: {params}"
            if method == "Runtime.consoleAPICalled":
                assert params["type"] not in ("error", "assert"), f"console: {params}"
    print(f"attribution page: {checked} cells equal attribution.json, top heads as printed: 1 passed, 0 failed")


if __name__ == "__main__":
    main()
