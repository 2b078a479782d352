#!/usr/bin/python3
"""Black-box checks of inputs that are pipes (`<(…)`, /dev/stdin): each is read once, so the
fast path's fallback and `compare`'s look at a file's kind must not read it again (found by an
attack on issue 7's work: a second read found the pipe empty and reported "the file is empty").
Usage: pipes_test.py PATH/TO/attnviz FIXTURES_DIR
"""
import json
import os
import subprocess
import sys
import tempfile

ATTNVIZ, FIXTURES = sys.argv[1], sys.argv[2]
results = []


def check(name, ok, detail=""):
    results.append(ok)
    print(("PASS " if ok else "FAIL ") + name + (": " + detail if detail else ""))


def bash(command, stdin=None):
    return subprocess.run(["bash", "-c", command], input=stdin, capture_output=True, text=True, timeout=60)


fa = os.path.join(FIXTURES, "fa.json")
with tempfile.TemporaryDirectory() as tmp:
    bad_schema = os.path.join(tmp, "bad_schema.json")
    with open(fa) as f:
        document = json.load(f)
    document["tokens"] = document["tokens"][:2]  # 2 tokens, 3 embedding rows
    with open(bad_schema, "w") as f:
        json.dump(document, f)

    proc = subprocess.run(f'cat "{bad_schema}" | "{ATTNVIZ}" dump /dev/stdin -o "{tmp}/x.json"', shell=True,
                          capture_output=True, text=True, timeout=60)
    check("a schema error through a pipe is that error, not 'the file is empty'",
          proc.returncode == 1 and "/embeddings: 3 rows for 2 tokens" in proc.stderr
          and not os.path.exists(f"{tmp}/x.json"), proc.stderr.strip())

    proc = bash(f'"{ATTNVIZ}" dump <(head -c 40 "{fa}") -o "{tmp}/x.json"')
    check("a truncated file through a pipe is a parse error with its position",
          proc.returncode == 1 and "line" in proc.stderr and "column" in proc.stderr
          and "empty" not in proc.stderr, proc.stderr.strip())

    proc = bash(f'"{ATTNVIZ}" compare <(cat "{fa}") --heads 0,1 -o "{tmp}/c.png"')
    check("compare of one run from a pipe", proc.returncode == 0 and os.path.getsize(f"{tmp}/c.png") > 0,
          proc.stderr.strip())

    proc = bash(f'"{ATTNVIZ}" dump "{fa}" -o "{tmp}/d.json"')
    proc = bash(f'"{ATTNVIZ}" compare <(cat "{tmp}/d.json") <(cat "{tmp}/d.json") -o "{tmp}/c2.png"')
    check("compare of two dumps from pipes", proc.returncode == 0 and os.path.getsize(f"{tmp}/c2.png") > 0,
          proc.stderr.strip())

    proc = subprocess.run(f'cat "{tmp}/d.json" | "{ATTNVIZ}" render /dev/stdin -o "{tmp}/r"', shell=True,
                          capture_output=True, text=True, timeout=60)
    check("render of a dump from a pipe", proc.returncode == 0 and os.path.exists(f"{tmp}/r/grid.png"),
          proc.stderr.strip())

passed = sum(results)
print("%d passed, %d failed" % (passed, len(results) - passed))
sys.exit(0 if passed == len(results) else 1)
