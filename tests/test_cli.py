"""The command-line contract of docs/cli.md: through tests/cli_run.py (``main`` in this
process), and as a real subprocess where only a new process shows it (the entry point, the
modules loaded at start)."""

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from sdc_core.data.io import EXAMPLE_PATH
from sdc_core.recipe import apply_recipe, load_recipe
from sdc_core.risk import risk_profile
from sdc_core.risk.linkage import linkage_attack
from tests.cli_run import run, run_process
from tests.conftest import ROOT


def test_risk_json_prints_the_reference_figures():
    out = run("risk", EXAMPLE_PATH, "--qi", "age,gender,race", "--sensitive", "treat", "--json")
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout)
    assert r["n_records"] == 2139 and r["n_classes"] == 182 and r["k_threshold"] == 5
    assert round(r["global_risk_percent"], 6) == 8.508649
    assert r["expected_reidentifications"] == 182
    assert round(r["percent_unique"], 6) == 1.355774
    assert round(r["percent_k_le_threshold"], 6) == 10.518934
    assert round(r["avg_linkage_risk_percent"], 6) == 8.508649
    assert r["global_expected_reidentifications"] == pytest.approx(182, abs=1e-9)
    assert r["min_k"] == 1 and r["median_k"] == 33
    assert set(r["l_diversity"]) == {"treat"} and r["l_diversity"]["treat"]["min_l"] == 1
    assert [(a["column"], a["sensitive"]) for a in r["attribute_disclosure"]] == [("arms", "treat")]
    assert r["direct_identifiers"] == ["pidnum"]


def test_risk_text_output_and_records(tmp_path, francdat):
    records = tmp_path / "records.csv"
    out = run("risk", ROOT / "tests/data/francdat.csv", "--qi", "Key1,Key2,Key3,Key4",
              "--weight", "w", "--records", records)
    assert out.returncode == 0, out.stderr
    assert "keys' re-identifications" in out.stdout and "linkage" not in out.stdout
    written = pd.read_csv(records)
    assert list(written.columns) == ["fk", "Fk", "risk", "suda_score", "dis_score"]
    p = risk_profile(francdat, ["Key1", "Key2", "Key3", "Key4"], weight="w")
    np.testing.assert_array_equal(written["fk"], p.fk)
    np.testing.assert_allclose(written["risk"], p.risk, rtol=1e-12)


@pytest.mark.parametrize("args", [
    ["risk", EXAMPLE_PATH, "--qi", "age,gender,race", "--json"],
    ["risk", EXAMPLE_PATH, "--qi", "age,nope"],  # bad input: exit 2, one line
    ["risk", EXAMPLE_PATH, "--k", "x"],  # argparse's own error: exit 2
    ["apply", EXAMPLE_PATH, "--recipe", ROOT / "tests/data/does-not-exist.json", "-o", "x.csv"],
    ["--help"],
    ["--version"],
], ids=["risk", "bad-column", "argparse", "missing-recipe", "help", "version"])
def test_in_process_runs_give_what_the_subprocess_gives(args):
    """tests/cli_run.py's in-process :func:`run` is ``python -m sdc_core``: the same exit code,
    output and error, success or failure."""
    here, there = run(*args), run_process(*args)
    assert (here.returncode, here.stdout, here.stderr) == (
        there.returncode, there.stdout, there.stderr)
    assert here.stdout or here.stderr  # something to compare


def imported_modules(*args):
    """The modules a command imports (from ``-X importtime``), and its exit code."""
    out = subprocess.run([sys.executable, "-X", "importtime", "-m", "sdc_core", *map(str, args)],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    names = {line.rsplit("|", 1)[1].strip() for line in out.stderr.splitlines()
             if line.startswith("import time:") and line.count("|") == 2}
    return names, out.returncode


def test_help_imports_no_heavy_module():
    names, code = imported_modules("--help")
    assert code == 0 and "sdc_core.cli" in names  # the listing is read correctly
    top = {n.split(".")[0] for n in names}
    assert not top & {"scipy", "streamlit", "plotly", "pandas"}, sorted(top)


def test_risk_imports_neither_scipy_nor_the_ui(tmp_path):
    data = tmp_path / "d.csv"
    data.write_text("age,sex\n30,F\n40,M\n")
    names, code = imported_modules("risk", data, "--qi", "age,sex", "--json")
    top = {n.split(".")[0] for n in names}
    assert code == 0 and "pandas" in top
    assert not top & {"scipy", "streamlit", "plotly"}, sorted(top)


def test_risk_na_and_alpha_options(tmp_path):
    data = tmp_path / "m.csv"
    data.write_text("a,b\n1,x\n1,x\n,x\n2,y\n")
    wild = json.loads(run("risk", data, "--qi", "a,b", "--json", "--alpha", "0.5").stdout)
    cat = json.loads(run("risk", data, "--qi", "a,b", "--json", "--na", "category").stdout)
    assert wild["n_records_with_missing_keys"] == 1
    assert cat["n_records_with_missing_keys"] == 1
    assert wild["min_k"] == 1 and cat["percent_unique"] == 50.0
    assert wild["percent_unique"] == 25.0  # (2, y); (nan, x) sees both (1, x) records


def test_risk_reports_classes_without_a_sensitive_value(tmp_path):
    data = tmp_path / "s.csv"
    data.write_text("a,s\n1,u\n1,v\n1,u\n2,\n2,\n3,w\n3,w\n4,\n")
    out = run("risk", data, "--qi", "a", "--sensitive", "s", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["l_diversity"]["s"] == {
        "min_l": 1, "percent_l_eq_1": 25.0, "percent_no_sensitive_value": 37.5}
    text = run("risk", data, "--qi", "a", "--sensitive", "s").stdout
    assert "min l = 1, 25.00 % of records in classes with l = 1, 37.50 % in classes with no s " \
           "value released" in text


@pytest.mark.parametrize("args, message", [
    (["--qi", "age,nosuch"], "unknown quasi-identifier column(s): nosuch"),
    (["--qi", "age", "--sensitive", "zzz"], "unknown sensitive column(s): zzz"),
    (["--qi", "age", "--weight", "label"], "the weight takes numbers; column 'label' holds text"),
    (["--qi", "age", "--k", "0"], "k must be a whole number"),
    (["--qi", "age", "--k", "2.5"], "--k must be a whole number"),
    (["--qi", "age", "--alpha", "1.5"], "alpha must lie in [0, 1]"),
    (["--qi", "age", "--alpha", "-0.1"], "alpha must lie in [0, 1]"),
    (["--qi", "age", "--na", "zero"], "argument --na: invalid choice"),
    (["--qi", ""], "argument --qi"),
    ([], "the following arguments are required: --qi"),
    (["--qi", "age", "--weight", "huge"], "weight column 'huge' sums beyond the range"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, args, message):
    data = tmp_path / "d.csv"
    data.write_text("age,label,huge\n30,a,1e308\n40,b,1e308\n")
    out = run("risk", data, *args)
    assert out.returncode == 2
    assert out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("sdc_core: error: ")
    assert message in lines[0]


def test_missing_file_and_unknown_command():
    out = run("risk", "no/such/file.csv", "--qi", "a")
    assert out.returncode == 2
    assert out.stderr.strip() == "sdc_core: error: no/such/file.csv: no such file"
    out = run("frobnicate")
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1
    out = run("compare", EXAMPLE_PATH, EXAMPLE_PATH, "--analysis", "no/such/spec.json")
    assert out.returncode == 2
    assert out.stderr.strip().startswith("sdc_core: error: no/such/spec.json: cannot read the "
                                         "analysis spec")
    assert out.stderr.count("no/such/spec.json") == 1


def test_apply_writes_every_format_deterministically(tmp_path):
    recipe = tmp_path / "r.json"
    recipe.write_text(json.dumps({"seed": 42, "steps": [
        {"method": "band", "column": "age", "width": 10},
        {"method": "rank_swap", "column": "wtkg"},
        {"method": "drop", "columns": ["pidnum"]}]}))
    for ext in ("csv", "parquet", "xlsx"):
        outs = []
        for i in (1, 2):
            out = tmp_path / f"o{i}.{ext}"
            res = run("apply", EXAMPLE_PATH, "--recipe", recipe, "-o", out)
            assert res.returncode == 0, res.stderr
            assert "step 2 rank_swap wtkg" in res.stdout
            outs.append(out.read_bytes())
        assert outs[0] == outs[1]


def test_apply_neutralises_formulas_unless_asked(tmp_path):
    data = tmp_path / "d.csv"
    data.write_text('name,score\n"=HYPERLINK(""http://x"")",1\n+41 22,2\n@SUM(A1),-3\nplain,4\n')
    recipe = tmp_path / "r.json"
    recipe.write_text('{"seed": 1, "steps": []}')
    out = tmp_path / "o.csv"
    assert run("apply", data, "--recipe", recipe, "-o", out).returncode == 0
    cells = pd.read_csv(out)
    assert cells["name"].tolist() == ["'=HYPERLINK(\"http://x\")", "'+41 22", "'@SUM(A1)", "plain"]
    assert cells["score"].tolist() == [1, 2, -3, 4]  # numbers are not text cells
    assert run("apply", data, "--recipe", recipe, "-o", out, "--no-neutralize").returncode == 0
    assert pd.read_csv(out)["name"].tolist()[0] == '=HYPERLINK("http://x")'


def test_apply_states_what_local_suppression_promises(tmp_path):
    data, recipe, out = tmp_path / "d.csv", tmp_path / "r.json", tmp_path / "o.csv"
    data.write_text("a,b\n1,x\n1,x\n2,y\n2,y\n3,x\n")
    recipe.write_text('{"seed": 1, "steps": [{"method": "local_suppression", '
                      '"columns": ["a", "b"], "k": 2}]}')
    res = run("apply", data, "--recipe", recipe, "-o", out)
    assert res.returncode == 0, res.stderr
    assert "min_k_after 2, min_k_after_as_category 1" in res.stdout
    assert ("k ≥ 2 when a blank matches any value (sdcMicro's reading; smallest class 2); read "
            "as a value of its own the smallest class is 1") in res.stdout


def test_compare_il1_missing_reading(tmp_path):
    original, protected = tmp_path / "o.csv", tmp_path / "p.csv"
    original.write_text("a,c\n0,u\n5,v\n10,w\n2,u\n")
    protected.write_text("a,c\n1,u\n,v\n7,w\n,u\n")
    # range 10: losses 0.1 and 0.3 where both are present, two ages blanked
    by_reading = {}
    for reading, il1_a in (("max", (0.1 + 0.3 + 2) / 4), ("ignore", (0.1 + 0.3) / 2)):
        args = ["--il1-missing", reading] if reading == "ignore" else []
        out = run("compare", original, protected, "--numeric", "a", "--json", *args)
        assert out.returncode == 0, out.stderr
        r = json.loads(out.stdout)
        assert r["il1_missing"] == reading
        assert r["IL1_numeric"] == pytest.approx(il1_a) and r["IL1_categorical"] == 0.0
        by_reading[reading] = run("compare", original, protected, "--numeric", "a", *args).stdout
    assert "il1_missing = max: a numeric value blanked by protection counts as the maximum " \
           "loss 1" in by_reading["max"]
    assert "il1_missing = ignore: numeric values blanked by protection are left out " \
           "(sdcMicro's reading)" in by_reading["ignore"]
    bad = run("compare", original, protected, "--il1-missing", "zero")
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr.count("\n") == 1
    assert bad.stderr.startswith("sdc_core: error: argument --il1-missing: invalid choice: 'zero'")


@pytest.mark.parametrize("recipe_text, out_name, message", [
    ('{"seed": 1, "steps": [{"method": "nope"}]}', "o.csv", "step 1: unknown method 'nope'"),
    ("{not json", "o.csv", "recipe is not valid JSON"),
    ('{"seed": 1, "steps": []}', "o.txt", "output must end in .csv, .parquet, .xlsx"),
    # built to hurt: a seed past the generator's 64 bits (it would repeat a smaller one), a
    # number of 5,000 digits, nesting 100,000 deep
    ('{"seed": 18446744073709551616, "steps": []}', "o.csv",
     "seed must be a whole number from 0 to 18446744073709551615"),
    ('{"seed": ' + "9" * 5000 + ', "steps": []}', "o.csv",
     "the recipe holds a number of more than 4,300 digits"),
    ("[" * 100_000 + "]" * 100_000, "o.csv", "the recipe is nested too deeply to be read"),
])
def test_apply_errors(tmp_path, recipe_text, out_name, message):
    recipe = tmp_path / "r.json"
    recipe.write_text(recipe_text)
    res = run("apply", EXAMPLE_PATH, "--recipe", recipe, "-o", tmp_path / out_name)
    assert res.returncode == 2
    assert len(res.stderr.strip().splitlines()) == 1 and message in res.stderr
    res = run("apply", EXAMPLE_PATH, "--recipe", tmp_path / "missing.json", "-o", "x.csv")
    assert res.returncode == 2 and "cannot read the recipe" in res.stderr


def test_compare_with_qi_adds_the_linkage_attack(tmp_path, actg):
    recipe = tmp_path / "r.json"
    recipe.write_text(json.dumps({"version": 1, "seed": 3, "steps": [
        {"method": "band", "column": "age", "width": 10},
        {"method": "pram", "column": "race", "p": 0.2},
        {"method": "rank_swap", "column": "wtkg", "window_percent": 2.5}]}))
    protected, records = tmp_path / "p.csv", tmp_path / "rec.csv"
    assert run("apply", EXAMPLE_PATH, "--recipe", recipe, "-o", protected).returncode == 0
    out = run("compare", EXAMPLE_PATH, protected, "--qi", "age,gender,race", "--recipe", recipe,
              "--known", "wtkg", "--records", records, "--json")
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout)
    for key in ("IL1_numeric", "IL1_categorical", "IL1_overall",
                "eigenvalue_similarity_percent"):  # the keys without --qi stay
        assert key in r
    parsed = load_recipe(recipe.read_text())
    expected = linkage_attack(actg, apply_recipe(parsed, actg).data, ["age", "gender", "race"],
                              parsed, ["wtkg"])
    assert r["linkage_reidentifications"] == pytest.approx(expected.linkage_reidentifications,
                                                           abs=1e-9)
    assert r["linkage_risk_percent"] == pytest.approx(expected.linkage_risk_percent, abs=1e-9)
    assert r["linkage_percent_certain"] == pytest.approx(expected.linkage_percent_certain,
                                                         abs=1e-9)
    assert r["drisk_percent"] == pytest.approx(expected.drisk_percent, abs=1e-9)
    assert r["linkage_distance_columns"] == ["wtkg"]
    per_record = pd.read_csv(records)
    assert list(per_record.columns) == ["p_link", "candidates"] and len(per_record) == 2139
    np.testing.assert_allclose(per_record["p_link"], expected.p_link)
    assert per_record["p_link"].sum() == pytest.approx(r["linkage_reidentifications"])


def test_compare_without_recipe_takes_released_values_as_they_are(tmp_path):
    out = run("compare", EXAMPLE_PATH, EXAMPLE_PATH, "--qi", "age,gender,race")
    assert out.returncode == 0, out.stderr
    assert "  linkage attack re-identifications  182.000000" in out.stdout
    assert "  linkage attack risk                8.508649 %" in out.stdout
    assert "released values taken as they are" in out.stdout
    assert "drisk" not in out.stdout.lower()


@pytest.mark.parametrize("args, message", [
    (["--known", "wtkg"], "go with --qi"),
    (["--qi", "age,nope"], "unknown quasi-identifier column(s): nope"),
    (["--qi", "age", "--known", "age"], "already a quasi-identifier"),
    (["--qi", "age", "--recipe", "missing.json"], "cannot read the recipe"),
])
def test_compare_linkage_errors(args, message):
    out = run("compare", EXAMPLE_PATH, EXAMPLE_PATH, *args)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.count("\n") == 1 and message in out.stderr


def test_risk_json_and_records_carry_suda2(tmp_path, actg):
    from sdc_core.risk.suda2 import suda2

    records = tmp_path / "records.csv"
    out = run("risk", EXAMPLE_PATH, "--qi", "age,gender,race", "--json", "--records", records)
    assert out.returncode == 0, out.stderr
    s = json.loads(out.stdout)["suda2"]
    assert s["n_records_score_positive"] == 29 and s["max_score"] == 2
    assert round(s["max_dis_score"], 6) == 0.011560 and s["dis_fraction"] == 0.01
    assert {c: round(v, 2) for c, v in s["attribute_contributions"].items()} == {
        "age": 100.0, "gender": 68.75, "race": 56.25}
    written = pd.read_csv(records)
    expected = suda2(actg, ["age", "gender", "race"])
    np.testing.assert_array_equal(written["suda_score"], expected.score)
    np.testing.assert_allclose(written["dis_score"], expected.dis_score, rtol=1e-12)
    assert int((written["suda_score"] > 0).sum()) == 29


def test_risk_suda2_text_fraction_and_skipping(tmp_path):
    out = run("risk", ROOT / "tests/data/testdata.csv", "--qi",
              "urbrur,roof,walls,water,electcon,relat,sex")
    assert out.returncode == 0, out.stderr
    assert "157 records score > 0; max score 720, max DIS score 0.678143" in out.stdout
    assert "relat 92.60 %" in out.stdout
    half = json.loads(run("risk", EXAMPLE_PATH, "--qi", "age,gender,race", "--json",
                          "--dis-fraction", "0.5").stdout)["suda2"]
    assert half["dis_fraction"] == 0.5 and half["max_dis_score"] > 0.011560
    skipped = run("risk", EXAMPLE_PATH, "--qi", "age,gender,race", "--json", "--no-suda2")
    assert json.loads(skipped.stdout)["suda2"] is None and skipped.stderr == ""
    bad = run("risk", EXAMPLE_PATH, "--qi", "age", "--dis-fraction", "2")
    assert bad.returncode == 2 and "--dis-fraction must lie in (0, 1]" in bad.stderr
    data = tmp_path / "wide.csv"
    pd.DataFrame({f"c{i}": [i % 2, 1] for i in range(21)}).to_csv(data, index=False)
    wide = run("risk", data, "--qi", ",".join(f"c{i}" for i in range(21)), "--json")
    assert wide.returncode == 0 and json.loads(wide.stdout)["suda2"] is None
    assert "SUDA2 skipped" in wide.stderr and "at most 20 keys" in wide.stderr
