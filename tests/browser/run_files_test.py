"""Everything a run wrote is reachable from its HTML report (issue 23), in headless chromium,
against the files the same run (or its dump) wrote:
  - heatmaps --model … --rollout --format png,html: the page links overview.png and
    rollout.png (relative links to the files written, nothing requested) and every layer's pictures;
  - its rollout views are rollout.png's two grids: their tooltips are the dump's `rollout`
    (R of the last layer; the strip: each layer's last-query row);
  - with --measure norms, the norms measure's tooltips are the dump's `norms`;
  - compare --model … --census FILE.csv --format html: census.html holds census.csv cell for cell;
    with --heads L0H3,L4H1 compare.html holds it too, after the statistics table;
  - compare of two runs with different masks: each panel keeps its own run's cells.
Usage: run_files_test.py ATTNVIZ"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from page_helpers import MODEL, Page, browser_in, expected_value, go, new_page, report_and_dump, run  # noqa: E402

PROMPT = "Once upon a time"
GENERATE = 11  # 16 tokens


def show_measure(page, measure, view_name):
    """Switches the page to `measure` and its view named `view_name`; returns the view's index."""
    return page.b.evaluate(f"""(() => {{
      const s = document.getElementById('measure-select');
      s.value = {json.dumps(measure)}; s.dispatchEvent(new Event('change'));
      const v = window.attnvizCore.data.views.findIndex(v => v.name === {json.dumps(view_name)} &&
                                                               window.attnvizCore.measureOf(v) === {json.dumps(measure)});
      window.attnviz.show(v, 0);
      document.querySelector('#large canvas').scrollIntoView({{block: 'start'}});
      return v; }})()""")


def tooltip_value(page, i, j, n_q, n_k):
    tip = page.hover_cell(i, j, n_q, n_k)
    assert not tip["hidden"], (i, j)
    return float(tip["value"].rpartition(" ")[2])


def model_page(browser, attnviz, out):
    folder = os.path.join(out, "model")
    common = ["--model", MODEL, "--text", PROMPT, "--generate", str(GENERATE)]
    # --measure norms: the dump holds the norms and the weights' rollout; the pictures' rollout
    # would read the norms (docs/analysis.md), so the norms get a page of their own.
    dump = report_and_dump(attnviz, [*common, "--rollout"], folder, "png,html", os.path.join(out, "model.json"),
                           ["--measure", "norms"])
    run(attnviz, "heatmaps", *common, "--measure", "norms", "--format", "html", "-o", os.path.join(out, "norms"))
    n, layers = len(dump["tokens"]), len(dump["layers"])
    page = Page(browser, os.path.join(folder, "index.html"))

    links = page.b.evaluate("""[...document.querySelectorAll('#files-main a, #files a')].map(a =>
      [a.getAttribute('href'), a.href, a.textContent, a.closest('#overview-box') !== null])""")
    main = [href for href, _, _, top in links if top]
    assert main == ["overview.png", "rollout.png"], links[:3]
    nested = [href for href, _, _, top in links if not top]
    assert len(nested) == layers * 9 and "layer_4/head_7.png" in nested, nested[:3]
    for href, url, _, _ in links:
        assert url == "file://" + os.path.join(folder, href) and os.path.isfile(os.path.join(folder, href)), (href, url)
    written = {os.path.relpath(os.path.join(d, f), folder) for d, _, fs in os.walk(folder) for f in fs}
    assert written == {href for href, _, _, _ in links} | {"index.html"}, written ^ {h for h, _, _, _ in links}

    go(page, "#matrix")
    # The rollout's matrix: R of the last layer, every allowed cell a tooltip of the dump's value.
    show_measure(page, "rollout", f"rollout R_{layers - 1}")
    rollout = dump["rollout"][layers - 1]
    for i, j in ((0, 0), (5, 0), (5, 5), (15, 3), (15, 15), (9, 4)):
        assert tooltip_value(page, i, j, n, n) == expected_value(rollout[i][j]), (i, j)
    assert page.hover_cell(3, 9, n, n)["value"] == "masked"
    # The strip: the last position's row after each layer.
    show_measure(page, "rollout", "rollout, last position")
    for layer, j in ((0, 0), (0, 15), (2, 7), (layers - 1, 1)):
        assert tooltip_value(page, layer, j, layers, n) == expected_value(dump["rollout"][layer][n - 1][j]), (layer, j)
    page.check_quiet()
    # The norms ‖α·f(x)‖ of a head, as the dump holds them.
    new_page(browser)
    page = Page(browser, os.path.join(out, "norms", "index.html"))
    go(page, "#matrix")
    view = show_measure(page, "norms", "layer 3")
    page.b.evaluate(f"window.attnviz.show({view}, 5); document.querySelector('#large canvas').scrollIntoView({{block: 'start'}})")
    for i, j in ((0, 0), (7, 2), (15, 15), (12, 6)):
        assert tooltip_value(page, i, j, n, n) == expected_value(dump["layers"][3]["norms"][5][i][j]), (i, j)
    page.check_quiet()
    print(f"model page: {len(main)} whole-model pictures and {len(nested)} layer files linked, rollout (matrix and "
          "strip) and norms tooltips equal the dump")


def table_rows(page):
    return page.b.evaluate("""[...document.querySelectorAll('#tables-view table')].map(t =>
      [...t.querySelectorAll('tr')].map(r => [...r.children].map(c => c.textContent)))""")


def census_pages(browser, attnviz, out):
    census = os.path.join(out, "census.csv")
    run(attnviz, "compare", "--model", MODEL, "--text", PROMPT + " there was a girl. Once upon a time there was",
        "--census", census, "--format", "png,html", "-o", os.path.join(out, "census.png"))
    with open(census, encoding="utf-8") as f:
        csv_rows = [line.rstrip("\n").split(",") for line in f]
    new_page(browser)
    page = Page(browser, os.path.join(out, "census.html"))
    tables = table_rows(page)
    assert tables == [csv_rows], (tables[0][:2] if tables else tables, csv_rows[:2])
    assert len(csv_rows) == 1 + 5 * 8 and csv_rows[0][:2] == ["layer", "head"], csv_rows[0]
    page.check_quiet()

    census2 = os.path.join(out, "census2.csv")
    run(attnviz, "compare", "--model", MODEL, "--text", PROMPT, "--heads", "L0H3,L4H1", "--census", census2,
        "--format", "html", "-o", os.path.join(out, "compare.png"))
    with open(census2, encoding="utf-8") as f:
        csv2 = [line.rstrip("\n").split(",") for line in f]
    new_page(browser)
    page = Page(browser, os.path.join(out, "compare.html"))
    tables = table_rows(page)
    assert len(tables) == 2 and [r[0] for r in tables[0][1:]] == ["L0H3", "L4H1"], tables[0]
    assert tables[1] == csv2, (tables[1][:2], csv2[:2])
    page.check_quiet()
    print(f"census pages: census.html and compare.html hold census.csv's {len(csv_rows) - 1} rows cell for cell")


def compare_masks_page(browser, attnviz, out):
    """compare of two runs that mask different cells (causal and not): each panel of the page keeps
    its own run's mask, so B's cells that A masks show B's weights, and A's say why they are masked."""
    fixture = os.path.join(os.path.dirname(os.path.dirname(HERE)), "tests", "fixtures", "fa.json")
    dumps = []
    for name, flags in (("causal", ["--causal"]), ("full", [])):
        dumps.append(os.path.join(out, f"fa_{name}.json"))
        run(attnviz, "dump", fixture, *flags, "-o", dumps[-1])
    run(attnviz, "compare", *dumps, "--format", "html", "-o", os.path.join(out, "masks.png"))
    with open(dumps[1], encoding="utf-8") as f:
        full = json.load(f)
    n = len(full["query_tokens"])
    new_page(browser)
    page = Page(browser, os.path.join(out, "masks.html"))
    page.b.evaluate("window.attnviz.show(0, 1)")  # B · H0: the run without a causal mask
    for i, j in ((0, 2), (1, 2), (2, 0)):
        assert tooltip_value(page, i, j, n, n) == expected_value(full["weights"][0][i][j]), (i, j)
    page.b.evaluate("window.attnviz.show(0, 0)")  # A · H0: causal
    tip = page.hover_cell(0, 2, n, n)["value"]
    assert tip.startswith("masked: masked by A only (A = fa_causal.json)"), tip
    page.check_quiet()
    print("compare of two masks: each panel keeps its own run's cells")


def main():
    attnviz = os.path.abspath(sys.argv[1])
    with browser_in("attnviz-run-files-") as (browser, out):
        model_page(browser, attnviz, out)
        census_pages(browser, attnviz, out)
        compare_masks_page(browser, attnviz, out)
    print("run_files_test: all checks passed")


if __name__ == "__main__":
    main()
