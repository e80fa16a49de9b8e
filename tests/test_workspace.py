"""The workspace file (ui.logic.workspace; docs/architecture.md): it holds the settings, never a
record, and reads back as written (roles, the Protect page's steps, record swapping included,
the benchmark analyses, the Trade-offs fields); a file that cannot be used as it is is refused
whole, saying why. Opening one on the pages is tested in tests/test_resume.py and the pages'
tests."""

import json

import pytest

from sdc_core.assess import RiskOptions
from sdc_core.errors import SdcInputError
from sdc_core.roles import Roles
from tests.record_swap_step import EXAMPLE, HID, STEP
from tests.workspaces import SURVEY, SURVEY_ANALYSES, survey_workspace
from ui.logic import workspace


def test_a_workspace_round_trip_holds_no_record():
    text = survey_workspace()
    assert not any(v in text for v in SURVEY["secret"])  # settings, never values
    ws = workspace.read(text, SURVEY.columns)
    assert ws.roles == Roles(qi=["age", "sex"], sensitive=["secret"])
    assert ws.settings.steps(["age", "sex"]) == [{"method": "band", "column": "age",
                                                  "width": 10}]
    assert ws.settings.seed == 7 and ws.risk == RiskOptions(3, "category", 0.5)
    assert ws.tradeoffs == {"w_t_band_values": "5, 10", "w_t_target": "every_class"}
    assert workspace.difference(ws.data, "survey.csv", 40, "f00d") is None
    assert "survey.csv (40 records)" in workspace.difference(ws.data, "other.csv", 9, "beef")
    assert '"household"' not in text  # no household: the file of a person table is as before
    households = Roles(qi=["age"], household="sex")
    assert workspace.read(survey_workspace(roles=households), SURVEY.columns).roles == households


def test_a_workspace_carries_the_benchmark_analyses():
    ws = workspace.read(survey_workspace(analyses=SURVEY_ANALYSES), SURVEY.columns)
    assert ws.analyses == SURVEY_ANALYSES
    assert workspace.read(survey_workspace(), SURVEY.columns).analyses is None


@pytest.mark.parametrize("text, words", [
    (survey_workspace(roles=Roles(qi=["age", "zip"])), "does not have: zip"),
    (survey_workspace(analyses={"analyses": [{"name": "m", "kind": "mean", "column": "zip"}]}),
     "does not have: zip"),
    (survey_workspace(analyses={"analyses": []}), "'analyses' must be a non-empty list"),
    (survey_workspace(steps=[{"method": "drop", "columns": ["age"]}]), "no control"),
    (survey_workspace().replace('"k": 3', '"k": 0'), "risk.k"),
    (survey_workspace(roles=Roles(qi=["age"], household="zip")), "does not have: zip"),
    (survey_workspace(roles=Roles(qi=["age"], household="age")),
     "household id cannot also be a key"),
    (json.dumps({"workspace": 1, "roles": {"household": ["sex"]}}),
     "household must be a column name or null"),
    (json.dumps({"workspace": 1, "roles": {"household": "<img src=x onerror=alert(1)>"}}),
     "does not have: <img"),
    ("{not json", "not JSON"),
    (json.dumps({"seed": 1, "steps": []}), "not a workspace file"),
    (json.dumps({"workspace": 1, "tradeoffs": {"protect": {}}}), "not a field"),
    (json.dumps({"workspace": 2}), "version 2"),
    (json.dumps({"workspace": True}), "version True"),
    (json.dumps({"workspace": 1.0}), "version 1.0"),
    (json.dumps({"workspace": 1, "tradeoffs": {"w_t_seeds": 1000}}),
     r"'w_t_seeds' must be a whole number from 1 to 20, not 1000"),
    (json.dumps({"workspace": 1, "tradeoffs": {"w_t_seed": -1}}), "'w_t_seed' must be"),
    (json.dumps({"workspace": 1, "tradeoffs": {"w_t_pareto": "bogus"}}),
     "'w_t_pareto' must be one of linkage, naive"),
    (json.dumps({"workspace": 1, "tradeoffs": {"w_t_combine": "yes"}}),
     "'w_t_combine' must be true or false"),
    (json.dumps({"workspace": 1, "tradeoffs": {"w_t_at_most": 1e300}}),
     "'w_t_at_most' must be a number from 0"),
    (json.dumps({"workspace": 1, "tradeoffs": {"w_t_keep_bound": -2}}),
     "'w_t_keep_bound' must be a number from 0"),
    (json.dumps({"workspace": 1, "tradeoffs": {"w_t_band_cols": "age"}}),
     "'w_t_band_cols' must be a list of column names"),
    (json.dumps({"workspace": 1, "tradeoffs": {"w_t_band_values": 5}}),
     "'w_t_band_values' must be text"),
    (json.dumps({"workspace": 1, "tradeoffs": {"w_t_band_values": "5," * 600}}),
     "'w_t_band_values' must be text of at most 1000"),
    (json.dumps({"workspace": 1, "tradeoffs": {"w_t_speed": 3}}), "not a field"),
    (json.dumps({"workspace": 1, "sampling": {"population_size": 1e300}}),
     "population_size must be a number of people from 1 to 2"),
    (b'{"workspace": 1, "x": "' + b"y" * 2_000_000 + b'"}', "larger than 2 MB"),
])
def test_a_workspace_that_cannot_be_used_as_it_is_is_refused_whole(text, words):
    with pytest.raises(SdcInputError, match=words):
        workspace.read(text, SURVEY.columns)


def test_a_workspace_with_record_swapping_reads_back(households):
    """A workspace file holds the roles (the household id) and the page's steps; it reads
    back with the swap as it was."""
    roles = EXAMPLE.roles
    text = workspace.to_json("households", len(households), list(households.columns), "f" * 64,
                             roles, [STEP], 13, RiskOptions(), [], {})
    read = workspace.read(text, list(households.columns))
    assert read.roles.household == HID
    assert (read.settings.steps([]), read.settings.seed) == ([STEP], 13)


@pytest.mark.parametrize("fields, words", [
    ({"w_tables_eps": 1e9}, "'w_tables_eps' must be a number from 0.01 to 100"),
    ({"w_tables_unit": "household"}, "'w_tables_unit' must be one of person, record"),
    ({"w_tables_cross": "region"}, "must be a list of column names"),
    ({"w_tables_max_c": 0}, "'w_tables_max_c' must be a whole number from 1 to 10000"),
    ({"w_tables_delim": "**x**"}, "must be text of at most 3 characters"),
    ({"w_tables_added": 6}, "'w_tables_added' must be a whole number from 0 to 5"),
    ({"w_tables_added_0": "region"}, "must be a list of column names"),
    ({"w_tables_speed": 3}, "is not a field of the Tables page"),
    ({"w_tables_" + "x" * 5000: 3}, "is not a field of the Tables page"),
])
def test_a_workspace_the_tables_page_cannot_draw_is_refused_whole(fields, words):
    text = json.dumps({"workspace": 1, "tables": fields})
    with pytest.raises(SdcInputError, match=words):
        workspace.read(text, ["region"])


def test_the_tables_pages_added_tables_are_fields_of_a_workspace():
    fields = {"w_tables_added": 2, "w_tables_added_0": ["region"], "w_tables_added_1": []}
    assert workspace.tables_fields(fields) == fields
