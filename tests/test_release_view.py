"""The release type as the pages show it (ui/logic/release_view.py, no Streamlit): the status
the Protect page says from the figures it has is the status the decision pack gives the same
release; the keys read at the type's k are the core's; the pack's file leaves out the columns
not released; every text is Markdown-escaped."""

from __future__ import annotations

import io
import json
import zipfile

import pandas as pd
import pytest

from sdc_core.assess import RiskOptions, Setting
from sdc_core.data.io import EXAMPLE_PATH, read_table
from sdc_core.pack import Decision, PackRequest, build_pack, released_recipe
from sdc_core.recipe import parse_recipe
from sdc_core.release_types import RELEASE_TYPES, Status, Target, with_targets
from sdc_core.risk.profile import risk_profile
from ui.logic.release_view import (
    DEFAULT_TYPE,
    NO_SENSITIVE,
    RECORD_BY_RECORD,
    TYPE_KEYS,
    keys_at,
    missing_figures,
    pack_zip,
    release_status,
    status_line,
    target_label,
    type_caption,
    workbench_status,
)
from ui.logic.workbench import evaluate, recipe_json

QI = ["age", "gender", "race"]
NUMERIC = ["age", "wtkg"]
STEPS = [{"method": "band", "column": "age", "width": 10}]


@pytest.fixture(scope="module")
def actg() -> pd.DataFrame:
    return read_table(EXAMPLE_PATH)


def test_the_types_and_the_default():
    assert TYPE_KEYS == ("puf", "suf", "teaching", "secure") and DEFAULT_TYPE == "suf"


@pytest.mark.parametrize("key", ["puf", "suf"])  # k 5 (the page's) and k 3 (read again)
def test_the_pages_status_is_the_packs(actg, key):
    kind = with_targets(RELEASE_TYPES[key], [Target("IL1_release", 0.5)])
    text = recipe_json(STEPS, 42)
    wb = evaluate(actg, text, QI, None, 5, "wildcard", 1.0, NUMERIC, [], sensitive=["treat"])
    shown = workbench_status(kind, wb, ["pidnum"], sensitive=True)
    setting = Setting(tuple(QI), tuple(NUMERIC), ("treat",), (), None, None,
                      RiskOptions(kind.k), not_released=("pidnum",))
    made = build_pack(PackRequest(actg, parse_recipe(json.loads(text)), kind, setting))
    assert shown == made.statuses["release"]


def test_keys_at_another_k_are_the_cores(actg):
    profile = risk_profile(actg, QI, k=5)
    for k in (2, 3, 5, 7):
        at = keys_at(profile, k)
        core = risk_profile(actg, QI, k=k).summary()
        for figure in ("percent_below_k", "percent_k_le_threshold", "k_threshold",
                       "percent_unique", "global_risk_percent"):
            assert at[figure] == pytest.approx(core[figure]), (k, figure)


def test_missing_figures_as_the_pack_gives_them():
    assert missing_figures(None, True) == {}
    assert missing_figures(None, False) == {"inference_gain": NO_SENSITIVE}
    assert missing_figures("synthetic", True) == dict.fromkeys(RECORD_BY_RECORD, "synthetic")


def test_release_status_reads_the_figures_and_says_what_is_missing():
    kind = RELEASE_TYPES["puf"]
    keys = {"percent_below_k": 0.0}
    got = release_status(kind, {"linkage_risk_percent": 0.5}, keys,
                         {"inference_gain": NO_SENSITIVE})
    assert got.status == "review"
    assert any(NO_SENSITIVE in r for r in got.reasons)
    got = release_status(kind, {"linkage_risk_percent": 3.0,
                                "inference": {"inference_gain": 0.01}}, keys)
    assert got.status == "fail" and any("MISSED (3)" in r for r in got.reasons)


def test_the_status_line_names_what_is_not_met_and_escapes():
    kind = RELEASE_TYPES["suf"]
    met = Status("pass", ("records in classes < 3 ≤ 1 %: met (0)",))
    assert status_line(kind, met) == (
        "As a scientific\\-use file, this release meets every target \\(pass\\)\\.")
    missed = Status("fail", ("a: met (1)", "b <b>x</b> [l](http://x): MISSED (2)"))
    line = status_line(kind, missed)
    assert "a: met" not in line.replace("\\", "")
    assert "<b>" not in line and "](" not in line and "\\<b\\>" in line


def test_the_caption_and_the_labels():
    kind = RELEASE_TYPES["puf"]
    caption = type_caption(kind)
    assert "Intruder" in caption and "knows that the person is in the file" in caption
    assert "linkage attack risk ≤ 1 %" in caption
    assert "<" not in caption.replace("\\<", "")
    labels = [target_label(t, kind.k) for t in kind.targets]
    assert labels == ["records in classes < 5 (%): at most",
                      "linkage attack risk (%): at most",
                      "attribute-inference gain (points): at most"]


def test_the_released_recipe_drops_the_columns_not_released():
    recipe = parse_recipe({"version": 1, "seed": 1, "steps": STEPS})
    assert released_recipe(recipe, [], ["age"]) is recipe
    assert released_recipe(recipe, ["gone"], ["age"]) is recipe
    dropped = released_recipe(recipe, ["pidnum", "gone"], ["age", "pidnum"])
    assert dropped.steps == [*STEPS, {"method": "drop", "columns": ["pidnum"]}]
    assert recipe.steps == STEPS  # not changed in place


def test_pack_zip_holds_the_pack_without_the_columns_not_released(actg):
    kind = RELEASE_TYPES["suf"]
    setting = Setting(tuple(QI), tuple(NUMERIC), ("treat",), (), None, None,
                      RiskOptions(kind.k), not_released=("pidnum",))
    data = pack_zip(actg, recipe_json(STEPS, 42), kind, setting, "actg",
                    Decision(steward="S"), tables=(("gender", "race"),))
    z = zipfile.ZipFile(io.BytesIO(data))
    names = {n.removeprefix("release-pack/") for n in z.namelist()}
    assert {"released.csv", "internal.html", "external.html", "manifest.json",
            "manifest-internal.json", "table-1.csv"} <= names
    released = pd.read_csv(io.BytesIO(z.read("release-pack/released.csv")))
    assert "pidnum" not in released.columns and len(released) == len(actg)
    manifest = json.loads(z.read("release-pack/manifest.json"))
    assert manifest["release_type"]["type"] == "suf" and manifest["decision"]["steward"] == "S"
    assert manifest["title"] == "actg"
