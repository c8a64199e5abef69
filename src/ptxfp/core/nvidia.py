"""NVIDIA's rules, a thin layer over the IEEE result.

Each rule cites its source; docs/semantics.md has the full list.  Open questions are not decided
here but read from policy.py, passed in as arguments.

- .ftz (PTX ISA 9.7.4.1/9.7.4.4 "flushes subnormal inputs and results to sign-preserving zero"):
  inputs are flushed in arith.decode; results here when tininess is read after rounding into
  the format, in rounding.round_pack(32) for the other readings (policy.ftz_tininess).
- .sat (9.7.4.1, 9.7.5: "clamps the result to [0.0, 1.0]. NaN results are flushed to +0.0"):
  -0.0 per policy.sat_minus_zero_to_plus.
- .relu (9.7.4.4: "clamps the result to 0 if negative. NaN result is converted to canonical
  NaN"): -0.0 per policy.relu_minus_zero_to_plus.
- .oob (9.7.4.4: "clamps the result to 0 if either of the operands is OOB NaN", per SIMD lane):
  the OOB-NaN pattern 0x7FF7 (not in the manual: docs/semantics.md, ".oob"), sign and c per
  policy.
- NaN results are the canonical NaN of the result format (policy.canonical_nan_f16/_bf16/_f32).
"""

from numba import njit

OOB_NAN = 0x7FF7


@njit
def finish(r, sign, is_nan, P, WIDTH, ONE, ftz_after, sat, relu, sat_mz, relu_mz, nan_bits):
    """Apply ftz (after rounding), NaN canonicalisation, .sat and .relu to a rounded magnitude.

    ``r`` is the magnitude bits from rounding.round_pack; returns the final bits.
    """
    if ftz_after:
        r = 0 if r < (1 << (P - 1)) else r
    bits = (sign << (WIDTH - 1)) | r
    bits = nan_bits if is_nan else bits
    if sat:
        # NaN and negatives (and -0.0 by policy) to +0.0, above 1.0 (and +inf) to 1.0; what is
        # left is +x or (without the policy) -0.0, so clamping the magnitude does the rest.
        low = is_nan | ((sign == 1) & ((r != 0) | sat_mz))
        bits = 0 if low else ((sign << (WIDTH - 1)) | min(r, ONE))
    if relu:
        neg = (sign == 1) & (not is_nan) & ((r != 0) | relu_mz)
        bits = 0 if neg else bits
    return bits


@njit
def is_oob(h, ignore_sign):
    """Is the 16-bit lane ``h`` the OOB-NaN?"""
    mask = 0x7FFF if ignore_sign else 0xFFFF
    return (h & mask) == OOB_NAN
