"""The SFU family's entry points: ``compute(spelling, *operands, target=...)`` and ``core(ins)``
(``dispatch.ENTRY``/``CORE``), per target.

A form on a target is the kernel of the sequence ptxas 13.5 emits for it there
(``KERNELS``, from ``SASS``), whose MUFU is the primitive of
``primitives``.  ``note(form, target)`` says which primitives were measured on that target and
which are assumed ("rcp: measured on sm_75 (ptx-math); assumed on sm_90"; the table is
``measured.PRIMITIVES``).  The target of ``core``'s plans is the
context's (``using_target``; ``DEFAULT_TARGET`` otherwise), read when a plan runs.
"""

from __future__ import annotations

import re
import zlib
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Iterator

import numpy as np
from numpy.typing import NDArray

from ... import policy
from ...core._jit import jit_cached, split
from ...errors import NoModelError, SpellingError
from ...isa.spelling import Instruction
from ..common import Plan, entry
from .kernels_gen import FUNCS, KERNELS, REFUSED
from .sass_data import SASS
from .sass_data import TARGETS as _RECORDED
from .measured import BY_MUFU, is_measured, provenance
from .measured import PRIMITIVES as PROVENANCE
from .primitives import MUFU
from .recorded import FORM as _RECORDABLE
from .recorded import table as _table
from .recorded import tables as _tables

__all__ = ["compute", "core", "plan", "note", "TARGETS", "DEFAULT_TARGET", "using_target",
           "modeled", "assumed", "primitives_of", "modeled_primitives"]

#: the targets whose sequences are recorded (sass_data.TARGETS)
TARGETS: tuple[str, ...] = tuple(_RECORDED)
#: the target when none is named: sm_75, the newest GPU whose primitives are measured
DEFAULT_TARGET = "sm_75"

_TARGET: ContextVar[str] = ContextVar("ptxfp_sfu_target", default=DEFAULT_TARGET)
#: a checksum of the package's kernel sources: part of every cached kernel's key
_SOURCE = zlib.crc32(b"".join(p.read_bytes() for p in sorted(Path(__file__).parent.glob("*.py"))))
_KERNELS: dict[str, Any] = {}


def check_target(target: str | None) -> str:
    """``target`` ('sm_90', 'sm_90a', 90) as a recorded target name, or SpellingError."""
    if target is None:
        return _TARGET.get()
    t = f"sm_{target}" if isinstance(target, int) else str(target)
    m = re.fullmatch(r"sm_(\d+)[af]?", t)
    base = f"sm_{m.group(1)}" if m else t
    if base not in TARGETS:
        raise SpellingError(f"target '{t}': the SFU forms are modeled on {', '.join(TARGETS)}",
                            token=t, rule="unknown-target")
    return base


@contextmanager
def using_target(target: str | None) -> Iterator[str]:
    """Run ``core``'s plans for ``target`` inside the block (the interpreter's hook)."""
    tok = _TARGET.set(check_target(target))
    try:
        yield _TARGET.get()
    finally:
        _TARGET.reset(tok)


def _form(ins: Instruction) -> str:
    return str(ins)


def modeled(form: str, target: str) -> bool:
    """Whether ptxfp computes ``form`` on ``target``: a model of its sequence and primitive,
    or a GPU's recorded table of it (``recorded``)."""
    return (form, target) in KERNELS or _table(form, target) is not None


def _anywhere(form: str) -> bool:
    return any(modeled(form, t) for t in TARGETS)


def _refuse(form: str, target: str) -> NoModelError:
    why = REFUSED.get((form, target))
    if why is None:
        why = "no public model of its SFU primitive" if (form, target) not in SASS \
            else "its sequence is not modeled"
        on = [t.target for t in _tables() if t.form == form]
        if on:
            why += f" (a GPU table of it is loaded for {', '.join(on)})"
        elif _RECORDABLE.fullmatch(form):
            why += " (python -m ptxfp.hw --record on a GPU records its table)"
    return NoModelError(f"'{form}' on {target} is not computed by ptxfp: {why}")


def primitives_of(form: str) -> list[str]:
    """The primitives (measured.PRIMITIVES' names: 'rcp', 'ex2' ...) of the MUFU instructions
    ptxas emits for ``form`` on any recorded target, ptxfp-computed or not; [] for none."""
    ops = {m.group(1) for t in TARGETS for s in SASS.get((form, t), ())
           for m in [re.search(r"MUFU\.(\w+)", s)] if m}
    return sorted(BY_MUFU[o] for o in ops if o in BY_MUFU)


def modeled_primitives(form: str) -> list[str]:
    """The form's primitives that ptxfp computes (primitives.MUFU)."""
    return [p for p in primitives_of(form) if PROVENANCE[p].mufu in MUFU]


def note(form: str, target: str | None = None) -> str:
    """Which of the form's primitives are measured on ``target`` and which are assumed, one
    line from measured.PRIMITIVES ('rcp: measured on sm_75 (ptx-math); assumed on sm_90');
    '<form>: no model on <target>' where ptxfp computes none of them."""
    t = check_target(target)
    tab = _table(form, t)
    if tab is not None and (form, t) not in KERNELS:
        return f"{form}: {tab.provenance()}"
    lines = SASS.get((form, t), ())
    ops = {m.group(1) for s in lines for m in [re.search(r"MUFU\.(\w+)", s)] if m}
    known = sorted(BY_MUFU[o] for o in ops if o in BY_MUFU and o in MUFU)
    if not known:
        return f"{form}: no model on {t}"
    return "; ".join(provenance(p, t) for p in known)


def assumed(form: str, target: str | None = None) -> bool:
    """Whether one of the form's computed primitives is assumed (not measured) on ``target``."""
    t = check_target(target)
    return any(not is_measured(p, t) for p in modeled_primitives(form)
               if (form, t) in SASS)


def _kernel(name: str) -> Any:
    k = _KERNELS.get(name)
    if k is None:
        k = jit_cached(FUNCS[name], ("ops.sfu", name, _SOURCE), nogil=True)
        _KERNELS[name] = k
    return k


def plan(ins: Instruction) -> Plan:
    form = _form(ins)
    sp = str(ins)
    if not _anywhere(form):
        raise _refuse(form, _TARGET.get())

    def run(ops: list[NDArray[Any]], n: int) -> NDArray[Any]:
        target = _TARGET.get()
        name = KERNELS.get((form, target))
        if name is None:
            tab = _table(form, target)
            if tab is None:
                raise _refuse(form, target)
            return tab(ops[0])
        a = np.ascontiguousarray(ops[0], np.uint32)
        b = np.ascontiguousarray(ops[1], np.uint32) if len(ops) > 1 else a
        out = np.empty(n, np.uint32)
        if n:
            k = _kernel(name)
            nan = np.uint32(policy.current().canonical_nan("f32", sp))
            # large arrays in pieces over the thread pool, as the other kernels (the kernel
            # releases the GIL)
            split(lambda lo, hi: k(a[lo:hi], b[lo:hi], out[lo:hi], nan), n)
        return out
    return run


_compute, _core = entry("sfu", plan)


def core(ins: Instruction) -> Plan:
    """``fn(ops, n)`` of a form on checked 1-D operands, for the target of the context
    (``using_target``); NoModelError for a form ptxfp computes on no target (tanh, the half
    types, .f64), which the interpreter reports at the instruction's position."""
    if not _anywhere(str(ins)):
        raise _refuse(str(ins), _TARGET.get())
    return _core(ins)


def compute(spelling: str | Instruction, *operands: Any, out: Any = None,
            target: str | None = None) -> Any:
    """Run an SFU form (``ex2.approx.f32``, ``div.full.ftz.f32`` ...) on ``target`` (default
    sm_75): bits or float32 in and out, as ``ptxfp.compute``.

        >>> hex(compute("ex2.approx.f32", 0x3F000000))          # 2^0.5
        '0x3fb504f3'
        >>> hex(compute("rsqrt.approx.f32", 0x40800000, target="sm_90"))
        '0x3f000000'
    """
    with using_target(target):
        return _compute(spelling, *operands, out=out)
