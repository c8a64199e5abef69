"""ptxfp: the bit-exact model of NVIDIA PTX half-precision and mixed-precision arithmetic.

    >>> import ptxfp
    >>> hex(ptxfp.execute("fma.rn.bf16", 0x3F82, 0x3FA0, 0x0001))
    '0x3fa3'

The public API (signatures, operand and dtype rules, errors, policies) is in docs/api.md.
"""

from __future__ import annotations

from . import isa, policy
from .errors import (FormatError, OperandError, OutputError, PtxfpError, ResourceError,
                     SpellingError)
from .ops.arith import execute
from .ops.cvt import convert
from .dispatch import compute
from .ptx.interp import run
from .ptx.tensormap import tensor_map
from .encode import from_bits, to_bits
from .policy import Policy
from .isa.spelling import Instruction, parse
from .ptx.check import Diagnostic, Report, check
from .conformance import sweep
from .tensor import matmul, mma

__version__ = "0.1.0"

__all__ = [
    "execute", "parse", "to_bits", "from_bits", "Instruction", "Policy", "POLICY",
    "PtxfpError", "SpellingError", "OperandError", "FormatError", "ResourceError", "isa",
    "policy",
    "convert",
    "compute",
    "run",
    "tensor_map",
    "check", "Report", "Diagnostic",
    "__version__",
    "sweep",
    "OutputError",
    "mma", "matmul",
]


def __getattr__(name: str) -> Policy:
    # POLICY is read live, so that policy.using(...) is seen through ptxfp.POLICY too.
    if name == "POLICY":
        return policy.current()
    raise AttributeError(f"module 'ptxfp' has no attribute {name!r}")
