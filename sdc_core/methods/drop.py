"""Dropping columns from the release."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from sdc_core.methods.common import TableResult
from sdc_core.methods.spec import EngineRun, Method, Release


def drop(df: pd.DataFrame, columns: Sequence[str]) -> TableResult:
    """No values: the columns leave the release (the recipe runner removes them)."""
    return TableResult(df[[]], {"dropped": list(columns)})


DROP = Method(name="drop", label="Drop columns", order=90, run=drop, release=Release.DROP,
              target="columns", columns="numeric", summary="leave columns out", params=(),
              engine=EngineRun.WHOLE_TABLE, ui=False)
