"""Verify another implementation against ptxfp (docs/verify.md): TestFloat-style vector files
(``generate``/``write_file``, ``ptxfp gen``), a checker for files of results (``verify_file``,
``ptxfp ver``) and sweeps over arrays that scale out on Dask (``sweep``, ``ptxfp sweep``), all
reporting mismatches by class (``CLASSES``) in one ``Report``.

Layering: these sit on ``ptxfp.execute``/``ptxfp.convert`` and below the command line."""

from .classify import Report
from .common import CLASSES, SweepError
from .gen import generate, write_file
from .sweeps import Plan, sweep
from .ver import verify, verify_file, verify_stream

__all__ = ["CLASSES", "Report", "generate", "write_file", "verify", "verify_file",
           "verify_stream", "sweep", "Plan", "SweepError"]
