"""The sm_90a data path's compilers gathered for ``insns/__init__``: the families with
opcodes of their own (wgmma, mbarrier, elect, setmaxnreg, griddepcontrol, mapa), and the
sm_90a forms of opcodes other families own (``cp.async.bulk``, ``fence.proxy.async``,
``prefetch.tensormap``, ``barrier.cluster``), each tried first and handing every other
form to the family's compiler."""

from __future__ import annotations

from .cluster import COMPILERS as _CLUSTER, _c_barrier_cluster, _c_mov_cluster
from .mbarrier import COMPILERS as _MBARRIER, FALLBACK
from .tma import _c_bulk, _c_prefetch_tensormap
from .wgmma import COMPILERS as _WGMMA, _c_wgmma

#: opcode -> compile function of the opcodes the sm_90a path owns
COMPILERS = {**_WGMMA, **_MBARRIER, **_CLUSTER}

#: opcode -> compile function returning a step, or None for a form it does not take
WRAPS: dict = {"cp": _c_bulk, "prefetch": _c_prefetch_tensormap,
               "barrier": _c_barrier_cluster, "mov": _c_mov_cluster}

#: compilers of instructions the engine runs itself, never a row of the table
OWN = frozenset((_c_wgmma, *_MBARRIER.values(), *_CLUSTER.values()))


def wrap(first, inner):
    """A compiler that tries `first` and hands the statement to `inner` when it returns
    None."""
    def compile(prog, ins):
        step = first(prog, ins)
        return inner(prog, ins) if step is None else step
    compile.inner = inner
    compile.__name__ = f"{first.__name__}|{inner.__name__}"
    return compile
