"""The number layer: types and formats, the one rounding core, exact operations, NVIDIA's
rules over IEEE, operand checking, the Numba plumbing.  Imports nothing above it."""
