"""Protection methods (docs/methods.md), one module each; every random one is keyed by
(seed, step, draw, record id) through :mod:`sdc_core.rng`.

- :mod:`~sdc_core.methods.banding` — banding / global recoding, top and bottom coding
- :mod:`~sdc_core.methods.pram` — PRAM: flip, invariant, user matrix
- :mod:`~sdc_core.methods.relabel` — random relabeling from the empirical distribution
- :mod:`~sdc_core.methods.rank_swap` — rank swapping inside seeded rank blocks
- :mod:`~sdc_core.methods.record_swap` — targeted record swapping of households between areas
- :mod:`~sdc_core.methods.randomized_response` — randomized response and its estimator
- :mod:`~sdc_core.methods.suppression` — local suppression to reach k-anonymity
- :mod:`~sdc_core.methods.drop` — columns left out of the release

Each module ends with its :class:`~sdc_core.methods.spec.Method` declaration;
:func:`registry` finds them all, so a new method needs no list to be edited.
"""

import importlib
import pkgutil
from functools import cache

from sdc_core.methods.banding import band, top_bottom_code
from sdc_core.methods.common import MethodResult
from sdc_core.methods.pram import pram
from sdc_core.methods.randomized_response import (
           epsilon,
           estimate_shares,
           randomized_response,
)
from sdc_core.methods.rank_swap import rank_swap
from sdc_core.methods.record_swap import record_swap
from sdc_core.methods.relabel import relabel
from sdc_core.methods.spec import EngineRun, Method, Param, Release
from sdc_core.methods.suppression import SuppressionResult, local_suppression

__all__ = ["EngineRun", "Method", "MethodResult", "Param", "Release", "SuppressionResult",
           "band", "epsilon", "estimate_shares", "local_suppression", "pram",
           "randomized_response", "rank_swap", "record_swap", "relabel", "registry",
           "top_bottom_code"]


@cache
def registry() -> dict[str, Method]:
    """Every method declared in this package's modules, by name, in Protect-page order."""
    found: dict[str, Method] = {}
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        found.update({v.name: v for v in vars(module).values() if isinstance(v, Method)})
    return dict(sorted(found.items(), key=lambda item: item[1].order))
