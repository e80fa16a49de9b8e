"""Household risk and the household linkage attack (docs/measures.md, "Household risk").

**Household risk** (sdcMicro's ``measure_risk`` with ``hid``). With r_i the individual risk of
record i (:mod:`sdc_core.risk.individual`, from the f_k and F_k of
:func:`~sdc_core.classes.class_sizes`, weights and missing keys read as the risk profile reads
them) and h(i) its household:

- R_h = 1 − Π_{i ∈ h} (1 − r_i), given to every member of h (a member with r_i = 1 makes
  R_h = 1; a household of one has R_h = r_i);
- ``household_expected_reidentifications`` = Σ_i R_{h(i)} (over records: a household counts
  once per member) and ``household_risk_pct`` = 100 · Σ_i R_{h(i)} / n.

It is computed as R_h = −expm1(Σ_{i ∈ h} log1p(−r_i)) with one ``bincount`` over the records
(a member with r_i = 1 adds log1p(0) and the household's largest r_i, 1, is kept: no log 0),
and never below the household's largest r_i, as it is in exact arithmetic.

**The household linkage attack.** The attacker knows the quasi-identifiers of every member of a
household: its *composition*, the multiset of the members' key tuples (and so its size). They
look for it among the released households, each read as the multiset of its members' released
key tuples, matching exactly (a missing key is a value of its own: a blanked key matches only a
blank). The release keeps the original's household ids, so M_h, the number of released
households with h's composition, includes h itself when h's released composition is its
original one:

- p_h = 1/M_h when the released h has h's composition, else 0 (the attacker picks one of the
  M_h matches at random);
- ``reidentified`` = |{h : p_h = 1}| (h matches exactly one released household, itself) and the
  people in them; ``expected_reidentified`` = Σ_h p_h and ``expected_people`` = Σ_h |h| · p_h;
- ``composition_uniques``: the households whose composition no other household of the original
  shares. With the release equal to the original the attacker re-identifies exactly those.

Compositions are labelled without hashing: the records are sorted by household and key, the
households of each size s laid out as rows of s keys, and the rows given dense labels
(:func:`~sdc_core.keys.combine_codes`), one size at a time.

**A table's household figures** (:func:`table_households`, :class:`HouseholdFigures`): its
household risk, its households unique by composition and the household linkage attack on it,
as the pages, the report and :class:`sdc_core.assess.Assessment` give them together.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from sdc_core.classes import class_sizes
from sdc_core.errors import SdcInputError
from sdc_core.households import household_codes
from sdc_core.keys import check_columns, combine_codes, densify
from sdc_core.recipe import Recipe
from sdc_core.risk.individual import individual_risk
from sdc_core.risk.linkage import attack_input, tie_threshold


@dataclass(frozen=True)
class HouseholdRisk:
    """Household risk per record and its totals, made by :func:`household_risk`.

    With r_i the individual risk of record i and h(i) its household, R_h = 1 − Π_{i∈h}(1 − r_i)
    is given to every member; ``expected_reidentifications`` = Σ_i R_{h(i)} and
    ``risk_percent`` = 100 · Σ_i R_{h(i)} / n (docs/measures.md, "Household risk").

    Parameters
    ----------
    household : str
        The household-id column.
    n_records, n_households : int
        Records and households.
    expected_reidentifications : float
        Σ over records of their household's risk (sdcMicro's ``hier_risk_ER``).
    risk_percent : float
        100 · ``expected_reidentifications`` / n (sdcMicro's ``hier_risk_pct``).
    expected_households : float
        Σ over households of R_h: the expected number of households re-identified.
    max_risk : float
        The largest R_h.
    size_mean, size_median : float
        Mean and median household size over households.
    size_max, n_single : int
        The largest household and the number of households of one person.
    risk : numpy.ndarray
        R_{h(i)} of each input row.
    individual : numpy.ndarray
        r_i of each input row.
    household_code : numpy.ndarray
        Each row's household as an integer below ``n_households`` (order of first appearance).

    Examples
    --------
    >>> import pandas as pd
    >>> from sdc_core import household_risk
    >>> df = pd.DataFrame({"hh": [1, 1, 2, 2, 3], "sex": ["f", "m", "f", "m", "f"],
    ...                    "age": [40, 40, 40, 40, 12]})
    >>> hr = household_risk(df, ["sex", "age"], "hh")
    >>> hr.n_households, hr.expected_reidentifications, hr.risk_percent
    (3, 4.0, 80.0)
    >>> hr.records()
       household_risk  individual_risk
    0            0.75              0.5
    1            0.75              0.5
    2            0.75              0.5
    3            0.75              0.5
    4            1.00              1.0
    """

    household: str
    n_records: int
    n_households: int
    expected_reidentifications: float
    risk_percent: float
    expected_households: float
    max_risk: float
    size_mean: float
    size_median: float
    size_max: int
    n_single: int
    risk: np.ndarray = field(repr=False)
    individual: np.ndarray = field(repr=False)
    household_code: np.ndarray = field(repr=False)

    def summary(self) -> dict[str, object]:
        """The totals as plain Python values, under their JSON keys (``household_…``)."""
        return {"household": self.household, "households": self.n_households,
                "household_expected_reidentifications": self.expected_reidentifications,
                "household_risk_pct": self.risk_percent,
                "household_expected_households": self.expected_households,
                "household_max_risk": self.max_risk,
                "household_size_mean": self.size_mean,
                "household_size_median": self.size_median,
                "household_size_max": self.size_max,
                "households_single": self.n_single}

    def records(self) -> pd.DataFrame:
        """``household_risk`` and ``individual_risk`` per input row, in input order."""
        return pd.DataFrame({"household_risk": self.risk, "individual_risk": self.individual})


@dataclass(frozen=True)
class HouseholdLinkage:
    """What the household linkage attack re-identifies, made by :func:`household_linkage`.

    The attacker matches each household's composition (the multiset of its members' key
    tuples) against the released households' compositions; M_h released households match h,
    p_h = 1/M_h when the released h is among them, else 0 (docs/measures.md, "Household risk").

    Parameters
    ----------
    household : str
        The household-id column.
    qi : tuple of str
        The quasi-identifiers the attacker knows for every member.
    n_records, n_households : int
        Records and households.
    reidentified : int
        Households with p_h = 1: their composition matches one released household, themselves.
    reidentified_percent : float
        100 · ``reidentified`` / number of households.
    people_reidentified : int
        The people in those households.
    people_reidentified_percent : float
        100 · ``people_reidentified`` / n.
    expected_reidentified, expected_people : float
        Σ_h p_h and Σ_h |h| · p_h.
    composition_uniques : int
        Households of the original whose composition no other household shares.
    composition_unique_percent : float
        100 · ``composition_uniques`` / number of households.
    composition_unique_people : int
        The people in those households.
    matches : numpy.ndarray
        M_h per household (order of first appearance of the ids in the original).
    p_link : numpy.ndarray
        p_h per household, same order.

    Examples
    --------
    >>> import pandas as pd
    >>> from sdc_core import household_linkage
    >>> original = pd.DataFrame({"hh": [1, 1, 2, 2, 3], "sex": ["f", "m", "f", "m", "f"],
    ...                          "age": [40, 40, 40, 12, 40]})
    >>> released = original.assign(age=[40, 40, 40, 40, 40])
    >>> attack = household_linkage(original, released, ["sex", "age"], "hh")
    >>> attack.composition_uniques, attack.reidentified, attack.expected_reidentified
    (3, 1, 1.5)
    >>> attack.matches.tolist(), attack.p_link.tolist()
    ([2, 0, 1], [0.5, 0.0, 1.0])
    """

    household: str
    qi: tuple[str, ...]
    n_records: int
    n_households: int
    reidentified: int
    reidentified_percent: float
    people_reidentified: int
    people_reidentified_percent: float
    expected_reidentified: float
    expected_people: float
    composition_uniques: int
    composition_unique_percent: float
    composition_unique_people: int
    matches: np.ndarray = field(repr=False)
    p_link: np.ndarray = field(repr=False)

    def summary(self) -> dict[str, object]:
        """The figures as plain Python values, under their JSON keys
        (``household_linkage_…``, ``household_composition_…``)."""
        return {"households": self.n_households,
                "household_linkage_reidentified": self.reidentified,
                "household_linkage_reidentified_percent": self.reidentified_percent,
                "household_linkage_people": self.people_reidentified,
                "household_linkage_people_percent": self.people_reidentified_percent,
                "household_linkage_expected": self.expected_reidentified,
                "household_linkage_expected_people": self.expected_people,
                "household_composition_uniques": self.composition_uniques,
                "household_composition_unique_percent": self.composition_unique_percent,
                "household_composition_unique_people": self.composition_unique_people}


def risk_json(household: str, n_households: int, expected: float, n_records: int,
              uniques: int) -> dict[str, Any]:
    """``risk --household``'s figures under their JSON names, the same on every engine:
    the households, Σ_i R_h(i) and it in % of the records, and the households unique by
    composition (count and % of the households)."""
    return {"household": household, "households": n_households,
            "household_expected_reidentifications": expected,
            "household_risk_pct": 100.0 * expected / n_records,
            "household_composition_uniques": uniques,
            "household_composition_unique_percent": 100.0 * uniques / n_households}


def combine_household_risk(individual: np.ndarray, code: np.ndarray,
                           n_households: int) -> np.ndarray:
    """R_h = 1 − Π_{i∈h}(1 − r_i) per household from the individual risks ``individual`` and
    each record's household ``code`` (integers below ``n_households``).

    Computed as −expm1(Σ log1p(−r_i)), and never below the largest r_i of the household (which
    it is in exact arithmetic; rounding must not make a member add nothing or less): exactly r_i
    for a household of one and exactly 1 for a household with a member at r_i = 1."""
    r = np.clip(np.asarray(individual, dtype=np.float64), 0.0, 1.0)
    certain = r >= 1.0
    logs = np.log1p(-np.where(certain, 0.0, r))
    out = -np.expm1(np.bincount(code, weights=logs, minlength=n_households))
    largest = np.zeros(n_households)
    np.maximum.at(largest, code, r)
    out = np.maximum(out, largest)
    size = np.bincount(code, minlength=n_households)
    out[size == 1] = largest[size == 1]
    return out


def household_risk(df: pd.DataFrame, qi: Sequence[str], household: str,
                   weight: str | None = None, na: str = "wildcard",
                   alpha: float = 1.0) -> HouseholdRisk:
    """Household risk as sdcMicro defines it: R_h = 1 − Π_{i∈h}(1 − r_i) for every member.

    r_i is the individual risk of :func:`~sdc_core.risk_profile` (f_k, F_k with ``weight``,
    missing keys read by ``na`` and ``alpha``); R_h goes to every member of household h;
    ``expected_reidentifications`` = Σ_i R_{h(i)} and ``risk_percent`` =
    100 · Σ_i R_{h(i)} / n (docs/measures.md, "Household risk").

    Parameters
    ----------
    df : pandas.DataFrame
        The table, one row per person.
    qi : sequence of str
        The quasi-identifier columns.
    household : str
        The household-id column (not a quasi-identifier; no blank ids).
    weight : str, optional
        A sampling-weight column.
    na : {"wildcard", "category"}, default "wildcard"
        The reading of a missing key, as in :func:`~sdc_core.risk_profile`.
    alpha : float, default 1.0
        The weight of a wildcard match, as in :func:`~sdc_core.risk_profile`.

    Returns
    -------
    HouseholdRisk
        The per-record household and individual risks and the totals.

    Raises
    ------
    SdcInputError
        When a column is unknown, the household column is a quasi-identifier or has blank ids,
        the table has no records, or the weights or ``na``/``alpha`` are out of range.

    Examples
    --------
    >>> import pandas as pd
    >>> from sdc_core import household_risk
    >>> df = pd.DataFrame({"hh": ["a", "a", "b", "b", "c"], "sex": ["f", "m", "f", "m", "f"],
    ...                    "age": [40, 40, 40, 40, 12]})
    >>> hr = household_risk(df, ["sex", "age"], "hh")
    >>> hr.individual.tolist()  # (f, 40) and (m, 40) twice each, (f, 12) once
    [0.5, 0.5, 0.5, 0.5, 1.0]
    >>> hr.risk.tolist()  # 1 − (1 − ½)(1 − ½) for the two couples
    [0.75, 0.75, 0.75, 0.75, 1.0]
    >>> hr.expected_reidentifications, hr.risk_percent
    (4.0, 80.0)
    """
    if len(df) == 0:
        raise SdcInputError("the table has no records")
    code, n_households = household_codes(df, household, qi)
    cs = class_sizes(df, qi, weight, na, alpha)
    r = individual_risk(cs.fk, cs.Fk)
    per_household = combine_household_risk(r, code, n_households)
    risk = per_household[code]
    total = float(risk.sum())
    size = np.bincount(code, minlength=n_households)
    return HouseholdRisk(household=household, n_records=len(df), n_households=n_households,
                         expected_reidentifications=total, risk_percent=100.0 * total / len(df),
                         expected_households=float(per_household.sum()),
                         max_risk=float(per_household.max()), size_mean=len(df) / n_households,
                         size_median=float(np.median(size)), size_max=int(size.max()),
                         n_single=int(np.count_nonzero(size == 1)), risk=risk, individual=r,
                         household_code=code)


def record_keys(tables: Sequence[pd.DataFrame], qi: Sequence[str]) -> list[np.ndarray]:
    """One integer per record for its tuple of key values, the same integer for the same tuple
    in every table (a missing value is a value of its own)."""
    sizes = [len(t) for t in tables]
    codes, cards = [], []
    for c in qi:
        values = pd.concat([t[c] for t in tables], ignore_index=True)
        code, uniq = pd.factorize(values, use_na_sentinel=False)
        codes.append(code.astype(np.int64, copy=False))
        cards.append(max(len(uniq), 1))
    key, _ = combine_codes(codes, cards)
    return np.split(key, np.cumsum(sizes)[:-1])


def composition_labels(code: np.ndarray, n_households: int, key: np.ndarray) -> np.ndarray:
    """A label per household, equal for two households exactly when they hold the same
    multiset of record ``key`` values (so the same size): ``code`` is each record's household
    (integers below ``n_households``, every one held by some record)."""
    size = np.bincount(code, minlength=n_households)
    order = np.lexsort((key, code))
    sorted_code, sorted_key = code[order], key[order]
    bound = int(key.max()) + 1 if len(key) else 1
    labels = np.empty(n_households, dtype=np.int64)
    offset = 0
    for s in np.unique(size):
        s = int(s)
        members = size[sorted_code] == s
        block = sorted_key[members].reshape(-1, s)
        owners = sorted_code[members][::s]
        row, _ = combine_codes([block[:, j] for j in range(s)], [bound] * s)
        dense, count = densify(row)
        labels[owners] = dense + offset
        offset += count
    return labels


def composition_uniques(df: pd.DataFrame, qi: Sequence[str], household: str) -> int:
    """The number of households unique by composition, the multiset of members' key tuples.

    A household's composition is the multiset of its members' key tuples (and so its size); it
    is unique when no other household has it. A missing key is a value of its own
    (docs/measures.md, "Household risk").

    Parameters
    ----------
    df : pandas.DataFrame
        The table, one row per person.
    qi : sequence of str
        The quasi-identifier columns.
    household : str
        The household-id column (not a quasi-identifier; no blank ids).

    Returns
    -------
    int
        The number of households whose composition is unique.

    Raises
    ------
    SdcInputError
        When a column is unknown, the household column is a quasi-identifier or has blank ids,
        or no quasi-identifier is given.

    Examples
    --------
    >>> import pandas as pd
    >>> from sdc_core import composition_uniques
    >>> df = pd.DataFrame({"hh": [1, 1, 2, 2, 3, 3], "sex": ["f", "m", "m", "f", "f", "f"]})
    >>> composition_uniques(df, ["sex"], "hh")  # households 1 and 2 are both {f, m}
    1
    """
    cols = _check_keys(df, qi)
    code, n_households = household_codes(df, household, cols)
    (key,) = record_keys([df], cols)
    labels = composition_labels(code, n_households, key)
    return int(np.count_nonzero(np.bincount(labels)[labels] == 1))


def household_linkage(original: pd.DataFrame, released: pd.DataFrame, qi: Sequence[str],
                      household: str, recipe: Recipe | None = None, known: Sequence[str] = (),
                      reports: Sequence[dict[str, Any]] | None = None) -> HouseholdLinkage:
    """The household linkage attack: households re-identified by their composition.

    The attacker starts from what the person-level attack starts from
    (:func:`~sdc_core.risk.linkage.attack_input`): every member's true quasi-identifiers (and
    ``known`` columns) with the recipe's public recodings applied. A released household g is a
    candidate for household h when the members of the two can be paired one to one, each pair
    agreeing on every exact column (a blank on either side agreeing with anything); its
    distance is the smallest, over such pairings, of √(Σ over the pairs of d²), d the
    person-level attack's distance on the distance columns. M_h = the candidates at the
    smallest distance (ties all count), p_h = 1/|M_h| when the released h is one of them,
    else 0. Re-identified: p_h = 1 (docs/measures.md, "Household risk").

    Parameters
    ----------
    original : pandas.DataFrame
        The true values, one row per person.
    released : pandas.DataFrame
        The release: the same rows in the same order with the same household ids, key values
        possibly recoded, perturbed or blank.
    qi : sequence of str
        The quasi-identifiers the attacker knows for every member.
    household : str
        The household-id column (not a quasi-identifier; no blank ids).
    recipe : Recipe, optional
        The recipe that made the release: its public recodings, which the attacker applies to
        the true values, and its numeric perturbations, whose columns are compared by
        distance. Without it the released values are compared with the true ones as they are.
    known : sequence of str, optional
        Other columns the attacker knows for every member, compared by distance.
    reports : sequence of dict, optional
        The reports of :func:`~sdc_core.recipe.apply_recipe` for this release (the recodings
        as the release resolved them); without them the recipe is run on ``original``.

    Returns
    -------
    HouseholdLinkage
        The households and people re-identified, the expected ones, and the households unique
        by composition in the original.

    Raises
    ------
    SdcInputError
        When a column is unknown in either table, the household column is a quasi-identifier or
        has blank ids, the tables have no records, or the release does not keep the original's
        rows and household ids.

    Examples
    --------
    >>> import pandas as pd
    >>> from sdc_core import apply_recipe, household_linkage, parse_recipe
    >>> original = pd.DataFrame({"hh": [1, 1, 2, 2, 3], "sex": ["f", "m", "f", "m", "f"],
    ...                          "age": [40, 40, 40, 12, 40]})
    >>> attack = household_linkage(original, original, ["sex", "age"], "hh")
    >>> attack.reidentified, attack.people_reidentified, attack.composition_uniques
    (3, 5, 3)
    >>> released = original.assign(age=[40, 40, 40, 40, 40])
    >>> attack = household_linkage(original, released, ["sex", "age"], "hh")
    >>> attack.reidentified, attack.people_reidentified, attack.expected_people
    (1, 1, 2.0)

    Banding does not hide a household from an attacker who bands the true ages too:

    >>> recipe = parse_recipe({"seed": 1, "steps": [
    ...     {"method": "band", "column": "age", "width": 50}]})
    >>> banded = apply_recipe(recipe, original).data
    >>> banded["age"].tolist()
    ['0–49', '0–49', '0–49', '0–49', '0–49']
    >>> household_linkage(original, banded, ["sex", "age"], "hh", recipe).matches.tolist()
    [2, 2, 1]
    """
    if len(original) == 0:
        raise SdcInputError("the table has no records")
    cols = _check_keys(original, qi)
    code, n_households = household_codes(original, household, cols)
    check_columns(released, [*cols, household], "released")
    if len(released) != len(original):
        raise SdcInputError(f"the release has {len(released)} records, the original "
                            f"{len(original)}: the attack needs the same records in the same order")
    household_codes(released, household, cols)  # no blank ids in the release either
    both = pd.concat([original[household], released[household]], ignore_index=True)
    joint = pd.factorize(both)[0]
    if not np.array_equal(joint[: len(original)], joint[len(original):]):
        raise SdcInputError(f"the release does not keep the original's household ids "
                            f"('{household}') row by row: the attack needs the same households")
    view = attack_input(original, released, cols, recipe, known, reports)
    matches, p_link = composition_matches(code, n_households, view.y_codes, view.z_codes,
                                          view.y_num, view.z_num)
    (key,) = record_keys([original], cols)
    own = composition_labels(code, n_households, key)
    unique = np.bincount(own)[own] == 1
    size = np.bincount(code, minlength=n_households)
    certain = p_link == 1.0
    n, h = len(original), n_households
    return HouseholdLinkage(
        household=household, qi=tuple(cols), n_records=n, n_households=h,
        reidentified=int(certain.sum()), reidentified_percent=100.0 * float(certain.sum()) / h,
        people_reidentified=int(size[certain].sum()),
        people_reidentified_percent=100.0 * float(size[certain].sum()) / n,
        expected_reidentified=float(p_link.sum()), expected_people=float(size @ p_link),
        composition_uniques=int(unique.sum()),
        composition_unique_percent=100.0 * float(unique.sum()) / h,
        composition_unique_people=int(size[unique].sum()), matches=matches, p_link=p_link)


def composition_matches(code: np.ndarray, n_households: int, y_codes: np.ndarray,
                        z_codes: np.ndarray, y_num: np.ndarray, z_num: np.ndarray
                        ) -> tuple[np.ndarray, np.ndarray]:
    """|M_h| and p_h of every household (:func:`household_linkage`), from each record's
    household ``code`` (the same on both sides) and the attacker's and released values of
    :class:`~sdc_core.risk.linkage.AttackInput` (exact columns as joint codes, −1 blank;
    distance columns as numbers, NaN blank).

    Without blanks or distance columns M_h are the released households with h's composition.
    Otherwise every household gets its *blank pattern*, the exact columns some member leaves
    blank; a released household g of pattern Q can be a candidate of h, of pattern P, only
    when the two compositions are equal on the columns outside P ∪ Q (a pairing keeps them),
    so for every pair of patterns the households are labelled by that composition and only
    equal labels are tried: the members that may be paired (every exact column equal or
    blank on one side), then the cheapest one-to-one pairing by Σ d². With distance columns
    and many such pairs, the pairs tried are found with a k-d tree over each household's
    values sorted within every distance column (their Euclidean distance never exceeds the
    household distance, since sorting pairs each column at its cheapest): its few nearest
    give each household an attainable distance, then only the households within it are
    tried."""
    h = n_households
    both = np.concatenate([y_codes, z_codes])
    households = np.concatenate([code, code + h])
    blank = both < 0
    if not blank.any() and y_num.shape[1] == 0:
        full = composition_labels(households, 2 * h, _row_key(both))
        return _by_label(full[:h], full[h:])
    m = _Members(code, h, y_codes, z_codes, y_num, z_num)
    bits = (blank.astype(np.int64) << np.arange(both.shape[1], dtype=np.int64)).sum(axis=1)
    pattern = np.zeros(2 * h, dtype=np.int64)
    np.bitwise_or.at(pattern, households, bits)
    counted, own_counted = np.zeros(h, dtype=np.int64), np.zeros(h, dtype=bool)
    found: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    for p in np.unique(pattern[:h]):
        attackers = np.flatnonzero(pattern[:h] == p)
        for q in np.unique(pattern[h:]):
            candidates = np.flatnonzero(pattern[h:] == q)
            keep = [c for c in range(both.shape[1]) if not (int(p) | int(q)) >> c & 1]
            lab_a, lab_b = m.labels(keep, attackers, candidates)
            if p == 0 and q == 0 and y_num.shape[1] == 0:  # equal labels: equal compositions
                count = np.bincount(lab_b, minlength=int(max(lab_a.max(), lab_b.max())) + 1)
                counted[attackers] += count[lab_a]
                own = np.full(h, -1)
                own[candidates] = lab_b
                own_counted[attackers] |= own[attackers] == lab_a
                continue
            found.extend(m.nearest(attackers, candidates, lab_a, lab_b))
    a_all, b_all, d_all = (np.concatenate(x) for x in zip(*found)) if found else \
        (np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64), np.empty(0))
    ok = np.isfinite(d_all)
    a_all, b_all, d_all = a_all[ok], b_all[ok], d_all[ok]
    nearest = np.full(h, np.inf)
    np.minimum.at(nearest, a_all, d_all)
    best = d_all <= tie_threshold(nearest[a_all])
    matches = counted + np.bincount(a_all[best], minlength=h)
    own_found = own_counted.copy()
    own_found[a_all[best & (a_all == b_all)]] = True
    return matches, np.where(own_found, 1.0 / np.maximum(matches, 1), 0.0)


#: Households of up to this many members are paired by trying all their pairings at once.
PERMUTED = 6
#: The most elements of one array of the pairwise comparison (chunks keep memory bounded).
_CHUNK = 1 << 22
#: Above this many pairs of equal labels, the pairs with distance columns are narrowed down
#: with the k-d tree first.
_PAIRS = 50_000
#: Nearest households asked of the k-d tree for an attainable distance.
_FIRST = 4


class _Members:
    """The records of every household laid out for the pairwise comparison."""

    def __init__(self, code: np.ndarray, n_households: int, y_codes: np.ndarray,
                 z_codes: np.ndarray, y_num: np.ndarray, z_num: np.ndarray) -> None:
        self.size = np.bincount(code, minlength=n_households)
        self.order = np.argsort(code, kind="stable")
        self.start = np.concatenate([[0], np.cumsum(self.size)])
        self.y_codes, self.z_codes, self.y_num, self.z_num = y_codes, z_codes, y_num, z_num
        self.gap = np.zeros(n_households, dtype=bool)  # a blank number on either side
        if y_num.shape[1]:
            np.logical_or.at(self.gap, code,
                             np.isnan(y_num).any(axis=1) | np.isnan(z_num).any(axis=1))

    def rows(self, households: np.ndarray, s: int) -> np.ndarray:
        """The record rows of ``households`` (all of size ``s``), (len, s)."""
        return self.order[self.start[households][:, None] + np.arange(s)]

    def records(self, households: np.ndarray) -> np.ndarray:
        """The record rows of ``households``, household after household."""
        size = self.size[households]
        offset = np.arange(int(size.sum())) - np.repeat(np.cumsum(size) - size, size)
        return self.order[np.repeat(self.start[households], size) + offset]

    def labels(self, keep: list[int], attackers: np.ndarray, candidates: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:
        """Labels of the attacker households' compositions and of the released households'
        on the exact columns ``keep`` (equal labels: equal compositions there, so equal
        sizes)."""
        parts = [self.records(hs) for hs in (attackers, candidates)]
        owner = [np.repeat(np.arange(len(hs)), self.size[hs]) for hs in (attackers, candidates)]
        codes = np.concatenate([self.y_codes[parts[0]][:, keep],
                                self.z_codes[parts[1]][:, keep]])
        label = composition_labels(np.concatenate([owner[0], owner[1] + len(attackers)]),
                                   len(attackers) + len(candidates), _row_key(codes))
        return label[:len(attackers)], label[len(attackers):]

    def distances(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """The household distance of every pair (a[k], b[k]) of households of one size: the
        cheapest allowed pairing's √(Σ d²), ∞ when no pairing is allowed."""
        out = np.full(len(a), np.inf)
        for s in np.unique(self.size[a]):
            s = int(s)
            which = np.flatnonzero(self.size[a] == s)
            per_pair = s * s * max(1, self.y_codes.shape[1], self.y_num.shape[1])
            step = max(1, _CHUNK // per_pair)
            for lo in range(0, len(which), step):
                part = which[lo:lo + step]
                ra, rb = self.rows(a[part], s), self.rows(b[part], s)
                yc, zc = self.y_codes[ra][:, :, None, :], self.z_codes[rb][:, None, :, :]
                compat = ((yc == zc) | (yc < 0) | (zc < 0)).all(axis=-1)  # (c, s, s)
                if self.y_num.shape[1]:
                    diff = self.y_num[ra][:, :, None, :] - self.z_num[rb][:, None, :, :]
                    d2 = np.nansum(diff * diff, axis=-1)
                else:
                    d2 = np.zeros(compat.shape)
                possible = np.flatnonzero(compat.any(axis=2).all(axis=1)
                                          & compat.any(axis=1).all(axis=1))
                cost = np.where(compat[possible], d2[possible], np.inf)
                out[part[possible]] = np.sqrt(_cheapest_pairing(cost))
        return out

    def nearest(self, attackers: np.ndarray, candidates: np.ndarray, lab_a: np.ndarray,
                lab_b: np.ndarray) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """(a, b, distance) of the pairs of equal labels, every pair that may be among the
        nearest of its attacker household: all of them, or with distance columns and more
        than :data:`_PAIRS` pairs, those the k-d tree keeps."""
        if self.y_num.shape[1] == 0 or _join_size(lab_a, lab_b) <= _PAIRS:
            ia, ib = _join(lab_a, lab_b)
            a, b = attackers[ia], candidates[ib]
            return [(a, b, self.distances(a, b))]
        out = []
        # a blank number on either side: every pair of the label is tried
        ga, gb = self.gap[attackers], self.gap[candidates]
        for sa, sb in ((ga, np.ones_like(gb)), (~ga, gb)):
            if sa.any() and sb.any():
                ia, ib = _join(lab_a[sa], lab_b[sb])
                a, b = attackers[sa][ia], candidates[sb][ib]
                out.append((a, b, self.distances(a, b)))
        for s in np.unique(self.size[attackers[~ga]]):
            ka, kb = ~ga & (self.size[attackers] == s), ~gb & (self.size[candidates] == s)
            if ka.any() and kb.any():
                out.extend(self._by_tree(attackers[ka], candidates[kb], lab_a[ka], lab_b[kb],
                                         int(s)))
        return out

    def _sorted_values(self, households: np.ndarray, s: int, num: np.ndarray) -> np.ndarray:
        """Each household's values sorted within every distance column, (len, s · |N|)."""
        values = np.sort(num[self.rows(households, s)], axis=1)  # (len, s, |N|)
        return values.transpose(0, 2, 1).reshape(len(households), -1)

    def _by_tree(self, attackers: np.ndarray, candidates: np.ndarray, lab_a: np.ndarray,
                 lab_b: np.ndarray, s: int) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """:meth:`nearest` of households of size ``s`` with no blank number, by the k-d tree
        (:class:`scipy.spatial.cKDTree`) over their sorted values, the label an extra
        coordinate spaced wider than any distance between two households."""
        from scipy.spatial import cKDTree

        ya = self._sorted_values(attackers, s, self.y_num)
        zb = self._sorted_values(candidates, s, self.z_num)
        width = 4.0 * (np.abs(np.concatenate([ya.ravel(), zb.ravel()])).max() + 1.0) \
            * np.sqrt(ya.shape[1]) + 1.0
        tree = cKDTree(np.column_stack([lab_b * width, zb]))
        points = np.column_stack([lab_a * width, ya])
        k = min(_FIRST, len(candidates))
        _, idx = tree.query(points, k=k)
        ia = np.repeat(np.arange(len(attackers)), k)
        ib = idx.reshape(-1)
        same = lab_a[ia] == lab_b[ib]
        ia, ib = ia[same], ib[same]
        d = self.distances(attackers[ia], candidates[ib])
        reach = np.full(len(attackers), np.inf)
        np.minimum.at(reach, ia, d)
        out = []
        lost = ~np.isfinite(reach)  # none of the nearest pairs allowed: all of the label tried
        if lost.any():
            ja, jb = _join(lab_a[lost], lab_b)
            a, b = attackers[np.flatnonzero(lost)[ja]], candidates[jb]
            out.append((a, b, self.distances(a, b)))
        held = np.flatnonzero(~lost)
        if len(held) == 0:
            return out
        radius = tie_threshold(reach[held]) * (1 + 1e-9) + 1e-12
        near = tree.query_ball_point(points[held], r=radius)
        ia = np.repeat(held, [len(x) for x in near])
        ib = np.concatenate([np.asarray(x, dtype=np.int64) for x in near])
        same = lab_a[ia] == lab_b[ib]
        a, b = attackers[ia[same]], candidates[ib[same]]
        out.append((a, b, self.distances(a, b)))
        return out


def _join_size(lab_a: np.ndarray, lab_b: np.ndarray) -> int:
    """The number of pairs (i, j) with lab_a[i] == lab_b[j]."""
    sorted_b = np.sort(lab_b)
    return int((np.searchsorted(sorted_b, lab_a, "right")
                - np.searchsorted(sorted_b, lab_a, "left")).sum())


def _join(lab_a: np.ndarray, lab_b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every pair (i, j) with lab_a[i] == lab_b[j]."""
    order = np.argsort(lab_b, kind="stable")
    sorted_b = lab_b[order]
    lo = np.searchsorted(sorted_b, lab_a, "left")
    count = np.searchsorted(sorted_b, lab_a, "right") - lo
    ia = np.repeat(np.arange(len(lab_a)), count)
    offset = np.arange(len(ia)) - np.repeat(np.cumsum(count) - count, count)
    return ia, order[np.repeat(lo, count) + offset]


def _by_label(lab_y: np.ndarray, lab_z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """M_h and p_h when candidates are the released households with h's label."""
    count = np.bincount(lab_z, minlength=int(max(lab_y.max(), lab_z.max())) + 1)
    matches = count[lab_y]
    return matches, np.where(lab_z == lab_y, 1.0 / np.maximum(matches, 1), 0.0)


def _row_key(codes: np.ndarray) -> np.ndarray:
    """One integer per row of ``codes`` (−1 a value of its own), equal for equal rows."""
    if codes.shape[1] == 0:
        return np.zeros(len(codes), dtype=np.int64)
    shifted = [codes[:, j] + 1 for j in range(codes.shape[1])]
    return combine_codes(shifted, [int(c.max()) + 1 for c in shifted])[0]


def _cheapest_pairing(cost: np.ndarray) -> np.ndarray:
    """min over permutations π of Σ_i cost[k, i, π(i)] for every k of ``cost`` (k, s, s);
    ∞ where every pairing uses an ∞ (a pair that may not be made)."""
    k, s = cost.shape[:2]
    if k == 0:
        return np.empty(0)
    if s <= PERMUTED:
        perms = np.array(list(itertools.permutations(range(s))))
        out = np.empty(k)
        step = max(1, _CHUNK // (len(perms) * s))
        for lo in range(0, k, step):
            part = cost[lo:lo + step][:, np.arange(s)[None, :], perms]  # (c, s!, s)
            out[lo:lo + step] = part.sum(axis=2).min(axis=1)
        return out
    from scipy.optimize import linear_sum_assignment

    out = np.empty(k)
    for j in range(k):
        c = cost[j]
        finite = np.isfinite(c)
        big = float(c[finite].sum()) + 1.0 if finite.any() else 1.0
        rows, cols = linear_sum_assignment(np.where(finite, c, big * s))
        out[j] = c[rows, cols].sum() if finite[rows, cols].all() else np.inf
    return out


def _check_keys(df: pd.DataFrame, qi: Sequence[str]) -> list[str]:
    cols = check_columns(df, qi, "quasi-identifier")
    if not cols:
        raise SdcInputError("at least one quasi-identifier is needed")
    return cols


@dataclass(frozen=True)
class HouseholdFigures:
    """The household figures of a table (docs/measures.md, "Household risk"): its household
    risk R_h = 1 − Π_{j∈h}(1 − r_j) (``risk``), the households unique by composition in it
    (``uniques``) and the household linkage attack of the original's attacker on it
    (``attack``; on the original itself it re-identifies exactly the households unique by
    composition)."""

    risk: HouseholdRisk
    uniques: int
    attack: HouseholdLinkage

    def summary(self) -> dict[str, Any]:
        """The figures under their JSON keys (:mod:`sdc_core.names`); the composition uniques
        are the table's own."""
        return {**self.risk.summary(), **self.attack.summary(),
                "household_composition_uniques": self.uniques,
                "household_composition_unique_percent":
                    100.0 * self.uniques / self.risk.n_households}


def table_households(original: pd.DataFrame, released: pd.DataFrame, qi: Sequence[str],
                     household: str, weight: str | None = None, na: str = "wildcard",
                     alpha: float = 1.0, recipe: Recipe | None = None,
                     known: Sequence[str] = (),
                     reports: Sequence[dict[str, Any]] | None = None) -> HouseholdFigures:
    """The household figures of ``released`` (the original itself, or a release of it that
    keeps its records, order and household ids): R_h = 1 − Π_{j∈h}(1 − r_j) with r_j the
    individual risk of ``released``'s keys (``weight``, ``na``, ``alpha`` as the risk profile
    reads them), the households unique by composition in ``released``, and the household
    linkage attack with the composition of every household of ``original`` known, seen as the
    person-level attack sees it: the ``recipe``'s public recodings applied as the release
    resolved them (``reports``), its numeric perturbations and the ``known`` columns matched by
    distance (docs/measures.md, "Household risk").

    Parameters
    ----------
    original, released : pandas.DataFrame
        The data as loaded and the table measured (the same object for the original).
    qi : sequence of str
        The quasi-identifiers.
    household : str
        The household-id column.
    weight, na, alpha
        As :func:`~sdc_core.risk.household.household_risk` takes them.
    recipe, known, reports
        As :func:`~sdc_core.risk.household.household_linkage` takes them (none for the
        original).

    Returns
    -------
    HouseholdFigures
        The household risk, composition uniques and attack.

    Raises
    ------
    SdcInputError
        When the household column is blank somewhere, is a key or is missing, or the release
        does not keep the original's households.
    """
    risk = household_risk(released, qi, household, weight, na, alpha)
    attack = household_linkage(original, released, qi, household, recipe, known, reports)
    uniques = (attack.composition_uniques if released is original
               else composition_uniques(released, qi, household))
    return HouseholdFigures(risk, uniques, attack)
