"""``ptxfp gen``: test vectors in TestFloat's text layout, for any testbench to read.

One vector per line: the source operands in PTX order, then ptxfp's destination bits, as
zero-padded upper-case hex separated by one space (4 digits for .f16/.bf16, 8 for .f32 and the
packed .f16x2/.bf16x2).  PTX sets no floating-point exception flags, so there is no flags
column.  Lines starting with ``#`` are the header.  Written chunk by chunk through
ptxfp.outputs: a regular file under a temporary name in its directory, renamed at the end (an
error leaves nothing half-written behind); a FIFO or a device is written to.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from typing import BinaryIO, Iterator, cast

import numpy as np

from .. import policy as _policy
from .forms import form as _form
import ptxfp.conformance.source as source  # a module: tests patch its names
import ptxfp.conformance.textio as textio
from ..outputs import open_output


def header(spelling: str, level: int, n: int | None, seed: int) -> str:
    from .. import __version__
    f = _form(spelling)
    pol = _policy.current()
    fields = " ".join(f"{k}={v:#x}" if isinstance(v, int) and not isinstance(v, bool)
                      else f"{k}={v}" for k, v in dataclasses.asdict(pol).items())
    cols = " ".join(f"{nm}:{fm}" for nm, fm in zip(f.operand_names, f.operand_formats))
    n = source.LEVEL_N[level] if n is None else n
    return (f"# ptxfp {__version__} gen {f.spelling} level {level} random {n} seed {seed}\n"
            f"# columns: {cols} d:{f.result_type} (hex; no flags column: PTX sets none)\n"
            f"# policy: {fields}\n")


def generate(spelling: str, level: int = 1, n: int | None = None, seed: int = 1,
             chunk: int = source.CHUNK) -> Iterator[tuple[np.ndarray, ...]]:
    """Chunks of test vectors: tuples (operand arrays..., expected result array)."""
    f = _form(spelling)
    for ops in source.vectors(f, level, n, seed, max_chunk=chunk):
        yield ops + (f.model(*ops),)


def write(spelling: str, out: BinaryIO, level: int = 1, n: int | None = None,
          seed: int = 1) -> int:
    """Write a vector file to a binary stream; returns the number of vectors."""
    f = _form(spelling)
    out.write(header(f.spelling, level, n, seed).encode())
    widths = f.operand_widths + (f.result_width,)
    total = 0
    for cols in generate(f.spelling, level, n, seed):
        out.write(textio.format_lines(cols, widths))
        total += int(np.shape(cols[0])[0])
    return total


def write_file(spelling: str, path: str | os.PathLike[str] | None, level: int = 1,
               n: int | None = None, seed: int = 1) -> int:
    """Write a vector file (``None`` or ``-``: standard output) through ptxfp.outputs: a
    regular file atomically, a FIFO or device in place; a file-system error is an
    OutputError."""
    _form(spelling)                       # a bad spelling fails before any file is made
    source.plan(_form(spelling), level, n, seed)
    if path is None or str(path) == "-":
        out = sys.stdout.buffer
        total = write(spelling, out, level, n, seed)
        out.flush()
        return total
    with open_output(path, "-o") as out:
        return write(spelling, cast(BinaryIO, out), level, n, seed)
