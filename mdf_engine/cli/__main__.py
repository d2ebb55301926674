"""``python -m mdf_engine.cli``: the ``mdf`` command."""

import sys

from . import main

sys.exit(main())
