"""PTX text for the hardware harness: one kernel per instruction form (arithmetic and cvt).

Every kernel takes ``(a, b, c, <more sources>, d, n)``: pointers to global arrays and an
element count; the more sources are those of the cvt.rs forms past a, b (``e``, ``f`` and
``rbits``), in the row's operand order (``Kernel.names``).  Thread ``i`` (the global thread
index) loads ``a[i]``, ``b[i]``, ... with ``ld.global.b16``/``ld.global.b32``, runs the
instruction under test and stores ``d[i]``.  A form that does not use an operand (``add`` has no
c, mixed ``add`` has no b) simply ignores it.

A form the GPU cannot run natively (the mixed-precision ``.f32.f16``/``.f32.bf16`` forms need
sm_100; H100 and H200 are sm_90) is run through its defined decomposition: ``cvt.f32.f16`` or
``cvt.f32.bf16`` of a (and b), which is exact, then ``add``/``sub``/``fma`` with the same rounding
and ``.sat`` on ``.f32``, without ``.ftz`` (f32 subnormals kept).  The ``.f32x2`` forms (sm_100)
run as their two ``.f32`` lanes.  Such a kernel is labelled ``decomposed``; it checks ptxfp's
reading of the form, not sm_100 silicon.
"""

from __future__ import annotations

from dataclasses import dataclass

from .forms import is_mixed, operand_widths, parse_form, result_width

#: default GPU architecture: H100/H200 (sm_90)
DEFAULT_SM = 90

#: the PTX ISA version that first knows each target (PTX ISA manual, "Release notes"; sm_110,
#: CUDA 13's new name of sm_101, needs 9.0: ptxas 13.0 refuses it under .version 8.8)
TARGET_PTX = {
    50: (4, 0), 52: (4, 1), 53: (4, 2), 60: (5, 0), 61: (5, 0), 62: (5, 0), 70: (6, 0),
    72: (6, 1), 75: (6, 3), 80: (7, 0), 86: (7, 1), 87: (7, 4), 89: (7, 8), 90: (7, 8),
    100: (8, 6), 101: (8, 6), 103: (8, 8), 110: (9, 0), 120: (8, 7), 121: (8, 8),
}

#: the mode of a kernel written for a target this GPU is not (kernel_for)
NOT_RUNNABLE = "not-runnable"

#: name of the entry in every generated module
ENTRY = "ptxfp_form"
#: threads per block used by the runners
BLOCK = 256


def _target_ptx(sm):
    known = [s for s in TARGET_PTX if s <= sm]
    return TARGET_PTX[max(known)] if known else (4, 0)


@dataclass(frozen=True)
class Kernel:
    """One generated PTX module and what a runner needs to know to launch it."""
    spelling: str          #: the form under test (canonical spelling)
    mode: str              #: 'native', 'decomposed' or 'not-runnable'
    sm: int                #: the .target it is written for
    version: tuple         #: the .version it declares
    ptx: str
    widths: tuple          #: bit widths in memory of the parameters ``names``; 0 = not used
    body: tuple            #: the instruction lines between the loads and the store
    target_name: str | None = None   #: the .target when it is not sm_<sm> (sm_100a)
    #: the array parameters in launch order: a, b, c, the sources past them (cvt.rs), d
    names: tuple = ("a", "b", "c", "d")

    @property
    def sources(self):
        """(name, width) of each source parameter in launch order (width 0: not read)."""
        return tuple(zip(self.names[:-1], self.widths[:-1]))

    @property
    def result_width(self):
        return self.widths[-1]

    @property
    def target(self):
        return self.target_name or "sm_%d" % self.sm

    @property
    def version_str(self):
        return "%d.%d" % self.version

    @property
    def entry(self):
        return ENTRY

    @property
    def operands(self):
        """Names of the source operands the kernel reads, in launch order."""
        return tuple(n for n, w in self.sources if w)


def can_run_natively(ins, sm):
    """Whether a GPU of compute capability ``sm`` (e.g. 90) runs ``ins`` as written.  A row
    with a list of targets (the fp6/fp4/ue8m0 cvt forms, .rs: sm_100a, sm_103a, ...) runs
    only on a GPU whose number is one of them."""
    if ins.row.targets:
        return any(int(t[3:].rstrip("af")) == sm for t in ins.row.targets)
    return sm >= ins.min_sm


def _row_target(ins):
    """The .target a kernel for ``ins`` is written for where the row lists its targets."""
    return ins.row.targets[0] if ins.row.targets else None


def _module(spelling, mode, sm, version, names, widths, body, target=None):
    """Assemble the full PTX text around ``body`` (instruction lines on %a %b %c ... -> %d).
    ``names``/``widths``: the array parameters, a, b, c, then the sources past them (cvt.rs: e,
    f, rbits), then d (``Kernel.names``); ``target``: the .target when it is not sm_<sm>."""
    extra = names[3:-1]
    regs = []
    for n, w in zip(names, widths):
        if w:
            regs.append(f"    .reg .b{w} %{n};")
    loads, stores = [], []
    for n, w in zip(names, widths):
        if not w:
            continue
        nbytes = w // 8
        if n == "d":
            stores += [f"    mul.wide.u32 %off, %i, {nbytes};",
                       "    add.s64 %ptr, %gd, %off;",
                       f"    st.global.b{w} [%ptr], %d;"]
        else:
            loads += [f"    mul.wide.u32 %off, %i, {nbytes};",
                      f"    add.s64 %ptr, %g{n}, %off;",
                      f"    ld.global.b{w} %{n}, [%ptr];"]
    lines = [
        f"// ptxfp hardware harness: {spelling} ({mode})",
        f".version {version[0]}.{version[1]}",
        f".target {target or 'sm_%d' % sm}",
        ".address_size 64",
        "",
        f".visible .entry {ENTRY}(",
        "    .param .u64 param_a,",
        "    .param .u64 param_b,",
        "    .param .u64 param_c,",
        *(f"    .param .u64 param_{n}," for n in extra),
        "    .param .u64 param_d,",
        "    .param .u32 param_n",
        ")",
        "{",
        "    .reg .pred %done;",
        "    .reg .b32 %i, %n, %bid, %bdim, %tx;",
        "    .reg .b64 %ga, %gb, %gc, %gd, %off, %ptr;",
        *(f"    .reg .b64 %g{n};" for n in extra),
        *regs,
        "    .reg .f32 %fa, %fb, %fc, %fd;",
        "",
        "    ld.param.u64 %ga, [param_a];",
        "    ld.param.u64 %gb, [param_b];",
        "    ld.param.u64 %gc, [param_c];",
        "    ld.param.u64 %gd, [param_d];",
        *(f"    ld.param.u64 %g{n}, [param_{n}];" for n in extra),
        "    ld.param.u32 %n, [param_n];",
        "    mov.u32 %bid, %ctaid.x;",
        "    mov.u32 %bdim, %ntid.x;",
        "    mov.u32 %tx, %tid.x;",
        "    mad.lo.u32 %i, %bid, %bdim, %tx;",
        "    setp.ge.u32 %done, %i, %n;",
        "    @%done bra $L_done;",
        "    cvta.to.global.u64 %ga, %ga;",
        "    cvta.to.global.u64 %gb, %gb;",
        "    cvta.to.global.u64 %gc, %gc;",
        "    cvta.to.global.u64 %gd, %gd;",
        *(f"    cvta.to.global.u64 %g{n}, %g{n};" for n in extra),
        *loads,
        *("    " + b for b in body),
        *stores,
        "$L_done:",
        "    ret;",
        "}",
        "",
    ]
    return "\n".join(lines)


def _version_for(min_ptx, sm):
    return max(tuple(min_ptx), _target_ptx(sm))


def _params(ins):
    """(names, widths) of ``ins``'s kernel parameters: a, b, c (width 0 where the form has no
    such operand), the sources past them in the row's order (cvt.rs: e, f, rbits), d."""
    w = dict(zip(ins.operand_names, operand_widths(ins)))
    extra = tuple(n for n in ins.operand_names if n not in ("a", "b", "c"))
    names = ("a", "b", "c") + extra + ("d",)
    return names, tuple(w.get(n, 0) for n in names[:-1]) + (result_width(ins),)


def native_kernel(spelling, sm=DEFAULT_SM, mode="native"):
    """The kernel that runs the form as written, for a GPU of compute capability ``sm`` (for
    a row with a target list: for its first target, sm_100a say)."""
    ins = parse_form(spelling)
    target = _row_target(ins)
    sm = int(target[3:].rstrip("af")) if target else max(sm, ins.min_sm)
    version = _version_for(ins.min_ptx, sm)
    srcs = ["%" + n for n in ins.operand_names]
    if ins.dtype.endswith("x4"):                    # cvt.rs: d, {a, b, e, f}, rbits
        srcs = ["{" + ", ".join(srcs[:4]) + "}", srcs[4]]
    ops = ", ".join(["%d"] + srcs)
    body = (f"{ins} {ops};",)
    names, widths = _params(ins)
    return Kernel(str(ins), mode, sm, version,
                  _module(str(ins), mode, sm, version, names, widths, body, target), widths,
                  body, target, names)


#: cvt.f32.bf16 needs PTX ISA 7.8 / sm_90; cvt.f32.f16 is as old as f16 itself
_CVT_REQ = {"f16": ((4, 2), 53), "bf16": ((7, 8), 90)}


def decomposed_kernel(spelling, sm=DEFAULT_SM):
    """The kernel that runs a mixed-precision form through its definition on .f32:
    exact ``cvt.f32.{atype}`` of a (and b), then ``{op}.{rnd}{.sat}.f32`` (no .ftz)."""
    ins = parse_form(spelling)
    if not is_mixed(ins):
        raise ValueError(f"'{ins}' is not a mixed-precision form; it has no decomposition")
    ptx_req, sm_req = _CVT_REQ[ins.atype]
    sm = max(sm, sm_req)
    version = _version_for(ptx_req, sm)
    sat = ".sat" if ins.sat else ""
    op = f"{ins.opcode}.{ins.rounding}{sat}.f32"
    # each half source widened exactly, the .f32 source moved, then the .f32 operation
    body = [f"cvt.f32.{t} %f{n}, %{n};" if t != "f32" else f"mov.b32 %f{n}, %{n};"
            for n, t in zip(ins.operand_names, ins.operand_formats)]
    body.append(f"{op} %fd, {', '.join('%f' + n for n in ins.operand_names)};")
    body.append("mov.b32 %d, %fd;")
    body = tuple(body)
    names, widths = _params(ins)
    return Kernel(str(ins), "decomposed", sm, version,
                  _module(str(ins), "decomposed", sm, version, names, widths, body),
                  widths, body, None, names)


def is_f32x2(ins):
    return ins.dtype == "f32x2"


def decomposed_f32x2_kernel(spelling, sm=DEFAULT_SM):
    """The kernel that runs an ``.f32x2`` form (sm_100) as its two ``.f32`` lanes: each .b64
    operand unpacked into its halves (lane 0 = bits 31:0), the same operation with the same
    rounding and ``.ftz`` on each lane, the halves packed again.  It checks ptxfp's reading of
    the packed form (lanes independent, lane 0 low), not sm_100 silicon."""
    ins = parse_form(spelling)
    if not is_f32x2(ins):
        raise ValueError(f"'{ins}' is not an .f32x2 form")
    version = _version_for((1, 0), sm)
    names = ins.operand_names
    op = str(ins).removesuffix(".f32x2") + ".f32"
    regs = ", ".join(f"%{n}{k}" for n in names + ("d",) for k in (0, 1))
    body = ["{", f".reg .f32 {regs};"]
    body += [f"mov.b64 {{%{n}0, %{n}1}}, %{n};" for n in names]
    body += [f"{op} %d{k}, {', '.join(f'%{n}{k}' for n in names)};" for k in (0, 1)]
    body += ["mov.b64 %d, {%d0, %d1};", "}"]
    body = tuple(body)
    names, widths = _params(ins)
    return Kernel(str(ins), "decomposed", sm, version,
                  _module(str(ins), "decomposed", sm, version, names, widths, body),
                  widths, body, None, names)


def kernel_for(spelling, sm=DEFAULT_SM):
    """The kernel a GPU of compute capability ``sm`` runs for the form: native where it can,
    else the decomposition (mixed-precision forms, .f32x2)."""
    ins = parse_form(spelling)
    if can_run_natively(ins, sm):
        return native_kernel(ins, sm)
    if is_mixed(ins):
        return decomposed_kernel(ins, sm)
    if ins.row.targets:
        # the fp6/fp4/ue8m0 and .rs forms exist on their targets only: the kernel for its
        # first target (ptxas takes it), labelled not runnable on this GPU
        return native_kernel(ins, sm, mode=NOT_RUNNABLE)
    if is_f32x2(ins):
        return decomposed_f32x2_kernel(ins, sm)
    raise ValueError(f"'{ins}' needs sm_{ins.min_sm}; this GPU is sm_{sm}")
