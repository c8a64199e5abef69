"""ptxfp.hw: the GPU conformance harness.

Generates one PTX kernel per form of the instruction table (kernels.py), runs it on an NVIDIA
GPU through CuPy or cuda-python (runner.py) over the special grid, the targeted families of
``ptxfp.vectors``, random and exhaustive vectors (``ptxfp.vectors.harness``), compares every result bit for
bit with ``ptxfp.execute`` (verify.py), runs the probes that settle the open policies
(probes.py), records exhaustive sweeps done in pieces (resume.py) and writes
docs/conformance.md (report.py) after every form.  The verdict is one of agrees, differs or
incomplete (command.py).  ``--record DIR`` keeps a GPU's own answers (record.py; the
``.approx`` forms ptxfp does not model yet from approx.py) and ``--replay DIR`` holds ptxfp to
them without a GPU; defects.py names the forms whose answers are a toolchain defect.

``python -m ptxfp.hw --help``, or ``ptxfp.hw.main(argv)`` (what ``ptxfp verify`` calls).
Importing this package needs no GPU and no CuPy.
"""

from .command import main
from .kernels import Kernel, decomposed_kernel, kernel_for, native_kernel
from .runner import HardwareUnavailable, ModelRunner, get_runner
from .verify import FormResult, sweep_form, verify_form

__all__ = ["main", "Kernel", "kernel_for", "native_kernel", "decomposed_kernel",
           "HardwareUnavailable", "ModelRunner", "get_runner", "FormResult", "verify_form",
           "sweep_form"]
