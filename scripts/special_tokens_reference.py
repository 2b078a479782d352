#!/usr/bin/env python3
"""Special tokens written in a prompt, as llama.cpp reads them: writes small vocabulary-only GGUF
files into OUT_DIR and the token ids llama.cpp's own llama_tokenize gives for a set of texts, with
parse_special on and off, on those files and on real vocabularies, into OUT_DIR/expected.json.

    gcc -O1 -std=c11 -o /tmp/llamacpp_tokenize scripts/llamacpp_tokenize.c -ldl
    /usr/bin/python3 scripts/special_tokens_reference.py tests/data/special-tokens \\
        --tool /tmp/llamacpp_tokenize --lib-dir ~/.cache/llamacpp-attention/node-llama-cpp-linux-x64-3.21.1/package/bins/linux-x64

The written vocabularies hold what the real ones have that matters here and that no committed real
vocabulary has: a Llama-3-style byte-level BPE (pre-tokenizer llama-bpe) with its header and
end-of-turn control tokens, an unknown-type, an unused-type and a user-defined token inside a
control token's text; a SentencePiece vocabulary with ChatML's <|im_start|> / <|im_end|> (the
dummy space after a special token); and one named Phi-3, whose special tokens llama.cpp's loader
makes take the white space after them. The tests read the committed files and need neither the
libraries nor this script.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gguf_writer import vocabulary, write_gguf  # noqa: E402

NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6
SP = "\u2581"


def byte_to_unicode():
    """GPT-2's bytes_to_unicode: the printable bytes stand for themselves, the others from U+0100 on."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    table, extra = {}, 0
    for b in range(256):
        if b in keep:
            table[b] = chr(b)
        else:
            table[b] = chr(256 + extra)
            extra += 1
    return table


def hparams():
    return {"general.architecture": "llama", "llama.block_count": 1, "llama.context_length": 256,
            "llama.embedding_length": 16, "llama.feed_forward_length": 32, "llama.attention.head_count": 4,
            "llama.attention.layer_norm_rms_epsilon": 1e-5}


def llama3_bpe(path):
    """Byte-level BPE as Llama 3 ships it: 256 byte pieces, merges spelling a few words, specials."""
    b2u = byte_to_unicode()
    pieces = [b2u[b] for b in range(256)]
    types = [NORMAL] * 256
    merges = []
    for word in ["Hello", "\u0120world", "user", "assistant", "\u0120Hi", "\u010a\u010a", "of"]:
        left = word[0]
        for c in word[1:]:
            merges.append(left + " " + c)
            if left + c not in pieces:
                pieces.append(left + c)
                types.append(NORMAL)
            left += c
    for text, kind in [("<|begin_of_text|>", CONTROL), ("<|end_of_text|>", CONTROL), ("<|start_header_id|>", CONTROL),
                       ("<|end_header_id|>", CONTROL), ("<|eot_id|>", CONTROL), ("<unk>", UNKNOWN),
                       ("<|reserved|>", UNUSED), ("of_text", USER_DEFINED)]:
        pieces.append(text)
        types.append(kind)
    m = hparams()
    m.update({"general.name": "llama3-style-bpe", "tokenizer.ggml.model": "gpt2", "tokenizer.ggml.pre": "llama-bpe",
              "tokenizer.ggml.tokens": pieces, "tokenizer.ggml.token_type": types, "tokenizer.ggml.merges": merges,
              "tokenizer.ggml.bos_token_id": pieces.index("<|begin_of_text|>"),
              "tokenizer.ggml.eos_token_id": pieces.index("<|end_of_text|>"),
              "tokenizer.ggml.eot_token_id": pieces.index("<|eot_id|>"), "tokenizer.ggml.add_bos_token": True})
    m["llama.vocab_size"] = len(pieces)
    write_gguf(path, m, [])


def spm(path, name, specials):
    """SentencePiece vocabulary: <unk> <s> </s>, the byte pieces, the prefixes of a few words, specials."""
    pieces, scores, types = vocabulary(3 + 256 + 1)  # with the 256 byte pieces
    for word in [SP + "user", SP + "Hello", "user", "Hello", SP + "assistant", SP + "Hi", SP + "world"]:
        for k in range(1, len(word) + 1):
            if word[:k] not in pieces:
                pieces.append(word[:k])
                scores.append(float(k))
                types.append(NORMAL)
    for text, kind in specials:
        pieces.append(text)
        scores.append(0.0)
        types.append(kind)
    m = hparams()
    m.update({"general.name": name, "tokenizer.ggml.model": "llama", "tokenizer.ggml.tokens": pieces,
              "tokenizer.ggml.scores": scores, "tokenizer.ggml.token_type": types,
              "tokenizer.ggml.bos_token_id": 1, "tokenizer.ggml.eos_token_id": 2, "tokenizer.ggml.unknown_token_id": 0})
    m["llama.vocab_size"] = len(pieces)
    write_gguf(path, m, [])


TEXTS = {
    "llama3-bpe.gguf": [
        "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHello world<|eot_id|>",
        "Hello<|end_of_text|>world", "<|end_of_text|>", "<unk>Hello", "<|reserved|>", "Hello of_text world",
        "<|eot_id|><|eot_id|>", "<|start_header_id", " <|eot_id|> ", "<|end_of_text", "",
    ],
    "chatml-spm.gguf": [
        "<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n", "Hello<|im_end|>world", "<s>Hello</s>",
        "<|im_start|> Hello", "<unk><unk>", "Hello <tool_call> world", "<|im_start|><|im_end|>", "<|im_start", "",
    ],
    "phi3-spm.gguf": [
        "<|user|>\nHello<|end|>\n<|assistant|>\n", "<s> Hello</s> world", "<|system|>  \n Hi<|end|>", "<|endoftext|> Hi",
        "<unk> Hi",
    ],
}
REAL_TEXTS = {
    "vocab-gguf/ggml-vocab-gpt-2.gguf": [
        "Hello<|endoftext|>World", "<|endoftext|>", " <|endoftext|> x", "<|endoftext|><|endoftext|>", "<|endoftext",
    ],
    "vocab-gguf/ggml-vocab-bert-bge.gguf": [
        "[CLS] hello [SEP] world [MASK]", "hello[SEP]world", "[PAD][UNK]", "[cls] hello",
    ],
    "../../data/stories260k/stories260K.gguf": [
        "<s>Once upon</s> a time<unk>", "Hello <s> world", "<s>", "</s></s>", "Lily<unk>",
    ],
}


def escape(text):
    return text.replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t")


def run_tool(tool, lib_dir, model, texts, add_special, parse_special):
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False, encoding="utf-8") as f:
        f.write("".join(escape(t) + "\n" for t in texts))
        name = f.name
    try:
        out = subprocess.run([tool, lib_dir, model, name, str(int(add_special)), str(int(parse_special))],
                             check=True, capture_output=True, text=True).stdout
    finally:
        os.unlink(name)
    lines = out.splitlines()
    assert len(lines) == len(texts), (model, len(lines), len(texts))
    return [json.loads(line) for line in lines]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out")
    p.add_argument("--tool", required=True, help="scripts/llamacpp_tokenize.c, built")
    p.add_argument("--lib-dir", required=True, help="the folder of libllama.v0.4.0.so (npm @node-llama-cpp/linux-x64 3.21.1)")
    a = p.parse_args()
    llama3_bpe(os.path.join(a.out, "llama3-bpe.gguf"))
    spm(os.path.join(a.out, "chatml-spm.gguf"), "chatml-spm",
        [("<|im_start|>", CONTROL), ("<|im_end|>", CONTROL), ("<tool_call>", USER_DEFINED)])
    spm(os.path.join(a.out, "phi3-spm.gguf"), "Phi-3-mini-4k-instruct",
        [("<|user|>", CONTROL), ("<|assistant|>", CONTROL), ("<|system|>", CONTROL), ("<|end|>", CONTROL),
         ("<|endoftext|>", CONTROL)])
    data_dir = os.path.dirname(os.path.abspath(a.out.rstrip("/")))
    files = [(name, os.path.join(a.out, name), texts) for name, texts in TEXTS.items()]
    files += [(os.path.normpath(os.path.join("..", name)), os.path.normpath(os.path.join(data_dir, name)), texts)
              for name, texts in REAL_TEXTS.items()]
    expected = {"generator": "scripts/special_tokens_reference.py: llama_tokenize of npm @node-llama-cpp/linux-x64 3.21.1",
                "files": []}
    for name, path, texts in files:
        cases = []
        for add_special in (True, False):
            for parse_special in (True, False):
                ids = run_tool(a.tool, a.lib_dir, path, texts, add_special, parse_special)
                cases += [{"text": t, "add_special": add_special, "parse_special": parse_special, "ids": i}
                          for t, i in zip(texts, ids)]
        expected["files"].append({"file": name, "cases": cases})
    with open(os.path.join(a.out, "expected.json"), "w", encoding="utf-8") as f:
        json.dump(expected, f, ensure_ascii=False, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
