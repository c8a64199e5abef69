"""``--resume FILE``: exhaustive sweeps in pieces, over as many calls as they need.

The file records, per sweep (a form, and for fma one fixed c), which chunks are done, under
which ptxfp source (checksum) each was judged, and what they found (vectors, mismatches, the
first mismatching inputs).  Every call skips the chunks the file lists, runs what its budget
allows, and adds each chunk the moment it finishes (the file is replaced atomically: a call
killed at any point leaves a valid file).  The union of the chunks of all calls is the full
sweep; the report of the call that runs the last chunk says "complete", with the totals of
every call.

A file belongs to one piece of hardware and one chunking: the GPU (or the dry-run backend),
the backend and the chunk size.  Resuming with any other is refused, not mixed in.  The ptxfp
source may differ between calls: the GPU's answers do not change with it, so a chunk done stays
done, new chunks are judged by the model of the call that runs them, and ``sources(key)`` says
which sources judged a sweep's chunks (the report names them when there are more than one: its
counts from before a model change were judged by the old model).

Format (JSON): ``{"version": 2, "identity": {"hardware", "gpu", "backend", "chunk"},
"sweeps": {key: {"done": {source: [chunk starts]}, "vectors", "mismatches", "nan_only",
"examples"}}}``.  A version 1 file (one source in its identity, ``"done"`` a list of starts)
is read as every chunk judged under its identity's source.
"""

import json
import os

from ..errors import PtxfpError
from ..outputs import write_text

VERSION = 2

#: the identity a file must share with the run that resumes it
HARDWARE_KEYS = ("hardware", "gpu", "backend", "chunk")


class ResumeError(PtxfpError):
    """A --resume file that does not belong to this run (one line for the user)."""


def write_atomic(path, text, what="output"):
    """Write ``text`` to ``path`` through ptxfp.outputs: a regular file through a temporary file
    in the same directory and a rename (readers see the old file or the new one, never half of
    one), a FIFO or a device written to; a file-system error is one OutputError."""
    write_text(path, text, what=what)


class SweepState:
    """The chunks done so far, loaded from and saved to ``path``.

    ``identity``: the run's ``hardware``, ``gpu``, ``backend``, ``chunk`` (which the file must
    match) and ``source`` (the checksum the chunks this run does are recorded under)."""

    def __init__(self, path, identity):
        self.path = os.fspath(path)
        identity = dict(identity)
        self.source = str(identity.pop("source", None))
        self.identity = identity
        self.sweeps = {}
        if os.path.exists(self.path):
            try:
                with open(self.path) as f:
                    data = json.load(f)
                version = data.get("version")
                theirs = data.get("identity", {})
                sweeps = data.get("sweeps", {})
                if version == 1:          # one source for the whole file
                    old = str(theirs.get("source"))
                    for e in sweeps.values():
                        e["done"] = {old: list(e.get("done", []))}
                elif version != VERSION:
                    raise ResumeError(f"--resume {self.path}: not a resume file of a version "
                                      f"this ptxfp reads (1 or {VERSION})")
                for e in sweeps.values():
                    if not isinstance(e.get("done"), dict):
                        raise ValueError("a sweep without its chunks by source")
            except (OSError, ValueError, AttributeError, TypeError) as exc:
                if isinstance(exc, ResumeError):
                    raise
                raise ResumeError(f"--resume {self.path}: not a resume file ({exc})") from None
            for k, v in self.identity.items():
                if theirs.get(k) != v:
                    raise ResumeError(
                        f"--resume {self.path} was written with {k} = {theirs.get(k)!r}, this "
                        f"run has {v!r}: its chunks cannot be counted here (use a new file)")
            self.sweeps = sweeps

    def _entry(self, key):
        return self.sweeps.setdefault(key, {"done": {}, "vectors": 0, "mismatches": 0,
                                            "nan_only": 0, "examples": []})

    def is_done(self, key, start):
        return any(start in starts
                   for starts in self.sweeps.get(key, {}).get("done", {}).values())

    def done(self, key):
        return sorted(s for starts in self.sweeps.get(key, {}).get("done", {}).values()
                      for s in starts)

    def sources(self, key):
        """{source: chunks done under it} for the sweep ``key`` (sources with none left out)."""
        return {src: len(starts)
                for src, starts in sorted(self.sweeps.get(key, {}).get("done", {}).items())
                if starts}

    def totals(self, key):
        e = self.sweeps.get(key)
        if e is None:
            return {"vectors": 0, "mismatches": 0, "nan_only": 0, "examples": []}
        return {k: e[k] for k in ("vectors", "mismatches", "nan_only", "examples")}

    def record(self, key, start, stop, part, limit):
        """One chunk [start, stop) done with the counts of ``part`` (a FormResult), judged
        under this run's source; saved."""
        if self.is_done(key, start):
            return
        e = self._entry(key)
        e["done"].setdefault(self.source, []).append(start)
        e["vectors"] += stop - start
        e["mismatches"] += part.mismatches
        e["nan_only"] += part.nan_only
        e["examples"] += part.examples[:max(0, limit - len(e["examples"]))]
        self.save()

    def save(self):
        write_atomic(self.path, json.dumps({"version": VERSION, "identity": self.identity,
                                            "sweeps": self.sweeps}, indent=0) + "\n",
                     "--resume")


def judged_under(sources):
    """'' for a sweep judged under one ptxfp source (or none recorded); else the words naming
    every source and its chunks, for the report and the summary line."""
    if len(sources or {}) < 2:
        return ""
    return ("chunks judged under ptxfp sources "
            + ", ".join(f"{src} ({n})" for src, n in sorted(sources.items()))
            + ": counts from an older source were judged by that model")
