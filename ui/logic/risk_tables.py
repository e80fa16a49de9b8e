"""The Risk page's tables of one table and its risk profile, as a plain function that a worker
process runs (:func:`ui.compute.risk_tables` caches it for the page)."""

from __future__ import annotations

import pandas as pd

from sdc_core.risk import (
    AttributeScan,
    RiskProfile,
    riskiest_classes,
    sensitive_report,
    small_count_levels,
)


def tables_of(df: pd.DataFrame, p: RiskProfile, qi: list[str], k: int, sensitive: list[str],
              released: list[str]) -> tuple[pd.DataFrame, pd.DataFrame, dict, AttributeScan]:
    """Riskiest classes, rare key values, l-diversity and the attribute-disclosure scan of
    ``df`` with its profile ``p``."""
    ldiv, scan = (sensitive_report(df, p, sensitive, released) if sensitive
                  else ({}, AttributeScan()))
    return riskiest_classes(df, p, top=10), small_count_levels(df, qi, k), ldiv, scan
