"""``python -m moga``: the ``moga`` command."""

import sys

from .cli import main

sys.exit(main())
