"""The SFU forms (``.approx`` ex2/lg2/rcp/rsqrt/sqrt/sin/cos/tanh/div, ``div.full``), per target,
in two layers of data:

- ``primitives``: what one MUFU instruction computes (rcp, rsq, sqrt, ex2, lg2, sin, cos), one
  model each, from ptx-math's published method and tables (``tables``, written by
  tools/sfu_tables.py); measured on sm_5x-sm_75 by ptx-math (sin/cos: sm_70, sm_75), assumed on
  sm_80 and later (``measured``: the one table of which GPU measured which primitive, read by
  ``note`` and the command line);
- ``sass_data``: the machine code ptxas 13.5 wraps around MUFU per (form, target), recorded by
  tools/sfu_sequences.py; ``sequence`` turns each into a kernel (``kernels_gen``), one statement
  per SASS instruction, with the float arithmetic of ``sass_ops``;
- ``recorded``: the 16-bit forms without a published model (tanh, ex2 on the half types)
  from a GPU's recorded answers, all 2^16 inputs a lane (``load_tables(path)``: a
  ``gpu_approx.npz`` of ``python -m ptxfp.hw --record``; the files in ``gpu_tables/`` load
  themselves).

``compute(spelling, *operands, target=...)`` and ``core(ins)`` (``dispatch.ENTRY``/``CORE``)
are in ``model``; rows in isa/sfu.py; docs/semantics.md "SFU forms".
"""

from . import recorded
from .model import (DEFAULT_TARGET, TARGETS, assumed, compute, core, modeled,
                    modeled_primitives, note, plan, primitives_of, using_target)
from .recorded import load as load_tables

__all__ = ["compute", "core", "plan", "note", "assumed", "TARGETS", "DEFAULT_TARGET",
           "using_target", "modeled", "primitives_of", "modeled_primitives", "recorded",
           "load_tables"]
