"""``python -m virtualcrime``: the same as the ``virtualcrime`` command."""

import sys

from .cli.main import main

sys.exit(main())
