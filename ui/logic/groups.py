"""Which columns the Protect and Trade-offs pages offer each method, from the data set's kinds
and the roles (pure Python: links, pages and tests ask the same functions)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from sdc_core.data.columns import canonical, is_number
from sdc_core.data.io import Kind
from sdc_core.methods import Method
from sdc_core.roles import Roles, looks_like_geography, structure_columns
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
    """The groups of ``ds``'s columns under ``roles``; the household id is never among the
    numbers (an id is not a measure: no method, attacker or utility figure takes it)."""
    df = ds.df
    numbers = [c for c in df.columns
               if is_number(df[c]) and c not in roles.ignore and c != roles.household]
    return ColumnGroups(
        numeric=[c for c in roles.numeric if c in df.columns],
        categorical=[c for c, k in ds.kinds.items()
                     if k is Kind.CATEGORICAL and c not in roles.ignore],
        numbers=numbers,
        banded=[c for c in roles.qi if c in numbers and ds.kinds[c] is not Kind.CATEGORICAL],
        structure=structure_columns(df, list(roles.qi), roles.household, ds.kinds))


def measure_columns(ds: Dataset, roles: Roles) -> list[str]:
    """The columns a page offers as a measure to sum or estimate (the numeric kind), never
    the household id."""
    return [c for c, k in ds.kinds.items() if k is Kind.NUMERIC and c != roles.household]


def utility_options(df: pd.DataFrame, household: str | None) -> list[str]:
    """The columns the Data page offers as numeric columns for utility: every number but the
    household id."""
    return [c for c in df.columns if is_number(df[c]) and c != household]


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


#: The fewest levels a column suggested as a geography holds: a yes/no column is no area.
GEOGRAPHY_MIN_LEVELS = 3

#: What record swapping says when the table has no geography column (Protect and Trade-offs).
NO_GEOGRAPHY = (
    "This table has no geography column: no categorical column is named like an area (region, "
    "district, municipality, zip code, …) with one value per household and more than two "
    "values. Record swapping exchanges the areas of households, so it needs one; a wave "
    "(year) or a yes/no column is not an area.")


def geography_suggestions(df: pd.DataFrame, categorical: list[str], household: str | None,
                          constant: list[str]) -> list[str]:
    """The columns record swapping suggests as its geography: of the ``categorical`` columns,
    those named like an area (:func:`sdc_core.roles.looks_like_geography`), constant within
    every household (``constant``, the household-level columns: a swap exchanges a whole
    household's area) and with at least :data:`GEOGRAPHY_MIN_LEVELS` values; never the
    ``household`` id. Any other column is a geography only when the steward marks it so."""
    held = set(constant)
    return [c for c in categorical
            if c != household and c in held and looks_like_geography(c)
            and df[c].nunique() >= GEOGRAPHY_MIN_LEVELS]


def geography_options(suggested: list[str], chosen: list[str], others: list[str],
                      marking: bool) -> list[str]:
    """The columns the geography picker offers: the ``suggested`` ones, those ``chosen``
    already (a recipe's hierarchy) and, while the steward marks columns as geography
    (``marking``), every other categorical column of ``others``; in that order, once each."""
    return list(dict.fromkeys([*suggested, *chosen, *(others if marking else [])]))
