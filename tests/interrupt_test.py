#!/usr/bin/python3
"""SIGINT/SIGTERM in the middle of a run leave no partial file (issue #6).
Usage: interrupt_test.py PATH/TO/attnviz

Two jobs are timed with --profile, then interrupted at moments spread around their write
phase, where temporaries exist: a 32-head `heatmaps` (33 PNGs) and a 16-head `dump` of 900
tokens (~160 MB of JSON, so its write phase is long enough to hit). After each run the output
may hold nothing or finished files, but never a temporary (".tmp-"), a truncated PNG or a
truncated JSON. Prints a closing 'N passed, M failed'.
"""
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time

ATTNVIZ = sys.argv[1]
results = []


def make_case(path, heads, tokens, d_model, seed):
    rng = random.Random(seed)
    rows = lambda r, c: [[round(rng.gauss(0, 0.3), 5) for _ in range(c)] for _ in range(r)]
    case = {"tokens": ["tok%d" % i for i in range(tokens)], "embeddings": rows(tokens, d_model),
            "num_heads": heads, "W_Q": rows(d_model, d_model), "W_K": rows(d_model, d_model),
            "W_V": rows(d_model, d_model)}
    with open(path, "w") as f:
        json.dump(case, f)


def complete(path):
    with open(path, "rb") as f:
        data = f.read()
    if path.endswith(".png"):
        return data.startswith(b"\x89PNG\r\n\x1a\n") and data.endswith(b"IEND\xaeB`\x82")
    try:
        json.loads(data)
        return True
    except ValueError:
        return False


def problems_in(folder):
    problems = []
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        if ".tmp-" in name:
            problems.append("temporary left: " + name)
        elif os.path.isfile(path) and not complete(path):
            problems.append("truncated: " + name)
        elif os.path.isdir(path):
            problems += problems_in(path)
    return problems


def series(name, args, tmp, count):
    """Times `args` (which write into tmp/<run>/), then interrupts `count` runs around the write."""
    for attempt in range(2):  # the second run is warm, like the runs below
        run_dir = os.path.join(tmp, "%s_full%d" % (name, attempt))
        os.mkdir(run_dir)
        start = time.monotonic()
        timed = subprocess.run([ATTNVIZ] + args(run_dir) + ["--profile"], check=True, capture_output=True,
                               text=True)
        full = time.monotonic() - start
    phases = {line.split()[1]: float(line.split()[2]) for line in timed.stderr.splitlines()
              if line.startswith("profile: ")}
    write = max(phases.get("write", 0.0), 0.002)
    write_starts = full - write
    moments = [write_starts * 0.5] + [write_starts - 0.25 * write + 1.5 * write * k / (count - 2)
                                      for k in range(count - 1)]
    interrupted = 0
    for k, moment in enumerate(moments):
        run_dir = os.path.join(tmp, "%s_run%d" % (name, k))
        os.mkdir(run_dir)
        proc = subprocess.Popen([ATTNVIZ] + args(run_dir), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(max(0.0, moment))
        sig = signal.SIGINT if k % 2 == 0 else signal.SIGTERM
        proc.send_signal(sig)
        code = proc.wait()
        interrupted += code == -sig
        problems = problems_in(run_dir)
        ok = code in (0, -sig) and not problems
        results.append(ok)
        print("%s %s %2d/%d (%s at %.0f ms): exit %d, %s" % (
            "PASS" if ok else "FAIL", name, k + 1, count, sig.name, 1000 * moment, code,
            "; ".join(problems) if problems else "left: " + ", ".join(sorted(os.listdir(run_dir))[:3])))
    results.append(interrupted > 0)
    print("%s %s: %d of %d runs interrupted (full run %.0f ms, write phase %.0f ms)" % (
        "PASS" if interrupted else "FAIL", name, interrupted, count, 1000 * full, 1000 * write))


with tempfile.TemporaryDirectory() as tmp:
    heads_case = os.path.join(tmp, "heads.json")
    make_case(heads_case, heads=32, tokens=96, d_model=64, seed=7)
    series("heatmaps", lambda d: ["heatmaps", heads_case, "-o", os.path.join(d, "pictures")], tmp, 10)
    dump_case = os.path.join(tmp, "dump.json")
    make_case(dump_case, heads=16, tokens=900, d_model=32, seed=8)
    series("dump", lambda d: ["dump", dump_case, "-o", os.path.join(d, "weights.json")], tmp, 10)

passed = sum(results)
print("%d passed, %d failed" % (passed, len(results) - passed))
sys.exit(0 if passed == len(results) else 1)
