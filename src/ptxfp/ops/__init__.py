"""The per-thread instruction semantics beyond the float arithmetic of the seed forms: cvt between
integer and float types (``cvtx``), setp/set/selp (``compare``), min/max/abs/neg/copysign/testp on
.f32/.f64 (``fops``), .f64 add/sub/mul/fma (``f64``) and the integer instructions (``int``).

Each family is rows of the one instruction table (isa/cvtx.py, isa/compare.py, isa/fops.py,
isa/f64.py, isa/intops.py) and one module here where its arithmetic lives; every module
exposes ``compute(spelling, *operands)`` (an entry of ``dispatch.ENTRY``) and ``core(ins)``
(``dispatch.CORE``, the interpreter's path).  Bits in, bits out: NumPy integer arrays of each
operand's width, ``.pred`` operands as booleans.

Floor: this package imports ``types``, ``isa``, ``spelling``, ``operands``, ``policy``,
``rounding`` and ``_jit``; only ``dispatch`` (and the package root) import it.
"""
