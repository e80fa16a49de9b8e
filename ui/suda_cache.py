"""Cached SUDA2 for the Risk page, keyed by the data set id (a content hash), the keys and the
DIS sampling fraction — never by hashing the DataFrame (passed as ``_df``)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from sdc_core.risk.suda2 import MIN_SUDA2_VARIABLES, Suda2Result, suda2
from ui.infra import workers

#: Computed when the Risk page opens if expected to take at most this long; else on demand.
AUTO_SECONDS = 1.0


@st.cache_resource(max_entries=8, show_spinner=False)
def suda2_result(dataset_id: str, qi: tuple[str, ...], dis_fraction: float,
                 _df: pd.DataFrame) -> Suda2Result:
    """SUDA2 of the data set as loaded (shared, never mutated: it holds per-record arrays),
    computed in a worker process (:mod:`ui.infra.workers`)."""
    return workers.run(suda2, _df, list(qi), dis_fraction)


@st.cache_data(max_entries=8, show_spinner=False)
def top_records(dataset_id: str, qi: tuple[str, ...], dis_fraction: float, top: int,
                _df: pd.DataFrame) -> pd.DataFrame:
    """The ``top`` records by SUDA score with their key values and MSUs."""
    return suda2_result(dataset_id, qi, dis_fraction, _df).top_records(_df, top)


def expected_seconds(n_patterns: int, n_keys: int) -> float:
    """A rough upper bound on the run time: up to 2^M − 1 key subsets, each ≈ 90 µs plus
    ≈ 30 ns per distinct key pattern (measured on the 2-core reference machine)."""
    subsets = 2 ** max(n_keys, MIN_SUDA2_VARIABLES) - 1
    return subsets * (90e-6 + 30e-9 * n_patterns)
