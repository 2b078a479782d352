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
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from page_helpers import MODEL, Page, browser_in, expected_value, new_page, report_and_dump  # noqa: E402
from png_pixels import read_png  # noqa: E402
from svg_cells import svg_cells  # noqa: E402

# 64 tokens: BOS, the prompt and a greedy continuation.
PROMPT = "Once upon a time"
GENERATE = 59
MAX_PAGE_BYTES = 1_000_000
MAX_READY_MS = 1000
MASKED = {(191, 191, 191), (235, 235, 235)}


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
    dump = report_and_dump(attnviz, common, folder, "png,svg,html", os.path.join(out, "model.json"))
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
    dump = report_and_dump(attnviz, [source, "--causal"], folder, "html", os.path.join(out, "injection.json"))
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
    weights = report_and_dump(attnviz, [source], folder, "html", os.path.join(out, "long.json"))["weights"]
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


def main():
    attnviz = os.path.abspath(sys.argv[1])
    with browser_in("attnviz-report-") as (browser, out):
        model_report(browser, attnviz, out)
        new_page(browser)
        injection_report(browser, attnviz, out)
        new_page(browser)
        long_report(browser, attnviz, out)
    print("report_test: all checks passed")


if __name__ == "__main__":
    main()
