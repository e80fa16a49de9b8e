"""Utility (information-loss) measures (DESIGN §5), one module each:

- :mod:`~sdc_core.utility.il1` — IL1 per column and per kind
- :mod:`~sdc_core.utility.eigen` — eigenvalue similarity of the correlation matrices
- :mod:`~sdc_core.utility.distribution` — TVD, KS, mean/sd shift, correlation difference,
  randomized-response estimator error
"""

from sdc_core.utility.distribution import (
                                           correlation_difference,
                                           distribution_report,
                                           randomized_response_error,
                                           tvd,
)
from sdc_core.utility.eigen import eigenvalue_similarity
from sdc_core.utility.il1 import IL1Result, il1

__all__ = ["IL1Result", "correlation_difference", "distribution_report",
           "eigenvalue_similarity", "il1", "randomized_response_error", "tvd"]
