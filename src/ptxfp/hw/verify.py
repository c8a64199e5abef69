"""Verify forms on a GPU against ``ptxfp.execute``, bit for bit.

``verify_form(runner, spelling, n_random)`` runs the form's kernel (native, or decomposed where
the GPU cannot run it) over targeted and random vectors and compares each result with ptxfp's;
``sweep_form`` does the same over an exhaustive sweep.  Each returns a ``FormResult``: vectors
run, mismatches, and the first few mismatching inputs with both results.
"""

import concurrent.futures as _cf
import time
from dataclasses import asdict, dataclass, field

import numpy as np

from ..vectors.harness import (SET_RANDOM, c_bits, exhaustive_c_values, exhaustive_description,
                      exhaustive_eligible, exhaustive_operands, exhaustive_ranges,
                      random_vectors, vector_sets)
from .forms import model, operand_widths, parse_form as parse, result_width
from .kernels import NOT_RUNNABLE, kernel_for
from .runner import Constant

#: mismatching vectors kept per form
EXAMPLES = 5


def _hex(v, width):
    return "0x%0*X" % (width // 4, v)


@dataclass
class FormResult:
    spelling: str
    mode: str = "native"            #: 'native' or 'decomposed'
    target: str = ""
    kind: str = "vectors"           #: 'vectors' (targeted + random) or 'exhaustive'
    detail: str = ""                #: what was swept (exhaustive: c values)
    vectors: int = 0
    mismatches: int = 0
    nan_only: int = 0               #: mismatches where every differing lane is NaN on both sides
    examples: list = field(default_factory=list)   #: [{'a': '0x..', ..., 'gpu': .., 'model': ..}]
    sets: dict = field(default_factory=dict)       #: vector set name -> vectors run
    complete: bool = True           #: False when a time budget cut the run short (or an error)
    error: str = None               #: why (part of) the form could not run
    cut: str = None                 #: what was left out when not complete
    resumed: int = 0                #: exhaustive: vectors counted from earlier calls (--resume)
    chunks: int = 0                 #: exhaustive: chunks run by this call
    sources: dict = field(default_factory=dict)    #: --resume: ptxfp source -> chunks it judged
    seconds: float = 0.0

    @property
    def ok(self):
        return self.error is None and self.mismatches == 0

    def to_dict(self):
        return asdict(self)


def _widths(ins):
    return list(operand_widths(ins)), result_width(ins)


def nan_lanes(bits, fmt, lanes):
    """Per element, a mask of the bits of its NaN lanes (``fmt``: the lane format)."""
    bits = np.asarray(bits).astype(np.uint64)
    if fmt == "f32":
        return np.where((bits & 0x7FFFFFFF) > 0x7F800000, np.uint64(0xFFFFFFFF), np.uint64(0))
    inf = 0x7C00 if fmt == "f16" else 0x7F80
    m = np.zeros_like(bits)
    for lane in range(lanes):
        h = (bits >> np.uint64(16 * lane)) & np.uint64(0xFFFF)
        m |= np.where((h & np.uint64(0x7FFF)) > np.uint64(inf),
                      np.uint64(0xFFFF << (16 * lane)), np.uint64(0))
    return m


def mismatch_indices(got, expected, threads=1):
    """Indices where ``got`` and ``expected`` (1-D, one size) differ; ``threads`` threads over
    slices for large arrays (NumPy releases the GIL for the comparison)."""
    n = expected.size
    if threads <= 1 or n < (1 << 22):
        return np.flatnonzero(got != expected)
    step = -(-n // threads)

    def part(lo):
        hi = min(n, lo + step)
        return np.flatnonzero(got[lo:hi] != expected[lo:hi]) + lo

    with _cf.ThreadPoolExecutor(threads) as pool:
        return np.concatenate(list(pool.map(part, range(0, n, step))))


def compare(ins, operands, got, expected, result, limit=EXAMPLES, threads=1):
    """Count the vectors where ``got`` and ``expected`` differ into ``result`` and keep the first
    ``limit`` of them (inputs and both results in hex).  Mismatches only in NaN bits (both sides
    NaN in every differing lane) are counted apart too, and the examples show the others first:
    one NaN policy would otherwise fill every example."""
    got = np.asarray(got).reshape(-1)
    expected = np.asarray(expected).reshape(-1)
    if got.shape != expected.shape:
        raise ValueError(f"'{ins}': the GPU returned {got.size} results for {expected.size} "
                         "vectors")
    bad = mismatch_indices(got, expected, threads)
    result.vectors += expected.size
    result.mismatches += bad.size
    if not bad.size:
        return 0
    g, e = got[bad], expected[bad]
    diff = (g.astype(np.uint64) ^ e.astype(np.uint64))
    both = nan_lanes(g, ins.result_format, ins.lanes) & nan_lanes(e, ins.result_format,
                                                                   ins.lanes)
    nan_only = (diff & ~both) == 0
    result.nan_only += int(nan_only.sum())
    widths, dwidth = _widths(ins)
    room = max(0, limit - len(result.examples))
    order = np.concatenate([np.flatnonzero(~nan_only), np.flatnonzero(nan_only)])[:room]
    for k in sorted(order.tolist()):
        i = bad[k]
        ex = {n: _hex(int(op[i]), w) for n, op, w in zip(ins.operand_names, operands, widths)}
        ex["gpu"] = _hex(int(got[i]), dwidth)
        ex["model"] = _hex(int(expected[i]), dwidth)
        result.examples.append(ex)
    return bad.size


def run_batch(runner, kernel, ins, operands, result, limit=EXAMPLES):
    """Run one batch of vectors on the GPU and against the model; returns mismatches."""
    got = runner.run(kernel, dict(zip(ins.operand_names, operands)))
    expected = model(ins, *operands, sm=runner.sm)
    return compare(ins, operands, got, expected, result, limit)


def could_not_run(exc):
    """The one line a form's report gets for an error of the GPU, its backend or the harness."""
    text = str(exc).strip().splitlines()
    return f"could not run: {type(exc).__name__}: {text[0] if text else ''}".rstrip(": ")


def _kernel(runner, ins, result):
    """The form's kernel for the runner's target, with its mode and target noted in ``result``;
    None (and the reason in ``result.error``) when there is none."""
    try:
        kernel = kernel_for(ins, runner.sm)
    except Exception as exc:                  # no kernel, or the runner cannot say its sm
        result.error = str(exc) if isinstance(exc, ValueError) else could_not_run(exc)
        result.complete = False
        return None
    result.mode, result.target = kernel.mode, kernel.target
    if kernel.mode == NOT_RUNNABLE:
        result.error = (f"not runnable on sm_{runner.sm}: '{ins}' exists on "
                        f"{', '.join(parse(ins).row.targets)} only")
        result.complete = False
        return None
    return kernel


def _past(deadline):
    return deadline is not None and time.time() > deadline


def verify_form(runner, spelling, n_random=0, seed=0, limit=EXAMPLES, batch=1 << 22,
                deadline=None, n_targeted=0):
    """One form on the GPU against ptxfp: the special grid, ``n_targeted`` vectors of the
    package's targeted families (ptxfp.vectors), ``n_random`` random vectors in batches.

    Never raises for a failure of the GPU or its backend: the form's ``error`` says it could
    not run (and ``complete`` is False).  ``deadline`` (time.time()) is checked before every
    set and batch: a form cut short says so (``complete`` False, ``cut``)."""
    ins = parse(spelling)
    t0 = time.monotonic()
    result = FormResult(str(ins))
    kernel = _kernel(runner, ins, result)
    if kernel is None:
        result.seconds = time.monotonic() - t0
        return result
    done = 0
    try:
        for name, ops in vector_sets(ins, 0, seed, n_targeted):
            if _past(deadline):
                result.complete, result.cut = False, f"time budget spent before the {name} set"
                break
            run_batch(runner, kernel, ins, ops, result, limit)
            result.sets[name] = int(ops[0].size)
        while result.complete and done < n_random:
            if _past(deadline):
                result.complete = False
                result.cut = f"time budget spent after {done:,} of {n_random:,} random vectors"
                break
            k = min(batch, n_random - done)
            ops = random_vectors(ins, k, seed=(seed, done))
            run_batch(runner, kernel, ins, ops, result, limit)
            done += k
    except Exception as exc:
        result.error, result.complete = could_not_run(exc), False
    if done:
        result.sets[SET_RANDOM] = done
    result.seconds = time.monotonic() - t0
    return result


def sweep_key(spelling, c):
    return str(spelling) if c is None else f"{spelling} c=0x{c:X}"


def sweep_form(runner, spelling, c_values=None, chunk=1 << 26, limit=EXAMPLES, deadline=None,
               progress=None, state=None, threads=1, max_chunks=None):
    """The exhaustive sweep of one form (every (a, b) pair; fma once per fixed c).

    The fixed c goes to the runner as a ``Constant`` (filled on the GPU once), the a and b of a
    chunk are built by ``threads`` threads, and the comparison too.  ``state`` (a
    ``resume.SweepState``) skips the chunks earlier calls finished, counts their results in,
    and records every chunk done here as it finishes; ``max_chunks`` stops after that many
    chunks (a piece of the sweep).  Never raises for a GPU failure (``error``)."""
    ins = parse(spelling)
    t0 = time.monotonic()
    result = FormResult(str(ins), kind="exhaustive")
    if not exhaustive_eligible(ins):
        result.error = "not sweepable (a 16-bit, c 32-bit: 2^48 pairs)"
        result.complete = False
        return result
    cs = exhaustive_c_values(ins, c_values)
    cw = 32 if getattr(ins, "mixed", False) else 16
    result.detail = exhaustive_description(ins) + (
        ", c = " + ", ".join(_hex(c, cw) for c in cs) if cs != (None,) else "")
    kernel = _kernel(runner, ins, result)
    if kernel is None:
        return result
    ranges = list(exhaustive_ranges(ins, chunk, cs if cs != (None,) else None))
    todo = []
    if state is not None:
        for key in dict.fromkeys(sweep_key(ins, c) for c, _, _ in ranges):
            t = state.totals(key)
            result.vectors += t["vectors"]
            result.resumed += t["vectors"]
            result.mismatches += t["mismatches"]
            result.nan_only += t["nan_only"]
            result.examples += t["examples"][:max(0, limit - len(result.examples))]
    for c, start, stop in ranges:
        if state is None or not state.is_done(sweep_key(ins, c), start):
            todo.append((c, start, stop))
    names = [x for x in ins.operand_names if x != "c"]
    ran = 0
    try:
        for c, start, stop in todo:
            if _past(deadline) or (max_chunks is not None and ran >= max_chunks):
                break
            ab = exhaustive_operands(ins, start, stop, threads)
            n = stop - start
            if c is None:
                gpu_ops, model_ops, shown = dict(zip(names, ab)), ab, ab
            else:
                cb = c_bits(ins, c)
                gpu_ops = {**dict(zip(names, ab)), "c": Constant(cb)}
                model_ops = (*ab, cb)
                cdt = np.uint32 if cw == 32 or ins.lanes == 2 else np.uint16
                shown = (*ab, np.broadcast_to(np.array(cb, cdt), (n,)))
            part = FormResult(result.spelling, kind="exhaustive")
            got = runner.run(kernel, gpu_ops)
            expected = model(ins, *model_ops, sm=runner.sm)
            compare(ins, shown, got, expected, part, max(0, limit - len(result.examples)),
                    threads)
            result.vectors += part.vectors
            result.mismatches += part.mismatches
            result.nan_only += part.nan_only
            result.examples += part.examples
            if state is not None:
                state.record(sweep_key(ins, c), start, stop, part, limit)
            ran += 1
            result.chunks = ran
            if progress:
                progress(result, c, stop)
    except Exception as exc:
        result.error = could_not_run(exc)
    if state is not None:
        for key in dict.fromkeys(sweep_key(ins, c) for c, _, _ in ranges):
            for src, n in state.sources(key).items():
                result.sources[src] = result.sources.get(src, 0) + n
    remaining = len(todo) - ran
    if remaining:
        result.complete = False
        why = ("an error" if result.error else "--chunks-per-call" if
               (max_chunks is not None and ran >= max_chunks and not _past(deadline))
               else "the time budget")
        result.cut = (f"{len(ranges) - remaining} of {len(ranges)} chunks done; stopped by "
                      f"{why}" + ("; --resume continues it" if state is not None else ""))
    result.seconds = time.monotonic() - t0
    return result
