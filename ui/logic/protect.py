"""The Protect page's settings and their translation to and from recipe steps (pure Python).

The settings follow the method declarations (:func:`sdc_core.methods.registry`): for each method
offered on the page, the columns chosen and the value of each of its controls. A method is off
while its ``main`` parameter has its ``off`` value.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from sdc_core.checks import check_json_size
from sdc_core.errors import SdcInputError
from sdc_core.methods import Method, Param, registry
from sdc_core.methods.record_swap import MAX_PROFILES
from sdc_core.recipe import Recipe, describe_steps, load_recipe
from ui.logic.text import md


def page_methods() -> list[Method]:
    """The methods the Protect page offers, in the order they apply."""
    return [m for m in registry().values() if m.ui]


#: The start of a recipe's error: the step's number and method ("step 2 (record_swap): ").
_STEP_PREFIX = re.compile(r"step (\d+) \(([a-z_]+)\): ")


def in_words(message: str, steps: list[dict[str, Any]]) -> str:
    """A recipe's error as the Protect page speaks of its settings: the method by its label
    (and column), not by a step number the page does not show, and without the method's own
    repeated name: "step 2 (record_swap): record swapping: household 1 …" becomes
    "Targeted record swapping: household 1 …". Other messages are unchanged.

    Examples
    --------
    >>> in_words("step 1 (band): width must be > 0", [{"method": "band", "column": "age"}])
    'Banding of age: width must be > 0'
    """
    found = _STEP_PREFIX.match(message)
    method = registry().get(found.group(2)) if found else None
    if found is None or method is None:
        return message
    i, rest = int(found.group(1)) - 1, message[found.end():]
    step = steps[i] if 0 <= i < len(steps) and steps[i].get("method") == method.name else {}
    lead, said, tail = rest.partition(": ")
    if said and lead.lower() in method.label.lower():
        rest = tail
    column = step.get("column")
    return f"{method.label}{f' of {column}' if column is not None else ''}: {rest}"


def chosen_param(m: Method) -> str | None:
    """The parameter that holds the columns chosen for ``m`` on the page when its method
    implies the columns a step changes from its parameters (record swapping: its
    ``hierarchy``; the step then holds no ``columns``), else None."""
    implied = m.extra.get("implied_columns")
    return str(implied[0]) if implied else None


def missing_required(m: Method, params: Mapping[str, Any]) -> list[str]:
    """The required parameters a page step of ``m`` still lacks (record swapping's donor
    profiles, before they are given): the step waits for them rather than failing."""
    return [p.name for p in m.params if p.required and p.control and p.name not in params]


@dataclass(frozen=True)
class ProtectSettings:
    """``columns[method]``: the columns chosen for it; ``values[method]``: its control values
    (for a per-column method, ``{column: {param: value}}``). A control without a value holds
    its declared default; everything is off by default."""

    columns: Mapping[str, list[str]] = field(default_factory=dict)
    values: Mapping[str, dict[str, Any]] = field(default_factory=dict)
    seed: int = 42

    def value(self, method: Method, param: str, column: str | None = None) -> Any:
        """The value of a control (of ``column``'s, for a per-column method), or its declared
        default."""
        held = self.values.get(method.name, {})
        if method.per_column:
            assert column is not None, "a per-column method's control names its column"
            held = held.get(column, {})
        return held.get(param, method.param(param).default)

    def with_value(self, method: Method, param: str, column: str | None,
                   value: Any) -> ProtectSettings:
        """These settings with one control's value replaced (of ``column``'s, for a per-column
        method): what the page's controls give after that control alone moved."""
        values = dict(self.values)
        held = dict(values.get(method.name, {}))
        if method.per_column:
            assert column is not None, "a per-column method's control names its column"
            held[column] = {**held.get(column, {}), param: value}
        else:
            held[param] = value
        values[method.name] = held
        return replace(self, values=values)

    def merges(self, method: Method) -> dict[str, dict[str, list[Any]]]:
        """The level merges of a method with a merge parameter: ``{column: {label: levels}}``."""
        merge = method.merge
        return dict(self.values.get(method.name, {}).get(merge.name) or {}) if merge else {}

    def steps(self, qi: list[str]) -> list[dict[str, Any]]:
        """Recipe steps of the active methods, in the order the page shows them (a column's
        merge before its ``main`` step); a step holds ``main`` and the controls that differ
        from their declared defaults."""
        out: list[dict[str, Any]] = []
        for m in page_methods():
            held = self.values.get(m.name, {})
            if m.per_column:
                out += [{"method": m.name, "column": c, **step_params(m, v)}
                        for c, v in held.items() if is_on(m, v)]
                continue
            on, params = is_on(m, held), step_params(m, held)
            if m.target == "table":  # synthesis: the whole table, its step names no column
                out += [{"method": m.name, **params}] if on else []
                continue
            cols = list(qi) if m.columns == "keys" else list(self.columns.get(m.name, []))
            merges = self.merges(m)
            if m.target == "column":
                for c in cols:
                    if m.merge is not None and merges.get(c):  # merges: only with a merge
                        out.append({"method": m.name, "column": c, m.merge.name: merges[c]})
                    if on:
                        out.append({"method": m.name, "column": c, **params})
            elif on and cols and not missing_required(m, params):
                out.append({"method": m.name, chosen_param(m) or "columns": cols, **params})
        return out


def is_on(m: Method, held: Mapping[str, Any]) -> bool:
    """Whether a method with these control values is on: ``main`` away from ``off``, one of its
    :attr:`~sdc_core.methods.Method.switches` set, or (a method without ``main``) a control
    away from its default."""
    def changed(name: str) -> bool:
        return held.get(name, m.param(name).default) != m.param(name).default
    if m.main is None:
        return any(changed(p.name) for p in m.controls)
    return held.get(m.main, m.param(m.main).default) != m.off or any(map(changed, m.switches))


def step_params(m: Method, held: Mapping[str, Any]) -> dict[str, Any]:
    """The parameters of a step of ``m``: ``main`` (unless off) and the controls that differ
    from their declared defaults, in declared order; not those that do not apply with the
    others (:meth:`~sdc_core.methods.Method.applies`: PRAM's p beside its invariant form)."""
    out = {}
    for p in m.controls:
        v = held.get(p.name, p.default)
        if not m.applies(p.name, held):
            continue
        if (p.name == m.main and v != m.off) or (p.name != m.main and v != p.default):
            out[p.name] = _num(v)
    return out


def _num(v: Any) -> Any:
    """Whole numbers as int in recipes (width 10, not 10.0)."""
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v


#: The largest number the Protect page's controls hold, and its seed field: the browser's exact
#: whole numbers (JavaScript's ``Number.MAX_SAFE_INTEGER``). Streamlit refuses a slider or a
#: number field beyond them with an exception, a traceback on the page.
MAX_PAGE_NUMBER = MAX_PAGE_SEED = 2**53 - 1


def takes_whole(p: Param) -> bool:
    """Whether the page's control of ``p`` takes whole numbers only: whole numbers, or whole
    steps from a whole low end (band width, noise p)."""
    step = p.step or 1
    return p.type == "whole" or (p.low is not None and float(step).is_integer()
                                 and float(p.low).is_integer())


def _check_range(where: str, p: Param, value: Any) -> None:
    """An error when ``value`` is not a number the page's control of ``p`` can draw: not
    finite, beyond ±:data:`MAX_PAGE_NUMBER`, below the low end of the control, above the most
    the method takes (``Param.most``), or not a whole number where the control takes whole
    numbers: the page would otherwise show (and apply) another value than the recipe's, or
    fail. A value past the high end of the control, within those bounds, widens the control
    instead."""
    if value is None or p.type not in ("number", "whole") or isinstance(value, bool):
        return
    later = "; apply this recipe with the command line"
    try:
        shown = f"{value:g}"
    except OverflowError:  # a whole number no float holds
        shown = f"a number of {len(str(abs(value)))} digits"
    if isinstance(value, float) and not math.isfinite(value):
        raise SdcInputError(f"{where}: {p.name} = {value} is not a finite number")
    if p.low is not None and value < p.low:
        raise SdcInputError(f"{where}: {p.name} = {shown} is below the low end of its control "
                            f"on the Protect page ({p.low:g}){later}")
    if p.most is not None and value > p.most:
        raise SdcInputError(f"{where}: {p.name} = {shown} is more than {p.most:g}, the most "
                            "it can be")
    if abs(value) > MAX_PAGE_NUMBER:
        raise SdcInputError(f"{where}: {p.name} = {shown} is beyond what a control on the "
                            f"Protect page holds (±{MAX_PAGE_NUMBER:,}, a browser's exact whole "
                            f"numbers){later}")
    if takes_whole(p) and not float(value).is_integer():
        raise SdcInputError(f"{where}: {p.name} = {shown} is not a whole number, which its "
                            f"control on the Protect page takes{later}")


def full_step(step: dict[str, Any]) -> dict[str, Any]:
    """A step with every parameter it leaves out at its declared default (and parameters
    given as null, or that do not apply with the others, left out): two steps that apply
    alike compare equal."""
    m = registry()[step["method"]]
    defaults = {p.name: p.default for p in m.params if p.type != "merge"}
    if m.merge and m.merge.name in step:  # a merge step holds its merge alone
        defaults = {}
    if chosen_param(m):  # its columns follow from its parameters (a recipe file's step
        step = {k: v for k, v in step.items() if k != "columns"}  # leaves them out)
    empty = m.extra.get("may_be_empty", ())  # an empty list: as none
    return {k: v for k, v in (defaults | step).items() if v is not None
            and not (k in empty and v == []) and (k not in defaults or m.applies(k, step))}


def _check_round_trip(steps: list[dict[str, Any]], settings: ProtectSettings) -> None:
    """An error unless ``settings`` give back ``steps``, up to parameters at their defaults:
    the page applies its methods in its own order, one step per column and method."""
    keys: list[str] = next(
        (s["columns"] for s in steps if registry()[s["method"]].columns == "keys"), [])
    given = [full_step(s) for s in steps]
    shown = [full_step(s) for s in settings.steps(list(keys))]
    if given == shown:
        return
    if len(given) == len(shown) and all(s in shown for s in given):
        raise SdcInputError("the Protect page applies its methods in a fixed order ("
                            + ", ".join(m.name for m in page_methods())
                            + "), a column's level merge before its other recode step; this "
                            "recipe's steps come in another order (apply it with the command "
                            "line)")
    i = next((i for i, s in enumerate(given) if s not in shown), len(given))
    where = f"step {i + 1} ({steps[i]['method']})" if i < len(steps) else "recipe"
    raise SdcInputError(f"{where}: the Protect page cannot show this step as it is (a method "
                        "switched off by its setting, or a second step of the method on the "
                        "same columns); apply this recipe with the command line")


def from_steps(steps: list[dict[str, Any]], seed: int,
               offered: Mapping[str, list[str]] | None = None) -> ProtectSettings:
    """Settings that reproduce ``steps`` exactly (up to parameters at their declared
    defaults), or an error naming a step the page cannot show: nothing is changed.
    ``offered``: the columns the page offers each method named in it on, for the current
    roles; a step on another column is refused, and a method on the quasi-identifiers must
    name them all, in their order."""
    if not 0 <= seed <= MAX_PAGE_SEED:
        raise SdcInputError(f"seed {seed} is larger than the Protect page's seed field takes "
                            f"({MAX_PAGE_SEED}); apply this recipe with the command line")
    methods = {m.name: m for m in page_methods()}
    columns: dict[str, list[str]] = {}
    values: dict[str, dict[str, Any]] = {}
    shared: dict[str, dict[str, Any]] = {}  # a method's controls, one setting for its columns
    main_columns: dict[str, set[str]] = {}
    for i, step in enumerate(steps):
        m = methods.get(step["method"]) if "method" in step else None
        where = f"step {i + 1} ({step.get('method')})"
        chosen = chosen_param(m) if m is not None else None
        keys = set(step) - {"method", "column", "columns", chosen}
        merge = m.merge.name if m is not None and m.merge else None
        if m is None or not (keys == {merge} or (
                keys <= {p.name for p in m.controls}
                and (m.main in keys or keys & set(m.switches) or (m.main is None and keys)
                     or (m.main is not None and m.param(m.main).default != m.off)))):
            raise SdcInputError(f"{where}: this step has no control on the Protect page "
                                "(apply it with the command line)")
        cols = ([step["column"]] if m.target == "column" else [] if m.target == "table"
                else list(step[chosen] if chosen else step["columns"]))
        if offered is not None and m.name in offered:
            allowed = list(offered[m.name])
            if cols != allowed if m.columns == "keys" else not set(cols) <= set(allowed):
                raise SdcInputError(
                    f"{where}: the Protect page offers {m.name} on "
                    f"{', '.join(allowed) or 'no column'} for the current roles, not on "
                    f"{', '.join(cols)}; set the roles on the Data page, or apply this recipe "
                    "with the command line")
        for p in m.controls:
            _check_range(where, p, step.get(p.name))
        params = {p.name: step.get(p.name, p.default) for p in m.controls}
        if keys != {merge} and not is_on(m, params):
            what = f"{m.main} = {params[m.main]}" if m.main else "these settings"
            raise SdcInputError(f"{where}: with {what}, {m.name} is off on the Protect page; "
                                "apply this recipe with the command line")
        empty = m.extra.get("may_be_empty", ())  # an empty list of columns: as none
        held = {k: v for k, v in params.items()
                if (v != m.param(k).default and not (k in empty and v == [])) or k == m.main}
        if m.per_column:
            if step["column"] in values.get(m.name, {}):
                raise SdcInputError(f"{where}: a second {m.name} step on {step['column']}; the "
                                    "Protect page holds one per column (apply this recipe "
                                    "with the command line)")
            values.setdefault(m.name, {})[step["column"]] = held
            continue
        kept = values.setdefault(m.name, {})
        if merge is not None and keys == {merge}:
            kept.setdefault(merge, {})[step["column"]] = step[merge]
        else:
            first = shared.setdefault(m.name, params)
            differ = [k for k in params if first[k] != params[k]]
            if differ:
                raise SdcInputError(f"{where}: the Protect page uses one setting of "
                                    f"{', '.join(differ)} for all {m.name} columns (apply "
                                    "this recipe with the command line)")
            kept.update(held)
        if m.columns != "keys" and m.target != "table":
            columns[m.name] = list(dict.fromkeys(columns.get(m.name, []) + cols))
            if keys != {merge}:
                main_columns.setdefault(m.name, set()).update(cols)
    for name, merged in main_columns.items():
        if set(columns[name]) != merged:
            raise SdcInputError(f"{name}: the Protect page applies {methods[name].main} to "
                                "every column it merges levels of (apply this recipe with "
                                "the command line)")
    settings = ProtectSettings(columns, values, seed)
    _check_round_trip(steps, settings)
    return settings


def describe(steps: list[dict[str, Any]], seed: int) -> str:
    """The steps in one line for a caption: "band age width=10; pram race p=0.05; seed 42"."""
    return f"{describe_steps(steps)}; seed {seed}"


def replaced_notice(before: list[dict[str, Any]], before_seed: int,
                    after: list[dict[str, Any]], after_seed: int, source: str
                    ) -> tuple[str, str]:
    """What the Protect page says when a setting from elsewhere (``source``: "the sweep's best
    setting") replaces its whole recipe, as (kind, Markdown) of a notice
    (:func:`ui.state.set_notice`): what was replaced and by what, and that Undo brings it back;
    a success when nothing was on or the recipe is the same. The steps' column names and values
    escaped."""
    was, now = describe(before, before_seed), describe(after, after_seed)
    if (before, before_seed) == (after, after_seed):
        return ("success", f"Opened {source}: it is the recipe the page had ({md(now)}); "
                           "nothing was replaced.")
    if not before:
        return ("success", f"Opened {source}: {md(now)}. No method was on before "
                           f"(seed {before_seed}); Undo goes back to that.")
    return ("warning", f"Opened {source}: it replaced the whole recipe of this page, which "
                       f"was {md(was)}, by {md(now)}. Undo, above the controls, brings the "
                       "previous recipe back.")


def recipe_household_note(recipe: Recipe, household: str | None) -> str | None:
    """What the Protect page says of a recipe's ``household`` beside the session's household
    id ``household``: None when the recipe names none or the same column; a note when it names
    another (the page applies the steps with the session's household id, which keeps the
    columns constant within households). Raises :class:`~sdc_core.errors.SdcInputError` when
    a step needs the recipe's household column itself (record swapping) and the session's is
    another, or a step draws once per household (``per_household``) and the session has no
    household id: the recipe is not loaded."""
    wanted = recipe.household
    if wanted is None or wanted == household:
        return None
    session = f"'{household}'" if household else "not set"
    needing = [f"step {i + 1} ({s['method']})" for i, s in enumerate(recipe.steps)
               if registry()[s["method"]].extra.get("household")]
    if needing:
        raise SdcInputError(f"{needing[0]} swaps households by the recipe's household column "
                            f"'{wanted}', and this session's household id is {session}: set "
                            f"the household id on the Data page to '{wanted}' to load it, or "
                            "apply this recipe with the command line")
    once = [f"step {i + 1} ({s['method']})" for i, s in enumerate(recipe.steps)
            if any(s.get(name) for name in registry()[s["method"]].household_params)]
    if once and household is None:  # the page would draw it record by record
        raise SdcInputError(f"{once[0]} draws once per household of the recipe's household "
                            f"column '{wanted}', and this session has no household id: set "
                            f"the household id on the Data page to '{wanted}' to load it, or "
                            "apply this recipe with the command line")
    return (f"The recipe names the household column '{wanted}'; this session's household id "
            f"is {session}, and the page applies the recipe's steps with the session's. Set "
            f"the household id on the Data page to '{wanted}' to apply them as the recipe "
            "does.")


#: The longest text the donor profiles field reads: a list of lists of column names (a few
#: hundred characters); longer text is refused before it is read.
MAX_PROFILES_TEXT = 10_000
#: How the donor profiles field is written
PROFILES_EXAMPLE = '[["hsize", "htype"], ["hsize"]]'


def read_profiles(text: str, columns: list[str] | None = None) -> list[list[str]] | None:
    """The donor profiles (record swapping's ``similar``) in the page's text field: JSON, a
    list of non-empty lists of column names, at most
    :data:`~sdc_core.methods.record_swap.MAX_PROFILES` of them, each name one of ``columns``
    (when given); None for an empty field. Raises ``ValueError`` with a short reason (no part
    of the text) otherwise: text past :data:`MAX_PROFILES_TEXT` characters, text that is not
    JSON (or nested deeper than the parser goes), another shape, an unknown column."""
    text = text.strip()
    if not text:
        return None
    if len(text) > MAX_PROFILES_TEXT:
        raise ValueError(f"{len(text):,} characters is longer than the field takes "
                         f"({MAX_PROFILES_TEXT:,}); the profiles are a few column names")
    shape = f"a list of lists of column names, e.g. {PROFILES_EXAMPLE}"
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):  # not JSON, too deep, a number of 4,300 digits
        raise ValueError(f"this is not JSON; write {shape}") from None
    if not isinstance(value, list) or not value or not all(
            isinstance(p, list) and p and all(isinstance(c, str) for c in p) for p in value):
        raise ValueError(f"this is not {shape}")
    if len(value) > MAX_PROFILES:
        raise ValueError(f"{len(value)} profiles are more than the {MAX_PROFILES} a step takes")
    if columns is not None:
        missing = [c for p in value for c in p if c not in columns]
        if missing:
            more = f" and {len(missing) - 1} more" if len(missing) > 1 else ""
            name = missing[0] if len(missing[0]) <= 40 else missing[0][:40] + "…"
            raise ValueError(f"the data has no column '{name}'{more}")
    return value


def read_recipe_file(raw: bytes) -> Recipe:
    """The recipe in an uploaded file (:func:`~sdc_core.recipe.load_recipe`; bytes that are
    not UTF-8 are replaced), refused before it is decoded or read when it is larger than
    :data:`~sdc_core.checks.MAX_JSON_BYTES` (a recipe holds settings only)."""
    check_json_size(len(raw), "recipe file")
    return load_recipe(raw.decode("utf-8", errors="replace"))
