"""Reads 8-bit RGB/RGBA PNG files (non-interlaced) into rows of (r, g, b) pixels: enough for the
browser and SVG tests to compare colours (the standard library and NumPy, python3-numpy)."""
import struct
import zlib

import numpy


def read_png(data):
    """Returns (width, height, pixel(x, y) -> (r, g, b)) for PNG bytes `data`."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG file")
    pos, idat, width = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or colour not in (2, 6) or interlace != 0:
                raise ValueError(f"unsupported PNG: depth {depth}, colour type {colour}, interlace {interlace}")
            channels = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        if kind == 0:
            rows.append(line)
            previous = line
            continue
        if kind == 2:  # "up", attnviz's own filter: a whole row at once (uint8 wraps mod 256)
            line = bytearray((numpy.frombuffer(line, numpy.uint8) + numpy.frombuffer(previous, numpy.uint8)).tobytes())
            rows.append(line)
            previous = line
            continue
        for i in range(stride):  # PNG spec §9: filter types 1, 3 and 4
            a = line[i - channels] if i >= channels else 0
            b = previous[i]
            c = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        previous = line

    def pixel(x, y):
        o = x * channels
        return tuple(rows[y][o:o + 3])

    return width, height, pixel
