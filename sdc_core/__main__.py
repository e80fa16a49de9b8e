"""``python -m sdc_core``: see :mod:`sdc_core.cli`."""

from sdc_core.cli import main

raise SystemExit(main())
