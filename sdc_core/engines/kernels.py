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
from collections.abc import Callable, Generator, Sequence
from typing import Any

import numpy as np
import pandas as pd

from sdc_core.checks import infinite_values
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


#: A function of one batch of rows (its columns as pandas) whose results the engine gathers.
BatchReduce = Callable[[pd.DataFrame], Any]
#: An engine's pass over the table: a function of a batch → its results, one per batch.
Reduce = Callable[[BatchReduce], list[Any]]
#: A computation over the table in passes: it yields the batch function of each pass and is
#: sent that pass's results; what it returns is its outcome.
Passes = Generator[BatchReduce, list[Any], Any]


def run_passes(reduce: Reduce, passes: Passes) -> Any:
    """The outcome of ``passes``, each of its passes one ``reduce``."""
    try:
        fn = next(passes)
        while True:
            fn = passes.send(reduce(fn))
    except StopIteration as done:
        return done.value


def run_in_lockstep(reduce: Reduce, computations: Sequence[Passes]) -> list[Any]:
    """The outcomes of ``computations`` run side by side, one ``reduce`` a round for the
    passes that are due (each batch goes through each of their functions); a computation that
    refuses its input (:class:`SdcInputError`, raised here between passes) has that error as
    its outcome. An error of ``reduce`` itself is raised."""
    outcomes: list[Any] = [None] * len(computations)
    due: dict[int, BatchReduce] = {}

    def advance(i: int, results: list[Any] | None) -> None:
        try:
            due[i] = computations[i].send(results)  # type: ignore[arg-type]
        except StopIteration as done:
            outcomes[i] = done.value
        except SdcInputError as err:
            outcomes[i] = err
    for i in range(len(computations)):
        advance(i, None)
    while due:
        now = dict(due)
        due.clear()
        fns = list(now.values())
        parts = reduce(lambda batch: [fn(batch) for fn in fns])
        for j, i in enumerate(now):
            advance(i, [part[j] for part in parts])
    return outcomes


def order_free_sums(reduce: Reduce, quantities: Callable[[pd.DataFrame], list[np.ndarray]]
                    ) -> list[float]:
    """Σ of each quantity over the whole table, equal bit for bit to
    :func:`sdc_core.methods.noise.order_free_sum` of the whole column: one pass for the count
    and the largest magnitude (which fix the grid), one for the grid sums of every batch."""
    return run_passes(reduce, _order_free_sums(quantities))


def _order_free_sums(quantities: Callable[[pd.DataFrame], list[np.ndarray]]
                     ) -> Generator[BatchReduce, list[Any], list[float]]:
    """The passes of :func:`order_free_sums`, returning the sums."""
    stats = yield _count_and_top(quantities)
    if not stats:
        return []
    n, top = _totals(stats)
    return (yield from _grid_sums(quantities, n, top))


def _count_and_top(quantities: Callable[[pd.DataFrame], list[np.ndarray]]) -> BatchReduce:
    """The first pass of an order-free sum: each quantity's number of values and largest
    magnitude in the batch."""
    def first(batch: pd.DataFrame) -> list[tuple[int, float]]:
        return [(len(q), float(np.max(np.abs(q))) if len(q) else 0.0) for q in quantities(batch)]
    return first


def _totals(stats: list[list[tuple[int, float]]]) -> tuple[list[int], list[float]]:
    """The first pass's figures over all batches: each quantity's number of values and
    largest magnitude."""
    k = len(stats[0])
    return [sum(s[j][0] for s in stats) for j in range(k)], \
        [max(s[j][1] for s in stats) for j in range(k)]


def _grid_sums(quantities: Callable[[pd.DataFrame], list[np.ndarray]], n: list[int],
               top: list[float]) -> Generator[BatchReduce, list[Any], list[float]]:
    """The second pass of an order-free sum: the grid (fixed by each quantity's number of
    values and largest magnitude) sums of every batch, added."""
    shifts = [grid_shift(nj, tj) if nj and tj > 0 else None for nj, tj in zip(n, top)]

    def second(batch: pd.DataFrame) -> list[float]:
        return [grid_sum(q, s) if s is not None else 0.0
                for q, s in zip(quantities(batch), shifts)]
    sums = yield second
    return [math.ldexp(sum(s[j] for s in sums), -shift) if shift is not None else 0.0
            for j, shift in enumerate(shifts)]


def _values(batch: pd.DataFrame, col: str) -> np.ndarray:
    return batch[col].to_numpy(dtype=np.float64, na_value=np.nan)


def noise_moments(reduce: Reduce, step: dict[str, Any]) -> dict[str, Any]:
    """The whole columns' figures a noise step needs (see :func:`sdc_core.methods.noise.noise`),
    computed as the reference computes them, order-free (:func:`noise_passes`)."""
    return run_passes(reduce, noise_passes(step))


def noise_passes(step: dict[str, Any]) -> Generator[BatchReduce, list[Any], dict[str, Any]]:
    """The passes of :func:`noise_moments`: three over the batches (four for ``correlated``).
    The first also counts each column's present values (a column needs at least 2, and no
    infinite value: the reference's refusals, in its order), and for the standard deviations
    finds each column's least and greatest value: with the mean they
    give the largest squared deviation, (x - mean)² being largest at one end of the column (the
    rounded difference and its square grow with |x - mean|), so the squares' sum needs only its
    grid pass."""
    cols: Sequence[str] = step["columns"]

    def check(counts: Sequence[int], infinite: Sequence[bool]) -> None:
        for c, n, inf in zip(cols, counts, infinite):
            if inf:
                raise infinite_values(c)
            if n < 2:
                raise SdcInputError(f"noise needs at least 2 non-missing values in column "
                                    f"'{c}', it has {n}")
    if step.get("kind", "additive") != "correlated":
        def present(batch: pd.DataFrame) -> list[np.ndarray]:
            return [x[~np.isnan(x)] for x in (_values(batch, c) for c in cols)]

        def first(batch: pd.DataFrame) -> tuple[list[tuple[int, float]], list[tuple[float, float]]]:
            xs = present(batch)
            return _count_and_top(lambda _: xs)(batch), [
                (float(np.min(x)), float(np.max(x))) if len(x) else (math.inf, -math.inf)
                for x in xs]
        parts = yield first
        if not parts:  # no batch at all: no values
            check([0] * len(cols), [False] * len(cols))
        counts, top = _totals([p[0] for p in parts])
        ends = [(min(p[1][j][0] for p in parts), max(p[1][j][1] for p in parts))
                for j in range(len(cols))]
        check(counts, [lo <= hi and (math.isinf(lo) or math.isinf(hi)) for lo, hi in ends])
        sums = yield from _grid_sums(present, counts, top)
        means = [s / n for s, n in zip(sums, counts)]

        def squares(batch: pd.DataFrame) -> list[np.ndarray]:
            return [np.square(x - m) for x, m in zip(present(batch), means)]
        if all(math.isfinite(v) for (lo, hi), m in zip(ends, means) for v in (lo, hi, m)):
            sq_top = [float(max(np.square(np.float64(lo) - m), np.square(np.float64(hi) - m)))
                      for (lo, hi), m in zip(ends, means)]
            sq = yield from _grid_sums(squares, counts, sq_top)
        else:  # a mean past float64's largest value: the squares' own first pass
            sq = yield from _order_free_sums(squares)
        return {"moments": {c: (m, math.sqrt(s / (n - 1)))
                            for c, m, s, n in zip(cols, means, sq, counts)}}

    def complete(batch: pd.DataFrame) -> list[np.ndarray]:
        xs = [_values(batch, c) for c in cols]
        keep = ~np.logical_or.reduce([np.isnan(x) for x in xs])
        return [x[keep] for x in xs]

    def first_complete(batch: pd.DataFrame
                       ) -> tuple[list[tuple[int, bool]], list[tuple[int, float]]]:
        """Each column's number of present values and whether one is infinite, and the
        complete cases' first-pass figures."""
        xs = [_values(batch, c) for c in cols]
        return [(int(np.count_nonzero(~np.isnan(x))), bool(np.isinf(x).any())) for x in xs], \
            _count_and_top(complete)(batch)
    parts = yield first_complete
    check([sum(p[0][j][0] for p in parts) for j in range(len(cols))],
          [any(p[0][j][1] for p in parts) for j in range(len(cols))])
    n, top = _totals([p[1] for p in parts])
    m = n[0]  # the complete cases
    check_complete_cases(m)
    means = [s / m for s in (yield from _grid_sums(complete, n, top))]
    pairs = [(i, j) for i in range(len(cols)) for j in range(i, len(cols))]

    def products(batch: pd.DataFrame) -> list[np.ndarray]:
        dev = [x - mu for x, mu in zip(complete(batch), means)]
        return [dev[i] * dev[j] for i, j in pairs]
    cov = np.empty((len(cols), len(cols)))
    for (i, j), s in zip(pairs, (yield from _order_free_sums(products))):
        cov[i, j] = cov[j, i] = s / (m - 1)
    return {"covariance": (cov, m)}
