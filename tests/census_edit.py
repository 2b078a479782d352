"""Makes a hostile census.json for the `census --merge` input checks (tests/census_tests.cmake):
copies SRC/census.json to DST/census.json with one named edit applied, so each refused input is
a real shard output changed in one place (no hand-made copies are committed).

Usage: census_edit.py SRC DST EDIT
"""
import copy
import json
import os
import re
import sys


def head(d, i):
    return d["heads"][i]


EDITS = {
    "none": lambda d: None,
    # 1. the set of heads and statistics
    "head_missing": lambda d: d["heads"].pop(5),
    "head_twice": lambda d: d["heads"].append(copy.deepcopy(head(d, 3))),
    "head_layer_outside": lambda d: head(d, 0).update(layer=5),
    "head_index_outside": lambda d: head(d, 0).update(head=8),
    "head_layer_unselected": lambda d: d["settings"].update(layers="1-4"),
    "statistic_unknown": lambda d: d["statistics"].append("attention_to_bos"),
    "statistic_missing": lambda d: head(d, 2).pop("sink_rate"),
    "statistic_unlisted": lambda d: d["statistics"].remove("sink_rate"),
    # 2. counts and moments
    "count_above_texts": lambda d: head(d, 1)["entropy_mean"].update(texts=3),
    "count_negative": lambda d: head(d, 1)["entropy_mean"].update(texts=-1),
    "count_fraction": lambda d: head(d, 1)["entropy_mean"].update(texts=1.5),
    "m2_negative": lambda d: head(d, 1)["max_weight_mean"].update(m2=-0.25),
    "mean_null": lambda d: head(d, 1)["max_weight_mean"].update(mean=None),
    "mass_above_one": lambda d: head(d, 0)["first_token_mass"].update(mean=1.5),
    "entropy_negative": lambda d: head(d, 0)["entropy_mean"].update(mean=-0.5),
    "sink_rate_above_one": lambda d: head(d, 0)["sink_rate"].update(mean=1.25),
    "std_edited": lambda d: head(d, 0)["entropy_mean"].update(std=0.5),
    # 3. covers
    "covers_texts": lambda d: d["covers"].update(texts=3),
    "ranges_overlap": lambda d: d["covers"].update(ranges=[[0, 1], [1, 2]], texts=3),
    "ranges_unsorted": lambda d: d["covers"].update(ranges=list(reversed(d["covers"]["ranges"]))),
    "ranges_negative": lambda d: d["covers"].update(ranges=[[-1, -1]] + d["covers"]["ranges"][1:]),
    "limit_wrapped": lambda d: d["settings"].update(limit=2**64 - 1),  # read as a long long: -1
    "corpus_texts": lambda d: d["covers"].update(corpus_texts=5),
    "model_name": lambda d: d.update(model_name="stories15M"),
    "range_beyond_corpus": lambda d: d["covers"].update(ranges=d["covers"]["ranges"][:-1] + [[4, 4]]),
    # 4. members attnviz does not know, at every level
    "unknown_top": lambda d: d.update(comment="edited"),
    "unknown_model": lambda d: d["model"].update(revision="main"),
    "unknown_corpus": lambda d: d["corpus"].update(lines=4),
    "unknown_settings": lambda d: d["settings"].update(temperature=0.7),
    "unknown_covers": lambda d: d["covers"].update(skipped=0),
    "unknown_head": lambda d: head(d, 3).update(foo=1),
    "unknown_statistic_member": lambda d: head(d, 3)["entropy_mean"].update(median=0.9),
    # 6. settings that differ from another input's
    "sink_epsilon": lambda d: d["settings"].update(sink_epsilon=0.5),
    "two_settings": lambda d: d["settings"].update(sink_epsilon=0.5, no_bos=True),
}

RAW = {  # 2. non-finite numbers: JSON has none, and an overflowing one must not become inf
    "m2_overflow": (r'"m2": [^,\n]+', '"m2": 1e999'),
    "mean_overflow": (r'"mean": [^,\n]+', '"mean": -1e999'),
}


def main():
    if len(sys.argv) != 4 or (sys.argv[3] not in EDITS and sys.argv[3] not in RAW):
        sys.exit(__doc__ + "\nEDIT: " + ", ".join(list(EDITS) + list(RAW)))
    src, dst, edit = sys.argv[1:]
    with open(os.path.join(src, "census.json")) as f:
        text = f.read()
    if edit in RAW:
        pattern, value = RAW[edit]
        text = re.sub(pattern, value, text, count=1)
    else:
        d = json.loads(text)
        EDITS[edit](d)
        text = json.dumps(d, indent=1) + "\n"
    os.makedirs(dst, exist_ok=True)
    with open(os.path.join(dst, "census.json"), "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
