"""The cells of an attnviz SVG, panel by panel (<g class="cells">): each cell's centre pixel and
kind ("c" colour, "m" masked) in row-major order, in document pixels (the translate() of the
stacked pictures added). The SVG uses the PNG's layout, so these are also the PNG's cell
centres. A raster panel (<image class="raster">) gives (x, y, width, height, "raster")."""
import re
import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"


def _cells(group, dx, dy):
    cells = []
    for rect in group.iter(SVG + "rect"):
        x, y, w, h = (int(rect.get(k)) for k in ("x", "y", "width", "height"))
        cells.append((dx + x + w // 2, dy + y + h // 2, rect.get("class")))
    for image in group.iter(SVG + "image"):
        x, y, w, h = (int(image.get(k)) for k in ("x", "y", "width", "height"))
        cells.append((dx + x, dy + y, w, h, "raster"))
    return cells


def svg_cells(path):
    panels = []
    for picture in ET.parse(path).getroot().findall(SVG + "g"):
        dx, dy = map(int, re.fullmatch(r"translate\((-?\d+),(-?\d+)\)", picture.get("transform")).groups())
        for group in picture.iter(SVG + "g"):
            if group.get("class") == "cells":
                panels.append(_cells(group, dx, dy))
    return panels
