"""The Trade-offs form's choices as the settings of a sweep grid (:mod:`sdc_core.sweep.run`), pure
Python: the grid the page sends to ``run_sweep`` (:func:`build_grid`), the bound of its
exhaustive search, and the words and headings of its target and table.

A method's ``main`` values make its settings, one at a time or, combined, one dimension per
column (the method is also tried off). A parameter declared ``sweep`` (a band's origin, top
and bottom codes: :class:`sdc_core.methods.Param`) is swept too:

- beside ``main`` (a band's origin): each of its values goes with every ``main`` value, one
  setting a value (``fixed``); combined, one value only, since a combination holds one step
  of the method per column;
- for a method without ``main`` (top and bottom coding): each such parameter is a setting of
  its own on each column; combined, every combination codes at one of its values.

A method on households (record swapping) sweeps its ``main`` (the swap rate) with its other
parameters fixed as the Protect page holds them (:func:`household_fixed`): its geography, donor
profiles, k, risk variables and carried columns.

A whole-table method (synthesis) names no column: the form sweeps the parameters of
:data:`TABLE_SWEPT` (:func:`table_settings`), ``min_leaf`` as a method's ``main`` and
``smoothing`` beside it (docs/utility.md, "Synthesis in a sweep").
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sdc_core.errors import SdcInputError
from sdc_core.methods import Method, registry
from sdc_core.names import COUNT_AND_PERCENT, MEASURES, label, name, tile
from sdc_core.sweep.run import HOUSEHOLD, KEEP_MEASURES, LOSS, POPULATION
from sdc_core.utility.validity import HOLDS, LABELS
from ui.logic.protect import ProtectSettings, chosen_param, missing_required, step_params
from ui.logic.text import md, number

#: The most combinations the page's exhaustive search evaluates (a larger combined grid uses
#: the pruned search, or the command line's ``"search": "exhaustive"``).
EXHAUSTIVE_MAX = 200


@dataclass(frozen=True)
class MethodChoice:
    """One method's part of the form: its columns, its ``main`` values (text), a per-column
    method's own values per column (text; empty: the method's), and the values (text) of its
    other swept parameters; for a method on households, the parameters ``fixed`` beside its
    ``main`` (:func:`household_fixed`); ``held``, parameters every step of the method keeps
    as the Protect page holds them (its one draw per household: :func:`household_held`)."""

    method: Method
    columns: list[str]
    values: str = ""
    own: dict[str, str] = field(default_factory=dict)
    swept: dict[str, str] = field(default_factory=dict)
    fixed: dict[str, Any] = field(default_factory=dict)
    held: dict[str, Any] = field(default_factory=dict)


def household_held(m: Method, settings: ProtectSettings, household: str | None
                   ) -> dict[str, Any]:
    """The parameters of ``m`` that apply only with a household id (``per_household``,
    docs/methods.md, "One draw per household") that the Protect page's ``settings`` switch on,
    when a ``household`` id is set: a sweep of ``m`` draws as the page does."""
    if household is None:
        return {}
    return {name: True for name in m.household_params if settings.value(m, name) is True}


def household_fixed(m: Method, settings: ProtectSettings) -> dict[str, Any] | None:
    """The parameters a sweep of the household method ``m`` keeps fixed beside its ``main``:
    the Protect page's ``settings`` for it (record swapping: the hierarchy chosen as its
    columns, the donor profiles and the controls away from their defaults), or None while the
    page lacks one it requires (no hierarchy, no donor profiles)."""
    held = settings.values.get(m.name, {})
    params = {k: v for k, v in step_params(m, held).items() if k != m.main}
    columns = list(settings.columns.get(m.name, []))
    implied = chosen_param(m)
    if implied is not None:
        params = {implied: columns, **params}
    if not columns or missing_required(m, params):
        return None
    return params


def fixed_text(m: Method, fixed: Mapping[str, Any]) -> str:
    """The parameters a household method's sweep keeps fixed, in words for the form: each
    under its label, a list of columns as the columns, donor profiles as their columns joined
    by "+", one after the other ("hsize + htype, then hsize"), a number as it is. Markdown,
    the columns escaped.

    Examples
    --------
    >>> from sdc_core.methods import registry
    >>> text = fixed_text(registry()["record_swap"], {
    ...     "hierarchy": ["region", "district"], "similar": [["hsize", "htype"], ["hsize"]]})
    >>> for part in text.replace("\\\\", "").split("; "):
    ...     print(part)
    Geographic hierarchy, coarsest first: region, district
    Donor profiles: hsize + htype, then hsize
    """
    def value(v: Any) -> str:
        if isinstance(v, list) and v and all(isinstance(p, list) for p in v):
            return ", then ".join(" + ".join(map(str, p)) for p in v)
        if isinstance(v, list):
            return ", ".join(map(str, v)) or "none"
        return str(v)
    return "; ".join(f"{m.param(k).label or k}: {md(value(v))}" for k, v in fixed.items())


#: The parameters of a whole-table method the form sweeps, the first as a method's ``main``,
#: the others beside it
TABLE_SWEPT = {"synthesize": ("min_leaf", "smoothing")}


def swept_params(m: Method) -> list[str]:
    """The parameters of ``m`` the form sweeps besides ``main`` (a whole-table method: those
    of :data:`TABLE_SWEPT`)."""
    if m.target == "table":
        return list(TABLE_SWEPT.get(m.name, ()))
    return [p.name for p in m.params if p.sweep and p.name != m.main]


def swept_start(m: Method, param: str) -> str:
    """The text a values field of a whole-table method's ``param`` starts with: the method's
    ``sweep_values`` for the first of :data:`TABLE_SWEPT`, else empty (not swept)."""
    return m.sweep_values if swept_params(m)[:1] == [param] else ""


def parse_flags(text: str, label: str) -> list[bool]:
    """``true`` and ``false`` separated by commas (or semicolons), each once."""
    words = [v.strip().lower() for v in text.replace(";", ",").split(",") if v.strip()]
    if not all(w in ("true", "false") for w in words):
        raise SdcInputError(f"{label}: values must be true or false, separated by commas")
    return list(dict.fromkeys(w == "true" for w in words))


def table_settings(c: MethodChoice, combine: bool) -> list[dict[str, Any]]:
    """The settings of a whole-table method's fields (module docstring): the first
    parameter's values with each value of the others fixed beside it (combined: one value
    of each other), or the others' values alone when the first has none."""
    m = c.method
    first, *others = swept_params(m)
    values: dict[str, list[Any]] = {}
    for p in [first, *others]:
        text, label = c.swept.get(p, ""), f"{m.label} {p}"
        if text.strip():
            kind = m.param(p).type
            values[p] = parse_flags(text, label) if kind == "bool" else parse_values(text, label)
    if first not in values:
        return [{"method": m.name, "param": p, "values": v} for p, v in values.items()]
    beside = {p: v for p, v in values.items() if p != first}
    if combine and any(len(v) > 1 for v in beside.values()):
        raise SdcInputError(f"{m.label}: combining the methods takes one value of "
                            f"{' and '.join(beside)} (a recipe holds one synthesis step): give "
                            "one, or try the values one at a time")
    return [{"method": m.name, "param": first, "values": values[first],
             **({"fixed": dict(zip(beside, fixed))} if beside else {})}
            for fixed in itertools.product(*beside.values())]


def parse_values(text: str, label: str) -> list[float | int]:
    """Numbers separated by commas (or semicolons); whole ones as int."""
    try:
        values = [float(v) for v in text.replace(";", ",").split(",") if v.strip()]
    except ValueError:
        raise SdcInputError(f"{label}: values must be numbers separated by commas") from None
    if not all(math.isfinite(v) for v in values):
        raise SdcInputError(f"{label}: values must be finite numbers")
    return [int(v) if v.is_integer() else v for v in values]


def with_off(m: Method, values: list[float | int], combine: bool) -> list[float | int]:
    """The values of a sweep of ``m``'s ``main``; combined, the method is also tried off."""
    return [m.off, *values] if combine and values and m.off not in values else values


def _main_settings(c: MethodChoice, combine: bool, fixed: dict[str, Any]) -> list[dict]:
    """The settings of ``c``'s ``main`` values, each step also holding ``fixed``."""
    m, chosen = c.method, c.columns
    extra = {"fixed": fixed} if fixed else {}
    values = parse_values(c.values, m.label)
    if m.per_column:  # each column its own values list, or the method's
        per = {col: parse_values(c.own[col], f"{m.label} of {col}")
               if c.own.get(col, "").strip() else values for col in chosen}
        return [{"method": m.name, "column": col, "param": m.main,
                 "values": with_off(m, v, combine), **extra} for col, v in per.items() if v]
    values = with_off(m, values, combine)
    if not values or not chosen:
        return []
    if m.target == "column" and not combine:
        return [{"method": m.name, "column": col, "param": m.main, "values": values, **extra}
                for col in chosen]
    # combined, one value for all the columns; a method of several columns takes them at once
    return [{"method": m.name, "columns": chosen, "param": m.main, "values": values, **extra}]


def grid_settings(choices: list[MethodChoice], combine: bool) -> list[dict[str, Any]]:
    """The grid's ``settings`` of the form's choices (module docstring)."""
    out: list[dict[str, Any]] = []
    for c in choices:
        m = c.method
        if m.target == "table":
            out += table_settings(c, combine)
            continue
        if c.fixed:  # a method on households: its main swept, the rest as on the Protect page
            rates = with_off(m, parse_values(c.values, m.label), combine)
            if rates:
                out.append({"method": m.name, "param": m.main, "values": rates,
                            "fixed": dict(c.fixed)})
            continue
        swept = {p: parse_values(c.swept[p], f"{m.label} {p}")
                 for p in swept_params(m) if c.swept.get(p, "").strip()}
        if m.main is None:
            out += [{"method": m.name, "column": col, "param": p, "values": v}
                    for p, v in swept.items() for col in c.columns]
            continue
        if swept and combine and any(len(v) > 1 for v in swept.values()):
            raise SdcInputError(
                f"{m.label}: combining the methods takes one value of "
                f"{' and '.join(swept)} (a combination holds one {m.label.lower()} step per "
                "column): give one, or try the values one at a time")
        if swept and c.columns and not c.values.strip() and not any(
                v.strip() for v in c.own.values()):
            raise SdcInputError(f"{m.label}: its {' and '.join(swept)} values are tried with "
                                f"its {m.main} values: give those too")
        names = list(swept)
        for values in itertools.product(*swept.values()):
            out += _main_settings(c, combine, {**c.held, **dict(zip(names, values))})
    return out


def combinations_asked(settings: list[dict[str, Any]]) -> int:
    """How many combinations a combined grid of ``settings`` asks for: the product of each
    setting's count of distinct values (a whole-table method's, synthesis, one more: the
    grid also tries it off)."""
    return math.prod(len(dict.fromkeys(s["values"]))
                     + (registry()[s["method"]].target == "table") for s in settings)


#: The target "every class ≥ k": no record in a class smaller than k
EVERY_CLASS = "every_class"
#: What a target may keep of the benchmark analyses, with the side that is better
KEPT = {m: "≥" if KEEP_MEASURES[m] == "at_least" else "≤"
        for m in ("mean_ci_overlap", "analyses_holding", "worst_tvd", "s_pmse")}
#: The risk measures a sweep's chart and target offer, before the population's
RISK_MEASURES = ("linkage_reidentifications", "linkage_risk_percent",
                 "expected_reidentifications", "avg_linkage_risk_percent", "percent_unique",
                 "percent_k_le_threshold", "percent_below_k")


def risk_labels(k: int, population: bool, households: bool = False) -> dict[str, str]:
    """The risk measures offered, by their labels with the threshold ``k``; with
    ``population`` (the file's sampling is known, or a weight is tagged) the population's
    uniqueness too, and with ``households`` (a household id is tagged) the household figures
    (docs/utility.md, "Households in a sweep")."""
    out = {m: label(m, k) for m in RISK_MEASURES}
    if population:
        out[POPULATION] = label(POPULATION)
    if households:
        out |= {m: label(m) for m in HOUSEHOLD}
    return out


@dataclass(frozen=True)
class SweepForm:
    """What the Trade-offs form holds: each method's choices, the seeds, the Pareto front's
    risk, whether to combine the methods (and search every combination), a risk ``target``
    (a measure, :data:`EVERY_CLASS` or None) and its bound ``at_most``; with benchmark
    analyses, the ``loss`` to rank by and a figure of them to ``keep`` at ``keep_bound``."""

    choices: list[MethodChoice]
    seeds: int = 3
    seed: int = 0
    pareto_risk: str = "linkage"
    combine: bool = False
    exhaustive: bool = False
    target: str | None = None
    at_most: float = 1.0
    loss: str = LOSS
    keep: str | None = None
    keep_bound: float = HOLDS
    target_column: str | None = None


def build_grid(form: SweepForm, *, numeric: list[str], k: int, known: list[str],
               not_released: list[str], analysis: dict[str, Any] | None = None,
               sampled: Mapping[str, float] | None = None,
               sensitive: list[str] | None = None,
               household: str | None = None) -> dict[str, Any]:
    """The grid :func:`sdc_core.sweep.run.run_sweep` takes for ``form``: the data set's
    ``numeric`` columns, the threshold ``k``, the columns an attacker also ``known``s and those
    ``not_released``, the benchmark ``analysis`` (every row gets its figures, whatever the
    loss), how the file was ``sampled`` (:func:`ui.state.sampling`) and the ``household`` id
    (record swapping, the household figures). Raises
    :class:`~sdc_core.errors.SdcInputError` for a form that makes no grid: no method with
    columns and values, an exhaustive search of more than :data:`EXHAUSTIVE_MAX`
    combinations, a figure to keep without a risk target."""
    settings = grid_settings(form.choices, form.combine)
    if not settings:
        raise SdcInputError("choose at least one method with a column and values")
    grid: dict[str, Any] = {
        "seeds": int(form.seeds), "seed": int(form.seed), "numeric": numeric, "k": k,
        "known": known, "not_released": not_released, "pareto_risk": form.pareto_risk,
        "combine": bool(form.combine), "settings": settings, "loss": form.loss}
    if analysis is not None:
        grid["analysis"] = analysis
    grid |= {"population" if key == "population_size" else key: v
             for key, v in (sampled or {}).items()}
    if sensitive:
        grid["sensitive"] = list(sensitive)
    if household is not None:
        grid["household"] = household
    if form.target == EVERY_CLASS:
        grid["target"] = {"measure": "percent_below_k", "at_most": 0.0}
    elif form.target == "inference_gain":
        if not form.target_column or form.target_column not in (sensitive or []):
            raise SdcInputError("the attribute-inference target needs a sensitive column: "
                                "tag one on the Data page, or choose another target")
        grid["target"] = {"measure": "inference_gain", "column": form.target_column,
                          "at_most": float(form.at_most)}
    elif form.target is not None:
        grid["target"] = {"measure": form.target, "at_most": float(form.at_most)}
    if form.exhaustive and form.combine and "target" in grid:
        asked = combinations_asked(settings)
        if asked > EXHAUSTIVE_MAX:
            raise SdcInputError(f"{asked:,} combinations: more than the {EXHAUSTIVE_MAX} "
                                "this page tries one by one; use fewer values, or the "
                                "pruned search")
        grid["search"] = "exhaustive"
    if form.keep is not None:
        if "target" not in grid:
            raise SdcInputError("keeping a figure of the benchmark analyses needs a risk "
                                "target: choose one, or keep nothing more")
        grid["target"]["keep"] = {"measure": form.keep,
                                  KEEP_MEASURES[form.keep]: float(form.keep_bound)}
    return grid


def other_form(measure: str, bound: float, n: int) -> str:
    """A risk bound in its other form (:data:`sdc_core.names.COUNT_AND_PERCENT`), in brackets:
    a percentage of the ``n`` records as a count, a count as a percentage; "" for the others."""
    if measure not in COUNT_AND_PERCENT:
        return ""
    if MEASURES[measure].unit == "%":
        return f" ({number(bound * n / 100)} {name(COUNT_AND_PERCENT[measure])})"
    return f" ({100 * bound / n:.2f} % of the records)"


def target_text(target: dict[str, Any], k: int, n: int, labels: Mapping[str, str]) -> str:
    """A grid's target in words, as ``Target.describe`` names it (the risk measures by their
    ``labels``: :func:`risk_labels`), a bound in percent with its count of the ``n`` records
    and the other way round: "linkage attack risk (%) ≤ 1 (21.39 linkage attack
    re-identifications) and mean CI overlap ≥ 0.9"."""
    measure, bound = target["measure"], target["at_most"]
    if "column" in target:
        unit = " points" if measure == "inference_gain" else ""
        goal = f"{name(measure)} on {target['column']} ≤ {bound:g}{unit}"
    elif measure in ATTRIBUTE_RISKS:
        goal = f"{name(measure)} ≤ {bound:g}" + (" points" if measure == "inference_gain" else "")
    else:
        goal = f"every class ≥ {k}" if (measure, bound) == ("percent_below_k", 0.0) else \
            f"{labels[measure]} ≤ {bound:g}" + other_form(measure, bound, n)
    kept = target.get("keep")
    if kept:
        goal += f" and {LABELS[kept['measure']]} {KEPT[kept['measure']]} " \
                f"{kept[KEEP_MEASURES[kept['measure']]]:g}"
    return goal


#: The attribute-disclosure figures of a sweep row (docs/utility.md, "Attribute disclosure in a
#: sweep") the chart's risk axis offers, as a whole and per column
ATTRIBUTE_RISKS = ("epsilon_max", "inference_gain")
PER_COLUMN = ("epsilon", "guess_accuracy", "inference_accuracy", "inference_gain")


def target_figure(target: Mapping[str, Any]) -> str:
    """The sweep table's column a target bounds: ``measure``, or ``measure: column``."""
    return f"{target['measure']}: {target['column']}" if "column" in target \
        else target["measure"]


def sweep_heading(column: str) -> str | None:
    """The heading of a sweep table's attribute-disclosure column, its name from
    :mod:`sdc_core.names`: "epsilon: race" → "Local-DP ε of race", "epsilon_max_sd" →
    "Largest local-DP ε, sd"; None for the other columns."""
    base, sd = (column[:-3], ", sd") if column.endswith("_sd") else (column, "")
    if base in ATTRIBUTE_RISKS:
        return tile(base) + sd
    measure, sep, col = base.partition(": ")
    if sep and measure in PER_COLUMN:
        return f"{tile(measure)} of {col}{sd}"
    return None


def attribute_labels(columns: list[str]) -> dict[str, str]:
    """The attribute-disclosure figures among a sweep table's ``columns`` (no spreads) the
    chart's risk axis offers, by their headings: the largest ε, the mean inference gain, then
    each column's ε and inference gain."""
    wanted = [c for c in ATTRIBUTE_RISKS if c in columns] + [
        c for c in columns if c.partition(": ")[0] in ("epsilon", "inference_gain")
        and ": " in c and not c.endswith("_sd")]
    return {c: str(sweep_heading(c)) for c in wanted}


def analysis_labels(names: list[str]) -> dict[str, str]:
    """The sweep table's headings of the analyses' columns (``sweep`` adds them): their
    figures, and ``ci_overlap: NAME`` / ``tvd: NAME`` and ``holds: NAME`` per analysis, each
    with its ``_sd`` over seeds. Names are user text: a heading is plain text, never
    Markdown."""
    out = {f"{m}{sd}": f"{LABELS[m]}{', sd' if sd else ''}" for m in LABELS
           for sd in ("", "_sd")}
    for sd in ("_sd", ""):  # a name ending in _sd heads its own column, not a spread
        for prefix, head in (("ci_overlap: ", "CI overlap: "), ("tvd: ", "TVD: "),
                             ("holds: ", "holds: ")):
            out |= {f"{prefix}{n}{sd}": f"{head}{n}{', sd' if sd else ''}" for n in names}
    return out
