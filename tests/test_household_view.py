"""The household figures as the pages and the report write them (``ui.logic.households``, the
report's "Household risk" section): the core's figures in the tiles and notes, the reason an
assessment has none, names escaped; the pages themselves are in tests/test_app_households.py."""

from __future__ import annotations

import pandas as pd

from sdc_core.assess import Setting, Unavailable, assess
from sdc_core.recipe import parse_recipe
from sdc_core.risk.household import household_risk, table_households
from tests.conftest import plain
from tests.hostile_text import IMAGE
from tests.household_reference import uniques_by_loops
from ui.logic.households import (
    PROTECT_TILES,
    RISK_TILES,
    HouseholdFigures,
    household_attack_note,
    household_note,
    household_tiles,
)
from ui.logic.report import HOUSEHOLD_KEYS, build_report, household_section, household_table

SMALL = pd.DataFrame({"hh": [1, 1, 2, 2, 3, 4, 4], "sex": list("fmfmffm"),
                      "age": [40, 40, 40, 40, 12, 40, 12]})
#: household 4's second member aged like the others
AGED = [40, 40, 40, 40, 12, 40, 40]


def test_household_figures_are_the_cores_and_the_tiles_write_them():
    released = SMALL.assign(age=AGED)
    got = table_households(SMALL, released, ["sex", "age"], "hh")
    assert isinstance(got, HouseholdFigures)
    hr = household_risk(released, ["sex", "age"], "hh")
    assert got.risk.expected_reidentifications == hr.expected_reidentifications
    # released compositions: {f40, m40} ×3, {f12}: one unique, household 3
    assert got.uniques == uniques_by_loops(released, ["sex", "age"], "hh") == 1
    # the attacker knows {f40, m40} ×2, {f12}, {f40, m12}: household 3 alone matches itself
    # once; households 1 and 2 match three released households, household 4 none
    assert (got.attack.reidentified, got.attack.people_reidentified) == (1, 1)
    before = table_households(SMALL, SMALL, ["sex", "age"], "hh")
    assert before.uniques == uniques_by_loops(SMALL, ["sex", "age"], "hh") == 2
    tiles = {t.key: t for t in household_tiles(got, before, PROTECT_TILES)}
    assert list(tiles) == list(PROTECT_TILES)
    assert tiles["household_linkage_reidentified"].value == "1 (25.00 %)"
    assert tiles["household_linkage_reidentified"].delta == "-1 (was 2)"
    assert tiles["household_risk_pct"].value == f"{hr.risk_percent:.2f} %"
    assert tiles["household_risk_pct"].name == "Household risk"
    plain_tiles = household_tiles(before)
    assert [t.key for t in plain_tiles] == list(RISK_TILES)
    assert all(t.delta is None for t in plain_tiles)
    assert plain_tiles[3].value == "1.75"  # 7 records in 4 households


def test_an_assessment_says_why_it_has_no_household_figures():
    nothing = parse_recipe({"seed": 1, "steps": []})
    unasked = assess(SMALL, None, Setting(("sex",)), nothing).households
    assert unasked == Unavailable("no household id", asked=False)
    said = assess(SMALL, None, Setting(("sex", "hh"), household="hh"), nothing).households
    assert isinstance(said, Unavailable) and said.asked
    assert "also a quasi-identifier" in said.reason
    blank = SMALL.astype({"hh": object}).assign(hh=[1, 1, None, 2, 3, 4, 4])
    said = assess(blank, None, Setting(("sex",), household="hh"), nothing).households
    assert isinstance(said, Unavailable) and "blank" in said.reason


def test_the_section_escapes_names():
    hostile = "<img src=x onerror=alert(1)>"
    df = SMALL.rename(columns={"hh": hostile, "sex": "<b>sex</b>"})
    before = table_households(df, df, ["<b>sex</b>", "age"], hostile)
    after = table_households(df, df.assign(age=AGED), ["<b>sex</b>", "age"], hostile)
    section = household_section(before, after)
    assert "<img" not in section and "&lt;img src=x onerror=alert(1)&gt;" in section
    table = household_table(before, after)
    assert len(table) == len(HOUSEHOLD_KEYS)
    assert table.set_index("measure").loc["households re-identified", "after"] == 1
    html = build_report("t", "f" * 64, len(df), df.shape[1], {}, "{}", df.head(1), df.head(1),
                        [], households=(before, after))
    assert section in html and "<img" not in html
    assert "Not computed for the release: the &lt;b&gt;" in household_section(
        before, "the <b>reason</b>")


def test_the_notes_say_the_figures_and_escape_the_name():
    df = SMALL.rename(columns={"hh": IMAGE})
    before = assess(df, df, Setting(("sex", "age"), household=IMAGE)).households
    assert before.summary() == table_households(df, df, ["sex", "age"], IMAGE).summary()
    assert before.uniques == before.attack.reidentified == 2  # households 3 and 4
    note = household_note(before)
    assert IMAGE not in note and f"records sharing {IMAGE}" in plain(note)
    assert "4 households of 1.75 records on average, 1 of one person" in note
    after = table_households(df, df.assign(age=AGED), ["sex", "age"], IMAGE)
    said = household_attack_note(after, before)
    assert "before protection 2 households, 3 people" in said
    # p_h: 1/3 for households 1 and 2 (three released {f40, m40}), 1 for household 3
    assert "Expected: 1.67 households, 2.33 people." in said
