"""Distinct l-diversity of a sensitive column S over the equivalence classes.

l(i) = number of distinct non-missing S values among the records of record i's class; a class
with l = 1 is homogeneous: anyone who places a person in it learns S. With missing key values
(wildcard semantics) the class of i holds every record that counts towards f_k(i) with a weight
above zero, so l(i) counts the S values of all records compatible with i.

A class whose S values are all missing has l = 0: it releases no sensitive value, so it discloses
nothing and is no weakness. Such records are reported apart, as ``percent_no_sensitive_value`` =
100 · mean(l = 0), and left out of the other figures: ``min_l`` = min l over the records with
l ≥ 1 (0 only when no class releases a value) and ``percent_l_eq_1`` = 100 · mean(l = 1).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from sdc_core.classes import (
    ClassSizes,
    PatternPair,
    class_table,
    pattern_pairs,
    shared_keys,
)
from sdc_core.keys import check_columns


@dataclass(frozen=True)
class LDiversity:
    """The l-diversity of one sensitive column: l per record and its summary.

    Made by :func:`sensitive_report`. l(i) is the number of distinct sensitive values in record
    i's equivalence class (0 when the class releases none).

    Parameters
    ----------
    sensitive : str
        The sensitive column.
    per_record : numpy.ndarray
        The l of each input row.
    min_l : int
        The smallest l over the records whose class releases a sensitive value.
    percent_l_eq_1 : float
        Records in homogeneous classes (l = 1), in percent.
    percent_no_sensitive_value : float
        Records whose class releases none (l = 0), in percent.

    Examples
    --------
    >>> from sdc_core import example, load_example, risk_profile
    >>> df, qi = load_example(), example("actg175").roles.qi
    >>> from sdc_core import sensitive_report
    >>> ldiv, _ = sensitive_report(df, risk_profile(df, qi), ["treat"])
    >>> ldiv["treat"].per_record[:5].tolist(), ldiv["treat"].min_l
    ([2, 1, 2, 2, 2], 1)
    """

    sensitive: str
    per_record: np.ndarray
    min_l: int
    percent_l_eq_1: float
    percent_no_sensitive_value: float

    def to_dict(self) -> dict[str, float | int]:
        """The summary figures (not ``per_record``), JSON-ready."""
        return {"min_l": self.min_l, "percent_l_eq_1": self.percent_l_eq_1,
                "percent_no_sensitive_value": self.percent_no_sensitive_value}


def l_diversity(df: pd.DataFrame, classes: ClassSizes, sensitive: str) -> LDiversity:
    """l(i) for every record, for the classes computed by :func:`class_sizes` on ``df``."""
    check_columns(df, [sensitive], "sensitive")
    s_code, s_levels = pd.factorize(df[sensitive])
    card = max(len(s_levels), 1)
    valid = s_code >= 0
    pairs = np.unique(classes.class_id[valid] * card + s_code[valid])
    pair_class, pair_s = pairs // card, pairs % card
    if classes.has_missing:
        distinct = _wildcard_distinct(classes, pair_class, pair_s)
    else:
        distinct = np.bincount(pair_class, minlength=classes.n_labels)
    return summarize(sensitive, distinct[classes.class_id].astype(np.int64))


def summarize(sensitive: str, l_rec: np.ndarray, counts: np.ndarray | None = None) -> LDiversity:
    """The summary of per-record l, or, with ``counts``, of l per row of a table of distinct
    (keys, sensitive value) rows holding ``counts`` records each (an engine's aggregate)."""
    c = np.ones(len(l_rec)) if counts is None else np.asarray(counts, dtype=np.float64)
    n = c.sum()
    released = l_rec[(l_rec > 0) & (c > 0)]
    return LDiversity(sensitive, l_rec, int(released.min()) if len(released) else 0,
                      float(100.0 * c[l_rec == 1].sum() / n) if n else 0.0,
                      float(100.0 * c[l_rec == 0].sum() / n) if n else 0.0)


def _wildcard_distinct(classes: ClassSizes, pair_class: np.ndarray,
                       pair_s: np.ndarray) -> np.ndarray:
    codes = class_table(classes.class_id, classes.n_classes, classes.keys)
    found = []
    for pair in pattern_pairs(codes, classes.alpha):
        in_q = np.zeros(classes.n_classes, dtype=bool)
        in_q[pair.q_idx] = True
        rows = in_q[pair_class]
        joined = PatternPair(pair.p_idx, pair_class[rows], pair.shared, pair.weight)
        key_p, key_q, _ = shared_keys(codes, joined)
        left = pd.DataFrame({"key": key_p, "c": pair.p_idx})
        right = pd.DataFrame({"key": key_q, "s": pair_s[rows]})
        found.append(left.merge(right, on="key")[["c", "s"]])
    all_missing = np.flatnonzero(~(codes >= 0).any(axis=1))
    if len(all_missing):
        every_s = np.unique(pair_s)
        found.append(pd.DataFrame({"c": np.repeat(all_missing, len(every_s)),
                                   "s": np.tile(every_s, len(all_missing))}))
    if not found:
        return np.zeros(classes.n_classes, dtype=np.int64)
    distinct_pairs = pd.concat(found, ignore_index=True).drop_duplicates()
    return np.bincount(distinct_pairs["c"].to_numpy(), minlength=classes.n_classes)
