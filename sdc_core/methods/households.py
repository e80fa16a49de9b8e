"""Steps that keep households consistent (docs/methods.md, "Households").

With a household column, a column constant within every household of the table a recipe starts
from (household-level: region, household size, tenure, a household weight; or constant over the
whole table) stays constant within every household of the release:

- a step whose columns are all household-level runs on one record per household (each
  household's first record, households in order of first appearance), random draws keyed by
  those records' ids, and every member gets its household's new value: PRAM, relabeling,
  randomized response, recoding, noise, rank swapping and microaggregation work on households,
  and their figures count households (``per_household: true``, ``households``);
- local suppression on keys that mix household-level and person-level columns runs on the
  persons, then blanks a household-level value for every member of a household where it blanked
  it for one (``household_extra_suppressed`` counts the extra blanks);
- any other step that mixes them (noise, microaggregation) is split: its household-level columns
  run on the households as above, the others on the persons, with the same step index (so a
  person-level column gets the draws it gets alone).

A step of PRAM, relabeling or randomized response with ``per_household: true`` runs on the
households as a step on household-level columns does, whatever its column (docs/methods.md,
"One draw per household"): the records whose value differs from their household's first
record's are released from the first record's value (``household_overridden``).

Banding and top/bottom coding are value by value: run on the households they give every record
the value it gets on the persons. Record swapping works on households itself; dropping a column
needs nothing.

This module holds no method: :func:`sdc_core.recipe.run_step` calls it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from sdc_core.classes import class_sizes
from sdc_core.data.columns import blank
from sdc_core.households import constant_within, household_codes
from sdc_core.methods.common import resolve_ids
from sdc_core.methods.spec import Method, Release

if TYPE_CHECKING:
    from sdc_core.recipe import StepOutput

#: How a step runs on a frame with a step and record ids (:func:`sdc_core.recipe.run_step`'s
#: method call, without the household handling).
Runner = Callable[[pd.DataFrame, dict[str, Any], "np.ndarray | None"], "StepOutput"]


@dataclass(frozen=True)
class HouseholdPlan:
    """The households of the table a recipe starts from.

    Parameters
    ----------
    column : str
        The household id column.
    codes : numpy.ndarray
        Each record's household, 0 … n − 1 in order of first appearance.
    first : numpy.ndarray
        The position of each household's first record (by household code).
    level : frozenset of str
        The columns constant within every household (household-level, or constant over the
        whole table), the household column left out.
    """

    column: str
    codes: np.ndarray
    first: np.ndarray
    level: frozenset[str]

    @property
    def count(self) -> int:
        """The number of households."""
        return len(self.first)


def household_plan(df: pd.DataFrame, household: str) -> HouseholdPlan:
    """The households of ``df`` (module docstring): codes, first records, and the columns
    constant within every household.

    A column c is kept constant when, for every household h, |{c_i : i ∈ h}| = 1 (a blank a
    value of its own): the household-level columns of
    :func:`sdc_core.households.household_level_columns` and the columns constant over the table.

    Parameters
    ----------
    df : pandas.DataFrame
        The table the recipe starts from.
    household : str
        The household id column (complete: every record names its household).

    Returns
    -------
    HouseholdPlan
        The codes, the first records and the columns constant within households.

    Raises
    ------
    SdcInputError
        When the column is not in the table or has a blank id.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"hid": [7, 7, 3], "region": ["N", "N", "S"], "age": [40, 9, 70]})
    >>> plan = household_plan(df, "hid")
    >>> plan.codes.tolist(), plan.first.tolist(), sorted(plan.level), plan.count
    ([0, 0, 1], [0, 2], ['region'], 2)
    """
    codes, n = household_codes(df, household)
    first = np.unique(codes, return_index=True)[1] if n else np.zeros(0, dtype=np.int64)
    level = set(constant_within(df, household, codes)) if n else set()
    return HouseholdPlan(household, codes, first.astype(np.int64), frozenset(level))


def needs_households(spec: Method) -> bool:
    """Whether a method's step is run by :func:`run_per_household` when the recipe names a
    household: every method but record swapping (it works on households itself) and drop.

    Parameters
    ----------
    spec : Method
        The method's declaration.

    Returns
    -------
    bool
        True unless the method works on households itself or drops columns.
    """
    return not spec.extra.get("household") and spec.release is not Release.DROP


def spread(values: pd.DataFrame, plan: HouseholdPlan, index: pd.Index) -> pd.DataFrame:
    """Values of one record per household (in household-code order) given to every member:
    record i gets row codes[i].

    Parameters
    ----------
    values : pandas.DataFrame
        One row per household, in household-code order.
    plan : HouseholdPlan
        The households.
    index : pandas.Index
        The index of the records.

    Returns
    -------
    pandas.DataFrame
        One row per record, with ``index``.
    """
    return values.iloc[plan.codes].set_axis(index)


def run_per_household(df: pd.DataFrame, step: dict[str, Any], columns: Sequence[str],
                      release: Release, plan: HouseholdPlan, rid: np.ndarray | None,
                      run: Runner, whole: bool = False) -> StepOutput:
    """Run a step so that the columns of ``plan.level`` stay constant within households
    (module docstring); with ``whole`` (a step's ``per_household: true``) every column of the
    step is run on the households so.

    Parameters
    ----------
    df : pandas.DataFrame
        The step's input (the records of ``plan``, in its order).
    step : dict
        The validated step.
    columns : sequence of str
        The columns the step changes.
    release : Release
        What the method's output tells an attacker (local suppression is
        :attr:`Release.SUPPRESSION`).
    plan : HouseholdPlan
        The households of the table the recipe started from.
    rid : numpy.ndarray, optional
        The record ids (None: the row positions).
    run : callable
        ``run(frame, step, rid)`` runs the method on a frame.
    whole : bool, default False
        Run every column of the step on the households, constant within them or not (one draw
        per household: the records whose value differs from their household's first record's
        are released from the first record's, and counted as ``household_overridden``).

    Returns
    -------
    StepOutput
        The step's new values for every record, with ``per_household: true`` and
        ``households`` (all its columns household-level, or ``whole``), or
        ``household_columns`` and ``households`` (mixed).
    """
    level = [c for c in columns if whole or c in plan.level]
    if not level:
        return run(df, step, rid)
    if len(plan.codes) != len(df):
        raise ValueError("the household plan is of another table")
    ids = resolve_ids(len(df), rid)
    heads = df.iloc[plan.first]
    if len(level) == len(columns):
        done = run(heads, step, ids[plan.first])
        values = spread(done.values, plan, df.index)
        info = {**done.info, "per_household": True, "households": plan.count}
        if whole:
            info["household_overridden"] = overridden(df, list(columns), plan)
        if release is Release.SUPPRESSION:
            info |= _suppressed(df, values, columns)
        return replace(done, values=values, info=info)
    mixed = {"household_columns": level, "households": plan.count}
    if release is Release.SUPPRESSION:
        done = run(df, step, rid)
        values, extra = _blank_households(df, done.values, level, plan)
        info = {**done.info, **_suppressed(df, values, columns), **mixed,
                "household_extra_suppressed": extra}
        if extra:
            info |= _smallest_classes(values, columns, float(step.get("alpha", 1.0)))
        return replace(done, values=values, info=info)
    persons = [c for c in columns if c not in plan.level]
    own = run(heads, {**step, "columns": level}, ids[plan.first])
    done = run(df, {**step, "columns": persons}, rid)
    values = pd.concat([spread(own.values, plan, df.index), done.values], axis=1)[list(columns)]
    info = {**done.info, **mixed, "household_step": own.info}
    for key, part in own.info.items():  # per-column figures of both parts side by side
        if isinstance(part, dict) and isinstance(done.info.get(key), dict):
            both = {**part, **done.info[key]}
            info[key] = {c: both[c] for c in map(str, columns) if c in both}
    return replace(done, values=values, info=info)


def overridden(df: pd.DataFrame, columns: Sequence[str], plan: HouseholdPlan) -> int:
    """The values of ``columns`` that differ from their household's first record's (a blank a
    value of its own): what a step run once per household releases from another record's
    value than their own.

    Parameters
    ----------
    df : pandas.DataFrame
        The step's input (the records of ``plan``, in its order).
    columns : sequence of str
        The step's columns.
    plan : HouseholdPlan
        The households.

    Returns
    -------
    int
        Σ over the columns of the records i with c_i ≠ c_first(h(i)).
    """
    total = 0
    for c in columns:
        values, _ = pd.factorize(df[c], use_na_sentinel=False)
        total += int((values != values[plan.first][plan.codes]).sum())
    return total


def _blank_households(before: pd.DataFrame, after: pd.DataFrame, level: Sequence[str],
                      plan: HouseholdPlan) -> tuple[pd.DataFrame, int]:
    """``after`` with each household-level value blanked for every member of a household where
    the step blanked it for one, and the number of values so blanked."""
    out, extra = after.copy(), 0
    for c in level:
        present = out[c].notna().to_numpy()
        newly = before[c].notna().to_numpy() & ~present
        if not newly.any():
            continue
        hit = np.zeros(plan.count, dtype=bool)
        hit[plan.codes[newly]] = True
        rows = hit[plan.codes] & present
        if rows.any():
            out[c] = blank(out[c], rows)
            extra += int(rows.sum())
    return out, extra


def _suppressed(before: pd.DataFrame, after: pd.DataFrame,
                columns: Sequence[str]) -> dict[str, Any]:
    """The values a step blanked, per column and in all, counted over the records."""
    counts = {c: int((before[c].notna().to_numpy() & after[c].isna().to_numpy()).sum())
              for c in columns}
    return {"suppressed": counts, "total_suppressed": sum(counts.values())}


def _smallest_classes(values: pd.DataFrame, columns: Sequence[str],
                      alpha: float) -> dict[str, float]:
    """min f_k on ``columns`` with a blank read as any value (weight ``alpha``) and as a value
    of its own, as local suppression reports them."""
    keys = list(columns)
    return {"min_k_after": float(class_sizes(values, keys, alpha=alpha).fk.min()),
            "min_k_after_as_category": float(class_sizes(values, keys, na="category").fk.min())}
