"""Randomized response (seed 002): local differential privacy for one survey answer.

Mechanism: each answer is kept with probability q; otherwise it is replaced by a uniform draw
over the K categories (which may give the true answer back). So
P(report j | true i) = q·[i = j] + (1 − q)/K.

Estimator: with λ̂_j the observed share of reports j among n, the true share is estimated by
π̂_j = (λ̂_j − (1 − q)/K) / q, with standard error √(λ̂_j(1 − λ̂_j)/n) / q and a normal 95 %
interval π̂_j ± 1.96·SE (shown clipped to [0, 1]; the unclipped π̂ is unbiased and may fall
outside). Privacy: ε = ln((q + (1 − q)/K) / ((1 − q)/K)).

Seed 002's coin flip is q = ½, K = 2: a true "yes" is reported "yes" with probability ¾, and
π̂ = 2λ̂ − ½.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from sdc_core import rng
from sdc_core.checks import check_probability
from sdc_core.errors import SdcInputError
from sdc_core.methods.common import (
    Levels,
    MethodResult,
    category_codes,
    from_codes,
    resolve_ids,
    transition,
)
from sdc_core.methods.spec import EngineRun, Method, Param, Release, per_household_param

DRAW_KEEP, DRAW_VALUE = 0, 1
Z95 = 1.959963984540054


def epsilon(keep_probability: float, k: int) -> float:
    """ε = ln((q + (1 − q)/K) / ((1 − q)/K)); infinite for q = 1."""
    q = check_probability("keep_probability", keep_probability)
    if k < 2:
        raise SdcInputError("randomized response needs at least 2 categories")
    noise = (1.0 - q) / k
    return math.inf if noise == 0 else math.log((q + noise) / noise)


def _levels(s: pd.Series, categories: list | None) -> tuple[np.ndarray, pd.Index]:
    codes, levels = category_codes(s)
    if categories is None:
        return codes, levels
    cats = pd.Index(categories)
    if pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_numeric_dtype(cats):
        try:
            cats = pd.Index(pd.to_numeric(cats))
        except (TypeError, ValueError):
            raise SdcInputError(f"categories of the numeric column '{s.name}' must be "
                                "numbers") from None
    if cats.has_duplicates:
        raise SdcInputError("categories are repeated")
    lookup = {str(c): i for i, c in enumerate(cats)}
    unknown = sorted({str(v) for v in levels} - set(lookup))
    if unknown:
        raise SdcInputError(f"values not among the categories: {', '.join(unknown)}")
    remap = np.array([lookup[str(v)] for v in levels], dtype=np.int64)
    return np.where(codes >= 0, remap[np.maximum(codes, 0)], -1), cats


def randomized_response(s: pd.Series, keep_probability: float = 0.5,
                        categories: list | None = None, seed: int = 0, step: int = 0,
                        rid: np.ndarray | None = None,
                        levels: Levels | None = None) -> MethodResult:
    """Apply the mechanism to every non-missing answer. ``categories`` lists all K possible
    answers (default: those present in the column; ``levels``: the categories of the whole
    column when ``s`` is a part of it)."""
    q = check_probability("keep_probability", keep_probability)
    if categories is None and levels is not None:
        categories = list(levels.values)
    codes, answers = _levels(s, categories)
    k = len(answers)
    eps = epsilon(q, k)
    ids = resolve_ids(len(s), rid)
    keep = rng.uniform(ids, rng.key(seed, step, DRAW_KEEP)) < q
    drawn = np.floor(rng.uniform(ids, rng.key(seed, step, DRAW_VALUE)) * k).astype(np.int64)
    new = np.where((codes >= 0) & ~keep, drawn, codes)
    values = from_codes(s, answers, new)
    present = codes >= 0
    matrix = transition([str(v) for v in answers], q, np.full(k, (1.0 - q) / k))
    info: dict[str, object] = {"keep_probability": q, "categories": k, "epsilon": eps,
            "changed_share": float((new != codes)[present].mean()) if present.any() else 0.0}
    return MethodResult(values, info, matrix)


def estimate_shares(reports: pd.Series, keep_probability: float,
                    categories: list | None = None) -> pd.DataFrame:
    """π̂ per category from randomized reports: columns ``category``, ``observed_share``,
    ``estimate``, ``se``, ``ci_low``, ``ci_high`` (the interval clipped to [0, 1])."""
    q = check_probability("keep_probability", keep_probability, low_open=True)
    codes, levels = _levels(reports, categories)
    k = len(levels)
    if k < 2:
        raise SdcInputError("randomized response needs at least 2 categories")
    present = codes >= 0
    n = int(present.sum())
    if n == 0:
        raise SdcInputError("no answers to estimate from")
    lam = np.bincount(codes[present], minlength=k) / n
    est = (lam - (1.0 - q) / k) / q
    se = np.sqrt(lam * (1.0 - lam) / n) / q
    return pd.DataFrame({"category": [str(v) for v in levels], "observed_share": lam,
                         "estimate": est, "se": se,
                         "ci_low": np.clip(est - Z95 * se, 0.0, 1.0),
                         "ci_high": np.clip(est + Z95 * se, 0.0, 1.0)})


def coin_survey(participants: int, true_share: float, keep_probability: float = 0.5,
                seed: int = 0) -> tuple[pd.Series, pd.Series, pd.Series]:
    """One simulated survey of seed 002: n₁ = round(n·π) true "yes" answers and n − n₁ "no",
    randomized with keep probability q over the categories yes and no. Returns the true
    answers, the reports and the estimate row of "yes" (:func:`estimate_shares`)."""
    n = int(participants)
    if n < 1:
        raise SdcInputError("participants must be at least 1")
    yes = int(round(n * check_probability("true_share", true_share)))
    answers = pd.Series(np.r_[np.full(yes, "yes"), np.full(n - yes, "no")], dtype="str")
    reports = randomized_response(answers, keep_probability, categories=["yes", "no"],
                                  seed=seed).values
    row = estimate_shares(reports, keep_probability, ["yes", "no"]).set_index("category")
    return answers, reports, row.loc["yes"]


def estimate_spread(participants: list[int], true_share: float, keep_probability: float,
                    replications: int = 30, seed: int = 0) -> pd.DataFrame:
    """Simulated coin-flip surveys (K = 2): for each number of participants n, ``replications``
    estimates π̂ of a true share π. A survey's "yes" reports are Binomial(n₁, q + (1−q)/2) +
    Binomial(n − n₁, (1−q)/2) with n₁ = round(n·π) true "yes" answers. Columns:
    ``participants``, ``replication``, ``estimate``, ``se`` (the standard error of π̂ given the
    true answers: √(n₁p₁(1−p₁) + (n−n₁)p₀(1−p₀)) / (n·q) with p₁ = q + (1−q)/2, p₀ = (1−q)/2)."""
    q = check_probability("keep_probability", keep_probability, low_open=True)
    pi = check_probability("true_share", true_share)
    gen = np.random.default_rng(seed)
    n = np.repeat(np.asarray(participants, dtype=np.int64), replications)
    if (n < 1).any():
        raise SdcInputError("participants must be at least 1")
    yes_true = np.round(n * pi).astype(np.int64)
    noise = (1.0 - q) / 2.0
    reports = gen.binomial(yes_true, q + noise) + gen.binomial(n - yes_true, noise)
    p1 = q + noise
    variance = yes_true * p1 * (1 - p1) + (n - yes_true) * noise * (1 - noise)
    return pd.DataFrame({"participants": n, "replication": np.tile(np.arange(replications),
                                                                   len(participants)),
                         "estimate": (reports / n - noise) / q,
                         "se": np.sqrt(variance) / (n * q)})


RANDOMIZED_RESPONSE = Method(
    engine=EngineRun.LEVELS,
    name="randomized_response", label="Randomized response", order=60,
    run=randomized_response, release=Release.PERTURBATION, random=True, target="column",
    columns="categorical", summary="on answers", main="keep_probability", off=1.0,
    stronger="lower",
    sweep_values="0.5, 0.75",
    params=(Param("keep_probability", "number", 1.0, low=0.0, high=1.0, step=0.05, most=1.0,
                  label="Keep probability q",
                  help="The answer is kept with probability q, else replaced by a uniform draw "
                       "(q = ½ with two answers: the coin flip)."),
            Param("categories", "list", None, more=True, label="Answer categories",
                  help="The answers a replacement is drawn from, separated by commas, text "
                       "in quotes: \"yes\", \"no\" (empty: the column's own categories)."),
            per_household_param()),
    describe=lambda r: f"Randomized response on {r['column']}: ε = {r['epsilon']:.3f}.")
