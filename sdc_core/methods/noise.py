"""Noise addition to numeric columns: sdcMicro's ``addNoise`` methods ``additive``,
``correlated`` and ``correlated2`` (R/addNoise.r, ``addNoiseWORK``), on counter-based normals.

The formulas of sdcMicro's current ``addNoiseWORK`` (an older release drew the additive noise
with sd 1.96·s/√N·p/100 and added the column means in ``correlated``). For a column x with m
non-missing values, mean x̄ and standard deviation s (ddof 1), p in percent (sdcMicro's
``noise``, default 150) and zᵣ = ``rng.normal(r, key(seed, step, d_x))`` the standard normal of
record r:

- **additive**: x'ᵣ = xᵣ + (p/100)·s·zᵣ, i.e. noise N(0, ((p/100)·s)²), column by column.
- **correlated**: x'ᵣ = xᵣ + S·zᵣ for the vector of the k chosen columns, with S the symmetric
  square root of (p/100)·Σ (eigenvalues of Σ below 0 set to 0, so a singular Σ works), Σ the
  covariance matrix (ddof 1) of the records with every chosen column present (complete cases,
  as sdcMicro's ``cov(na.omit(x))``). So the noise is N(0, (p/100)·Σ): note p/100 scales the
  *variance* here but the *standard deviation* in ``additive`` (as in sdcMicro); one column
  (sdcMicro asks for two) gives noise of sd √(p/100)·s.
- **correlated2** with δ ∈ (0, 1] and d = √(1 − δ²): x'ᵣ = d·xᵣ + δ·N((1 − d)/δ·x̄, s²)
  = d·xᵣ + (1 − d)·x̄ + δ·s·zᵣ, column by column (sdcMicro: ``x * d1 + delta * rnorm(N,
  mean = (1 - d1)/delta * mean(x), sd = sd(x))``). In expectation over the noise the mean of x'
  is x̄ and its variance d²·s² + δ²·s² = s². The added noise x' − x has sd √(2(1 − d))·s.

Draw numbers: column x draws with d_x = 64 bits of pandas' fixed-key SipHash of its name as text
(``rng.ids_from_column``), not its position in ``columns``. So with ``additive`` and
``correlated2`` a column's noise depends only on (seed, step, column name, record id): adding,
removing or reordering other columns in the step leaves it unchanged. With ``correlated`` every
column's noise depends on Σ and so on the whole set of columns; the symmetric square root makes it
independent of their order (reordering the columns permutes S and z alike), up to rounding.

Missing values stay missing and take no part in x̄, s or Σ (``additive``, ``correlated2``: each
column's own non-missing values; ``correlated``: complete cases); a record with some columns
missing still gets noise on the others. The output columns are float64.

Info: ``kind``, ``p`` (or ``delta`` for ``correlated2``), ``complete_cases`` (``correlated``),
per column the realised ``noise_sd`` (sd of x' − x over its non-missing values, ddof 1), the
``expected_noise_sd`` of the formulas above and the ``changed_share``; and the ``changed_share``
of all non-missing values.

Order independence: the sums behind x̄, s, Σ and the reported figures are taken on a fixed-point
grid: every value v is rounded to a whole multiple of 2^(e−b), with 2^e > max|v| and
b = 53 − (bit length of the count), so that every partial sum is a whole number of grid steps
below 2⁵³ and float64 adds them exactly, in any order (a resolution of 2⁻³³·max|v| per value
for a million values, far below any noise). They are functions of the set of values, not of
their order, so with record ids the output is the same, bit for bit, whatever the row order
(a plain ``np.sum`` rounds differently in another order).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from sdc_core import rng
from sdc_core.checks import check_positive, check_probability, numeric_values
from sdc_core.errors import SdcInputError
from sdc_core.methods.common import TableResult, resolve_ids
from sdc_core.methods.spec import EngineRun, Method, Param, Release

KINDS = ("additive", "correlated", "correlated2")


def grid_shift(n: int, top: float) -> int:
    """The grid of :func:`order_free_sum` for ``n`` values of largest magnitude ``top`` > 0:
    values are rounded to whole multiples of 2^−shift, shift = b − e with 2^e > top."""
    return 53 - n.bit_length() - math.frexp(top)[1]


def grid_sum(a: np.ndarray, shift: int, overwrite: bool = False) -> float:
    """Σ rint(a · 2^shift): a whole number, exact in float64 when ``shift`` is the grid of all
    the values summed (so partial sums over parts of a column add up exactly, in any order)."""
    if len(a) == 0:
        return 0.0
    if abs(shift) < 1000:
        y = np.multiply(a, math.ldexp(1.0, shift), out=a if overwrite else None)
    else:
        y = np.ldexp(a, shift)
    np.rint(y, out=y)                          # whole numbers, |y| ≤ 2**b, n · 2**b ≤ 2**53
    return float(y.sum())                      # so every partial sum is exact


def order_free_sum(a: np.ndarray, overwrite: bool = False) -> float:
    """Σ a on the fixed-point grid of the module docstring: the same for any order of ``a``
    (``overwrite``: ``a`` is scratch and may be used for the rounded values)."""
    n = len(a)
    if n == 0:
        return 0.0
    top = max(float(a.max()), -float(a.min()))
    if top == 0.0:
        return 0.0
    shift = grid_shift(n, top)
    return math.ldexp(grid_sum(a, shift, overwrite), -shift)


def _mean_sd(x: np.ndarray, overwrite: bool = False) -> tuple[float, float]:
    """Mean and standard deviation (ddof 1) of the non-missing values ``x``, order-free."""
    mean = order_free_sum(x) / len(x)
    dev = np.subtract(x, mean, out=x if overwrite else None)
    np.square(dev, out=dev)
    return mean, math.sqrt(order_free_sum(dev, overwrite=True) / (len(x) - 1))


def column_draw(name: object) -> int:
    """The draw number of a column: 64 bits of the SipHash of its name as text."""
    return int(rng.ids_from_column(np.array([str(name)], dtype=object))[0])


def _column_values(df: pd.DataFrame, columns: Sequence[str],
                   check_count: bool = True) -> list[np.ndarray]:
    if isinstance(columns, str):
        columns = [columns]
    cols = list(columns)
    if not cols:
        raise SdcInputError("noise needs at least one column in columns")
    unknown = [str(c) for c in cols if c not in df.columns]
    if unknown:
        raise SdcInputError(f"unknown column(s) {', '.join(unknown)}")
    if len(set(cols)) < len(cols):
        raise SdcInputError("columns lists a column twice")
    out = []
    for c in cols:
        x = numeric_values(df[c], "noise")
        m = len(x) - int(np.count_nonzero(np.isnan(x)))
        if m < 2 and check_count:
            raise SdcInputError(f"noise needs at least 2 non-missing values in column '{c}', "
                                f"it has {m}")
        out.append(x)
    return out


def _psd_sqrt(cov: np.ndarray) -> np.ndarray:
    """The symmetric square root V·diag(√max(λ, 0))·Vᵀ of a covariance matrix."""
    lam, vec = np.linalg.eigh(cov)
    return (vec * np.sqrt(np.clip(lam, 0.0, None))) @ vec.T


def _covariance(xs: list[np.ndarray]) -> np.ndarray:
    """Covariance matrix (ddof 1) of the columns ``xs`` (no missing values), order-free."""
    m, k = len(xs[0]), len(xs)
    dev = [x - order_free_sum(x) / m for x in xs]
    cov = np.empty((k, k))
    for i in range(k):
        for j in range(i, k):
            cov[i, j] = cov[j, i] = order_free_sum(dev[i] * dev[j], True) / (m - 1)
    return cov


def noise(df: pd.DataFrame, columns: Sequence[str], kind: str = "additive", p: float = 150.0,
          delta: float = 0.1, *, seed: int = 0, step: int = 0,
          rid: np.ndarray | None = None,
          moments: dict[str, tuple[float, float]] | None = None,
          covariance: tuple[np.ndarray, int] | None = None) -> TableResult:
    """Add noise of ``kind`` to ``columns`` of ``df`` (see the module docstring); ``p`` in
    percent (``additive``, ``correlated``), ``delta`` for ``correlated2``.

    When ``df`` is a part of a larger table (a batch of an out-of-core engine) the whole
    columns' figures are given: ``moments`` {column: (x̄, s)} (``additive``,
    ``correlated2``) or ``covariance`` (Σ, number of complete cases) (``correlated``); the
    output is then that of the whole table on these rows and ``info`` holds only the settings.
    """
    if kind not in KINDS:
        raise SdcInputError(f"kind must be one of {', '.join(KINDS)}, not {kind!r}")
    share = check_positive("p", p) / 100.0
    d = check_probability("delta", delta, low_open=True)
    part = moments is not None or covariance is not None
    xs = _column_values(df, columns, check_count=not part)
    cols = [columns] if isinstance(columns, str) else list(columns)
    ids = resolve_ids(len(df), rid)
    outs: list[np.ndarray] = []
    expected: list[float] = []
    info: dict[str, object] = {"kind": kind}
    if kind == "correlated":
        if covariance is None:
            complete = ~np.logical_or.reduce([np.isnan(x) for x in xs])
            m = int(np.count_nonzero(complete))
            check_complete_cases(m)
            cov = _covariance(xs if m == len(complete) else [x[complete] for x in xs])
        else:
            cov, m = covariance
        root = _psd_sqrt(share * cov)
        z = [rng.normal(ids, rng.key(seed, step, column_draw(c))) for c in cols]
        for j, xj in enumerate(xs):  # x_j + Σ_l S[j, l]·z_l, term by term in a fixed order
            out = xj.copy()
            for zl, w in zip(z, root[j]):
                out += w * zl
            outs.append(out)
        expected = [math.sqrt(share * cov[j, j]) for j in range(len(cols))]
        info |= {"p": float(p), "complete_cases": m}
    else:
        d1 = math.sqrt(1.0 - d * d)
        for c, x in zip(cols, xs):
            present = ~np.isnan(x)
            mean, sd = moments[c] if moments is not None else \
                _mean_sd(x if present.all() else x[present])
            noisy = rng.normal(ids, rng.key(seed, step, column_draw(c)))
            if kind == "additive":
                noisy *= share * sd
                noisy += x
                expected.append(share * sd)
            else:
                noisy *= d * sd
                noisy += d1 * x
                noisy += (1.0 - d1) * mean
                expected.append(math.sqrt(2.0 * (1.0 - d1)) * sd)
            outs.append(noisy)
        info |= {"p": float(p)} if kind == "additive" else {"delta": d}
    for c, x, out in zip(cols, xs, outs):
        present = out[~np.isnan(x)]
        with np.errstate(over="ignore"):  # squares (variances, correlations) must stay finite
            finite = np.isfinite(present * present).all()
        if not finite:
            raise SdcInputError(f"noise of p = {p:g} % makes the values of '{c}' too large for "
                                "floating-point numbers")
    values = pd.DataFrame(dict(zip(cols, outs)), index=df.index, columns=cols)
    if part:
        return TableResult(values, info)
    per_column: dict[str, dict[str, float]] = {}
    changed = total = 0
    for c, x, out, exp in zip(cols, xs, outs, expected):
        present = ~np.isnan(x)
        added = out - x
        added = added if present.all() else added[present]
        moved = int(np.count_nonzero(added))
        changed, total = changed + moved, total + len(added)
        per_column[str(c)] = {"noise_sd": _mean_sd(added, overwrite=True)[1],
                              "expected_noise_sd": exp, "changed_share": moved / len(added)}
    info |= {"columns": per_column, "changed_share": changed / total}
    return TableResult(values, info)


def check_complete_cases(m: int) -> None:
    if m < 2:
        raise SdcInputError(f"correlated noise needs at least 2 records with every column "
                            f"present, there are {m}")


def _describe(r: dict[str, Any]) -> str:
    parts = ", ".join(f"{c} sd {v['noise_sd']:.4g}" for c, v in r["columns"].items())
    amount = f"δ = {r['delta']:g}" if r["kind"] == "correlated2" else f"p = {r['p']:g} %"
    return (f"{r['kind'].capitalize()} noise ({amount}): added noise {parts}; "
            f"{100 * r['changed_share']:.1f} % of values changed.")


NOISE = Method(
    engine=EngineRun.WHOLE_COLUMN,
    name="noise", label="Noise addition", order=45, run=noise,
    release=Release.NUMERIC_PERTURBATION, random=True, target="columns", columns="numeric",
    summary="to numeric columns (sdcMicro addNoise; p = 0: off)", main="p", off=0.0,
    sweep_values="50, 100, 150",
    params=(Param("kind", "choice", "additive", choices=KINDS,
                  label="Kind of noise",
                  help="additive: N(0, (p/100·sd)²) per column; correlated: N(0, p/100·Σ); "
                       "correlated2: x·√(1−δ²) + δ·N(…), keeps means and variances."),
            Param("p", "number", 0.0, low=0.0, high=300.0, step=10.0,  # recipes default 150
                  label="Noise amount p (%)",
                  help="additive: the noise sd is p % of the column's sd; correlated: the "
                       "noise covariance is p % of the columns' covariance."),
            Param("delta", "number", 0.1, low=0.01, high=1.0, step=0.01, most=1.0,
                  label="δ (correlated2)")),
    describe=_describe)
