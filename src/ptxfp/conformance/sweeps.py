"""``ptxfp sweep``: compare ptxfp with another implementation over arrays of bits, in chunks,
in this process or on Dask distributed (a LocalCluster, or a real cluster by address).

The implementation is a Python function ``f(*operands) -> result`` over NumPy arrays of bits
(operands in PTX order, as ``ptxfp.execute`` takes them), or a C function in a shared library:

- ``kind="array"`` (default): ``void f(const uintA_t *a, const uintB_t *b[, const uintC_t *c],
  uintD_t *out, size_t n)``, one call per chunk;
- ``kind="elementwise"``: ``uintD_t f(uintA_t a, uintB_t b[, uintC_t c])``, called per element
  from a Numba-compiled loop (no Python in between).

with ``uint16_t`` for .f16/.bf16 and ``uint32_t`` for .f32 and the packed .f16x2/.bf16x2.

Vectors: ``exhaustive`` (every operand combination of the form: 2^32 pairs of a two-operand
16-bit form, 2^48 triples of a three-operand one, 2^48 (a, c) of the mixed add/sub; packed
forms carry pair i in lane 0 and pair i + half the space in lane 1; cvt: every input, packed
with b = ~a), or ``random=N`` (chunk 0 is gen's targeted set: the special-value combinations
and ptxfp's own cases; then N random vectors of the generators gen uses).  Each chunk is one
task: it builds its vectors, runs ptxfp and the implementation and returns a small report;
chunks finished are appended to ``checkpoint/done.jsonl`` so that an interrupted sweep
resumes with nothing lost or counted twice.  A worker lost mid-sweep costs its chunk only:
Dask runs it again elsewhere.
"""

from __future__ import annotations

import ctypes
import dataclasses
import importlib
import importlib.util
import json
import os
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterable

import numpy as np

from .. import policy as _policy
from ..core import types
from ..errors import PtxfpError
from ..outputs import output_dir, output_error, write_text
from .classify import Report
from .common import SweepError
from .forms import Form, dtype, form as _form
import ptxfp.conformance.source as source  # a module: tests patch its names


# ---- the vectors of a sweep -------------------------------------------------------------------

@dataclass(frozen=True)
class Plan:
    """What a sweep covers: ``size`` vectors in chunks of ``chunk`` (random sweeps: chunk 0 is
    the targeted set, ``targeted`` vectors: special values and ptxfp's own cases)."""
    spelling: str
    mode: str                 #: 'exhaustive' or 'random'
    size: int
    chunk: int
    seed: int = 1
    targeted: int = 0

    @property
    def chunks(self) -> int:
        if self.mode == "random":
            return 1 + -(-(self.size - self.targeted) // self.chunk)
        return -(-self.size // self.chunk)


def _lane_bits(f: Form) -> list:
    """Bits of each operand of one lane, PTX order."""
    return [types.width(x) for x in f.lane_formats()]


def exhaustive_size(f: Form) -> int:
    """The number of vectors of an exhaustive sweep of the form."""
    if f.small:
        from .small import exhaustive_size
        return exhaustive_size(f)
    if f.cvt:
        return 1 << types.width(f.ins.atype)          # cvt sources are scalars
    bits = sum(_lane_bits(f))
    if bits > 48:
        raise SweepError(f"--exhaustive: '{f.spelling}' has 2^{bits} operand combinations "
                         "(a 32-bit c with two 16-bit operands); sweep it with --random N")
    return 1 << bits


def make_plan(spelling: str, exhaustive: bool = False, random: int | None = None,
              seed: int = 1, chunk: int | None = None) -> Plan:
    f = _form(spelling)
    if exhaustive == (random is not None):
        raise SweepError("give one of --exhaustive or --random N")
    if chunk is not None and chunk < 1:
        raise SweepError(f"--chunk {chunk}: a count >= 1")
    if exhaustive:
        return Plan(f.spelling, "exhaustive", exhaustive_size(f), chunk or (1 << 21), seed)
    if random < 0:
        raise SweepError(f"--random {random}: a count >= 0")
    t = int(np.shape(_first_chunk(f, seed)[0])[0])
    return Plan(f.spelling, "random", t + random, chunk or (1 << 20), seed, t)


def _first_chunk(f: Form, seed: int) -> tuple:
    """Chunk 0 of a random sweep: the special-value combinations and ptxfp's own targeted
    cases (ties, double-rounding witnesses), as gen's level 1 has them."""
    t = source.targeted(f, 1)
    own = source.own_targeted(f, 1, source.seed_of("own", f.spelling, seed))
    return tuple(np.concatenate([x, y.astype(x.dtype)]) for x, y in zip(t, own))


def chunk_operands(f: Form, plan: Plan, cid: int) -> tuple:
    """(operands, index of the first vector) of chunk ``cid``."""
    if plan.mode == "random":
        if cid == 0:
            return _first_chunk(f, plan.seed), 0
        base = plan.targeted + (cid - 1) * plan.chunk
        n = min(plan.chunk, plan.size - base)
        return source.random(f, n, source.seed_of("sweep", f.spelling, plan.seed, cid)), base
    start = cid * plan.chunk
    stop = min(plan.size, start + plan.chunk)
    n = stop - start
    if f.small:
        from .small import exhaustive
        return exhaustive(f, start, stop), start
    if f.cvt:
        i = np.arange(start, stop, dtype=np.uint64)
        if f.ins.atype != "f32":
            return (i.astype(np.uint16),), start
        a = i.astype(np.uint32)
        return ((a, ~a) if f.lanes == 2 else (a,)), start
    bits = _lane_bits(f)
    shifts = np.array([sum(bits[k + 1:]) for k in range(len(bits))], np.int64)
    masks = np.array([(1 << w) - 1 for w in bits], np.int64)
    outs = [np.empty(n, dtype(w)) for w in f.operand_widths]
    while len(outs) < 3:
        outs.append(outs[0])                       # unused slots (shift/mask never reached)
    half = plan.size // 2 if f.lanes == 2 else 0
    _fill(start, plan.size, half, len(bits), shifts, masks, outs[0], outs[1], outs[2])
    return tuple(outs[:len(bits)]), start


def _fill_py(start, size, half, k, shifts, masks, o0, o1, o2):
    """Vector i of an exhaustive sweep: its operand fields from the top bits down; packed
    forms put index i in lane 0 and index i + half (mod size) in lane 1."""
    for j in range(o0.size):
        i = start + j
        v0 = (i >> shifts[0]) & masks[0]
        v1 = (i >> shifts[1]) & masks[1] if k > 1 else 0
        v2 = (i >> shifts[2]) & masks[2] if k > 2 else 0
        if half:
            i2 = (i + half) % size
            v0 |= ((i2 >> shifts[0]) & masks[0]) << 16
            v1 |= ((i2 >> shifts[1]) & masks[1]) << 16 if k > 1 else 0
            v2 |= ((i2 >> shifts[2]) & masks[2]) << 16 if k > 2 else 0
        o0[j] = v0
        if k > 1:
            o1[j] = v1
        if k > 2:
            o2[j] = v2


def _make_fill():
    try:
        from numba import njit
        return njit(cache=True, nogil=True)(_fill_py)
    except Exception:                               # pragma: no cover (numba is required)
        return _fill_py


_fill = _make_fill()


# ---- implementations -------------------------------------------------------------------------

_LOADED: dict = {}


@dataclass(frozen=True)
class LibImpl:
    """A C function in a shared library (loaded lazily, once per process)."""
    path: str
    symbol: str
    kind: str = "array"
    spelling: str = ""

    def __str__(self) -> str:
        return f"{self.path}:{self.symbol} ({self.kind})"

    def _fn(self):
        key = (self.path, self.symbol, self.kind, self.spelling)
        fn = _LOADED.get(key)
        if fn is None:
            fn = _LOADED[key] = _load_lib(self)
        return fn

    def __call__(self, *operands):
        return self._fn()(*operands)


def _ctype(bits):
    return {8: ctypes.c_uint8, 16: ctypes.c_uint16}.get(bits, ctypes.c_uint32)


def _load_lib(impl: LibImpl):
    f = _form(impl.spelling)
    try:
        lib = ctypes.CDLL(os.path.abspath(impl.path))
    except OSError as e:
        raise SweepError(f"--lib {impl.path}: cannot load it ({e})") from None
    try:
        c = getattr(lib, impl.symbol)
    except AttributeError:
        raise SweepError(f"--lib {impl.path}:{impl.symbol}: no symbol '{impl.symbol}'") from None
    rt = dtype(f.result_width)
    if impl.kind == "array":
        c.argtypes = [ctypes.POINTER(_ctype(w)) for w in f.operand_widths] + \
            [ctypes.POINTER(_ctype(f.result_width)), ctypes.c_size_t]
        c.restype = None

        def call(*ops):
            ops = [np.ascontiguousarray(x, dtype=dtype(w)) for x, w in zip(ops, f.operand_widths)]
            out = np.empty(ops[0].shape[0], rt)
            c(*[x.ctypes.data_as(ctypes.POINTER(_ctype(w)))
                for x, w in zip(ops, f.operand_widths)],
              out.ctypes.data_as(ctypes.POINTER(_ctype(f.result_width))), out.size)
            return out
        return call
    if impl.kind != "elementwise":
        raise SweepError(f"--lib-kind {impl.kind}: 'array' or 'elementwise'")
    c.argtypes = [_ctype(w) for w in f.operand_widths]
    c.restype = _ctype(f.result_width)
    loop = _elementwise_loop(c, f.arity)

    def call(*ops):
        ops = [np.ascontiguousarray(x, dtype=dtype(w)) for x, w in zip(ops, f.operand_widths)]
        out = np.empty(ops[0].shape[0], rt)
        loop(*ops, out)
        return out
    return call


def _elementwise_loop(cfn, arity):
    """A Numba loop calling a ctypes function per element, in nopython mode."""
    from numba import njit
    if arity == 1:
        def loop(a, out):
            for i in range(out.size):
                out[i] = cfn(a[i])
    elif arity == 2:
        def loop(a, b, out):
            for i in range(out.size):
                out[i] = cfn(a[i], b[i])
    else:
        def loop(a, b, c, out):
            for i in range(out.size):
                out[i] = cfn(a[i], b[i], c[i])
    return njit(nogil=True)(loop)


def load_impl(text: str) -> Callable:
    """``MODULE:FUNC`` (a dotted module importable here, or a path to a .py file) to the
    function; it is shipped to Dask workers by value unless it lives in an installed package."""
    mod, sep, name = text.rpartition(":")
    if not sep or not mod or not name:
        raise SweepError(f"--impl {text!r}: expected MODULE:FUNC (module.name:func or "
                         "path/to/file.py:func)")
    if mod.endswith(".py") or os.sep in mod:
        if not os.path.isfile(mod):
            raise SweepError(f"--impl {text!r}: no such file '{mod}'")
        modname = "ptxfp_impl_" + os.path.splitext(os.path.basename(mod))[0]
        spec = importlib.util.spec_from_file_location(modname, mod)
        module = importlib.util.module_from_spec(spec)
        sys.modules[modname] = module
        spec.loader.exec_module(module)
    else:
        if "" not in sys.path and os.getcwd() not in sys.path:
            sys.path.insert(0, os.getcwd())
        try:
            module = importlib.import_module(mod)
        except ImportError as e:
            raise SweepError(f"--impl {text!r}: cannot import '{mod}' ({e})") from None
    fn = getattr(module, name, None)
    if not callable(fn):
        raise SweepError(f"--impl {text!r}: '{mod}' has no function '{name}'")
    return fn


class Shipped:
    """A Python implementation wrapped to travel to Dask workers by value: Dask pickles
    functions by reference when it can, which fails on a worker that cannot import the
    function's module (a script, a file loaded with --impl path.py:func).  The function is
    cloudpickled here, by value unless it lives in an installed package, and loaded once per
    worker process."""

    def __init__(self, fn: Callable[..., Any]):
        import cloudpickle
        mod = sys.modules.get(getattr(fn, "__module__", None) or "")
        path = getattr(mod, "__file__", None) or ""
        installed = ("site-packages" in path or "dist-packages" in path
                     or path.startswith(sys.prefix))
        if mod is not None and mod.__name__ != "__main__" and not installed and \
                mod.__name__ != "ptxfp" and not mod.__name__.startswith("ptxfp."):
            cloudpickle.register_pickle_by_value(mod)
        self.blob = cloudpickle.dumps(fn)
        self.name = _describe(fn)
        self._fn: Callable[..., Any] | None = fn

    def __getstate__(self) -> dict[str, Any]:
        return {"blob": self.blob, "name": self.name}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.blob, self.name, self._fn = state["blob"], state["name"], None

    def __call__(self, *operands: Any) -> Any:
        if self._fn is None:
            import cloudpickle
            self._fn = cloudpickle.loads(self.blob)
        return self._fn(*operands)


def _describe(impl) -> str:
    if isinstance(impl, LibImpl):
        return str(impl)
    return f"{getattr(impl, '__module__', '?')}:{getattr(impl, '__qualname__', repr(impl))}"


# ---- one chunk (runs on a worker) ------------------------------------------------------------

def run_chunk(plan: Plan, cid: int, impl: Callable, pol=None) -> dict:
    """Build chunk ``cid``, run ptxfp and the implementation on it, judge: a JSON-able dict."""
    # the policy is a per-thread ContextVar (policy.using): assigning policy.POLICY would leave
    # a module attribute behind that hides the policy in force from every later reader
    same = {} if pol is None else {f.name: getattr(pol, f.name) for f in dataclasses.fields(pol)}
    with _policy.using(**same):
        t0 = time.perf_counter()
        f = _form(plan.spelling)
        ops, base = chunk_operands(f, plan, cid)
        for x in ops:
            x.setflags(write=False)
        expected = f.model(*ops)
        n = int(expected.shape[0])
        try:
            got = np.asarray(impl(*ops))
        except Exception as e:
            raise SweepError(f"the implementation failed on chunk {cid} (vectors {base} to "
                             f"{base + n - 1}): {type(e).__name__}: {e}") from e
        if got.shape != expected.shape:
            raise SweepError(f"the implementation returned shape {got.shape} for {n} vectors "
                             f"of '{f.spelling}' (one result per vector)")
        if got.dtype.kind not in "ui" or (got.size and (int(got.min()) < 0 or
                                                        int(got.max()) >> f.result_width)):
            raise SweepError(f"the implementation's results are not {f.result_width}-bit "
                             f"unsigned bits (dtype {got.dtype})")
        got = got.astype(dtype(f.result_width))
        rep = Report(f.spelling).add(f, ops, expected, got, base=base)
        return {"cid": cid, "n": n, "seconds": time.perf_counter() - t0,
                "report": rep.to_json()}


# ---- checkpoints -----------------------------------------------------------------------------

class Checkpoint:
    """``DIR/plan.json`` (what the sweep is) and ``DIR/done.jsonl`` (one line per finished
    chunk, appended and flushed as each one finishes)."""

    def __init__(self, path: str, plan: Plan, impl_name: str,
                 note: Callable[[str], None] | None = None):
        self.dir = output_dir(path, "--checkpoint")
        doc = {"plan": dataclasses.asdict(plan), "implementation": impl_name,
               "policy": {k: v for k, v in dataclasses.asdict(_policy.current()).items()}}
        meta = os.path.join(self.dir, "plan.json")
        if os.path.exists(meta):
            try:
                with open(meta) as fh:
                    old = json.load(fh)
            except (OSError, ValueError) as e:
                raise SweepError(f"--checkpoint {self.dir}: cannot read its plan.json "
                                 f"({getattr(e, 'strerror', None) or e})") from None
            new = json.loads(json.dumps(doc))
            if (old["plan"], old["policy"]) != (new["plan"], new["policy"]):
                raise SweepError(f"--checkpoint {self.dir}: it holds another sweep "
                                 f"({old['plan']['spelling']}, {old['plan']['mode']} "
                                 f"{old['plan']['size']} vectors, chunks of "
                                 f"{old['plan']['chunk']}, or another policy); use a new "
                                 "directory")
            if old["implementation"] != impl_name and note:
                note(f"--checkpoint {self.dir}: resuming a sweep of "
                     f"{old['implementation']} with {impl_name}")
        else:
            write_text(meta, json.dumps(doc, indent=1), what="--checkpoint")
        self.log = os.path.join(self.dir, "done.jsonl")

    def load(self) -> dict:
        """{chunk id: result dict} of the chunks finished so far (a torn last line, from a
        process killed while writing it, is dropped: that chunk runs again)."""
        done = {}
        if not os.path.exists(self.log):
            return done
        with open(self.log, "rb") as fh:
            data = fh.read()
        lines = data.split(b"\n")
        for k, line in enumerate(lines):
            if not line.strip():
                continue
            try:
                doc = json.loads(line)
            except ValueError:
                if k == len(lines) - 1:
                    break
                raise SweepError(f"--checkpoint {self.log}: line {k + 1} is not JSON") from None
            done.setdefault(int(doc["cid"]), doc)
        if data and not data.endswith(b"\n"):         # cut the torn tail before appending
            with open(self.log, "r+b") as fh:
                fh.truncate(data.rfind(b"\n") + 1)
        return done

    def record(self, res: dict) -> None:
        try:
            with open(self.log, "a") as fh:
                fh.write(json.dumps(res, separators=(",", ":")) + "\n")
                fh.flush()
                os.fsync(fh.fileno())
        except OSError as e:
            raise output_error(self.log, e, "--checkpoint") from None


# ---- progress --------------------------------------------------------------------------------

class Progress:
    """A one-line progress display on stderr: vectors, rate, ETA, mismatches."""

    def __init__(self, plan: Plan, done: int, stream=None, every: float = 1.0,
                 mismatches: int = 0):
        self.plan, self.done0, self.done = plan, done, done
        self.t0 = time.perf_counter()
        self.last = 0.0
        self.stream = stream or sys.stderr
        self.every = every
        self.mismatches = mismatches

    def update(self, n: int, mismatches: int, final: bool = False) -> None:
        self.done += n
        self.mismatches += mismatches
        now = time.perf_counter()
        if not final and now - self.last < self.every:
            return
        self.last = now
        dt = max(now - self.t0, 1e-9)
        rate = (self.done - self.done0) / dt
        left = self.plan.size - self.done
        eta = _duration(left / rate) if rate > 0 else "?"
        pct = 100.0 * self.done / max(self.plan.size, 1)
        self.stream.write(f"\r{self.plan.spelling}: {self.done:,}/{self.plan.size:,} vectors "
                          f"({pct:.1f}%)  {rate / 1e6:.2f} M/s  ETA {eta}  "
                          f"mismatches {self.mismatches:,}   " + ("\n" if final else ""))
        self.stream.flush()


def _duration(s: float) -> str:
    s = int(s)
    d, s = divmod(s, 86400)
    h, s = divmod(s, 3600)
    m, s = divmod(s, 60)
    return (f"{d}d " if d else "") + f"{h}:{m:02d}:{s:02d}"


# ---- the driver ------------------------------------------------------------------------------

def have_dask() -> bool:
    try:
        import distributed
        return bool(distributed.Client)
    except ImportError:
        return False


def sweep(spelling: str, impl: Callable[..., Any] | str | None = None, *,
          lib: str | None = None, lib_kind: str = "array", exhaustive: bool = False,
          random: int | None = None, seed: int = 1, chunk: int | None = None,
          workers: int | None = None, scheduler: str | None = None,
          checkpoint: str | os.PathLike[str] | None = None,
          progress: bool | Progress = False,
          on_chunk: Callable[[dict[str, Any]], None] | None = None,
          retries: int = 3, note: Callable[[str], None] | None = None) -> Report:
    """Compare ptxfp with an implementation over a whole sweep; returns the Report.

    ``impl``: a function over arrays (or ``"module:func"``); or ``lib="path.so:symbol"`` with
    ``lib_kind`` 'array' or 'elementwise'.  ``exhaustive=True`` or ``random=N``.  ``workers``:
    0 runs in this process; N > 0 starts a Dask LocalCluster of N single-threaded worker
    processes (None: one per core); ``scheduler="tcp://host:8786"`` uses a running cluster
    (ptxfp must be installed on its workers).  Without Dask the sweep runs in this process
    (``note`` is told so).  ``checkpoint``: a directory recording finished chunks, to resume
    from.  ``on_chunk(result)`` is called in this process after each finished chunk."""
    f = _form(spelling)
    if (impl is None) == (lib is None):
        raise SweepError("give one of --impl MODULE:FUNC or --lib PATH.so:SYMBOL")
    if lib is not None:
        path, sep, sym = str(lib).rpartition(":")
        if not sep or not path or not sym:
            raise SweepError(f"--lib {lib!r}: expected PATH.so:SYMBOL")
        if not os.path.isfile(path):
            raise SweepError(f"--lib {lib!r}: no such file '{path}'")
        impl = LibImpl(os.path.abspath(path), sym, lib_kind, f.spelling)
        impl._fn()                                  # fail here, not on a worker
    elif isinstance(impl, str):
        impl = load_impl(impl)
    plan = make_plan(f.spelling, exhaustive, random, seed, chunk)
    pol = _policy.current()
    ck = Checkpoint(checkpoint, plan, _describe(impl), note) if checkpoint is not None else None
    done = ck.load() if ck else {}
    report = Report(f.spelling)
    for res in done.values():
        report.merge(Report.from_json(res["report"]))
    todo = (c for c in range(plan.chunks) if c not in done)
    prog = progress if isinstance(progress, Progress) else \
        (Progress(plan, report.total, mismatches=report.mismatches) if progress else None)

    def finish(res):
        r = Report.from_json(res["report"])
        report.merge(r)
        if ck:
            ck.record(res)
        if prog:
            prog.update(res["n"], r.mismatches)
        if on_chunk:
            on_chunk(res)

    if workers is None and scheduler is None:
        workers = os.cpu_count() or 1
    if scheduler is None and workers and workers > 0 and not have_dask():
        if note:
            note("Dask is not installed (pip install 'ptxfp[sweep]'): the sweep runs in this "
                 "process")
        workers = 0
    if scheduler is None and not workers:
        for cid in todo:
            finish(run_chunk(plan, cid, impl, pol))
    else:
        if not isinstance(impl, LibImpl):
            impl = Shipped(impl)
        _run_dask(plan, todo, impl, pol, workers, scheduler, retries, finish)
    if prog:
        prog.update(0, 0, final=True)
    return report


#: how long a sweep on Dask waits, with no worker in the cluster, before it stops with an error
#: (a scheduler nobody joined, or every worker gone): seconds
WORKER_WAIT = 60.0
#: how often it looks, while no chunk finishes: seconds
_POLL = 2.0


def _run_dask(plan, todo: Iterable[int], impl, pol, workers, scheduler, retries, finish):
    import logging

    from distributed import Client, LocalCluster, wait
    cluster = None
    try:
        if scheduler:
            try:
                client = Client(scheduler, timeout="20s")
            except OSError as e:
                raise SweepError(f"--scheduler {scheduler}: cannot connect ({e})") from None
        else:
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                   dashboard_address=":0", silence_logs=logging.CRITICAL)
            client = Client(cluster)
        try:
            nworkers = max(len(client.scheduler_info().get("workers", {})), workers or 1)
            token = f"{os.getpid()}-{time.time_ns()}"
            todo = iter(todo)
            pending: set = set()

            def submit():
                cid = next(todo, None)
                if cid is None:
                    return False
                pending.add(client.submit(run_chunk, plan, cid, impl, pol, retries=retries,
                                          pure=False, key=f"ptxfp-sweep-{token}-{cid}"))
                return True

            for _ in range(2 * nworkers + 2):
                if not submit():
                    break
            no_worker_since = None
            while pending:
                try:
                    done, _ = wait(list(pending), timeout=_POLL, return_when="FIRST_COMPLETED")
                except Exception as e:               # a timeout (its class varies by version)
                    if "imeout" not in type(e).__name__:
                        raise
                    done = set()
                # a "lost" future (its worker died after it finished) counts as done for
                # wait, but its result is being computed again: only these are ready
                ready = [f for f in done if f.status in ("finished", "error", "cancelled")]
                if not ready:
                    # nothing finished: a cluster with no worker never will
                    if done:
                        time.sleep(_POLL)
                    if client.scheduler_info().get("workers"):
                        no_worker_since = None
                    elif no_worker_since is None:
                        no_worker_since = time.monotonic()
                    elif time.monotonic() - no_worker_since > WORKER_WAIT:
                        where = f"--scheduler {scheduler}" if scheduler else "the local cluster"
                        raise SweepError(
                            f"{where}: no Dask worker for {WORKER_WAIT:g} s; {len(pending)} "
                            "chunk(s) waiting (start workers, or sweep with --workers N "
                            "or --workers 0)") from None
                    continue
                for fut in ready:
                    pending.discard(fut)
                    try:
                        res = fut.result()
                    except PtxfpError:
                        raise
                    except Exception as e:            # the implementation failed on a worker
                        raise SweepError(f"a chunk failed: {type(e).__name__}: {e}") from None
                    fut.release()
                    finish(res)
                    submit()
        finally:
            client.close()
    finally:
        if cluster is not None:
            cluster.close()
