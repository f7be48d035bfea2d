"""``python -m cosim.cli``: the ``samfuse`` command."""

import sys

from ._main import main

sys.exit(main())
