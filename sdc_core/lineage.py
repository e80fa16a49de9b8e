"""Lineage: a release made from another release only coarsens it.

A public-use file made from a scientific-use file nests in it when every value of the child is
a function of the parent's value of the same column for the same record: y_ic = g_c(x_ic), or
y_ic blank (suppressed), for one function g_c per column c (docs/releases.md, "Lineage"). Then
whoever holds both files learns nothing the parent did not give: the child is the parent seen
through g. A second, different perturbation (PRAM of the original again, noise drawn anew) is
not such a function, and publishing both files would let a user average the two draws.

:func:`check_lineage` refuses, with its reasons, a child that

- has other records than the parent (a different number of rows: the rows must be the same
  persons in the same order);
- comes from a recipe with a random step (a second perturbation, whatever its values look like);
- has a column the parent does not have;
- has a column whose value is not one function of the parent's value: some parent value x gives
  two different released values.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from sdc_core.recipe import RANDOM_METHODS, Recipe
from sdc_core.recipe import step_columns as recipe_step_columns

#: How a child's column stands to the parent's.
RELATIONS = ("unchanged", "coarsened", "dropped", "not a function", "new")


@dataclass(frozen=True)
class ColumnLineage:
    """One column of the child: its ``relation`` (:data:`RELATIONS`), the distinct values
    (blank included) of the parent and of the child, the records blanked in the child and not
    in the parent, and for a column that is not a function an example (a parent value, two of
    its released values), written with :func:`repr` and cut short."""

    column: str
    relation: str
    parent_levels: int = 0
    child_levels: int = 0
    blanked: int = 0
    example: str = ""

    def to_json(self) -> dict[str, object]:
        return {"column": self.column, "relation": self.relation,
                "parent_levels": self.parent_levels, "child_levels": self.child_levels,
                "blanked": self.blanked, "example": self.example}


@dataclass(frozen=True)
class Lineage:
    """The check of a child against its parent: a line per column and the reasons it is
    refused (none: the child is a coarsening of the parent)."""

    columns: tuple[ColumnLineage, ...]
    refused: tuple[str, ...]

    @property
    def accepted(self) -> bool:
        return not self.refused

    def to_json(self) -> dict[str, object]:
        return {"accepted": self.accepted, "refused": list(self.refused),
                "columns": [c.to_json() for c in self.columns]}


def _short(v: object) -> str:
    if isinstance(v, np.generic):
        v = v.item()
    text = repr(v)
    return text if len(text) <= 40 else text[:39] + "…"


def column_lineage(parent: pd.Series, child: pd.Series) -> ColumnLineage:
    """How ``child`` stands to ``parent`` (rows aligned): ``unchanged`` when equal value by
    value, ``coarsened`` when each parent value maps to one released value or a blank, else
    ``not a function`` with an example."""
    name = str(child.name)
    p_codes, p_levels = pd.factorize(parent, use_na_sentinel=True)
    c_codes, c_levels = pd.factorize(child, use_na_sentinel=True)
    p_na, c_na = p_codes < 0, c_codes < 0
    blanked = int((c_na & ~p_na).sum())
    p_codes = np.where(p_na, len(p_levels), p_codes)  # a blank is a value of the parent too
    shown = ~c_na
    pairs = pd.DataFrame({"p": p_codes[shown], "c": c_codes[shown]}).drop_duplicates()
    many = pairs["p"].duplicated(keep=False)
    levels = (len(p_levels) + int(p_na.any()), len(c_levels) + int(c_na.any()))
    if many.any():
        first = pairs[many]
        p = int(first["p"].iloc[0])
        two = first.loc[first["p"] == p, "c"].iloc[:2].tolist()
        x = p_levels[p] if p < len(p_levels) else None
        example = (f"the parent's {_short(x)} is released as {_short(c_levels[two[0]])} and "
                   f"as {_short(c_levels[two[1]])}")
        return ColumnLineage(name, "not a function", *levels, blanked, example)
    same = parent.astype(object).where(~p_na, None).equals(
        child.astype(object).where(~c_na, None)) and len(p_levels) == len(c_levels)
    return ColumnLineage(name, "unchanged" if same and not blanked else "coarsened",
                         *levels, blanked)


def check_lineage(parent: pd.DataFrame, child: pd.DataFrame,
                  recipe: Recipe | None = None) -> Lineage:
    """Whether ``child`` (made by ``recipe`` from ``parent``) is a coarsening of ``parent``
    (module docstring)."""
    refused: list[str] = []
    if recipe is not None:
        for i, step in enumerate(recipe.steps, 1):
            if step["method"] in RANDOM_METHODS:
                cols = ", ".join(map(str, recipe_step_columns(step))) or "the table"
                refused.append(f"step {i} ({step['method']} of {cols}) draws at random: a "
                               "second perturbation, not a coarsening of the parent")
    if len(child) != len(parent):
        refused.append(f"the child has {len(child):,} records and the parent {len(parent):,}: "
                       "a release made from another keeps its records, in order")
        return Lineage((), tuple(refused))
    lines = []
    for c in child.columns:
        if c not in parent.columns:
            lines.append(ColumnLineage(str(c), "new"))
            refused.append(f"column {_short(str(c))} is not in the parent")
            continue
        line = column_lineage(parent[c].reset_index(drop=True), child[c].reset_index(drop=True))
        lines.append(line)
        if line.relation == "not a function":
            refused.append(f"column {_short(str(c))} is not a function of the parent's: "
                           f"{line.example}")
    lines += [ColumnLineage(str(c), "dropped") for c in parent.columns if c not in child.columns]
    return Lineage(tuple(lines), tuple(refused))
