"""Households in a table of persons (docs/measures.md, "Household risk"): the household id
column, the columns constant within every household (household-level), and whether a column
has a household id's structure (:func:`sdc_core.roles.suggest_household` adds the name).

A column is **household-level** when every household holds a single value of it (a blank a
value of its own), and it takes more than one value over the table: region, household size,
tenure, a household weight. The household id itself is left out. A person id over the waves
of a panel is the same kind of cluster. A column is **nearly constant** when at least
:data:`NEARLY_CONSTANT` of the households of two or more records hold a single value of it, but
not all (docs/measures.md, "Deniability with a household id"): a person's marital status or
education over the waves.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from sdc_core.errors import SdcInputError
from sdc_core.keys import check_columns

#: A suggested household id groups at least this share of the records with others.
SHARED_SHARE = 0.3

#: ... and its households have at most this many members on average.
MAX_MEAN_SIZE = 20.0

#: A column is **nearly constant** within households when at least this share of the
#: households of two or more records hold a single value of it, and not all of them do
#: (docs/measures.md, "Deniability with a household id").
NEARLY_CONSTANT = 0.95


def household_codes(df: pd.DataFrame, household: str, qi: Sequence[str] = (),
                    records: bool = True) -> tuple[np.ndarray, int]:
    """Each row's household as an integer (order of first appearance) and the number of
    households; an :class:`SdcInputError` when the column is absent, is a quasi-identifier or
    has a blank id (missing, or text of spaces only: a record with no household would be a
    household of its own by accident), saying which records have one (the first few by their
    number, the first record 1) when the rows of ``df`` are the table's records in order
    (``records``; an engine's counts are not)."""
    check_columns(df, [household], "household")
    if household in list(qi):
        raise SdcInputError(f"the household column '{household}' is also a quasi-identifier: "
                            "choose a column that only says which records live together")
    s = df[household]
    code, uniq = pd.factorize(s, use_na_sentinel=True)
    blank = code < 0
    if s.dtype == object or isinstance(s.dtype, pd.StringDtype):
        blank |= s.map(lambda v: isinstance(v, str) and not v.strip()).to_numpy(dtype=bool)
    if blank.any():
        where = f", {_records_text(np.flatnonzero(blank))}" if records else ""
        raise SdcInputError(f"household column '{household}' has {int(blank.sum())} blank "
                            f"id(s){where}: every record needs the id of its household")
    return code.astype(np.int64, copy=False), len(uniq)


#: The most records a message lists by number.
RECORDS_LISTED = 5


def _records_text(positions: np.ndarray) -> str:
    """Records by their number as a reader counts them (the first record 1, a file's header
    not counted), the first :data:`RECORDS_LISTED` and how many more.

    Examples
    --------
    >>> _records_text(np.array([3]))
    'in record 4 (counting the first record as 1)'
    >>> _records_text(np.array([3, 16, 29]))
    'in records 4, 17 and 30 (counting the first record as 1)'
    >>> _records_text(np.arange(8))
    'in records 1, 2, 3, 4, 5 and 3 more (counting the first record as 1)'
    """
    numbers = [f"{p + 1:,}" for p in positions[:RECORDS_LISTED]]
    more = len(positions) - len(numbers)
    listed = (f"record {numbers[0]}" if len(numbers) == 1 else
              f"records {', '.join(numbers)} and {more:,} more" if more else
              f"records {', '.join(numbers[:-1])} and {numbers[-1]}")
    return f"in {listed} (counting the first record as 1)"


def household_level_columns(df: pd.DataFrame, household: str) -> list[str]:
    """The columns (other than ``household``) constant within every household and not constant
    over the whole table, in the table's order.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"hid": [1, 1, 2], "region": ["N", "N", "S"], "age": [40, 9, 70],
    ...                    "country": ["X", "X", "X"]})
    >>> household_level_columns(df, "hid")
    ['region']
    """
    codes, _ = household_codes(df, household)
    return [c for c, overall in constant_within(df, household, codes).items() if not overall]


def constant_within(df: pd.DataFrame, household: str, codes: np.ndarray) -> dict[str, bool]:
    """The columns (other than ``household``) constant within every household (a blank a
    value of its own), in the table's order, each with whether it is constant over the whole
    table too; ``codes`` the households of :func:`household_codes`."""
    out: dict[str, bool] = {}
    for c in df.columns:
        if c == household:
            continue
        values, _ = pd.factorize(df[c], use_na_sentinel=False)
        if len(values) == 0:
            continue
        if values.min() == values.max():
            out[c] = True
            continue
        first = np.full(codes.max() + 1, -1, dtype=np.int64)
        first[codes[::-1]] = values[::-1]  # each household's value on its first record
        if (first[codes] == values).all():
            out[c] = False
    return out


def constant_shares(df: pd.DataFrame, household: str,
                    columns: Sequence[str] | None = None) -> dict[str, float]:
    """The share of households constant in each column: among the households of two or more
    records, those in which every record holds the same value (a blank a value of its own).

    share_c = |{h : |h| ≥ 2, |{c_i : i ∈ h}| = 1}| / |{h : |h| ≥ 2}|. A household of one
    record is constant in every column and says nothing of it, so it is left out; with no
    household of two records or more there is no share (an empty dict).

    Parameters
    ----------
    df : pandas.DataFrame
        The table of persons.
    household : str
        The household id column (complete).
    columns : sequence of str, optional
        The columns to measure (default: every column but ``household``).

    Returns
    -------
    dict of str to float
        The share per column, in the order asked (1.0: constant within every household).

    Raises
    ------
    SdcInputError
        When ``household`` is not in the table or has a blank id.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"id": [1, 1, 2, 2, 3], "married": [1, 1, 0, 1, 0],
    ...                    "female": [0, 0, 1, 1, 1]})
    >>> constant_shares(df, "id")
    {'married': 0.5, 'female': 1.0}
    """
    codes, n = household_codes(df, household)
    sizes = np.bincount(codes, minlength=n)
    several = sizes >= 2
    if not several.any():
        return {}
    wanted = [c for c in (df.columns if columns is None else columns) if c != household]
    out: dict[str, float] = {}
    for c in wanted:
        values, uniq = pd.factorize(df[c], use_na_sentinel=False)
        pairs = np.unique(codes * max(len(uniq), 1) + values)  # each (household, value) once
        distinct = np.bincount(pairs // max(len(uniq), 1), minlength=n)
        out[str(c)] = float((distinct[several] == 1).mean())
    return out


def nearly_constant(df: pd.DataFrame, household: str, columns: Sequence[str] | None = None,
                    threshold: float = NEARLY_CONSTANT) -> dict[str, float]:
    """The columns constant within at least ``threshold`` of the households of two or more
    records but not within all of them (:func:`constant_shares`), with their share: a
    person's attribute that changes for a few persons (marital status over a panel's waves).

    Parameters
    ----------
    df : pandas.DataFrame
        The table of persons.
    household : str
        The household id column (complete).
    columns : sequence of str, optional
        The columns to look at (default: every column but ``household``).
    threshold : float, default :data:`NEARLY_CONSTANT`
        The least share of households constant.

    Returns
    -------
    dict of str to float
        The nearly constant columns and their shares, in the order asked.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"id": [1, 1, 2, 2, 3, 3], "married": [1, 1, 0, 1, 0, 0],
    ...                    "female": [0, 0, 1, 1, 1, 1]})
    >>> nearly_constant(df, "id", threshold=0.6)
    {'married': 0.6666666666666666}
    """
    return {c: v for c, v in constant_shares(df, household, columns).items()
            if threshold <= v < 1.0}


def looks_like_household(df: pd.DataFrame, column: str) -> bool:
    """Whether ``column`` has a household id's structure: no blanks, at least
    :data:`SHARED_SHARE` of the records share their value with another record, at most
    :data:`MAX_MEAN_SIZE` records a value on average, and some other column is constant within
    every value (:func:`household_level_columns`)."""
    s = df[column]
    if len(s) < 2 or s.isna().any():
        return False
    sizes = s.value_counts(sort=False).to_numpy()
    if len(sizes) == len(s) or len(s) / len(sizes) > MAX_MEAN_SIZE:
        return False
    if sizes[sizes > 1].sum() < SHARED_SHARE * len(s):
        return False
    return bool(household_level_columns(df, column))
