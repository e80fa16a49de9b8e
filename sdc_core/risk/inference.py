"""The attribute-inference attack (docs/measures.md, "The attribute-inference attack").

The counterpart of the linkage attack (:mod:`sdc_core.risk.linkage`): the same attacker knows
person i's true quasi-identifiers (and the columns marked *known*) and the recipe's public
recodings, and finds the same best candidates M_i among the released records — those of the
linkage attack's ``any_match`` attacker: every released record compatible on the exact columns,
a blank on either side matching anything, and of those the nearest on the distance columns
(ties all belong). From them it guesses each sensitive column S's true value x_i:

- categorical S: the commonest released value among the z_jS, j ∈ M_i, z_jS present
  (n_i(v) records carry value v). When t values tie for commonest the attacker picks one of
  them at random: a hit counts 1/t when x_i is among them, else 0. When M_i is a single record
  its released value is the guess. hit_i = [n_i(x_i) = max_v n_i(v)] / t_i;
- numeric S: the mean ḡ_i of the released values z_jS, j ∈ M_i, present; a hit when
  |x_i − ḡ_i| ≤ w, w = ``tolerance`` · IQR of the original column (present values, pandas'
  linear quantiles; w = 0 when the IQR is 0: only the exact value hits);
- when no record of M_i carries a value of S, the attacker falls back to the baseline's guess.

Records whose true value of S is missing are left out: n is the number of records with a true
value. ``accuracy`` = mean hit_i. The **baseline** is the same attacker on the release with S
withheld: it learns nothing about S specific to the record, only the released marginal, and
guesses its mode (ties: 1/t of a hit when x_i is among the t modes) or, numeric, the released
mean. ``gain`` = 100 · (accuracy − baseline), in percentage points. For a categorical S, ``cap``
is the mean correct attribution probability (Taub et al. 2018; SDMetrics' per-row CAP with
its zero convention): CAP_i = n_i(x_i) / Σ_v n_i(v), the share of the matching released records
(with a value of S) that carry i's true value, 0 when none carries a value.

Computation. Without distance columns the records are grouped by their pattern of missing
values on the exact columns, on each side; for each pair of patterns the exact columns present
in both become one integer key, and a sparse product (query key → released records with that
key and their value of S) sums the counts n_i(v), or the sums and counts of a numeric S, over
the pairs: O(n · levels) at most, per pair of patterns. With distance columns the linkage
attack's own matching (:func:`sdc_core.risk.linkage.link`) counts, for each value v of a
categorical S, the best candidates weighted by [z_jS = v] (one pass per value), and for a
numeric S sums them weighted by z_jS and by [z_jS present] (two passes).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from sdc_core.data.columns import compare_keys, is_number
from sdc_core.errors import SdcInputError
from sdc_core.keys import check_columns, combine_codes, densify
from sdc_core.methods.banding import read_bands
from sdc_core.recipe import Recipe, apply_recipe
from sdc_core.risk.linkage import (
    _as_float,
    _measurable,
    _sd,
    attack_columns,
    attacker_view,
    check_roles,
    joint_codes,
    link,
)

if TYPE_CHECKING:
    from scipy import sparse

#: Default half-width of a numeric hit, as a share of the original column's IQR.
TOLERANCE = 0.1
#: With distance columns, the most values of a categorical sensitive column (one pass of the
#: linkage matching each; docs/measures.md, "The attribute-inference attack")
MAX_LINK_LEVELS = 1_000
#: A number column with more distinct values than this is read as numeric (``numeric=None``).
NUMERIC_MIN_LEVELS = 20


@dataclass(frozen=True)
class InferenceColumn:
    """One sensitive column's figures in the attribute-inference attack.

    Made by :func:`attribute_inference` (module docstring for the definitions).

    Parameters
    ----------
    column : str
        The sensitive column S.
    kind : str
        ``categorical`` or ``numeric``: how S was attacked.
    accuracy : float
        Mean hit_i, a share 0–1.
    baseline : float
        Mean hit_i guessing from the released marginal alone, a share 0–1.
    gain : float
        100 · (accuracy − baseline), in percentage points.
    n : int
        Records with a true value of S.
    cap : float or None
        Mean correct attribution probability (categorical S only).
    width : float or None
        A numeric hit's half-width, in the column's unit (numeric S only).

    Examples
    --------
    >>> import pandas as pd
    >>> from sdc_core.risk.inference import attribute_inference
    >>> df = pd.DataFrame({"sex": list("FFFMMM"), "hiv": list("yynnny")})
    >>> c = attribute_inference(df, df, ["sex"], ["hiv"]).columns[0]
    >>> c.column, c.kind, c.n, c.width
    ('hiv', 'categorical', 6, None)
    >>> c.summary()["inference_n"]
    6
    """

    column: str
    kind: str
    accuracy: float
    baseline: float
    gain: float
    n: int
    cap: float | None = None
    width: float | None = None

    def summary(self) -> dict[str, Any]:
        """The column's figures under their keys in :mod:`sdc_core.names`."""
        return {"column": self.column, "kind": self.kind,
                "inference_accuracy": self.accuracy, "inference_baseline": self.baseline,
                "inference_gain": self.gain, "inference_cap": self.cap,
                "inference_width": self.width, "inference_n": self.n}

    def to_json(self) -> str:
        """:meth:`summary` as JSON text (NaN written as null)."""
        return json.dumps(_clean(self.summary()))


@dataclass(frozen=True)
class InferenceResult:
    """The attribute-inference attack's figures per sensitive column and overall.

    Made by :func:`attribute_inference`; ``accuracy``, ``baseline`` and ``gain`` are the means
    over the columns.

    Parameters
    ----------
    columns : tuple of InferenceColumn
        The figures of each sensitive column, in the order given.
    exact : tuple of str
        The columns the attacker compared exactly.
    distance : tuple of str
        The columns the attacker compared by distance.

    Examples
    --------
    >>> import pandas as pd
    >>> from sdc_core.risk.inference import attribute_inference
    >>> df = pd.DataFrame({"sex": list("FFFMMM"), "hiv": list("yynnny")})
    >>> result = attribute_inference(df, df, ["sex"], ["hiv"])
    >>> c = result.columns[0]
    >>> round(c.accuracy, 4), round(c.baseline, 4), round(c.gain, 2), round(c.cap, 4)
    (0.6667, 0.5, 16.67, 0.5556)
    """

    columns: tuple[InferenceColumn, ...]
    exact: tuple[str, ...]
    distance: tuple[str, ...]

    @property
    def accuracy(self) -> float:
        """Mean accuracy over the sensitive columns (NaN without any)."""
        return float(np.mean([c.accuracy for c in self.columns])) if self.columns else np.nan

    @property
    def baseline(self) -> float:
        """Mean baseline over the sensitive columns."""
        return float(np.mean([c.baseline for c in self.columns])) if self.columns else np.nan

    @property
    def gain(self) -> float:
        """100 · (mean accuracy − mean baseline), in points."""
        return 100.0 * (self.accuracy - self.baseline)

    def summary(self) -> dict[str, Any]:
        """The figures, JSON-ready, under their keys in :mod:`sdc_core.names`:
        ``inference_accuracy``, ``inference_baseline`` and ``inference_gain`` overall (means
        over the columns), and per column in ``attribute_inference``
        (:meth:`InferenceColumn.summary`)."""
        return {"inference_accuracy": self.accuracy, "inference_baseline": self.baseline,
                "inference_gain": self.gain,
                "attribute_inference": [c.summary() for c in self.columns],
                "inference_exact_columns": list(self.exact),
                "inference_distance_columns": list(self.distance)}

    def to_json(self) -> str:
        """:meth:`summary` as JSON text (NaN written as null)."""
        return json.dumps(_clean(self.summary()))


def _clean(v: Any) -> Any:
    """A JSON-ready value with NaN and infinities as None."""
    if isinstance(v, float) and not np.isfinite(v):
        return None
    if isinstance(v, dict):
        return {k: _clean(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_clean(x) for x in v]
    return v


def check_sensitive(original: pd.DataFrame, released: pd.DataFrame, keys: Sequence[str],
                    known: Sequence[str], sensitive: Sequence[str]
                    ) -> tuple[list[str], list[str], list[str]]:
    """The keys, known and sensitive columns checked as :func:`attribute_inference` takes
    them: each in the original, every sensitive column in the release, none both a key (or
    known) and sensitive."""
    keys, known = check_roles(original, keys, known)
    sensitive = check_columns(original, sensitive, "sensitive")
    missing = [c for c in sensitive if c not in released.columns]
    if missing:
        raise SdcInputError(f"sensitive column(s) not in the release: "
                            f"{', '.join(map(str, missing))}")
    clash = [c for c in sensitive if c in keys or c in known]
    if clash:
        raise SdcInputError(f"{', '.join(map(str, clash))}: a key or known column cannot also be "
                            "sensitive")
    return keys, known, sensitive


def attribute_inference(original: pd.DataFrame, released: pd.DataFrame, keys: Sequence[str],
                        sensitive: Sequence[str], recipe: Recipe | None = None,
                        known: Sequence[str] = (), tolerance: float = TOLERANCE,
                        numeric: Sequence[str] | None = None,
                        reports: Sequence[dict[str, Any]] | None = None) -> InferenceResult:
    """The attribute-inference attack of ``original`` against ``released`` (aligned by row).

    For each record i and sensitive column S the attacker finds the linkage attack's best
    candidates M_i (``any_match``) and guesses x_iS: the commonest released value among them
    (a tie of t values: 1/t of a hit), or for a numeric S their mean, a hit when
    |x_iS − ḡ_i| ≤ ``tolerance`` · IQR(x_S). ``accuracy`` = mean hit_i over the records with
    a true value; ``baseline``: the same guess from the released marginal alone (its mode, or
    its mean); ``gain`` = 100 · (accuracy − baseline) points; ``cap`` = mean_i n_i(x_i) /
    Σ_v n_i(v) (module docstring).

    Parameters
    ----------
    original : pandas.DataFrame
        The true table.
    released : pandas.DataFrame
        The release, row i the release of the original's row i.
    keys : sequence of str
        The quasi-identifiers the attacker knows.
    sensitive : sequence of str
        The columns whose true values the attacker guesses; each must be in both tables.
    recipe : Recipe, optional
        The recipe that made the release (its public recodings and perturbed keys).
    known : sequence of str, optional
        Other columns the attacker knows, compared by distance (as the linkage attack does).
    tolerance : float, optional
        A numeric hit's half-width, as a share of the original column's IQR (default 0.1).
    numeric : sequence of str, optional
        The sensitive columns read as numeric; by default the number columns (not True/False)
        with more than :data:`NUMERIC_MIN_LEVELS` distinct values.
    reports : sequence of dict, optional
        The reports of :func:`apply_recipe` for this release.

    Returns
    -------
    InferenceResult
        Accuracy, baseline, gain (and CAP) per sensitive column, and their means.

    Raises
    ------
    SdcInputError
        When the tables differ in length or have no records, a column is unknown, a sensitive
        column is a key, or a numeric sensitive column does not hold numbers on both sides.

    Examples
    --------
    >>> import pandas as pd
    >>> from sdc_core.risk.inference import attribute_inference
    >>> df = pd.DataFrame({"age": [30, 30, 40, 40, 50, 50], "y": list("aabbab")})
    >>> round(attribute_inference(df, df, ["age"], ["y"]).columns[0].accuracy, 4)
    0.8333
    """
    if len(original) != len(released):
        raise SdcInputError(f"the released table has {len(released)} records, the original "
                            f"{len(original)}: they must be aligned row by row")
    if len(original) == 0:
        raise SdcInputError("the table has no records")
    if not tolerance >= 0:
        raise SdcInputError(f"the tolerance must be a number ≥ 0, not {tolerance!r}")
    keys, known, sensitive = check_sensitive(original, released, keys, known, sensitive)
    exact, distance = attack_columns(keys, known, list(released.columns), recipe)
    if recipe is not None and reports is None:
        reports = apply_recipe(recipe, original).reports
    y = attacker_view(original, exact + distance, recipe, reports)
    y = y.assign(**{c: read_bands(y[c], original[c]) for c in distance})
    exact += [c for c in distance if not (_measurable(y[c]) and _measurable(released[c]))]
    distance = [c for c in distance if c not in exact]
    y_codes, z_codes = joint_codes(y, released, exact)
    if distance:
        scale = np.array([_sd(_as_float(original[c], c)) for c in distance])
        y_num = np.column_stack([_as_float(y[c], c) for c in distance]) / scale
        z_num = np.column_stack([_as_float(released[c], c) for c in distance]) / scale
    chosen = set(numeric) if numeric is not None else {
        c for c in sensitive if is_number(original[c])
        and original[c].nunique(dropna=True) > NUMERIC_MIN_LEVELS}
    wrong = [c for c in sensitive if c in chosen and not (is_number(original[c])
                                                          and is_number(released[c]))]
    if wrong:
        raise SdcInputError(f"{', '.join(map(str, wrong))}: a numeric sensitive column takes "
                            "numbers in the original and the release")
    matcher = _Matcher(y_codes, z_codes)
    out = []
    for c in sensitive:
        if c in chosen:
            sums = (lambda z: _sums_by_link(y_codes, z_codes, y_num, z_num, z)) if distance \
                else matcher.sums
            out.append(_numeric(c, original[c], released[c], sums, tolerance))
            continue
        truth, value, levels = _value_codes(original[c], released[c])
        if distance:
            if levels > MAX_LINK_LEVELS:
                raise SdcInputError(
                    f"{c}: {levels:,} values; with distance columns the attack counts each "
                    f"value in a pass of its own, at most {MAX_LINK_LEVELS:,} (recode the "
                    "column, or compare every key exactly)")
            counts = _counts_by_link(y_codes, z_codes, y_num, z_num, value, levels)
            group = np.arange(len(truth))
        else:
            counts, group = matcher.counts(value, levels), matcher.group
        out.append(_categorical(c, truth, value, levels, counts, group))
    return InferenceResult(tuple(out), tuple(exact), tuple(distance))


def _value_codes(x: pd.Series, z: pd.Series) -> tuple[np.ndarray, np.ndarray, int]:
    """Codes (−1 missing) of the true and released values of S from one factorisation, values
    compared by what they are (:func:`sdc_core.data.columns.compare_keys`), and the number of
    levels."""
    a, b = compare_keys(x.reset_index(drop=True), z.reset_index(drop=True))
    codes, uniq = pd.factorize(np.concatenate([a, b]), use_na_sentinel=True)
    n = len(a)
    return codes[:n].astype(np.int64), codes[n:].astype(np.int64), max(len(uniq), 1)


class _Matcher:
    """The best candidates of the exact columns (no distance columns): per pair of missing-value
    patterns, query rows and released rows keyed on the columns present in both. Records of
    one pattern with the same key in every pair have the same candidates: they form a
    **group**, and the counts are kept per group, not per record (a sensitive column of 100,000
    categories in 200,000 records held a records × values matrix of 5.5 GB)."""

    def __init__(self, y_codes: np.ndarray, z_codes: np.ndarray) -> None:
        self.n = len(y_codes)
        self.pairs: list[tuple[np.ndarray, np.ndarray, np.ndarray, int]] = []
        self.group = np.zeros(self.n, dtype=np.int64)  # each record's group
        self.first: list[np.ndarray] = []  # per pattern, a record of each of its groups
        self.of_pattern: list[list[int]] = []  # per pattern, its pairs
        self.rows: list[np.ndarray] = []  # per pattern, its records
        y_pat, z_pat = _pattern(y_codes), _pattern(z_codes)
        z_groups = [np.flatnonzero(z_pat == q) for q in np.unique(z_pat)]
        groups = 0
        for p in np.unique(y_pat):
            rows = np.flatnonzero(y_pat == p)
            keys = []
            mine = []
            for zrows in z_groups:
                shared = np.flatnonzero((y_codes[rows[0]] >= 0) & (z_codes[zrows[0]] >= 0))
                if not len(shared):
                    key_y, key_z, bound = (np.zeros(len(rows), np.int64),
                                           np.zeros(len(zrows), np.int64), 1)
                else:
                    both = np.concatenate([y_codes[rows][:, shared], z_codes[zrows][:, shared]])
                    key, _ = combine_codes([both[:, j] for j in range(len(shared))],
                                           (both.max(axis=0) + 1).tolist())
                    key, bound = densify(key)
                    key_y, key_z = key[: len(rows)], key[len(rows):]
                keys.append(key_y)
                mine.append(len(self.pairs))
                self.pairs.append((zrows, key_y, key_z, bound))
            _, first, local = np.unique(np.column_stack(keys), axis=0, return_index=True,
                                        return_inverse=True)
            self.group[rows] = groups + local.ravel()
            self.first.append(first)
            self.of_pattern.append(mine)
            self.rows.append(rows)
            groups += len(first)
        self.groups = groups

    def counts(self, value: np.ndarray, levels: int) -> sparse.csr_matrix:
        """n_g(v): the candidates of the records of group g carrying released value v,
        (groups, levels); :attr:`group` gives each record's group."""
        from scipy import sparse  # imported where it is used, as the linkage attack does

        blocks = []
        for first, pairs in zip(self.first, self.of_pattern):
            total = sparse.csr_matrix((len(first), levels))
            for i in pairs:
                zrows, key_y, key_z, bound = self.pairs[i]
                v = value[zrows]
                has = v >= 0
                table = sparse.csr_matrix((np.ones(int(has.sum())), (key_z[has], v[has])),
                                          shape=(bound, levels))
                pick = sparse.csr_matrix((np.ones(len(first)), (np.arange(len(first)),
                                                                key_y[first])),
                                         shape=(len(first), bound))
                total = total + pick @ table
            blocks.append(total)
        out = sparse.vstack(blocks, format="csr")
        out.sum_duplicates()
        return out

    def sums(self, value: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Σ z_jS and the number of candidates with a value, per record (NaN = missing)."""
        s, m = np.zeros(self.n), np.zeros(self.n)
        for rows, pairs in zip(self.rows, self.of_pattern):
            for i in pairs:
                zrows, key_y, key_z, bound = self.pairs[i]
                v = value[zrows]
                has = ~np.isnan(v)
                s[rows] += np.bincount(key_z[has], weights=v[has], minlength=bound)[key_y]
                m[rows] += np.bincount(key_z[has], minlength=bound)[key_y]
        return s, m


def _pattern(codes: np.ndarray) -> np.ndarray:
    present = codes >= 0
    if present.all():
        return np.zeros(len(codes), dtype=np.int64)
    if present.shape[1] > 62:
        raise SdcInputError("the attribute-inference attack takes at most 62 key columns")
    return present.astype(np.int64) @ (np.int64(1) << np.arange(present.shape[1],
                                                                  dtype=np.int64))


def _counts_by_link(y_codes: np.ndarray, z_codes: np.ndarray, y_num: np.ndarray,
                    z_num: np.ndarray, value: np.ndarray, levels: int) -> sparse.csr_matrix:
    """n_i(v) from the linkage attack's own matching: ``any_match``'s |M_i| with every released
    record weighted by [z_jS = v], one pass per value."""
    from scipy import sparse

    cols = []
    for v in range(levels):
        weight = (value == v).astype(np.int64)
        if not weight.any():
            cols.append(sparse.csr_matrix((len(value), 1)))
            continue
        size = link(y_codes, z_codes, y_num, z_num, weight)["any_match"].candidates
        cols.append(sparse.csr_matrix(size.astype(np.float64).reshape(-1, 1)))
    total = sparse.hstack(cols, format="csr")
    total.eliminate_zeros()
    return total


def _sums_by_link(y_codes: np.ndarray, z_codes: np.ndarray, y_num: np.ndarray,
                  z_num: np.ndarray, value: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Σ z_jS over ``any_match``'s best candidates M_i and how many of them carry a value
    (NaN = missing), from the linkage attack's own matching: two passes, the released records
    weighted by their value and by whether they have one."""
    has = ~np.isnan(value)
    s = link(y_codes, z_codes, y_num, z_num, np.where(has, value, 0.0))["any_match"].candidates
    m = link(y_codes, z_codes, y_num, z_num, has.astype(np.int64))["any_match"].candidates
    return np.asarray(s, dtype=np.float64), np.asarray(m, dtype=np.float64)


def _modes(counts: np.ndarray) -> tuple[np.ndarray, int]:
    """The values tied for commonest (their count > 0), and how many."""
    top = counts.max() if len(counts) else 0
    modes = np.flatnonzero(counts == top) if top > 0 else np.array([], dtype=np.int64)
    return modes, len(modes)


def _categorical(column: str, truth: np.ndarray, value: np.ndarray, levels: int,
                 counts: sparse.csr_matrix, group: np.ndarray) -> InferenceColumn:
    """The figures of a categorical S from n_g(v), ``counts``' row ``group[i]`` for record
    i (records with the same candidates share a row)."""
    known = truth >= 0
    n = int(known.sum())
    marginal = np.bincount(value[value >= 0], minlength=levels)
    modes, t = _modes(marginal)
    base_hit = np.isin(truth, modes) / max(t, 1)
    rows = counts.shape[0]
    g_total = np.asarray(counts.sum(axis=1)).ravel()
    data, ptr = counts.data, counts.indptr
    nonempty = np.diff(ptr) > 0
    g_max = np.zeros(rows)
    g_max[nonempty] = np.maximum.reduceat(data, ptr[:-1][nonempty])
    row_of = np.repeat(np.arange(rows), np.diff(ptr))
    g_ties = np.bincount(row_of, weights=(data == g_max[row_of]) & (data > 0), minlength=rows)
    row_total, row_max, ties = g_total[group], g_max[group], g_ties[group]
    mine = np.zeros(len(truth))
    mine[known] = np.asarray(counts[group[known], truth[known]]).ravel()
    hit = np.where(row_max > 0, np.where((mine == row_max) & (mine > 0), 1.0 / np.maximum(ties, 1),
                                         0.0), base_hit)
    cap = np.where(row_total > 0, mine / np.maximum(row_total, 1), 0.0)
    acc = float(hit[known].mean()) if n else np.nan
    base = float(base_hit[known].mean()) if n else np.nan
    return InferenceColumn(str(column), "categorical", acc, base, 100.0 * (acc - base), n,
                           float(cap[known].mean()) if n else np.nan)


def _numeric(column: str, x: pd.Series, z: pd.Series,
             sums: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
             tolerance: float) -> InferenceColumn:
    xs = x.to_numpy(dtype=np.float64, na_value=np.nan)
    zs = z.to_numpy(dtype=np.float64, na_value=np.nan)
    known = ~np.isnan(xs)
    n = int(known.sum())
    q1, q3 = x.astype("Float64").quantile([0.25, 0.75]).to_numpy(dtype=np.float64) if n \
        else (np.nan, np.nan)
    width = float(tolerance * (q3 - q1)) if n else np.nan
    present = zs[~np.isnan(zs)]
    overall = float(present.sum() / len(present)) if len(present) else np.nan
    s, m = sums(zs)
    guess = np.where(m > 0, s / np.maximum(m, 1), overall)
    hit = np.abs(xs - guess) <= width
    base_hit = np.abs(xs - overall) <= width
    acc = float(hit[known].mean()) if n else np.nan
    base = float(base_hit[known].mean()) if n else np.nan
    return InferenceColumn(str(column), "numeric", acc, base, 100.0 * (acc - base), n,
                           None, width)
