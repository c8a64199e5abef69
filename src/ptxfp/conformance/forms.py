"""One view of a form for the conformance tools: operand and result widths, lanes, and ptxfp's
result bits, for the arithmetic table (``execute``) and the cvt table (``convert``) alike."""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from ..core import types
from ..errors import PtxfpError


def width(fmt: str) -> int:
    """Storage bits of a type name (the type table's)."""
    return types.width(fmt)


def _lane(fmt: str) -> str:
    return types.lane_format(fmt).name


def dtype(bits: int) -> type:
    return {8: np.uint8, 16: np.uint16}.get(bits, np.uint32)


@dataclass(frozen=True)
class Form:
    """A parsed form with what the conformance tools need to know about it."""
    ins: object                   #: the parsed ptxfp.Instruction
    spelling: str                 #: canonical spelling
    cvt: bool
    operand_names: tuple
    operand_formats: tuple        #: storage format of each source operand, PTX order
    result_type: str              #: f16, bf16, f32, f16x2, bf16x2
    lanes: int

    @property
    def operand_widths(self) -> tuple:
        return tuple(width(f) for f in self.operand_formats)

    @property
    def result_width(self) -> int:
        return width(self.result_type)

    @property
    def result_lane(self) -> str:
        """Format of one result lane: f16, bf16 or f32."""
        return _lane(self.result_type)

    @property
    def arity(self) -> int:
        return len(self.operand_names)

    def lane_formats(self) -> tuple:
        """Format of each operand of one lane (cvt packed forms: one f32 operand per lane)."""
        if self.cvt:
            return (_lane(self.operand_formats[0]),)
        return tuple(_lane(f) for f in self.operand_formats)

    def split_lanes(self, operands) -> list:
        """Per lane: the operand arrays of that lane (16-bit lanes as uint16, f32 as uint32)."""
        ops = [np.asarray(x) for x in operands]
        if self.lanes == 1:
            return [tuple(ops)]
        if self.cvt:        # cvt.xx2.f32 d, a, b: a lands in d[31:16], b in d[15:0]
            return [(ops[1],), (ops[0],)]
        w = self._lane_bits()
        wide, lane = np.dtype(f"uint{2 * w}"), np.dtype(f"uint{w}")
        return [tuple(((x.astype(wide) >> wide.type(w * k)) & wide.type((1 << w) - 1))
                      .astype(lane) for x in ops) for k in range(2)]

    def _lane_bits(self) -> int:
        """Bits of one lane of a packed operand: 16, or 32 for .f32x2."""
        return 32 if _lane(self.operand_formats[0]) == "f32" else 16

    def split_result(self, d) -> list:
        d = np.asarray(d)
        if self.lanes == 1:
            return [d]
        w = 16 if self.cvt else self._lane_bits()
        wide, lane = np.dtype(f"uint{2 * w}"), np.dtype(f"uint{w}")
        return [((d.astype(wide) >> wide.type(w * k)) & wide.type((1 << w) - 1))
                .astype(lane) for k in range(2)]

    @property
    def small(self) -> bool:
        """A small-float or .rs cvt form (conformance/small.py has its vectors and classes)."""
        return _small(self.ins)

    @property
    def result_lane_small(self) -> str:
        """Lane format of a small form's result: e4m3, ..., ue8m0, f16 or bf16."""
        t = self.result_type
        return t[:-2] if t[-2:] in ("x2", "x4") else t

    def model(self, *operands, out=None) -> np.ndarray:
        """ptxfp's result bits (``execute`` or ``convert``, as the row's family says)."""
        from ..dispatch import compute
        return np.asarray(compute(self.ins, *operands, out=out))


@functools.lru_cache(maxsize=None)
def form(spelling: str) -> Form:
    """Parse any spelling of the arithmetic or cvt table; SpellingError names a bad token."""
    if not isinstance(spelling, str):
        if isinstance(spelling, Form):
            return spelling
        spelling = str(spelling)
    from ..isa.spelling import parse
    text = spelling.strip()
    ins = parse(text)
    if not ins.row.executable:          # (parse refuses these first today)
        raise PtxfpError(f"'{text}' is checked by ptxfp but not computed: no vectors for it")
    cvt = ins.family == "cvt"
    return Form(ins=ins, spelling=str(ins), cvt=cvt, operand_names=tuple(ins.operand_names),
                operand_formats=tuple(ins.operand_formats), result_type=ins.dtype,
                lanes=ins.lanes)


def _small(ins: object) -> bool:
    from ..ops.smallfloat import handles
    return bool(handles(ins))  # type: ignore[arg-type]


def all_spellings() -> list:
    """Every form the conformance tools cover: the arithmetic table and the cvt table (the
    small-float and .rs cvt forms included)."""
    from .. import isa
    return list(isa.all_spellings())
