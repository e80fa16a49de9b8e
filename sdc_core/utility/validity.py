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
  better than two samples of one distribution, 10 or more: they can).

A figure that cannot be had is NaN (no analysis with intervals; pMSE off or failed, with the
reason in ``pmse_error``).

Speed (the Protect page moves a slider on 100k rows): :class:`Validity` estimates the original
side once; given the columns that changed, an analysis that reads none of them, and a table of
unchanged columns, are the original's (overlap 1, TVD 0) without a fit or a count.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd

from sdc_core.errors import SdcInputError
from sdc_core.utility.analysis import (
    AnalysisResult,
    AnalysisSpec,
    Estimate,
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
          "worst_tvd": "worst-table TVD", "pmse": "pMSE", "s_pmse": "S_pMSE"}
#: Verdicts on one analysis (:func:`verdict`): it holds when its mean CI overlap is at least
#: ``HOLDS`` and every original estimate lies in its protected interval; it is shifted when the
#: overlap is at least ``SHIFTED``; a table holds when its TVD is at most ``TABLE_HOLDS``.
HOLDS, SHIFTED, TABLE_HOLDS = 0.9, 0.5, 0.05


def verdict(result: AnalysisResult) -> str:
    """"holds", "shifted", "does not hold", or "cannot be compared" (an analysis that fails on
    the original, or has no interval to compare) — for a table, by its TVD."""
    if result.error:
        return "does not hold" if result.error.startswith("protected") \
            else "cannot be compared"
    if result.kind == "table":
        return "holds" if result.tvd <= TABLE_HOLDS else "does not hold"
    j = result.mean_ci_overlap
    if math.isnan(j):
        return "cannot be compared"
    if j >= HOLDS and all(t.original_in_protected_ci for t in result.terms
                          if not math.isnan(t.original)):
        return "holds"
    return "shifted" if j >= SHIFTED else "does not hold"


#: The reading of S_pMSE wherever it is shown.
S_PMSE_RULE = ("S_pMSE is pMSE over its expected value when the protected table were a sample "
               "of the original's distribution: near 1, a propensity model cannot tell the two "
               "tables apart better than two such samples; 10 or more, it can (Snoke et al. "
               "2018).")


@dataclass(frozen=True)
class ValidityReport:
    """The three comparisons of one release (module docstring). ``missing``: chosen table
    columns the release drops (their tables count TVD 1)."""

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

    def summary(self) -> dict[str, float]:
        """The figures of the module docstring, NaN where there is none."""
        overlap = self.mean_ci_overlap
        return {"mean_ci_overlap": overlap, "ci_overlap_loss": 1.0 - overlap,
                "worst_tvd": self.worst_tvd,
                "pmse": self.pmse.pmse if self.pmse else math.nan,
                "s_pmse": self.pmse.s_pmse if self.pmse else math.nan}

    def per_analysis(self) -> dict[str, float]:
        """One figure per analysis, as a sweep row writes it: ``ci_overlap: NAME`` (0 when it
        fails on the protected side) or, for a table, ``tvd: NAME``."""
        return {f"{'tvd' if r.kind == 'table' else 'ci_overlap'}: {r.name}": analysis_figure(r)
                for r in self.analyses}

    def to_json(self) -> dict[str, Any]:
        """``analyses`` (each as :meth:`AnalysisResult.to_json`), ``mean_ci_overlap``,
        ``tables`` (worst first), ``worst_tvd``, ``pmse``, ``s_pmse`` and the propensity
        model's size, NaN written as null."""
        s = self.summary()
        out: dict[str, Any] = {
            "analyses": [r.to_json() for r in self.analyses],
            "mean_ci_overlap": _plain(s["mean_ci_overlap"]),
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


class Validity:
    """The original side of a spec, ready to compare releases with: its estimates, made once,
    and the table columns (:meth:`AnalysisSpec.table_columns`). A spec that names a column the
    original lacks is refused (:func:`~sdc_core.utility.analysis.check_columns`)."""

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
        ``with_pmse``: fit the propensity model (default: as the spec says)."""
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
        codes = {c: self._coder(c).codes(protected[c]) if c in moved else self._same(c)
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
