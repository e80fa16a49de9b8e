"""Per-column distribution measures between an original and a protected column.

- categorical: total variation distance of the marginals, TVD = ½ Σ_v |p(v) − p′(v)|
  (shares among non-missing values);
- numeric: the two-sample Kolmogorov–Smirnov statistic sup_x |F(x) − F′(x)|, and the shifts of
  the mean and of the standard deviation (protected minus original, non-missing values);
- the correlation-matrix difference R′ − R of the numeric columns;
- randomized response: the estimator's error π̂ − π against the true shares of the original.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy.stats import ks_2samp

from sdc_core.data.columns import canonical_values
from sdc_core.methods.banding import measured
from sdc_core.methods.randomized_response import estimate_shares
from sdc_core.utility.eigen import correlation_matrix
from sdc_core.utility.il1 import check_aligned, numbers_in_both


def tvd(x: pd.Series, y: pd.Series) -> float:
    """½ Σ |p − p′| over the union of the categories, values compared by what they are
    (:func:`sdc_core.data.columns.canonical`)."""
    p = pd.Series(canonical_values(x)).dropna().value_counts(normalize=True)
    q = pd.Series(canonical_values(y)).dropna().value_counts(normalize=True)
    both = p.index.union(q.index)
    return float(0.5 * np.abs(p.reindex(both, fill_value=0) - q.reindex(both, fill_value=0)).sum())


def numeric_shift(x: pd.Series, y: pd.Series) -> dict[str, float]:
    a = x.to_numpy(dtype=np.float64, na_value=np.nan)
    b = y.to_numpy(dtype=np.float64, na_value=np.nan)
    a, b = a[~np.isnan(a)], b[~np.isnan(b)]
    if len(a) == 0 or len(b) == 0:
        return {"ks": float("nan"), "mean_shift": float("nan"), "sd_shift": float("nan")}
    return {"ks": float(ks_2samp(a, b).statistic), "mean_shift": float(b.mean() - a.mean()),
            "sd_shift": float(b.std(ddof=1) - a.std(ddof=1)) if min(len(a), len(b)) > 1
            else 0.0}


def distribution_report(original: pd.DataFrame, protected: pd.DataFrame,
                        numeric: Sequence[str] = ()) -> pd.DataFrame:
    """How far each column's distribution moved between the original and the release.

    One row per column of both tables (not one dropped from the release): kind, TVD
    (categorical: ½ Σ_v |p′_v − p_v|) or KS (numeric: max |F′ − F| of the empirical CDFs), mean
    and sd shift (numeric); band labels count as their midpoints
    (:func:`sdc_core.methods.banding.measured`).

    Parameters
    ----------
    original : pandas.DataFrame
        The original table.
    protected : pandas.DataFrame
        The release: its columns the original's (some may be dropped), any number of records
        (a distribution is compared, not a record: a synthetic file has its own records).
    numeric : sequence of str, optional
        The columns read as numbers (when numbers in both tables).

    Returns
    -------
    pandas.DataFrame
        Columns ``column``, ``kind``, ``tvd``, ``ks``, ``mean_shift``, ``sd_shift`` (NaN where a
        figure does not apply).

    Raises
    ------
    SdcInputError
        When the release has a column the original has not, or its columns in another order.

    Examples
    --------
    >>> from sdc_core import apply_recipe, example, load_example, parse_recipe
    >>> df, roles = load_example(), example("actg175").roles
    >>> recipe = parse_recipe({"seed": 42, "steps": [
    ...     {"method": "band", "column": "age", "width": 10},
    ...     {"method": "pram", "column": "race", "p": 0.05}]})
    >>> protected = apply_recipe(recipe, df).data
    >>> from sdc_core import distribution_report
    >>> dist = distribution_report(df, protected, roles.numeric)
    >>> dist.loc[dist["column"].isin(["age", "race"]), ["column", "kind", "tvd", "ks"]].round(4)
       column         kind     tvd     ks
    1     age      numeric     NaN  0.245
    11   race  categorical  0.0276    NaN
    """
    check_aligned(original, protected, dropped=True, rows=False)
    protected = measured(original, protected)
    rows = []
    num = set(numbers_in_both(original, protected, numeric))
    for c in protected.columns:
        if c in num:
            rows.append({"column": c, "kind": "numeric", "tvd": np.nan,
                         **numeric_shift(original[c], protected[c])})
        else:
            rows.append({"column": c, "kind": "categorical", "tvd": tvd(original[c],
                                                                        protected[c]),
                         "ks": np.nan, "mean_shift": np.nan, "sd_shift": np.nan})
    return pd.DataFrame(rows)


def correlation_difference(original: pd.DataFrame, protected: pd.DataFrame,
                           numeric: Sequence[str]) -> pd.DataFrame:
    """R′ − R, labelled by column."""
    cols = list(numeric)
    diff = correlation_matrix(protected, cols) - correlation_matrix(original, cols)
    return pd.DataFrame(diff, index=cols, columns=cols)


def randomized_response_error(original: pd.Series, reports: pd.Series,
                              keep_probability: float) -> pd.DataFrame:
    """The estimate per category next to the true share of the original answers."""
    est = estimate_shares(reports, keep_probability)
    truth = original.dropna().astype(str).value_counts(normalize=True)
    est["true_share"] = truth.reindex(est["category"], fill_value=0.0).to_numpy()
    est["error"] = est["estimate"] - est["true_share"]
    return est
