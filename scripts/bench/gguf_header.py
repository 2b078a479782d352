#!/usr/bin/python3
"""A GGUF file's header as the benchmark scripts need it (lib.sh's gguf_sizes and gguf_shape): the
metadata key/values and the tensor infos, read from the file's first 64 MiB (a 262144-piece
vocabulary and every tensor info fit). Prints one line:

  gguf_header.py sizes MODEL TOKENS   TENSORS LAYER ATTENTION PARAMS: bytes of the tensors (F32, F16,
                                      else Q8_0 blocks), of layer 0's weights in float32, of one layer's
                                      h·n² float32 attention at TOKENS tokens, and the parameter count
  gguf_header.py shape MODEL          ARCHITECTURE LAYERS VOCAB: general.architecture, its block_count,
                                      and the output (else token embedding) matrix's rows
"""
import struct
import sys

SIZES = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
FORMATS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 10: "<Q", 11: "<q"}


def read_header(path):
    """(metadata {key: value or None}, [(name, dims, ggml type)]) of the GGUF file at path."""
    data = open(path, "rb").read(64 << 20)
    pos = 24

    def take(fmt):
        nonlocal pos
        v = struct.unpack_from(fmt, data, pos)
        pos += struct.calcsize(fmt)
        return v[0]

    def string():
        nonlocal pos
        n = take("<Q")
        s = data[pos:pos + n]
        pos += n
        return s.decode("utf-8", "replace")

    def value(kind):
        nonlocal pos
        if kind == 8:
            return string()
        if kind == 9:
            element, count = take("<I"), take("<Q")
            for _ in range(count):
                value(element)
            return None
        if kind in FORMATS:
            return take(FORMATS[kind])
        pos += SIZES[kind]
        return None

    n_tensors, n_kv = struct.unpack_from("<QQ", data, 8)
    meta = {}
    for _ in range(n_kv):
        key = string()
        meta[key] = value(take("<I"))
    tensors = []
    for _ in range(n_tensors):
        name = string()
        dims = [take("<Q") for _ in range(take("<I"))]
        kind = take("<I")
        take("<Q")
        tensors.append((name, dims, kind))
    return meta, tensors


def sizes(path, tokens):
    meta, tensors = read_header(path)
    heads = next((v for k, v in meta.items() if k.endswith(".attention.head_count") and isinstance(v, int)), 0)
    total = layer = params = 0
    for name, dims, kind in tensors:
        count = 1
        for d in dims:
            count *= d
        params += count
        total += count * 4 if kind == 0 else count * 2 if kind == 1 else count // 32 * 34
        if name.startswith("blk.0."):
            layer += count * 4
    return f"{total} {layer} {heads * tokens * tokens * 4} {params}"


def shape(path):
    meta, tensors = read_header(path)
    rows = {name: dims[1] if len(dims) > 1 else 0 for name, dims, _ in tensors}
    arch = meta["general.architecture"]
    return f"{arch} {meta[arch + '.block_count']} {rows.get('output.weight', rows.get('token_embd.weight', 0))}"


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "sizes":
        print(sizes(sys.argv[2], int(sys.argv[3])))
    elif len(sys.argv) == 3 and sys.argv[1] == "shape":
        print(shape(sys.argv[2]))
    else:
        sys.exit(__doc__)
