"""The release decision pack (docs/releases.md): release types and their status, the lineage
check, and ``pack`` on outside data — hashes, figures equal to ``compare --json``, no seed in
what the data users get, documents that open offline, and hostile input."""

from __future__ import annotations

import hashlib
import io
import json
import re
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from sdc_core.errors import SdcInputError
from sdc_core.lineage import check_lineage, column_lineage
from sdc_core.pack import (
    EXTERNAL_HTML,
    INTERNAL_HTML,
    INTERNAL_MANIFEST,
    MANIFEST,
    MAX_FIELD,
    RELEASED,
    load_decision,
    parse_decision,
)
from sdc_core.pack_figure import Point, _figure, tradeoff_files
from sdc_core.recipe import apply_recipe, load_recipe
from sdc_core.release_types import (
    RELEASE_TYPES,
    Target,
    judge,
    parse_target,
    release_type,
    with_targets,
)
from tests.cli_run import run
from tests.conftest import SHARED_DATA

ACTG = SHARED_DATA / "actg175.csv"
TESTDATA = SHARED_DATA / "testdata.csv"
#: Seeds no figure of these tables can equal by chance, so finding one means it leaked.
SUF_SEED, PUF_SEED = 918273645, 564738291
QI = "age,gender,race"
SUF = {"version": 1, "seed": SUF_SEED, "steps": [
    {"method": "band", "column": "age", "width": 5},
    {"method": "pram", "column": "race", "p": 0.1}]}
PUF = {"version": 1, "seed": PUF_SEED, "steps": [
    {"method": "band", "column": "age", "width": 10},
    {"method": "band", "column": "wtkg", "width": 10},
    {"method": "drop", "columns": ["pidnum"]}]}


def _write(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _pack(tmp: Path, name: str, recipe: dict[str, Any], *args: str,
          data: Path = ACTG) -> Path:
    out = tmp / name
    r = run("pack", data, "--recipe", _write(tmp / f"{name}.json", recipe), "-o", out, *args)
    assert r.returncode == 0, r.stderr
    return out


def _json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def _keys(data: object) -> set[str]:
    """Every key of a JSON value, at any depth."""
    if isinstance(data, dict):
        found = set(map(str, data))
        for v in data.values():
            found |= _keys(v)
        return found
    found = set()
    for v in data if isinstance(data, list) else []:
        found |= _keys(v)
    return found


@pytest.fixture(scope="module")
def packs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A pack of each release type on outside data: a scientific-use file of ACTG 175 with a
    table, a public-use and a teaching file made from it (lineage), and a secure-access file
    of sdcMicro's household test data with its household id."""
    tmp = tmp_path_factory.mktemp("packs")
    suf = _pack(tmp, "suf", SUF, "--type", "suf", "--qi", QI, "--sensitive", "drugs",
                "--table", "race,gender", "--table", "karnof,race,gender")
    puf = _pack(tmp, "puf", PUF, "--type", "puf", "--qi", QI, "--sensitive", "drugs",
                "--parent", str(suf), "--zip")
    teaching = _pack(tmp, "teaching", {**PUF, "steps": [
        {"method": "recode", "column": "race", "min_count": 700},
        *PUF["steps"]]}, "--type", "teaching", "--qi", QI, "--parent", str(suf))
    secure = _pack(tmp, "secure", {"version": 1, "seed": SUF_SEED, "steps": [
        {"method": "pram", "column": "roof", "p": 0.05}]}, "--type", "secure",
        "--qi", "urbrur,roof,walls,water,electcon,relat,sex", "--household", "ori_hid",
        "--weight", "sampling_weight", "--question", "relat", "--table", "roof,urbrur",
        data=TESTDATA)
    return {"suf": suf, "puf": puf, "teaching": teaching, "secure": secure}


# -- release types ----------------------------------------------------------------------------

def test_each_release_type_has_a_scenario_targets_and_required_figures() -> None:
    assert set(RELEASE_TYPES) == {"puf", "suf", "teaching", "secure"}
    for kind in RELEASE_TYPES.values():
        assert kind.targets and kind.required and kind.scenario.intruder
        assert {t.figure for t in kind.targets} <= set(kind.required)
    # the practice guide's k-anonymity thresholds: 3 for a licensed file, 5 for a public one
    assert (release_type("suf").k, release_type("puf").k) == (3, 5)
    # a public file and a teaching file are made from the licensed one (they nest)
    assert release_type("puf").made_from == release_type("teaching").made_from == "suf"


def test_judge_fails_a_missed_target_reviews_an_unread_one_and_passes_the_rest() -> None:
    puf = release_type("puf")
    good = {"percent_below_k": 0.0, "linkage_risk_percent": 0.5, "inference_gain": 1.0}
    assert judge(puf, good).status == "pass"
    assert judge(puf, {**good, "linkage_risk_percent": 1.5}).status == "fail"
    unread = judge(puf, {k: v for k, v in good.items() if k != "inference_gain"},
                   {"inference_gain": "no sensitive column was named"})
    assert unread.status == "review"
    assert any("no sensitive column" in r for r in unread.reasons)
    # a missed target outranks a figure that cannot be read
    assert judge(puf, {"percent_below_k": 3.0}).status == "fail"
    # a secure-access file goes to a person whatever its figures
    secure = release_type("secure")
    assert judge(secure, {"linkage_risk_percent": 0.0}).status == "review"
    # a figure where higher is better is met at or above its limit
    similar = with_targets(release_type("suf"), [Target("eigenvalue_similarity_percent", 90)])
    figures = {"percent_below_k": 0, "linkage_risk_percent": 0}
    assert judge(similar, {**figures, "eigenvalue_similarity_percent": 95}).status == "pass"
    assert judge(similar, {**figures, "eigenvalue_similarity_percent": 85}).status == "fail"


def test_a_steward_changes_a_target_and_the_type_keeps_the_others() -> None:
    puf = with_targets(release_type("puf"), [parse_target("linkage_risk_percent<=2.5")])
    limits = {t.figure: t.limit for t in puf.targets}
    assert limits["linkage_risk_percent"] == 2.5
    assert limits["percent_below_k"] == 0
    assert puf.to_json()["targets"][1]["text"] == "linkage attack risk ≤ 2.5 %"


@pytest.mark.parametrize("text", [
    "__import__('os').system('id')<=1", "linkage_risk_percent<=nan", "linkage_risk_percent<=-1",
    "linkage_risk_percent<=inf", "IL1_release", "<b>x</b><=1", "x" * 100_000 + "<=1",
    "linkage_risk_percent<=1e999", "unknown_figure<=1"])
def test_a_hostile_target_is_refused_in_one_line(text: str) -> None:
    with pytest.raises(SdcInputError) as err:
        parse_target(text)
    assert "\n" not in str(err.value) and len(str(err.value)) < 400


@pytest.mark.parametrize("limit", [float("nan"), -1.0, True, "1", None, float("inf")])
def test_a_target_s_limit_is_a_finite_number(limit: object) -> None:
    with pytest.raises(SdcInputError):
        Target("linkage_risk_percent", limit)  # type: ignore[arg-type]


# -- lineage ----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def parent(actg: pd.DataFrame) -> pd.DataFrame:
    return apply_recipe(load_recipe(json.dumps(SUF)), actg).data


def test_lineage_accepts_a_public_file_made_by_banding_the_licensed_file(
        parent: pd.DataFrame) -> None:
    child_recipe = load_recipe(json.dumps(PUF))
    child = apply_recipe(child_recipe, parent).data
    found = check_lineage(parent, child, child_recipe)
    assert found.accepted, found.refused
    relation = {c.column: c.relation for c in found.columns}
    assert relation["age"] == relation["wtkg"] == "coarsened"
    assert relation["pidnum"] == "dropped"
    assert relation["race"] == relation["drugs"] == "unchanged"


def test_lineage_refuses_a_second_pram_of_the_original(actg: pd.DataFrame,
                                                       parent: pd.DataFrame) -> None:
    again = load_recipe(json.dumps({**SUF, "seed": 1}))
    child = apply_recipe(again, actg).data
    # by the values alone (a file of unknown recipe) …
    by_values = check_lineage(parent, child)
    assert not by_values.accepted
    assert any("race" in r and "not a function" in r for r in by_values.refused)
    # … and by its recipe, which draws at random
    assert any("draws at random" in r for r in check_lineage(parent, child, again).refused)


def test_lineage_reads_suppression_as_coarsening_and_refuses_other_records() -> None:
    parent = pd.DataFrame({"a": ["x", "y", "y", "z"], "b": [1, 2, 3, 4]})
    blanked = parent.assign(a=["x", None, "y", "z"])
    assert check_lineage(parent, blanked).accepted
    assert column_lineage(parent["a"], blanked["a"]).blanked == 1
    merged = parent.assign(a=["x", "yz", "yz", "yz"])
    assert check_lineage(parent, merged).accepted
    relabelled = parent.assign(b=[2, 1, 3, 4])  # one value for each parent value: a function
    assert check_lineage(parent, relabelled).accepted
    split = parent.assign(a=["x", "y", "q", "z"])  # y released as y and as q
    assert [c.relation for c in check_lineage(parent, split).columns][0] == "not a function"
    assert not check_lineage(parent, parent.iloc[:3]).accepted
    assert not check_lineage(parent, parent.assign(c=1)).accepted


def test_lineage_names_a_hostile_value_as_text() -> None:
    evil = "<script>alert(1)</script>" + "x" * 1000
    parent = pd.DataFrame({"a": [evil, evil]})
    found = check_lineage(parent, pd.DataFrame({"a": ["p", "q"]}))
    assert not found.accepted
    assert len(found.refused[0]) < 300  # the value cut short


# -- the pack on outside data -----------------------------------------------------------------

def test_the_manifest_s_hashes_are_the_files_sha256(packs: dict[str, Path]) -> None:
    for folder in packs.values():
        for manifest in (MANIFEST, INTERNAL_MANIFEST):
            listed = _json(folder / manifest)["files"]
            names = {f["name"] for f in listed}
            assert {RELEASED, INTERNAL_HTML, EXTERNAL_HTML} <= names
            for f in listed:
                data = (folder / f["name"]).read_bytes()
                assert f["sha256"] == hashlib.sha256(data).hexdigest(), (folder, f["name"])
                assert f["bytes"] == len(data)
        assert set(p.name for p in folder.iterdir()) == names | {MANIFEST, INTERNAL_MANIFEST}


def test_the_zip_holds_the_same_files(packs: dict[str, Path]) -> None:
    zipped = packs["puf"].with_name("puf.zip")
    with zipfile.ZipFile(io.BytesIO(zipped.read_bytes())) as z:
        inside = {Path(n).name: z.read(n) for n in z.namelist()}
    assert inside == {p.name: p.read_bytes() for p in packs["puf"].iterdir()}


def _compare(folder: Path, data: Path, *args: str) -> dict[str, Any]:
    internal = _json(folder / INTERNAL_MANIFEST)
    recipe = internal["recipe_from_original"] or internal["recipe"]
    path = _write(folder.parent / f"{folder.name}-whole.json", recipe)
    r = run("compare", data, folder / RELEASED, "--recipe", path, "--json", *args)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.mark.parametrize(("name", "data", "args"), [
    ("suf", ACTG, ("--qi", QI, "--sensitive", "drugs")),
    ("puf", ACTG, ("--qi", QI, "--sensitive", "drugs")),
    ("secure", TESTDATA, ("--qi", "urbrur,roof,walls,water,electcon,relat,sex",
                          "--household", "ori_hid"))])
def test_the_manifest_s_figures_are_compare_json_s(packs: dict[str, Path], name: str,
                                                   data: Path, args: tuple[str, ...]) -> None:
    compared = _compare(packs[name], data, *args)
    internal, external = _json(packs[name] / INTERNAL_MANIFEST), _json(packs[name] / MANIFEST)
    assert internal["figures"] == compared
    withheld = external["figures_withheld"]
    assert external["figures"] == {k: v for k, v in compared.items() if k not in withheld}


def test_the_external_files_hold_no_seed(packs: dict[str, Path]) -> None:
    for name, folder in packs.items():
        internal = _json(folder / INTERNAL_MANIFEST)
        seeds = {str(internal["recipe"]["seed"])}
        if internal["recipe_from_original"]:
            seeds.add(str(internal["recipe_from_original"]["seed"]))
        assert seeds & {str(SUF_SEED), str(PUF_SEED)}
        for external in (MANIFEST, EXTERNAL_HTML):
            text = (folder / external).read_text(encoding="utf-8")
            for seed in seeds:
                assert seed not in text, (name, external)
            assert "seed" not in text.lower(), (name, external)
        assert not {k for k in _keys(_json(folder / MANIFEST)) if "seed" in k.lower()}
        # the board's files hold it: the release can be replayed
        assert any(s in (folder / INTERNAL_HTML).read_text(encoding="utf-8") for s in seeds)


def test_both_documents_open_offline(packs: dict[str, Path]) -> None:
    for folder in packs.values():
        for doc in (INTERNAL_HTML, EXTERNAL_HTML):
            text = (folder / doc).read_text(encoding="utf-8")
            assert text.startswith("<!DOCTYPE html>") and text.rstrip().endswith("</html>")
            assert "<script" not in text.lower()
            assert not re.search(r"(src|href)\s*=\s*[\"']?(https?:)?//", text, re.I)
            assert not re.search(r"@import|url\((?!#)", text, re.I)  # url(#id): in the page
            assert "http://" not in text and "https://" not in text or \
                "http://www.w3.org/" in text  # the SVG namespace, a name, never fetched


def test_the_status_of_every_output(packs: dict[str, Path]) -> None:
    status = {name: {o["uid"]: o for o in _json(folder / MANIFEST)["outputs"]}
              for name, folder in packs.items()}
    suf = status["suf"]
    linked = "tables:race,gender;karnof,race,gender"  # they share columns: protected together
    assert set(suf) == {"release", linked}
    assert suf["release"]["status"] == "pass"
    assert suf[linked]["type"] == "linked tables"
    assert suf[linked]["outcome"]["primary"] > 0  # small cells hidden
    assert suf[linked]["status"] == "pass"  # and audited together
    alone = status["secure"]["table:roof,urbrur"]
    assert alone["type"] == "table" and alone["status"] == "pass"
    # a public file needs every record in a class of 5: ten-year age bands alone do not do it
    puf = status["puf"]["release"]
    assert puf["status"] == "fail"
    assert any("MISSED" in r and "classes < 5" in r for r in puf["reasons"])
    # the teaching file names no sensitive column: its inference target cannot be read
    teaching = status["teaching"]["release"]
    assert any("cannot be read" in r for r in teaching["reasons"])
    assert teaching["status"] in ("review", "fail")
    assert status["secure"]["release"]["status"] == "review"
    answers = status["secure"]["answers:relat"]
    assert answers["type"] == "answer counts" and answers["outcome"]["hidden"] > 0
    assert answers["status"] in ("pass", "fail")
    for outputs in status.values():
        for o in outputs.values():
            assert {"uid", "status", "type", "files", "outcome", "summary", "timestamp",
                    "comments", "exception", "reasons", "mitigation"} <= set(o)
            assert o["status"] in ("pass", "fail", "review")


def test_a_table_s_cells_carry_their_status(packs: dict[str, Path], actg: pd.DataFrame) -> None:
    linked = pd.read_csv(packs["suf"] / "table-1.csv", keep_default_na=False, dtype=str)
    assert set(linked["table"]) == {"race,gender", "karnof,race,gender"}
    table = linked[linked["table"] == "karnof,race,gender"]
    assert set(table["status"]) >= {"published", "primary"}
    hidden = table[table["status"] != "published"]
    assert (hidden["count"] == "").all()  # a hidden cell is blank
    cols = ["karnof", "race", "gender"]
    shown = table[(table["status"] == "published") & (table[cols] != "Total").all(axis=1)]
    true = actg.groupby(cols).size()
    assert len(shown) > 10
    for _, r in shown.iterrows():
        assert int(r["count"]) == true.get(tuple(int(r[c]) for c in cols), 0)


def test_answer_counts_are_published_with_their_audit(packs: dict[str, Path]) -> None:
    from sdc_core.tables.responses import audit, response_table

    testdata = pd.read_csv(TESTDATA)
    truth = response_table(testdata, "relat")
    table = pd.read_csv(packs["secure"] / "answers-1.csv", dtype=str, keep_default_na=False)
    shown = dict(zip(table["option"], table["responses"], strict=True))
    counts = testdata["relat"].astype(str).value_counts()
    for o in truth.options:
        if o.count is not None:
            assert shown[o.option] == str(counts[o.option])
        else:
            assert shown[o.option] == o.display and str(counts[o.option]) != o.display
    status = {o["uid"]: o for o in _json(packs["secure"] / MANIFEST)["outputs"]}
    assert status["answers:relat"]["status"] == ("pass" if audit(truth).passes else "fail")


def test_the_lineage_is_recorded(packs: dict[str, Path]) -> None:
    suf_hash = hashlib.sha256((packs["suf"] / RELEASED).read_bytes()).hexdigest()
    puf = _json(packs["puf"] / MANIFEST)
    assert puf["inputs"]["parent"]["sha256"] == suf_hash
    assert puf["inputs"]["parent"]["release_type"] == "suf"
    assert puf["lineage"]["accepted"] is True
    assert _json(packs["suf"] / MANIFEST)["inputs"]["original"]["sha256"] == \
        hashlib.sha256(ACTG.read_bytes()).hexdigest()


def test_a_teaching_file_withholds_random_parameters(packs: dict[str, Path]) -> None:
    """A teaching file's users correct no analysis: its external files give a random step's
    method, not its parameters nor the transition matrix; a scientific-use file gives both,
    as the practice guide advises."""
    suf = _json(packs["suf"] / MANIFEST)
    assert suf["methods"][1]["parameters"] == {"p": 0.1}
    assert "attribute" in suf["figures"]
    secure = _json(packs["secure"] / MANIFEST)
    assert secure["methods"][0]["parameters"] == {"p": 0.05}


def test_the_pack_is_the_same_for_the_same_input(tmp_path: Path) -> None:
    a = _pack(tmp_path, "a", SUF, "--type", "suf", "--qi", QI)
    b = _pack(tmp_path, "b", SUF, "--type", "suf", "--qi", QI)
    for name in (RELEASED, "tradeoff.svg", "tradeoff.pdf"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


def test_the_figure_marks_the_chosen_setting() -> None:
    fig = _figure(Point(0, 180), Point(0.05, 38.5), [Point(0.02, 90), Point(0.1, 10)])
    offsets = [np.asarray(c.get_offsets()).tolist() for c in fig.axes[0].collections]
    assert offsets == [[[0.02, 90], [0.1, 10]], [[0, 180]], [[0.05, 38.5]]]
    files = tradeoff_files(Point(0, 180), Point(0.05, 38.5))
    assert files["svg"].lstrip().startswith(b"<?xml") and b"<svg" in files["svg"]
    assert files["pdf"].startswith(b"%PDF")
    assert b"CreationDate" not in files["pdf"]


# -- hostile input ----------------------------------------------------------------------------

HOSTILE_NAME = "<script>alert(1)</script>**bold**[x](http://127.0.0.1:9/p)"


def test_names_with_markup_are_written_as_text(tmp_path: Path, actg: pd.DataFrame) -> None:
    df = actg[["age", "gender", "race", "drugs"]].rename(columns={"race": HOSTILE_NAME})
    data = tmp_path / "evil.csv"
    df.to_csv(data, index=False)
    decision = _write(tmp_path / "d.json", {
        "decision": "approved", "steward": "<img src=x onerror=alert(1)>",
        "comments": "<script>fetch('http://127.0.0.1:9')</script>",
        "outputs": {"release": {"exception": "<b>please</b>"}}})
    out = _pack(tmp_path, "evil", {"version": 1, "seed": 5, "steps": [
        {"method": "pram", "column": HOSTILE_NAME, "p": 0.1}]}, "--type", "suf",
        "--qi", f"age,gender,{HOSTILE_NAME}", "--decision", str(decision),
        "--title", "<h1>Title</h1>", "--table", f"gender,{HOSTILE_NAME}", data=data)
    for doc in (INTERNAL_HTML, EXTERNAL_HTML):
        text = (out / doc).read_text(encoding="utf-8")
        assert "<script" not in text and "<img" not in text and "<h1>Title" not in text
        assert "<b>please" not in text
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert "&lt;img src=x onerror=alert(1)&gt;" in (out / INTERNAL_HTML).read_text("utf-8")
    manifest = _json(out / MANIFEST)
    assert manifest["decision"]["steward"] == "<img src=x onerror=alert(1)>"  # data, as given
    assert manifest["roles"]["qi"][2] == HOSTILE_NAME


@pytest.mark.parametrize(("decision", "message"), [
    ({"comments": "x" * (MAX_FIELD + 1)}, "at most"),
    ({"decision": "approve; DROP TABLE"}, "decision must be one of"),
    ({"steward": ["a"]}, "must be text"),
    ({"steward": {"__class__": 1}}, "must be text"),
    ({"eval": "1"}, "unknown keys"),
    ({"outputs": {"release": {"exception": 5}}}, "must be text"),
    ({"outputs": {"release": "x"}}, "must be an object"),
    ({"outputs": {str(i): {} for i in range(101)}}, "at most 100"),
    ([1, 2], "must be a JSON object")])
def test_a_hostile_decision_is_refused(decision: object, message: str) -> None:
    with pytest.raises(SdcInputError, match=message):
        parse_decision(decision)


def test_a_huge_or_deep_decision_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SdcInputError, match="at most"):
        load_decision(json.dumps({"comments": "x" * 70_000}))
    with pytest.raises(SdcInputError):
        load_decision("[" * 100_000 + "]" * 100_000)
    huge = _write(tmp_path / "huge.json", {"comments": "x" * 70_000})
    r = run("pack", ACTG, "--recipe", _write(tmp_path / "r.json", SUF), "--type", "suf",
            "--qi", QI, "--decision", huge, "-o", tmp_path / "out")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "at most" in r.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("recipe", "args", "message"), [
    ({"version": 1, "seed": 1, "steps": [{"method": "__import__('os')", "column": "age"}]},
     (), "unknown method"),
    ({"version": 1, "seed": 1, "steps": [{"method": "band", "column": "age; rm -rf /",
                                          "width": 5}]}, (), "age; rm -rf /"),
    ({"version": 1, "seed": "1; import os", "steps": []}, (), "seed"),
    (SUF, ("--target", "__import__('os')<=1"), "target"),
    (SUF, ("--table", "race,nope"), "nope"),
    (SUF, ("--table-rule", "threshold:__import__"), "rule"),
    (SUF, ("--sensitive", "nope"), "nope"),
    (SUF, ("--household", "pidnum", "--numeric", "age,pidnum"), "household id"),
])
def test_a_hostile_pack_request_exits_2_in_one_line(tmp_path: Path, recipe: dict[str, Any],
                                                    args: tuple[str, ...], message: str) -> None:
    r = run("pack", ACTG, "--recipe", _write(tmp_path / "r.json", recipe), "--type", "suf",
            "--qi", QI, "-o", tmp_path / "out", *args)
    assert r.returncode == 2, r.stderr
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    assert message.lower() in r.stderr.lower()


def test_a_pack_is_never_written_over_another(packs: dict[str, Path], tmp_path: Path) -> None:
    r = run("pack", ACTG, "--recipe", _write(tmp_path / "r.json", SUF), "--type", "suf",
            "--qi", QI, "-o", packs["suf"])
    assert r.returncode == 2 and "new or empty" in r.stderr


def test_a_parent_whose_release_changed_is_refused(packs: dict[str, Path],
                                                   tmp_path: Path) -> None:
    tampered = tmp_path / "tampered"
    tampered.mkdir()
    for f in packs["suf"].iterdir():
        (tampered / f.name).write_bytes(f.read_bytes())
    lines = (tampered / RELEASED).read_text(encoding="utf-8").splitlines(keepends=True)
    (tampered / RELEASED).write_text("".join(lines[:-1]), encoding="utf-8")
    r = run("pack", ACTG, "--recipe", _write(tmp_path / "r.json", PUF), "--type", "puf",
            "--qi", QI, "--parent", tampered, "-o", tmp_path / "out")
    assert r.returncode == 2 and "has changed" in r.stderr


def test_a_child_made_by_a_second_pram_is_refused(packs: dict[str, Path],
                                                  tmp_path: Path) -> None:
    r = run("pack", ACTG, "--recipe", _write(tmp_path / "r.json", SUF), "--type", "puf",
            "--qi", QI, "--parent", packs["suf"], "-o", tmp_path / "out")
    assert r.returncode == 2 and "lineage refused" in r.stderr and "draws at random" in r.stderr
    assert not (tmp_path / "out").exists()


def test_a_parent_of_another_original_is_refused(packs: dict[str, Path],
                                                 tmp_path: Path, actg: pd.DataFrame) -> None:
    other = tmp_path / "other.csv"
    actg.iloc[:-1].to_csv(other, index=False)
    r = run("pack", other, "--recipe", _write(tmp_path / "r.json", PUF), "--type", "puf",
            "--qi", QI, "--parent", packs["suf"], "-o", tmp_path / "out")
    assert r.returncode == 2 and "original" in r.stderr


@pytest.mark.parametrize("manifest", [
    "not json", "[]", '{"format": "x"}', '{"format": "sdc-release-pack", "files": 5}',
    '{"format": "sdc-release-pack", "files": ["a", {"name": []}], "inputs": 7}',
    "[" * 50_000 + "]" * 50_000])
def test_a_hostile_parent_manifest_is_refused(packs: dict[str, Path], tmp_path: Path,
                                              manifest: str) -> None:
    parent = tmp_path / "parent"
    parent.mkdir()
    for f in packs["suf"].iterdir():
        (parent / f.name).write_bytes(f.read_bytes())
    (parent / MANIFEST).write_text(manifest, encoding="utf-8")
    r = run("pack", ACTG, "--recipe", _write(tmp_path / "r.json", PUF), "--type", "puf",
            "--qi", QI, "--parent", parent, "-o", tmp_path / "out")
    assert r.returncode == 2, r.stderr
    assert r.stderr.count("\n") == 1 and "internal error" not in r.stderr


def test_a_sweep_s_settings_are_on_the_figure(tmp_path: Path) -> None:
    grid = _write(tmp_path / "grid.json", {"seeds": 1, "settings": [
        {"method": "band", "column": "age", "param": "width", "values": [5, 10, 20]}]})
    out = _pack(tmp_path, "swept", SUF, "--type", "suf", "--qi", QI, "--grid", str(grid))
    figure = _json(out / MANIFEST)["figure"]
    assert figure["files"] == ["tradeoff.svg", "tradeoff.pdf"]
    table = run("sweep", ACTG, "--qi", QI, "--grid", grid, "-o", tmp_path / "t.csv")
    assert table.returncode == 0, table.stderr
    rows = pd.read_csv(tmp_path / "t.csv")
    assert [(p["loss"], p["risk"]) for p in figure["points"]["sweep"]] == \
        list(zip(rows["IL1_release"], rows["linkage_reidentifications"], strict=True))
    release = figure["points"]["release"]
    figures = _json(out / MANIFEST)["figures"]
    assert (release["loss"], release["risk"]) == (figures["IL1_release"],
                                                  figures["linkage_reidentifications"])
