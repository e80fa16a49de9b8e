"""Rank swapping (seed 001) by seeded pairing inside rank blocks.

Definition (exact, independent of row order, chunking or engine):

1. The m non-missing values are ranked by (value, record id): ranks 0..m−1, ties broken by id.
2. Window w = max(1, ⌈P/100 · m⌉) ranks (P in percent, default 2.5); blocks of B = w + 1
   consecutive ranks, shifted by a seeded phase o ∈ [0, B): block = ⌊(rank + o)/B⌋.
3. Inside a block the records are ordered by (h >> 24, rank), h = 64 seeded random bits of the
   record id, and positions 2j and 2j+1 swap their values; a lone last record keeps its value.

Properties: the multiset of values is preserved exactly; each value moves at most once (the
partner map is an involution); partners are at most w ranks apart (they share a block of w + 1
ranks); missing values are left in place. Cost: two sorts, O(m log m).

Privacy meaning: almost every record (all but at most one per block) receives another record's
value from within w ranks, so an attacker who knows a value cannot tell which record held it
better than among the block; the realised rank displacement is returned (mean ≈ w/3, max ≤ w)
with the share of records whose value actually changed (ties swap equal values).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from sdc_core import rng
from sdc_core.checks import check_positive
from sdc_core.data.columns import is_date, require
from sdc_core.errors import SdcInputError
from sdc_core.methods.common import MethodResult, resolve_ids
from sdc_core.methods.spec import EngineRun, Method, Param, Release

DRAW_PHASE, DRAW_ORDER = 0, 1


def window_ranks(m: int, window_percent: float) -> int:
    """w = max(1, ⌈P/100 · m⌉)."""
    return max(1, math.ceil(window_percent / 100.0 * m))


def swap_partners(values: np.ndarray, ids: np.ndarray, window_percent: float, seed: int,
                  step: int) -> tuple[np.ndarray, np.ndarray, int]:
    """For non-missing ``values`` (sortable) with record ``ids``: the index of each record's
    partner (itself when unpaired), each record's rank, and w."""
    m = len(values)
    w = window_ranks(m, window_percent)
    by_rank = np.lexsort((ids, values))          # record index at each rank
    rank = np.empty(m, dtype=np.int64)
    rank[by_rank] = np.arange(m)
    size = w + 1
    phase = rng.key(seed, step, DRAW_PHASE) % size
    block = (np.arange(m, dtype=np.int64) + phase) // size          # per rank
    h = rng.u64(ids[by_rank], rng.key(seed, step, DRAW_ORDER)) >> np.uint64(24)  # 40 bits
    if block[-1] < (1 << 23):
        order = np.argsort((block.astype(np.uint64) << np.uint64(40)) | h, kind="stable")
    else:
        order = np.lexsort((np.arange(m), h, block))
    sorted_block = block[order]
    start = np.searchsorted(sorted_block, sorted_block, side="left")
    pos = np.arange(m) - start
    nxt = np.minimum(np.arange(m) + 1, m - 1)
    has_next = (nxt != np.arange(m)) & (sorted_block[nxt] == sorted_block)
    mate = np.where(pos % 2 == 0, np.where(has_next, np.arange(m) + 1, np.arange(m)),
                    np.arange(m) - 1)
    partner_rank = np.empty(m, dtype=np.int64)
    partner_rank[order] = order[mate]             # rank -> partner's rank
    partner = by_rank[partner_rank[rank]]         # record -> partner record
    return partner, rank, w


def rank_swap(s: pd.Series, window_percent: float = 2.5, seed: int = 0, step: int = 0,
              rid: np.ndarray | None = None) -> MethodResult:
    """Rank-swap the column ``s`` (numeric or date; see the module docstring)."""
    p = check_positive("window_percent", window_percent)
    if p > 100:
        raise SdcInputError(f"window_percent must lie in (0, 100], not {window_percent!r}")
    require(s, ("number", "date"), "rank swapping")
    ids = resolve_ids(len(s), rid)
    present = s.notna().to_numpy()
    idx = np.flatnonzero(present)
    values = s.to_numpy()[idx]
    out = s.copy()
    info: dict[str, object] = {"window_percent": p, "window_ranks": 0, "changed_share": 0.0,
                               "swapped_share": 0.0, "mean_rank_displacement": 0.0,
                               "max_rank_displacement": 0}
    if len(idx) < 2:
        return MethodResult(out, info)
    key = values.astype("datetime64[ns]").astype(np.int64) \
        if is_date(s) else values
    partner, rank, w = swap_partners(np.asarray(key), ids[idx], p, seed, step)
    swapped = values[partner]
    out.iloc[idx] = swapped
    displacement = np.abs(rank[partner] - rank)
    info.update({"window_ranks": w, "changed_share": float(np.mean(swapped != values)),
                 "swapped_share": float(np.mean(partner != np.arange(len(idx)))),
                 "mean_rank_displacement": float(displacement.mean()),
                 "max_rank_displacement": int(displacement.max())})
    return MethodResult(out, info)


RANK_SWAP = Method(
    engine=EngineRun.WHOLE_TABLE,
    name="rank_swap", label="Rank swapping", order=40, run=rank_swap,
    release=Release.NUMERIC_PERTURBATION, random=True, target="column", columns="numeric",
    summary="of numeric columns", main="window_percent", off=0.0, sweep_values="1, 2.5, 5",
    params=(Param("window_percent", "number", 0.0, low=0.0, high=20.0, step=0.5, most=100.0,
                  label="Rank-swap window (% of records)",
                  help="Values are swapped between records at most this far apart in rank."),),
    describe=lambda r: f"Rank swap of {r['column']}: window {r['window_ranks']} ranks; "
                       f"{100 * r['changed_share']:.1f} % of values changed; rank displacement "
                       f"mean {r.get('mean_rank_displacement', 0):.1f}, max "
                       f"{r.get('max_rank_displacement', 0)}.")
