"""What the Protect page shows after a slider move, as a plain function (no Streamlit), so it
can be cached by the page and timed by ``bench/bench_slider.py``."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from sdc_core.columns import is_number
from sdc_core.errors import SdcInputError
from sdc_core.recipe import ApplyResult, apply_recipe, parse_recipe
from sdc_core.risk import RiskProfile, risk_profile
from sdc_core.risk.linkage import linkage_attack
from sdc_core.risk.population_risk import PopulationRisk, population_risk
from sdc_core.utility import eigenvalue_similarity, il1
from sdc_core.utility.il1 import IL1Result, numbers_in_both
from ui import charts

RISK_KEYS = ("expected_reidentifications", "global_risk_percent", "percent_unique",
             "percent_k_le_threshold", "percent_below_k", "min_k", "min_k_wildcard",
             "min_k_category")
LINKAGE_KEYS = ("linkage_reidentifications", "linkage_risk_percent", "linkage_percent_certain")


def recipe_json(steps: list[dict[str, Any]], seed: int) -> str:
    """The canonical text of a recipe: the cache key of everything computed from it."""
    return json.dumps({"version": 1, "seed": int(seed), "steps": steps}, sort_keys=True)


@dataclass(frozen=True)
class Workbench:
    """The protected table and its figures. ``utility`` reads every column of the table as
    released; :meth:`utility_for` leaves out the columns not released, as the pages do."""

    original: pd.DataFrame
    applied: ApplyResult
    after: dict[str, Any]
    utility: dict[str, Any]
    changed: list[str]
    loss: IL1Result
    numeric: list[str] = field(default_factory=list)
    #: risk in the population of the protected table (:func:`release_population`), when
    #: asked for: None when nothing says how the file was sampled, the reason (text) when it
    #: cannot be estimated
    population: PopulationRisk | str | None = None

    def utility_for(self, not_released: Sequence[str]) -> dict[str, Any]:
        """``utility`` with the columns ``not_released`` out of the release: the headline
        IL1_release = (1/|C|) Σ_{c∈C} IL1_c over the released columns C (the table's less
        ``not_released``), the figure a sweep and ``compare`` give for the same release, then
        seed 003's IL1 figures over the changed released columns."""
        loss = self.loss.without(not_released)
        return {**self.utility, **loss.summary(), "per_column": loss.per_column,
                "released": loss.released}

    def figure(self, column: str) -> go.Figure:
        """Before/after figure of one changed column (built on demand, from aggregates)."""
        return column_figure(self.original[column], self.applied.data[column],
                             column in self.numeric, band_edges(self.applied.reports, column,
                                                                self.original[column]))


def evaluate(df: pd.DataFrame, recipe_text: str, qi: list[str], weight: str | None, k: int,
             na: str, alpha: float, numeric: list[str], known: list[str] | None = None,
             applied: ApplyResult | None = None) -> Workbench:
    """Apply the recipe (unless ``applied`` is its result already); risk after, read from the
    released keys and by the linkage attack (with the ``known`` columns); IL1 (of the changed
    columns, every column released: :meth:`Workbench.utility_for` leaves some out) and
    eigenvalue similarity."""
    recipe = parse_recipe(json.loads(recipe_text))
    applied = applied or apply_recipe(recipe, df)
    out = applied.data
    after: RiskProfile = risk_profile(out, qi, weight=weight, k=k, na=na, alpha=alpha)
    attack = linkage_attack(df, out, qi, recipe, known or [], applied.reports)
    touched = list(dict.fromkeys(c for s in recipe.steps
                                 for c in ([s["column"]] if "column" in s else s["columns"])))
    # a column recoded to text (rare codes → "other") is compared as categories
    loss = il1(df, out, numeric, columns=touched)
    similarity = eigenvalue_similarity(df, out, numeric)
    numeric = numbers_in_both(df, out, numeric)
    return Workbench(df, applied, {key: getattr(after, key) for key in RISK_KEYS}
                     | {"fk": after.fk} | attack.summary(),
                     {**loss.summary(), "eigenvalue_similarity_percent": similarity,
                      "per_column": loss.per_column}, loss.changed, loss, list(numeric))


def release_population(df: pd.DataFrame, recipe_text: str, qi: list[str], weight: str | None,
                       sampling: dict[str, float]) -> PopulationRisk | str | None:
    """The risk in the population of the table the recipe makes of ``df`` (the same table as
    :func:`evaluate`'s: a recipe's draws are seeded), from how the file was sampled
    (``sampling``, as :func:`~sdc_core.risk.population_risk.population_risk` takes it): None
    when nothing says, the reason (text) when it cannot be estimated. A job of its own, so
    that it runs beside :func:`evaluate` in another worker."""
    out = apply_recipe(parse_recipe(json.loads(recipe_text)), df).data
    try:
        return population_risk(out, qi, weight, **sampling)
    except SdcInputError as err:
        return str(err)


def detached(df: pd.DataFrame, *args: Any, **kwargs: Any) -> Workbench:
    """:func:`evaluate` without the original table in the result: what a worker process sends
    back (the caller holds the table)."""
    return replace(evaluate(df, *args, **kwargs), original=None)


#: The most bands a before/after figure draws as its bins.
MAX_BAND_BINS = 200


def band_edges(reports: list[dict[str, Any]], column: str,
               original: pd.Series) -> np.ndarray | None:
    """The band edges (o + j·w over ``original``'s range, or the custom breaks) when banding
    is the last step on the column of numbers (then the figure counts the original values per
    band, as the released ones are), else None."""
    last = [r for r in reports if r.get("column") == column]
    if not last or last[-1]["method"] != "band" or not is_number(original):
        return None
    x = original.to_numpy(dtype=float, na_value=np.nan)
    if not np.isfinite(x).any():
        return None
    if "breaks" in last[-1]:  # custom breaks: the bands themselves
        return np.asarray(last[-1]["breaks"], dtype=float)
    w, o = float(last[-1]["width"]), float(last[-1]["origin"])
    first, end = np.floor((np.nanmin(x) - o) / w), np.floor((np.nanmax(x) - o) / w) + 1
    if end - first > MAX_BAND_BINS:
        return None
    return o + w * np.arange(first, end + 1)


def column_figure(before: pd.Series, after: pd.Series, numeric: bool,
                  edges: np.ndarray | None = None) -> go.Figure:
    """Before/after figure of a column: histograms on common bins (the bands of a banded
    column, ``edges``) for numbers, else records per category."""
    name = str(before.name)
    if numeric and is_number(after):
        return charts.overlaid_histograms(
            before.to_numpy(dtype=float, na_value=np.nan),
            after.to_numpy(dtype=float, na_value=np.nan),
            f"{name}: original and protected values" + (" per band" if edges is not None
                                                         else ""), edges=edges)
    def counts(s: pd.Series) -> pd.Series:
        c = s.value_counts(dropna=False)
        return c.set_axis(["(missing)" if pd.isna(v) else v for v in c.index])

    return charts.before_after_bars(counts(before), counts(after),
                                    f"{name}: records per category, original and protected")
