"""ptxfp.mma / ptxfp.matmul held to MMA-Sim 2.1.1 itself (``pip install mmasim==2.1.1``; P. Xie
et al., arXiv:2511.10909, github.com/microsoft/MMA-Sim), on every configuration both model.

The configurations are enumerated from both sides: MMA-Sim's lists of (architecture, shape and
types) for mma, wgmma and tcgen05.mma (its ``nv_ptx.isa_*`` modules) against ptxfp's rows of
the matrix instructions (``ptxfp.isa.mma.ROWS``) and the targets its numerics take
(``ptxfp.tensor.params_for``).  N enters neither model's numerics: of each (architecture,
instruction, M, K, kind, types) the smallest N is run.  Each configuration gets six kinds of
input: random normal values, random bit patterns, cancellation, overflow, all-subnormal
inputs, zeros beside the largest factors; every vector is one dot product of K = the
instruction's k (MMA-Sim's ``dpa``; ptxfp's ``matmul`` on 1 x K by K x 1), compared bit for bit.

``python tests/test_tensor_mmasim.py [per_kind]`` prints the mismatches per configuration.
"""

from __future__ import annotations

import sys
import zlib
from dataclasses import dataclass

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="MMA-Sim 2.1.1 (pip install mmasim==2.1.1) "
                            "needs torch")
pytest.importorskip("mmasim", reason="MMA-Sim 2.1.1 is not installed (pip install "
                    "mmasim==2.1.1, in the test extra)")
try:                     # its f64 path builds a C++ extension on import (a compiler, ninja)
    from mmasim import nv_ptx
    from mmasim.nv_ptx import isa_mma, isa_tcgen05mma, isa_wgmma
except Exception as e:   # noqa: BLE001 - any failure to build it means: no oracle here
    pytest.skip(f"MMA-Sim 2.1.1 does not load here: {type(e).__name__}: {e}".splitlines()[0],
                allow_module_level=True)

from ptxfp.errors import PtxfpError  # noqa: E402
from ptxfp.isa import mma as isa  # noqa: E402
from ptxfp.isa.mma_form import MmaForm  # noqa: E402
from ptxfp.tensor import matmul, mma, params_for  # noqa: E402
from ptxfp.core.types import FORMATS  # noqa: E402

#: MMA-Sim's architecture names and the target ptxfp is asked for
ARCH_TARGET = {"Volta": "sm_70", "Turing": "sm_75", "Ampere": "sm_80", "Ada Lovelace": "sm_89",
               "Hopper": "sm_90a", "Blackwell": "sm_100a", "RTX Blackwell": "sm_120a"}
_OPS = {"mma": "mma", "wgmma.mma_async": "wgmma", "tcgen05.mma": "tcgen05.mma"}


@dataclass(frozen=True)
class Config:
    arch: str
    op: str                   #: MMA-Sim's class: MMA, MMABlockScale, WGMMA, TCGen05MMA, ...
    spec: str                 #: MMA-Sim's shape_and_type string
    form: MmaForm

    @property
    def target(self) -> str:
        return ARCH_TARGET[self.arch]

    @property
    def name(self) -> str:
        return f"{self.arch.replace(' ', '')}:{self.op}:{self.spec}"


def _mnk(shape: str) -> tuple[int, int, int]:
    m, rest = shape[1:].split("n")
    n, k = rest.split("k")
    return int(m), int(n), int(k)


def _form(op: str, spec: str) -> MmaForm:
    """The MmaForm of one MMA-Sim configuration string."""
    toks = spec.split(".")
    m, n, k = _mnk(toks[0])
    kind = None
    rest = toks[1:]
    if rest[0].startswith("kind::"):
        kind = rest[0][6:]
        rest = rest[1:]
    sv = None
    if rest[0].startswith("block"):
        sv = k // int(rest[0][5:])
        rest = rest[1:]
    st = rest[-1] if sv is not None else None
    if st is not None:
        rest = rest[:-1]
    if op in ("MMA", "MMABlockScale"):
        d, a, b, c = rest
        opcode = "mma"
    else:
        d, a, b = rest
        c = d
        opcode = "wgmma" if op == "WGMMA" else "tcgen05.mma"
    if opcode == "mma" and kind is None and a in ("e4m3", "e5m2") and k in (16, 32):
        kind = None
    return MmaForm(opcode, m, n, k, a, b, c, d, kind=kind, scale_type=st, scale_vec=sv)


def mmasim_configs() -> list[Config]:
    """Every configuration MMA-Sim 2.1.1 models (the smallest N of each)."""
    lists = [("MMA", isa_mma.mma_shape_and_type),
             ("MMABlockScale", isa_mma.mma_block_scale_shape_and_type),
             ("WGMMA", isa_wgmma.wgmma_shape_and_type),
             ("TCGen05MMA", isa_tcgen05mma.tcgen05mma_shape_and_type),
             ("TCGen05MMABlockScale", isa_tcgen05mma.tcgen05mma_block_scale_shape_and_type)]
    seen: dict[tuple, Config] = {}
    for op, table in lists:
        for arch, specs in table.items():
            for spec in dict.fromkeys(specs):
                f = _form(op, spec)
                key = (arch, op, f.m, f.k, f.kind, f.atype, f.btype, f.ctype, f.dtype,
                       f.scale_type, f.scale_vec)
                if key not in seen or seen[key].form.n > f.n:
                    seen[key] = Config(arch, op, spec, f)
    return list(seen.values())


def _row_key(f: MmaForm) -> tuple:
    return (f.opcode, f.m, f.n, f.k, f.kind, f.atype, f.btype, f.ctype, f.dtype, f.scale_type,
            f.scale_vec)


def ptxfp_keys() -> set[tuple]:
    """Every (opcode, shape, kind, types, scales) of ptxfp's matrix rows (one CTA)."""
    keys = set()
    for row in isa.ROWS:
        mx = row.matrix
        if mx is None or mx.cta_group == 2:
            continue
        op = _OPS[row.opcode]
        t = row.types
        d, a, b = t[0], t[1], t[2]
        c = t[3] if op == "mma" else d
        for (m, n, k) in mx.shapes:
            svs = {mx.scale_default} if mx.scale_default else {None}
            for tok in mx.scale_vecs:
                if tok.startswith("scale_vec::"):
                    svs.add(int(tok.split("::")[1][0]))
                elif tok in ("block16", "block32"):
                    svs.add(k // int(tok[5:]))
            for sv in svs:
                keys.add((op, m, n, k, mx.kind, a, b, c, d, mx.stype, sv))
    return keys


def both_model() -> tuple[list[Config], list[tuple[Config, str]]]:
    """(configurations both model, [(configuration only MMA-Sim models, why)])."""
    keys = ptxfp_keys()
    both, only = [], []
    for cfg in mmasim_configs():
        if _row_key(cfg.form) not in keys:
            only.append((cfg, "not a row of ptxfp's matrix table"))
            continue
        try:
            params_for(cfg.form, cfg.target)
        except PtxfpError as e:
            only.append((cfg, str(e)))
            continue
        both.append(cfg)
    return both, only


# --- inputs ---------------------------------------------------------------------------------

def _fmt(t: str):
    return FORMATS["e4m3" if t == "ue4m3" else t]


def _width(t: str) -> int:
    return 32 if t == "tf32" else _fmt(t).width


def _pack(s, e, m, t):
    f = _fmt(t)
    bits = (s.astype(np.uint64) << np.uint64(f.width - 1)) | (e.astype(np.uint64) << np.uint64(
        f.man_bits)) | m.astype(np.uint64)
    if t == "tf32":
        bits = bits << np.uint64(13)
    return bits


def _emax_field(t: str) -> int:
    f = _fmt(t)
    top = (1 << f.exp_bits) - 1
    return top - 1 if f.nan_encoding == "ieee" else top


def gen_elements(t: str, kind: str, shape, rng) -> np.ndarray:
    """Bit patterns (uint64) of element type ``t`` for one kind of input."""
    f = _fmt(t)
    w = _width(t)
    man = f.man_bits
    s = rng.integers(0, 2, size=shape)
    m = rng.integers(0, 1 << man, size=shape) if man else np.zeros(shape, np.int64)
    top = _emax_field(t)
    if kind == "bits":
        b = rng.integers(0, 1 << w, size=shape, dtype=np.uint64)
        if f.nan_encoding == "ieee":               # specials, with payloads
            sp = rng.random(shape) < 0.04
            e = np.full(shape, (1 << f.exp_bits) - 1)
            b = np.where(sp, _pack(s, e, m * (rng.random(shape) < 0.7), t), b)
        return b
    if kind in ("normal", "cancel"):
        e = np.clip(f.bias + rng.integers(-3, 4, size=shape), 1, top)
    elif kind == "overflow":
        e = np.full(shape, top)
        s = np.where(rng.random(shape) < 0.8, s[..., :1], s)          # mostly one sign
        if f.nan_encoding == "all-ones":
            m = np.minimum(m, (1 << man) - 2)
    elif kind == "subnormal":
        e = np.zeros(shape, np.int64)
        m = np.maximum(m, 1)
    elif kind == "zerobig":
        e = np.clip(f.bias - rng.integers(2, 12, size=shape), 1, top)
        e = np.where(rng.random(shape) < 0.1, top, e)
    else:
        raise ValueError(kind)
    if f.nan_encoding == "all-ones":
        m = np.where(e == top, np.minimum(m, (1 << man) - 2), m)
    return _pack(s, e, m, t)


def _small_c(t: str, V: int, rng) -> np.ndarray:
    """c of zeros, subnormals, the smallest normals and small normals, of both signs."""
    f = _fmt(t)
    pick = rng.integers(0, 4, V)
    e = np.where(pick == 1, 0, np.where(pick == 2, rng.integers(1, 6, V),
                                        np.clip(f.bias - rng.integers(8, 40, V), 1, None)))
    m = rng.integers(0, 1 << f.man_bits, V)
    m = np.where(pick == 1, np.maximum(m, 1), m)
    c = _pack(rng.integers(0, 2, V), e, m, t)
    return np.where(pick == 0, np.uint64(0), c)


def gen_vectors(form: MmaForm, kind: str, V: int, rng):
    """A (V, K), B (V, K), C (V) bits and the scales (V, K/block) of one kind of input."""
    K = form.k
    a = gen_elements(form.atype, kind, (V, K), rng)
    b = gen_elements(form.btype, kind, (V, K), rng)
    ct = form.ctype
    if kind == "cancel":
        a = gen_elements(form.atype, "normal", (V, K), rng)
        b = gen_elements(form.btype, "normal", (V, K), rng)
        h = K // 2
        sbit = np.uint64(1) << np.uint64(_width(form.atype) - 1)
        a[:, h:2 * h] = a[:, :h] ^ sbit
        b[:, h:2 * h] = b[:, :h]
        tweak = rng.random((V, K)) < 0.15                  # a few not quite cancelling
        a = np.where(tweak, gen_elements(form.atype, "normal", (V, K), rng), a)
        c = gen_elements(ct, "normal", (V,), rng)
        zc = rng.random(V) < 0.3
        c = np.where(zc, np.uint64(0), c)
    elif kind == "zerobig":
        big = gen_elements(form.btype, "overflow", (V, K), rng)
        bigA = gen_elements(form.atype, "overflow", (V, K), rng)
        where = rng.random((V, K)) < 0.4
        side = rng.random((V, K)) < 0.5
        a = np.where(where & side, np.uint64(0), np.where(where, bigA, a))
        b = np.where(where & side, big, np.where(where, np.uint64(0), b))
        small = rng.random((V, K)) < rng.random((V, 1))    # the rest: zeros and small values
        a = np.where(~where & small, np.uint64(0), a)
        c = _small_c(ct, V, rng)
    elif kind == "subnormal":
        c = gen_elements(ct, kind, (V,), rng)
        c = np.where(rng.random(V) < 0.4, np.uint64(0), c)
    else:
        c = gen_elements(ct, kind, (V,), rng)
    sa = sb = None
    if form.scale_type is not None:
        nblk = form.scale_vec
        st = form.scale_type
        if st == "ue8m0":
            centre = {"overflow": 127 + 40, "subnormal": 127 - 40}.get(kind, 127)
            sa = np.clip(centre + rng.integers(-6, 7, (V, nblk)), 0, 254).astype(np.uint64)
            sb = np.clip(centre + rng.integers(-6, 7, (V, nblk)), 0, 254).astype(np.uint64)
            if kind == "bits":
                sa = rng.integers(0, 256, (V, nblk)).astype(np.uint64)
                sb = rng.integers(0, 256, (V, nblk)).astype(np.uint64)
        else:
            sa = rng.integers(0, 256, (V, nblk)).astype(np.uint64)
            sb = rng.integers(0, 256, (V, nblk)).astype(np.uint64)
            if kind != "bits":
                sa = sa & np.uint64(0x7E)
                sb = sb & np.uint64(0x7E)
    return a, b, c, sa, sb


# --- the two sides --------------------------------------------------------------------------

_TDT = {"f16": (np.int16, torch.float16), "bf16": (np.int16, torch.bfloat16),
        "f32": (np.int32, torch.float32), "tf32": (np.int32, torch.float32),
        "f64": (np.int64, torch.float64), "e4m3": (np.int8, torch.float8_e4m3fn),
        "e5m2": (np.int8, torch.float8_e5m2), "ue8m0": (np.uint8, torch.float8_e8m0fnu),
        "ue4m3": (np.int8, torch.float8_e4m3fn)}
_UDT = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


def _to_torch(bits: np.ndarray, t: str, packed_fp4: bool = False):
    if t in ("e2m1", "e2m3", "e3m2"):
        if packed_fp4:                        # two to a byte, the first element high
            x = (bits[..., 0::2] << np.uint64(4)) | bits[..., 1::2]
            return torch.from_numpy(x.astype(np.uint8))
        sh = 2 if t == "e2m1" else 0          # MMA-Sim: fp6 in bits 5:0, fp4 in bits 5:2
        return torch.from_numpy((bits << np.uint64(sh)).astype(np.uint8))
    it, tt = _TDT[t]
    w = np.dtype(it).itemsize * 8
    x = bits.astype(_UDT[w]).view(it) if w < 64 else bits.view(np.int64)
    return torch.from_numpy(np.ascontiguousarray(x)).view(tt)


def _from_torch(x, t: str) -> np.ndarray:
    it = {"f16": torch.int16, "f32": torch.int32, "f64": torch.int64}[t]
    w = {"f16": 16, "f32": 32, "f64": 64}[t]
    return x.contiguous().view(it).numpy().astype(np.int64).astype(np.uint64) & np.uint64(
        (1 << w) - 1)


def mmasim_op(cfg: Config):
    return getattr(nv_ptx, cfg.op)(cfg.arch, cfg.spec)


def run_mmasim(cfg: Config, a, b, c, sa, sb) -> np.ndarray:
    f = cfg.form
    op = mmasim_op(cfg)
    gst = f.kind in ("mxf4", "mxf4nvf4")
    ta = _to_torch(a, f.atype, gst)
    tb = _to_torch(b, f.btype, gst)
    tc = _to_torch(c, f.ctype)
    if f.scale_type is not None:
        d = op.dpa(ta, tb, tc, _to_torch(sa, f.scale_type), _to_torch(sb, f.scale_type))
    else:
        d = op.dpa(ta, tb, tc)
    return _from_torch(d, f.dtype)


def run_ptxfp(cfg: Config, a, b, c, sa, sb) -> np.ndarray:
    f = cfg.form
    V, K = a.shape
    wa, wb, wc = _width(f.atype), _width(f.btype), _width(f.ctype)
    ub = {4: np.uint8, 6: np.uint8, 8: np.uint8}
    A = a.astype(ub.get(wa) or _UDT[wa]).reshape(V, 1, K)
    B = b.astype(ub.get(wb) or _UDT[wb]).reshape(V, K, 1)
    C = c.astype(_UDT[wc]).reshape(V, 1, 1)
    kw = {}
    if sa is not None:
        kw = dict(scale_a=sa.astype(np.uint8).reshape(V, 1, -1),
                  scale_b=sb.astype(np.uint8).reshape(V, -1, 1))
    D = matmul(A, B, C, instruction=f, target=cfg.target, **kw)
    return np.asarray(D).reshape(V).astype(np.uint64)


KINDS = ("normal", "bits", "cancel", "overflow", "subnormal", "zerobig")


def compare(cfg: Config, per_kind: int, seed: int = 0) -> tuple[int, int, list[str]]:
    """(vectors, mismatches, a few examples) of one configuration."""
    rng = np.random.default_rng(seed + zlib.crc32(cfg.name.encode()))
    parts = [gen_vectors(cfg.form, k, per_kind, rng) for k in KINDS]
    a = np.concatenate([p[0] for p in parts])
    b = np.concatenate([p[1] for p in parts])
    c = np.concatenate([p[2] for p in parts])
    sa = np.concatenate([p[3] for p in parts]) if parts[0][3] is not None else None
    sb = np.concatenate([p[4] for p in parts]) if parts[0][4] is not None else None
    want = run_mmasim(cfg, a, b, c, sa, sb)
    got = run_ptxfp(cfg, a, b, c, sa, sb)
    bad = np.nonzero(want != got)[0]
    ex = [f"{KINDS[i // per_kind]}: a={[hex(int(x)) for x in a[i]]} b={[hex(int(x)) for x in b[i]]}"
          f" c={hex(int(c[i]))}" + (f" sa={sa[i].tolist()} sb={sb[i].tolist()}"
                                    if sa is not None else "")
          + f": ptxfp {hex(int(got[i]))}, MMA-Sim {hex(int(want[i]))}" for i in bad[:2]]
    return len(a), len(bad), ex


BOTH, ONLY_MMASIM = both_model()

#: configurations MMA-Sim 2.1.1 lists that are not PTX: none since ptxas 13.5, which takes
#: mma.sync...kind::mxf4nvf4.block_scale.scale_vec::4X...ue8m0 from PTX 9.1 (13.0 rejected
#: it: "Illegal modifier '.scale_vec::4X' for instruction 'mma' with type '.ue8m0'"; the row
#: has both, tests/data/ptxas/13.5/mma.jsonl)
NOT_PTX: set[str] = set()


def test_the_configurations_both_model():
    """Every architecture MMA-Sim models has configurations here, and every configuration it
    models is one ptxfp computes, but those that are not PTX."""
    archs = {c.arch for c in BOTH}
    assert archs == set(ARCH_TARGET), (sorted(set(ARCH_TARGET) - archs), ONLY_MMASIM[:5])
    left = [(c.name, why) for c, why in ONLY_MMASIM if c.name not in NOT_PTX]
    assert not left, left[:8]
    assert len(BOTH) >= 315


@pytest.mark.parametrize("cfg", BOTH[::7], ids=[c.name for c in BOTH[::7]])
def test_whole_instruction_equals_mmasim(cfg):
    """One instruction's whole m x n x k through ptxfp.mma (the exact shape) and MMA-Sim's
    ``__call__``, with random normal values."""
    f = cfg.form
    rng = np.random.default_rng(zlib.crc32(cfg.name.encode()) + 5)
    a = gen_elements(f.atype, "normal", (f.m, f.k), rng)
    b = gen_elements(f.btype, "normal", (f.k, f.n), rng)
    c = gen_elements(f.ctype, "normal", (f.m, f.n), rng)
    gst = f.kind in ("mxf4", "mxf4nvf4")
    args = [_to_torch(a, f.atype, gst), _to_torch(b.T.copy(), f.btype, gst).T,
            _to_torch(c, f.ctype)]
    kw = {}
    if f.scale_type is not None:
        sa = rng.integers(120, 135, (f.m, f.scale_vec)).astype(np.uint64)
        sb = rng.integers(120, 135, (f.scale_vec, f.n)).astype(np.uint64)
        args += [_to_torch(sa, f.scale_type), _to_torch(sb, f.scale_type)]
        kw = dict(scale_a=sa.astype(np.uint8), scale_b=sb.astype(np.uint8))
    want = _from_torch(mmasim_op(cfg)(*args), f.dtype)
    ub = {4: np.uint8, 6: np.uint8, 8: np.uint8}
    wa, wb, wc = _width(f.atype), _width(f.btype), _width(f.ctype)
    got = mma(f, a.astype(ub.get(wa) or _UDT[wa]), b.astype(ub.get(wb) or _UDT[wb]),
              c.astype(_UDT[wc]), target=cfg.target, **kw)
    assert np.array_equal(np.asarray(got).astype(np.uint64), want)


@pytest.mark.parametrize("cfg", BOTH, ids=[c.name for c in BOTH])
def test_equals_mmasim(cfg):
    n, bad, ex = compare(cfg, 8)
    assert bad == 0, f"{bad} of {n} differ: {ex}"


@pytest.mark.slow
@pytest.mark.parametrize("cfg", BOTH, ids=[c.name for c in BOTH])
def test_equals_mmasim_long(cfg):
    n, bad, ex = compare(cfg, 400, seed=1)
    assert bad == 0, f"{bad} of {n} differ: {ex}"


if __name__ == "__main__":
    per = int(sys.argv[1]) if len(sys.argv) > 1 else 64
    total = nbad = exact = 0
    for cfg in BOTH:
        n, bad, ex = compare(cfg, per)
        total += n
        nbad += bad
        exact += bad == 0
        print(f"{cfg.name:70s} {cfg.target:8s} {bad:6d} / {n}" + (f"   e.g. {ex[0]}" if ex
                                                                     else ""))
    print(f"# {len(BOTH)} configurations both model, {exact} exact; {nbad} of {total} vectors "
          f"differ; {len(ONLY_MMASIM)} only MMA-Sim models")
    for cfg, why in ONLY_MMASIM:
        print(f"#   only MMA-Sim: {cfg.name} ({why[:100]})")
