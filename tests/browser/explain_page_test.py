"""explain.html in headless chromium (issue 34 §3): the score bars are signed and start at 0, as
explain.png draws them. For every query of a head of the bundled stories260K model (a click on
each query token), against the run's own explain.json for the query it names:
  - each unmasked key's bar lies right of the axis for a score >= 0 and left of it for a score < 0;
  - its length is round(50 * |score| / max |score|) pixels (the row's largest score ends 50 px
    from the axis, as the PNG's kBarPx / 2);
  - the bars' ends, read left to right, are in the order of the signed scores, so the best of
    many negative scores has the shortest bar (it had none when bars were drawn by |score|);
  - masked keys have no bar; no console error, no request.
Usage: explain_page_test.py ATTNVIZ"""
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from page_helpers import MODEL, browser_in, run  # noqa: E402

HEAD = "L1H3"


def open_page(browser, path):
    b = browser
    b.send("Page.enable")
    b.send("Runtime.enable")
    b.send("Network.enable")
    b.send("Network.emulateNetworkConditions",
           {"offline": True, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1})
    b.events.clear()
    b.send("Page.navigate", {"url": "file://" + path})
    b.wait_for("Page.loadEventFired")


def bars(browser):
    """Per key row: null when masked, else [score, axis x, bar left, bar width] in CSS pixels."""
    return browser.evaluate("""[...document.querySelectorAll('#view tr')].slice(2, -1).map(tr => {
      const s = tr.querySelector('.score');
      if (!s) return null;
      const a = s.querySelector('.axis').getBoundingClientRect(), b = s.querySelector('.bar').getBoundingClientRect();
      return [Number(s.dataset.score), a.left, b.left, b.width]; })""")


def check_query(browser, reference, query):
    rows = bars(browser)
    masked = reference["masked"]
    scores = reference["scores_raw"]
    assert len(rows) == len(scores), (len(rows), len(scores))
    limit = max(abs(s) for s, m in zip(scores, masked) if not m)
    ends = []
    for j, row in enumerate(rows):
        if masked[j]:
            assert row is None, (query, j, row)
            continue
        score, axis, left, width = row
        assert abs(score - scores[j]) <= 1e-6 * max(1.0, abs(scores[j])), (query, j, score, scores[j])
        want = round(50 * abs(scores[j]) / limit)
        assert abs(width - want) <= 0.5, (query, j, width, want)
        if scores[j] >= 0:
            assert abs(left - (axis + 1)) <= 0.5, (query, j, "a score >= 0 starts right of the axis", left, axis)
            ends.append((scores[j], left + width))
        else:
            assert abs(left + width - axis) <= 0.5, (query, j, "a score < 0 ends at the axis", left, width, axis)
            ends.append((scores[j], left))
    ends.sort()
    assert all(a[1] <= b[1] + 0.5 for a, b in zip(ends, ends[1:])), (query, "bar ends out of the scores' order", ends)
    return sum(1 for s, _ in ends if s < 0)


def check_quiet(browser, url):
    for event in browser.events:
        method, params = event.get("method"), event.get("params", {})
        if method == "Network.requestWillBeSent":
            assert params["request"]["url"] == url, f"the page requested {params['request']['url']}"
        assert method != "Runtime.exceptionThrown", f"an exception: {params}"
        if method == "Runtime.consoleAPICalled":
            assert params["type"] not in ("error", "assert"), f"console: {params}"


def main():
    attnviz = os.path.abspath(sys.argv[1])
    with browser_in("attnviz-explain-page-") as (browser, out):
        folder = os.path.join(out, "explain")
        text = "Once upon a time, there was a little girl named Lily"
        run(attnviz, "explain", "--model", MODEL, "--text", text, "--head", HEAD, "--format", "png,html", "-o", folder)
        path = os.path.join(folder, "explain.html")
        open_page(browser, path)
        n = browser.evaluate("document.querySelectorAll('#queries button').length")
        negative = checked = 0
        for query in range(n):
            if browser.evaluate(f"document.querySelectorAll('#queries button')[{query}].disabled"):
                continue
            browser.evaluate(f"document.querySelectorAll('#queries button')[{query}].click()")
            time.sleep(0.01)
            # The reference for this query: explain.json of a run that names it.
            ref_folder = os.path.join(out, f"q{query}")
            run(attnviz, "explain", "--model", MODEL, "--text", text, "--head", HEAD, "--query", str(query), "-o", ref_folder)
            with open(os.path.join(ref_folder, "explain.json"), encoding="utf-8") as f:
                reference = json.load(f)
            negative += check_query(browser, reference, query)
            checked += 1
        assert checked == n and n > 10, (checked, n)
        assert negative > 0, "no negative score among the queries: the test shows nothing about signed bars"
        check_quiet(browser, "file://" + path)
    print(f"explain page: {checked} queries, {negative} negative scores drawn left of 0: 1 passed, 0 failed")


if __name__ == "__main__":
    main()
