"""Recipes: a JSON list of protection steps plus a seed; ``apply`` is deterministic.

```json
{"version": 1, "seed": 42, "steps": [
  {"method": "band", "column": "age", "width": 10},
  {"method": "pram", "column": "gender", "p": 0.05},
  {"method": "relabel", "column": "race", "alpha": 0.1},
  {"method": "rank_swap", "column": "wtkg", "window_percent": 2.5},
  {"method": "randomized_response", "column": "drugs", "keep_probability": 0.5}]}
```

Step i draws its randomness from streams keyed by (seed, i, draw, record id) (:mod:`sdc_core.rng`);
the record id is the row position unless ``record_id`` names an id column. A recipe also records
the library version and the SHA-256 fingerprint of the table it was made on
(:func:`fingerprint`); applying it to a different table gives a warning. Unknown keys, unknown
methods, wrong types and out-of-range values are errors naming the step.
"""

from __future__ import annotations

import hashlib
import json
import numbers
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

import numpy as np
import pandas as pd

from sdc_core import __version__, rng
from sdc_core.errors import SdcInputError
from sdc_core.methods import (
    MethodResult,
    SuppressionResult,
    band,
    local_suppression,
    pram,
    randomized_response,
    rank_swap,
    relabel,
    top_bottom_code,
)

RECIPE_VERSION = 1
_TOP_KEYS = {"version", "seed", "steps", "record_id", "sdc_core_version", "input_fingerprint",
             "description"}



class Release(Enum):
    """What a method's output tells an attacker who knows the recipe (DESIGN §3b)."""

    #: deterministic and value by value (banding, top/bottom coding): the attacker applies it
    #: to the true values and compares exactly
    RECODING = "public recoding"
    #: categories moved at random (PRAM, relabeling, randomized response): compared exactly
    PERTURBATION = "perturbation"
    #: numbers moved (rank swapping): the column is matched by nearest distance
    NUMERIC_PERTURBATION = "numeric perturbation"
    #: values blanked (local suppression): a released blank matches anything
    SUPPRESSION = "suppression"
    #: columns left out of the release
    DROP = "drop"


@dataclass(frozen=True)
class MethodSpec:
    """A recipe method: its keys, the function that runs it, whether it draws random numbers,
    and what its output tells an attacker."""

    required: frozenset[str]
    optional: frozenset[str]
    release: Release
    run: Callable[..., Any] | None = None
    random: bool = False


def _spec(required: set[str], optional: set[str], release: Release,
          run: Callable[..., Any] | None = None, random: bool = False) -> MethodSpec:
    return MethodSpec(frozenset(required), frozenset(optional), release, run, random)


METHODS: dict[str, MethodSpec] = {
    "band": _spec({"column", "width"}, {"origin", "label"}, Release.RECODING, band),
    "top_bottom_code": _spec({"column"}, {"top", "bottom", "top_percentile",
                                          "bottom_percentile"}, Release.RECODING,
                             top_bottom_code),
    "pram": _spec({"column"}, {"p", "invariant", "retention", "matrix"}, Release.PERTURBATION,
                  pram, random=True),
    "relabel": _spec({"column", "alpha"}, set(), Release.PERTURBATION, relabel, random=True),
    "rank_swap": _spec({"column"}, {"window_percent"}, Release.NUMERIC_PERTURBATION, rank_swap,
                       random=True),
    "randomized_response": _spec({"column"}, {"keep_probability", "categories"},
                                 Release.PERTURBATION, randomized_response, random=True),
    "local_suppression": _spec({"columns", "k"}, {"importance", "alpha"}, Release.SUPPRESSION),
    "drop": _spec({"columns"}, set(), Release.DROP),
}
RANDOM_METHODS = frozenset(m for m, spec in METHODS.items() if spec.random)
_NUMBERS = {"width", "origin", "top", "bottom", "top_percentile", "bottom_percentile", "p",
            "retention", "alpha", "window_percent", "keep_probability", "k"}
_TEXT = {"column", "label"}
_TEXT_LISTS = {"columns", "importance"}


@dataclass(frozen=True)
class Recipe:
    seed: int
    steps: list[dict[str, Any]]
    record_id: str | None = None
    sdc_core_version: str = __version__
    input_fingerprint: str | None = None
    description: str | None = None
    version: int = RECIPE_VERSION

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"version": self.version, "seed": self.seed}
        if self.description:
            out["description"] = self.description
        out["record_id"] = self.record_id
        out["steps"] = self.steps
        out["sdc_core_version"] = self.sdc_core_version
        out["input_fingerprint"] = self.input_fingerprint
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False) + "\n"


@dataclass(frozen=True)
class ApplyResult:
    """The protected table, one report per step, warnings, and the transition matrix of every
    PRAM-like step (by step number)."""

    data: pd.DataFrame
    reports: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    matrices: dict[int, pd.DataFrame] = field(default_factory=dict)


def fingerprint(df: pd.DataFrame) -> str:
    """SHA-256 of the table's content: its CSV text (names and values, in order)."""
    return hashlib.sha256(df.to_csv(index=False, lineterminator="\n").encode()).hexdigest()


def make_recipe(steps: list[dict[str, Any]], seed: int, df: pd.DataFrame | None = None,
                record_id: str | None = None, description: str | None = None) -> Recipe:
    """A validated recipe, fingerprinted with the table it is made on."""
    recipe = Recipe(seed=seed, steps=[dict(s) for s in steps], record_id=record_id,
                    input_fingerprint=fingerprint(df) if df is not None else None,
                    description=description)
    return parse_recipe(recipe.to_dict())


def _is_number(v: Any) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool) and np.isfinite(float(v))


def check_step(i: int, step: Any) -> dict[str, Any]:
    where = f"step {i + 1}"
    if not isinstance(step, dict):
        raise SdcInputError(f"{where}: a step must be an object with a 'method'")
    method = step.get("method")
    if method not in METHODS:
        raise SdcInputError(f"{where}: unknown method {method!r}; expected one of "
                            f"{', '.join(METHODS)}")
    where = f"step {i + 1} ({method})"
    required, optional = METHODS[method].required, METHODS[method].optional
    keys = set(step) - {"method"}
    unknown = sorted(keys - required - optional)
    if unknown:
        raise SdcInputError(f"{where}: unknown key(s) {', '.join(unknown)}")
    if required - keys:
        raise SdcInputError(f"{where}: missing key(s) {', '.join(sorted(required - keys))}")
    for key, value in step.items():
        if key in _NUMBERS and value is not None and not _is_number(value):
            raise SdcInputError(f"{where}: {key} must be a number, not {value!r}")
        if key in _TEXT and not isinstance(value, str):
            raise SdcInputError(f"{where}: {key} must be text, not {value!r}")
        if key in _TEXT_LISTS and (not isinstance(value, list) or not value
                                   or not all(isinstance(v, str) for v in value)):
            raise SdcInputError(f"{where}: {key} must be a non-empty list of column names")
    if method == "pram" and "invariant" in step and not isinstance(step["invariant"], bool):
        raise SdcInputError(f"{where}: invariant must be true or false")
    if method == "randomized_response" and "categories" in step and (
            not isinstance(step["categories"], list) or len(step["categories"]) < 2):
        raise SdcInputError(f"{where}: categories must be a list of at least 2 answers")
    return dict(step)


def parse_recipe(data: Any) -> Recipe:
    """Validate a recipe's structure (keys, types) without data; see the module docstring."""
    if not isinstance(data, dict):
        raise SdcInputError("a recipe must be a JSON object with 'seed' and 'steps'")
    unknown = set(data) - _TOP_KEYS
    if unknown:
        raise SdcInputError(f"recipe: unknown key(s) {', '.join(sorted(unknown))}")
    if data.get("version", RECIPE_VERSION) != RECIPE_VERSION:
        raise SdcInputError(f"recipe: version {data.get('version')!r} is not supported "
                            f"(expected {RECIPE_VERSION})")
    seed = data.get("seed")
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise SdcInputError("recipe: seed must be a whole number ≥ 0")
    steps = data.get("steps")
    if not isinstance(steps, list):
        raise SdcInputError("recipe: steps must be a list")
    record_id = data.get("record_id")
    if record_id is not None and not isinstance(record_id, str):
        raise SdcInputError("recipe: record_id must be a column name or null")
    return Recipe(seed=seed, steps=[check_step(i, s) for i, s in enumerate(steps)],
                  record_id=record_id,
                  sdc_core_version=str(data.get("sdc_core_version", __version__)),
                  input_fingerprint=data.get("input_fingerprint"),
                  description=data.get("description"))


def load_recipe(text: str) -> Recipe:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise SdcInputError(f"recipe is not valid JSON ({err.msg}, line {err.lineno})") from None
    return parse_recipe(data)


def _column(df: pd.DataFrame, step: dict[str, Any], where: str) -> str:
    col = step["column"]
    if col not in df.columns:
        raise SdcInputError(f"{where}: unknown column '{col}'")
    return col


def run_column_step(s: pd.Series, step: dict[str, Any], seed: int, index: int,
                    rid: np.ndarray) -> MethodResult:
    """Apply a one-column step (every method but local_suppression and drop) to ``s``."""
    args = {k: v for k, v in step.items() if k not in ("method", "column")}
    spec = METHODS[step["method"]]
    if spec.random:
        return spec.run(s, **args, seed=seed, step=index, rid=rid)
    return spec.run(s, **args)


def run_suppression_step(df: pd.DataFrame, step: dict[str, Any]) -> SuppressionResult:
    """Apply a local_suppression step to ``df``."""
    args = {k: v for k, v in step.items() if k not in ("method", "columns")}
    return local_suppression(df, step["columns"], **args)


def _run_step(df: pd.DataFrame, step: dict[str, Any], seed: int, index: int,
              rid: np.ndarray) -> tuple[pd.DataFrame, dict[str, Any], pd.DataFrame | None]:
    method = step["method"]
    where = f"step {index + 1} ({method})"
    out = df.copy()
    try:
        if method in ("local_suppression", "drop"):
            cols = step["columns"]
            unknown = [c for c in cols if c not in df.columns]
            if unknown:
                raise SdcInputError(f"unknown column(s) {', '.join(unknown)}")
            if method == "drop":
                return out.drop(columns=cols), {"dropped": cols}, None
            res = run_suppression_step(df, step)
            out[cols] = res.data[cols]
            return out, {"suppressed": res.suppressed, **res.info}, None
        col = _column(df, step, where)
        res = run_column_step(df[col], step, seed, index, rid)
        out[col] = res.values
        return out, dict(res.info), res.matrix
    except SdcInputError as err:
        message = str(err)
        raise SdcInputError(message if message.startswith("step ") else
                            f"{where}: {message}") from None


def apply_recipe(recipe: Recipe, df: pd.DataFrame) -> ApplyResult:
    """Run every step in order on a copy of ``df``."""
    warnings = []
    if recipe.input_fingerprint and recipe.input_fingerprint != fingerprint(df):
        warnings.append("this recipe was made on different data (input fingerprint differs)")
    if recipe.sdc_core_version != __version__:
        warnings.append(f"this recipe was made with sdc_core {recipe.sdc_core_version}, "
                        f"this is {__version__}")
    if recipe.record_id is not None:
        if recipe.record_id not in df.columns:
            raise SdcInputError(f"recipe: record_id column '{recipe.record_id}' is not in the data")
        ids = df[recipe.record_id]
        if ids.isna().any() or ids.duplicated().any():
            raise SdcInputError(f"recipe: record_id column '{recipe.record_id}' must be unique "
                                "and complete")
        rid = rng.ids_from_column(ids.to_numpy())
    else:
        rid = rng.record_ids(len(df))
    out = df
    reports, matrices = [], {}
    for i, step in enumerate(recipe.steps):
        out, info, matrix = _run_step(out, step, recipe.seed, i, rid)
        reports.append({"step": i + 1, "method": step["method"],
                        "column": step.get("column", ", ".join(step.get("columns", []))),
                        **info})
        if matrix is not None:
            matrices[i + 1] = matrix
    return ApplyResult(out, reports, warnings, matrices)
