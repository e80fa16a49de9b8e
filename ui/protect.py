"""The Protect page's settings and their translation to and from recipe steps (pure Python).

The settings follow the method declarations (:func:`sdc_core.methods.registry`): for each method
offered on the page, the columns chosen and the value of each of its controls. A method is off
while its ``main`` parameter has its ``off`` value.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sdc_core.errors import SdcInputError
from sdc_core.methods import Method, Param, registry
from sdc_core.recipe import describe_steps


def page_methods() -> list[Method]:
    """The methods the Protect page offers, in the order they apply."""
    return [m for m in registry().values() if m.ui]


@dataclass(frozen=True)
class ProtectSettings:
    """``columns[method]``: the columns chosen for it; ``values[method]``: its control values
    (for a per-column method, ``{column: main value}``). Everything is off by default."""

    columns: Mapping[str, list[str]] = field(default_factory=dict)
    values: Mapping[str, dict[str, Any]] = field(default_factory=dict)
    seed: int = 42

    def value(self, method: Method, param: str) -> Any:
        """The value of a control, or its declared default."""
        return self.values.get(method.name, {}).get(param, method.param(param).default)

    def merges(self, method: Method) -> dict[str, dict[str, list[Any]]]:
        """The level merges of a method with a merge parameter: ``{column: {label: levels}}``."""
        merge = method.merge
        return dict(self.values.get(method.name, {}).get(merge.name) or {}) if merge else {}

    def steps(self, qi: list[str]) -> list[dict[str, Any]]:
        """Recipe steps of the active methods, in the order the page shows them (a column's
        merge before its ``main`` step)."""
        out: list[dict[str, Any]] = []
        for m in page_methods():
            if m.per_column:
                out += [{"method": m.name, "column": c, m.main: _num(v)}
                        for c, v in self.values.get(m.name, {}).items() if v != m.off]
                continue
            on = self.value(m, m.main) != m.off
            params = {p.name: _num(self.value(m, p.name)) for p in m.controls}
            cols = list(qi) if m.columns == "keys" else list(self.columns.get(m.name, []))
            merges = self.merges(m)
            if m.target == "column":
                for c in cols:
                    if merges.get(c):
                        out.append({"method": m.name, "column": c, m.merge.name: merges[c]})
                    if on:
                        out.append({"method": m.name, "column": c, **params})
            elif on and cols:
                out.append({"method": m.name, "columns": cols, **params})
        return out


def _num(v: Any) -> Any:
    """Whole numbers as int in recipes (width 10, not 10.0)."""
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v


#: The largest seed the Protect page's field holds: the browser's exact whole numbers.
MAX_PAGE_SEED = 2**53 - 1


def takes_whole(p: Param) -> bool:
    """Whether the page's control of ``p`` is a whole-number slider: whole numbers, or whole
    steps from a whole low end (band width, noise p)."""
    step = p.step or 1
    return p.type == "whole" or (float(step).is_integer() and float(p.low).is_integer())


def _check_range(where: str, p: Param, value: Any) -> None:
    """An error when ``value`` lies below the low end of its control or is not a whole number
    where the control takes whole numbers: the page would otherwise show (and apply) another
    value than the recipe's. A value past the high end widens the control instead (the
    recipe's own check has already refused what the method does not take)."""
    if value is None or p.type not in ("number", "whole") or isinstance(value, bool):
        return
    if takes_whole(p) and not float(value).is_integer():
        raise SdcInputError(f"{where}: {p.name} = {value:g} is not a whole number, which its "
                            "control on the Protect page takes; apply this recipe with the "
                            "command line")
    if p.low is not None and value < p.low:
        raise SdcInputError(f"{where}: {p.name} = {value:g} is below the low end of its control "
                            f"on the Protect page ({p.low:g}); apply this recipe with the "
                            "command line")


def from_steps(steps: list[dict[str, Any]], seed: int) -> ProtectSettings:
    """Settings that reproduce ``steps``, or an error naming a step the page cannot show."""
    if not 0 <= seed <= MAX_PAGE_SEED:
        raise SdcInputError(f"seed {seed} is larger than the Protect page's seed field takes "
                            f"({MAX_PAGE_SEED}); apply this recipe with the command line")
    methods = {m.name: m for m in page_methods()}
    columns: dict[str, list[str]] = {}
    values: dict[str, dict[str, Any]] = {}
    main_columns: dict[str, set[str]] = {}
    for i, step in enumerate(steps):
        m = methods.get(step.get("method"))
        where = f"step {i + 1} ({step.get('method')})"
        keys = set(step) - {"method", "column", "columns"}
        merge = m.merge.name if m is not None and m.merge else None
        if m is None or not (keys == {merge} or (keys <= {p.name for p in m.controls}
                                                 and m.main in keys)):
            raise SdcInputError(f"{where}: this step has no control on the Protect page "
                                "(apply it with the command line)")
        for p in m.controls:
            _check_range(where, p, step.get(p.name))
        if m.per_column:
            values.setdefault(m.name, {})[step["column"]] = step[m.main]
            continue
        held = values.setdefault(m.name, {})
        if keys == {merge}:
            held.setdefault(merge, {})[step["column"]] = step[merge]
        else:
            params = {p.name: step.get(p.name, p.default) for p in m.controls}
            if any(held.setdefault(k, v) != v for k, v in params.items()):
                raise SdcInputError(f"{where}: the Protect page uses one setting of "
                                    f"{', '.join(params)} for all {m.name} columns")
        if m.columns != "keys":
            cols = [step["column"]] if m.target == "column" else list(step["columns"])
            columns[m.name] = list(dict.fromkeys(columns.get(m.name, []) + cols))
            if keys != {merge}:
                main_columns.setdefault(m.name, set()).update(cols)
    for name, cols in main_columns.items():
        if set(columns[name]) != cols:
            raise SdcInputError(f"{name}: the Protect page applies {methods[name].main} to "
                                "every column it merges levels of")
    return ProtectSettings(columns, values, seed)


def describe(steps: list[dict[str, Any]], seed: int) -> str:
    """The steps in one line for a caption: "band age width=10; pram race p=0.05; seed 42"."""
    return f"{describe_steps(steps)}; seed {seed}"
