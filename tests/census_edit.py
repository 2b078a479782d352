"""Makes a hostile census.json for the `census --merge` input checks (tests/census_tests.cmake):
copies SRC/census.json to DST/census.json with one named edit applied, so each refused input is
a real shard output changed in one place (no hand-made copies are committed). A journal_* edit
writes DST/texts.jsonl only, SRC's journal with its first text line changed (for --resume; a
journal_header_* edit changes its header line); a
mixed_* edit writes SRC's census.json beside a journal of another run (for --merge).

Usage: census_edit.py SRC DST EDIT
"""
import copy
import json
import os
import re
import sys


def head(d, i):
    return d["heads"][i]


def shift_mean(stat, mean):
    """Moves a statistic's mean and its interval together, so only the new mean is at fault."""
    delta = mean - stat["mean"]
    stat.update(mean=mean, ci95_low=stat["ci95_low"] + delta, ci95_high=stat["ci95_high"] + delta)


def set_m2(stat, m2):
    """Changes a statistic's m2 with its std and interval (the same t quantile), so only m2 is at fault."""
    std = (m2 / (stat["texts"] - 1)) ** 0.5
    half = (stat["ci95_high"] - stat["mean"]) * std / stat["std"]
    stat.update(m2=m2, std=std, ci95_low=stat["mean"] - half, ci95_high=stat["mean"] + half)


def set_sink_rate(h, k):
    """Makes k of the head's texts sinks: sink_rate's mean, m2, std and interval as a run writes them."""
    stat, n = h["sink_rate"], h["sink_rate"]["texts"]
    like = h["entropy_mean"]  # another statistic over the same n texts: its interval gives t / sqrt(n)
    t_over_root_n = (like["ci95_high"] - like["mean"]) / like["std"]
    mean, m2 = k / n, k * (n - k) / n
    std = (m2 / (n - 1)) ** 0.5
    stat.update(mean=mean, m2=m2, std=std, ci95_low=mean - t_over_root_n * std, ci95_high=mean + t_over_root_n * std)


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
    # 2b. what n texts of a bounded statistic allow (the shard holds 2 texts of <= 16 tokens)
    "m2_above_bound": lambda d: head(d, 0)["max_weight_mean"].update(m2=0.6),
    "always_defined_texts": lambda d: head(d, 1)["entropy_mean"].update(texts=1),
    "sink_rate_fraction": lambda d: head(d, 0)["sink_rate"].update(mean=0.25),
    "sink_rate_m2": lambda d: head(d, 0)["sink_rate"].update(mean=0.5, m2=0.125),
    "entropy_above_max_tokens": lambda d: head(d, 0)["entropy_mean"].update(mean=3.0),
    "distance_above_max_tokens": lambda d: head(d, 0)["mean_distance"].update(mean=15.5),
    "tokens_below_texts": lambda d: d["covers"].update(tokens=1),
    "tokens_above_max_tokens": lambda d: d["covers"].update(tokens=33),
    "covers_nothing": lambda d: d["covers"].update(texts=0, tokens=0, ranges=[]),
    "texts_above_limit": lambda d: d["settings"].update(limit=3),
    "skipped_without_skip": lambda d: d["corpus"].update(skipped_lines=1),
    "skip_without_skipped": lambda d: d["settings"].update(skip_bad_lines=True),
    "layers_not_canonical": lambda d: d["settings"].update(layers="0-4"),
    "truncate_false": lambda d: d["settings"].update(truncate=False),
    "one_token_texts_differ": lambda d: head(d, 0)["previous_token_score"].update(texts=1, m2=0.0, std=None, ci95_low=None,
                                                                               ci95_high=None),
    "first_token_mass_above_sinks": lambda d: shift_mean(head(d, 0)["first_token_mass"], 0.5),
    # 2c. relations between statistics (a second hostile tester): each value in range on its own
    "sink_rate_texts": lambda d: head(d, 0)["sink_rate"].update(texts=1, mean=0.0, m2=0.0, std=None, ci95_low=None, ci95_high=None),
    "previous_score_above_mass": lambda d: shift_mean(head(d, 0)["previous_token_score"],
                                                      head(d, 0)["previous_token_mass"]["mean"] + 0.001),
    "induction_texts_differ": lambda d: head(d, 1)["induction_score"].update(texts=1, m2=0.0, std=None, ci95_low=None, ci95_high=None),
    "first_token_mass_below_sinks": lambda d: [head(d, 0)["sink_rate"].update(mean=1.0, m2=0.0, std=0.0, ci95_low=1.0, ci95_high=1.0),
                                               shift_mean(head(d, 0)["first_token_mass"], 0.001)],
    "first_token_mass_m2_no_sinks": lambda d: set_m2(head(d, 0)["first_token_mass"], 0.05),
    "first_token_mass_m2_one_sink": lambda d: [set_sink_rate(head(d, 0), 1), set_m2(head(d, 0)["first_token_mass"], 0.06)],
    "tokens_too_few": lambda d: d["covers"].update(tokens=3),
    "distance_above_causal": lambda d: shift_mean(head(d, 0)["mean_distance"], d["covers"]["tokens"] / 4 - 0.25),
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
    "m2_negative_zero": (r'"m2": [^,\n]+', '"m2": -0.0'),
}


JOURNAL = {  # --resume: the first text line of SRC/texts.jsonl changed
    "journal_head_missing": lambda t: t["heads"].pop(5),
    "journal_head_twice": lambda t: t["heads"].append(copy.deepcopy(t["heads"][3])),
    "journal_head_unknown": lambda t: t["heads"][0].__setitem__(3, 8),
    "journal_value_range": lambda t: t["heads"][0][4].__setitem__(2, 1.5),
    "journal_entropy_above_tokens": lambda t: t["heads"][0][4].__setitem__(0, 9.0),
    "journal_sink_half": lambda t: t["heads"][0][4].__setitem__(8, 0.5),
    "journal_null_never": lambda t: t["heads"][0][4].__setitem__(0, None),
    "journal_string_value": lambda t: t["heads"][0][4].__setitem__(1, "0.5"),
    "journal_tokens_zero": lambda t: t.update(tokens=0),
    "journal_tokens_above": lambda t: t.update(tokens=17),
    "journal_unknown_member": lambda t: t.update(note="edited"),
    "journal_one_token_null": lambda t: t["heads"][0][4].__setitem__(9, None),
    "journal_one_token_all_null": lambda t: [t["heads"][0][4].__setitem__(s, None) for s in (1, 5, 7, 9, 10, 11)],
    "journal_mass_without_sink": lambda t: t["heads"][0][4].__setitem__(6, 0.5),
    "journal_sink_without_mass": lambda t: [t["heads"][0][4].__setitem__(8, 1), t["heads"][0][4].__setitem__(6, 0.001)],
    "journal_score_above_mass": lambda t: t["heads"][0][4].__setitem__(9, t["heads"][0][4][5] + 0.001),
    "journal_induction_one_head": lambda t: t["heads"][1][4].__setitem__(7, None if t["heads"][1][4][7] is not None else 0.5),
    "journal_distance_above_causal": lambda t: t["heads"][0][4].__setitem__(3, (t["tokens"] - 1) / 2 + 0.5),
}

HEADER = {  # --resume: the header line of SRC/texts.jsonl changed
    "journal_header_unknown": lambda h: h.update(comment="edited"),
    "journal_header_unknown_setting": lambda h: h["settings"].update(temperature=0.7),
    "journal_header_limit_float": lambda h: h["settings"].update(limit=float(h["settings"]["limit"])),
}

MIXED = {  # --merge: SRC's census.json beside the journal of another run
    "mixed_settings": lambda h: h["settings"].update(sink_epsilon=0.5),
    "mixed_shard": lambda h: h.update(shard="1/2"),
}


def edit_journal(src, dst, edit):
    with open(os.path.join(src, "texts.jsonl")) as f:
        lines = [json.loads(line) for line in f]
    if edit in JOURNAL:
        JOURNAL[edit](lines[1])
    elif edit in HEADER:
        HEADER[edit](lines[0])
    else:
        MIXED[edit](lines[0])
        with open(os.path.join(src, "census.json")) as f, open(os.path.join(dst, "census.json"), "w") as g:
            g.write(f.read())
    with open(os.path.join(dst, "texts.jsonl"), "w") as f:
        f.writelines(json.dumps(line, separators=(",", ":")) + "\n" for line in lines)


def main():
    known = list(EDITS) + list(RAW) + list(JOURNAL) + list(HEADER) + list(MIXED)
    if len(sys.argv) != 4 or sys.argv[3] not in known:
        sys.exit(__doc__ + "\nEDIT: " + ", ".join(known))
    src, dst, edit = sys.argv[1:]
    if edit in JOURNAL or edit in HEADER or edit in MIXED:
        os.makedirs(dst, exist_ok=True)
        return edit_journal(src, dst, edit)
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
