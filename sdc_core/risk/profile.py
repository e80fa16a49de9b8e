"""The disclosure-risk profile of a table on its quasi-identifiers X (docs/measures.md).

With f_k(i) the size of record i's equivalence class, r_i its individual risk (see
:mod:`sdc_core.risk.individual`), n records and threshold T:

- ``percent_unique`` = 100 · mean(f_k = 1)
- ``percent_k_le_threshold`` = 100 · mean(f_k ≤ T) (seed 003's figure: a class of exactly T
  counts)
- ``percent_below_k`` = 100 · mean(f_k < T): the records in classes smaller than k, what
  k-anonymity (and local suppression) brings to 0
- ``expected_reidentifications`` = Σ 1/f_k;  ``avg_linkage_risk_percent`` = 100 · mean(1/f_k)
- ``global_risk_percent`` = 100 · mean(r);  ``global_expected_reidentifications`` = Σ r
- ``min_k`` = min f_k;  ``median_k`` = median of f_k over records
- ``min_k_wildcard``, ``min_k_category``: the smallest class when a missing key matches any value
  and when it is a value of its own (one of them is ``min_k``; equal without missing keys)
- ``n_records_with_missing_keys`` = number of records with a missing value on some
  quasi-identifier, whether ``na`` reads it as a wildcard or as a category
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd

from sdc_core.checks import check_k
from sdc_core.classes import ClassSizes, class_sizes
from sdc_core.errors import SdcInputError
from sdc_core.keys import check_columns
from sdc_core.risk.attribute import AttributeScan, attribute_disclosure_scan
from sdc_core.risk.individual import individual_risk
from sdc_core.risk.ldiversity import LDiversity, l_diversity

#: The other reading of a missing key.
OTHER_READING = {"wildcard": "category", "category": "wildcard"}
#: Key-subset snapshots enumerate all 2^m − 1 subsets up to this many quasi-identifiers.
MAX_SNAPSHOT_KEYS = 10


@dataclass(frozen=True)
class RiskProfile:
    """Summary measures plus the per-record arrays ``fk``, ``Fk`` and ``risk``.

    Made by :func:`risk_profile`; the formulas of the measures are in the module docstring
    (:mod:`sdc_core.risk.profile`). :meth:`summary` gives the measures as plain Python values,
    :meth:`records` the per-record arrays as a DataFrame.

    Parameters
    ----------
    qi : tuple of str
        The quasi-identifiers.
    weight : str or None
        The sampling-weight column, if any.
    na : str
        The reading of a missing key, ``"wildcard"`` or ``"category"``.
    alpha : float
        The weight of a wildcard match.
    n_records, n_classes : int
        Records and equivalence classes.
    k_threshold : int
        The threshold T.
    percent_unique, percent_k_le_threshold, percent_below_k : float
        100 · mean(f_k = 1), 100 · mean(f_k ≤ T), 100 · mean(f_k < T).
    expected_reidentifications, avg_linkage_risk_percent : float
        Σ 1/f_k and 100 · mean(1/f_k).
    global_risk_percent, global_expected_reidentifications : float
        100 · mean(r) and Σ r, r the individual risk.
    min_k, median_k : float
        The smallest f_k and the median of f_k over records.
    min_k_wildcard, min_k_category : float
        The smallest class when a missing key matches any value and when it is a value of its own.
    n_records_with_missing_keys : int
        Records with a missing value on some quasi-identifier.
    fk, Fk, risk : numpy.ndarray
        The f_k, F_k and individual risk r of each input row.
    classes : ClassSizes
        The equivalence classes (class of each record, sizes).

    Examples
    --------
    >>> from sdc_core import example, load_example, risk_profile
    >>> df, qi = load_example(), example("actg175").roles.qi
    >>> profile = risk_profile(df, qi)
    >>> profile.n_classes, profile.min_k, profile.summary()["expected_reidentifications"]
    (182, 1.0, 182)
    >>> profile.records().head(2)
        fk   Fk  risk
    0  4.0  4.0  0.25
    1  1.0  1.0  1.00
    """

    qi: tuple[str, ...]
    weight: str | None
    na: str
    alpha: float
    n_records: int
    n_classes: int
    k_threshold: int
    percent_unique: float
    percent_k_le_threshold: float
    percent_below_k: float
    expected_reidentifications: float
    avg_linkage_risk_percent: float
    global_risk_percent: float
    global_expected_reidentifications: float
    min_k: float
    median_k: float
    min_k_wildcard: float
    min_k_category: float
    n_records_with_missing_keys: int
    fk: np.ndarray = field(repr=False)
    Fk: np.ndarray = field(repr=False)
    risk: np.ndarray = field(repr=False)
    classes: ClassSizes = field(repr=False)

    def summary(self) -> dict[str, object]:
        """The summary measures as plain Python values (JSON-ready)."""
        keys = ("n_records", "n_classes", "k_threshold", "percent_unique",
                "percent_k_le_threshold", "percent_below_k", "expected_reidentifications",
                "avg_linkage_risk_percent", "global_risk_percent",
                "global_expected_reidentifications", "min_k", "median_k", "min_k_wildcard",
                "min_k_category", "n_records_with_missing_keys")
        out: dict[str, object] = {"qi": list(self.qi), "weight": self.weight, "na": self.na,
                                  "alpha": self.alpha}
        for key in keys:
            value = getattr(self, key)
            out[key] = int(value) if float(value).is_integer() else float(value)
        return out

    def records(self) -> pd.DataFrame:
        """``fk``, ``Fk``, ``risk`` per input row, in input order."""
        return pd.DataFrame({"fk": self.fk, "Fk": self.Fk, "risk": self.risk})


def profile_from_sizes(fk: np.ndarray, Fk: np.ndarray, n_classes: int, k: int = 5,
                       counts: np.ndarray | None = None) -> dict[str, Any]:
    """The summary measures of the module docstring from per-record f_k and F_k, or, with
    ``counts``, from per-class f_k and F_k and the number of records in each class (an
    engine's class table: the means and sums then weigh every class by its records)."""
    risk = individual_risk(fk, Fk)
    inv = 1.0 / fk
    if counts is None:
        n = len(fk)
        unique, low = float(np.mean(fk == 1)), float(np.mean(fk <= k))
        below = float(np.mean(fk < k))
        inv_sum, risk_sum = float(inv.sum()), float(risk.sum())
        median = median_of_sizes(fk)
    else:
        c = np.asarray(counts, dtype=np.float64)
        n = int(c.sum())
        unique, low = float(c[fk == 1].sum() / n), float(c[fk <= k].sum() / n)
        below = float(c[fk < k].sum() / n)
        inv_sum, risk_sum = float(inv @ c), float(risk @ c)
        median = weighted_median(fk, c)
    return {
        "n_records": n,
        "n_classes": n_classes,
        "k_threshold": k,
        "percent_unique": 100.0 * unique,
        "percent_k_le_threshold": 100.0 * low,
        "percent_below_k": 100.0 * below,
        "expected_reidentifications": inv_sum,
        "avg_linkage_risk_percent": 100.0 * inv_sum / n,
        "global_risk_percent": 100.0 * risk_sum / n,
        "global_expected_reidentifications": risk_sum,
        "min_k": float(fk.min()),
        "median_k": median,
        "risk": risk,
    }


def median_of_sizes(fk: np.ndarray) -> float:
    """``np.median(fk)``; for whole-number sizes from a histogram of the sizes (O(n), no sort)."""
    whole = fk.astype(np.int64)
    if len(fk) == 0 or not np.array_equal(whole, fk):
        return float(np.median(fk))
    cum = np.cumsum(np.bincount(whole))
    n = len(fk)
    lower = np.searchsorted(cum, (n - 1) // 2, side="right")
    upper = np.searchsorted(cum, n // 2, side="right")
    return (float(lower) + float(upper)) / 2.0


def weighted_median(values: np.ndarray, counts: np.ndarray) -> float:
    """The median of ``values`` each repeated ``counts`` times: the mean of the sorted
    repetition's elements ⌊(n−1)/2⌋ and ⌊n/2⌋ (``np.median`` of the repeated values)."""
    order = np.argsort(values, kind="stable")
    cum = np.cumsum(np.asarray(counts, dtype=np.int64)[order])
    n = int(cum[-1])
    lower = values[order][np.searchsorted(cum, (n - 1) // 2, side="right")]
    upper = values[order][np.searchsorted(cum, n // 2, side="right")]
    return (float(lower) + float(upper)) / 2.0


def risk_profile(df: pd.DataFrame, qi: Sequence[str], weight: str | None = None, k: int = 5,
                 na: str = "wildcard", alpha: float = 1.0) -> RiskProfile:
    """The risk profile of ``df`` on the quasi-identifiers ``qi`` (module docstring).

    Records are grouped into equivalence classes on ``qi``: f_k(i) is the size of record i's
    class and, with n records and threshold T = ``k``, ``percent_unique`` = 100 · mean(f_k = 1),
    ``percent_k_le_threshold`` = 100 · mean(f_k ≤ T), ``percent_below_k`` = 100 · mean(f_k < T),
    ``expected_reidentifications`` = Σ 1/f_k and ``global_risk_percent`` = 100 · mean(r), r the
    individual risk (1/f_k without a weight).

    ``weight`` names a sampling-weight column (F_k = Σ weights over the class); ``na`` is
    ``"wildcard"`` (a missing key matches any value, sdcMicro's semantics, weighted by ``alpha``)
    or ``"category"`` (missing is a value of its own).

    Parameters
    ----------
    df : pandas.DataFrame
        The table.
    qi : sequence of str
        The quasi-identifier columns.
    weight : str, optional
        A sampling-weight column.
    k : int, default 5
        The threshold T of ``percent_k_le_threshold`` and ``percent_below_k``.
    na : {"wildcard", "category"}, default "wildcard"
        The reading of a missing key.
    alpha : float, default 1.0
        The weight of a wildcard match (``na="wildcard"``).

    Returns
    -------
    RiskProfile
        The summary measures and the per-record f_k, F_k and risk.

    Raises
    ------
    SdcInputError
        When a column is unknown, ``k`` is not a whole number of at least 1, ``na`` or ``alpha``
        is out of range, the weights are not positive numbers, or the table has no records.

    Examples
    --------
    >>> from sdc_core import example, load_example, risk_profile
    >>> df, qi = load_example(), example("actg175").roles.qi
    >>> profile = risk_profile(df, qi)
    >>> profile.n_classes, profile.min_k, profile.median_k
    (182, 1.0, 33.0)
    >>> round(profile.percent_unique, 4), round(profile.percent_k_le_threshold, 4)
    (1.3558, 10.5189)
    >>> profile.expected_reidentifications
    182.0
    """
    k = check_k(k)
    if len(df) == 0:
        raise SdcInputError("the table has no records")
    cs = class_sizes(df, qi, weight, na, alpha)
    measures = profile_from_sizes(cs.fk, cs.Fk, cs.n_classes, k)
    missing = int(df[list(cs.keys.names)].isna().to_numpy().any(axis=1).sum())  # whatever `na`
    other = cs.fk.min() if not missing else class_sizes(
        df, qi, weight, OTHER_READING[na], alpha).fk.min()
    smallest = {na: float(cs.fk.min()), OTHER_READING[na]: float(other)}
    return RiskProfile(qi=tuple(cs.keys.names), weight=weight, na=na, alpha=cs.alpha,
                       n_records_with_missing_keys=missing, fk=cs.fk, Fk=cs.Fk,
                       classes=cs, min_k_wildcard=smallest["wildcard"],
                       min_k_category=smallest["category"], **measures)


def sensitive_report(df: pd.DataFrame, profile: RiskProfile, sensitive: Sequence[str],
                     released: Sequence[str] | None = None
                     ) -> tuple[dict[str, LDiversity], AttributeScan]:
    """The l-diversity of the sensitive columns and the attribute-disclosure scan.

    l(i) is the number of distinct sensitive values in record i's class of ``profile``; the scan
    finds the released columns (default: all) that determine or nearly determine a sensitive one
    (share Σ_z max_s n(z, s) / Σ_z n(z) = 1, or ≥ 0.95).

    Parameters
    ----------
    df : pandas.DataFrame
        The table the profile was made on.
    profile : RiskProfile
        Its risk profile (the classes).
    sensitive : sequence of str
        The sensitive columns.
    released : sequence of str, optional
        The released columns the scan reads (default: all columns).

    Returns
    -------
    ldiversity : dict of str to LDiversity
        The l-diversity of each sensitive column.
    scan : AttributeScan
        The attribute-disclosure findings and the columns left out as direct identifiers.

    Raises
    ------
    SdcInputError
        When a sensitive or released column is unknown.

    Examples
    --------
    >>> from sdc_core import example, load_example, risk_profile
    >>> df, qi = load_example(), example("actg175").roles.qi
    >>> from sdc_core import sensitive_report
    >>> ldiv, scan = sensitive_report(df, risk_profile(df, qi), ["treat"])
    >>> ldiv["treat"].min_l, round(ldiv["treat"].percent_l_eq_1, 4)
    (1, 6.3114)
    >>> [(f.column, f.level, f.sensitive) for f in scan.findings], scan.direct_identifiers
    ([('arms', 'determines', 'treat')], ['pidnum'])
    """
    sens = check_columns(df, sensitive, "sensitive")
    ldiv = {s: l_diversity(df, profile.classes, s) for s in sens}
    return ldiv, attribute_disclosure_scan(df, sens, released)


def key_subset_snapshots(df: pd.DataFrame, qi: Sequence[str], weight: str | None = None,
                         k: int = 5, na: str = "wildcard", alpha: float = 1.0) -> pd.DataFrame:
    """The profile for every non-empty subset of the quasi-identifiers.

    Which variable drives the risk (seed 003, Table S3-D): one row per subset, smallest subsets
    first, with the figures of :func:`risk_profile` on that subset.

    Parameters
    ----------
    df : pandas.DataFrame
        The table.
    qi : sequence of str
        The quasi-identifiers (at most ``MAX_SNAPSHOT_KEYS``, 10).
    weight : str, optional
        A sampling-weight column, as in :func:`risk_profile`.
    k : int, default 5
        The threshold T, as in :func:`risk_profile`.
    na : {"wildcard", "category"}, default "wildcard"
        The reading of a missing key, as in :func:`risk_profile`.
    alpha : float, default 1.0
        The weight of a wildcard match, as in :func:`risk_profile`.

    Returns
    -------
    pandas.DataFrame
        One row per subset: ``keys`` (the subset joined by ``+``), ``n_keys``,
        ``percent_unique``, ``median_k``, ``percent_k_le_threshold``,
        ``expected_reidentifications`` and ``global_risk_percent``.

    Raises
    ------
    SdcInputError
        When a column is unknown, there are more than 10 quasi-identifiers, or a parameter is out
        of range (as in :func:`risk_profile`).

    Examples
    --------
    >>> from sdc_core import example, load_example, risk_profile
    >>> df, qi = load_example(), example("actg175").roles.qi
    >>> from sdc_core import key_subset_snapshots
    >>> snapshots = key_subset_snapshots(df, qi)
    >>> snapshots[["keys", "percent_unique"]].round(2).tail(2)
                  keys  percent_unique
    5      gender+race            0.00
    6  age+gender+race            1.36
    """
    cols = check_columns(df, qi, "quasi-identifier")
    if len(cols) > MAX_SNAPSHOT_KEYS:
        raise SdcInputError(f"key-subset snapshots take at most {MAX_SNAPSHOT_KEYS} "
                            f"quasi-identifiers, not {len(cols)}")
    rows = []
    for size in range(1, len(cols) + 1):
        for subset in combinations(cols, size):
            p = risk_profile(df, subset, weight, k, na, alpha)
            rows.append({"keys": "+".join(subset), "n_keys": size,
                         "percent_unique": p.percent_unique, "median_k": p.median_k,
                         "percent_k_le_threshold": p.percent_k_le_threshold,
                         "expected_reidentifications": p.expected_reidentifications,
                         "global_risk_percent": p.global_risk_percent})
    return pd.DataFrame(rows)


def riskiest_classes(df: pd.DataFrame, profile: RiskProfile, top: int = 10) -> pd.DataFrame:
    """The ``top`` equivalence classes by individual risk.

    Ties: smaller f_k first, then by key values. Each row holds the class's key values, f_k
    (``k``), F_k, the individual risk and the number of records.

    Parameters
    ----------
    df : pandas.DataFrame
        The table the profile was made on.
    profile : RiskProfile
        Its risk profile (:func:`risk_profile`).
    top : int, default 10
        How many classes.

    Returns
    -------
    pandas.DataFrame
        Columns: the quasi-identifiers, ``k``, ``Fk``, ``individual_risk``, ``records``; riskiest
        first.

    Examples
    --------
    >>> from sdc_core import example, load_example, risk_profile
    >>> df, qi = load_example(), example("actg175").roles.qi
    >>> from sdc_core import riskiest_classes
    >>> riskiest_classes(df, risk_profile(df, qi), top=2)
       age  gender  race    k   Fk  individual_risk  records
    0   12       1     1  1.0  1.0              1.0        1
    1   17       0     1  1.0  1.0              1.0        1
    """
    cs = profile.classes
    first = pd.Series(np.arange(len(df))).groupby(cs.class_id).first().to_numpy()
    size = np.bincount(cs.class_id, minlength=cs.n_labels)
    table = df.iloc[first][list(profile.qi)].reset_index(drop=True)
    table["k"] = profile.fk[first]
    table["Fk"] = profile.Fk[first]
    table["individual_risk"] = profile.risk[first]
    table["records"] = size[cs.class_id[first]]
    order = [c for c in ("individual_risk", "k") if c in table] + list(profile.qi)
    ascending = [False, True] + [True] * len(profile.qi)
    table = table.sort_values(order, ascending=ascending, kind="stable", na_position="last")
    return table.head(top).reset_index(drop=True)


def small_count_levels(df: pd.DataFrame, qi: Sequence[str], threshold: int = 5) -> pd.DataFrame:
    """Values of each quasi-identifier held by at most ``threshold`` records.

    Seed 003, Table S3-C: the rare levels that make a record stand out on one key alone.

    Parameters
    ----------
    df : pandas.DataFrame
        The table.
    qi : sequence of str
        The quasi-identifiers.
    threshold : int, default 5
        The largest count listed.

    Returns
    -------
    pandas.DataFrame
        Columns ``variable``, ``level``, ``count``, rarest first.

    Raises
    ------
    SdcInputError
        When a column is unknown or ``threshold`` is not a whole number of at least 1.

    Examples
    --------
    >>> from sdc_core import example, load_example, risk_profile
    >>> df, qi = load_example(), example("actg175").roles.qi
    >>> from sdc_core import small_count_levels
    >>> small_count_levels(df, qi, threshold=1)
      variable level  count
    0      age    66      1
    1      age    69      1
    """
    cols = check_columns(df, qi, "quasi-identifier")
    threshold = check_k(threshold)
    parts = []
    for c in cols:
        counts = df[c].value_counts(dropna=True)
        rare = counts[counts <= threshold]
        parts.append(pd.DataFrame({"variable": c, "level": rare.index.astype(object),
                                   "count": rare.to_numpy()})
                     .sort_values(["count", "level"], kind="stable"))
    out = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(
        columns=["variable", "level", "count"])
    return out.reset_index(drop=True)
