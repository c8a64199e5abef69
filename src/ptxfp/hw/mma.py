"""Hardware harness kernels for the matrix forms: ``mma.sync`` (one warp per instance) and
``wgmma.mma_async`` (sm_90a, one warpgroup per instance), their vectors and the ``record``
hook.

A kernel takes ``(a, b, c, d, n)`` like the scalar ones (hw/kernels.py): pointers to global
arrays of element bits, one element per array entry in its storage width (8, 16, 32 or 64
bits; fp8/fp6/fp4, s4/u4 and b1 elements one per byte), every instance's A (m x k), B (k x n),
C and D (m x n) row-major and instance after instance (m8n8k4 with .f16: four tiles per
instance, (4, m, k) ...), and the instance count.  Block ``i`` computes instance ``i``: each
thread loads its fragment elements at the offsets of a table the module carries (built from
``ptxfp.tensor.fragments``, the manual's layouts as data), packs them into registers, runs the
one instruction with C as the accumulator, and stores D's elements the same way.  wgmma takes
A from registers (the m16 fragment of each of the four warps, rows offset by 16 per warp) and
B from shared memory through a matrix descriptor without swizzling (K-major core matrices of
8 rows x 16 bytes; leading offset 128 bytes, stride offset 128 x (K / core width) bytes).

What is checked here: ptxas 13.0 accepts every generated kernel for its target
(tests/test_hw_mma.py).  The descriptor layout of wgmma is the manual's canonical no-swizzle
layout as this module reads it; only a GPU run can confirm it (run ``record`` on an sm_90 GPU:
D must match ``ptxfp.mma`` there, or, with small-integer inputs, exact arithmetic).

``vectors(spelling, n, seed)``: random and targeted instances (alignment and truncation
boundaries, cancellation, NaN/inf, subnormals, a dominant or negligible C) as element bits.
``record(spelling, launch, n, seed)``: the arrays '<spelling>/a', '/b', '/c', '/d' after one
launch; ``launch(kernel, arrays)`` runs a kernel (grid = instances, block = kernel.threads)
and returns D: :func:`cupy_launch` does it with CuPy where installed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import ml_dtypes
import numpy as np
from numpy.typing import NDArray

from ..errors import PtxfpError
from ..isa.mma_form import MmaForm
from ..isa.rows import min_ptx
from ..ptx.check import requirement_messages, spelling_verdict
from ..isa.spelling import mma_form
from ..tensor.fragments import fragment

__all__ = ["MmaKernel", "kernel_for", "vectors", "record", "cupy_launch", "HARNESS_FORMS",
           "MmaHarnessError"]

ENTRY = "ptxfp_mma"


class MmaHarnessError(PtxfpError):
    """A matrix form the harness has no kernel for."""


#: the forms the harness runs by default (H100: sm_90 / sm_90a)
HARNESS_FORMS = (
    "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
    "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16",
    "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32",
    "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32",
    "mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32",
    "mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32",
    "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32",
    "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32",
    "mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e4m3.f32",
    "mma.sync.aligned.m16n8k16.row.col.f32.e4m3.e4m3.f32",
    "mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16",
    "mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32",
    "mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64",
    "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16",
    "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16",
    "wgmma.mma_async.sync.aligned.m64n8k16.f16.f16.f16",
    "wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32",
    "wgmma.mma_async.sync.aligned.m64n8k32.f32.e4m3.e4m3",
    "wgmma.mma_async.sync.aligned.m64n8k32.f32.e5m2.e4m3",
    "wgmma.mma_async.sync.aligned.m64n16k32.f16.e4m3.e4m3",
)

#: the PTX ISA version that first knows each target
_TARGET_PTX = {"sm_80": (7, 0), "sm_89": (7, 8), "sm_90": (7, 8), "sm_90a": (8, 0),
               "sm_100a": (8, 6), "sm_120a": (8, 7)}
_PREFERRED = ("sm_90", "sm_89", "sm_80", "sm_90a", "sm_100a", "sm_120a")


def _storage_bits(ty: str) -> int:
    return {"f16": 16, "bf16": 16, "tf32": 32, "f32": 32, "s32": 32, "f64": 64}.get(ty, 8)


@dataclass(frozen=True)
class MmaKernel:
    """One generated module: its form, target, PTX, threads per instance, and the storage
    width (bits) and per-instance shape of each array a, b, c, d."""
    spelling: str
    form: MmaForm
    target: str
    version: tuple[int, int]
    ptx: str
    threads: int
    widths: dict[str, int] = field(default_factory=dict)
    shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)
    entry: str = ENTRY

    @property
    def version_str(self) -> str:
        return "%d.%d" % self.version


def _target_for(spelling: str) -> tuple[str, tuple[int, int]]:
    v = spelling_verdict(spelling)
    if v.errors:
        raise MmaHarnessError(f"'{spelling}': {v.errors[0][1]}")
    for t in _PREFERRED:
        if not requirement_messages(v, None, t):
            # (requirements per ptxas release or per .version read as the newest has them)
            need = max(min_ptx(v.requires), _TARGET_PTX[t])
            return t, need  # type: ignore[return-value]
    raise MmaHarnessError(f"'{spelling}': no target the harness knows takes it")


# ---------------------------------------------------------------------------------------------
# offsets: (threads, regs, per_reg) element offsets within one instance's array

def _offsets_mma(f: MmaForm, operand: str) -> tuple[NDArray[np.int64], int, int]:
    fr = fragment(f, operand)
    tiles, rows, cols = fr.shape
    t, r, c = fr.index[..., 0], fr.index[..., 1], fr.index[..., 2]
    return (t * rows * cols + r * cols + c), fr.reg_bits, fr.elem_bits


def _m16_form(f: MmaForm) -> MmaForm:
    """The mma.sync m16n8kK form whose A fragment a wgmma warp holds (k per type)."""
    return MmaForm("mma", 16, 8, f.k, f.atype, f.btype, "f32", "f32")


def _offsets_wgmma_a(f: MmaForm) -> NDArray[np.int64]:
    fr = fragment(_m16_form(f), "a")
    r, c = fr.index[..., 1], fr.index[..., 2]
    out = np.concatenate([(r + 16 * w) * f.k + c for w in range(4)])
    return out


def _offsets_wgmma_d(f: MmaForm) -> tuple[NDArray[np.int64], int]:
    """D of m64nNk: thread t (warp w = t / 32, lane l), element i: row 16 w + l / 4 +
    8 ((i / 2) mod 2), column 8 (i / 4) + (l mod 4) * 2 + (i mod 2); f16 pairs share a
    register."""
    per = 2 if f.dtype == "f16" else 1
    count = 64 * f.n // 128
    out = np.zeros((128, count // per, per), np.int64)
    for t in range(128):
        w, lane = divmod(t, 32)
        for i in range(count):
            row = 16 * w + (lane >> 2) + 8 * ((i >> 1) & 1)
            col = 8 * (i >> 2) + (lane % 4) * 2 + (i & 1)
            out[t, i // per, i % per] = row * f.n + col
    return out, per


def _b_shared_offsets(f: MmaForm) -> tuple[NDArray[np.int64], int, int]:
    """Byte offset in shared memory of B's element (k, n), K-major core matrices without
    swizzling; returns (offsets of the k x n elements, LBO, SBO)."""
    eb = _storage_bits(f.btype) // 8
    kc = 16 // eb
    lbo, sbo = 128, 128 * (f.k // kc)
    k = np.arange(f.k)[:, None]
    n = np.arange(f.n)[None, :]
    off = (k // kc) * lbo + (n // 8) * sbo + (n % 8) * 16 + (k % kc) * eb
    return off, lbo, sbo


# ---------------------------------------------------------------------------------------------
# PTX text

def _table(name: str, values: NDArray[np.int64]) -> list[str]:
    flat = [str(int(x)) for x in values.reshape(-1)]
    rows = [", ".join(flat[i:i + 16]) for i in range(0, len(flat), 16)]
    return [f".global .align 4 .u32 {name}[{len(flat)}] = {{"] + \
        ["    " + r + ("," if i < len(rows) - 1 else "") for i, r in enumerate(rows)] + ["};"]


def _ld(bits: int) -> str:
    return {8: "u8", 16: "u16", 32: "u32", 64: "u64"}[bits]


class _Body:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.regs: dict[str, set[str]] = {}
        self.n = 0

    def reg(self, ty: str, name: str) -> str:
        self.regs.setdefault(ty, set()).add(name)
        return name

    def tmp(self, ty: str) -> str:
        self.n += 1
        return self.reg(ty, f"%t{self.n}")

    def emit(self, *lines: str) -> None:
        self.lines += ["    " + ln for ln in lines]


def _load_fragment(b: _Body, name: str, table: str, offsets: NDArray[np.int64], base: str,
                   reg_bits: int, elem_bits: int, store_bits: int, regtype: str,
                   lane: str) -> list[str]:
    """Lines that fill the registers of one operand; returns the register names."""
    nthreads, regs, per = offsets.shape
    tb = b.reg("b64", f"%tab_{name}")
    b.emit(f"mov.u64 {tb}, {table};", f"mul.wide.u32 %toff, {lane}, {regs * per * 4};",
           f"add.s64 {tb}, {tb}, %toff;")
    out = []
    for r in range(regs):
        acc = b.reg("b64" if reg_bits == 64 else "b32", f"%{name}w{r}")
        for j in range(per):
            o, p, e = b.tmp("b32"), b.tmp("b64"), b.tmp("b64" if reg_bits == 64 else "b32")
            b.emit(f"ld.global.u32 {o}, [{tb}+{4 * (r * per + j)}];",
                   f"mul.wide.u32 {p}, {o}, {store_bits // 8};",
                   f"add.s64 {p}, {base}, {p};",
                   f"ld.global.{_ld(store_bits)} {e}, [{p}];")
            if per == 1:
                b.emit(f"mov.b{reg_bits} {acc}, {e};")
            else:
                mask = (1 << elem_bits) - 1
                if elem_bits < store_bits:
                    b.emit(f"and.b32 {e}, {e}, {mask};")
                if j == 0:
                    b.emit(f"mov.b32 {acc}, {e};")
                else:
                    b.emit(f"shl.b32 {e}, {e}, {j * elem_bits};", f"or.b32 {acc}, {acc}, {e};")
        if regtype in ("f32", "f64"):
            fr = b.reg(regtype, f"%{name}{r}")
            b.emit(f"mov.b{reg_bits} {fr}, {acc};")
            out.append(fr)
        else:
            out.append(acc)
    return out


def _store_fragment(b: _Body, regs_in: list[str], table: str, offsets: NDArray[np.int64],
                    base: str, reg_bits: int, elem_bits: int, store_bits: int, lane: str,
                    regtype: str) -> None:
    nthreads, regs, per = offsets.shape
    tb = b.reg("b64", "%tab_d")
    b.emit(f"mov.u64 {tb}, {table};", f"mul.wide.u32 %toff, {lane}, {regs * per * 4};",
           f"add.s64 {tb}, {tb}, %toff;")
    for r in range(regs):
        src = regs_in[r]
        if regtype in ("f32", "f64"):
            w = b.reg("b64" if reg_bits == 64 else "b32", f"%dw{r}")
            b.emit(f"mov.b{reg_bits} {w}, {src};")
            src = w
        for j in range(per):
            o, p = b.tmp("b32"), b.tmp("b64")
            b.emit(f"ld.global.u32 {o}, [{tb}+{4 * (r * per + j)}];",
                   f"mul.wide.u32 {p}, {o}, {store_bits // 8};", f"add.s64 {p}, {base}, {p};")
            if per == 1:
                b.emit(f"st.global.{_ld(store_bits)} [{p}], {src};")
            else:
                e, h = b.tmp("b32"), b.tmp("b16")
                b.emit(f"shr.b32 {e}, {src}, {j * elem_bits};", f"cvt.u16.u32 {h}, {e};",
                       f"st.global.u16 [{p}], {h};")


def _regtype(ty: str) -> str:
    return {"f32": "f32", "f64": "f64"}.get(ty, "b32")


def _module(f: MmaForm, spelling: str, target: str, version: tuple[int, int], threads: int,
            tables: list[str], shared: list[str], body: _Body) -> str:
    decl = []
    for ty, names in sorted(body.regs.items()):
        decl.append(f"    .reg .{ty} {', '.join(sorted(names, key=_natural))};")
    return "\n".join([
        f"// ptxfp hardware harness: {spelling} (one instance per block of {threads} threads)",
        f".version {version[0]}.{version[1]}", f".target {target}", ".address_size 64", "",
        *tables, *shared, "",
        f".visible .entry {ENTRY}(", "    .param .u64 param_a,", "    .param .u64 param_b,",
        "    .param .u64 param_c,", "    .param .u64 param_d,", "    .param .u32 param_n", ")",
        "{", "    .reg .pred %done, %p1;",
        "    .reg .b32 %inst, %n, %lane;", "    .reg .b64 %ga, %gb, %gc, %gd, %toff;",
        *decl, "",
        "    ld.param.u64 %ga, [param_a];", "    ld.param.u64 %gb, [param_b];",
        "    ld.param.u64 %gc, [param_c];", "    ld.param.u64 %gd, [param_d];",
        "    ld.param.u32 %n, [param_n];", "    mov.u32 %inst, %ctaid.x;",
        "    mov.u32 %lane, %tid.x;", "    setp.ge.u32 %done, %inst, %n;",
        "    @%done bra $L_done;",
        "    cvta.to.global.u64 %ga, %ga;", "    cvta.to.global.u64 %gb, %gb;",
        "    cvta.to.global.u64 %gc, %gc;", "    cvta.to.global.u64 %gd, %gd;",
        *body.lines, "$L_done:", "    ret;", "}", ""])


def _natural(name: str) -> tuple[str, int]:
    head = name.rstrip("0123456789")
    tail = name[len(head):]
    return head, int(tail) if tail else -1


def _instance_base(b: _Body, g: str, count: int, bits: int) -> str:
    p = b.reg("b64", f"%p{g[2:]}")
    b.emit(f"mul.wide.u32 {p}, %inst, {count * bits // 8};", f"add.s64 {p}, {g}, {p};")
    return p


def _mma_sync_kernel(spelling: str, f: MmaForm, target: str, version: tuple[int, int]
                     ) -> MmaKernel:
    if f.block_scaled:
        raise MmaHarnessError(f"'{spelling}': the block-scaled kinds need scale operands the "
                              "harness does not generate yet")
    b = _Body()
    tables: list[str] = []
    regs: dict[str, list[str]] = {}
    shapes = {o: fragment(f, o).shape for o in "abcd"}
    shapes = {o: (s if s[0] > 1 else s[1:]) for o, s in shapes.items()}
    widths = {o: _storage_bits(t) for o, t in zip("abcd", (f.atype, f.btype, f.ctype, f.dtype))}
    for o, g in (("a", "%ga"), ("b", "%gb"), ("c", "%gc")):
        off, rb, eb = _offsets_mma(f, o)
        tables += _table(f"tab_{o}", off)
        base = _instance_base(b, g, int(np.prod(shapes[o])), widths[o])
        ty = {"a": f.atype, "b": f.btype, "c": f.ctype}[o]
        regs[o] = _load_fragment(b, o, f"tab_{o}", off, base, rb, eb, widths[o],
                                 _regtype(ty) if o == "c" else "b32", "%lane")
    doff, drb, deb = _offsets_mma(f, "d")
    tables += _table("tab_d", doff)
    dt = _regtype(f.dtype)
    d = [b.reg(dt if dt != "b32" else "b32", f"%d{i}") for i in range(doff.shape[1])]
    b.emit(f"{spelling} {{{', '.join(d)}}}, {{{', '.join(regs['a'])}}}, "
           f"{{{', '.join(regs['b'])}}}, {{{', '.join(regs['c'])}}};")
    base = _instance_base(b, "%gd", int(np.prod(shapes["d"])), widths["d"])
    _store_fragment(b, d, "tab_d", doff, base, drb, deb, widths["d"], "%lane", dt)
    return MmaKernel(spelling, f, target, version, _module(f, spelling, target, version, 32,
                                                            tables, [], b),
                     32, widths, shapes)


def _wgmma_kernel(spelling: str, f: MmaForm, target: str, version: tuple[int, int]
                  ) -> MmaKernel:
    if f.atype in ("s8", "u8", "b1"):
        raise MmaHarnessError(f"'{spelling}': the harness runs the float wgmma forms")
    b = _Body()
    widths = {o: _storage_bits(t) for o, t in zip("abcd", (f.atype, f.btype, f.ctype, f.dtype))}
    shapes = {"a": (f.m, f.k), "b": (f.k, f.n), "c": (f.m, f.n), "d": (f.m, f.n)}
    abits = {"f16": 16, "bf16": 16, "tf32": 32}.get(f.atype, 8)
    per_a = 32 // abits
    aoff = _offsets_wgmma_a(f)
    doff, per_d = _offsets_wgmma_d(f)
    tables = _table("tab_a", aoff) + _table("tab_c", doff) + _table("tab_d", doff)
    boff, lbo, sbo = _b_shared_offsets(f)
    tables += _table("tab_b", boff.reshape(-1))
    sbytes = int(boff.max()) + widths["b"] // 8
    shared = [f".shared .align 128 .b8 smem_b[{(sbytes + 127) // 128 * 128}];"]
    pa = _instance_base(b, "%ga", f.m * f.k, widths["a"])
    pb = _instance_base(b, "%gb", f.k * f.n, widths["b"])
    pc = _instance_base(b, "%gc", f.m * f.n, widths["c"])
    # B: global -> shared (thread t copies elements t, t + 128, ...), then the descriptor
    b.reg("b32", "%sb")
    b.emit("mov.u32 %sb, smem_b;", "mov.u64 %tab_b, tab_b;")
    b.reg("b64", "%tab_b")
    eb = widths["b"] // 8
    for it in range((f.k * f.n + 127) // 128):
        idx, p, o, v, s = b.tmp("b32"), b.tmp("b64"), b.tmp("b32"), b.tmp("b32"), b.tmp("b32")
        skip = f"$L_b{it}"
        b.emit(f"add.u32 {idx}, %lane, {128 * it};", f"setp.ge.u32 %p1, {idx}, {f.k * f.n};",
               f"@%p1 bra {skip};",
               f"mul.wide.u32 {p}, {idx}, 4;", f"add.s64 {p}, %tab_b, {p};",
               f"ld.global.u32 {o}, [{p}];",
               f"mul.wide.u32 {p}, {idx}, {eb};", f"add.s64 {p}, {pb}, {p};",
               f"ld.global.{_ld(widths['b'])} {v}, [{p}];", f"add.u32 {s}, %sb, {o};",
               f"st.shared.{_ld(widths['b'])} [{s}], {v};")
        b.lines.append(f"{skip}:")
    b.emit("bar.sync 0;", "fence.proxy.async.shared::cta;")
    desc, t64 = b.reg("b64", "%descb"), b.tmp("b64")
    b.emit(f"cvt.u64.u32 {desc}, %sb;", f"shr.b64 {desc}, {desc}, 4;",
           f"and.b64 {desc}, {desc}, 16383;",
           f"mov.b64 {t64}, {((lbo >> 4) << 16) | ((sbo >> 4) << 32)};",
           f"or.b64 {desc}, {desc}, {t64};")
    a = _load_fragment(b, "a", "tab_a", aoff.reshape(128, -1, per_a), pa, 32, abits,
                       widths["a"], "b32", "%lane")
    creg = _load_fragment(b, "c", "tab_c", doff, pc, 32, 16 if per_d == 2 else 32,
                          widths["c"], _regtype(f.ctype), "%lane")
    dt = _regtype(f.dtype)
    d = [b.reg(dt, f"%d{i}") for i in range(doff.shape[1])]
    b.emit(*(f"mov.b32 {x}, {y};" for x, y in zip(d, creg)))
    imm = ", 1, 1, 0" if f.atype in ("f16", "bf16") else ", 1, 1"
    b.emit("setp.eq.u32 %p1, 1, 1;", "wgmma.fence.sync.aligned;",
           f"{spelling} {{{', '.join(d)}}}, {{{', '.join(a)}}}, {desc}, %p1{imm};",
           "wgmma.commit_group.sync.aligned;", "wgmma.wait_group.sync.aligned 0;")
    base = _instance_base(b, "%gd", f.m * f.n, widths["d"])
    _store_fragment(b, d, "tab_d", doff, base, 32, 16 if per_d == 2 else 32, widths["d"],
                    "%lane", dt)
    return MmaKernel(spelling, f, target, version,
                     _module(f, spelling, target, version, 128, tables, shared, b),
                     128, widths, shapes)


def kernel_for(spelling: str) -> MmaKernel:
    """The harness kernel of a matrix spelling (mma.sync or wgmma.mma_async)."""
    f = mma_form(spelling)
    target, version = _target_for(f.spelling)
    if f.opcode == "mma":
        return _mma_sync_kernel(f.spelling, f, target, version)
    if f.opcode == "wgmma":
        return _wgmma_kernel(f.spelling, f, target, version)
    raise MmaHarnessError(f"'{spelling}': tcgen05.mma needs tensor memory; the harness runs "
                          "mma.sync and wgmma")


# ---------------------------------------------------------------------------------------------
# vectors

_FLOAT = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "e4m3": ml_dtypes.float8_e4m3fn,
          "e5m2": ml_dtypes.float8_e5m2, "f32": np.float32, "tf32": np.float32,
          "f64": np.float64}
_UINT = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}
FAMILIES = ("random", "align", "cancel", "special", "subnormal", "c_dominant", "c_negligible",
            # the three open questions of docs/semantics.md "Tensor cores", one family each,
            # so that a --record run settles them for its architecture
            "zero_sign", "c_overflow", "zero_exponent")


def _bits(values: NDArray[Any], ty: str) -> NDArray[Any]:
    with np.errstate(over="ignore"):        # values past the type's range become inf: meant
        v = np.asarray(values, np.float64).astype(_FLOAT[ty])
    return v.view(_UINT[_storage_bits(ty)])


def _tiny(ty: str) -> float:
    t = _FLOAT[ty]
    info = ml_dtypes.finfo(t) if t not in (np.float16, np.float32, np.float64) else np.finfo(t)
    return float(info.smallest_normal)


def _max_pow2(ty: str, want: int) -> float:
    """The largest power of two at most 2**want that ``ty`` holds (2**15 in f16)."""
    t = _FLOAT[ty]
    info = ml_dtypes.finfo(t) if t not in (np.float16, np.float32, np.float64) else np.finfo(t)
    return float(2.0 ** min(want, int(np.floor(np.log2(float(info.max))))))


def _max_finite(ty: str) -> float:
    t = _FLOAT[ty]
    info = ml_dtypes.finfo(t) if t not in (np.float16, np.float32, np.float64) else np.finfo(t)
    return float(info.max)


def vectors(spelling: str, n: int = 64, seed: int = 0) -> dict[str, NDArray[Any]]:
    """``n`` instances of A, B, C as element bits (keys 'a', 'b', 'c', and 'family': the index
    into FAMILIES of each instance), the families in turn: random; alignment (one product
    2^12 times the rest, which sit at and around the truncation boundary); cancellation (pairs
    x, -x of products plus a small residue); specials (NaN, +-inf, inf x 0); subnormal
    inputs and C; C dominant (2^20) and C negligible (2^-20); and the open questions
    (docs/semantics.md "Tensor cores"): ``zero_sign`` (row 0: products that cancel exactly
    with C = -0; row 1: all products +0 with C = -0; row 2: one product -2^-14 x 2^-12 (or
    the types' smallest normals) that rounds to zero in an f16 result, C = +0), ``c_overflow`` (C = +-the largest finite value
    of its type, products of the sign of C as large as the inputs allow, up to 2^126), and
    ``zero_exponent`` (a zero factor in every column 0 of A beside B's row 0 of 2^100, or the
    largest power of two the type holds, and the other products and C near 2^-30: where a
    zero product is aligned, e_zero per architecture)."""
    f = mma_form(spelling)
    if f.atype not in _FLOAT or f.ctype not in _FLOAT:
        raise MmaHarnessError(f"'{spelling}': vectors are made for the float forms")
    rng = np.random.default_rng(seed)
    tiles = 4 if (f.m, f.n, f.k) == (8, 8, 4) and f.atype == "f16" and f.opcode == "mma" else 1
    lead = (n, tiles) if tiles > 1 else (n,)
    A = rng.uniform(-2, 2, lead + (f.m, f.k))
    B = rng.uniform(-2, 2, lead + (f.k, f.n))
    C = rng.uniform(-4, 4, lead + (f.m, f.n))
    fam = np.arange(n) % len(FAMILIES)
    for i in range(n):
        name = FAMILIES[fam[i]]
        a, b, c = A[i], B[i], C[i]
        if name == "align":
            # products a[:, kk] * b[kk, :]: the first large, the others spread over 2^-12..2^-30
            e = rng.integers(-30, -10, size=a.shape)
            a *= np.exp2(e)
            a[..., 0] = rng.uniform(1, 2, a[..., 0].shape) * 2.0 ** 12
        elif name == "cancel":
            half = f.k // 2
            a[..., half:2 * half] = -a[..., :half]
            b[..., half:2 * half, :] = b[..., :half, :]
            if f.k % 2:
                a[..., -1] *= 2.0 ** -8
            c *= 2.0 ** -10
        elif name == "special":
            flat_a, flat_b = a.reshape(-1), b.reshape(-1)
            idx = rng.choice(flat_a.size, 3, replace=False)
            flat_a[idx[0]] = np.nan
            flat_a[idx[1]] = np.inf
            flat_b[rng.integers(flat_b.size)] = -np.inf
            flat_a[idx[2]] = 0.0
            c.reshape(-1)[rng.integers(c.size)] = np.inf
        elif name == "subnormal":
            a *= _tiny(f.atype) / 2
            c *= _tiny(f.ctype) / 2
        elif name == "c_dominant":
            c *= 2.0 ** 20
        elif name == "c_negligible":
            c *= 2.0 ** -20
        elif name == "zero_sign":
            a[...] = 0.0
            b[...] = 0.0
            c[...] = 0.0
            if f.k >= 2:
                a[..., 0, 0], a[..., 0, 1] = 1.0, -1.0
                b[..., 0, :], b[..., 1, :] = 1.5, 1.5
            c[..., 0, :] = -0.0
            c[..., 1 % f.m, :] = -0.0
            if f.m > 2 and f.k > 2:
                # a tiny negative product alone (column 0 of row 2), in k's last place
                a[..., 2, f.k - 1] = -max(2.0 ** -14, _tiny(f.atype))
                b[..., f.k - 1, 0] = max(2.0 ** -12, _tiny(f.btype))
        elif name == "c_overflow":
            big = np.sqrt(_max_pow2(f.atype, 63) * _max_pow2(f.btype, 63))
            a[...] = np.abs(a) / 2 + 0.5
            b[...] = np.abs(b) / 2 + 0.5
            a *= min(_max_pow2(f.atype, 63), big)
            b *= min(_max_pow2(f.btype, 63), big)
            sign = np.where(rng.integers(0, 2, c.shape[:-1] + (1,)) == 1, 1.0, -1.0)
            c[...] = sign * _max_finite(f.ctype)          # one sign a row
            a *= sign                                     # the row's products follow it
        elif name == "zero_exponent":
            a *= 2.0 ** -30
            a[..., :, 0] = 0.0
            b[..., 0, :] = _max_pow2(f.btype, 100)
            c *= 2.0 ** -30
    out = {"a": _bits(A, f.atype), "b": _bits(B, f.btype), "c": _bits(C, f.ctype),
           "family": fam.astype(np.int8)}
    if f.atype == "tf32":
        # tf32 takes f32 containers whose low 13 bits the tensor core ignores: set them
        out["a"] = out["a"] | rng.integers(0, 1 << 13, out["a"].shape).astype(np.uint32)
        out["b"] = out["b"] | rng.integers(0, 1 << 13, out["b"].shape).astype(np.uint32)
    return out


# ---------------------------------------------------------------------------------------------
# recording

Launch = Callable[[MmaKernel, dict[str, NDArray[Any]]], NDArray[Any]]


def record(spelling: str, launch: Launch, n: int = 64, seed: int = 0
           ) -> dict[str, NDArray[Any]]:
    """Run one matrix form on the GPU through ``launch`` and return the arrays
    '<spelling>/a', '/b', '/c', '/d' (element bits, one instance per leading index) and
    '<spelling>/family' (the vector family of each instance)."""
    k = kernel_for(spelling)
    v = vectors(k.spelling, n, seed)
    d = np.asarray(launch(k, {"a": v["a"], "b": v["b"], "c": v["c"]}))
    want = (n,) + tuple(k.shapes["d"])
    if d.size != int(np.prod(want)):
        raise MmaHarnessError(f"'{spelling}': the launch returned {d.size} elements of D, "
                              f"expected {int(np.prod(want))}")
    d = d.reshape(want).view(_UINT[k.widths["d"]]) if d.dtype.itemsize * 8 == k.widths["d"] \
        else d.reshape(want).astype(_UINT[k.widths["d"]])
    s = k.spelling
    return {f"{s}/a": v["a"], f"{s}/b": v["b"], f"{s}/c": v["c"], f"{s}/d": d,
            f"{s}/family": v["family"]}


def cupy_launch(kernel: MmaKernel, arrays: dict[str, NDArray[Any]]) -> NDArray[Any]:
    """Launch with CuPy (one block of ``kernel.threads`` per instance); returns D's bits."""
    import os
    import tempfile

    import cupy as cp  # only where a GPU is
    with tempfile.TemporaryDirectory() as wd:
        path = os.path.join(wd, "mma.ptx")      # CuPy loads PTX from a .ptx file (hw/runner.py)
        with open(path, "w") as fh:
            fh.write(kernel.ptx)
        fn = cp.RawModule(path=path).get_function(kernel.entry)
    n = int(arrays["a"].shape[0])
    dev = [cp.asarray(np.ascontiguousarray(arrays[o])) for o in "abc"]
    out = cp.zeros((n,) + tuple(kernel.shapes["d"]), _UINT[kernel.widths["d"]])
    fn((n,), (kernel.threads,), (*dev, out, np.uint32(n)))
    cp.cuda.Device().synchronize()
    return cp.asnumpy(out)
