"""Synthesis by sequential CART (docs/methods.md, "Synthesis (sequential CART)"): a new table
drawn column by column from trees fitted on the original (Reiter 2005; Nowok, Raab & Dibben
2016).

In the visit order c₁, …, c_p, the first column is drawn from its marginal (a fitted record's
value, chosen uniformly, with replacement); column c_j is drawn, for each synthetic record, from
the donors in its leaf: the fitted records that a decision tree, fitted on c₁, …, c_{j−1} to
predict c_j, puts in the leaf where the synthetic record's own values c₁, …, c_{j−1} land. A
categorical target (bool, boolean, text, category, object) has a classification tree, a
numeric one (numbers, datetimes) a regression tree; a blank is a value of its own for a
categorical column, and a numeric column with blanks is drawn in two stages: blank or not from
a classification tree, then the value among the non-blank fitted records.

Every draw is keyed (:mod:`sdc_core.rng`): the held-out records by (seed, step, record id), the
synthetic record k's draws by (seed, step, draw, k), and each tree's ``random_state`` by
(seed, step, column), so the same seed gives the same file.
"""

from __future__ import annotations

import numbers
import os
import warnings
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from pandas.api import types as ptypes

from sdc_core import rng
from sdc_core.checks import shown
from sdc_core.errors import SdcInputError
from sdc_core.methods.common import TableResult, resolve_ids
from sdc_core.methods.spec import EngineRun, Method, Param, Release

#: The most synthetic records one step makes.
MAX_RECORDS = 10_000_000
#: The most values (records × columns) one step makes: a recipe asks for records, the table
#: gives the columns, and memory follows their product, so the product is bounded before any
#: tree is fitted (10⁶ records of 50 columns; the release's arrays take some 10 bytes a value).
MAX_VALUES = 50_000_000
#: Draw numbers: the held-out records, the bootstrap of a proper synthesis; then, per column j
#: of the visit order, ``COLUMN_DRAWS`` draws from ``FIRST_COLUMN_DRAW + COLUMN_DRAWS·j``.
DRAW_HOLDOUT, DRAW_BOOTSTRAP, FIRST_COLUMN_DRAW = 0, 1, 2
#: Per column: the donor of the value, the donor of blank-or-not, the smoothing normal, the
#: trees' random_state.
DONOR, BLANK, SMOOTH, TREE = range(4)
COLUMN_DRAWS = 4


def _whole(name: str, value: Any, low: int, high: int | None = None) -> int:
    """``value`` as a whole number in [low, high], or the refusal."""
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool)
    ok = ok and bool(np.isfinite(float(value))) and float(value).is_integer()
    if not ok or value < low or (high is not None and value > high):
        span = f"from {low:,} to {high:,}" if high is not None else f"of at least {low}"
        raise SdcInputError(f"{name} must be a whole number {span}, not {shown(value)}")
    return int(value)


def _share(holdout: Any) -> float:
    ok = isinstance(holdout, numbers.Real) and not isinstance(holdout, bool)
    if not ok or not 0.0 <= float(holdout) < 1.0:
        raise SdcInputError(f"holdout must be a share in [0, 1), not {shown(holdout)}")
    return float(holdout)


def held_out(n_or_rid: int | np.ndarray, holdout: float, seed: int, step: int) -> np.ndarray:
    """Which records a synthesis step with this ``holdout`` keeps out of the fit.

    The ⌊holdout·n⌋ records with the smallest uniforms u_i = uniform(r_i, key(seed, step, 0))
    (:mod:`sdc_core.rng`; r_i the record id, the row position by default) are held out, so a
    measure recomputes them from the seed, the step and the ids alone.

    Parameters
    ----------
    n_or_rid : int or numpy.ndarray
        The number of records (ids 0..n−1), or their record ids.
    holdout : float
        The share held out, in [0, 1).
    seed, step : int
        The recipe's seed and the step's index (from 0).

    Returns
    -------
    numpy.ndarray of bool
        True for a held-out record.

    Examples
    --------
    >>> held_out(10, 0.3, seed=1, step=0).sum()
    np.int64(3)
    """
    share = _share(holdout)
    ids = rng.record_ids(n_or_rid) if isinstance(n_or_rid, numbers.Integral) \
        else np.asarray(n_or_rid, dtype=np.uint64)
    out = np.zeros(len(ids), dtype=bool)
    k = int(np.floor(share * len(ids)))
    if k:
        u = rng.uniform(ids, rng.key(seed, step, DRAW_HOLDOUT))
        out[np.argsort(u, kind="stable")[:k]] = True
    return out


def check_params(min_leaf: Any = 5, smoothing: Any = False, proper: Any = False,
                 records: Any = None, holdout: Any = 0.0, visit: Any = None) -> None:
    """Refuse parameters out of range before any data (a recipe's step is checked so when it
    is read): min_leaf ≥ 1, records in 1..10,000,000 or None, holdout in [0, 1), visit a
    list of distinct column names or None."""
    _whole("min_leaf", min_leaf, 1)
    if records is not None:
        _whole("records", records, 1, MAX_RECORDS)
    _share(holdout)
    for name, flag in (("smoothing", smoothing), ("proper", proper)):
        if not isinstance(flag, bool):
            raise SdcInputError(f"{name} must be true or false")
    if visit is not None and (not isinstance(visit, list)
                              or not all(isinstance(c, str) for c in visit)):
        raise SdcInputError("visit must be a list of column names")
    if visit is not None and len(set(visit)) < len(visit):
        raise SdcInputError("visit names a column more than once")


def _order(columns: Sequence[str], visit: Sequence[str] | None) -> list[str]:
    """The visit order: ``visit`` first, then the other columns in the table's order."""
    visit = list(visit or [])
    unknown = [c for c in visit if c not in columns]
    if unknown:
        raise SdcInputError(f"visit names column(s) not in the table: "
                            f"{', '.join(shown(c) for c in unknown[:3])}")
    return visit + [c for c in columns if c not in visit]


def _numeric(s: pd.Series) -> bool:
    """Numbers and datetimes are drawn as numbers; True/False, text and categories as values."""
    if ptypes.is_bool_dtype(s.dtype) or isinstance(s.dtype, pd.CategoricalDtype):
        return False
    return ptypes.is_numeric_dtype(s.dtype) or s.dtype.kind in "mM"


def _numbers(s: pd.Series) -> np.ndarray:
    """A numeric column as float64, NaN for a blank (a datetime as its int64 count)."""
    if s.dtype.kind in "mM":
        x = s.array.asi8.astype(np.float64)
        x[s.isna().to_numpy()] = np.nan
        return x
    return s.to_numpy(dtype=np.float64, na_value=np.nan)


def _from_numbers(s: pd.Series, x: np.ndarray) -> pd.Series:
    """Smoothed numbers ``x`` (NaN a blank) back in the dtype of ``s``: whole-number and
    datetime columns rounded to the nearest whole number (clipped to the int64 range, and an
    integer column's to its dtype's)."""
    if ptypes.is_float_dtype(s.dtype):
        return pd.Series(x, name=s.name).astype(s.dtype)
    whole = np.clip(np.round(np.nan_to_num(x)), -2.0**63, 2.0**63 - 1024).astype(np.int64)
    if s.dtype.kind in "mM":
        whole[np.isnan(x)] = np.iinfo(np.int64).min  # NaT
        out = pd.Series(whole.view(s.dtype.base), name=s.name)  # numpy's M8/m8 of the unit
        tz = getattr(s.dtype, "tz", None)
        return out.dt.tz_localize("UTC").dt.tz_convert(tz) if tz is not None else out
    # a smoothed draw past the dtype's range (−1 in UInt8) is clipped to it
    info = np.iinfo(s.dtype if isinstance(s.dtype, np.dtype) else s.dtype.numpy_dtype)
    whole = np.clip(whole, max(info.min, -2**63), min(info.max, 2**63 - 1))
    if isinstance(s.dtype, np.dtype):  # a numpy integer column has no blanks
        return pd.Series(whole.astype(s.dtype), name=s.name)
    out = pd.Series(whole, name=s.name).astype(s.dtype)
    out[np.isnan(x)] = pd.NA
    return out


def _ranks(x: np.ndarray, fitted: np.ndarray) -> np.ndarray:
    """A numeric predictor as its position among the fitted records' sorted distinct values
    (linear between them, NaN kept): a monotone map, so a tree splits as on the values, and
    huge numbers stay within float32, which the trees compute in."""
    knots = np.unique(fitted[~np.isnan(fitted)])
    if knots.size == 0:
        return x.copy()
    out = np.interp(x, knots, np.arange(knots.size, dtype=np.float64))
    out[np.isnan(x)] = np.nan
    return out


def _fit_tree(x_fit: np.ndarray, y: np.ndarray, categorical: bool, min_leaf: int,
              state: int) -> tuple[Any, np.ndarray]:
    """A tree fitted on ``x_fit`` (float32) to predict ``y``, and the leaf of each fitted
    record; no tree (None, one leaf for all) when there are no predictors or fewer than
    2·min_leaf records."""
    # imported here: scikit-learn brings SciPy, which the commands that do not synthesise
    # never load (tests/test_cli.py)
    from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

    if x_fit.shape[1] == 0 or len(y) < 2 * min_leaf:
        return None, np.zeros(len(x_fit), dtype=np.int64)
    kind = DecisionTreeClassifier if categorical else DecisionTreeRegressor
    tree = kind(min_samples_leaf=min_leaf, random_state=state)
    if not categorical:
        top = np.max(np.abs(y))
        y = y / top if top > 0 else y  # the same splits, no overflow of squared errors
    with warnings.catch_warnings():  # many classes among few records is what a label column
        warnings.filterwarnings("ignore", message="The number of unique classes")  # is
        tree.fit(x_fit, y)
    return tree, tree.apply(x_fit).astype(np.int64)


def _route(tree: Any, x_syn: np.ndarray) -> np.ndarray:
    """The leaf of each synthetic record in ``tree`` (one leaf for all when no tree)."""
    if tree is None:
        return np.zeros(len(x_syn), dtype=np.int64)
    return tree.apply(x_syn).astype(np.int64)


def _donors(leaf_fit: np.ndarray, leaf_syn: np.ndarray, u: np.ndarray) -> np.ndarray:
    """For each synthetic record, a fitted record drawn uniformly from its leaf: the fitted
    records sorted by leaf, the one at position ⌊start + u·size⌋ of the leaf's slice (size:
    the leaf's fitted records, start: the fitted records in the leaves of smaller number)."""
    order = np.argsort(leaf_fit, kind="stable")
    top = max(int(leaf_fit.max(initial=0)), int(leaf_syn.max(initial=0))) + 1
    counts = np.bincount(leaf_fit, minlength=top)
    size = counts[leaf_syn]
    start = (np.cumsum(counts) - counts)[leaf_syn]
    pick = np.minimum(start + np.floor(u * size).astype(np.int64), start + size - 1)
    return order[pick]


def _bandwidths(leaf: np.ndarray, x: np.ndarray) -> pd.Series:
    """Silverman's bandwidth of each leaf's donors (R's ``bw.nrd0``, synthpop's smoothing):
    h = 0.9·min(σ̂, IQR/1.34)·n^(−1/5), σ̂ with n − 1; σ̂ alone when the IQR is 0, and 0 (no
    smoothing) when the donors are all one value, one donor, or their spread overflows."""
    g = pd.Series(x).groupby(leaf)
    sd = g.std()
    iqr = (g.quantile(0.75) - g.quantile(0.25)) / 1.34
    lo = np.minimum(sd, iqr).where(lambda v: v > 0, sd)
    h = 0.9 * lo * g.size() ** (-0.2)
    return h.where(np.isfinite(h), 0.0).fillna(0.0)


@dataclass(frozen=True)
class _Fitted:
    """One column of the fitted records as the trees see it: a categorical column's ordinal
    codes (−1 a blank), or a numeric column's numbers (NaN a blank)."""

    s: pd.Series
    codes: np.ndarray | None
    x: np.ndarray | None

    @classmethod
    def of(cls, s: pd.Series) -> _Fitted:
        if _numeric(s):
            return cls(s, None, _numbers(s))
        return cls(s, pd.factorize(s, use_na_sentinel=True)[0], None)

    def predictor(self) -> np.ndarray:
        """The column as the next trees' predictor: codes, or ranks among its own values."""
        if self.codes is not None:
            return self.codes.astype(np.float64)
        assert self.x is not None
        return _ranks(self.x, self.x)

    def jobs(self) -> dict[str, tuple[np.ndarray | None, np.ndarray, bool]]:
        """The trees the column needs, by role: (the fitted rows they are fitted on, None for
        all; the target; categorical). A numeric column with blanks has a blank-or-not
        classifier and a regression tree on the non-blank records."""
        if self.codes is not None:
            return {"value": (None, self.codes, True)}
        x = self.x
        assert x is not None
        blank = np.isnan(x)
        out: dict[str, tuple[np.ndarray | None, np.ndarray, bool]] = {}
        if blank.any() and not blank.all():
            out["blank"] = (None, blank.astype(np.int64), True)
        present = np.flatnonzero(~blank)
        if present.size:
            out["value"] = (present, x[present], False)
        return out


#: A fitted tree (None: one leaf for all) and the leaf of each record it was fitted on.
Fit = tuple[Any, np.ndarray]


def _fit_all(fitted: list[_Fitted], x_fit: np.ndarray, min_leaf: int, states: list[int],
             workers: int) -> dict[tuple[int, str], Fit]:
    """Every tree of the synthesis, fitted up front: column j's trees are fitted on the fitted
    records' columns before j alone, never on synthetic values, so they are independent of
    each other and run in ``workers`` threads (scikit-learn's tree builder releases the GIL);
    each tree's ``random_state`` fixes it whatever the thread."""
    def one(j: int, rows: np.ndarray | None, y: np.ndarray, categorical: bool) -> Fit:
        x = x_fit[:, :j] if rows is None else x_fit[rows, :j]
        return _fit_tree(x, y, categorical, min_leaf, states[j])

    tasks = {(j, role): job for j, col in enumerate(fitted) for role, job in col.jobs().items()}
    if workers <= 1:
        return {key: one(key[0], *job) for key, job in tasks.items()}
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = {key: pool.submit(one, key[0], *job) for key, job in tasks.items()}
        return {key: f.result() for key, f in futures.items()}


def _column(col: _Fitted, trees: dict[str, Fit], x_syn: np.ndarray, smoothing: bool,
            keys: list[int], syn_ids: np.ndarray) -> tuple[pd.Series, np.ndarray]:
    """One column of the synthetic table from the fitted column ``col``, its fitted trees
    (by role) and the synthetic predictors so far: the synthetic values, and the column as the
    next trees' synthetic predictor."""
    s = col.s
    u = rng.uniform(syn_ids, keys[DONOR])
    if col.codes is not None:
        tree, leaf_fit = trees["value"]
        donor = _donors(leaf_fit, _route(tree, x_syn), u)
        return s.take(donor), col.codes[donor].astype(np.float64)
    x = col.x
    assert x is not None
    blank = np.isnan(x)
    syn_blank = np.full(len(syn_ids), bool(blank.all()))
    if "blank" in trees:  # first blank or not, then the value
        tree, leaf_fit = trees["blank"]
        syn_blank = blank[_donors(leaf_fit, _route(tree, x_syn),
                                  rng.uniform(syn_ids, keys[BLANK]))]
    present = np.flatnonzero(~blank)
    donor = np.full(len(syn_ids), np.flatnonzero(blank)[0] if blank.any() else 0)
    drawn = np.flatnonzero(~syn_blank)
    if present.size and drawn.size:
        tree, leaf_fit = trees["value"]
        leaf_syn = _route(tree, x_syn[drawn])
        donor[drawn] = present[_donors(leaf_fit, leaf_syn, u[drawn])]
        if smoothing:
            h = _bandwidths(leaf_fit, x[present]).reindex(leaf_syn).to_numpy()
            with np.errstate(over="ignore", invalid="ignore"):
                moved = x[donor[drawn]] + h * rng.normal(syn_ids[drawn], keys[SMOOTH])
            values = np.full(len(syn_ids), np.nan)
            values[drawn] = moved
            out = _from_numbers(s, values)
            return out, _ranks(_numbers(out), x)
    return s.take(donor), _ranks(x[donor], x)


def synthesize(df: pd.DataFrame, columns: Sequence[str], *, min_leaf: int = 5,
               smoothing: bool = False, proper: bool = False, records: int | None = None,
               holdout: float = 0.0, visit: Sequence[str] | None = None, seed: int = 0,
               step: int = 0, rid: np.ndarray | None = None,
               workers: int | None = None) -> TableResult:
    """A synthetic table of ``columns`` by sequential CART (module docstring; docs/methods.md,
    "Synthesis (sequential CART)").

    Parameters
    ----------
    df : pandas.DataFrame
        The original table.
    columns : sequence of str
        The columns synthesised (the recipe gives every column of the table).
    min_leaf : int, default 5
        The fewest fitted records in a leaf (``min_samples_leaf``): the fewest donors a
        synthetic value is drawn from.
    smoothing : bool, default False
        Numeric draws only: add to the donor's value a normal of standard deviation h, the
        bandwidth of the leaf's donors, h = 0.9·min(σ̂, IQR/1.34)·n^(−1/5) (R's ``bw.nrd0``;
        σ̂ alone when the IQR is 0; no smoothing in a leaf of one value); whole-number and
        datetime columns are rounded back.
    proper : bool, default False
        Fit on a bootstrap sample of the fitted records (record i of the m is the
        ⌊u·m⌋-th, u = uniform(r_i, key(seed, step, 1))).
    records : int, optional
        How many synthetic records (None: as many as the original has).
    holdout : float, default 0
        The share of the original's records kept out of the fit (:func:`held_out`).
    visit : sequence of str, optional
        The columns to visit first, in order; the others follow in the table's order.
    seed, step : int
        The recipe's seed and the step's index; ``rid`` the record ids (for the holdout).
    workers : int, optional
        The threads that fit the trees (None: one a core); the file is the same whatever
        their number.

    Returns
    -------
    TableResult
        The synthetic table (a fresh RangeIndex, every column in its original dtype) and
        figures: the records made and fitted, the visit order.

    Raises
    ------
    SdcInputError
        When min_leaf < 1, records is not in 1..10,000,000 or records × columns passes
        :data:`MAX_VALUES`, holdout is not in [0, 1) or leaves
        fewer than 2·min_leaf records to fit, the table has fewer than 2 records or no columns,
        or ``visit`` names a column not in the table.
    """
    check_params(min_leaf, smoothing, proper, records, holdout,
                 None if visit is None else list(visit))
    min_leaf, share, n = int(min_leaf), float(holdout), len(df)
    size = n if records is None else int(records)
    if not columns:
        raise SdcInputError("synthesis needs at least one column")
    if n < 2:
        raise SdcInputError(f"synthesis needs at least 2 records, and the table has {n}")
    order = _order(list(columns), visit)
    if size * len(order) > MAX_VALUES:
        raise SdcInputError(f"synthesis of {size:,} records × {len(order)} columns would make "
                            f"{size * len(order):,} values, more than the {MAX_VALUES:,} one "
                            "step makes: ask for fewer records")
    fit_at = np.flatnonzero(~held_out(resolve_ids(n, rid), share, seed, step))
    if len(fit_at) < 2 * min_leaf:
        raise SdcInputError(f"holdout {share:g} leaves {len(fit_at)} records to fit, fewer "
                            f"than 2·min_leaf = {2 * min_leaf}")
    if proper:
        u = rng.uniform(resolve_ids(n, rid)[fit_at], rng.key(seed, step, DRAW_BOOTSTRAP))
        fit_at = fit_at[np.floor(u * len(fit_at)).astype(np.int64)]
    fit = df.iloc[fit_at][order].reset_index(drop=True)
    syn_ids = rng.record_ids(size)
    keys = [[rng.key(seed, step, FIRST_COLUMN_DRAW + COLUMN_DRAWS * j + d)
             for d in range(COLUMN_DRAWS)] for j in range(len(order))]
    fitted = [_Fitted.of(fit[name]) for name in order]
    # float32, the trees' own precision (the same values as scikit-learn's own conversion),
    # column-major so that the first j columns are one block
    x_fit = np.empty((len(fit), len(order)), dtype=np.float32, order="F")
    for j, col in enumerate(fitted):
        x_fit[:, j] = col.predictor()
    trees = _fit_all(fitted, x_fit, min_leaf, [k[TREE] % 2**32 for k in keys],
                     (os.cpu_count() or 1) if workers is None else workers)
    x_syn = np.empty((size, len(order)), dtype=np.float32, order="F")
    out = {}
    for j, name in enumerate(order):
        mine = {role: tree_fit for (i, role), tree_fit in trees.items() if i == j}
        values, x_syn[:, j] = _column(fitted[j], mine, x_syn[:, :j], smoothing, keys[j],
                                      syn_ids)
        out[name] = values.reset_index(drop=True)
    data = pd.DataFrame(out, index=pd.RangeIndex(size))[list(columns)]
    info: dict[str, object] = {"records": size, "fitted": len(fit_at),
                               "held_out": int(np.floor(share * n)), "visit": order}
    return TableResult(data, info)


SYNTHESIZE = Method(
    name="synthesize", label="Synthesis (sequential CART)", order=95, run=synthesize,
    release=Release.SYNTHESIS, target="table", random=True, keeps_rows=False,
    engine=EngineRun.PANDAS_ONLY, main="min_leaf", off=0,
    engine_reason="each column's trees are fitted on the whole table's earlier columns",
    summary="a synthetic table drawn from trees fitted on the original (0 = off)",
    # min_leaf 0 is the Protect page's and a sweep's "off" (no step); a recipe step leaving
    # min_leaf out takes the function's default, 5
    params=(Param("min_leaf", "whole", 0, low=0, high=50, step=1,
                  label="Fewest records in a leaf",
                  help="Every synthetic value is drawn from at least this many original "
                       "records (the leaf's donors); 0: no synthesis."),
            Param("smoothing", "bool", False, label="Smooth numbers",
                  help="Add a normal of the leaf's kernel bandwidth to a drawn number."),
            Param("proper", "bool", False, label="Proper synthesis",
                  help="Fit on a bootstrap sample of the original's records."),
            Param("records", "whole", None, low=1, most=MAX_RECORDS,
                  label="Synthetic records", help="How many (blank: as many as the original)."),
            Param("holdout", "number", 0.0, low=0.0, high=0.9, step=0.05,
                  label="Held-out share",
                  help="The share of the original's records kept out of the fit, for the "
                       "distance against a holdout (0: none)."),
            Param("visit", "columns", None, control=False, label="Visit order",
                  help="The columns drawn first, in this order; the others follow.")),
    extra={"check": check_params},
    describe=lambda r: f"Synthesis: {r['records']:,} synthetic records from "
                       f"{r['fitted']:,} fitted ({r['held_out']:,} held out).")
