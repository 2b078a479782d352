#!/usr/bin/python3
"""P3 peer: Python's json.load of a weights file, nothing else (interpreter start included;
`python3 -c pass` is measured alongside so it can be subtracted)."""
import json
import sys

with open(sys.argv[1]) as f:
    json.load(f)
