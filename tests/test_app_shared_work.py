"""Work shared across the class (docs/deploying.md, "Work shared across the class"): results are
cached for the server under the data set's id, a hash of the bytes a session loaded and of the
reader its file's extension picks, never of the name the user gave it. Two sessions that upload
different files under the same name, with the same columns, never see each other's figures;
two that upload the same bytes share one computation."""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from tests.apptest import app_test, metrics
from ui import compute
from ui.logic.session import content_id

QI = ["age", "sex", "region"]
NAME = "survey.csv"


def survey(seed: int, n: int = 400) -> bytes:
    """A table of the same columns for every seed, its values the seed's own."""
    r = np.random.default_rng(seed)
    df = pd.DataFrame({"age": r.integers(18, 18 + 10 * (seed + 2), n),
                       "sex": r.choice(["f", "m"], n),
                       "region": r.choice([f"r{i}" for i in range(3 + seed)], n),
                       "income": r.integers(1000, 9000, n)})
    return df.to_csv(index=False).encode()


def session_on_risk(raw: bytes, name: str = NAME) -> AppTest:
    """A session that uploads ``raw`` as ``name``, tags the keys and opens the Risk page."""
    at = app_test().run()
    at.file_uploader(key="uploader").set_value((name, raw, "text/csv")).run()
    at.multiselect(key="w_qi").set_value(QI).run()
    at.switch_page("views/risk.py").run()
    assert not at.exception
    return at


def uniques(raw: bytes) -> str:
    """The share of the table's records alone in their key combination, as the Risk page's
    "Unique records" tile writes it, counted from the records."""
    df = pd.read_csv(pd.io.common.BytesIO(raw))
    alone = int((df.groupby(QI).size() == 1).sum())
    return f"{100 * alone / len(df):.2f} %"


def shown_uniques(at: AppTest) -> str:
    return metrics(at)["Unique records"]


def test_two_files_of_one_name_and_columns_keep_their_own_figures():
    """Session A and B upload different survey.csv files, one after the other and then again
    in turn: each shows the uniques of its own records, whatever the other computed."""
    compute.original.clear()
    a_raw, b_raw = survey(1), survey(2)
    assert uniques(a_raw) != uniques(b_raw)
    a = session_on_risk(a_raw)
    b = session_on_risk(b_raw)
    assert shown_uniques(a) == uniques(a_raw)
    assert shown_uniques(b) == uniques(b_raw)
    a.run()  # A again, after B filled the caches with its own
    assert shown_uniques(a) == uniques(a_raw)


def test_the_same_bytes_are_computed_once_for_both_sessions(monkeypatch):
    """A second session that uploads the same bytes (under another name) reads the first's
    results: the original's assessment is computed once."""
    compute.original.clear()
    made = []
    inner = compute.assess

    def counted(*args, **kwargs):
        made.append(1)
        return inner(*args, **kwargs)

    monkeypatch.setattr(compute, "assess", counted)
    raw = survey(3)
    first = session_on_risk(raw, "mine.csv")
    once = len(made)
    assert once >= 1
    second = session_on_risk(raw, "theirs.csv")
    assert len(made) == once
    assert shown_uniques(first) == shown_uniques(second) == uniques(raw)


@pytest.mark.parametrize(("one", "other", "same"), [
    ("survey.csv", "other name.csv", True),
    ("survey.csv", "SURVEY.CSV", True),
    ("survey.csv", "survey.parquet", False),
    ("survey.csv", "survey.dta", False),
    ("survey.csv", "survey", False),
])
def test_the_id_is_the_bytes_and_the_reader_not_the_name(one, other, same):
    raw = survey(4)
    assert (content_id(raw, one) == content_id(raw, other)) is same
    assert content_id(raw, one) != content_id(survey(5), one)
    assert content_id(raw, one).startswith(hashlib.sha256(raw).hexdigest()[:32])
