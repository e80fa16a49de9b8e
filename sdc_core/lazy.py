"""Names of a package loaded on first use (PEP 562), so that importing the package stays light.

Used by ``sdc_core`` (whose ``import`` must not load pandas, so the command line answers
``--help`` at once) and ``sdc_core.utility`` (whose distribution measures import
``scipy.stats``). A leaf module: it imports nothing from the package.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from importlib import import_module


def lazy_getattr(module: str, exports: dict[str, str]) -> Callable[[str], object]:
    """A module-level ``__getattr__`` (PEP 562) for the package ``module``: a name of
    ``exports`` (name → the module that defines it) is imported on first use and kept in the
    package's namespace, so later look-ups do not come back here; any other name is an
    ``AttributeError`` (so ``from package import submodule`` still imports the submodule)."""
    namespace = vars(sys.modules[module])

    def __getattr__(name: str) -> object:
        if name in exports:
            value = getattr(import_module(exports[name]), name)
            namespace[name] = value
            return value
        raise AttributeError(f"module {module!r} has no attribute {name!r}")

    __getattr__.__doc__ = f"``{module}.<name>`` for a name loaded on first use (PEP 562)."
    return __getattr__
