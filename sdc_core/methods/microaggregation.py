"""Microaggregation of numeric columns: MDAV, individual ranking, PCA ordering and optimal
univariate microaggregation, as sdcMicro defines them.

Records are put into groups of at least k and every value is replaced by the mean of its group
(the arithmetic mean of the *original* values), so group totals, column totals and the mean are
kept exactly (up to rounding). The algorithms differ in how they form the groups. sdcMicro's
behaviour (version 5.8.1) is stated with each (for mdav as its outputs in
``tests/data/sdcmicro/mdav`` show it); our own choices are marked as such.

**mdav** — maximum distance to average vector (Domingo-Ferrer & Mateo-Sanz 2002), as sdcMicro's
MDAV forms its groups. Distance between records x and y:
d(x, y) = Σ_j (x_j − y_j)² / σ_j², σ_j² the population variance of column j, computed in one
pass as E[x²] − E[x]² (divisor n; with the sample variance every distance is scaled by the same
(n−1)/n, so all comparisons are the same in exact arithmetic — we use sdcMicro's so that the
rounding is too; a constant column has weight 1). As in sdcMicro each term is computed in double
precision and rounded to single precision, and the terms are added in single precision in column
order: near-ties that single precision cannot tell apart are ties, broken as below. With m
records left:

1. while m ≥ 2k: c = the mean of the m records; r = the record farthest from c.
   If m ≥ 3k: s = the record farthest from r among the same m records (r's group not yet
   removed); the k records nearest to r form a group and are removed; then the k records nearest
   to s (at s's values, even if s itself went into r's group) among those left form a group.
   If 2k ≤ m < 3k: only r's group of k is formed.
2. the m records left (k ≤ m ≤ 2k − 1; all n if n < 2k) form the last group.

Ties: the farthest record is the earliest (lowest row position) among equal distances; the k
nearest are taken in order of distance and, among equal distances, the *latest* record first, so
r need not be in its own group when it has exact duplicates after it (with the earliest first
sdcMicro's outputs on tied data are not reproduced).
Every group has exactly k records but the last (k … 2k − 1). This reproduces sdcMicro's grouping
record for record on data without missing values — all 227 of its outputs with 2 to 4 columns,
and its MDAV on one column (75 cases; see below for what its wrapper runs then) — with two
deliberate exceptions: the variance, when its one-pass formula loses more than 6 digits to
cancellation (values with a large offset, where sdcMicro's weights are noise), is the two-pass
one; and while more than ``EXACT_CENTRE`` records are left the centre comes from a running total
instead of a sum in row order, which can move a distance by one unit in the last place of single
precision (only a near-tie can then go the other way). Group means are summed in row order, so
they can differ from sdcMicro's in the last bit.
Cost O(n²/k) distances, by nature; we find each farthest record and each k nearest with exact
pruning — triangle-inequality bounds against a list of the records sorted by distance to an
earlier centre, and nearest-neighbour lists from a k-d tree (of the records, or of the distinct
value rows when some value row has many copies) — evaluating the single-precision distance only
on the candidates that the bounds cannot separate (float32/float64 working distances carry
explicit error margins). ``tests/test_microaggregation.py`` compares it with sdcMicro's outputs.

**onedims** — individual ranking (sdcMicro's ``micro_onedims``/``mafast``): each column on its
own; its values sorted (ties in row order, R's stable ``order``), consecutive groups of k by
rank, the n mod k left-over values joining the last group: ⌊n/k⌋ groups, the last of
k + (n mod k) (sdcMicro's ``indexMicro``, ``mafast``).

**pca** — sdcMicro's ``micro_pca``: the columns are standardised (``scale``: mean, sample sd),
the records sorted by their score on the first principal component of the standardised data
(``princomp``: eigenvector of the largest eigenvalue of their covariance, sign fixed so that its
first loading is ≥ 0 — R's ``fix_sign = TRUE``; if it is 0, the first non-zero loading is made
positive, our choice), ascending, ties in row order (R's stable sort); then consecutive groups as
for onedims, every column replaced by its group mean. If the two largest eigenvalues are equal the
first component is not unique and no ordering can be said to be sdcMicro's. A constant column
(sd 0, an error in R) gets the score 0 (our choice).

**optimal_univariate** — optimal univariate microaggregation (Hansen & Mukherjee 2003), column by
column (not in sdcMicro): on the sorted values, the partition into runs of k … 2k − 1 consecutive
values with the least within-group sum of squares SSE = Σ_groups Σ (x − x̄_g)² — every optimal
k-partition of one variable is of that form. Shortest path over the sorted values:
best(i) = min_{k ≤ L ≤ 2k−1} best(i − L) + SSE(x_(i−L+1) … x_(i)), best(0) = 0, computed by
blocks of k positions (which depend only on earlier blocks); for small k the blocks of many
chunks run at once from all 2k − 1 possible entry states and the chunks are then chained (min-plus
algebra), for large k one chunk runs alone. Window SSEs are computed on values shifted by the
window's first value (no global prefix sums, which lose every digit at a million values). Ties
between equal totals go to the longest last group.

Missing values (never a sentinel; sdcMicro's ``mdav`` codes them −999 and computes distances with
a penalty): for onedims and optimal_univariate each column's missing values stay missing and its
present values are aggregated among themselves. For mdav and pca the records are split by which of
the columns they have: the records with the same pattern are aggregated among themselves, by the
algorithm, on their present columns (so every released value is a mean of at least k present
values); their missing values stay missing. A pattern (or, for the univariate methods, a column)
with fewer than k records cannot form a group: its values are left unchanged and counted in
``info["left_unchanged"]`` — suppress or drop them if they must not be released. Records missing
all the columns have nothing to aggregate.

Where we differ from sdcMicro's ``microaggregation()`` wrapper: with one column it runs
``mafast`` (= onedims) whatever the method, we run the algorithm asked for — for
``method = "mdav"`` on one column its ``$mx`` is our onedims (75 of 75 fixtures) and differs
from our mdav (68 of 75), while our mdav gives what sdcMicro's MDAV itself gives on that column
(75 of 75). With fewer than 2k records its mdav and mafast form one group of all of them (three
fixtures), as we do for every algorithm (at least k records are needed); where sdcMicro groups
through its ``indexMicro`` it stops with an error instead.

``info``: ``algorithm``, ``k``, ``records``, ``groups`` (groups formed, over all columns for the
univariate methods, with ``groups_per_column``), ``min_group_size`` and ``max_group_size`` (None
when no group could be formed), ``incomplete_records`` (records missing some of the columns),
``missing_values`` (cells), ``left_unchanged`` (records for mdav/pca, values for the univariate
methods, released unchanged because fewer than k share their pattern or column) and
``sse_share`` = SSE/SST on the standardised columns: with x̄_j, s_j the mean and sample standard
deviation (ddof 1) of column j's present values and x′ the released value,
SSE = Σ_j Σ_i ((x_ij − x′_ij)/s_j)², SST = Σ_j Σ_i ((x_ij − x̄_j)/s_j)², over the present values
(columns with s_j = 0 or fewer than two values left out); 0 = nothing changed, 1 = every value
replaced by its column mean.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from sdc_core.checks import check_whole, numeric_values
from sdc_core.errors import SdcInputError
from sdc_core.methods.common import TableResult, kdtree_workers
from sdc_core.methods.spec import EngineRun, Method, Param, Release

#: up to this many records left, MDAV's centre is summed in row order exactly as sdcMicro sums it
EXACT_CENTRE = 5000

ALGORITHMS = ("mdav", "onedims", "pca", "optimal_univariate")
UNIVARIATE = ("onedims", "optimal_univariate")


# --------------------------------------------------------------------------- checks and input

def _check_k(k: int) -> int:
    try:
        k = check_whole("k", k)
    except (TypeError, ValueError, SdcInputError):
        raise SdcInputError(f"k must be a whole number ≥ 2, not {k!r}") from None
    if k < 2:
        raise SdcInputError(f"k must be a whole number ≥ 2, not {k}")
    return k


def _matrix(df: pd.DataFrame, columns: Sequence[str]) -> tuple[list[str], np.ndarray]:
    if isinstance(columns, str):
        columns = [columns]
    cols = list(columns)
    if not cols:
        raise SdcInputError("columns: give at least one numeric column to microaggregate")
    if len(set(cols)) != len(cols):
        raise SdcInputError(f"columns: a column is named twice in {cols}")
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise SdcInputError(f"columns: no column {missing[0]!r} in the table")
    out = np.empty((len(df), len(cols)), dtype=np.float64)
    for j, c in enumerate(cols):
        out[:, j] = numeric_values(df[c], "microaggregation")
    return cols, out


# --------------------------------------------------------------------------- group sizes

def consecutive_sizes(m: int, k: int) -> np.ndarray:
    """sdcMicro's groups of consecutive ranks: ⌊m/k⌋ groups of k, the last one also taking the
    m mod k left over (one group of m when m < 2k)."""
    g = max(1, m // k)
    sizes = np.full(g, k, dtype=np.int64)
    sizes[-1] = m - k * (g - 1)
    return sizes


def _window_sse(xs: np.ndarray, k: int, total: int) -> np.ndarray:
    """``W[t, i − 1]`` = SSE of the sorted values ``xs[i − L : i]`` (the group of length
    L = 2k − 1 − t ending at position i), for i = 1 … ``total``; ``inf`` where it does not fit.
    Each window is shifted by its first value, which keeps the digits that global prefix sums
    would lose."""
    n = len(xs)
    span = 2 * k - 1
    starts = n - k + 1                       # windows of length ≥ k start at 0 … n − k
    pad = np.concatenate([xs, np.full(span, np.nan)])
    base = xs[:starts]
    s1 = np.zeros(starts)
    s2 = np.zeros(starts)
    d = np.empty(starts)
    w = np.full((k, total), np.inf)
    for o in range(span):
        np.subtract(pad[o:o + starts], base, out=d)
        s1 += d
        d *= d
        s2 += d
        length = o + 1
        if k <= length <= n:
            valid = n - length + 1           # groups starting at 0 … n − length
            sse = s2[:valid] - s1[:valid] * s1[:valid] / length
            np.maximum(sse, 0.0, out=sse)
            w[span - length, length - 1:n] = sse
    return w


def optimal_univariate_sizes(xs: np.ndarray, k: int) -> np.ndarray:
    """Sizes (in sorted order) of the optimal partition of the sorted values ``xs`` into runs of
    k … 2k − 1 (see the module docstring)."""
    n = len(xs)
    if n < 2 * k:
        return np.array([n], dtype=np.int64)
    span = 2 * k - 1
    # chunks in parallel, chained afterwards; or one chunk: the plain recursion by blocks of k
    lc = max(span, int(round(math.sqrt(n * k) / k)) * k) if k <= 12 and n > 64 * k else n
    lc = -(-lc // k) * k
    nchunks = -(-n // lc)
    w = _window_sse(xs, k, nchunks * lc)
    steps = lc // k
    start = np.full(span, np.inf)
    start[-1] = 0.0                           # best(0) = 0, nothing before

    def chain() -> np.ndarray:
        """One chunk: per block of k positions a k × k table (position × candidate)."""
        buf = np.empty(span + k)
        buf[:span] = start
        window = np.lib.stride_tricks.sliding_window_view(buf, k)[:k]
        blocks = w.T.reshape(steps, k, k)
        rows = np.arange(k)
        pick = np.empty((steps, k), dtype=np.int64)
        for q in range(steps):
            cand = window + blocks[q]
            t = cand.argmin(axis=1)
            pick[q] = t
            buf[span:] = cand[rows, t]
            buf[:span] = buf[k:].copy()
        return pick.reshape(-1)

    def run(entry: np.ndarray, keep: bool) -> tuple[np.ndarray, np.ndarray | None]:
        """Blocks of k positions in every chunk at once, from the entry states ``entry``
        (span × chunks × E: best at the span positions before each chunk; E entry states per
        chunk). Returns the best at the last span positions (span × chunks × E) and, with
        ``keep``, the best candidate t per position (chunk-position × chunks, E = 1)."""
        buf = np.empty((span + k,) + entry.shape[1:])
        buf[:span] = entry
        new = buf[span:]
        tmp = np.empty_like(new)
        pick = np.zeros((lc, nchunks), dtype=np.int8) if keep else None
        arg = np.zeros(new.shape, dtype=np.int8)
        for q in range(steps):
            block = slice(q * k, (q + 1) * k)
            np.add(buf[0:k], wt[0][block, :, None], out=new)
            if keep:
                arg[...] = 0
            for t in range(1, k):
                np.add(buf[t:t + k], wt[t][block, :, None], out=tmp)
                if keep:
                    better = tmp < new
                    np.copyto(new, tmp, where=better)
                    np.copyto(arg, t, where=better)
                else:
                    np.minimum(new, tmp, out=new)
            if keep:
                assert pick is not None
                pick[block] = arg[:, :, 0]
            buf[:span] = buf[k:].copy()
        return buf[:span], pick

    if nchunks == 1:
        picks = chain()
    else:
        # per candidate t: (position in chunk, chunk), contiguous for the block slices
        wt = [np.ascontiguousarray(w[t].reshape(nchunks, lc).T) for t in range(k)]
        basis = np.full((span, nchunks, span), np.inf)
        basis[np.arange(span), :, np.arange(span)] = 0.0
        exits, _ = run(basis, keep=False)     # exits[position, chunk, entry state]
        entries = np.empty((span, nchunks, 1))
        state = start
        for c in range(nchunks):
            entries[:, c, 0] = state
            state = (exits[:, c, :] + state).min(axis=1)
        _, pick = run(entries, keep=True)
        assert pick is not None  # kept
        picks = pick.T.reshape(-1)
    # length of the best last group ending at each position 1 … n (t ↔ L = span − t)
    lengths = (span - picks[:n].astype(np.int64)).tolist()
    sizes = []
    i = n
    while i > 0:
        length = lengths[i - 1]
        sizes.append(length)
        i -= length
    if i != 0:                                # cannot happen: every i ≥ k is reachable
        raise AssertionError("optimal univariate microaggregation lost its path")
    return np.array(sizes[::-1], dtype=np.int64)


def _labels_from_sizes(order: np.ndarray, sizes: np.ndarray, first: int) -> np.ndarray:
    labels = np.empty(len(order), dtype=np.int64)
    labels[order] = first + np.repeat(np.arange(len(sizes)), sizes)
    return labels


def pca_order(x: np.ndarray) -> np.ndarray:
    """Row order by the score on the first principal component of the standardised columns
    (sdcMicro's ``micro_pca``; see the module docstring), ties in row order."""
    m, p = x.shape
    sd = x.std(axis=0, ddof=1) if m > 1 else np.zeros(p)
    z = np.where(sd > 0, (x - x.mean(axis=0)) / np.where(sd > 0, sd, 1.0), 0.0)
    if p == 1:
        score = z[:, 0]
    else:
        z = z - z.mean(axis=0)
        _, vectors = np.linalg.eigh(z.T @ z / m)
        v = vectors[:, -1]
        nonzero = np.flatnonzero(np.abs(v) > 0)
        if len(nonzero) and v[nonzero[0]] < 0:
            v = -v
        score = z @ v
    return np.argsort(score, kind="stable")


# --------------------------------------------------------------------------- MDAV

def _mdav_weights(x: np.ndarray) -> np.ndarray:
    """1/σ² per column as sdcMicro computes it (one pass, row order, divisor n), or from the
    two-pass variance when the one-pass one has lost more than 6 digits; 1 for constant columns."""
    n = len(x)
    mean = np.cumsum(x, axis=0)[-1] / n
    one_pass = np.cumsum(x * x, axis=0)[-1] / n - mean * mean
    two_pass = x.var(axis=0)
    var = np.where(np.abs(one_pass - two_pass) <= 1e-6 * two_pass, one_pass, two_pass)
    return np.where(var > 0, 1.0 / np.where(var > 0, var, 1.0), 1.0)


class MdavGrouping:
    """sdcMicro's MDAV on one table ``x`` (n × p, no missing values, n ≥ 2k), one method per
    step (see the module docstring; :func:`mdav_labels` runs it).

    The state the steps share: ``alive`` (records not yet in a group), ``labels``, ``tot`` and
    ``left`` (the column totals and the number of the alive records), and the working list —
    ``ids``, the alive records sorted by their distance ``-neg_d0`` to an earlier centre ``zc0``
    (descending), with ``zc_arr`` their standardised float32 columns; records that go into a
    group are blanked with NaN there (``dead`` of them) until the next :meth:`compact`; ``ptr``
    skips the dead head of the list; ``work`` counts the records :meth:`farthest` scanned since
    the last :meth:`rebuild`.
    """

    def __init__(self, x: np.ndarray, k: int) -> None:
        n, p = x.shape
        self.x, self.k, self.n, self.p = x, k, n, p
        self.labels = np.zeros(n, dtype=np.int64)
        self.w = _mdav_weights(x)
        self.mu = x.mean(axis=0)
        self.sw = np.sqrt(self.w)
        self.zr = (x - self.mu) * self.sw                          # standardised, float64, n × p
        self.z32 = np.ascontiguousarray(self.zr.T, dtype=np.float32)  # for the bulk passes
        # error bounds between the float32/float64 working distances and sdcMicro's float distance
        self.eps = 1e-5 + 1.2e-7 * p
        self.eta = 1e-6 * (1.0 + float(np.abs(self.zr).max())) * math.sqrt(p)
        self.alive = np.ones(n, dtype=bool)
        self.tot = np.cumsum(x, axis=0)[-1].copy()
        self.left = n
        self.group = 0
        self._classes()
        self._neighbour_lists()
        # the working list and its buffers
        self.gbuf = np.empty(n, dtype=np.float32)
        self.tbuf = np.empty(n, dtype=np.float32)
        self.posmap = np.empty(n, dtype=np.int64)
        self.ids = np.arange(n)
        self.neg_d0 = np.empty(0)
        self.zc_arr = self.z32
        self.zc0: list[float] = []
        self.ptr = self.dead = self.work = 0

    def _classes(self) -> None:
        """Records with the same values ("classes") have the same distances: each record's
        class ``inv``, the records of each class in row order, its alive records."""
        self.uniq, inv = np.unique(self.x, axis=0, return_inverse=True)
        self.inv = inv.reshape(-1)
        self.u = u = len(self.uniq)
        self.by_class = np.argsort(self.inv, kind="stable")   # records of each class, row order
        self.class_start = np.zeros(u + 1, dtype=np.int64)
        np.cumsum(np.bincount(self.inv, minlength=u), out=self.class_start[1:])
        self.alive_count = np.bincount(self.inv, minlength=u)

    def _neighbour_lists(self) -> None:
        """Nearest-neighbour lists from a k-d tree: of the records when no record has many
        copies, else of the classes (exact as long as k records of a list are alive well
        inside it); none when they would take too much memory."""
        width = 2 * self.k + 10
        self.per_record = 2 * int(self.alive_count.max()) <= width
        points = self.zr if self.per_record else (self.uniq - self.mu) * self.sw
        self.width = min(len(points), width)
        self.use_lists = len(points) * self.width <= 8_000_000
        if self.use_lists:
            from scipy.spatial import cKDTree  # ~0.7 s to import: only here

            near_d, near_i = cKDTree(points).query(points, self.width,
                                                   workers=kdtree_workers(len(points)))
            self.near_d = near_d.reshape(len(points), self.width)
            self.near_i = near_i.reshape(len(points), self.width)
            self.reach = self.near_d[:, -1].tolist()

    # ------------------------------------------------------------------ distances

    def exact(self, values: np.ndarray, q: np.ndarray) -> np.ndarray:
        """sdcMicro's distance of each row of ``values`` to q: each term in double rounded to
        float, the terms added in float in column order."""
        t = values - q
        t *= t
        t *= self.w
        t32 = t.astype(np.float32)
        acc = t32[:, 0].copy()
        for j in range(1, self.p):
            acc += t32[:, j]
        return acc

    def farthest_of(self, cand: np.ndarray, q: np.ndarray) -> int:
        """Largest distance, the earliest record among equals."""
        if len(cand) == 1:
            return int(cand[0])
        f = self.exact(self.x[cand], q)
        return int(cand[f == f[f.argmax()]].min())

    def nearest_of(self, cand: np.ndarray, q: np.ndarray) -> np.ndarray:
        """The k smallest distances, the latest record first among equals."""
        if len(cand) == self.k:
            return cand
        f = self.exact(self.x[cand], q)
        return cand[np.lexsort((-cand, f))[: self.k]]

    def dist2(self, zq: list[float], a: int, b: int) -> np.ndarray:
        """Squared float32 distances of the working list's entries a … b − 1 to zq (z-space)."""
        g = self.gbuf[: b - a]
        tmp = self.tbuf[: b - a]
        zc_arr = self.zc_arr
        np.subtract(zc_arr[0, a:b], zq[0], out=g)
        np.multiply(g, g, out=g)
        for j in range(1, self.p):
            np.subtract(zc_arr[j, a:b], zq[j], out=tmp)
            np.multiply(tmp, tmp, out=tmp)
            np.add(g, tmp, out=g)
        return g

    # ------------------------------------------------------------------ the working list

    def rebuild(self, zc: np.ndarray) -> None:
        """Sort the alive records by their distance to zc, the new ``zc0``."""
        ids = self.ids[self.alive[self.ids]]
        d = ((self.zr[ids] - zc) ** 2).sum(axis=1)
        o = np.argsort(-d)
        self.ids = ids = ids[o]
        self.neg_d0 = -np.sqrt(d[o])
        self.zc_arr = np.ascontiguousarray(self.z32[:, ids])
        self.posmap[ids] = np.arange(len(ids))
        self.zc0 = zc.tolist()
        self.ptr = self.dead = self.work = 0

    def compact(self) -> None:
        """Drop the dead records from the working list."""
        keep = self.alive[self.ids]
        self.ids = self.ids[keep]
        self.neg_d0 = self.neg_d0[keep]
        self.zc_arr = np.ascontiguousarray(self.zc_arr[:, keep])
        self.posmap[self.ids] = np.arange(len(self.ids))
        self.ptr = self.dead = 0

    # ------------------------------------------------------------------ the steps

    def farthest(self, zq: list[float], lower: float, radius: float, q: np.ndarray,
                 count: bool) -> int:
        """The alive record farthest from q, given a lower bound on that largest distance and
        ``radius`` ≥ the distance from q to zc0 (z-space): only records with
        d0 ≥ lower − radius can be it (triangle inequality), a prefix of the sorted list."""
        eps, eta, ptr = self.eps, self.eta, self.ptr
        m = len(self.ids)
        cut = (1 - 2 * eps) * (lower - eta) - radius - eta
        end = int(self.neg_d0.searchsorted(-cut, "right")) if cut > 0 else m
        end = max(end, ptr + 1)
        if count:                 # the centre's prefix grows as the centre drifts: rebuild then
            self.work += end - ptr
        g = self.dist2(zq, ptr, end)
        top = math.sqrt(float(np.fmax.reduce(g)))
        thr = max(0.0, (1 - 4 * eps) * (top - eta) - eta) ** 2
        return self.farthest_of(self.ids[ptr + (g >= thr).nonzero()[0]], q)

    def nearest(self, i: int) -> np.ndarray:
        """The k alive records nearest to record i (at its values, alive or not): from its
        neighbour list when the list decides them, else from the working list."""
        k, eps, eta, alive = self.k, self.eps, self.eta, self.alive
        q = self.x[i]
        if self.use_lists and self.per_record:
            recs = self.near_i[i]
            sel = alive[recs].nonzero()[0]
            if len(sel) >= k:
                d = self.near_d[i]
                lim = (1 + 4 * eps) * (d[sel[k - 1]] + eta) + eta
                if lim < self.reach[i] - eta or self.width == self.n:
                    cnt = int(d[sel].searchsorted(lim, "right"))
                    return self.nearest_of(recs[sel[:cnt]], q)
        elif self.use_lists:
            cq = self.inv[i]
            row = self.near_i[cq]
            counts = self.alive_count[row]
            t = int(counts.cumsum().searchsorted(k))     # first class reaching k records
            if t < self.width:
                d = self.near_d[cq]
                lim = (1 + 4 * eps) * (d[t] + eta) + eta
                if lim < self.reach[cq] - eta or self.width == self.u:
                    end = int(d.searchsorted(lim, "right"))
                    by_class, class_start = self.by_class, self.class_start
                    cand = np.concatenate([by_class[class_start[c]:class_start[c + 1]]
                                           for c in row[:end][counts[:end] > 0].tolist()])
                    return self.nearest_of(cand[alive[cand]], q)
        zq = self.z32[:, i].tolist()
        g = self.dist2(zq, self.ptr, len(self.ids))
        gk = math.sqrt(float(np.partition(g, k - 1)[k - 1]))   # NaN (dead) sort last
        lim = ((1 + 4 * eps) * (gk + eta) + eta) ** 2 + 1e-36 * self.p
        return self.nearest_of(self.ids[self.ptr + (g <= lim).nonzero()[0]], q)

    def centre(self) -> tuple[np.ndarray, list[float]]:
        """The mean c of the alive records, and c in z-space."""
        if self.left <= EXACT_CENTRE:     # summed in row order, as sdcMicro does
            c = np.cumsum(self.x[self.alive], axis=0)[-1] / self.left
        else:                             # a running total: can differ in the last bits
            c = self.tot / self.left
        zc = [(a - b) * s for a, b, s in zip(c.tolist(), self.mu_l, self.sw_l, strict=True)]
        return c, zc

    def farthest_from_centre(self, c: np.ndarray, zc: list[float]) -> int:
        """r: the alive record farthest from the centre (rebuilding the working list around
        the centre when it has drifted far enough to make the scans long)."""
        if self.work > 2 * (len(self.ids) - self.ptr):
            self.rebuild(np.array(zc))
        while not self.alive[self.ids[self.ptr]]:
            self.ptr += 1
        delta = math.dist(zc, self.zc0)
        return self.farthest(zc, -self.neg_d0[self.ptr] - delta, delta, c, True)

    def farthest_from_record(self, r: int) -> int:
        """s: the alive record farthest from record r (r's group not yet removed)."""
        zq = self.z32[:, r].tolist()
        head = self.dist2(zq, self.ptr, min(len(self.ids), self.ptr + 32))
        lower = math.sqrt(float(np.fmax.reduce(head)))
        return self.farthest(zq, lower, math.dist(self.zr[r].tolist(), self.zc0), self.x[r],
                             False)

    def take_group(self, i: int) -> np.ndarray:
        """Form the next group: the k alive records nearest to record i."""
        members = self.nearest(i)
        self.labels[members] = self.group
        self.alive[members] = False
        if not self.per_record:
            for c in self.inv[members].tolist():
                self.alive_count[c] -= 1
        self.zc_arr[0, self.posmap[members]] = np.nan
        self.dead += len(members)
        self.group += 1
        return members

    def run(self) -> np.ndarray:
        """Form the groups (steps 1 and 2 of the module docstring); the group of each row."""
        k = self.k
        self.mu_l, self.sw_l = self.mu.tolist(), self.sw.tolist()
        self.rebuild((self.tot / self.n - self.mu) * self.sw)
        while self.left >= 2 * k:
            two = self.left >= 3 * k
            c, zc = self.centre()
            r = self.farthest_from_centre(c, zc)
            s = self.farthest_from_record(r) if two else -1
            members = self.take_group(r)
            if two:
                members = np.concatenate((members, self.take_group(s)))
            self.tot -= np.add.reduce(self.x[members], axis=0)
            self.left -= len(members)
            if self.dead > max(256, (len(self.ids) - self.ptr) // 8):
                self.compact()
        self.labels[self.alive] = self.group
        return self.labels


def mdav_labels(x: np.ndarray, k: int) -> np.ndarray:
    """Group number (in order of formation) of each row of ``x`` (n × p, no missing values) by
    sdcMicro's MDAV (see the module docstring and :class:`MdavGrouping`)."""
    if len(x) < 2 * k:
        return np.zeros(len(x), dtype=np.int64)
    return MdavGrouping(x, k).run()


# --------------------------------------------------------------------------- the method

def _patterns(present: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of the n × p mask ``present`` and each record's pattern number."""
    n, p = present.shape
    if present.all():
        return np.ones((1, p), dtype=bool), np.zeros(n, dtype=np.int64)
    if p <= 62:
        code = present.astype(np.int64) @ (np.int64(1) << np.arange(p, dtype=np.int64))
        codes, inverse = np.unique(code, return_inverse=True)
        patterns = (codes[:, None] >> np.arange(p)) & 1 == 1
        return patterns, inverse.reshape(-1)
    patterns, inverse = np.unique(present, axis=0, return_inverse=True)
    return patterns, inverse.reshape(-1)


def _labels(x: np.ndarray, k: int, algorithm: str) -> tuple[np.ndarray, dict[str, object]]:
    """Group labels (n × p, −1 where missing or left unchanged; groups numbered across the whole
    table) and the counts that go into ``info``."""
    n, p = x.shape
    present = ~np.isnan(x)
    labels = np.full((n, p), -1, dtype=np.int64)
    sizes: list[np.ndarray] = []
    left_unchanged = 0
    first = 0
    info: dict[str, object] = {}
    if algorithm in UNIVARIATE:
        per_column = []
        for j in range(p):
            idx = np.flatnonzero(present[:, j])
            if len(idx) < k:
                left_unchanged += len(idx)
                per_column.append(0)
                continue
            order = np.argsort(x[idx, j], kind="stable")
            if algorithm == "onedims":
                s = consecutive_sizes(len(idx), k)
            else:
                s = optimal_univariate_sizes(x[idx, j][order], k)
            labels[idx, j] = _labels_from_sizes(order, s, first)
            first += len(s)
            sizes.append(s)
            per_column.append(len(s))
        info["groups_per_column"] = per_column
    else:
        patterns, inverse = _patterns(present)
        for pi, pattern in enumerate(patterns):
            if not pattern.any():
                continue
            rows = np.flatnonzero(inverse == pi)
            if len(rows) < k:
                left_unchanged += len(rows)
                continue
            cols = np.flatnonzero(pattern)
            sub = x[np.ix_(rows, cols)]
            if algorithm == "mdav":
                lab = mdav_labels(sub, k)
                s = np.bincount(lab)
                lab = lab + first
            else:
                s = consecutive_sizes(len(rows), k)
                lab = _labels_from_sizes(pca_order(sub), s, first)
            labels[np.ix_(rows, cols)] = lab[:, None]
            first += len(s)
            sizes.append(s)
    all_sizes = np.concatenate(sizes) if sizes else np.zeros(0, dtype=np.int64)
    info.update({
        "groups": int(len(all_sizes)),
        "min_group_size": int(all_sizes.min()) if len(all_sizes) else None,
        "max_group_size": int(all_sizes.max()) if len(all_sizes) else None,
        "incomplete_records": int((~present).any(axis=1).sum()),
        "missing_values": int((~present).sum()),
        "left_unchanged": int(left_unchanged),
    })
    return labels, info


def _check(df: pd.DataFrame, columns: Sequence[str], k: int,
           algorithm: str) -> tuple[list[str], np.ndarray, int]:
    k = _check_k(k)
    if algorithm not in ALGORITHMS:
        raise SdcInputError(f"algorithm must be one of {', '.join(ALGORITHMS)}, not {algorithm!r}")
    cols, x = _matrix(df, columns)
    if len(df) < k:
        raise SdcInputError(f"microaggregation with k = {k} needs at least {k} records; the table "
                            f"has {len(df)}")
    return cols, x, k


def group_labels(df: pd.DataFrame, columns: Sequence[str], k: int = 3,
                 algorithm: str = "mdav") -> pd.DataFrame:
    """The group of every value that :func:`microaggregation` releases as a group mean: a frame
    of group numbers with df's index and the given columns (the same number along a record for
    mdav and pca; −1 where the value is missing or left unchanged)."""
    cols, x, k = _check(df, columns, k, algorithm)
    labels, _ = _labels(x, k, algorithm)
    return pd.DataFrame(labels, index=df.index, columns=cols)


def sse_share(original: np.ndarray, released: np.ndarray) -> float:
    """SSE/SST on the standardised columns (see the module docstring)."""
    sse = sst = 0.0
    for j in range(original.shape[1]):
        x = original[:, j]
        ok = ~np.isnan(x)
        if ok.sum() < 2:
            continue
        sd = float(np.std(x[ok], ddof=1))
        if not sd > 0:
            continue
        sse += float((((x[ok] - released[ok, j]) / sd) ** 2).sum())
        sst += float((((x[ok] - x[ok].mean()) / sd) ** 2).sum())
    return sse / sst if sst > 0 else 0.0


def microaggregation(df: pd.DataFrame, columns: Sequence[str], k: int = 3,
                     algorithm: str = "mdav") -> TableResult:
    """Microaggregate ``columns`` of ``df`` into groups of at least ``k`` by ``algorithm`` (mdav,
    onedims, pca or optimal_univariate; see the module docstring): every value becomes the mean
    of its group's original values."""
    cols, x, k = _check(df, columns, k, algorithm)
    labels, info = _labels(x, k, algorithm)
    out = x.copy()
    for j in range(x.shape[1]):
        lab = labels[:, j]
        grouped = lab >= 0
        if not grouped.any():
            continue
        g = lab[grouped]
        base = int(g.min())
        g = g - base
        vals = x[grouped, j]
        means = np.bincount(g, weights=vals) / np.maximum(np.bincount(g), 1)
        out[grouped, j] = means[g]
    result = {"algorithm": algorithm, "k": k, **info, "records": len(df),
              "sse_share": sse_share(x, out)}
    return TableResult(pd.DataFrame(out, index=df.index, columns=cols), result)


def _describe(r: dict[str, Any]) -> str:
    return (f"Microaggregation ({r['algorithm']}, k = {r['k']}) of {r['column']}: "
            f"{r['groups']} groups, the smallest of {r['min_group_size']}; within-group sum of "
            f"squares {100 * float(r['sse_share']):.2f} % of the total"
            + (f"; {r['left_unchanged']} values left unchanged (too few to group)"
               if r.get("left_unchanged") else "") + ".")


MICROAGGREGATION = Method(
    engine=EngineRun.WHOLE_TABLE,
    name="microaggregation", label="Microaggregation", order=50, run=microaggregation,
    release=Release.NUMERIC_PERTURBATION, target="columns", columns="numeric",
    summary="values replaced by the mean of their group of k (0 = off)", main="k", off=0,
    sweep_values="3, 5, 10",
    params=(Param("k", "whole", 0, low=0, high=20, step=1, required=True,
                  label="Group size k",
                  help="Each value becomes the mean of a group of at least k similar records."),
            Param("algorithm", "choice", "mdav", choices=ALGORITHMS, label="Algorithm",
                  help="mdav: groups of similar records over all chosen columns (sdcMicro); "
                       "onedims: each column on its own; pca: along the first principal "
                       "component; optimal_univariate: the least loss, one column at a time.")),
    describe=_describe)
