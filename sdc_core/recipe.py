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
the record id is the row position unless ``record_id`` names an id column. ``household`` names
the household id column: record swapping works on households, and every other step keeps the
columns constant within households so (docs/methods.md, "Households"). A recipe also
records the library version and the SHA-256 fingerprint of the table it was made on
(:func:`fingerprint`); applying it to a different table gives a warning. Unknown keys, unknown
methods, wrong types and out-of-range values are errors naming the step.
"""

from __future__ import annotations

import hashlib
import json
import numbers
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from sdc_core import rng
from sdc_core.checks import parse_json, shown
from sdc_core.data.columns import restore
from sdc_core.errors import SdcInputError
from sdc_core.methods import Method, MethodResult, Release, registry
from sdc_core.methods.banding import (
    NUMBER_LABELS,
    read_bands,
    recipe_labels,
    release_note,
    whole_number_columns,
)
from sdc_core.methods.common import RankOne, TableResult
from sdc_core.methods.households import (
    HouseholdPlan,
    household_plan,
    needs_households,
    run_per_household,
)
from sdc_core.version import __version__

RECIPE_VERSION = 1
_TOP_KEYS = {"version", "seed", "steps", "record_id", "household", "sdc_core_version",
             "input_fingerprint", "description"}



#: Every method a recipe may name, from the declarations beside each method's code.
METHODS: dict[str, Method] = registry()
RANDOM_METHODS = frozenset(m for m, spec in METHODS.items() if spec.random)


@dataclass(frozen=True)
class Recipe:
    """A validated recipe (module docstring): a seed and the protection steps.

    The ``seed`` and the ``steps`` (dicts with a ``method``), the ``record_id`` column that keys
    the random draws (None: the row position), the library version and the fingerprint of the
    table it was made on. Made by :func:`parse_recipe` (from a dict), :func:`load_recipe` (from
    JSON text) or :func:`make_recipe` (from steps and a table); ``to_dict`` and ``to_json`` give
    it back as a file holds it.

    Parameters
    ----------
    seed : int
        The seed of the random draws.
    steps : list of dict
        The steps, in order.
    record_id : str, optional
        The id column that keys the random draws (None: the row position).
    sdc_core_version : str
        The library version the recipe was made with.
    input_fingerprint : str, optional
        The SHA-256 fingerprint of the table it was made on.
    description : str, optional
        A line on what it is for.
    version : int, default 1
        The recipe format's version.
    household : str, optional
        The household id column: record swapping needs it, and with it every step keeps
        household-level columns constant within households (docs/methods.md, "Households").

    Examples
    --------
    >>> from sdc_core import apply_recipe, load_example, parse_recipe
    >>> df = load_example()
    >>> recipe = parse_recipe({"seed": 42, "steps": [
    ...     {"method": "band", "column": "age", "width": 10},
    ...     {"method": "pram", "column": "race", "p": 0.05}]})
    >>> recipe.to_dict()["steps"][1]
    {'method': 'pram', 'column': 'race', 'p': 0.05}
    >>> recipe.record_id is None, recipe.version
    (True, 1)
    """

    seed: int
    steps: list[dict[str, Any]]
    record_id: str | None = None
    sdc_core_version: str = __version__
    input_fingerprint: str | None = None
    description: str | None = None
    version: int = RECIPE_VERSION
    household: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The recipe as the JSON object a file holds (:func:`parse_recipe` reads it back); a
        step's implied ``columns`` (record swapping's) are left out."""
        out: dict[str, Any] = {"version": self.version, "seed": self.seed}
        if self.description:
            out["description"] = self.description
        out["record_id"] = self.record_id
        if self.household is not None:
            out["household"] = self.household
        out["steps"] = [_file_step(s) for s in self.steps]
        out["sdc_core_version"] = self.sdc_core_version
        out["input_fingerprint"] = self.input_fingerprint
        return out

    def to_json(self) -> str:
        """:meth:`to_dict` as indented JSON text (:func:`load_recipe` reads it back)."""
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False) + "\n"


@dataclass(frozen=True)
class ApplyResult:
    """What :func:`apply_recipe` made: the protected table, reports, warnings, matrices.

    The protected table, one report per step, warnings, and the transition matrix of every
    PRAM-like step (by step number).

    Parameters
    ----------
    data : pandas.DataFrame
        The protected table (the same rows, in the same order, when every step keeps rows:
        :func:`keeps_rows`; a dropped column is gone; after synthesis, the synthetic table).
    reports : list of dict
        One per step: ``step``, ``method``, ``column`` and what the step did.
    warnings : list of str
        A recipe made on other data or with another library version.
    matrices : dict of int to pandas.DataFrame
        The transition matrix of each PRAM-like step, by step number (from 1).

    Examples
    --------
    >>> from sdc_core import apply_recipe, load_example, parse_recipe
    >>> df = load_example()
    >>> recipe = parse_recipe({"seed": 42, "steps": [
    ...     {"method": "band", "column": "age", "width": 10},
    ...     {"method": "pram", "column": "race", "p": 0.05}]})
    >>> result = apply_recipe(recipe, df)
    >>> result.warnings, list(result.matrices)
    ([], [2])
    >>> result.matrices[2]
          0     1
    0  0.95  0.05
    1  0.05  0.95
    """

    data: pd.DataFrame
    reports: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    matrices: dict[int, pd.DataFrame | RankOne] = field(default_factory=dict)


def fingerprint(df: pd.DataFrame) -> str:
    """SHA-256 of the table's content: its CSV text (names and values, in order)."""
    return hashlib.sha256(df.to_csv(index=False, lineterminator="\n").encode()).hexdigest()


def make_recipe(steps: list[dict[str, Any]], seed: int, df: pd.DataFrame | None = None,
                record_id: str | None = None, description: str | None = None,
                household: str | None = None) -> Recipe:
    """A validated recipe, fingerprinted with the table it is made on.

    :func:`apply_recipe` warns when the recipe is applied to a table with another fingerprint
    (the SHA-256 of its CSV text).

    Parameters
    ----------
    steps : list of dict
        The steps, each with a ``method``.
    seed : int
        The seed of the random draws.
    df : pandas.DataFrame, optional
        The table the recipe is made on (its fingerprint is recorded).
    record_id : str, optional
        A unique, complete id column that keys the random draws (default: the row position).
    description : str, optional
        A line on what the recipe is for.
    household : str, optional
        The household id column (needed by record swapping steps; with it every step keeps
        household-level columns constant within households).

    Returns
    -------
    Recipe
        The validated recipe.

    Raises
    ------
    SdcInputError
        When the recipe is not valid (:func:`parse_recipe`).

    Examples
    --------
    >>> from sdc_core import apply_recipe, load_example, make_recipe
    >>> df = load_example()
    >>> recipe = make_recipe([{"method": "band", "column": "age", "width": 10}], seed=1, df=df)
    >>> len(recipe.input_fingerprint), apply_recipe(recipe, df).warnings
    (64, [])
    >>> apply_recipe(recipe, df.head(10)).warnings
    ['this recipe was made on different data (input fingerprint differs)']
    """
    recipe = Recipe(seed=seed, steps=[dict(s) for s in steps], record_id=record_id,
                    input_fingerprint=fingerprint(df) if df is not None else None,
                    description=description, household=household)
    return parse_recipe(recipe.to_dict())


def _is_number(v: Any) -> bool:
    """A finite real number that a float holds (a whole number of 400 digits is none)."""
    if not isinstance(v, numbers.Real) or isinstance(v, bool):
        return False
    try:
        return bool(np.isfinite(float(v)))
    except OverflowError:
        return False


def check_step(i: int, step: Any) -> dict[str, Any]:
    where = f"step {i + 1}"
    if not isinstance(step, dict):
        raise SdcInputError(f"{where}: a step must be an object with a 'method'")
    method = step.get("method")
    if not isinstance(method, str) or method not in METHODS:  # a list or object: no name
        raise SdcInputError(f"{where}: unknown method {method!r}; expected one of "
                            f"{', '.join(METHODS)}")
    where = f"step {i + 1} ({method})"
    spec = METHODS[method]
    required, optional = spec.required, spec.optional
    implied = spec.extra.get("implied_columns")
    if implied:  # the columns a step changes are some of its parameters' columns
        required, optional = required - {"columns"}, optional | {"columns"}
    keys = set(step) - {"method"}
    unknown = sorted(keys - required - optional)
    if unknown:
        raise SdcInputError(f"{where}: unknown key(s) {', '.join(unknown)}")
    if required - keys:
        raise SdcInputError(f"{where}: missing key(s) {', '.join(sorted(required - keys))}")
    for key, value in step.items():
        if key == "method":
            continue
        if key in ("column", "columns"):
            kind, choices = ("text" if key == "column" else "columns"), ()
        else:
            kind, choices = spec.param(key).type, spec.param(key).choices
        empty_ok = value == [] and key in spec.extra.get("may_be_empty", ())
        message = None if empty_ok else _type_error(kind, value, choices)
        if message:
            raise SdcInputError(f"{where}: {key} {message}")
    check = spec.extra.get("check")  # the method's own checks of its parameters, without data
    if check is not None:
        try:
            check(**{k: v for k, v in step.items() if k in spec.optional | spec.required})
        except SdcInputError as err:
            raise SdcInputError(f"{where}: {err}") from None
    if not implied:
        return dict(step)
    columns = _implied_columns(step, spec)
    if "columns" in step and step["columns"] != columns:
        raise SdcInputError(f"{where}: its columns are its {' and '.join(implied)} "
                            f"({', '.join(columns)}); leave columns out")
    return {**step, "columns": columns}


def _implied_columns(step: dict[str, Any], spec: Method) -> list[str]:
    """The columns a step changes when its method implies them from its parameters (record
    swapping: its hierarchy, then its carry_along columns)."""
    names = spec.extra.get("implied_columns", ())
    return list(dict.fromkeys(c for name in names for c in step.get(name) or []))


def _file_step(step: dict[str, Any]) -> dict[str, Any]:
    """A step as a recipe file holds it: without the ``columns`` its method implies."""
    spec = METHODS.get(step.get("method", ""))
    if spec is None or not spec.extra.get("implied_columns"):
        return step
    return {k: v for k, v in step.items() if k != "columns"}


def _type_error(kind: str, value: Any, choices: tuple[Any, ...]) -> str | None:
    """Why ``value`` is not of the parameter type ``kind`` (None when it is)."""
    if value is None:
        return None
    if kind == "number" and not _is_number(value):
        return f"must be a number, not {shown(value)}"
    if kind == "whole" and not (_is_number(value) and float(value).is_integer()):
        return f"must be a whole number, not {shown(value)}"
    if kind == "text" and not isinstance(value, str):
        return f"must be text, not {shown(value)}"
    if kind == "choice" and value not in choices:
        return f"must be one of {', '.join(map(str, choices))}, not {shown(value)}"
    if kind == "bool" and not isinstance(value, bool):
        return "must be true or false"
    if kind == "columns" and (not isinstance(value, list) or not value
                              or not all(isinstance(v, str) for v in value)):
        return "must be a non-empty list of column names"
    if kind == "list" and (not isinstance(value, list) or len(value) < 2):
        return "must be a list of at least 2 values"
    if kind in ("object", "merge") and not isinstance(value, dict):
        return "must be an object"
    if kind == "column_lists" and (
            not isinstance(value, list) or not value
            or not all(isinstance(v, list) and v and all(isinstance(c, str) for c in v)
                       for v in value)):
        return "must be a non-empty list of non-empty lists of column names"
    return None


def parse_recipe(data: Any) -> Recipe:
    """Validate a recipe's structure (keys, types) without data; see the module docstring.

    A recipe is a ``seed`` and a list of ``steps`` (dicts with a ``method``, its column and its
    parameters; ``docs/methods.md`` lists every method), and optionally the ``record_id`` column
    that keys the random draws, the ``household`` column (which record swapping needs, and with
    which every step keeps households consistent), the library version, the input fingerprint
    and a description.

    Parameters
    ----------
    data : dict
        The recipe as a file holds it (``{"seed": 42, "steps": [...]}``).

    Returns
    -------
    Recipe
        The validated recipe.

    Raises
    ------
    SdcInputError
        When ``data`` is not an object with ``seed`` and ``steps``, has unknown keys or an
        unsupported version, the seed is not a whole number in range, or a step names an unknown
        method, an unknown or missing key, or a parameter of the wrong type or out of range; the
        message names the step.

    Examples
    --------
    >>> from sdc_core import parse_recipe
    >>> recipe = parse_recipe({"seed": 42, "steps": [
    ...     {"method": "band", "column": "age", "width": 10}]})
    >>> recipe.seed, recipe.steps
    (42, [{'method': 'band', 'column': 'age', 'width': 10}])
    >>> parse_recipe({"seed": 42, "steps": [{"method": "blur", "column": "age"}]})
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    sdc_core.errors.SdcInputError: step 1: unknown method 'blur'; expected one of ...
    """
    if not isinstance(data, dict):
        raise SdcInputError("a recipe must be a JSON object with 'seed' and 'steps'")
    unknown = set(data) - _TOP_KEYS
    if unknown:
        raise SdcInputError(f"recipe: unknown key(s) {', '.join(sorted(unknown))}")
    if data.get("version", RECIPE_VERSION) != RECIPE_VERSION:
        raise SdcInputError(f"recipe: version {data.get('version')!r} is not supported "
                            f"(expected {RECIPE_VERSION})")
    seed = data.get("seed")
    if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed <= rng.MAX_SEED:
        raise SdcInputError(f"recipe: seed must be a whole number from 0 to {rng.MAX_SEED} "
                            "(the generator keys on 64 bits)")
    steps = data.get("steps")
    if not isinstance(steps, list):
        raise SdcInputError("recipe: steps must be a list")
    record_id = data.get("record_id")
    if record_id is not None and not isinstance(record_id, str):
        raise SdcInputError("recipe: record_id must be a column name or null")
    household = data.get("household")
    if household is not None and not isinstance(household, str):
        raise SdcInputError("recipe: household must be a column name or null")
    checked = [check_step(i, s) for i, s in enumerate(steps)]
    for i, step in enumerate(checked):
        missing = None if household is not None else without_household(step)
        if missing:
            raise SdcInputError(f"step {i + 1} ({step['method']}): {missing}: set the "
                                'recipe\'s top-level "household" to it')
        whole = _whole_table(i, step, len(checked), household, record_id)
        if whole:
            raise SdcInputError(f"step {i + 1} ({step['method']}): {whole}")
    return Recipe(seed=seed, steps=checked, record_id=record_id, household=household,
                  sdc_core_version=str(data.get("sdc_core_version", __version__)),
                  input_fingerprint=data.get("input_fingerprint"),
                  description=data.get("description"))


def _whole_table(i: int, step: dict[str, Any], steps: int, household: str | None,
                 record_id: str | None) -> str | None:
    """Why a whole-table step (synthesis) cannot stand at place ``i`` of ``steps``, or None:
    it makes a new table, so it comes last, and it does not keep households or record ids
    (docs/methods.md, "Synthesis (sequential CART)")."""
    if METHODS[step["method"]].target != "table":
        return None
    if household is not None:
        return ("a synthetic table does not keep households whole (not built): leave out "
                "the recipe's household")
    if record_id is not None:
        return ("a synthetic record is the release of no original record, so it has no "
                "record id: leave out the recipe's record_id")
    if i != steps - 1:
        return ("it makes a new table, so it must be the recipe's last step (protect the "
                "original before it, or the synthetic file with a recipe of its own)")
    return None


def step_columns(step: dict[str, Any]) -> list[str]:
    """The columns a step names: its ``column`` as a one-item list, else its ``columns``
    (none if it has neither; a validated step of a method that implies its columns holds
    them under ``columns``).

    Examples
    --------
    >>> step_columns({"method": "band", "column": "age", "width": 10})
    ['age']
    >>> step_columns({"method": "noise", "columns": ["rent", "income"]})
    ['rent', 'income']
    """
    return [step["column"]] if "column" in step else list(step.get("columns", []))


#: Why a release made by a method that does not keep rows (synthesis) has no number for the
#: measures that compare record by record (the assessment's and a sweep row's
#: ``record_by_record``).
NOT_KEPT_ROWS = ("the recipe's release does not keep the original's rows: a measure that "
                 "compares record by record does not apply")


def keeps_rows(recipe: Recipe) -> bool:
    """Whether the recipe's release keeps the original's rows in order, row i of the release
    being the release of row i: every step's method keeps rows
    (:attr:`~sdc_core.methods.spec.Method.keeps_rows`; docs/architecture.md, "A protection
    method")."""
    return all(METHODS[step["method"]].keeps_rows for step in recipe.steps)


def table_step(step: dict[str, Any]) -> bool:
    """Whether a validated step works on the whole table (synthesis), naming no column."""
    return METHODS[step["method"]].target == "table"


def without_household(step: dict[str, Any]) -> str | None:
    """What a validated step needs of a household column it lacks, in words, or None: a method
    on households (record swapping) needs one, and so does a parameter that applies only with
    one (:attr:`~sdc_core.methods.spec.Param.household`: ``per_household: true``).

    Parameters
    ----------
    step : dict
        A validated step.

    Returns
    -------
    str or None
        "needs the household column", or "per_household needs the household column"; None
        when the step runs without one.

    Examples
    --------
    >>> without_household({"method": "pram", "column": "married", "p": 0.2,
    ...                    "per_household": True})
    'per_household needs the household column'
    >>> without_household({"method": "pram", "column": "married", "p": 0.2}) is None
    True
    """
    spec = METHODS[step["method"]]
    if spec.extra.get("household"):
        return "needs the household column"
    wanted = [name for name in spec.household_params if step.get(name)]
    return f"{wanted[0]} needs the household column" if wanted else None


def describe_steps(steps: list[dict[str, Any]]) -> str:
    """Steps in one line: "band age width=10; pram race p=0.05", or "no protection".

    Parameters
    ----------
    steps : list of dict
        A recipe's steps.

    Returns
    -------
    str
        One ``method column param=value …`` per step, joined by ``"; "``.

    Examples
    --------
    >>> from sdc_core import describe_steps
    >>> describe_steps([{"method": "band", "column": "age", "width": 10},
    ...                 {"method": "pram", "column": "race", "p": 0.05}])
    'band age width=10; pram race p=0.05'
    >>> describe_steps([])
    'no protection'
    """
    parts = []
    for step in steps:
        target = step.get("column") or "+".join(step.get("columns", []))
        params = " ".join(f"{k}={json.dumps(v, ensure_ascii=False) if isinstance(v, dict) else v}"
                          for k, v in step.items() if k not in ("method", "column", "columns"))
        parts.append(" ".join(p for p in (step["method"], target, params) if p))
    return "; ".join(parts) or "no protection"


def step_notes(reports: list[dict[str, Any]]) -> list[str]:
    """One line per protection step on what it did, from its method's declaration (local
    suppression states what it promises under both readings of a blank): the report's and
    the decision pack's "what each step did"."""
    return [describe(r) for r in reports
            if (describe := METHODS[r["method"]].describe) is not None]


def load_recipe(text: str) -> Recipe:
    """The recipe in the JSON text ``text`` (a recipe file's content).

    The text is read as JSON and validated by :func:`parse_recipe`; ``Recipe.to_json`` writes
    what it reads.

    Parameters
    ----------
    text : str
        The JSON text of a recipe file.

    Returns
    -------
    Recipe
        The validated recipe.

    Raises
    ------
    SdcInputError
        When the text is not valid JSON or the recipe is not valid (:func:`parse_recipe`).

    Examples
    --------
    >>> from sdc_core import load_recipe
    >>> text = '{"seed": 7, "steps": [{"method": "pram", "column": "race", "p": 0.1}]}'
    >>> recipe = load_recipe(text)
    >>> recipe.seed, recipe.steps[0]["method"]
    (7, 'pram')
    >>> load_recipe(recipe.to_json()) == recipe
    True
    """
    return parse_recipe(parse_json(text, "recipe"))


@dataclass(frozen=True)
class StepOutput:
    """What one step did: the columns it changed (new values, input index), the columns it
    dropped, its report figures, and the transition matrix of a PRAM-like step; ``table``:
    ``values`` is a new table that replaces the whole one, rows and index included (a
    whole-table method's step: synthesis)."""

    values: pd.DataFrame
    info: dict[str, Any]
    dropped: list[str] = field(default_factory=list)
    matrix: pd.DataFrame | RankOne | None = None
    table: bool = False


def run_step(df: pd.DataFrame, step: dict[str, Any], seed: int, index: int,
             rid: np.ndarray | None, household: str | None = None,
             plan: HouseholdPlan | None = None) -> StepOutput:
    """Run one validated step on ``df`` (not changed): its method's declared ``run`` on the
    column, or on the table and the columns; random methods get (seed, index, rid), methods
    on households the ``household`` column's name. With a ``household``, the columns constant
    within every household stay so, and a step with ``per_household: true`` runs on one record
    per household whatever its column (:mod:`sdc_core.methods.households`; ``plan``: the
    households of the table the recipe started from, else of ``df``)."""
    spec = METHODS[step["method"]]
    where = f"step {index + 1} ({step['method']})"
    missing = None if household is not None else without_household(step)
    if missing:
        raise SdcInputError(f"{where}: {missing}: set the recipe's top-level \"household\" "
                            "to it")
    cols = _step_columns(step, spec, df.columns)
    unknown = [c for c in cols if c not in df.columns]
    if unknown:
        raise SdcInputError(f"{where}: unknown column '{unknown[0]}'" if spec.target == "column"
                            else f"{where}: unknown column(s) {', '.join(map(str, unknown))}")

    def run(frame: pd.DataFrame, part: dict[str, Any], ids: np.ndarray | None) -> StepOutput:
        return _run_method(frame, part, spec, where, seed, index, ids, household)

    if household is None or not needs_households(spec):
        return run(df, step, rid)
    if household in cols:
        raise SdcInputError(f"{where}: '{household}' is the recipe's household column: steps "
                            "keep it (a drop step leaves it out of the release)")
    if plan is None:
        plan = household_plan(df, household)
    whole = any(step.get(name) for name in spec.household_params)  # one draw per household
    return run_per_household(df, step, cols, spec.release, plan, rid, run, whole)


def _step_columns(step: dict[str, Any], spec: Method,
                  columns: pd.Index | None = None) -> list[str]:
    """The columns a step changes: its column, its columns, those its method implies, or
    every column of the table (a whole-table method's step)."""
    if spec.target == "column":
        return [step["column"]]
    if spec.target == "table":
        return list(columns) if columns is not None else []
    if spec.extra.get("implied_columns"):
        return _implied_columns(step, spec)
    return list(step["columns"])


def _run_method(df: pd.DataFrame, step: dict[str, Any], spec: Method, where: str, seed: int,
                index: int, rid: np.ndarray | None, household: str | None) -> StepOutput:
    """The method's ``run`` on the step's columns of ``df`` (:func:`run_step`, without the
    household handling)."""
    cols = _step_columns(step, spec, df.columns)
    read = ("method", "column", "columns", *spec.household_params)  # the recipe reads these
    args = {k: v for k, v in step.items() if k not in read}
    if spec.random:
        args |= {"seed": seed, "step": index, "rid": rid}
    if spec.extra.get("household"):
        args["household"] = household
    if spec.target != "table" and spec.columns in ("numeric", "numeric_keys"):
        # band labels of an earlier step: numbers
        given = {c: df[c] for c in cols}
        back = {c: v for c, s in given.items() if (v := read_bands(s)) is not s}
        df = df.assign(**back) if back else df
    try:
        res = spec.run(df[cols[0]], **args) if spec.target == "column" \
            else spec.run(df, cols, **args)
    except SdcInputError as err:
        message = str(err)
        raise SdcInputError(message if message.startswith("step ") else
                            f"{where}: {message}") from None
    except OverflowError:  # parameters far outside any sensible range (noise p = 1e308)
        raise SdcInputError(f"{where}: its parameters make numbers too large for "
                            "floating-point arithmetic") from None
    if spec.release is Release.DROP:
        return StepOutput(df[[]], dict(res.info), dropped=cols)
    if isinstance(res, MethodResult):
        return StepOutput(res.values.to_frame(cols[0]), dict(res.info), matrix=res.matrix)
    if isinstance(res, TableResult):
        return StepOutput(res.values[cols], dict(res.info), table=spec.target == "table")
    return StepOutput(res.data[cols], {"suppressed": res.suppressed, **res.info})


def run_column_step(s: pd.Series, step: dict[str, Any], seed: int, index: int,
                    rid: np.ndarray | None) -> pd.Series:
    """The new values of a one-column step applied to ``s``."""
    return run_step(s.to_frame(), step, seed, index, rid).values[s.name]


def apply_recipe(recipe: Recipe, df: pd.DataFrame) -> ApplyResult:
    """Run every step in order on a copy of ``df`` (``df`` is not changed).

    Step i draws from streams keyed by (seed, i, draw, record id), so the same recipe on the
    same table gives the same release. With the recipe's ``household``, the columns constant
    within every household of ``df`` stay so: a step on them runs on each household's first
    record r and gives its value to every member (docs/methods.md, "Households"). Rows
    change only at a step whose method does not keep them: a synthesis step, the last one,
    replaces the whole table (docs/methods.md, "Synthesis (sequential CART)").

    Parameters
    ----------
    recipe : Recipe
        The recipe (:func:`parse_recipe`, :func:`load_recipe`, :func:`make_recipe`).
    df : pandas.DataFrame
        The original table.

    Returns
    -------
    ApplyResult
        ``data`` the protected table (the same rows, in the same order, when every step's
        method keeps rows (:func:`keeps_rows`); a dropped column is gone; after a whole-table
        step, synthesis, the synthetic table with a fresh RangeIndex),
        ``reports`` one dict per step (``step``, ``method``, ``column`` and what the step did),
        ``warnings`` (a recipe made on other data or with another version) and ``matrices`` the
        transition matrix of each PRAM-like step, by step number.

    Raises
    ------
    SdcInputError
        When the ``record_id`` column is not in the table or is not unique and complete, the
        ``household`` column is not in the table or has a blank id, a step changes the
        household column, or a step cannot run on the table (an unknown column, a value it
        cannot take); the message names the step.

    Examples
    --------
    >>> from sdc_core import apply_recipe, load_example, parse_recipe
    >>> df = load_example()
    >>> recipe = parse_recipe({"seed": 42, "steps": [
    ...     {"method": "band", "column": "age", "width": 10},
    ...     {"method": "pram", "column": "race", "p": 0.05}]})
    >>> result = apply_recipe(recipe, df)
    >>> result.data[["age", "race"]].head(2)
         age  race
    0  40–49     0
    1  60–69     0
    >>> result.reports[0]["bands"], round(result.reports[1]["changed_share"], 4)
    (7, 0.0584)
    """
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
    if recipe.household is not None and recipe.household not in df.columns:
        raise SdcInputError(f"recipe: household column '{recipe.household}' is not in the data")
    plan = recipe_households(recipe, df)
    out = df
    reports, matrices = [], {}
    for i, step in enumerate(recipe_labels(recipe.steps, whole_number_columns(df))):
        done = run_step(out, step, recipe.seed, i, rid, recipe.household, plan)
        if done.table:  # a new table (synthesis, the last step): rows and index its own
            out = done.values
        else:
            out = out.drop(columns=done.dropped) if done.dropped else _replace(out, done, df)
        reports.append({"step": i + 1, "method": step["method"],
                        "column": step.get("column", ", ".join(step.get("columns", []))),
                        **done.info})
        if done.matrix is not None:
            matrices[i + 1] = done.matrix
    return ApplyResult(out, reports, warnings, matrices)


def labelled(recipe: Recipe, df: pd.DataFrame) -> Recipe:
    """``recipe`` as it runs on ``df``: its band steps written alike
    (:func:`sdc_core.methods.banding.recipe_labels`), as :func:`apply_recipe` runs them, for
    the code that repeats some of its steps (the attacks, the deniability)."""
    steps = recipe_labels(recipe.steps, whole_number_columns(df))
    return recipe if steps == recipe.steps else replace(recipe, steps=steps)


def recipe_households(recipe: Recipe, df: pd.DataFrame) -> HouseholdPlan | None:
    """The households of ``df``, the table the recipe starts from, when the recipe names a
    household column and has a step that keeps households consistent (docs/methods.md,
    "Households"); None otherwise.

    The columns kept constant within households are those constant within every household h
    of ``df`` (|{c_i : i ∈ h}| = 1), whatever the steps before do.

    Parameters
    ----------
    recipe : Recipe
        The recipe.
    df : pandas.DataFrame
        The table it starts from.

    Returns
    -------
    HouseholdPlan or None
        The households (:func:`sdc_core.methods.households.household_plan`), or None.

    Raises
    ------
    SdcInputError
        When the household column is not in the table or has a blank id.
    """
    if recipe.household is None or not any(needs_households(METHODS[s["method"]])
                                           for s in recipe.steps):
        return None
    try:
        return household_plan(df, recipe.household)
    except SdcInputError as err:
        raise SdcInputError(f"recipe: {err}") from None


def _replace(df: pd.DataFrame, done: StepOutput, original: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``df`` with the step's new values in place, each in the kind of the
    ``original`` column where its values allow (:func:`sdc_core.data.columns.restore`)."""
    out = df.copy()
    for c in done.values.columns:
        out[c] = restore(original[c], done.values[c])
    return out


def release_notes(recipe: Recipe | None, original: pd.DataFrame | None = None) -> list[str]:
    """What the recipe's band steps that write midpoints or lower bounds release, in the words
    of :func:`sdc_core.methods.banding.release_note`; with the ``original`` table, with an
    example band ("10 = 0–19"). ``compare --json`` and the decision pack give them as
    ``release_notes``."""
    notes = []
    for i, step in enumerate(recipe.steps if recipe else []):
        if step["method"] != "band" or step.get("label") not in NUMBER_LABELS:
            continue
        info = {"label": step["label"]}
        if original is not None and step["column"] in original.columns:
            assert recipe is not None
            info = run_step(original, step, recipe.seed, i, None).info
        note = release_note({"method": "band", "column": step["column"], **info})
        if note is not None:  # always, for a band step that writes numbers
            notes.append(note)
    return notes
