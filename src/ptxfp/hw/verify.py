"""Verify forms on a GPU against ``ptxfp.execute``, bit for bit.

``verify_form(runner, spelling, n_random)`` runs the form's kernel (native, or decomposed where
the GPU cannot run it) over targeted and random vectors and compares each result with ptxfp's;
``sweep_form`` does the same over an exhaustive sweep.  Each returns a ``FormResult``: vectors
run, mismatches, and the first few mismatching inputs with both results.
"""

import time
from dataclasses import asdict, dataclass, field

import numpy as np

from . import vectors as V
from .forms import model, operand_widths, parse_form as parse, result_width
from .kernels import kernel_for
from .runner import KernelError

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
    complete: bool = True           #: False when a time budget cut the run short
    error: str = None
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


def compare(ins, operands, got, expected, result, limit=EXAMPLES):
    """Count the vectors where ``got`` and ``expected`` differ into ``result`` and keep the first
    ``limit`` of them (inputs and both results in hex).  Mismatches only in NaN bits (both sides
    NaN in every differing lane) are counted apart too, and the examples show the others first:
    one NaN policy would otherwise fill every example."""
    got = np.asarray(got).reshape(-1)
    expected = np.asarray(expected).reshape(-1)
    if got.shape != expected.shape:
        raise ValueError(f"'{ins}': the GPU returned {got.size} results for {expected.size} "
                         "vectors")
    bad = np.flatnonzero(got != expected)
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
    expected = model(ins, *operands)
    return compare(ins, operands, got, expected, result, limit)


def _kernel(runner, ins, result):
    """The form's kernel for the runner's target, with its mode and target noted in ``result``;
    None (and the reason in ``result.error``) when there is none."""
    try:
        kernel = kernel_for(ins, runner.sm)
    except ValueError as exc:
        result.error = str(exc)
        return None
    result.mode, result.target = kernel.mode, kernel.target
    return kernel


def verify_form(runner, spelling, n_random=0, seed=0, limit=EXAMPLES, batch=1 << 24,
                deadline=None, extra_sets=()):
    """Targeted and ``n_random`` random vectors of one form on the GPU against ptxfp."""
    ins = parse(spelling)
    t0 = time.monotonic()
    result = FormResult(str(ins))
    kernel = _kernel(runner, ins, result)
    if kernel is None:
        return result
    try:
        for name, ops in V.vector_sets(ins, 0) + list(extra_sets):
            result.sets[name] = ops[0].size
            run_batch(runner, kernel, ins, ops, result, limit)
        done = 0
        while done < n_random:
            if deadline is not None and time.time() > deadline:
                result.complete = False
                break
            k = min(batch, n_random - done)
            ops = V.random_vectors(ins, k, seed=(seed, done))
            run_batch(runner, kernel, ins, ops, result, limit)
            done += k
        if done:
            result.sets["random"] = done
    except KernelError as exc:
        result.error = str(exc)
    result.seconds = time.monotonic() - t0
    return result


def sweep_form(runner, spelling, c_values=None, chunk=1 << 26, limit=EXAMPLES, deadline=None,
               progress=None):
    """The exhaustive sweep of one form (every (a, b) pair; fma once per fixed c)."""
    ins = parse(spelling)
    t0 = time.monotonic()
    result = FormResult(str(ins), kind="exhaustive")
    if not V.exhaustive_eligible(ins):
        result.error = "not sweepable (a 16-bit, c 32-bit: 2^48 pairs)"
        return result
    cs = V.exhaustive_c_values(ins, c_values)
    cw = 32 if getattr(ins, "mixed", False) else 16
    result.detail = V.exhaustive_description(ins) + (
        ", c = " + ", ".join(_hex(c, cw) for c in cs) if cs != (None,) else "")
    kernel = _kernel(runner, ins, result)
    if kernel is None:
        return result
    try:
        for c, start, stop, ops in V.exhaustive_chunks(ins, chunk, cs if cs != (None,) else None):
            if deadline is not None and time.time() > deadline:
                result.complete = False
                break
            run_batch(runner, kernel, ins, ops, result, limit)
            if progress:
                progress(result, c, stop)
    except KernelError as exc:
        result.error = str(exc)
    result.seconds = time.monotonic() - t0
    return result
