"""The grid of a sweep (:mod:`sdc_core.sweep.run`): the JSON object that names the settings to try,
validated against the table and expanded into :class:`Setting` rows, or, with ``"combine"``,
into the :class:`~sdc_core.sweep.search.Dimension` of a combined search. Its keys, measures and
bounds are those of :mod:`sdc_core.sweep.run`'s docstring (and ``docs/utility.md``); running a grid
is :func:`sdc_core.sweep.run.run_sweep`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from sdc_core import rng
from sdc_core.checks import check_k
from sdc_core.data.io import Kind, infer_kinds
from sdc_core.errors import SdcInputError
from sdc_core.methods.spec import Release
from sdc_core.names import MEASURES
from sdc_core.recipe import METHODS, check_step, describe_steps, step_columns
from sdc_core.sweep.search import Combination, Dimension, Keep, Target, count, recipe_steps
from sdc_core.utility.il1 import IL1_MISSING

if TYPE_CHECKING:  # statsmodels and scipy load in a second: only for grids that need them
    from sdc_core.utility.analysis import AnalysisSpec

RISK = ["percent_unique", "percent_k_le_threshold", "avg_linkage_risk_percent",
        "expected_reidentifications", "percent_below_k"]
LINKAGE = ["linkage_reidentifications", "linkage_risk_percent"]
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

#: A grid's population figure (with ``sampling_fraction`` or ``population``, or a weight):
#: Dankar's estimate of the share of the population that is unique on the keys, in percent.
POPULATION = "population_uniqueness_percent"
PARETO_RISK = {"linkage": "linkage_reidentifications", "naive": "expected_reidentifications"}
#: A grid's household figures (with ``"household"``, docs/measures.md, "Household risk"): the
#: household risk of the released keys and the household linkage attack.
HOUSEHOLD = ["household_risk_pct", "household_expected_reidentifications",
             "household_linkage_reidentified"]
#: Attribute-disclosure targets (docs/utility.md, "Attribute disclosure in a sweep"): True when
#: the target names a ``column`` (its row figure is ``<measure>: <column>``), None when it may
#: (``inference_gain`` without one: the mean gain over the sensitive columns).
ATTRIBUTE_TARGETS: dict[str, bool | None] = {
    "epsilon_max": False, "epsilon": True, "guess_accuracy": True,
    "inference_accuracy": True, "inference_gain": None,
    "t_closeness": True, "beta_likeness": True, "enhanced_beta_likeness": True,
    "delta_disclosure": True}
#: The record and household figures a grid may target (``"target": {"measure": …}``): the
#: measures declared ``target`` (:data:`sdc_core.names.HEADLINES`) that are not attribute targets.
TARGET_MEASURES = [k for k, m in MEASURES.items() if m.target and k not in ATTRIBUTE_TARGETS]
#: The attribute targets read from :func:`sdc_core.risk.closeness.closeness` of a sensitive
#: column that is not a key (docs/utility.md, "Attribute disclosure in a sweep").
CLOSENESS_TARGETS = ("t_closeness", "beta_likeness", "enhanced_beta_likeness",
                     "delta_disclosure")
SEARCHES = ("pruned", "exhaustive")
MAX_SETTINGS = 500
#: The most a grid may raise ``max_settings`` to, and the most seeds a setting runs with: a
#: grid is answered in minutes, not hours.
MAX_SETTINGS_LIMIT = 10_000
MAX_SEEDS = 100
_GRID_KEYS = {"seeds", "seed", "numeric", "k", "known", "not_released", "pareto_risk",
              "il1_missing", "settings", "combine", "target", "search", "max_settings",
              "analysis", "loss", "sampling_fraction", "population", "sensitive",
              "household"}
_SETTING_KEYS = {"method", "column", "columns", "param", "values", "fixed"}


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

    @property
    def point(self) -> Combination:
        """The combination of a setting of a combined grid (only they have one)."""
        assert self.combination is not None, "not a setting of a combined grid"
        return self.combination


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
    sensitive: list[str] = field(default_factory=list)
    perturbed: list[str] = field(default_factory=list)
    household: str | None = None

    @property
    def dimensions(self) -> list[Dimension]:
        """The dimensions of a combined grid (only it has them)."""
        assert self.dims is not None, "not a combined grid"
        return self.dims


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


def _target_shape(raw: Any, analysis: AnalysisSpec | None) -> None:
    """The checks of a target that need no settings."""
    if raw is None:
        return
    if not isinstance(raw, dict) or not {"measure", "at_most"} <= set(raw) \
            or set(raw) - {"measure", "at_most", "keep", "column"}:
        raise SdcInputError('grid: target must be {"measure": …, "at_most": …} with, if '
                            'wanted, "keep": {"measure": …, "at_least" or "at_most": …}')
    measure = raw["measure"]
    if measure not in TARGET_MEASURES and measure not in ATTRIBUTE_TARGETS:
        raise SdcInputError(f"grid: target measure must be one of "
                            f"{', '.join(TARGET_MEASURES + list(ATTRIBUTE_TARGETS))}"
                            f", not {measure!r}")
    _bound(raw["at_most"], "target at_most")
    if "keep" in raw:
        _keep(raw["keep"], analysis)


def _target(raw: Any, analysis: AnalysisSpec | None, sensitive: Sequence[str] = (),
            perturbed: Sequence[str] = ()) -> Target | None:
    if raw is None:
        return None
    _target_shape(raw, analysis)
    measure = raw["measure"]
    at_most = _bound(raw["at_most"], "target at_most")
    keep = _keep(raw["keep"], analysis) if "keep" in raw else None
    if measure in ATTRIBUTE_TARGETS:
        measure = _attribute_target(raw, sensitive, perturbed)
    elif "column" in raw:
        raise SdcInputError(f"grid: the target {measure} takes no column")
    return Target(measure, at_most, keep)


def _attribute_target(raw: dict[str, Any], sensitive: Sequence[str],
                      perturbed: Sequence[str]) -> str:
    """The row figure an attribute-disclosure target bounds (``epsilon_max``,
    ``inference_gain``, or ``<measure>: <column>``), checked against the grid."""
    measure, takes = raw["measure"], ATTRIBUTE_TARGETS[raw["measure"]]
    column = raw.get("column")
    if column is not None and not isinstance(column, str):
        raise SdcInputError(f"grid: the target {measure}'s column must be a column name")
    if takes is False and column is not None:
        raise SdcInputError(f"grid: the target {measure} takes no column")
    if takes is True and column is None:
        raise SdcInputError(f'grid: the target {measure} needs a "column"')
    if measure.startswith("inference") or measure in CLOSENESS_TARGETS:
        if not sensitive:
            raise SdcInputError(f'grid: the target {measure} needs sensitive columns '
                                '("sensitive")')
        if column is not None and column not in sensitive:
            raise SdcInputError(f"grid: the target {measure} on {column} needs {column} among "
                                f"the sensitive columns ({', '.join(sensitive)})")
    elif (column is not None and column not in perturbed) or not perturbed:
        raise SdcInputError(f"grid: the target {measure} needs a setting that perturbs "
                            f"{column or 'a column'} (PRAM, relabeling, randomized response)")
    return measure if column is None else f"{measure}: {column}"


def _perturbed(steps: list[dict[str, Any]]) -> list[str]:
    """The columns a PRAM, relabeling or randomized response step of ``steps`` names."""
    return list(dict.fromkeys(
        st["column"] for st in steps if METHODS[st["method"]].release is Release.PERTURBATION
        and METHODS[st["method"]].target == "column"))


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
    absent = [c for c in step_columns(step) if c not in df.columns]
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
    method given ``columns`` one step per column with the same value; a whole-table method's
    step (synthesis) names no column."""
    if METHODS[s["method"]].target == "table":
        if "column" in s or "columns" in s:
            raise SdcInputError(f"{where}: {s['method']} works on the whole table: its "
                                "setting names no column")
        targets: list[dict[str, Any]] = [{}]
    elif "columns" in s and METHODS[s["method"]].target == "column":
        if not isinstance(s["columns"], list) or not s["columns"]:
            raise SdcInputError(f"{where}: columns must be a non-empty list of column names")
        targets = [{"column": c} for c in s["columns"]]
    elif METHODS[s["method"]].extra.get("implied_columns") and "columns" not in s:
        targets = [{}]  # its columns are some of its parameters' (record swapping's hierarchy)
    else:
        targets = [{"columns": s["columns"]} if "columns" in s else {"column": s.get("column")}]
    made = [[_checked(where, {"method": s["method"], **t, **s.get("fixed", {}), s["param"]: v},
                      df) for t in targets] for v in s["values"]]
    if METHODS[s["method"]].target == "table":
        for (step,) in made:
            _fits(step, where, len(df))
    return made


def _fits(step: dict[str, Any], where: str, n: int) -> None:
    """Refuse a synthesis step whose leaves cannot be filled by the table's ``n`` records:
    the fit needs at least 2·min_leaf of them (docs/methods.md, "Synthesis (sequential
    CART)")."""
    min_leaf = step.get("min_leaf", METHODS[step["method"]].param("min_leaf").default)
    if 2 * min_leaf > n:
        raise SdcInputError(f"{where}: min_leaf must be at most half the table's {n:,} "
                            f"records ({n // 2:,}), not {min_leaf:g}")


def _target_name(step: dict[str, Any]) -> str:
    return "+".join(map(str, step_columns(step)))


def _targets_name(steps: list[dict[str, Any]]) -> str:
    return "+".join(_target_name(s) for s in steps)


def _dimension(i: int, s: dict[str, Any], df: pd.DataFrame) -> Dimension:
    """A setting of a combined grid: the off value leaves the step out, and a method's
    ``main`` parameter is ordered weakest first; a whole-table method's (synthesis) is
    :func:`_table_dimension`."""
    m = METHODS[s["method"]]
    if m.target == "table":
        return _table_dimension(i, s, df)
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
    first = next((st for sts in steps if sts for st in sts), None)
    columns = s["columns"] if "columns" in s else (
        first["columns"] if first is not None and "column" not in first else [s.get("column")])
    label = f"{s['method']} {'+'.join(map(str, columns))} {s['param']}"
    return Dimension(label, s["param"], tuple(values), steps, monotone=main)


def _table_dimension(i: int, s: dict[str, Any], df: pd.DataFrame) -> Dimension:
    """The dimension of a whole-table method's setting (synthesis) in a combined grid: off
    first (None: no synthesis step, the masked recipe alone), then its values in the grid's
    order; not assumed monotone (docs/utility.md, "Synthesis in a sweep")."""
    values = list(dict.fromkeys(s["values"]))
    made = _steps({**s, "values": values}, f"grid setting {i + 1}", df)
    return Dimension(f"{s['method']} {s['param']}", s["param"], (None, *values),
                     (None, *(tuple(st) for st in made)), monotone=False)


def _whole_table(d: Dimension) -> bool:
    """Whether a dimension's steps are a whole-table method's (synthesis)."""
    steps = next(s for s in d.steps if s is not None)
    return METHODS[steps[0]["method"]].target == "table"


def _columns_of(d: Dimension) -> set[str]:
    steps = next((s for s in d.steps if s is not None), ())
    return {c for st in steps for c in step_columns(st)}


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
        c for c, kind in infer_kinds(df).items()
        if kind is Kind.NUMERIC and c != grid.get("household")]  # an id is not a measure
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
    _target_shape(grid.get("target"), analysis)
    sensitive = _column_names(grid, "sensitive", df) if "sensitive" in grid else []
    both = [c for c in sensitive if c in known]
    if both:
        raise SdcInputError(f"grid: {', '.join(both)}: a known column cannot also be sensitive")
    household = _household(grid, df, known, sensitive, numeric)
    raw = _entries(grid.get("settings"))
    needs = sorted({str(r["method"]) for r in raw if isinstance(r, dict)
                    and r.get("method") in METHODS and METHODS[r["method"]].extra.get("household")})
    if needs and household is None:
        raise SdcInputError(f"grid: {', '.join(needs)} needs the household column: set the "
                            'grid\'s "household"')
    if household is None:
        _refuse_household_params(raw)
    else:
        _refuse_table_methods(raw)
    measure = grid.get("target", {}).get("measure") if isinstance(grid.get("target"), dict) \
        else None
    if measure in HOUSEHOLD and household is None:
        raise SdcInputError(f'grid: the target {measure} needs the household column ("household")')
    shared = (seeds, base, numeric, k, known, pareto_risk, il1_missing, not_released)
    chosen: dict[str, Any] = {
        "analysis": analysis, "loss": loss, "sensitive": sensitive, "household": household,
        "sampling": {k: grid[k] for k in ("sampling_fraction", "population") if k in grid}}
    if combine:
        order = sorted(range(len(raw)), key=lambda i: METHODS[raw[i]["method"]].order)
        dims = _loss_orders([_dimension(i, raw[i], df) for i in order])
        perturbed = _perturbed([st for d in dims for sts in d.steps for st in sts or ()])
        target = _target(grid.get("target"), analysis, sensitive, perturbed)
        if target is not None and _is_attribute(target.measure):
            # not assumed monotone (docs/utility.md, "Attribute disclosure in a sweep")
            if grid.get("search") == "pruned":
                raise SdcInputError(f"grid: the target {target.measure} is not monotone in the "
                                    'methods\' main parameters; use "search": "exhaustive" '
                                    "(the default for it)")
            search = "exhaustive"
        tables = [d.label for d in dims if _whole_table(d)]
        if len(tables) > 1:
            raise SdcInputError(f"grid: {' and '.join(tables)}: a combined grid sweeps one "
                                "parameter of synthesis (a recipe holds one synthesis step, "
                                'its last): give the others under "fixed"')
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
        return Grid([], *shared, dims=dims, target=target, search=search, perturbed=perturbed,
                    **chosen)
    asked = sum(len(s["values"]) for s in raw)
    if asked > budget:
        raise SdcInputError(f"grid: {asked:,} settings asked for, more than max_settings = "
                            f"{budget}; use fewer values or raise max_settings")
    settings = []
    for i, s in enumerate(raw):
        for value, steps in zip(s["values"], _steps(s, f"grid setting {i + 1}", df)):
            settings.append(Setting(steps, s["method"], _targets_name(steps), s["param"], value))
    perturbed = _perturbed([st for s in settings for st in s.steps])
    target = _target(grid.get("target"), analysis, sensitive, perturbed)
    return Grid(settings, *shared, target=target, search=search, perturbed=perturbed,
                **chosen)


def _refuse_household_params(raw: list[dict[str, Any]]) -> None:
    """An error when a setting of a grid without a household sets a parameter that applies
    only with one (``per_household``), fixed or swept."""
    for i, s in enumerate(raw):
        spec = METHODS[s["method"]]
        for name in spec.household_params:
            fixed = s.get("fixed", {}).get(name)
            swept = s["param"] == name and any(v is True for v in s["values"])
            if fixed is True or swept:
                raise SdcInputError(f"grid setting {i + 1}: {name} needs the household "
                                    'column: set the grid\'s "household"')


def _refuse_table_methods(raw: list[dict[str, Any]]) -> None:
    """An error when a grid with a household names a whole-table method (synthesis): its
    table keeps no household whole, as a recipe with a household refuses it."""
    for i, s in enumerate(raw):
        if METHODS[s["method"]].target == "table":
            raise SdcInputError(f"grid setting {i + 1}: {s['method']} makes a new table, which "
                                "does not keep households whole: leave out the grid's "
                                "household")


def _household(grid: dict[str, Any], df: pd.DataFrame, known: Sequence[str],
               sensitive: Sequence[str], numeric: Sequence[str]) -> str | None:
    """The grid's household column: in the table, no blank id, not a known, sensitive or
    numeric column (docs/utility.md, "Households in a sweep")."""
    household = grid.get("household")
    if household is None:
        return None
    if not isinstance(household, str):
        raise SdcInputError("grid: household must be a column name")
    from sdc_core.households import household_codes

    try:
        household_codes(df, household)
    except SdcInputError as err:
        raise SdcInputError(f"grid: {err}") from None
    if household in known or household in sensitive:
        raise SdcInputError(f"grid: {household}: the household column cannot also be a known "
                            "or sensitive column")
    if household in numeric:
        raise SdcInputError(f"grid: {household}: the household column is an id, not a "
                            "measure: leave it out of numeric")
    return household


def _is_attribute(figure: str) -> bool:
    """Whether a target's row figure is an attribute-disclosure one."""
    return figure in ATTRIBUTE_TARGETS or any(
        figure.startswith(f"{m}: ") for m, takes in ATTRIBUTE_TARGETS.items() if takes is not False)



def combination_setting(dims: list[Dimension], x: Combination) -> Setting:
    """The row of combination ``x``: its steps and the methods, targets and parameters in it."""
    steps = recipe_steps(dims, x)
    on = [d for d, i in zip(dims, x) if d.steps[i] is not None]
    return Setting(steps, "+".join(s["method"] for s in steps) or "none",
                   _targets_name(steps), "+".join(d.param for d in on), np.nan, x)


def describe_setting(s: Setting) -> str:
    """A setting in a few words: "band age width=10", or a combination's steps."""
    if s.combination is None:
        return f"{s.method} {s.column} {s.param}={s.value}"
    return describe_steps(s.steps)
