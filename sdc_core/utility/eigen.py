"""Eigenvalue similarity of the correlation structure.

R and R′ are the Pearson correlation matrices of the numeric columns of the original and the
protected table, each entry over the rows where both columns are present (pairwise complete);
λ and λ′ their eigenvalues sorted in descending order; p the number of columns:

    similarity = 100 · (1 − Σ|λ′ − λ| / p)      (Σλ = p for a correlation matrix)

A constant column has no correlation: its entries are taken as 0 (1 on the diagonal).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from sdc_core.data.columns import is_number
from sdc_core.errors import SdcInputError
from sdc_core.methods.banding import measured


def correlation_matrix(df: pd.DataFrame, columns: Sequence[str]) -> np.ndarray:
    """Pairwise-complete Pearson correlations, NaN (constant column) → 0, diagonal 1."""
    cols = list(columns)
    bad = [c for c in cols if not is_number(df[c])]
    if bad:
        raise SdcInputError(f"not numeric: {', '.join(map(str, bad))}")
    r = df[cols].astype(np.float64).corr(method="pearson").to_numpy(copy=True)
    return tidy(r)


def tidy(r: np.ndarray) -> np.ndarray:
    r = np.where(np.isnan(r), 0.0, r)
    np.fill_diagonal(r, 1.0)
    return r


def column_correlations(df: pd.DataFrame, column: str, columns: Sequence[str]) -> np.ndarray:
    """Row of the pairwise-complete correlation matrix for one column (others unchanged)."""
    x = df[column].to_numpy(dtype=np.float64, na_value=np.nan)
    out = np.empty(len(columns))
    for j, c in enumerate(columns):  # one pass per column, not per record
        y = df[c].to_numpy(dtype=np.float64, na_value=np.nan)
        both = ~np.isnan(x) & ~np.isnan(y)
        a, b = x[both], y[both]
        if len(a) < 2:
            out[j] = np.nan
            continue
        da, db = a - a.mean(), b - b.mean()
        denom = np.sqrt((da * da).sum() * (db * db).sum())
        out[j] = (da * db).sum() / denom if denom > 0 else np.nan
    return out


def eigen_similarity(r_original: np.ndarray, r_protected: np.ndarray) -> float:
    """100 · (1 − Σ|λ′ − λ| / p) from two correlation matrices."""
    p = r_original.shape[0]
    if p == 0:
        return 100.0
    lam = np.sort(np.linalg.eigvalsh(r_original))[::-1]
    lam_p = np.sort(np.linalg.eigvalsh(r_protected))[::-1]
    return float(100.0 * (1.0 - np.abs(lam_p - lam).sum() / p))


def eigenvalue_similarity(original: pd.DataFrame, protected: pd.DataFrame,
                          numeric: Sequence[str]) -> float:
    """Eigenvalue similarity (percent) of two tables on the ``numeric`` columns.

    With λ and λ′ the eigenvalues of the correlation matrices of the original and the release
    over p columns: 100 · (1 − Σ|λ′ − λ| / p); 100 when the correlation structure is kept.

    Only the ``numeric`` columns that hold numbers in the original count. A column whose release
    is no longer numbers (codes recoded to "other") keeps its original values here: it leaves the
    correlation structure as it was, and p stays the same whatever the protection (as in a
    sweep). Band labels count as their midpoints (:func:`sdc_core.methods.banding.measured`).

    Parameters
    ----------
    original : pandas.DataFrame
        The original table.
    protected : pandas.DataFrame
        The release, rows aligned with ``original``.
    numeric : sequence of str
        The numeric columns.

    Returns
    -------
    float
        The similarity, in percent.

    Raises
    ------
    KeyError
        When a ``numeric`` column is missing from either table.

    Examples
    --------
    >>> import pandas as pd
    >>> from sdc_core import eigenvalue_similarity
    >>> x = pd.DataFrame({"a": [1.0, 2, 3, 4], "b": [2.0, 1, 4, 3]})
    >>> eigenvalue_similarity(x, x, ["a", "b"])
    100.0
    >>> round(eigenvalue_similarity(x, x.assign(b=[1.0, 2, 3, 4]), ["a", "b"]), 4)
    60.0
    """
    cols = [c for c in numeric if is_number(original[c])]
    protected = measured(original, protected[cols])
    kept = protected[cols].assign(**{c: original[c] for c in cols if not is_number(protected[c])})
    return eigen_similarity(correlation_matrix(original, cols), correlation_matrix(kept, cols))
