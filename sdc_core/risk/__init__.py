"""Disclosure-risk measures on quasi-identifiers (docs/measures.md), one module per measure:

- :mod:`~sdc_core.risk.individual` — sdcMicro's individual risk
- :mod:`~sdc_core.risk.profile` — the k-anonymity profile, snapshots, riskiest classes
- :mod:`~sdc_core.risk.ldiversity` — l-diversity of sensitive columns
- :mod:`~sdc_core.risk.attribute` — columns that determine a sensitive column
- :mod:`~sdc_core.risk.linkage` — the linkage attack after protection (docs/measures.md); it reads
  recipes, so import it from its module (``sdc_core.recipe`` itself uses this package)
"""

from sdc_core.classes import ClassSizes, class_sizes
from sdc_core.risk.attribute import (
                                   AttributeFinding,
                                   AttributeScan,
                                   attribute_disclosure_scan,
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

__all__ = ["AttributeFinding", "AttributeScan", "ClassSizes", "LDiversity", "RiskProfile",
           "attribute_disclosure_scan", "class_sizes", "individual_risk", "key_subset_snapshots",
           "l_diversity", "profile_from_sizes", "riskiest_classes", "risk_profile",
           "sensitive_report", "small_count_levels"]
