"""Disclosure-risk measures on quasi-identifiers (docs/measures.md), one module per measure:

- :mod:`~sdc_core.risk.individual` — sdcMicro's individual risk
- :mod:`~sdc_core.risk.profile` — the k-anonymity profile, snapshots, riskiest classes
- :mod:`~sdc_core.risk.ldiversity` — l-diversity of sensitive columns
- :mod:`~sdc_core.risk.closeness` — t-closeness, β-likeness and δ-disclosure of sensitive columns
- :mod:`~sdc_core.risk.attribute` — columns that determine a sensitive column
- :mod:`~sdc_core.risk.household` — household risk and the household linkage attack
- :mod:`~sdc_core.risk.linkage` — the linkage attack after protection (docs/measures.md); it reads
  recipes, so import it from its module (``sdc_core.recipe`` itself uses this package)
- :mod:`~sdc_core.risk.deniability` — what perturbation buys: ε, best-guess accuracy and the
  posterior of each perturbed column (``recipe_deniability``, ``Deniability``)
- :mod:`~sdc_core.risk.inference` — the attribute-inference attack (``attribute_inference``,
  ``InferenceResult``, ``InferenceColumn``)
- :mod:`~sdc_core.risk.synthetic` — the risk of a release without row correspondence (a
  synthetic file): replicated uniques, DiSCO, the distance to the closest record against a
  holdout; import it from its module (it loads scipy's k-d tree, as
  :mod:`~sdc_core.risk.closest` does)

The last two read recipes too: their names are loaded on first use (PEP 562), so that
``sdc_core.recipe`` can import this package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sdc_core.classes import ClassSizes, class_sizes
from sdc_core.lazy import lazy_getattr
from sdc_core.risk.attribute import (
                                   AttributeFinding,
                                   AttributeScan,
                                   attribute_disclosure_scan,
)
from sdc_core.risk.closeness import Closeness, closeness, closeness_report
from sdc_core.risk.household import (
                                   HouseholdLinkage,
                                   HouseholdRisk,
                                   composition_uniques,
                                   household_linkage,
                                   household_risk,
)
from sdc_core.risk.individual import individual_risk
from sdc_core.risk.ldiversity import LDiversity, l_diversity
from sdc_core.risk.profile import (
                                   RiskProfile,
                                   key_subset_snapshots,
                                   profile_from_sizes,
                                   risk_profile,
                                   riskiest_classes,
                                   sensitive_report,
                                   small_count_levels,
)

if TYPE_CHECKING:
    from sdc_core.risk.deniability import Deniability, recipe_deniability
    from sdc_core.risk.inference import InferenceColumn, InferenceResult, attribute_inference

#: The names that import :mod:`sdc_core.recipe`, loaded on first use.
_LAZY = {"Deniability": "sdc_core.risk.deniability",
         "recipe_deniability": "sdc_core.risk.deniability",
         "InferenceColumn": "sdc_core.risk.inference",
         "InferenceResult": "sdc_core.risk.inference",
         "attribute_inference": "sdc_core.risk.inference"}

__all__ = ["AttributeFinding", "AttributeScan", "ClassSizes", "Closeness", "Deniability",
           "HouseholdLinkage", "HouseholdRisk", "InferenceColumn", "InferenceResult",
           "LDiversity", "RiskProfile", "attribute_disclosure_scan", "attribute_inference",
           "class_sizes", "closeness", "closeness_report", "composition_uniques",
           "household_linkage", "household_risk", "individual_risk", "key_subset_snapshots",
           "l_diversity", "profile_from_sizes", "recipe_deniability", "riskiest_classes",
           "risk_profile", "sensitive_report", "small_count_levels"]


__getattr__ = lazy_getattr(__name__, _LAZY)
