#!/usr/bin/python3
"""Cross-check of attnviz against torch.nn.MultiheadAttention (PyTorch's own implementation).

Usage: tests/torch_crosscheck.py PATH/TO/attnviz

For seeded random layers (self- and cross-attention, n_q != n_k, kdim/vdim != embed_dim, with
and without biases, key padding, causal masks, 1 to 8 heads, embed_dim up to 64), exports the
layer and its input with scripts/export_torch_mha.py, runs `attnviz dump --outputs`, and
compares with PyTorch in float32, eval mode, need_weights=True, average_attn_weights=False:
  attention weights  [h][n_q][n_k]  tolerance 1e-5
  W_O output         [n_q][d_out]   tolerance 1e-4
No case masks every key of a query (PyTorch 1.13 returns NaN there; attnviz returns zeros, see
tests/attention-cases.md, BH-01). Prints the largest differences per case and a closing "N passed, M failed"
line; exits 1 on any failure, 77 (CTest's skip code here) if PyTorch is not installed.
"""

import json
import math
import os
import subprocess
import sys
import tempfile

SKIP = 77
WEIGHTS_TOLERANCE = 1e-5
OUTPUT_TOLERANCE = 1e-4

try:
    import torch
    from torch import nn
except ImportError as e:  # the test installs nothing; the README's setup installs python3-torch
    print(f"SKIP: cannot import torch ({e}); install Debian's python3-torch to run this check")
    sys.exit(SKIP)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts"))
from export_torch_mha import export_mha  # noqa: E402

SCRIPTS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts")

# name, embed_dim, heads, n_q, n_k (None = self), kdim, vdim, bias, causal, padded key indices
CASES = [
    ("self, 1 head, biases", 8, 1, 5, None, None, None, True, False, []),
    ("self, 2 heads, causal", 16, 2, 7, None, None, None, True, True, []),
    ("self, 4 heads, no bias, padding", 32, 4, 6, None, None, None, False, False, [4, 5]),
    ("self, 8 heads, causal + padding", 64, 8, 9, None, None, None, True, True, [3, 8]),
    ("cross, 2 heads, fused in_proj, padding", 16, 2, 6, 3, None, None, False, False, [1]),
    ("cross, 4 heads, kdim=vdim=10, padding", 24, 4, 3, 7, 10, 10, True, False, [0, 6]),
    ("cross, 8 heads, kdim=20 vdim=12", 64, 8, 9, 5, 20, 12, True, False, []),
    ("cross, 1 head, kdim=vdim=5, no bias", 6, 1, 4, 11, 5, 5, False, False, [2, 3, 7]),
]


def make_layer(seed, embed_dim, heads, kdim, vdim, bias):
    torch.manual_seed(seed)
    mha = nn.MultiheadAttention(embed_dim, heads, bias=bias, kdim=kdim, vdim=vdim, batch_first=False).eval()
    if bias:  # PyTorch initialises biases to zero, which would leave them untested
        nn.init.normal_(mha.in_proj_bias)
        nn.init.normal_(mha.out_proj.bias)
    return mha


def torch_reference(mha, x_q, x_k, x_v, causal, pad):
    """PyTorch's weights [h, n_q, n_k] and output [n_q, embed_dim] for one sequence."""
    n_q, n_k = x_q.shape[0], x_k.shape[0]
    attn_mask = None
    if causal:
        attn_mask = torch.triu(torch.full((n_q, n_k), float("-inf")), diagonal=1)
    key_padding_mask = pad.unsqueeze(0) if pad.any() else None
    with torch.no_grad():
        out, weights = mha(x_q.unsqueeze(1), x_k.unsqueeze(1), x_v.unsqueeze(1), key_padding_mask=key_padding_mask,
                           need_weights=True, attn_mask=attn_mask, average_attn_weights=False)
    return weights[0], out[:, 0, :]


def max_diff(actual, expected):
    """Largest |a - e|; NaN (or a missing value, None) counts as infinitely far."""
    a = torch.tensor(actual, dtype=torch.float64)
    if a.shape != expected.shape:
        raise AssertionError(f"shape {list(a.shape)}, expected {list(expected.shape)}")
    d = (a - expected.to(torch.float64)).abs()
    return math.inf if torch.isnan(d).any() else d.max().item()


def has_nan(value):
    if isinstance(value, list):
        return any(has_nan(v) for v in value)
    return value is None or (isinstance(value, float) and not math.isfinite(value))


def run_case(attnviz, folder, index, case):
    name, embed_dim, heads, n_q, n_k, kdim, vdim, bias, causal, padded = case
    mha = make_layer(1000 + index, embed_dim, heads, kdim, vdim, bias)
    cross = n_k is not None
    n_k = n_k if cross else n_q
    x_q = torch.randn(n_q, embed_dim)
    x_k = torch.randn(n_k, mha.kdim) if cross else x_q
    x_v = (x_k if mha.vdim == mha.kdim else torch.randn(n_k, mha.vdim)) if cross else x_q
    pad = torch.zeros(n_k, dtype=torch.bool)
    pad[padded] = True

    paths = {k: os.path.join(folder, f"case{index}_{k}.json") for k in ("weights", "sentence", "source", "dump")}
    export_mha(mha, [f"q{i}" for i in range(n_q)], x_q, paths["weights"], paths["sentence"],
               paths["source"] if cross else None, key_tokens=[f"k{i}" for i in range(n_k)] if cross else None,
               key_x=x_k if cross else None, value_x=x_v if cross else None,
               key_padding_mask=pad if padded else None)
    command = [attnviz, "dump", paths["sentence"], paths["weights"], "--outputs", "-o", paths["dump"]]
    if cross:
        command += ["--source", paths["source"]]
    if causal:
        command.append("--causal")
    run = subprocess.run(command, capture_output=True, text=True)
    if run.returncode != 0:
        raise AssertionError(f"attnviz exited {run.returncode}: {run.stderr.strip()}")
    dump = json.load(open(paths["dump"]))

    weights, output = torch_reference(mha, x_q, x_k, x_v, causal, pad)
    if torch.isnan(weights).any():
        raise AssertionError("PyTorch returned NaN: the case masks a whole row, choose another")
    if has_nan(dump["weights"]) or has_nan(dump["output"]):
        raise AssertionError("attnviz wrote NaN, infinity or null in weights or output")
    d_weights = max_diff(dump["weights"], weights)
    d_output = max_diff(dump["output"], output)
    # For information: the same layer in float64, i.e. attnviz's own float32 rounding.
    weights64, output64 = torch_reference(mha.double(), x_q.double(), x_k.double(), x_v.double(), causal, pad)
    d64 = max(max_diff(dump["weights"], weights64), max_diff(dump["output"], output64))
    ok = d_weights <= WEIGHTS_TOLERANCE and d_output <= OUTPUT_TOLERANCE
    print(f"{'ok  ' if ok else 'FAIL'} case {index} ({name}; h={heads}, n_q={n_q}, n_k={n_k}): "
          f"weights max diff {d_weights:.2e} (tol {WEIGHTS_TOLERANCE:g}), "
          f"output max diff {d_output:.2e} (tol {OUTPUT_TOLERANCE:g}); vs float64 PyTorch {d64:.2e}")
    return ok


def check_demo_command(attnviz, folder):
    """The demo's printed command runs from where the demo was run (issue 24: it once printed a bare
    `attnviz`, which needs the binary on PATH). Run from a folder outside the repository, its first
    word must name the repository's build/attnviz from there; the rest is run with the tested binary
    (which may be another build folder's)."""
    demo = subprocess.run([sys.executable, os.path.join(SCRIPTS, "export_torch_mha.py"), "--demo", "demo"],
                          cwd=folder, capture_output=True, text=True)
    if demo.returncode != 0:
        raise AssertionError(f"the demo exited {demo.returncode}: {demo.stderr.strip()}")
    line = next((l for l in demo.stdout.splitlines() if " dump " in l), None)
    if line is None:
        raise AssertionError(f"the demo printed no dump command:\n{demo.stdout}")
    words = line.split()
    expected = os.path.join(os.path.dirname(SCRIPTS), "build", "attnviz")
    if os.path.realpath(os.path.join(folder, words[0])) != os.path.realpath(expected):
        raise AssertionError(f"the demo's command starts with {words[0]!r}, which is not {expected} from {folder}")
    run = subprocess.run([attnviz] + words[1:], cwd=folder, capture_output=True, text=True)
    if run.returncode != 0:
        raise AssertionError(f"the demo's command exited {run.returncode}: {run.stderr.strip()}")
    print(f"ok   demo command: {line}")
    return True


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    attnviz = os.path.abspath(argv[1])
    torch.set_num_threads(1)
    print(f"PyTorch {torch.__version__}, attnviz {attnviz}")
    passed = failed = 0
    with tempfile.TemporaryDirectory(prefix="attnviz_torch_") as folder:
        for index, case in enumerate(CASES):
            try:
                ok = run_case(attnviz, folder, index, case)
            except (AssertionError, OSError, ValueError, KeyError, json.JSONDecodeError) as e:
                print(f"FAIL case {index} ({case[0]}): {type(e).__name__}: {e}")
                ok = False
            passed += ok
            failed += not ok
        try:
            ok = check_demo_command(attnviz, folder)
        except (AssertionError, OSError) as e:
            print(f"FAIL demo command: {e}")
            ok = False
        passed += ok
        failed += not ok
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
