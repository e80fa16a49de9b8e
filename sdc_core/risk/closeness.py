"""t-closeness, β-likeness and δ-disclosure of a sensitive column S over the equivalence classes.

Each measure compares the distribution q of S within an equivalence class of the
quasi-identifiers X with the distribution p of S over the whole table, and reports the worst
class (docs/measures.md, "t-closeness, β-likeness and δ-disclosure"). Over the m distinct
values s_1 < … < s_m of S in the table:

- **t-closeness** (Li, Li & Venkatasubramanian 2007): t = max over classes of the Earth Mover's
  Distance EMD(q, p). For a numeric S the ground distance is ordered, |i − j|/(m − 1), and
  EMD = (1/(m − 1)) Σ_{i=1}^{m−1} |Σ_{j≤i} (q_j − p_j)|; for any other S every two values are
  at distance 1 and EMD = ½ Σ_i |q_i − p_i|. 0 ≤ t ≤ 1.
- **basic β-likeness** (Cao & Karras 2012): β = max over classes and values of
  (q_i − p_i)/p_i, the largest relative gain in confidence about a value (≥ 0).
- **enhanced β-likeness** (Cao & Karras 2012) bounds the relative gain on s_i by
  min{β, −ln p_i}; the figure is max_i min{β, −ln p_i} = min{β, −ln min_i p_i}, β the basic
  β-likeness (pycanon 1.3.6's reading). The paper states a condition, not a figure: every gain
  (q_i − p_i)/p_i with q_i > p_i is at most min{β, −ln p_i}; some β satisfies it only when no
  gain exceeds −ln p_i, and the least such β is then the basic β-likeness.
- **δ-disclosure privacy** (Brickell & Shmatikov 2008): δ = max over classes and over the values
  the class holds (q_i > 0) of |ln(q_i/p_i)|. The paper quantifies over every value, so a class
  that lacks a value of the table has |ln 0| = ∞; ``delta_bounded`` is False when some class
  does (the paper's δ is then infinite) and δ is read over the values present, as pycanon does.

Blanks. A record whose S is missing is left out of both q and p (it releases no value); a class
none of whose records has S is left out. A missing key is, by default (``na="category"``), a
value of its own: the records with the same present values and the same blanks form a class.
With ``na="drop"`` a record with a missing key belongs to no class but still counts in p. pycanon
1.3.6 (with pandas 2.3.3) does the former with two or more keys and the latter with one; its
outputs are compared under that mapping (tests/data/pycanon/README.md). The split between numeric
and categorical S follows :func:`sdc_core.data.columns.is_number` (integers and floats, not
True/False); pycanon orders any numeric dtype, True/False included, which gives the same EMD
because m ≤ 2.

Cost: O(n) to count, plus O(classes · m) for the ordered EMD, done in blocks of classes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from sdc_core.data.columns import is_number
from sdc_core.errors import SdcInputError
from sdc_core.keys import check_columns, combine_codes, densify, encode_keys

NA_CHOICES = ("category", "drop")
_BLOCK = 1 << 22  # cells of the dense class × value table per block (ordered EMD)


@dataclass(frozen=True)
class Closeness:
    """t-closeness, basic and enhanced β-likeness and δ-disclosure of one sensitive column.

    Made by :func:`closeness`; each figure is the worst equivalence class's (module docstring).

    Parameters
    ----------
    sensitive : str
        The sensitive column S.
    ordered : bool
        Whether the EMD used the ordered distance (numeric S) or the equal distance.
    t_closeness : float
        max over classes of EMD(q, p), in [0, 1].
    beta_likeness : float
        max over classes and values of (q_i − p_i)/p_i.
    enhanced_beta_likeness : float
        max_i min{β, −ln p_i}.
    delta_disclosure : float
        max over classes and values with q_i > 0 of |ln(q_i/p_i)|.
    delta_bounded : bool
        False when some class lacks a value of the table (the paper's δ is infinite).
    n_classes : int
        The classes holding a value of S.
    n_values : int
        m, the distinct values of S.

    Examples
    --------
    >>> import pandas as pd
    >>> from sdc_core.risk.closeness import closeness
    >>> df = pd.DataFrame({"x": list("aaabbb"), "s": [1, 2, 3, 1, 1, 2]})
    >>> c = closeness(df, ["x"], "s")
    >>> round(c.t_closeness, 6), c.beta_likeness, round(c.delta_disclosure, 6)
    (0.166667, 1.0, 0.693147)
    """

    sensitive: str
    ordered: bool
    t_closeness: float
    beta_likeness: float
    enhanced_beta_likeness: float
    delta_disclosure: float
    delta_bounded: bool
    n_classes: int
    n_values: int

    def to_json(self) -> dict[str, float | bool]:
        """The four figures and whether δ is bounded, JSON-ready."""
        return {"t_closeness": self.t_closeness, "beta_likeness": self.beta_likeness,
                "enhanced_beta_likeness": self.enhanced_beta_likeness,
                "delta_disclosure": self.delta_disclosure,
                "delta_disclosure_bounded": self.delta_bounded}


def class_labels(df: pd.DataFrame, qi: Sequence[str], na: str = "category") -> np.ndarray:
    """Each record's class label ``0..g-1``, or −1 for a record in no class (``na="drop"``
    and a missing key)."""
    if na not in NA_CHOICES:
        raise SdcInputError(f"na must be one of {', '.join(NA_CHOICES)}, not {na!r}")
    keys = encode_keys(df, qi, "category" if na == "category" else "wildcard")
    blank = np.zeros(keys.n, dtype=bool)
    for c in keys.codes:
        blank |= c < 0
    key, _ = combine_codes([np.maximum(c, 0) for c in keys.codes], keys.cards)
    label = np.full(keys.n, -1, dtype=np.int64)
    label[~blank] = densify(key[~blank])[0]
    return label


def closeness(df: pd.DataFrame, qi: Sequence[str], sensitive: str,
              na: str = "category") -> Closeness:
    """t-closeness, β-likeness and δ-disclosure of ``sensitive`` over the classes of ``qi``.

    Parameters
    ----------
    df : pandas.DataFrame
        The table (original or release).
    qi : sequence of str
        The quasi-identifiers X.
    sensitive : str
        The sensitive column S; numeric (integers, floats) takes the ordered distance.
    na : {"category", "drop"}
        A missing key as a value of its own, or its record in no class (pycanon's).

    Returns
    -------
    Closeness
        The four figures (all 0 when S has no value).

    Raises
    ------
    SdcInputError
        An unknown column, ``sensitive`` among ``qi``, or an unknown ``na``.

    Examples
    --------
    >>> import pandas as pd
    >>> from sdc_core.risk.closeness import closeness
    >>> df = pd.DataFrame({"x": list("aabb"), "s": ["u", "u", "u", "v"]})
    >>> closeness(df, ["x"], "s").to_json()["t_closeness"]
    0.25
    """
    check_columns(df, [sensitive], "sensitive")
    if sensitive in qi:
        raise SdcInputError(f"sensitive column '{sensitive}' is also a quasi-identifier")
    label = class_labels(df, qi, na)
    s = df[sensitive]
    ordered = is_number(s)
    s_code, levels = pd.factorize(s, sort=ordered)
    m = len(levels)
    present = s_code >= 0
    if m == 0:
        return Closeness(sensitive, ordered, 0.0, 0.0, 0.0, 0.0, True, 0, 0)
    p = np.bincount(s_code[present], minlength=m) / present.sum()
    rows = present & (label >= 0)
    cls, n_classes = densify(label[rows]) if rows.any() else (np.zeros(0, np.int64), 0)
    code = s_code[rows].astype(np.int64)
    cell, count = np.unique(cls * m + code, return_counts=True)
    c_of, v_of = cell // m, cell % m
    size = np.bincount(c_of, weights=count, minlength=n_classes)
    q = count / size[c_of]  # the nonzero q_i of every class, sparse
    # equal distance: ½ Σ|q − p| = Σ_{q_i > p_i} (q_i − p_i), as both sum to 1 (only q_i > 0)
    if ordered and m > 1:
        t = _ordered_emd(c_of, v_of, q, p, n_classes)
    else:
        t = np.bincount(c_of, weights=np.maximum(q - p[v_of], 0.0), minlength=n_classes)
    beta = float(np.max((q - p[v_of]) / p[v_of], initial=0.0))
    delta = float(np.max(np.abs(np.log(q / p[v_of])), initial=0.0))
    held = np.bincount(c_of, minlength=n_classes)
    return Closeness(
        sensitive, ordered, float(np.clip(np.max(t, initial=0.0), 0.0, 1.0)), beta,
        float(min(beta, -np.log(p.min()))), delta, bool((held == m).all()), int(n_classes), m)


def _ordered_emd(c_of: np.ndarray, v_of: np.ndarray, q: np.ndarray, p: np.ndarray,
                 n_classes: int) -> np.ndarray:
    """(1/(m−1)) Σ_{i<m} |Σ_{j≤i} (q_j − p_j)| of every class, in blocks of classes."""
    m = len(p)
    out = np.empty(n_classes)
    step = max(1, _BLOCK // m)
    bounds = np.searchsorted(c_of, np.arange(0, n_classes + step, step))
    for b, start in enumerate(range(0, n_classes, step)):
        stop = min(start + step, n_classes)
        lo, hi = bounds[b], bounds[b + 1]
        dense = np.tile(-p, (stop - start, 1))  # q − p, exactly 0 where q = p
        dense[c_of[lo:hi] - start, v_of[lo:hi]] += q[lo:hi]
        cum = np.cumsum(dense, axis=1)[:, : m - 1]
        out[start:stop] = np.abs(cum).sum(axis=1) / (m - 1)
    return out


def closeness_report(df: pd.DataFrame, qi: Sequence[str], sensitive: Sequence[str],
                     na: str = "category") -> dict[str, Closeness]:
    """:func:`closeness` of every sensitive column, by column.

    Parameters
    ----------
    df : pandas.DataFrame
        The table (original or release).
    qi : sequence of str
        The quasi-identifiers X.
    sensitive : sequence of str
        The sensitive columns, none of them a quasi-identifier.
    na : {"category", "drop"}
        How a missing key is read (:func:`closeness`).

    Returns
    -------
    dict of str to Closeness
        The figures of each sensitive column, in the order given.

    Raises
    ------
    SdcInputError
        An unknown or repeated column, a sensitive column among ``qi``, an unknown ``na``.

    Examples
    --------
    >>> import pandas as pd
    >>> from sdc_core.risk.closeness import closeness_report
    >>> df = pd.DataFrame({"x": list("aabb"), "s": [1, 1, 1, 2], "c": list("uvuv")})
    >>> {k: v.t_closeness for k, v in closeness_report(df, ["x"], ["s", "c"]).items()}
    {'s': 0.25, 'c': 0.0}
    """
    return {col: closeness(df, qi, col, na) for col in check_columns(df, sensitive, "sensitive")}


def closeness_json(report: Mapping[str, Closeness]) -> list[dict[str, Any]]:
    """:func:`closeness_report`'s figures as ``compare --json`` and ``risk --json`` give them,
    ``[{column, t_closeness, …}]``; an infinite or undefined figure is null."""
    return [{"column": c, **{k: (v if not isinstance(v, float) or math.isfinite(v) else None)
                             for k, v in figures.to_json().items()}}
            for c, figures in report.items()]
