"""Local suppression to reach k-anonymity on the quasi-identifiers.

Key values are set to missing until every record has f_k ≥ k, with missing values counted as
wildcards (sdcMicro's rule, see :mod:`sdc_core.classes`). Greedy, in rounds: find the
records that violate k; for each key, suppress it in all violators that hold it and count the
violators that become safe. Without an importance order, take the key that makes most of them
safe (ties: the key with more distinct values); with ``importance`` (most important first), take
the least important key that makes any of them safe. Suppress that key only in the violators it
makes safe; when no key makes any violator safe, suppress the least important key in every
violator that holds it. Repeat until no violator is left; the result is verified with the risk
engine.

What it promises: k-anonymity under the wildcard reading of blanks only (sdcMicro's, the risk
engine's default): ``min_k_after`` = min f_k ≥ k when a blank matches any value. Read as a value
of its own (``na="category"`` in :mod:`sdc_core.risk`) the same table can be 1-anonymous, because
a record whose key was blanked may be the only one with that pattern of blanks:
``min_k_after_as_category`` = min f_k under that reading, which the info reports beside it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from sdc_core.checks import check_k
from sdc_core.classes import class_sizes
from sdc_core.data.columns import blank
from sdc_core.errors import SdcInputError
from sdc_core.keys import check_columns
from sdc_core.methods.spec import EngineRun, Method, Param, Release


@dataclass(frozen=True)
class SuppressionResult:
    data: pd.DataFrame
    suppressed: dict[str, int] = field(default_factory=dict)
    info: dict[str, object] = field(default_factory=dict)


def local_suppression(df: pd.DataFrame, qi: Sequence[str], k: int,
                      importance: Sequence[str] | None = None,
                      alpha: float = 1.0) -> SuppressionResult:
    """Suppress key values of ``df`` (a copy) until f_k ≥ ``k`` for every record, blanks read as
    wildcards (module docstring: the info also gives min f_k with blanks read as a category)."""
    keys = check_columns(df, qi, "quasi-identifier")
    if not keys:
        raise SdcInputError("local suppression needs at least one quasi-identifier")
    k = check_k(k)
    if k > len(df):
        raise SdcInputError(f"k = {k} cannot be reached with {len(df)} records")
    if importance is None:
        order = sorted(keys, key=lambda c: (-df[c].nunique(), keys.index(c)))
    else:
        order = check_columns(df, importance, "importance")
        if sorted(order) != sorted(keys):
            raise SdcInputError("importance must list exactly the quasi-identifiers")
        order = list(reversed(order))  # least important first
    out = df.copy()
    before = out[keys].isna().sum()
    rounds = 0
    while True:
        violating = class_sizes(out, keys, alpha=alpha).fk < k
        if not violating.any():
            break
        rounds += 1
        best: tuple[str, np.ndarray] | None = None
        best_safe = np.zeros(len(out), dtype=bool)  # read only once there is a best
        for c in order:
            holders = violating & out[c].notna().to_numpy()
            if not holders.any():
                continue
            trial = out[keys].assign(**{c: blank(out[c], holders)})
            safe = holders & (class_sizes(trial, keys, alpha=alpha).fk >= k)
            if best is None or safe.sum() > best_safe.sum():
                best, best_safe = (c, holders), safe
            if importance is not None and safe.any():
                break
        if best is None:
            raise SdcInputError(f"k = {k} cannot be reached")  # every key already missing
        column, holders = best
        rows = best_safe if best_safe.any() else holders
        out[column] = blank(out[column], rows)  # True/False stays True/False, whole stays whole
    after = out[keys].isna().sum()
    suppressed = {c: int(after[c] - before[c]) for c in keys}
    final = class_sizes(out, keys, alpha=alpha)
    as_category = class_sizes(out, keys, na="category")
    return SuppressionResult(out, suppressed, {
        "k": k, "rounds": rounds, "total_suppressed": int(sum(suppressed.values())),
        "min_k_after": float(final.fk.min()),
        "min_k_after_as_category": float(as_category.fk.min()),
        "importance": list(reversed(order))})


def _describe(r: dict[str, Any]) -> str:
    counts = ", ".join(f"{c} {v}" for c, v in r["suppressed"].items())
    return (f"Local suppression: {counts} values set to missing. The smallest class is "
            f"{r['min_k_after']:g} when a blank matches any value (sdcMicro's reading, the one "
            f"k = {r['k']} is reached under); read as a value of its own, a blank leaves the "
            f"smallest class at {r['min_k_after_as_category']:g}.")


LOCAL_SUPPRESSION = Method(
    engine=EngineRun.PANDAS_ONLY,
    engine_reason="it suppresses record by record, each choice depending on the last",
    name="local_suppression", label="Local suppression", order=70, run=local_suppression,
    release=Release.SUPPRESSION, target="columns", columns="keys",
    summary="to reach k-anonymity", main="k", off=0, sweep_values="",
    params=(Param("k", "whole", 0, low=0, high=20, step=1, required=True,
                  label="Target k (0 = off)",
                  help="Sets the fewest key values to missing so that every record shares its "
                       "keys (missing = any value) with at least k − 1 others."),
            Param("importance", "columns", None, more=True,
                  label="Importance of the keys, most important first",
                  help="Keys chosen in this order are suppressed least (all of them, or none: "
                       "then the key that makes most records safe goes first)."),
            Param("alpha", "number", 1.0, low=0.0, high=1.0, step=0.05, most=1.0, more=True,
                  label="Weight α of a blank",
                  help="How much a blank key counts towards the classes it matches "
                       "(sdcMicro's alpha; 1: a full record).")),
    describe=_describe)
