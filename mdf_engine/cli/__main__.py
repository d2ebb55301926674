"""``python -m mdf_engine.cli``: the ``mdf`` command."""

import sys

from . import main

if __name__ == "__main__":
    sys.exit(main())
