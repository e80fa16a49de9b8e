"""Utility (information-loss) measures (docs/utility.md), one module each:

- :mod:`~sdc_core.utility.il1` — IL1 per column and per kind
- :mod:`~sdc_core.utility.eigen` — eigenvalue similarity of the correlation matrices
- :mod:`~sdc_core.utility.distribution` — TVD, KS, mean/sd shift, correlation difference,
  randomized-response estimator error
- :mod:`~sdc_core.utility.analysis` — benchmark analyses (OLS, logit, means, proportions,
  tables) on both tables, compared term by term: CI overlap, standardised difference
- :mod:`~sdc_core.utility.fidelity` — 1- and 2-way table fidelity (TVD, Hellinger, false
  zeros) and the propensity-score measure pMSE / S_pMSE
- :mod:`~sdc_core.utility.cell_loss` — chosen tables compared cell by cell after record
  swapping (sdcMicro's ``infoLoss``: absD, relabsD, abssqrtD, false zeros and non-zeros)

The last three are imported by their module path (statsmodels takes over a second to load).

The names of :mod:`~sdc_core.utility.distribution` are loaded on first use (it imports
``scipy.stats``, about a second), so ``from sdc_core.utility import il1`` stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sdc_core.lazy import lazy_getattr
from sdc_core.utility.eigen import eigenvalue_similarity
from sdc_core.utility.il1 import IL1_MISSING, IL1Result, il1

if TYPE_CHECKING:
    from sdc_core.utility.distribution import (
        correlation_difference,
        distribution_report,
        randomized_response_error,
        tvd,
    )

_LAZY = {name: "sdc_core.utility.distribution" for name in (
    "correlation_difference", "distribution_report", "randomized_response_error", "tvd")}

__all__ = ["IL1_MISSING", "IL1Result", "correlation_difference", "distribution_report",
           "eigenvalue_similarity", "il1", "randomized_response_error", "tvd"]


__getattr__ = lazy_getattr(__name__, _LAZY)
