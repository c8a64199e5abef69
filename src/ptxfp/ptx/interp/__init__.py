"""Run PTX: ``run(text, inputs, memory=...)`` executes a snippet or one entry body over many
threads at once and returns every register's final bits.

What is modeled
---------------
- the arithmetic forms of the core (``add/sub/mul/fma`` on .f16/.bf16/.f16x2/.bf16x2 and the
  mixed .f32 forms), computed as :func:`ptxfp.execute` computes them (its kernels, called
  without its operand checks: ``dispatch.CORE``);
- ``cvt`` between .f32 and .f16/.bf16/.f16x2/.bf16x2 (:func:`ptxfp.convert`), and integer
  ``cvt`` between .u/.s 8..64-bit types (truncate / zero- or sign-extend);
- ``mov`` of registers, immediates and special registers (``%tid.x`` is the thread index,
  ``%ntid.x`` the thread count, ``%ctaid``/``%laneid``/``%warpid`` follow from one block), the
  pack ``mov.b32 d, {a, b}`` (a in bits [15:0]) and the unpack ``mov.b32 {a, b}, d``;
- ``ld``/``st`` on ``.global`` (and generic addresses) against one flat little-endian byte
  memory, with ``[reg]``, ``[reg+imm]``, ``[imm]`` and per-thread addresses, ``.v2``/``.v4``;
  ``ld.param`` of the entry's parameters (``[name]``, ``[name+imm]``) whose values are inputs;
- the integer glue that compilers emit around them: ``add sub mul.lo mul.wide mad.lo min max
  and or xor not neg shl shr selp setp`` on .b/.u/.s 16/32/64 and ``cvta(.to).global``;
- guards ``@%p``/``@!%p`` and forward branches ``bra`` (threads that take one wait at the label,
  the others go on); ``ret``/``exit`` end a thread.

Anything else (floating-point f32/f64 arithmetic, loops, shared memory, calls ...) raises
:class:`UnsupportedInstruction` naming the opcode and its line and column.

Registers
---------
Each input is an int or a 1-D integer array (one value per thread; arrays and scalars broadcast
together; ``threads=`` sets the count when no input is an array).  Values are bit patterns;
negative ints are taken for .s types.  A register keeps the width of its declaration; an
undeclared one (snippets) takes the width of the type of the first instruction that writes or
reads it.  Reading a register that no input and no earlier instruction set raises
:class:`UninitializedRegister` naming the register, line and column.

The result maps every register that holds a value, named as written in the source, to a NumPy
array of its bits (bool for .pred, else uint8/16/32/64 by width), one element per thread; a lane
a thread never wrote (a guard, a branch) reads 0.  With ``memory`` given, the key ``'__memory__'``
holds the memory after the run: a uint8 copy, the caller's buffer is never modified.  Stores are
done in thread order, so where two threads store to one address the highest thread index wins.
"""

from __future__ import annotations

from ...errors import InterpError, UninitializedRegister, UnsupportedInstruction
from .base import WIDTH
from .insns import _COMPILERS
from .launch import (MEMORY_KEY, Dims, RunResult, inputs_needed, prepare, run,
                     run_detailed)
from .program import InputInfo
from .schedule import MAX_STEPS, MAX_WORK, StepLimit
from .state import SHARED_LIMIT, SHARED_STATIC_LIMIT

__all__ = ["run", "run_detailed", "inputs_needed", "prepare", "RunResult", "InputInfo", "InterpError",
           "UnsupportedInstruction", "UninitializedRegister", "MEMORY_KEY"]
