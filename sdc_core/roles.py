"""Column roles for a release: quasi-identifiers, sensitive columns, weight, numeric columns for
utility measures, and columns not released. Suggestions come from the inferred kinds."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from sdc_core.data.columns import is_number
from sdc_core.data.io import Kind, infer_kinds
from sdc_core.errors import SdcInputError
from sdc_core.households import household_codes, looks_like_household

#: Words (and common abbreviations) of column names that usually are quasi-identifiers:
#: demographics, household, work and geography. Matched against whole words of a name
#: (:func:`name_words`), so ``stage`` or ``agent`` is not ``age``.
_QI_WORDS = (
    r"age|age_?(group|grp|gr|band|cat|class|years|yrs)|age\d+|sex\d*|gender\d*|female|male|"
    r"race|racial|ethn|ethnic[a-z]*|marital|marst|marstat|married|marriage|(hh_?)?civil[a-z]*|"
    r"civ_?stat[a-z]*|educ[a-z0-9]*|edu|edlevel|school|schooling|degree|qualifications?|"
    r"occup[a-z0-9]*|occ\d*|job|jobs|profession[a-z]*|employ[a-z]*|workclass|industry|"
    r"zip[a-z0-9]*|zcta|post_?code|postal(_?code)?|plz|region[a-z0-9]*|state|province|county|"
    r"district|municipality|city|town|village|country|urbrur|urban|rural|nationality|"
    r"citizen[a-z]*|birth[a-z0-9]*|dob|yob|born|religion|religious|relig|relat|relate|"
    r"relation|relationship|relhead|language|(hh|household|fam|family)_?size|hh_?members|"
    r"(income|inc|salary|wage|earnings)_?(band|bracket|group|class|cat|category|range|level|"
    r"quintile|quartile|decile)s?")
_QI_NAME = re.compile(rf"(^|_)({_QI_WORDS})(_|$)")
#: Words that make a name a measurement rather than a key (birth weight, state tax amount,
#: hours of TV per school day).
_MEASURE_NAME = re.compile(r"(^|_)(weight|wgt|wt|height|bmi|amount|price|cost|spend[a-z]*|"
                           r"expend[a-z]*|population|pop|rate|ratio|score|count|percent|pct|"
                           r"share|mean|avg|total|sum|tax|hours|hrs|minutes|per|times|"
                           r"freq[a-z]*)(_|$)")
#: Names that usually hold a household (or family, dwelling, cluster) id, as whole words.
_HOUSEHOLD_NAME = re.compile(
    r"(^|_)(hid|hhid|hh_?id|hh_?no|hh_?num|hh_?nr|household(_?(id|no|num|nr|number|code))?|"
    r"ori_?hid|fam_?id|family_?id|dwelling_?id|hhold)(_|$)")

_WEIGHT_NAME = re.compile(r"^(\w*_)?(weight|wgt|w)$", re.IGNORECASE)
#: Names that usually hold a panel's wave or a time: ending with such a word (``year``,
#: ``survey_year``, ``sample.yr``; not ``time_to_work``, a measure). A name that is also a
#: key's, ``birth_year``, is a key's.
_TIME_NAME = re.compile(r"(^|_)(year|years|yr|wave|waves|time|period|month|quarter|week|date|"
                        r"visit|round|occasion|timepoint)$")
#: Names that usually hold a record's, a person's or a household's id, as whole words.
_ID_NAME = re.compile(r"(^|_)(id|ids|pid|pidnum|persid|person_?id|pers_?id|patient_?id|"
                      r"subject_?id|respondent_?id|resp_?id|record_?id|row_?id|hid|hhid|"
                      r"hh_?(id|no|num|nr)|household_?(id|no|num|nr|number|code)|ori_?hid|"
                      r"fam_?id|family_?id|dwelling_?id)(_|$)")

#: Words (and common abbreviations) of column names that name an area a record lives in: the
#: geography record swapping exchanges (docs/methods.md, "Targeted record swapping"). A wave
#: (``year``) or a yes/no column is never one.
_GEOGRAPHY_NAME = re.compile(
    r"(^|_)(region[a-z0-9]*|district[a-z0-9]*|state|province|county|municipality|municipio|"
    r"gemeinde|kreis|bundesland|canton|commune|prefecture|parish|ward|city|town|village|"
    r"country|zip[a-z0-9]*|zcta|post_?code|postal(_?code)?|plz|area|zone|geo[a-z0-9]*|"
    r"location|locality|nuts\d*|lsoa|msoa|tract)(_|$)")


def name_words(name: object) -> str:
    """A column name as lower-case words joined by ``_``: words split at any other character
    and where the case turns (``marital-status``, ``Marital Status`` and ``MaritalStatus`` all
    give ``marital_status``; ``HHSize`` gives ``hh_size``)."""
    text = re.sub(r"([a-z0-9])([A-Z])|([A-Z])([A-Z][a-z])", r"\1\3_\2\4", str(name))
    return "_".join(re.findall(r"[^\W_]+", text.lower()))


def looks_like_key(name: object) -> bool:
    """Whether a column named ``name`` is usually a quasi-identifier: one of its words is a
    demographic, household, work or place word (:data:`_QI_WORDS`) and none a measurement's."""
    words = name_words(name)
    return bool(_QI_NAME.search(words)) and not _MEASURE_NAME.search(words)


def looks_like_geography(name: object) -> bool:
    """Whether a column named ``name`` usually holds an area: one of its words is a place word
    (:data:`_GEOGRAPHY_NAME`: region, district, municipality, zip, …) and none a
    measurement's (``region_population`` is a number about an area, not one).

    Examples
    --------
    >>> [looks_like_geography(c) for c in ("region", "DistrictCode", "year", "female")]
    [True, True, False, False]
    """
    words = name_words(name)
    return bool(_GEOGRAPHY_NAME.search(words)) and not _MEASURE_NAME.search(words)


@dataclass(frozen=True)
class Roles:
    qi: list[str] = field(default_factory=list)
    sensitive: list[str] = field(default_factory=list)
    weight: str | None = None
    numeric: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    #: the household id (docs/measures.md, "Household risk"): records that share it are one
    #: household; None: every record is a household of its own
    household: str | None = None

    def __post_init__(self) -> None:
        """An id is never a measure: the household id is left out of the numeric columns for
        utility, whoever tags it (the Data page, a link, a workspace, a column first tagged
        numeric and then as the household id)."""
        if self.household is not None and self.household in self.numeric:
            object.__setattr__(self, "numeric",
                               [c for c in self.numeric if c != self.household])

    def problems(self) -> list[str]:
        """Contradictions a user should fix (a column in two exclusive roles)."""
        out = []
        for a, b in (("qi", "sensitive"), ("qi", "ignore"), ("sensitive", "ignore")):
            both = sorted(set(getattr(self, a)) & set(getattr(self, b)))
            if both:
                out.append(f"{', '.join(both)}: tagged both {_LABEL[a]} and {_LABEL[b]}")
        if self.weight and self.weight in self.qi + self.sensitive:
            out.append(f"{self.weight}: the weight cannot also be a key or sensitive column")
        if self.household and self.household in self.qi + self.sensitive + [self.weight]:
            out.append(f"{self.household}: the household id cannot also be a key, sensitive "
                       "column or the weight")
        return out


_LABEL = {"qi": "quasi-identifier", "sensitive": "sensitive", "ignore": "not released"}

#: Roles of the built-in ACTG 175 example, as in seed 003.
EXAMPLE_ROLES = Roles(
    qi=["age", "gender", "race"], sensitive=["treat"],
    numeric=["age", "wtkg", "preanti", "cd40", "cd420", "cd496", "cd80", "cd820", "days",
             "karnof"],
    ignore=["pidnum"])


def structure_columns(df: pd.DataFrame, columns: Sequence[str], household: str | None = None,
                      kinds: Mapping[str, Kind] | None = None) -> dict[str, str]:
    """The ``columns`` that hold the table's structure rather than a person's attribute, each
    with the reason: no method picks them by default (docs/methods.md, "Defaults").

    - the household id itself;
    - an id column: inferred an identifier (a distinct value on nearly every record) that is
      text or a dense numbering (whole numbers spanning fewer than twice as many values as
      the column holds: not an income in whole euros), or named like one (``id``, ``pid``,
      ``person_id``, ``hh_id``, …) unless the name is also a key's (``household_size``);
    - a date (its kind), or a column whose name ends like a wave or a time (``year``,
      ``survey_year``, ``wave``, ``time``, ``period``, ``month``, ``visit``, …) unless the name
      is also a key's (``birth_year``: :func:`looks_like_key`);
    - with a ``household``: a wave, a column that holds a different value on every record of
      each household of two or more records, over no more levels than the largest household
      has records (1984 … 1988 for persons of up to five yearly records; an age that grows with
      the waves takes more levels and stays).

    Parameters
    ----------
    df : pandas.DataFrame
        The table.
    columns : sequence of str
        The columns to look at.
    household : str, optional
        The household (or person) id column.
    kinds : mapping of str to Kind, optional
        The columns' inferred kinds (default: :func:`sdc_core.data.io.infer_kinds` of them).

    Returns
    -------
    dict of str to str
        The structure columns among ``columns`` and why, in their order.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"id": [1, 1, 2, 2, 2], "w": [1, 2, 1, 2, 3],
    ...                    "age": [30, 31, 50, 51, 52], "married": [1, 1, 0, 0, 1]})
    >>> structure_columns(df, ["w", "age", "married"], household="id")
    {'w': 'a wave: a different value on every record of a household'}
    >>> list(structure_columns(df.rename(columns={"w": "year"}), ["year", "age"]))
    ['year']
    """
    wanted = [c for c in columns if c in df.columns]
    kinds = kinds if kinds is not None else infer_kinds(df[wanted])
    codes, sizes = _household_sizes(df, household)
    out: dict[str, str] = {}
    for c in wanted:
        words = name_words(c)
        if c == household:
            out[c] = "the household id"
        elif kinds.get(c) is Kind.IDENTIFIER and _numbering(df[c]):
            out[c] = "an id column: a distinct value on nearly every record"
        elif _ID_NAME.search(words) and not looks_like_key(c):
            out[c] = "named like an id"
        elif kinds.get(c) is Kind.DATE:
            out[c] = "a date"
        elif _TIME_NAME.search(words) and not looks_like_key(c):
            out[c] = "named like a wave or a time"
        elif codes is not None and _is_wave(df[c], codes, sizes):
            out[c] = "a wave: a different value on every record of a household"
    return out


def _numbering(s: pd.Series) -> bool:
    """Whether an identifier-kind column reads as a numbering rather than a measure with a
    distinct value on most records (an income in whole euros): text, or whole numbers that
    span at most twice as many values as the column holds."""
    if not pd.api.types.is_numeric_dtype(s) or pd.api.types.is_bool_dtype(s):
        return True
    present = s.dropna()
    return len(present) > 0 and float(present.max()) - float(present.min()) < 2 * len(present)


def _household_sizes(df: pd.DataFrame, household: str | None
                     ) -> tuple[np.ndarray | None, np.ndarray]:
    """Each record's household and the households' sizes; (None, empty) without a usable
    household id (none, not in the table, a blank id)."""
    if household is None or household not in df.columns:
        return None, np.zeros(0, dtype=np.int64)
    try:
        codes, n = household_codes(df, household)
    except SdcInputError:
        return None, np.zeros(0, dtype=np.int64)
    return codes, np.bincount(codes, minlength=n)


def _is_wave(s: pd.Series, codes: np.ndarray, sizes: np.ndarray) -> bool:
    """Whether ``s`` holds a different present value on every record of each household of two
    or more records, over at most as many levels as the largest household has records."""
    values, levels = pd.factorize(s)  # a blank: -1
    if not (sizes >= 2).any() or len(levels) > sizes.max() or (values < 0).any():
        return False
    pairs = np.unique(codes * len(levels) + values)
    return len(pairs) == len(values)


def suggest_household(df: pd.DataFrame) -> str | None:
    """The first column named like a household id (``hid``, ``hh_id``, ``household``,
    ``ori_hid``, ``famid``, …) with a household id's structure (:func:`looks_like_household`),
    or None."""
    for c in df.columns:
        if _HOUSEHOLD_NAME.search(name_words(c)) and looks_like_household(df, c):
            return str(c)
    return None


def suggest_roles(df: pd.DataFrame, kinds: dict[str, Kind] | None = None) -> Roles:
    """Identifiers are not released; numeric columns feed the utility measures; columns named
    like common demographics (age, sex, marital status, education, region, …:
    :func:`looks_like_key`) are suggested as quasi-identifiers, a numeric
    column named like a weight (complete and positive, as a weight must be) as the weight, and
    a column named and shaped like a household id
    (:func:`suggest_household`) as the household."""
    kinds = kinds or infer_kinds(df)
    household = suggest_household(df)
    ignore = [c for c, k in kinds.items() if k is Kind.IDENTIFIER and c != household]
    qi = [c for c, k in kinds.items()
          if k is not Kind.IDENTIFIER and looks_like_key(c) and c != household]
    weights = [c for c, k in kinds.items() if k is Kind.NUMERIC and _WEIGHT_NAME.match(str(c))
               and df[c].notna().all() and (df[c] > 0).all()]
    numeric = [c for c, k in kinds.items()
               if k is Kind.NUMERIC and c not in weights and c != household]
    return Roles(qi=qi, numeric=numeric, ignore=ignore, weight=weights[0] if weights else None,
                 household=household)


#: The most column names a message about two tables' columns lists of each kind.
NAMES_LISTED = 5


def _names(columns: Sequence[object]) -> str:
    """Column names for a message: the first :data:`NAMES_LISTED`, then how many more."""
    shown = ", ".join(map(str, columns[:NAMES_LISTED]))
    more = len(columns) - NAMES_LISTED
    return shown + (f" and {more} more" if more > 0 else "")


def carry_roles(roles: Roles, before: Sequence[object], df: pd.DataFrame
                ) -> tuple[Roles | None, list[str]]:
    """The roles a table with the columns ``before`` had, for ``df``: the same table in
    another file (a CSV saved again as Parquet or Excel).

    Returns
    -------
    (Roles or None, list of str)
        None when the column names are not the same (not the same table), with why: the
        columns missing and the new ones. Else the roles whose columns still fit them, and why
        each other one was dropped: the weight and the numeric columns must hold numbers,
        which a file that reads them as text does not give.

    Examples
    --------
    >>> df = pd.DataFrame({"age": ["30", "41"], "sex": ["m", "f"]})
    >>> kept, why = carry_roles(Roles(qi=["sex"], numeric=["age"]), ["sex", "age"], df)
    >>> kept.qi, kept.numeric, why
    (['sex'], [], ['age: a numeric column for utility holds numbers; this file reads it as text'])
    >>> carry_roles(Roles(qi=["sex"]), ["sex", "id"], df)[1]
    ['its columns are not those of the table before (not in it: id; new: age)']
    """
    missing = [c for c in before if c not in df.columns]
    new = [c for c in df.columns if c not in list(before)]
    if missing or new:
        parts = ([f"not in it: {_names(missing)}"] if missing else []) + (
            [f"new: {_names(new)}"] if new else [])
        return None, [f"its columns are not those of the table before ({'; '.join(parts)})"]
    text = [c for c in dict.fromkeys([*roles.numeric, *([roles.weight] if roles.weight else [])])
            if not is_number(df[c])]
    why = [f"{c}: " + ("the weight" if c == roles.weight else "a numeric column for utility")
           + " holds numbers; this file reads it as text" for c in text]
    return replace(roles, numeric=[c for c in roles.numeric if c not in text],
                   weight=None if roles.weight in text else roles.weight), why
