"""attnviz serve end to end (issue 36), over loopback HTTP with the standard library only:
  - /api/run answers each text with the model dump `attnviz dump --model … -o -` writes, byte for
    byte (texts, token ids, layers, measure, generate), or with Accept: application/octet-stream the
    safetensors `dump -o OUT.safetensors` writes; /run/ID shows that run's report;
    /api/tokenize answers as `attnviz tokenize --json`; / is the page; /api/health says ok;
  - bad requests get their status and the command line's words (400: invalid JSON, no object,
    unknown member, a value of the wrong kind, non-UTF-8 text, bad ids or layers; 413: over
    --max-tokens, a body over 1 MiB; 404: an unknown run), and the next good request still works;
  - load: 200 requests from 8 concurrent clients, a mix of texts: none lost, each answer the
    CLI's dump of its text; the median latency is printed beside the CLI's dump time (measured,
    not asserted: scripts/bench holds the goal);
  - a full queue (--queue 0) answers 503 with Retry-After;
  - SIGTERM during a run: the run is answered whole, then the server exits 0.
Usage: serve_test.py ATTNVIZ REPO"""
import concurrent.futures
import json
import os
import signal
import statistics
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

attnviz, repo = sys.argv[1], sys.argv[2]
model = os.path.join(repo, "data", "stories260k", "stories260K.gguf")
# No proxy for loopback, whatever the environment says.
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks  # noqa: E402
check = Checks("serve_test")


class Server:
    def __init__(self, *flags):
        self.process = subprocess.Popen([attnviz, "serve", "--model", model, "--port", "0", *flags],
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                        encoding="utf-8", errors="strict")
        line = self.process.stdout.readline()
        assert line.startswith("attnviz serve: http://127.0.0.1:"), line + self.process.stderr.read()
        self.url = line.split()[2]
        self.log = []
        threading.Thread(target=lambda: self.log.extend(self.process.stderr), daemon=True).start()

    def request(self, path, body=None, headers=None):
        """(status, headers, body bytes) of GET path, or of POST body (str/bytes/object as JSON)."""
        data = None
        if body is not None:
            data = body if isinstance(body, bytes) else (body if isinstance(body, str) else json.dumps(body)).encode()
        headers = dict({"Content-Type": "application/json"} if data is not None else {}, **(headers or {}))
        request = urllib.request.Request(self.url + path.lstrip("/"), data=data, headers=headers,
                                         method="POST" if data is not None else "GET")
        try:
            with opener.open(request, timeout=60) as answer:
                return answer.status, answer.headers, answer.read()
        except urllib.error.HTTPError as error:
            return error.code, error.headers, error.read()

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        code = self.process.wait(timeout=30)
        rest = self.process.stdout.read()
        return code, rest


def cli(*args):
    done = subprocess.run([attnviz, *args], capture_output=True)
    return done.returncode, done.stdout, done.stderr.decode()


def cli_dump(*args):
    code, out, err = cli("dump", "--model", model, *args, "-o", "-")
    assert code == 0, err
    return out


def error_of(body):
    return json.loads(body)["error"]


TEXTS = ["Lily saw a cat.", "Once upon a time, there was a little girl named Lily.", "The dog ran to the park and played.",
         "Tom had a big red ball", "She was happy"]

server = Server("--threads", "1")
status, _, body = server.request("/api/health")
check("health", status == 200 and json.loads(body)["status"] == "ok" and json.loads(body)["model"] == "stories260K", body)
status, headers, body = server.request("/")
page = body.decode()
check("the page", status == 200 and headers["Content-Type"].startswith("text/html") and "<textarea id=\"text\"" in page
      and "connect-src 'self'" in page and "https://" not in page, page[:300])

dumps = {text: cli_dump("--text", text) for text in TEXTS}
for text in TEXTS:
    status, headers, body = server.request("/api/run", {"text": text})
    check("dump of " + text, status == 200 and body == dumps[text] and "X-Attnviz-Run" not in headers, (status, body[:200]))
    status, headers, body = server.request("/api/run?report=1", {"text": text})
    run_id = headers["X-Attnviz-Run"]
    check("report of " + text + " made", status == 200 and json.loads(body) == {"run": int(run_id), "tokens": len(json.loads(dumps[text])["tokens"])},
          (status, body[:200]))
    status, _, report = server.request("/run/" + run_id)
    first_token = json.loads(dumps[text])["tokens"][1]
    check("report of " + text, status == 200 and b"attnviz.report" in report and json.dumps(first_token, ensure_ascii=False).encode() in report,
          report[:200])
for args, body in [(["--token-ids", "1,317,394"], {"token_ids": [1, 317, 394]}),
                   (["--text", "Lily saw", "--layers", "1-2"], {"text": "Lily saw", "layers": "1-2"}),
                   (["--text", "Lily saw", "--measure", "norms", "--layers", "0"], {"text": "Lily saw", "measure": "norms", "layers": "0"}),
                   (["--text", "Lily saw", "--measure", "alti"], {"text": "Lily saw", "measure": "alti"}),
                   (["--text", "Lily saw", "--generate", "5"], {"text": "Lily saw", "generate": 5})]:
    status, _, answer = server.request("/api/run", body)
    check("dump with " + " ".join(args), status == 200 and answer == cli_dump(*args), (status, answer[:200]))
# Accept: application/octet-stream: the dump as safetensors, as `dump -o OUT.safetensors` writes it.
for args, request in [(["--text", "Lily saw a cat."], {"text": "Lily saw a cat."}),
                      (["--text", "Lily saw", "--measure", "norms", "--layers", "1"], {"text": "Lily saw", "measure": "norms", "layers": "1"})]:
    status, headers, answer = server.request("/api/run", request, {"Accept": "application/octet-stream"})
    target = os.path.join(os.environ.get("TMPDIR", "/tmp"), "serve_test_%d.safetensors" % os.getpid())
    code, _, err = cli("dump", "--model", model, *args, "-o", target)
    with open(target, "rb") as f:
        written = f.read()
    os.remove(target)
    check("safetensors with " + " ".join(args), status == 200 and headers["Content-Type"] == "application/octet-stream"
          and answer == written, (status, len(answer), len(written)))
status, _, body = server.request("/api/tokenize", {"text": "Lily saw a cat."})
code, out, _ = cli("tokenize", "--model", model, "--text", "Lily saw a cat.", "--json")
check("tokenize, byte for byte as tokenize --json", status == 200 and body == out, (body, out))

# Bad requests: status and words; a good request works after each.
_, _, bad_ids = cli("dump", "--model", model, "--token-ids", "1,99999", "-o", "-")
_, _, bad_layers = cli("dump", "--model", model, "--text", "Lily", "--layers", "9", "-o", "-")
bad = [
    (b"{\"text\": ", 400, "request: line 1, column 9: syntax error while parsing value - unexpected end of input"),
    (b"{\"text\": \"a\", \"text\": \"b\"}", 400, "request: cannot read: the key \"text\" appears twice in one object"),
    (b"{\"text\": \"a\"}\x00{\"colour\": 1}", 400, "request: cannot read: holds a NUL byte at byte 13"),
    ([1, 2], 400, "request: expected a JSON object"),
    ({"text": "Lily", "colour": "red"}, 400, "request: unknown member /colour"),
    ({"text": 5}, 400, "text: expected a string"),
    (b"{\"text\": \"Lily \xff\"}", 400, "request: line 1"),
    ({"text": ""}, 400, "--text: is empty"),
    ({"text": "Lily", "token_ids": [1]}, 400, "--text: give text or token_ids, not both"),
    ({}, 400, "--text: give text or token_ids"),
    ({"token_ids": [1, -2]}, 400, "--token-ids: expected token ids from 0, got -2"),
    ({"token_ids": [1, 99999]}, 400, bad_ids.strip().replace("attnviz: error: ", "")),
    ({"text": "Lily", "layers": "9"}, 400, bad_layers.strip().replace("attnviz: error: ", "")),
    ({"text": "Lily", "measure": "heat"}, 400, "--measure: expected weights, norms or alti, got \"heat\""),
    ({"text": "Lily", "generate": -1}, 400, "--generate: expected a whole number from 0 to 4096, got -1"),
    ({"text": "Lily", "generate": 2047}, 413, "--max-tokens: the run has 2049 tokens (2 given, 2047 to generate), over the "
                                              "server's limit of 2048"),
    ({"text": "Lily " * 300000}, 413, "request: the body is too large: at most 1 MiB"),
]
for request, want_status, words in bad:
    status, _, body = server.request("/api/run", request)
    detail = (request if not isinstance(request, str) else request[:80], status, body[:300])
    check("status of %r" % (str(request)[:60],), status == want_status, detail)
    if words is not None:
        check("words of %r" % (str(request)[:60],), error_of(body).startswith(words), (words, body[:300]))
    status, _, body = server.request("/api/run", {"text": TEXTS[0]})
    check("good after %r" % (str(request)[:60],), status == 200 and body == dumps[TEXTS[0]])
# Framing, before the body is read: JSON only, a Content-Length (no chunks, whose size the limit
# does not bound), this server's Host and Origin (no other site through a browser), the right method.
status, _, body = server.request("/api/run", json.dumps({"text": "Lily"}), {"Content-Type": "text/plain"})
check("not JSON: 415", status == 415 and "send the body as Content-Type: application/json" in error_of(body), body)
status, _, body = server.request("/api/run", {"text": "Lily"}, {"Origin": "https://evil.example"})
check("another site's page: 403", status == 403 and error_of(body).startswith("request: Origin https://evil.example"), body)
status, _, body = server.request("/api/health", None, {"Host": "evil.example"})
check("another host name: 403", status == 403 and error_of(body).startswith("request: Host \"evil.example\""), body)
status, _, body = server.request("/api/run", {"text": "Lily"}, {"Origin": server.url.rstrip("/")})
check("the page's own origin", status == 200, body[:100])
status, headers, body = server.request("/api/run")
check("a wrong method: 405", status == 405 and headers["Allow"] == "POST" and error_of(body) == "GET /api/run: not allowed (POST only)", body)
status, _, body = server.request("/api/nothing")
check("an unknown path", status == 404 and error_of(body).startswith("no such path: GET /api/nothing"), body)
status, _, body = server.request("/api/run?report=yes", {"text": "Lily"})
check("an unknown query", status == 400 and "unknown query report=yes" in error_of(body), body)


def raw(request_bytes):
    import socket
    with socket.create_connection(("127.0.0.1", int(server.url.split(":")[2].rstrip("/"))), timeout=10) as sock:
        sock.sendall(request_bytes)
        answer = b""
        while True:
            piece = sock.recv(65536)
            if not piece:
                return answer
            answer += piece


host = server.url.split("/")[2].encode()
started = time.perf_counter()
answer = raw(b"POST /api/run HTTP/1.1\r\nHost: " + host + b"\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
             b"Connection: close\r\n\r\n10\r\n{\"text\": \"Lily\"}\r\n0\r\n\r\n")
check("a chunked body: 411 at once", answer.startswith(b"HTTP/1.1 411") and b"not Transfer-Encoding: chunked" in answer
      and time.perf_counter() - started < 2, answer[:200])
answer = raw(b"POST /api/run HTTP/1.1\r\nHost: " + host + b"\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n")
check("no Content-Length: 411", answer.startswith(b"HTTP/1.1 411") and b"needs a Content-Length" in answer, answer[:200])
answer = raw(b"POST /api/run HTTP/1.1\r\nHost: " + host + b"\r\nContent-Type: application/json\r\nContent-Length: 16\r\n"
             b"Content-Length: 5\r\nConnection: close\r\n\r\n{\"text\": \"Lily\"}")
check("two Content-Lengths: 400", answer.startswith(b"HTTP/1.1 400") and b"one whole number of bytes" in answer, answer[:200])
status, headers, body = server.request("/api/run", {"text": "Lily"}, {"Accept": "application/octet-stream;q=0.1, application/json"})
check("Accept prefers JSON", status == 200 and headers["Content-Type"] == "application/json", headers["Content-Type"])
status, headers, body = server.request("/api/run", {"text": "Lily"}, {"Accept": "APPLICATION/OCTET-STREAM"})
check("Accept without case", status == 200 and headers["Content-Type"] == "application/octet-stream", headers["Content-Type"])
code, out, err = cli("serve", "--model", model, "--port", server.url.split(":")[2].rstrip("/"))
check("a second server on the port: refused", code == 1 and "cannot listen on 127.0.0.1:" in err, (code, err))
status, _, body = server.request("/run/999999")
check("unknown run", status == 404 and "run 999999 is not kept" in error_of(body), body)

# Load: 8 clients, 200 requests.
cli_seconds = []
for text in TEXTS:
    started = time.perf_counter()
    cli_dump("--text", text, "--threads", "1")
    cli_seconds.append(time.perf_counter() - started)


def one(i):
    text = TEXTS[i % len(TEXTS)]
    started = time.perf_counter()
    status, _, body = server.request("/api/run", {"text": text})
    return status, body == dumps[text], time.perf_counter() - started


with concurrent.futures.ThreadPoolExecutor(8) as pool:
    results = list(pool.map(one, range(200)))
check("load: every answer 200", all(status == 200 for status, _, _ in results), [r[0] for r in results])
check("load: every answer the CLI's dump", all(same for _, same, _ in results))
median = statistics.median(seconds for _, _, seconds in results)
print("load: 200 requests from 8 clients, median latency %.1f ms; the CLI's dump, process and all: median %.1f ms"
      % (1000 * median, 1000 * statistics.median(cli_seconds)))

code, rest = server.stop()
check("SIGTERM when idle: exit 0", code == 0 and "attnviz serve: stopped" in rest, (code, rest))
check("a line per request", any(" POST /api/run 200 " in line for line in server.log), server.log[:3])

# A full queue: one run at a time and none waiting.
busy = Server("--queue", "0", "--threads", "1")
with concurrent.futures.ThreadPoolExecutor(6) as pool:
    answers = list(pool.map(lambda _: busy.request("/api/run", {"text": "Lily", "generate": 800}), range(6)))
statuses = [status for status, _, _ in answers]
check("a full queue answers 503", 503 in statuses and 200 in statuses and set(statuses) <= {200, 503}, statuses)
check("503 says when to retry", all(headers["Retry-After"] == "1" for status, headers, _ in answers if status == 503))

# SIGTERM during a run: answered whole, then exit 0.
holder = {}
thread = threading.Thread(target=lambda: holder.update(answer=busy.request("/api/run", {"text": "Lily", "generate": 800})))
thread.start()
for _ in range(200):
    if any("POST /api/run" in line for line in busy.log[len(answers):]) or busy.request("/api/health")[0] != 200:
        break
    if json.loads(busy.request("/api/health")[2])["waiting"] > 0:
        break
    time.sleep(0.005)
code, rest = busy.stop()
thread.join()
status, _, body = holder["answer"]
check("SIGTERM during a run: the run is answered", status == 200 and body == cli_dump("--text", "Lily", "--generate", "800"),
      (status, body[:100]))
check("SIGTERM during a run: exit 0", code == 0, code)

check.finish()
