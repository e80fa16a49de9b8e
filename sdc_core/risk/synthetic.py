"""Disclosure risk of a release without row correspondence: a synthetic file, whose row i is not
the release of the original's row i (docs/measures.md, "Disclosure risk of a synthetic release").

Each measure reads the two tables as sets of records. With the quasi-identifiers (keys) K, q(r)
the key combination of a record r, f_o(q) and f_s(q) the records of the original and of the
release with key combination q, and n the original's records:

- **replicated uniques** (synthpop's repU): the original's records unique among the original's
  records whose key combination is unique in the release too,
  repU = |{i : f_o(q_i) = 1 and f_s(q_i) = 1}|, and 100 · repU / n;
- **DiSCO** of a sensitive column t (Raab, Nowok & Dibben 2024; synthpop's ``disclosure()``):
  q is *disclosive in the release* when the release records with key combination q that hold a
  value of t all hold one value, t_s(q) (and at least one does);
  DiSCO = 100 · |{i : q_i disclosive in the release and t_s(q_i) = t_i}| / n. The same
  computation with the original as the release is DiO, what the original itself gives away
  (``disco_original_percent``): every record of a class of the original that holds one value
  of t;
- **distance to the closest record against a holdout**: the original split into the part the
  synthesiser read (training, T) and a part it did not (holdout, H); with d the house's
  distance (:mod:`sdc_core.risk.closest`, the columns scaled by the range of T ∪ H), each
  release record z scores 1 when min_{x∈T} d(z, x) < min_{x∈H} d(z, x), ½ on a tie (the two
  within 10⁻⁹·max(1, the smaller), the linkage attack's ties) and 0 otherwise;
  ``dcr_train_share`` is the mean score, ``dcr_expected_share`` = |T|/(|T| + |H|) its value
  when the release is no nearer the training records than a fresh draw would be, and
  ``exact_copies`` counts the release records equal to some training record on every column.

Values are compared by what they are (:func:`sdc_core.data.columns.compare_keys`): True/False
and its text, a date and its ISO text are one value, so a release read back from a file gives
the same figures. **Blanks**: a blank key is a value of its own (records with the same present
values and the same blanks share a key combination, as the assessment's t-closeness reads
them); a blank of t is no value (as l-diversity and t-closeness read a sensitive column): a
release record with t blank does not make q disclosive or not, and an original record with t
blank is never counted as disclosed (it stays in n). For the distance, records with a blank
among its numeric columns are left out (the release's from the share, the training and holdout
parts' from |T| and |H|); for ``exact_copies`` a blank equals a blank.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from sdc_core.data.columns import compare_keys
from sdc_core.errors import SdcInputError
from sdc_core.keys import check_columns, combine_codes
from sdc_core.risk.closest import nearest, scaled_points
from sdc_core.risk.linkage import TIE_RTOL, attacker_view  # the linkage attack's ties and view

if TYPE_CHECKING:
    from sdc_core.recipe import Recipe


@dataclass(frozen=True)
class Disco:
    """DiSCO of a sensitive column in the release and DiO, the same in the original, in %."""

    disco_percent: float
    disco_original_percent: float

    def to_json(self) -> dict[str, float]:
        """``disco_percent`` and ``disco_original_percent``."""
        return {"disco_percent": self.disco_percent,
                "disco_original_percent": self.disco_original_percent}


@dataclass(frozen=True)
class SyntheticRisk:
    """The measures of the module docstring for one release: replicated uniques, DiSCO of each
    sensitive column (by column) and, when a holdout was given, the distance to the closest
    record against it (``holdout``: :func:`dcr_holdout`'s figures; None without one)."""

    replicated_uniques: int
    replicated_uniques_percent: float
    disco: Mapping[str, Disco]
    holdout: Mapping[str, float] | None = None

    def to_json(self) -> dict[str, Any]:
        """``replicated_uniques``, ``replicated_uniques_percent``, ``disco`` (a list of
        ``{column, disco_percent, disco_original_percent}``) and, with a holdout,
        ``dcr_train_share``, ``dcr_expected_share`` and ``exact_copies``."""
        return {"replicated_uniques": self.replicated_uniques,
                "replicated_uniques_percent": self.replicated_uniques_percent,
                "disco": [{"column": c, **d.to_json()} for c, d in self.disco.items()],
                **(self.holdout or {})}


def record_codes(original: pd.DataFrame, released: pd.DataFrame, columns: Sequence[str],
                blank: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """One integer per record of each table for its values on ``columns``: equal values (by
    what they are) equal integers, different values different ones. A blank is a value of its
    own when ``blank`` (codes ≥ 0), else −1 (one column only)."""
    n = len(original)
    codes, cards = [], []
    for c in columns:
        a, b = compare_keys(original[c].reset_index(drop=True),
                            released[c].reset_index(drop=True))
        code, uniques = pd.factorize(np.concatenate([a, b]), use_na_sentinel=True)
        codes.append(code.astype(np.int64) + int(blank))
        cards.append(len(uniques) + int(blank))
    if not blank:
        return codes[0][:n], codes[0][n:]
    key, _ = combine_codes(codes, cards)
    return key[:n], key[n:]


def _check(original: pd.DataFrame, released: pd.DataFrame, columns: Sequence[str],
           role: str) -> list[str]:
    cols = check_columns(original, columns, role)
    check_columns(released, cols, role)
    if not cols:
        raise SdcInputError(f"at least one {role} column is needed")
    if not len(original):
        raise SdcInputError("the original has no records")
    return cols


def replicated_uniques(original: pd.DataFrame, released: pd.DataFrame,
                       keys: Sequence[str]) -> tuple[int, float]:
    """The original's records unique on the keys whose key combination is unique in the
    release too (docs/measures.md, "Disclosure risk of a synthetic release").

    repU = |{i : f_o(q_i) = 1 and f_s(q_i) = 1}| and 100 · repU / n, f_o and f_s the
    numbers of original and released records with key combination q, n the original's records;
    a blank key is a value of its own.

    Parameters
    ----------
    original, released : pandas.DataFrame
        The data the release was made from, and the release (any number of records).
    keys : sequence of str
        The quasi-identifiers, in both tables.

    Returns
    -------
    tuple of (int, float)
        ``replicated_uniques`` and ``replicated_uniques_percent``.

    Raises
    ------
    SdcInputError
        No key, a key unknown to either table or repeated, an original without records.

    Examples
    --------
    >>> import pandas as pd
    >>> from sdc_core.risk.synthetic import replicated_uniques
    >>> x = pd.DataFrame({"age": [30, 40, 40, 50]})
    >>> replicated_uniques(x, pd.DataFrame({"age": [30, 50, 50, 40]}), ["age"])
    (1, 25.0)
    """
    ko, kr = record_codes(original, released, _check(original, released, keys, "key"))
    bound = int(max(ko.max(), kr.max(initial=0))) + 1
    f_o = np.bincount(ko, minlength=bound)
    f_s = np.bincount(kr, minlength=bound)
    count = int(np.count_nonzero((f_o[ko] == 1) & (f_s[ko] == 1)))
    return count, 100.0 * count / len(ko)


def disco(original: pd.DataFrame, released: pd.DataFrame, keys: Sequence[str],
          target: str) -> float:
    """DiSCO: the share (%) of the original's records whose key combination is disclosive of
    ``target`` in the release, with the record's own value
    (docs/measures.md, "Disclosure risk of a synthetic release").

    q is disclosive when the release records with key combination q that hold a value of t
    all hold one value t_s(q); DiSCO = 100 · |{i : q_i disclosive, t_s(q_i) = t_i}| / n.
    A blank key is a value of its own; a blank t is no value (module docstring).
    ``disco(original, original, keys, target)`` is DiO, what the original gives away.

    Parameters
    ----------
    original, released : pandas.DataFrame
        The data the release was made from, and the release (any number of records).
    keys : sequence of str
        The quasi-identifiers, in both tables.
    target : str
        The sensitive column t, in both tables, not a key.

    Returns
    -------
    float
        DiSCO in % of the original's records.

    Raises
    ------
    SdcInputError
        No key, an unknown or repeated column, t among the keys, an original without records.

    Examples
    --------
    >>> import pandas as pd
    >>> from sdc_core.risk.synthetic import disco
    >>> x = pd.DataFrame({"age": [30, 30, 40, 40], "ill": ["y", "n", "y", "y"]})
    >>> disco(x, pd.DataFrame({"age": [30, 40, 40], "ill": ["y", "y", "n"]}), ["age"], "ill")
    25.0
    """
    if target in keys:
        raise SdcInputError(f"the sensitive column {target} is a key: DiSCO reads a column "
                            "that is not one")
    cols = _check(original, released, [*keys, target], "key or sensitive")
    ko, kr = record_codes(original, released, cols[:-1])
    to, tr = record_codes(original, released, [target], blank=False)
    bound = int(max(ko.max(), kr.max(initial=0))) + 1
    present = tr >= 0
    low = np.full(bound, np.iinfo(np.int64).max)
    high = np.full(bound, -1)
    np.minimum.at(low, kr[present], tr[present])
    np.maximum.at(high, kr[present], tr[present])
    single = (high >= 0) & (low == high)
    disclosed = single[ko] & (high[ko] == to)
    return 100.0 * float(np.count_nonzero(disclosed)) / len(ko)


def disco_report(original: pd.DataFrame, released: pd.DataFrame, keys: Sequence[str],
                 sensitive: Sequence[str]) -> dict[str, Disco]:
    """:func:`disco` of each sensitive column in the release and in the original (DiO), by
    column, in the order given."""
    return {t: Disco(disco(original, released, keys, t), disco(original, original, keys, t))
            for t in check_columns(original, sensitive, "sensitive")}


def dcr_holdout(train: pd.DataFrame, holdout: pd.DataFrame, released: pd.DataFrame,
                columns: Sequence[str]) -> dict[str, float]:
    """The distance to the closest record against a holdout
    (docs/measures.md, "Disclosure risk of a synthetic release").

    With d the distance of :mod:`sdc_core.risk.closest` on the columns that hold numbers in
    the three tables, scaled by the range of the training and holdout records together,
    d_T(z) = min_{x∈T} d(z, x) and d_H(z) = min_{x∈H} d(z, x), each complete release record z
    scores s(z) = 1 when d_T(z) < d_H(z), ½ when |d_T(z) − d_H(z)| ≤ 10⁻⁹·max(1, the smaller),
    0 otherwise:

    - ``dcr_train_share`` = mean s(z) over the release records complete on those columns;
    - ``dcr_expected_share`` = |T| / (|T| + |H|), the training and holdout records complete on
      them: the share when the release is no nearer the training part than a fresh draw from
      the same population (½ for parts of one size); above it, the release copies training
      records more than chance;
    - ``exact_copies`` = |{z : z_c = x_c for every column c, for some x ∈ T}|, on every
      column of ``columns``, a blank equal to a blank.

    Parameters
    ----------
    train, holdout : pandas.DataFrame
        The part of the original the release was made from, and the part it was not.
    released : pandas.DataFrame
        The release (any number of records).
    columns : sequence of str
        The columns compared: all of them for ``exact_copies``, the numeric ones for the
        distance.

    Returns
    -------
    dict
        ``dcr_train_share``, ``dcr_expected_share`` (floats) and ``exact_copies`` (int).

    Raises
    ------
    SdcInputError
        An unknown or repeated column, no column holding numbers in the three tables, a table
        with no record complete on them, a distance past floating point.

    Examples
    --------
    >>> import pandas as pd
    >>> from sdc_core.risk.synthetic import dcr_holdout
    >>> t, h = pd.DataFrame({"a": [0.0, 2.0]}), pd.DataFrame({"a": [7.0, 10.0]})
    >>> dcr_holdout(t, h, pd.DataFrame({"a": [0.0, 1.0, 9.0, 4.5]}), ["a"])
    {'dcr_train_share': 0.625, 'dcr_expected_share': 0.5, 'exact_copies': 1}
    """
    cols = check_columns(train, columns, "compared")
    check_columns(holdout, cols, "compared")
    check_columns(released, cols, "compared")
    _, (t, h, z), complete = scaled_points([train, holdout, released], cols, reference=2)
    d_t, d_h = nearest(t, z), nearest(h, z)
    tie = np.abs(d_t - d_h) <= TIE_RTOL * np.maximum(1.0, np.minimum(d_t, d_h))
    score = np.where(tie, 0.5, (d_t < d_h).astype(np.float64))
    kt, kr = record_codes(train, released, cols)
    return {"dcr_train_share": float(score.mean()),
            "dcr_expected_share": len(t) / (len(t) + len(h)),
            "exact_copies": int(np.count_nonzero(np.isin(kr, kt)))}


def synthetic_risk(original: pd.DataFrame, released: pd.DataFrame, keys: Sequence[str],
                   sensitive: Sequence[str] = (), holdout: pd.DataFrame | None = None,
                   columns: Sequence[str] = (), train: pd.DataFrame | None = None
                   ) -> SyntheticRisk:
    """Every measure of the module docstring for one release: ``original`` is the data the
    release was made from (with a ``holdout``, the training part) as replicated uniques and
    DiSCO read it (:func:`attacked_original`), ``columns`` those the distance against the
    holdout compares (:func:`dcr_holdout`; read only with a holdout), between the ``holdout``
    and ``train``, the records the synthesis fitted on as it was given them (None: the
    ``original``)."""
    count, percent = replicated_uniques(original, released, keys)
    return SyntheticRisk(count, percent, disco_report(original, released, keys, sensitive),
                         None if holdout is None else dcr_holdout(
                             original if train is None else train, holdout, released, columns))


def synthesis_split(original: pd.DataFrame, recipe: Recipe | None,
                    given: pd.DataFrame | None = None) -> tuple[pd.DataFrame, np.ndarray] | None:
    """The table a recipe's synthesis step was given and which of its records the step held
    out of the fit (docs/methods.md, "Synthesis (sequential CART)"), recomputed from the
    recipe's seed and the step's index; None unless the recipe's last step is a synthesis
    that held records out. ``given``: that table when the caller has it already (the
    original after the steps before the last), else the steps are applied again."""
    from sdc_core.recipe import apply_recipe, table_step

    if recipe is None or not recipe.steps:
        return None
    index, step = len(recipe.steps) - 1, recipe.steps[-1]
    if not (table_step(step) and step.get("holdout")):
        return None
    from sdc_core.methods.synthesize import held_out

    if given is None:
        given = original if index == 0 else apply_recipe(
            replace(recipe, steps=list(recipe.steps[:index])), original).data
    return given, held_out(len(given), step["holdout"], recipe.seed, index)


def recipe_synthetic_risk(original: pd.DataFrame, released: pd.DataFrame,
                          keys: Sequence[str], sensitive: Sequence[str], recipe: Recipe | None,
                          reports: Sequence[dict[str, Any]] | None = None,
                          columns: Sequence[str] = (),
                          split: tuple[pd.DataFrame, np.ndarray] | None = None
                          ) -> SyntheticRisk:
    """:func:`synthetic_risk` of the release ``recipe`` made of ``original`` (the assessment's
    ``synthetic`` part and a sweep row's): replicated uniques and DiSCO against the original
    as the attacker sees it (:func:`attacked_original`), and with a synthesis step's holdout
    (``split``: :func:`synthesis_split`) only the records it fitted on, the distance on
    ``columns`` between the holdout and those records as the step was given them."""
    fitted = train = holdout = None
    if split is not None:
        given, out = split
        fitted, train, holdout = ~out, given[~out], given[out]
    view = attacked_original(original, [*keys, *sensitive], recipe, reports, fitted)
    return synthetic_risk(view, released, keys, sensitive, holdout, columns, train)


def attacked_original(original: pd.DataFrame, columns: Sequence[str], recipe: Recipe | None,
                      reports: Sequence[dict[str, Any]] | None = None,
                      fitted: np.ndarray | None = None) -> pd.DataFrame:
    """The original as replicated uniques and DiSCO compare the release with it: the true
    values of ``columns`` (the keys and the sensitive columns) with the recipe's public
    recodings applied as the release resolved them (banding, top and bottom coding,
    recoding: an attacker repeats them, as the linkage attack's does; docs/measures.md,
    "Disclosure risk of a synthetic release"), and, when a synthesis step held records out,
    only the records it fitted on (``fitted``, a mask of the original's rows). Without it a
    release whose keys are bands would share no key combination with the original's ages."""
    view = attacker_view(original, columns, recipe, reports)
    return view if fitted is None else view[fitted]
