"""The cvt rows between integer and float types, to and from .f64, between .f16 and .bf16, and
of a float rounded to an integral value (PTX ISA 9.7.9.21; the .f32 <-> half rows are
isa/cvt.py, the small-float ones isa/cvt_small.py).

Measured with ptxas 13.0 (tests/data/ptxas/ops_spellings.jsonl, tools/ops_probe.py):

- float to integer takes an integer rounding (``.rni .rzi .rmi .rpi``) and nothing else ("Rounding
  modifier required", "Illegal rounding modifier"); integer to float and a narrowing float to
  float take a float rounding (``.rn .rz .rm .rp``); a widening (``cvt.f64.f32``) takes none;
  a same-type float cvt takes an integer rounding or none (``cvt.rni.f32.f32``, ``cvt.f32.f32``);
- ``.ftz`` only where .f32 is the source or the destination ("Modifier '.ftz' does not apply to
  this type of convert operation"); ``.sat`` everywhere except where .bf16 is on either side
  ("Illegal modifier '.sat'");
- ptxas also takes ``cvt.f16.bf16`` and ``cvt.bf16.f16`` without a rounding modifier (the
  manual asks for one only where the destination is smaller); which rounding it then applies is
  not documented, so these rows require one;
- an 8-bit integer with .bf16 needs an 8-bit register (.u8/.s8/.b8: "Arguments mismatch" for a
  16-bit one, which the .f16 forms take);
- every form with .bf16 on one side (but cvt.f32.bf16 / cvt.bf16.f32 of isa/cvt.py) needs
  PTX 7.8 and sm_90 ("Feature 'cvt with .bf16.s32' requires ...").
"""

from __future__ import annotations

from .rows import Operand, Require, Row, target, version

SECTION = "9.7.9.21"
INTS = ("u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64")
FLOATS = ("f16", "bf16", "f32", "f64")
IRND = ("rni", "rzi", "rmi", "rpi")
FRND = ("rn", "rz", "rm", "rp")
_ORDER = {"f16": 1, "bf16": 1, "f32": 2, "f64": 3}


def _needs(d: str, a: str) -> tuple[Require, ...]:
    if "bf16" in (d, a):
        feat = f"cvt with .{d}.{a}"
        return (version(f"Feature '{feat}' requires PTX ISA .version 7.8 or later", (7, 8)),
                target(f"Feature '{feat}' requires .target sm_90 or higher", 90))
    return ()


def _row(d: str, a: str, roundings: tuple[str, ...], required: bool) -> Row:
    mods = set()
    if "f32" in (d, a):
        mods.add("ftz")
    if "bf16" not in (d, a):
        mods.add("sat")
    return Row("cvtx", "cvt", (d, a), roundings, required, frozenset(mods), frozenset(),
               (Operand("d", d, d), Operand("a", a, a)), _needs(d, a), SECTION)


def _rows() -> tuple[Row, ...]:
    rows = []
    for f in FLOATS:
        for i in INTS:
            rows.append(_row(i, f, IRND, True))          # float -> integer
            rows.append(_row(f, i, FRND, True))          # integer -> float
    for d in FLOATS:
        for a in FLOATS:
            if {d, a} <= {"f32", "f16", "bf16"} and "f32" in (d, a) and d != a:
                continue                                 # isa/cvt.py's rows
            if d == a:
                rows.append(_row(d, a, IRND, False))
            elif _ORDER[d] > _ORDER[a]:
                rows.append(_row(d, a, (), False))       # widening: exact
            else:
                rows.append(_row(d, a, FRND, True))      # narrowing (and f16 <-> bf16)
    return tuple(rows)


ROWS: tuple[Row, ...] = _rows()
