"""``--resume FILE``: exhaustive sweeps in pieces, over as many calls as they need.

The file records, per sweep (a form, and for fma one fixed c), which chunks are done and what
they found (vectors, mismatches, the first mismatching inputs).  Every call skips the chunks
the file lists, runs what its budget allows, and adds each chunk the moment it finishes (the
file is replaced atomically: a call killed at any point leaves a valid file).  The union of the
chunks of all calls is the full sweep; the report of the call that runs the last chunk says
"complete", with the totals of every call.

A file belongs to one sweep definition: the ptxfp source (checksum), the chunk size, and the
GPU (or the dry-run backend).  Resuming with anything else is refused, not mixed in.
"""

import json
import os

from ..errors import PtxfpError
from ..outputs import write_text

VERSION = 1


class ResumeError(PtxfpError):
    """A --resume file that does not belong to this run (one line for the user)."""


def write_atomic(path, text, what="output"):
    """Write ``text`` to ``path`` through ptxfp.outputs: a regular file through a temporary file
    in the same directory and a rename (readers see the old file or the new one, never half of
    one), a FIFO or a device written to; a file-system error is one OutputError."""
    write_text(path, text, what=what)


class SweepState:
    """The chunks done so far, loaded from and saved to ``path``."""

    def __init__(self, path, identity):
        self.path = os.fspath(path)
        self.identity = dict(identity)
        self.sweeps = {}
        if os.path.exists(self.path):
            try:
                with open(self.path) as f:
                    data = json.load(f)
            except (OSError, ValueError) as exc:
                raise ResumeError(f"--resume {self.path}: not a resume file ({exc})") from None
            if data.get("version") != VERSION:
                raise ResumeError(f"--resume {self.path}: not a resume file of this version")
            theirs = data.get("identity", {})
            for k, v in self.identity.items():
                if theirs.get(k) != v:
                    raise ResumeError(
                        f"--resume {self.path} was written with {k} = {theirs.get(k)!r}, this "
                        f"run has {v!r}: its chunks cannot be counted here (use a new file)")
            self.sweeps = data.get("sweeps", {})

    def _entry(self, key):
        return self.sweeps.setdefault(key, {"done": [], "vectors": 0, "mismatches": 0,
                                            "nan_only": 0, "examples": []})

    def is_done(self, key, start):
        return start in self.sweeps.get(key, {}).get("done", ())

    def done(self, key):
        return sorted(self.sweeps.get(key, {}).get("done", ()))

    def totals(self, key):
        e = self.sweeps.get(key)
        if e is None:
            return {"vectors": 0, "mismatches": 0, "nan_only": 0, "examples": []}
        return {k: e[k] for k in ("vectors", "mismatches", "nan_only", "examples")}

    def record(self, key, start, stop, part, limit):
        """One chunk [start, stop) done with the counts of ``part`` (a FormResult); saved."""
        e = self._entry(key)
        if start in e["done"]:
            return
        e["done"].append(start)
        e["vectors"] += stop - start
        e["mismatches"] += part.mismatches
        e["nan_only"] += part.nan_only
        e["examples"] += part.examples[:max(0, limit - len(e["examples"]))]
        self.save()

    def save(self):
        write_atomic(self.path, json.dumps({"version": VERSION, "identity": self.identity,
                                            "sweeps": self.sweeps}, indent=0) + "\n",
                     "--resume")
