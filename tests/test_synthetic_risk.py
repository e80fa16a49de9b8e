"""Disclosure risk of a synthetic release, issue 53
(docs/measures.md, "Disclosure risk of a synthetic release"): replicated uniques, DiSCO and DiO,
and the distance to the closest record against a holdout, each against a plain loop over the
records written from the definition, on outside tables (the German health panel, Chile's
plebiscite survey, ACTG 175), on releases that copy the original or share nothing with it, with
blanks, and over the dtypes the readers give."""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdc_core.errors import SdcInputError
from sdc_core.risk.closest import closest_record
from sdc_core.risk.synthetic import (
    dcr_holdout,
    disco,
    disco_report,
    replicated_uniques,
    synthetic_risk,
)
from tests.conftest import ROOT
from tests.corpus import load, roundtrip
from tests.rwm5yr import panel

ACTG = ROOT.parent / "shared" / "data" / "actg175.csv"
PANEL_KEYS = ["age", "female", "married", "educ", "kids"]


# --- the definitions, record by record ------------------------------------------------------

def value(v: Any) -> Any:
    """A value as the definitions compare it: a blank is None."""
    return None if v is None or (not isinstance(v, str) and pd.isna(v)) else v


def rows(df: pd.DataFrame, columns: Sequence[str]) -> list[tuple[Any, ...]]:
    return [tuple(value(v) for v in r) for r in df[list(columns)].itertuples(index=False)]


def loop_replicated_uniques(original: pd.DataFrame, released: pd.DataFrame,
                            keys: Sequence[str]) -> tuple[int, float]:
    """Original records alone with their key combination in the original and in the release."""
    mine, theirs = rows(original, keys), rows(released, keys)
    in_original, in_release = Counter(mine), Counter(theirs)
    count = 0
    for q in mine:
        if in_original[q] == 1 and in_release[q] == 1:
            count += 1
    return count, 100.0 * count / len(mine)


def loop_disco(original: pd.DataFrame, released: pd.DataFrame, keys: Sequence[str],
               target: str) -> float:
    """Original records with a value of t whose key combination holds, in the release, one
    value of t (over the released records that hold one) and that value is theirs."""
    held: dict[tuple[Any, ...], set[Any]] = defaultdict(set)
    for q, (t,) in zip(rows(released, keys), rows(released, [target])):
        if t is not None:
            held[q].add(t)
    hits = 0
    for q, (t,) in zip(rows(original, keys), rows(original, [target])):
        if t is not None and held.get(q) == {t}:
            hits += 1
    return 100.0 * hits / len(original)


def loop_dcr(train: pd.DataFrame, holdout: pd.DataFrame, released: pd.DataFrame,
             numeric: Sequence[str], columns: Sequence[str]) -> dict[str, float]:
    """Each complete released record scores 1 nearer a training record, ½ on a tie (within
    1e-9·max(1, the smaller)), 0 nearer a holdout record, on the root mean square of the
    differences divided by the range of the complete training and holdout records."""
    t = [r for r in rows(train, numeric) if None not in r]
    h = [r for r in rows(holdout, numeric) if None not in r]
    spread = [max(r[j] for r in t + h) - min(r[j] for r in t + h) for j in range(len(numeric))]
    spread = [s if s > 0 else 1.0 for s in spread]

    def nearest(z: tuple[Any, ...], points: list[tuple[Any, ...]]) -> float:
        # the root of the sum of squares by math.hypot: no square overflows on a tiny spread
        return min(math.hypot(*((float(z[j]) - float(x[j])) / spread[j]
                                for j in range(len(numeric)))) / math.sqrt(len(numeric))
                   for x in points)

    scores = []
    for z in rows(released, numeric):
        if None in z:
            continue
        d_t, d_h = nearest(z, t), nearest(z, h)
        if abs(d_t - d_h) <= 1e-9 * max(1.0, min(d_t, d_h)):
            scores.append(0.5)
        else:
            scores.append(1.0 if d_t < d_h else 0.0)
    copies = set(rows(train, columns))
    return {"dcr_train_share": sum(scores) / len(scores),
            "dcr_expected_share": len(t) / (len(t) + len(h)),
            "exact_copies": sum(1 for z in rows(released, columns) if z in copies)}


def assert_equal_to_the_loops(original: pd.DataFrame, released: pd.DataFrame,
                              keys: Sequence[str], targets: Sequence[str]) -> None:
    count, percent = replicated_uniques(original, released, keys)
    want_count, want_percent = loop_replicated_uniques(original, released, keys)
    assert count == want_count
    assert percent == pytest.approx(want_percent, abs=1e-9)
    for t in targets:
        assert disco(original, released, keys, t) == pytest.approx(
            loop_disco(original, released, keys, t), abs=1e-9), t
        assert disco(original, original, keys, t) == pytest.approx(
            loop_disco(original, original, keys, t), abs=1e-9), t


def resampled(df: pd.DataFrame, seed: int, moved: dict[str, Any]) -> pd.DataFrame:
    """The original's records drawn with replacement, in a new order, and a fifth of them
    changed on the columns of ``moved`` (column → function of the drawn values and the rng):
    a release without row correspondence that keeps much of the original."""
    rng = np.random.default_rng(seed)
    out = df.iloc[rng.integers(0, len(df), len(df))].reset_index(drop=True)
    change = rng.random(len(out)) < 0.2
    for c, move in moved.items():
        out.loc[change, c] = move(out.loc[change, c], rng)
    return out


# --- replicated uniques and DiSCO -----------------------------------------------------------

def test_the_worked_example_of_the_docs():
    text = (ROOT / "docs" / "measures.md").read_text(encoding="utf-8")
    section = text.split("\n## Disclosure risk of a synthetic release\n", 1)[1].split("\n## ")[0]

    def table(first: str) -> pd.DataFrame:
        lines = list(itertools.takewhile(lambda x: x.startswith("|"),
                                         section.split(f"| {first} |", 1)[1].splitlines()[2:]))
        cells = [[c.strip() for c in x.strip("|").split("|")] for x in lines]
        df = pd.DataFrame([c[1:] for c in cells], columns=["age", "sex", "ill"])
        return df.replace("—", None).astype({"age": "int64"})

    original, released = table("original"), table("release")
    assert len(original) == len(released) == 8 and original.isna().any().any()
    figures = re.search(r"replicated uniques \*\*(\d+)\*\* \(([\d.]+) %\)", section)
    found = disco_report(original, released, ["age", "sex"], ["ill"])["ill"]
    assert figures and replicated_uniques(original, released, ["age", "sex"]) == \
        (int(figures[1]), float(figures[2]))
    assert found.disco_percent == float(re.findall(r"DiSCO \*\*([\d.]+) %\*\*", section)[0])
    assert found.disco_original_percent == float(
        re.findall(r"DiO \*\*([\d.]+) %\*\*", section)[0])
    assert_equal_to_the_loops(original, released, ["age", "sex"], ["ill"])

    parts = re.search(r"training records ([\d.]+) and ([\d.]+), holdout records ([\d.]+) and "
                      r"([\d.]+)\s.*?released ([\d.]+), ([\d.]+), ([\d.]+) and ([\d.]+)\.",
                      section, re.S)
    assert parts
    a = [float(v) for v in parts.groups()]
    train, holdout = pd.DataFrame({"a": a[0:2]}), pd.DataFrame({"a": a[2:4]})
    release = pd.DataFrame({"a": a[4:]})
    got = dcr_holdout(train, holdout, release, ["a"])
    said = {k: float(v) for k, v in
            re.findall(r"`(dcr_\w+)` \*\*([\d.]+)\*\*", section)}
    assert said == {"dcr_train_share": got["dcr_train_share"],
                    "dcr_expected_share": got["dcr_expected_share"]}
    assert re.search(rf"\*\*{got['exact_copies']}\*\* exact cop", section)
    assert got == loop_dcr(train, holdout, release, ["a"], ["a"])


def test_a_resampled_and_perturbed_panel_equals_the_loops():
    df = panel()
    released = resampled(df, 53, {"age": lambda s, rng: s + rng.choice([-1, 1], len(s)),
                                  "outwork": lambda s, rng: 1 - s,
                                  "hospvis": lambda s, rng: rng.integers(0, 3, len(s))})
    count, _ = replicated_uniques(df, released, PANEL_KEYS)
    assert 0 < count < loop_replicated_uniques(df, df, PANEL_KEYS)[0]
    assert_equal_to_the_loops(df, released, PANEL_KEYS, ["outwork", "hospvis"])


def test_a_release_equal_to_the_original_replicates_its_uniques_and_its_own_disclosure():
    df = panel()
    uniques = sum(1 for n in Counter(rows(df, PANEL_KEYS)).values() if n == 1)
    shuffled = df.sample(frac=1.0, random_state=4).reset_index(drop=True)  # the same records
    assert replicated_uniques(df, shuffled, PANEL_KEYS) == (uniques, 100.0 * uniques / len(df))
    assert uniques > 0
    for t in ("outwork", "hospvis", "docvis"):
        assert disco(df, shuffled, PANEL_KEYS, t) == disco(df, df, PANEL_KEYS, t) == \
            pytest.approx(loop_disco(df, df, PANEL_KEYS, t), abs=1e-9)


def test_a_release_sharing_no_key_combination_gives_nothing_away():
    df = panel()
    released = resampled(df, 1, {}).assign(age=lambda d: d["age"] + 1000)
    assert replicated_uniques(df, released, PANEL_KEYS) == (0, 0.0)
    assert disco(df, released, PANEL_KEYS, "outwork") == 0.0
    assert disco(df, df, PANEL_KEYS, "outwork") > 0.0
    assert replicated_uniques(df, released.iloc[:0], PANEL_KEYS) == (0, 0.0)  # an empty one


def test_blank_keys_and_targets_of_an_outside_survey_equal_the_loops():
    df = load("carData/Chile")  # blanks in education, age, income, statusquo and vote
    keys, targets = ["region", "sex", "age", "education"], ["vote", "statusquo"]
    released = resampled(df, 7, {
        "education": lambda s, rng: s.where(rng.random(len(s)) < 0.5, None),
        "vote": lambda s, rng: s.where(rng.random(len(s)) < 0.5, None),
        "age": lambda s, rng: s + rng.integers(-2, 3, len(s))})
    assert df[["age", "education", "vote", "statusquo"]].isna().any().all()
    assert released["education"].isna().sum() > df["education"].isna().sum()
    assert_equal_to_the_loops(df, released, keys, targets)


def test_a_blank_key_is_a_value_of_its_own_and_a_blank_target_no_value():
    original = pd.DataFrame({"age": [30, 30, 40], "sex": ["F", None, "M"],
                             "ill": ["yes", "no", None]})
    # (30, blank) is unique in both: replicated; a blank does not match F
    released = pd.DataFrame({"age": [30, 30, 40, 40], "sex": [None, "F", "M", "M"],
                             "ill": ["no", None, "yes", None]})
    assert replicated_uniques(original, released, ["age", "sex"]) == (2, pytest.approx(200 / 3))
    # (30, F) holds only a blank: not disclosive; (30, blank) holds no, record 2's; (40, M)
    # holds yes and a blank, disclosive of yes, but record 3's ill is blank: not disclosed
    assert disco(original, released, ["age", "sex"], "ill") == pytest.approx(100 / 3)
    assert disco(original, original, ["age", "sex"], "ill") == pytest.approx(200 / 3)
    assert_equal_to_the_loops(original, released, ["age", "sex"], ["ill"])


def test_a_release_read_back_from_its_file_gives_the_same_figures():
    df = load("carData/Chile").astype({"sex": "category", "region": "category"})
    released = resampled(df, 11, {"vote": lambda s, rng: s.iloc[::-1].to_numpy()})
    keys = ["region", "sex", "age", "education"]
    before = synthetic_risk(df, released, keys, ["vote"]).to_json()
    for fmt in ("csv", "parquet"):
        assert synthetic_risk(df, roundtrip(released, fmt), keys, ["vote"]).to_json() == before


VALUES = [0, 1, 2]


def as_dtype(values: list[int | None], kind: str) -> pd.Series:
    """A column of small codes (None: a blank) in one of the dtypes the readers give."""
    s = pd.Series(values, dtype="object")
    if kind == "bool":
        return s.fillna(0).astype(int).astype(bool)
    if kind == "Int64":
        return s.astype("Int64")
    if kind == "boolean":
        return s.map(lambda v: None if v is None else v > 0).astype("boolean")
    if kind == "string":
        return s.map(lambda v: None if v is None else f"v{v}").astype("string")
    if kind == "category":
        return s.map(lambda v: None if v is None else f"c{v}").astype("category")
    if kind == "date":
        return pd.to_datetime(s.map(lambda v: None if v is None else f"2020-01-0{v + 1}"))
    return s.astype("float64")  # NaN for a blank


KINDS = ["bool", "Int64", "boolean", "string", "category", "date", "float"]
CELL = st.one_of(st.none(), st.sampled_from(VALUES))
RECORDS = st.lists(st.tuples(CELL, CELL, CELL), min_size=1, max_size=25)


@settings(max_examples=80, deadline=None)
@given(RECORDS, st.lists(st.tuples(CELL, CELL, CELL), max_size=25),
       st.tuples(*[st.sampled_from(KINDS)] * 3))
def test_any_small_tables_of_any_dtype_equal_the_loops(xs, zs, kinds):
    def frame(records: list[tuple[int | None, ...]]) -> pd.DataFrame:
        cols = list(zip(*records)) if records else [[], [], []]
        return pd.DataFrame({n: as_dtype(list(c), k)
                             for n, c, k in zip(("a", "b", "t"), cols, kinds)})

    original, released = frame(xs), frame(zs)
    assert_equal_to_the_loops(original, released, ["a", "b"], ["t"])
    assert_equal_to_the_loops(original, original, ["a", "b"], ["t"])


def test_the_refusals_say_what_is_wrong():
    df = pd.DataFrame({"a": [1, 2], "t": ["x", "y"]})
    with pytest.raises(SdcInputError, match="at least one key"):
        replicated_uniques(df, df, [])
    with pytest.raises(SdcInputError, match="unknown key column.*: b"):
        replicated_uniques(df, df.drop(columns="a").assign(c=1), ["a", "b"])
    with pytest.raises(SdcInputError, match="unknown key column.*: a"):
        replicated_uniques(df, df.drop(columns="a"), ["a"])
    with pytest.raises(SdcInputError, match="the sensitive column t is a key"):
        disco(df, df, ["a", "t"], "t")
    with pytest.raises(SdcInputError, match="repeated"):
        replicated_uniques(df, df, ["a", "a"])
    with pytest.raises(SdcInputError, match="no records"):
        disco(df.iloc[:0], df, ["a"], "t")
    with pytest.raises(SdcInputError, match="unknown sensitive column"):
        disco_report(df, df, ["a"], ["s"])
    with pytest.raises(SdcInputError, match="no numeric column holds numbers"):
        dcr_holdout(df, df, df, ["t"])
    with pytest.raises(SdcInputError, match="no record is complete"):
        dcr_holdout(df, df.assign(a=np.nan), df, ["a"])


def test_the_result_gives_exactly_its_keys():
    df = pd.read_csv(ACTG)
    train, holdout = df.iloc[:1000], df.iloc[1000:]
    got = synthetic_risk(train, holdout.iloc[:300], ["age", "gender", "race"], ["treat", "r"],
                         holdout=holdout.iloc[300:], columns=["age", "wtkg", "race"]).to_json()
    assert list(got) == ["replicated_uniques", "replicated_uniques_percent", "disco",
                         "dcr_train_share", "dcr_expected_share", "exact_copies"]
    assert [list(d) for d in got["disco"]] == \
        [["column", "disco_percent", "disco_original_percent"]] * 2
    assert [d["column"] for d in got["disco"]] == ["treat", "r"]
    alone = synthetic_risk(train, holdout, ["age"]).to_json()
    assert list(alone) == ["replicated_uniques", "replicated_uniques_percent", "disco"]


# --- the distance to the closest record against a holdout -----------------------------------

NUMERIC = ["age", "wtkg", "cd40", "cd80"]


def actg_parts(seed: int, sizes: tuple[int, int]) -> tuple[pd.DataFrame, ...]:
    """ACTG 175 split at random into training, holdout and the rest."""
    df = pd.read_csv(ACTG)
    order = np.random.default_rng(seed).permutation(len(df))
    a, b = sizes
    return tuple(df.iloc[order[i:j]].reset_index(drop=True)
                 for i, j in ((0, a), (a, a + b), (a + b, len(df))))


def test_a_release_copying_the_training_part_is_all_nearer_it():
    train, holdout, _ = actg_parts(1, (500, 500))
    assert not set(rows(train, NUMERIC)) & set(rows(holdout, NUMERIC))  # no tie to count ½
    got = dcr_holdout(train, holdout, train.sample(frac=1.0, random_state=2), NUMERIC)
    assert got == {"dcr_train_share": 1.0, "dcr_expected_share": 0.5, "exact_copies": 500}


def test_a_release_of_other_records_of_the_population_is_near_the_expected_share():
    train, holdout, rest = actg_parts(3, (900, 450))  # unequal parts: 2/3 expected
    got = dcr_holdout(train, holdout, rest, NUMERIC)
    assert got["dcr_expected_share"] == pytest.approx(2 / 3)
    # each released record falls nearer a training record with probability 2/3: the mean of
    # len(rest) such draws has a binomial standard error of √(p(1 − p)/m); four of them
    p, m = got["dcr_expected_share"], len(rest)
    assert abs(got["dcr_train_share"] - p) < 4 * math.sqrt(p * (1 - p) / m)
    assert got["exact_copies"] == 0


def test_a_resampled_and_perturbed_release_with_blanks_equals_the_loop():
    df = load("carData/Chile")  # income and age have blanks
    train, holdout = df.iloc[:400].reset_index(drop=True), df.iloc[400:700]
    released = resampled(train, 5, {"income": lambda s, rng: s * rng.uniform(0.8, 1.2, len(s)),
                                    "age": lambda s, rng: s.where(rng.random(len(s)) < .7)})
    numeric, columns = ["age", "income", "statusquo"], ["age", "income", "statusquo", "vote"]
    assert released[numeric].isna().any(axis=1).sum() > 0
    got = dcr_holdout(train, holdout, released.iloc[:250], columns)
    want = loop_dcr(train, holdout, released.iloc[:250], numeric, columns)
    assert got["exact_copies"] == want["exact_copies"] > 0
    assert got["dcr_expected_share"] == pytest.approx(want["dcr_expected_share"], abs=1e-12)
    assert got["dcr_train_share"] == pytest.approx(want["dcr_train_share"], abs=1e-9)
    assert got["dcr_train_share"] > got["dcr_expected_share"]  # the release copies training


def test_a_tie_counts_half_and_a_blank_equals_a_blank_in_an_exact_copy():
    train = pd.DataFrame({"a": [0.0, 5.0], "s": ["x", None]})
    holdout = pd.DataFrame({"a": [2.0, 5.0], "s": ["y", "z"]})
    released = pd.DataFrame({"a": [1.0, 5.0, 5.0, None], "s": [None, None, "x", "x"]})
    got = dcr_holdout(train, holdout, released, ["a", "s"])
    # 1 lies halfway, 5 is in both parts: ½ each; the record with a blank a is left out
    assert got["dcr_train_share"] == 0.5
    assert got["exact_copies"] == 1  # (5, blank) copies training record 2
    assert got == loop_dcr(train, holdout, released, ["a"], ["a", "s"])


@settings(max_examples=60, deadline=None)
@given(*[st.lists(st.tuples(st.one_of(st.none(), st.integers(-4, 4)),
                            st.one_of(st.none(), st.floats(-3, 3, allow_subnormal=False)),
                            st.sampled_from(["u", "v", None])), min_size=1, max_size=10)] * 3)
def test_any_small_parts_equal_the_loop(ts, hs, zs):
    def frame(records: list[tuple[Any, ...]]) -> pd.DataFrame:
        return pd.DataFrame(records, columns=["a", "b", "s"]).astype(
            {"a": "Int64", "b": "Float64", "s": "string"})

    train, holdout, released = frame(ts), frame(hs), frame(zs)
    if any(f[["a", "b"]].isna().any(axis=1).all() for f in (train, holdout, released)):
        with pytest.raises(SdcInputError, match="no record is complete"):
            dcr_holdout(train, holdout, released, ["a", "b", "s"])
        return
    got = dcr_holdout(train, holdout, released, ["a", "b", "s"])
    want = loop_dcr(train, holdout, released, ["a", "b"], ["a", "b", "s"])
    assert got["exact_copies"] == want["exact_copies"]
    assert got["dcr_expected_share"] == pytest.approx(want["dcr_expected_share"], abs=1e-12)
    assert got["dcr_train_share"] == pytest.approx(want["dcr_train_share"], abs=1e-9)


def test_distances_whose_squares_overflow_are_finite_and_equal_the_loop():
    """The k-d tree sums squares: on a range of 4e-247 a release 1 away lies some 1e246 ranges
    off, whose square overflows though the distance does not."""
    train = pd.DataFrame({"a": [0, 0], "b": [0.0, 4e-247]})
    holdout = pd.DataFrame({"a": [1, 0], "b": [2e-247, 2e-247]})
    released = pd.DataFrame({"a": [0, 1, 0], "b": [1.0, -1.0, 3.5e-247]})
    got = closest_record(train, released, ["a", "b"]).distances
    spread = 4e-247
    want = [math.hypot(0.0, (1.0 - 4e-247) / spread) / math.sqrt(2),
            math.hypot(1.0, -1.0 / spread) / math.sqrt(2),
            math.hypot(0.0, 0.5e-247 / spread) / math.sqrt(2)]
    assert got == pytest.approx(want, rel=1e-12) and np.isfinite(got).all()
    found = dcr_holdout(train, holdout, released, ["a", "b"])
    assert found == loop_dcr(train, holdout, released, ["a", "b"], ["a", "b"])
    assert found["dcr_train_share"] == pytest.approx(2 / 3)  # a tie, another tie, and 1
