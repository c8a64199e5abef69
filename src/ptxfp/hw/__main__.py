"""``python -m ptxfp.hw``: see ptxfp.hw.command."""

import sys

from .command import main

if __name__ == "__main__":
    sys.exit(main())
