#!/usr/bin/python3
"""Black-box checks of what `tokenize` prints to a terminal and to a pipe (issue 24, section 4:
`attnviz tokenize … | jq .` failed on a JSON line followed by a table). On a terminal (a pty
here): a table with a header row, or the JSON document with --json; in a pipe: the JSON
document alone.
Usage: terminal_test.py PATH/TO/attnviz PATH/TO/stories260K.gguf
"""
import json
import os
import pty
import subprocess
import sys

ATTNVIZ, MODEL = sys.argv[1], sys.argv[2]
results = []


def check(name, ok, detail=""):
    results.append(ok)
    print(("PASS " if ok else "FAIL ") + name + (": " + detail if detail else ""))


def on_terminal(args):
    """Runs attnviz with stdout on a pty; returns (exit code, what it printed there)."""
    controller, terminal = pty.openpty()
    proc = subprocess.Popen([ATTNVIZ] + args, stdout=terminal, stderr=subprocess.PIPE)
    os.close(terminal)
    printed = b""
    while True:
        try:
            chunk = os.read(controller, 4096)
        except OSError:  # EIO: the other side is closed
            break
        if not chunk:
            break
        printed += chunk
    os.close(controller)
    proc.wait(timeout=60)
    return proc.returncode, printed.decode().replace("\r\n", "\n")


args = ["tokenize", "--model", MODEL, "--text", "Once upon"]
code, printed = on_terminal(args)
check("a terminal gets a header row, then one line per token",
      code == 0 and printed == 'index\tid\tpiece\ttext\tkind\n0\t1\t"<s>"\t"<s>"\tspecial\n'
                               '1\t403\t"\u2581Once"\t" Once"\t\n2\t407\t"\u2581upon"\t" upon"\t\n', repr(printed))

code, printed = on_terminal(args + ["--json"])
check("--json gives the JSON document on a terminal too",
      code == 0 and json.loads(printed)["token_ids"] == [1, 403, 407], repr(printed))

proc = subprocess.run([ATTNVIZ] + args, capture_output=True, text=True, timeout=60)
try:
    document = json.loads(proc.stdout)  # the whole of stdout: nothing may follow the document
except ValueError as e:
    document = {"error": str(e)}
check("a pipe gets one JSON document and nothing else",
      proc.returncode == 0 and document.get("token_texts") == ["<s>", " Once", " upon"], proc.stdout)

passed = sum(results)
print("%d passed, %d failed" % (passed, len(results) - passed))
sys.exit(0 if passed == len(results) else 1)
