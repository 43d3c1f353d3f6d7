"""``python -m moga.cli``: the ``moga`` command."""

import sys

from . import main

sys.exit(main())
