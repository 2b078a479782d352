#!/usr/bin/env python3
"""What a fresh clone needs from the repository itself (issue 24).

    /usr/bin/python3 tests/repo_hygiene_test.py no-outside-data REPO
    /usr/bin/python3 tests/repo_hygiene_test.py test-data-checksums REPO
    /usr/bin/python3 tests/repo_hygiene_test.py test-names-whole REPO

no-outside-data: no tracked file (`git ls-files`) names the development machines' folder beside the
  repository (as a path, its realdata/ or cases/ subfolders, or a path joined from ".." and then that name);
  a test that reads it passes there and fails in a clone. Exits 77 (skipped) outside a git checkout.
test-data-checksums: every file under tests/data/ is listed in tests/data/README.md's sha256 table
  with its size and sha256, and every listed file exists: a copy that changed, or a file added
  without its provenance, is named.
test-names-whole: no Catch2 TEST_CASE name in tests/*.cpp holds a ';': catch_discover_tests splits
  such a name into two CTests that match no test case (both fail as "No test cases matched").
Prints one line per problem and a closing "N passed, M failed" line; exits 1 on any failure.
"""
import hashlib
import os
import re
import subprocess
import sys

# Built from pieces so that this file does not match itself.
OUTSIDE_FOLDER = ".." + "/shared"
OUTSIDE_NAMES = re.compile(("|".join([re.escape(OUTSIDE_FOLDER), r"\bshared/(realdata|cases)\b",
                                      r"""["']\.\.["'],\s*["']shared["']"""])).encode())
ROW = re.compile(r"^\| `([^`]+)` \| ([0-9,]+) \| `([0-9a-f]{64})` \|$")


def no_outside_data(repo):
    try:
        listed = subprocess.run(["git", "-C", repo, "ls-files", "-z"], check=True, capture_output=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        print("skipped: %s is not a git checkout (%s)" % (repo, e))
        return 77
    problems = []
    files = [f for f in listed.decode().split("\0") if f]
    for name in files:
        path = os.path.join(repo, name)
        if not os.path.isfile(path):
            continue
        with open(path, "rb") as f:
            for number, line in enumerate(f, 1):
                found = OUTSIDE_NAMES.search(line)
                if found:
                    problems.append("%s:%d: names %s (copy what it needs into tests/data/)" %
                                    (name, number, found.group(0).decode(errors="replace")))
    return report(len(files) - len({p.split(":")[0] for p in problems}), problems)


def test_data_checksums(repo):
    folder = os.path.join(repo, "tests", "data")
    readme = os.path.join(folder, "README.md")
    listed = {}
    with open(readme, encoding="utf-8") as f:
        for line in f:
            match = ROW.match(line.rstrip("\n"))
            if match:
                listed[match.group(1)] = (int(match.group(2).replace(",", "")), match.group(3))
    present = set()
    for root, _, names in os.walk(folder):
        for name in names:
            relative = os.path.relpath(os.path.join(root, name), folder).replace(os.sep, "/")
            if relative != "README.md":
                present.add(relative)
    problems = []
    for name in sorted(present - set(listed)):
        problems.append("tests/data/%s: not in tests/data/README.md's sha256 table" % name)
    for name in sorted(set(listed) - present):
        problems.append("tests/data/README.md: lists %s, which is not there" % name)
    for name in sorted(present & set(listed)):
        with open(os.path.join(folder, name), "rb") as f:
            data = f.read()
        size, digest = listed[name]
        actual = hashlib.sha256(data).hexdigest()
        if len(data) != size or actual != digest:
            problems.append("tests/data/%s: %d bytes, sha256 %s; the README says %d bytes, %s" %
                            (name, len(data), actual, size, digest))
    return report(len(present | set(listed)) - len(problems), problems)


def test_names_whole(repo):
    problems, names = [], 0
    folder = os.path.join(repo, "tests")
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".cpp"):
            continue
        with open(os.path.join(folder, name), encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                for case in re.findall(r'TEST_CASE\("([^"]*)"', line):
                    names += 1
                    if ";" in case:
                        problems.append("tests/%s:%d: TEST_CASE name holds ';' (CTest splits it): %s" % (name, number, case))
    return report(names - len(problems), problems)


def report(passed, problems):
    for problem in problems:
        print(problem)
    print("%d passed, %d failed" % (passed, len(problems)))
    return 1 if problems else 0


def main():
    checks = {"no-outside-data": no_outside_data, "test-data-checksums": test_data_checksums,
              "test-names-whole": test_names_whole}
    if len(sys.argv) != 3 or sys.argv[1] not in checks:
        print("usage: repo_hygiene_test.py {%s} REPO" % ",".join(checks), file=sys.stderr)
        return 2
    return checks[sys.argv[1]](sys.argv[2])


if __name__ == "__main__":
    sys.exit(main())
