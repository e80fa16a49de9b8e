"""Released values never pose as true ones: bands written as bands, whole numbers written as
read, and the measures reading band labels as the numbers they used before (docs/methods.md,
"Banding writes bands, not numbers no record holds"; docs/columns.md)."""

import io
import json
import math
from contextlib import redirect_stdout

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sdc_core.cli import main
from sdc_core.data.columns import storage
from sdc_core.data.io import read_table, table_bytes
from sdc_core.methods import band
from sdc_core.methods.banding import measured, read_bands, release_note
from sdc_core.recipe import apply_recipe, parse_recipe
from sdc_core.utility import eigenvalue_similarity, il1
from tests import corpus
from tests.conformance import tables

#: A table of the outside corpus with whole-number columns that have blanks: ages and answer
#: codes of the 1984 American National Election Study.
ANES = "stevedata/anes_vote84"


@pytest.fixture(scope="module")
def anes_csv() -> bytes:
    """The table as a steward's CSV holds it: whole numbers written "18", blanks empty."""
    raw = table_bytes(corpus.variant(corpus.load(ANES), "b"), ".csv")
    assert b",18," in raw and b"18.0" not in raw
    return raw


def text_columns(raw: bytes) -> pd.DataFrame:
    """A CSV's cells exactly as written (no reading of numbers or blanks)."""
    return pd.read_csv(io.BytesIO(raw), dtype=str, keep_default_na=False)


def test_whole_numbers_with_blanks_are_read_as_integers_and_written_back_as_read(anes_csv):
    df = read_table(anes_csv, "anes.csv")
    with_blanks = [c for c in df.columns if df[c].isna().any() and storage(df[c]) != "text"]
    assert {"age", "educ", "polint"} <= set(with_blanks)
    for c in with_blanks:
        assert df[c].dtype == "Int64", c
    assert table_bytes(df, ".csv") == anes_csv  # "2", never "2.0"
    for ext in (".xlsx", ".parquet"):
        back = read_table(table_bytes(df, ext), f"anes{ext}")
        assert {c: str(back[c].dtype) for c in with_blanks} == dict.fromkeys(with_blanks,
                                                                             "Int64"), ext
        pd.testing.assert_frame_equal(back, df, check_dtype=False)
        assert table_bytes(back, ".csv") == anes_csv, ext


def test_decimals_in_the_file_stay_decimals():
    """"2.0" in a CSV is a float, written back as "2.0"; "2" with a blank an integer."""
    raw = b"a,b,c\n1,1.0,x\n,,y\n3,2.0,z\n"
    df = read_table(raw, "t.csv")
    assert (str(df["a"].dtype), str(df["b"].dtype)) == ("Int64", "float64")
    assert table_bytes(df, ".csv") == raw


def test_spss_and_stata_whole_numbers_with_blanks_are_integers(tmp_path):
    """SPSS: a column whose display format has no decimals (F8.0); Stata: a float column of
    whole numbers with a blank (its integer types with a missing value are read as floats)."""
    import pyreadstat

    df = pd.DataFrame({"item": [1.0, np.nan, 6.0], "score": [1.5, np.nan, 2.0],
                       "shown": [1.0, np.nan, 2.0]})
    pyreadstat.write_sav(df, str(tmp_path / "t.sav"),
                         variable_format={"item": "F8.0", "score": "F8.2", "shown": "F8.2"})
    sav = read_table(tmp_path / "t.sav")
    assert [str(sav[c].dtype) for c in df.columns] == ["Int64", "float64", "float64"]
    df.to_stata(tmp_path / "t.dta", write_index=False)
    dta = read_table(tmp_path / "t.dta")
    assert [str(dta[c].dtype) for c in df.columns] == ["Int64", "float64", "Int64"]
    assert table_bytes(dta[["item"]].assign(n=1), ".csv") == b"item,n\n1,1\n,1\n6,1\n"


def test_bands_and_suppression_leave_the_other_columns_as_read(anes_csv):
    """Bands of 20 years and local suppression: ages are written as their bands, no record gets
    an age it does not have, and every column the recipe does not touch is written cell for
    cell as it was read."""
    df = read_table(anes_csv, "anes.csv")
    recipe = parse_recipe({"seed": 1, "steps": [
        {"method": "band", "column": "age", "width": 20},
        {"method": "local_suppression", "columns": ["age", "educ"], "k": 5}]})
    result = apply_recipe(recipe, df)
    written = text_columns(table_bytes(result.data, ".csv"))
    given_ = text_columns(anes_csv)
    ages = set(written["age"]) - {""}
    assert ages <= {f"{lo}–{lo + 19}" for lo in range(0, 100, 20)} and len(ages) >= 4
    for (low, high), age in zip(written["age"].str.split("–", expand=True).to_numpy(),
                                df["age"]):
        if low and not pd.isna(age):
            assert int(low) <= age <= int(high)
    for c in df.columns:
        if c not in ("age", "educ"):
            assert written[c].equals(given_[c]), c
    changed = written["educ"] != given_["educ"]
    assert (written.loc[changed, "educ"] == "").all()  # only blanks: "2" stays "2"
    assert all(release_note(r) is None for r in result.reports)


def test_band_labels_read_back_give_the_figures_of_the_midpoint_release(anes_csv, tmp_path):
    """IL1, the eigenvalues and compare on the written file: the same figures whether ages are
    written as bands or as midpoints, in memory and read back from the file."""
    df = read_table(anes_csv, "anes.csv")
    src = tmp_path / "anes.csv"
    src.write_bytes(anes_csv)
    numeric = ["age", "educ", "polint"]
    figures = {}
    for label in ("auto", "midpoint", "interval"):
        recipe = {"seed": 2, "steps": [
            {"method": "band", "column": "age", "width": 10, "label": label},
            {"method": "noise", "columns": ["educ"], "p": 20}]}
        out = apply_recipe(parse_recipe(recipe), df).data
        loss = il1(df, out, numeric)
        path, rpath = tmp_path / f"{label}.csv", tmp_path / f"{label}.json"
        path.write_bytes(table_bytes(out, ".csv"))
        rpath.write_text(json.dumps(recipe))
        buf = io.StringIO()
        with redirect_stdout(buf):
            assert main(["compare", str(src), str(path), "--numeric", ",".join(numeric),
                         "--json", "--qi", "age,female", "--recipe", str(rpath)]) == 0
        cli = json.loads(buf.getvalue())
        figures[label] = (loss.per_column, eigenvalue_similarity(df, out, numeric),
                          cli["per_column"], cli["eigenvalue_similarity_percent"],
                          cli["linkage_reidentifications"])
        assert cli["per_column"]["age"] == pytest.approx(loss.per_column["age"], rel=1e-12)
        notes = cli["release_notes"]
        assert notes == (["age is released as band midpoints (15 = 10–19), not as true "
                          "values"] if label == "midpoint" else [])
    assert figures["auto"] == figures["midpoint"] == figures["interval"]
    assert 0 < figures["auto"][0]["age"] < 0.1


def test_seed_003_il1_holds_with_band_labels(actg):
    """10-year bands on ACTG 175: IL1 ≈ 0.044 (seed 003), with ages written as "40–49"."""
    banded = actg.assign(age=band(actg["age"], 10).values)
    assert banded["age"].iloc[0] == "40–49"
    assert round(il1(actg, banded, ["age"]).IL1_overall, 7) == 0.0438571


@pytest.mark.parametrize("text", [
    "=1+1", "__import__('os').system('true')", "[1, 2) or 1", "1–2–3", "–", "[ , )", "[1, 1)",
    "3–1", "[nan, 2)", "[1, inf)", "[1e999, 2)", "9" * 5000 + "–1", "[2024-13-45, 2025-01-01)",
    "[2024-01-02, 2024-01-01)", "[2024-01-01, 3)", "15-19", "[15,20)", "(15, 20]", "", " "])
def test_odd_text_among_band_labels_is_a_value(text):
    """A column that looks like band labels but holds one odd text is left as it is: the text
    is data, never evaluated, and nothing breaks."""
    s = pd.Series(["15–19", "[20, 25)", text, None], name="age")
    assert read_bands(s) is s
    original = pd.DataFrame({"age": [17, 22, 30, 40]})
    released = pd.DataFrame({"age": s})
    assert measured(original, released) is released
    loss = il1(original, released, ["age"])  # compared as categories
    assert loss.per_column["age"] == 1.0


def test_odd_text_in_a_released_file_is_compared_not_run(tmp_path, capsys):
    src, out = tmp_path / "a.csv", tmp_path / "b.csv"
    src.write_text("age,sex\n17,f\n22,m\n30,f\n")
    out.write_text("age,sex\n15–19,f\n\"=cmd|' /C calc'!A0\",m\n\"[30, 40)\",f\n")
    assert main(["compare", str(src), str(out), "--numeric", "age", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["per_column"]["age"] == 1.0 and got["IL1_numeric"] == 0.0


def test_labels_read_back_are_numbers_and_dates():
    assert read_bands(pd.Series(["15–19", "-10–-1", None])).tolist()[:2] == [17.5, -5.0]
    assert read_bands(pd.Series(["[0.5, 1)", "[1e+20, 2e+20)"])).tolist() == [0.75, 1.5e20]
    days = read_bands(pd.Series(["[2024-01-01, 2024-01-08)", None]))
    assert days.iloc[0] == pd.Timestamp("2024-01-04") and pd.isna(days.iloc[1])
    zoned = pd.Series(pd.to_datetime(["2024-01-03"]).tz_localize("Europe/Zurich"))
    assert read_bands(pd.Series(["[2024-01-01, 2024-01-08)"]), zoned).dt.tz is not None
    mixed = pd.Series(["[2024-01-01, 2024-01-08)", "15–19"])
    assert read_bands(mixed) is mixed


def test_the_steward_who_picks_midpoints_is_told_so_everywhere(actg):
    res = band(actg["age"], 20, label="midpoint")
    report = {"method": "band", "column": "age", **res.info}
    note = release_note(report)
    assert note == "age is released as band midpoints (10 = 0–19), not as true values"
    lower = release_note({"method": "band", "column": "age",
                          **band(actg["age"], 20, label="lower").info})
    assert lower == "age is released as band lower bounds (0 = 0–19), not as true values"
    from sdc_core.methods import registry
    from ui.logic.report import step_notes

    assert note in registry()["band"].describe(report)
    assert any(note in line for line in step_notes([report]))
    assert release_note({"method": "band", "column": "age", **band(actg["age"], 20).info}) \
        is None


def test_apply_says_so_on_the_command_line(tmp_path, capsys):
    from sdc_core.data.io import EXAMPLE_PATH

    recipe = tmp_path / "r.json"
    recipe.write_text(json.dumps({"seed": 1, "steps": [
        {"method": "band", "column": "age", "width": 20, "label": "midpoint"}]}))
    assert main(["apply", str(EXAMPLE_PATH), "--recipe", str(recipe),
                 "-o", str(tmp_path / "o.csv")]) == 0
    err = capsys.readouterr().err
    assert "note: age is released as band midpoints (10 = 0–19), not as true values" in err


WIDTHS = {"integer": [1, 5, 10], "float": [0.5, 2.5, 10], "datetime": [1, 7, 30]}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables(max_rows=25), st.integers(0, 2))
def test_any_dtype_banded_reads_back_as_its_midpoints(df, pick):
    """Over every dtype a reader gives: a number or date column banded with the default labels,
    in memory and written to CSV and read back, reads as the midpoint release; the labels are
    text for whole numbers ("15–19") and intervals otherwise."""
    for c in df.columns:
        kind = storage(df[c])
        if kind not in WIDTHS:
            continue
        width = WIDTHS[kind][pick]
        labels = band(df[c], width).values
        midpoints = band(df[c], width, label="midpoint").values
        present = labels.dropna()
        if kind == "integer":
            assert all("–" in v for v in present)
        else:
            assert all(v.startswith("[") and v.endswith(")") for v in present)
        back = read_bands(labels, df[c])
        if not len(present):
            continue
        if kind == "datetime":
            assert back.isna().equals(midpoints.isna())
            assert (back.dropna() == midpoints.dropna()).all()
        else:
            np.testing.assert_allclose(back.to_numpy(dtype=float),
                                       midpoints.to_numpy(dtype=float, na_value=np.nan),
                                       rtol=1e-12)
        raw = table_bytes(pd.DataFrame({c: labels}), ".csv")
        read = read_table(raw, "t.csv") if raw.strip() != c.encode() else None
        if read is not None and read[c].notna().any():
            a = measured(df[[c]], read)[c]
            b = read_bands(labels, df[c])
            assert a.isna().equals(b.isna())
            if kind != "datetime":
                assert all(math.isclose(x, y, rel_tol=1e-12) for x, y in
                           zip(a.dropna(), b.dropna()))


def test_export_says_when_the_steward_picks_midpoints():
    """The Export page says in words that ages are band midpoints, and says nothing of the kind
    for the default labels."""
    from tests.apptest import app_test
    from tests.conftest import plain

    at = app_test().run()
    at.switch_page("views/protect.py").run()
    at.slider(key="w_p_band_age").set_value(20).run()
    at.switch_page("views/export.py").run()
    assert not at.exception
    assert not [w for w in at.warning if "band midpoints" in w.value]
    at.switch_page("views/protect.py").run()
    at.selectbox(key="w_p_band:label:age").set_value("midpoint").run()
    at.switch_page("views/export.py").run()
    assert not at.exception
    said = [plain(w.value) for w in at.warning if "band midpoints" in w.value]
    assert said == ["Released values: age is released as band midpoints (10 = 0–19), not as "
                    "true values."]


def test_compare_reads_bands_of_dates_and_numbers_alike_on_every_engine(tmp_path):
    """A release with dates and ages written as bands: compare on pandas and on DuckDB gives
    the figures of the midpoint release."""
    rng = np.random.default_rng(1)
    n = 300
    df = pd.DataFrame({
        "d": pd.to_datetime("2020-01-01") + pd.to_timedelta(rng.integers(0, 400, n), "D"),
        "x": rng.normal(size=n),
        "age": pd.array(np.where(rng.random(n) < 0.1, None, rng.integers(18, 90, n)),
                        dtype="Int64")})
    src = tmp_path / "in.parquet"
    src.write_bytes(table_bytes(df, ".parquet"))
    figures = []
    for label in ("auto", "midpoint"):
        out = apply_recipe(parse_recipe({"seed": 1, "steps": [
            {"method": "band", "column": "d", "width": 30, "label": label},
            {"method": "band", "column": "age", "width": 10, "label": label}]}),
            read_table(src)).data
        if label == "auto":  # one recipe writes its bands one way: intervals, dates beside
            assert out["d"].iloc[0].startswith("[2020-")
            assert out["age"].dropna().str.fullmatch(r"\[\d+, \d+\)").all()
        path = tmp_path / f"{label}.parquet"
        path.write_bytes(table_bytes(out, ".parquet"))
        for engine in ("pandas", "duckdb"):
            buf = io.StringIO()
            with redirect_stdout(buf):
                assert main(["compare", str(src), str(path), "--numeric", "x,age", "--json",
                             "--engine", engine]) == 0
            got = json.loads(buf.getvalue())
            figures.append((got["per_column"], got["eigenvalue_similarity_percent"]))
    assert all(f[0] == pytest.approx(figures[0][0], rel=1e-12) and
               f[1] == pytest.approx(figures[0][1], rel=1e-12) for f in figures)
    assert 0 < figures[0][0]["age"] < 0.1 and figures[0][0]["d"] > 0.5



# -- one recipe, one way of writing bands (issue 50) ---------------------------------------------

def _bands(s: pd.Series) -> str:
    """How a column's present values write bands: "range", "interval" or "other"."""
    text = s.dropna().astype(str)
    if text.str.fullmatch(r"-?\d+–-?\d+").all():
        return "range"
    if text.str.fullmatch(r"\[[^,]+, [^)]+\)").all():
        return "interval"
    return "other"


def test_ages_and_years_of_schooling_banded_together_are_written_alike(tmp_path):
    """The panel COUNT/rwm5yr: age (whole numbers) banded beside educ (years of schooling with
    halves) gave "50–59" beside "[15, 18)" in one release. Now both are intervals, on pandas
    and DuckDB, in the attacker's view as in the release, and a recipe of whole-number columns
    keeps its ranges."""
    from sdc_core.risk import risk_profile
    from sdc_core.risk.linkage import attacker_view, linkage_attack
    from tests.rwm5yr import KEYS, persons

    df = persons(1500)
    both = parse_recipe({"seed": 1, "steps": [{"method": "band", "column": "age", "width": 10},
                                              {"method": "band", "column": "educ", "width": 3}]})
    result = apply_recipe(both, df)
    out = result.data
    assert (_bands(out["age"]), _bands(out["educ"])) == ("interval", "interval")
    assert "[50, 60)" in set(out["age"]) and "[15, 18)" in set(out["educ"])
    assert [r["label"] for r in result.reports] == ["interval", "interval"]
    alone = apply_recipe(parse_recipe({"seed": 1, "steps": both.steps[:1]}), df).data
    assert _bands(alone["age"]) == "range" and "50–59" in set(alone["age"])
    ages = parse_recipe({"seed": 1, "steps": [both.steps[0], {"method": "band",
                                                               "column": "kids", "width": 2}]})
    assert _bands(apply_recipe(ages, df).data["kids"]) == "range"  # whole numbers: ranges
    # the attacker repeats the recodings as the release wrote them: a public recoding hides
    # nothing from them, so they re-identify what the released keys suggest
    view = attacker_view(df, ["age", "educ"], both)
    assert view["age"].tolist() == out["age"].tolist()
    assert view["educ"].tolist() == out["educ"].tolist()
    attack = linkage_attack(df, out, KEYS, both)
    assert attack.linkage_reidentifications == pytest.approx(
        risk_profile(out, KEYS).expected_reidentifications, rel=1e-12)
    # DuckDB writes them as pandas does
    src = tmp_path / "panel.csv"
    df.to_csv(src, index=False)
    recipe = tmp_path / "recipe.json"
    recipe.write_text(both.to_json())
    for engine in ("pandas", "duckdb"):
        written = tmp_path / f"{engine}.csv"
        with redirect_stdout(io.StringIO()):
            assert main(["apply", str(src), "--recipe", str(recipe), "-o", str(written),
                         "--engine", engine]) == 0
        got = pd.read_csv(written)
        assert got["age"].tolist() == out["age"].tolist(), engine
        assert got["educ"].tolist() == out["educ"].tolist(), engine
