"""Response tables (seed 004): thresholds, the non-response interval, multi-select, the audit."""

import json

import pandas as pd
import pytest

from sdc_core.errors import SdcInputError
from sdc_core.tables.responses import (
    audit,
    naive_publication,
    publish,
    question_counts,
    response_table,
)
from tests.cli_run import run


def answers(counts: dict[str, int], participants: int) -> pd.DataFrame:
    cells = [o for o, c in counts.items() for _ in range(c)]
    return pd.DataFrame({"answer": cells + [None] * (participants - len(cells))})


def test_seed_pets_example():
    df = answers({"Cat": 42, "Dog": 33, "Elephant": 2, "Penguin": 4, "Dolphin": 9}, 100)
    t = response_table(df, "answer")
    shown = {o.option: o.display for o in t.options}
    assert shown == {"Cat": "42", "Dog": "33", "Dolphin": "9", "Elephant": "less than 5",
                     "Penguin": "less than 5"}
    assert {o.option: o.count for o in t.options}["Elephant"] is None
    assert t.nonresponse.display == "between 8 and 16"
    assert (t.nonresponse.low, t.nonresponse.high) == (8, 16)
    assert t.responses.display == "between 84 and 92"  # never the exact 90
    assert audit(t).passes
    naive = audit(naive_publication(t, 90))
    assert not naive.passes
    assert [(o.option, o.low, o.high) for o in naive.options] == [("Elephant", 2, 4),
                                                                  ("Penguin", 2, 4)]


def test_seed_clamping_example():
    t = response_table(answers({"Human": 17, "Dancer": 2}, 20), "answer")
    assert t.nonresponse.display == "between 0 and 3"
    assert audit(t).passes


def test_seed_dancer_not_recoverable():
    t = response_table(answers({"Human": 14, "Dancer": 2}, 20), "answer")
    assert t.nonresponse.display == "between 2 and 6"
    result = audit(t)
    assert result.passes and (result.options[0].low, result.options[0].high) == (0, 4)
    naive = audit(naive_publication(t, 16))
    assert not naive.passes and naive.options[0].revealed and naive.options[0].low == 2


def test_all_options_below_threshold_gives_the_worst_case_interval():
    t = response_table(answers({"a": 4, "b": 4, "c": 3}, 20), "answer")
    assert [o.display for o in t.options] == ["less than 5"] * 3
    assert (t.nonresponse.low, t.nonresponse.high) == (20 - 3 * 4, 20)  # [N − m(T−1), N]
    assert audit(t).passes


def test_question_with_nine_responses_is_hidden():
    t = response_table(answers({"yes": 6, "no": 3}, 30), "answer")
    assert not t.shown and t.options == [] and t.nonresponse is None
    assert t.to_dict()["responses"] is None
    assert response_table(answers({"yes": 7, "no": 3}, 30), "answer").shown


def test_interval_is_a_single_number_when_exact():
    t = response_table(answers({"yes": 12, "no": 8}, 25), "answer")
    assert t.nonresponse.display == "5" and audit(t).passes


def test_options_nobody_chose_are_listed_and_thresholds_validated():
    df = answers({"Human": 20}, 20)
    t = response_table(df, "answer", options=["Human", "Dancer"])
    assert [o.display for o in t.options] == ["20", "less than 5"]
    # the inherent limit of thresholding (seed 004): 20 of 20 Human pins Dancer to 0
    assert audit(t).options[0].revealed and not audit(t).options[0].narrowed_by_nonresponse
    with pytest.raises(SdcInputError, match="t must be a whole number"):
        response_table(df, "answer", t=0)
    with pytest.raises(SdcInputError, match="fewer than the rows"):
        response_table(df, "answer", participants=5)


def test_multi_select_delimited_and_indicator_forms_agree():
    cells = ["a;b"] * 6 + ["a"] * 4 + ["b;c"] * 2 + [None] * 8
    delimited = pd.DataFrame({"q": cells})
    indicators = pd.DataFrame({"a": [("a" in (c or "")) for c in cells],
                               "b": [int("b" in (c or "")) for c in cells],
                               "c": ["x" if "c" in (c or "") else "" for c in cells]})
    name, counts, responses = question_counts(delimited, "q", multi=True)
    assert counts == {"a": 10, "b": 8, "c": 2} and responses == 12
    _, counts2, responses2 = question_counts(indicators, ["a", "b", "c"])
    assert counts2 == counts and responses2 == responses
    t = response_table(delimited, "q", multi=True)
    # R ≤ min(N, S + m(T−1)) = 22 → 20; R ≥ max(10, 10) → non-response in [0, 10]
    assert (t.nonresponse.low, t.nonresponse.high) == (0, 10)
    assert audit(t).passes


def test_multi_select_exact_nonresponse_is_unsafe():
    # 18 respondents, 14 chose a: at least 4 chose b, and b < 5, so b = 4 exactly
    t = publish("m", {"a": 14, "b": 4}, 20, 18, multi=True)
    assert audit(t).passes
    naive = audit(naive_publication(t, 18))
    assert not naive.passes and naive.options[0].revealed and naive.options[0].low == 4
    narrowed = audit(naive_publication(publish("m", {"a": 14, "b": 2}, 20, 16, multi=True),
                                       16))
    assert narrowed.options[0].narrowed_by_nonresponse and narrowed.options[0].low == 2


def test_cli_tables_json(tmp_path):
    data = tmp_path / "survey.csv"
    answers({"Cat": 42, "Dog": 33, "Elephant": 2, "Penguin": 4, "Dolphin": 9}, 100) \
        .rename(columns={"answer": "pet"}).to_csv(data, index=False)
    out = run("tables", data, "--question", "pet", "--json")
    assert out.returncode == 0, out.stderr
    q = json.loads(out.stdout)["questions"][0]
    assert q["question"] == "pet" and q["shown"] is True
    assert q["nonresponse"] == {"low": 8, "high": 16, "display": "between 8 and 16"}
    opts = {o["option"]: (o["count"], o["display"]) for o in q["options"]}
    assert opts["Elephant"] == (None, "less than 5") and opts["Cat"] == (42, "42")
    bad = run("tables", data, "--question", "nope")
    assert bad.returncode == 2 and "unknown question column 'nope'" in bad.stderr


def test_the_published_frame_is_what_the_reader_sees():
    from sdc_core.tables.responses import pet_survey

    table = response_table(pet_survey(), "favourite animal", 100, 10, 5)
    frame = table.frame()
    assert list(frame["option"]) == [o.option for o in table.options] + ["(no response)"]
    shown = dict(zip(frame["option"], frame["responses"]))
    assert shown["Cat"] == "42" and shown["Elephant"] == "less than 5"
    # N − Σ shown = 100 − 84 = 16, minus at most 2 hidden options × 4 = 8
    assert shown["(no response)"] == "between 8 and 16"
