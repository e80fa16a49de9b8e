"""PRAM: the post-randomisation method for a categorical column.

Each record's category i is replaced by j with probability R[i, j] (a row-stochastic transition
matrix), drawn from its own counter-based uniform. Three forms:

- **flip** with probability p: R = (1 − p)·I + p/(K − 1)·(J − I): the value moves to a uniformly
  chosen *other* category (binary columns: the seed 003 flip). Expected changed share: p.
- **invariant** with retention θ (Gouweleeuw et al., 1998): start from the flip matrix P with
  retention θ (P_ii = θ), take the marginal π of the column and the backward matrix
  Q[j, i] = P[i, j]·π_i / (πP)_j; R = P·Q satisfies πR = π, so the expected marginal is the
  original one.
- **matrix** given by the user: {from: {to: probability}}, rows summing to 1.

Missing values stay missing; only categories present in the column are released.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from sdc_core import rng
from sdc_core.checks import check_probability
from sdc_core.errors import SdcInputError
from sdc_core.methods.common import (
    Levels,
    MethodResult,
    RankOne,
    apply_transition,
    category_codes,
    from_codes,
    resolve_ids,
    transition,
    wide_refused,
)
from sdc_core.methods.spec import EngineRun, Method, Param, Release, per_household_param

DRAW_FLIP, DRAW_VALUE = 0, 1


def flip_matrix(k: int, p: float) -> np.ndarray:
    if k == 1:
        return np.ones((1, 1))
    return np.full((k, k), p / (k - 1)) + np.eye(k) * (1.0 - p - p / (k - 1))


def invariant_matrix(marginal: np.ndarray, retention: float) -> np.ndarray:
    """R = P·Q of the module docstring for marginal π and retention θ."""
    pi = np.asarray(marginal, dtype=np.float64)
    base = flip_matrix(len(pi), 1.0 - retention)
    released = pi @ base
    backward = (base * pi[:, None]).T / np.where(released > 0, released, 1.0)[:, None]
    return base @ backward


def _user_matrix(matrix: dict, levels: pd.Index) -> np.ndarray:
    if not isinstance(matrix, dict):
        raise SdcInputError("matrix must map each category to {category: probability}")
    index = {str(v): i for i, v in enumerate(levels)}
    unknown = sorted({str(a) for a in matrix} - set(index))
    for row in matrix.values():
        if not isinstance(row, dict):
            raise SdcInputError("matrix must map each category to {category: probability}")
        unknown += sorted({str(b) for b in row} - set(index))
    if unknown:
        raise SdcInputError(f"matrix names categories not in the column: "
                            f"{', '.join(sorted(set(unknown)))}")
    missing = [str(v) for v in levels if str(v) not in {str(a) for a in matrix}]
    if missing:
        raise SdcInputError(f"matrix has no row for: {', '.join(missing)}")
    out = np.zeros((len(levels), len(levels)))
    for a, row in matrix.items():
        for b, prob in row.items():
            out[index[str(a)], index[str(b)]] = check_probability(f"matrix[{a}][{b}]", prob)
    sums = out.sum(axis=1)
    bad = [str(levels[i]) for i in np.flatnonzero(np.abs(sums - 1.0) > 1e-9)]
    if bad:
        raise SdcInputError(f"matrix rows must sum to 1; they do not for: {', '.join(bad)}")
    return out


def pram(s: pd.Series, p: float | None = None, invariant: bool = False,
         retention: float | None = None, matrix: dict | None = None, seed: int = 0,
         step: int = 0, rid: np.ndarray | None = None,
         levels: Levels | None = None) -> MethodResult:
    """PRAM of ``s``: give ``p`` (flip), ``invariant=True`` with ``retention``, or ``matrix``.
    ``levels``: the categories and counts of the whole column when ``s`` is a part of it."""
    forms = (p is not None and not invariant) + bool(invariant) + (matrix is not None)
    if forms != 1:
        raise SdcInputError("pram takes exactly one of: p (flip), invariant with retention, "
                            "or matrix")
    whole = levels
    codes, categories = category_codes(s, whole)
    k = max(len(categories), 1)
    ids = resolve_ids(len(s), rid)
    present = codes >= 0
    counts = np.bincount(codes[present], minlength=k).astype(np.float64)
    if whole is not None:
        counts[: len(whole.counts)] = whole.counts
    marginal = counts / max(counts.sum(), 1.0)
    trans: np.ndarray | None = None
    if matrix is not None:
        wide_refused("A PRAM transition matrix", len(categories))
        form, trans = "matrix", _user_matrix(matrix, categories)
    elif invariant:
        if retention is None:
            raise SdcInputError("invariant PRAM needs a retention level in (0, 1]")
        theta = check_probability("retention", retention, low_open=True)
        wide_refused("Invariant PRAM", len(categories))
        form, trans = "invariant", invariant_matrix(marginal, theta)
    else:
        assert p is not None  # the one form left: a flip with p
        form = "flip"
        check_probability("p", p)
    if form == "flip":
        assert p is not None
        u_flip = rng.uniform(ids, rng.key(seed, step, DRAW_FLIP))
        u_value = rng.uniform(ids, rng.key(seed, step, DRAW_VALUE))
        other = np.floor(u_value * (k - 1)).astype(np.int64)
        other += other >= codes
        new = np.where(present & (u_flip < float(p)) & (k > 1), other, codes)
    else:
        assert trans is not None
        new = apply_transition(codes, trans, rng.uniform(ids, rng.key(seed, step, DRAW_FLIP)))
        new[~present] = -1
    n_present = int(present.sum())
    names = [str(v) for v in categories]
    table: pd.DataFrame | RankOne
    if trans is None:  # flip: P = (1 − p − p/(K − 1))·I + p/(K − 1)·J, dense only when narrow
        assert p is not None
        off = float(p) / (k - 1) if k > 1 else 0.0
        table = transition(names, 1.0 - float(p) - off if k > 1 else 1.0, np.full(len(names), off))
        diagonal = np.full(k, 1.0 - float(p) if k > 1 else 1.0)
    else:
        table = pd.DataFrame(trans[: len(categories), : len(categories)], index=names,
                             columns=names)
        diagonal = np.diag(trans)
    info = {"form": form, "categories": int(len(categories)),
            "expected_changed_share": float(marginal @ (1.0 - diagonal)) if len(categories)
            else 0.0,
            "changed_share": float((new != codes)[present].mean()) if n_present else 0.0}
    return MethodResult(from_codes(s, categories, new), info, table)


PRAM = Method(
    engine=EngineRun.LEVELS,
    name="pram", label="PRAM", order=20, run=pram, release=Release.PERTURBATION, random=True,
    target="column", columns="categorical", default_columns="categorical_keys",
    summary="flip categories at random", main="p", off=0.0, sweep_values="0.01, 0.05, 0.1",
    params=(Param("p", "number", 0.0, low=0.0, high=0.5, step=0.01, most=1.0,
                  label="Flip probability p", unused_with=("invariant", "matrix"),
                  help="Each value moves with probability p to a uniformly chosen other "
                       "category. Not used by invariant PRAM or a transition matrix."),
            Param("invariant", "bool", False, more=True, label="Invariant PRAM",
                  unused_with=("matrix",),
                  help="Keeps each category's expected frequency: the flip matrix with "
                       "retention θ followed by its backward matrix (Gouweleeuw et al.); p is "
                       "not used."),
            Param("retention", "number", None, low=0.0, high=1.0, step=0.01, most=1.0,
                  more=True, needs="invariant", unused_with=("matrix",),
                  label="Retention θ (invariant PRAM)",
                  help="The probability that the flip matrix keeps a value, in (0, 1]."),
            Param("matrix", "object", None, more=True, label="Transition matrix (JSON)",
                  help='{"from": {"to": probability}}, each row summing to 1, over the '
                       "column's categories; p is not used."),
            per_household_param()),
    switches=("invariant", "matrix"),
    describe=lambda r: f"PRAM of {r['column']}: expected changed share "
                       f"{r['expected_changed_share']:.3f}, realised {r['changed_share']:.3f}.")
