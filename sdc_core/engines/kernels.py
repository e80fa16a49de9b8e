"""Recipe steps as functions of one batch of rows: the reference's own method functions, given
what they need to know about the whole column.

A step's output for a record depends on the record's value, its record id and a few figures
of the whole column: the sorted categories and their counts (PRAM, relabeling, randomized
response, recoding) or the mean and standard deviation (noise). The engine computes those
figures as aggregates, and each batch then goes through the very function that the pandas
reference runs on the whole column (:func:`sdc_core.recipe.run_step`), so a record gets the
same value whatever batch it is in.

Each method declares which of these it is (:class:`~sdc_core.methods.spec.EngineRun`). Steps
that need the whole column at once, not a summary of it, run elsewhere (``whole_table``: rank
swapping in each engine's own terms, microaggregation on its columns gathered, see
:mod:`sdc_core.engines.jobs`) or only on pandas (``pandas_only``: local suppression, record
swapping).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from sdc_core.data.columns import storage
from sdc_core.engines.source import RID
from sdc_core.errors import SdcInputError
from sdc_core.methods.common import Levels
from sdc_core.methods.noise import check_complete_cases, grid_shift, grid_sum
from sdc_core.methods.spec import EngineRun
from sdc_core.recipe import METHODS


def check_engine_step(i: int, step: dict[str, Any], engine: str) -> None:
    """An error when the engines cannot run this step exactly as pandas does: its method is
    declared ``pandas_only`` (:attr:`~sdc_core.methods.spec.Method.engine`), the error giving
    the method's reason."""
    method = step["method"]
    spec = METHODS.get(method)
    if spec is not None and spec.engine is EngineRun.PANDAS_ONLY:
        raise SdcInputError(f"step {i + 1} ({method}) runs on the pandas engine only: "
                            f"{spec.engine_reason}; run it with --engine pandas (on a sample "
                            "if the file is large)")


def levels_from_counts(counts: pd.DataFrame, col: str) -> Levels:
    """The :class:`Levels` of a column from an engine's value counts (missing left out)."""
    present = counts[counts[col].notna()]
    values = pd.Index(present[col].to_numpy())
    order = values.argsort()
    return Levels(values[order], present["__n"].to_numpy(dtype=np.int64)[order])


def step_function(step: dict[str, Any], seed: int, index: int,
                  extra: dict[str, Any]) -> Callable[[pd.DataFrame], pd.DataFrame]:
    """The step on one batch: its method's ``run`` as :func:`sdc_core.recipe.run_step` calls
    it, plus ``extra`` (the whole column's levels or moments); returns the new columns."""
    spec = METHODS[step["method"]]
    args = {k: v for k, v in step.items() if k not in ("method", "column", "columns")}
    if spec.random:
        args |= {"seed": seed, "step": index}
    args |= extra
    if spec.target == "column":
        col = step["column"]

        def one(batch: pd.DataFrame) -> pd.DataFrame:
            kw = args | ({"rid": batch[RID].to_numpy(dtype=np.uint64)} if spec.random else {})
            return spec.run(batch[col], **kw).values.to_frame(col)
        return one
    cols = list(step["columns"])

    def many(batch: pd.DataFrame) -> pd.DataFrame:
        kw = args | ({"rid": batch[RID].to_numpy(dtype=np.uint64)} if spec.random else {})
        return spec.run(batch, cols, **kw).values[cols]
    return many


def output_kinds(step: dict[str, Any], kinds: dict[str, str], extra: dict[str, Any]
                 ) -> dict[str, str]:
    """The kind of every column the step writes, decided as the pandas reference decides its
    dtype (from the step's settings and the whole column's levels, never from one batch)."""
    method = step["method"]
    if method == "noise":
        return {c: "float" for c in step["columns"]}
    col = step["column"]
    kind = kinds[col]
    if method == "band":
        if step.get("label", "auto") in ("auto", "interval", "range"):
            return {col: "text"}
        return {col: "date" if kind == "date" else "float"}
    if method == "top_bottom_code":
        whole = all(float(step.get(k) or 0).is_integer() for k in ("top", "bottom"))
        return {col: "int" if kind == "int" and whole else "float"}
    if method == "recode":
        lv: Levels = extra["levels"]
        probe = pd.Series(lv.values, name=col)
        args = {k: v for k, v in step.items() if k not in ("method", "column")}
        out = storage(METHODS["recode"].run(probe, levels=lv, **args).values)
        if out == "integer":
            return {col: "int" if kind == "int" else "float"}
        return {col: {"float": "float", "boolean": "bool"}.get(out, "text")}
    return {col: kind}


def order_free_sums(reduce: Callable[[Callable[[pd.DataFrame], Any]], list[Any]],
                    quantities: Callable[[pd.DataFrame], list[np.ndarray]]) -> list[float]:
    """Σ of each quantity over the whole table, equal bit for bit to
    :func:`sdc_core.methods.noise.order_free_sum` of the whole column: one pass for the count
    and the largest magnitude (which fix the grid), one for the grid sums of every batch."""
    def first(batch: pd.DataFrame) -> list[tuple[int, float]]:
        return [(len(q), float(np.max(np.abs(q))) if len(q) else 0.0) for q in quantities(batch)]
    stats = reduce(first)
    if not stats:
        return []
    n = [sum(s[j][0] for s in stats) for j in range(len(stats[0]))]
    top = [max(s[j][1] for s in stats) for j in range(len(stats[0]))]
    shifts = [grid_shift(nj, tj) if nj and tj > 0 else None for nj, tj in zip(n, top)]

    def second(batch: pd.DataFrame) -> list[float]:
        return [grid_sum(q, s) if s is not None else 0.0
                for q, s in zip(quantities(batch), shifts)]
    sums = reduce(second)
    return [math.ldexp(sum(s[j] for s in sums), -shift) if shift is not None else 0.0
            for j, shift in enumerate(shifts)]


def _values(batch: pd.DataFrame, col: str) -> np.ndarray:
    return batch[col].to_numpy(dtype=np.float64, na_value=np.nan)


def noise_moments(reduce: Callable[[Callable[[pd.DataFrame], Any]], list[Any]],
                  counts: dict[str, int], step: dict[str, Any]) -> dict[str, Any]:
    """The whole columns' figures a noise step needs (see :func:`sdc_core.methods.noise.noise`),
    computed as the reference computes them, order-free, in four passes over the batches."""
    cols: Sequence[str] = step["columns"]
    for c in cols:
        if counts[c] < 2:
            raise SdcInputError(f"noise needs at least 2 non-missing values in column '{c}', "
                                f"it has {counts[c]}")
    if step.get("kind", "additive") != "correlated":
        def present(batch: pd.DataFrame) -> list[np.ndarray]:
            return [x[~np.isnan(x)] for x in (_values(batch, c) for c in cols)]
        means = [s / counts[c] for s, c in zip(order_free_sums(reduce, present), cols)]

        def squares(batch: pd.DataFrame) -> list[np.ndarray]:
            return [np.square(x - m) for x, m in zip(present(batch), means)]
        sq = order_free_sums(reduce, squares)
        return {"moments": {c: (m, math.sqrt(s / (counts[c] - 1)))
                            for c, m, s in zip(cols, means, sq)}}

    def complete(batch: pd.DataFrame) -> list[np.ndarray]:
        xs = [_values(batch, c) for c in cols]
        keep = ~np.logical_or.reduce([np.isnan(x) for x in xs])
        return [x[keep] for x in xs]
    m = sum(reduce(lambda b: len(complete(b)[0])))
    check_complete_cases(m)
    means = [s / m for s in order_free_sums(reduce, complete)]
    pairs = [(i, j) for i in range(len(cols)) for j in range(i, len(cols))]

    def products(batch: pd.DataFrame) -> list[np.ndarray]:
        dev = [x - mu for x, mu in zip(complete(batch), means)]
        return [dev[i] * dev[j] for i, j in pairs]
    cov = np.empty((len(cols), len(cols)))
    for (i, j), s in zip(pairs, order_free_sums(reduce, products)):
        cov[i, j] = cov[j, i] = s / (m - 1)
    return {"covariance": (cov, m)}
