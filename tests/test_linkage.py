"""The linkage attack (docs/measures.md): the fast path against an O(n²) brute force of the
definition, every attacker of docs/measures.md (random tables and outside ones, with blanks and
rank swapping), the checks DESIGN names, the effect of every perturbative method, and the
interval disclosure (dRisk) against sdcMicro's own outputs (tests/data/sdcmicro/drisk)."""

import functools
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdc_core.data.io import EXAMPLE_PATH, read_table
from sdc_core.errors import SdcInputError
from sdc_core.recipe import apply_recipe, parse_recipe
from sdc_core.risk import risk_profile
from sdc_core.risk.linkage import interval_disclosure, linkage_attack
from tests.conformance import attackers_choose, reference_linkage
from tests.conftest import DATA, SHARED_DATA
from tests.sdcmicro_fixtures import cases, read, values

ACTG_QI = ["age", "gender", "race"]


def brute_force(x, z, qi, steps, known):
    """Every attacker's p_i and |M_i| by docs/measures.md, record against record
    (the test oracle): {attacker: (p, |M|)}."""
    swapped = {s["column"] for s in steps if s["method"] == "rank_swap"}
    exact = [c for c in qi if c in z.columns and c not in swapped]
    dist = [c for c in qi if c in z.columns and c in swapped] + [c for c in known
                                                                 if c in z.columns]
    y = x.copy()
    for s in steps:
        if s["method"] == "band":
            w = s["width"]
            y[s["column"]] = np.floor(y[s["column"]] / w) * w + w / 2
    sd = {}
    for c in dist:
        v = x[c].dropna()
        sd[c] = v.std(ddof=1) if len(v) > 1 and v.std(ddof=1) > 0 else 1.0
    n = len(x)
    yv = {c: y[c].tolist() for c in exact + dist}
    zv = {c: z[c].tolist() for c in exact + dist}

    def missing(v):
        return v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NA

    out = {a: (np.zeros(n), np.zeros(n, dtype=int))
           for a in ("any_match", "exact_first", "nearest_first")}
    for i in range(n):
        cand = [j for j in range(n) if all(missing(yv[c][i]) or missing(zv[c][j])
                                           or yv[c][i] == zv[c][j] for c in exact)]
        # both present and equal, exact and distance columns alike
        agree = {j: sum(not missing(yv[c][i]) and not missing(zv[c][j])
                        and yv[c][i] == zv[c][j] for c in exact + dist) for j in cand}
        d = {j: math.sqrt(sum(((yv[c][i] - zv[c][j]) / sd[c]) ** 2 for c in dist
                              if not missing(yv[c][i]) and not missing(zv[c][j])))
             for j in cand}
        for a, m in attackers_choose(cand, d, agree).items():
            out[a][1][i] = len(m)
            out[a][0][i] = 1.0 / len(m) if i in m else 0.0
    return out


def assert_equals_brute_force(result, expected):
    """Every attacker as the oracle; the headline is the one with the largest Σ p_i (the first
    of those within 10⁻⁹ of it, in the order of the definition)."""
    assert list(result.attackers) == list(expected)
    for a, (p, size) in expected.items():
        np.testing.assert_allclose(result.attackers[a].p_link, p, rtol=0, atol=1e-12, err_msg=a)
        np.testing.assert_array_equal(result.attackers[a].candidates, size, err_msg=a)
    most = max(p.sum() for p, _ in expected.values())
    top = next(a for a, (p, _) in expected.items() if p.sum() >= most - 1e-9 * max(1.0, most))
    assert result.attacker == top
    np.testing.assert_allclose(result.p_link, expected[top][0], rtol=0, atol=1e-12)
    np.testing.assert_array_equal(result.candidates, expected[top][1])
    assert result.linkage_reidentifications == pytest.approx(most, abs=1e-9)
    summary = result.summary()
    assert summary["linkage_attacker"] == top
    assert summary["linkage_reidentifications"] == result.linkage_reidentifications
    for a, (p, _) in expected.items():
        assert summary["linkage_attackers"][a]["linkage_reidentifications"] == \
            pytest.approx(p.sum(), abs=1e-9)


@st.composite
def protections(draw, max_rows=30):
    """A small table with ties and missing values, and a recipe mixing public recodings,
    perturbations, rank swapping, suppression and dropped columns."""
    n = draw(st.integers(2, max_rows))
    small = st.one_of(st.none(), st.integers(0, 3))
    df = pd.DataFrame({
        "a": draw(st.lists(small, min_size=n, max_size=n)),
        "b": draw(st.lists(st.one_of(st.none(), st.sampled_from("xyz")), min_size=n,
                           max_size=n)),
        "c": draw(st.lists(st.one_of(st.none(), st.integers(10, 20)), min_size=n, max_size=n)),
        "d": draw(st.lists(st.one_of(st.none(), st.floats(0, 5).map(lambda v: round(v, 1))),
                           min_size=n, max_size=n)),
    })
    for col in ("a", "c", "d"):
        df[col] = df[col].astype("Float64").astype(float)
    df["b"] = df["b"].astype(object)
    qi = draw(st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=3, unique=True))
    known = ["d"] if draw(st.booleans()) else []
    steps = []
    if "c" in qi and draw(st.booleans()):
        # midpoints, the labels the oracle writes (and a later rank swap takes as numbers)
        steps.append({"method": "band", "column": "c", "width": draw(st.sampled_from([2, 3])),
                      "label": "midpoint"})
    if "a" in qi and draw(st.booleans()):
        steps.append({"method": "rank_swap", "column": "a",
                      "window_percent": draw(st.sampled_from([10, 30, 60]))})
    if "c" in qi and draw(st.booleans()):
        steps.append({"method": "rank_swap", "column": "c", "window_percent": 40})
    if "b" in qi and draw(st.booleans()):
        steps.append({"method": "pram", "column": "b", "p": 0.5})
    if draw(st.booleans()):
        steps.append({"method": "local_suppression", "columns": qi, "k": 2})
    if len(qi) > 1 and draw(st.booleans()):
        steps.append({"method": "drop", "columns": [draw(st.sampled_from(qi))]})
    return df, qi, known, steps, draw(st.integers(0, 1000))


@settings(max_examples=200, deadline=None)
@given(case=protections())
def test_fast_path_equals_brute_force(case):
    df, qi, known, steps, seed = case
    recipe = parse_recipe({"seed": seed, "steps": steps})
    z = apply_recipe(recipe, df).data
    result = linkage_attack(df, z, qi, recipe, known)
    assert_equals_brute_force(result, brute_force(df, z, qi, recipe.steps, known))


@settings(max_examples=100, deadline=None)
@given(n=st.integers(1, 25), data=st.data())
def test_arbitrary_release_equals_brute_force(n, data):
    """Released values unrelated to the originals (no recipe): exact keys with wildcards on
    both sides and known columns with many exact ties in distance."""
    value = st.one_of(st.none(), st.integers(0, 2))
    coord = st.one_of(st.none(), st.sampled_from([0.0, 1.0, 2.0, 3.0]))
    frame = {c: data.draw(st.lists(value if c < "k" else coord, min_size=n, max_size=n))
             for c in ("e1", "e2", "k1", "k2")}
    x = pd.DataFrame(frame).astype("Float64").astype(float)
    z = pd.DataFrame({c: data.draw(st.lists(value if c < "k" else coord, min_size=n,
                                            max_size=n)) for c in frame})
    z = z.astype("Float64").astype(float)
    result = linkage_attack(x, z, ["e1", "e2"], None, ["k1", "k2"])
    assert_equals_brute_force(result, brute_force(x, z, ["e1", "e2"], [], ["k1", "k2"]))


def test_identity_equals_the_naive_measure(actg):
    result = linkage_attack(actg, actg, ACTG_QI)
    naive = risk_profile(actg, ACTG_QI)
    assert result.linkage_reidentifications == pytest.approx(
        naive.expected_reidentifications, abs=1e-9)
    np.testing.assert_allclose(result.p_link, 1.0 / naive.fk, rtol=0, atol=1e-12)
    assert result.linkage_percent_certain == pytest.approx(naive.percent_unique, abs=1e-9)
    assert result.drisk_percent is None


def test_identity_with_missing_keys():
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"a": rng.integers(0, 4, 300).astype(float),
                       "b": rng.integers(0, 3, 300).astype(float)})
    df.loc[rng.random(300) < 0.1, "a"] = np.nan
    df.loc[rng.random(300) < 0.1, "b"] = np.nan
    result = linkage_attack(df, df, ["a", "b"])
    naive = risk_profile(df, ["a", "b"], alpha=1.0)
    # every compatible candidate alike: sdcMicro's class sizes with blanks as wildcards
    np.testing.assert_allclose(result.attackers["any_match"].p_link, 1.0 / naive.fk, rtol=0,
                               atol=1e-12)
    # fewest blanks first: the records that hold every value i holds (a blank of the release
    # no longer stands in for one); the stronger attacker is the headline
    v = df.to_numpy()
    holds = ((v[None, :, :] == v[:, None, :]) | np.isnan(v[:, None, :])).all(axis=2)
    np.testing.assert_allclose(result.attackers["exact_first"].p_link, 1.0 / holds.sum(axis=1),
                               rtol=0, atol=1e-12)
    assert result.attacker == "exact_first"
    assert result.linkage_reidentifications > naive.expected_reidentifications


@pytest.mark.parametrize("width, expected", [(5, 44), (10, 25), (15, 18)])
def test_recodings_only_equal_expected_reidentifications(actg, width, expected):
    recipe = parse_recipe({"seed": 0, "steps": [{"method": "band", "column": "age",
                                                 "width": width}]})
    protected = apply_recipe(recipe, actg).data
    result = linkage_attack(actg, protected, ACTG_QI, recipe)
    assert result.linkage_reidentifications == pytest.approx(expected, abs=1e-9)
    assert result.linkage_reidentifications == pytest.approx(
        risk_profile(protected, ACTG_QI).expected_reidentifications, abs=1e-9)


def test_top_coding_is_public(actg):
    steps = [{"method": "top_bottom_code", "column": "age", "top": 50, "bottom": 20}]
    recipe = parse_recipe({"seed": 0, "steps": steps})
    protected = apply_recipe(recipe, actg).data
    result = linkage_attack(actg, protected, ACTG_QI, recipe)
    assert result.linkage_reidentifications == pytest.approx(
        risk_profile(protected, ACTG_QI).expected_reidentifications, abs=1e-9)


@pytest.mark.parametrize("step", [
    {"method": "pram", "column": "race", "p": 0.3},
    {"method": "relabel", "column": "race", "alpha": 0.5},
    {"method": "rank_swap", "column": "age", "window_percent": 5},
    {"method": "randomized_response", "column": "gender", "keep_probability": 0.5},
])
def test_perturbation_lowers_linkage_in_expectation(actg, step):
    """Over 12 seeds the mean linkage re-identifications lie below the unprotected 182 by more
    than four standard errors of that mean, while the naive measure does not drop."""
    baseline = risk_profile(actg, ACTG_QI).expected_reidentifications
    linkage, naive = [], []
    for seed in range(12):
        recipe = parse_recipe({"seed": seed, "steps": [step]})
        protected = apply_recipe(recipe, actg).data
        linkage.append(linkage_attack(actg, protected, ACTG_QI, recipe)
                       .linkage_reidentifications)
        naive.append(risk_profile(protected, ACTG_QI).expected_reidentifications)
    mean, se = np.mean(linkage), np.std(linkage, ddof=1) / np.sqrt(len(linkage))
    assert mean + 4 * se < baseline
    assert np.mean(naive) > mean


def test_rank_swap_makes_age_a_distance_column(actg):
    recipe = parse_recipe({"seed": 1, "steps": [{"method": "rank_swap", "column": "age",
                                                 "window_percent": 2.5}]})
    protected = apply_recipe(recipe, actg).data
    result = linkage_attack(actg, protected, ACTG_QI, recipe)
    assert result.exact == ("gender", "race") and result.distance == ("age",)
    # one distance column: a record counts when its true age is within 5 % of an sd of its
    # released one
    age, swapped = actg["age"].to_numpy(float), protected["age"].to_numpy(float)
    inside = np.abs(age - swapped) <= 0.05 * np.std(swapped, ddof=1)
    assert result.drisk_percent == pytest.approx(100 * inside.mean(), abs=1e-12)
    assert 0 < result.drisk_percent < 100
    # without the recipe the swapped ages are read as exact keys
    blind = linkage_attack(actg, protected, ACTG_QI)
    assert blind.distance == () and blind.linkage_reidentifications < \
        result.linkage_reidentifications


def test_known_columns_add_distance(actg):
    known = linkage_attack(actg, actg, ACTG_QI, known=["wtkg"])
    assert known.distance == ("wtkg",)
    assert known.linkage_reidentifications > linkage_attack(actg, actg, ACTG_QI) \
        .linkage_reidentifications


def test_dropped_quasi_identifier_is_ignored(actg):
    recipe = parse_recipe({"seed": 0, "steps": [{"method": "drop", "columns": ["age"]}]})
    protected = apply_recipe(recipe, actg).data
    result = linkage_attack(actg, protected, ACTG_QI, recipe)
    assert result.exact == ("gender", "race")
    assert result.linkage_reidentifications == pytest.approx(
        risk_profile(actg, ["gender", "race"]).expected_reidentifications, abs=1e-9)


@functools.cache
def drisk_inputs():
    """Every dRisk fixture: id, original x and perturbed z (n × p, NaN = missing)."""
    return [(c["id"], values("drisk", c["x"]), values("drisk", c["z"])) for c in cases("drisk")]


@pytest.mark.parametrize("k, column", [(0.05, "risk"), (0.01, "risk_k0.01"), (0.1, "risk_k0.1")])
def test_drisk_equals_sdcmicro_outputs(k, column):
    """``dRisk(obj = x, xm = z, k)`` of sdcMicro 5.8.1 (a share) on its 200 fixtures
    (tests/data/sdcmicro/drisk): 1 to 4 columns, missing values in x and in z."""
    expected = read("drisk", "cases.csv").set_index("id")[column]
    wrong = [case for case, x, z in drisk_inputs()
             if not abs(interval_disclosure(x, z, k) / 100 - expected[case]) <= 1e-12]
    assert not wrong, f"{len(wrong)} of {len(expected)} cases differ, the first {wrong[:5]}"


def test_drisk_on_swapped_columns(actg):
    steps = [{"method": "rank_swap", "column": c, "window_percent": 5} for c in ("age",)]
    recipe = parse_recipe({"seed": 2, "steps": steps})
    protected = apply_recipe(recipe, actg).data
    result = linkage_attack(actg, protected, ACTG_QI, recipe, known=["wtkg", "cd40"])
    assert result.distance == ("age", "wtkg", "cd40")
    x = actg[["age", "wtkg", "cd40"]].to_numpy(dtype=float)
    xm = protected[["age", "wtkg", "cd40"]].to_numpy(dtype=float)
    assert result.drisk_percent == interval_disclosure(x, xm)


def test_bad_input_is_refused(actg):
    with pytest.raises(SdcInputError, match="aligned"):
        linkage_attack(actg, actg.head(10), ACTG_QI)
    with pytest.raises(SdcInputError, match="already a quasi-identifier"):
        linkage_attack(actg, actg, ACTG_QI, known=["age"])
    with pytest.raises(SdcInputError, match="unknown known"):
        linkage_attack(actg, actg, ACTG_QI, known=["nope"])
    text = actg.assign(note=actg["race"].map({0: "a", 1: "b"}))
    as_text = linkage_attack(text, text, ACTG_QI, known=["note"])  # compared exactly
    assert "note" in as_text.exact and "note" not in as_text.distance


def test_records_are_in_input_order(actg):
    shuffled = actg.sample(frac=1.0, random_state=4).reset_index(drop=True)
    a = linkage_attack(actg, actg, ACTG_QI, known=["wtkg"]).records()
    b = linkage_attack(shuffled, shuffled, ACTG_QI, known=["wtkg"]).records()
    order = actg.reset_index().merge(shuffled.reset_index(), on=list(actg.columns))
    np.testing.assert_array_equal(a["p_link"].to_numpy()[order["index_x"]],
                                  b["p_link"].to_numpy()[order["index_y"]])
    assert list(a.columns) == ["p_link", "candidates"]


def test_a_blank_is_not_an_agreement():
    """docs/measures.md's worked example: region blanked on records 2 and 3. Every compatible
    candidate alike re-identifies 13/6; fewest blanks first 2.5, the headline."""
    true = pd.DataFrame({"sex": ["F", "F", "F", "M", "M"],
                         "region": ["North", "North", "South", "South", "South"]})
    released = true.assign(region=["North", None, None, "South", "South"])
    result = linkage_attack(true, released, ["sex", "region"])
    np.testing.assert_allclose(result.attackers["any_match"].p_link,
                               [1 / 3, 1 / 3, 1 / 2, 1 / 2, 1 / 2], rtol=0, atol=1e-15)
    np.testing.assert_array_equal(result.attackers["any_match"].candidates, [3, 3, 2, 2, 2])
    np.testing.assert_allclose(result.attackers["exact_first"].p_link, [1, 0, 1 / 2, 1 / 2, 1 / 2],
                               rtol=0, atol=1e-15)
    np.testing.assert_array_equal(result.attackers["exact_first"].candidates, [1, 1, 2, 2, 2])
    np.testing.assert_array_equal(result.attackers["nearest_first"].p_link,
                                  result.attackers["exact_first"].p_link)
    summary = result.summary()
    assert summary["linkage_attacker"] == result.attacker == "exact_first"
    assert summary["linkage_reidentifications"] == pytest.approx(2.5, abs=1e-12)
    assert summary["linkage_risk_percent"] == pytest.approx(50.0, abs=1e-12)
    assert summary["linkage_percent_certain"] == pytest.approx(20.0, abs=1e-12)
    assert summary["linkage_attackers"]["any_match"] == pytest.approx(
        {"linkage_reidentifications": 13 / 6, "linkage_risk_percent": 100 * 13 / 30,
         "linkage_percent_certain": 0.0}, abs=1e-12)
    np.testing.assert_array_equal(result.records()["p_link"], [1, 0, 0.5, 0.5, 0.5])


def test_a_tie_between_attackers_goes_to_the_first():
    """Without blanks the three attackers are one: the headline is ``any_match``."""
    df = pd.DataFrame({"a": [1, 1, 2, 3], "b": ["x", "x", "y", "y"]})
    result = linkage_attack(df, df, ["a", "b"])
    assert result.attacker == "any_match"
    for attack in result.attackers.values():
        np.testing.assert_array_equal(attack.p_link, [0.5, 0.5, 1, 1])


#: Outside tables (ACTG 175, sdcMicro's testdata, ARX's Adult) with blanks from local
#: suppression on exact and distance columns, rank swapping and PRAM: (file, quasi-identifiers,
#: known columns, steps).
OUTSIDE = {
    "actg175": (EXAMPLE_PATH, ["age", "gender", "race", "karnof"], [], [
        {"method": "rank_swap", "column": "age", "window_percent": 10},
        {"method": "local_suppression", "columns": ["age", "gender", "race", "karnof"],
         "k": 5}]),
    "testdata": (DATA / "testdata.csv", ["urbrur", "roof", "walls", "water", "sex", "relat"],
                 [], [{"method": "pram", "column": "water", "p": 0.2},
                      {"method": "local_suppression",
                       "columns": ["urbrur", "roof", "walls", "water", "sex", "relat"], "k": 3}]),
    "adult": (SHARED_DATA / "adult.csv", ["sex", "age", "race", "marital-status", "education"],
              [], [{"method": "rank_swap", "column": "age", "window_percent": 5},
                   {"method": "local_suppression",
                    "columns": ["sex", "race", "marital-status", "education"], "k": 2}]),
}


@pytest.mark.parametrize("name", OUTSIDE)
def test_attackers_equal_the_reference_on_outside_tables(name):
    """200 records of each outside table: every attacker's p_i as the O(n²) reference of
    tests/conformance.py; the headline is the largest Σ p_i; on these releases preferring
    the fewest blanks changes some records (so the comparison can fail)."""
    path, qi, known, steps = OUTSIDE[name]
    df = read_table(path).sample(n=200, random_state=1).reset_index(drop=True)
    recipe = parse_recipe({"seed": 3, "steps": steps})
    applied = apply_recipe(recipe, df)
    assert applied.data[qi].isna().any().any()
    result = linkage_attack(df, applied.data, qi, recipe, known, applied.reports)
    reference = reference_linkage(df, applied.data, qi, recipe, known, applied.reports)
    assert list(reference) == list(result.attackers)
    for a, p in reference.items():
        np.testing.assert_allclose(result.attackers[a].p_link, p, rtol=0, atol=1e-12, err_msg=a)
    assert not np.array_equal(reference["any_match"], reference["exact_first"])
    most = max(p.sum() for p in reference.values())
    assert result.linkage_reidentifications == pytest.approx(most, abs=1e-9)
    assert reference[result.attacker].sum() == pytest.approx(most, abs=1e-9)


def test_an_unchanged_column_reads_the_same_exact_or_by_distance():
    """tests/conformance.py's falsifying example: a rank swap that moves no value turns the
    dates from an exact column into a distance column, and every attacker finds what it found
    before. PRAM moved record 0's date to 2020-01-02: read exactly, record 0's own record is no
    candidate (p = 0); read by distance, it is, and it agrees on ``boolean_0`` where the blanked
    dates do not; but the blanked dates lie at distance 0, and a candidate at distance 0 comes
    first for ``exact_first`` too (it is then ``nearest_first``)."""
    df = pd.DataFrame({
        "datetime_tz_first": pd.to_datetime(["2020-01-01", None, None, None, None,
                                             "2020-01-02"]).tz_localize("UTC"),
        "boolean_0": pd.array([True, None, None, None, None, None], dtype="boolean"),
        "bool_1": [True] * 6})
    qi = ["datetime_tz_first", "boolean_0"]
    steps = [{"method": "randomized_response", "column": "datetime_tz_first",
              "keep_probability": 1.0},
             {"method": "pram", "column": "datetime_tz_first", "p": 0.5},
             {"method": "rank_swap", "column": "datetime_tz_first", "window_percent": 1.0}]
    results = []
    for k in (2, 3):
        recipe = parse_recipe({"seed": 0, "steps": steps[:k]})
        applied = apply_recipe(recipe, df)
        results.append((applied.data,
                        linkage_attack(df, applied.data, qi, recipe, reports=applied.reports)))
    (before, exact), (after, by_distance) = results
    pd.testing.assert_frame_equal(before, after)
    assert "datetime_tz_first" in exact.exact and by_distance.distance == ("datetime_tz_first",)
    for a in exact.attackers:
        np.testing.assert_allclose(by_distance.attackers[a].p_link, exact.attackers[a].p_link,
                                   rtol=0, atol=1e-12, err_msg=a)
        np.testing.assert_array_equal(by_distance.attackers[a].candidates,
                                      exact.attackers[a].candidates, err_msg=a)
    np.testing.assert_allclose(by_distance.attackers["exact_first"].p_link,
                               [0, 1 / 6, 1 / 6, 1 / 6, 1 / 6, 1 / 2], rtol=0, atol=1e-12)
    assert by_distance.linkage_reidentifications == pytest.approx(7 / 6, abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_a_blanked_column_reads_the_same_exact_or_by_distance(data):
    """A column whose released values are the true ones or blanks, read exactly (no recipe) or
    as a distance column (a rank swap declared on it), with another exact column with blanks:
    every attacker's p_i and |M_i| are the same."""
    n = data.draw(st.integers(2, 12))
    num = data.draw(st.lists(st.one_of(st.none(), st.integers(0, 3)), min_size=n, max_size=n))
    cat = data.draw(st.lists(st.one_of(st.none(), st.sampled_from("xy")), min_size=n,
                             max_size=n))
    df = pd.DataFrame({"num": pd.array(num, dtype="Float64"), "cat": pd.array(cat, dtype=object)})
    blank_num = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))
    blank_cat = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))
    released = df.copy()
    released.loc[blank_num, "num"] = None
    released.loc[blank_cat, "cat"] = None
    recipe = parse_recipe({"seed": 0, "steps": [{"method": "rank_swap", "column": "num",
                                                 "window_percent": 1.0}]})
    exact = linkage_attack(df, released, ["num", "cat"])
    by_distance = linkage_attack(df, released, ["num", "cat"], recipe)
    assert exact.distance == () and by_distance.distance == ("num",)
    for a in exact.attackers:
        np.testing.assert_allclose(by_distance.attackers[a].p_link, exact.attackers[a].p_link,
                                   rtol=0, atol=1e-12, err_msg=a)
        np.testing.assert_array_equal(by_distance.attackers[a].candidates,
                                      exact.attackers[a].candidates, err_msg=a)
