"""Tensor-core numerics: ``mma`` (one matrix instruction on whole matrices) and ``matmul`` (a
GEMM as a kernel computes it), per architecture from one table of parameters (params.py);
fragments.py: the mma.sync fragment layouts as data (the interpreter gathers a warp by them).

Floor: types, isa.mma_form and isa.mma (the instruction table: which targets have a shape),
rounding, errors, limits, policy (mma_model, mma_f64_nan) and the Numba plumbing, _jit.
"""

from .api import default_form, matmul, mma, resolve
from .params import ARCH, MmaParams, TargetError, params_for

__all__ = ["mma", "matmul", "resolve", "default_form", "ARCH", "MmaParams", "TargetError",
           "params_for"]
