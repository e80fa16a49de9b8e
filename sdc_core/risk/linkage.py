"""The linkage attack (DESIGN §3b): what an attacker who knows the true values re-identifies.

The measures of :mod:`sdc_core.risk.profile` read the released keys as if they were true, so
they cannot see perturbation. Here the attacker knows person i's true quasi-identifiers x_i (and
any columns marked *known*) and the recipe's public recodings D (banding, top and bottom coding),
computes y_i = D(x_i) and looks for i among the released records z_j:

- exact columns E: the quasi-identifiers that no numeric perturbation touches; distance columns
  N: the numeric quasi-identifiers a numeric perturbation (rank swapping) touches, plus the known
  columns. Which is which is read from the recipe (each method declares its
  :class:`~sdc_core.methods.spec.Release`), never guessed from the data; a distance column that
  does not hold numbers or dates on both sides (codes a later step recoded to "other") is
  compared exactly instead. A quasi-identifier absent from the release is ignored.
- candidates C_i = {j : for every c in E, y_ic or z_jc is missing, or y_ic = z_jc};
- M_i = C_i when N is empty, else the j in C_i nearest to y_i by Euclidean distance over the N
  columns, each divided by the original column's standard deviation (ddof 1; 1 when that is 0
  or undefined), summing only the columns present in both; ties
  |d − d_min| ≤ 10⁻⁹·max(1, d_min) all belong to M_i;
- p_i = 1/|M_i| if i ∈ M_i, else 0 (the attacker picks one of the best candidates at random);
- ``linkage_reidentifications`` = Σ p_i, ``linkage_risk_percent`` = 100·mean(p_i),
  ``linkage_percent_certain`` = 100·mean(M_i = {i}).

It is sample-based: the attacker knows the person is in the file. With only public recodings
(and no missing values, or sdcMicro's α = 1) p_i = 1/f_k(i) of the protected file, so
``linkage_reidentifications`` equals ``expected_reidentifications``.

sdcMicro's ``dRisk`` (interval disclosure) is reported beside it when N is not empty: with s_c
the standard deviation (ddof 1, missing removed) of protected column c and k = 0.05, record i
counts when none of its original values x_ic, c in N, lies outside
[z_ic − k·s_c, z_ic + k·s_c]; a comparison with a missing value (in x, z or s_c) counts as
inside. ``drisk_percent`` = 100 · share of records that count. This is what sdcMicro 5.8.1's
``dRisk`` computes on its 200 reference cases at k = 0.01, 0.05 and 0.1
(tests/data/sdcmicro/drisk); DESIGN §3b's older wording ("at most one value outside, a record
with a missing value not counting") matches none of those outputs but a few.

Computation: records are grouped by the pattern of missing values on E ∪ N, on the attacker's
side and on the release's side; for every pair of patterns the exact columns present in both
become one integer key. Without distance columns the candidates are counted with ``bincount``.
With them, identical points are merged (with their counts) and the nearest release point in the
same key is found with a k-d tree (:class:`scipy.spatial.cKDTree`), the key being an extra
coordinate spaced wider than any distance inside a key. Cost O(n log n) per pair of patterns.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from sdc_core.columns import compare_keys, describe, is_date, is_number, restore
from sdc_core.errors import SdcInputError
from sdc_core.methods.spec import Release
from sdc_core.recipe import METHODS, Recipe, apply_recipe, run_column_step
from sdc_core.risk.keys import check_columns, combine_codes, densify

if TYPE_CHECKING:
    from scipy.spatial import cKDTree

#: Relative tolerance of a tie in distance.
TIE_RTOL = 1e-9
#: sdcMicro's default interval width of ``dRisk``, in standard deviations of the protected column.
DRISK_K = 0.05
#: Neighbours asked of the k-d tree at first (more are asked only where ties need them).
_FIRST_K = 2


@dataclass(frozen=True)
class LinkageResult:
    """The attack's per-record success probability ``p_link`` and number of best candidates
    ``candidates`` (|M_i|; 0 when no released record fits), with the columns it used."""

    exact: tuple[str, ...]
    distance: tuple[str, ...]
    p_link: np.ndarray = field(repr=False)
    candidates: np.ndarray = field(repr=False)
    drisk_percent: float | None = None

    @property
    def linkage_reidentifications(self) -> float:
        """Σ_i p_i: the expected number of people the attacker re-identifies."""
        return float(self.p_link.sum())

    @property
    def linkage_risk_percent(self) -> float:
        """100 · mean(p_i)."""
        return 100.0 * float(self.p_link.mean())

    @property
    def linkage_percent_certain(self) -> float:
        """100 · mean(M_i = {i}): the records the attacker finds for sure."""
        return 100.0 * float(np.mean(self.p_link == 1.0))

    def summary(self) -> dict[str, Any]:
        """The figures of the module docstring, JSON-ready."""
        out: dict[str, Any] = {
            "linkage_reidentifications": self.linkage_reidentifications,
            "linkage_risk_percent": self.linkage_risk_percent,
            "linkage_percent_certain": self.linkage_percent_certain,
            "linkage_exact_columns": list(self.exact),
            "linkage_distance_columns": list(self.distance)}
        if self.drisk_percent is not None:
            out["drisk_percent"] = self.drisk_percent
        return out

    def records(self) -> pd.DataFrame:
        """``p_link`` and ``candidates`` per input row, in input order."""
        return pd.DataFrame({"p_link": self.p_link, "candidates": self.candidates})


def attack_columns(qi: Sequence[str], known: Sequence[str], released: Sequence[str],
                   recipe: Recipe | None) -> tuple[list[str], list[str]]:
    """(exact columns E, distance columns N) of the module docstring."""
    perturbed = {c for step in (recipe.steps if recipe else [])
                 if METHODS[step["method"]].release is Release.NUMERIC_PERTURBATION
                 for c in ([step["column"]] if "column" in step else step["columns"])}
    present = set(released)
    exact = [c for c in qi if c in present and c not in perturbed]
    distance = [c for c in qi if c in present and c in perturbed]
    distance += [c for c in known if c in present]
    return exact, distance


def public_recodings(recipe: Recipe | None, columns: Sequence[str]
                     ) -> list[tuple[int, dict[str, Any]]]:
    """The recipe's public recodings D of ``columns`` as (step index, step), in order: the
    steps the attacker repeats (every other step is unknown to them)."""
    return [(i, step) for i, step in enumerate(recipe.steps if recipe else [])
            if METHODS[step["method"]].release is Release.RECODING
            and step["column"] in columns]


def resolved_recoding(step: dict[str, Any], report: dict[str, Any]) -> dict[str, Any] | None:
    """A public recoding as the release applied it, from its step's report: a recoding of rare
    levels as the levels it merged, percentile thresholds as the values they came to (both
    depend on the values the step was given, which an earlier perturbation may have moved);
    None when it changed nothing (the release is then the same as without it)."""
    if step["method"] == "recode":
        if not report.get("changed"):
            return None
        return {"method": "recode", "column": step["column"], "groups": report["merged"]}
    if step["method"] == "top_bottom_code":
        if not (report.get("top_coded") or report.get("bottom_coded")):
            return None
        return {"method": "top_bottom_code", "column": step["column"],
                **{k: report[k] for k in ("top", "bottom") if report.get(k) is not None}}
    return step


def attacker_view(original: pd.DataFrame, columns: Sequence[str], recipe: Recipe | None,
                  reports: Sequence[dict[str, Any]] | None = None) -> pd.DataFrame:
    """y = D(x) on ``columns``: the recipe's public recodings applied, in order, to the true
    values; with the steps' ``reports``, each as the release resolved it
    (:func:`resolved_recoding`). Each result is read in the original column's kind where its
    values allow, as in the release (:func:`sdc_core.columns.restore`)."""
    y = original[list(columns)].copy()
    for i, step in public_recodings(recipe, list(columns)):
        if reports is not None:
            step = resolved_recoding(step, reports[i])
            if step is None:
                continue
        c = step["column"]
        y[c] = restore(original[c], run_column_step(y[c], step, recipe.seed, i, None))
    return y


def check_roles(original: pd.DataFrame, qi: Sequence[str],
                known: Sequence[str]) -> tuple[list[str], list[str]]:
    """The quasi-identifiers and known columns, checked against the original's columns."""
    qi = check_columns(original, qi, "quasi-identifier")
    known = check_columns(original, known, "known")
    both = sorted(set(qi) & set(known), key=str)
    if both:
        raise SdcInputError(f"{', '.join(map(str, both))}: already a quasi-identifier; a known "
                            "column is an extra one")
    return qi, known


def linkage_attack(original: pd.DataFrame, protected: pd.DataFrame, qi: Sequence[str],
                   recipe: Recipe | None = None, known: Sequence[str] = (),
                   reports: Sequence[dict[str, Any]] | None = None) -> LinkageResult:
    """The linkage attack of ``original`` against ``protected`` (aligned by row) on the
    quasi-identifiers ``qi``; see the module docstring. Without ``recipe`` the released values
    are taken as they are: no public recoding, and every quasi-identifier compared exactly.
    ``reports``: what each step did (``apply_recipe``'s reports), so that the public recodings
    are applied as the release resolved them; without them the recipe is run on ``original``
    to get them."""
    if len(original) != len(protected):
        raise SdcInputError(f"the protected table has {len(protected)} records, the original "
                            f"{len(original)}: they must be aligned row by row")
    if len(original) == 0:
        raise SdcInputError("the table has no records")
    qi, known = check_roles(original, qi, known)
    exact, distance = attack_columns(qi, known, list(protected.columns), recipe)
    if recipe is not None and reports is None:
        reports = apply_recipe(recipe, original).reports
    y = attacker_view(original, exact + distance, recipe, reports)
    # a distance column that is not numbers or dates on both sides (codes recoded to "other")
    # is compared value by value
    exact += [c for c in distance if not (_measurable(y[c]) and _measurable(protected[c]))]
    distance = [c for c in distance if c not in exact]
    y_codes, z_codes = joint_codes(y, protected, exact)
    scale = np.array([_sd(_as_float(original[c], c)) for c in distance])
    y_num = np.column_stack([_as_float(y[c], c) for c in distance]) / scale if distance \
        else np.empty((len(y), 0))
    z_num = np.column_stack([_as_float(protected[c], c) for c in distance]) / scale \
        if distance else np.empty((len(y), 0))
    p, candidates = link(y_codes, z_codes, y_num, z_num)
    drisk = interval_disclosure(
        np.column_stack([_as_float(original[c], c) for c in distance]),
        np.column_stack([_as_float(protected[c], c) for c in distance])) if distance else None
    return LinkageResult(tuple(exact), tuple(distance), p, candidates, drisk)


def joint_codes(y: pd.DataFrame, z: pd.DataFrame,
                columns: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Integer codes (−1 = missing) of the attacker's and the released values of every exact
    column, from one factorisation of both, so equal values get equal codes: shape (n, |E|).
    Values are compared by what they are (:func:`sdc_core.columns.compare_keys`), so a release
    read back from a file, or a True/False column recoded to text, still links."""
    n = len(y)
    y_codes = np.empty((n, len(columns)), dtype=np.int64)
    z_codes = np.empty((n, len(columns)), dtype=np.int64)
    for j, c in enumerate(columns):
        yc, zc = y[c].reset_index(drop=True), z[c].reset_index(drop=True)
        if yc.dtype == zc.dtype and yc.equals(zc):  # an untouched column: one factorisation
            y_codes[:, j] = z_codes[:, j] = pd.factorize(yc, use_na_sentinel=True)[0]
            continue
        a, b = compare_keys(yc, zc)
        codes, _ = pd.factorize(np.concatenate([a, b]), use_na_sentinel=True)
        y_codes[:, j], z_codes[:, j] = codes[:n], codes[n:]
    return y_codes, z_codes


def _measurable(s: pd.Series) -> bool:
    return is_number(s) or is_date(s)


def _as_float(s: pd.Series, name: str) -> np.ndarray:
    """A distance column as floats (dates as days), NaN for missing values."""
    if is_date(s):
        days = (s - pd.Timestamp("1970-01-01", tz=getattr(s.dt, "tz", None))) / pd.Timedelta(days=1)
        return days.to_numpy(dtype=np.float64, na_value=np.nan)
    if not is_number(s):
        raise SdcInputError(f"the linkage attack compares column '{name}' by distance and takes "
                            f"numbers or dates; it holds {describe(s)}")
    return s.to_numpy(dtype=np.float64, na_value=np.nan)


def _sd(x: np.ndarray) -> float:
    present = x[~np.isnan(x)]
    sd = float(np.std(present, ddof=1)) if len(present) > 1 else 0.0
    return sd if np.isfinite(sd) and sd > 0 else 1.0


def interval_disclosure(x: np.ndarray, z: np.ndarray, k: float = DRISK_K) -> float:
    """sdcMicro's ``dRisk`` in percent (module docstring): x original, z protected, (n, d).

    ``100 · mean_i [no c with x_ic < z_ic − k·s_c or x_ic > z_ic + k·s_c]``, s_c the sd (ddof 1)
    of z's column c without its missing values; NaN compares as inside (IEEE comparisons with
    NaN are false)."""
    s = np.array([np.std(col[~np.isnan(col)], ddof=1) if (~np.isnan(col)).sum() > 1 else np.nan
                  for col in z.T])
    outside = (x < z - k * s) | (x > z + k * s)
    return 100.0 * float(np.mean(~outside.any(axis=1)))


def distances(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise Euclidean distance over the columns present in both (NaN = missing)."""
    diff = np.where(np.isnan(a) | np.isnan(b), 0.0, a - b)
    return np.sqrt(np.sum(diff * diff, axis=1))


def tie_threshold(d_min: np.ndarray) -> np.ndarray:
    return d_min + TIE_RTOL * np.maximum(1.0, d_min)


# --- the fast path -----------------------------------------------------------------------------

@dataclass
class _Points:
    """Distinct points of one missing-value pattern: codes (n_u, |E|), coordinates (n_u, |N|),
    how many records each stands for, and which point each record is."""

    codes: np.ndarray
    coords: np.ndarray
    count: np.ndarray
    of_record: np.ndarray
    records: np.ndarray


def _patterns(codes: np.ndarray, coords: np.ndarray) -> np.ndarray:
    """The missing-value pattern of every row as a bit mask of its present columns."""
    present = np.column_stack([codes >= 0, ~np.isnan(coords)])
    if present.all():
        return np.zeros(len(codes), dtype=np.int64)
    if present.shape[1] > 62:
        raise SdcInputError("the linkage attack takes at most 62 columns")
    return present.astype(np.int64) @ (np.int64(1) << np.arange(present.shape[1],
                                                                  dtype=np.int64))


def _distinct(codes: np.ndarray, coords: np.ndarray, records: np.ndarray,
              weight: np.ndarray | None) -> _Points:
    """The rows as points, each standing for ``weight`` records (1 without it); with distance
    columns, identical rows (same codes, same coordinates) merged into one point with their
    count, to keep the k-d trees small."""
    if coords.shape[1] == 0:
        every = len(records) == len(codes)  # one pattern: no copy
        count = np.ones(len(records), dtype=np.int64) if weight is None else weight[records]
        return _Points(codes if every else codes[records], coords if every else coords[records],
                       count, np.arange(len(records)), records)
    parts = [codes[records, j] + 1 for j in range(codes.shape[1])]
    cards = [int(p.max()) + 1 for p in parts]
    for j in range(coords.shape[1]):
        code, uniq = pd.factorize(coords[records, j], use_na_sentinel=False)
        parts.append(code.astype(np.int64, copy=False))
        cards.append(max(len(uniq), 1))
    key, _ = combine_codes(parts, cards)
    point, n_points = densify(key)
    first = np.full(n_points, len(records), dtype=np.int64)
    np.minimum.at(first, point, np.arange(len(records)))
    rows = records[first]
    count = np.bincount(point, minlength=n_points) if weight is None else \
        np.bincount(point, weights=weight[records], minlength=n_points).astype(np.int64)
    return _Points(codes[rows], coords[rows], count, point, records)


@dataclass
class _Pair:
    """Query points (one attacker pattern) against release points (one release pattern):
    their keys on the shared exact columns, and the shared distance columns."""

    ys: _Points
    zs: _Points
    key_y: np.ndarray
    key_z: np.ndarray
    bound: int
    dims: np.ndarray
    tree: cKDTree | None = None
    scale: float = 0.0
    near_d: np.ndarray | None = None
    near_i: np.ndarray | None = None


def _pair(ys: _Points, zs: _Points) -> _Pair:
    ye, ze = ys.codes[0] >= 0, zs.codes[0] >= 0
    shared = np.flatnonzero(ye & ze)
    dims = np.flatnonzero(~np.isnan(ys.coords[0]) & ~np.isnan(zs.coords[0]))
    if len(shared) == 0:
        key_y = np.zeros(len(ys.count), dtype=np.int64)
        key_z = np.zeros(len(zs.count), dtype=np.int64)
        return _Pair(ys, zs, key_y, key_z, 1, dims)
    both = np.concatenate([ys.codes[:, shared], zs.codes[:, shared]])
    key, bound = combine_codes([both[:, j] for j in range(len(shared))],
                               (both.max(axis=0) + 1).tolist())
    if len(dims):  # the key becomes a coordinate of the k-d tree: keep it small
        key, bound = densify(key)
    return _Pair(ys, zs, key[: len(ys.count)], key[len(ys.count):], bound, dims)


def _nearest(pair: _Pair) -> np.ndarray:
    """Distance from every query point to its nearest release point with the same key (inf
    when there is none); keeps the first neighbours for the tie count."""
    if len(pair.dims) == 0:
        present = np.bincount(pair.key_z, minlength=pair.bound)[pair.key_y] > 0
        return np.where(present, 0.0, np.inf)
    from scipy.spatial import cKDTree  # ~0.7 s to import: only when there are distance columns

    yc, zc = pair.ys.coords[:, pair.dims], pair.zs.coords[:, pair.dims]
    span = np.ptp(np.concatenate([yc, zc]), axis=0)
    pair.scale = 2.0 * float(np.sqrt(np.sum(span * span))) + 1.0
    pair.tree = cKDTree(np.column_stack([pair.key_z * pair.scale, zc]), balanced_tree=False,
                        compact_nodes=False)
    k = min(_FIRST_K, len(pair.key_z))
    d, i = pair.tree.query(np.column_stack([pair.key_y * pair.scale, yc]), k=k, workers=-1)
    pair.near_d, pair.near_i = d.reshape(len(yc), k), i.reshape(len(yc), k)
    first = pair.near_i[:, 0]
    same = pair.key_z[first] == pair.key_y
    return np.where(same, distances(yc, zc[first]), np.inf)


def _count_within(pair: _Pair, threshold: np.ndarray) -> np.ndarray:
    """Records (counts) of release points with the query's key within ``threshold``."""
    if len(pair.dims) == 0:
        counts = np.bincount(pair.key_z, weights=pair.zs.count, minlength=pair.bound)
        return np.where(threshold >= 0, counts[pair.key_y], 0.0)
    yc, zc = pair.ys.coords[:, pair.dims], pair.zs.coords[:, pair.dims]
    total = np.zeros(len(yc))
    todo = np.flatnonzero(np.isfinite(threshold))
    d, i, k = pair.near_d[todo], pair.near_i[todo], pair.near_i.shape[1]
    while len(todo):
        inside = _inside(pair, todo, i, threshold, yc, zc)
        total[todo] += np.where(inside, pair.zs.count[np.minimum(i, len(zc) - 1)], 0).sum(axis=1)
        more = np.isfinite(d[:, -1]) & inside[:, -1] & (k < len(zc))
        todo = todo[more]
        if not len(todo):
            break
        total[todo] = 0.0
        k = min(2 * k, len(zc))
        bound = tie_threshold(threshold[todo]) * (1 + 1e-12) + 1e-12
        d, i = pair.tree.query(np.column_stack([pair.key_y[todo] * pair.scale, yc[todo]]), k=k,
                               distance_upper_bound=float(bound.max()), workers=-1)
        d, i = d.reshape(len(todo), k), i.reshape(len(todo), k)
    return total


def _inside(pair: _Pair, rows: np.ndarray, idx: np.ndarray, threshold: np.ndarray,
            yc: np.ndarray, zc: np.ndarray) -> np.ndarray:
    """Which of the neighbours ``idx`` of query points ``rows`` share the key and lie within
    the threshold (by :func:`distances`, the definition, not the tree's arithmetic)."""
    valid = idx < len(zc)
    safe = np.where(valid, idx, 0)
    d = distances(np.repeat(yc[rows], idx.shape[1], axis=0), zc[safe.ravel()]).reshape(idx.shape)
    same = pair.key_z[safe] == pair.key_y[rows][:, None]
    return valid & same & (d <= threshold[rows][:, None])


def link(y_codes: np.ndarray, z_codes: np.ndarray, y_num: np.ndarray,
         z_num: np.ndarray, weight: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """p_i and |M_i| for attacker keys ``y_codes`` / released keys ``z_codes`` (n, |E|, jointly
    coded, −1 missing) and standardised distance columns ``y_num`` / ``z_num`` (n, |N|, NaN
    missing), record i of the release being the true match of query i.

    With ``weight`` (whole numbers), row i stands for ``weight[i]`` records that all have its
    (y, z): the engines' table of distinct (y, z) pairs gives every one of them its p and
    |M|."""
    n = len(y_codes)
    y_pat, z_pat = _patterns(y_codes, y_num), _patterns(z_codes, z_num)
    queries = [_distinct(y_codes, y_num, np.flatnonzero(y_pat == p), None)
               for p in np.sort(pd.unique(y_pat))]
    targets = [_distinct(z_codes, z_num, np.flatnonzero(z_pat == q), weight)
               for q in np.sort(pd.unique(z_pat))]
    d_min = np.full(n, np.inf)
    pairs = []
    for ys in queries:
        best = np.full(len(ys.count), np.inf)
        mine = [_pair(ys, zs) for zs in targets]
        for pair in mine:
            np.minimum(best, _nearest(pair), out=best)
        pairs += [(pair, best) for pair in mine]
        d_min[ys.records] = best[ys.of_record]
    size = np.zeros(n)
    for pair, best in pairs:
        size[pair.ys.records] += _count_within(pair, tie_threshold(best))[pair.ys.of_record]
    compatible = ((y_codes < 0) | (z_codes < 0) | (y_codes == z_codes)).all(axis=1)
    mine = compatible & (distances(y_num, z_num) <= tie_threshold(d_min))
    p = np.where(mine & (size > 0), 1.0 / np.maximum(size, 1.0), 0.0)
    return p, size.astype(np.int64)

