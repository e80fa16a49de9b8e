"""Recoding of a categorical column (global recoding of categories): listed levels merged into
new labels, or every rare level merged into one label.

Exactly one of two modes:

- ``groups = {label: [level, …], …}``: a value equal to a listed level becomes its label; every
  other value is kept. A label may be an existing level (the listed levels join it) and may list
  itself.
- ``min_count = c``: every level held by fewer than c records (missing values not counted)
  becomes ``other`` (default "other"); an existing level equal to ``other`` is merged into.

Deterministic and value by value, like banding: a **public recoding**, which an attacker who
knows the recipe applies to the true values. Missing values stay missing.

Numbers and text. On a numeric column (numbers used as category codes, e.g. 1, 2, 3) a level is
matched by value: a listed 2, 2.0 or "2" (text that reads as a number, as JSON object keys must
be) all match the code 2. On any other column a level is matched by its text, numbers written
without a trailing ".0" (2 and 2.0 match "2"; "02" does not). The output is numeric when the
column is numeric and every label a level moves to (``other``) is a number or reads as one (a
label no level reaches does not count): it keeps the column's
dtype when every released value is whole, else becomes float (Float64 for a nullable integer
column). Otherwise the output is text (pandas "str" dtype), numbers written as above (3 → "3",
2.5 → "2.5"), put back in the column's kind where every value allows it
(:func:`sdc_core.data.columns.restore`: True/False stays True/False, a category a category).

Checks: a level listed twice (under one label or two, in any spelling that matches the same
level) is an error, since it is ambiguous; so is a label listed as a level of *another* group
(a chain a → b → c would move values again on a second pass). A listed level that is not in the
column is not an error — a recipe made on one file applies to another that may lack it — and
is reported in the info (``not_present``), where a typo shows.

Idempotence: recoding the output again with the same ``groups`` changes nothing (labels map to
themselves and the other levels were not listed). With ``min_count`` the second pass changes
nothing either: every level that is kept still has at least c records, and ``other`` maps to
itself even when it is still rare (fewer than c records in all): the info then reports
``other_still_rare`` and it needs another method (e.g. local suppression).
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np
import pandas as pd

from sdc_core.checks import check_whole
from sdc_core.data.codes import number_text, numbers_as_text
from sdc_core.data.columns import is_date, is_number, nullable, restore
from sdc_core.errors import SdcInputError
from sdc_core.methods.common import Levels, MethodResult, category_codes
from sdc_core.methods.spec import EngineRun, Method, Param, Release


def _is_number(v: Any) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def as_number(v: Any) -> float | None:
    """The finite number a level or label stands for on a numeric column (a number, or text
    that reads as one), else None."""
    if _is_number(v):
        f = float(v)
    elif isinstance(v, str):
        try:
            f = float(v)
        except ValueError:
            return None
    else:
        return None
    return f if math.isfinite(f) else None


def as_text(v: Any) -> str:
    """How a level or label reads on a text column."""
    if isinstance(v, str):
        return v
    return number_text(v) if _is_number(v) else str(v)


def as_json(v: Any) -> Any:
    """A level as a JSON-ready value: text, or a number (whole numbers as int)."""
    if isinstance(v, str):
        return v
    if _is_number(v):
        f = float(v)
        return int(f) if f.is_integer() else f
    return str(v)


def _check_label(name: str, v: Any) -> None:
    ok = (isinstance(v, str) and v.strip() != "") or (_is_number(v) and math.isfinite(float(v)))
    if not ok:
        raise SdcInputError(f"{name} must be a non-empty text or a number, not {v!r}")


def _level_keys(s: pd.Series, levels: pd.Index, numeric: bool) -> np.ndarray:
    """Each level as compared with the listed levels: its value (numeric column) or text."""
    if numeric:
        return levels.to_numpy(dtype=np.float64)
    if isinstance(s.dtype, pd.StringDtype):
        return levels.to_numpy(dtype=object)
    return np.array([as_text(v) for v in levels], dtype=object)


def _numeric_dtype(s: pd.Series, released: np.ndarray) -> Any:
    whole = bool(np.all(np.mod(released, 1) == 0))
    if pd.api.types.is_float_dtype(s) or (whole and pd.api.types.is_integer_dtype(s)):
        return s.dtype
    return "Float64" if isinstance(s.dtype, pd.api.extensions.ExtensionDtype) else np.float64


def _build(s: pd.Series, levels: pd.Index, codes: np.ndarray, released: np.ndarray,
           numeric_out: bool) -> pd.Series:
    """The column from each level's released value (float or text) and the codes. Text labels
    go back into the column's kind when every level's label allows it
    (:func:`sdc_core.data.columns.restore`, decided on the levels, so every part of a column gets
    the same kind)."""
    if numeric_out:
        dtype = _numeric_dtype(s, released)
        values = released.astype(np.int64) if pd.api.types.is_integer_dtype(dtype) else released
        typed = pd.array(values, dtype=dtype)
    else:
        labels = pd.Series(pd.array(released, dtype="str"))
        typed = restore(pd.Series(np.asarray(levels, dtype=object)).astype(s.dtype), labels)
        typed = (nullable(typed) if (codes < 0).any() else typed).array
    return pd.Series(typed.take(codes, allow_fill=True), index=s.index, name=s.name)


def _group_members(groups: dict[Any, list[Any]]) -> list[tuple[int, Any]]:
    """(group number, listed level) pairs, checked for type."""
    if not isinstance(groups, dict) or not groups:
        raise SdcInputError("groups must map at least one label to a list of levels")
    pairs = []
    for g, (label, members) in enumerate(groups.items()):
        _check_label("a label in groups", label)
        if not isinstance(members, (list, tuple)) or not members:
            raise SdcInputError(f"groups['{label}'] must be a non-empty list of levels")
        for m in members:
            if not (isinstance(m, str) or (_is_number(m) and math.isfinite(float(m)))):
                raise SdcInputError(f"groups['{label}'] holds {m!r}; levels are text or numbers")
            pairs.append((g, m))
    return pairs


def recode(s: pd.Series, groups: dict[str, list[Any]] | None = None,
           min_count: int | None = None, other: str = "other",
           levels: Levels | None = None) -> MethodResult:
    """Recode ``s`` by ``groups`` or ``min_count`` (see the module docstring); ``levels``: the
    categories and counts of the whole column when ``s`` is a part of it."""
    if (groups is None) == (min_count is None):
        raise SdcInputError("recoding needs either groups or min_count (exactly one of them)")
    if is_date(s):
        raise SdcInputError(f"recoding takes categories; column '{s.name}' holds dates "
                            "(band it instead)")
    numeric = is_number(s)
    whole = levels
    codes, categories = category_codes(s, whole)
    keys = _level_keys(s, categories, numeric)
    counts = np.bincount(codes[codes >= 0], minlength=len(categories)) if whole is None \
        else whole.counts
    if groups is not None:
        pairs = _group_members(groups)
        labels = list(groups)
        numeric_out = numeric and all(as_number(v) is not None for v in labels)
        group = _match_groups(pairs, labels, keys, numeric, numeric_out)
        info: dict[str, Any] = {"mode": "groups"}
    else:
        assert min_count is not None  # exactly one of groups and min_count
        c = check_whole("min_count", min_count)
        _check_label("other", other)
        labels = [other]
        numeric_out = numeric and as_number(other) is not None
        group = np.where(counts < c, 0, -1)
        info = {"mode": "min_count", "min_count": c, "other": as_json(other)}
    # the output is numeric when every label a level actually moves to is a number (a rare
    # "other" that no level reaches leaves a column of codes numeric)
    used = {int(g) for g in group[group >= 0]}
    numeric_out = numeric and all(as_number(labels[g]) is not None for g in used)
    before = (keys if numeric_out or not numeric else numbers_as_text(keys))
    label_values = np.array([(np.nan if as_number(v) is None else as_number(v)) if numeric_out
                             else as_text(v) for v in labels],
                            dtype=np.float64 if numeric_out else object)
    moved = group >= 0
    released = before.copy()
    released[moved] = label_values[group[moved]]
    changed = moved & (released != before)
    merged: dict[str, list[Any]] = {}
    for g, label in enumerate(labels):
        hit = np.flatnonzero(changed & (group == g))
        if len(hit):
            merged[as_text(label)] = [as_json(v) for v in categories[hit]]
    info |= {"merged": merged, "changed": int(counts[changed].sum()),
             "levels_before": len(categories),
             "levels_after": int(pd.unique(released).size) if len(categories) else 0}
    if groups is None:
        other_count = int(counts[released == label_values[0]].sum())
        info |= {"other_count": other_count,
                 "other_still_rare": bool(0 < other_count < int(info["min_count"]))}
    else:
        info["not_present"] = _not_present(pairs, keys, numeric)
    if not info["changed"]:  # nothing moved: the column as it was, in its own kind
        return MethodResult(s.copy(), info)
    return MethodResult(_build(s, categories, codes, released, numeric_out), info)


def _member_key(m: Any, numeric: bool) -> Any:
    """A listed level as compared with the column's levels (None: it cannot match any)."""
    return as_number(m) if numeric else as_text(m)


def _match_groups(pairs: list[tuple[int, Any]], labels: list[Any], keys: np.ndarray,
                  numeric: bool, numeric_out: bool) -> np.ndarray:
    """The group number of each level (−1: not listed), after the checks of the docstring."""
    seen: dict[Any, tuple[int, Any]] = {}
    for g, m in pairs:
        k = _member_key(m, numeric)
        k = ("unmatched", m) if k is None else k
        if k in seen:
            first = labels[seen[k][0]]
            raise SdcInputError(f"groups lists the level {m!r} twice (under '{first}' and "
                                f"'{labels[g]}')" if seen[k][0] != g else
                                f"groups lists the level {m!r} twice under '{labels[g]}'")
        seen[k] = (g, m)
    out_keys = {_member_key(m, numeric_out): g for g, m in pairs}
    for g, label in enumerate(labels):
        h = out_keys.get(_member_key(label, numeric_out), g)
        if h != g:
            raise SdcInputError(f"the label '{label}' is also listed as a level of "
                                f"'{labels[h]}': a second pass would recode it again")
    matchable = [(k, g) for k, (g, _) in seen.items() if not isinstance(k, tuple)]
    if not matchable or not len(keys):
        return np.full(len(keys), -1, dtype=np.int64)
    member_group = np.array([g for _, g in matchable], dtype=np.int64)
    index = pd.Index([k for k, _ in matchable], dtype=np.float64 if numeric else object)
    at = index.get_indexer(keys)
    return np.where(at >= 0, member_group[at], -1)


def _not_present(pairs: list[tuple[int, Any]], keys: np.ndarray, numeric: bool) -> list[Any]:
    present = set(keys.tolist())
    return [as_json(m) for _, m in pairs if _member_key(m, numeric) not in present]


def _describe(r: dict[str, Any]) -> str:
    text = (f"Recoding of {r['column']}: {r['changed']} values changed, "
            f"{r['levels_before']} levels → {r['levels_after']}.")
    if r.get("other_still_rare"):
        text += f" '{r['other']}' still has only {r['other_count']} records."
    if r.get("not_present"):
        text += f" Not in the column: {', '.join(map(str, r['not_present']))}."
    return text


RECODE = Method(
    engine=EngineRun.LEVELS,
    name="recode", label="Category recoding", order=15, run=recode,
    release=Release.RECODING, target="column", columns="categorical",
    summary="rare categories become 'other' (0 = off)", main="min_count", off=0,
    sweep_values="5, 10, 20",
    params=(Param("groups", "merge", None, label="Merge levels of {column}",
                  help="Each chosen level becomes the label; other values are kept."),
            Param("min_count", "whole", 0, low=0, high=100, step=1,
                  label="Minimum records per level",
                  help="Levels held by fewer records become the 'other' label."),
            Param("other", "text", "other", more=True, label="Label for rare levels")),
    describe=_describe)
