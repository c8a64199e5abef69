"""PTX's opcode vocabulary: every instruction name of the ISA, as data.

Source: the instruction list of the PTX ISA manual (section 9.7 "Instructions", PTX ISA 9.0,
https://docs.nvidia.com/cuda/parallel-thread-execution/contents.html), grouped as the manual
groups them.  A name is the opcode as the manual heads its section (``cp.async.bulk.tensor``,
``tcgen05.alloc``); where ptxas 13.0 only knows the name with a qualifier (``mul24`` alone is
"Not a name of any known instruction", ``mul24.lo`` is known) the table lists the qualified
names.  Every name was checked with ptxas 13.0: written as a statement ``NAME;`` in an sm_100a
module, none draws "Not a name of any known instruction" (tests/test_realworld.py repeats the
probe where ptxas is installed).

:func:`known_opcode` decides whether an instruction spelling starts with one of these names
(token by token, a ``::`` sub-qualifier belonging to its token: ``tcgen05.wait::ld`` is
``tcgen05.wait``).  ptxas names the first token of an unknown instruction in its message, so
:func:`unknown_name` does too.
"""

from __future__ import annotations

import difflib
from functools import lru_cache

__all__ = ["OPCODES", "SOURCE", "known_opcode", "unknown_name", "suggest"]

SOURCE = ("PTX ISA 9.0 manual, section 9.7 (Instructions); each name checked with ptxas 13.0")

_GROUPS = {
    # 9.7.1 integer arithmetic (and 9.7.2 extended precision)
    "integer": "add sub mul mad mul24.lo mul24.hi mad24.lo mad24.hi sad div rem abs neg min max "
               "popc clz bfind fns brev bfe bfi szext bmsk dp4a dp2a "
               "add.cc addc sub.cc subc mad.cc madc.lo madc.hi",
    # 9.7.3 floating point, 9.7.4 half precision, 9.7.5 mixed precision
    "float": "testp copysign fma rcp sqrt rsqrt sin cos lg2 ex2 tanh",
    # 9.7.6 / 9.7.7 comparison and selection
    "compare": "set setp selp slct",
    # 9.7.8 logic and shift
    "logic": "and or xor not cnot lop3 shf.l shf.r shl shr",
    # 9.7.9 data movement and conversion
    "data": "mov shfl shfl.sync prmt ld ldu st st.async st.bulk multimem.ld_reduce multimem.st "
            "multimem.red prefetch prefetchu applypriority discard createpolicy.fractional "
            "createpolicy.range createpolicy.cvt isspacep cvta cvt cvt.pack mapa getctarank "
            "cp.async cp.async.commit_group cp.async.wait_group cp.async.wait_all cp.async.bulk "
            "cp.reduce.async.bulk cp.async.bulk.prefetch cp.async.bulk.tensor "
            "cp.reduce.async.bulk.tensor cp.async.bulk.prefetch.tensor "
            "cp.async.bulk.commit_group cp.async.bulk.wait_group tensormap.replace",
    # 9.7.10 / 9.7.11 texture and surface
    "texture": "tex tld4 txq istypep suld.b sust.b sust.p sured.b sured.p suq",
    # 9.7.12 control flow
    "control": "bra brx.idx call ret exit",
    # 9.7.13 parallel synchronization and communication
    "sync": "bar barrier bar.warp.sync barrier.cluster.arrive barrier.cluster.wait membar "
            "fence atom red red.async vote vote.sync match.sync activemask redux.sync griddepcontrol elect.sync "
            "mbarrier.init mbarrier.inval mbarrier.expect_tx mbarrier.complete_tx "
            "mbarrier.arrive mbarrier.arrive_drop mbarrier.test_wait mbarrier.try_wait "
            "mbarrier.pending_count cp.async.mbarrier.arrive tensormap.cp_fenceproxy "
            "clusterlaunchcontrol.try_cancel.async clusterlaunchcontrol.query_cancel",
    # 9.7.14 warp-level matrix multiply-accumulate
    "warp-mma": "wmma.load.a wmma.load.b wmma.load.c wmma.store.d wmma.mma mma ldmatrix "
                "stmatrix movmatrix",
    # 9.7.15 warpgroup-level matrix multiply-accumulate
    "wgmma": "wgmma.mma_async wgmma.fence wgmma.commit_group wgmma.wait_group",
    # 9.7.16 tensor core 5th generation
    "tcgen05": "tcgen05.alloc tcgen05.dealloc tcgen05.relinquish_alloc_permit tcgen05.mma "
               "tcgen05.fence tcgen05.commit tcgen05.cp tcgen05.shift tcgen05.ld tcgen05.st "
               "tcgen05.wait",
    # 9.7.17 stack manipulation
    "stack": "stacksave stackrestore alloca",
    # 9.7.18 video
    "video": "vadd vsub vabsdiff vmin vmax vshl vshr vmad vset vadd2 vsub2 vavrg2 vabsdiff2 "
             "vmin2 vmax2 vset2 vadd4 vsub4 vavrg4 vabsdiff4 vmin4 vmax4 vset4",
    # 9.7.19 miscellaneous
    "misc": "brkpt nanosleep pmevent trap setmaxnreg.inc setmaxnreg.dec",
}

#: every instruction name, sorted
OPCODES = tuple(sorted({n for g in _GROUPS.values() for n in g.split()}))
#: name -> its group in the manual
GROUP = {n: g for g, names in _GROUPS.items() for n in names.split()}

_BY_FIRST = {}
for _n in OPCODES:
    _BY_FIRST.setdefault(_n.split(".", 1)[0], []).append(tuple(_n.split(".")))


def _tokens(spelling):
    return [t.split("::", 1)[0] for t in spelling.split(".")]


@lru_cache(maxsize=4096)
def known_opcode(spelling):
    """The table name an instruction spelling starts with (``'tcgen05.alloc'`` for
    ``tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32``), or None when PTX has no such
    instruction (``fmaa.rn.f16``, ``ADD.F16``: names are case-sensitive)."""
    toks = _tokens(spelling)
    best = None
    for name in _BY_FIRST.get(toks[0], ()):
        if tuple(toks[:len(name)]) == name and (best is None or len(name) > len(best)):
            best = name
    return ".".join(best) if best else None


def unknown_name(spelling):
    """The name ptxas puts in "Not a name of any known instruction: '...'": the first token."""
    return spelling.split(".", 1)[0]


def suggest(spelling):
    """A known name close to an unknown spelling's (``fma`` for ``fmaa.rn.f16``, ``add`` for
    ``ADD.F16``), or None."""
    first = unknown_name(spelling)
    if first.lower() != first and known_opcode(spelling.lower()):
        return known_opcode(spelling.lower())
    if first in _BY_FIRST:                        # tcgen05.foo: a name of that family
        toks = _tokens(spelling)
        names = [".".join(n) for n in _BY_FIRST[first] if len(n) > 1]
        close = difflib.get_close_matches(".".join(toks[:2]), names, n=1, cutoff=0.0)
        return close[0] if close else None
    heads = sorted({n.split(".", 1)[0] for n in OPCODES})
    close = difflib.get_close_matches(first, heads, n=1, cutoff=0.6)
    return close[0] if close else None
