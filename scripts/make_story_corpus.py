#!/usr/bin/python3
"""Writes data/corpus/stories260k_stories.txt: 520 short stories, one per line, written by the
bundled stories260K model itself (greedy continuation of a one-sentence opening), so that the
corpus fits the model's vocabulary and style. Each line is the opening followed by the model's
continuation (newlines turned into spaces). Deterministic: rerunning writes the same file.
Usage: scripts/make_story_corpus.py [build/attnviz]   (run from the repository root)
"""
import os
import subprocess
import sys
import tempfile

ATTNVIZ = sys.argv[1] if len(sys.argv) > 1 else "build/attnviz"
MODEL = "data/stories260k/stories260K.gguf"
OUT = "data/corpus/stories260k_stories.txt"
GENERATE = 40  # tokens of continuation: opening + continuation stays under 64 tokens

NAMES = ["Tom", "Lily", "Ben", "Mia", "Sam", "Anna", "Max", "Sue", "Tim", "Lucy", "Jack", "Emma", "Bob",
         "Amy", "Jake", "Sara", "Leo", "Zoe", "Dan", "Kate", "Joe", "Mandy", "Timmy", "Sally", "Billy", "Jill"]
OPENINGS = [
    "Once upon a time, there was a little girl named {n}.",
    "Once upon a time, there was a little boy named {n}.",
    "One day, {n} went to the park with mom.",
    "{n} had a big red ball.",
    "{n} liked to play in the garden.",
    "One sunny day, {n} found a shiny stone.",
    "{n} and the dog went for a walk.",
    "{n} wanted to bake a cake.",
    "There was a small cat that lived with {n}.",
    "{n} saw a bird in the tree.",
    "It was a rainy day and {n} was sad.",
    "{n} loved to read books.",
    "{n} had a toy car that was very fast.",
    "At school, {n} made a new friend.",
    "{n} went to the beach with dad.",
    "{n} was very hungry.",
    "One night, {n} saw the moon.",
    "{n} and mom went to the shop.",
    "{n} found a little box under the bed.",
    "{n} was playing with a kite.",
]


def story(opening, scratch):
    result = subprocess.run([ATTNVIZ, "dump", "--model", MODEL, "--text", opening, "--generate", str(GENERATE),
                             "--layers", "0", "-o", scratch], capture_output=True, text=True, check=True)
    for line in result.stdout.splitlines():
        if line.startswith('generated: "') and line.endswith('"'):
            generated = line[len('generated: "'):-1].replace("\\x0a", " ")
            return " ".join((opening + " " + generated).split())
    raise SystemExit("no generated text for: " + opening)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        lines = [story(o.format(n=n), os.path.join(tmp, "dump.json")) for o in OPENINGS for n in NAMES]
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    print("wrote %s: %d stories" % (OUT, len(lines)))


if __name__ == "__main__":
    main()
