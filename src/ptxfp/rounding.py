"""The one rounding core.

Every operation hands this routine a float64 that is either its exact result or a round-to-odd
proxy of it (a sticky bit in the last place, see arith.py).  The routine rounds that value once
into a target format (precision P, smallest normal exponent EMIN, largest exponent EMAX) under a
rounding mode, with gradual underflow and IEEE overflow.  Because the proxy carries at least two
more bits than any target (53 against 24 at most), rounding it gives the same bits as rounding
the exact value (Boldo and Melquiond, "Emulation of FMA and correctly rounded sums: proved
algorithms using rounding to odd", IEEE TC 2008).

Written as straight-line integer code so that Numba/LLVM can vectorize the loops that call it.
"""

import numpy as np
from numba import njit

from ._bitcast import bits_from_f64

RN, RZ, RM, RP = 0, 1, 2, 3
MODES = {"rn": RN, "rz": RZ, "rm": RM, "rp": RP}

_ABS = 0x7FFFFFFFFFFFFFFF
_INF64 = 0x7FF0000000000000
_FRAC64 = 0x000FFFFFFFFFFFFF


@njit(inline="always", cache=True)
def round_pack(x, P, EMIN, EMAX, mode, flush_tiny):
    """Round float64 ``x`` into a format with precision ``P``.

    Returns ``(magnitude_bits, sign, is_nan)``; the caller puts the sign back and chooses the NaN.
    ``flush_tiny`` flushes an ``x`` below the smallest normal to zero before rounding (the
    before-rounding reading of .ftz); the after-rounding reading lives in nvidia.py.
    """
    b = bits_from_f64(x)
    sign = (b >> 63) & 1
    a = b & _ABS
    e = (a >> 52) - 1023
    m = (a & _FRAC64) | (np.int64(1) << 52)
    # Bits of m below the target's last place: more of them when the result is subnormal.
    shift = min(53 - P + max(0, EMIN - e), 62)
    q = m >> shift
    rem = m & ((np.int64(1) << shift) - 1)
    half = np.int64(1) << (shift - 1)
    if mode == RN:
        inc = (rem > half) | ((rem == half) & ((q & 1) == 1))
    elif mode == RZ:
        inc = False
    elif mode == RM:
        inc = (rem != 0) & (sign == 1)
    else:
        inc = (rem != 0) & (sign == 0)
    # The exponent field is (max(e, EMIN) - EMIN) plus the carry of the implicit bit in q, so a
    # rounding carry walks into the exponent (and from subnormal into normal) by itself.
    r = ((max(e, EMIN) - EMIN) << (P - 1)) + q + np.int64(inc)
    inf_bits = np.int64(EMAX - EMIN + 2) << (P - 1)
    if mode == RN:
        over = inf_bits
    elif mode == RZ:
        over = inf_bits - 1
    elif mode == RM:
        over = inf_bits - 1 + sign
    else:
        over = inf_bits - sign
    r = over if r >= inf_bits else r
    r = 0 if (flush_tiny and e < EMIN) else r
    r = 0 if a == 0 else r
    r = inf_bits if a == _INF64 else r
    return r, sign, a > _INF64
