"""``python -m skcrowd``: the command line (``demo``, ``aggregate``, ``report``, ``fetch``); see
``--help``."""

import sys

from skcrowd._cli import main

if __name__ == "__main__":
    sys.exit(main())
