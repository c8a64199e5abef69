#!/usr/bin/env python
"""ptxfp throughput, scaling, call overhead and start-up, against baselines in the same process.

Never part of the test suite.  Every rate is elements per second (Me/s = 1e6 elements/s) of a
whole call of the public API (``ptxfp.execute``, ``torch.add``, ``a + b``), allocation of the
result included.  For the packed forms (.f16x2/.bf16x2) an element is one 32-bit word (two
lanes); their lane rate is twice that and is given too.

    python benchmarks/bench.py table     # single thread, 10M elements, all baselines
    python benchmarks/bench.py dist      # single thread, 10M elements, three input
                                         # distributions, roofline and torch peer per form
    python benchmarks/bench.py scaling   # all cores against one, per array size
    python benchmarks/bench.py sizes     # elements/s against array size (for the plot)
    python benchmarks/bench.py overhead  # microseconds per call on scalars and small arrays
    python benchmarks/bench.py startup   # import + first call in a new process, warm and cold
    python benchmarks/bench.py all --json benchmarks/results.json --plot docs/perf_throughput.png
    python benchmarks/bench.py plot --json benchmarks/results.json --plot docs/perf_throughput.png
    python benchmarks/bench.py report --json benchmarks/results.json   # Markdown tables

Timings are the minimum over ``--repeat`` runs.  ``--clock cpu`` times single-thread runs with
the calling thread's CPU time instead of wall-clock time, which is steadier on a machine that
other processes share (it cannot be used for the all-cores runs).
"""

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

import numpy as np

FORMS = [
    "add.rn.f16", "fma.rn.f16", "fma.rn.relu.bf16", "fma.rn.ftz.sat.f16x2", "add.rz.f32.bf16",
    "fma.rm.sat.f32.f16", "fma.rp.bf16", "sub.rn.bf16x2", "mul.rn.ftz.f16",
    "fma.rn.oob.relu.f16x2", "sub.rp.sat.f32.f16",
]
#: forms of the per-distribution table (``dist``): the table's forms and every bf16 fma shape
#: (fma.rp.bf16, fma.rz.relu.bf16 and fma.rm.oob.relu.bf16x2 are three of the 24 undocumented
#: directed spellings, under the default policy: what ptxas 13.0 compiles them to)
DIST_FORMS = FORMS + ["fma.rn.bf16", "fma.rn.bf16x2", "fma.rz.oob.bf16", "fma.rz.relu.bf16",
                      "fma.rm.oob.relu.bf16x2"]
DISTRIBUTIONS = ["uniform", "normal", "hard"]
#: the small-float conversions of ``bench.py cvt``: every destination from f32, one from a packed
#: half source, the widenings, stochastic rounding
CVT_FORMS = ["cvt.rn.satfinite.e4m3x2.f32", "cvt.rn.satfinite.e5m2x2.f32",
             "cvt.rn.satfinite.e2m3x2.f32", "cvt.rn.satfinite.e3m2x2.f32",
             "cvt.rn.satfinite.e2m1x2.f32", "cvt.rp.satfinite.ue8m0x2.f32",
             "cvt.rn.satfinite.e4m3x2.f16x2", "cvt.rz.ue8m0x2.bf16x2", "cvt.rn.f16x2.e4m3x2",
             "cvt.rn.f16x2.e2m1x2", "cvt.rn.bf16x2.ue8m0x2", "cvt.rs.satfinite.e4m3x4.f32",
             "cvt.rs.f16x2.f32"]
PLOT_FORMS = ["add.rn.f16", "fma.rn.f16", "fma.rm.sat.f32.f16", "fma.rn.ftz.sat.f16x2"]
SCALING_FORMS = ["add.rn.f16", "fma.rn.f16", "fma.rm.sat.f32.f16", "fma.rn.ftz.sat.f16x2"]
SIZES = [1_000, 10_000, 100_000, 300_000, 1_000_000, 3_000_000, 10_000_000, 30_000_000]


def set_threads(n):
    """Threads for ptxfp (PTXFP_NUM_THREADS is read at each call); None = all cores.

    torch always runs on one thread here (its baselines are single-thread, and an idle OpenMP
    pool spinning on a small machine would slow the other measurements).
    """
    if n is None:
        os.environ.pop("PTXFP_NUM_THREADS", None)
    else:
        os.environ["PTXFP_NUM_THREADS"] = str(n)
    try:
        import torch
        torch.set_num_threads(1)
    except ImportError:
        pass


def timeit(fn, repeat, clock, budget=None):
    """Minimum seconds per call of fn() over ``repeat`` runs (after one warm-up)."""
    tick = time.thread_time if clock == "cpu" else time.perf_counter
    fn()
    best = float("inf")
    spent = 0.0
    for _ in range(repeat):
        t0 = tick()
        fn()
        dt = tick() - t0
        best = min(best, dt)
        spent += dt
        if budget and spent > budget:
            break
    return best


def timeit_small(fn, n_elems, clock, target=0.02, repeat=5):
    """Like timeit for calls too short to time one by one: batches of calls."""
    tick = time.thread_time if clock == "cpu" else time.perf_counter
    fn()
    t0 = tick()
    fn()
    one = max(tick() - t0, 1e-7)
    batch = max(1, int(target / one))
    best = float("inf")
    for _ in range(repeat):
        t0 = tick()
        for _ in range(batch):
            fn()
        best = min(best, (tick() - t0) / batch)
    return best


def operands(ins, n, rng):
    """Bits of finite, normally distributed values for each source operand of ``ins``."""
    import ptxfp
    ops = []
    for fmt in ins.operand_formats:
        if fmt in ("f16x2", "bf16x2"):
            ops.append(ptxfp.to_bits(rng.standard_normal((n, 2)), fmt).astype(np.uint32))
        elif fmt == "f32x2":                # two binary32 lanes, lane 0 in the low half
            ops.append(rng.standard_normal(2 * n).astype(np.float32).view(np.uint64))
        else:
            dt = np.uint32 if fmt == "f32" else np.uint16
            ops.append(np.asarray(ptxfp.to_bits(rng.standard_normal(n), fmt)).astype(dt))
    return ops


def baselines(n, rng):
    """name -> (callable, elements per call) for the baselines that are installed."""
    out = {}
    a = rng.standard_normal(n).astype(np.float16)
    b = rng.standard_normal(n).astype(np.float16)
    out["numpy f16 add"] = (lambda: a + b, n)
    try:
        import torch
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        out["torch f16 add"] = (lambda: torch.add(ta, tb), n)
    except ImportError:
        pass
    try:
        import ml_dtypes
        ab, bb = a.astype(ml_dtypes.bfloat16), b.astype(ml_dtypes.bfloat16)
        out["ml_dtypes bf16 add"] = (lambda: ab + bb, n)
    except ImportError:
        pass
    try:
        import softfloatpy as sf
        m = min(n, 20_000)         # scalar bindings: a slice is enough for a rate
        xs = [sf.Float16.from_bytes(int(v).to_bytes(2, "big")) for v in a[:m].view(np.uint16)]
        ys = [sf.Float16.from_bytes(int(v).to_bytes(2, "big")) for v in b[:m].view(np.uint16)]
        add = sf.f16_add
        out["softfloatpy f16_add"] = (lambda: [add(x, y) for x, y in zip(xs, ys)], m)
    except ImportError:
        pass
    return out


def ptxfp_call(form, n, rng, reuse=False):
    """A call of ``form`` on n elements; with ``reuse`` it writes into one preallocated result
    (``out=``) instead of a new array per call."""
    import ptxfp
    ins = ptxfp.parse(form)
    ops = operands(ins, n, rng)
    if reuse:
        out = np.empty_like(ptxfp.execute(form, *ops))
        return (lambda: ptxfp.execute(form, *ops, out=out)), ins.lanes
    return (lambda: ptxfp.execute(form, *ops)), ins.lanes


def machine():
    info = {"python": sys.version.split()[0], "platform": platform.platform(),
            "cpus": os.cpu_count()}
    try:
        lscpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        for line in lscpu.splitlines():
            k, _, v = line.partition(":")
            if k.strip() in ("Model name", "CPU(s)", "Thread(s) per core", "L2 cache", "L3 cache"):
                info[k.strip()] = v.strip()
        flags = next((l.split(":", 1)[1].split() for l in lscpu.splitlines()
                      if l.startswith("Flags")), [])
        info["simd"] = " ".join(f for f in ("avx2", "f16c", "fma", "avx512f", "avx512dq",
                                            "avx512bw", "avx512vl", "avx512_bf16",
                                            "avx512_fp16") if f in flags)
    except OSError:
        pass
    vers = {}
    for mod in ("numpy", "numba", "llvmlite", "torch", "ml_dtypes", "softfloatpy", "matplotlib",
                "ptxfp"):
        try:
            vers[mod] = __import__(mod).__version__
        except Exception:
            try:
                from importlib.metadata import version
                vers[mod] = version(mod)
            except Exception:
                vers[mod] = None
    info["versions"] = vers
    try:
        info["loadavg_at_start"] = os.getloadavg()
    except OSError:
        pass
    return info


def bench_table(args, res):
    """Single thread, one size: every form against every baseline."""
    set_threads(1)
    rng = np.random.default_rng(0)
    n = args.n
    base = {}
    for name, (fn, m) in baselines(n, rng).items():
        t = timeit(fn, args.repeat, args.clock, budget=20)
        base[name] = m / t / 1e6
        print(f"  {name:26s} {base[name]:10.1f} Me/s", flush=True)
    rows = []
    for form in args.forms:
        fn, lanes = ptxfp_call(form, n, rng)
        t = timeit(fn, args.repeat, args.clock)
        rate = n / t / 1e6
        del fn
        fn, _ = ptxfp_call(form, n, rng, reuse=True)
        rate_out = n / timeit(fn, args.repeat, args.clock) / 1e6
        del fn
        row = {"form": form, "Me/s": rate, "lanes": lanes, "Mlanes/s": rate * lanes,
               "Me/s out=": rate_out}
        row.update({f"x {k}": rate / v for k, v in base.items()})
        rows.append(row)
        print(f"  {form:26s} {rate:10.1f} Me/s  " + "  ".join(
            f"{rate / v:7.2f}x {k.split()[0]}" for k, v in base.items())
            + f"   out=: {rate_out:.1f} Me/s", flush=True)
    res["table"] = {"n": n, "clock": args.clock, "threads": 1, "baselines": base, "rows": rows}


# --- per input distribution: roofline and torch peer ----------------------------------------

#: format -> (exponent bits, fraction bits, width)
_LAYOUT = {"f16": (5, 10, 16), "bf16": (8, 7, 16), "f32": (8, 23, 32)}


def hard_bits(fmt, n, rng):
    """Bits of a hard mix in ``fmt``: exponent fields spread over the whole range (subnormals
    and zeros included), a share near overflow and near the bottom (so that products are huge
    and tiny), infinities and NaNs (0x7FF7 among them for the 16-bit formats), and normally
    distributed values."""
    E, M, W = _LAYOUT[fmt]
    top = (1 << E) - 1
    kind = rng.integers(0, 10, n)
    field = np.select(
        [kind < 4, kind == 4, kind == 5, kind == 6, kind == 7],
        [rng.integers(0, top, n),                       # anywhere (finite)
         np.zeros(n, np.int64),                         # subnormal or zero
         rng.integers(max(top - 4, 1), top, n),         # near overflow
         rng.integers(1, 5, n),                         # just above the subnormals
         np.full(n, top)],                              # inf / NaN
        rng.integers(top // 2 - 3, top // 2 + 3, n))    # about 1
    frac = rng.integers(0, 1 << M, n, dtype=np.int64)
    frac = np.where((kind == 7) & (rng.integers(0, 2, n) == 0), 0, frac)     # half of it inf
    bits = (rng.integers(0, 2, n, dtype=np.int64) << (W - 1)) | (field << M) | frac
    if W == 16:
        oob = rng.integers(0, 200, n) == 0
        bits = np.where(oob, 0x7FF7, bits)
    return bits.astype(np.uint16 if W == 16 else np.uint32)


def dist_operands(ins, n, rng, dist):
    """Bits of each source operand of ``ins`` drawn from ``dist`` (uniform bit patterns, bits
    of normally distributed values, or the hard mix); packed operands hold two lanes drawn
    alike."""
    if dist == "normal":
        return operands(ins, n, rng)
    ops = []
    for fmt in ins.operand_formats:
        base = fmt[:-2] if fmt.endswith("x2") else fmt
        k = 2 if fmt.endswith("x2") else 1
        W = _LAYOUT[base][2]
        word = {16: np.uint16, 32: np.uint32, 64: np.uint64}[W * k]
        if dist == "uniform":               # the lanes' bits, packed words as their lanes
            x = rng.integers(0, 1 << W, n * k, dtype=np.uint64).astype(
                np.uint32 if W == 32 else np.uint16).view(word)
        else:
            x = hard_bits(base, n * k, rng).view(word)
        ops.append(x)
    return ops


def _roofline_kernel():
    from numba import njit

    @njit(nogil=True, cache=True)
    def touch2(a, b, out):
        for i in range(out.size):
            out[i] = a[i] ^ b[i]

    @njit(nogil=True, cache=True)
    def touch3(a, b, c, out):
        for i in range(out.size):
            out[i] = a[i] ^ b[i] ^ c[i]

    @njit(nogil=True, cache=True)
    def touch5(a, b, c, d, e, out):
        for i in range(out.size):
            out[i] = a[i] ^ b[i] ^ c[i] ^ d[i] ^ e[i]
    return touch2, touch3, touch5


def roofline_call(ops, out_dtype):
    """The memory roofline of a form: a trivial Numba kernel that reads the same operand
    arrays and writes a new result array of the form's dtype (allocation included, as in an
    execute call)."""
    touch2, touch3, touch5 = _roofline_kernel()
    n = ops[0].size
    if len(ops) == 1:
        a = ops[0]
        return lambda: touch2(a, a, np.empty(n, out_dtype))
    if len(ops) > 3:                     # 4 or 5 operands (cvt.rs x4): every one read
        a, b, c, d, e = (list(ops) + [ops[0]])[:5]
        return lambda: touch5(a, b, c, d, e, np.empty(n, out_dtype))
    if len(ops) == 2:
        a, b = ops
        return lambda: touch2(a, b, np.empty(n, out_dtype))
    a, b, c = ops
    return lambda: touch3(a, b, c, np.empty(n, out_dtype))


def rate_and_roofline(call, form, ops, args):
    """(a sample result, bytes moved per element, Me/s of ``call(form, *ops)``, Me/s of the
    roofline kernel on the same arrays), timed alike."""
    n = ops[0].size
    got = call(form, *[x[:1000] for x in ops])
    moved = sum(x.itemsize for x in ops) + got.itemsize
    rate = n / timeit(lambda: call(form, *ops), args.repeat, args.clock) / 1e6
    roof = n / timeit(roofline_call(ops, got.dtype), args.repeat, args.clock) / 1e6
    return got, moved, rate, roof


def torch_peer(ins, ops):
    """The nearest torch call on the same bits (one thread): ``torch.add`` for add/sub/mul,
    ``torch.addcmul`` for fma, in the operands' dtype (packed words as their two lanes); the
    mixed .f32 forms upcast the 16-bit operands to float32 first (inside the timed call).
    Returns (callable, description) or None without torch."""
    try:
        import torch
    except ImportError:
        return None
    tdt = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32}

    def t16(x, fmt):
        if fmt == "f32":                   # f32 and f32x2 words as their binary32 lanes
            return torch.from_numpy(np.ascontiguousarray(x).view(np.float32))
        return torch.from_numpy(np.ascontiguousarray(x).view(np.int16)).view(tdt[fmt])
    lane_fmt = ins.lane_format
    if ins.mixed:
        a = t16(ops[0], lane_fmt)
        c = torch.from_numpy(ops[-1].view(np.float32))
        if ins.opcode == "fma":
            b = t16(ops[1], lane_fmt)
            return (lambda: torch.addcmul(c, a.float(), b.float())), \
                "addcmul(c, a.float(), b.float())"
        return (lambda: torch.add(a.float(), c)), "add(a.float(), c)"
    ts = [t16(x, lane_fmt) for x in ops]
    if ins.opcode in ("fma", "mad"):
        a, b, c = ts
        return (lambda: torch.addcmul(c, a, b)), f"addcmul ({lane_fmt})"
    a, b = ts
    return (lambda: torch.add(a, b)), f"add ({lane_fmt})"


def bench_dist(args, res):
    """Single thread, one size, each form on each input distribution: rate, bytes moved per
    element, the roofline of the same arrays, the torch peer on the same bits, and NumPy's
    float16 add on f16 bits of the same distribution."""
    import ptxfp
    set_threads(1)
    n = args.n
    rows = []
    numpy_add = {}
    for dist in DISTRIBUTIONS:
        rng = np.random.default_rng(1)
        f16 = dist_operands(ptxfp.parse("add.rn.f16"), n, rng, dist)
        a, b = (x.view(np.float16) for x in f16)
        with np.errstate(all="ignore"):
            numpy_add[dist] = n / timeit(lambda: a + b, args.repeat, args.clock) / 1e6
        print(f"  numpy f16 add on {dist:8s} {numpy_add[dist]:10.1f} Me/s", flush=True)
    for form in args.forms:
        ins = ptxfp.parse(form)
        for dist in DISTRIBUTIONS:
            rng = np.random.default_rng(2)
            ops = dist_operands(ins, n, rng, dist)
            got, moved, rate, roof = rate_and_roofline(ptxfp.execute, form, ops, args)
            peer = torch_peer(ins, ops)
            trate = None
            if peer is not None:
                with np.errstate(all="ignore"):
                    trate = n / timeit(peer[0], args.repeat, args.clock) / 1e6
            row = {"form": form, "dist": dist, "Me/s": rate, "lanes": ins.lanes,
                   "bytes/elem": moved, "roofline Me/s": roof, "x roofline": rate / roof,
                   "torch peer": peer[1] if peer else None, "torch Me/s": trate,
                   "x torch": rate / trate if trate else None,
                   "x numpy f16 add": rate / numpy_add[dist]}
            rows.append(row)
            print(f"  {form:24s} {dist:8s} {rate:9.1f} Me/s  {moved:2d} B/e  "
                  f"{rate / roof:5.2f}x roofline ({roof:.0f})  "
                  + (f"{rate / trate:5.2f}x torch {peer[1]} ({trate:.0f})  " if trate else "")
                  + f"{rate / numpy_add[dist]:6.1f}x numpy", flush=True)
    res["dist"] = {"n": n, "clock": args.clock, "threads": 1, "numpy f16 add": numpy_add,
                   "rows": rows, "ptxfp": os.path.dirname(ptxfp.__file__),
                   "reference": os.environ.get("PTXFP_REFERENCE", "")}


_SMALL_PEER = {"e4m3": "float8_e4m3fn", "e5m2": "float8_e5m2", "e2m3": "float6_e2m3fn",
               "e3m2": "float6_e3m2fn", "e2m1": "float4_e2m1fn", "ue8m0": "float8_e8m0fnu"}


def cvt_operands(ins, n, rng, dist):
    """Operand bits of a cvt form: f32 and f16x2/bf16x2 sources from ``dist`` (as
    ``dist_operands``); a small-float source as uniform codes in every distribution (each
    code is one value: there is no other spread to draw); rbits uniform."""
    ops = []
    for name, fmt in zip(ins.operand_names, ins.operand_formats):
        base = fmt[:-2] if fmt.endswith(("x2", "x4")) else fmt
        if base in _LAYOUT and name != "rbits":
            k = 2 if fmt.endswith("x2") else 1
            if dist == "normal":
                x = ptxfp_bits(rng.standard_normal(n * k) * 8, base)
            elif dist == "uniform":
                W = _LAYOUT[base][2]
                x = rng.integers(0, 1 << W, n * k, dtype=np.uint64).astype(
                    np.uint32 if W == 32 else np.uint16)
            else:
                x = hard_bits(base, n * k, rng)
            ops.append(x.view(np.uint32) if k == 2 else x)
        else:
            import ptxfp.core.types as T
            width = T.get(fmt).width
            ops.append(rng.integers(0, 1 << width, n, dtype=np.uint64).astype(
                np.uint32 if width > 16 else np.uint16 if width > 8 else np.uint8))
    return ops


def ptxfp_bits(values, fmt):
    import ptxfp
    dt = np.uint32 if fmt == "f32" else np.uint16
    return np.asarray(ptxfp.to_bits(values, fmt)).astype(dt)


def cvt_peer(ins, ops):
    """The nearest library conversion on the same source values (one thread): f32 to a small
    format as ml_dtypes' ``astype`` and, where torch has the dtype, torch's ``.to``; every lane
    of the instruction converted.  None for the other forms."""
    dst = ins.dtype
    base = dst[:-2] if dst.endswith(("x2", "x4")) else dst
    if base not in _SMALL_PEER or ins.operand_formats[0] != "f32":
        return []
    import ml_dtypes
    srcs = [x.view(np.float32) for x, n in zip(ops, ins.operand_names) if n != "rbits"]
    allv = np.concatenate(srcs)
    mdt = getattr(ml_dtypes, _SMALL_PEER[base])
    peers = [((lambda: allv.astype(mdt)), f"ml_dtypes astype({_SMALL_PEER[base]})")]
    try:
        import torch
        tdt = getattr(torch, _SMALL_PEER[base], None)
        if tdt is not None and base in ("e4m3", "e5m2"):
            t = torch.from_numpy(allv)
            peers.append(((lambda: t.to(tdt)), f"torch .to({_SMALL_PEER[base]})"))
    except ImportError:
        pass
    return peers


def bench_cvt(args, res):
    """Single thread, one size: each small-float cvt form on each input distribution, as
    instructions and lanes per second, bytes moved per instruction, the roofline of the same
    arrays, and ml_dtypes' and torch's conversions of the same f32 values where they have the
    destination type."""
    import ptxfp
    set_threads(1)
    n = args.n
    rows = []
    for form in args.forms:
        ins = ptxfp.parse(form)
        lanes = ptxfp.core.types.get(ins.dtype).lanes
        for dist in DISTRIBUTIONS:
            rng = np.random.default_rng(3)
            ops = cvt_operands(ins, n, rng, dist)
            got, moved, rate, roof = rate_and_roofline(ptxfp.convert, form, ops, args)
            row = {"form": form, "dist": dist, "Mi/s": rate, "lanes": lanes,
                   "M lanes/s": rate * lanes, "bytes/instr": moved, "roofline Mi/s": roof,
                   "x roofline": rate / roof, "peers": {}}
            line = (f"  {form:30s} {dist:8s} {rate:8.1f} Mi/s {rate * lanes:8.1f} Ml/s "
                    f"{moved:2d} B/i {rate / roof:5.2f}x roofline ({roof:.0f})")
            with np.errstate(all="ignore"):
                for call, name in cvt_peer(ins, ops):
                    prate = n * lanes / timeit(call, args.repeat, args.clock) / 1e6
                    row["peers"][name] = {"M lanes/s": prate, "x": rate * lanes / prate}
                    line += f"  {rate * lanes / prate:5.2f}x {name} ({prate:.0f} Ml/s)"
            rows.append(row)
            print(line, flush=True)
    res["cvt"] = {"n": n, "clock": args.clock, "threads": 1, "rows": rows,
                  "ptxfp": os.path.dirname(ptxfp.__file__)}


def bench_sizes(args, res, threads_list=(1,)):
    """Elements/s against array size for some forms and baselines."""
    out = {}
    for threads in threads_list:
        set_threads(threads)
        key = "1" if threads == 1 else "all"
        clock = args.clock if threads == 1 else "wall"
        for size in args.sizes:
            rng = np.random.default_rng(1)
            entries = {}
            for form in args.plot_forms:
                fn, _ = ptxfp_call(form, size, rng)
                entries[form] = size / (timeit_small(fn, size, clock) if size < 100_000
                                        else timeit(fn, args.repeat, clock, budget=10)) / 1e6
            if threads == 1:
                for name, (fn, m) in baselines(size, rng).items():
                    if name.startswith("softfloatpy"):
                        continue
                    entries[name] = m / (timeit_small(fn, m, clock) if m < 100_000
                                         else timeit(fn, args.repeat, clock, budget=10)) / 1e6
            out.setdefault(key, {})[str(size)] = entries
            print(f"  threads={key:3s} n={size:>9d} " + "  ".join(
                f"{k}={v:.0f}" for k, v in entries.items()), flush=True)
    res["sizes"] = out


def _busy_jiffies():
    """(busy jiffies of all CPUs, this process's CPU seconds) now; None where /proc is absent."""
    try:
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
    except OSError:
        return None
    t = os.times()
    return sum(v) - v[3] - v[4], t.user + t.system


def _others_busy(before, after, wall):
    """Share of all CPUs that other processes used between two _busy_jiffies() samples."""
    if before is None or after is None or wall <= 0:
        return None
    hz = os.sysconf("SC_CLK_TCK")
    other = (after[0] - before[0]) / hz - (after[1] - before[1])
    return max(0.0, other / (wall * os.cpu_count()))


def wait_quiet(limit=0.1, timeout=60.0):
    """Wait (up to timeout s) until other processes use less than ``limit`` of the CPUs."""
    t_end = time.perf_counter() + timeout
    while time.perf_counter() < t_end:
        b, t0 = _busy_jiffies(), time.perf_counter()
        time.sleep(0.5)
        busy = _others_busy(b, _busy_jiffies(), time.perf_counter() - t0)
        if busy is None or busy < limit:
            return busy
    return busy


def bench_scaling(args, res):
    """All cores against one thread, same wall clock, per size."""
    from ptxfp.core import _jit
    from ptxfp.ops import kernels
    rows = []
    for form in args.scaling_forms:
        for size in args.sizes:
            rng = np.random.default_rng(2)
            fn, _ = ptxfp_call(form, size, rng)
            # One thread and all cores alternate, run by run, so that both see the same
            # machine when other processes come and go; the minimum of each is kept.
            best = {1: float("inf"), None: float("inf")}
            per = max(1, int(2e5 // size))          # calls per timed run for small sizes
            if args.wait_quiet:
                wait_quiet()
            j0, w0 = _busy_jiffies(), time.perf_counter()
            for threads in (1, None):
                set_threads(threads)
                fn()
            for _ in range(args.repeat if size >= 100_000 else 5):
                for threads in (1, None):
                    set_threads(threads)
                    t0 = time.perf_counter()
                    for _ in range(per):
                        fn()
                    best[threads] = min(best[threads], (time.perf_counter() - t0) / per)
            rates = {"1": size / best[1] / 1e6, "all": size / best[None] / 1e6}
            others = _others_busy(j0, _busy_jiffies(), time.perf_counter() - w0)
            row = {"form": form, "n": size, "1 thread Me/s": rates["1"],
                   "all Me/s": rates["all"], "speedup": rates["all"] / rates["1"],
                   "others busy": others}
            rows.append(row)
            print(f"  {form:24s} n={size:>9d}  1T {rates['1']:8.0f}  all {rates['all']:8.0f}"
                  f"  x{row['speedup']:.2f}  (other processes: "
                  f"{'?' if others is None else f'{100 * others:.0f}%'} of the CPUs)", flush=True)
    res["scaling"] = {"cores": _jit.threads(), "parallel_min": _jit.PARALLEL_MIN,
                      "parallel_min_fast": getattr(kernels, "PARALLEL_MIN_FAST", None),
                      "parallel_min_light": getattr(kernels, "PARALLEL_MIN_LIGHT", None),
                      "chunks_per_thread": _jit.CHUNKS_PER_THREAD, "rows": rows}


def bench_overhead(args, res):
    import ptxfp
    set_threads(None)           # small calls never reach the thread pool
    rows = []
    rng = np.random.default_rng(3)
    for form in ["add.rn.f16", "fma.rn.f16", "fma.rn.ftz.sat.f16x2", "fma.rm.sat.f32.f16"]:
        ins = ptxfp.parse(form)
        scal = [int(o[0]) for o in operands(ins, 1, rng)]
        arr = operands(ins, 1000, rng)
        t_s = timeit_small(lambda: ptxfp.execute(form, *scal), 1, args.clock, target=0.05)
        t_a = timeit_small(lambda: ptxfp.execute(form, *arr), 1000, args.clock, target=0.05)
        ins_obj = ptxfp.parse(form)
        t_i = timeit_small(lambda: ptxfp.execute(ins_obj, *scal), 1, args.clock, target=0.05)
        rows.append({"form": form, "scalar us": t_s * 1e6, "scalar (Instruction) us": t_i * 1e6,
                     "1000 elements us": t_a * 1e6})
        print(f"  {form:24s} scalar {t_s * 1e6:6.2f} us  (Instruction {t_i * 1e6:6.2f} us)"
              f"  1000 elements {t_a * 1e6:7.2f} us", flush=True)
    base = {}
    a = np.ones(1000, np.float16)
    base["numpy f16 add, 1000 elements us"] = timeit_small(lambda: a + a, 1000, args.clock) * 1e6
    try:
        import torch
        ta = torch.from_numpy(a)
        set_threads(1)
        base["torch f16 add, 1000 elements us"] = timeit_small(lambda: torch.add(ta, ta), 1000,
                                                               args.clock) * 1e6
    except ImportError:
        pass
    for k, v in base.items():
        print(f"  {k}: {v:.2f}")
    res["overhead"] = {"rows": rows, "baselines": base}


STARTUP_CODE = r"""
import time
t0 = time.perf_counter()
import ptxfp
t1 = time.perf_counter()
ptxfp.execute({form!r}, *{ops!r})
t2 = time.perf_counter()
print(t1 - t0, t2 - t1)
"""


def bench_startup(args, res):
    """``import ptxfp`` + first call of a form in a new process: warm and cold disk cache."""
    rows = []
    for form, ops in [("fma.rn.f16", (0x3C00, 0x3C00, 0x3C00)),
                      ("add.rz.f32.bf16", (0x3F80, 0x3F800000))]:
        code = STARTUP_CODE.format(form=form, ops=ops)
        for kind in ("cold", "warm", "warm"):
            env = dict(os.environ)
            if kind == "cold":
                cache = tempfile.mkdtemp(prefix="ptxfp-bench-cache-")
            env["NUMBA_CACHE_DIR"] = cache
            t0 = time.perf_counter()
            out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                                 text=True, check=True).stdout.split()
            wall = time.perf_counter() - t0
            imp, first = float(out[0]), float(out[1])
            rows.append({"form": form, "cache": kind, "import s": imp, "first call s": first,
                         "import+first s": imp + first, "process wall s": wall})
            print(f"  {form:18s} {kind}: import {imp:.3f} s  first call {first:.3f} s  "
                  f"together {imp + first:.3f} s  (whole process {wall:.3f} s)", flush=True)
    code = "import time; t0 = time.perf_counter(); import numba; print(time.perf_counter() - t0)"
    numba_import = float(subprocess.run([sys.executable, "-c", code], capture_output=True,
                                        text=True, check=True).stdout)
    print(f"  import numba alone: {numba_import:.3f} s")
    res["startup"] = {"rows": rows, "import numba s": numba_import}


def plot(res, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    sizes = res["sizes"]
    fig, ax = plt.subplots(figsize=(9, 5.5))
    colours = {}
    for key, style in (("1", "-"), ("all", "--")):
        if key not in sizes:
            continue
        ns = sorted(sizes[key], key=int)
        for name in sizes[key][ns[0]]:
            ys = [sizes[key][n].get(name) for n in ns]
            is_base = " " in name
            colour = colours.setdefault(name, f"C{len(colours)}")
            label = name + ("" if key == "1" else f", all {res['machine'].get('cpus')} cores")
            ax.plot([int(n) for n in ns], ys, style, color=colour, label=label,
                    marker="s" if is_base else "o", markersize=3,
                    linewidth=1.0 if is_base else 1.6)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("array size (elements; x2 forms: 32-bit words)")
    ax.set_ylabel("elements per second (Me/s)")
    ax.set_title("ptxfp.execute vs baselines: solid 1 thread, dashed all cores")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"  wrote {path}")


def report(res):
    """The results as Markdown tables (for docs/performance.md)."""
    lines = []
    m = res.get("machine", {})
    if "table" in res:
        t = res["table"]
        base = t["baselines"]
        lines.append(f"Single thread, {t['n']:,} elements, clock: {t['clock']}.\n")
        reuse = any("Me/s out=" in r for r in t["rows"])
        head = ["form", "Me/s", "Mlanes/s"] + [f"x {k}" for k in base]
        if reuse:
            head += ["Me/s with out=", "x torch f16 add, out="]
        lines.append("| " + " | ".join(head) + " |")
        lines.append("|" + "---|" * len(head))
        for r in t["rows"]:
            cells = [f"`{r['form']}`", f"{r['Me/s']:.0f}",
                     f"{r['Mlanes/s']:.0f}" if r["lanes"] == 2 else ""]
            cells += [f"{r['x ' + k]:.2f}" if r["x " + k] < 100 else f"{r['x ' + k]:.0f}"
                      for k in base]
            if reuse:
                torch_rate = base.get("torch f16 add")
                cells += [f"{r['Me/s out=']:.0f}",
                          f"{r['Me/s out='] / torch_rate:.2f}" if torch_rate else ""]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("| *baseline* | | | " + " | ".join(f"{v:.1f} Me/s" if v < 100 else
                                                     f"{v:.0f} Me/s" for v in base.values())
                     + " |")
        lines.append("")
    if "dist" in res:
        d = res["dist"]
        lines.append(f"Single thread, {d['n']:,} elements, clock: {d['clock']}; per input "
                     "distribution: Me/s (x roofline, x torch peer); the worst distribution "
                     "as a share of the best.\n")
        lines.append("| form | B/elem | " + " | ".join(DISTRIBUTIONS) + " | worst/best | torch peer |")
        lines.append("|---|---|" + "---|" * (len(DISTRIBUTIONS) + 2))
        forms = sorted({r["form"] for r in d["rows"]}, key=[r["form"] for r in d["rows"]].index)
        for f in forms:
            rs = {r["dist"]: r for r in d["rows"] if r["form"] == f}
            cells = []
            for k in DISTRIBUTIONS:
                r = rs[k]
                t = f", {r['x torch']:.2f}" if r.get("x torch") else ""
                cells.append(f"{r['Me/s']:.0f} ({r['x roofline']:.2f}{t})")
            rates = [rs[k]["Me/s"] for k in DISTRIBUTIONS]
            any_r = rs[DISTRIBUTIONS[0]]
            lines.append(f"| `{f}` | {any_r['bytes/elem']} | " + " | ".join(cells)
                         + f" | {min(rates) / max(rates):.2f} | {any_r.get('torch peer') or ''} |")
        lines.append("| *numpy f16 add* | 6 | " + " | ".join(
            f"{d['numpy f16 add'][k]:.0f}" for k in DISTRIBUTIONS) + " | | |")
        lines.append("")
    if "scaling" in res:
        sc = res["scaling"]
        forms = sorted({r["form"] for r in sc["rows"]}, key=[r["form"] for r in sc["rows"]].index)
        sizes = sorted({r["n"] for r in sc["rows"]})
        lines.append(f"All {sc['cores']} cores against one thread (wall clock; speed-up, and "
                     f"Me/s with all cores; [x%]: share of the CPUs other processes used "
                     f"meanwhile, where 10% or more); split from {sc['parallel_min']:,} lanes"
                     + (f" ({sc['parallel_min_fast']:,} for the fast lane's kernels, "
                        f"{sc['parallel_min_light']:,} for its add/sub/mul)"
                        if sc.get("parallel_min_fast") else "") + ".\n")
        lines.append("| form | " + " | ".join(f"{n:,}" for n in sizes) + " |")
        lines.append("|---|" + "---|" * len(sizes))
        for f in forms:
            cells = []
            for n in sizes:
                r = next(r for r in sc["rows"] if r["form"] == f and r["n"] == n)
                busy = r.get("others busy")
                mark = "" if busy is None or busy < 0.1 else f" [{100 * busy:.0f}%]"
                cells.append(f"{r['speedup']:.2f}x ({r['all Me/s']:.0f}){mark}")
            lines.append(f"| `{f}` | " + " | ".join(cells) + " |")
        lines.append("")
    if "overhead" in res:
        o = res["overhead"]
        lines.append("| form | scalar (spelling) | scalar (Instruction) | 1,000 elements |")
        lines.append("|---|---|---|---|")
        for r in o["rows"]:
            lines.append(f"| `{r['form']}` | {r['scalar us']:.2f} us | "
                         f"{r['scalar (Instruction) us']:.2f} us | {r['1000 elements us']:.2f} us |")
        for k, v in o["baselines"].items():
            lines.append(f"| *{k.split(',')[0]}* | | | {v:.2f} us |")
        lines.append("")
    if "startup" in res:
        st = res["startup"]
        lines.append("| form | disk cache | import ptxfp | first call | together | whole process |")
        lines.append("|---|---|---|---|---|---|")
        for r in st["rows"]:
            lines.append(f"| `{r['form']}` | {r['cache']} | {r['import s']:.2f} s | "
                         f"{r['first call s']:.2f} s | **{r['import+first s']:.2f} s** | "
                         f"{r['process wall s']:.2f} s |")
        lines.append(f"\n`import numba` alone: {st['import numba s']:.2f} s.\n")
    if m:
        lines.append(f"Load average at start/end: {m.get('loadavg_at_start')} / "
                     f"{m.get('loadavg_at_end')}")
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("what", choices=["table", "dist", "cvt", "scaling", "sizes", "overhead",
                                    "startup", "plot", "report", "all"])
    p.add_argument("--n", type=int, default=10_000_000, help="array size of the table")
    p.add_argument("--repeat", type=int, default=7)
    p.add_argument("--clock", choices=["wall", "cpu"], default="wall",
                   help="clock of the single-thread runs")
    p.add_argument("--directed", choices=["as_compiled", "as_spelled"], default="as_compiled",
                   help="policy bf16_fma_directed for the directed bf16 fma spellings "
                        "(default: the default policy's)")
    p.add_argument("--forms", type=lambda s: s.split(","), default=None,
                   help="forms of 'table', 'dist' and 'cvt' (default: FORMS, DIST_FORMS, "
                        "CVT_FORMS)")
    p.add_argument("--plot-forms", type=lambda s: s.split(","), default=PLOT_FORMS)
    p.add_argument("--scaling-forms", type=lambda s: s.split(","), default=SCALING_FORMS)
    p.add_argument("--sizes", type=lambda s: [int(float(x)) for x in s.split(",")],
                   default=SIZES)
    p.add_argument("--wait-quiet", action="store_true",
                   help="scaling: before each point, wait (up to 60 s) until other processes "
                        "use under 10%% of the CPUs")
    p.add_argument("--json", help="write (or, for 'plot', read) the results here")
    p.add_argument("--plot", help="PNG to draw elements/s against size into")
    args = p.parse_args(argv)
    forms_given = args.forms

    if args.what in ("plot", "report"):
        with open(args.json) as f:
            res = json.load(f)
        if args.what == "plot":
            plot(res, args.plot)
        else:
            print(report(res))
        return
    res = {"machine": machine(), "argv": sys.argv[1:]}
    if args.json and os.path.exists(args.json):
        with open(args.json) as f:
            old = json.load(f)
        old.update(res)
        res = old
    print(json.dumps(res["machine"], indent=1))
    def with_forms(step, default):
        def run(a, r):
            a.forms = forms_given or default
            step(a, r)
        run.__name__ = step.__name__
        return run
    table, dist = with_forms(bench_table, FORMS), with_forms(bench_dist, DIST_FORMS)
    cvt = with_forms(bench_cvt, CVT_FORMS)
    steps = {"table": [table], "dist": [dist], "cvt": [cvt], "scaling": [bench_scaling],
             "sizes": [lambda a, r: bench_sizes(a, r, (1, None))],
             "overhead": [bench_overhead], "startup": [bench_startup],
             "all": [bench_startup, bench_overhead, table, dist, cvt, bench_scaling,
                     lambda a, r: bench_sizes(a, r, (1, None))]}[args.what]
    # fma.rp.bf16, fma.rz.oob.bf16, fma.rz.relu.bf16 and fma.rm.oob.relu.bf16x2 are spellings
    # ptxas compiles as other arithmetic, which ptxfp follows by default (policy
    # bf16_fma_directed = "as_compiled"): timed so unless --directed as_spelled (the bf16 kernel
    # their spelling names: the figures before issue 30)
    from ptxfp import policy
    with policy.using(bf16_fma_directed=args.directed):
        for step in steps:
            print(f"== {getattr(step, '__name__', 'sizes')}", flush=True)
            step(args, res)
    try:
        res["machine"]["loadavg_at_end"] = os.getloadavg()
    except OSError:
        pass
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1)
    if args.plot and "sizes" in res:
        plot(res, args.plot)


if __name__ == "__main__":
    main()
