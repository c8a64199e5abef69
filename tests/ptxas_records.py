"""Reading ptxas' recorded decisions (tests/data/ptxas/*.jsonl): a header line, then one JSON
record a line; the tests that hold ptxfp to them share this reader."""

import json
import os


def load_records(path):
    """(header, records) of a .jsonl record file, or None when it is missing."""
    if not os.path.exists(path):
        return None
    with open(path) as f:
        lines = f.read().splitlines()
    return json.loads(lines[0]), [json.loads(ln) for ln in lines[1:]]
