"""``python -m ptxfp.hw --record DIR``: keep a GPU's answers, so that a machine without a GPU
can hold ptxfp to that hardware later (``--replay DIR``, tests/data/gpu).

For every form of the instruction tables that the GPU runs natively (``kernel_for(...).mode ==
'native'``: no decomposition is recorded) it runs the special grid (sampled down to
``grid_cap`` vectors a form), ``targeted`` vectors of ``ptxfp.vectors`` and ``random`` random
vectors, and keeps the inputs and the GPU's result bits.  It also records what ptxfp does not
model yet (``approx.py``): the full 2^16-input tables of the 16-bit ``.approx`` forms the
target accepts (``approx_targets``, ptxas 13.0's decisions) and a sample of their ``.f32``
forms.  No model runs.

Files (the layout of ../shared/gpu/h100-2026-11-27), one compressed ``.npz`` per family:
``gpu_addsubmul.npz`` (add, sub, mul), ``gpu_fma.npz`` (fma, mad), ``gpu_cvt.npz``,
``gpu_minmax.npz`` (min, max, neg, abs), ``gpu_<family>.npz`` for a family added later, and
``gpu_approx.npz``, and ``gpu_mma.npz``: the matrix forms of ``hw/mma.py``
(``HARNESS_FORMS``, ``MMA_INSTANCES`` instances each) whose kernel target the GPU takes
(a kernel built for ``sm_90``: sm 90 and up; for ``sm_90a``, wgmma: sm 90 exactly), keys
``'<spelling>/a'``, ``'/b'``, ``'/c'``, ``'/d'`` (element bits, one instance per leading
index) and ``'/family'`` (``mma.FAMILIES``).  A dry run plays them with ``ptxfp.mma`` (the
model backend) or leaves them out with a note (the interpreter).  Keys ``'<spelling>/<operand>'`` (``a``, ``b``, ``c``, ``e``, ``f``,
``rbits``: the bits each operand held, in the width the kernel loads) and ``'<spelling>/d'``
(the result bits); ``'meta'`` is a JSON string: the GPU, sm, driver, CUDA, backend, ptxfp's
version and source hash, the date, the counts, the command.

Every file is written through ``ptxfp.outputs`` (the project's rules for output files): a
regular file whole or not at all (a temporary file beside it, flushed to disk, renamed over the
old one), a FIFO or a device written to and never replaced; a folder where a file goes, or a DIR
that cannot be made or written, is refused (one line, exit status 2) before anything runs.  The size of the files is bounded before anything
runs (``estimate``: the inputs compressed as they will be, the results at full size): a run
whose bound exceeds ``max_bytes`` (16 MB by default) is refused.
"""

from __future__ import annotations

import datetime
import json
import os
import time
import zlib
from dataclasses import dataclass, field

import numpy as np

from ..errors import PtxfpError
import ptxfp.hw.approx as approx
from .forms import parse_form
from .kernels import kernel_for
from ..vectors.harness import random_vectors, vector_sets

#: defaults: those of the H100 recording (../shared/gpu/h100-2026-11-27)
GRID_CAP = 4096
TARGETED = 2048
RANDOM = 0
#: the most bytes the files of one run may take by default
MAX_BYTES = 16_000_000
#: the default sizes, tried in order until the bound fits: (grid cap, targeted, .approx f32
#: sample).  The first is the H100 recording's (sm_90 fits it); sm_100, with its mixed and
#: small-float forms native, takes the second.
LADDER = ((GRID_CAP, TARGETED, 16384), (2048, 2048, 8192), (1024, 1024, 4096),
          (512, 512, 2048))
#: bytes a member of an .npz takes besides its data: the zip headers (local and central,
#: name twice) and the .npy header (a multiple of 64 bytes, 128 for these arrays)
MEMBER_OVERHEAD = 256
#: the seed of the special grid's sampling (the H100 recording's)
GRID_SEED = 2026
#: the seed of the random vectors (the H100 recording's)
RANDOM_SEED = 7

FAMILY_FILES = ("addsubmul", "fma", "cvt", "minmax", "approx", "mma")
#: instances of each matrix form (hw/mma.py's vectors, seed MMA_SEED): six of each of its ten
#: families (the last three: the open tensor-core questions), few enough that sm_90 keeps the
#: first rung of LADDER under the default bound
MMA_INSTANCES = 60
MMA_SEED = 0


class RecordError(PtxfpError):
    """A --record or --replay that cannot go on: one line for the user (exit status 2)."""


def family(ins):
    """The file (``gpu_<family>.npz``) a form's answers go to."""
    if isinstance(ins, str) and ".approx" in ins:
        return "approx"
    ins = parse_form(ins)
    if ins.family == "arith":
        return "fma" if ins.opcode in ("fma", "mad") else "addsubmul"
    return ins.family


@dataclass
class Item:
    """One form to record: its kernel and the inputs it gets."""
    spelling: str
    family: str
    kernel: object
    operands: dict                 #: name -> 1-D array, in the kernel's source order
    modelled: bool = True          #: ptxfp models it (False: the .approx forms)

    @property
    def count(self):
        return int(next(iter(self.operands.values())).size)

    def result_bytes(self):
        return self.count * self.kernel.result_width // 8


@dataclass
class MmaItem(Item):
    """One matrix form (hw/mma.py): ``operands`` a, b, c (instances x element bits) and
    family; ``count`` is the instances."""

    @property
    def count(self):
        return int(self.operands["family"].size)

    def result_bytes(self):
        return int(np.prod(self.kernel.shapes["d"])) * self.count * self.kernel.widths["d"] // 8


def mma_runs_on(target, sm):
    """Whether a GPU of compute capability ``sm`` runs a kernel built for ``target``
    (``sm_90a``: sm 90 only; ``sm_80``: 80 and up)."""
    num = int(target[3:].rstrip("a"))
    return sm == num if target.endswith("a") else sm >= num


@dataclass
class Plan:
    sm: int
    items: list = field(default_factory=list)
    skipped: dict = field(default_factory=dict)     #: spelling -> why it is not recorded
    sizes: tuple = (GRID_CAP, TARGETED, approx.F32_SAMPLE)   #: grid cap, targeted, f32 sample

    def by_family(self):
        out = {}
        for it in self.items:
            out.setdefault(it.family, []).append(it)
        return out


def _native_inputs(ins, grid_cap, targeted, random, rng):
    cols = None
    sets = list(vector_sets(ins, 0, 0, targeted))
    if random:
        sets.append(("random", random_vectors(ins, random, seed=RANDOM_SEED)))
    for name, ops in sets:
        ops = [np.asarray(o).reshape(-1) for o in ops]
        if name not in ("targeted", "random") and ops[0].size > grid_cap:
            pick = np.sort(rng.choice(ops[0].size, grid_cap, replace=False))
            ops = [o[pick] for o in ops]
        cols = ops if cols is None else [np.concatenate([x, y]) for x, y in zip(cols, ops)]
    return dict(zip(ins.operand_names, cols))


def plan(sm, forms, grid_cap=GRID_CAP, targeted=TARGETED, random=RANDOM,
         f32_sample=approx.F32_SAMPLE, with_approx=True, with_mma=False):
    """What a recording on a GPU of compute capability ``sm`` runs: the native forms among
    ``forms`` (canonical spellings), then the .approx forms ptxas accepts for ``sm_<sm>``
    (``with_approx``: True for all of them, or a collection of the ones wanted), then the
    matrix forms of ``hw/mma.py`` whose kernel the GPU runs (``with_mma``: the same)."""
    p = Plan(sm)
    rng = np.random.default_rng(GRID_SEED)
    for s in forms:
        ins = parse_form(s)
        try:
            k = kernel_for(ins, sm)
        except ValueError as exc:
            p.skipped[str(ins)] = str(exc)
            continue
        if k.mode != "native":
            p.skipped[str(ins)] = f"{k.mode} on sm_{sm}: not recorded"
            continue
        ops = _native_inputs(ins, grid_cap, targeted, random, rng)
        ops = {n: np.ascontiguousarray(ops[n], dtype=f"uint{w}") for n, w in k.sources if w}
        p.items.append(Item(str(ins), family(ins), k, ops))
    if with_approx:
        for s in approx.accepted(sm):
            if with_approx is not True and s not in with_approx:
                continue
            k = approx.approx_kernel(s, f"sm_{sm}")
            p.items.append(Item(s, "approx", k, {"a": approx.approx_inputs(s, f32_sample)},
                                modelled=False))
    if with_mma:
        import ptxfp.hw.mma as mma
        for s in mma.HARNESS_FORMS:
            if with_mma is not True and s not in with_mma:
                continue
            k = mma.kernel_for(s)
            if not mma_runs_on(k.target, sm):
                p.skipped[k.spelling] = f"its kernel is built for {k.target}: not on sm_{sm}"
                continue
            v = mma.vectors(k.spelling, MMA_INSTANCES, MMA_SEED)
            p.items.append(MmaItem(k.spelling, "mma", k, v))
    return p


def _compressed_size(arr):
    return len(zlib.compress(np.ascontiguousarray(arr).tobytes(), 6))


def estimate(p):
    """An upper bound of the bytes the files of ``p`` take: every input array compressed as
    ``numpy.savez_compressed`` will (zlib, level 6), every result array at its full size (deflate
    never stores more than the data plus a few bytes a 16 KB block), and the members' headers."""
    total = 0
    for fam, items in p.by_family().items():
        total += 22 + MEMBER_OVERHEAD + 4096                # end record, the meta member
        for it in items:
            for arr in it.operands.values():
                total += _compressed_size(arr) + MEMBER_OVERHEAD
            rb = it.result_bytes()
            total += rb + 5 * (rb // 16384 + 1) + MEMBER_OVERHEAD
    return total


# ---- writing ---------------------------------------------------------------------------------


def file_name(fam):
    return f"gpu_{fam}.npz"


def check_directory(directory, families=FAMILY_FILES):
    """Make DIR (and its missing parents) or check it is a folder this process can write in,
    and refuse a folder where a file of ours goes: an OutputError (one line) before anything
    runs.  What is there otherwise is ptxfp.outputs' business: a regular file is replaced
    whole, a FIFO or a device is written to (never replaced), a symbolic link is followed."""
    from ..outputs import output_dir, output_error
    d = output_dir(directory, "--record")
    for fam in families:
        path = os.path.join(d, file_name(fam))
        if os.path.isdir(path):
            raise output_error(path, "is a folder (a file of the recording goes there)",
                               "--record")
    return d


def write_npz(directory, name, arrays):
    """Write ``arrays`` as compressed ``directory/name`` through ``ptxfp.outputs``: whole or
    not at all (a temporary file beside it, flushed, renamed over it); a FIFO or a device there
    is written to, not replaced.  Returns the path."""
    from ..outputs import open_output
    path = os.path.join(directory, name)
    with open_output(path, "--record") as f:
        np.savez_compressed(f, **arrays)
    return path


# ---- running ---------------------------------------------------------------------------------


def _provenance():
    from .provenance import _git_revision, _version, source_checksum
    return {"ptxfp": _version(), "git": _git_revision(), "ptxfp_source": source_checksum()}


def sized_plan(sm, forms, grid_cap=None, targeted=None, random=RANDOM, f32_sample=None,
               with_approx=True, max_bytes=MAX_BYTES, with_mma=False):
    """(plan, bound): with every size given, that plan; else the first rung of ``LADDER``
    (for the sizes not given) whose bound fits ``max_bytes``.  RecordError (one line) when
    none fits."""
    given = (grid_cap, targeted, f32_sample)
    rungs = [tuple(g if g is not None else r for g, r in zip(given, rung)) for rung in LADDER]
    if None not in given:
        rungs = rungs[:1]
    for g, t, f in dict.fromkeys(rungs):
        p = plan(sm, forms, g, t, random, f, with_approx, with_mma)
        p.sizes = (g, t, f)
        bound = estimate(p)
        if max_bytes is None or bound <= max_bytes:
            return p, bound
    raise RecordError(
        f"--record: the files could take up to {bound / 1e6:.1f} MB, over the "
        f"{max_bytes / 1e6:.1f} MB allowed (--max-mb): lower --grid-cap, --targeted, "
        "--vectors or --approx-f32")


def record(runner, directory, forms, command="", grid_cap=None, targeted=None,
           random=RANDOM, f32_sample=None, with_approx=True, max_bytes=MAX_BYTES,
           say=print, with_mma=False):
    """Record ``runner``'s answers for ``forms`` into ``directory``; the meta dict (what the
    files hold).  Sizes left None take the first rung of ``LADDER`` that keeps the files under
    ``max_bytes``.  Raises RecordError (one line) before running anything when the directory
    cannot take the files or their bound exceeds ``max_bytes``.  A form the GPU refuses is
    left out and named in the meta (``not_run``); the run goes on.  ``with_mma``: the matrix
    forms too (True, or a collection of spellings), through ``runner.run_mma(kernel, arrays)``
    (a runner without it: left out, named in ``skipped``)."""
    t0 = time.time()
    check_directory(directory)
    dev = runner.device()
    sm = dev["sm"]
    p, bound = sized_plan(sm, forms, grid_cap, targeted, random, f32_sample, with_approx,
                          max_bytes, with_mma)
    grid_cap, targeted, f32_sample = p.sizes
    # a dry run cannot play what ptxfp does not model
    plays_unmodelled = getattr(runner, "plays_unmodelled", runner.hardware)
    meta = {**dev, "hardware": runner.hardware,
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            **_provenance(), "command": command, "grid_cap": grid_cap, "targeted": targeted,
            "random": random, "approx_f32": f32_sample if with_approx else 0,
            "approx_ptxas": _approx_ptxas(), "estimate_bytes": bound,
            "part": f"special grid (at most {grid_cap} vectors a form, sampled), {targeted} "
                    f"targeted and {random} random vectors a native form; .approx: every 16-bit "
                    f"input, {f32_sample} .f32 inputs",
            "mma_instances": MMA_INSTANCES if with_mma else 0,
            "not_run": {}, "counts": {}}
    out = {}
    left_out = [it.spelling for it in p.items if not it.modelled and not plays_unmodelled]
    if left_out:
        say(f"the {len(left_out)} .approx forms are left out: ptxfp does not model them, so "
            "a dry run cannot play them")
    run_mma = getattr(runner, "run_mma", None)
    mma_out = [it.spelling for it in p.items if isinstance(it, MmaItem) and run_mma is None]
    if mma_out:
        say(f"the {len(mma_out)} matrix forms are left out: the {runner.name} backend cannot "
            "run their kernels")
    for it in p.items:
        if it.spelling in left_out:
            p.skipped[it.spelling] = "not modelled by ptxfp: a dry run cannot play it"
            continue
        if it.spelling in mma_out:
            p.skipped[it.spelling] = f"the {runner.name} backend cannot run matrix kernels"
            continue
        if isinstance(it, MmaItem):
            import ptxfp.hw.mma as mma
            try:
                got_arrays = mma.record(it.spelling, run_mma, MMA_INSTANCES, MMA_SEED)
            except Exception as exc:              # report and go on
                from .verify import could_not_run
                meta["not_run"][it.spelling] = could_not_run(exc)
                say(f"  {it.spelling}: {could_not_run(exc)}"[:300])
                continue
            out.setdefault(it.family, {}).update(got_arrays)
            meta["counts"][it.spelling] = it.count
            continue
        try:
            got = np.asarray(runner.run(it.kernel, it.operands)).reshape(-1)
            if got.size != it.count:
                raise ValueError(f"{got.size} results for {it.count} vectors")
        except Exception as exc:              # report and go on
            from .verify import could_not_run
            meta["not_run"][it.spelling] = could_not_run(exc)
            say(f"  {it.spelling}: {could_not_run(exc)}"[:300])
            continue
        arrays = out.setdefault(it.family, {})
        for n, col in it.operands.items():
            arrays[f"{it.spelling}/{n}"] = col
        arrays[f"{it.spelling}/d"] = got.astype(f"uint{it.kernel.result_width}")
        meta["counts"][it.spelling] = it.count
    meta["forms"] = len(meta["counts"])
    meta["vectors"] = sum(meta["counts"].values())
    meta["skipped"] = p.skipped
    meta["files"] = {}
    for fam, arrays in out.items():
        fam_meta = dict(meta, family=fam,
                        family_forms=sum(1 for k in arrays if k.endswith("/d")))
        path = write_npz(directory, file_name(fam), {"meta": np.array(json.dumps(fam_meta)),
                                                     **arrays})
        size = os.path.getsize(path)
        meta["files"][file_name(fam)] = size
        say(f"{path}: {fam_meta['family_forms']} forms, {size / 1e6:.2f} MB")
    meta["seconds"] = time.time() - t0
    say(f"recorded {meta['forms']} forms, {meta['vectors']:,} vectors, "
        f"{sum(meta['files'].values()) / 1e6:.2f} MB (bound {bound / 1e6:.2f} MB) in "
        f"{meta['seconds']:.0f} s on {dev.get('gpu')} (sm_{sm})"
        + (f"; {len(meta['not_run'])} not run" if meta["not_run"] else ""))
    return meta


def _approx_ptxas():
    import ptxfp.hw.approx_targets as approx_targets
    return approx_targets.PTXAS


# ---- reading back ----------------------------------------------------------------------------


def load(directory):
    """The recorded answers in ``directory``: ``{spelling: {operand: array, ..., 'd': array}}``
    and the meta of each file (``{file name: meta dict}``).  RecordError (one line) for a file
    that is not such a recording."""
    d = os.fspath(directory)
    if not os.path.isdir(d):
        raise RecordError(f"{d}: not a directory")
    names = sorted(n for n in os.listdir(d) if n.startswith("gpu_") and n.endswith(".npz"))
    if not names:
        raise RecordError(f"{d}: no gpu_*.npz files")
    forms, metas = {}, {}
    for n in names:
        path = os.path.join(d, n)
        try:
            with np.load(path, allow_pickle=False) as z:
                keys = list(z.files)
                if "meta" not in keys:
                    raise RecordError(f"{path}: no 'meta' entry")
                metas[n] = json.loads(str(z["meta"]))
                for k in keys:
                    if k == "meta":
                        continue
                    spelling, _, operand = k.rpartition("/")
                    if not spelling or not operand:
                        raise RecordError(f"{path}: key '{k}' is not '<spelling>/<operand>'")
                    forms.setdefault(spelling, {})[operand] = z[k]
        except RecordError:
            raise
        except (OSError, ValueError, KeyError) as exc:
            raise RecordError(f"{path}: not a recording ({type(exc).__name__}: "
                              f"{str(exc).splitlines()[0] if str(exc) else ''})") from None
    for s, cols in forms.items():
        if "d" not in cols:
            raise RecordError(f"{d}: '{s}' has no result ('{s}/d')")
        sizes = {a.shape[0] if a.ndim else a.size for a in cols.values()}
        if len(sizes) != 1:
            raise RecordError(f"{d}: the arrays of '{s}' differ in length")
    return forms, metas


@dataclass
class Replayed:
    spelling: str
    vectors: int = 0
    mismatches: int = 0
    examples: list = field(default_factory=list)
    note: str = ""                 #: why it was not compared ('' when it was)


def replay(directory, forms=None, examples=3, progress=None):
    """Compare ptxfp, under the policy in force, with the answers recorded in ``directory``:
    a ``Replayed`` per recorded form (``note`` says why a form was not compared: ptxfp does not
    model it, or ``forms`` left it out).  ``progress(done, total, spelling)``, when given, is
    called before each form (the first replay compiles every form's kernels: minutes)."""
    from .forms import model
    recorded, metas = load(directory)
    wanted = None if forms is None else set(forms)
    out = []
    for k, (s, cols) in enumerate(recorded.items()):
        if progress is not None:
            progress(k, len(recorded), s)
        r = Replayed(s)
        out.append(r)
        if ".approx" in s:
            r.note = "not modelled by ptxfp"
            continue
        if s.startswith(("mma.", "wgmma.")):
            _replay_mma(r, cols, metas.get(file_name("mma"), {}), wanted, examples)
            continue
        try:
            ins = parse_form(s)
        except ValueError as exc:
            r.note = f"not a form ptxfp knows ({str(exc).splitlines()[0]})"
            continue
        if wanted is not None and str(ins) not in wanted:
            r.note = "not selected"
            continue
        names = list(ins.operand_names)
        missing = [n for n in names if n not in cols]
        if missing:
            r.note = f"operand(s) {', '.join(missing)} not recorded"
            continue
        want = cols["d"].reshape(-1)
        got = np.asarray(model(ins, *(cols[n] for n in names))).reshape(-1)
        r.vectors = int(want.size)
        bad = np.flatnonzero(got.astype(np.uint64) != want.astype(np.uint64))
        r.mismatches = int(bad.size)
        for i in bad[:examples]:
            ex = {n: "0x%X" % int(cols[n][i]) for n in names}
            ex["gpu"], ex["ptxfp"] = "0x%X" % int(want[i]), "0x%X" % int(got[i])
            r.examples.append(ex)
    return out


def _replay_mma(r, cols, meta, wanted, examples):
    """Compare one recorded matrix form with ``ptxfp.mma`` on the recording's target (wgmma:
    its arch-specific one), element by element of D."""
    from ..tensor.api import mma as model_mma
    s = r.spelling
    if wanted is not None and s not in wanted:
        r.note = "not selected"
        return
    missing = [n for n in "abc" if n not in cols]
    if missing:
        r.note = f"operand(s) {', '.join(missing)} not recorded"
        return
    sm = int(meta.get("sm", 90))
    target = f"sm_{sm}" + ("a" if s.startswith("wgmma.") else "")
    try:
        got = np.asarray(model_mma(s, cols["a"], cols["b"], cols["c"], target=target))
    except ValueError as exc:
        r.note = f"ptxfp.mma cannot compute it ({str(exc).splitlines()[0]})"
        return
    want = cols["d"]
    r.vectors = int(want.shape[0])
    diff = (got.reshape(want.shape[0], -1).astype(np.uint64)
            != want.reshape(want.shape[0], -1).astype(np.uint64))
    bad = np.flatnonzero(diff.any(axis=1))
    r.mismatches = int(bad.size)
    for i in bad[:examples]:
        j = int(np.flatnonzero(diff[i])[0])
        r.examples.append({"instance": str(int(i)), "element": str(j),
                           "gpu": "0x%X" % int(want.reshape(want.shape[0], -1)[i, j]),
                           "ptxfp": "0x%X" % int(got.reshape(want.shape[0], -1)[i, j])})
