"""Table fidelity and propensity-score utility between an original table x and a protected x′
(docs/utility.md, "Does the analysis hold?"). The two tables need not have the same rows.

**Tables.** For the chosen columns, every 1-way and every 2-way table of counts, on x and on x′,
over the union of the cells of both; with p, p′ the cell shares:

- total variation distance TVD = ½ Σ |p − p′| (SDMetrics' ``TVComplement`` and
  ``ContingencySimilarity`` score 1 − TVD);
- Hellinger distance H = √(1 − Σ √(p·p′)), the ½-convention of synthpop's ``dBhatt``, so that
  0 ≤ H ≤ 1 (1 for disjoint supports, like TVD); computed as the equal √(½ Σ (√p − √p′)²),
  which is exactly 0 for tables of equal shares (1 − Σ √(p·p′) leaves a rounding error of
  1e-16, whose square root is 1e-8);
- false zeros: cells with a count in x and none in x′; false non-zeros: the reverse.

Cells: a missing value is a cell of its own. A column is *binned* when it holds numbers (or
dates) in both tables and, by default, takes more than ``bins`` distinct values in x (a column
of codes keeps one cell per code); the edges are fixed by x alone, so both tables are cut
alike: the interior quantiles of x at 1/b, …, (b−1)/b (values of x, the empirical quantile;
ties collapse edges), intervals closed on the right, the outer two open, so a protected value
below the least or above the largest value of x still falls in the first or last interval.
Any other column is compared value by value, by what the values are
(:func:`sdc_core.data.columns.compare_keys`: the code 1 and the text "1" are one cell).

**pMSE** (Woo et al. 2009; Snoke et al. 2018, synthpop's ``utility.gen(method = "logit")``).
Stack x (t = 0) and x′ (t = 1), N = n + n′ rows, c = n′/N the protected share; fit the logistic
propensity model t ~ main effects of the columns by maximum likelihood, p̂ the fitted
propensities:

    pMSE = Σ (p̂ − c)² / N,    S_pMSE = pMSE / [(k − 1)(1 − c)² c / N]

with k the number of identified model parameters, intercept included. Under the null (x′ drawn
from the distribution of x) E[pMSE] = (k − 1)(1 − c)² c / N, so **S_pMSE near 1: the tables
cannot be told apart better than two samples of one distribution; well above 1 (say 10 or
more): the model separates them** (Snoke, Raab, Nowok, Dibben & Slavkovic 2018, "General and
specific utility measures for synthetic data", JRSS A 181(3)). pMSE runs from 0 (identical
tables of equal size) to c(1 − c) (every row told apart).

Model terms: a column holding numbers (or dates) in both tables enters as one term, as it is
(codes held as numbers too: recode them to text to have them read as categories), centred and
scaled (which changes no fitted propensity); its missing values, as in synthpop, are set to 0
with an indicator term "missing"; a value that is not finite (±inf) counts as missing. Any other
column enters as categories (compared as in the tables), one indicator per level present in the
stacked data but the first, a missing value being a level of its own. A term that is constant or
a combination of others is dropped before fitting (k counts what is left, as synthpop's count of
non-NA coefficients); when the model separates some rows perfectly, the likelihood has no
maximum and the propensities of those rows tend to 0 or 1: the fit stops when the likelihood no
longer grows and reports those limits.
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd

from sdc_core.data.columns import compare_keys, is_date, is_number
from sdc_core.data.decoded import size_text
from sdc_core.errors import SdcInputError
from sdc_core.methods.banding import measured
from sdc_core.utility.formula import design_allowance

#: Largest propensity model :func:`pmse` fits (parameters, intercept included); synthpop's
#: ``max.params`` is 400, but the design here is dense: a row of k per distinct stacked row.
MAX_PARAMS = 100


@dataclass(frozen=True)
class TableResult:
    """One 1- or 2-way table compared (module docstring)."""

    columns: tuple[Hashable, ...]
    tvd: float
    hellinger: float
    false_zeros: int
    false_nonzeros: int

    def to_json(self) -> dict[str, Any]:
        return {"columns": list(self.columns), "tvd": self.tvd, "hellinger": self.hellinger,
                "false_zeros": self.false_zeros, "false_nonzeros": self.false_nonzeros}


@dataclass(frozen=True)
class PmseResult:
    """pMSE and S_pMSE of the stacked tables (module docstring): ``k`` model parameters
    (intercept included), ``c`` the protected share, ``n`` = N the stacked rows."""

    pmse: float
    s_pmse: float
    k: int
    c: float
    n: int

    def to_json(self) -> dict[str, Any]:
        return {"pmse": self.pmse, "s_pmse": self.s_pmse, "k": self.k, "c": self.c,
                "n": self.n}


def _check(original: pd.DataFrame, protected: pd.DataFrame,
           columns: Sequence[Hashable]) -> list[Hashable]:
    """The distinct ``columns``, each in both tables, both tables with rows."""
    cols = list(dict.fromkeys(columns))
    missing = [str(c) for c in cols if c not in original.columns or c not in protected.columns]
    if missing:
        raise SdcInputError(f"column(s) not in both tables: {', '.join(missing)}")
    for name, df in (("original", original), ("protected", protected)):
        if len(df) == 0:
            raise SdcInputError(f"the {name} table has no rows")
    return cols


def _as_float(s: pd.Series) -> np.ndarray:
    """Numbers, or dates as nanoseconds, as floats; missing and non-finite values NaN."""
    if is_date(s):
        ns = s.to_numpy(dtype="datetime64[ns]", na_value=np.datetime64("NaT"))
        out = ns.astype(np.int64).astype(np.float64)
        out[np.isnat(ns)] = np.nan
        return out
    out = s.to_numpy(dtype=np.float64, na_value=np.nan)
    return np.where(np.isfinite(out), out, np.nan)


def _measured(x: pd.Series, y: pd.Series) -> bool:
    """Whether both columns hold numbers, or both dates: measured values that can be binned and
    enter a model as one term."""
    return (is_number(x) and is_number(y)) or (is_date(x) and is_date(y))


class ColumnCoder:
    """A column x of the original, ready to code protected columns y alike (module docstring):
    the quantile edges of x and its bin codes when it is binned, its factorised values
    otherwise, each made once (the first time it is needed)."""

    def __init__(self, x: pd.Series, bins: int = 10, binned: bool | None = None) -> None:
        self.x, self.bins, self._wanted = x, bins, binned
        self._bins: tuple[np.ndarray, np.ndarray] | None = None
        self._factors: tuple[np.ndarray, pd.Series] | None = None

    def codes(self, y: pd.Series) -> tuple[np.ndarray, np.ndarray, int]:
        """The cell codes of x and y and their number (missing the last code)."""
        if _measured(self.x, y) and self.binned():
            return self._bin_codes(y)
        return self._category_codes(y)

    def binned(self) -> bool:
        """Whether x is cut into bins (by default: more than ``bins`` distinct values)."""
        if self._wanted is None:
            self._wanted = bool(pd.Series(_as_float(self.x)).nunique() > self.bins)
        return self._wanted

    def _bin_codes(self, y: pd.Series) -> tuple[np.ndarray, np.ndarray, int]:
        """Codes of the bins of x and y: the interior empirical quantiles of x as edges."""
        if self._bins is None:
            a = _as_float(self.x)
            present = a[~np.isnan(a)]
            edges = np.unique(np.quantile(present, np.arange(1, self.bins) / self.bins,
                                          method="inverted_cdf")) \
                if len(present) else np.empty(0)
            self._bins = edges, _cut(a, edges)
        edges, a = self._bins
        return a, _cut(_as_float(y), edges), len(edges) + 2

    def _category_codes(self, y: pd.Series) -> tuple[np.ndarray, np.ndarray, int]:
        """Codes 0…L−1 of the values of x and y over the union of their values, compared by
        what they are (the distinct values of each side are compared, not every row); missing
        is the code L−1."""
        if self._factors is None:
            cx, ux = pd.factorize(self.x, use_na_sentinel=True)
            self._factors = cx, pd.Series(ux)
        cx, ux = self._factors
        cy, uy = pd.factorize(y, use_na_sentinel=True)
        a, b = compare_keys(ux, pd.Series(uy))
        keys, uniques = pd.factorize(np.concatenate([a, b]))
        missing = len(uniques)
        return (np.append(keys[:len(a)], missing)[cx], np.append(keys[len(a):], missing)[cy],
                missing + 1)


def _cut(v: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """The bin of each value (intervals closed on the right, the outer two open), missing the
    code after the last bin."""
    return np.where(np.isnan(v), len(edges) + 1, np.searchsorted(edges, v, side="left"))


def table_codes(original: pd.DataFrame, protected: pd.DataFrame, c: Hashable, bins: int = 10,
                numeric: Sequence[Hashable] | None = None) -> tuple[np.ndarray, np.ndarray, int]:
    """The cell codes of column ``c`` in both tables and their number (module docstring: a
    quantile bin of the original, or a value compared by what it is; missing the last code)."""
    return ColumnCoder(original[c], bins, None if numeric is None else c in numeric
                       ).codes(protected[c])


def _compare(a: np.ndarray, b: np.ndarray, columns: tuple[Hashable, ...]) -> TableResult:
    """The table of counts ``a`` (original) against ``b`` (protected), A and B their totals,
    computed so that tables of equal shares give exactly 0 and disjoint ones exactly 1:
    TVD = Σ |a·B − b·A| / (2·A·B) in whole numbers, and
    H² = ½ Σ_both (√(a/A) − √(b/B))² + ½ (Σ_only a / A + Σ_only b / B), which is
    ½ Σ (√p − √p′)² = 1 − Σ √(p·p′) split into the cells with counts on both sides and the
    cells with counts on one side only."""
    big_a, big_b = int(a.sum()), int(b.sum())
    both, only_a, only_b = (a > 0) & (b > 0), (a > 0) & (b == 0), (a == 0) & (b > 0)
    squared = 0.5 * float(((np.sqrt(a[both] / big_a) - np.sqrt(b[both] / big_b)) ** 2).sum()) \
        + 0.5 * (int(a[only_a].sum()) / big_a + int(b[only_b].sum()) / big_b)
    return TableResult(columns,
                       float(np.abs(a * big_b - b * big_a).sum()) / (2.0 * big_a * big_b),
                       float(np.sqrt(min(1.0, squared))), int(only_a.sum()), int(only_b.sum()))


def _joint(a1: np.ndarray, a2: np.ndarray, b1: np.ndarray, b2: np.ndarray, levels: int
           ) -> tuple[np.ndarray, np.ndarray]:
    """Counts of the pairs (a1, a2) of the original and (b1, b2) of the protected over the same
    cells: dense when the grid is at most twice the rows, else over the pairs that occur."""
    ja, jb = a1 * levels + a2, b1 * levels + b2
    cells = int(max(ja.max(), jb.max())) + 1
    if cells <= 2 * (len(ja) + len(jb)):
        return np.bincount(ja, minlength=cells), np.bincount(jb, minlength=cells)
    _, inverse = np.unique(np.concatenate([ja, jb]), return_inverse=True)
    width = int(inverse.max()) + 1
    return (np.bincount(inverse[:len(ja)], minlength=width),
            np.bincount(inverse[len(ja):], minlength=width))


def table_fidelity(original: pd.DataFrame, protected: pd.DataFrame, columns: Sequence[Hashable],
                   bins: int = 10, numeric: Sequence[Hashable] | None = None,
                   involving: Collection[Hashable] | None = None) -> list[TableResult]:
    """Every 1-way and 2-way table of ``columns`` compared (module docstring), the worst first
    (largest TVD, then largest Hellinger distance; otherwise 1-way tables first, in the order of
    ``columns``). ``bins``: the number of quantile intervals of a binned column; ``numeric``:
    the columns to bin (each binned only if it holds numbers, or dates, in both tables; default:
    those of them with more than ``bins`` distinct values in the original); ``involving``:
    only the tables of which one of these columns is a margin (default: all). Band labels
    count as their midpoints (:func:`sdc_core.methods.banding.measured`)."""
    protected = measured(original, protected)
    if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)) or bins < 2:
        raise SdcInputError(f"bins must be a whole number of at least 2, not {bins!r}")
    cols = _check(original, protected, columns)
    unknown = [str(c) for c in (numeric or ()) if c not in cols]
    if unknown:
        raise SdcInputError(f"numeric column(s) not among the chosen columns: "
                            f"{', '.join(unknown)}")
    return compare_tables({c: table_codes(original, protected, c, int(bins), numeric)
                           for c in cols}, involving)


def compare_tables(codes: dict[Hashable, tuple[np.ndarray, np.ndarray, int]],
                   involving: Collection[Hashable] | None = None) -> list[TableResult]:
    """The 1- and 2-way tables of the columns of ``codes`` (each :func:`table_codes`) compared,
    only those with a margin in ``involving`` when it is given, the worst first."""
    wanted = set(codes) if involving is None else set(involving)
    out = [_compare(np.bincount(a, minlength=n), np.bincount(b, minlength=n), (c,))
           for c, (a, b, n) in codes.items() if c in wanted]
    for c1, c2 in combinations(codes, 2):
        if c1 not in wanted and c2 not in wanted:
            continue
        (a1, b1, _), (a2, b2, n2) = codes[c1], codes[c2]
        out.append(_compare(*_joint(a1, a2, b1, b2, n2), (c1, c2)))
    return worst_first(out, list(codes))


def worst_first(tables: list[TableResult], columns: Sequence[Hashable]) -> list[TableResult]:
    """The tables by largest TVD, then largest Hellinger distance, then 1-way before 2-way and
    in the order of ``columns`` (the order they are enumerated in)."""
    at = {c: i for i, c in enumerate(columns)}
    return sorted(tables, key=lambda r: (-r.tvd, -r.hellinger, len(r.columns),
                                         [at[c] for c in r.columns]))


# --- pMSE --------------------------------------------------------------------------------------

def _sources(x: pd.Series, y: pd.Series) -> tuple[np.ndarray, np.ndarray | None]:
    """One column on the stacked rows: (codes of its distinct values, missing included, and
    its values as floats when it is measured, else None)."""
    if _measured(x, y):
        v = np.concatenate([_as_float(x), _as_float(y)])
        codes = pd.factorize(v, use_na_sentinel=True)[0]
        return np.where(codes < 0, codes.max() + 1, codes), v
    a, b, _ = ColumnCoder(x).codes(y)  # not measured: compared as categories
    return np.concatenate([a, b]), None


def _block(codes: np.ndarray, values: np.ndarray | None) -> np.ndarray:
    """The model columns of one column on some rows (module docstring): a measured column
    centred and scaled (0 where missing) with an indicator of missing values if there is one; a
    categorical one an indicator per level present but the first."""
    if values is not None:
        gone = np.isnan(values)
        kept = values[~gone]
        sd = kept.std() if len(kept) else 0.0
        centred = np.where(gone, 0.0, (values - (kept.mean() if len(kept) else 0.0))
                           / (sd if sd > 0 else 1.0))
        return np.column_stack([centred, gone]) if gone.any() else centred[:, None]
    levels = np.unique(codes)
    out = np.zeros((len(codes), len(levels) - 1))
    rows = np.flatnonzero(codes != levels[0])
    out[rows, np.searchsorted(levels, codes[rows]) - 1] = 1.0
    return out


def _patterns(sources: list[tuple[np.ndarray, np.ndarray | None]]) -> np.ndarray:
    """Which rows have the same values in every column: a code per row, 0, 1, … in the order
    of first appearance (done as soon as every row is a pattern of its own)."""
    key = np.zeros(len(sources[0][0]), dtype=np.int64)
    for codes, _ in sources:
        key = pd.factorize(key * (int(codes.max()) + 1) + codes)[0]
        if key.max() == len(key) - 1:
            break
    return key


def _independent(X: np.ndarray, tol: float = 1e-9) -> np.ndarray:
    """The indices of a set of columns of X, first ones first, that spans its columns: a column
    is kept when its part orthogonal to the kept ones is more than ``tol`` of its length
    (an incremental Cholesky factor of the normalised Gram matrix)."""
    gram = X.T @ X
    d = np.sqrt(np.diag(gram))
    keep: list[int] = []
    factor = np.zeros((X.shape[1], X.shape[1]))
    for j in np.flatnonzero(d > 0):
        g = gram[keep, j] / (d[keep] * d[j])
        z = np.linalg.solve(factor[:len(keep), :len(keep)], g) if keep else g
        rest = 1.0 - float(z @ z)
        if rest > tol:
            factor[len(keep), :len(keep)] = z
            factor[len(keep), len(keep)] = np.sqrt(rest)
            keep.append(int(j))
    return np.array(keep)


def _expit(eta: np.ndarray) -> np.ndarray:
    """1 / (1 + e^−η) (which is 0 where e^−η overflows)."""
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-eta))


def _log_likelihood(eta: np.ndarray, ones: np.ndarray, rows: np.ndarray) -> float:
    return float((ones * eta - rows * np.logaddexp(0.0, eta)).sum())


def _fit(X: np.ndarray, ones: np.ndarray, rows: np.ndarray, c: float, max_iter: int = 100
         ) -> np.ndarray:
    """Fitted propensities of the logistic model t ~ X on grouped rows (``rows`` rows with the
    design row X_g, ``ones`` of them with t = 1) by Newton's method from the null model
    (intercept logit c), halving a step that lowers the likelihood; stops when a step moves no
    coefficient by more than 1e-10 or no longer raises the log-likelihood by more than 1e-13
    of it (a separated fit)."""
    beta = np.zeros(X.shape[1])
    beta[0] = np.log(c / (1.0 - c))
    eta = X @ beta
    ll = _log_likelihood(eta, ones, rows)
    for _ in range(max_iter):
        p = _expit(eta)
        root = X * np.sqrt(rows * p * (1.0 - p))[:, None]
        step = np.linalg.lstsq(root.T @ root, X.T @ (ones - rows * p), rcond=None)[0]
        size = 1.0
        while True:
            new_eta = X @ (beta + size * step)
            new_ll = _log_likelihood(new_eta, ones, rows)
            if new_ll >= ll or size < 1e-6:
                break
            size /= 2
        gain = new_ll - ll
        if new_ll >= ll:
            beta, eta, ll = beta + size * step, new_eta, new_ll
        if np.abs(size * step).max() < 1e-10 or gain <= 1e-13 * abs(ll):
            break
    return _expit(eta)


def pmse(original: pd.DataFrame, protected: pd.DataFrame, columns: Sequence[Hashable],
         max_params: int = MAX_PARAMS) -> PmseResult:
    """pMSE and S_pMSE of a logistic propensity model with main effects of ``columns`` on the
    stacked tables (module docstring: the model terms, the reading of S_pMSE). The model is
    fitted on the distinct rows, each with its number of rows and of protected ones (synthpop's
    ``aggregate = TRUE``: the same fit). A model of more than ``max_params`` parameters is
    refused, naming the column that needs the most, and so is one whose design on the distinct
    rows would take more than a model may (:func:`~sdc_core.utility.formula.design_allowance`).
    Band labels count as their midpoints (:func:`sdc_core.methods.banding.measured`)."""
    protected = measured(original, protected)
    cols = _check(original, protected, columns)
    n0, n1 = len(original), len(protected)
    n = n0 + n1
    c = n1 / n
    sources = [_sources(original[col], protected[col]) for col in cols]
    widths = [1 + bool(np.isnan(v).any()) if v is not None else len(np.unique(codes)) - 1
              for codes, v in sources]
    if 1 + sum(widths) > max_params:
        widest = int(np.argmax(widths))
        raise SdcInputError(f"the propensity model would have {1 + sum(widths)} parameters, "
                            f"more than {max_params}; column '{cols[widest]}' alone needs "
                            f"{widths[widest]}: leave it out or recode it")
    pattern = _patterns(sources)
    # the codes come in the order of first appearance: a row opens a pattern where they rise
    first = np.flatnonzero(np.diff(np.maximum.accumulate(pattern), prepend=-1) > 0)
    need, allowance = 8 * len(first) * (1 + sum(widths)), design_allowance()
    if need > allowance:
        widest = int(np.argmax(widths))
        raise SdcInputError(f"the propensity model's design would take about {size_text(need)}"
                            f" ({len(first):,} distinct rows × {1 + sum(widths)} parameters), "
                            f"more than the {size_text(allowance)} a model may use; column "
                            f"'{cols[widest]}' needs {widths[widest]}: leave it out or recode it")
    rows = np.bincount(pattern).astype(np.float64)
    ones = np.bincount(pattern[n0:], minlength=len(first)).astype(np.float64)
    X = np.column_stack([np.ones(len(first))]
                        + [_block(codes[first], None if v is None else v[first])
                           for codes, v in sources])
    X = X[:, _independent(X)]
    k = X.shape[1]
    if k < 2:
        raise SdcInputError("pMSE needs a column that varies: the chosen columns take one "
                            "value in both tables")
    value = float((rows * (_fit(X, ones, rows, c) - c) ** 2).sum() / n)
    return PmseResult(value, value / ((k - 1) * (1.0 - c) ** 2 * c / n), k, c, n)
