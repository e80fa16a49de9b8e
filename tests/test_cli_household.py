"""``risk --household COLUMN`` (docs/cli.md): the household figures of docs/measures.md,
"Household risk", as the command line prints them, run as a real subprocess."""

import json

import numpy as np
import pandas as pd
import pytest

from sdc_core.risk import risk_profile
from tests.cli_run import run
from tests.conftest import DATA

TESTDATA = DATA / "testdata.csv"
QI = ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"]
KEYS = ",".join(QI)


def loop_household_risk(df, weight):
    """Household risk per record by a loop over households (1 − Π(1 − r_i))."""
    risk = risk_profile(df, QI, weight=weight).risk
    product = {}
    for h, r in zip(df["ori_hid"], risk, strict=True):
        product[h] = product.get(h, 1.0) * (1.0 - r)
    return np.array([1.0 - product[h] for h in df["ori_hid"]])


def loop_composition_uniques(df):
    members = {}
    for row in df[["ori_hid", *QI]].itertuples(index=False):
        members.setdefault(row[0], []).append(tuple(row[1:]))
    comps = [tuple(sorted(m)) for m in members.values()]
    return sum(1 for c in comps if comps.count(c) == 1), len(comps)


@pytest.mark.parametrize("weight", ["sampling_weight", None])
def test_risk_json_adds_the_household_figures(weight):
    args = ["--weight", weight] if weight else []
    out = run("risk", TESTDATA, "--qi", KEYS, "--household", "ori_hid", "--json", "--no-suda2",
              *args)
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout)
    df = pd.read_csv(TESTDATA)
    ref = loop_household_risk(df, weight)
    uniques, households = loop_composition_uniques(df)
    assert r["household"] == "ori_hid" and r["households"] == households == 1000
    assert r["household_expected_reidentifications"] == pytest.approx(ref.sum(), rel=1e-12)
    assert r["household_risk_pct"] == pytest.approx(100 * ref.sum() / len(df), rel=1e-12)
    assert r["household_composition_uniques"] == uniques
    assert r["household_composition_unique_percent"] == pytest.approx(100 * uniques / 1000)
    assert r["n_records"] == len(df)  # the person-level figures are still there


def test_risk_without_household_prints_no_household_figure():
    out = run("risk", TESTDATA, "--qi", KEYS, "--json", "--no-suda2")
    assert out.returncode == 0, out.stderr
    assert not [key for key in json.loads(out.stdout) if key.startswith("household")]


def test_risk_text_has_one_household_line_and_records_the_household_risk(tmp_path):
    records = tmp_path / "records.csv"
    out = run("risk", TESTDATA, "--qi", KEYS, "--weight", "sampling_weight", "--household",
              "ori_hid", "--no-suda2", "--records", records)
    assert out.returncode == 0, out.stderr
    lines = [line for line in out.stdout.splitlines() if "household" in line]
    df = pd.read_csv(TESTDATA)
    ref = loop_household_risk(df, "sampling_weight")
    assert len(lines) == 1
    assert f"{100 * ref.sum() / len(df):.6f} %" in lines[0]
    assert f"{loop_composition_uniques(df)[0]} unique by composition" in lines[0]
    written = pd.read_csv(records)
    assert list(written.columns) == ["fk", "Fk", "risk", "household_risk"]
    np.testing.assert_allclose(written["household_risk"], ref, rtol=0, atol=1e-12)


@pytest.mark.parametrize("column, message", [
    ("nope", "unknown household column(s): nope"),
    ("sex", "the household column 'sex' is also a quasi-identifier"),
])
def test_a_bad_household_column_exits_2_with_one_line(column, message):
    out = run("risk", TESTDATA, "--qi", KEYS, "--household", column, "--no-suda2")
    assert out.returncode == 2
    assert out.stdout == ""
    assert out.stderr.count("\n") == 1 and message in out.stderr
    assert out.stderr.startswith("sdc_core: error: ")


def test_a_blank_household_id_exits_2_with_one_line(tmp_path):
    path = tmp_path / "blank.csv"
    pd.DataFrame({"hh": ["1", "1", "", "2"], "sex": [1, 2, 1, 2]}).to_csv(path, index=False)
    out = run("risk", path, "--qi", "sex", "--household", "hh", "--no-suda2")
    assert out.returncode == 2 and out.stderr.count("\n") == 1
    assert "household column 'hh' has 1 blank id" in out.stderr


@pytest.mark.parametrize("weight", ["sampling_weight", None])
def test_duckdb_gives_the_same_household_figures_and_records(tmp_path, weight):
    """The engine path counts (household, keys) in the engine and combines them as the pandas
    path does: the same figures (to 1e-9) and the same household risk per record."""
    given = ["--weight", weight] if weight else []
    got = {}
    for engine in ("pandas", "duckdb"):
        records = tmp_path / f"{engine}.csv"
        out = run("risk", TESTDATA, "--qi", KEYS, "--household", "ori_hid", *given,
                  "--engine", engine, "--json", "--no-suda2", "--records", records)
        assert out.returncode == 0, out.stderr
        got[engine] = (json.loads(out.stdout), pd.read_csv(records))
    (a, ra), (b, rb) = got["pandas"], got["duckdb"]
    for key in ("households", "household_composition_uniques"):
        assert a[key] == b[key]
    for key in ("household_expected_reidentifications", "household_risk_pct",
                "household_composition_unique_percent"):
        assert b[key] == pytest.approx(a[key], rel=1e-9, abs=1e-12)
    want = loop_household_risk(pd.read_csv(TESTDATA), weight)
    np.testing.assert_allclose(rb["household_risk"], want, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(ra["household_risk"], want, rtol=1e-9, atol=1e-12)


def test_a_blank_household_id_on_duckdb_exits_2_with_one_line(tmp_path):
    df = pd.read_csv(TESTDATA)
    df.loc[3, "ori_hid"] = None
    path = tmp_path / "blank.csv"
    df.to_csv(path, index=False)
    out = run("risk", path, "--qi", KEYS, "--household", "ori_hid", "--engine", "duckdb")
    assert out.returncode == 2 and out.stderr.count("\n") == 1
    assert "1 blank id" in out.stderr


def test_compare_tables_and_the_household_attack_equal_the_core(tmp_path):
    """``compare --table … --household`` gives the core's cell_loss (households once each)
    and household_linkage of the same two tables, in JSON and a line each in the text."""
    from sdc_core.recipe import apply_recipe, parse_recipe
    from sdc_core.risk.household import household_linkage
    from sdc_core.teaching_households import HOUSEHOLDS_PATH
    from sdc_core.utility.cell_loss import cell_loss

    df = pd.read_csv(HOUSEHOLDS_PATH)
    recipe = parse_recipe({"seed": 3, "household": "hid", "steps": [{
        "method": "record_swap", "hierarchy": ["region", "district"],
        "similar": [["hsize", "htype"], ["hsize"]], "swap_rate": 0.1, "k": 3,
        "risk_variables": ["agegroup", "sex"]}]})
    released = apply_recipe(recipe, df).data
    path = tmp_path / "released.csv"
    released.to_csv(path, index=False)
    keys = ["region", "district", "sex", "agegroup"]
    args = ["compare", HOUSEHOLDS_PATH, path, "--qi", ",".join(keys), "--household", "hid",
            "--table", "region,sex", "--table", "district,agegroup"]
    out = run(*args, "--json")
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    want = cell_loss(df, pd.read_csv(path), [["region", "sex"], ["district", "agegroup"]],
                     household="hid").to_json()
    assert got["cell_loss"] == json.loads(json.dumps(want))
    assert got["cell_loss"]["tables"][1]["absD"] > 0  # swapped districts moved
    attack = household_linkage(df, pd.read_csv(path), keys, "hid").summary()  # no --recipe
    assert got["household_linkage"] == json.loads(json.dumps(attack))
    text = run(*args)
    assert text.returncode == 0
    assert (f"household linkage attack: {attack['household_linkage_reidentified']} of 1200 "
            "households re-identified") in text.stdout
    assert "table district × agegroup (" in text.stdout


@pytest.mark.parametrize("extra, words", [
    (["--table", "region,nope"], "nope"),
    (["--table", "region", "--engine", "duckdb"], "use the pandas engine"),
    (["--table", ""], "expected comma-separated column names"),
])
def test_compare_tables_refusals_exit_2_with_one_line(extra, words):
    from sdc_core.teaching_households import HOUSEHOLDS_PATH

    out = run("compare", HOUSEHOLDS_PATH, HOUSEHOLDS_PATH, *extra)
    assert out.returncode == 2 and out.stderr.count("\n") == 1, out.stderr
    assert words in out.stderr


def test_compare_leaves_the_household_id_out_of_its_numeric_columns():
    """Issue 50: ``compare --household`` measured the household id's IL1 like a measure's;
    named in --numeric, it is refused in one line."""
    from sdc_core.teaching_households import HOUSEHOLDS_PATH

    out = run("compare", HOUSEHOLDS_PATH, HOUSEHOLDS_PATH, "--household", "hid", "--json")
    assert out.returncode == 0, out.stderr
    numeric = json.loads(out.stdout)["numeric"]
    assert "hid" not in numeric and "income" in numeric
    plain = json.loads(run("compare", HOUSEHOLDS_PATH, HOUSEHOLDS_PATH, "--json").stdout)
    assert "hid" in plain["numeric"] and [c for c in plain["numeric"] if c != "hid"] == numeric
    out = run("compare", HOUSEHOLDS_PATH, HOUSEHOLDS_PATH, "--household", "hid",
              "--numeric", "income,hid")
    assert out.returncode == 2 and out.stderr.count("\n") == 1, out.stderr
    assert "--numeric names hid, the household id (--household): an id is not a measure" \
        in out.stderr
