"""Run a ``@triton.jit`` kernel bit-exact without a GPU: Triton compiles it for a chosen target
(``triton.compile``, no device needed) and :func:`ptxfp.run` executes the PTX over NumPy
arrays (or torch CPU tensors), which get back what the GPU would write into them.

    >>> import ptxfp.triton                                   # doctest: +SKIP
    >>> ptxfp.triton.launch(add_kernel, (n // 256,), x, y, out, n, BLOCK=256)   # doctest: +SKIP

Triton is imported when a kernel is first launched; without it one error line says
``pip install 'ptxfp[triton]'``.  See docs/triton.md."""

from .launch import (DEFAULT_TARGET, INSTALL_HINT, Compiled, TritonMissing, TritonRun,
                     compile_kernel, jit_runner, launch)

__all__ = ["launch", "jit_runner", "compile_kernel", "Compiled", "TritonRun", "TritonMissing",
           "DEFAULT_TARGET", "INSTALL_HINT"]
