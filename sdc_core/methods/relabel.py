"""Random relabeling (seed 000): with probability α a value is redrawn from the column's own
empirical distribution p (it may redraw the same value); otherwise it is kept.

This is PRAM with R = (1 − α)·I + α·1pᵀ, which leaves the expected marginal unchanged (pR = p).
The expected share of values that actually change is α·(1 − Σ p²), not α: a redraw lands on the
old value with probability p_i. Both the expected and the realised share are reported.

The redraw is an inverse CDF on integer cumulative counts: category j is drawn when
C_{j−1} ≤ u·m < C_j (m non-missing values), one IEEE multiply per record, so any engine that
computes the same uniforms draws the same categories.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from sdc_core import rng
from sdc_core.checks import check_probability
from sdc_core.methods.common import (
    Levels,
    MethodResult,
    category_codes,
    from_codes,
    resolve_ids,
    transition,
)
from sdc_core.methods.spec import EngineRun, Method, Param, Release, per_household_param

DRAW_REDRAW, DRAW_VALUE = 0, 1


def relabel(s: pd.Series, alpha: float, seed: int = 0, step: int = 0,
            rid: np.ndarray | None = None, levels: Levels | None = None) -> MethodResult:
    """Relabel ``s`` with probability ``alpha`` (see the module docstring); ``levels``: the
    categories and counts of the whole column when ``s`` is a part of it."""
    a = check_probability("alpha", alpha)
    whole = levels
    codes, categories = category_codes(s, whole)
    ids = resolve_ids(len(s), rid)
    present = codes >= 0
    counts = np.bincount(codes[present], minlength=len(categories)) if whole is None \
        else whole.counts
    m = int(counts.sum())
    cum = np.cumsum(counts)
    u_redraw = rng.uniform(ids, rng.key(seed, step, DRAW_REDRAW))
    u_value = rng.uniform(ids, rng.key(seed, step, DRAW_VALUE))
    drawn = np.searchsorted(cum, u_value * m, side="right") if m else codes
    new = np.where(present & (u_redraw < a), drawn, codes)
    p = counts / max(m, 1)
    matrix = transition([str(v) for v in categories], 1 - a, a * p)  # (1 − α)·I + α·1πᵀ
    info: dict[str, object] = {
        "alpha": a, "expected_changed_share": float(a * (1.0 - np.sum(p**2))),
        "changed_share": float((new != codes)[present].mean()) if m else 0.0,
        "redrawn_share": float((u_redraw < a)[present].mean()) if m else 0.0}
    return MethodResult(from_codes(s, categories, new), info, matrix)


RELABEL = Method(
    engine=EngineRun.LEVELS,
    name="relabel", label="Random relabeling", order=30, run=relabel,
    release=Release.PERTURBATION, random=True, target="column", columns="categorical",
    summary="from the column's own distribution", main="alpha", off=0.0,
    sweep_values="0.05, 0.1, 0.2",
    params=(Param("alpha", "number", 0.0, low=0.0, high=1.0, step=0.01, most=1.0,
                  required=True,
                  label="Relabeling probability α",
                  help="With probability α a value is redrawn from the column's distribution: "
                       "expected changed share α(1 − Σp²)."),
            per_household_param()),
    describe=lambda r: f"Relabeling {r['column']}: expected changed share α(1 − Σp²) = "
                       f"{r['expected_changed_share']:.4f}, realised {r['changed_share']:.4f} "
                       f"({r['redrawn_share']:.4f} redrawn).")
