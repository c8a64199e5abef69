"""Operand vectors for the oracle tests: the package's targeted generator (``ptxfp.vectors``).

The families (specials, ties and near ties, the double-rounding witnesses in ``PINNED``,
cancellation, far exponents, subnormal boundaries, overflow thresholds per mode) live in
``ptxfp.vectors`` so that the GPU harness and vector files use the very same ones without gmpy2
or this directory.  The formats here are the oracle's own objects (``oracle.F16`` ...): the
generator compares formats by name, so they work with every function, and tests that hand them
on to the oracle keep its identity checks.
"""

from oracle import BF16, F16, F32, FORMATS, Format  # noqa: F401  (the oracle's formats)

from ptxfp.vectors import (  # noqa: F401
    DOUBLE_ROUNDING_WITNESS, N_DEFAULT, PINNED, at_binade, binade, clustered, compose,
    cvt_operands, finite, for_instruction, frac_pattern, from_float, lane_operands, nudge,
    operands, signs, specials, targeted, to_float, uniform,
)
