#!/usr/bin/python3
"""census --corpus run as the docs tell users to (issue 22): four shards under GNU parallel,
merged in two orders, equal to one process (means to 1e-12 relative, std and CI to 1e-9);
an interrupted run (SIGINT) exits 130 with its journal and no census.*, is refused without
--resume and finishes with it to the same numbers; progress on a pipe has no escape codes.
Usage: census_shards_test.py PATH/TO/attnviz REPO_ROOT   Prints a closing 'N passed, M failed'.
Exit 77 (skipped) when GNU parallel is not installed (scripts/install_deps.sh --test).
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ATTNVIZ, ROOT = sys.argv[1], sys.argv[2]
MODEL = os.path.join(ROOT, "data/stories260k/stories260K.gguf")
CORPUS = os.path.join(ROOT, "data/corpus/stories260k_stories.txt")
TEXTS = 200
results = []


def check(name, ok, detail=""):
    results.append(ok)
    print(("ok   " if ok else "FAIL ") + name + ("" if ok else ": " + detail))


def census(*args, **kwargs):
    return subprocess.run([ATTNVIZ, "census", "--model", MODEL, "--corpus", CORPUS, "--limit", str(TEXTS), *args],
                          capture_output=True, text=True, **kwargs)


def load(folder):
    with open(os.path.join(folder, "census.json")) as f:
        return json.load(f)


def worst_difference(a, b):
    """Largest relative difference of means, and of std/CI, over every head and statistic."""
    means, spreads = 0.0, 0.0
    for x, y in zip(a["heads"], b["heads"]):
        assert (x["layer"], x["head"]) == (y["layer"], y["head"])
        for s in a["statistics"]:
            if x[s]["texts"] != y[s]["texts"]:
                return float("inf"), float("inf")
            for key in ("mean", "std", "ci95_low", "ci95_high"):
                u, v = x[s][key], y[s][key]
                if (u is None) != (v is None):
                    return float("inf"), float("inf")
                if u is None:
                    continue
                d = abs(u - v) / max(abs(u), 1e-300) if u != 0 else abs(v)
                if key == "mean":
                    means = max(means, d)
                else:
                    spreads = max(spreads, d)
    return means, spreads


def main():
    if shutil.which("parallel") is None:
        print("GNU parallel is not installed (scripts/install_deps.sh --test): skipped")
        return 77
    tmp = tempfile.mkdtemp(prefix="attnviz-census-")
    try:
        whole = os.path.join(tmp, "whole")
        run = census("-o", whole, "--threads", "1")
        check("one process", run.returncode == 0, run.stderr)
        # The docs' recipe: four local jobs, then the merge.
        shards = os.path.join(tmp, "shard-{}")
        run = subprocess.run(["parallel", "-j", "4", ATTNVIZ, "census", "--model", MODEL, "--corpus", CORPUS,
                              "--limit", str(TEXTS), "--threads", "1", "--quiet", "--shard", "{}/4", "-o", shards,
                              ":::", "0", "1", "2", "3"], capture_output=True, text=True)
        check("parallel -j 4 runs four shards", run.returncode == 0, run.stderr)
        for name, order in (("merge 0 1 2 3", "0123"), ("merge 3 1 0 2", "3102")):
            out = os.path.join(tmp, "merged-" + order)
            run = subprocess.run([ATTNVIZ, "census", "--merge"] + [shards.replace("{}", k) for k in order] + ["-o", out],
                                 capture_output=True, text=True)
            check(name, run.returncode == 0, run.stderr)
            if run.returncode != 0:
                continue
            merged, single = load(out), load(whole)
            check(name + ": covers every text once", merged["covers"]["ranges"] == [[0, TEXTS - 1]], str(merged["covers"]))
            means, spreads = worst_difference(single, merged)
            print("     %s: worst relative difference %.3g (means), %.3g (std, CI)" % (name, means, spreads))
            check(name + ": equals one process", means <= 1e-12 and spreads <= 1e-9, "%g %g" % (means, spreads))

        # SIGINT mid-run: journal kept, no census.*, exit 130; then --resume finishes it.
        interrupted = os.path.join(tmp, "interrupted")
        proc = subprocess.Popen([ATTNVIZ, "census", "--model", MODEL, "--corpus", CORPUS, "--limit", str(TEXTS),
                                 "--threads", "1", "-o", interrupted], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        journal = os.path.join(interrupted, "texts.jsonl")
        deadline = time.time() + 60
        while time.time() < deadline:
            if os.path.exists(journal) and sum(1 for _ in open(journal)) > 20:
                break
            time.sleep(0.01)
        proc.send_signal(signal.SIGINT)
        _, interrupted_err = proc.communicate()
        kept = sum(1 for _ in open(journal)) - 1 if os.path.exists(journal) else 0
        check("SIGINT exits 130", proc.returncode == 130, str(proc.returncode))
        check("SIGINT says where the journal is and how to go on",
              b"interrupted: the texts done so far are kept in" in interrupted_err and b"--resume" in interrupted_err,
              interrupted_err.decode(errors="replace"))
        check("SIGINT keeps the journal (%d texts)" % kept, 0 < kept < TEXTS, str(kept))
        left = sorted(f for f in os.listdir(interrupted) if f != "texts.jsonl")
        check("SIGINT writes no census.*", left == [], str(left))
        run = census("-o", interrupted)
        check("a journal without --resume is refused", run.returncode == 1 and "--resume" in run.stderr, run.stderr)
        with open(journal, "a") as f:
            f.write('{"index": 999, "tok')  # a half-written line, as a kill mid-write leaves
        run = census("-o", interrupted, "--resume")
        check("--resume finishes", run.returncode == 0 and "from the journal" in run.stdout, run.stdout + run.stderr)
        if run.returncode == 0:
            means, spreads = worst_difference(load(whole), load(interrupted))
            check("resumed equals one process", means <= 1e-12 and spreads <= 1e-9, "%g %g" % (means, spreads))
        os.makedirs(os.path.join(tmp, "other"), exist_ok=True)
        shutil.copy(journal, os.path.join(tmp, "other", "texts.jsonl"))
        run = census("-o", os.path.join(tmp, "other"), "--resume", "--sink-epsilon", "0.5")
        check("--resume refuses a journal of other settings", run.returncode == 1 and "another settings" in run.stderr,
              run.stderr)

        # Progress on a terminal: a live bar on stderr, redrawn in place.
        import pty
        master, slave = pty.openpty()
        proc = subprocess.Popen([ATTNVIZ, "census", "--model", MODEL, "--corpus", CORPUS, "--limit", "30",
                                 "-o", os.path.join(tmp, "tty")], stdout=subprocess.DEVNULL, stderr=slave)
        os.close(slave)
        shown = b""
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:
                break
            if not chunk:
                break
            shown += chunk
        proc.wait()
        os.close(master)
        text = shown.decode(errors="replace")
        check("a bar on a terminal", proc.returncode == 0 and "\r[" in text and "texts 30/30" in text and "tokens/s" in text,
              repr(text[-300:]))

        # Progress on a pipe: plain lines only, never an escape code.
        run = census("-o", os.path.join(tmp, "piped"), "--limit", "5")
        check("no escape codes on a pipe", "\x1b" not in run.stderr and "\r" not in run.stderr, repr(run.stderr))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d passed, %d failed" % (results.count(True), results.count(False)))
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
