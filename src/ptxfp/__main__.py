"""``python -m ptxfp``: the ``ptxfp`` command (``ptxfp --help`` lists its subcommands)."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
