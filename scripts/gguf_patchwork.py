#!/usr/bin/env python3
"""One GGUF file whose tensors come from several copies of the same model that llama.cpp's own
quantizer made in different types: each tensor named in --take keeps the bytes of a copy that
holds it in the wanted type (the blocks stay llama.cpp's), the rest and the metadata come from the
first copy. A small model then holds every weight type at once (tests/data/quant-blocks).

    /usr/bin/python3 scripts/gguf_patchwork.py OUT.gguf COPY.gguf … --take blk.0.attn_q.weight=q4_0 …
"""
import argparse
import struct
import sys

TYPES = {"f32": 0, "f16": 1, "q4_0": 2, "q4_1": 3, "q5_0": 6, "q5_1": 7, "q8_0": 8, "q2_K": 10, "q3_K": 11,
         "q4_K": 12, "q5_K": 13, "q6_K": 14, "iq4_nl": 20, "iq4_xs": 23, "bf16": 30}
SIZES = {0: 1, 1: 1, 2: 1, 3: 1, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}  # scalar value types
BLOCK = {0: (1, 4), 1: (1, 2), 30: (1, 2), 2: (32, 18), 3: (32, 20), 6: (32, 22), 7: (32, 24), 8: (32, 34),
         10: (256, 84), 11: (256, 110), 12: (256, 144), 13: (256, 176), 14: (256, 210), 20: (32, 18), 23: (256, 136)}


class Gguf:
    def __init__(self, path):
        self.data = open(path, "rb").read()
        self.pos = 0
        magic, version, n_tensors, n_kv = struct.unpack_from("<4sIQQ", self.data, 0)
        assert magic == b"GGUF" and version == 3, path
        self.pos = 24
        kv_start = self.pos
        self.alignment = 32
        for _ in range(n_kv):
            key = self.string()
            kind = self.u32()
            value = self.value(kind)
            if key == "general.alignment":
                self.alignment = value
        self.kv = self.data[kv_start:self.pos]
        self.n_kv = n_kv
        self.tensors = []
        for _ in range(n_tensors):
            name = self.string()
            dims = [self.u64() for _ in range(self.u32())]
            kind, offset = self.u32(), self.u64()
            self.tensors.append([name, dims, kind, offset])
        start = (self.pos + self.alignment - 1) // self.alignment * self.alignment
        for t in self.tensors:
            count = 1
            for d in t[1]:
                count *= d
            values, size = BLOCK[t[2]]
            t.append(self.data[start + t[3]:start + t[3] + count // values * size])

    def u32(self):
        self.pos += 4
        return struct.unpack_from("<I", self.data, self.pos - 4)[0]

    def u64(self):
        self.pos += 8
        return struct.unpack_from("<Q", self.data, self.pos - 8)[0]

    def string(self):
        n = self.u64()
        self.pos += n
        return self.data[self.pos - n:self.pos].decode()

    def value(self, kind):
        if kind == 8:
            return self.string()
        if kind == 9:
            item, n = self.u32(), self.u64()
            for _ in range(n):
                self.value(item)
            return None
        size = SIZES[kind]
        self.pos += size
        fmt = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "B", 10: "Q", 11: "q", 12: "d"}[kind]
        return struct.unpack_from("<" + fmt, self.data, self.pos - size)[0]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out")
    p.add_argument("copies", nargs="+")
    p.add_argument("--take", action="append", default=[], help="TENSOR=TYPE")
    a = p.parse_args()
    copies = [Gguf(path) for path in a.copies]
    wanted = dict(item.split("=") for item in a.take)
    tensors = []
    for name, dims, kind, _, data in copies[0].tensors:
        if name in wanted:
            code = TYPES[wanted[name]]
            found = [t for c in copies for t in c.tensors if t[0] == name and t[2] == code]
            if not found:
                sys.exit("no copy holds %s as %s" % (name, wanted[name]))
            name, dims, kind, _, data = found[0]
        tensors.append((name, dims, kind, data))
    align = copies[0].alignment
    out = bytearray(struct.pack("<4sIQQ", b"GGUF", 3, len(tensors), copies[0].n_kv)) + copies[0].kv
    offset = 0
    for name, dims, kind, data in tensors:
        encoded = name.encode()
        out += struct.pack("<Q", len(encoded)) + encoded + struct.pack("<I", len(dims))
        out += b"".join(struct.pack("<Q", d) for d in dims) + struct.pack("<IQ", kind, offset)
        offset += (len(data) + align - 1) // align * align
    out += b"\0" * (-len(out) % align)
    for _, _, _, data in tensors:
        out += data + b"\0" * (-len(data) % align)
    open(a.out, "wb").write(out)


if __name__ == "__main__":
    main()
