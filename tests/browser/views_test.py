"""The HTML report's views in headless chromium (issue 23), against attnviz's own dump:
  - deep links open the view they name: #heads (every head of layer 0), #model, #matrix, #text,
    and "#heads&layer=1&head=3&token=5" (layer 1, head 3 alone, query 5 selected);
  - at rest the head view draws every line (one per allowed weight visible at 8-bit opacity);
  - hovering a query token in the head view shows exactly its lines: one per allowed key per
    visible head, each line's weight the dump's float32 for that (head, query, key);
  - shift-click selects several tokens; the text panel marks the generated tokens and a click
    there selects the token in the head view;
  - the matrix view's search finds a token; no console error, no request;
  - a sliding-window layer's out-of-window cells have their own hatch, tooltip and legend line.
With SCREENS=DIR, a screenshot of each view is saved there for a person to look at.
Usage: views_test.py ATTNVIZ"""
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from page_helpers import MODEL, Page, browser_in, float32, go, new_page, report_and_dump, run, screenshot  # noqa: E402

PROMPT = "Once upon a time"
GEMMA2 = os.path.join(os.path.dirname(os.path.dirname(HERE)), "tests", "data", "families", "gemma2.gguf")
N_WINDOW, WINDOW = 24, 5  # gemma2.gguf's layer 0 has a sliding window of 5 tokens
GENERATE = 27  # 32 tokens: BOS, 4 prompt tokens, 27 generated


def visible(page, selector):
    return page.b.evaluate(f"getComputedStyle(document.querySelector('{selector}')).display !== 'none'")


def hover_token(page, axis, index):
    x, y = page.b.evaluate(f"""(() => {{
      const r = document.querySelector('#h{axis[0]} .tok[data-{axis}="{index}"]').getBoundingClientRect();
      return [r.left + r.width / 2, r.top + r.height / 2]; }})()""")
    page.hover(x, y)


def rest_lines(page):
    return page.b.evaluate("""(() => { const c = document.getElementById('head-rest');
      const px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let painted = 0; for (let k = 3; k < px.length; k += 4) if (px[k] > 0) painted++;
      return {shown: getComputedStyle(c).display !== 'none', lines: Number(c.dataset.lines), floor: Number(c.dataset.floor),
              painted: painted, note: document.getElementById('head-rest-note').textContent}; })()""")


def lines(page):
    return page.b.evaluate("""[...document.querySelectorAll('#head-lines line')].map(l =>
      [Number(l.dataset.head), Number(l.dataset.query), Number(l.dataset.key), Number(l.dataset.weight),
       Number(l.getAttribute('stroke-opacity'))])""")


def window_page(browser, attnviz, out):
    """A sliding-window layer (issue 25, gemma2's layer 0, window 5): the matrix view draws the cells
    outside the window with the PNG's other hatch (dark, along x − y), the causal cells with the grey
    one, names them in the tooltip and gives each its legend line; the global layer 1 has none."""
    folder = os.path.join(out, "gemma2")
    run(attnviz, "heatmaps", "--model", GEMMA2, "--token-ids", ",".join(str(i) for i in range(1, N_WINDOW + 1)),
        "--format", "png,html", "-o", folder)
    page = Page(browser, os.path.join(folder, "index.html"))
    go(page, "#matrix")
    n, cell = N_WINDOW, page.large_map()["width"] // N_WINDOW
    colours = page.b.evaluate(f"""(() => {{
      const c = document.querySelector('#large canvas'), px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      const out = [];
      for (let i = 0; i < {n}; i++) for (let j = 0; j < {n}; j++) {{
        const seen = new Set();
        for (let y = i * {cell}; y < (i + 1) * {cell}; y++) for (let x = j * {cell}; x < (j + 1) * {cell}; x++) {{
          const o = 4 * (y * c.width + x); seen.add(px[o] + "," + px[o + 1] + "," + px[o + 2]); }}
        out.push([...seen].sort()); }}
      return out; }})()""")
    for index, seen in enumerate(colours):
        i, j = divmod(index, n)
        if j > i:
            assert seen == ["191,191,191", "235,235,235"], (i, j, seen)  # causal: the grey hatch
        elif i - j >= WINDOW:
            assert seen == ["110,110,110", "191,191,191"], (i, j, seen)  # outside the window: the other one
        else:
            assert "191,191,191" not in seen or len(seen) == 1, (i, j, seen)
    legend = page.b.evaluate("[...document.querySelectorAll('#legend > div')].map(d => d.className + ': ' + d.textContent)")
    assert legend[:2] == ["masked: grey hatched: masked (causal/padding), not attended",
                          "apart: cross-hatched: outside the sliding window of 5 tokens (query i sees keys i-5 < j <= i), "
                          "not attended"], legend
    page.b.evaluate("window.scrollTo(0, 0)")
    assert page.hover_cell(20, 3, n, n)["value"].startswith("masked: outside the sliding window of 5 tokens"), "tooltip"
    assert page.hover_cell(3, 20, n, n)["value"] == "masked"
    screenshot(page, "window_matrix.png")
    page.key("ArrowDown", 40)
    assert page.state()["view"] == 1
    legend = page.b.evaluate("[...document.querySelectorAll('#legend > div')].map(d => d.className)")
    assert "apart" not in legend, legend
    page.check_quiet()
    print(f"window: {n} tokens, the cells outside gemma2's window of {WINDOW} hatched apart in the matrix view")


def main():
    attnviz = os.path.abspath(sys.argv[1])
    with browser_in("attnviz-views-") as (browser, out):
        folder = os.path.join(out, "model")
        common = ["--model", MODEL, "--text", PROMPT, "--generate", str(GENERATE)]
        dump = report_and_dump(attnviz, common, folder, "html", os.path.join(out, "model.json"))
        layers, prompt = dump["layers"], dump["prompt_length"]
        n, heads = len(layers[0]["query_tokens"]), layers[0]["num_heads"]
        assert n == 32 and prompt == 5, (n, prompt)
        page = Page(browser, os.path.join(folder, "index.html"))
        assert page.b.evaluate("document.body.dataset.views") == "ready"

        go(page, "#heads")
        assert visible(page, "#heads-view") and not visible(page, "#matrix-view"), "#heads shows the head view alone"
        assert page.b.evaluate("window.attnvizViews.visible()") == list(range(heads))
        # At rest every line is drawn (BertViz): one per allowed (head, query, key) whose weight
        # shows at 8-bit opacity, on the canvas; hovering hides it, leaving shows it again.
        rest = rest_lines(page)
        expected = sum(1 for h in range(heads) for i in range(n) for j in range(i + 1)
                       if math.floor(float32(layers[0]["weights"][h][i][j]) * 255 + 0.5) >= 1)
        assert rest["shown"] and rest["lines"] == expected and rest["floor"] == 1 and rest["painted"] > 1000, (rest, expected)
        assert f"every line of the heads shown ({expected})" in rest["note"], rest
        screenshot(page, "heads_rest.png")
        hover_token(page, "query", 4)
        assert not rest_lines(page)["shown"] and len(lines(page)) == heads * 5
        page.hover(1, 1)
        assert rest_lines(page)["shown"] and len(lines(page)) == 0
        for axis, index in (("query", 9), ("query", 31), ("query", 0)):
            hover_token(page, axis, index)
            shown = lines(page)
            # Causal: query i sees keys 0..i; one line per key per visible head.
            assert len(shown) == heads * (index + 1), (index, len(shown))
            for h, i, j, w, opacity in shown:
                expected = float32(layers[0]["weights"][h][i][j])
                assert i == index and j <= i and w == expected, (h, i, j, w, expected)
                assert abs(opacity - min(1.0, w)) < 1e-6, (opacity, w)
        hover_token(page, "key", 3)
        assert len(lines(page)) == heads * (n - 3), "a key's lines come from every query that may see it"
        hover_token(page, "query", 12)
        screenshot(page, "heads.png")
        page.hover(1, 1)

        go(page, "#heads&layer=1&head=3&token=5")
        assert page.state() == {"view": 1, "head": 3}, page.state()
        assert page.b.evaluate("window.attnvizViews.visible()") == [3]
        assert page.b.evaluate("window.attnvizViews.selected()") == [5]
        shown = lines(page)
        assert len(shown) == 6 and all(h == 3 and i == 5 for h, i, _, _, _ in shown), shown
        assert [w for _, _, _, w, _ in shown] == [float32(x) for x in layers[1]["weights"][3][5][:6]]
        page.click("#hq .tok[data-query='20']")
        x, y = page.b.evaluate("""(() => { const r = document.querySelector('#hq .tok[data-query="7"]').getBoundingClientRect();
          return [r.left + 4, r.top + 4]; })()""")
        for kind in ("mousePressed", "mouseReleased"):
            page.b.send("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, "button": "left",
                                                     "clickCount": 1, "modifiers": 8})
        assert page.b.evaluate("window.attnvizViews.selected()") == [7, 20]
        page.hover(1, 1)
        assert len(lines(page)) == 8 + 21, "two selected queries: their lines together"
        screenshot(page, "heads_deep_link.png")

        go(page, "#model")
        assert visible(page, "#overview-box") and not visible(page, "#heads-view")
        screenshot(page, "model.png")
        page.click("#overview td[data-view='2'][data-head='6'] canvas")
        assert page.state() == {"view": 2, "head": 6}, page.state()
        assert page.b.evaluate("window.attnvizViews.visible()") == [6]

        go(page, "#text")
        assert visible(page, "#text-view") and not visible(page, "#overview-box")
        spans = page.b.evaluate("""[...document.querySelectorAll('#text span')].map(s => s.className.includes('generated'))""")
        assert spans == [i >= prompt for i in range(n)], spans
        page.click("#text span[data-token='10']")
        assert page.b.evaluate("window.attnvizViews.selected()") == [10]
        screenshot(page, "text.png")

        go(page, "#matrix")
        assert visible(page, "#matrix-view") and visible(page, "#search-box") and not visible(page, "#text-view")
        page.b.evaluate("""(() => { const s = document.getElementById('search'); s.value = 'Lily';
          s.dispatchEvent(new Event('input')); })()""")
        note = page.b.evaluate("document.getElementById('search-note').textContent")
        index = layers[0]["query_tokens"].index("\u2581Lily")
        assert note.startswith("1 of ") and f"#{index} \u2581Lily" in note, note
        marks = page.b.evaluate("document.querySelectorAll('#large .mark').length")
        assert marks == 2, f"the prompt's end: a line across rows and one across columns, got {marks}"
        width = page.b.evaluate("document.querySelector('#large canvas').width")
        page.click("#zoom-in")
        page.click("#zoom-in")
        zoomed = page.b.evaluate("""(() => { const c = document.querySelector('#large canvas'), box = document.getElementById('large');
          return [c.width, box.scrollWidth > box.clientWidth || box.scrollHeight > box.clientHeight,
                  document.getElementById('zoom-level').textContent]; })()""")
        assert zoomed == [4 * width, True, "4×"], (width, zoomed)
        page.b.evaluate("document.getElementById('large').scrollTo(600, 600)")
        tip = page.hover_cell(20, 9, n, n)
        assert tip["query"] == f"query 20 “{layers[2]['query_tokens'][20]}”", tip
        assert float(tip["value"].rpartition(" ")[2]) == float("%.4g" % float32(layers[2]["weights"][6][20][9])), tip
        page.click("#zoom-out")
        page.click("#zoom-out")
        assert page.b.evaluate("document.querySelector('#large canvas').width") == width
        legend = page.b.evaluate("[...document.querySelectorAll('#legend .marks')].map(d => d.textContent)")
        assert legend == ["red lines: the prompt ends after token 4; rows below and columns right of it are "
                          "generated tokens"], legend
        screenshot(page, "matrix.png")
        page.check_quiet()

        # compare --format html: its statistics table as text, the numbers --stats writes.
        stats = os.path.join(out, "stats.csv")
        run(attnviz, "compare", os.path.join(os.path.dirname(MODEL), "layer0.json"), "--causal", "--heads", "3,1",
            "--format", "html", "-o", os.path.join(out, "compare.png"), "--stats", stats)
        new_page(browser)
        page = Page(browser, os.path.join(out, "compare.html"))
        table = page.b.evaluate("""[...document.querySelectorAll('#tables-view tr')].map(r =>
          [...r.children].map(c => c.textContent))""")
        with open(stats, encoding="utf-8") as f:
            csv_rows = [line.rstrip("\n").split(",") for line in f]
        assert len(table) == 3 and table[0][0] == "head" and [row[0] for row in table[1:]] == ["L0H3", "L0H1"], table
        for shown, saved in zip(table[1:], csv_rows[1:]):
            assert [float(x) for x in shown[1:]] == [round(float(x), 3) for x in saved[1:10]], (shown, saved)
        screenshot(page, "compare.png")
        page.check_quiet()
        print(f"views: {len(layers)} layers x {heads} heads x {n} tokens; deep links, hover lines, "
              "selection, text panel and search checked")
        new_page(browser)
        window_page(browser, attnviz, out)


if __name__ == "__main__":
    main()
