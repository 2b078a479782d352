"""Copies a GGUF file with one string key added or replaced (by default tokenizer.chat_template),
the tensor data moved to the file's alignment: a model with a chat template for the tests of
--chat from one without (stories260K carries none).
Usage: /usr/bin/python3 scripts/gguf_add_chat_template.py IN.gguf OUT.gguf TEMPLATE.jinja [KEY]
Tests import copy_with_string(source, target, text) instead."""
import struct
import sys

TYPE_SIZES = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
STRING, ARRAY, UINT32 = 8, 9, 4


def skip_value(data, at, kind):
    if kind == STRING:
        (n,) = struct.unpack_from("<Q", data, at)
        return at + 8 + n
    if kind == ARRAY:
        item_kind, count = struct.unpack_from("<IQ", data, at)
        at += 12
        for _ in range(count):
            at = skip_value(data, at, item_kind)
        return at
    return at + TYPE_SIZES[kind]


def read_string(data, at):
    (n,) = struct.unpack_from("<Q", data, at)
    return data[at + 8:at + 8 + n].decode("utf-8"), at + 8 + n


def copy_with_string(source, target, text, key="tokenizer.chat_template"):
    """Writes TARGET: the GGUF file SOURCE with the string KEY set to TEXT (str or UTF-8 bytes)."""
    data = open(source, "rb").read()
    magic, version, n_tensors, n_kv = struct.unpack_from("<4sIQQ", data, 0)
    assert magic == b"GGUF", source + ": not a GGUF file"
    at = 24
    kvs = []
    alignment = 32
    for _ in range(n_kv):
        start = at
        name, at = read_string(data, at)
        (kind,) = struct.unpack_from("<I", data, at)
        at = skip_value(data, at + 4, kind)
        if name == "general.alignment" and kind == UINT32:
            (alignment,) = struct.unpack_from("<I", data, at - 4)
        if name != key:
            kvs.append(data[start:at])
    infos_start = at
    for _ in range(n_tensors):
        _, at = read_string(data, at)
        (n_dims,) = struct.unpack_from("<I", data, at)
        at += 4 + 8 * n_dims + 4 + 8
    infos = data[infos_start:at]
    data_start = (at + alignment - 1) // alignment * alignment
    template = text.encode("utf-8") if isinstance(text, str) else text
    kvs.append(struct.pack("<Q", len(key)) + key.encode() + struct.pack("<IQ", STRING, len(template)) + template)
    head = struct.pack("<4sIQQ", b"GGUF", version, n_tensors, len(kvs)) + b"".join(kvs) + infos
    head += b"\0" * ((-len(head)) % alignment)
    with open(target, "wb") as out:
        out.write(head + data[data_start:])


def main():
    source, target, template_path = sys.argv[1:4]
    key = sys.argv[4] if len(sys.argv) > 4 else "tokenizer.chat_template"
    with open(template_path, "rb") as f:
        copy_with_string(source, target, f.read(), key)


if __name__ == "__main__":
    main()
