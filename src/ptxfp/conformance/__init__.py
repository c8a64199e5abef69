"""Verify another implementation against ptxfp: TestFloat-style vector files (``gen``), a
checker for files of results (``ver``) and sweeps over arrays that scale out on Dask
(``sweep``).  See docs/verify.md."""

from .classify import CLASSES, Report
from .gen import generate, write_file
from .ver import verify, verify_file, verify_stream

__all__ = ["CLASSES", "Report", "generate", "write_file", "verify", "verify_file",
           "verify_stream"]
