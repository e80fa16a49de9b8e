"""The linkage attack (docs/measures.md): what an attacker who knows the true values re-identifies.

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
- agreements a_ij = |{c in E ∪ N : y_ic and z_jc both present and y_ic = z_jc}| for j in C_i:
  the columns on which j holds i's value itself, not a blank that lets it through (on an exact
  column, present in both and compatible means equal);
- distance d_ij: Euclidean over the N columns, each divided by the original column's standard
  deviation (ddof 1; 1 when that is 0 or undefined), summing only the columns present in both
  (0 when N is empty); d and d' tie when |d − d'| ≤ 10⁻⁹·max(1, d_min), d_min the smaller;
- three attackers, each ranking C_i lexicographically and keeping its best candidates M_i:
  ``any_match`` (a): every candidate counts alike, nearest first: M_i = the j in C_i with the
  smallest d_ij (ties all belong), which is C_i itself when N is empty;
  ``exact_first`` (b): agreements first (the fewest blanks), then nearest: M_i = the j in C_i
  with the largest a_ij and, among those, the smallest d_ij; but when a candidate lies at
  distance 0 (d_ij = 0: it holds i's value, or a blank, on every distance column) those come
  first, as on an exact column: M_i = (c)'s M_i. So a distance column on which every released
  value is the true one or a blank gives the figures it gives read exactly (a rank swap that
  moves no value changes no attacker's figures);
  ``nearest_first`` (c): nearest first, then agreements: M_i = the j of (a)'s M_i with the
  largest a_ij;
- for each attacker p_i = 1/|M_i| if i ∈ M_i, else 0 (it picks one of its best candidates at
  random); its ``linkage_reidentifications`` = Σ p_i, ``linkage_risk_percent`` =
  100·mean(p_i), ``linkage_percent_certain`` = 100·mean(M_i = {i});
- the headline (:attr:`LinkageResult.attacker`, :attr:`LinkageResult.p_link` and the three
  figures) is the attacker with the most expected re-identifications Σ p_i; attackers within
  10⁻⁹·max(1, max Σ p) of the most tie, and the first of them in :data:`ATTACKERS` (a, b, c)
  is the headline. Without missing values and with at most one distance column all three
  are the same attacker (the largest a_ij is the candidates at distance 0, if any).

It is sample-based: the attacker knows the person is in the file. With only public recodings
(a) has p_i = 1/f_k(i) of the protected file, a blank matching any value (sdcMicro's α = 1), so
its ``linkage_reidentifications`` equals ``expected_reidentifications``; without missing values
that is the headline too.

sdcMicro's ``dRisk`` (interval disclosure) is reported beside it when N is not empty: with s_c
the standard deviation (ddof 1, missing removed) of protected column c and k = 0.05, record i
counts when none of its original values x_ic, c in N, lies outside
[z_ic − k·s_c, z_ic + k·s_c]; a comparison with a missing value (in x, z or s_c) counts as
inside. ``drisk_percent`` = 100 · share of records that count. This is what sdcMicro 5.8.1's
``dRisk`` computes on its 200 reference cases at k = 0.01, 0.05 and 0.1
(tests/data/sdcmicro/drisk); the rule "at most one value outside, a record with a missing value
not counting" matches none of those outputs but a few.

Computation: records are grouped by the pattern of missing values on E ∪ N, on the attacker's
side and on the release's side; for every pair of patterns the exact columns present in both
become one integer key, their number the a_ij of every candidate in it; for (b) and (c) every
non-empty set S of the distance columns present in both extends the key by the values on S
(the candidates equal on S, a_ij + |S|, distance over the other columns). Without
distance columns the candidates are counted with ``bincount``. With them, identical points are
merged (with their counts) and the nearest release point in the same key is found with a k-d
tree (:class:`scipy.spatial.cKDTree`), the key being an extra coordinate spaced wider than any
distance inside a key. Per attacker-side point, (a) takes the nearest over all pairs and counts
the candidates within its tie; (c) keeps, of those, the pairs with the largest a; (b) takes the
pairs with the largest a that hold a candidate and the nearest in them, counting again only
where that is farther than (a)'s; where (a)'s nearest is at distance 0, (b) is (c). Cost
O(n log n) per pair of patterns.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from sdc_core.data.columns import compare_keys, describe, is_date, is_number, restore
from sdc_core.errors import SdcInputError
from sdc_core.keys import check_columns, combine_codes, densify
from sdc_core.methods.banding import read_bands
from sdc_core.methods.common import kdtree_workers
from sdc_core.methods.spec import Release
from sdc_core.recipe import (
    METHODS,
    Recipe,
    apply_recipe,
    labelled,
    run_column_step,
    step_columns,
)

if TYPE_CHECKING:
    from scipy.spatial import cKDTree

#: Relative tolerance of a tie in distance.
TIE_RTOL = 1e-9
#: sdcMicro's default interval width of ``dRisk``, in standard deviations of the protected column.
DRISK_K = 0.05
#: Neighbours asked of the k-d tree at first (more are asked only where ties need them).
_FIRST_K = 2


#: The attackers of the module docstring, in the order that breaks a tie for the headline.
ATTACKERS = ("any_match", "exact_first", "nearest_first")
#: Each attacker in a few words, and how it ranks the candidates (docs/measures.md, "The
#: attackers"), for the pages, the report and the command line.
ATTACKER_NAMES = {"any_match": "every candidate alike",
                  "exact_first": "fewest blanks first",
                  "nearest_first": "nearest first"}
ATTACKER_RULES = {
    "any_match": "a blank matches as well as an equal value; the nearest on the distance "
                 "columns, if any",
    "exact_first": "the candidates that hold the person's own value on the most columns (the "
                   "fewest blanks), then the nearest on the distance columns, if any; those at "
                   "distance 0 first, if any",
    "nearest_first": "the nearest on the distance columns, if any, then those that hold the "
                     "person's own value on the most columns"}


@dataclass(frozen=True)
class Attack:
    """One attacker's success probability ``p_link`` and number of best candidates
    ``candidates`` (|M_i|; 0 when no released record fits) per record."""

    p_link: np.ndarray = field(repr=False)
    candidates: np.ndarray = field(repr=False)

    def figures(self, weight: np.ndarray | None = None) -> dict[str, float]:
        """Σ w_i p_i, 100 · Σ w_i p_i / n and 100 · Σ_{p_i = 1} w_i / n, n = Σ w_i: row i
        stands for ``weight[i]`` records (1 each without ``weight``)."""
        p, certain = self.p_link, self.p_link == 1.0
        n: float
        if weight is None:
            n, reid, sure = len(p), float(p.sum()), float(certain.sum())
        else:
            n, reid, sure = float(weight.sum()), float(np.dot(weight, p)), \
                float(weight[certain].sum())
        return {"linkage_reidentifications": reid, "linkage_risk_percent": 100.0 * reid / n,
                "linkage_percent_certain": 100.0 * sure / n}


def headline(figures: dict[str, dict[str, float]]) -> str:
    """The attacker with the most expected re-identifications r_a = Σ p_i: the first in
    :data:`ATTACKERS` with r_a ≥ max_b r_b − 10⁻⁹·max(1, max_b r_b)."""
    most = max(f["linkage_reidentifications"] for f in figures.values())
    return next(a for a in ATTACKERS if a in figures and figures[a]["linkage_reidentifications"]
                >= most - TIE_RTOL * max(1.0, most))


def attack_summary(attacks: dict[str, Attack], exact: Sequence[str], distance: Sequence[str],
                   weight: np.ndarray | None = None) -> dict[str, Any]:
    """The headline attacker's figures, its name (``linkage_attacker``), every attacker's
    figures (``linkage_attackers``) and the columns, JSON-ready."""
    figures = {a: attack.figures(weight) for a, attack in attacks.items()}
    top = headline(figures)
    return {**figures[top], "linkage_attacker": top, "linkage_attackers": figures,
            "linkage_exact_columns": list(exact), "linkage_distance_columns": list(distance)}


@dataclass(frozen=True)
class LinkageResult:
    """The linkage attack's result: every attacker's figures and the headline's.

    Every attacker's :class:`Attack` (``attackers``, keyed as :data:`ATTACKERS`) and the
    headline's, with the columns the attack used. Made by :func:`linkage_attack`. The headline
    (:attr:`attacker`) is the one that re-identifies most; :attr:`p_link`,
    :attr:`linkage_reidentifications` (Σ p_i), :attr:`linkage_risk_percent` (100 · mean(p_i)) and
    :attr:`linkage_percent_certain` are its figures; :meth:`summary` gives them all JSON-ready and
    :meth:`records` ``p_link`` and ``candidates`` per row.

    Parameters
    ----------
    exact : tuple of str
        The columns compared exactly.
    distance : tuple of str
        The columns compared by distance.
    attackers : dict of str to Attack
        Each attacker's p_i and number of best candidates.
    drisk_percent : float, optional
        The interval disclosure risk of the distance columns, in percent.

    Examples
    --------
    >>> from sdc_core import example, load_example, risk_profile
    >>> df, qi = load_example(), example("actg175").roles.qi
    >>> from sdc_core import linkage_attack
    >>> result = linkage_attack(df, df, qi)
    >>> result.attacker, result.exact, result.distance
    ('any_match', ('age', 'gender', 'race'), ())
    >>> result.records().head(2)
       p_link  candidates
    0    0.25           4
    1    1.00           1
    """

    exact: tuple[str, ...]
    distance: tuple[str, ...]
    attackers: dict[str, Attack] = field(repr=False)
    drisk_percent: float | None = None

    @cached_property
    def attacker(self) -> str:
        """The headline attacker: the one that re-identifies most (:func:`headline`)."""
        return headline({a: attack.figures() for a, attack in self.attackers.items()})

    @property
    def p_link(self) -> np.ndarray:
        """The headline attacker's p_i."""
        return self.attackers[self.attacker].p_link

    @property
    def candidates(self) -> np.ndarray:
        """The headline attacker's |M_i|."""
        return self.attackers[self.attacker].candidates

    @cached_property
    def _headline_figures(self) -> dict[str, float]:
        """The headline attacker's figures (:meth:`Attack.figures`), summed once: a page reads
        them on every move."""
        return self.attackers[self.attacker].figures()

    @property
    def linkage_reidentifications(self) -> float:
        """Σ_i p_i of the headline attacker: the expected number of people it re-identifies."""
        return self._headline_figures["linkage_reidentifications"]

    @property
    def linkage_risk_percent(self) -> float:
        """100 · mean(p_i) of the headline attacker."""
        return self._headline_figures["linkage_risk_percent"]

    @property
    def linkage_percent_certain(self) -> float:
        """100 · mean(M_i = {i}) of the headline attacker: the records it finds for sure."""
        return self._headline_figures["linkage_percent_certain"]

    def summary(self) -> dict[str, Any]:
        """The figures of the module docstring (:func:`attack_summary`), JSON-ready."""
        out = attack_summary(self.attackers, self.exact, self.distance)
        if self.drisk_percent is not None:
            out["drisk_percent"] = self.drisk_percent
        return out

    def records(self) -> pd.DataFrame:
        """The headline attacker's ``p_link`` and ``candidates`` per input row, in input
        order."""
        return pd.DataFrame({"p_link": self.p_link, "candidates": self.candidates})


def attack_columns(qi: Sequence[str], known: Sequence[str], released: Sequence[str],
                   recipe: Recipe | None) -> tuple[list[str], list[str]]:
    """(exact columns E, distance columns N) of the module docstring."""
    perturbed = {c for step in (recipe.steps if recipe else [])
                 if METHODS[step["method"]].release is Release.NUMERIC_PERTURBATION
                 for c in step_columns(step)}
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
    values allow, as in the release (:func:`sdc_core.data.columns.restore`); the band steps written
    as the release writes them (:func:`sdc_core.recipe.labelled`)."""
    y = original[list(columns)].copy()
    recipe = labelled(recipe, original) if recipe is not None else None
    for i, step in public_recodings(recipe, list(columns)):  # none without a recipe
        assert recipe is not None
        if reports is not None:
            resolved = resolved_recoding(step, reports[i])
            if resolved is None:
                continue
            step = resolved
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
    """The linkage attack of ``original`` against ``protected`` (aligned by row).

    What an attacker who knows the true quasi-identifiers ``qi`` re-identifies (module
    docstring): they apply the recipe's public recodings to the true values and look for each
    person among the released records; p_i = 1/|M_i| when person i is among the best candidates
    M_i, else 0, and ``linkage_reidentifications`` = Σ p_i. Without ``recipe`` the released
    values are taken as they are: no public recoding, and every quasi-identifier compared
    exactly. ``reports``: what each step did (``apply_recipe``'s reports), so that the public
    recodings are applied as the release resolved them; without them the recipe is run on
    ``original`` to get them.

    Parameters
    ----------
    original : pandas.DataFrame
        The true table.
    protected : pandas.DataFrame
        The release, row i the release of the original's row i.
    qi : sequence of str
        The quasi-identifiers the attacker knows.
    recipe : Recipe, optional
        The recipe that made the release (its public recodings, its perturbed columns).
    known : sequence of str, optional
        Other columns the attacker knows, compared by distance.
    reports : sequence of dict, optional
        The reports of :func:`apply_recipe` for this release.

    Returns
    -------
    LinkageResult
        Every attacker's p_i and figures, and the headline attacker's.

    Raises
    ------
    SdcInputError
        When the tables differ in length, have no records, or a column is unknown.

    Examples
    --------
    >>> from sdc_core import example, load_example, risk_profile
    >>> df, qi = load_example(), example("actg175").roles.qi
    >>> from sdc_core import linkage_attack
    >>> before = linkage_attack(df, df, qi)
    >>> before.linkage_reidentifications, round(before.linkage_percent_certain, 4)
    (182.0, 1.3558)
    """
    if len(original) != len(protected):
        raise SdcInputError(f"the protected table has {len(protected)} records, the original "
                            f"{len(original)}: they must be aligned row by row")
    if len(original) == 0:
        raise SdcInputError("the table has no records")
    view = attack_input(original, protected, qi, recipe, known, reports)
    attacks = link(view.y_codes, view.z_codes, view.y_num, view.z_num)
    drisk = interval_disclosure(
        np.column_stack([_as_float(original[c], c) for c in view.distance]),
        np.column_stack([_as_float(protected[c], c) for c in view.distance])) \
        if view.distance else None
    return LinkageResult(view.exact, view.distance, attacks, drisk)


@dataclass(frozen=True)
class AttackInput:
    """What every linkage attack starts from (module docstring): the exact columns E and the
    distance columns N, the attacker's values y = D(x) and the released ones z on E as joint
    integer codes (n, |E|; −1 missing), and on N as numbers divided by the original column's
    standard deviation (n, |N|; NaN missing). Row i of y is person i, row i of z their
    release."""

    exact: tuple[str, ...]
    distance: tuple[str, ...]
    y_codes: np.ndarray = field(repr=False)
    z_codes: np.ndarray = field(repr=False)
    y_num: np.ndarray = field(repr=False)
    z_num: np.ndarray = field(repr=False)


def attack_input(original: pd.DataFrame, protected: pd.DataFrame, qi: Sequence[str],
                 recipe: Recipe | None = None, known: Sequence[str] = (),
                 reports: Sequence[dict[str, Any]] | None = None) -> AttackInput:
    """The attacker's view of ``protected``, the one that the person-level attack
    (:func:`linkage_attack`) and the household attack
    (:func:`sdc_core.risk.household.household_linkage`) both read (docs/measures.md, "Risk
    after protection: the linkage attack"): the true values of the quasi-identifiers ``qi``
    and ``known`` columns with the recipe's public recodings applied as the release resolved
    them (``reports``; without them the recipe is run on ``original``), the columns a numeric
    perturbation touched (and the known ones) compared by distance, the others exactly. Both
    tables have the same rows in the same order (the caller checks)."""
    qi, known = check_roles(original, qi, known)
    exact, distance = attack_columns(qi, known, list(protected.columns), recipe)
    if recipe is not None and reports is None:
        reports = apply_recipe(recipe, original).reports
    y = attacker_view(original, exact + distance, recipe, reports)
    # band labels the attacker made, then perturbed in the release: measured as midpoints
    y = y.assign(**{c: read_bands(y[c], original[c]) for c in distance})
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
    return AttackInput(tuple(exact), tuple(distance), y_codes, z_codes, y_num, z_num)


def joint_codes(y: pd.DataFrame, z: pd.DataFrame,
                columns: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Integer codes (−1 = missing) of the attacker's and the released values of every exact
    column, from one factorisation of both, so equal values get equal codes: shape (n, |E|).
    Values are compared by what they are (:func:`sdc_core.data.columns.compare_keys`), so a release
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
    """Distinct points of one missing-value pattern: codes (n_u, |E|), coordinates (n_u, |N|)
    and their codes (``equal``: equal values, equal codes), how many records each stands for,
    and which point each record is."""

    codes: np.ndarray
    coords: np.ndarray
    equal: np.ndarray
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


def _distinct(codes: np.ndarray, coords: np.ndarray, equal: np.ndarray, records: np.ndarray,
              weight: np.ndarray | None) -> _Points:
    """The rows as points, each standing for ``weight`` records (1 without it); with distance
    columns, identical rows (same codes, same coordinates) merged into one point with their
    count, to keep the k-d trees small."""
    if coords.shape[1] == 0:
        every = len(records) == len(codes)  # one pattern: no copy
        count = np.ones(len(records), dtype=np.int64) if weight is None else weight[records]
        return _Points(codes if every else codes[records], coords if every else coords[records],
                       equal[records], count, np.arange(len(records)), records)
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
        np.bincount(point, weights=weight[records], minlength=n_points).astype(weight.dtype)
    return _Points(codes[rows], coords[rows], equal[rows], count, point, records)


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
    #: a_ij of every candidate: the exact columns present in both patterns, and the distance
    #: columns the key also holds (:func:`_equal_pairs`)
    agree: int
    tree: cKDTree | None = None
    scale: float = 0.0
    near_d: np.ndarray | None = None
    near_i: np.ndarray | None = None
    #: every query point's nearest distance in the pair (:func:`_nearest`), and which points
    #: it was asked for
    near: np.ndarray | None = None
    asked: np.ndarray | None = None

    def neighbours(self) -> tuple[cKDTree, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``tree``, ``near_d``, ``near_i``, ``near`` and ``asked``, once :func:`_nearest` has
        made them (it runs first on a pair with distance columns)."""
        assert self.tree is not None and self.near_d is not None and self.near_i is not None \
            and self.near is not None and self.asked is not None, "_nearest runs first"
        return self.tree, self.near_d, self.near_i, self.near, self.asked


def _pair(ys: _Points, zs: _Points) -> _Pair:
    ye, ze = ys.codes[0] >= 0, zs.codes[0] >= 0
    shared = np.flatnonzero(ye & ze)
    dims = np.flatnonzero(~np.isnan(ys.coords[0]) & ~np.isnan(zs.coords[0]))
    if len(shared) == 0:
        key_y = np.zeros(len(ys.count), dtype=np.int64)
        key_z = np.zeros(len(zs.count), dtype=np.int64)
        return _Pair(ys, zs, key_y, key_z, 1, dims, 0)
    both = np.concatenate([ys.codes[:, shared], zs.codes[:, shared]])
    key, bound = combine_codes([both[:, j] for j in range(len(shared))],
                               (both.max(axis=0) + 1).tolist())
    if len(dims):  # the key becomes a coordinate of the k-d tree: keep it small
        key, bound = densify(key)
    return _Pair(ys, zs, key[: len(ys.count)], key[len(ys.count):], bound, dims, len(shared))


def _equal_pairs(pair: _Pair) -> list[_Pair]:
    """For every non-empty set S of the pair's distance columns, the release points that also
    hold the query's values on S (their key extended by those values, the distance over the
    other columns): agreements a + |S|. Those where no query finds such a point are left
    out."""
    out = []
    for size in range(1, len(pair.dims) + 1):
        for cols in itertools.combinations(pair.dims.tolist(), size):
            parts = [np.concatenate([pair.key_y, pair.key_z])] + [
                np.concatenate([pair.ys.equal[:, c], pair.zs.equal[:, c]]) for c in cols]
            key, bound = combine_codes(parts, [pair.bound] + [int(p.max()) + 1
                                                              for p in parts[1:]])
            key_y, key_z = key[: len(pair.key_y)], key[len(pair.key_y):]
            if not np.isin(key_y, key_z).any():
                continue
            rest = np.setdiff1d(pair.dims, cols)
            if len(rest):  # the key becomes a coordinate of the k-d tree: keep it small
                key, bound = densify(key)
                key_y, key_z = key[: len(pair.key_y)], key[len(pair.key_y):]
            out.append(_Pair(pair.ys, pair.zs, key_y, key_z, bound, rest, pair.agree + size))
    return out


def _nearest(pair: _Pair, wanted: np.ndarray | None = None) -> np.ndarray:
    """Distance from the query points (``wanted``, a mask; every one without it) to their
    nearest release point with the same key (inf when there is none, or for a point not asked
    yet); keeps the first neighbours for the tie count. Asked again, it adds the points it was
    not asked before."""
    if len(pair.dims) == 0:
        if pair.near is None:
            present = np.bincount(pair.key_z, minlength=pair.bound)[pair.key_y] > 0
            pair.near = np.where(present, 0.0, np.inf)
        return pair.near
    yc, zc = pair.ys.coords[:, pair.dims], pair.zs.coords[:, pair.dims]
    if pair.tree is None:
        from scipy.spatial import cKDTree  # ~0.7 s to import: only with distance columns

        span = np.ptp(np.concatenate([yc, zc]), axis=0)
        pair.scale = 2.0 * float(np.sqrt(np.sum(span * span))) + 1.0
        pair.tree = cKDTree(np.column_stack([pair.key_z * pair.scale, zc]), balanced_tree=False,
                            compact_nodes=False)
        k = min(_FIRST_K, len(pair.key_z))
        pair.near_d = np.full((len(yc), k), np.inf)
        pair.near_i = np.full((len(yc), k), len(zc), dtype=np.int64)
        pair.near = np.full(len(yc), np.inf)
        # a point whose key no release point has is asked nothing: it has no candidate
        pair.asked = ~np.isin(pair.key_y, pair.key_z)
    tree, near_d, near_i, near, asked = pair.neighbours()
    ask = ~asked if wanted is None else ~asked & wanted
    rows = np.flatnonzero(ask)
    asked |= ask  # in place: pair.asked
    if len(rows):
        k = near_i.shape[1]
        d, i = tree.query(np.column_stack([pair.key_y[rows] * pair.scale, yc[rows]]), k=k,
                          workers=kdtree_workers(len(rows)))
        near_d[rows], near_i[rows] = d.reshape(len(rows), k), i.reshape(len(rows), k)
        first = np.minimum(near_i[rows, 0], len(zc) - 1)
        same = (near_i[rows, 0] < len(zc)) & (pair.key_z[first] == pair.key_y[rows])
        near[rows] = np.where(same, distances(yc[rows], zc[first]), np.inf)
    return near


def _count_within(pair: _Pair, threshold: np.ndarray) -> np.ndarray:
    """Records (counts) of release points with the query's key within ``threshold`` (none
    where it is infinite)."""
    if len(pair.dims) == 0:
        counts = np.bincount(pair.key_z, weights=pair.zs.count, minlength=pair.bound)
        return np.where(np.isfinite(threshold), counts[pair.key_y], 0.0)
    yc, zc = pair.ys.coords[:, pair.dims], pair.zs.coords[:, pair.dims]
    total = np.zeros(len(yc))
    # a query whose nearest point of the pair lies beyond its threshold has none within it
    tree, near_d, near_i, near, _ = pair.neighbours()
    todo = np.flatnonzero(np.isfinite(threshold) & (near <= threshold))
    d, i, k = near_d[todo], near_i[todo], near_i.shape[1]
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
        d, i = tree.query(np.column_stack([pair.key_y[todo] * pair.scale, yc[todo]]), k=k,
                          distance_upper_bound=float(bound.max()),
                          workers=kdtree_workers(len(todo)))
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


def _value_codes(y_num: np.ndarray, z_num: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Codes (−1 = missing) of the distance columns' values, from one factorisation of both
    sides per column, so equal values get equal codes."""
    n = len(y_num)
    y_eq = np.empty(y_num.shape, dtype=np.int64)
    z_eq = np.empty(z_num.shape, dtype=np.int64)
    for j in range(y_num.shape[1]):
        codes, _ = pd.factorize(np.concatenate([y_num[:, j], z_num[:, j]]),
                                use_na_sentinel=True)
        y_eq[:, j], z_eq[:, j] = codes[:n], codes[n:]
    return y_eq, z_eq


def link(y_codes: np.ndarray, z_codes: np.ndarray, y_num: np.ndarray,
         z_num: np.ndarray, weight: np.ndarray | None = None) -> dict[str, Attack]:
    """Every attacker's p_i and |M_i| (module docstring), keyed as :data:`ATTACKERS`, for
    attacker keys ``y_codes`` / released keys ``z_codes`` (n, |E|, jointly coded, −1 missing)
    and standardised distance columns ``y_num`` / ``z_num`` (n, |N|, NaN missing), record i of
    the release being the true match of query i.

    With ``weight`` (whole numbers), row i stands for ``weight[i]`` records that all have its
    (y, z): the engines' table of distinct (y, z) pairs gives every one of them its p and
    |M|. With real ``weight`` the candidates are Σ_{j ∈ M_i} weight[j], real numbers (the
    attribute-inference attack's sums of a numeric sensitive column); p is then meaningless."""
    n = len(y_codes)
    y_pat, z_pat = _patterns(y_codes, y_num), _patterns(z_codes, z_num)
    y_eq, z_eq = _value_codes(y_num, z_num)
    queries = [_distinct(y_codes, y_num, y_eq, np.flatnonzero(y_pat == p), None)
               for p in np.sort(pd.unique(y_pat))]
    targets = [_distinct(z_codes, z_num, z_eq, np.flatnonzero(z_pat == q), weight)
               for q in np.sort(pd.unique(z_pat))]
    # per record: (a)'s smallest distance d_a; (b)'s largest agreement top_b and the smallest
    # distance d_b among its candidates; (c)'s largest agreement top_c among (a)'s best
    d_a, d_b = np.full(n, np.inf), np.full(n, np.inf)
    top_b, top_c = np.full(n, -1), np.full(n, -1)
    size = {a: np.zeros(n) for a in ATTACKERS}
    one = True  # every candidate of every query with the same a: one attacker
    same_as_a: list[tuple[np.ndarray, int]] = []  # (records, a) of patterns where (b), (c) = (a)
    for ys in queries:
        mine = [_pair(ys, zs) for zs in targets]
        # (b) and (c) also read the candidates equal on some distance columns; at the largest
        # agreement of a query these sets are disjoint (a candidate is in the one of its
        # agreement), so their counts add up. Most agreements first: a point that has found
        # more is not asked the sets with fewer
        every = mine + sorted((sub for pair in mine for sub in _equal_pairs(pair)),
                              key=lambda sub: -sub.agree)
        uniform = len(every) == len(mine) and len({pair.agree for pair in mine}) == 1
        one &= uniform
        q = len(ys.count)
        best, best_b, agree_b = np.full(q, np.inf), np.full(q, np.inf), np.full(q, -1)
        for k, pair in enumerate(every):
            near = _nearest(pair, None if k < len(mine) else agree_b <= pair.agree)
            if k < len(mine):
                np.minimum(best, near, out=best)
            if uniform:
                continue
            found = np.isfinite(near)
            better, same = found & (pair.agree > agree_b), found & (pair.agree == agree_b)
            best_b = np.where(better, near, np.where(same, np.minimum(best_b, near), best_b))
            agree_b = np.where(better, pair.agree, agree_b)
        size_a, size_b, size_c, agree_c = np.zeros(q), np.zeros(q), np.zeros(q), np.full(q, -1)
        farther = best_b > best  # (b)'s nearest lies beyond (a)'s: (b) counts again
        for k, pair in enumerate(every):
            if k >= len(mine):  # the points (c) may still need
                _nearest(pair, (agree_c <= pair.agree) & np.isfinite(best))
            within = _count_within(pair, tie_threshold(best))
            if k < len(mine):
                size_a += within
            if uniform:
                continue
            found = within > 0
            better, same = found & (pair.agree > agree_c), found & (pair.agree == agree_c)
            size_c = np.where(better, within, np.where(same, size_c + within, size_c))
            agree_c = np.where(better, pair.agree, agree_c)
            mine_b = pair.agree == agree_b
            redo = mine_b & farther
            if redo.any():
                within = np.where(redo, _count_within(
                    pair, np.where(redo, tie_threshold(best_b), np.inf)), within)
            size_b += np.where(mine_b, within, 0.0)
        rows, point = ys.records, ys.of_record
        d_a[rows], size["any_match"][rows] = best[point], size_a[point]
        if uniform:  # (b) and (c) are (a): filled in below if another pattern needs them
            same_as_a.append((rows, mine[0].agree))
            continue
        d_b[rows], size["exact_first"][rows] = best_b[point], size_b[point]
        size["nearest_first"][rows] = size_c[point]
        top_b[rows], top_c[rows] = agree_b[point], agree_c[point]
    if not one:
        for rows, agree in same_as_a:
            d_b[rows] = d_a[rows]
            top_b[rows] = top_c[rows] = np.where(np.isfinite(d_a[rows]), agree, -1)
            size["exact_first"][rows] = size["nearest_first"][rows] = size["any_match"][rows]
    compatible = ((y_codes < 0) | (z_codes < 0) | (y_codes == z_codes)).all(axis=1)
    d_self = distances(y_num, z_num)
    nearest = compatible & (d_self <= tie_threshold(d_a))
    hit = {"any_match": nearest}
    if not one:
        agree = ((y_codes >= 0) & (z_codes >= 0)).sum(axis=1) \
            + ((y_eq >= 0) & (y_eq == z_eq)).sum(axis=1)
        hit |= {"exact_first": compatible & (agree == top_b) & (d_self <= tie_threshold(d_b)),
                "nearest_first": nearest & (agree == top_c)}
        # (b) where the nearest candidate is at distance 0: (c)'s best candidates
        zero = d_a == 0.0
        hit["exact_first"] = np.where(zero, hit["nearest_first"], hit["exact_first"])
        size["exact_first"] = np.where(zero, size["nearest_first"], size["exact_first"])
    whole = weight is None or weight.dtype.kind in "iub"
    attacks = {a: Attack(np.where(h & (size[a] > 0), 1.0 / np.maximum(size[a], 1.0), 0.0),
                         size[a].astype(np.int64) if whole else size[a])
               for a, h in hit.items()}
    return {a: attacks[a if a in attacks else "any_match"] for a in ATTACKERS}
