"""Tables on the pages head every column in words and show their text whole (issue 25, item
7): the data behind them, and so every download, keeps the machine names."""

import json

from streamlit.testing.v1 import AppTest

from tests.apptest import app_test


def settings(at: AppTest) -> dict[str, dict]:
    """Every table's column settings on the page, by column name."""
    out: dict[str, dict] = {}
    for frame in at.dataframe:
        out |= json.loads(frame.proto.columns or "{}")
    return out


def test_risk_page_tables_head_their_columns_in_words():
    at = app_test().run()
    at.switch_page("views/risk.py").run()
    assert not at.exception
    columns = settings(at)
    labels = {name: spec.get("label") for name, spec in columns.items()}
    assert labels["records"] == "records with these values"
    assert labels["keys"] == "quasi-identifiers" and labels["median_k"] == "median class size"
    assert (labels["variable"], labels["level"], labels["count"]) == (
        "quasi-identifier", "value", "records")
    assert (labels["suda_score"], labels["dis_score"], labels["msus"]) == (
        "SUDA score", "DIS score", "minimal sample uniques")
    assert columns["msus"]["width"] == "large"
    rare = next(d.value for d in at.dataframe if "level" in d.value.columns)
    assert list(rare.columns) == ["variable", "level", "count"]  # the data keeps its names


def test_data_page_column_summary_is_headed_in_words_and_shows_its_text():
    at = app_test().run()
    at.session_state["w_data_tab"] = "Columns"  # drawn once chosen
    at.run()
    assert not at.exception
    columns = settings(at)
    assert columns["missing"]["label"] == "missing values"
    assert columns["distinct"]["label"] == "distinct values"
    assert columns["examples"]["label"] == "example values"
    assert columns["examples"]["width"] == "large" and columns["role"]["width"] == "medium"
