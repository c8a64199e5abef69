"""The SFU forms no one has published a model of, computed from a GPU's recorded answers.

``tanh.approx`` and ``ex2.approx`` on ``.f16``/``.f16x2``/``.bf16``/``.bf16x2`` take one 16-bit
input a lane, so a GPU's answer for each of the 2^16 inputs is the whole form on that GPU.
``python -m ptxfp.hw --record DIR`` writes them, for every such form the GPU's target accepts,
into ``DIR/gpu_approx.npz`` (keys ``'<spelling>/a'``, the inputs, ``'<spelling>/d'``, the GPU's
results, ``'meta'``: the GPU, its sm, the date; hw/record.py, hw/approx.py: a packed form's
vector ``i`` holds input ``i`` in lane 0 and ``i ^ 0x8000`` in lane 1, so each lane sees every
input).  ``load(path)`` reads such a file and computes those forms on that GPU's target from
then on, lane by lane; the files in this package's ``gpu_tables/`` folder are loaded on first
use (copy a GPU run's ``gpu_approx.npz`` there, renamed after the GPU and date, to ship it).

A table is a measurement of one GPU: it computes its own target only (``sm_90`` for an
H100), and ``note`` says which GPU and when.  The ``.f32`` forms are recorded as a sample
(2^32 inputs do not fit a table), so they stay without a model.  Nothing is taken from a dry
run (``meta['hardware']`` false: ptxfp playing the GPU), and a file that lacks an input, has
two answers for one, or whose sm is not a target ptxfp knows is refused with one line.
"""

from __future__ import annotations

import json
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ...errors import FormatError
from .kernels_gen import KERNELS
from .sass_data import TARGETS

__all__ = ["Table", "load", "table", "tables", "FOLDER", "FORM"]

#: the tables shipped with ptxfp (``*.npz`` in the layout of ``gpu_approx.npz``)
FOLDER = Path(__file__).parent / "gpu_tables"
#: the forms a table can carry: one 16-bit input a lane
FORM = re.compile(r"(ex2|tanh)\.approx(\.ftz)?\.(f16|bf16)(x2)?")


@dataclass(frozen=True)
class Table:
    """One form on one target, as a GPU answered: ``lanes[k][x]`` is lane ``k``'s result bits
    for the input bits ``x`` (one lane for .f16/.bf16, two for the packed types)."""
    form: str
    target: str
    lanes: tuple[NDArray[np.uint16], ...]
    gpu: str
    date: str
    source: str

    def provenance(self) -> str:
        """'measured on sm_90 (GPU table: NVIDIA H100 80GB HBM3, 2026-12-01)'."""
        return f"measured on {self.target} (GPU table: {self.gpu}, {self.date})"

    def __call__(self, a: NDArray[Any]) -> NDArray[Any]:
        if len(self.lanes) == 1:
            one: NDArray[np.uint16] = self.lanes[0][np.asarray(a, np.uint16)]
            return one
        a = np.asarray(a, np.uint32)
        lo = self.lanes[0][a & np.uint32(0xFFFF)].astype(np.uint32)
        hi = self.lanes[1][a >> np.uint32(16)].astype(np.uint32)
        both: NDArray[np.uint32] = lo | (hi << np.uint32(16))
        return both


_TABLES: dict[tuple[str, str], Table] | None = None


def _registry() -> dict[tuple[str, str], Table]:
    global _TABLES
    if _TABLES is None:
        shipped: dict[tuple[str, str], Table] = {}
        for path in sorted(FOLDER.glob("*.npz")):
            shipped.update({(t.form, t.target): t for t in _read(path)})
        _TABLES = shipped            # set once every shipped file has been read: all or none
    return _TABLES


def _lane_table(form: str, inputs: NDArray[Any], results: NDArray[Any], what: str) -> NDArray[
        np.uint16]:
    """The 2^16-entry table of one lane, or FormatError when an input is missing or has two
    answers."""
    inputs = np.asarray(inputs).astype(np.int64)
    results = np.asarray(results).astype(np.uint16)
    out = np.zeros(1 << 16, np.uint16)
    seen = np.zeros(1 << 16, bool)
    order = np.argsort(inputs, kind="stable")
    x, r = inputs[order], results[order]
    if x.size and (x[0] < 0 or x[-1] > 0xFFFF):
        raise FormatError(f"{what}: '{form}' has inputs outside 16 bits")
    dup = np.flatnonzero((x[1:] == x[:-1]) & (r[1:] != r[:-1]))
    if dup.size:
        raise FormatError(f"{what}: '{form}' has two answers for input 0x{int(x[dup[0]]):04x}")
    out[x] = r
    seen[x] = True
    if not seen.all():
        raise FormatError(f"{what}: '{form}' lacks {int((~seen).sum())} of the 65,536 inputs "
                          f"(the first: 0x{int(np.flatnonzero(~seen)[0]):04x}); a table needs "
                          "every one")
    return out


def load(path: str | Path) -> list[Table]:
    """Compute the forms recorded in ``path`` (a ``gpu_approx.npz`` of ``python -m ptxfp.hw
    --record``) on its GPU's target from now on; the tables it held.  A form with a model of
    its own keeps it (a recording never replaces a computed form; ptxfp.hw --replay compares
    them).  FormatError (one line) for a file that is not such a recording."""
    got = _read(path)
    _registry().update({(t.form, t.target): t for t in got})
    return got


def _read(path: str | Path) -> list[Table]:
    """The tables of one recording (``load``'s checks), registering nothing."""
    p = Path(path)
    what = str(p)
    try:
        with np.load(p, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as e:
        raise FormatError(f"{what}: not a recording of ptxfp.hw "
                          f"({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})"
                          ) from None
    if "meta" not in arrays:
        raise FormatError(f"{what}: no 'meta' entry: not a recording of ptxfp.hw --record")
    try:
        meta = json.loads(str(arrays["meta"]))
    except ValueError:
        raise FormatError(f"{what}: its 'meta' entry is not JSON") from None
    if not isinstance(meta, dict):
        raise FormatError(f"{what}: its 'meta' entry is not a JSON object")
    if not meta.get("hardware"):
        raise FormatError(f"{what}: a dry run (ptxfp played the GPU), not a GPU's answers")
    target = f"sm_{meta.get('sm')}"
    if target not in TARGETS:
        raise FormatError(f"{what}: recorded on {target}; the SFU forms know "
                          f"{', '.join(TARGETS)}")
    gpu = str(meta.get("gpu") or "a GPU")
    date = str(meta.get("date") or "undated")
    got = []
    for key in sorted(arrays):
        if not key.endswith("/d"):
            continue
        form = key[:-2]
        if not FORM.fullmatch(form) or (form, target) in KERNELS:
            continue
        a, d = arrays.get(f"{form}/a"), arrays[key]
        if a is None or a.shape != d.shape:
            raise FormatError(f"{what}: '{form}' has {'no' if a is None else 'other'} inputs "
                              "beside its results")
        if form.endswith("x2"):
            a, d = a.astype(np.uint32), d.astype(np.uint32)
            lanes: tuple[NDArray[np.uint16], ...] = (
                _lane_table(form, a & 0xFFFF, d & 0xFFFF, what + " lane 0"),
                _lane_table(form, a >> 16, d >> 16, what + " lane 1"))
        else:
            lanes = (_lane_table(form, a, d, what),)
        got.append(Table(form, target, lanes, gpu, date, what))
    return got


def table(form: str, target: str) -> Table | None:
    """The recorded table of ``form`` on ``target``, or None."""
    return _registry().get((form, target))


def tables() -> list[Table]:
    """Every table loaded (the shipped ones and those of ``load``)."""
    return list(_registry().values())
