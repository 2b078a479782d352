#!/usr/bin/python3
"""Independent reference for the byte-level BPE pre-tokenizers (src/model/tokenizers/bpe_pre_tokenizer.cpp),
and the generator of tests/fixtures/bpe_pre_tokenizer_golden.json.

The patterns are the ones Hugging Face's tokenizer.json files give (llama3 and qwen2 with their
original case-insensitive (?i:...) group, which llama.cpp rewrites as [sS] classes), matched with
Python's `regex` module, the engine the patterns were written for. As in llama.cpp's
unicode_regex_split, each pattern of a list splits every piece the previous ones made into its
matches and the text between them.

Usage: scripts/pre_tokenizer_reference.py INP [OUT]
  INP: llama.cpp's tokenizer test strings (e.g. tests/data/vocab-gguf/ggml-vocab-gpt-2.gguf.inp),
  each followed by a line __ggml_vocab_test__. A few strings of unusual spaces, digits and marks
  are added. OUT defaults to tests/fixtures/bpe_pre_tokenizer_golden.json.
Needs python3-regex (Debian).
"""

import json
import os
import sys

import regex

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

GPT2 = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"
LLAMA3 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
          r"|\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN2 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
         r"|\s*[\r\n]+|\s+(?!\S)|\s+")
PRE_TOKENIZERS = {
    "gpt-2": [GPT2],
    "llama-bpe": [LLAMA3],
    "qwen2": [QWEN2],
    "default": [r"[\p{P}\$\+<=>\^~\|]+", GPT2, r"\p{N}+", "[0-9][0-9][0-9]"],
    "starcoder": [r"\p{N}", GPT2],
    "falcon": [r"[\p{P}\$\+<=>\^~\|`]+", GPT2, "[0-9][0-9][0-9]"],
}
EXTRA = [
    "  \u00a0\u3000x \r\n\r\n  y\t\t z'S 'Ll 1234567 \u0663\u0664 \u2160\u2161 a\u0301b \U0001F600\U0001F600 ",
    "I'M we'RE they'Ve (x) [1,234.5] $9 ~|^ `code`\n\n\tend",
]


def split(text, patterns):
    pieces = [text] if text else []
    for pattern in patterns:
        compiled = regex.compile(pattern)
        parts = []
        for piece in pieces:
            done = 0
            for match in compiled.finditer(piece):
                if match.start() > done:
                    parts.append(piece[done:match.start()])
                if match.end() > match.start():
                    parts.append(match.group())
                    done = match.end()
            if done < len(piece):
                parts.append(piece[done:])
        pieces = parts
    return pieces


def test_strings(path):
    marker = "\n__ggml_vocab_test__\n"
    with open(path, encoding="utf-8") as f:
        content = f.read()
    strings = []
    while marker in content:
        at = content.index(marker)
        strings.append(content[:at])
        content = content[at + len(marker):]
    return strings


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    out = sys.argv[2] if len(sys.argv) == 3 else os.path.join(ROOT, "tests/fixtures/bpe_pre_tokenizer_golden.json")
    strings = test_strings(sys.argv[1]) + EXTRA
    golden = {"strings": strings,
              "words": {pre: [split(s, patterns) for s in strings] for pre, patterns in PRE_TOKENIZERS.items()}}
    with open(out, "w", encoding="utf-8") as f:
        json.dump(golden, f, ensure_ascii=True, indent=None)
        f.write("\n")
    print(f"{out}: {len(strings)} strings x {len(PRE_TOKENIZERS)} pre-tokenizers")


if __name__ == "__main__":
    main()
