"""PTX's opcode vocabulary: every instruction name of the ISA, as data.

Source: the instruction list of the PTX ISA manual (section 9.7 "Instructions", PTX ISA 9.0,
https://docs.nvidia.com/cuda/parallel-thread-execution/contents.html), grouped as the manual
groups them, completed by a probe of ptxas 13.0 (tools/opcode_probe.py, recorded in
tests/data/ptxas/opcodes.json).  A name is the opcode as the manual heads its section
(``cp.async.bulk.tensor``, ``tcgen05.alloc``); where ptxas 13.0 only knows the name with a
qualifier (``mul24`` alone is "Not a name of any known instruction", ``mul24.lo`` is known) the
table lists the qualified names, and where ptxas knows a name the manual heads only with a
qualifier (``elect`` of ``elect.sync``) the table has the name ("ptxas" group).

The probe writes every candidate name as a statement ``NAME;`` (sm_100a, sm_90a, sm_120a,
sm_121a): every identifier-like token in the strings of the ptxas binary and its dotted
prefixes, every name of up to 4 characters, and every single name ptxas calls unknown with a
common qualifier appended.  On all of them the table agrees with ptxas: a name ptxas knows is
known here, one it calls unknown is unknown here, under the name ptxas gives
(tests/test_realworld.py checks the recorded verdicts, and repeats the probe where ptxas is
installed).  ptxas reads a few dotted names whole and calls them unknown though a shorter name
is known (``barrier.cluster``, ``elect.one``): :data:`NOT_NAMES`, and it reads a name as the
longest one its characters start with, the rest as an operand: ``barrier.clusterx.arrive``
is "Not a name of any known instruction: 'barrier.cluster'", as here.  Not modeled where the
longer name is a known one (``mul24.load`` is ``mul24.lo`` and ``ad``, a parse error with
operands, whose message depends on the operands; here an unknown name).

:func:`known_opcode` decides whether an instruction spelling starts with one of these names
(token by token, a ``::`` sub-qualifier belonging to its token: ``tcgen05.wait::ld`` is
``tcgen05.wait``).  ptxas names the first token of an unknown instruction in its message (or
the name of NOT_NAMES it starts with), so :func:`unknown_name` does too.
"""

from __future__ import annotations

import difflib
from functools import lru_cache

from .modifiers import EVERYWHERE, HOSTS, LONGER_NAMES, NOT_AFTER

__all__ = ["OPCODES", "NOT_NAMES", "SOURCE", "SINCE", "opcodes_of", "known_opcode", "unknown_name", "suggest",
           "known_modifier", "unknown_modifiers"]

SOURCE = ("PTX ISA 9.0 manual, section 9.7 (Instructions), completed by probes of ptxas 13.0 "
          "and 13.5 (tools/opcode_probe.py)")

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
    # not in the manual's list: names ptxas 13.0 knows (tools/opcode_probe.py), the manual
    # heading them only with a qualifier (elect.sync, match.sync, redux.sync); without it
    # ptxas says ".sync modifier required for instruction 'elect'", not an unknown name
    "ptxas": "elect match redux",
    # names ptxas 13.5 knows and 13.0 does not (tools/opcode_probe.py against V13.5.37,
    # tests/data/ptxas/13.5/opcodes.json; the release that added each: tools/release_probe.py,
    # tests/data/ptxas/releases_13x.json): :data:`SINCE`
    "ptxas-13.5": "clmad.hi clmad.lo fabric.submit fabric.submit.commit_group "
                  "fabric.try_atom.async fabric.try_get.async fabric.try_get.async.tensor "
                  "fabric.try_pullred.async fabric.try_put.async fabric.try_put.async.tensor "
                  "fabric.try_red.async fabric.try_red.async.tensor fabric.wait "
                  "mbarrier.check_layout multimem.cp.async.bulk multimem.cp.reduce.async.bulk "
                  "spdecompress tensormap.query.alloc_class_large trace.mark",
}

#: names ptxas 13.0 reads as one name but calls unknown (tools/opcode_probe.py): its message
#: names them whole ("Not a name of any known instruction: 'barrier.cluster'", also for
#: ``barrier.cluster.aligned``), some though a shorter name (``barrier``, ``elect``, ``mad``)
#: is known; the ones with a leading ``_`` are ptxas' internal names.
NOT_NAMES = tuple("""barrier.cluster elect.one mad.fused.hi madc.fused.hi mbarrier.tx
setmaxreg.alloc setmaxreg.dealloc setmaxreg.try_alloc setmaxreg.release setsmemsize.flush
suld.p _checkfp.divide _createpolicy.fractional _createpolicy.range _mma.warpgroup _sulea.b
_sulea.p _tcgen05.guardrails.allocation_granularity _tcgen05.guardrails.are_columns_allocated
_tcgen05.guardrails.check_sparse_usage _tcgen05.guardrails.datapath_alignment
_tcgen05.guardrails.in_physical_bounds _tcgen05.guardrails.is_current_warp_valid_owner
_tcgen05.guardrails.is_phase_valid _warpgroup.arrive _warpgroup.commit_batch _warpgroup.wait
""".split())

#: every instruction name, sorted
OPCODES = tuple(sorted({n for g in _GROUPS.values() for n in g.split()}))
#: name -> its group in the manual
GROUP = {n: g for g, names in _GROUPS.items() for n in names.split()}
#: name -> the first ptxas release that knows it, where that is not every release ptxfp
#: models (13.0's names: every release)
SINCE = {n: "13.1" for n in "multimem.cp.async.bulk multimem.cp.reduce.async.bulk".split()}
SINCE.update({n: "13.4" for n in "fabric.try_atom.async spdecompress".split()})
SINCE.update({n: "13.5" for n in "tensormap.query.alloc_class_large trace.mark".split()})
# the rest from 13.3: clmad.*, fabric.* (but try_atom), mbarrier.check_layout; each release
# measured (tools/release_probe.py, tests/data/ptxas/releases_13x.json)
SINCE.update({n: "13.3" for n in _GROUPS["ptxas-13.5"].split() if n not in SINCE})


def _rkey(release):
    return tuple(int(x) for x in release.split("."))


def opcodes_of(release: str | None = None) -> tuple[str, ...]:
    """The instruction names ptxas ``release`` ('13.0'; None: the newest) knows."""
    return tuple(n for n in OPCODES if _known_in(n, release))


def _known_in(name, release):
    since = SINCE.get(name)
    return since is None or release is None or _rkey(release) >= _rkey(since)

_BY_FIRST = {}
for _n in OPCODES:
    _BY_FIRST.setdefault(_n.split(".", 1)[0], []).append(tuple(_n.split(".")))
_NOT_BY_FIRST = {}
for _n in NOT_NAMES:
    _NOT_BY_FIRST.setdefault(_n.split(".", 1)[0], []).append(tuple(_n.split(".")))


def _longest(table, toks, release=None):
    best = None
    for name in table.get(toks[0], ()):
        if tuple(toks[:len(name)]) == name and (best is None or len(name) > len(best)) \
                and _known_in(".".join(name), release):
            best = name
    return best


def _tokens(spelling):
    return [t.split("::", 1)[0] for t in spelling.split(".")]


def _hidden(spelling):
    """The longest name of NOT_NAMES whose characters the spelling starts with, or None:
    ptxas reads the characters of a dotted name whole, wherever its last token ends
    (``barrier.clusterx.arrive`` is ``barrier.cluster`` and an operand ``x.arrive``;
    tests/data/ptxas/modifiers.json, ``names``)."""
    best = None
    for name in _NOT_BY_FIRST.get(spelling.split(".", 1)[0], ()):
        text = ".".join(name)
        if spelling.startswith(text) and (best is None or len(text) > len(best)):
            best = text
    return best


@lru_cache(maxsize=4096)
def known_opcode(spelling: str, release: str | None = None) -> str | None:
    """The table name an instruction spelling starts with (``'tcgen05.alloc'`` for
    ``tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32``), or None when PTX has no such
    instruction (``fmaa.rn.f16``, ``ADD.F16``: names are case-sensitive); ``release``: as ptxas
    release '13.0' knows them (None: the newest; ``fabric.wait`` is new in 13.5)."""
    best = _longest(_BY_FIRST, _tokens(spelling), release)
    hidden = _hidden(spelling)
    if best is None or (hidden is not None and len(hidden) > len(".".join(best))):
        return None                               # barrier.cluster: ptxas reads it whole
    return ".".join(best)


def unknown_name(spelling):
    """The name ptxas puts in "Not a name of any known instruction: '...'": the first token,
    or the longest name of NOT_NAMES the spelling starts with (``barrier.cluster``, also
    for ``barrier.cluster_arrive``)."""
    return _hidden(spelling) or spelling.split(".", 1)[0]


def suggest(spelling):
    """A known name close to an unknown spelling's (``fma`` for ``fmaa.rn.f16``, ``add`` for
    ``ADD.F16``), or None."""
    first = spelling.split(".", 1)[0]             # barrier.cluster: of the barrier family
    if first.lower() != first and known_opcode(spelling.lower()):
        return known_opcode(spelling.lower())
    if first in _BY_FIRST:                        # tcgen05.foo: a name of that family
        toks = _tokens(spelling)
        names = [".".join(n) for n in _BY_FIRST[first] if len(n) > 1]
        hidden = _longest(_NOT_BY_FIRST, toks)
        key = ".".join(toks[:max(2, len(hidden) if hidden else 0)])
        close = difflib.get_close_matches(key, names, n=1, cutoff=0.0)
        return close[0] if close else None
    heads = sorted({n.split(".", 1)[0] for n in OPCODES})
    close = difflib.get_close_matches(first, heads, n=1, cutoff=0.6)
    return close[0] if close else None


#: modifier tokens ptxas 13.5 knows after every name and 13.0 does not (tools/modifier_probe.py
#: --ptxas 13.5, tests/data/ptxas/13.5/modifiers.json; ptxas 13.0 says "Unknown modifier" for
#: each): token -> the first release that knows it (each release measured:
#: tools/release_probe.py, tests/data/ptxas/releases_13x.json)
MODIFIERS_SINCE = {"s2f6x2": "13.1", "ignore_oob": "13.2", "multimem": "13.3",
                   "L1::32B": "13.4", "b4": "13.4", "exclusive": "13.4", "fabric": "13.4",
                   "proxy::readonly": "13.4", "alloc_large": "13.5", "alloc_same": "13.5",
                   "alloc_small": "13.5"}
#: (token, name): known after that name from a later release on (13.0: ``applypriority.bulk``
#: is "Not a name of any known instruction"; 13.5 knows ``applypriority.async.bulk``; 13.0-13.2
#: cannot parse ``applypriority.bulk_group...``, 13.3 calls the modifier illegal there)
AFTER_SINCE = {("bulk_group", "applypriority"): "13.3"}
#: tokens every release knows after every name that the 13.0 probe did not write (none of
#: its candidates: the 13.5 binary's strings have them); ptxas 13.0 takes each (``bar.ecr;``
#: draws no "Unknown modifier")
ALSO_EVERYWHERE = frozenset("""ecr scratch sync_restrict::read sync_restrict::reads
sync_restrict::shared::cluster::read valid_addr""".split())


def known_modifier(name: str, token: str, release: str | None = None) -> bool:
    """Whether ptxas reads ``.token`` after the instruction name ``name`` (a name of
    :data:`OPCODES`) as a modifier it knows (the probed vocabulary of modifiers.py, as ptxas
    ``release`` knows it: '13.0'; None: the newest); True where the probe cannot say: after a
    name it did not write tokens after (not in ``modifiers.HOSTS``), and for a token starting
    with a digit (the probe wrote only those of the real-world modules and the tables:
    ``.16x64b``)."""
    if name not in HOSTS or token[:1].isdigit():
        return True
    if token in EVERYWHERE or token in ALSO_EVERYWHERE:
        return True
    since = MODIFIERS_SINCE.get(token)
    if since is not None:
        return release is None or _rkey(release) >= _rkey(since)
    not_after = NOT_AFTER.get(token)
    if not_after is not None and name in not_after:
        since = AFTER_SINCE.get((token, name))
        return since is not None and (release is None or _rkey(release) >= _rkey(since))
    return not_after is not None


def unknown_modifiers(spelling: str, name: str, release: str | None = None
                      ) -> list[tuple[int, str]]:
    """(offset in ``spelling`` of the ``.``, token) for each token after the name ``name``
    (:func:`known_opcode`'s) that ptxas calls "Unknown modifier": ``[(3, 'syncx')]`` for
    ``bar.syncx``.  The name's own tokens are not looked at (``tcgen05.wait::ld``), nor those
    of a longer name ptxas reads whole (``bar.arrive``, ``mbarrier.arrive.expect_tx``:
    ``modifiers.LONGER_NAMES``)."""
    parts = spelling.split(".")
    skip = max([name.count(".") + 1] + [n.count(".") + 1 for n in LONGER_NAMES
                                        if parts[:n.count(".") + 1] == n.split(".")])
    pos = sum(len(p) + 1 for p in parts[:skip]) - 1
    out = []
    for tok in parts[skip:]:
        if not known_modifier(name, tok, release):
            out.append((pos, tok))
        pos += len(tok) + 1
    return out
