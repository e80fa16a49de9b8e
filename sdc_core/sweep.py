"""Parameter sweeps: one row of risk and utility per setting (seed 003, Table S4-A).

A grid names settings to try one at a time on the original table:

```json
{"seeds": 5, "seed": 0, "numeric": ["age", "wtkg"], "k": 5, "known": [],
 "pareto_risk": "linkage", "il1_missing": "max", "settings": [
  {"method": "band", "column": "age", "param": "width", "values": [5, 10, 15]},
  {"method": "pram", "column": "gender", "param": "p", "values": [0.01, 0.05, 0.1]},
  {"method": "pram", "column": "race", "param": "retention", "values": [0.9, 0.8],
   "fixed": {"invariant": true}}]}
```

Each setting is the one-step recipe ``{"seed": s, "steps": [{"method", "column", param: value,
**fixed}]}``, so any row can be reproduced with ``apply``. Randomised methods (PRAM, relabeling,
rank swapping, randomized response) run with seeds ``seed, seed+1, …`` (``seeds`` of them) and
report the mean, with the standard deviation in ``*_sd`` columns; the last column, ``step``,
holds each setting's recipe step as JSON (to reopen it). The first row is the
unprotected ``BASELINE``.

Risk is measured on the quasi-identifiers, twice: the measures of seed 003, which read the
released keys as if they were true (``expected_reidentifications`` …), and the linkage attack of
:mod:`sdc_core.risk.linkage` (``linkage_reidentifications``, ``linkage_risk_percent``), which
also sees perturbation; ``known`` names extra numeric columns the attacker knows. IL1 and
eigenvalue similarity are measured on the ``numeric`` columns and, for IL1, the categorical
ones. Speed: the quasi-identifiers are factorised once and only a changed key is re-encoded; IL1
is computed for the changed column only (the others are unchanged); for the correlation matrix
only the changed column's row is recomputed.

``il1_missing`` is the reading of a numeric value that a setting turned into a missing one:
``"max"`` (the default) counts it as the maximum IL1 loss 1, ``"ignore"`` leaves it out of IL1
(sdcMicro's reading, for parity), see :mod:`sdc_core.utility.il1`. ``suppressed_values`` counts
those values whatever the reading. A row is **Pareto-optimal** (``pareto``) when no other row is
at most as high on the risk, ``IL1_overall`` and ``suppressed_values`` and lower on one of them
(without the third criterion, under ``"ignore"``, a suppression would look nearly free).
The risk is ``linkage_reidentifications`` (``"pareto_risk":
"linkage"``, the default) or ``expected_reidentifications`` (``"pareto_risk": "naive"``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from sdc_core import rng
from sdc_core.checks import check_k
from sdc_core.errors import SdcInputError
from sdc_core.io import Kind, infer_kinds
from sdc_core.recipe import (
    RANDOM_METHODS,
    Recipe,
    check_step,
    run_step,
)
from sdc_core.risk.classes import check_weights, sizes_from_keys
from sdc_core.risk.keys import encode_keys
from sdc_core.risk.linkage import linkage_attack
from sdc_core.risk.profile import profile_from_sizes
from sdc_core.utility.eigen import column_correlations, correlation_matrix, tidy
from sdc_core.utility.il1 import (
    IL1_MISSING,
    categorical_il1,
    check_il1_missing,
    combine,
    il1,
    numeric_il1,
)

RISK = ["percent_unique", "percent_k_le_threshold", "avg_linkage_risk_percent",
        "expected_reidentifications"]
LINKAGE = ["linkage_reidentifications", "linkage_risk_percent"]
UTILITY = ["IL1_numeric", "IL1_categorical", "IL1_overall", "eigenvalue_similarity_percent"]
COLUMNS = ["method", "column", "param_name", "param_value"] + RISK + LINKAGE + UTILITY + [
    "pareto", "suppressed_values", "n_seeds"]
PARETO_RISK = {"linkage": "linkage_reidentifications", "naive": "expected_reidentifications"}
_GRID_KEYS = {"seeds", "seed", "numeric", "k", "known", "pareto_risk", "il1_missing",
              "settings"}
_SETTING_KEYS = {"method", "column", "columns", "param", "values", "fixed"}

Progress = Callable[[int, int, str], None]


@dataclass(frozen=True)
class Setting:
    step: dict[str, Any]
    param: str
    value: Any


@dataclass(frozen=True)
class Grid:
    """A validated grid: the settings and what every setting shares."""

    settings: list[Setting]
    seeds: int
    seed: int
    numeric: list[str]
    k: int
    known: list[str]
    pareto_risk: str
    il1_missing: str


def _column_names(grid: dict[str, Any], key: str, df: pd.DataFrame) -> list[str]:
    names = grid[key]
    if not isinstance(names, list) or not all(isinstance(c, str) for c in names):
        raise SdcInputError(f"grid: {key} must be a list of column names")
    missing = [c for c in names if c not in df.columns]
    if missing:
        raise SdcInputError(f"grid: unknown {key} column(s) {', '.join(missing)}")
    return names


def parse_grid(grid: Any, df: pd.DataFrame) -> Grid:
    """The grid of the module docstring, validated against ``df``."""
    if not isinstance(grid, dict):
        raise SdcInputError("a grid must be a JSON object with 'settings'")
    unknown = set(grid) - _GRID_KEYS
    if unknown:
        raise SdcInputError(f"grid: unknown key(s) {', '.join(sorted(unknown))}")
    seeds, base = grid.get("seeds", 1), grid.get("seed", 0)
    for name, v in (("seeds", seeds), ("seed", base)):
        if not isinstance(v, int) or isinstance(v, bool) or v < (1 if name == "seeds" else 0):
            raise SdcInputError(f"grid: {name} must be a whole number ≥ "
                                f"{1 if name == 'seeds' else 0}")
    k = check_k(grid.get("k", 5))
    numeric = _column_names(grid, "numeric", df) if grid.get("numeric") is not None else [
        c for c, kind in infer_kinds(df).items() if kind is Kind.NUMERIC]
    known = _column_names(grid, "known", df) if "known" in grid else []
    pareto_risk = grid.get("pareto_risk", "linkage")
    if pareto_risk not in PARETO_RISK:
        raise SdcInputError(f"grid: pareto_risk must be one of {', '.join(PARETO_RISK)}, "
                            f"not {pareto_risk!r}")
    il1_missing = grid.get("il1_missing", "max")
    if il1_missing not in IL1_MISSING:
        raise SdcInputError(f"grid: il1_missing must be one of {', '.join(IL1_MISSING)} (a "
                            "suppressed numeric value counts as IL1 loss 1, or is left out), "
                            f"not {il1_missing!r}")
    raw = grid.get("settings")
    if not isinstance(raw, list) or not raw:
        raise SdcInputError("grid: settings must be a non-empty list")
    settings = []
    for i, s in enumerate(raw):
        where = f"grid setting {i + 1}"
        if not isinstance(s, dict):
            raise SdcInputError(f"{where}: must be an object")
        extra = set(s) - _SETTING_KEYS
        if extra:
            raise SdcInputError(f"{where}: unknown key(s) {', '.join(sorted(extra))}")
        for key in ("method", "param", "values"):
            if key not in s:
                raise SdcInputError(f"{where}: missing key '{key}'")
        if not isinstance(s["values"], list) or not s["values"]:
            raise SdcInputError(f"{where}: values must be a non-empty list")
        fixed = s.get("fixed", {})
        if not isinstance(fixed, dict):
            raise SdcInputError(f"{where}: fixed must be an object")
        target = {"columns": s["columns"]} if "columns" in s else {"column": s.get("column")}
        for value in s["values"]:
            step = {"method": s["method"], **target, **fixed, s["param"]: value}
            try:
                step = check_step(0, step)
            except SdcInputError as err:
                raise SdcInputError(f"{where}: {str(err).split(': ', 1)[1]}") from None
            cols = step.get("columns") or [step.get("column")]
            absent = [c for c in cols if c not in df.columns]
            if absent:
                raise SdcInputError(f"{where}: unknown column(s) {', '.join(map(str, absent))}")
            settings.append(Setting(step, s["param"], value))
    return Grid(settings, seeds, base, numeric, k, known, pareto_risk, il1_missing)


class SweepContext:
    """What every setting shares: encoded keys, baseline measures, baseline correlations."""

    def __init__(self, df: pd.DataFrame, qi: Sequence[str], numeric: Sequence[str], k: int,
                 weight: str | None, na: str, alpha: float, known: Sequence[str] = (),
                 il1_missing: str = "max") -> None:
        self.df, self.qi, self.numeric, self.k = df, list(qi), list(numeric), k
        self.na, self.alpha, self.known = na, alpha, list(known)
        self.il1_missing = check_il1_missing(il1_missing)
        self.keys = encode_keys(df, qi, na)
        self.w = check_weights(df, weight)
        self.rid = rng.record_ids(len(df))
        self.r0 = correlation_matrix(df, self.numeric)
        self.lam0 = np.sort(np.linalg.eigvalsh(self.r0))[::-1] if self.numeric else np.array([])
        self.attacked = df[self.qi + self.known]
        self.baseline_risk = self.risk(self.keys) | self.linkage(self.attacked, None)

    def risk(self, keys) -> dict[str, float]:
        cs = sizes_from_keys(keys, self.w, self.alpha)
        m = profile_from_sizes(cs.fk, cs.Fk, cs.n_classes, self.k)
        return {key: m[key] for key in RISK}

    def linkage(self, released: pd.DataFrame, recipe: Recipe | None) -> dict[str, float]:
        """The linkage attack on the quasi-identifiers (and known columns) of ``released``."""
        result = linkage_attack(self.attacked, released, self.qi, recipe, self.known)
        return {"linkage_reidentifications": result.linkage_reidentifications,
                "linkage_risk_percent": result.linkage_risk_percent}

    def similarity(self, r: np.ndarray) -> float:
        p = len(self.numeric)
        if p == 0:
            return 100.0
        lam = np.sort(np.linalg.eigvalsh(r))[::-1]
        return float(100.0 * (1.0 - np.abs(lam - self.lam0).sum() / p))

    def column_setting(self, column: str, values: pd.Series,
                       recipe: Recipe) -> dict[str, float]:
        """Measures after replacing one column by ``values`` (made by ``recipe``)."""
        original = self.df[column]
        # a column recoded to text (rare codes → "other") is compared as categories and
        # leaves the correlation measure unchanged
        is_num = column in self.numeric and pd.api.types.is_numeric_dtype(values)
        value, changed = numeric_il1(original, values, self.il1_missing) if is_num \
            else categorical_il1(original, values)
        loss = combine({column: value}, [value] if changed and is_num else [],
                       [value] if changed and not is_num else [], [column] if changed else [])
        risk = self.risk(self.keys.with_column(column, values, self.na)) \
            if column in self.qi else {key: self.baseline_risk[key] for key in RISK}
        if column in self.attacked:
            risk |= self.linkage(self.attacked.assign(**{column: values}), recipe)
        else:
            risk |= {key: self.baseline_risk[key] for key in LINKAGE}
        similarity = 100.0
        if is_num:
            frame = self.df[self.numeric].assign(**{column: values})
            row = column_correlations(frame, column, self.numeric)
            j = self.numeric.index(column)
            r = self.r0.copy()
            r[j, :] = row
            r[:, j] = row
            similarity = self.similarity(tidy(r))
        suppressed = int((values.isna() & original.notna()).sum())
        return {**risk, **loss.summary(), "eigenvalue_similarity_percent": similarity,
                "suppressed_values": suppressed}

    def table_setting(self, protected: pd.DataFrame, recipe: Recipe) -> dict[str, float]:
        """Measures after a step that may change several columns (local suppression,
        microaggregation, noise)."""
        result = il1(self.df, protected, self.numeric, missing=self.il1_missing)
        risk = self.risk(encode_keys(protected, self.qi, self.na)) \
            | self.linkage(protected[self.attacked.columns], recipe)
        r = correlation_matrix(protected, self.numeric) if self.numeric else self.r0
        suppressed = int((protected.isna() & self.df.notna()).to_numpy().sum())
        return {**risk, **result.summary(), "eigenvalue_similarity_percent": self.similarity(r),
                "suppressed_values": suppressed}

    def evaluate(self, step: dict[str, Any], seed: int) -> dict[str, float]:
        recipe = Recipe(seed=seed, steps=[step])
        done = run_step(self.df, step, seed, 0, self.rid)
        if "column" in step:
            return self.column_setting(step["column"], done.values[step["column"]], recipe)
        return self.table_setting(self.df.assign(**{c: done.values[c]
                                                    for c in done.values.columns}), recipe)


def pareto_front(*criteria: np.ndarray) -> np.ndarray:
    """True where no other point is ≤ on every criterion and < on one (lower is better)."""
    pts = np.column_stack([np.asarray(c, dtype=float) for c in criteria])
    le = (pts[None, :, :] <= pts[:, None, :]).all(axis=2)
    lt = (pts[None, :, :] < pts[:, None, :]).any(axis=2)
    return ~(le & lt).any(axis=1)


def run_sweep(df: pd.DataFrame, qi: Sequence[str], grid: Any, weight: str | None = None,
              na: str = "wildcard", alpha: float = 1.0,
              progress: Progress | None = None) -> pd.DataFrame:
    """The trade-off table of a grid (module docstring)."""
    g = parse_grid(grid, df)
    settings, seeds, base = g.settings, g.seeds, g.seed
    try:
        ctx = SweepContext(df, qi, g.numeric, g.k, weight, na, alpha, g.known, g.il1_missing)
    except SdcInputError as err:
        raise SdcInputError(f"grid: {err}") from None
    rows = [{"step": "", "method": "BASELINE", "column": "", "param_name": "",
             "param_value": np.nan,
             **ctx.baseline_risk, "IL1_numeric": 0.0, "IL1_categorical": 0.0,
             "IL1_overall": 0.0, "eigenvalue_similarity_percent": 100.0,
             "suppressed_values": 0, "n_seeds": 1}]
    total = sum(seeds if s.step["method"] in RANDOM_METHODS else 1 for s in settings)
    done = 0
    for i, s in enumerate(settings):
        runs = seeds if s.step["method"] in RANDOM_METHODS else 1
        label = f"{s.step['method']} {s.step.get('column', '')} {s.param}={s.value}"
        results = []
        for j in range(runs):
            try:
                results.append(ctx.evaluate(s.step, base + j))
            except SdcInputError as err:
                raise SdcInputError(f"grid setting {label}: {err}") from None
            done += 1
            if progress:
                progress(done, total, label)
        frame = pd.DataFrame(results)
        row = {"step": json.dumps(s.step, ensure_ascii=False), "method": s.step["method"],
               "column": s.step.get("column") or "+".join(s.step.get("columns", [])),
               "param_name": s.param, "param_value": s.value, **frame.mean().to_dict(),
               "n_seeds": runs}
        if runs > 1:
            row.update({f"{c}_sd": v for c, v in frame.std(ddof=1).items()})
        rows.append(row)
    table = pd.DataFrame(rows)
    table["pareto"] = pareto_front(table[PARETO_RISK[g.pareto_risk]], table["IL1_overall"],
                                   table["suppressed_values"])
    sd_cols = [f"{c}_sd" for c in RISK + LINKAGE + UTILITY if f"{c}_sd" in table]
    return table[COLUMNS + sd_cols + ["step"]]
