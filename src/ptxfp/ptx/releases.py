"""The .version/.target rules of each ptxas release, CUDA 12.0 to 13.5, as data.

A release of ptxas knows the PTX ISA versions 1.0 up to its own (``ptxas --list-version``) and
a set of ``.target`` names, each from a lowest ``.version`` ("PTX .version 9.3 does not support
.target sm_107").  ``check(text, ptxas="13.0")`` decides as that release does; the default is
the newest, :data:`DEFAULT`.

Where the facts come from:

* **13.0 and 13.5 are measured** here with ptxas V13.0.88 and V13.5.37 (tools/ptxas_probe.py:
  ``--list-version``, and the lowest .version each .target is accepted with;
  tests/data/ptxas/targets.json and tests/data/ptxas/13.5/targets.json; the targets below
  sm_50, which the probe's matrix leaves out, by hand with the same statement).  What changed
  between the two: PTX ISA 9.1-9.5, the targets sm_107/sm_107a/sm_107f (from 9.4), and
  ``.target sm_88`` needing 9.0 where 13.0 took it from 7.3.
* **13.1, 13.2, 13.3 and 13.4 are measured** with ptxas V13.1.115, V13.2.86, V13.3.73 and
  V13.4.92 (the ``nvidia-cuda-nvcc`` wheels; tools/release_probe.py, one small module per
  13.0 -> 13.5 difference run under all six releases, tests/data/ptxas/releases_13x.json,
  tests/test_check_releases_13x.py): each takes PTX ISA 9.0 plus one minor version per
  release (13.1: 9.1 ... 13.4: 9.4, ``--list-version``); sm_88 needs 9.0 from 13.1 on; the
  sm_107 targets come with 13.4 (from 9.4; 13.3 says "Unsupported .target 'sm_107a'"); the
  other targets are 13.5's at every one of them.  Where the instruction-level differences
  changed (the data each names its first release: opcodes ``SINCE``/``MODIFIERS_SINCE``/
  ``AFTER_SINCE``, :data:`REWORDED`, :data:`UNREAD`, the rows' ``per_release``): 13.1 has
  the fp8/fp6/fp4 cvt words, the PTX 9.1 forms (mma ``.scale_vec::4X`` with ``.ue8m0``,
  ``cvt.rn.satfinite.e2m1x2.f16x2`` from 9.1, .s2f6x2, the .bf16x2-to-small forms), the
  .bf16 operand rule and tcgen05's default scale-vector names; 13.2 the small-to-.bf16x2
  forms and ``.ignore_oob``; 13.3 ``clmad``/``fabric``/``mbarrier.check_layout``,
  ``.multimem`` and ``applypriority...bulk_group``; 13.4 ``.rz`` on the narrowing small-float
  cvt, ``.satfinite``'s new words, ``spdecompress``, ``fabric.try_atom.async`` and
  ``.fabric``/``.exclusive``/``.L1::32B``/``.proxy::readonly``/``.b4``; 13.5 ``.2pi``,
  ``trace.mark``, ``tensormap.query.alloc_class_large`` and ``.alloc_*``.
* **12.0-12.9 are derived**: a release's newest PTX ISA version is the one NVIDIA's
  PTX ISA manual lists for it in its release notes ("PTX release history": PTX ISA 8.0 with
  CUDA 12.0, 8.1 with 12.1, ... 8.5 with 12.5 (and 12.6), 8.6 with 12.7, 8.7 with 12.8, 8.8
  with 12.9, 9.0 with 13.0, 9.1 with 13.1; https://docs.nvidia.com/cuda/parallel-thread-execution/
  #release-notes-ptx-release-history, as NVIDIA's cuda-python ``cuda.bindings.utils`` also
  tabulates it), as measured for 13.0-13.5; a derived release knows the targets of ptxas
  13.5 whose lowest .version it has
  (a target comes with the PTX ISA version that introduces it: sm_120 with 8.7, sm_110 with
  9.0, sm_107 with 9.4), with 13.5's lowest versions.  13.0's own quirk (sm_88 from 7.3) is
  not carried to the releases around it.

Data only (and the lookup :func:`release`); check.py reads it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import PtxfpError

__all__ = ["Release", "RELEASES", "DEFAULT", "release", "release_names", "PTX_OF_CUDA",
           "REWORDED", "reworded", "UNREAD", "unread"]

#: the newest PTX ISA version of each CUDA release (the PTX ISA manual's release notes; 13.0
#: to 13.5 measured)
PTX_OF_CUDA: dict[str, tuple[int, int]] = {
    "12.0": (8, 0), "12.1": (8, 1), "12.2": (8, 2), "12.3": (8, 3), "12.4": (8, 4),
    "12.5": (8, 5), "12.6": (8, 5), "12.7": (8, 6), "12.8": (8, 7), "12.9": (8, 8),
    "13.0": (9, 0), "13.1": (9, 1), "13.2": (9, 2), "13.3": (9, 3), "13.4": (9, 4),
    "13.5": (9, 5),
}

#: every PTX ISA version any release knows, in order (ptxas 13.5 --list-version)
ALL_VERSIONS: tuple[tuple[int, int], ...] = tuple(
    (int(a), int(b)) for a, b in (v.split(".") for v in (
        "1.0 1.1 1.2 1.3 1.4 1.5 2.0 2.1 2.2 2.3 3.0 3.1 3.2 4.0 4.1 4.2 4.3 5.0 5.1 6.0 6.1 "
        "6.2 6.3 6.4 6.5 7.0 7.1 7.2 7.3 7.4 7.5 7.6 7.7 7.8 8.0 8.1 8.2 8.3 8.4 8.5 8.6 8.7 "
        "8.8 9.0 9.1 9.2 9.3 9.4 9.5").split()))


def _table(text: str) -> dict[str, tuple[int, int]]:
    out = {}
    for item in text.split():
        t, v = item.split("=")
        a, b = v.split(".")
        out[t] = (int(a), int(b))
    return out


#: the targets below sm_50 (by hand; the same in 13.0 and 13.5)
_OLD_TARGETS = ("sm_10=1.0 sm_11=1.0 sm_12=1.2 sm_13=1.2 sm_20=2.0 sm_21=2.0 sm_30=3.0 "
                "sm_32=4.0 sm_35=3.1 sm_37=4.1 ")

#: ptxas 13.0 (V13.0.88): the lowest .version of each .target (tests/data/ptxas/targets.json)
TARGETS_13_0 = _table(_OLD_TARGETS + """
sm_50=4.0 sm_52=4.1 sm_53=4.2 sm_60=5.0 sm_61=5.0 sm_62=5.0 sm_70=5.1 sm_72=6.1 sm_75=6.3
sm_80=7.0 sm_82=6.2 sm_86=7.1 sm_87=7.4 sm_88=7.3 sm_89=7.8 sm_90=7.8 sm_90a=8.0
sm_100=8.6 sm_100a=8.6 sm_100f=8.8 sm_101=8.6 sm_101a=8.6 sm_101f=8.8 sm_103=8.8
sm_103a=8.8 sm_103f=8.8 sm_110=9.0 sm_110a=9.0 sm_110f=9.0 sm_120=8.7 sm_120a=8.7
sm_120f=8.8 sm_121=8.8 sm_121a=8.8 sm_121f=8.8
""")

#: ptxas 13.5 (V13.5.37): the lowest .version of each .target
#: (tests/data/ptxas/13.5/targets.json)
TARGETS_13_5 = _table(_OLD_TARGETS + """
sm_50=4.0 sm_52=4.1 sm_53=4.2 sm_60=5.0 sm_61=5.0 sm_62=5.0 sm_70=5.1 sm_72=6.1 sm_75=6.3
sm_80=7.0 sm_82=6.2 sm_86=7.1 sm_87=7.4 sm_88=9.0 sm_89=7.8 sm_90=7.8 sm_90a=8.0
sm_100=8.6 sm_100a=8.6 sm_100f=8.8 sm_101=8.6 sm_101a=8.6 sm_101f=8.8 sm_103=8.8
sm_103a=8.8 sm_103f=8.8 sm_107=9.4 sm_107a=9.4 sm_107f=9.4 sm_110=9.0 sm_110a=9.0
sm_110f=9.0 sm_120=8.7 sm_120a=8.7 sm_120f=8.8 sm_121=8.8 sm_121a=8.8 sm_121f=8.8
""")


@dataclass(frozen=True)
class Release:
    """One ptxas release: its name ('13.5'), the PTX ISA versions it knows (1.0 to
    ``current``), its .targets with their lowest .version, and where that comes from."""
    name: str
    current: tuple[int, int]
    targets: dict[str, tuple[int, int]]
    measured: bool

    @property
    def versions(self) -> tuple[tuple[int, int], ...]:
        """The PTX ISA versions this release knows, oldest first."""
        return tuple(v for v in ALL_VERSIONS if v <= self.current)

    @property
    def source(self) -> str:
        if self.name in ("13.0", "13.5"):
            return f"measured with ptxas {self.name} (tools/ptxas_probe.py)"
        if self.measured:
            return (f"measured with ptxas {self.name} (tools/release_probe.py: its PTX ISA "
                    "versions, the new targets and each 13.0 -> 13.5 difference)")
        return ("derived: PTX ISA manual release notes (newest PTX ISA version of CUDA "
                f"{self.name}) and ptxas 13.5's targets")

    def __hash__(self) -> int:
        return hash(self.name)


def _derived(name: str) -> Release:
    cur = PTX_OF_CUDA[name]
    return Release(name, cur, {t: v for t, v in TARGETS_13_5.items() if v <= cur}, False)


#: the releases 13.1-13.4, measured with ptxas V13.1.115, V13.2.86, V13.3.73, V13.4.92
#: (tools/release_probe.py, tests/data/ptxas/releases_13x.json): each knows PTX ISA 9.0 plus
#: one minor version per release, takes sm_88 from 9.0 as 13.5 does, and the sm_107 targets
#: from 9.4 (13.4; 13.3 says "Unsupported .target 'sm_107a'"): 13.5's targets up to its own
#: version, as :func:`_derived` gives them
MEASURED_13X = ("13.1", "13.2", "13.3", "13.4")

#: every release, oldest first
RELEASES: dict[str, Release] = {
    name: (Release(name, PTX_OF_CUDA[name], TARGETS_13_0, True) if name == "13.0" else
           Release(name, PTX_OF_CUDA[name], TARGETS_13_5, True) if name == "13.5" else
           Release(name, PTX_OF_CUDA[name], _derived(name).targets, True)
           if name in MEASURED_13X else _derived(name))
    for name in PTX_OF_CUDA}

#: the release check() decides as unless told otherwise
DEFAULT = "13.5"


#: ptxas' words that changed between releases, for a spelling both refuse: (the first
#: release with the new words, the old message as a regular expression, the new one as its
#: replacement, the new rule).  ptxas 13.4 and 13.5 blame the types of ``add.satfinite.f16``
#: (they know .satfinite on add/sub/mul/fma with other types) where 13.0-13.3 call the modifier
#: illegal (tests/data/ptxas/13.5/spellings.jsonl; tests/data/ptxas/releases_13x.json)
REWORDED: tuple[tuple[str, str, str, str], ...] = (
    ("13.4", r"Illegal modifier '\.satfinite' for instruction '(add|sub|mul|fma)'",
     r"Unexpected instruction types specified for '\1'", "illegal-type"),
)


#: modifier tokens a release's parser cannot read at all: (the last release that cannot, the
#: token, ptxas' message).  ptxas 13.0-13.4 stop at ``sin.approx.ftz.2pi.f32`` ("Parsing error
#: near 'pi': syntax error"); 13.5 reads ``.2pi`` (PTX ISA 9.5; tests/data/ptxas/releases_13x.json)
UNREAD: tuple[tuple[str, str, str], ...] = (
    ("13.4", "2pi", "Parsing error near 'pi': syntax error"),
)


def unread(name: str, spelling: str) -> str | None:
    """ptxas release ``name``'s parse error for a spelling with a token it cannot read
    (:data:`UNREAD`), else None."""
    toks = spelling.split(".")[1:]
    for until, token, message in UNREAD:
        if _rkey(name) <= _rkey(until) and token in toks:
            return message
    return None


def _rkey(name: str) -> tuple[int, ...]:
    return tuple(int(x) for x in name.split("."))


def reworded(name: str, rule: str, message: str) -> tuple[str, str]:
    """(rule, message) as ptxas release ``name`` words an error that :data:`REWORDED` lists
    (13.0's words are the ones check() is written with)."""
    for since, old, new, new_rule in REWORDED:
        if _rkey(name) >= _rkey(since) and re.fullmatch(old, message):
            return new_rule, re.sub(old, new, message)
    return rule, message


def release_names() -> tuple[str, ...]:
    return tuple(RELEASES)


def release(name: str | None = None) -> Release:
    """The :class:`Release` called ``name`` ('13.0', '12.8'; also 'V13.0', '13.0.88'); the
    default release for None.  Raises :class:`~ptxfp.errors.PtxfpError` for a release outside
    12.0-13.5."""
    if name is None:
        return RELEASES[DEFAULT]
    s = str(name).strip().lstrip("vV")
    parts = s.split(".")
    key = ".".join(parts[:2]) if len(parts) >= 2 else s
    if key not in RELEASES:
        raise PtxfpError(f"ptxas release {str(name)[:40]!r} is not one ptxfp knows; it knows "
                         f"CUDA {', '.join(RELEASES)}")
    return RELEASES[key]
