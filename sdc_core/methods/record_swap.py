"""Targeted record swapping of households between areas (sdcMicro's ``recordSwap``).

The units are households (the recipe's ``household`` column); the geography is a ``hierarchy``
of columns, coarsest first (region > district). Level l is the area given by the values of
hierarchy[0..l]. With L levels and H households (docs/methods.md, "Targeted record swapping"):

1. **Risk.** At level l each record counts the records of its area at that level that share its
   ``risk_variables`` values, c_l(i) = |{j : area_l(j) = area_l(i), x_j = x_i}|. A household is
   risky at level l when some member has c_l(i) < k (k = 0: no household is risky). An area at
   a finer level lies inside one at a coarser level, so c_l falls as l grows and a household
   risky at level l is risky at every finer one: it is swapped at the *coarsest* level where it
   is risky (with a donor outside its area there, so it leaves every finer area too).
2. **Targeted swaps**, level by level from the coarsest: each risky household not swapped yet
   gets a donor drawn at random among the households not swapped yet that lie outside its area
   at that level and share its values of a profile of ``similar`` (household values: those of
   its first record). The searches go in order: ``similar[0]``, ``similar[1]``, … among the
   households inside its area one level up (at the coarsest level there is none), then
   ``similar[0]``, ``similar[1]``, … anywhere outside its area; the first search with a
   candidate gives the donor. Each search looks first among the *calm* households (risky at no
   level), and among all households only when no calm one is left a candidate: a risky
   household is another's donor only when no calm one would do. A household for which no
   search finds a donor is tried again at the next finer level (it then leaves a smaller area
   only); one with no donor at any level stays as it is.
3. **Random swaps.** T = ⌊swap_rate · H + ½⌋ households should have another household's
   geography. When the targeted swaps give S < T, ⌈(T − S)/2⌉ more pairs are made: households
   not swapped yet are sampled at the finest level, spread over its areas (each area's share of
   the sample is its share of the households), and each gets a donor as in 2, from another area
   at the finest level (never another sampled household), until the pairs are made or no donor
   is left. So S ends at T or T + 1 (a swap moves two households) whenever donors can be found.
4. **The exchange.** A household and its donor exchange their full hierarchy and their
   ``carry_along`` values: every member of each gets the other's first record's values. Each
   household is swapped at most once.

**Raising k.** A targeted pair holds a risky household, and the random swaps stop at T or
T + 1, so a release with R(k) the households risky at some level moves at most
B(k) = max(2·|R(k)|, T + T mod 2) households. The risky sets nest (a class below k is below
k + 1), so B grows with k. B(k) is reached whenever every risky household gets a calm donor and
the random swaps find theirs; then no smaller k moved more than the release at k: raising k to
such a k never swaps fewer households. Beyond that (calm donors running out, when a large
share of households is risky) it is not guaranteed (docs/methods.md, "Targeted record
swapping").

Draws are keyed through :mod:`sdc_core.rng` by (seed, step, draw, household key), the household
key being the household id (an integer as it is, anything else hashed), and every order used is
one of values and keys, never of rows: the same seed swaps the same households whatever the row
order (the hierarchy must be the same for every member of a household; the ``similar`` and
``carry_along`` values are the first record's, so they should be household columns too). The
donor matching is vectorised: in each round every recipient proposes one donor drawn
uniformly among its candidates, and a proposal is accepted when its random priority is the
smallest of all proposals touching either household (the smallest one always is, so each round
makes at least one pair); the others propose again, up to :data:`MAX_ROUNDS` rounds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from sdc_core import rng
from sdc_core.checks import shown
from sdc_core.errors import SdcInputError
from sdc_core.households import household_codes
from sdc_core.methods.common import TableResult
from sdc_core.methods.spec import EngineRun, Method, Param, Release

#: Proposal rounds of one matching stage (each makes at least one pair while any is possible).
MAX_ROUNDS = 100
#: Samples of the random phase (each makes at least one pair or gives up on its sample).
MAX_FILLS = 64
#: The most similarity profiles a step may list.
MAX_PROFILES = 100
#: The most bytes of donor-search groups a step keeps for its next samples (step 3).
GROUP_BYTES = 64 << 20
PHASE_RISK, PHASE_RANDOM, PHASE_SAMPLE = 1, 2, 3


def _draw(phase: int, level: int, stage: int, fill: int, number: int) -> int:
    """A distinct draw number for each (phase, level, stage, sample, round draw)."""
    return (phase << 48) | (level << 40) | (stage << 32) | (fill << 20) | number


def _column_list(name: str, value: Any, df: pd.DataFrame, empty: bool = False) -> list[str]:
    """``value`` as a list of distinct column names of ``df``, or an error naming ``name``."""
    if value is None and empty:
        return []
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value) \
            or (not value and not empty):
        what = "a list of column names" if empty else "a non-empty list of column names"
        raise SdcInputError(f"record swapping: {name} must be {what}, not {shown(value)}")
    missing = [c for c in value if c not in df.columns]
    if missing:
        raise SdcInputError(f"record swapping: {name} names column(s) not in the data: "
                            f"{', '.join(missing)}")
    if len(set(value)) < len(value):
        raise SdcInputError(f"record swapping: {name} names a column twice")
    return list(value)


def _codes(s: pd.Series) -> np.ndarray:
    """Codes 0..m−1 of the values of ``s`` in sorted order (a blank is a value of its own)."""
    try:
        codes = pd.factorize(s, sort=True, use_na_sentinel=False)[0]
    except TypeError:  # values of several types that do not sort together
        codes = pd.factorize(s.astype(str), sort=True, use_na_sentinel=False)[0]
    return np.asarray(codes, dtype=np.int64)


def _dense(key: np.ndarray, top: int) -> np.ndarray:
    """The rank of each of ``key`` (whole numbers in [0, ``top``)) among the distinct keys, in
    sorted order: counted over a table of the keys when it is at most four times as long as
    the data (no hashing), else by ``pandas.factorize``."""
    if top <= max(4 * len(key), 1 << 16):
        seen = np.zeros(top, dtype=bool)
        seen[key] = True
        return (np.cumsum(seen, dtype=np.int64) - 1)[key]
    return np.asarray(pd.factorize(key, sort=True)[0], dtype=np.int64)


def _pair(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Codes of the pairs (a, b), in the sorted order of the pairs: :func:`_dense` of the key
    a·(max b + 1) + b."""
    if not len(a):
        return np.zeros(0, dtype=np.int64)
    width = int(b.max()) + 1
    return _dense(a.astype(np.int64) * width + b, (int(a.max()) + 1) * width)


def _check_params(df: pd.DataFrame, hierarchy: Any, similar: Any, swap_rate: Any, k: Any,
                  risk_variables: Any, carry_along: Any, household: Any
                  ) -> tuple[list[str], list[list[str]], float, int, list[str], list[str]]:
    """The step's parameters checked against ``df``: (hierarchy, profiles of ``similar``,
    swap_rate, k, risk_variables, carry_along), or an :class:`SdcInputError` naming the first
    bad one. The household column must be in the data and neither in the hierarchy nor carried
    along, swap_rate a number in [0, 1], k a whole number ≥ 0, ``similar`` 1 to
    :data:`MAX_PROFILES` non-empty lists of columns."""
    if household is None:
        raise SdcInputError('record swapping needs the household column: set the recipe\'s '
                            'top-level "household" to the column of household ids')
    if not isinstance(household, str) or household not in df.columns:
        raise SdcInputError(f"record swapping: household column {shown(household)} is not in "
                            "the data")
    levels = _column_list("hierarchy", hierarchy, df)
    if not isinstance(similar, list | tuple) or not similar:
        raise SdcInputError("record swapping: similar must be a non-empty list of lists of "
                            f"column names (the donor profiles, e.g. [[\"hsize\"]]), not "
                            f"{shown(similar)}")
    if len(similar) > MAX_PROFILES:
        raise SdcInputError(f"record swapping: similar lists at most {MAX_PROFILES} profiles")
    profiles = [_column_list(f"donor profile {j + 1} of similar", p, df)
                for j, p in enumerate(similar)]
    if isinstance(swap_rate, bool) or not isinstance(swap_rate, int | float) \
            or not 0.0 <= float(swap_rate) <= 1.0:
        raise SdcInputError(f"record swapping: swap_rate must be a number in [0, 1], not "
                            f"{shown(swap_rate)}")
    if isinstance(k, bool) or not isinstance(k, int | float) or not float(k).is_integer() \
            or k < 0:
        raise SdcInputError(f"record swapping: k must be a whole number ≥ 0 (0: no risk rule), "
                            f"not {shown(k)}")
    risky = _column_list("risk_variables", risk_variables, df, empty=True)
    carry = _column_list("carry_along", carry_along, df, empty=True)
    clash = [c for c in carry if c in levels]
    if clash:
        raise SdcInputError(f"record swapping: carry_along column(s) {', '.join(clash)} are "
                            "in the hierarchy already")
    if household in levels + carry:
        raise SdcInputError(f"record swapping: the household column '{household}' cannot be "
                            "swapped itself")
    return levels, profiles, float(swap_rate), int(k), risky, carry


def _match(recipients: np.ndarray, pool: np.ndarray, used: np.ndarray, area: np.ndarray,
           group: np.ndarray, hkey: np.ndarray, seed: int, step: int, draw: int
           ) -> tuple[np.ndarray, np.ndarray]:
    """Pair each household of ``recipients`` (not ``used``) with a donor of the ``pool`` (not
    ``used``) of the same ``group`` and another ``area``, at random (module docstring); marks
    both households of each pair ``used`` and returns (recipients, donors) of the pairs.

    The candidates are the pool's households of the recipients' groups, sorted once by
    (group, area, household key); a round drops those used since, which keeps the order, so
    a round costs the candidates and recipients left, not the H households."""
    made_r: list[np.ndarray] = []
    made_d: list[np.ndarray] = []
    r = recipients[~used[recipients]]
    if not len(r):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    span = int(area.max()) + 1
    wanted = np.zeros(int(group.max()) + 1, dtype=bool)
    wanted[group[r]] = True
    ps = np.flatnonzero(pool & ~used & wanted[group])
    p_cell = group[ps] * span + area[ps]            # (group, area) in one sortable key
    order = np.lexsort((hkey[ps], p_cell))          # by (group, area), then household key
    ps, p_cell = ps[order], p_cell[order]
    r_cell = group[r] * span + area[r]
    order = np.argsort(r_cell, kind="stable")       # sorted keys: searchsorted walks once
    r, r_cell = r[order], r_cell[order]
    best = np.empty(len(used), dtype=np.int64)
    for rnd in range(MAX_ROUNDS):
        keep = ~used[r]
        r, r_cell = r[keep], r_cell[keep]
        keep = ~used[ps]
        ps, p_cell = ps[keep], p_cell[keep]
        if not len(r) or not len(ps):
            break
        r_group = r_cell - r_cell % span
        lo = np.searchsorted(p_cell, r_group, side="left")
        hi = np.searchsorted(p_cell, r_group + span, side="left")
        alo = np.searchsorted(p_cell, r_cell, side="left")
        ahi = np.searchsorted(p_cell, r_cell, side="right")
        m = (hi - lo) - (ahi - alo)                 # candidates outside the own area
        some = m > 0
        r, r_cell, lo, alo, ahi, m = r[some], r_cell[some], lo[some], alo[some], ahi[some], \
            m[some]
        if not len(r):
            break
        u = rng.uniform(hkey[r], rng.key(seed, step, draw + 2 * rnd))
        j = np.minimum((u * m).astype(np.int64), m - 1)
        at = lo + j
        at = np.where(at >= alo, at + (ahi - alo), at)
        d = ps[at]
        prio = rng.u64(hkey[r], rng.key(seed, step, draw + 2 * rnd + 1))
        rank = np.empty(len(r), dtype=np.int64)
        rank[np.lexsort((r, prio))] = np.arange(len(r))
        best[d] = len(r)
        best[r] = rank
        np.minimum.at(best, d, rank)
        ok = (best[r] == rank) & (best[d] == rank)
        used[r[ok]] = True
        used[d[ok]] = True
        made_r.append(r[ok])
        made_d.append(d[ok])
    if not made_r:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    return np.concatenate(made_r), np.concatenate(made_d)


def _stages(level: int, n_profiles: int) -> list[tuple[bool, int]]:
    """The donor searches of one level in order, (anywhere, profile index): every profile
    inside the area one level up (below the coarsest level), then every profile anywhere."""
    inside = [(False, j) for j in range(n_profiles)] if level > 0 else []
    return inside + [(True, j) for j in range(n_profiles)]


def _groups(level: int, anywhere: bool, profile: np.ndarray, areas: list[np.ndarray]
            ) -> tuple[np.ndarray, np.ndarray]:
    """A donor search's groups (a donor shares the recipient's): each household's group (the
    profile anywhere; inside the area one level up, the pair (that area, profile)), and per
    group whether its households lie in two areas or more at ``level`` — a household of a
    group that does not is no one's candidate and has none. One household's area per group
    (any one) is compared with every member's."""
    group = profile if anywhere else _pair(areas[level - 1], profile)
    area = areas[level]
    one = np.zeros(int(group.max()) + 1, dtype=area.dtype)
    one[group] = area
    return group, np.bincount(group[area != one[group]], minlength=len(one)) > 0


def _stratified_sample(free: np.ndarray, area: np.ndarray, hkey: np.ndarray, need: int,
                       key: int) -> np.ndarray:
    """``need`` households of ``free`` spread over their areas (step 3): with u_h uniform in
    [0, 1) keyed by ``key`` and the household key, the i-th household (i = 0, 1, …, by u) of
    the m_a free households of area a gets the position (i + u_h) / m_a, and the ``need``
    smallest positions are taken (ties by household key), so each area's share of the sample
    is its share of the free households."""
    u = rng.uniform(hkey[free], key)
    a = area[free]
    order = np.lexsort((u, a))
    sa = a[order]
    start = np.searchsorted(sa, sa, side="left")
    size = np.searchsorted(sa, sa, side="right") - start
    spread = (np.arange(len(free)) - start + u[order]) / size   # stratified positions
    return free[order[np.lexsort((hkey[free[order]], spread))[:need]]]


# --------------------------------------------------------------------------- the households

@dataclass(frozen=True)
class _Households:
    """The households of the data, coded 0…H−1 in order of first appearance: ``hcode`` the
    household of each record, ``first`` the first record of each household, ``hkey`` its draw
    key (the household id, :func:`sdc_core.rng.ids_from_column`), ``record_areas`` each
    record's area code level by level (level l: the values of hierarchy[0..l]), ``areas`` the
    same per household, and ``profiles`` each household's code of each profile of
    ``similar`` (the values of its first record)."""

    hcode: np.ndarray
    first: np.ndarray
    hkey: np.ndarray
    record_areas: list[np.ndarray]
    areas: list[np.ndarray]
    profiles: list[np.ndarray]

    @property
    def size(self) -> int:
        """H, the number of households."""
        return len(self.hkey)


def _household_codes(df: pd.DataFrame, household: str
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(hcode, first, hkey) of :class:`_Households`: each record's household code in order of
    first appearance (:func:`sdc_core.households.household_codes`, which refuses a blank id as
    every household measure does), each household's first record and its draw key (from the
    household's id)."""
    hcode, _ = household_codes(df, household)
    first = np.flatnonzero(~pd.Series(hcode).duplicated().to_numpy())
    hkey = rng.ids_from_column(np.asarray(df[household].to_numpy()[first]))
    return hcode, first, hkey


def _record_areas(df: pd.DataFrame, household: str, levels: list[str], hcode: np.ndarray,
                  first: np.ndarray) -> list[np.ndarray]:
    """Each record's area code level by level: area_0 = the code of hierarchy[0],
    area_l = the code of the pair (area_{l−1}, hierarchy[l]), codes in the sorted order of
    the values; a household whose members differ in a hierarchy column is an
    :class:`SdcInputError`."""
    geo = []
    for c in levels:
        codes = _codes(df[c])
        bad = np.flatnonzero(codes != codes[first][hcode])
        if len(bad):
            i = bad[0]
            raise SdcInputError(
                f"record swapping: '{c}' is not one area per household: household "
                f"{shown(df[household].iloc[i])} has records with {c} "
                f"{shown(df[c].iloc[first[hcode[i]]])} and {shown(df[c].iloc[i])}; a geography "
                "column holds the same value for every member of a household")
        geo.append(codes)
    area_rec = [geo[0]]
    for codes in geo[1:]:
        area_rec.append(_pair(area_rec[-1], codes))
    return area_rec


def _profile_codes(df: pd.DataFrame, profiles: list[list[str]], first: np.ndarray
                   ) -> list[np.ndarray]:
    """Each household's code of each profile of ``similar``: the code of the tuple of its
    first record's values of the profile's columns: the key Σ code_c · Π_{c' after c} width_c'
    (codes and widths of the columns, in the profile's order) ranked by :func:`_dense`, the
    same codes as folding the columns pair by pair with :func:`_pair`; so two households share
    a code exactly when they share those values. A column's codes and a profile's are
    computed once, however many profiles name them."""
    columns: dict[str, np.ndarray] = {}
    done: dict[tuple[str, ...], np.ndarray] = {}
    n = len(first)
    for cols in profiles:
        if tuple(cols) in done:
            continue
        prof, top = np.zeros(n, dtype=np.int64), 1
        if not n:
            done[tuple(cols)] = prof
            continue
        for c in cols:  # the tuple as one mixed-radix key, ranked when it would grow too long
            if c not in columns:
                columns[c] = _codes(df[c].iloc[first])
            width = int(columns[c].max()) + 1
            if top * width > max(4 * n, 1 << 16):
                prof = _dense(prof, top)
                top = int(prof.max()) + 1
            prof, top = prof * width + columns[c], top * width
        done[tuple(cols)] = _dense(prof, top)
    return [done[tuple(cols)] for cols in profiles]


def _households(df: pd.DataFrame, household: str, levels: list[str],
                profiles: list[list[str]]) -> _Households:
    """The :class:`_Households` of ``df``, checked: every record has a household and every
    member of a household lies in the same areas."""
    hcode, first, hkey = _household_codes(df, household)
    area_rec = _record_areas(df, household, levels, hcode, first)
    areas = [a[first] for a in area_rec]            # per household, level by level
    return _Households(hcode, first, hkey, area_rec, areas, _profile_codes(df, profiles, first))


# --------------------------------------------------------------------------- the steps

def _risky_levels(df: pd.DataFrame, h: _Households, levels: list[str], risk_vars: list[str],
                  k: int) -> tuple[np.ndarray, dict[str, int]]:
    """Step 1: each household's coarsest level where it is risky (L when none) and the count
    of risky households per level. At level l a record's class count is
    c_l(i) = |{j : area_l(j) = area_l(i), x_j = x_i}| (x: the ``risk_variables`` values); a
    household is risky at l when some member has c_l(i) < k; with k = 0 none is."""
    n_levels = len(levels)
    first_risky = np.full(h.size, n_levels, dtype=np.int64)
    if k <= 0:
        return first_risky, {c: 0 for c in levels}
    risky_counts = {}
    x = np.zeros(len(df), dtype=np.int64)
    for c in risk_vars:
        x = _pair(x, _codes(df[c]))
    for lev in range(n_levels):
        cell = _pair(h.record_areas[lev], x)
        small = np.bincount(cell)[cell] < k
        risky_h = np.bincount(h.hcode[small], minlength=h.size) > 0
        risky_counts[levels[lev]] = int(risky_h.sum())
        first_risky[risky_h & (first_risky == n_levels)] = lev
    return first_risky, risky_counts


class _Swapping:
    """Steps 2 to 4 on the households ``h``, one method per step (module docstring). The
    state the steps share: ``used`` (households swapped already), ``swap_level`` (the level
    each moved at; L: not moved), the pairs made (``pairs_r`` recipients, ``pairs_d`` donors,
    ``made`` their number) and the figures of the report, ``by_profile`` (pairs per profile of
    ``similar``) and ``outside_parent`` (pairs found outside the area one level up)."""

    def __init__(self, h: _Households, levels: list[str], first_risky: np.ndarray,
                 n_profiles: int, seed: int, step: int) -> None:
        """Nothing swapped yet; ``first_risky`` is each household's level from step 1."""
        self.h, self.levels, self.first_risky = h, levels, first_risky
        self.seed, self.step = seed, step
        self.n_levels = len(levels)
        self.used = np.zeros(h.size, dtype=bool)
        self.swap_level = np.full(h.size, self.n_levels, dtype=np.int64)
        self.pairs_r: list[np.ndarray] = []
        self.pairs_d: list[np.ndarray] = []
        self.made = 0
        self.by_profile = [0] * n_profiles
        self.outside_parent = 0
        #: a profile listed again: the first with the same columns (their codes are one array)
        self.alias = [next(i for i, q in enumerate(h.profiles) if q is p) for p in h.profiles]
        #: the groups of the searches of one level, kept for the random phase's samples (the
        #: oldest dropped past :data:`GROUP_BYTES`)
        self.groups: dict[tuple[int, bool, int], tuple[np.ndarray, np.ndarray]] = {}

    def group(self, level: int, anywhere: bool, j: int) -> tuple[np.ndarray, np.ndarray]:
        """:func:`_groups` of a search, kept while the searches stay at ``level`` and the
        arrays made for them take at most :data:`GROUP_BYTES` (a profile's own codes, the
        groups of a search anywhere, cost nothing)."""
        key = (level, anywhere, self.alias[j])
        if key not in self.groups:
            if any(k[0] != level for k in self.groups):
                self.groups.clear()
            self.groups[key] = _groups(level, anywhere, self.h.profiles[j], self.h.areas)
            while len(self.groups) > 1 and self._group_bytes() > GROUP_BYTES:
                del self.groups[next(iter(self.groups))]
        return self.groups[key]

    def _group_bytes(self) -> int:
        """The bytes of the arrays kept by :meth:`group` besides the profiles' codes."""
        return sum(reach.nbytes + (0 if anywhere else group.nbytes)
                   for (_, anywhere, _), (group, reach) in self.groups.items())

    def search(self, todo: np.ndarray, level: int, pools: tuple[tuple[np.ndarray, int], ...],
               phase: int) -> np.ndarray:
        """The donor searches of ``level`` (:func:`_stages`) for the households ``todo``, in
        order, each among the ``pools`` in turn, until every household has a donor outside
        its area at ``level``; a pool comes with the sample number of its draws, which are
        _draw(phase, level, search, sample, 0). A search matches only the households whose
        group reaches another area (the others have no candidate). Returns the households
        left without one."""
        for s, (anywhere, j) in enumerate(_stages(level, len(self.h.profiles))):
            for pool, fill in pools:
                if not len(todo):
                    return todo
                group, reach = self.group(level, anywhere, j)
                hopeful = todo[reach[group[todo]]]
                if not len(hopeful):
                    break
                r, d = _match(hopeful, pool, self.used, self.h.areas[level], group,
                              self.h.hkey, self.seed, self.step, _draw(phase, level, s, fill, 0))
                self.swap_level[r] = self.swap_level[d] = level
                self.pairs_r.append(r)
                self.pairs_d.append(d)
                self.made += len(r)
                self.by_profile[j] += len(r)
                self.outside_parent += len(r) if anywhere and level > 0 else 0
                todo = todo[~self.used[todo]]
        return todo

    def targeted(self) -> tuple[int, dict[str, int], int]:
        """Step 2: level by level from the coarsest, the households first risky there and
        those left without a donor one level coarser look for a donor outside their area,
        a calm one (risky at no level: draws of sample 0) before any (sample 1). Returns the
        households swapped, the risky ones swapped per level, and the risky ones left."""
        everyone = np.ones(self.h.size, dtype=bool)
        calm = self.first_risky == self.n_levels    # risky at no level
        left = np.zeros(0, dtype=np.int64)
        for lev in range(self.n_levels):
            todo = np.concatenate([left, np.flatnonzero(self.first_risky == lev)])
            todo = todo[~self.used[todo]]
            left = self.search(todo, lev, ((calm, 0), (everyone, 1)), PHASE_RISK)
        risky_swapped = {c: int((self.used & (self.first_risky == lev)).sum())
                         for lev, c in enumerate(self.levels)}
        without = int(((self.first_risky < self.n_levels) & ~self.used).sum())
        return int(self.used.sum()), risky_swapped, without

    def random(self, rate: float) -> tuple[int, int]:
        """Step 3: T = ⌊rate · H + ½⌋; while fewer than T households are swapped, a sample of
        ⌈(T − S)/2⌉ households not swapped yet (:func:`_stratified_sample`) looks for donors
        at the finest level, at most :data:`MAX_FILLS` samples; a household that finds none is
        not sampled again. Returns T and the pairs made."""
        target = int(np.floor(rate * self.h.size + 0.5))
        need = max(0, -(-(target - int(self.used.sum())) // 2))
        finest = self.n_levels - 1
        failed = np.zeros(self.h.size, dtype=bool)
        random_pairs = 0
        for fill in range(MAX_FILLS):
            if need <= 0:
                break
            free = np.flatnonzero(~self.used & ~failed)
            if len(free) < 2:
                break
            chosen = _stratified_sample(
                free, self.h.areas[finest], self.h.hkey, need,
                rng.key(self.seed, self.step, _draw(PHASE_SAMPLE, 0, 0, fill, 0)))
            pool = ~self.used & ~failed
            pool[chosen] = False
            before = self.made
            todo = self.search(chosen, finest, ((pool, fill),), PHASE_RANDOM)
            random_pairs += self.made - before
            need -= self.made - before
            failed[todo] = True
        return target, random_pairs

    def partners(self) -> np.ndarray:
        """Each household's partner of step 4 (itself when it was not swapped)."""
        partner = np.arange(self.h.size)
        if self.pairs_r:
            r, d = np.concatenate(self.pairs_r), np.concatenate(self.pairs_d)
            partner[r], partner[d] = d, r
        return partner

    def moved_finer(self) -> int:
        """The risky households that moved only at a finer level than their first risky
        one: first_risky(h) < swap_level(h) < L."""
        return int(((self.first_risky < self.swap_level)
                    & (self.swap_level < self.n_levels)).sum())


def _exchange(df: pd.DataFrame, changed: list[str], h: _Households, partner: np.ndarray
              ) -> tuple[pd.DataFrame, int]:
    """Step 4: every member of a household with a partner p takes the values of ``changed``
    of p's first record, value(i) = value(first(partner(hcode(i)))); the others keep theirs.
    Returns the new columns (``df``'s index and dtypes) and the number of records changed."""
    moved = partner[h.hcode] != h.hcode
    source = np.arange(len(df))
    source[moved] = h.first[partner[h.hcode[moved]]]
    values = pd.DataFrame({c: pd.Series(df[c].array.take(source), index=df.index, name=c)
                           for c in changed}, index=df.index)
    return values, int(moved.sum())


def record_swap(df: pd.DataFrame, columns: list[str] | None = None, hierarchy: Any = None,
                similar: Any = None, swap_rate: float = 0.05, k: int = 3,
                risk_variables: Any = None, carry_along: Any = None,
                household: str | None = None, seed: int = 0, step: int = 0,
                rid: np.ndarray | None = None) -> TableResult:
    """Swap the geography of households between areas (see the module docstring).

    ``columns`` are the columns the step changes: the hierarchy, then ``carry_along`` (given or
    not, they are these). ``rid`` is not used: draws are keyed by the household ids. Returns
    the new values of those columns and the report: ``households`` H, ``target_households``
    T, ``households_swapped`` and ``swapped_share`` (of H), ``records_changed``,
    ``risky_households`` (per level: risky there), ``risky_swapped`` (per level: the households
    first risky there that step 2 swapped, for their own risk or as another's donor),
    ``risky_without_donor`` (risky households step 2 left as they were),
    ``risky_moved_finer`` (risky households that moved, but only at a finer level than the one
    where they are risky: no donor there),
    ``targeted_households`` (swapped by step 2, donors included), ``random_households``
    (swapped by step 3), ``donors_by_similar``
    (pairs per profile of ``similar``) and ``donors_outside_parent`` (pairs found outside the
    area one level up).
    """
    levels, profiles, rate, k, risky_vars, carry = _check_params(
        df, hierarchy, similar, swap_rate, k, risk_variables, carry_along, household)
    changed = levels + carry
    if columns is not None and list(columns) != changed:
        raise SdcInputError(f"record swapping changes its hierarchy and carry_along columns "
                            f"({', '.join(changed)}), not {', '.join(map(str, columns))}")
    assert household is not None
    h = _households(df, household, levels, profiles)
    first_risky, risky_counts = _risky_levels(df, h, levels, risky_vars, k)      # 1.
    swaps = _Swapping(h, levels, first_risky, len(profiles), seed, step)
    targeted, risky_swapped, without = swaps.targeted()                          # 2.
    target, random_pairs = swaps.random(rate)                                    # 3.
    partner = swaps.partners()                                                   # 4.
    values, records_changed = _exchange(df, changed, h, partner)
    n_h = h.size
    swapped = int((partner != np.arange(n_h)).sum())
    info: dict[str, object] = {
        "households": n_h, "target_households": target, "households_swapped": swapped,
        "swapped_share": swapped / n_h if n_h else 0.0, "records_changed": records_changed,
        "risky_households": risky_counts, "risky_swapped": risky_swapped,
        "risky_without_donor": without, "risky_moved_finer": swaps.moved_finer(),
        "targeted_households": targeted, "random_households": 2 * random_pairs,
        "donors_by_similar": swaps.by_profile, "donors_outside_parent": swaps.outside_parent,
        "k": k, "swap_rate": rate}
    return TableResult(values, info)


def _describe(r: dict[str, Any]) -> str:
    """The one-line summary of a report ``r`` of :func:`record_swap` (households swapped, target,
    risky households by level, risky ones left without a donor)."""
    risky = ", ".join(f"{c} {v}" for c, v in r["risky_households"].items())
    return (f"Record swapping: {r['households_swapped']} of {r['households']} households "
            f"({100 * r['swapped_share']:.1f} %) took another household's geography (target "
            f"{r['target_households']}); risky households by level: {risky}; "
            f"{r['risky_without_donor']} risky without a donor.")


RECORD_SWAP = Method(
    engine=EngineRun.PANDAS_ONLY,
    engine_reason="it pairs households across the whole table",
    name="record_swap", label="Targeted record swapping", order=35, run=record_swap,
    release=Release.PERTURBATION, random=True, target="columns", columns="categorical",
    summary="of households between areas", main="swap_rate", off=0.0,
    sweep_values="0.01, 0.05, 0.1",
    params=(
        Param("hierarchy", "columns", None, required=True, control=False,
              label="Geographic hierarchy, coarsest first",
              help="The area columns (region, district, …); a swap exchanges all of them."),
        Param("similar", "column_lists", None, required=True,
              label="Donor profiles",
              help="Household columns a donor must share, with fallbacks: [[\"hsize\", "
                   "\"htype\"], [\"hsize\"]]."),
        Param("swap_rate", "number", 0.05, low=0.0, high=0.2, step=0.01, most=1.0,
              label="Swap rate (share of households)",
              help="At least this share of households takes another household's geography."),
        Param("k", "whole", 3, low=0, high=10, step=1,
              label="k threshold (0 = no risk rule)",
              help="A household with a member whose risk-variable class in its area has "
                   "fewer than k records is swapped out of that area."),
        Param("risk_variables", "columns", None,
              label="Risk variables",
              help="The columns whose classes within an area the k rule counts."),
        Param("carry_along", "columns", None,
              label="Carried along",
              help="Household columns swapped together with the hierarchy.")),
    describe=_describe,
    extra={"household": True, "implied_columns": ("hierarchy", "carry_along"),
           "may_be_empty": ("risk_variables", "carry_along")})
