"""The HTML report's switch between measures (issue 20) in headless chromium: a model page made
with --measure norms holds each layer twice (norms, then the weights); the page shows one measure
at a time, and the layer selector, the arrow keys and the layer × head overview keep to it.
Usage: measure_switch_test.py ATTNVIZ"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from cdp import Browser  # noqa: E402
from page_helpers import Page  # noqa: E402

MODEL = os.path.join(ROOT, "data", "stories260k", "stories260K.gguf")


def shown(page):
    return page.b.evaluate("""(() => ({
        title: document.getElementById('figure-title').textContent,
        layers: [...document.getElementById('view-select').options].map(o => o.textContent),
        overview: document.querySelectorAll('#overview tr:has(td)').length,  // rows of layers (the header row has none)
        measures: [...document.getElementById('measure-select').options].map(o => o.value),
        view: window.attnviz.state().view}))()""")


def main():
    attnviz = os.path.abspath(sys.argv[1])
    checks = 0
    with tempfile.TemporaryDirectory(prefix="attnviz-measures-") as out:
        subprocess.run([attnviz, "heatmaps", "--model", MODEL, "--text", "Once upon a time", "--measure", "norms",
                        "--format", "html", "-o", out], check=True, stdout=subprocess.DEVNULL)
        browser = Browser()
        try:
            page = Page(browser, os.path.join(out, "index.html"))
            first = shown(page)
            assert first["measures"] == ["norms", "weights"], first
            assert "value-weighted norms" in first["title"] and first["view"] == 0, first
            assert first["layers"] == ["layer 0", "layer 1", "layer 2", "layer 3", "layer 4"], first
            assert first["overview"] == 5, first
            checks += 1
            page.key("ArrowDown", 40)
            down = shown(page)
            assert "layer 1" in down["title"] and "value-weighted norms" in down["title"], down
            checks += 1
            page.b.evaluate("""(() => { const s = document.getElementById('measure-select');
                s.value = 'weights'; s.dispatchEvent(new Event('change')); })()""")
            weights = shown(page)
            assert "layer 1" in weights["title"] and "self-attention weights" in weights["title"], weights
            assert weights["layers"] == first["layers"] and weights["overview"] == 5, weights
            checks += 1
        finally:
            browser.close()
    print("measure_switch_test: %d passed, 0 failed" % checks)


if __name__ == "__main__":
    main()
