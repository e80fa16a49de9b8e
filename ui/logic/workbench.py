"""What the Protect page shows after a slider move, as a plain function (no Streamlit), so it
can be cached by the page and timed by ``bench/bench_slider.py``. :func:`detached` and
:func:`release_population` run in worker processes (:func:`ui.compute.workbench`): this module
imports Plotly only when a figure is asked for (:func:`column_figure`), so a worker never
loads it."""

from __future__ import annotations

import json
import math
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import pandas as pd

from sdc_core.assess import Assessment, RiskOptions, Sampling, Setting, Unavailable, assess
from sdc_core.data.columns import is_number
from sdc_core.methods.banding import read_bands
from sdc_core.recipe import ApplyResult, apply_recipe, parse_recipe
from sdc_core.risk.deniability import Deniability
from sdc_core.risk.household import HouseholdFigures
from sdc_core.risk.inference import InferenceResult
from sdc_core.risk.population_risk import PopulationRisk
from sdc_core.utility.il1 import IL1Result

if TYPE_CHECKING:
    import plotly.graph_objects as go

    from sdc_core.risk.synthetic import SyntheticRisk  # SciPy: loaded where it is measured
    from sdc_core.utility.validity import Validity, ValidityReport  # statsmodels: likewise

RISK_KEYS = ("expected_reidentifications", "avg_linkage_risk_percent", "global_risk_percent",
             "percent_unique", "percent_k_le_threshold", "percent_below_k", "min_k",
             "min_k_wildcard", "min_k_category")
LINKAGE_KEYS = ("linkage_reidentifications", "linkage_risk_percent", "linkage_percent_certain")

T = TypeVar("T")


def recipe_json(steps: list[dict[str, Any]], seed: int, household: str | None = None) -> str:
    """The canonical text of a recipe: the cache key of everything computed from it. With a
    ``household`` (the session's household id) the recipe names it: record swapping needs it,
    and every step keeps the columns constant within households so (docs/methods.md,
    "Households"); without one the text has no ``household`` key."""
    recipe: dict[str, Any] = {"version": 1, "seed": int(seed), "steps": steps}
    if household is not None:
        recipe["household"] = household
    return json.dumps(recipe, sort_keys=True)


@dataclass(frozen=True)
class Workbench:
    """The protected table and its figures, read from its assessment
    (:func:`sdc_core.assess.assess`), whose parts :func:`evaluate` computes where it runs (a
    worker). ``utility`` reads every column of the table as released; :meth:`utility_for`
    leaves out the columns not released, as the pages do."""

    original: pd.DataFrame
    #: the assessment the figures are read from: the report reads its parts too, and a part
    #: not read yet is computed on first access
    assessment: Assessment
    #: whether the figures include what the perturbation buys (:attr:`deniability`,
    #: :attr:`inference`)
    buys: bool = True
    #: risk in the population of the protected table (:func:`release_population`), when
    #: asked for: None when nothing says how the file was sampled, the reason (text) when it
    #: cannot be estimated
    population: PopulationRisk | str | None = None
    #: what :meth:`banded` and :meth:`figure` made, by column: a cached workbench is drawn
    #: again on every move to it, by every session that reaches it (its figures never change;
    #: a figure is copied by whoever changes it: Streamlit's chart, the projector, the export)
    _made: dict[tuple[str, str], Any] = field(default_factory=dict, init=False, repr=False,
                                              compare=False)

    @property
    def applied(self) -> ApplyResult:
        """The recipe's result: the protected table and each step's report."""
        assert self.assessment.applied is not None  # evaluate's assessment applies the recipe
        return self.assessment.applied

    @property
    def rows(self) -> str | None:
        """Why the release's row i is not the release of the original's row i (a synthetic
        release), so that every figure comparing record by record gives no number: the
        assessment's :attr:`~sdc_core.assess.Assessment.rows`; None when it is."""
        return self.assessment.rows

    @cached_property
    def after(self) -> dict[str, Any]:
        """The release's risk figures (:func:`risk_after`)."""
        return risk_after(self.assessment)

    @property
    def synthetic(self) -> SyntheticRisk | str | None:
        """The release read as a set of records (docs/measures.md, "Disclosure risk of a
        synthetic release"): replicated uniques, DiSCO beside DiO, the distance against a
        holdout; None for a release that keeps the original's rows, the reason (text) when it
        cannot be computed."""
        return shown(self.assessment.synthetic) if self.rows is not None else None

    @cached_property
    def utility(self) -> dict[str, Any]:
        """IL1 over every column as released and the eigenvalue similarity (nothing for a
        release whose rows are not the original's: :attr:`rows`)."""
        if self.rows is not None:
            return {}
        loss = self.assessment.loss
        return {**loss.summary(), "eigenvalue_similarity_percent": self.assessment.similarity,
                "per_column": loss.per_column}

    @property
    def loss(self) -> IL1Result:
        """The information loss of every released column (docs/utility.md)."""
        return self.assessment.loss

    @property
    def changed(self) -> list[str]:
        """The columns the release changed (of a synthetic release: every column both tables
        hold, each drawn anew)."""
        if self.rows is not None:
            return [c for c in self.applied.data.columns if c in self.original.columns]
        return self.assessment.loss.changed

    @property
    def numeric(self) -> list[str]:
        """The numeric columns the loss reads as numbers."""
        return self.assessment.numeric

    @property
    def deniability(self) -> tuple[Deniability, ...]:
        """What the perturbation buys (docs/measures.md, "Deniability: what perturbation
        buys"): one entry per perturbed column, with a household id also what the household's
        records give away; none when the figures leave it out (:attr:`buys`)."""
        return self.assessment.deniability if self.buys else ()

    @property
    def inference(self) -> InferenceResult | str | None:
        """The attribute-inference attack on the release (docs/measures.md, "The
        attribute-inference attack") for the sensitive columns asked for: None when none was
        (or the figures leave it out), the reason (text) when it cannot run."""
        return shown(self.assessment.inference) if self.buys else None

    @property
    def households(self) -> HouseholdFigures | str | None:
        """The household figures of the release (docs/measures.md, "Household risk"): None
        without a household id, the reason (text) when they cannot be computed."""
        return shown(self.assessment.households)

    def utility_for(self, not_released: Sequence[str]) -> dict[str, Any]:
        """``utility`` with the columns ``not_released`` out of the release: the headline
        IL1_release = (1/|C|) Σ_{c∈C} IL1_c over the released columns C (the table's less
        ``not_released``), the figure a sweep and ``compare`` give for the same release, then
        seed 003's IL1 figures over the changed released columns. For a release whose rows
        are not the original's (:attr:`rows`), only the ``released`` columns."""
        if self.rows is not None:
            return {"released": [c for c in self.applied.data.columns
                                 if c not in not_released]}
        loss = self.loss.without(not_released)
        return {**self.utility, **loss.summary(), "per_column": loss.per_column,
                "released": loss.released}

    def banded(self, column: str) -> tuple[pd.Series, np.ndarray | None]:
        """The released column, band labels read back as the bands' midpoints
        (:func:`read_bands`), and its band edges when it was banded (:func:`band_edges`)."""
        if ("banded", column) not in self._made:
            before = self.original[column]
            after = read_bands(self.applied.data[column], before)
            self._made["banded", column] = (
                after, band_edges(self.applied.reports, column, before, after))
        return self._made["banded", column]

    def figure(self, column: str) -> go.Figure:
        """Before/after figure of one changed column (built on first use, from aggregates,
        then kept); a banded column's is counted per band, before as after."""
        if ("figure", column) not in self._made:
            after, edges = self.banded(column)
            self._made["figure", column] = (
                column_figure(self.original[column], after, True, edges) if edges is not None
                else column_figure(self.original[column], self.applied.data[column],
                                   column in self.numeric))
        return self._made["figure", column]

    def figure_note(self, column: str) -> str | None:
        """What the before/after figure of a banded column compares, for its caption (None
        for any other column)."""
        if self.banded(column)[1] is None:
            return None
        coded = any(r["method"] == "top_bottom_code"
                    for r in self.applied.reports if r.get("column") == column)
        return ("Both are counted in the release's bands: each original value in the band "
                "that holds it, each released value in its own band"
                + (" (a top or bottom code in the band of its threshold)" if coded else "")
                + ", so the line and the bars compare like with like.")


def evaluate(df: pd.DataFrame, recipe_text: str, qi: list[str], weight: str | None, k: int,
             na: str, alpha: float, numeric: list[str], known: list[str] | None = None,
             applied: ApplyResult | None = None, sensitive: Sequence[str] = (),
             buys: bool = True, household: str | None = None) -> Workbench:
    """The Protect page's figures of the release the recipe makes of ``df`` (``applied``: its
    result, when the caller has it), read from its assessment (:func:`sdc_core.assess.assess`):
    risk after, read from the released keys and by the linkage attack (with the ``known``
    columns); IL1 (of the changed columns, every column released:
    :meth:`Workbench.utility_for` leaves some out) and eigenvalue similarity; what the
    perturbation buys (``buys``): the deniability of every perturbed column (with a
    ``household``, per household too) and the attribute-inference attack on the ``sensitive``
    columns; with a ``household`` id column, the household figures (docs/measures.md,
    "Household risk")."""
    setting = Setting(tuple(qi), tuple(numeric), tuple(sensitive), tuple(known or ()), weight,
                      household, RiskOptions(k, na, alpha))
    a = assess(df, None, setting, parse_recipe(json.loads(recipe_text)), applied)
    # the figures computed here (a worker: :func:`detached`), not where the result is read;
    # a release whose rows are not the original's has the figures of a set of records instead
    # of those that compare record by record (their parts say why)
    aligned = a.rows is None
    parts = (("linkage", "loss", "similarity") if aligned else ("synthetic",))
    return Workbench(df, a.computed("keys", "numeric", "households", *parts,
                                    *(("deniability", "inference") if buys else ())), buys)


def risk_after(a: Assessment) -> dict[str, Any]:
    """The release's risk figures as the pages and the report show them: the released keys'
    (:data:`RISK_KEYS`, and every record's class size ``fk``) and the linkage attack's (none
    when the release's rows are not the original's: :attr:`~sdc_core.assess.Assessment.rows`)."""
    return ({key: getattr(a.keys, key) for key in RISK_KEYS} | {"fk": a.keys.fk}
            | (a.linkage.summary() if a.rows is None else {}))


def shown(part: T | Unavailable) -> T | str | None:
    """A part of an assessment as the workbench holds it: None when the setting does not ask
    for it, the reason (text) when it cannot be computed."""
    if isinstance(part, Unavailable):
        return part.reason if part.asked else None
    return part


def release_population(df: pd.DataFrame, recipe_text: str, qi: list[str], weight: str | None,
                       sampling: dict[str, float]) -> PopulationRisk | Unavailable:
    """The risk in the population of the table the recipe makes of ``df`` (the same table as
    :func:`evaluate`'s: a recipe's draws are seeded), from how the file was sampled
    (``sampling``, as :func:`~sdc_core.risk.population_risk.population_risk` takes it): the
    assessment's ``population`` part. A job of its own, so that it runs beside
    :func:`evaluate` in another worker."""
    setting = Setting(tuple(qi), weight=weight, sampling=Sampling(
        sampling.get("sampling_fraction"), sampling.get("population_size")))
    return assess(df, None, setting, parse_recipe(json.loads(recipe_text))).population


#: Where :func:`release_validity` runs (a worker process): the original side of each
#: benchmark-analysis spec, by (table id, the spec's text), the most recent VALIDITIES_KEPT
_VALIDITIES: OrderedDict[tuple[str, str], Validity] = OrderedDict()
VALIDITIES_KEPT = 8


def release_validity(df: pd.DataFrame, table_id: str, spec_text: str, recipe_text: str,
                     changed: list[str], with_pmse: bool) -> ValidityReport:
    """The benchmark analyses of ``spec_text`` compared on the release the recipe makes of
    ``df`` (the same table as :func:`evaluate`'s: a recipe's draws are seeded), ``changed``
    its changed columns (:attr:`Workbench.changed`): the job :func:`ui.compute.validity_report`
    hands a worker, so that the server's interpreter draws the other sessions' pages
    meanwhile. The original side (the estimates on ``df``) is made once per table and spec
    where the job runs."""
    from sdc_core.utility.analysis import parse_spec  # statsmodels, only where this runs
    from sdc_core.utility.validity import Validity

    key = (table_id, spec_text)
    validity = _VALIDITIES.pop(key, None)
    if validity is None:
        validity = Validity(parse_spec(json.loads(spec_text)), df)
    _VALIDITIES[key] = validity
    while len(_VALIDITIES) > VALIDITIES_KEPT:
        _VALIDITIES.popitem(last=False)
    applied = apply_recipe(parse_recipe(json.loads(recipe_text)), df)
    return validity.compare(applied.data, changed=changed, with_pmse=with_pmse)


def part_of_original(df: pd.DataFrame, setting: Setting, part: str) -> Any:
    """A part of the assessment of the data as loaded, judged as its own release (the job
    :func:`ui.compute.original_part` hands a worker, which sends the table once)."""
    return getattr(assess(df, df, setting), part)


def part_of_release(df: pd.DataFrame, applied: ApplyResult, setting: Setting, recipe_text: str,
                    part: str) -> Any:
    """A part of the assessment of the release ``applied`` that the recipe made of ``df`` (the
    job :func:`ui.compute.inference` hands a worker)."""
    return getattr(assess(df, applied.data, setting, parse_recipe(json.loads(recipe_text)),
                          applied), part)


def with_population(wb: Workbench, original: pd.DataFrame,
                    population: PopulationRisk | Unavailable | None) -> Workbench:
    """A worker's workbench with its table and the population part (another worker's, None
    when nothing was asked) put back: in the assessment, and as the workbench shows it."""
    wb.assessment.original = original
    if population is not None:
        wb.assessment.keep(population=population)
    return replace(wb, original=original,
                   population=shown(population) if population is not None else None)


def detached(df: pd.DataFrame, *args: Any, **kwargs: Any) -> Workbench:
    """:func:`evaluate` without the original table in the result or its assessment: what a
    worker process sends back (the caller holds the table: :func:`with_population`)."""
    wb = evaluate(df, *args, **kwargs)
    wb.assessment.original = None
    return replace(wb, original=None)


#: The most bands a before/after figure draws as its bins.
MAX_BAND_BINS = 200


def band_edges(reports: list[dict[str, Any]], column: str, original: pd.Series,
               released: pd.Series) -> np.ndarray | None:
    """The band edges (o + j·w over the range of ``original`` and ``released``, or the custom
    breaks) when the column of numbers was banded and nothing but top or bottom coding
    followed (then the figure counts the original values per band, as the released ones are),
    else None."""
    steps = [r for r in reports if r.get("column") == column]
    banded = [i for i, r in enumerate(steps) if r["method"] == "band"]
    if not banded or not is_number(original) or not is_number(released) or any(
            r["method"] != "top_bottom_code" for r in steps[banded[-1] + 1:]):
        return None
    last = steps[banded[-1]]
    x = np.concatenate([original.to_numpy(dtype=float, na_value=np.nan),
                        released.to_numpy(dtype=float, na_value=np.nan)])
    if not np.isfinite(x).any():
        return None
    if "breaks" in last:  # custom breaks: the bands themselves
        return np.asarray(last["breaks"], dtype=float)
    w, o = float(last["width"]), float(last["origin"])
    first, end = np.floor((np.nanmin(x) - o) / w), np.floor((np.nanmax(x) - o) / w) + 1
    if end - first > MAX_BAND_BINS:
        return None
    return o + w * np.arange(first, end + 1)


def column_figure(before: pd.Series, after: pd.Series, numeric: bool,
                  edges: np.ndarray | None = None) -> go.Figure:
    """Before/after figure of a column: histograms on common bins (the bands of a banded
    column, ``edges``) for numbers, else records per category."""
    from ui.logic import figures  # Plotly: loaded for the page only (the module's docstring)

    name = str(before.name)
    if numeric and is_number(after):
        return figures.overlaid_histograms(
            before.to_numpy(dtype=float, na_value=np.nan),
            after.to_numpy(dtype=float, na_value=np.nan),
            f"{name}: original and protected values" + (" per band" if edges is not None
                                                         else ""), edges=edges)
    order = category_order(before, after)
    missing = before.isna().any() or after.isna().any()

    def counts(s: pd.Series) -> pd.Series:
        c = s.value_counts().reindex(order, fill_value=0)
        return pd.concat([c, pd.Series({"(missing)": int(s.isna().sum())})]) if missing else c

    return figures.before_after_bars(counts(before), counts(after),
                                     f"{name}: records per category, original and protected")


def _as_number(value: Any) -> float | None:
    """``value`` as a finite number: a number (not True/False), or text that reads as one."""
    if isinstance(value, (bool, np.bool_)):
        return None
    try:
        number = float(value if isinstance(value, (int, float, np.integer, np.floating))
                       else str(value))
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def category_order(before: pd.Series, after: pd.Series) -> list[Any]:
    """The order of a column's values in its before/after bars. Values that can be ordered go
    by value: the categories of an ordered category in their order, numbers (also codes held
    as text, "1" … "6") by size, dates by date; other values (nominal categories) by how
    often the original has them, most first, then the values only the release has. Missing
    values are not among them (their bar comes last)."""
    values = list(dict.fromkeys([*before.value_counts().index, *after.value_counts().index]))
    if isinstance(before.dtype, pd.CategoricalDtype) and before.dtype.ordered:
        ranks = {c: i for i, c in enumerate(before.dtype.categories)}
        return sorted(values, key=lambda v: ranks.get(v, len(ranks)))
    as_numbers = [n for n in map(_as_number, values) if n is not None]
    if values and len(as_numbers) == len(values):  # every value is a number
        return [v for _, v in sorted(zip(as_numbers, values), key=lambda p: p[0])]
    if values and all(isinstance(v, pd.Timestamp) for v in values):
        return sorted(values)
    return values
