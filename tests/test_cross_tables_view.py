"""How the Tables page and the report show a published cross table (ui/logic/cross_tables.py):
the pivot against counts made by plain loops, the utility and protection rows against the
release's figures and against loops over its cells, the texts of a passing and a failing
audit."""

from __future__ import annotations

import dataclasses
import random

import pandas as pd
import pytest

from sdc_core.names import count_text, label
from sdc_core.tables.cell_rules import Rule
from sdc_core.tables.crosstab import crosstab
from sdc_core.tables.suppression_audit import audit
from sdc_core.tables.table_release import release_table
from ui.logic.cross_tables import (
    CLIP_NEEDED,
    HIDDEN,
    CrossSettings,
    audit_text,
    cell_accuracy,
    ckm_text,
    comparison_table,
    dp_text,
    narrowest_interval,
    page_rule,
    protection_rows,
    published_frame,
    settings_from,
    settings_text,
    shown_table,
    status_counts,
    table_size,
    table_title,
    utility_rows,
)


@pytest.fixture(scope="module")
def survey() -> pd.DataFrame:
    """Three columns with some small cells (seeded)."""
    rnd = random.Random(7)
    rows = []
    for _ in range(300):
        a = rnd.choices(["n", "s", "e", "w"], weights=[10, 10, 3, 1])[0]
        b = rnd.choices(["lo", "mid", "hi"], weights=[6, 3, 1])[0]
        c = rnd.choice(["f", "m"])
        rows.append({"region": a, "band": b, "sex": c, "income": rnd.randint(0, 900)})
    return pd.DataFrame(rows)


def loop_counts(df: pd.DataFrame, cols: list[str]) -> dict[tuple[str, ...], int]:
    """Every cell and margin's count by plain loops (a margin's label "Total")."""
    out: dict[tuple[str, ...], int] = {}
    for _, row in df.iterrows():
        labels = [str(row[c]) for c in cols]
        for mask in range(2 ** len(cols)):
            key = tuple("Total" if mask >> i & 1 else labels[i] for i in range(len(cols)))
            out[key] = out.get(key, 0) + 1
    return out


def test_a_two_way_pivot_holds_each_count_and_hides_what_is_hidden(survey):
    made = release_table(survey, ["region", "band"], rule=Rule("threshold", (8,)))
    shown = shown_table(made)
    counts = loop_counts(survey, ["region", "band"])
    regions = sorted({str(v) for v in survey["region"]})
    bands = sorted({str(v) for v in survey["band"]})
    assert list(shown.index) == regions + ["Total"]
    assert list(shown.columns) == bands + ["Total"]
    assert shown.index.name == "region" and shown.columns.name == "band"
    # the hidden cells and margins: those the release has with a missing count
    frame = made.frame
    hidden = {(str(a), str(b)) for a, b, v in
              zip(frame["region"], frame["band"], frame["count"]) if pd.isna(v)}
    assert hidden  # the rule hides something here: the check below can fail
    for r in shown.index:
        for c in shown.columns:
            want = HIDDEN if (r, c) in hidden else count_text(counts.get((r, c), 0))
            assert shown.loc[r, c] == want, (r, c)


def test_one_and_three_way_tables_are_tidy_with_their_status(survey):
    for cols in (["region"], ["region", "band", "sex"]):
        made = release_table(survey, cols, rule=Rule("threshold", (5,)))
        shown = shown_table(made)
        assert list(shown.columns) == cols + ["count", "status"]
        counts = loop_counts(survey, cols)
        assert len(shown) == len(frame := made.frame)
        for i, row in shown.iterrows():
            key = tuple(row[c] for c in cols)
            assert row["status"] == frame["status"].iloc[i]
            if row["status"] in ("primary", "secondary"):
                assert row["count"] == HIDDEN
            else:
                assert row["count"] == count_text(counts.get(key, 0))
    tidy = shown_table(release_table(survey, ["region", "band"]), tidy=True)
    assert list(tidy.columns) == ["region", "band", "count", "status"]


def test_status_counts_add_up(survey):
    made = release_table(survey, ["region", "band"], rule=Rule("threshold", (8,)))
    text = status_counts(made)
    parts = dict(reversed(p.split(" ", 1)) for p in text.split(", "))
    assert sum(int(v) for v in parts.values()) == len(made.frame)
    assert int(parts["primary"]) == int((made.frame["status"] == "primary").sum()) > 0


def test_utility_rows_are_the_release_figures_and_absD_by_loop(survey):
    made = release_table(survey, ["region", "band"], method="dp", epsilon=0.5, seed=3)
    rows = dict(zip(*utility_rows(made).to_dict("list").values()))
    assert list(rows) == [label(k) for k in ("absD", "relabsD", "hellinger", "false_zeros",
                                             "false_nonzeros", "blank")]
    counts = loop_counts(survey, ["region", "band"])
    cells = made.frame[~made.frame["margin"]]
    absd = sum(abs(float(v) - counts.get((str(a), str(b)), 0))
               for a, b, v in zip(cells["region"], cells["band"], cells["count"]))
    assert absd > 0  # the noise changed something
    assert rows[label("absD")] == count_text(absd)
    assert rows[label("blank")] == "0"


def test_protection_rows_of_each_method(survey):
    sup = release_table(survey, ["region", "band"], rule=Rule("threshold", (8,)))
    widths = [float(h) - float(lo) for lo, h, v in
              zip(sup.frame["lo"], sup.frame["hi"], sup.frame["count"]) if pd.isna(v)]
    assert narrowest_interval(sup) == min(widths)
    rows = dict(protection_rows(sup, 10).values.tolist())
    assert rows["audit"] == "passes" and rows["rule"] == "threshold:8"
    assert rows[label("narrowest_interval")] == count_text(min(widths))

    dp = release_table(survey, ["region", "band"], method="dp", epsilon=2.0, seed=1)
    accuracy = max(a for a, m in zip(dp.frame["accuracy"], dp.frame["margin"]) if not m)
    assert cell_accuracy(dp) == accuracy
    rows = dict(protection_rows(dp, 10).values.tolist())
    assert rows["ε"] == "2 per record" and rows[label("dp_accuracy")] == f"±{accuracy:.4g}"
    assert rows["unit"] == "records" and "records per person" not in rows
    assert cell_accuracy(sup) is None and narrowest_interval(dp) is None

    ckm = release_table(survey, ["region", "band"], method="ckm", seed=1, threshold=12)
    rows = dict(protection_rows(ckm, 12).values.tolist())
    assert rows[label("perturbed")] == f"{ckm.utility.perturbed:.1%}"
    assert rows["threshold"] == "counts below 12 blank"


def test_a_passing_and_a_failing_audit_say_so():
    df = pd.DataFrame({"a": ["x"] * 3 + ["y"] * 9})
    made = release_table(df, ["a"], rule=Rule("threshold", (4,)))
    passes, lines = audit_text(made)
    assert passes and "at least 12 wide" in lines[0]  # x, y both in [0, 12]: the total 12
    table = crosstab(df, ["a"])
    failing = dataclasses.replace(made, audit=audit(table, [True, False, False]))
    passes, lines = audit_text(failing)
    assert not passes and lines == ["x: the published table pins it to 3"]
    assert dict(protection_rows(failing, 10).values.tolist())["audit"] == \
        "fails: 1 cells exposed"
    nothing = release_table(df, ["a"], rule=Rule("threshold", (1,)))
    assert audit_text(nothing) == (True, ["Audit passed: no cell is hidden."])


def test_the_published_frame_is_the_command_lines(survey):
    made = release_table(survey, ["region", "band"], "income", rule=Rule("p", (10,)))
    out = published_frame(made)
    assert list(out.columns) == ["region", "band", "sum", "status", "unit"]
    assert len(out) == len(loop_counts(survey, ["region", "band"]))
    assert set(out["unit"]) == {"records"}


def test_a_table_of_sums_offers_dp_once_its_clip_is_given(survey):
    settings = CrossSettings(("region", "band"), "income", Rule("p", (10,)))
    assert settings.methods() == ("suppress", "ckm")
    assert CrossSettings(("region", "band"), "income", clip=5e4).methods() == \
        ("suppress", "dp", "ckm")
    made = {m: release_table(survey, ["region", "band"], "income", method=m,
                             rule=Rule("p", (10,))) for m in ("suppress", "ckm")}
    table = comparison_table({"suppress": made["suppress"], "dp": CLIP_NEEDED,
                              "ckm": made["ckm"]}, 10)
    assert list(table.columns) == ["measure", "Suppression", "Differential privacy",
                                   "Cell key method"]
    assert set(table["Differential privacy"]) == {"not offered"}
    assert table.loc[table["measure"] == "audit", "Suppression"].item() == "passes"
    assert "m·x₁·z" in table.loc[table["measure"] == "noise", "Cell key method"].item()
    assert table_title(settings) == "sum of income by region × band"
    assert "clip U not given" in settings_text(settings)


def test_the_comparison_has_every_methods_figures(survey):
    releases = {m: release_table(survey, ["region", "band"], method=m, rule=Rule("threshold", (8,)),
                                 seed=2) for m in ("suppress", "dp", "ckm")}
    table = comparison_table(releases, 10)
    absd = table.loc[table["measure"] == label("absD")].iloc[0]
    for m, title in (("suppress", "Suppression"), ("dp", "Differential privacy"),
                     ("ckm", "Cell key method")):
        assert absd[title] == count_text(releases[m].utility.absD)  # whole counts
    assert table.loc[table["measure"] == "ε", "Suppression"].item() == "—"


@pytest.mark.parametrize("kind, kwargs, want, text", [
    ("threshold", {"threshold": 7}, ("threshold", (7.0,)), "threshold:7"),
    ("dominance", {"n": 3, "k": 80.5}, ("dominance", (3.0, 80.5)), "dominance:3,80.5"),
    ("p", {"p": 12.5}, ("p", (12.5,)), "p:12.5"),
    ("p", {"p": 12.34567891}, ("p", (12.3457,)), "p:12.3457"),
    ("dominance", {"n": 2, "k": 85.0}, ("dominance", (2.0, 85.0)), "dominance:2,85")])
def test_the_pages_rule_is_the_rule_its_fields_say(kind, kwargs, want, text):
    """Issue 52: the page builds a Rule (no text the core parses back); its text is the one the
    page gave before, numbers past six significant digits rounded as that text rounded them."""
    rule = page_rule(kind, **kwargs)
    assert (rule.name, rule.parameters) == want and rule.text == text


def test_settings_survive_the_session_state():
    s = CrossSettings(("a", "b", "c"), None, Rule("threshold", (3,)), 0.5, 9, 15)
    assert settings_from({**s.to_dict(), "dataset_id": "x"}) == s
    with_id = CrossSettings(("a",), None, Rule("threshold", (3,)), 0.5, 9, 15, "hid", 4)
    assert settings_from({**with_id.to_dict(), "dataset_id": "x"}) == with_id
    assert settings_text(with_id) == ("suppression's rule threshold:3 on distinct hid; DP ε 0.5 "
                                      "per person, seed 9, at most 4 records per person; cell "
                                      "key threshold 15, seed 9")
    assert "on records; DP ε 0.5 per record" in settings_text(s)


def test_with_a_household_id_every_method_says_whom_it_protects(survey):
    """Persons of three records each: the protection rows, the texts and the download name
    the household column, and DP says ε is per person with its bound and the records
    dropped, counted here by a loop over persons."""
    df = survey.assign(pid=[i // 3 for i in range(len(survey))])
    sup = release_table(df, ["region", "band"], rule=Rule("threshold", (8,)), household="pid")
    rows = dict(protection_rows(sup, 10).values.tolist())
    assert rows["unit"] == "distinct pid" and set(published_frame(sup)["unit"]) == {
        "distinct pid"}
    assert "counted distinct pid" in audit_text(sup)[1][0]
    dp = release_table(df, ["region", "band"], method="dp", household="pid",
                       max_contributions=2, seed=1)
    dropped = sum(max(0, n - 2) for n in df.groupby("pid").size())
    rows = dict(protection_rows(dp, 10).values.tolist())
    assert rows["ε"] == "1 per person" and rows["records per person"] == "at most 2"
    assert rows["records dropped"] == count_text(dropped) and dropped == 100
    assert "ε is per person (distinct pid)" in dp_text(dp) and "100 dropped" in dp_text(dp)
    plain_dp = release_table(df, ["region", "band"], method="dp", seed=1)
    assert "ε is per record: a person with k records" in dp_text(plain_dp)
    ckm = release_table(df, ["region", "band"], method="ckm", household="pid")
    assert "fewer than 10 persons" in dict(protection_rows(ckm, 10).values.tolist())[
        "threshold"]
    assert "the person's key" in ckm_text(ckm, 10)


def test_the_table_size_is_the_number_of_cells_and_margins(survey):
    for cols in (["region"], ["region", "band"], ["region", "band", "sex"]):
        assert table_size(survey, cols) == len(release_table(survey, cols).frame)


# -- tables published together (the Tables page's "Add a table") -------------------------------


def test_the_linked_set_is_the_table_then_each_added_table_with_columns():
    from ui.logic.cross_tables import linked_set, linked_union

    tables = linked_set(["sex", "region"], [[], ["region", "age"], ["age"]])
    assert tables == (("sex", "region"), ("region", "age"), ("age",))
    assert linked_set(("sex",), [[], []]) == (("sex",),)  # nothing added: one table
    assert linked_union(tables) == ["sex", "region", "age"]


def test_each_linked_table_shows_its_own_cells_and_the_line_says_the_audit():
    from sdc_core.tables.linked import release_linked
    from ui.logic.cross_tables import HIDDEN, linked_part, linked_text

    df = pd.DataFrame({"r": list("aaaaabbbbbbbbb") + [None], "s": list("mfmfmfmfmfmfmmf"),
                       "g": list("xxyyyxxxyyyyyxy")})
    made = release_linked(df, [["r", "s"], ["r", "g"]], rule=Rule("threshold", (3,)))
    frame = made.frame()
    for table in made.tables:
        part = linked_part(made, frame, table)
        rows = frame[frame["table"] == ",".join(table)]
        assert list(part.columns) == [*table, "count", "status"] and len(part) == len(rows)
        for shown, value, status in zip(part["count"], rows["count"], rows["status"]):
            assert shown == (HIDDEN if status != "published" else count_text(float(value)))
    passes, line = linked_text(made)
    assert passes == made.passes()
    assert line.startswith("These 2 tables are protected together")
    assert f"{made.hidden_cells} cell" in line and "rule threshold:3" in line
    assert ("joint audit passed" if passes else "joint audit FAILED") in line
    assert "1 record with a blank" in line  # the row with a blank region


# -- a column's code list (docs/tables.md, "On the Tables page") --------------------------------


def test_a_code_list_is_keyed_by_its_text_or_digest_and_offers_suppression_alone():
    import hashlib

    from sdc_core.errors import SdcInputError
    from sdc_core.tables.hierarchy import Prefixes
    from ui.logic.cross_tables import (
        HIERARCHY_REFUSED,
        MAX_CODE_LIST_BYTES,
        file_list,
        prefix_list,
        table_field,
    )
    from ui.logic.workspace import fits

    listed, spec = prefix_list("nace", " 2,4 ")
    assert listed == ("nace", "prefix", "2,4", "") and spec == Prefixes((2, 4))
    assert hash(listed) == hash(prefix_list("nace", "2,4")[0])  # a cache key
    for bad in ("abc", "2,2", "0", "-1", "2,4,", "1" * 101):
        with pytest.raises(SdcInputError):
            prefix_list("nace", bad)
    raw = b"03,\n0301,03\n"
    assert file_list("nace", "h.csv", raw).digest == hashlib.sha256(raw).hexdigest()
    with pytest.raises(SdcInputError, match="at most"):
        file_list("nace", "h.csv", b" " * (MAX_CODE_LIST_BYTES + 1))
    settings = CrossSettings(("nace", "size"), code_lists=(listed,))
    assert settings.methods() == ("suppress",) and settings.refused("dp") == HIERARCHY_REFUSED
    assert CrossSettings(("a",), "x").refused("dp") == CLIP_NEEDED
    kind, limits = table_field("w_tables_h_kind_nace") or ("", None)
    assert fits(kind, limits, "file") and not fits(kind, limits, "eval")
    kind, limits = table_field("w_tables_h_prefix_nace") or ("", None)
    assert fits(kind, limits, "2,4") and not fits(kind, limits, "1" * 101)
