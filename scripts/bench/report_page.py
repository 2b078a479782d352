"""The HTML report at 512 tokens (issue 23): page size and time until every view is drawn in
headless chromium (the head view with every line at rest), for stories260K's 5 layers x 8 heads x
512 tokens (every layer in one page), and how long a hover takes to draw a query's lines in the
head view. The machine is shared: the main thread's CPU time (CDP Performance.getMetrics
TaskDuration) and the load average are printed beside the wall times. Prints one Markdown table
row; docs/pictures.md and scripts/bench/RESULTS.md quote it.
Usage: report_page.py ATTNVIZ"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "browser"))
from cdp import Browser  # noqa: E402
from page_helpers import Page  # noqa: E402

MODEL = os.path.join(ROOT, "data", "stories260k", "stories260K.gguf")
STORY = ("Once upon a time, there was a little girl named Lily. She loved to play in the park with her dog. "
         "One day, she saw a big red ball. ") * 13
TOKENS = 512
RUNS = 5


def main():
    attnviz = os.path.abspath(sys.argv[1])
    ids = json.loads(subprocess.run([attnviz, "tokenize", "--model", MODEL, "--text", STORY, "--json"],
                                    capture_output=True, text=True, check=True).stdout)["token_ids"][:TOKENS]
    with tempfile.TemporaryDirectory(prefix="attnviz-page-") as out:
        subprocess.run([attnviz, "heatmaps", "--model", MODEL, "--token-ids", ",".join(map(str, ids)),
                        "--format", "html", "-o", out], check=True, capture_output=True)
        page_path = os.path.join(out, "index.html")
        size = os.path.getsize(page_path)
        ready, load, hover, cpu, rest = [], [], [], [], []
        for _ in range(RUNS):
            browser = Browser()
            try:
                browser.send("Performance.enable")
                page = Page(browser, page_path)
                ready.append(float(browser.evaluate("document.body.dataset.viewsReady")))
                load.append(page.load_s * 1000)
                metrics = {m["name"]: m["value"] for m in browser.send("Performance.getMetrics")["metrics"]}
                cpu.append(metrics["TaskDuration"] * 1000)
                rest.append(browser.evaluate("[document.getElementById('head-rest').dataset.lines, "
                                             "document.getElementById('head-rest-note').textContent]"))
                started = time.time()
                browser.evaluate("""(() => { const t = document.querySelector('#hq .tok[data-query="511"]');
                  t.dispatchEvent(new MouseEvent('mouseenter')); return window.attnvizViews.lines(); })()""")
                hover.append((time.time() - started) * 1000)
            finally:
                browser.close()
        print(f"| stories260K, 5 layers x 8 heads x {len(ids)} tokens, all layers in one page | {size / 1e6:.1f} MB "
              f"| every view drawn after {statistics.median(ready):.0f} ms (load event {statistics.median(load):.0f} ms; "
              f"main-thread CPU {statistics.median(cpu):.0f} ms) "
              f"| head-view hover of the last query (8 x 512 lines) {statistics.median(hover):.0f} ms |")
        print(f"median of {RUNS} runs; head view at rest: {rest[0][0]} lines ({rest[0][1]}); "
              f"load average {' '.join('%.2f' % x for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
