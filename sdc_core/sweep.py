"""Parameter sweeps: one row of risk and utility per setting (seed 003, Table S4-A).

A grid names settings to try one at a time on the original table:

```json
{"seeds": 5, "seed": 0, "numeric": ["age", "wtkg"], "k": 5, "known": [],
 "not_released": ["pidnum"], "pareto_risk": "linkage", "il1_missing": "max", "settings": [
  {"method": "band", "column": "age", "param": "width", "values": [5, 10, 15]},
  {"method": "pram", "column": "gender", "param": "p", "values": [0.01, 0.05, 0.1]},
  {"method": "pram", "column": "race", "param": "retention", "values": [0.9, 0.8],
   "fixed": {"invariant": true}}]}
```

Each setting is the one-step recipe ``{"seed": s, "steps": [{"method", "column", param: value,
**fixed}]}``, so any row can be reproduced with ``apply``. Randomised methods (PRAM, relabeling,
rank swapping, randomized response) run with seeds ``seed, seed+1, …`` (``seeds`` of them) and
report the mean, with the standard deviation in ``*_sd`` columns; the last column, ``recipe``,
holds each setting's recipe as JSON (to reopen it). The first row is the unprotected
``BASELINE``.

``"combine": true`` makes every combination of the settings one multi-step recipe, and
``"target"`` names the cheapest setting that meets a risk target, found by a pruned search
unless ``"search": "exhaustive"``; ``"max_settings"`` (default 500) bounds the settings or
combinations asked for. See :mod:`sdc_core.search` and ``docs/utility.md``.

Benchmark analyses. ``"analysis"`` holds a spec of :func:`sdc_core.utility.analysis.parse_spec`
(the file ``compare --analysis`` reads). Every row then also carries the figures of
:mod:`sdc_core.utility.validity` for its release — ``mean_ci_overlap``, ``ci_overlap_loss``
(1 − it), ``worst_tvd``, ``pmse``, ``s_pmse``, ``analyses_holding`` (the share of the analyses
whose verdict is "holds", :func:`sdc_core.utility.validity.verdict`) and two per analysis
(``ci_overlap: NAME``, or ``tvd: NAME`` for a table, and ``holds: NAME``, 1 when its verdict is
"holds", else 0) — the mean over seeds with the spread in ``*_sd``. ``"loss"`` names
the loss the Pareto front and the target's best rank by (:data:`LOSSES`: ``IL1_release`` by
default), and the target may keep a utility besides its risk bound::

    "loss": "ci_overlap_loss",
    "target": {"measure": "linkage_risk_percent", "at_most": 1,
               "keep": {"measure": "mean_ci_overlap", "at_least": 0.9}}

(``at_least`` for a figure where higher is better, ``at_most`` otherwise: :data:`KEEP_MEASURES`);
``{"measure": "analyses_holding", "at_least": 1}`` keeps every analysis holding, by the verdict
the Protect page shows.

Risk is measured on the quasi-identifiers, twice: the measures of seed 003, which read the
released keys as if they were true (``expected_reidentifications`` …), and the linkage attack of
:mod:`sdc_core.risk.linkage` (``linkage_reidentifications``, ``linkage_risk_percent``), which
also sees perturbation; ``known`` names extra numeric columns the attacker knows. IL1 and
eigenvalue similarity are measured on the ``numeric`` columns and, for IL1, the categorical
ones. Speed: the quasi-identifiers are factorised once and only a changed key is re-encoded; IL1
is computed for the changed column only (the others are unchanged); for the correlation matrix
only the changed column's row is recomputed.

The loss of a row is the headline ``IL1_release`` of :mod:`sdc_core.utility.il1`:
(1/|C|) Σ_{c∈C} IL1_c over the released columns C, the table's columns less ``not_released``
(the columns tagged "not released" on the Data page), unchanged columns counting 0; the same
figure, over the same C, as the Protect page, the report and ``compare`` give for the same
release. Seed 003's ``IL1_overall`` (a mean over the changed columns) stays in the table.
``il1_missing`` is the reading of a numeric value that a setting turned into a missing one:
``"max"`` (the default) counts it as the maximum IL1 loss 1, ``"ignore"`` leaves it out of IL1
(sdcMicro's reading, for parity), see :mod:`sdc_core.utility.il1`. ``suppressed_values`` counts
those values whatever the reading. A row is **Pareto-optimal** (``pareto``) when no other row is
at most as high on the risk, ``IL1_release`` and ``suppressed_values`` and lower on one of them
(without the third criterion, under ``"ignore"``, a suppression would look nearly free).
The risk is ``linkage_reidentifications`` (``"pareto_risk":
"linkage"``, the default) or ``expected_reidentifications`` (``"pareto_risk": "naive"``).
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from sdc_core import rng
from sdc_core.checks import check_k
from sdc_core.columns import is_number, restore
from sdc_core.errors import SdcInputError
from sdc_core.io import Kind, infer_kinds
from sdc_core.methods.banding import measured, read_bands
from sdc_core.recipe import (
    METHODS,
    RANDOM_METHODS,
    Recipe,
    check_step,
    describe_steps,
    run_step,
)
from sdc_core.risk.classes import check_weights, sizes_from_keys
from sdc_core.risk.keys import encode_keys
from sdc_core.risk.linkage import linkage_attack
from sdc_core.risk.profile import profile_from_sizes
from sdc_core.search import (
    Combination,
    Dimension,
    Keep,
    Target,
    combinations,
    count,
    pruned_search,
    recipe_steps,
    violations,
)
from sdc_core.utility.eigen import column_correlations, correlation_matrix, tidy
from sdc_core.utility.il1 import (
    IL1_MISSING,
    categorical_il1,
    check_il1_missing,
    combine,
    il1,
    numbers_in_both,
    numeric_il1,
    released_columns,
)

RISK = ["percent_unique", "percent_k_le_threshold", "avg_linkage_risk_percent",
        "expected_reidentifications", "percent_below_k"]
LINKAGE = ["linkage_reidentifications", "linkage_risk_percent"]
UTILITY = ["IL1_numeric", "IL1_categorical", "IL1_overall", "eigenvalue_similarity_percent"]
COLUMNS = ["method", "column", "param_name", "param_value"] + RISK + LINKAGE + UTILITY + [
    "pareto", "suppressed_values", "n_seeds"]
#: The loss of a row by default: its Pareto front, its target's best and the Trade-offs
#: page's axis.
LOSS = "IL1_release"
#: The losses a grid may rank by (``"loss"``): the headline IL1, or, with benchmark analyses
#: (``"analysis"``), 1 − their mean CI overlap, the worst table's TVD or S_pMSE.
LOSSES = (LOSS, "ci_overlap_loss", "worst_tvd", "s_pmse")
#: What a grid's analyses add to each row (:mod:`sdc_core.utility.validity`).
VALIDITY = ["mean_ci_overlap", "ci_overlap_loss", "worst_tvd", "pmse", "s_pmse",
            "analyses_holding"]
#: The utilities a target may ask to keep, and the direction that is better.
KEEP_MEASURES = {"mean_ci_overlap": "at_least", "ci_overlap_loss": "at_most",
                 "worst_tvd": "at_most", "s_pmse": "at_most", "pmse": "at_most",
                 LOSS: "at_most", "eigenvalue_similarity_percent": "at_least",
                 "analyses_holding": "at_least"}
if TYPE_CHECKING:  # statsmodels and scipy load in a second: only for grids that need them
    from sdc_core.utility.analysis import AnalysisSpec

#: A grid's population figure (with ``sampling_fraction`` or ``population``, or a weight):
#: Dankar's estimate of the share of the population that is unique on the keys, in percent.
POPULATION = "population_uniqueness_percent"
PARETO_RISK = {"linkage": "linkage_reidentifications", "naive": "expected_reidentifications"}
TARGET_MEASURES = LINKAGE + RISK + [POPULATION]
SEARCHES = ("pruned", "exhaustive")
MAX_SETTINGS = 500
#: The most a grid may raise ``max_settings`` to, and the most seeds a setting runs with: a
#: grid is answered in minutes, not hours.
MAX_SETTINGS_LIMIT = 10_000
MAX_SEEDS = 100
PREFIXES_KEPT = 64
_GRID_KEYS = {"seeds", "seed", "numeric", "k", "known", "not_released", "pareto_risk",
              "il1_missing", "settings", "combine", "target", "search", "max_settings",
              "analysis", "loss", "sampling_fraction", "population"}
_SETTING_KEYS = {"method", "column", "columns", "param", "values", "fixed"}

Progress = Callable[[int, int, str], None]


@dataclass(frozen=True)
class Setting:
    """One row of the table: its recipe steps and how the row names it."""

    steps: list[dict[str, Any]]
    method: str
    column: str
    param: str
    value: Any
    combination: Combination | None = None

    @property
    def step(self) -> dict[str, Any]:
        """The step of a one-step setting."""
        return self.steps[0]


@dataclass(frozen=True)
class Grid:
    """A validated grid: the settings (or, combined, the dimensions) and what they share."""

    settings: list[Setting]
    seeds: int
    seed: int
    numeric: list[str]
    k: int
    known: list[str]
    pareto_risk: str
    il1_missing: str
    not_released: list[str]
    dims: list[Dimension] | None = None
    target: Target | None = None
    search: str = "pruned"
    analysis: AnalysisSpec | None = None
    loss: str = LOSS
    sampling: dict[str, float] = field(default_factory=dict)


def _column_names(grid: dict[str, Any], key: str, df: pd.DataFrame) -> list[str]:
    names = grid[key]
    if not isinstance(names, list) or not all(isinstance(c, str) for c in names):
        raise SdcInputError(f"grid: {key} must be a list of column names")
    missing = [c for c in names if c not in df.columns]
    if missing:
        raise SdcInputError(f"grid: unknown {key} column(s) {', '.join(missing)}")
    return names


def _whole(grid: dict[str, Any], name: str, default: int, low: int, high: int) -> int:
    v = grid.get(name, default)
    if not isinstance(v, int) or isinstance(v, bool) or not low <= v <= high:
        raise SdcInputError(f"grid: {name} must be a whole number from {low} to {high}")
    return v


def _bound(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not np.isfinite(value) or value < 0:
        raise SdcInputError(f"grid: {where} must be a number ≥ 0, not {value!r}")
    return float(value)


def _target(raw: Any, analysis: AnalysisSpec | None) -> Target | None:
    if raw is None:
        return None
    if not isinstance(raw, dict) or not {"measure", "at_most"} <= set(raw) \
            or set(raw) - {"measure", "at_most", "keep"}:
        raise SdcInputError('grid: target must be {"measure": …, "at_most": …} with, if '
                            'wanted, "keep": {"measure": …, "at_least" or "at_most": …}')
    if raw["measure"] not in TARGET_MEASURES:
        raise SdcInputError(f"grid: target measure must be one of {', '.join(TARGET_MEASURES)}"
                            f", not {raw['measure']!r}")
    return Target(raw["measure"], _bound(raw["at_most"], "target at_most"),
                  _keep(raw["keep"], analysis) if "keep" in raw else None)


def _keep(raw: Any, analysis: AnalysisSpec | None) -> Keep:
    """The utility a target keeps: one measure of :data:`KEEP_MEASURES`, bounded in the
    direction that is better."""
    if not isinstance(raw, dict) or "measure" not in raw or len(raw) != 2:
        raise SdcInputError('grid: target keep must be {"measure": …, "at_least": …} or '
                            '{"measure": …, "at_most": …}')
    measure = raw["measure"]
    if measure not in KEEP_MEASURES:
        raise SdcInputError(f"grid: target keep measure must be one of "
                            f"{', '.join(KEEP_MEASURES)}, not {measure!r}")
    if measure in VALIDITY and analysis is None:
        raise SdcInputError(f"grid: keeping {measure} needs benchmark analyses (\"analysis\")")
    side = KEEP_MEASURES[measure]
    if side not in raw:
        raise SdcInputError(f"grid: {measure} is kept with {side} (higher is better)"
                            if side == "at_least" else
                            f"grid: {measure} is kept with {side} (lower is better)")
    return Keep(measure, **{side: _bound(raw[side], f"target keep {side}")})


def _checked(where: str, step: dict[str, Any], df: pd.DataFrame) -> dict[str, Any]:
    try:
        step = check_step(0, step)
    except SdcInputError as err:
        raise SdcInputError(f"{where}: {str(err).split(': ', 1)[1]}") from None
    cols = step.get("columns") or [step.get("column")]
    absent = [c for c in cols if c not in df.columns]
    if absent:
        raise SdcInputError(f"{where}: unknown column(s) {', '.join(map(str, absent))}")
    return step


def _entries(raw: Any) -> list[dict[str, Any]]:
    """The grid's settings, checked for shape."""
    if not isinstance(raw, list) or not raw:
        raise SdcInputError("grid: settings must be a non-empty list")
    for i, s in enumerate(raw):
        where = f"grid setting {i + 1}"
        if not isinstance(s, dict):
            raise SdcInputError(f"{where}: must be an object")
        extra = set(s) - _SETTING_KEYS
        if extra:
            raise SdcInputError(f"{where}: unknown key(s) {', '.join(sorted(extra))}")
        for key in ("method", "param", "values"):
            if key not in s:
                raise SdcInputError(f"{where}: missing key '{key}'")
        if not isinstance(s["values"], list) or not s["values"]:
            raise SdcInputError(f"{where}: values must be a non-empty list")
        if not isinstance(s.get("fixed", {}), dict):
            raise SdcInputError(f"{where}: fixed must be an object")
        if not isinstance(s["method"], str) or s["method"] not in METHODS:  # a list: no name
            raise SdcInputError(f"{where}: unknown method {s['method']!r}")
    return raw


def _steps(s: dict[str, Any], where: str, df: pd.DataFrame) -> list[list[dict[str, Any]]]:
    """The steps of each value of a grid setting, checked: one step, or for a one-column
    method given ``columns`` one step per column with the same value."""
    if "columns" in s and METHODS[s["method"]].target == "column":
        if not isinstance(s["columns"], list) or not s["columns"]:
            raise SdcInputError(f"{where}: columns must be a non-empty list of column names")
        targets = [{"column": c} for c in s["columns"]]
    else:
        targets = [{"columns": s["columns"]} if "columns" in s else {"column": s.get("column")}]
    return [[_checked(where, {"method": s["method"], **t, **s.get("fixed", {}), s["param"]: v},
                      df) for t in targets] for v in s["values"]]


def _target_name(step: dict[str, Any]) -> str:
    return step.get("column") or "+".join(step.get("columns", []))


def _targets_name(steps: list[dict[str, Any]]) -> str:
    return "+".join(_target_name(s) for s in steps)


def _dimension(i: int, s: dict[str, Any], df: pd.DataFrame) -> Dimension:
    """A setting of a combined grid: the off value leaves the step out, and a method's
    ``main`` parameter is ordered weakest first."""
    m = METHODS[s["method"]]
    main = s["param"] == m.main
    values = list(dict.fromkeys(s["values"]))
    if main:
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            raise SdcInputError(f"grid setting {i + 1}: values of {m.main} must be numbers")
        values.sort(reverse=m.stronger == "lower")
        values.sort(key=lambda v: v != m.off)  # off first: the weakest of all
    on = [v for v in values if not (main and v == m.off)]
    made = dict(zip(on, _steps({**s, "values": on}, f"grid setting {i + 1}", df))) if on else {}
    steps = tuple(tuple(made[v]) if v in made else None for v in values)
    columns = s["columns"] if "columns" in s else [s.get("column")]
    label = f"{s['method']} {'+'.join(map(str, columns))} {s['param']}"
    return Dimension(label, s["param"], tuple(values), steps, monotone=main)


def _columns_of(d: Dimension) -> set[str]:
    steps = next((s for s in d.steps if s is not None), ())
    return {c for st in steps for c in ([st["column"]] if "column" in st else st["columns"])}


def _loss_orders(dims: list[Dimension]) -> list[Dimension]:
    """Loss is not assumed to grow along a dimension when a later step works on one of its
    columns (it may leave that step less to do)."""
    return [replace(d, loss_monotone=d.monotone and not any(
        _columns_of(d) & _columns_of(later) for later in dims[i + 1:]))
        for i, d in enumerate(dims)]


def parse_grid(grid: Any, df: pd.DataFrame) -> Grid:
    """The grid of the module docstring, validated against ``df``."""
    if not isinstance(grid, dict):
        raise SdcInputError("a grid must be a JSON object with 'settings'")
    unknown = set(grid) - _GRID_KEYS
    if unknown:
        raise SdcInputError(f"grid: unknown key(s) {', '.join(sorted(unknown))}")
    seeds = _whole(grid, "seeds", 1, 1, MAX_SEEDS)
    base = _whole(grid, "seed", 0, 0, rng.MAX_SEED - seeds + 1)
    budget = _whole(grid, "max_settings", MAX_SETTINGS, 1, MAX_SETTINGS_LIMIT)
    k = check_k(grid.get("k", 5))
    numeric = _column_names(grid, "numeric", df) if grid.get("numeric") is not None else [
        c for c, kind in infer_kinds(df).items() if kind is Kind.NUMERIC]
    known = _column_names(grid, "known", df) if "known" in grid else []
    not_released = _column_names(grid, "not_released", df) if "not_released" in grid else []
    pareto_risk = grid.get("pareto_risk", "linkage")
    if pareto_risk not in PARETO_RISK:
        raise SdcInputError(f"grid: pareto_risk must be one of {', '.join(PARETO_RISK)}, "
                            f"not {pareto_risk!r}")
    il1_missing = grid.get("il1_missing", "max")
    if il1_missing not in IL1_MISSING:
        raise SdcInputError(f"grid: il1_missing must be one of {', '.join(IL1_MISSING)} (a "
                            "suppressed numeric value counts as IL1 loss 1, or is left out), "
                            f"not {il1_missing!r}")
    combine = grid.get("combine", False)
    if not isinstance(combine, bool):
        raise SdcInputError("grid: combine must be true or false")
    search = grid.get("search", "pruned")
    if search not in SEARCHES:
        raise SdcInputError(f"grid: search must be one of {', '.join(SEARCHES)}, "
                            f"not {search!r}")
    analysis = None
    if grid.get("analysis") is not None:
        from sdc_core.utility.analysis import check_columns, parse_spec

        try:
            analysis = parse_spec(grid["analysis"])
            check_columns(analysis, df.columns)
        except SdcInputError as err:
            raise SdcInputError(f"grid: {err}") from None
    loss = grid.get("loss", LOSS)
    if loss not in LOSSES:
        raise SdcInputError(f"grid: loss must be one of {', '.join(LOSSES)}, not {loss!r}")
    if loss != LOSS and analysis is None:
        raise SdcInputError(f"grid: the loss {loss} needs benchmark analyses (\"analysis\")")
    target = _target(grid.get("target"), analysis)
    raw = _entries(grid.get("settings"))
    shared = (seeds, base, numeric, k, known, pareto_risk, il1_missing, not_released)
    chosen = {"analysis": analysis, "loss": loss,
              "sampling": {k: grid[k] for k in ("sampling_fraction", "population") if k in grid}}
    if combine:
        order = sorted(range(len(raw)), key=lambda i: METHODS[raw[i]["method"]].order)
        dims = _loss_orders([_dimension(i, raw[i], df) for i in order])
        labels = [d.label for d in dims]
        twice = sorted({x for x in labels if labels.count(x) > 1})
        if twice:
            raise SdcInputError(f"grid: {', '.join(twice)} is set twice in a combined grid")
        asked = count(dims)
        if asked > budget:
            raise SdcInputError(f"grid: {asked:,} combinations asked for ("
                                + " × ".join(str(len(d.values)) for d in dims)
                                + f"), more than max_settings = {budget}; use fewer values "
                                "or raise max_settings")
        return Grid([], *shared, dims=dims, target=target, search=search, **chosen)
    asked = sum(len(s["values"]) for s in raw)
    if asked > budget:
        raise SdcInputError(f"grid: {asked:,} settings asked for, more than max_settings = "
                            f"{budget}; use fewer values or raise max_settings")
    settings = []
    for i, s in enumerate(raw):
        for value, steps in zip(s["values"], _steps(s, f"grid setting {i + 1}", df)):
            settings.append(Setting(steps, s["method"], _targets_name(steps), s["param"], value))
    return Grid(settings, *shared, target=target, search=search, **chosen)


def combination_setting(dims: list[Dimension], x: Combination) -> Setting:
    """The row of combination ``x``: its steps and the methods, targets and parameters in it."""
    steps = recipe_steps(dims, x)
    on = [d for d, i in zip(dims, x) if d.steps[i] is not None]
    return Setting(steps, "+".join(s["method"] for s in steps) or "none",
                   _targets_name(steps), "+".join(d.param for d in on), np.nan, x)


class SweepContext:
    """What every setting shares: encoded keys, baseline measures, baseline correlations, and
    the released columns C of ``IL1_release`` (``df``'s columns less ``not_released``)."""

    def __init__(self, df: pd.DataFrame, qi: Sequence[str], numeric: Sequence[str], k: int,
                 weight: str | None, na: str, alpha: float, known: Sequence[str] = (),
                 il1_missing: str = "max", not_released: Sequence[str] = (),
                 analysis: AnalysisSpec | None = None,
                 sampling: dict[str, float] | None = None) -> None:
        self.df, self.qi, self.numeric, self.k = df, list(qi), list(numeric), k
        self.na, self.alpha, self.known = na, alpha, list(known)
        self.not_released = list(not_released)
        self.released = released_columns(list(df.columns), self.not_released)
        self.il1_missing = check_il1_missing(il1_missing)
        self.keys = encode_keys(df, qi, na)
        self.w = check_weights(df, weight)
        self.rid = rng.record_ids(len(df))
        self.r0 = correlation_matrix(df, self.numeric)
        self.lam0 = np.sort(np.linalg.eigvalsh(self.r0))[::-1] if self.numeric else np.array([])
        self.attacked = df[self.qi + self.known]
        self._prefixes: OrderedDict[tuple[int, str], tuple[dict[str, pd.Series],
                                                           list[dict[str, Any]]]] = OrderedDict()
        self.baseline_risk = self.risk(self.keys) | self.linkage(self.attacked, None)
        self.validity, self.validity_columns = None, []
        if analysis is not None:
            from sdc_core.utility.analysis import analysis_columns
            from sdc_core.utility.validity import Validity

            self.validity = Validity(analysis, df)
            self.validity_columns = list(dict.fromkeys(
                [*analysis.table_columns(), *(c for a in analysis.analyses
                                              for c in analysis_columns(a))]))
        self.baseline_validity = self.analyses({})
        self.population_size = self._population_size(weight, sampling or {})
        # the population models' classes (a blank a category of its own), encoded once: a
        # setting re-encodes only the keys it changed
        self.population_keys = None if self.population_size is None else \
            encode_keys(df, self.qi, "category")
        self.baseline_population = self.population({})

    def risk(self, keys) -> dict[str, float]:
        cs = sizes_from_keys(keys, self.w, self.alpha)
        m = profile_from_sizes(cs.fk, cs.Fk, cs.n_classes, self.k)
        return {key: m[key] for key in RISK}

    def linkage(self, released: pd.DataFrame, recipe: Recipe | None,
                reports: list[dict[str, Any]] | None = None) -> dict[str, float]:
        """The linkage attack on the quasi-identifiers (and known columns) of ``released``
        (``reports``: what each step of ``recipe`` did, as the attack reads its recodings)."""
        result = linkage_attack(self.attacked, released, self.qi, recipe, self.known, reports)
        return {"linkage_reidentifications": result.linkage_reidentifications,
                "linkage_risk_percent": result.linkage_risk_percent}

    def similarity(self, r: np.ndarray) -> float:
        p = len(self.numeric)
        if p == 0:
            return 100.0
        lam = np.sort(np.linalg.eigvalsh(r))[::-1]
        return float(100.0 * (1.0 - np.abs(lam - self.lam0).sum() / p))

    def column_setting(self, column: str, values: pd.Series, recipe: Recipe,
                       reports: list[dict[str, Any]]) -> dict[str, float]:
        """Measures after replacing one column by ``values`` (made by ``recipe``)."""
        original = self.df[column]
        # band labels count as their midpoints; a column recoded to text (rare codes →
        # "other") is compared as categories and leaves the correlation measure unchanged
        numbers = read_bands(values, original)
        is_num = column in self.numeric and is_number(original) and is_number(numbers)
        value, changed = numeric_il1(original, numbers, self.il1_missing) if is_num \
            else categorical_il1(original, numbers)
        loss = combine({column: value}, [column] if is_num else [], [column] if changed else [],
                       self.released, missing=self.il1_missing)
        risk = self.risk(self.keys.with_column(column, values, self.na)) \
            if column in self.qi else {key: self.baseline_risk[key] for key in RISK}
        if column in self.attacked:
            risk |= self.linkage(self.attacked.assign(**{column: values}), recipe, reports)
        else:
            risk |= {key: self.baseline_risk[key] for key in LINKAGE}
        similarity = 100.0
        if is_num:
            frame = self.df[self.numeric].assign(**{column: numbers})
            row = column_correlations(frame, column, self.numeric)
            j = self.numeric.index(column)
            r = self.r0.copy()
            r[j, :] = row
            r[:, j] = row
            similarity = self.similarity(tidy(r))
        suppressed = int((values.isna() & original.notna()).sum())
        return {**risk, **loss.summary(), "eigenvalue_similarity_percent": similarity,
                "suppressed_values": suppressed}

    def table_setting(self, protected: pd.DataFrame, recipe: Recipe, changed: Sequence[str],
                      reports: list[dict[str, Any]]) -> dict[str, float]:
        """Measures after steps that changed several columns (local suppression,
        microaggregation, noise, a combination). A numeric column recoded to text is compared
        as categories and leaves the correlation measure; band labels count as their
        midpoints."""
        numbers = measured(self.df, protected)
        numeric = numbers_in_both(self.df, numbers, self.numeric)
        result = il1(self.df, protected, [c for c in numeric if c in changed], list(changed),
                     missing=self.il1_missing, not_released=self.not_released)
        risk = self.risk(encode_keys(protected, self.qi, self.na)) \
            | self.linkage(protected[self.attacked.columns], recipe, reports)
        r = self.r0 if not self.numeric else correlation_matrix(
            numbers.assign(**{c: self.df[c] for c in self.numeric if c not in numeric}),
            self.numeric)
        suppressed = int(sum((protected[c].isna() & self.df[c].notna()).sum() for c in changed))
        return {**risk, **result.summary(), "eigenvalue_similarity_percent": self.similarity(r),
                "suppressed_values": suppressed}

    def _population_size(self, weight: str | None, given: dict[str, float]) -> float | None:
        """N, from the grid's ``sampling_fraction`` or ``population``, or the weights' sum."""
        if not given and weight is None:
            return None
        from sdc_core.risk.population_risk import sampling

        try:
            s = sampling(self.df, weight, given.get("sampling_fraction"), given.get("population"))
        except SdcInputError as err:
            if given:
                raise SdcInputError(f"grid: {err}") from None
            return None  # implied by weights that cannot be a population: no such figure
        return None if s is None else s.population

    def population(self, changed: dict[str, pd.Series]) -> dict[str, float]:
        """:data:`POPULATION` of the released keys (the ``changed`` ones replaced), when the
        grid says how the file was sampled; none otherwise."""
        if self.population_size is None:
            return {}
        moved = {c: v for c, v in changed.items() if c in self.qi}
        if changed and not moved:
            return dict(self.baseline_population)
        from sdc_core.risk.population import dankar_estimate, histogram_of_codes

        keys = self.population_keys
        for column, values in moved.items():
            keys = keys.with_column(column, values, "category")
        share = dankar_estimate(histogram_of_codes(keys),
                                population_size=self.population_size)[0].share
        return {POPULATION: 100.0 * share}

    def analyses(self, changed: dict[str, pd.Series]) -> dict[str, float]:
        """The figures of the grid's benchmark analyses (:mod:`sdc_core.utility.validity`) on
        the table with the ``changed`` columns: the summary, then one per analysis; none
        without analyses."""
        if self.validity is None:
            return {}
        cols = self.validity_columns
        moved = [c for c in changed if c in cols]
        frame = self.df[cols].assign(**{c: changed[c] for c in moved})
        report = self.validity.compare(frame, changed=moved)
        return report.summary() | report.per_analysis()

    def changes(self, steps: list[dict[str, Any]], seed: int
                ) -> tuple[dict[str, pd.Series], list[dict[str, Any]]]:
        """The columns ``steps`` change, with their values after the last one, and what each
        step did (its report). Prefixes are kept (least recently used first out), so
        combinations that share their first steps run them once."""
        key = (seed, json.dumps(steps, sort_keys=True, default=str))
        if key in self._prefixes:
            self._prefixes.move_to_end(key)
            return self._prefixes[key]
        before, reports = self.changes(steps[:-1], seed) if len(steps) > 1 else ({}, [])
        step = steps[-1]
        cols = [step["column"]] if "column" in step else list(step["columns"])
        frame = pd.DataFrame({c: before[c] if c in before else self.df[c] for c in cols
                              if c in before or c in self.df.columns}, index=self.df.index)
        done = run_step(frame, step, seed, len(steps) - 1, self.rid)
        out = ({**before, **{c: restore(self.df[c], done.values[c])
                             for c in done.values.columns}}, reports + [done.info])
        self._prefixes[key] = out
        if len(self._prefixes) > PREFIXES_KEPT:
            self._prefixes.popitem(last=False)
        return out

    def evaluate(self, steps: list[dict[str, Any]], seed: int) -> dict[str, float]:
        """The measures of the recipe ``steps`` run with ``seed`` on the original table."""
        if not steps:
            return self.baseline()
        recipe = Recipe(seed=seed, steps=steps)
        changed, reports = self.changes(steps, seed)
        if len(changed) == 1:
            (column, values), = changed.items()
            measures = self.column_setting(column, values, recipe, reports)
        else:
            measures = self.table_setting(self.df.assign(**changed), recipe, list(changed),
                                          reports)
        return measures | self.analyses(changed) | self.population(changed)

    def baseline(self) -> dict[str, float]:
        return {**self.baseline_risk, "IL1_release": 0.0, "IL1_numeric": 0.0,
                "IL1_categorical": 0.0, "IL1_overall": 0.0,
                "eigenvalue_similarity_percent": 100.0, "suppressed_values": 0,
                **self.baseline_validity, **self.baseline_population}


def pareto_front(*criteria: np.ndarray) -> np.ndarray:
    """True where no other point is ≤ on every criterion and < on one (lower is better)."""
    pts = np.column_stack([np.asarray(c, dtype=float) for c in criteria])
    le = (pts[None, :, :] <= pts[:, None, :]).all(axis=2)
    lt = (pts[None, :, :] < pts[:, None, :]).any(axis=2)
    return ~(le & lt).any(axis=1)


@dataclass(frozen=True)
class SweepResult:
    """The trade-off table (its loss is ``loss``, :data:`LOSS` unless the grid chose another of
    :data:`LOSSES`); with a target, its best row (``best``: a
    table index, None when no setting meets it); ``asked``: the settings the grid names,
    ``evaluated``: those run; ``violations``: evaluated pairs that contradict the pruned
    search's monotonicity."""

    table: pd.DataFrame
    asked: int
    evaluated: int
    target: Target | None = None
    best: int | None = None
    violations: int = 0
    pruned: bool = False
    loss: str = LOSS

    @property
    def best_recipe(self) -> dict[str, Any] | None:
        """The best row's recipe (``{"seed", "steps"}``, for :func:`sdc_core.recipe.parse_recipe`);
        None without a best row."""
        return None if self.best is None else json.loads(self.table.at[self.best, "recipe"])


def _row(setting: Setting, results: list[dict[str, float]], seed: int,
         dims: list[Dimension] | None) -> dict[str, Any]:
    frame = pd.DataFrame(results)
    row = {"method": setting.method, "column": setting.column, "param_name": setting.param,
           "param_value": setting.value, **frame.mean().to_dict(), "n_seeds": len(results),
           "n_steps": len(setting.steps),
           "recipe": json.dumps({"seed": seed, "steps": setting.steps}, ensure_ascii=False)}
    if dims is not None:
        row |= {d.label: d.values[i] for d, i in zip(dims, setting.combination)}
    if len(results) > 1:
        row |= {f"{c}_sd": v for c, v in frame.std(ddof=1).items()}
    return row


def _best(table: pd.DataFrame, loss: str = LOSS) -> int | None:
    """The row that meets the target at the least ``loss``, then fewest suppressed values,
    fewest steps, earliest (module docstring of :mod:`sdc_core.search`)."""
    met = table[table["meets_target"] & (table["method"] != "BASELINE")]
    if met.empty:
        return None
    order = met.assign(_at=np.arange(len(met))).sort_values(
        [loss, "suppressed_values", "n_steps", "_at"], kind="stable")
    return int(order.index[0])


def run_sweep(df: pd.DataFrame, qi: Sequence[str], grid: Any, weight: str | None = None,
              na: str = "wildcard", alpha: float = 1.0,
              progress: Progress | None = None) -> SweepResult:
    """The trade-off table of a grid (module docstring)."""
    g = parse_grid(grid, df)
    settings = g.settings or [combination_setting(g.dims, x) for x in combinations(g.dims)]
    try:
        ctx = SweepContext(df, qi, g.numeric, g.k, weight, na, alpha, g.known, g.il1_missing,
                           g.not_released, g.analysis, g.sampling)
    except SdcInputError as err:
        raise SdcInputError(f"grid: {err}") from None
    if g.target is not None and g.target.measure == POPULATION and ctx.population_size is None:
        raise SdcInputError(f"grid: the target {POPULATION} needs the population: "
                            '"sampling_fraction", "population" or a weight column')
    rows: dict[int, dict[str, Any]] = {}  # by the setting's position in enumeration order

    def runs(steps: list[dict[str, Any]]) -> int:
        return g.seeds if any(s["method"] in RANDOM_METHODS for s in steps) else 1

    total = sum(runs(s.steps) for s in settings)
    done = 0

    def evaluate(i: int) -> dict[str, Any]:
        """Run setting i (over the seeds) and keep its row."""
        nonlocal done
        s = settings[i]
        label = describe_setting(s)
        results = []
        for j in range(runs(s.steps)):
            try:
                results.append(ctx.evaluate(s.steps, g.seed + j))
            except SdcInputError as err:
                raise SdcInputError(f"grid setting {label}: {err}") from None
            done += 1
            if progress:
                progress(done, total, label)
        rows[i] = _row(s, results, g.seed, g.dims)
        return rows[i]

    pruned = g.dims is not None and g.target is not None and g.search == "pruned"
    if pruned:
        at = {s.combination: i for i, s in enumerate(settings)}
        pruned_search(g.dims, lambda x: g.target.met(evaluate(at[x])[g.target.measure]))
    else:
        for i in range(len(settings)):
            evaluate(i)
    base = {"method": "BASELINE", "column": "", "param_name": "", "param_value": np.nan,
            **ctx.baseline(), "n_seeds": 1, "n_steps": 0,
            "recipe": json.dumps({"seed": g.seed, "steps": []})}
    done_at = sorted(rows)
    table = pd.DataFrame([base] + [rows[i] for i in done_at])
    # a loss that could not be had (NaN: no analysis with intervals) ranks last
    table["pareto"] = pareto_front(table[PARETO_RISK[g.pareto_risk]],
                                   table[g.loss].fillna(np.inf), table["suppressed_values"])
    validity = list(ctx.baseline_validity)  # the analyses' figures (not their _sd columns)
    extra = [LOSS] + validity + list(ctx.baseline_population) + [
        d.label for d in g.dims or []] + ["n_steps"]
    if g.target is not None:
        met = table[g.target.measure] <= g.target.at_most
        if g.target.keep is not None:
            met &= table[g.target.keep.measure].map(g.target.keep.met)
        table["meets_target"] = met
        best = _best(table, g.loss)
        table["best"] = table.index == best
        extra += ["meets_target", "best"]
    sd_cols = [f"{c}_sd" for c in RISK + LINKAGE + UTILITY + [LOSS] + validity + [POPULATION]
               if f"{c}_sd" in table]
    table = table[COLUMNS + extra + sd_cols + ["recipe"]]
    found = None if g.target is None else best
    bad = 0
    if g.dims and g.target is not None:
        evaluated = table.iloc[1:]
        bad = violations(g.dims, [settings[i].combination for i in done_at],
                         evaluated[g.target.measure], evaluated[g.loss])
    return SweepResult(table, len(settings), len(table) - 1, g.target, found, bad, pruned,
                       g.loss)


def describe_setting(s: Setting) -> str:
    """A setting in a few words: "band age width=10", or a combination's steps."""
    if s.combination is None:
        return f"{s.method} {s.column} {s.param}={s.value}"
    return describe_steps(s.steps)
