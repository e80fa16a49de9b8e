"""SUDA2 special uniques: sdcMicro's ``suda2`` (Elliot, Manning et al.; the SUDA2 search of
Manning, Haglin & Keane, 2008), with sdcMicro's defaults (``DisFraction`` = 0.01, the scores of
Elliot et al., ``original_scores = TRUE``).

With M key variables (sdcMicro pads 1 or 2 keys with constant columns to M = 3, and so does
this module) and n records:

- Record i is *unique on* a set S of keys when it has a value on every key of S and no other
  record has the same values on S. A missing value is never part of a unique pattern and never
  equals a value (sdcMicro's ``missing = -999``: a cell with that code is never matched).
- S is a *minimal sample unique* (MSU) of i when i is unique on S and on no S minus one key
  (hence on no proper subset). Every S ⊆ keys is considered, sizes 1 to M.
- SUDA score: ``score_i = Σ_{MSUs S of i} w(|S|)`` with ``w(s) = ∏_{j=s}^{M−1} (M − j) =
  (M − s)!`` (e.g. M = 3: w = 2, 1, 1). Only records unique on all M keys can score above 0.
- DIS score: with U the number of records unique on all keys, P the number of records whose
  full key pattern is shared by exactly one other record (triples and more count 0),
  f = ``dis_fraction``, ``Dis = U·f / (U·f + P·(1 − f))``, ``Q = 1 + (8 − M)/20`` and
  ``A = Σ_{score_k > 0} score_k^(−Q)``: ``dis_i = 1 / (1 + (U/Dis − U) / (score_i^Q · A))``
  for score_i > 0, else 0.
  ``dis_method`` chooses how the formula is evaluated:

  * ``"formula"`` (the default): as written, in double precision, with U the true number of
    sample uniques. Then ``U/Dis − U = P·(1 − f)/f`` exactly (U cancels; a record that scores
    is unique on all keys, so U ≥ 1 whenever a score is positive).
  * ``"sdcmicro"``: as sdcMicro 5.8.1 evaluates it, to compare with its output. ``Dis``, ``Q``
    and ``U/Dis − U`` are single-precision numbers, so U no longer cancels exactly, and U
    counts only the sample uniques that are alone in their 16-bit hash bucket. The bucket of
    a record is ``h``, with ``h = 0`` and then, key by key, ``h = rotl16(h, 1) + v mod 2¹⁶``
    (rotate left by one bit within 16 bits, then add), where v is the key's value as sdcMicro
    reads it: a number truncated to an integer, −999 for a missing value (a categorical
    column: its category number from 1; any other column: its values numbered 1, 2, … in
    sorted order). sdcMicro's constant padding columns move every bucket alike, so they do not
    change U. When U is 0 (every unique shares a bucket with another record) every positive
    score gets NaN (0/0), as sdcMicro's do.

  The default is the formula: the hash count is an accident of the implementation, not a
  property of the data (it depends on how the values are coded; on sdcMicro's ``testdata``
  with 7 keys it counts 40 of the 157 sample uniques, and a small table can lose all of them),
  and single precision only adds rounding. Since U cancels, the two differ only by that
  rounding, except where sdcMicro's U is 0. On sdcMicro's own outputs
  (``tests/data/sdcmicro/suda2``, 230 result sets) ``"sdcmicro"`` reproduces every DIS score to
  1e-15, the NaN of the 14 sets where its U is 0 included; ``"formula"`` equals 51 of them to
  1e-15 and the other 165 finite sets to 2.1e-7 relative (5e-8 absolute), and gives finite
  scores where those 14 have NaN.
- Attribute contributions (sdcMicro's ``attribute_contributions``): every MSU S of record i
  credits ``w(|S|)`` to each of its keys (``contribution[i, j]``; sdcMicro's per-record
  ``contributionPercent`` is ``contribution[i, j] / score_i``), and the contribution of key j is
  ``100 · Σ_i contribution[i, j] / Σ_i score_i`` percent. An MSU of several keys credits each of
  them, so the percentages add up to more than 100. One more rule, which sdcMicro applies: a
  (key, value) item whose records are exactly those of an item of an earlier key (a
  "correlated" item in SUDA2's terms; the earliest such item is its base) credits its base's
  key instead of its own in an MSU of 3 or more keys, and in an MSU of 2 keys whose other item
  is also correlated neither key is credited. Scores are not affected; without such items
  (the usual case) this is the plain rule above. sdcMicro's outputs show the first part (an
  MSU of 3 keys in ``tests/data/sdcmicro/suda2`` case 185, where the plain rule differs from
  them); none of them has an MSU of two correlated items.
- Attribute level contributions (sdcMicro's ``attribute_level_contributions``): for key j and
  each of its values v (sorted), ``100 · Σ_{i: x_ij = v} contribution[i, j] /
  Σ_i contribution[i, j]`` percent: how the key's contribution splits over its values.

Where this module departs from sdcMicro, on purpose: a key's values are compared as they are
(sdcMicro truncates numeric keys to integers, so 1.2 and 1.7 would be one value, and reads a
text column of a data.frame as missing everywhere); when no record scores, the contributions
are 0 (sdcMicro: NaN), and so are the level contributions of a key with no contribution
(sdcMicro: NaN, 0/0); the DIS score's U, by default, is the true number of sample uniques (see
``dis_method``).

The search visits the key subsets level by level (size 1, 2, …), vectorised over records, on
the table of distinct key patterns (only a pattern held by one record can have an MSU). A
record is *alive* on S when it has values on S and is not unique on S (then neither on any
subset of S). S is visited only when some record is alive on every S minus one key (a record
unique on a subset of S cannot have S as an MSU: the Apriori bound), and only the groups (equal
values on S minus its last key) that hold such a record are counted again. A subset whose
records all became unique is dropped with all its supersets. Cost: up to 2^M − 1 passes over
the patterns still in play; about 2–3× per extra key (on 100,000 records: 4 keys ≈ 0.03 s,
7 keys ≈ 0.4 s, 10 keys ≈ 3 s). It refuses more than ``MAX_SUDA2_KEYS`` keys, or a table whose
working memory (:func:`suda2_memory`) would exceed ``MAX_SUDA2_BYTES``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from math import comb, factorial

import numpy as np
import pandas as pd

from sdc_core.checks import check_probability
from sdc_core.errors import SdcInputError
from sdc_core.keys import KeyCodes, combine_codes, densify, encode_keys

#: SUDA2 looks at up to 2^m − 1 subsets of the keys; above this many keys it refuses.
MAX_SUDA2_KEYS = 20
#: It also refuses when its working tables (one per key subset of the widest level, C(m, m/2)
#: of them, each up to ~16 bytes per distinct key pattern) would exceed this many bytes.
MAX_SUDA2_BYTES = 2 << 30
#: sdcMicro pads the keys with constant columns up to this many.
MIN_SUDA2_VARIABLES = 3
DEFAULT_DIS_FRACTION = 0.01
#: How the DIS score is evaluated (module docstring): the formula with the true number of
#: sample uniques, or as sdcMicro 5.8.1 evaluates it.
DIS_METHODS = ("formula", "sdcmicro")
#: sdcMicro's code for a missing key value, which its hash adds like any other value.
SDCMICRO_MISSING = -999


@dataclass(frozen=True)
class Suda2Result:
    """Per-record SUDA and DIS scores, the contributions and every MSU found.

    Made by :func:`suda2`. :meth:`summary` gives the figures as plain Python values,
    :meth:`records` the scores per row and :meth:`top_records` the highest-scoring records with
    their key values and MSUs.

    ``score``, ``dis_score``: per input row. ``contribution[i, j]``: the score of record i that
    key ``qi[j]`` is credited with (see the module docstring). ``n_sample_uniques``: records
    unique on all keys; ``n_dis_uniques``: the U the DIS score used (the same, or sdcMicro's
    hash count with ``dis_method="sdcmicro"``). ``msu_records`` and
    ``msu_subsets`` list every MSU: the row and the set of keys as a bit mask over ``qi``
    (bit j = ``qi[j]``; bits from ``len(qi)`` on are sdcMicro's padding columns, which only a
    table of one record has MSUs on), ordered by row, then by size.

    Parameters
    ----------
    qi : tuple of str
        The key variables.
    dis_fraction : float
        The sampling fraction of the DIS score.
    n_variables : int
        M, the number of keys (with sdcMicro's padding).
    n_sample_uniques, n_in_pairs : int
        Records unique on all keys, and records in classes of two.
    dis_method : str
        ``"formula"`` or ``"sdcmicro"``.
    n_dis_uniques : int
        The U of the DIS score.
    score, dis_score : numpy.ndarray
        SUDA and DIS score per input row.
    contribution : numpy.ndarray
        Per row and key, the part of the score the key is credited with.
    msu_records, msu_subsets : numpy.ndarray
        Every MSU: its row and its keys as a bit mask.
    keys : KeyCodes
        The encoded keys.

    Examples
    --------
    >>> from sdc_core import example, load_example, risk_profile
    >>> df, qi = load_example(), example("actg175").roles.qi
    >>> from sdc_core import suda2
    >>> special = suda2(df, qi)
    >>> special.top_records(df, top=2)[["row", "suda_score", "msus"]]
       row  suda_score                      msus
    0  217         2.0  age + gender; age + race
    1  331         2.0                       age
    """

    qi: tuple[str, ...]
    dis_fraction: float
    n_variables: int
    n_sample_uniques: int
    n_in_pairs: int
    dis_method: str
    n_dis_uniques: int
    score: np.ndarray = field(repr=False)
    dis_score: np.ndarray = field(repr=False)
    contribution: np.ndarray = field(repr=False)
    msu_records: np.ndarray = field(repr=False)
    msu_subsets: np.ndarray = field(repr=False)
    keys: KeyCodes = field(repr=False)

    @property
    def weights(self) -> dict[int, float]:
        """The score of one MSU by its size s: (M − s)!."""
        return msu_weights(self.n_variables)

    def attribute_contributions(self) -> dict[str, float]:
        """Percent of the total score credited to each key (0 for all when no record scores)."""
        total = float(self.score.sum())
        if total == 0:
            return {c: 0.0 for c in self.qi}
        return {c: 100.0 * float(self.contribution[:, j].sum()) / total
                for j, c in enumerate(self.qi)}

    def attribute_level_contributions(self) -> pd.DataFrame:
        """sdcMicro's ``attribute_level_contributions``: columns ``variable``, ``attribute`` (a
        value of the key, sorted within it) and ``contribution``, the percent of the key's
        contribution credited to the records with that value (0 for every value of a key
        with no contribution)."""
        parts = []
        for j, name in enumerate(self.qi):
            code, levels = self.keys.codes[j], self.keys.levels[j]
            valid = code >= 0
            total = np.bincount(code[valid], weights=self.contribution[valid, j],
                                minlength=len(levels))
            whole = float(total.sum())
            share = 100.0 * total / whole if whole else np.zeros(len(levels))
            order = _sorted_order(levels)
            parts.append(pd.DataFrame({"variable": name, "attribute": levels[order],
                                       "contribution": share[order]}))
        return pd.concat(parts, ignore_index=True)

    def contribution_percent(self) -> np.ndarray:
        """sdcMicro's per-record ``contributionPercent``: contribution / score (0 at score 0)."""
        out = np.zeros_like(self.contribution)
        pos = self.score > 0
        out[pos] = self.contribution[pos] / self.score[pos, None]
        return out

    def summary(self) -> dict[str, object]:
        """The summary figures as plain Python values (JSON-ready)."""
        positive = self.score > 0
        return {
            "n_records_score_positive": int(positive.sum()),
            "max_score": float(self.score.max()) if len(self.score) else 0.0,
            "max_dis_score": float(self.dis_score.max()) if len(self.dis_score) else 0.0,
            "attribute_contributions": self.attribute_contributions(),
            "dis_fraction": self.dis_fraction,
            "n_msus": int(len(self.msu_records)),
        }

    def records(self) -> pd.DataFrame:
        """``suda_score`` and ``dis_score`` per input row, in input order."""
        return pd.DataFrame({"suda_score": self.score, "dis_score": self.dis_score})

    def msus_of(self, row: int) -> list[tuple[str, ...]]:
        """The MSUs of input row ``row`` (position), smallest first, as tuples of key names."""
        lo, hi = np.searchsorted(self.msu_records, [row, row + 1])
        out = [tuple(c for j, c in enumerate(self.qi) if (int(mask) >> j) & 1)
               for mask in self.msu_subsets[lo:hi]]
        return [s for s in out if s]  # not the padding columns (a table of one record)

    def top_records(self, df: pd.DataFrame, top: int = 10) -> pd.DataFrame:
        """The ``top`` rows by SUDA score (ties: by DIS score, then row order) with their key
        values, scores and MSUs (``msus``: key sets joined by " + ", separated by "; ")."""
        pos = np.flatnonzero(self.score > 0)
        order = pos[np.lexsort((pos, -self.dis_score[pos], -self.score[pos]))][:top]
        table = df.iloc[order][list(self.qi)].reset_index(drop=True)
        table.insert(0, "row", order)
        table["suda_score"] = self.score[order]
        table["dis_score"] = self.dis_score[order]
        table["msus"] = ["; ".join(" + ".join(s) for s in self.msus_of(int(i))) for i in order]
        return table


def shared_counts(df: pd.DataFrame, row: int, keys: Sequence[str]) -> dict[tuple[str, ...], int]:
    """How many records share row ``row``'s values on ``keys`` and on each ``keys`` minus one
    key (the check that makes ``keys`` an MSU of that row: 1, and at least 2 for each)."""
    keys = list(keys)
    if not keys:
        raise SdcInputError("at least one key is needed")
    same = {c: (df[c] == df[c].iloc[row]).to_numpy(dtype=bool, na_value=False) for c in keys}
    out = {tuple(keys): int(np.logical_and.reduce([same[c] for c in keys]).sum())}
    for c in keys if len(keys) > 1 else ():
        rest = [k for k in keys if k != c]
        out[tuple(rest)] = int(np.logical_and.reduce([same[k] for k in rest]).sum())
    return out


def msu_weights(n_variables: int) -> dict[int, float]:
    """sdcMicro's weight of an MSU of size s among M variables: ∏_{j=s}^{M−1} (M − j)."""
    return {s: float(factorial(n_variables - s)) for s in range(1, n_variables + 1)}


def suda2(df: pd.DataFrame, qi: Sequence[str], dis_fraction: float = DEFAULT_DIS_FRACTION,
          dis_method: str = "formula") -> Suda2Result:
    """SUDA2 scores of ``df`` on the key variables ``qi`` (see the module docstring).

    sdcMicro's ``suda2``: a record's minimal sample uniques (MSUs) are the smallest key subsets on
    which it is unique; with M keys its SUDA score is Σ_{MSUs S} (M − |S|)!, and the DIS score
    turns it into a probability with the sampling fraction f.

    ``dis_fraction`` is the sampling fraction f of the DIS score. ``dis_method`` is
    ``"formula"`` (the default: the DIS formula in double precision with U the true number of
    sample uniques) or ``"sdcmicro"`` (U counted as sdcMicro 5.8.1 counts it, the uniques alone
    in their 16-bit hash bucket, and its single-precision steps: its DIS scores to 1e-15, NaN
    included, for comparing with sdcMicro). Scores and contributions do not depend on it.

    Parameters
    ----------
    df : pandas.DataFrame
        The table.
    qi : sequence of str
        The key variables.
    dis_fraction : float, default 0.01
        The sampling fraction f, in (0, 1].
    dis_method : {"formula", "sdcmicro"}, default "formula"
        How the DIS score is computed.

    Returns
    -------
    Suda2Result
        Per-record SUDA and DIS scores, the contributions and every MSU.

    Raises
    ------
    SdcInputError
        When a column is unknown, ``dis_fraction`` is not in (0, 1], ``dis_method`` is unknown,
        there are too many keys or too large a search, or the table has no records.

    Examples
    --------
    >>> from sdc_core import example, load_example, risk_profile
    >>> df, qi = load_example(), example("actg175").roles.qi
    >>> from sdc_core import suda2
    >>> summary = suda2(df, qi).summary()
    >>> summary["n_records_score_positive"], summary["max_score"]
    (29, 2.0)
    >>> round(summary["max_dis_score"], 4)
    0.0116
    """
    f = check_probability("dis_fraction", dis_fraction, low_open=True)
    if dis_method not in DIS_METHODS:
        raise SdcInputError(f"dis_method must be one of {', '.join(DIS_METHODS)}, "
                            f"not {dis_method!r}")
    qi = list(qi)
    if len(qi) > MAX_SUDA2_KEYS:
        raise SdcInputError(f"SUDA2 looks at all 2^m − 1 subsets of the keys and takes at most "
                            f"{MAX_SUDA2_KEYS} keys, not {len(qi)}")
    keys = encode_keys(df, qi, na="wildcard")  # missing = -1
    n, m = keys.n, len(keys.names)
    if n == 0:
        raise SdcInputError("the table has no records")
    codes = list(keys.codes)
    cards = list(keys.cards)
    while len(codes) < MIN_SUDA2_VARIABLES:  # sdcMicro's constant dummy columns
        codes.append(np.zeros(n, dtype=np.int64))
        cards.append(1)
    big_m = len(codes)
    weights = msu_weights(big_m)

    full, _ = combine_codes([c + 1 for c in codes], [k + 1 for k in cards])
    class_id, g = densify(full)
    cnt = np.bincount(class_id, minlength=g)
    first = np.flatnonzero(np.diff(np.maximum.accumulate(class_id), prepend=-1) > 0)
    cols = [c[first] for c in codes]  # per distinct pattern, -1 = missing
    _check_size(m, big_m, int((cnt == 1).sum()), g)

    msu_class, msu_mask, sizes = _find_msus(cols, cards, cnt)
    order = np.lexsort((msu_mask, sizes, msu_class))  # by row (= by pattern), size, keys
    msu_class, msu_mask, sizes = msu_class[order], msu_mask[order], sizes[order]
    msu_records = first[msu_class]

    score = np.zeros(n)
    for s in range(1, big_m + 1):  # sdcMicro's order of summation: by size
        score += np.bincount(msu_records[sizes == s], minlength=n) * weights[s]
    contribution = np.zeros((n, m))
    contribution[first] = _contributions(cols, cnt, msu_class, msu_mask, sizes, weights, m)

    n_uniques = int((cnt == 1).sum())
    n_pairs = int(2 * (cnt == 2).sum())
    if dis_method == "sdcmicro":
        u = sdcmicro_hash_uniques(df, keys.names)
        dis = dis_scores_sdcmicro(score, u, n_pairs, f, big_m)
    else:
        u = n_uniques
        dis = dis_scores(score, n_pairs, f, big_m)
    return Suda2Result(qi=tuple(keys.names), dis_fraction=f, n_variables=big_m,
                       n_sample_uniques=n_uniques, n_in_pairs=n_pairs, dis_method=dis_method,
                       n_dis_uniques=u, score=score, dis_score=dis, contribution=contribution,
                       msu_records=msu_records, msu_subsets=msu_mask, keys=keys)


def suda2_memory(n_keys: int, n_uniques: int, n_patterns: int) -> int:
    """The working memory (bytes) SUDA2 plans for: C(M, ⌊M/2⌋) · (uniques + 16 · patterns),
    M = max(n_keys, 3)."""
    big_m = max(n_keys, MIN_SUDA2_VARIABLES)
    return comb(big_m, big_m // 2) * (n_uniques + 16 * n_patterns)


def _check_size(m: int, big_m: int, n_uniques: int, n_patterns: int) -> None:
    need = suda2_memory(big_m, n_uniques, n_patterns)
    if need <= MAX_SUDA2_BYTES:
        return
    fits = max((k for k in range(1, m) if suda2_memory(k, n_uniques, n_patterns)
                <= MAX_SUDA2_BYTES), default=0)
    raise SdcInputError(
        f"SUDA2 on {m} keys and {n_patterns:,} distinct key patterns would need about "
        f"{need / 2**30:.1f} GiB of working memory (it visits up to 2^{m} − 1 key subsets); "
        f"use at most {fits} keys on this table")


def dis_scores(score: np.ndarray, n_pairs: int, dis_fraction: float,
               n_variables: int) -> np.ndarray:
    """The DIS score from the SUDA scores by the formula (module docstring), in double
    precision: ``U/Dis − U = P·(1 − f)/f``."""
    return _dis(score, n_pairs * (1.0 - dis_fraction) / dis_fraction,
                1.0 + (8.0 - n_variables) / 20.0)


def dis_scores_sdcmicro(score: np.ndarray, n_uniques: int, n_pairs: int, dis_fraction: float,
                        n_variables: int) -> np.ndarray:
    """The DIS score as sdcMicro evaluates it (module docstring): ``Dis``, ``Q`` and
    ``U/Dis − U`` in single precision, with the U given (NaN for a positive score when the
    U given is 0)."""
    f32 = np.float32
    frac, u, p = f32(dis_fraction), f32(n_uniques), f32(n_pairs)
    with np.errstate(divide="ignore", invalid="ignore"):
        dis = f32(u * frac) / f32(f32(u * frac) + f32(p * f32(f32(1) - frac)))
        excess = float(f32(f32(u / dis) - u))
    q = float(f32(1) + f32(f32(8) - f32(n_variables)) / f32(20))
    return _dis(score, excess, q)


def _dis(score: np.ndarray, excess: float, q: float) -> np.ndarray:
    """``1 / (1 + excess / (score^Q · A))`` where the score is positive, else 0; A is summed
    in record order (as sdcMicro sums it)."""
    out = np.zeros(len(score))
    pos = score > 0
    if not pos.any():
        return out
    powered = score[pos] ** q
    adj = float(np.cumsum(1.0 / powered)[-1])
    out[pos] = 1.0 / (1.0 + excess / (powered * adj))
    return out


def sdcmicro_hash_uniques(df: pd.DataFrame, qi: Sequence[str]) -> int:
    """sdcMicro's count of sample uniques for the DIS score: the records alone in their
    16-bit hash bucket (module docstring; such a record is unique on all keys)."""
    h = np.zeros(len(df), dtype=np.int64)
    for c in qi:
        h = ((h << 1) | (h >> 15)) & 0xFFFF
        h = (h + _sdcmicro_values(df[c])) & 0xFFFF
    return int(np.count_nonzero(np.bincount(h, minlength=1 << 16) == 1))


def _sdcmicro_values(s: pd.Series) -> np.ndarray:
    """The key's values as sdcMicro's hash adds them, modulo 2¹⁶ (module docstring)."""
    if isinstance(s.dtype, pd.CategoricalDtype):
        code = s.cat.codes.to_numpy().astype(np.int64)
        return np.where(code >= 0, code + 1, SDCMICRO_MISSING) & 0xFFFF
    if pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s):
        x = s.to_numpy(dtype=np.float64, na_value=np.nan)
        whole = np.isfinite(x)
        v = np.full(len(x), SDCMICRO_MISSING, dtype=np.int64)
        v[whole] = np.mod(np.trunc(x[whole]), 65536.0).astype(np.int64)
        return v & 0xFFFF
    code, uniq = pd.factorize(s)
    rank = np.empty(len(uniq), dtype=np.int64)
    rank[_sorted_order(pd.Index(uniq))] = np.arange(1, len(uniq) + 1)
    v = np.full(len(code), SDCMICRO_MISSING, dtype=np.int64)
    v[code >= 0] = rank[code[code >= 0]]
    return v & 0xFFFF


def _sorted_order(levels: pd.Index) -> np.ndarray:
    """Positions of ``levels`` in sorted order (first-appearance order when they do not sort,
    e.g. numbers mixed with text)."""
    try:
        return np.argsort(levels.to_numpy(), kind="stable")
    except TypeError:
        return np.arange(len(levels))


@dataclass
class _Level:
    """A key subset S still in play: ``alive`` marks (over the patterns held by one record) those
    not unique on S; ``rows`` are the pattern rows of the groups (equal values on S) that hold
    one of them, ``gid`` their group ids, below ``bound``."""

    alive: np.ndarray
    rows: np.ndarray
    gid: np.ndarray
    bound: int


def _in_play(alive: np.ndarray, rows: np.ndarray, key: np.ndarray, bound: int,
             alive_key: np.ndarray) -> _Level:
    """The rows whose group (``key`` < ``bound``) holds an alive record, whose keys are
    ``alive_key`` (all rows when that would drop under a quarter: carrying a few costs less
    than a copy); the groups are relabelled 0..g'-1 when ``bound`` is large."""
    has = np.zeros(bound, dtype=bool)
    has[alive_key] = True
    sel = has[key]
    if 4 * np.count_nonzero(sel) < 3 * len(sel):
        rows, key = rows[sel], key[sel]
    elif bound > 2 * len(key):
        has[key] = True  # every group present keeps its own label
    if bound > 2 * len(key):
        label = np.cumsum(has) - 1
        return _Level(alive, rows, label[key], int(label[-1]) + 1)
    return _Level(alive, rows, key, bound)


def _find_msus(cols: Sequence[np.ndarray], cards: Sequence[int],
               cnt: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every MSU as (pattern row, key bit mask, size). Only the patterns held by one record
    (``cnt == 1``, the candidates) have MSUs, and such a record is unique on S exactly when its
    group on S has one pattern row, so the counts need no weights. A candidate is *alive* on S
    when it has values on S and is not unique on S (then neither on any subset of S): it is an
    MSU on S when it is alive on every S minus one key and unique on S."""
    big_m = len(cols)
    cand = np.flatnonzero(cnt == 1)  # sorted pattern rows
    # candidate masks have one more entry, always False: where other patterns point
    index = np.full(len(cnt), len(cand), dtype=np.int64)
    index[cand] = np.arange(len(cand))
    present = [np.append(cols[j][cand] >= 0, False) for j in range(big_m)]
    found: list[tuple[np.ndarray, int, int]] = []
    level: dict[int, _Level] = {}
    for j in range(big_m):
        col = cols[j]
        valid = col >= 0
        freq = np.bincount(col[valid], weights=cnt[valid], minlength=cards[j])
        unique = present[j].copy()
        unique[:-1] &= freq[col[cand]] == 1
        alive = present[j] & ~unique
        if unique.any():
            found.append((cand[unique[:-1]], 1 << j, 1))
        if alive.any():
            rows = np.flatnonzero(valid)
            level[1 << j] = _in_play(alive, rows, col[rows], cards[j], col[cand[alive[:-1]]])
    size = 1
    while level:
        size += 1
        nxt: dict[int, _Level] = {}
        for mask, lv in level.items():
            for x in range(mask.bit_length(), big_m):
                new = mask | (1 << x)
                inter = lv.alive & present[x]  # alive on every S minus one key
                for j in range(x):
                    if mask >> j & 1:
                        other = level.get(new ^ (1 << j))
                        if other is None:
                            break
                        inter &= other.alive
                else:
                    if inter.any():
                        _extend(cols[x], cards[x], index, lv, inter, new, size, found, nxt)
                # (a subset missing from the level has no alive record: nor has S)
        level = nxt
    if not found:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    return (np.concatenate([h for h, _, _ in found]).astype(np.int64, copy=False),
            np.concatenate([np.full(len(h), k, dtype=np.int64) for h, k, _ in found]),
            np.concatenate([np.full(len(h), z, dtype=np.int64) for h, _, z in found]))


def _extend(col: np.ndarray, card: int, index: np.ndarray, lv: _Level, inter: np.ndarray,
            mask: int, size: int, found: list[tuple[np.ndarray, int, int]],
            nxt: dict[int, _Level]) -> None:
    """Subset ``mask`` = S' ∪ {x} from S' (``lv``): the candidates ``inter`` (a mask; ``index``
    maps a pattern row to its entry) unique on it are MSUs; the others stay alive."""
    rows, gid = lv.rows, lv.gid
    flag = inter[index[rows]]  # the rows of those candidates (all among lv.rows)
    n_who = int(np.count_nonzero(flag))
    if 8 * n_who < len(rows):  # keep only their groups
        has = np.zeros(lv.bound, dtype=bool)
        has[gid[flag]] = True
        sel = has[gid]
        rows, gid, flag = rows[sel], gid[sel], flag[sel]
    cx = col[rows]
    keep = cx >= 0  # a missing value is never part of a unique pattern
    if not keep.all():
        rows, gid, cx, flag = rows[keep], gid[keep], cx[keep], flag[keep]
    key = gid * card + cx
    bound = lv.bound * card
    if bound > max(2 * len(key), 1 << 16):
        key, bound = densify(key)
    who, wkey = rows[flag], key[flag]
    unique = np.bincount(key, minlength=bound)[wkey] == 1
    if unique.any():
        found.append((who[unique], mask, size))
    if not unique.all():
        alive = inter.copy()
        alive[index[who[unique]]] = False
        nxt[mask] = _in_play(alive, rows, key, bound, wkey[~unique])


def _base_keys(cols: Sequence[np.ndarray], cnt: np.ndarray, m: int) -> list[np.ndarray] | None:
    """For each key k and value code u, the earliest key whose item (key, value) holds exactly
    the records of (k, u) (k itself when none): SUDA2's correlated items. ``None`` when no item
    is correlated. Items held by one record are not items (they are 1-MSUs)."""
    bases = []
    any_base = False
    for k in range(m):
        ck = cols[k]
        valid_k = ck >= 0
        card_k = int(ck.max()) + 1 if valid_k.any() else 1
        base = np.full(card_k, k, dtype=np.int64)
        freq_k = np.bincount(ck[valid_k], weights=cnt[valid_k], minlength=card_k)
        for j in range(k - 1, -1, -1):  # the earliest key wins: overwrite going down
            cj = cols[j]
            both = valid_k & (cj >= 0)
            if not both.any():
                continue
            card_j = int(cj.max()) + 1
            pair, bound = combine_codes([cj[both], ck[both]], [card_j, card_k])
            n_pair = np.bincount(pair, weights=cnt[both], minlength=bound)[pair]
            valid_j = cj >= 0
            freq_j = np.bincount(cj[valid_j], weights=cnt[valid_j], minlength=card_j)
            v, u = cj[both], ck[both]
            same = (n_pair == freq_j[v]) & (n_pair == freq_k[u]) & (freq_k[u] >= 2)
            if same.any():
                base[u[same]] = j
                any_base = True
        bases.append(base)
    return bases if any_base else None


def _contributions(cols: Sequence[np.ndarray], cnt: np.ndarray, msu_class: np.ndarray,
                   msu_mask: np.ndarray, sizes: np.ndarray, weights: dict[int, float],
                   m: int) -> np.ndarray:
    """Per pattern row, the score credited to each of the m real keys (module docstring)."""
    out = np.zeros((len(cnt), m))
    if not len(msu_mask):
        return out
    bases = _base_keys(cols, cnt, m)
    order = np.argsort(msu_mask, kind="stable")  # one vectorised pass per key subset
    masks_sorted = msu_mask[order]
    starts = np.flatnonzero(np.diff(masks_sorted, prepend=-1) != 0)
    ends = np.append(starts[1:], len(order))
    for lo, hi in zip(starts, ends):
        mask = int(masks_sorted[lo])
        rows = msu_class[order[lo:hi]]
        w = weights[int(sizes[order[lo]])]
        members = [j for j in range(len(cols)) if mask >> j & 1]
        real = [j for j in members if j < m]  # the padding columns are not reported
        if bases is None or len(members) == 1:
            for j in real:
                out[rows, j] += w
        elif len(members) == 2:
            j, k = members
            credited = (bases[j][cols[j][rows]] == j) | (bases[k][cols[k][rows]] == k)
            for j in real:
                out[rows[credited], j] += w
        else:
            for j in real:
                out[rows, bases[j][cols[j][rows]]] += w
    return out
