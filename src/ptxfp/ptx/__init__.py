"""PTX text: the reader (``read``), the checker (``check``) and the interpreter."""

from .reader import (Addr, Decl, Function, Imm, Instr, Param, Pred, Program, PtxSyntaxError,
                     Reg, Vec, read)
from .check import Diagnostic, Report, check

__all__ = ["read", "Program", "Function", "Param", "Decl", "Instr", "Reg", "Imm", "Vec", "Addr",
           "Pred", "PtxSyntaxError", "check", "Diagnostic", "Report"]
