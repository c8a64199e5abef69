"""``ptxfp ver``: check a file of results from the implementation under test.

Each line: the source operands in PTX order, then the implementation's destination bits, in hex
(gen's layout: a gen file whose last column the testbench replaced with its own result).  The
file is read in blocks and judged chunk by chunk, so its size does not matter.
"""

from __future__ import annotations

import os
import re
import sys
from typing import BinaryIO

import numpy as np
from numpy.typing import ArrayLike

from .classify import Report
from .forms import dtype, form as _form
from .textio import VectorFileError, read_columns


_HEADER = re.compile(r"#\s*ptxfp\s+\S+\s+gen\s+(\S+)\s+level\s+(\d+)\s+random\s+(\d+)\s+"
                     r"seed\s+(-?\d+)")


def claimed(spelling: str, comments: list[str]) -> tuple[int, str] | None:
    """(vectors, the header) that a gen header among ``comments`` says the file answers, or
    None when there is no such header.  A header of another form is an error."""
    from .source import size
    fm = _form(spelling)
    for line in comments:
        m = _HEADER.match(line)
        if not m:
            continue
        theirs = _form(m.group(1))
        if theirs.spelling != fm.spelling:
            raise VectorFileError(f"the file's header is of {theirs.spelling} ('{line}'), "
                                  f"not {fm.spelling}")
        level, n, seed = int(m.group(2)), int(m.group(3)), int(m.group(4))
        return size(fm, level, n, seed), line.lstrip("# ")
    return None


def verify_stream(spelling: str, f: BinaryIO) -> Report:
    """Judge every line of a binary stream; the witnesses' indices are line numbers.  No
    result at all, or fewer than the vectors a gen header in the file names, is a failure
    (``Report.ok`` is False and ``format`` says why)."""
    fm = _form(spelling)
    widths = fm.operand_widths + (fm.result_width,)
    names = fm.operand_names + ("result",)
    report = Report(fm.spelling)
    comments: list[str] = []
    for lines, cols in read_columns(f, widths, names, comments=comments):
        ops = tuple(c.astype(dtype(w)) for c, w in zip(cols[:-1], widths))
        got = cols[-1].astype(dtype(fm.result_width))
        report.add(fm, ops, fm.model(*ops), got, indices=lines)
    claim = claimed(fm.spelling, comments)
    report.expected_total = 1 if claim is None else claim[0]
    report.claim = None if claim is None else claim[1]
    return report


def verify_file(spelling: str, path: str | os.PathLike[str]) -> Report:
    """Judge a results file (``-``: standard input)."""
    _form(spelling)
    if str(path) == "-":
        return verify_stream(spelling, sys.stdin.buffer)
    try:
        with open(path, "rb") as f:
            return verify_stream(spelling, f)
    except FileNotFoundError:
        raise VectorFileError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise VectorFileError(f"{path}: is a directory") from None


def verify(spelling: str, *operands: ArrayLike, got: ArrayLike) -> Report:
    """Judge arrays: ``got`` against ptxfp's result on ``operands`` (PTX order)."""
    fm = _form(spelling)
    ops = tuple(np.asarray(x) for x in operands)
    return Report(fm.spelling).add(fm, ops, fm.model(*ops), np.asarray(got))
