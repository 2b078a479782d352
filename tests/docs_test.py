"""The documentation holds together (issue 24, section 4): README.md is a front page of at most
300 lines whose first code block is the two commands (demo, test); every relative link and image
in README.md and docs/*.md names a file that exists, and every #anchor a heading of its target
page, by GitHub's slug rules; no page refers to the development machines' folder beside the
repository. With ATTNVIZ, every
`./build/attnviz …` command in a code block of those pages is also run, page by page in the
page's order, in a scratch folder that sees the repository's data/, tests/ and scripts/ and has
build/attnviz, so the examples never rot; where a page shows a command's output (a plain ```
block right after the command's block), the command must print exactly that.
Before checking the repository, the checker is run on small pages with known faults, so a
checker that finds nothing fails too.
Usage: docs_test.py ROOT [ATTNVIZ]"""
import os
import re
import shlex
import subprocess
import sys
import tempfile

MAX_FRONT_PAGE_LINES = 300
FIRST_BLOCK_COMMANDS = ["bash scripts/demo.sh", "bash scripts/test.sh"]
# [text](target) and ![alt](target), with an optional "title"; a text may hold `code`.
LINK = re.compile(r'!?\[[^\]]*\]\(\s*([^)\s]+)(?:\s+"[^"]*")?\s*\)')
FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
COMMAND_START = re.compile(r"^(\./build/attnviz|attnviz)\s")


def pages(root):
    """README.md, then docs/*.md in name order: the pages these checks cover."""
    docs = os.path.join(root, "docs")
    names = sorted(n for n in os.listdir(docs) if n.endswith(".md")) if os.path.isdir(docs) else []
    return [os.path.join(root, "README.md")] + [os.path.join(docs, n) for n in names]


def split_fences(text):
    """Yields (line_number, line, in_code) for every line; fence lines count as code."""
    in_code = False
    for number, line in enumerate(text.split("\n"), 1):
        if FENCE.match(line):
            yield number, line, True
            in_code = not in_code
            continue
        yield number, line, in_code


def slug(heading):
    """GitHub's anchor for a heading: markup and punctuation dropped (letters, digits, spaces,
    '-' and '_' kept), lower case, each space a '-'."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link counts by its text
    text = re.sub(r"<[^>]+>", "", text)
    text = text.replace("`", "").replace("*", "")
    text = "".join(c for c in text.lower() if c.isalnum() or c in " -_")
    return text.replace(" ", "-")


def anchors(path):
    """Every anchor a Markdown page offers: heading slugs, repeats numbered as GitHub does."""
    seen = {}
    result = set()
    with open(path, encoding="utf-8") as f:
        for _, line, in_code in split_fences(f.read()):
            m = HEADING.match(line)
            if in_code or not m:
                continue
            base = slug(m.group(2))
            n = seen.get(base, 0)
            seen[base] = n + 1
            result.add(base if n == 0 else f"{base}-{n}")
    return result


def links(text):
    """(line_number, target) of every link and image outside code blocks and code spans."""
    for number, line, in_code in split_fences(text):
        if in_code:
            continue
        prose = re.sub(r"`[^`]*`", "x", line)
        for m in LINK.finditer(prose):
            yield number, m.group(1)


# Built from pieces so that this file does not name the folder itself (tests/repo_hygiene_test.py).
OUTSIDE_FOLDER = ".." + "/shared"

def page_faults(path):
    """One line per fault of the page `path`: a reference to the folder beside the repository, a relative link that names
    no file, an anchor that no heading has."""
    faults = []
    with open(path, encoding="utf-8") as f:
        text = f.read()
    for number, line in enumerate(text.split("\n"), 1):
        if OUTSIDE_FOLDER in line:
            faults.append(f"{path}:{number}: refers to {OUTSIDE_FOLDER}, which is outside the repository")
    for number, target in links(text):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto: — not checked here
            continue
        file_part, _, anchor = target.partition("#")
        where = f"{path}:{number}: {target}"
        target_path = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
        if not os.path.exists(target_path):
            faults.append(f"{where}: no file {target_path}")
            continue
        if not anchor:
            continue
        if not target_path.endswith(".md"):
            faults.append(f"{where}: an anchor into {target_path}, which is no Markdown page")
        elif anchor not in anchors(target_path):
            faults.append(f"{where}: no heading of {target_path} has the anchor #{anchor}")
    return faults


def fenced_blocks(text):
    """Each fenced code block as (info string, lines, only blank lines since the previous block)."""
    blocks, current, info, gap_blank = [], None, "", True
    for _, line, in_code in split_fences(text):
        if FENCE.match(line):
            if current is None:
                current, info = [], FENCE.sub("", line).strip()
            else:
                blocks.append((info, current, gap_blank))
                current, gap_blank = None, True
        elif in_code and current is not None:
            current.append(line)
        elif line.strip():
            gap_blank = False
    return blocks


def code_blocks(text):
    """The lines of each fenced code block, in order."""
    return [lines for _, lines, _ in fenced_blocks(text)]


def front_page_faults(readme):
    """README.md: the length limit and the two opening commands."""
    with open(readme, encoding="utf-8") as f:
        text = f.read()
    faults = []
    n_lines = text.count("\n")
    if n_lines > MAX_FRONT_PAGE_LINES:
        faults.append(f"{readme}: {n_lines} lines, at most {MAX_FRONT_PAGE_LINES} "
                      "(move reference text into docs/)")
    blocks = code_blocks(text)
    first = [line.split("#")[0].strip() for line in blocks[0] if line.strip()] if blocks else []
    if first != FIRST_BLOCK_COMMANDS:
        faults.append(f"{readme}: the first code block is {first}, expected exactly {FIRST_BLOCK_COMMANDS}")
    return faults


def doc_commands(path):
    """The attnviz commands in the code blocks of a page, continuation lines joined, each with the
    output the page shows for it (None when it shows none): the lines of a plain ``` block that
    follows the command's block with nothing but blank lines between, for the block's last command."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    blocks = fenced_blocks(text)
    commands = []
    for k, (_, block, _) in enumerate(blocks):
        pending = None
        first = len(commands)
        for line in block:
            if pending is not None:
                pending += " " + line.strip()
            elif COMMAND_START.match(line):
                pending = line.strip()
            else:
                continue
            if pending.endswith("\\"):
                pending = pending[:-1].rstrip()
                continue
            commands.append([pending, None])
            pending = None
        follows = blocks[k + 1] if k + 1 < len(blocks) else None
        if len(commands) > first and follows and follows[0] == "" and follows[2]:
            commands[-1][1] = "\n".join(follows[1])
    return [tuple(c) for c in commands]


def run_commands(root, attnviz, page):
    """Runs a page's commands in order in a fresh scratch folder; returns the faults."""
    faults = []
    with tempfile.TemporaryDirectory() as scratch:
        for name in ("data", "tests", "scripts"):
            os.symlink(os.path.join(root, name), os.path.join(scratch, name))
        os.mkdir(os.path.join(scratch, "build"))
        os.symlink(os.path.abspath(attnviz), os.path.join(scratch, "build", "attnviz"))
        for command, shown in doc_commands(page):
            argv = shlex.split(command)
            if argv[0] == "attnviz":
                argv[0] = "./build/attnviz"
            done = subprocess.run(argv, cwd=scratch, capture_output=True, timeout=600)
            printed = done.stdout.decode(errors="replace").rstrip()
            status = "ok" if done.returncode == 0 else f"exit {done.returncode}"
            if shown is not None:
                status += ", output as shown" if printed == shown.rstrip() else ", output differs"
            print(f"{os.path.relpath(page, root)}: {status}: {command}")
            if done.returncode != 0:
                faults.append(f"{page}: `{command}` exited {done.returncode}: "
                              f"{done.stderr.decode(errors='replace').strip()}")
            elif shown is not None and printed != shown.rstrip():
                faults.append(f"{page}: `{command}` printed\n{printed}\nbut the page shows\n{shown}")
    return faults


def self_test():
    """The checker on pages with one known fault each: every fault must be found."""
    failures = []
    with tempfile.TemporaryDirectory() as root:
        os.mkdir(os.path.join(root, "docs"))

        def write(name, text):
            with open(os.path.join(root, name), "w", encoding="utf-8") as f:
                f.write(text)

        write("docs/a.md", "# Page A\n\n## The `--stats` file (CSV)\n\n## Two words\n\n## Two words\n"
              "[ok](#two-words-1) [ok](../README.md#top) [ok](#the---stats-file-csv)\n"
              "```sh\n[in code](nowhere.md)\n```\n`[in a span](nowhere.md)`\n")
        good = "# Top\n\n```sh\nbash scripts/demo.sh    # demo\nbash scripts/test.sh    # test\n```\n" \
               "[a](docs/a.md) ![p](docs/a.md) [b](docs/a.md#two-words)\n"
        write("README.md", good)
        found = front_page_faults(os.path.join(root, "README.md"))
        found += [f for p in pages(root) for f in page_faults(p)]
        if found:
            failures.append(f"faults reported on good pages: {found}")
        cases = {
            "a missing file": good + "[x](docs/missing.md)\n",
            "a missing image": good + "![x](data/pictures/missing.png)\n",
            "a missing anchor": good + "[x](docs/a.md#no-such-heading)\n",
            "a missing anchor on the page itself": good + "[x](#no-such-heading)\n",
            "an anchor into a file that is no page": good + "[x](docs#top)\n",
            "a reference outside the repository": good + "The data in `" + OUTSIDE_FOLDER + "/realdata`.\n",
            "too many lines": good + "\n" * MAX_FRONT_PAGE_LINES,
            "another first block": good.replace("bash scripts/test.sh", "bash scripts/other.sh"),
            "a third command in the first block": good.replace("# test\n", "# test\nls\n"),
        }
        for name, text in cases.items():
            write("README.md", text)
            found = front_page_faults(os.path.join(root, "README.md"))
            found += page_faults(os.path.join(root, "README.md"))
            if not found:
                failures.append(f"not found: {name}")
        write("docs/b.md", "```sh\n./build/attnviz dump a.json \\\n    -o out/b.json\n```\n\n"
              "```\nwrote out/b.json\n```\n"
              "```sh\nattnviz render out/b.json -o out/b\n$ not a command\n```\n"
              "text\n```\nnot its output\n```\n")
        commands = doc_commands(os.path.join(root, "docs", "b.md"))
        if commands != [("./build/attnviz dump a.json -o out/b.json", "wrote out/b.json"),
                        ("attnviz render out/b.json -o out/b", None)]:
            failures.append(f"commands read as {commands}")
    return failures


def main():
    root = os.path.abspath(sys.argv[1])
    attnviz = sys.argv[2] if len(sys.argv) > 2 else None
    faults = [f"self-test: {f}" for f in self_test()]
    checked = pages(root)
    faults += front_page_faults(checked[0])
    for page in checked:
        faults += page_faults(page)
    n_checks = 2 + len(checked)
    if attnviz:
        for page in checked:
            faults += run_commands(root, attnviz, page)
            n_checks += 1
    for fault in faults:
        print(fault)
    print(f"{len(checked)} pages: {max(n_checks - len(faults), 0)} passed, {len(faults)} failed")
    return 1 if faults else 0


if __name__ == "__main__":
    sys.exit(main())
