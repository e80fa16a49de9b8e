"""The Trade-offs form's choices as the settings of a sweep grid (:mod:`sdc_core.sweep`), pure
Python: what the page sends to ``run_sweep``, and the bound of its exhaustive search.

A method's ``main`` values make its settings, one at a time or, combined, one dimension per
column (the method is also tried off). A parameter declared ``sweep`` (a band's origin, top
and bottom codes: :class:`sdc_core.methods.Param`) is swept too:

- beside ``main`` (a band's origin): each of its values goes with every ``main`` value, one
  setting a value (``fixed``); combined, one value only, since a combination holds one step
  of the method per column;
- for a method without ``main`` (top and bottom coding): each such parameter is a setting of
  its own on each column; combined, every combination codes at one of its values.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Any

from sdc_core.errors import SdcInputError
from sdc_core.methods import Method

#: The most combinations the page's exhaustive search evaluates (a larger combined grid uses
#: the pruned search, or the command line's ``"search": "exhaustive"``).
EXHAUSTIVE_MAX = 200


@dataclass(frozen=True)
class MethodChoice:
    """One method's part of the form: its columns, its ``main`` values (text), a per-column
    method's own values per column (text; empty: the method's), and the values (text) of its
    other swept parameters."""

    method: Method
    columns: list[str]
    values: str = ""
    own: dict[str, str] = field(default_factory=dict)
    swept: dict[str, str] = field(default_factory=dict)


def swept_params(m: Method) -> list[str]:
    """The parameters of ``m`` the form sweeps besides ``main``."""
    return [p.name for p in m.params if p.sweep and p.name != m.main]


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
            out += _main_settings(c, combine, dict(zip(names, values)))
    return out


def combinations_asked(settings: list[dict[str, Any]]) -> int:
    """How many combinations a combined grid of ``settings`` asks for: the product of each
    setting's count of distinct values."""
    return math.prod(len(dict.fromkeys(s["values"])) for s in settings)
