"""The HTML report in Firefox (issue 14): Debian's firefox-esr opens index.html from file://,
headless, and its screenshot shows the large map with the PNG's colour at every cell centre
(the map is found by its first row of cells). Hover and keys are tested in Chromium
(report_test.py); this checks that the page runs and draws the same in the second engine.
Usage: firefox_test.py ATTNVIZ"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from png_pixels import read_png  # noqa: E402
from svg_cells import svg_cells  # noqa: E402

FIREFOX = "/usr/bin/firefox-esr"
STORIES = os.path.join(ROOT, "data", "stories260k", "layer0.json")
N = 32            # tokens of the bundled stories260K layer
CELL_PX = 20      # the page's large map: 640 px / 32 tokens
MASKED = {(191, 191, 191), (235, 235, 235)}


def run(*args, **kwargs):
    done = subprocess.run(list(args), capture_output=True, text=True, **kwargs)
    if done.returncode != 0:
        raise AssertionError(f"{' '.join(args)} failed ({done.returncode}): {done.stderr}")


def matches(shot, expected, kinds, ox, oy):
    for index, (colour, kind) in enumerate(zip(expected, kinds)):
        i, j = divmod(index, N)
        shown = shot(ox + j * CELL_PX + CELL_PX // 2, oy + i * CELL_PX + CELL_PX // 2)
        if (kind == "m" and shown not in MASKED) or (kind == "c" and shown != colour):
            return False
    return True


def main():
    attnviz = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory(prefix="attnviz-firefox-") as out:
        folder = os.path.join(out, "stories")
        run(attnviz, "heatmaps", STORIES, "--causal", "--format", "png,svg,html", "-o", folder)
        with open(os.path.join(folder, "head_0.png"), "rb") as f:
            _, _, png = read_png(f.read())
        cells = svg_cells(os.path.join(folder, "head_0.svg"))[0]
        assert len(cells) == N * N, len(cells)
        expected = [png(x, y) for x, y, _ in cells]
        kinds = [kind for _, _, kind in cells]
        profile = os.path.join(out, "profile")
        os.mkdir(profile)
        screenshot = os.path.join(out, "firefox.png")
        run(FIREFOX, "--headless", "--no-remote", "-profile", profile, "--window-size=1600,1600",
            "--screenshot=" + screenshot, "file://" + os.path.join(folder, "index.html"),
            env=dict(os.environ, HOME=out, MOZ_DISABLE_AUTO_SAFE_MODE="1"), timeout=120)
        with open(screenshot, "rb") as f:
            width, height, shot = read_png(f.read())
        # Cell (0, 0): query 0 on key 0; look for it where a whole map would fit.
        found = None
        for oy in range(0, height - N * CELL_PX):
            for ox in range(0, width - N * CELL_PX):
                if shot(ox + CELL_PX // 2, oy + CELL_PX // 2) == expected[0] and matches(shot, expected, kinds, ox, oy):
                    found = (ox, oy)
                    break
            if found:
                break
        assert found, f"no {N} x {N} map with the PNG's colours in Firefox's screenshot"
        print(f"firefox: the large map at {found} has the PNG's colour at all {N * N} cell centres")
    print("firefox_test: all checks passed")


if __name__ == "__main__":
    main()
