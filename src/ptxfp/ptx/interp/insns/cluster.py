"""Thread-block clusters, a cluster of one block (what a launch without cluster dimensions
gets on sm_90): %cluster_ctarank and %cluster_ctaid are 0, %cluster_nctarank and
%cluster_nctaid 1, %clusterid / %nclusterid the block's %ctaid / %nctaid, %is_explicit_cluster
false; barrier.cluster.arrive / wait a barrier of the block's threads (a wait returns once
every live thread of the cluster has arrived as often as the waiting thread); mapa of rank 0
the address itself (the block's own .shared is the cluster's .shared window); a kernel whose
.reqnctapercluster / .explicitcluster asks for more is refused at launch."""

from __future__ import annotations

import re

import numpy as np

from ....errors import InterpError, OperandError
from ...reader import Imm, Reg
from ..async_proxy import sleep
from ..base import WIDTH, _DTYPE, _bad, _nops, _types_of, _unsupported
from ..operands import _dst, _src
from ..program import _Step

_CLUSTER = re.compile(r"%(cluster_ctarank|cluster_nctarank|is_explicit_cluster)$|"
                      r"%(cluster_ctaid|cluster_nctaid|clusterid|nclusterid)\.([xyz])$")


def _c_mov_cluster(prog, ins):
    """mov d, %cluster_...: the cluster special registers (None for other movs)."""
    ops = ins.operands
    if len(ops) != 2 or not isinstance(ops[1], Reg) or not _CLUSTER.match(ops[1].name):
        return None
    types = _types_of(ins)
    if len(types) != 1 or types[0] not in WIDTH:
        raise _unsupported(ins, "mov needs one type")
    t = types[0]
    m = _CLUSTER.match(ops[1].name)
    writes = []
    d = _dst(prog, ins, ops[0], t, writes)
    dt = _DTYPE[WIDTH[t]]
    name = m.group(1) or m.group(2)
    k = "xyz".index(m.group(3)) if m.group(3) else 0

    def run(st):
        if name in ("cluster_ctarank", "cluster_ctaid", "is_explicit_cluster"):
            v = st.const(0, dt)
        elif name in ("cluster_nctarank", "cluster_nctaid"):
            v = st.const(1, dt)
        else:
            v = st.special(f"%{'ctaid' if name == 'clusterid' else 'nctaid'}.{'xyz'[k]}",
                           WIDTH[t])
        st.write(d, t, v)
    return _Step(ins, run, [], writes)


def _c_barrier_cluster(prog, ins):
    """barrier.cluster.arrive{.release|.relaxed}{.aligned} / barrier.cluster.wait{.acquire}
    {.aligned} (None for the other barrier forms)."""
    sfx = ins.suffixes
    if ins.opcode != "barrier" or sfx[:1] != ("cluster",):
        return None
    rest = set(sfx[1:]) - {"aligned", "release", "relaxed", "acquire"}
    if rest not in ({"arrive"}, {"wait"}):
        raise _unsupported(ins, "barrier.cluster takes .arrive or .wait")
    _nops(ins, 0)
    where = (ins.line, ins.col)
    spelling = ins.opcode_spelling
    if rest == {"arrive"}:
        def arrive(st):
            a = _arrivals(st)
            a[st.mask] += 1
        return _Step(ins, arrive, [], [])

    def wait(st):
        a = _arrivals(st)
        m = st.mask
        if (a[m] == 0).any():
            t = int(np.nonzero(m & (a == 0))[0][0])
            raise InterpError(f"'{spelling}': thread {t} waits on the cluster barrier "
                              "without arriving first (barrier.cluster.arrive)", *where,
                              rule="barrier")
        ready = _ready(st)
        held = m & ~ready
        if held.any():
            def describe(st2, mask):
                t = int(np.nonzero(mask)[0][0])
                return (f"'{spelling}': the cluster barrier never completes: thread {t} waits "
                        f"(arrival {int(_arrivals(st2)[t])}) and no thread is left to arrive")
            sleep(st, held, _ready, describe)
    return _Step(ins, wait, [], [])


def _arrivals(st):
    a = getattr(st, "cluster_arrivals", None)
    if a is None:
        a = st.cluster_arrivals = np.zeros(st.n, np.int64)
    return a


def _ready(st):
    """Threads whose cluster barrier has completed: every live thread of its block (the
    cluster) has arrived at least as often as it has."""
    a = _arrivals(st)
    blk = st.ids("block")
    live = getattr(st, "alive", None)
    big = np.iinfo(np.int64).max
    low = np.full(st.geom.nblocks, big, np.int64)
    np.minimum.at(low, blk[live], a[live])
    return a <= low[blk]


def _c_mapa(prog, ins):
    """mapa{.shared::cluster}.{u32,u64} d, a, rank: rank 0 (the only block of a cluster of
    one) maps a to itself."""
    types = _types_of(ins)
    if len(types) != 1 or types[0] not in ("u32", "u64"):
        raise _unsupported(ins, "mapa takes .u32 or .u64")
    _nops(ins, 3)
    t = types[0]
    reads, writes = [], []
    a = _src(prog, ins, ins.operands[1], t, reads)
    rank = _src(prog, ins, ins.operands[2], "u32", reads)
    d = _dst(prog, ins, ins.operands[0], t, writes)
    spelling = ins.opcode_spelling
    where = (ins.line, ins.col)
    r_op = ins.operands[2]
    if isinstance(r_op, Imm) and r_op.value not in (0, None):
        raise _bad(ins, f"rank {r_op.value}: a cluster of one block has only rank 0", r_op)

    def run(st):
        r = rank(st)[st.mask]
        if r.size and int(r.max()) != 0:
            raise InterpError(f"'{spelling}': rank {int(r.max())}: a cluster of one block has "
                              "only rank 0", *where, rule="cluster")
        st.write(d, t, a(st))
    return _Step(ins, run, reads, writes)


def launch_rules(prog):
    """Refuse a kernel that needs a cluster of more than one block and works across it (a
    %cluster_* register, mapa, getctarank, barrier.cluster, a .shared::cluster or
    .multicast::cluster operand): only clusters of one block are modeled.  A kernel that asks
    for larger clusters but uses none of these runs (its blocks are independent: the
    launch's own checks, launch._launch_rules, still apply)."""
    fn = prog.function
    rules = getattr(fn, "launch", None) if fn is not None else None
    if not rules:
        return
    for key in ("reqnctapercluster", "explicitcluster"):
        v = rules.get(key)
        if v is not None and int(np.prod(v[0])) > 1:
            use = _cluster_use(prog)
            if use is None:
                continue
            raise OperandError(f"'{fn.name}' asks for clusters of {' x '.join(map(str, v[0]))} "
                               f"blocks (.{key}, line {v[1]}) and works across its cluster "
                               f"('{use.opcode_spelling}', line {use.line}): the interpreter "
                               "launches clusters of one block only")


_ACROSS = frozenset(("shared::cluster", "multicast::cluster"))


def _cluster_use(prog):
    """The first statement whose result depends on the cluster's size, or None."""
    def regs(o):
        if isinstance(o, Reg):
            yield o.name
        for x in getattr(o, "items", ()) or ():
            yield from regs(x)
        b = getattr(o, "base", None)
        if b is not None:
            yield from regs(b)
    for ins in prog.statements:
        if ins.opcode in ("mapa", "getctarank") or (
                ins.opcode == "barrier" and ins.suffixes[:1] == ("cluster",)) or \
                _ACROSS & set(ins.suffixes) or \
                any(_CLUSTER.match(n) for o in ins.operands for n in regs(o)):
            return ins
    return None


def _c_getctarank(prog, ins):
    """getctarank{.shared::cluster}.u32 d, a: the rank of the block that owns a (always 0)."""
    _nops(ins, 2)
    reads, writes = [], []
    a_t = "u64" if prog.width.get(getattr(ins.operands[1], "name", ""), 32) == 64 else "u32"
    _src(prog, ins, ins.operands[1], a_t, reads)
    d = _dst(prog, ins, ins.operands[0], "u32", writes)
    return _Step(ins, lambda st: st.write(d, "u32", st.const(0, np.uint32)), reads, writes)


COMPILERS = {"mapa": _c_mapa, "getctarank": _c_getctarank}
