#!/usr/bin/env python3
"""Independent float64 numpy forward pass of a CTranslate2 Transformer model directory, for
checking attnviz's C++ reader (src/model/ct2_*.cpp; this file shares no code with it).

Reads model.bin (binary versions 2-6; float32 and float16 variables; aliases), runs the
encoder on the source tokens and the decoder teacher-forced on <s> + the target tokens, and
prints one JSON object: {"cross": [layer][head][query][key], "log_probs": [T]} where log_probs
are the log-probabilities of each target token and of </s> at the end.

Settings read as CTranslate2 stores them: encoder/decoder num_heads, pre_norm, activation
(0 relu, 1 gelu tanh, 2 swish, 3 gelu erf, 4 gelu sigmoid, 5 tanh); layer norm epsilon 1e-5;
sinusoidal positions from 1, sines then cosines (tensor2tensor). Pre-norm: x += f(LN(x));
post-norm: x = LN(x + f(x)); the final layer norms are used when the file has them.

Usage: ct2_reference.py MODEL_DIR "SOURCE TOKENS" "TARGET TOKENS"
Exit code 77 when numpy is missing.
"""

import json
import math
import os
import struct
import sys

try:
    import numpy as np
except ImportError:
    print("ct2_reference.py: numpy is missing (Debian package python3-numpy)", file=sys.stderr)
    sys.exit(77)

DTYPES = {0: np.float32, 1: np.int8, 2: np.int16, 3: np.int32, 4: np.float16}
ITEM_SIZES = {4: np.float32, 2: np.int16, 1: np.int8}
EPS = 1e-5


def read_model(path):
    data = open(path, "rb").read()
    pos = [0]

    def take(n):
        chunk = data[pos[0]:pos[0] + n]
        pos[0] += n
        return chunk

    def u(fmt):
        return struct.unpack("<" + fmt, take(struct.calcsize(fmt)))[0]

    def string():
        return take(u("H")).rstrip(b"\0").decode("utf-8")

    version = u("I")
    spec = string()
    u("I")
    variables = {}
    for _ in range(u("I")):
        name = string()
        shape = [u("I") for _ in range(u("B"))]
        code = u("B")
        count = u("I")
        if version >= 4:
            dtype = DTYPES[code]
            raw = take(count)
        else:
            dtype = ITEM_SIZES[code]
            raw = take(count * code)
        variables[name] = np.frombuffer(raw, dtype=dtype).reshape(shape).astype(np.float64)
    if version >= 3:
        for _ in range(u("I")):
            alias = string()
            variables[alias] = variables[string()]
    return spec, variables


def read_vocabulary(folder, role):
    for name in (role + "_vocabulary.txt", role + "_vocabulary.json", "shared_vocabulary.txt",
                 "shared_vocabulary.json"):
        path = os.path.join(folder, name)
        if os.path.exists(path):
            if name.endswith(".json"):
                tokens = json.load(open(path, encoding="utf-8"))
            else:
                tokens = open(path, "rb").read().decode("utf-8").split("\n")
                if tokens and tokens[-1] == "":
                    tokens.pop()
            if "<unk>" not in tokens:
                tokens.append("<unk>")
            return {token: i for i, token in reversed(list(enumerate(tokens)))}
    raise SystemExit("no %s vocabulary in %s" % (role, folder))


def activation(kind, x):
    if kind == 0:
        return np.maximum(x, 0)
    if kind == 1:
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    if kind == 2:
        return x / (1 + np.exp(-x))
    if kind == 3:
        return 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))
    if kind == 4:
        return x / (1 + np.exp(-1.702 * x))
    if kind == 5:
        return np.tanh(x)
    raise SystemExit("unknown activation %d" % kind)


class Model:
    def __init__(self, folder):
        self.spec, self.v = read_model(os.path.join(folder, "model.bin"))
        self.source = read_vocabulary(folder, "source")
        self.target = read_vocabulary(folder, "target")

    def setting(self, stack, key, default):
        for name in (stack + "/" + key, key):
            if name in self.v:
                return int(self.v[name].reshape(-1)[0])
        return default

    def layer_norm(self, scope, x):
        mean = x.mean(axis=-1, keepdims=True)
        var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
        return (x - mean) / np.sqrt(var + EPS) * self.v[scope + "/gamma"] + self.v[scope + "/beta"]

    def dense(self, scope, x):
        return x @ self.v[scope + "/weight"].T + self.v[scope + "/bias"]

    def attention(self, heads, q, k, v, mask):
        d = q.shape[1] // heads
        weights, context = [], []
        for h in range(heads):
            cols = slice(h * d, (h + 1) * d)
            scores = q[:, cols] @ k[:, cols].T / math.sqrt(d)
            if mask is not None:
                scores = np.where(mask, scores, -np.inf)
            scores = np.exp(scores - scores.max(axis=1, keepdims=True))
            a = scores / scores.sum(axis=1, keepdims=True)
            weights.append(a)
            context.append(a @ v[:, cols])
        return weights, np.concatenate(context, axis=1)

    def sublayer(self, pre_norm, norm, x, fn):
        if pre_norm:
            return x + fn(self.layer_norm(norm, x))
        return self.layer_norm(norm, x + fn(x))

    def embed(self, stack, ids):
        name = stack + "/embeddings_0/weight"
        table = self.v[name if name in self.v else stack + "/embeddings/weight"]
        d = table.shape[1]
        x = table[ids] * math.sqrt(d)
        half = d // 2
        t = np.arange(1, len(ids) + 1)[:, None]
        inv = np.exp(-np.arange(half) * math.log(10000) / (half - 1))[None, :]
        return x + np.concatenate([np.sin(t * inv), np.cos(t * inv)], axis=1)

    def ffn(self, stack, scope, x):
        act = self.setting(stack, "activation", 0)
        return self.dense(scope + "/linear_1", activation(act, self.dense(scope + "/linear_0", x)))

    def run(self, source_ids, input_ids):
        d = self.v["encoder/embeddings_0/weight" if "encoder/embeddings_0/weight" in self.v
                   else "encoder/embeddings/weight"].shape[1]
        heads = self.setting("encoder", "num_heads", 16 if self.spec == "TransformerBig" else 8)
        pre = self.setting("encoder", "pre_norm", 1) != 0
        x = self.embed("encoder", source_ids)
        i = 0
        while "encoder/layer_%d/ffn/linear_0/weight" % i in self.v:
            s = "encoder/layer_%d" % i

            def self_attn(h, s=s):
                qkv = self.dense(s + "/self_attention/linear_0", h)
                _, c = self.attention(heads, qkv[:, :d], qkv[:, d:2 * d], qkv[:, 2 * d:], None)
                return self.dense(s + "/self_attention/linear_1", c)
            x = self.sublayer(pre, s + "/self_attention/layer_norm", x, self_attn)
            x = self.sublayer(pre, s + "/ffn/layer_norm", x, lambda h, s=s: self.ffn("encoder", s + "/ffn", h))
            i += 1
        memory = self.layer_norm("encoder/layer_norm", x) if "encoder/layer_norm/gamma" in self.v else x

        y = self.embed("decoder", input_ids)
        n = len(input_ids)
        causal = np.tril(np.ones((n, n), dtype=bool))
        cross = []
        i = 0
        while "decoder/layer_%d/ffn/linear_0/weight" % i in self.v:
            s = "decoder/layer_%d" % i

            def self_attn(h, s=s):
                qkv = self.dense(s + "/self_attention/linear_0", h)
                _, c = self.attention(heads, qkv[:, :d], qkv[:, d:2 * d], qkv[:, 2 * d:], causal)
                return self.dense(s + "/self_attention/linear_1", c)

            def cross_attn(h, s=s):
                q = self.dense(s + "/attention/linear_0", h)
                kv = self.dense(s + "/attention/linear_1", memory)
                w, c = self.attention(heads, q, kv[:, :d], kv[:, d:], None)
                cross.append([a.tolist() for a in w])
                return self.dense(s + "/attention/linear_2", c)
            y = self.sublayer(pre, s + "/self_attention/layer_norm", y, self_attn)
            y = self.sublayer(pre, s + "/attention/layer_norm", y, cross_attn)
            y = self.sublayer(pre, s + "/ffn/layer_norm", y, lambda h, s=s: self.ffn("decoder", s + "/ffn", h))
            i += 1
        if "decoder/layer_norm/gamma" in self.v:
            y = self.layer_norm("decoder/layer_norm", y)
        logits = self.dense("decoder/projection", y)
        top = logits.max(axis=1, keepdims=True)
        log_probs = logits - top - np.log(np.exp(logits - top).sum(axis=1, keepdims=True))
        return cross, log_probs


def main():
    if len(sys.argv) != 4:
        raise SystemExit(__doc__)
    model = Model(sys.argv[1])
    unk_s, unk_t = model.source["<unk>"], model.target["<unk>"]
    source_ids = [model.source.get(t, unk_s) for t in sys.argv[2].split()]
    target_ids = [model.target.get(t, unk_t) for t in sys.argv[3].split()]
    input_ids = [model.target["<s>"]] + target_ids
    cross, log_probs = model.run(source_ids, input_ids)
    predicted = target_ids + [model.target["</s>"]]
    json.dump({"cross": cross, "log_probs": [float(log_probs[t, i]) for t, i in enumerate(predicted)]},
              sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
