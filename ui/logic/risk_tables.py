"""The Risk page's tables of one table and its risk profile, as a plain function that a worker
process runs (:func:`ui.compute.risk_tables` caches it for the page)."""

from __future__ import annotations

import pandas as pd

from sdc_core.names import name
from sdc_core.risk import (
    AttributeScan,
    RiskProfile,
    riskiest_classes,
    sensitive_report,
    small_count_levels,
)
from sdc_core.risk.ldiversity import LDiversity


def tables_of(df: pd.DataFrame, p: RiskProfile, qi: list[str], k: int, sensitive: list[str],
              released: list[str]) -> tuple[pd.DataFrame, pd.DataFrame, dict, AttributeScan]:
    """Riskiest classes, rare key values, l-diversity and the attribute-disclosure scan of
    ``df`` with its profile ``p``."""
    ldiv, scan = (sensitive_report(df, p, sensitive, released) if sensitive
                  else ({}, AttributeScan()))
    return riskiest_classes(df, p, top=10), small_count_levels(df, qi, k), ldiv, scan


def ldiversity_tile(v: LDiversity, was: LDiversity | None = None) -> tuple[str, str]:
    """The l-diversity tile of a sensitive column: its value (min l) and the note under it, the
    share of records in classes with l = 1 (and, for a release, the original's figures). The
    note reads the tile, it is no change: the page shows it without an arrow."""
    note = f"{v.percent_l_eq_1:.2f} % of records in classes with l = 1"
    if was is not None:
        note += f" (was min l = {was.min_l}, {was.percent_l_eq_1:.2f} %)"
    return f"{name('min_l')} = {v.min_l}", note
