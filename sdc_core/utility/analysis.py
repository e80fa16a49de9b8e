"""Benchmark analyses (docs/utility.md): a data user's own estimates, made on the original
table x and on the protected table x′, compared term by term.

A spec (:func:`parse_spec`) lists analyses of five kinds, each estimated at confidence level
1 − α (``confidence``, 0.95 by default); its optional ``columns``, ``bins`` and ``pmse`` set the
table and propensity-score comparison of :mod:`sdc_core.utility.validity`:

```json
{"confidence": 0.95, "analyses": [
  {"name": "earnings model", "kind": "ols", "formula": "re78 ~ age + educ + C(ethn) + married"},
  {"name": "treated", "kind": "logit", "formula": "treat ~ age + educ"},
  {"name": "mean income by region", "kind": "mean", "column": "income", "by": "region",
   "weight": "w"},
  {"name": "share married", "kind": "proportion", "column": "married", "by": "ethn"},
  {"name": "ethn × married", "kind": "table", "columns": ["ethn", "married"]}],
 "columns": ["age", "educ", "ethn", "married"], "bins": 10, "pmse": true}
```

- ``ols`` / ``logit``: a formula of the project's own language (docs/formulas.md,
  :mod:`sdc_core.utility.formula`: parsed before anything is evaluated, its design matrix
  bounded before it is built), its design matrix built by patsy from the parsed formula and
  fitted by statsmodels, with its
  model-based intervals ``conf_int(α)`` (t with the residual degrees of freedom for OLS, normal
  for the logit). Rows with a missing value in a variable of the formula are left out
  (listwise deletion, before the levels of a factor are read), and their number is reported.
  An OLS whose formula calls only functions of one row's values is fitted on the distinct
  rows of its right-hand side (:func:`_ols_grouped`: the same least-squares problem, with the
  same estimates, standard errors and intervals as statsmodels' fit on every row). Terms are
  named as patsy names them
  (``C(treat)[T.1]``); a plain ``C(x)`` is handed to patsy as a pandas categorical (the same
  design, 4× faster on 100k rows);
- ``mean`` of a numeric ``column``, overall or per level of ``by``, weighted by ``weight`` or
  not: the ratio (Hájek) estimator ȳ = Σ w_i y_i / Σ w_i with its linearisation standard error
  for a one-stage design without strata, drawn with replacement (R survey's ``svymean``):

      se² = n/(n − 1) · Σ_i [w_i (y_i − ȳ)]² / (Σ_i w_i)²

  and the interval ȳ ± t_{n−1; 1−α/2} · se. Unweighted (w_i = 1) this is s²/n, the textbook
  s/√n. Each group of ``by`` is estimated as a sample of its own (n its rows); survey's domain
  estimator differs only by the factor n(n_g − 1)/[(n − 1)n_g], close to 1. Rows missing the
  column, the group or the weight are left out; weights must be ≥ 0 with a positive total;
- ``proportion``: the share of each level of ``column`` (overall or per group), the mean above
  of the indicator 1[value = level], with the same standard error and interval (unweighted,
  √(p(1 − p)/(n − 1))). The levels of a group are those it holds on that side;
- ``table``: the shares of the cells of the cross-classification of ``columns`` (rows with a
  missing value left out; at most :data:`MAX_TABLE_CELLS` cells occurring), compared as a
  whole by the total variation distance TVD = ½ Σ |p − p′| and the Hellinger distance
  H = √(1 − Σ √(p·p′)) over the union of the cells (½-convention, synthpop's ``dBhatt``). A
  table has no intervals.

Levels and groups are named by what their values are (:func:`sdc_core.data.columns.canonical`), so
codes 1, 2 recoded to the text "1", "2" name the same terms.

Each term present on both sides is compared by

- the **CI overlap** (Karr et al. 2006, as synthpop computes it), with L = max(L_o, L_p) and
  U = min(U_o, U_p):  J = ½ [(U − L)/(U_o − L_o) + (U − L)/(U_p − L_p)], not truncated: 1 for
  identical intervals, negative when they are disjoint; NaN when an interval is missing or has
  zero width (a group of one row, a share of 1, a constant column), and such terms are left out
  of the mean;
- the **standardised difference** (θ_p − θ_o)/se_o;
- whether θ_o lies in [L_p, U_p].

A term estimated on one side only (a level suppressed or recoded away by the protection, or a
new level such as "other") is reported with the other side's figures NaN, its overlap 0 (no
interval in common: the analysis does not reproduce it), counted as 0 in the mean CI overlap,
and θ_o not in the protected interval.

An analysis that cannot be estimated on one side (a column missing or no longer numeric, no row
left after deletion, collinear terms, perfect separation or no convergence of the logit) raises
:class:`~sdc_core.errors.SdcInputError` from :func:`estimate`; :func:`compare_analyses` keeps
the others and reports that one with no terms and its ``error`` ("original: …" or
"protected: …").

The original side does not depend on the protection: :func:`estimate_all` it once and pass it to
:func:`compare_analyses` on every new protected table.
"""

from __future__ import annotations

import functools
import math
import numbers
import warnings
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
import pandas as pd
import patsy
import patsy.builtins
from numpy.typing import ArrayLike
from scipy import stats
from statsmodels.discrete.discrete_model import Logit
from statsmodels.regression.linear_model import OLS
from statsmodels.tools.sm_exceptions import ConvergenceWarning, PerfectSeparationWarning

from sdc_core.data.columns import canonical_values, is_number, storage
from sdc_core.errors import SdcInputError
from sdc_core.methods.banding import measured
from sdc_core.utility.formula import (
    DesignBound,
    Formula,
    check_design,
    namespace,
    parse_formula,
)

#: The keys each kind of analysis requires and those it may carry, besides name and kind.
KINDS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "ols": (frozenset({"formula"}), frozenset()),
    "logit": (frozenset({"formula"}), frozenset()),
    "mean": (frozenset({"column"}), frozenset({"by", "weight"})),
    "proportion": (frozenset({"column"}), frozenset({"by", "weight"})),
    "table": (frozenset({"columns"}), frozenset()),
}
DEFAULT_CONFIDENCE = 0.95
#: The most cells a table analysis may have (each is a term of its comparison).
MAX_TABLE_CELLS = 10_000


@dataclass(frozen=True)
class Analysis:
    """One benchmark analysis of a spec (module docstring)."""

    name: str
    kind: str
    formula: str | None = None
    column: str | None = None
    by: str | None = None
    weight: str | None = None
    columns: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.formula is not None:
            parsed_formula(self.formula, f"analysis '{self.name}'")

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "kind": self.kind}
        for key in ("formula", "column", "by", "weight"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        if self.columns:
            out["columns"] = list(self.columns)
        return out


@dataclass(frozen=True)
class AnalysisSpec:
    """A validated spec of benchmark analyses (made by :func:`parse_spec`).

    The analyses and, for :mod:`sdc_core.utility.validity`, the columns of the table-fidelity and
    pMSE comparison (None: the columns the analyses read), the quantile bins of a numeric one,
    and whether the propensity model is fitted.

    Parameters
    ----------
    confidence : float
        The confidence level of the intervals.
    analyses : tuple of Analysis
        The analyses (each with ``name``, ``kind`` and what it reads).
    columns : tuple of str, optional
        The columns of the 1- and 2-way tables and the propensity model.
    bins : int, default 10
        Quantile bins of a numeric table column.
    pmse : bool, default True
        Fit the propensity model.

    Examples
    --------
    >>> from sdc_core import example, parse_spec
    >>> spec = parse_spec(example("actg175").analyses)
    >>> spec.table_columns()
    ['cd420', 'age', 'treat', 'cd40', 'race', 'gender', 'arms']
    >>> parse_spec(spec.to_json()) == spec
    True
    """

    confidence: float
    analyses: tuple[Analysis, ...]
    columns: tuple[str, ...] | None = None
    bins: int = 10
    pmse: bool = True

    def table_columns(self) -> list[str]:
        """The columns whose 1- and 2-way tables (and propensity model) are compared."""
        if self.columns is not None:
            return list(self.columns)
        return list(dict.fromkeys(c for a in self.analyses for c in analysis_columns(a)))

    def to_json(self) -> dict[str, Any]:
        """The spec as its file holds it (what :func:`parse_spec` reads back)."""
        out: dict[str, Any] = {"confidence": self.confidence,
                               "analyses": [a.to_json() for a in self.analyses]}
        if self.columns is not None:
            out["columns"] = list(self.columns)
        if self.bins != 10:
            out["bins"] = self.bins
        if not self.pmse:
            out["pmse"] = False
        return out


@dataclass(frozen=True)
class Estimate:
    """One analysis on one table: per term (the index, in the analysis's order) the estimate,
    its standard error and interval (NaN for a table's cells), and the rows left out."""

    terms: pd.DataFrame
    dropped: int


@dataclass(frozen=True)
class TermResult:
    term: str
    original: float
    original_low: float
    original_high: float
    protected: float
    protected_low: float
    protected_high: float
    ci_overlap: float
    std_diff: float
    #: None for a table's cells (no intervals)
    original_in_protected_ci: bool | None

    def to_json(self) -> dict[str, Any]:
        return {k: _plain(v) for k, v in self.__dict__.items()}


@dataclass(frozen=True)
class AnalysisResult:
    """One analysis compared (module docstring); ``tvd`` and ``hellinger`` for tables only,
    ``error`` when a side could not be estimated (then no terms)."""

    name: str
    kind: str
    terms: list[TermResult] = field(default_factory=list)
    mean_ci_overlap: float = math.nan
    dropped_original: int = 0
    dropped_protected: int = 0
    tvd: float | None = None
    hellinger: float | None = None
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The issue's keys (NaN written as null): name, kind, terms, mean_ci_overlap, the rows
        each side left out (listwise deletion); tvd and hellinger for a table; error only when
        there is one."""
        out: dict[str, Any] = {"name": self.name, "kind": self.kind,
                               "terms": [t.to_json() for t in self.terms],
                               "mean_ci_overlap": _plain(self.mean_ci_overlap),
                               "dropped_original": self.dropped_original,
                               "dropped_protected": self.dropped_protected}
        if self.kind == "table":
            out |= {"tvd": _plain(self.tvd), "hellinger": _plain(self.hellinger)}
        if self.error is not None:
            out["error"] = self.error
        return out


def _plain(v: Any) -> Any:
    """A JSON value: NaN → None, numpy scalars → Python ones."""
    if isinstance(v, (float, np.floating)):
        return None if math.isnan(v) else float(v)
    return v.item() if isinstance(v, np.generic) else v


# -- the spec -------------------------------------------------------------------------------


def parse_spec(data: Any) -> AnalysisSpec:
    """The validated spec of benchmark analyses (module docstring).

    A spec is ``{"confidence": 0.95, "analyses": [{"name", "kind", …}]}``, optionally with the
    ``columns`` of the table-fidelity and pMSE comparison, their ``bins`` and ``pmse``.

    Parameters
    ----------
    data : dict
        The spec as its file holds it.

    Returns
    -------
    AnalysisSpec
        The validated spec.

    Raises
    ------
    SdcInputError
        A one-line error naming the analysis and the problem: not an object with a list
        ``analyses``, an unknown key, a confidence not in (0, 1), an empty or duplicate analysis,
        a bad formula, kind or column list, ``bins`` not from 2 to 100.

    Examples
    --------
    >>> from sdc_core import example, parse_spec
    >>> spec = parse_spec(example("actg175").analyses)
    >>> [a.name for a in spec.analyses], spec.confidence
    (['CD4 at 20 weeks', 'mean CD4 at 20 weeks by arm'], 0.95)
    >>> parse_spec({"analyses": []})
    Traceback (most recent call last):
    ...
    sdc_core.errors.SdcInputError: analysis spec: 'analyses' must be a non-empty list
    """
    if not isinstance(data, Mapping):
        raise SdcInputError("an analysis spec must be an object with a list 'analyses'")
    unknown = sorted(map(str, set(data) - {"confidence", "analyses", "columns", "bins",
                                           "pmse"}))
    if unknown:
        raise SdcInputError(f"analysis spec: unknown key(s) {', '.join(map(str, unknown))}")
    confidence = data.get("confidence", DEFAULT_CONFIDENCE)
    if not (isinstance(confidence, numbers.Real) and not isinstance(confidence, bool)
            and 0 < cast(float, confidence) < 1):
        raise SdcInputError(f"analysis spec: confidence must be a number between 0 and 1 "
                            f"(exclusive), not {confidence!r}")
    items = data.get("analyses")
    if not isinstance(items, list) or not items:
        raise SdcInputError("analysis spec: 'analyses' must be a non-empty list")
    analyses = [_parse_analysis(i, item) for i, item in enumerate(items)]
    seen: set[str] = set()
    for a in analyses:
        if a.name in seen:
            raise SdcInputError(f"analysis '{a.name}': duplicate name")
        seen.add(a.name)
    columns = data.get("columns")
    if columns is not None and not (isinstance(columns, list) and columns and all(
            isinstance(c, str) and c for c in columns) and len(set(columns)) == len(columns)):
        raise SdcInputError("analysis spec: columns must be a non-empty list of distinct "
                            "column names")
    bins = data.get("bins", 10)
    if isinstance(bins, bool) or not isinstance(bins, int) or not 2 <= bins <= 100:
        raise SdcInputError(f"analysis spec: bins must be a whole number from 2 to 100, "
                            f"not {bins!r}")
    with_pmse = data.get("pmse", True)
    if not isinstance(with_pmse, bool):
        raise SdcInputError("analysis spec: pmse must be true or false")
    return AnalysisSpec(float(confidence), tuple(analyses),
                        None if columns is None else tuple(columns), bins, with_pmse)


def _parse_analysis(i: int, item: Any) -> Analysis:
    if not isinstance(item, Mapping):
        raise SdcInputError(f"analysis {i + 1}: must be an object with a name and a kind")
    name = item.get("name")
    if not isinstance(name, str) or not name.strip() or not name.isprintable():
        raise SdcInputError(f"analysis {i + 1}: " + ("missing key name" if name is None
                                                     else "name must be non-empty printable "
                                                     "text"))
    where = f"analysis '{name}'"
    kind = item.get("kind")
    if kind not in KINDS:
        raise SdcInputError(f"{where}: " + ("missing key kind" if kind is None else
                                            f"unknown kind {kind!r}; expected one of "
                                            f"{', '.join(KINDS)}"))
    required, optional = KINDS[kind]
    keys = set(item) - {"name", "kind"}
    unknown = sorted(map(str, keys - required - optional))
    if unknown:
        raise SdcInputError(f"{where}: unknown key(s) {', '.join(unknown)} for kind {kind}")
    if required - keys:
        raise SdcInputError(f"{where}: missing key(s) {', '.join(sorted(required - keys))}")
    for key in keys - {"columns"}:
        if not isinstance(item[key], str) or not item[key].strip():
            raise SdcInputError(f"{where}: {key} must be non-empty text")
    if kind == "table":
        columns = item["columns"]
        if not (isinstance(columns, list) and columns
                and all(isinstance(c, str) and c for c in columns)):
            raise SdcInputError(f"{where}: columns must be a non-empty list of column names")
        if len(set(columns)) < len(columns):
            raise SdcInputError(f"{where}: a column is named twice in columns")
        return Analysis(name, kind, columns=tuple(columns))
    if "formula" in item:
        formula_variables(item["formula"], where)
    return Analysis(name, kind, formula=item.get("formula"), column=item.get("column"),
                    by=item.get("by"), weight=item.get("weight"))


def parsed_formula(formula: str, where: str = "formula") -> Formula:
    """``formula`` read by the formula language's parser (:func:`parse_formula`), its error
    prefixed with ``where``."""
    try:
        return parse_formula(formula)
    except SdcInputError as err:
        raise SdcInputError(f"{where}: {err}") from None


def formula_variables(formula: str, where: str = "formula") -> list[str]:
    """The columns a formula reads, in order of appearance (not the functions it calls)."""
    return parsed_formula(formula, where).columns


def _categorical(data: Any, contrast: Any = None, levels: Any = None) -> Any:
    """patsy's ``C``; plain ``C(x)`` of a column gives patsy the column as a pandas
    categorical (levels its sorted distinct values, as patsy takes them, treatment coding): the
    same design matrix, without patsy's look at every value one by one (0.2 s on 100k rows)."""
    if contrast is None and levels is None and isinstance(data, pd.Series) \
            and (is_number(data) or isinstance(data.dtype, pd.CategoricalDtype)):
        return data.astype("category")
    return patsy.builtins.C(data, contrast, levels)


#: All that the written-out code of a parsed formula may name (:func:`namespace`).
_FORMULA_ENV = patsy.EvalEnvironment([namespace(_categorical)])


def analysis_columns(analysis: Analysis) -> list[str]:
    """The columns ``analysis`` reads (for a formula, the variables it uses)."""
    if analysis.formula is not None:
        return formula_variables(analysis.formula, f"analysis '{analysis.name}'")
    named = [analysis.column, analysis.by, analysis.weight, *analysis.columns]
    return list(dict.fromkeys(c for c in named if c is not None))


def check_columns(spec: AnalysisSpec, columns: Collection[str]) -> None:
    """An error naming the first analysis that reads columns the data lacks, and those
    columns (or the spec's table columns the data lacks)."""
    for analysis in spec.analyses:
        _check_analysis_columns(analysis, columns)
    missing = [c for c in spec.columns or () if c not in set(columns)]
    if missing:
        raise SdcInputError(f"analysis spec: the data has no column(s) {_names(missing)}")


def _names(columns: list[str]) -> str:
    """Column names for a one-line message: as they are when printable, else quoted with their
    control characters escaped."""
    return ", ".join(c if c.isprintable() else repr(c) for c in columns)


def _check_analysis_columns(analysis: Analysis, columns: Collection[str]) -> None:
    known = set(columns)
    missing = [c for c in analysis_columns(analysis) if c not in known]
    if missing:
        raise SdcInputError(f"analysis '{analysis.name}': the data has no column(s) "
                            f"{_names(missing)}")


# -- estimation on one table ----------------------------------------------------------------


def estimate(analysis: Analysis, df: pd.DataFrame, confidence: float = DEFAULT_CONFIDENCE
             ) -> Estimate:
    """``analysis`` on ``df`` at level ``confidence`` (module docstring), or an
    :class:`SdcInputError` saying why it cannot be estimated."""
    _check_analysis_columns(analysis, df.columns)
    if analysis.kind in ("ols", "logit"):
        return _fit_formula(analysis, df, 1 - confidence)
    if analysis.kind == "table":
        return _table_shares(analysis, df)
    return _weighted_means(analysis, df, confidence)


def estimate_all(spec: AnalysisSpec, df: pd.DataFrame) -> dict[str, Estimate | SdcInputError]:
    """Every analysis of ``spec`` on ``df``, by name: its :class:`Estimate`, or the error that
    stopped it."""
    out: dict[str, Estimate | SdcInputError] = {}
    for analysis in spec.analyses:
        try:
            out[analysis.name] = estimate(analysis, df, spec.confidence)
        except SdcInputError as err:
            out[analysis.name] = err
    return out


def _fit_formula(analysis: Analysis, df: pd.DataFrame, alpha: float) -> Estimate:
    """An OLS or logit of the parsed formula: the design bounded (:func:`check_design`), built
    by patsy from the written-out formula in :data:`_FORMULA_ENV`, fitted by statsmodels."""
    where = f"analysis '{analysis.name}'"
    assert analysis.formula is not None  # an OLS or logit has one (parse_spec)
    formula = parsed_formula(analysis.formula, where)
    used = formula.columns
    data = _formula_data(df, used)
    if data.empty:
        raise SdcInputError(f"{where}: no row has all of {', '.join(used)}")
    if analysis.kind == "ols" and formula.row_by_row:
        terms, nobs = _ols_grouped(formula, data, alpha, where)
        return Estimate(terms, len(df) - nobs)
    _check_design(formula, data, len(data), where)
    make = OLS if analysis.kind == "ols" else Logit
    with warnings.catch_warnings():
        warnings.simplefilter("error", PerfectSeparationWarning)
        warnings.simplefilter("error", ConvergenceWarning)
        try:
            y, x = patsy.dmatrices(_model_desc(formula.code), data, _FORMULA_ENV,
                                   NA_action="drop", return_type="dataframe")
            if y.shape[1] != 1:
                raise SdcInputError(f"{where}: the response must be one column of numbers")
            _check_finite(y.to_numpy(), x.to_numpy(), where)
            model = make(y, x)
            _check_rank(model.exog, where)
            result = model.fit(disp=0) if analysis.kind == "logit" else model.fit()
        except SdcInputError:
            raise
        except PerfectSeparationWarning:
            raise SdcInputError(f"{where}: perfect separation, the logit has no finite "
                                "estimate") from None
        except ConvergenceWarning:
            raise SdcInputError(f"{where}: the logit fit did not converge") from None
        except (ValueError, TypeError, RecursionError, np.linalg.LinAlgError,
                patsy.PatsyError) as err:
            raise SdcInputError(f"{where}: cannot fit the model "
                                f"({_first_line(err)})") from None
    interval = result.conf_int(alpha)
    terms = pd.DataFrame({"estimate": result.params, "se": result.bse,
                          "low": interval.iloc[:, 0], "high": interval.iloc[:, 1]})
    return Estimate(terms, len(df) - int(result.nobs))


def _first_line(err: Exception) -> str:
    """An error's first line, at most 200 characters (for a one-line message)."""
    line = (str(err).splitlines() or [type(err).__name__])[0]
    return line if len(line) <= 200 else line[:199] + "…"


def _check_finite(y: np.ndarray, x: np.ndarray, where: str) -> None:
    """An error when the response or a term is infinite on some row (``log(0)``, ``exp`` of a
    large value, a division by 0): such a row has no estimate, and leaving it out would hide
    it."""
    if np.isinf(y).any():
        raise SdcInputError(f"{where}: the response is infinite on some rows (a log of 0, an "
                            "exp of a large value or a division by 0)")
    if np.isinf(x).any():
        raise SdcInputError(f"{where}: a term is infinite on some rows (a log of 0, an exp of "
                            "a large value or a division by 0)")


def _check_design(formula: Formula, data: pd.DataFrame, rows: int, where: str,
                  bound: DesignBound | None = None) -> DesignBound:
    try:
        return check_design(formula, data, rows, bound=bound)
    except SdcInputError as err:
        raise SdcInputError(f"{where}: {err}") from None


@functools.lru_cache(maxsize=256)
def _model_desc(code: str) -> patsy.ModelDesc:
    """patsy's reading of a parsed formula as the parser wrote it out (never of a visitor's
    text), read once (a slider move re-estimates it often)."""
    return patsy.ModelDesc.from_formula(code)


def _check_rank(x: np.ndarray, where: str) -> None:
    """An error when the design matrix ``x`` has dependent columns (its rank is read from the
    p × p matrix x'x, not from an SVD of every row)."""
    rank = int(np.linalg.matrix_rank(x.T @ x, hermitian=True))
    if rank < x.shape[1]:
        raise SdcInputError(f"{where}: the terms are collinear (the design matrix has rank "
                            f"{rank} for {x.shape[1]} columns)")


def _ols_grouped(formula: Formula, data: pd.DataFrame, alpha: float, where: str
                 ) -> tuple[pd.DataFrame, int]:
    """OLS of a formula on the G distinct rows of its right-hand side, with the fit, standard
    errors and t intervals of statsmodels' OLS on every row (the same least-squares problem):
    with n_g the rows of distinct row g, x_g its design row and ȳ_g the mean of their
    responses,

        β = argmin Σ_g n_g (ȳ_g − x_g′β)²  (the pseudo-inverse of the rows √n_g x_g′),
        RSS = Σ_g n_g (ȳ_g − x_g′β)² + Σ_i (y_i − ȳ_g(i))²,   σ² = RSS / (n − p),
        cov(β) = σ² (Σ_g n_g x_g x_g′)⁻¹,   β_j ± t_{n−p; 1−α/2} · se_j.

    On 100k survey rows with a 30-level factor G is a few thousand: the design is built and
    decomposed on those rows, not on every one. Rows whose response or terms evaluate to a
    missing value are left out, as patsy does; returns the terms and the rows used."""
    desc = _model_desc(formula.code)
    env = _FORMULA_ENV
    rhs_vars = [c for c in formula.columns if c not in formula.response.columns
                or any(c in f.columns for t in formula.terms for f in t)]
    try:
        bound = _check_design(formula, data, 0, where)  # the response, the columns on any rows
        y = np.asarray(patsy.dmatrix(patsy.ModelDesc([], desc.lhs_termlist), data, env,
                                     NA_action=patsy.NAAction(NA_types=[]),
                                     return_type="matrix"))
        if y.shape[1] != 1:
            raise SdcInputError(f"{where}: the response must be one column of numbers")
        group = np.zeros(len(data), dtype=np.int64)
        for c in rhs_vars:  # the distinct rows, numbered in the order they first appear
            codes = pd.factorize(data[c])[0]
            group = pd.factorize(group * (int(codes.max()) + 1) + codes)[0]
        first = np.flatnonzero(np.diff(np.maximum.accumulate(group), prepend=-1) > 0)
        _check_design(formula, data, len(first), where, bound)
        design = patsy.dmatrix(patsy.ModelDesc([], desc.rhs_termlist), data.iloc[first], env,
                               NA_action=patsy.NAAction(NA_types=[]), return_type="matrix")
    except SdcInputError:
        raise
    except (ValueError, TypeError, RecursionError, patsy.PatsyError) as err:
        raise SdcInputError(f"{where}: cannot fit the model ({_first_line(err)})") from None
    names = design.design_info.column_names
    x = np.asarray(design)
    y = y[:, 0]
    _check_finite(y, x, where)
    keep = ~np.isnan(y) & ~np.isnan(x).any(axis=1)[group]
    if not keep.any():
        raise SdcInputError(f"{where}: no row has a value of every term")
    g, y = group[keep], y[keep]
    rows = np.bincount(g, minlength=len(first)).astype(np.float64)
    present = rows > 0
    x, counts = x[present], rows[present]
    mean_y = np.bincount(g, weights=y, minlength=len(first))[present] / counts
    n, p = len(y), x.shape[1]
    _check_rank(x * np.sqrt(counts)[:, None], where)
    if n <= p:
        raise SdcInputError(f"{where}: {n} rows for {p} terms: too few to estimate them")
    pinv = np.linalg.pinv(x * np.sqrt(counts)[:, None])
    beta = pinv @ (mean_y * np.sqrt(counts))
    within = y - mean_y[(np.cumsum(present) - 1)[g]]
    rss = float((counts * (mean_y - x @ beta) ** 2).sum() + (within ** 2).sum())
    se = np.sqrt(rss / (n - p) * np.diag(pinv @ pinv.T))
    half = stats.t.ppf(1 - alpha / 2, n - p) * se
    terms = pd.DataFrame({"estimate": beta, "se": se, "low": beta - half, "high": beta + half},
                         index=names)
    return terms, n


def _formula_data(df: pd.DataFrame, used: list[str]) -> pd.DataFrame:
    """The rows of ``df`` with a value in every column ``used`` by a formula (listwise
    deletion, before patsy reads the levels of a factor: a level held only by rows left out is
    no term), text columns as pandas categoricals (patsy reads them as categories either way,
    levels sorted, but a categorical's at once) and categoricals without unused levels."""
    data = df[used]
    cats = [c for c in used if isinstance(data[c].dtype, pd.CategoricalDtype)]
    data = data.assign(**{c: data[c].cat.remove_unused_categories() for c in cats})
    complete = data.notna().all(axis=1)
    if not complete.all():
        data = data[complete]
        data = data.assign(**{c: data[c].cat.remove_unused_categories() for c in cats})
    text = [c for c in used if storage(data[c]) == "text"]
    return data.astype(dict.fromkeys(text, "category")) if text else data


def _weighted_means(analysis: Analysis, df: pd.DataFrame, confidence: float) -> Estimate:
    """The mean (or level shares) and its linearisation interval per group (module
    docstring)."""
    where = f"analysis '{analysis.name}'"
    column = analysis.column
    keep = df[column].notna().to_numpy()
    if analysis.kind == "mean" and not is_number(df[column]):
        raise SdcInputError(f"{where}: column '{column}' is not numeric")
    if analysis.weight is not None:
        if not is_number(df[analysis.weight]):
            raise SdcInputError(f"{where}: weight '{analysis.weight}' is not numeric")
        w = df[analysis.weight].to_numpy(dtype=np.float64, na_value=np.nan)
        if (w < 0).any():
            raise SdcInputError(f"{where}: weight '{analysis.weight}' has negative values")
        keep = keep & ~np.isnan(w)
    else:
        w = np.ones(len(df))
    groups = canonical_values(df[analysis.by]) if analysis.by is not None \
        else np.full(len(df), "", dtype=object)
    keep = keep & pd.notna(groups)
    if not keep.any():
        raise SdcInputError(f"{where}: no row has all of {', '.join(analysis_columns(analysis))}")
    g, w = groups[keep], w[keep]
    if analysis.kind == "mean":
        y = df[column].to_numpy(dtype=np.float64, na_value=np.nan)[keep]
        terms = _group_means(g, w, y, confidence)
        terms.index = [_term_name(analysis, group, None) for group in terms.index]
    else:
        terms = _group_shares(g, w, canonical_values(df[column])[keep], confidence)
        terms.index = [_term_name(analysis, group, level) for group, level in terms.index]
    return Estimate(terms, int((~keep).sum()))


def _group_means(g: np.ndarray, w: np.ndarray, y: np.ndarray, confidence: float
                 ) -> pd.DataFrame:
    """Per group: ȳ = Σwy/Σw and se² = n/(n − 1) · Σ[w(y − ȳ)]²/(Σw)² (module docstring)."""
    rows = pd.DataFrame({"w": w, "wy": w * y})
    by = rows.groupby(g, sort=False)
    total, n = by["w"].sum(), by.size()
    mean = by["wy"].sum() / total
    centred = w * (y - mean.reindex(g).to_numpy())
    squares = pd.Series(centred ** 2).groupby(g, sort=False).sum()
    return _interval(mean, squares, total, n, confidence)


def _group_shares(g: np.ndarray, w: np.ndarray, level: np.ndarray, confidence: float
                  ) -> pd.DataFrame:
    """Per group and level held in the group: p = S/W with S = Σ_level w, W = Σ_group w, and
    Σ[w(1[level] − p)]² = (1 − p)² A + p² (B − A), A = Σ_level w², B = Σ_group w²."""
    rows = pd.DataFrame({"g": g, "level": level, "w": w, "w2": w * w})
    cells = rows.groupby(["g", "level"], sort=False)[["w", "w2"]].sum()
    groups = rows.groupby("g", sort=False)
    total = groups["w"].sum().reindex(cells.index, level="g")
    squared = groups["w2"].sum().reindex(cells.index, level="g")
    n = groups.size().reindex(cells.index, level="g")
    share = cells["w"] / total
    squares = (1 - share) ** 2 * cells["w2"] + share ** 2 * (squared - cells["w2"])
    return _interval(share, squares, total, n, confidence)


def _interval(estimate: pd.Series, squares: pd.Series, total: pd.Series, n: pd.Series,
              confidence: float) -> pd.DataFrame:
    """se = √(n/(n − 1) · squares/total²) and estimate ± t_{n−1; (1+confidence)/2} · se; NaN
    where n < 2 or the total weight is 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        se = np.sqrt(n / (n - 1) * squares / total ** 2).where((n >= 2) & (total > 0))
        half = stats.t.ppf(0.5 + confidence / 2, np.maximum(n - 1, 1)) * se
    estimate = estimate.where(total > 0)
    return pd.DataFrame({"estimate": estimate, "se": se, "low": estimate - half,
                         "high": estimate + half})


def _term_name(analysis: Analysis, group: str, level: str | None) -> str:
    assert analysis.column is not None  # a mean or proportion has one (parse_spec)
    head = analysis.column if level is None else f"{analysis.column}={level}"
    return head if analysis.by is None else f"{head} | {analysis.by}={group}"


def _table_shares(analysis: Analysis, df: pd.DataFrame) -> Estimate:
    keys = pd.DataFrame({i: canonical_values(df[c]) for i, c in enumerate(analysis.columns)})
    keep = keys.notna().all(axis=1).to_numpy()
    if not keep.any():
        raise SdcInputError(f"analysis '{analysis.name}': no row has all of "
                            f"{', '.join(analysis.columns)}")
    counts = keys[keep].groupby(list(keys.columns), sort=False).size()
    if len(counts) > MAX_TABLE_CELLS:
        raise SdcInputError(f"analysis '{analysis.name}': the table has {len(counts):,} cells, "
                            f"more than {MAX_TABLE_CELLS:,}; choose columns with fewer values "
                            "(or recode them)")
    cells = [", ".join(f"{c}={v}" for c, v in zip(analysis.columns, key if isinstance(
        key, tuple) else (key,))) for key in counts.index]
    shares = counts.to_numpy() / keep.sum()
    terms = pd.DataFrame({"estimate": shares, "se": np.nan, "low": np.nan, "high": np.nan},
                         index=cells)
    return Estimate(terms, int((~keep).sum()))


# -- comparison -----------------------------------------------------------------------------


def ci_overlap(original_low: ArrayLike, original_high: ArrayLike, protected_low: ArrayLike,
               protected_high: ArrayLike) -> Any:
    """J = ½ [(U − L)/(U_o − L_o) + (U − L)/(U_p − L_p)], L = max(L_o, L_p),
    U = min(U_o, U_p), not truncated (negative when the intervals are disjoint); NaN when an
    interval is missing or has zero width. Of numbers a float, of arrays an array."""
    width_o = np.subtract(original_high, original_low)
    width_p = np.subtract(protected_high, protected_low)
    common = np.minimum(original_high, protected_high) - np.maximum(original_low, protected_low)
    with np.errstate(divide="ignore", invalid="ignore"):
        j = np.where((width_o > 0) & (width_p > 0), 0.5 * (common / width_o + common / width_p),
                     np.nan)
    return float(j) if j.ndim == 0 else j


def table_distances(p: pd.Series, q: pd.Series) -> tuple[float, float]:
    """(TVD = ½ Σ|p − p′|, Hellinger = √(1 − Σ√(p·p′))) of two share vectors indexed by
    cell, over the union of the cells."""
    cells = p.index.union(q.index, sort=False)
    a, b = p.reindex(cells, fill_value=0.0), q.reindex(cells, fill_value=0.0)
    affinity = float(np.sqrt(a * b).sum())
    return float(0.5 * np.abs(a - b).sum()), math.sqrt(max(0.0, 1.0 - affinity))


def compare_estimates(analysis: Analysis, original: Estimate, protected: Estimate
                      ) -> AnalysisResult:
    """The term-by-term comparison of one analysis's two estimates (module docstring): the
    original's terms in their order, then those of the protected side only."""
    o, p = original.terms, protected.terms
    names = o.index.union(p.index, sort=False)
    a, b = o.reindex(names), p.reindex(names)
    both = names.isin(o.index) & names.isin(p.index)
    if analysis.kind == "table":
        overlap = std_diff = np.full(len(names), np.nan)
        inside = np.full(len(names), None)
    else:
        overlap = np.where(both, ci_overlap(a["low"].to_numpy(), a["high"].to_numpy(),
                                            b["low"].to_numpy(), b["high"].to_numpy()), 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            std_diff = ((b["estimate"] - a["estimate"]) / a["se"]).to_numpy()
        inside = ((b["low"] <= a["estimate"]) & (a["estimate"] <= b["high"])).tolist()
    columns = zip(names.astype(str), a["estimate"], a["low"], a["high"], b["estimate"],
                  b["low"], b["high"], overlap, std_diff, inside)
    terms = [TermResult(t, float(oe), float(ol), float(oh), float(pe), float(pl), float(ph),
                        float(ov), float(sd), held)
             for t, oe, ol, oh, pe, pl, ph, ov, sd, held in columns]
    tvd = hellinger = None
    if analysis.kind == "table":
        tvd, hellinger = table_distances(o["estimate"], p["estimate"])
    known = overlap[~np.isnan(overlap)]
    mean = float(known.mean()) if len(known) else math.nan
    return AnalysisResult(analysis.name, analysis.kind, terms, mean, original.dropped,
                          protected.dropped, tvd=tvd, hellinger=hellinger)


def compare_analyses(spec: AnalysisSpec, original: pd.DataFrame, protected: pd.DataFrame,
                     original_estimates: Mapping[str, Estimate | SdcInputError] | None = None
                     ) -> list[AnalysisResult]:
    """Every analysis of ``spec`` on both tables, compared (module docstring), in the spec's
    order. ``original_estimates`` (from :func:`estimate_all` on ``original``) spares
    re-estimating the original side; an analysis that fails on a side is reported with its
    ``error`` and no terms. Band labels in ``protected`` are read as their midpoints
    (:func:`sdc_core.methods.banding.measured`), the numbers the analyses need."""
    before = original_estimates if original_estimates is not None \
        else estimate_all(spec, original)
    protected = measured(original, protected)
    out = []
    for analysis in spec.analyses:
        o = before[analysis.name]
        if isinstance(o, SdcInputError):
            out.append(AnalysisResult(analysis.name, analysis.kind, error=f"original: {o}"))
            continue
        try:
            p = estimate(analysis, protected, spec.confidence)
        except SdcInputError as err:
            out.append(AnalysisResult(analysis.name, analysis.kind, error=f"protected: {err}"))
            continue
        out.append(compare_estimates(analysis, o, p))
    return out

__all__ = ["Analysis", "AnalysisResult", "AnalysisSpec", "Estimate", "TermResult",
           "analysis_columns", "check_columns", "ci_overlap", "compare_analyses",
           "compare_estimates", "estimate", "estimate_all", "formula_variables", "parse_spec",
           "table_distances"]
