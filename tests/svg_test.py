"""The SVG pictures against the PNGs (issue 14): every SVG is well-formed XML (xmllint), and
rsvg-convert renders it with the PNG's colour at every cell centre — vector cells, the hatched
masked cells, the cells outside a sliding window (hatched apart, every pixel), the stacked compare
picture and the raster fallback of long inputs. The same run
twice gives the same bytes.
Usage: svg_test.py ATTNVIZ"""
import json
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(HERE, "browser"))
from png_pixels import read_png  # noqa: E402
from svg_cells import svg_cells  # noqa: E402

STORIES = os.path.join(ROOT, "data", "stories260k", "layer0.json")
FA = os.path.join(HERE, "fixtures", "fa.json")
GEMMA2 = os.path.join(HERE, "data", "families", "gemma2.gguf")  # layer 0: a sliding window of 5 tokens
WINDOW = 5
SVG = "{http://www.w3.org/2000/svg}"


def run(*args):
    done = subprocess.run(list(args), capture_output=True)
    if done.returncode != 0:
        raise AssertionError(f"{' '.join(args)} failed ({done.returncode}): {done.stderr.decode()}")


def pixels(path):
    with open(path, "rb") as f:
        return read_png(f.read())


def check_svg(svg, png, out, panels=None):
    """xmllint, then rsvg-convert's colours at the cell centres of the first `panels` panels
    (default all) against the PNG's."""
    run("xmllint", "--noout", svg)
    rendered = os.path.join(out, "rsvg.png")
    run("rsvg-convert", "-o", rendered, svg)
    w, h, shown = pixels(rendered)
    pw, ph, expected = pixels(png)
    assert (w, h) == (pw, ph), f"{svg}: rsvg {w}x{h}, PNG {pw}x{ph}"
    compared = 0
    for panel in svg_cells(svg)[:panels]:
        for cell in panel:
            if cell[-1] == "raster":
                x0, y0, width, height, _ = cell
                points = [(x, y) for y in range(y0, y0 + height, 7) for x in range(x0, x0 + width, 7)]
            else:
                points = [cell[:2]]
            for x, y in points:
                assert shown(x, y) == expected(x, y), f"{svg} at ({x}, {y}): rsvg {shown(x, y)}, PNG {expected(x, y)}"
                compared += 1
    assert compared > 0, svg
    return compared


def check_every_pixel(svg, png, out, classes):
    """Every pixel of the cells of `classes` (hatched cells: their pattern's phase) and of the
    legend's swatches, rendered by rsvg-convert, against the PNG's. A picture of one grid only."""
    rendered = os.path.join(out, "rsvg.png")
    run("rsvg-convert", "-o", rendered, svg)
    _, _, shown = pixels(rendered)
    _, _, expected = pixels(png)
    boxes = []
    for picture in ET.parse(svg).getroot().findall(SVG + "g"):  # stacked pictures: translate(dx,dy)
        dx, dy = map(int, re.fullmatch(r"translate\((-?\d+),(-?\d+)\)", picture.get("transform")).groups())
        boxes += [(rect, dx, dy) for rect in picture.iter(SVG + "rect")
                  if rect.get("class") in classes or "-legend" in (rect.get("fill") or "")]
    compared = 0
    for rect, dx, dy in boxes:
        x0, y0, w, h = (int(rect.get(k)) for k in ("x", "y", "width", "height"))
        x0, y0 = x0 + dx, y0 + dy
        for y in range(y0, y0 + h):
            for x in range(x0, x0 + w):
                assert shown(x, y) == expected(x, y), f"{svg} at ({x}, {y}): rsvg {shown(x, y)}, PNG {expected(x, y)}"
                compared += 1
    assert compared > 0, svg
    return compared


def long_input(path, n):
    """n tokens over fixture F-A's weights: more cells than kMaxVectorCells in the grid."""
    with open(FA, encoding="utf-8") as f:
        sentence = json.load(f)
    sentence["tokens"] = [f"t{i}" for i in range(n)]
    sentence["embeddings"] = [[((i * 7 + k * 3) % 11) / 5 - 1 for k in range(4)] for i in range(n)]
    with open(path, "w", encoding="utf-8") as f:
        json.dump(sentence, f)


def main():
    attnviz = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory(prefix="attnviz-svg-") as out:
        first, second = os.path.join(out, "a"), os.path.join(out, "b")
        for folder in (first, second):
            run(attnviz, "heatmaps", STORIES, "--causal", "--format", "png,svg", "-o", folder)
        for name in ["grid"] + [f"head_{h}" for h in range(8)]:
            compared = check_svg(os.path.join(first, name + ".svg"), os.path.join(first, name + ".png"), out)
            with open(os.path.join(first, name + ".svg"), "rb") as a, open(os.path.join(second, name + ".svg"), "rb") as b:
                assert a.read() == b.read(), f"{name}.svg differs between two runs"
        print(f"stories260K layer 0: 9 SVGs valid, cell colours equal the PNGs' ({compared} cells in head_7), deterministic")

        compare = os.path.join(out, "compare.png")
        run(attnviz, "compare", STORIES, "--causal", "--heads", "0,3", "--format", "png,svg", "-o", compare)
        # Weights of heads 0 and 3 and their difference; the divergence map prints its values in
        # its cells, drawn by two different text rasterisers.
        compared = check_svg(os.path.join(out, "compare.svg"), compare, out, panels=3)
        print(f"compare: stacked SVG valid, {compared} cell colours of 3 panels equal the PNG's")

        # Two runs with different masks (causal and not): each panel is drawn with its own run's
        # mask, the cells masked in one run only with the other hatch ("o"), pixel for pixel as the PNG.
        for name, flags in (("causal", ["--causal"]), ("full", [])):
            run(attnviz, "dump", FA, *flags, "-o", os.path.join(out, f"fa_{name}.json"))
        masks = os.path.join(out, "masks.png")
        run(attnviz, "compare", os.path.join(out, "fa_causal.json"), os.path.join(out, "fa_full.json"),
            "--format", "png,svg", "-o", masks)
        svg = masks[:-4] + ".svg"
        kinds = [kind for panel in svg_cells(svg) for _, _, kind in panel]
        assert "o" in kinds, "cells masked in one run only"
        compared = check_svg(svg, masks, out, panels=2) + check_every_pixel(svg, masks, out, ("o", "m"))
        print(f"compare of two masks: {kinds.count('o')} one-run cells hatched apart, {compared} pixels equal the PNG's")

        # A sliding-window layer (issue 25): the cells outside the window carry their own hatch
        # ("o", crossed the other way, as the PNG's) and legend line; every pixel of them, and of
        # the legend's swatches, equals the PNG's. The global layer has none.
        folder = os.path.join(out, "gemma2")
        run(attnviz, "heatmaps", "--model", GEMMA2, "--token-ids", ",".join(str(i) for i in range(1, 25)),
            "--format", "png,svg", "-o", folder)
        svg, png = os.path.join(folder, "layer_0", "grid.svg"), os.path.join(folder, "layer_0", "grid.png")
        compared = check_svg(svg, png, out)
        n = 24
        for panel in svg_cells(svg):
            kinds = [kind for _, _, kind in panel]
            assert kinds == ["c" if j <= i and i - j < WINDOW else "o" if j < i else "m"
                             for i in range(n) for j in range(n)], kinds[:n]
        with open(svg, encoding="utf-8") as f:
            text = f.read()
        assert "outside the sliding window of 5 tokens" in text and 'hatch-legend-o"' in text, "legend line and swatch"
        compared += check_every_pixel(svg, png, out, ("o", "m"))
        assert all(kind != "o" for panel in svg_cells(os.path.join(folder, "layer_1", "grid.svg")) for _, _, kind in panel)
        print(f"gemma2 sliding window: out-of-window cells hatched apart, legend says so; {compared} pixels equal the PNG's")

        sentence = os.path.join(out, "long.json")
        long_input(sentence, 240)
        run(attnviz, "heatmaps", sentence, "--causal", "--format", "png,svg", "-o", os.path.join(out, "long"))
        svg = os.path.join(out, "long", "grid.svg")
        assert svg_cells(svg)[0][0][-1] == "raster", "240 tokens x 2 heads should be embedded as rasters"
        compared = check_svg(svg, os.path.join(out, "long", "grid.png"), out)
        print(f"long input: raster panels, {compared} sampled pixels equal the PNG's")
    print("svg_test: all checks passed")


if __name__ == "__main__":
    main()
