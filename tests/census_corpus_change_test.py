#!/usr/bin/python3
"""census --corpus whose corpus changes while the run reads it (issue 22): the docs promise
"changed during the run" is exit 1. Each case starts a run of the bundled stories260K over a
copy of the bundled corpus, stops it (SIGSTOP) once its journal holds a few texts, changes the
copy, lets it go on (SIGCONT), and checks: exit 1, one line naming the file and saying it
changed (not "not valid JSON" for a cut-short line), the journal kept and no census.*.
SIGSTOP makes the change land mid-run whatever the machine's speed (no timing race, no fifo).
Usage: census_corpus_change_test.py PATH/TO/attnviz REPO_ROOT   Prints a closing 'N passed, M failed'.
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

ATTNVIZ, ROOT = sys.argv[1], sys.argv[2]
MODEL = os.path.join(ROOT, "data/stories260k/stories260K.gguf")
STORIES = os.path.join(ROOT, "data/corpus/stories260k_stories.txt")
results = []


def check(name, ok, detail=""):
    results.append(ok)
    print(("ok   " if ok else "FAIL ") + name + ("" if ok else ": " + detail))


def journal_lines(folder):
    path = os.path.join(folder, "texts.jsonl")
    if not os.path.exists(path):
        return 0
    with open(path, "rb") as f:
        return f.read().count(b"\n")


def run_and_change(corpus, out, change, *extra):
    """Runs a census over `corpus`, calls change() while the run is stopped mid-run, returns
    (exit status, stderr)."""
    proc = subprocess.Popen([ATTNVIZ, "census", "--model", MODEL, "--corpus", corpus, "--threads", "1", "--quiet",
                             "-o", out, *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None and journal_lines(out) < 4:
        time.sleep(0.005)
    if proc.poll() is not None:
        _, err = proc.communicate()
        return None, "the run ended before the change: " + err
    proc.send_signal(signal.SIGSTOP)
    try:
        change()
    finally:
        proc.send_signal(signal.SIGCONT)
    _, err = proc.communicate()
    return proc.returncode, err


def main():
    with open(STORIES, encoding="utf-8") as f:
        stories = [line.rstrip("\n") for line in f if line.strip()]
    # Enough texts that the run is far from done when the journal first holds a few.
    lines = (stories * 4)[:2000]
    with tempfile.TemporaryDirectory() as tmp:
        text_corpus = os.path.join(tmp, "stories.txt")
        jsonl_corpus = os.path.join(tmp, "stories.jsonl")

        def reset():
            with open(text_corpus, "w", encoding="utf-8") as f:
                f.write("".join(s + "\n" for s in lines))
            with open(jsonl_corpus, "w", encoding="utf-8") as f:
                f.write("".join(json.dumps({"text": s}) + "\n" for s in lines))

        def refused(name, code, err, corpus, out, what):
            check(name + ": exit 1", code == 1, "%s %s" % (code, err))
            check(name + ": one line naming the file and the change",
                  err.startswith("attnviz: error: " + corpus + ": changed while the census read it (" + what)
                  and err.count("\n") == 1, err)
            check(name + ": the journal is kept", journal_lines(out) >= 4, str(journal_lines(out)))
            left = sorted(f for f in os.listdir(out) if f != "texts.jsonl") if os.path.isdir(out) else []
            check(name + ": no census.*", left == [], str(left))

        # 1. Lines added in place at the front (the texts after would be renumbered).
        reset()
        out = os.path.join(tmp, "front")

        def add_front():
            with open(text_corpus, "r+", encoding="utf-8") as f:
                rest = f.read()
                f.seek(0)
                f.write("A new first story.\n" + rest)
        code, err = run_and_change(text_corpus, out, add_front, "--skip-bad-lines")
        refused("lines added at the front", code, err, text_corpus, out, "size ")
        check("lines added at the front: says what to do with the journal",
              "belong to the corpus as it was" in err and "--resume" in err, err)
        run = subprocess.run([ATTNVIZ, "census", "--model", MODEL, "--corpus", text_corpus, "--quiet", "--resume", "-o", out],
                             capture_output=True, text=True)
        check("--resume with the changed corpus is refused", run.returncode == 1 and "fnv1a64" in run.stderr, run.stderr)

        # 2. A JSONL corpus cut short mid-line: said to have changed, not "not valid JSON".
        reset()
        out = os.path.join(tmp, "cut")

        def cut_short():
            size = os.path.getsize(jsonl_corpus)
            with open(jsonl_corpus, "r+b") as f:
                f.truncate(size // 2 + 7)
        code, err = run_and_change(jsonl_corpus, out, cut_short)
        refused("a JSONL corpus cut short", code, err, jsonl_corpus, out, "size ")
        check("a JSONL corpus cut short: not blamed on a line", "not valid JSON" not in err, err)

        # 3. Rewritten in place, same size (one letter changed): the modification time tells.
        reset()
        out = os.path.join(tmp, "rewritten")

        def rewrite_letter():
            with open(text_corpus, "r+b") as f:
                f.seek(os.path.getsize(text_corpus) - 3)
                f.write(b"X")
        code, err = run_and_change(text_corpus, out, rewrite_letter)
        refused("rewritten in place", code, err, text_corpus, out, "rewritten")

        # 4. Rewritten with its modification time put back: the hash of the last read tells.
        reset()
        out = os.path.join(tmp, "same_time")

        def rewrite_keep_time():
            status = os.stat(text_corpus)
            with open(text_corpus, "r+b") as f:
                f.seek(status.st_size - 3)
                f.write(b"X")
            os.utime(text_corpus, ns=(status.st_atime_ns, status.st_mtime_ns))
        code, err = run_and_change(text_corpus, out, rewrite_keep_time)
        refused("rewritten, time kept", code, err, text_corpus, out, "its bytes hash to")
        check("rewritten, time kept: says to start over", "remove" in err and "texts.jsonl" in err, err)

        # 5. Replaced by rename (an editor's save): another file has the name now.
        reset()
        out = os.path.join(tmp, "renamed")

        def replace():
            other = text_corpus + ".new"
            with open(other, "w", encoding="utf-8") as f:
                f.write("".join(s + "\n" for s in lines[::-1]))
            os.replace(other, text_corpus)
        code, err = run_and_change(text_corpus, out, replace)
        refused("replaced by rename", code, err, text_corpus, out, "another file")

    print("%d passed, %d failed" % (sum(results), len(results) - sum(results)))


main()
