"""Does the analysis still hold? One spec (:func:`sdc_core.utility.analysis.parse_spec`), three
comparisons of a protected table x′ with the original x, and the figures a trade-off reads
(issue 26):

- the **benchmark analyses** of :mod:`sdc_core.utility.analysis`, term by term;
- the **1- and 2-way tables** of the spec's ``columns`` (default: the columns the analyses
  read), numeric ones cut into ``bins`` quantile intervals of x
  (:func:`sdc_core.utility.fidelity.table_fidelity`);
- the **pMSE** of a propensity model with main effects of those columns
  (:func:`sdc_core.utility.fidelity.pmse`), unless the spec says ``"pmse": false``.

Figures of a release (:meth:`ValidityReport.summary`), each with a direction:

- ``mean_ci_overlap`` (higher is better): the mean over the analyses with intervals (not
  ``table``) of each one's mean CI overlap, every analysis weighing the same; an analysis that
  cannot be estimated on x′ (a column dropped, a model that no longer fits) counts 0, one that
  cannot be estimated on x is left out. ``ci_overlap_loss`` = 1 − ``mean_ci_overlap``, the loss
  axis a trade-off plots (0: every interval reproduced);
- ``worst_tvd`` (lower is better): the largest total variation distance among the compared
  tables and the ``table`` analyses; a table of a column the release drops counts 1, as do
  disjoint tables;
- ``pmse`` and ``s_pmse`` (lower is better; S_pMSE near 1: the two tables cannot be told apart
  better than two samples of one distribution, 10 or more: they can);
- ``analyses_holding`` (higher is better): the share of the analyses whose :func:`verdict` is
  "holds" — every term within J ≥ 0.75 and |d| < 1 SE besides the mean's rule (docs/utility.md,
  "The verdict"); 1 when every analysis holds.

Each analysis has a verdict (:func:`verdict`) naming its worst term (:func:`worst_term`,
:func:`verdict_text`), the same on the Protect page, in the report, in ``compare`` and in a
sweep's ``holds: NAME`` columns.

A figure that cannot be had is NaN (no analysis with intervals; pMSE off or failed, with the
reason in ``pmse_error``).

Speed (the Protect page moves a slider on 100k rows): :class:`Validity` estimates the original
side once; given the columns that changed, an analysis that reads none of them, and a table of
unchanged columns, are the original's (overlap 1, TVD 0) without a fit or a count.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Hashable
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd

from sdc_core.errors import SdcInputError
from sdc_core.methods.banding import measured
from sdc_core.utility.analysis import (
    AnalysisResult,
    AnalysisSpec,
    Estimate,
    TermResult,
    _plain,
    analysis_columns,
    check_columns,
    compare_estimates,
    estimate,
    estimate_all,
)
from sdc_core.utility.fidelity import (
    ColumnCoder,
    PmseResult,
    TableResult,
    compare_tables,
    pmse,
    worst_first,
)

#: What the pages call them.
LABELS = {"mean_ci_overlap": "mean CI overlap", "ci_overlap_loss": "1 − mean CI overlap",
          "worst_tvd": "worst-table TVD", "pmse": "pMSE", "s_pmse": "S_pMSE",
          "analyses_holding": "share of analyses that hold"}
#: Verdicts on one analysis (:func:`verdict`, docs/utility.md "The verdict"): it holds when its
#: mean CI overlap is at least ``HOLDS``, every original estimate lies in its protected interval
#: and every term holds (:func:`term_holds`), it holds on average when only the last fails; it
#: is shifted when the overlap is at least ``SHIFTED``; a table holds when its TVD is at most
#: ``TABLE_HOLDS``.
HOLDS, SHIFTED, TABLE_HOLDS = 0.9, 0.5, 0.05
#: A term holds when its CI overlap is at least ``TERM_OVERLAP`` and its estimate moved by less
#: than ``TERM_SE`` of the original's standard errors. 0.75 is the overlap of two 95 %
#: intervals of one width one standard error apart (1 − 1/(2 · 1.96) = 0.745), and that of an
#: interval that doubled or halved its width without moving (½ (1 + ½)).
TERM_OVERLAP, TERM_SE = 0.75, 1.0
#: The verdicts, best first.
LEVELS = ("holds", "holds on average", "shifted", "does not hold", "cannot be compared")
#: The verdict's rule in words, wherever verdicts are shown.
VERDICT_RULE = (
    f"An analysis holds when its mean CI overlap is at least {HOLDS:g}, every original "
    f"estimate lies inside its protected interval and every term holds: CI overlap at least "
    f"{TERM_OVERLAP:g} and moved by less than {TERM_SE:g} standard error of the original "
    f"(|θ_p − θ_o|/se_o < {TERM_SE:g}); when only a term fails, it holds on average. "
    f"Otherwise it is shifted while its mean CI overlap is at least {SHIFTED:g}, and does not "
    f"hold below; a table holds when its TVD is at most {TABLE_HOLDS:g}. Each verdict names "
    "its worst term: of the terms that fail (of all, when none does), the one with the lowest "
    "CI overlap, then the largest move; of a table, the cell whose share moved most (none "
    "when nothing moved).")


def term_holds(t: TermResult) -> bool:
    """J ≥ ``TERM_OVERLAP`` and |d| < ``TERM_SE``, with d = (θ_p − θ_o)/se_o the standardised
    difference (the original's standard error). A term estimated on one side only has J = 0
    and does not hold; a figure that cannot be had (NaN: an interval of zero width) fails no
    test."""
    return not (t.ci_overlap < TERM_OVERLAP) and not (abs(t.std_diff) >= TERM_SE)


def worst_term(result: AnalysisResult) -> TermResult | None:
    """The term a verdict names: None without terms, or when every term is reproduced exactly
    (J = 1 and d = 0; a table's shares all equal). Of an analysis with intervals: the terms
    that do not hold (:func:`term_holds`) before those that do, then the lowest CI overlap J (a
    term without one after those with one), then the largest |d|, then the analysis's order.
    Of a table: the cell whose share moved most, |p′ − p| (a cell on one side only has share 0
    on the other), the largest term of TVD = ½ Σ |p − p′|."""
    if result.kind == "table":
        def moved(t: TermResult) -> float:
            return abs(np.nan_to_num(t.protected) - np.nan_to_num(t.original))
        worst = max(result.terms, key=moved, default=None)  # max keeps the first of a tie
        return worst if worst is not None and moved(worst) > 0 else None
    if all(t.ci_overlap == 1 and t.std_diff == 0 for t in result.terms):
        return None

    def rank(t: TermResult) -> tuple[bool, float, float]:
        j, d = t.ci_overlap, abs(t.std_diff)
        return (term_holds(t), math.inf if math.isnan(j) else j, math.inf if math.isnan(d) else -d)
    return min(result.terms, key=rank)


def verdict(result: AnalysisResult) -> str:
    """One of :data:`LEVELS`: "holds", "holds on average" (as "holds", but a term moved:
    J < ``TERM_OVERLAP`` or |d| ≥ ``TERM_SE``), "shifted", "does not hold", or "cannot be
    compared" (an analysis that fails on the original, or has no interval to compare) — for a
    table, by its TVD."""
    if result.error:
        return "does not hold" if result.error.startswith("protected") \
            else "cannot be compared"
    if result.kind == "table":
        assert result.tvd is not None  # a table compared without an error has its TVD
        return "holds" if result.tvd <= TABLE_HOLDS else "does not hold"
    j = result.mean_ci_overlap
    if math.isnan(j):
        return "cannot be compared"
    if j >= HOLDS and all(t.original_in_protected_ci for t in result.terms
                          if not math.isnan(t.original)):
        return "holds" if all(map(term_holds, result.terms)) else "holds on average"
    return "shifted" if j >= SHIFTED else "does not hold"


def _term_text(result: AnalysisResult, t: TermResult) -> str:
    """What the verdict says of its worst term (term names are user text: plain text)."""
    if result.kind == "table":
        return (f"worst cell {t.term}: share {np.nan_to_num(t.original):.3f} → "
                f"{np.nan_to_num(t.protected):.3f}")
    if math.isnan(t.original) or math.isnan(t.protected):
        side = "protected" if math.isnan(t.protected) else "original"
        return f"worst term {t.term}: not estimated on the {side} table"
    figures = [f"moved by {abs(t.std_diff):.2f} SE"] if not math.isnan(t.std_diff) else []
    if not math.isnan(t.ci_overlap):
        figures.append(f"CI overlap {t.ci_overlap:.3f}")
    return f"worst term {t.term}: {', '.join(figures) or 'no interval'}"


def verdict_text(result: AnalysisResult) -> str:
    """The verdict in words, as the page, the report and the CLI show it: the level, the
    analysis's kind and figure (mean CI overlap, or a table's TVD and Hellinger distance), the
    rows left out, then its worst term (:func:`worst_term`) with |d| and J, e.g. "holds on
    average (mean; mean CI overlap 0.946); worst term y | g=c: moved by 1.06 SE, CI overlap
    0.731". Plain text: escape it where it is shown."""
    figure = (f"TVD {figure_text(result.tvd)}, Hellinger {figure_text(result.hellinger)}"
              if result.kind == "table" and not result.error
              else f"mean CI overlap {figure_text(result.mean_ci_overlap)}")
    dropped = (f"; rows left out (a value missing): {result.dropped_original:,} original, "
               f"{result.dropped_protected:,} protected"
               if result.dropped_original or result.dropped_protected else "")
    worst = worst_term(result)
    named = "" if worst is None else f"; {_term_text(result, worst)}"
    return f"{verdict(result)} ({result.kind}; {figure}{dropped}){named}"


def figure_text(value: float | None) -> str:
    """A validity figure as the pages, the report and the CLI show it: three decimals, "—"
    when there is none."""
    return "—" if value is None or math.isnan(value) else f"{value:.3f}"


def judged(result: AnalysisResult) -> dict[str, Any]:
    """An analysis's verdict as JSON: ``verdict`` (one of :data:`LEVELS`), ``verdict_text``
    (:func:`verdict_text`) and ``worst_term`` (its figures as a term's, null when it names
    none)."""
    worst = worst_term(result)
    return {"verdict": verdict(result), "verdict_text": verdict_text(result),
            "worst_term": None if worst is None else worst.to_json()}


#: The reading of S_pMSE wherever it is shown.
S_PMSE_RULE = ("S_pMSE is pMSE over its expected value when the protected table were a sample "
               "of the original's distribution: near 1, a propensity model cannot tell the two "
               "tables apart better than two such samples; 10 or more, it can (Snoke et al. "
               "2018).")


@dataclass(frozen=True)
class ValidityReport:
    """The three comparisons of one release (module docstring).

    Made by :meth:`Validity.compare`. ``summary`` gives ``mean_ci_overlap``, ``ci_overlap_loss``,
    ``worst_tvd``, ``pmse``, ``s_pmse`` and ``analyses_holding``.

    Parameters
    ----------
    analyses : list of AnalysisResult
        Each analysis, term by term.
    tables : list of TableResult
        The 1- and 2-way tables.
    columns : list of str
        The table columns compared.
    missing : list of str
        Chosen table columns the release drops (their tables count TVD 1).
    pmse : PmseResult, optional
        The propensity-score comparison.
    pmse_error : str, optional
        Why the pMSE could not be had.

    Examples
    --------
    >>> from sdc_core import apply_recipe, example, load_example, parse_recipe
    >>> df, roles = load_example(), example("actg175").roles
    >>> recipe = parse_recipe({"seed": 42, "steps": [
    ...     {"method": "band", "column": "age", "width": 10},
    ...     {"method": "pram", "column": "race", "p": 0.05}]})
    >>> protected = apply_recipe(recipe, df).data
    >>> from sdc_core import Validity, parse_spec
    >>> report = Validity(parse_spec(example("actg175").analyses), df).compare(protected)
    >>> {name: round(value, 2) for name, value in report.summary().items()}["worst_tvd"]
    0.58
    >>> [(t.term, round(t.ci_overlap, 3)) for t in report.analyses[0].terms][-2:]
    [('age', 0.842), ('cd40', 0.986)]
    """

    analyses: list[AnalysisResult]
    tables: list[TableResult]
    columns: list[str]
    missing: list[str] = field(default_factory=list)
    pmse: PmseResult | None = None
    pmse_error: str | None = None

    @property
    def mean_ci_overlap(self) -> float:
        """The mean over the analyses with intervals of their mean CI overlap (NaN: none)."""
        values = [v for r in self.analyses if r.kind != "table"
                  if not math.isnan(v := analysis_figure(r))]
        return float(np.mean(values)) if values else math.nan

    @property
    def worst_tvd(self) -> float:
        """The largest TVD among the tables and ``table`` analyses, 1 with a dropped table
        column (NaN: none)."""
        tvds = [t.tvd for t in self.tables] + [analysis_figure(r) for r in self.analyses
                                               if r.kind == "table"]
        if self.missing:
            tvds.append(1.0)
        tvds = [t for t in tvds if not math.isnan(t)]
        return max(tvds) if tvds else math.nan

    @property
    def analyses_holding(self) -> float:
        """The share of the analyses with a verdict (not "cannot be compared") whose verdict
        is "holds" (:func:`verdict`; NaN: none). 1: every analysis holds."""
        held = [holds_figure(r) for r in self.analyses]
        known = [h for h in held if not math.isnan(h)]
        return float(np.mean(known)) if known else math.nan

    def summary(self) -> dict[str, float]:
        """The figures of the module docstring, NaN where there is none."""
        overlap = self.mean_ci_overlap
        return {"mean_ci_overlap": overlap, "ci_overlap_loss": 1.0 - overlap,
                "worst_tvd": self.worst_tvd,
                "pmse": self.pmse.pmse if self.pmse else math.nan,
                "s_pmse": self.pmse.s_pmse if self.pmse else math.nan,
                "analyses_holding": self.analyses_holding}

    def per_analysis(self) -> dict[str, float]:
        """Two figures per analysis, as a sweep row writes them: ``ci_overlap: NAME`` (0 when
        it fails on the protected side) or, for a table, ``tvd: NAME``; and ``holds: NAME``
        (:func:`holds_figure`)."""
        return {f"{'tvd' if r.kind == 'table' else 'ci_overlap'}: {r.name}": analysis_figure(r)
                for r in self.analyses} | {f"holds: {r.name}": holds_figure(r)
                                           for r in self.analyses}

    def to_json(self) -> dict[str, Any]:
        """``analyses`` (each as :meth:`AnalysisResult.to_json` with its verdict,
        :func:`judged`), ``mean_ci_overlap`` and ``ci_overlap_loss`` (1 − it, the sweep's
        loss), ``analyses_holding``, ``tables`` (worst first),
        ``worst_tvd``, ``pmse``, ``s_pmse`` and the propensity model's size, NaN written as
        null."""
        s = self.summary()
        out: dict[str, Any] = {
            "analyses": [r.to_json() | judged(r) for r in self.analyses],
            "mean_ci_overlap": _plain(s["mean_ci_overlap"]),
            "ci_overlap_loss": _plain(s["ci_overlap_loss"]),
            "analyses_holding": _plain(s["analyses_holding"]),
            "table_columns": self.columns, "tables": [t.to_json() for t in self.tables],
            "worst_tvd": _plain(s["worst_tvd"]),
            "pmse": _plain(s["pmse"]), "s_pmse": _plain(s["s_pmse"])}
        if self.missing:
            out["dropped_table_columns"] = self.missing
        if self.pmse is not None:
            out["pmse_model"] = {"parameters": self.pmse.k, "protected_share": self.pmse.c,
                                 "rows": self.pmse.n}
        if self.pmse_error is not None:
            out["pmse_error"] = self.pmse_error
        return out


def analysis_figure(r: AnalysisResult) -> float:
    """One analysis's figure: its mean CI overlap, or a table's TVD; 0 (an overlap) or 1 (a
    TVD) when the release breaks it, NaN when it cannot be estimated on the original (it is
    left out of the release's figures)."""
    if r.error:
        if r.error.startswith("original"):
            return math.nan
        return 1.0 if r.kind == "table" else 0.0
    if r.kind == "table":
        return math.nan if r.tvd is None else float(r.tvd)
    return r.mean_ci_overlap


def holds_figure(r: AnalysisResult) -> float:
    """An analysis's verdict as a number a sweep can average over seeds: 1 when it is "holds",
    0 when it is any other, NaN when it is "cannot be compared"."""
    level = verdict(r)
    return math.nan if level == "cannot be compared" else float(level == "holds")


class Validity:
    """The original side of a spec, ready to compare releases with.

    Its estimates, made once, and the table columns (:meth:`AnalysisSpec.table_columns`);
    :meth:`compare` gives the :class:`ValidityReport` of a release: per analysis and term the CI
    overlap, the TVD of the 1- and 2-way tables and the propensity-score pMSE.

    Parameters
    ----------
    spec : AnalysisSpec
        The analyses (:func:`parse_spec`).
    original : pandas.DataFrame
        The original table.

    Raises
    ------
    SdcInputError
        When the spec names a column the original lacks
        (:func:`~sdc_core.utility.analysis.check_columns`).

    Examples
    --------
    >>> from sdc_core import apply_recipe, example, load_example, parse_recipe
    >>> df, roles = load_example(), example("actg175").roles
    >>> recipe = parse_recipe({"seed": 42, "steps": [
    ...     {"method": "band", "column": "age", "width": 10},
    ...     {"method": "pram", "column": "race", "p": 0.05}]})
    >>> protected = apply_recipe(recipe, df).data
    >>> from sdc_core import Validity, parse_spec
    >>> validity = Validity(parse_spec(example("actg175").analyses), df)
    >>> report = validity.compare(protected)
    >>> round(report.mean_ci_overlap, 2), report.analyses_holding
    (0.97, 1.0)
    """

    def __init__(self, spec: AnalysisSpec, original: pd.DataFrame) -> None:
        check_columns(spec, original.columns)
        self.spec, self.original, self.columns = spec, original, spec.table_columns()
        self.estimates: dict[str, Estimate | SdcInputError] = estimate_all(spec, original)
        self.reads = {a.name: set(analysis_columns(a)) for a in spec.analyses}
        self._coders: dict[str, ColumnCoder] = {}
        self._unchanged: dict[str, tuple[np.ndarray, np.ndarray, int]] = {}

    def compare(self, protected: pd.DataFrame, changed: Collection[str] | None = None,
                with_pmse: bool | None = None) -> ValidityReport:
        """The report of ``protected`` (module docstring). ``changed``: the columns whose
        values differ from the original's, when known (same rows, in the same order; a column
        whose dtype differs counts as changed too);
        ``with_pmse``: fit the propensity model (default: as the spec says). Band labels
        count as their midpoints (:func:`sdc_core.methods.banding.measured`)."""
        protected = measured(self.original, protected)
        moved = set() if changed is None else set(changed) | {  # a new dtype is a change
            c for c in protected.columns
            if c in self.original.columns and protected[c].dtype != self.original[c].dtype}
        same = (lambda cols: False) if changed is None or len(protected) != len(
            self.original) else (lambda cols: not set(cols) & moved
                                 and all(c in protected.columns for c in cols))
        analyses = []
        for a in self.spec.analyses:
            o = self.estimates[a.name]
            if isinstance(o, SdcInputError):
                analyses.append(AnalysisResult(a.name, a.kind, error=f"original: {o}"))
                continue
            if same(self.reads[a.name]):
                analyses.append(compare_estimates(a, o, o))
                continue
            try:
                p = estimate(a, protected, self.spec.confidence)
            except SdcInputError as err:
                analyses.append(AnalysisResult(a.name, a.kind, error=f"protected: {err}"))
                continue
            analyses.append(compare_estimates(a, o, p))
        present = [c for c in self.columns if c in protected.columns]
        missing = [c for c in self.columns if c not in protected.columns]
        tables = self._tables(protected, present, same)
        result, error = None, None
        if self.spec.pmse if with_pmse is None else with_pmse:
            try:
                result = pmse(self.original, protected, present) if present else None
                error = None if present else "no column of the model is in the release"
            except SdcInputError as err:
                error = str(err)
        return ValidityReport(analyses, tables, present, missing, result, error)

    def _tables(self, protected: pd.DataFrame, present: list[str], same: Any
                ) -> list[TableResult]:
        """The 1- and 2-way tables of ``present``: those of changed columns counted, each
        original column's side coded once (:class:`ColumnCoder`); those of unchanged ones the
        original's (TVD 0); worst first as in ``table_fidelity``."""
        moved = [c for c in present if not same([c])]
        codes: dict[Hashable, tuple[np.ndarray, np.ndarray, int]] = {
            c: self._coder(c).codes(protected[c]) if c in moved else self._same(c)
            for c in present}
        out = compare_tables(codes, moved) if moved else []
        still = [c for c in present if c not in moved]
        kept = [TableResult((c,), 0.0, 0.0, 0, 0) for c in still] + [
            TableResult(pair, 0.0, 0.0, 0, 0) for pair in combinations(still, 2)]
        return worst_first(out + kept, present)

    def _coder(self, c: str) -> ColumnCoder:
        if c not in self._coders:
            self._coders[c] = ColumnCoder(self.original[c], self.spec.bins)
        return self._coders[c]

    def _same(self, c: str) -> tuple[np.ndarray, np.ndarray, int]:
        """The codes of an unchanged column (the original's on both sides), made once."""
        if c not in self._unchanged:
            self._unchanged[c] = self._coder(c).codes(self.original[c])
        return self._unchanged[c]
