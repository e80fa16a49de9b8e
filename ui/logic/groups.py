"""Which columns the Protect and Trade-offs pages offer each method, from the data set's kinds
and the roles (pure Python: links, pages and tests ask the same functions)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from sdc_core.columns import canonical, is_number
from sdc_core.io import Kind
from sdc_core.methods import Method
from sdc_core.roles import Roles, structure_columns
from ui.logic.protect import page_methods
from ui.logic.session import Dataset


@dataclass(frozen=True)
class ColumnGroups:
    """Released columns by use: ``numeric`` (tagged for utility), ``categorical`` (kind),
    ``numbers`` (any numeric dtype), ``banded`` (numeric quasi-identifiers that are not codes);
    ``structure``, the quasi-identifiers that hold the table's structure (an id, a wave, a
    date: :func:`sdc_core.roles.structure_columns`), each with why, which no default picks."""

    numeric: list[str]
    categorical: list[str]
    numbers: list[str]
    banded: list[str]
    structure: dict[str, str] = field(default_factory=dict)


def column_groups(ds: Dataset, roles: Roles) -> ColumnGroups:
    df = ds.df
    numbers = [c for c in df.columns if is_number(df[c]) and c not in roles.ignore]
    return ColumnGroups(
        numeric=[c for c in roles.numeric if c in df.columns],
        categorical=[c for c, k in ds.kinds.items()
                     if k is Kind.CATEGORICAL and c not in roles.ignore],
        numbers=numbers,
        banded=[c for c in roles.qi if c in numbers and ds.kinds[c] is not Kind.CATEGORICAL],
        structure=structure_columns(df, list(roles.qi), roles.household, ds.kinds))


def method_columns(m: Method, groups: ColumnGroups, roles: Roles) -> list[str]:
    """The columns a method takes, by its declared kind."""
    return {"numeric_keys": groups.banded, "categorical": groups.categorical,
            "numeric": groups.numbers, "keys": list(roles.qi)}[m.columns]


def method_defaults(m: Method, groups: ColumnGroups, roles: Roles) -> list[str]:
    """The columns a method starts with, by its declared default, never the household id nor
    a column of the table's structure (``groups.structure``: an id, a wave, a date;
    docs/methods.md, "Defaults")."""
    if m.default_columns == "categorical_keys":
        chosen = [c for c in roles.qi if c in groups.categorical]
    elif m.default_columns == "numeric_keys":
        chosen = groups.banded
    else:
        return []
    return [c for c in chosen if c not in groups.structure and c != roles.household]


def offered_columns(groups: ColumnGroups, roles: Roles) -> dict[str, list[str]]:
    """The columns the Protect page offers each of its methods on: a recipe opens there only
    when its steps name these (:func:`ui.logic.protect.from_steps`)."""
    return {m.name: method_columns(m, groups, roles) for m in page_methods()}


def level_sets(df: pd.DataFrame, columns: list[str]) -> dict[str, frozenset[str]]:
    """The levels of each of ``columns``: its distinct values present, as canonical text (a
    code 1 and the text "1" are one level)."""
    return {c: frozenset(str(canonical(v)) for v in pd.unique(df[c].dropna()))
            for c in columns}


def same_levels(levels: dict[str, frozenset[str]], column: str) -> list[str]:
    """The columns with exactly the levels of ``column`` (itself included), in their order:
    the 25 items of a survey, each scored 1–6."""
    return [c for c, held in levels.items() if held == levels[column]]
