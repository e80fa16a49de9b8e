"""One assessment of a release (sdc_core/assess.py): its setting is checked, its parts are the
measures' own figures, each computed once, and a part that does not apply says why."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sdc_core.assess import RiskOptions, Sampling, Setting, Unavailable, assess
from sdc_core.data.io import read_table
from sdc_core.errors import SdcInputError
from sdc_core.examples import example
from sdc_core.recipe import apply_recipe, parse_recipe
from sdc_core.risk import risk_profile
from sdc_core.risk.linkage import linkage_attack
from sdc_core.risk.population_risk import population_risk
from sdc_core.utility import il1

EXAMPLE = example("households")
DF = read_table(EXAMPLE.path)
QI = tuple(EXAMPLE.roles.qi)
RECIPE = parse_recipe({"seed": 3, "steps": [
    {"method": "band", "column": "age", "width": 10},
    {"method": "pram", "column": "sex", "p": 0.2}]})


@pytest.mark.parametrize(("options", "said"), [
    ({"k": 0}, "k must be a whole number"),
    ({"k": True}, "k must be a whole number"),
    ({"na": "drop"}, "na must be one of wildcard, category"),
    ({"alpha": 1.5}, "alpha must lie in [0, 1]"),
    ({"alpha": float("nan")}, "alpha must"),
])
def test_risk_options_refuse_what_no_measure_reads(options, said):
    with pytest.raises(SdcInputError, match=said.replace("[", r"\[").replace("]", r"\]")):
        RiskOptions(**options)


def test_the_parts_are_the_measures_figures_each_computed_once():
    df = DF
    numeric = ("income",) if "income" in df.columns else ()
    setting = Setting(QI, numeric, risk=RiskOptions(3, "category", 0.5))
    a = assess(df, None, setting, RECIPE)
    released = apply_recipe(RECIPE, df)
    pd.testing.assert_frame_equal(a.released, released.data)
    profile = risk_profile(released.data, list(QI), k=3, na="category", alpha=0.5)
    assert a.keys.summary() == profile.summary()
    assert a.keys is a.keys  # kept
    attack = linkage_attack(df, released.data, list(QI), RECIPE, [], released.reports)
    assert a.linkage.summary() == attack.summary()
    assert a.loss.summary() == il1(df, released.data, list(numeric),
                                   columns=["age", "sex"]).summary()
    assert a.touched == ["age", "sex"]
    assert [d.column for d in a.deniability] == ["sex"]


def test_computed_parts_are_held_and_pickle_with_the_assessment():
    """What a worker computes (``computed``) travels back with the assessment; a name that is
    no part is refused."""
    import pickle

    a = assess(DF, None, Setting(QI), RECIPE).computed("keys", "linkage")
    assert {"keys", "linkage"} <= set(a.__dict__) and "loss" not in a.__dict__
    back = pickle.loads(pickle.dumps(a))
    assert back.__dict__["linkage"].summary() == a.linkage.summary()
    with pytest.raises(ValueError, match="not a part of an assessment: setting"):
        a.computed("setting")


def test_a_part_the_setting_does_not_ask_for_is_unavailable_and_says_so():
    a = assess(DF, None, Setting(QI), RECIPE)
    assert a.inference == Unavailable("no sensitive column beside the keys", asked=False)
    assert a.households == Unavailable("no household id", asked=False)
    assert a.population == Unavailable("nothing says how the file was sampled", asked=False)
    keyed = assess(DF, None, Setting(QI, sensitive=(QI[0],)), RECIPE)  # a key is no secret
    assert isinstance(keyed.inference, Unavailable) and not keyed.inference.asked


def test_a_part_that_cannot_be_computed_gives_its_reason():
    df = pd.DataFrame({"sex": ["F", "M"] * 10, "hh": [1, 2] * 10,
                       "age": np.arange(20) % 7})
    a = assess(df, None, Setting(("sex", "hh"), household="hh",
                           sampling=Sampling(sampling_fraction=2.0)),
               parse_recipe({"seed": 1, "steps": []}))
    for part in (a.households, a.population):
        assert isinstance(part, Unavailable) and part.asked
        assert part.reason and "\n" not in part.reason


def test_population_is_the_measures_own():
    df = DF
    a = assess(df, None, Setting(QI, sampling=Sampling(sampling_fraction=0.1)), RECIPE)
    expected = population_risk(apply_recipe(RECIPE, df).data, list(QI), None, 0.1, None)
    assert a.population.to_json() == expected.to_json()


def test_a_release_without_the_originals_rows_is_refused_by_every_row_by_row_measure():
    """Fewer records in another order (a sample of the release): the measures that compare
    record by record say why not; the keys' risk, closeness and the distance to the closest
    record, which read the release as a set of records, stand."""
    released = apply_recipe(RECIPE, DF).data.sample(frac=0.6, random_state=2)
    numeric = ("income",)
    a = assess(DF, released, Setting(QI, numeric, ("benefit",), household="hid",
                                     closest=True), RECIPE)
    assert a.rows is not None and f"{len(released)} records" in a.rows
    for part in ("linkage", "loss", "similarity"):
        with pytest.raises(SdcInputError, match="compares record by record"):
            getattr(a, part)
    for part in ("inference", "person_deniability", "households", "household_linkage"):
        found = getattr(a, part)
        assert isinstance(found, Unavailable) and found.reason == a.rows, part
    assert a.keys.n_records == len(released)
    assert not isinstance(a.closeness, Unavailable)
    assert not isinstance(a.closest, Unavailable) and a.closest.distances.size > 0
    aligned = assess(DF, None, Setting(QI, numeric, ("benefit",), household="hid"), RECIPE)
    assert aligned.rows is None
