"""Count tables as published (docs/tables.md, "Utility and protection side by side"): the
tidy form every noisy method takes (one row per cell, the key columns and ``count``; a Series of
counts indexed by the key values is accepted too), the full grid of the keys' levels, every
margin (:func:`with_margins`, labelled ``"Total"``), and what a published table costs and
exposes against the true one (:func:`compare_published`, :func:`differencing`).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd

from sdc_core.errors import SdcInputError
from sdc_core.tables.crosstab import TOTAL
from sdc_core.utility.cell_loss import compare_counts
from sdc_core.utility.fidelity import _compare as _hellinger_table

#: Most cells a table may have (the grid of its keys' levels).
MAX_CELLS = 2_000_000
#: The status of a published figure.
STATUS = ("published", "primary", "secondary", "perturbed")


def _tidy(table: Any) -> tuple[pd.DataFrame, list[Hashable]]:
    """``table`` as a frame of key columns and an integer ``count``, and its key columns."""
    if isinstance(table, pd.Series):
        if table.index.nlevels == 1:
            names = [table.index.name if table.index.name is not None else "key"]
        else:
            names = [n if n is not None else f"key{i}" for i, n in enumerate(table.index.names)]
        frame = pd.DataFrame(list(table.index), columns=names) if table.index.nlevels > 1 \
            else pd.DataFrame({names[0]: list(table.index)})
        frame["count"] = np.asarray(table.to_numpy())
        table = frame
    if not isinstance(table, pd.DataFrame) or "count" not in table.columns:
        raise SdcInputError("a table must be a Series of counts or a DataFrame of key columns "
                            "and a 'count' column")
    keys = [c for c in table.columns if c != "count"]
    if not keys:
        raise SdcInputError("a table needs at least one key column besides 'count'")
    if len(table) > MAX_CELLS:
        raise SdcInputError(f"a table may have at most {MAX_CELLS:,} cells, not {len(table):,}")
    raw = pd.to_numeric(table["count"], errors="coerce").to_numpy(dtype=np.float64)
    if not np.all(np.isfinite(raw)) or np.any(raw < 0) or np.any(raw != np.floor(raw)) \
            or np.any(raw > 2.0 ** 53):
        raise SdcInputError("counts must be whole numbers from 0 to 2^53")
    out = table[keys].copy()
    for k in keys:
        if out[k].isna().any():
            raise SdcInputError(f"key column {k!r} has a missing value")
        if (out[k].astype(str) == TOTAL).any():
            raise SdcInputError(f"key column {k!r} has a value {TOTAL!r}, the label of a margin")
    if out.duplicated().any():
        raise SdcInputError("a table lists a cell twice")
    out["count"] = raw.astype(np.int64)
    return out.reset_index(drop=True), keys


def full_grid(table: Any) -> pd.DataFrame:
    """Every combination of the levels of the key columns, the missing ones with count 0.

    Parameters
    ----------
    table : pandas.DataFrame or pandas.Series
        Key columns and ``count`` (or counts indexed by the keys).

    Returns
    -------
    pandas.DataFrame
        The key columns and ``count``, one row per combination, sorted by the keys.

    Examples
    --------
    >>> t = pd.DataFrame({"a": ["x", "y"], "b": ["u", "v"], "count": [3, 4]})
    >>> full_grid(t)["count"].tolist()
    [3, 0, 0, 4]
    """
    cells, keys = _tidy(table)
    levels = [sorted(cells[k].unique(), key=str) for k in keys]
    size = math.prod(len(v) for v in levels)
    if size > MAX_CELLS:
        raise SdcInputError(f"the grid of the keys' levels has {size:,} cells; at most "
                            f"{MAX_CELLS:,}")
    grid = pd.MultiIndex.from_product(levels, names=keys).to_frame(index=False)
    out = grid.merge(cells, on=keys, how="left")
    out["count"] = out["count"].fillna(0).astype(np.int64)
    return out


def with_margins(cells: pd.DataFrame, keys: Sequence[Hashable], value: str = "count",
                 modulo: int | None = None) -> pd.DataFrame:
    """The cells and every margin: for each subset S of the keys, the sum of ``value`` over the
    cells sharing the values of S, the other keys labelled ``"Total"`` (S empty: the grand
    total); with ``modulo`` the sums are taken mod it (cell keys).

    Parameters
    ----------
    cells : pandas.DataFrame
        The key columns and ``value``.
    keys : sequence of column names
    value : str
        The column summed.
    modulo : int, optional

    Returns
    -------
    pandas.DataFrame
        The cells first, then the margins from the most detailed to the grand total, with a
        column ``margin`` (False for a cell).

    Examples
    --------
    >>> t = pd.DataFrame({"a": ["x", "x", "y"], "b": ["u", "v", "u"], "count": [1, 2, 3]})
    >>> m = with_margins(t, ["a", "b"])
    >>> m[m["margin"]]["count"].tolist()
    [3, 3, 4, 2, 6]
    """
    keys = list(keys)
    parts = [cells[keys + [value]].assign(margin=False)]
    for size in range(len(keys) - 1, -1, -1):
        for kept in combinations(keys, size):
            if kept:
                part = cells.groupby(list(kept), sort=True, observed=True)[value].sum()
                part = part.reset_index()
            else:
                part = pd.DataFrame({value: [cells[value].sum()]})
            for k in keys:
                if k not in kept:
                    part[k] = TOTAL
            parts.append(part[keys + [value]].assign(margin=True))
    out = pd.concat(parts, ignore_index=True)
    for k in keys:
        out[k] = out[k].astype(object)
    if modulo is not None:
        out[value] = out[value] % modulo
    return out


@dataclass(frozen=True)
class Comparison:
    """A published table against the true one (docs/tables.md,
    "Utility and protection side by side"): over the cells published in both (margins left
    out), absD, relabsD, Hellinger distance, false zeros and non-zeros; ``blank`` the cells not
    published; ``perturbed`` the share of published cells whose figure differs from the true
    count."""

    cells: int
    blank: int
    absD: float
    relabsD: float
    hellinger: float
    false_zeros: int
    false_nonzeros: int
    perturbed: float

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def compare_published(true: pd.DataFrame, published: pd.DataFrame,
                      keys: Sequence[Hashable]) -> Comparison:
    """Utility of a published table against the true cells.

    absD = Σ |n′ − n|, relabsD = Σ_{n>0} |n′ − n| / n, false zeros #{n > 0, n′ = 0}, false
    non-zeros #{n = 0, n′ > 0} (:func:`sdc_core.utility.cell_loss.compare_counts`), Hellinger
    H = √(½ Σ (√p − √p′)²) on the shares (:mod:`sdc_core.utility.fidelity`), all over the
    cells (not margins) published, n′ the published count.

    Parameters
    ----------
    true : pandas.DataFrame
        Key columns and ``count``.
    published : pandas.DataFrame
        Key columns and ``count`` (missing: blank), optionally ``margin``.
    keys : sequence of column names

    Returns
    -------
    Comparison

    Examples
    --------
    >>> t = pd.DataFrame({"a": ["x", "y", "z"], "count": [10, 2, 0]})
    >>> p = pd.DataFrame({"a": ["x", "y", "z"], "count": [10, 0, 1]})
    >>> c = compare_published(t, p, ["a"])
    >>> c.absD, c.false_zeros, c.false_nonzeros
    (3.0, 1, 1)
    """
    keys = list(keys)
    pub = published
    if "margin" in pub.columns:
        pub = pub[~pub["margin"].astype(bool)]
    tr = true[keys + ["count"]].copy()
    for k in keys:
        tr[k] = tr[k].astype(str)
    pb = pub[keys + ["count"]].copy()
    for k in keys:
        pb[k] = pb[k].astype(str)
    both = tr.merge(pb, on=keys, how="outer", suffixes=("", "_pub"))
    both["count"] = both["count"].fillna(0)
    shown = both["count_pub"].notna().to_numpy()
    exact = both["count"].to_numpy(dtype=np.float64)[shown]
    figures = np.clip(pd.to_numeric(both["count_pub"][shown]).to_numpy(dtype=np.float64), 0, None)
    if not (np.all(exact == np.floor(exact)) and np.all(figures == np.floor(figures))):
        return _compare_amounts(exact, figures, int((~shown).sum()))
    n = exact.astype(np.int64)
    n2 = np.clip(np.rint(figures), 0, None).astype(np.int64)
    loss = compare_counts(n, n2, tuple(keys))
    h = _hellinger_table(n, n2, tuple(keys)).hellinger if n.sum() > 0 and n2.sum() > 0 \
        else (0.0 if n.sum() == n2.sum() else 1.0)
    return Comparison(int(shown.sum()), int((~shown).sum()), loss.absD, loss.relabsD,
                      float(h), loss.false_zeros, loss.false_nonzeros,
                      float(np.mean(n != n2)) if len(n) else 0.0)


def _compare_amounts(n: np.ndarray, n2: np.ndarray, blank: int) -> Comparison:
    """:func:`compare_published` of figures that are not all whole (the sums of a magnitude
    table), on the figures themselves: absD = Σ |n′ − n|, relabsD = Σ_{n>0} |n′ − n| / n, false
    zeros #{n > 0, n′ = 0}, false non-zeros #{n = 0, n′ > 0}, H = √(½ Σ (√p − √p′)²) with
    p = n / Σ n and p′ = n′ / Σ n′ (1 when one table is all zero and the other is not).

    Examples
    --------
    >>> c = _compare_amounts(np.array([10.5, 2.0, 0.0]), np.array([10.0, 0.0, 1.25]), 0)
    >>> c.absD, c.false_zeros, c.false_nonzeros, c.perturbed
    (3.75, 1, 1, 1.0)
    """
    diff = np.abs(n2 - n)
    pos = n > 0
    if n.sum() > 0 and n2.sum() > 0:
        h = math.sqrt(0.5 * float(((np.sqrt(n / n.sum()) - np.sqrt(n2 / n2.sum())) ** 2).sum()))
    else:
        h = 0.0 if n.sum() == n2.sum() else 1.0
    return Comparison(len(n), blank, float(diff.sum()), float((diff[pos] / n[pos]).sum()), h,
                      int((pos & (n2 == 0)).sum()), int(((n == 0) & (n2 > 0)).sum()),
                      float(np.mean(n != n2)) if len(n) else 0.0)


@dataclass(frozen=True)
class Differencing:
    """Differencing two published tables whose cells nest (:func:`differencing`): ``pairs``
    the fine cells recovered (a coarse figure minus the other fine figures, all published),
    ``small`` those with a true count 1–4, ``exposed`` the small ones recovered exactly,
    ``mean_error`` the mean |recovered − true| over the pairs."""

    pairs: int
    small: int
    exposed: int
    mean_error: float

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def differencing(true_fine: pd.DataFrame, fine: pd.DataFrame, coarse: pd.DataFrame,
                 column: Hashable, merge: dict[Any, Any], small: tuple[int, int] = (1, 4)
                 ) -> Differencing:
    """Recover fine cells from two published tables: the table of the keys (``fine``) and the
    same table with categories of ``column`` merged by ``merge`` (fine value → coarse value;
    values not in it stay as they are). For a coarse cell C made of fine cells f₁ … f_k
    (k ≥ 2), recovered f = published(C) − Σ_{g ∈ C, g ≠ f} published(g), when all of them
    are published; the recovery exposes f when it equals a true count in ``small``.

    Parameters
    ----------
    true_fine : pandas.DataFrame
        The true fine cells (key columns and ``count``).
    fine, coarse : pandas.DataFrame
        The published tables (key columns and ``count``, blank missing; margins, if any,
        marked by a ``margin`` column, are left out).
    column : column name
    merge : dict
    small : (int, int)

    Returns
    -------
    Differencing

    Examples
    --------
    >>> t = pd.DataFrame({"a": ["x", "y", "z"], "count": [20, 3, 7]})
    >>> coarse = pd.DataFrame({"a": ["x", "yz"], "count": [20, 10]})
    >>> differencing(t, t.drop(index=1), coarse, "a", {"y": "yz", "z": "yz"}).exposed
    1
    """
    keys = [c for c in true_fine.columns if c != "count"]
    if column not in keys or not isinstance(merge, dict):
        raise SdcInputError("differencing needs a key column and a dict of merged categories")

    def _cells(t: pd.DataFrame) -> dict[tuple[str, ...], float]:
        if "margin" in t.columns:
            t = t[~t["margin"].astype(bool)]
        vals = pd.to_numeric(t["count"]).to_numpy(dtype=np.float64)
        tup = zip(*[t[k].astype(str) for k in keys], strict=True)
        return {k: v for k, v in zip(tup, vals) if not math.isnan(v)}

    truth = _cells(true_fine)
    pub_f, pub_c = _cells(fine), _cells(coarse)
    at = keys.index(column)
    smap = {str(k): str(v) for k, v in merge.items()}
    groups: dict[tuple[str, ...], list[tuple[str, ...]]] = {}
    for cell in truth:
        c = list(cell)
        c[at] = smap.get(c[at], c[at])
        groups.setdefault(tuple(c), []).append(cell)
    pairs = n_small = exposed = 0
    errors = []
    for ccell, members in groups.items():
        if len(members) < 2 or ccell not in pub_c:
            continue
        for f in members:
            others = [g for g in members if g != f]
            if not all(g in pub_f for g in others):
                continue
            rec = pub_c[ccell] - sum(pub_f[g] for g in others)
            pairs += 1
            errors.append(abs(rec - truth[f]))
            if small[0] <= truth[f] <= small[1]:
                n_small += 1
                exposed += int(rec == truth[f])
    return Differencing(pairs, n_small, exposed, float(np.mean(errors)) if errors else 0.0)
