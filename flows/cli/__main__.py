"""``python -m flows.cli``: the ``benchforge`` command."""

import sys

from flows.cli.app import main

sys.exit(main())
