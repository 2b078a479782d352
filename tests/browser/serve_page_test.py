"""attnviz serve's page in a real browser (issue 36): headless chromium opens the server's /,
types two texts into it and runs them. For each, the report the page shows (from /run/ID) holds
the new text's tokens and, for every layer and head, the weights of `attnviz dump` of the same
text as float32, bit for bit; the address names the run (#run=ID) and reloading it shows that run
again. A bad request shows the server's words. The page requests nothing but its own server and
throws nothing.
Usage: serve_page_test.py ATTNVIZ"""
import base64
import json
import os
import signal
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from cdp import Browser  # noqa: E402
from page_helpers import MODEL, screenshot  # noqa: E402

TEXTS = ["Lily saw a cat.", "Once upon a time there was a big dog"]


def wait_until(browser, expression, what, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = browser.evaluate(expression)
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError("timed out waiting for " + what)


def frame_data(browser, run):
    """The page JSON of run `run`'s report in the frame, once it has loaded."""
    wait_until(browser, "(() => { const d = document.getElementById('report').contentDocument;"
                        f" return d && d.location.pathname === '/run/{run}' && d.readyState === 'complete'"
                        " && d.body && d.body.dataset.ready !== undefined; })()", f"run {run}'s report in the frame")
    return json.loads(browser.evaluate("document.getElementById('report').contentDocument"
                                       ".querySelector('script[type=\"application/json\"]').textContent"))


def float32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def check_against_dump(data, dump):
    layers = [view for view in data["views"] if view["name"].startswith("layer ") and "measure" not in view]
    assert len(layers) == len(dump["layers"]), (len(layers), len(dump["layers"]))
    for view, layer in zip(layers, dump["layers"]):
        assert view["queryTokens"] == layer["query_tokens"], (view["queryTokens"], layer["query_tokens"])
        raw = base64.b64decode(view["values"])
        values = struct.unpack("<%df" % (len(raw) // 4), raw)
        # The page keeps the cells a query may attend (the causal mask's), in order.
        allowed = base64.b64decode(view["allowed"]) if view["allowed"] else None
        want = [float32(w) for head in layer["weights"] for cell, w in enumerate(v for row in head for v in row)
                if allowed is None or allowed[cell]]
        assert len(values) == len(want), (len(values), len(want))
        assert all(a == b for a, b in zip(values, want)), view["name"]
    return len(layers)


def main():
    attnviz = sys.argv[1]
    signal.alarm(240)  # a hang fails the test rather than CTest's timeout
    server = subprocess.Popen([attnviz, "serve", "--model", MODEL, "--port", "0", "--threads", "1"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    checks = 0
    browser = None
    try:
        url = server.stdout.readline().split()[2]
        browser = Browser()
        browser.send("Page.enable")
        browser.send("Runtime.enable")
        browser.send("Network.enable")
        browser.events.clear()
        browser.send("Page.navigate", {"url": url})
        browser.wait_for("Page.loadEventFired")
        for n, text in enumerate(TEXTS, start=1):
            browser.evaluate(f"document.getElementById('text').value = {json.dumps(text)}")
            browser.evaluate("document.getElementById('go').click()")
            status = wait_until(browser, "(() => { const s = document.getElementById('status').textContent;"
                                         " return s.startsWith('run ') ? s : ''; })()", "run " + str(n))
            assert status.startswith(f"run {n}: "), status
            assert browser.evaluate("location.hash") == f"#run={n}", browser.evaluate("location.hash")
            dump = json.loads(subprocess.run([attnviz, "dump", "--model", MODEL, "--text", text, "-o", "-"],
                                             capture_output=True, check=True).stdout)
            layers = check_against_dump(frame_data(browser, n), dump)
            checks += 1
            print(f"{text!r}: {len(dump['tokens'])} tokens, {layers} layers equal to the dump's float32 weights")
            screenshot(type("Shown", (), {"b": browser})(), f"serve_page_{n}.png")
        # The first run's address shows it again, in a page loaded afresh.
        browser.send("Page.navigate", {"url": "about:blank"})
        browser.wait_for("Page.loadEventFired")
        browser.send("Page.navigate", {"url": url + "#run=1"})
        browser.wait_for("Page.loadEventFired")
        wait_until(browser, "document.getElementById('report').src.endsWith('/run/1')", "the frame of run 1")
        first = json.loads(subprocess.run([attnviz, "dump", "--model", MODEL, "--text", TEXTS[0], "-o", "-"],
                                          capture_output=True, check=True).stdout)
        check_against_dump(frame_data(browser, 1), first)
        checks += 1
        # A bad request: the server's words on the page.
        browser.evaluate("document.getElementById('text').value = 'Lily'")
        browser.evaluate("document.getElementById('layers').value = '9'")
        browser.evaluate("document.getElementById('go').click()")
        said = wait_until(browser, "(() => { const s = document.getElementById('status');"
                                   " return s.className === 'error' ? s.textContent : ''; })()", "the error")
        assert said == "400: --layers: layer 9 does not exist (this model has layers 0-4)", said
        checks += 1
        for event in browser.events:
            method, params = event.get("method"), event.get("params", {})
            if method == "Network.requestWillBeSent":
                assert params["request"]["url"].startswith(url), params["request"]["url"]
            assert method != "Runtime.exceptionThrown", params
            if method == "Runtime.consoleAPICalled":
                assert params["type"] not in ("error", "assert"), params
        checks += 1
    finally:
        if browser:
            browser.close()
        server.send_signal(signal.SIGTERM)
        code = server.wait(timeout=30)
    assert code == 0, code
    print(f"serve_page_test: {checks} passed, 0 failed")


if __name__ == "__main__":
    main()
