"""Fuzzing (issue #10): hostile and random input through every public door.

Spellings, operand arrays of any dtype and shape, and PTX modules and snippets built from a
small grammar and then mutated (truncation, byte flips, nesting, huge numbers, non-UTF-8, a
BOM) go through ``execute``, ``convert``, ``parse``, ``check``, ``run`` and the CLI.  The
contract: a clean result or a ``PtxfpError`` (one line from the CLI, exit 2), never another
exception, and no call over 2 s or 500 MB (Python and NumPy allocations, via tracemalloc).

Two Hypothesis profiles:

* the default suite runs ``FUZZ_EXAMPLES`` examples per property (a few hundred in all, well
  under a minute on two cores);
* ``pytest -m slow tests/test_fuzz.py`` runs the long profile, ``PTXFP_FUZZ_LONG`` examples
  per property (default 10**6 in all over the properties).  docs/verification.md records the
  last long run.
"""

import contextlib
import functools
import io
import json
import os
import sys
import tempfile
import time
import tracemalloc

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ptxfp
from ptxfp import cli
from ptxfp.ptx.interp import inputs_needed

try:
    import resource
except ImportError:                                  # pragma: no cover (not POSIX)
    resource = None

#: per-call limits of the issue
MAX_SECONDS = 2.0
MAX_BYTES = 500 << 20
#: a call that waits rather than computes (a lock, a sleep): the wall clock's bound
MAX_WALL = 30.0

#: examples per property in the default suite, and in the long (-m slow) profile: the long
#: profile's PTXFP_FUZZ_LONG inputs are shared by the properties that run (7 by default; a
#: property selector -k runs fewer), PTXFP_FUZZ_COUNT overrides the per-property count, and
#: PTXFP_FUZZ_SECONDS (if set) stops each property at the first chunk past that many seconds.
FUZZ_EXAMPLES = int(os.environ.get("PTXFP_FUZZ_EXAMPLES", "40"))
LONG_TOTAL = int(os.environ.get("PTXFP_FUZZ_LONG", str(10**6)))
PROPERTIES = 7
LONG_COUNT = int(os.environ.get("PTXFP_FUZZ_COUNT", "0")) or max(1, LONG_TOTAL // PROPERTIES)
LONG_SECONDS = float(os.environ.get("PTXFP_FUZZ_SECONDS", "0")) or None
#: the long profile runs in fresh Hypothesis runs of this many examples (a progress line each)
LONG_CHUNK = int(os.environ.get("PTXFP_FUZZ_CHUNK", "5000"))
#: in the long profile one call in TRACE_EVERY (per door) is weighed exactly with tracemalloc;
#: every call, in both profiles, runs under an RLIMIT_DATA cap of what the process holds plus
#: MAX_BYTES, so a larger allocation fails as a MemoryError (which fails the property)
LONG_TRACE_EVERY = int(os.environ.get("PTXFP_FUZZ_TRACE_EVERY", "16"))

_COMMON = dict(deadline=None, derandomize=False, database=None,
               suppress_health_check=list(HealthCheck))
settings.register_profile("ptxfp-fuzz", max_examples=FUZZ_EXAMPLES, **_COMMON)
# the long profile: only generation (and shrinking, which costs nothing until a failure)
settings.register_profile("ptxfp-fuzz-long", max_examples=min(LONG_COUNT, LONG_CHUNK),
                          phases=[Phase.generate, Phase.shrink], report_multiple_bugs=False,
                          print_blob=True, **_COMMON)
FAST = settings.get_profile("ptxfp-fuzz")
LONG = settings.get_profile("ptxfp-fuzz-long")

#: how many calls went through, by door (for the record in docs/verification.md)
COUNTS = {}
#: 1: every call weighed with tracemalloc (the default suite); n: one call in n (long profile)
TRACE_EVERY = 1

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def _data_bytes():
    """What the process holds now in data (heap and private mappings): /proc/self/statm."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[5]) * _PAGE
    except (OSError, ValueError, IndexError):         # pragma: no cover (not Linux)
        return None


@contextlib.contextmanager
def _data_cap():
    """RLIMIT_DATA = what the process holds + MAX_BYTES for the length of one call: an
    allocation past it fails with MemoryError (heap and NumPy buffers alike; Linux >= 4.7),
    cheaply, where tracemalloc costs several times the call.  ptxfp's own size checks read
    RLIMIT_AS and the machine's free memory, not this, so they decide as without the cap."""
    held = _data_bytes() if resource is not None else None
    if held is None:
        yield
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    cap = held + MAX_BYTES
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    resource.setrlimit(resource.RLIMIT_DATA, (cap, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_DATA, (soft, hard))


#: what ptxfp says when a MemoryError got past its size checks (limits.guarded, cli.main):
#: a clean PtxfpError, but here it means a call asked for more than MAX_BYTES
OUT_OF_MEMORY = ("ran out of memory", "out of memory (the input asks")


def bounded(door, fn, *args, **kwargs):
    """Call fn; only a PtxfpError (or a result) may come out, within the time and memory
    limits.  Returns the result, or the PtxfpError."""
    n = COUNTS[door] = COUNTS.get(door, 0) + 1
    trace = n % TRACE_EVERY == 0
    for attempt in (0, 1):
        if trace:
            tracemalloc.start()                      # counts only what this call allocates
        t0, c0 = time.perf_counter(), time.process_time()
        try:
            with _data_cap():
                out = fn(*args, **kwargs)
        except ptxfp.PtxfpError as e:
            out = e
            assert str(e).strip(), f"{door}: an empty error message"
        finally:
            if trace:
                peak = tracemalloc.get_traced_memory()[1]
                tracemalloc.stop()
        took, cpu = time.perf_counter() - t0, time.process_time() - c0
        # The limit is on the CPU time the call spends (what the input costs): the long
        # profile runs under nice 19 on shared machines, where a cheap call can wait seconds
        # for a core.  The wall clock still bounds a call that waits instead of working.
        if cpu < MAX_SECONDS and took < MAX_WALL:
            break
        # The first call of a form compiles (or loads) its Numba kernel, which can take
        # seconds once per process: that is not the input's cost, so a slow call is timed
        # again, and only a second slow call fails.
        COUNTS["retimed"] = COUNTS.get("retimed", 0) + 1
    assert cpu < MAX_SECONDS, f"{door}: {cpu:.2f} s of CPU on {args!r:.300}"
    assert took < MAX_WALL, f"{door}: {took:.2f} s (wall clock) on {args!r:.300}"
    if trace:
        COUNTS["weighed"] = COUNTS.get("weighed", 0) + 1
        assert peak < MAX_BYTES, f"{door}: {peak >> 20} MB on {args!r:.300}"
    if isinstance(out, ptxfp.PtxfpError):
        assert not any(w in str(out) for w in OUT_OF_MEMORY), \
            f"{door}: over {MAX_BYTES >> 20} MB ({out}) on {args!r:.300}"
    return out


# --- spellings ----------------------------------------------------------------------------------

OPCODES = ["add", "sub", "mul", "fma", "cvt", "mov", "ld", "st", "setp", "selp", "mad", "bra",
           "ret", "neg", "shl", "and", "min", "cvta", ""]
MODS = ["rn", "rz", "rm", "rp", "rna", "rs", "ftz", "sat", "relu", "oob", "satfinite", "approx",
        "lo", "wide", "hi", "global", "param", "v2", "v4", "uni", "lt", "eq"]
TYPES = ["f16", "bf16", "f16x2", "bf16x2", "f32", "f64", "b16", "b32", "b64", "u16", "u32",
         "s32", "u64", "s64", "pred", "tf32", "e4m3x2", "b8", "u8"]
WORD = st.sampled_from(MODS + TYPES) | st.text(min_size=0, max_size=6)

spellings = st.one_of(
    st.builds(lambda op, rest: ".".join([op] + rest), st.sampled_from(OPCODES),
              st.lists(WORD, max_size=6)),
    st.text(max_size=40),
    st.sampled_from(["fma.rn.f16", "add.rn.bf16x2", "cvt.rn.f16.f32", "fma.rn.f32.bf16",
                     "cvt.rn.relu.bf16x2.f32", "mul.rn.ftz.sat.f16x2", "cvt.f32.bf16"]),
)

VALID = ["fma.rn.f16", "add.rn.bf16x2", "fma.rn.oob.relu.bf16", "sub.rz.ftz.sat.f16x2",
         "fma.rn.f32.f16", "add.rn.f32.bf16", "mul.rn.bf16"]
VALID_CVT = ["cvt.rn.f16.f32", "cvt.rn.relu.bf16x2.f32", "cvt.f32.bf16", "cvt.rz.satfinite.f16.f32",
             "cvt.f32.f16", "cvt.rn.f16x2.f32"]

# --- operands of any dtype and shape --------------------------------------------------------------

_SHAPES = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5)
_DTYPES = hnp.scalar_dtypes() | hnp.integer_dtypes(endianness="=") | st.just(np.dtype(object))


def _huge_view(side):
    # zero-copy views whose broadcast product is enormous
    return np.broadcast_to(np.zeros(1, np.uint16), (side, side))


operand = st.one_of(
    st.integers(min_value=-(1 << 70), max_value=1 << 70),
    st.integers(min_value=0, max_value=0xFFFF),
    st.floats(allow_nan=True),
    st.booleans(),
    st.none(),
    st.text(max_size=5),
    st.binary(max_size=5),
    st.lists(st.integers(min_value=-5, max_value=1 << 40), max_size=5),
    st.lists(st.lists(st.integers(0, 0xFFFF), max_size=3), max_size=3),
    hnp.arrays(_DTYPES.filter(lambda d: d.kind != "O"), _SHAPES),
    hnp.arrays(np.uint16, _SHAPES),
    hnp.arrays(np.uint32, hnp.array_shapes(min_dims=1, max_dims=2, max_side=4)),
    # (sizes either small or past any machine: a request that fits is the caller's to make)
    st.builds(_huge_view, st.sampled_from([10**6, 10**7])),
    st.builds(lambda n: np.broadcast_to(np.uint32(0), (n, 1, n)),
              st.sampled_from([10**6, 10**8])),
    st.builds(lambda xs: np.array(xs, dtype=object), st.lists(st.integers(), max_size=3)),
)


# --- PTX text from a small grammar, then mutated ------------------------------------------------

REG = st.builds(lambda p, k: f"%{p}{k}", st.sampled_from(["h", "r", "f", "p", "rd", "x"]),
                st.integers(0, 12) | st.sampled_from([999999999, 10**30]))
IMM = st.sampled_from(["0f3F800000", "0d3FF0000000000000", "1.5", "-1", "0x7fff", "42", "1e308",
                       "0b101", "017", "9" * 50, "0x" + "f" * 40, "-0f80000000", "1.0e-400"])


# (the strategies are built once, here: built inside a draw, each is made and validated anew
# for every example, which was a third of the generation time)
_KIND = [st.integers(0, 6), st.integers(0, 6), st.integers(0, 6), st.integers(0, 3)]
_BASE = REG | st.sampled_from(["p0", "buf"])
_OFF = st.sampled_from(["", "+4", "-8", "+" + "9" * 25, "+0x10"])


@st.composite
def operand_text(draw, depth=0):
    kind = draw(_KIND[min(depth, 3)])
    if kind <= 1:
        return draw(REG)
    if kind == 2:
        return draw(IMM)
    if kind == 3:
        return f"[{draw(_BASE)}{draw(_OFF)}]"
    items = draw(_VECTOR[depth])
    return "{" + ", ".join(items) + "}"


_VECTOR = [st.lists(operand_text(depth=d + 1), min_size=0, max_size=4) for d in range(3)]
_OPERANDS = st.lists(operand_text(), min_size=0, max_size=5)
_STMT_KIND = st.integers(0, 9)
_DECL_TYPE = st.sampled_from(TYPES)
_DECL_NAME = st.sampled_from(["%h", "%r", "%f", "%p", "%rd", "x"])
_DECL_COUNT = st.sampled_from(["", "<4>", "<1000000000>", "<" + "9" * 30 + ">", "<0>"])
_OTHER = st.sampled_from(["L1:", "$L__BB0_2:", "{", "}", "bra L1;", "ret;", "@%p1 bra L1;",
                          "exit;"])
_GUARD = st.sampled_from(["", "", "@%p1 ", "@!%p2 "])
_SPELLING = st.sampled_from(VALID + VALID_CVT + [
    "mov.b32", "mov.b16", "add.s32", "setp.lt.s32", "selp.b16", "ld.global.b16",
    "st.global.b32", "ld.param.u64", "cvt.u32.u16", "shl.b32", "mul.wide.u32",
    "cvta.to.global.u64", "and.pred", "mad.lo.s32", "not.b16"]) | spellings


@st.composite
def statement(draw):
    k = draw(_STMT_KIND)
    if k == 0:
        return f".reg .{draw(_DECL_TYPE)} {draw(_DECL_NAME)}{draw(_DECL_COUNT)};"
    if k == 1:
        return draw(_OTHER)
    pred = draw(_GUARD)
    sp = draw(_SPELLING)
    ops = draw(_OPERANDS)
    return f"{pred}{sp} {', '.join(ops)};"


_BODY = st.lists(statement(), min_size=0, max_size=12)
_HEAD = st.sampled_from([".version 8.6\n.target sm_90\n.address_size 64\n",
                         ".version 9.9\n.target sm_1000\n", ".version 7.0\n",
                         ".target sm_90a\n", ""])
_PARAMS = st.sampled_from(["", ".param .u64 p0", ".param .b16 p0, .param .u64 p1"])


@st.composite
def ptx_text(draw):
    body = draw(_BODY)
    if draw(st.booleans()):
        head = draw(_HEAD)
        params = draw(_PARAMS)
        text = head + f".visible .entry k({params})\n{{\n" + "\n".join(body) + "\n}\n"
    else:
        text = "\n".join(body)
    return mutate(draw, text)


_NMUT = st.integers(0, 3)
_HOW = st.integers(0, 7)
_BIT = st.integers(0, 7)
_DEPTH = st.sampled_from([2, 40, 5000])
_HUGE = st.sampled_from(["9" * 5000, "0x" + "f" * 2000, "1e99999", "<" + "9" * 400 + ">"])
_JUNK = st.text(max_size=20)
_REPEAT = st.integers(1, 3)


def mutate(draw, text):
    for _ in range(draw(_NMUT)):
        how = draw(_HOW)
        n = len(text)
        i = draw(st.integers(0, n))
        if how == 0:                                     # truncation
            text = text[:i]
        elif how == 1 and n:                             # a flipped character
            j = min(i, n - 1)
            text = text[:j] + chr(ord(text[j]) ^ (1 << draw(_BIT))) + text[j + 1:]
        elif how == 2:                                   # nesting
            k = draw(_DEPTH)
            text = text[:i] + "{" * k + "%r1" + "}" * draw(st.sampled_from([0, k])) + text[i:]
        elif how == 3:                                   # a huge number
            text = text[:i] + draw(_HUGE) + text[i:]
        elif how == 4:                                   # a byte order mark
            text = "\ufeff" + text
        elif how == 5:                                   # what non-UTF-8 bytes decode to
            text = text[:i] + b"\xff\xfe\xc3(".decode("utf-8", "surrogateescape") + text[i:]
        elif how == 6:                                   # random text
            text = text[:i] + draw(_JUNK) + text[i:]
        else:                                            # a repeated chunk
            text = text + text[i:] * draw(_REPEAT)
    return text


@st.composite
def mutated(draw, text):
    return mutate(draw, text)


# --- the properties ----------------------------------------------------------------------------------

def _spelling(s):
    bounded("parse", ptxfp.parse, s)
    bounded("check", ptxfp.check, s)
    for k in (0, 1, 2, 3):
        bounded("execute", ptxfp.execute, s, *([0x3C00] * k))
        bounded("convert", ptxfp.convert, s, *([0x3C00] * k))


def _operands(args):
    sp, cv, ops = args
    r = bounded("execute", ptxfp.execute, sp, *ops)
    assert isinstance(r, (int, np.ndarray, np.generic, ptxfp.PtxfpError)), type(r)
    r = bounded("convert", ptxfp.convert, cv, *ops[:2])
    assert isinstance(r, (int, np.ndarray, np.generic, ptxfp.PtxfpError)), type(r)


def _text(text):
    rep = bounded("check", ptxfp.check, text)
    assert isinstance(rep, (list, ptxfp.PtxfpError))
    need = bounded("run", inputs_needed, text)
    inputs = {}
    if isinstance(need, dict):
        for k, (name, info) in enumerate(need.items()):
            if k % 3 != 2:                            # leave some out: an error names them
                inputs[name] = (k * 0x3C01) & ((1 << min(info.width, 16)) - 1) \
                    if info.width > 1 else k % 2
    bounded("run", ptxfp.run, text, inputs, threads=(len(text) % 3) + 1,
            memory=bytes(64) if len(text) % 2 else None)


def _run_args(args):
    text, threads, memory, inputs = args
    bounded("run", ptxfp.run, text, inputs, threads=threads, memory=memory)


def _cli_main(argv):
    """cli.main in this process, its stdout and stderr caught afresh for each call (a call
    that bounded() times again must not leave its first output in the second's)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = cli.main(argv)
    return rc, out.getvalue(), err.getvalue()


def _encoded(text):
    """The file's bytes: a mutation's non-UTF-8 bytes (surrogate escapes) back as raw bytes;
    a lone surrogate that escapes no byte (a flipped bit can make one) as UTF-8 would spell
    it, itself not valid UTF-8."""
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass")


def _cli(args):
    text, as_bytes, argv = args
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "in.ptx")
        with open(path, "wb") as f:
            f.write(_encoded(text) + (b"\xff\xfe" if as_bytes else b""))
        for cmd in (["check", path] + argv[:1], ["run", path] + argv):
            rc, out, err = bounded("cli", _cli_main, cmd)
            assert rc in (0, 1, 2), (cmd, rc)
            msg = err
            assert "Traceback" not in msg + out, msg
            assert not any(w in msg + out for w in OUT_OF_MEMORY), (cmd, msg)
            if rc == 2 and "--json" in cmd:          # with --json the error is JSON on stdout
                assert "error" in json.loads(out), out
            elif rc == 2:
                assert msg.count("\n") == 1 and msg.startswith("ptxfp: error: "), msg


run_args = st.tuples(
    ptx_text(),
    st.one_of(st.none(), st.integers(-3, 8), st.sampled_from([10**12, 10**18, 0]),
              st.floats(), st.just("4"), st.booleans()),
    st.one_of(st.none(), st.binary(max_size=64), st.just(np.zeros(16, np.uint8)),
              st.just(np.zeros(4, np.float32)), st.just("abc"), st.integers(),
              st.just(np.broadcast_to(np.uint8(0), (10**12,)))),
    st.dictionaries(st.sampled_from(["%h1", "h2", "%r1", "p0", "%f1", "nope", "%p1"]),
                    operand, max_size=4),
)
cli_args = st.tuples(
    ptx_text(), st.booleans(),
    st.lists(st.sampled_from(["--threads", "1000000000000", "3", "--memory", "1000000000000",
                              "0x10", "64", "--set", "h1=1.0f16", "r1=0x" + "f" * 50,
                              "--json", "--entry", "k", "--target", "sm_90", "-5", "9" * 60]),
             max_size=6),
)
operand_args = st.tuples(st.sampled_from(VALID), st.sampled_from(VALID_CVT),
                         st.lists(operand, min_size=0, max_size=4))

PROPS = [
    ("spelling", spellings, _spelling),
    ("operands", operand_args, _operands),
    ("text", ptx_text(), _text),
    ("text-valid", st.lists(statement(), max_size=20).map("\n".join), _text),
    ("run", run_args, _run_args),
    ("cli", cli_args, _cli),
    ("spelling-mutated", spellings.flatmap(mutated), _spelling),
]
assert len(PROPS) == PROPERTIES


def _make(prop, profile, ran=None):
    _, strategy, body = prop

    @profile
    @given(strategy)
    def test(x):
        if ran is not None:
            ran[0] += 1
        body(x)
    return test


@pytest.mark.parametrize("prop", PROPS, ids=[p[0] for p in PROPS])
def test_fuzz(prop):
    _make(prop, FAST)()


@pytest.fixture
def long_profile(monkeypatch):
    """The long profile's cheaper bookkeeping: exact tracemalloc on one call in
    LONG_TRACE_EVERY (the RLIMIT_DATA cap holds every call), and the CLI's argparse parser
    built once (the same parser; building it is 90% of an in-process cli.main call)."""
    monkeypatch.setattr(sys.modules[__name__], "TRACE_EVERY", max(1, LONG_TRACE_EVERY))
    monkeypatch.setattr(cli, "build_parser", functools.lru_cache(maxsize=1)(cli.build_parser))
    COUNTS.clear()
    yield


def _progress(name, ran, took, done=""):
    rate = ran / took if took else 0.0
    calls = ", ".join(f"{k} {v}" for k, v in sorted(COUNTS.items()))
    print(f"fuzz-long {name}: {ran} inputs in {took:.0f} s ({rate:.1f}/s); calls: {calls}"
          f"{done}", flush=True)


@pytest.mark.slow
@pytest.mark.parametrize("prop", PROPS, ids=[p[0] for p in PROPS])
def test_fuzz_long(prop, long_profile):
    """PTXFP_FUZZ_COUNT (or PTXFP_FUZZ_LONG / 7) inputs of one property, in fresh Hypothesis
    runs of LONG_CHUNK examples; a progress line (inputs, rate, calls by door) after each, on
    stdout (run pytest with -s to see it); PTXFP_FUZZ_SECONDS stops it early, and says so."""
    name = prop[0]
    ran = [0]
    t0 = time.perf_counter()
    while ran[0] < LONG_COUNT:
        _make(prop, settings(LONG, max_examples=min(LONG_CHUNK, LONG_COUNT - ran[0])), ran)()
        took = time.perf_counter() - t0
        if LONG_SECONDS is not None and took > LONG_SECONDS and ran[0] < LONG_COUNT:
            _progress(name, ran[0], took, f"; stopped at PTXFP_FUZZ_SECONDS={LONG_SECONDS:g} "
                      f"({LONG_COUNT - ran[0]} of {LONG_COUNT} not run), 0 failures")
            return
        _progress(name, ran[0], took, "" if ran[0] < LONG_COUNT else "; done, 0 failures")


# --- the listed hostile cases, each answered quickly with one error -----------------------------

def test_huge_register_ranges_are_cheap():
    types = "b8 b16 b32 b64 u16 u32 s32 u64 s64 f16 f16x2 f32 f64 pred".split()
    decl = "\n".join(f".reg .{t} %{t}_<1000000000>;" for t in types)
    text = (f".version 8.6\n.target sm_90\n.visible .entry k()\n{{\n{decl}\n"
            ".reg .b16 %h<1000000000>;\n"
            "fma.rn.f16 %h999999999, %h1, %h2, %h3;\nadd.rn.f16 %b16_7, %h999999999, %h2;\n"
            "add.rn.f16 %h5, %h1000000000, %h2;\nret;\n}\n")
    tracemalloc.start()
    try:
        t0 = time.perf_counter()
        rep = ptxfp.check(text)
        took = time.perf_counter() - t0
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert took < 1.0 and peak < 200 << 20
    # the one name past the range is reported, the others are declared
    und = [d for d in rep if d.rule == "undeclared"]
    assert [(d.line, d.message.split(" (")[0]) for d in und] == [
        (22, "Unknown symbol '%h1000000000'")]
    out = ptxfp.run(text.replace("%h1000000000", "%h999999999"),
                    {"%h1": 0x3C00, "%h2": 0x4000, "%h3": 0x3C00})
    # 1 * 2 + 1 = 3 (0x4200); 3 + 2 = 5 (0x4500): f16 encodings worked by hand
    assert int(out["%h999999999"][0]) == 0x4200 and int(out["%b16_7"][0]) == 0x4500


@pytest.mark.parametrize("argv, word", [
    (["--threads", "1000000000000"], "--threads 1000000000000"),
    (["--memory", "1000000000000"], "--memory 1000000000000"),
    (["--memory", "9" * 80], "--memory 9999"),
])
def test_cli_huge_sizes_one_line(tmp_path, capsys, argv, word):
    f = tmp_path / "a.ptx"
    f.write_text("add.rn.f16 %h1, %h2, %h3;\n")
    rc = cli.main(["run", str(f), "--set", "h2=0x3c00", "h3=0x3c00"] + argv)
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and word in err, err


def test_api_huge_sizes_raise_ptxfp_errors():
    with pytest.raises(ptxfp.ResourceError, match="threads"):
        ptxfp.run("add.rn.f16 %h1, %h2, %h3;", {"%h2": 0, "%h3": 0}, threads=10**12)
    with pytest.raises(ptxfp.ResourceError, match="memory"):
        ptxfp.run("add.rn.f16 %h1, %h2, %h3;", {"%h2": 0, "%h3": 0},
                  memory=np.broadcast_to(np.uint8(0), (10**13,)))
    with pytest.raises(ptxfp.ResourceError, match="operands of 'add.rn.f16'"):
        ptxfp.execute("add.rn.f16", _huge_view(10**7), np.zeros((10**7, 1), np.uint16))
    with pytest.raises(ptxfp.ResourceError, match="operands of 'cvt.rn.f16.f32'"):
        ptxfp.convert("cvt.rn.f16.f32", np.broadcast_to(np.uint32(0), (10**7, 10**7)))
    with pytest.raises(ptxfp.ResourceError, match="to_bits"):
        ptxfp.to_bits(np.broadcast_to(1.0, (10**7, 10**7)), "f16")
    with pytest.raises(ptxfp.ResourceError, match="from_bits"):
        ptxfp.from_bits(np.broadcast_to(np.uint16(1), (10**7, 10**7)), "f16")
    with pytest.raises(ptxfp.OperandError, match="threads"):
        ptxfp.run("add.rn.f16 %h1, %h2, %h3;", {"%h2": 0, "%h3": 0}, threads=-1)


def test_deep_nesting_and_long_numbers_are_syntax_errors():
    rep = ptxfp.check("mov.b32 %r1, " + "{" * 10000 + "%r2" + "}" * 10000 + ";")
    assert rep.errors and rep.errors[0].rule == "syntax" and "nested" in rep.errors[0].message
    rep = ptxfp.check("add.s32 %r1, %r2, " + "9" * 5000 + ";")
    assert rep.errors and rep.errors[0].rule == "syntax"
    rep = ptxfp.check("{" * 100000 + "\nadd.rn.f16 %h1, %h2, %h3;\n" + "}" * 100000)
    assert rep.errors and "blocks nested" in rep.errors[0].message
    with pytest.raises(ptxfp.PtxfpError, match="blocks nested"):
        ptxfp.run("{" * 100000 + "\nadd.rn.f16 %h1, %h2, %h3;\n" + "}" * 100000)


@pytest.mark.skipif(_data_bytes() is None or resource is None, reason="RLIMIT_DATA: Linux")
def test_bounded_fails_an_over_allocation(monkeypatch):
    # the harness itself: an allocation past MAX_BYTES fails the property, whether it comes
    # out as a MemoryError or as ptxfp's one-line answer to one, weighed or not
    from ptxfp.limits import guarded
    big = MAX_BYTES + (100 << 20)
    with pytest.raises(AssertionError, match=r"test: \d+ MB on"):          # tracemalloc
        bounded("test", guarded("test")(np.ones), big, np.uint8)
    monkeypatch.setattr(sys.modules[__name__], "TRACE_EVERY", 10**9)   # the cap alone
    with pytest.raises(MemoryError):
        bounded("test", np.ones, big, np.uint8)
    with pytest.raises(AssertionError, match="over 500 MB"):
        bounded("test", guarded("test")(np.ones), big, np.uint8)
    assert bounded("test", np.ones, 100 << 20, np.uint8).size == 100 << 20


def test_cli_property_writes_any_surrogate():
    # found by the long run: a flipped bit makes a surrogate that escapes no byte
    _cli(("\udc7f\udcfe\udcc3(", False, []))
    _cli(("fma.rn.f16 %h1\udc7f;", True, ["--json"]))


def test_ragged_run_input_is_an_operand_error():
    # found by the long run: a ragged list as an input went to np.asarray (a ValueError)
    text = (".version 8.6\n.target sm_90\n.address_size 64\n"
            ".visible .entry k(.param .u64 p0)\n{\n\n}\n")
    with pytest.raises(ptxfp.OperandError, match="input 'p0'"):
        ptxfp.run(text, {"p0": [[], [0]]})
    with pytest.raises(ptxfp.OperandError, match="input '%h2'"):
        ptxfp.run("add.rn.f16 %h1, %h2, %h3;", {"%h2": [[1], [2, 3]], "%h3": 0})
