"""The source tree keeps its floors (issue 31): docs/source-layout.md lists every folder of src/
that holds code, each on a floor, in a block of lines `FLOOR  src/FOLDER/  what it holds`; a file
may include headers of its own floor or a lower one, never of a higher one. Fails naming each
include that points up (file, line, both floors), each folder of src/ the page does not list and
each listed folder that does not exist. Before checking the repository, the checker runs on a
small planted tree with an include pointing up and a missing folder, so a checker that finds
nothing fails too.
Usage: layout_test.py ROOT"""
import os
import re
import sys
import tempfile

FLOOR_LINE = re.compile(r"^\s*(\d+)\s+src/(\S+?)/\s")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
SOURCE = (".hpp", ".cpp", ".h")


def floors_of(page):
    """{folder: floor} from the page's floor lines, in the page's order."""
    floors = {}
    with open(page, encoding="utf-8") as f:
        for line in f:
            m = FLOOR_LINE.match(line)
            if m:
                floors[m.group(2)] = int(m.group(1))
    return floors


def source_folders(src):
    """Every folder below src/ (relative, '/'-separated) that holds a source file."""
    found = set()
    for root, _, files in os.walk(src):
        if any(f.endswith(SOURCE) for f in files):
            rel = os.path.relpath(root, src).replace(os.sep, "/")
            if rel != ".":
                found.add(rel)
    return found


def folder_of(path, floors):
    """The listed folder a path below src/ belongs to: its longest listed prefix, or None."""
    parts = path.split("/")[:-1]
    while parts:
        candidate = "/".join(parts)
        if candidate in floors:
            return candidate
        parts.pop()
    return None


def check(root):
    """The faults of the tree at root, as lines of text (empty: none)."""
    src = os.path.join(root, "src")
    page = os.path.join(root, "docs", "source-layout.md")
    floors = floors_of(page)
    faults = []
    if not floors:
        return [f"{page}: no floor lines ('N  src/FOLDER/  what it holds')"]
    present = source_folders(src)
    for folder in sorted(present - set(floors)):
        faults.append(f"src/{folder}/ holds code but {page} lists no floor for it")
    for folder in sorted(set(floors) - present):
        faults.append(f"{page} lists src/{folder}/, which holds no code")
    for dirpath, _, files in os.walk(src):
        for name in sorted(files):
            if not name.endswith(SOURCE):
                continue
            path = os.path.relpath(os.path.join(dirpath, name), src).replace(os.sep, "/")
            own = folder_of(path, floors)
            if own is None:
                continue
            with open(os.path.join(dirpath, name), encoding="utf-8") as f:
                for number, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if not m or "/" not in m.group(1):
                        continue
                    target = folder_of(m.group(1), floors)
                    if target is not None and floors[target] > floors[own]:
                        faults.append(f"src/{path}:{number}: includes {m.group(1)} (src/{target}/, floor "
                                      f"{floors[target]}) from src/{own}/ (floor {floors[own]}): an include points up")
    return faults


def self_test():
    """The checker finds a planted upward include (by file and line) and an unlisted folder."""
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "docs"))
        for folder in ("src/core", "src/cli", "src/extra"):
            os.makedirs(os.path.join(root, folder))
        with open(os.path.join(root, "docs", "source-layout.md"), "w") as f:
            f.write("```\n1  src/core/  types\n2  src/cli/  the command line\n3  src/gone/  nothing\n```\n")
        with open(os.path.join(root, "src/core/types.hpp"), "w") as f:
            f.write('#pragma once\n#include <vector>\n#include "cli/options.hpp"\n')
        with open(os.path.join(root, "src/cli/options.hpp"), "w") as f:
            f.write('#pragma once\n#include "core/types.hpp"\n')
        with open(os.path.join(root, "src/extra/x.cpp"), "w") as f:
            f.write("int x;\n")
        faults = check(root)
        expected = [
            "src/extra/ holds code but",
            "lists src/gone/, which holds no code",
            "src/core/types.hpp:3: includes cli/options.hpp (src/cli/, floor 2) from src/core/ (floor 1)",
        ]
        missing = [e for e in expected if not any(e in fault for fault in faults)]
        if missing or len(faults) != len(expected):
            print("layout checker self-test failed: expected", expected, "got", faults)
            return False
    return True


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    if not self_test():
        return 1
    faults = check(sys.argv[1])
    for fault in faults:
        print(fault)
    if faults:
        print(f"{len(faults)} layout faults")
        return 1
    print("layout: every folder of src/ on its floor, no include points up")
    return 0


if __name__ == "__main__":
    sys.exit(main())
