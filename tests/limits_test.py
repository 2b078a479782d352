#!/usr/bin/python3
"""Black-box checks of attnviz's size and memory guards (issue #6; cases BH-22 and BH-23 of the
team's attention cases). Usage: limits_test.py PATH/TO/attnviz

Each check runs the real binary on generated input in a temporary folder and asserts the exit
code, the message, the time, the peak memory and that nothing was written on refusal. Prints
one line per check and a closing 'N passed, M failed'.
"""
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time

ATTNVIZ = sys.argv[1]
results = []


def check(name, ok, detail=""):
    results.append(ok)
    print(("PASS " if ok else "FAIL ") + name + (": " + detail if detail else ""))


def run(args, timeout=120):
    start = time.monotonic()
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    proc = subprocess.run([ATTNVIZ] + args, capture_output=True, text=True, timeout=timeout)
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return proc, time.monotonic() - start, max(peak_kib, before) / 1024.0


def peak_rss_mib(args, timeout=120):
    """Runs attnviz in a fresh Python process and returns (exit code, its peak RSS in MiB):
    RUSAGE_CHILDREN of this process would report the largest child so far instead."""
    probe = ("import resource, subprocess, sys; code = subprocess.run(sys.argv[1:], capture_output=True).returncode; "
             "print(code, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    out = subprocess.run([sys.executable, "-c", probe, ATTNVIZ] + args, capture_output=True, text=True,
                         timeout=timeout).stdout.split()
    return int(out[0]), int(out[1]) / 1024.0


def identity(d):
    return [[1 if i == j else 0 for j in range(d)] for i in range(d)]


def wave_sentence(n, heads):
    """BH-22/23 fixture: X[i] = [cos(i/7), sin(i/7), cos(i/13), sin(i/13)], W = I."""
    x = [[round(math.cos(i / 7), 6), round(math.sin(i / 7), 6), round(math.cos(i / 13), 6),
          round(math.sin(i / 13), 6)] for i in range(n)]
    return {"tokens": ["t%d" % i for i in range(n)], "embeddings": x, "num_heads": heads,
            "W_Q": identity(4), "W_K": identity(4), "W_V": identity(4)}


def png_size(path):
    """(width, height) from a PNG's IHDR chunk."""
    with open(path, "rb") as f:
        header = f.read(24)
    return int.from_bytes(header[16:20], "big"), int.from_bytes(header[20:24], "big")


def write(folder, name, obj):
    path = os.path.join(folder, name)
    with open(path, "w") as f:
        json.dump(obj, f)
    return path


with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, "out")
    os.mkdir(out)

    # BH-23: 20 000 tokens x 2 heads = 3.2 GB of float32 weights and ~9.6 GB of dump text.
    big = write(tmp, "bh23_20000.json", wave_sentence(20000, 2))
    proc, seconds, _ = run(["dump", big, "-o", os.path.join(out, "bh23.json")])
    check("BH-23: 20000-token dump is refused with the estimate and the option, within seconds",
          proc.returncode == 4 and "--max-memory" in proc.stderr and "MiB" in proc.stderr
          and seconds < 10 and not os.listdir(out),
          "exit %d in %.2f s: %s" % (proc.returncode, seconds, proc.stderr.strip()))
    proc, seconds, _ = run(["dump", big, "--max-memory", "2048", "-o", os.path.join(out, "bh23.json")])
    check("BH-23: --max-memory lowers the budget and the message names it",
          proc.returncode == 4 and "over the limit of 2048 MiB (raise it with --max-memory MIB)" in proc.stderr,
          proc.stderr.strip())

    # The control: 500 tokens on the same settings succeed quickly.
    small = write(tmp, "bh23_500.json", wave_sentence(500, 2))
    proc, seconds, _ = run(["dump", small, "-o", os.path.join(out, "bh23_500.json")])
    check("BH-23 control: 500 tokens succeed", proc.returncode == 0 and seconds < 10,
          "exit %d in %.2f s" % (proc.returncode, seconds))
    os.remove(os.path.join(out, "bh23_500.json"))

    # BH-22: 600 tokens fit the default 4096 px with thinned labels, said on stderr.
    n600 = write(tmp, "bh22_600.json", wave_sentence(600, 1))
    proc, seconds, _ = run(["heatmaps", n600, "-o", os.path.join(out, "bh22_600")])
    width, height = png_size(os.path.join(out, "bh22_600", "grid.png"))
    check("BH-22: 600 tokens give an image within 4096 px per side, labels thinned and said so",
          proc.returncode == 0 and width <= 4096 and height <= 4096 and "label" in proc.stderr,
          "%d x %d px; stderr: %s" % (width, height, proc.stderr.strip()[:200]))

    # BH-22: 5000 tokens -> bounded image, peak RSS <= 1 GiB.
    n5000 = write(tmp, "bh22_5000.json", wave_sentence(5000, 1))
    proc, seconds, peak_mib = run(["heatmaps", n5000, "-o", os.path.join(out, "bh22_5000")])
    width, height = png_size(os.path.join(out, "bh22_5000", "grid.png"))
    check("BH-22: 5000 tokens give a bounded image with peak RSS <= 1 GiB",
          proc.returncode == 0 and width <= 16384 and height <= 16384 and peak_mib <= 1024,
          "%d x %d px, peak RSS %.0f MiB, %.2f s" % (width, height, peak_mib, seconds))

    # The pictures share the weights: 4 heads x 2800^2 float32 weights are 120 MiB; a copy per
    # picture (grid + one per head) once tripled the peak, so the largest input the memory guard
    # admitted was killed by the OOM killer instead of fitting.
    n2800 = write(tmp, "shared_2800.json", wave_sentence(2800, 4))
    weights_mib = 4 * 2800 * 2800 * 4 / 2**20
    code, peak_mib = peak_rss_mib(["heatmaps", n2800, "-o", os.path.join(out, "shared_2800")])
    check("4 heads x 2800 tokens: peak RSS below 1.5x the weights + 200 MiB (no copy per picture)",
          code == 0 and peak_mib <= 1.5 * weights_mib + 200,
          "exit %d, peak RSS %.0f MiB for %.0f MiB of weights" % (code, peak_mib, weights_mib))

    # Pictures are drawn two at a time beside the weights, within what --max-memory leaves
    # (attack finding: each picture was checked alone against the whole budget, and a run
    # under --max-memory 700 peaked at 1707 MiB).
    n2000 = write(tmp, "pictures_2000.json", wave_sentence(2000, 4))
    big_pictures = ["heatmaps", n2000, "--max-size", "8192", "--threads", "2"]
    code, peak_mib = peak_rss_mib(big_pictures + ["--max-memory", "250", "-o", os.path.join(out, "never")])
    check("8192 px pictures beside the weights under --max-memory 250: refused, nothing written",
          code == 4 and not os.path.exists(os.path.join(out, "never")), "exit %d" % code)
    proc, _, _ = run(big_pictures + ["--max-memory", "250", "-o", os.path.join(out, "never")])
    check("... and the message says the pictures share what the budget leaves",
          "pictures drawn at once" in proc.stderr and "MiB of weights" in proc.stderr, proc.stderr.strip()[-300:])
    code, peak_mib = peak_rss_mib(big_pictures + ["--max-memory", "400", "-o", os.path.join(out, "pictures_2000")])
    check("the same under --max-memory 400: drawn, peak RSS within the budget",
          code == 0 and peak_mib <= 400, "exit %d, peak RSS %.0f MiB" % (code, peak_mib))

    # compare keeps its pictures to stack them into one image: they share half of what the
    # budget leaves beside the runs (before, each was checked alone against the whole budget).
    compare_args = ["compare", n2000, "--heads", "0,1,2,3", "--max-size", "8192"]
    proc, _, _ = run(compare_args + ["--max-memory", "200", "-o", os.path.join(out, "never.png")])
    check("compare of 4 heads x 2000 tokens under --max-memory 200: refused, saying why, nothing written",
          proc.returncode == 4 and "stack them into one image" in proc.stderr
          and not os.path.exists(os.path.join(out, "never.png")), proc.stderr.strip()[-300:])
    code, peak_mib = peak_rss_mib(compare_args + ["--max-memory", "400", "-o", os.path.join(out, "compare_2000.png")])
    check("the same under --max-memory 400: drawn, peak RSS within the budget",
          code == 0 and peak_mib <= 400, "exit %d, peak RSS %.0f MiB" % (code, peak_mib))

    # A 2 GB file (sparse): refused before reading under a small budget, and a clear parse error
    # (not a crash or a hang) under the default one.
    huge = os.path.join(tmp, "huge.json")
    with open(huge, "wb") as f:
        f.truncate(2 * 1024 ** 3)
    proc, seconds, _ = run(["dump", huge, "--max-memory", "1024", "-o", os.path.join(out, "huge.json")])
    check("2 GB file under --max-memory 1024 is refused before reading",
          proc.returncode == 4 and "reading " + huge + " (2147483648 bytes of JSON)" in proc.stderr and seconds < 5,
          "exit %d in %.2f s: %s" % (proc.returncode, seconds, proc.stderr.strip()))
    proc, seconds, _ = run(["dump", huge, "-o", os.path.join(out, "huge.json")])
    check("2 GB file under the default budget is refused before reading (parsing may need 20x its size)",
          proc.returncode == 4 and "(2147483648 bytes of JSON) needs about 40960 MiB" in proc.stderr and seconds < 1,
          "exit %d in %.2f s: %s" % (proc.returncode, seconds, proc.stderr.strip()[:200]))
    proc, seconds, _ = run(["dump", huge, "--max-memory", "65536", "-o", os.path.join(out, "huge.json")])
    check("2 GB file of zero bytes within the budget is refused from its first bytes, within a second",
          proc.returncode == 1 and proc.stderr.strip() == "attnviz: error: " + huge +
          ": /: expected a JSON object (a file starting with '{'), got byte 0x00 at line 1, column 1" and seconds < 1,
          "exit %d in %.2f s: %s" % (proc.returncode, seconds, proc.stderr.strip()[:200]))
    check("no output written by any refused run",
          sorted(os.listdir(out)) == ["bh22_5000", "bh22_600", "compare_2000.png", "pictures_2000", "shared_2800"], str(sorted(os.listdir(out))))

    # An output folder that cannot take new files, even for root (sysfs).
    fa = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "fa.json")
    proc, _, _ = run(["dump", fa, "-o", "/sys/attnviz_never.json"])
    check("read-only place: exit 2 naming the path",
          proc.returncode == 2 and "/sys/attnviz_never.json: cannot write:" in proc.stderr, proc.stderr.strip())
    if os.geteuid() != 0:
        readonly = os.path.join(tmp, "readonly")
        os.mkdir(readonly, 0o555)
        proc, _, _ = run(["dump", fa, "-o", os.path.join(readonly, "x.json")])
        check("read-only folder: exit 2", proc.returncode == 2 and "Permission denied" in proc.stderr,
              proc.stderr.strip())

passed = sum(results)
print("%d passed, %d failed" % (passed, len(results) - passed))
sys.exit(0 if passed == len(results) else 1)
