"""The DuckDB and Spark engines give the pandas reference's numbers: risk figures to 1e-9,
``apply`` output equal value for value in position order, whatever the number of partitions
(1, 3 and 7) or threads, from one Parquet file, a directory of Parquet parts or CSV."""

from __future__ import annotations

import io
import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sdc_core.cli import main
from sdc_core.data.io import read_table, table_bytes
from sdc_core.engines import EngineOptions, jobs, open_engine
from sdc_core.engines.kernels import check_engine_step
from sdc_core.errors import SdcInputError
from sdc_core.methods import EngineRun, registry
from sdc_core.recipe import apply_recipe, parse_recipe, step_columns
from sdc_core.risk import risk_profile, sensitive_report
from sdc_core.risk.linkage import linkage_attack
from sdc_core.utility import eigenvalue_similarity, il1
from tests.conftest import DATA

N = 3000
QI = ["region", "age", "sex", "hhsize"]
RECIPE = {"seed": 11, "steps": [
    {"method": "band", "column": "age", "width": 10},
    {"method": "band", "column": "visit", "width": 30},
    {"method": "band", "column": "income", "width": 5000, "label": "interval"},
    {"method": "top_bottom_code", "column": "hhsize", "top": 6},
    {"method": "top_bottom_code", "column": "debt", "top_percentile": 97.5,
     "bottom_percentile": 1},
    {"method": "recode", "column": "occupation", "min_count": 200},
    {"method": "recode", "column": "sex", "groups": {"X": ["F", "M"]}},
    {"method": "pram", "column": "region", "p": 0.2},
    {"method": "pram", "column": "sector", "invariant": True, "retention": 0.8},
    {"method": "relabel", "column": "tenure", "alpha": 0.3},
    {"method": "randomized_response", "column": "smoker", "keep_probability": 0.6},
    {"method": "rank_swap", "column": "rent", "window_percent": 5},
    {"method": "rank_swap", "column": "moved", "window_percent": 10},
    {"method": "noise", "columns": ["rent", "savings"], "kind": "additive", "p": 40},
    {"method": "noise", "columns": ["debt"], "kind": "correlated2", "delta": 0.3},
    {"method": "noise", "columns": ["spend", "savings"], "kind": "correlated", "p": 30},
    {"method": "microaggregation", "columns": ["rent", "savings"], "k": 3},
    {"method": "microaggregation", "columns": ["weight"], "k": 4, "algorithm": "onedims"},
    {"method": "drop", "columns": ["note"]}]}


def make_table(n: int = N, seed: int = 5) -> pd.DataFrame:
    """A household-survey-like table with missing values in keys, text, whole numbers with
    gaps, floats, dates and a text id."""
    g = np.random.default_rng(seed)
    age = g.integers(16, 95, n).astype(float)
    age[g.random(n) < 0.03] = np.nan
    region = g.choice([f"R{i:02d}" for i in range(12)], n).astype(object)
    region[g.random(n) < 0.02] = None
    df = pd.DataFrame({
        "pid": [f"P{i:05d}" for i in g.permutation(n)],
        "region": pd.array(region, dtype="str"),
        "age": age,
        "sex": g.choice(["F", "M"], n),
        "hhsize": g.integers(1, 9, n),
        "occupation": g.choice(["farmer", "clerk", "teacher", "nurse", "driver", "other"], n,
                               p=[0.4, 0.25, 0.2, 0.08, 0.05, 0.02]),
        "sector": g.choice(["public", "private", "none"], n),
        "tenure": g.choice(["own", "rent", "free"], n, p=[0.6, 0.3, 0.1]),
        "smoker": g.choice(["yes", "no"], n),
        "income": np.round(g.lognormal(10, 0.6, n), 2),
        "rent": g.integers(100, 2000, n).astype(float),
        "savings": np.round(g.normal(5000, 2000, n), 2),
        "debt": np.round(g.gamma(2, 3000, n), 2),
        "spend": np.round(g.normal(1500, 300, n), 2),
        "weight": np.round(g.uniform(50, 150, n), 3),
        "visit": pd.Timestamp("2024-01-01") + pd.to_timedelta(g.integers(0, 365, n), "D"),
        "moved": pd.Timestamp("2000-01-01") + pd.to_timedelta(g.integers(0, 9000, n), "D"),
        "note": g.choice(["=1+1", "ok", "-2", "fine"], n),
    })
    df.loc[g.random(n) < 0.05, "savings"] = np.nan
    df.loc[g.random(n) < 0.02, "rent"] = np.nan
    return df


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("engines")
    df = make_table()
    df.to_parquet(root / "table.parquet", index=False)
    parts = root / "parts"
    parts.mkdir()
    for j, chunk in enumerate(np.array_split(np.arange(N), [700, 1900])):
        df.iloc[chunk].to_parquet(parts / f"part-{j:03d}.parquet", index=False)
    csv_dir = root / "csv"
    csv_dir.mkdir()
    df.drop(columns=["visit", "moved"]).to_csv(root / "table.csv", index=False)
    return {"file": root / "table.parquet", "parts": parts, "csv": root / "table.csv",
            "root": root}


#: The test JVM's settings: the just-in-time compiler at its first tier only (C1), as the
#: jobs are many and small and the optimising tier's compilations took a third of the JVM's
#: CPU time; the serial collector for a small heap on 2 cores; Spark's own jars loaded without
#: bytecode verification (a faster start); cached tables and shuffles of a few thousand rows
#: left uncompressed. None changes a value the tests compare.
SPARK_TEST_CONF = {
    "spark.driver.extraJavaOptions": ("-XX:TieredStopAtLevel=1 -XX:+UseSerialGC "
                                      "-XX:+UnlockDiagnosticVMOptions "
                                      "-XX:-BytecodeVerificationRemote"),
    "spark.sql.inMemoryColumnarStorage.compressed": "false",
    "spark.shuffle.compress": "false",
    "spark.broadcast.compress": "false",
}


@pytest.fixture(scope="module")
def spark_session():
    engine = open_engine("spark", EngineOptions(spark_master="local[2]", keep_session=True,
                                                spark_conf=SPARK_TEST_CONF))
    yield engine.spark
    engine.spark.stop()


def engine_for(name: str, partitions: int, request: pytest.FixtureRequest):
    if name == "spark":
        request.getfixturevalue("spark_session")
        return open_engine("spark", EngineOptions(spark_master="local[2]", keep_session=True,
                                                  partitions=partitions))
    return open_engine("duckdb", EngineOptions(partitions=partitions))


def equal_columns(ref: pd.DataFrame, got: pd.DataFrame) -> list[str]:
    """The columns whose values differ (missing equals missing; numbers by value)."""
    assert list(got.columns) == list(ref.columns)
    assert len(got) == len(ref)
    bad = []
    for c in ref.columns:
        a, b = ref[c].reset_index(drop=True), got[c].reset_index(drop=True)
        if pd.api.types.is_datetime64_any_dtype(a):
            a, b = a.astype("datetime64[us]"), pd.to_datetime(b).astype("datetime64[us]")
        same = (a.isna() & b.isna()) | (a == b).fillna(False)
        if not bool(same.all()):
            bad.append(c)
    return bad


def read_output(path: Path) -> pd.DataFrame:
    if path.is_dir():
        files = sorted(path.glob("*.parquet")) or sorted(path.glob("*.csv"))
        if files[0].suffix == ".csv":
            return pd.concat([pd.read_csv(f) for f in files], ignore_index=True)
        return pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)
    return pd.read_parquet(path) if path.suffix == ".parquet" else pd.read_csv(path)


def check_risk(engine, source: Path, df: pd.DataFrame, tmp: Path, **kw) -> None:
    out = jobs.risk(engine, source, QI, records=tmp, **kw)
    profile = risk_profile(df, QI, weight=kw.get("weight"), na=kw.get("na", "wildcard"),
                           alpha=kw.get("alpha", 1.0), k=kw.get("k", 5))
    for key, value in profile.summary().items():
        if isinstance(value, float):
            assert out[key] == pytest.approx(value, rel=1e-9, abs=1e-9), key
        else:
            assert out[key] == value, key
    rec = read_output(tmp)
    np.testing.assert_allclose(rec["fk"], profile.fk, rtol=1e-12)
    np.testing.assert_allclose(rec["Fk"], profile.Fk, rtol=1e-12)
    np.testing.assert_allclose(rec["risk"], profile.risk, rtol=1e-12)


#: Spark at 3 and 7 partitions (a batch a partition either way; one partition is DuckDB's
#: case): each whole-recipe apply on Spark takes some 35 jobs and 5-15 s of the suite
ENGINES = [("duckdb", 1), ("duckdb", 3), ("duckdb", 7), ("spark", 3), ("spark", 7)]


@pytest.mark.parametrize(("name", "partitions"), ENGINES)
def test_apply_equals_pandas(name: str, partitions: int, data: dict[str, Path],
                             request: pytest.FixtureRequest, tmp_path: Path) -> None:
    df = make_table()
    recipe = parse_recipe(RECIPE)
    ref = apply_recipe(recipe, df).data
    engine = engine_for(name, partitions, request)
    try:
        source = data["parts"] if partitions == 3 else data["file"]
        out = tmp_path / "out.parquet"
        reports = jobs.apply(engine, source, recipe, out)
        assert [r["method"] for r in reports] == [s["method"] for s in RECIPE["steps"]]
        got = read_output(out)
        assert equal_columns(ref, got) == []
        if partitions == 7 and name == "duckdb":  # the differences are real: another seed
            # moves other records (a property of the recipe's draws, whatever the engine)
            other = parse_recipe({**RECIPE, "seed": 12})
            out2 = tmp_path / "other.parquet"
            jobs.apply(engine, source, other, out2)
            assert set(equal_columns(ref, read_output(out2))) >= {
                "region", "sector", "tenure", "smoker", "rent", "moved", "savings", "debt"}
    finally:
        engine.close()


@pytest.mark.parametrize(("name", "partitions"), [("duckdb", 3), ("spark", 3)])
def test_band_breaks_and_labels_equal_pandas(name: str, partitions: int,
                                             data: dict[str, Path],
                                             request: pytest.FixtureRequest,
                                             tmp_path: Path) -> None:
    """Custom breaks and the lower-bound and whole-number range labels, batch by batch."""
    recipe = parse_recipe({"seed": 1, "steps": [
        {"method": "band", "column": "age", "breaks": [16, 18, 30, 65, 95], "label": "range"},
        {"method": "band", "column": "rent", "width": 250, "origin": 100, "label": "lower"},
        {"method": "band", "column": "hhsize", "breaks": [1, 2, 5, 9]}]})
    ref = apply_recipe(recipe, make_table()).data
    engine = engine_for(name, partitions, request)
    try:
        out = tmp_path / "out.parquet"
        jobs.apply(engine, data["parts"], recipe, out)
        assert equal_columns(ref, read_output(out)) == []
    finally:
        engine.close()


@pytest.mark.parametrize(("name", "partitions"), ENGINES)
def test_risk_equals_pandas(name: str, partitions: int, data: dict[str, Path],
                            request: pytest.FixtureRequest, tmp_path: Path) -> None:
    df = make_table()
    engine = engine_for(name, partitions, request)
    try:
        source = data["parts"] if partitions == 3 else data["file"]
        check_risk(engine, source, df, tmp_path / "r1.parquet")
        if partitions == 1:
            check_risk(engine, source, df, tmp_path / "r2.csv", weight="weight", alpha=0.5)
            check_risk(engine, source, df, tmp_path / "r3.parquet", na="category", k=3)
    finally:
        engine.close()


@pytest.mark.parametrize("name", ["duckdb", "spark"])
def test_sensitive_and_compare_equal_pandas(name: str, data: dict[str, Path],
                                            request: pytest.FixtureRequest,
                                            tmp_path: Path) -> None:
    df = make_table()[["region", "age", "sex", "hhsize", "occupation", "tenure", "pid",
                       "rent", "savings"]]
    df["tenure_code"] = df["tenure"].map({"own": 1, "rent": 2, "free": 3})
    path = tmp_path / "small.parquet"
    df.to_parquet(path, index=False)
    engine = engine_for(name, 3, request)
    try:
        out = jobs.risk(engine, path, QI, sensitive=["occupation", "tenure"])
        profile = risk_profile(df, QI)
        ldiv, scan = sensitive_report(df, profile, ["occupation", "tenure"])
        assert out["l_diversity"] == {s: v.to_dict() for s, v in ldiv.items()}
        assert out["attribute_disclosure"] == [f.to_dict() for f in scan.findings]
        assert {"column": "tenure_code", "sensitive": "tenure"}.items() <= \
            out["attribute_disclosure"][0].items()
        assert out["direct_identifiers"] == scan.direct_identifiers
        assert "pid" in out["direct_identifiers"]
        recipe = parse_recipe({"seed": 3, "steps": [
            {"method": "band", "column": "age", "width": 5},
            {"method": "pram", "column": "occupation", "p": 0.3},
            {"method": "recode", "column": "tenure_code", "groups": {"owner": [1]}},
            {"method": "rank_swap", "column": "rent", "window_percent": 10}]})
        protected = tmp_path / "protected.parquet"
        jobs.apply(engine, path, recipe, protected)
        ref = apply_recipe(recipe, df).data
        numeric = ["age", "rent", "savings"]
        got = jobs.compare(engine, path, protected, numeric)
        expected = il1(df, ref, numeric)
        for key, value in expected.summary().items():
            assert got[key] == pytest.approx(value, rel=1e-12), key
        assert got["per_column"] == pytest.approx(expected.per_column, rel=1e-12)
        assert got["eigenvalue_similarity_percent"] == pytest.approx(
            eigenvalue_similarity(df, ref, numeric), rel=1e-12)
    finally:
        engine.close()


@pytest.mark.parametrize("name", ["duckdb", "spark"])
def test_csv_and_named_record_id(name: str, data: dict[str, Path],
                                 request: pytest.FixtureRequest, tmp_path: Path) -> None:
    """CSV cells are typed as pandas types them; a recipe's id column keys the draws, so the
    output follows the records when the file is reordered (except microaggregation's, whose
    groups follow sdcMicro's tie rules in row order, on pandas as on the engines)."""
    df = read_table(data["csv"])
    steps = [s for s in RECIPE["steps"] if s.get("column") not in ("visit", "moved")]
    recipe = parse_recipe({**RECIPE, "steps": steps, "record_id": "pid"})
    ref = apply_recipe(recipe, df).data
    engine = engine_for(name, 3, request)
    try:
        out = tmp_path / "out.csv"
        jobs.apply(engine, data["csv"], recipe, out, neutralize=False)
        assert equal_columns(ref, read_output(out)) == []
        check_risk(engine, data["csv"], df, tmp_path / "r.parquet")
        shuffled = df.sample(frac=1.0, random_state=1)
        path = tmp_path / "shuffled.parquet"
        shuffled.to_parquet(path, index=False)
        keyed = parse_recipe({**RECIPE, "record_id": "pid", "steps": [
            s for s in steps if s["method"] != "microaggregation"]})
        out2, out3 = tmp_path / "out2.parquet", tmp_path / "out3.parquet"
        jobs.apply(engine, data["csv"], keyed, out2)
        jobs.apply(engine, path, keyed, out3)
        again = read_output(out3).set_index("pid").loc[df["pid"]].reset_index()
        assert equal_columns(read_output(out2), again) == []
    finally:
        engine.close()


@pytest.mark.parametrize("name", ["duckdb", "spark"])
def test_linkage_attack_equals_pandas(name: str, request: pytest.FixtureRequest,
                                      tmp_path: Path) -> None:
    """The exact-key linkage attack: public recodings (banding, top coding, recoding) repeated
    on the true keys, PRAM compared exactly, missing keys on both sides as wildcards; every
    figure and every record's p_link and number of candidates as in pandas."""
    df = make_table()[["region", "age", "sex", "hhsize", "occupation", "rent"]]
    recipe = parse_recipe({"seed": 4, "steps": [
        {"method": "band", "column": "age", "width": 10},
        {"method": "top_bottom_code", "column": "hhsize", "top_percentile": 85.5},
        {"method": "recode", "column": "sex", "groups": {"X": ["F", "M"]}},
        {"method": "pram", "column": "region", "p": 0.2},
        {"method": "rank_swap", "column": "rent", "window_percent": 5}]})
    protected = apply_recipe(recipe, df).data
    protected.loc[protected.index[::50], "hhsize"] = np.nan  # blanks: released wildcards
    orig, prot = tmp_path / "orig.parquet", tmp_path / "prot.parquet"
    df.to_parquet(orig, index=False)
    protected.to_parquet(prot, index=False)
    engine = engine_for(name, 3, request)
    try:
        for qi, rec in [(QI, recipe), (["region", "occupation", "hhsize"], None)]:
            ref = linkage_attack(df, protected, qi, rec)
            records = tmp_path / f"records{len(qi)}.parquet"
            got = jobs.linkage(engine, orig, prot, qi, rec, records=records)
            for key, value in ref.summary().items():
                if key == "linkage_attackers":  # every attacker's figures
                    assert list(got[key]) == list(value)
                    for a, figures in value.items():
                        assert got[key][a] == pytest.approx(figures, rel=1e-9, abs=1e-12), a
                    continue
                assert got[key] == (pytest.approx(value, rel=1e-9, abs=1e-12)
                                    if isinstance(value, float) else value), key
            per_record = read_output(records)
            np.testing.assert_array_equal(per_record["p_link"], ref.p_link)
            np.testing.assert_array_equal(per_record["candidates"], ref.candidates)
            assert 0 < got["linkage_reidentifications"] < len(df)
        with pytest.raises(SdcInputError, match="rent by distance.*pandas engine only"):
            jobs.linkage(engine, orig, prot, ["age", "rent"], recipe)
        with pytest.raises(SdcInputError, match="unknown quasi-identifier column"):
            jobs.linkage(engine, orig, prot, ["age", "nope"], recipe)
    finally:
        engine.close()


def test_engine_csv_output_neutralises_formulas(data: dict[str, Path], tmp_path: Path) -> None:
    recipe = parse_recipe({"seed": 1, "steps": []})
    out = tmp_path / "out.csv"
    engine = open_engine("duckdb")
    try:
        jobs.apply(engine, data["file"], recipe, out)
    finally:
        engine.close()
    text = out.read_text()
    assert "'=1+1" in text and "'-2" in text
    assert "\n=1+1" not in text and ",=1+1" not in text


@pytest.mark.parametrize("name", ["duckdb", "spark"])
def test_engine_csv_output_escapes_direction_controls(name: str, tmp_path: Path,
                                                      request: pytest.FixtureRequest) -> None:
    """Issue 51: a direction control (U+202E) in a cell or a column name is written to a CSV
    as its visible escape, as the pandas writer writes it (sdc_core/data/io.py, ``table_bytes``),
    and kept with ``neutralize=False``."""
    rlo = "\u202e"
    df = pd.DataFrame({f"name{rlo}gnp.exe": [f"invoice{rlo}fdp.exe", "plain", None],
                       "marks": ["\u2066a\u2069\u200e", "=1+1", "b"], "n": [1, 2, 3]})
    source = tmp_path / "spoof.parquet"
    df.to_parquet(source, index=False)
    recipe = parse_recipe({"seed": 1, "steps": []})
    engine = engine_for(name, 1, request)
    try:
        for neutralize in (True, False):
            out = tmp_path / f"out-{neutralize}.csv"
            jobs.apply(engine, source, recipe, out, neutralize=neutralize)
            got = read_output(out)
            if not neutralize:
                assert list(got.columns) == list(df.columns) and got.iloc[0, 0] == df.iloc[0, 0]
                continue
            want = pd.read_csv(io.BytesIO(table_bytes(df, ".csv")))
            assert list(got.columns) == list(want.columns) == ["name\\u202egnp.exe", "marks",
                                                                "n"]
            assert got.astype(str).values.tolist() == want.astype(str).values.tolist()
            assert got["marks"].tolist()[:2] == ["\\u2066a\\u2069\\u200e", "'=1+1"]
    finally:
        engine.close()


def test_pandas_only_steps_are_refused(data: dict[str, Path], tmp_path: Path) -> None:
    engine = open_engine("duckdb")
    try:
        for step, words in [
                ({"method": "local_suppression", "columns": ["age", "sex"], "k": 3},
                 "pandas engine only"),
                ({"method": "microaggregation", "columns": ["sex"], "k": 3},
                 r"step 1 \(microaggregation\): microaggregation takes numbers; column 'sex'"),
                ({"method": "microaggregation", "columns": ["rent"], "k": 1},
                 r"step 1 \(microaggregation\): k must be"),
                ({"method": "top_bottom_code", "column": "rent", "top_percentile": 95,
                  "top": 3}, r"step 1 \(top_bottom_code\): give top or top_percentile"),
                ({"method": "top_bottom_code", "column": "moved", "top_percentile": 95},
                 "band dates instead"),
                ({"method": "band", "column": "nope", "width": 3}, "unknown column 'nope'"),
                ({"method": "pram", "column": "region", "p": 2.0},
                 r"step 1 \(pram\): p must lie")]:
            with pytest.raises(SdcInputError, match=words):
                jobs.apply(engine, data["file"], parse_recipe({"seed": 1, "steps": [step]}),
                           tmp_path / "x.parquet")
        with pytest.raises(SdcInputError, match="with a household runs on the pandas engine"):
            jobs.apply(engine, data["file"], parse_recipe(
                {"seed": 1, "household": "region",
                 "steps": [{"method": "pram", "column": "sex", "p": 0.1}]}),
                tmp_path / "x.parquet")
    finally:
        engine.close()


def test_cli_engine_commands(data: dict[str, Path], tmp_path: Path,
                             capsys: pytest.CaptureFixture[str]) -> None:
    qi = ",".join(QI)
    assert main(["risk", str(data["parts"]), "--qi", qi, "--engine", "duckdb", "--json",
                 "--memory-limit", "500MB", "--temp-dir", str(tmp_path)]) == 0
    captured = capsys.readouterr()
    assert "SUDA2 runs on the pandas engine only" in captured.err
    got = json.loads(captured.out)
    ref = risk_profile(make_table(), QI).summary()
    assert got["percent_unique"] == pytest.approx(ref["percent_unique"], rel=1e-12)
    recipe = tmp_path / "recipe.json"
    recipe.write_text(json.dumps(RECIPE))
    out = tmp_path / "out.parquet"
    assert main(["apply", str(data["file"]), "--recipe", str(recipe), "-o", str(out),
                 "--engine", "duckdb"]) == 0
    assert "wrote the protected table" in capsys.readouterr().out
    ref_out = apply_recipe(parse_recipe(RECIPE), make_table()).data
    assert equal_columns(ref_out, pd.read_parquet(out)) == []
    orig = tmp_path / "orig.parquet"
    make_table().drop(columns=["note"]).to_parquet(orig, index=False)
    assert main(["compare", str(orig), str(out), "--engine", "duckdb", "--json",
                 "--numeric", "age,rent"]) == 0
    assert json.loads(capsys.readouterr().out)["IL1_numeric"] > 0
    assert main(["compare", str(orig), str(out), "--engine", "duckdb", "--qi", "age,sex",
                 "--recipe", str(recipe), "--numeric", "age,rent"]) == 0
    text = capsys.readouterr().out
    assert "IL1 numeric" in text and "linkage attack on age, sex" in text
    ref_attack = linkage_attack(make_table(), ref_out, ["age", "sex"], parse_recipe(RECIPE))
    assert f"{ref_attack.linkage_reidentifications:.6f}" in text
    for argv, words in [
            (["risk", str(data["file"]), "--qi", "age,nope", "--engine", "duckdb"],
             "unknown quasi-identifier column(s): nope"),
            (["risk", str(data["file"]), "--qi", "age", "--memory-limit", "1GB"],
             "go with --engine duckdb"),
            (["risk", str(tmp_path / "none.parquet"), "--qi", "age", "--engine", "duckdb"],
             "no such file"),
            (["risk", str(data["file"]), "--qi", "age", "--engine", "duckdb",
              "--memory-limit", "lots"], "DuckDB setting refused"),
            (["compare", str(orig), str(out), "--engine", "duckdb", "--qi", "age,rent",
              "--recipe", str(recipe)], "pandas engine only")]:
        assert main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and words in err, err


def test_risk_is_the_same_bit_for_bit_whatever_the_threads(data: dict[str, Path]) -> None:
    """Classes are finished in key order, so float sums do not depend on the engine's order."""
    results = []
    for threads in (1, 7, 7):
        engine = open_engine("duckdb", EngineOptions(threads=threads))
        try:
            results.append(jobs.risk(engine, data["parts"], QI, weight="weight", alpha=0.5))
        finally:
            engine.close()
    assert results[0] == results[1] == results[2]


@pytest.mark.parametrize("name", ["duckdb", "spark"])
def test_household_risk_equals_pandas(name: str, request: pytest.FixtureRequest,
                                      tmp_path: Path) -> None:
    """``--household`` on an engine: the (household, keys) counts combined as the pandas path
    does give the same figures (1e-9) and each record its household's risk (1e-12)."""
    from sdc_core.risk.household import composition_uniques, household_risk

    source = DATA / "testdata.csv"
    df = pd.read_csv(source)
    keys = ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"]
    engine = engine_for(name, 3, request)
    try:
        out = jobs.risk(engine, source, keys, weight="sampling_weight",
                        records=tmp_path / "r.parquet", household="ori_hid")
    finally:
        engine.close()
    want = household_risk(df, keys, "ori_hid", weight="sampling_weight")
    assert out["households"] == want.n_households
    assert out["household_expected_reidentifications"] == pytest.approx(
        want.expected_reidentifications, rel=1e-9)
    assert out["household_risk_pct"] == pytest.approx(want.risk_percent, rel=1e-9)
    assert out["household_composition_uniques"] == composition_uniques(df, keys, "ori_hid")
    rec = read_output(tmp_path / "r.parquet")
    np.testing.assert_allclose(rec["household_risk"], want.risk, rtol=1e-12)


#: One step of every method on :func:`make_table`'s columns (issue 52): a method the registry
#: declares and this does not fails :func:`test_every_method_runs_on_duckdb_or_is_refused`.
ONE_STEP = {
    "band": {"column": "age", "width": 10},
    "top_bottom_code": {"column": "debt", "top_percentile": 95, "bottom": 500},
    "recode": {"column": "occupation", "min_count": 30},
    "pram": {"column": "region", "p": 0.3},
    "relabel": {"column": "tenure", "alpha": 0.3},
    "record_swap": {"hierarchy": ["region"], "similar": [["hhsize"]], "swap_rate": 0.1},
    "rank_swap": {"column": "moved", "window_percent": 5},
    "noise": {"columns": ["savings", "spend"], "kind": "correlated", "p": 30},
    "microaggregation": {"columns": ["rent", "savings"], "k": 3},
    "randomized_response": {"column": "smoker", "keep_probability": 0.6},
    "local_suppression": {"columns": ["sex", "hhsize", "tenure"], "k": 3},
    "drop": {"columns": ["note"]},
    "synthesize": {"min_leaf": 5},
}


def test_every_method_runs_on_duckdb_or_is_refused(tmp_path: Path) -> None:
    """Issue 52: every method of the registry, as its ``engine`` declares, either runs on
    DuckDB (3 batches) to the pandas reference's output value for value, or is refused with
    its declared reason; its release keeps the original's rows when it says so. Spark runs
    the same kinds of step in :func:`test_apply_equals_pandas`, whose recipe names every
    method the engines run (checked here too)."""
    assert set(ONE_STEP) == set(registry()), "give every method a step in ONE_STEP"
    run_on_engines = {m for m, spec in registry().items()
                      if spec.engine is not EngineRun.PANDAS_ONLY}
    assert run_on_engines == {s["method"] for s in RECIPE["steps"]}
    df = make_table(300)
    source = tmp_path / "small.parquet"
    df.to_parquet(source, index=False)
    engine = open_engine("duckdb", EngineOptions(partitions=3))
    try:
        for name, spec in registry().items():
            step = {"method": name, **ONE_STEP[name]}
            household = "pid" if spec.extra.get("household") else None
            recipe = parse_recipe({"seed": 7, "household": household, "steps": [step]})
            ref = apply_recipe(recipe, df).data
            if spec.keeps_rows:
                assert ref.index.equals(df.index), name
                kept = [c for c in ref.columns if c not in step_columns(recipe.steps[0])]
                assert equal_columns(df[kept], ref[kept]) == [], name
            changed = equal_columns(df[ref.columns], ref) or list(
                df.columns.difference(ref.columns))
            assert changed, f"{name}'s step changes nothing: the comparison could not fail"
            out = tmp_path / f"{name}.parquet"
            if spec.engine is EngineRun.PANDAS_ONLY:
                said = (f"step 1 ({name}) runs on the pandas engine only: "
                        f"{spec.engine_reason}; run it with --engine pandas")
                with pytest.raises(SdcInputError) as refused:
                    check_engine_step(0, recipe.steps[0], "duckdb")
                assert str(refused.value).startswith(said)
                with pytest.raises(SdcInputError, match="pandas engine only") as refused:
                    jobs.apply(engine, source, recipe, out)
                assert household is not None or str(refused.value).startswith(said)
                continue
            jobs.apply(engine, source, recipe, out)
            assert equal_columns(ref, read_output(out)) == [], name
    finally:
        engine.close()


def test_engine_declarations_have_their_engine_code() -> None:
    """Every ``whole_column`` method has the engine's computation of its figures and every
    ``whole_table`` method its run on the whole table, and no other method has one; a
    ``pandas_only`` method gives its reason, the others none (issue 52)."""
    declared = {run: {m for m, spec in registry().items() if spec.engine is run}
                for run in EngineRun}
    assert set(jobs.WHOLE_COLUMN) == declared[EngineRun.WHOLE_COLUMN]
    assert set(jobs.WHOLE_TABLE) == declared[EngineRun.WHOLE_TABLE]
    assert declared[EngineRun.PANDAS_ONLY] == {"local_suppression", "record_swap", "synthesize"}
    for spec in registry().values():
        assert bool(spec.engine_reason) == (spec.engine is EngineRun.PANDAS_ONLY), spec.name
    with pytest.raises(ValueError, match="engine_reason"):
        replace(registry()["pram"], engine=EngineRun.PANDAS_ONLY)
    with pytest.raises(ValueError, match="engine_reason"):
        replace(registry()["pram"], engine_reason="it is slow")
    with pytest.raises(ValueError, match="EngineRun"):
        replace(registry()["pram"], engine="levels")


def test_pandas_only_refusals_keep_their_words() -> None:
    """The engines' refusals of local suppression and record swapping, word for word as the
    command line has always given them."""
    for method, reason in [
            ("local_suppression",
             "it suppresses record by record, each choice depending on the last"),
            ("record_swap", "it pairs households across the whole table")]:
        with pytest.raises(SdcInputError) as refused:
            check_engine_step(2, {"method": method, "columns": ["a"]}, "spark")
        assert str(refused.value) == (
            f"step 3 ({method}) runs on the pandas engine only: {reason}; run it with "
            "--engine pandas (on a sample if the file is large)")
    check_engine_step(0, {"method": "pram", "column": "a", "p": 0.1}, "duckdb")


@pytest.mark.parametrize("name", ["duckdb", "spark"])
def test_noise_refuses_an_infinite_value_as_pandas_does(name: str, request: pytest.FixtureRequest,
                                                       tmp_path: Path) -> None:
    """An infinite value after the rows a step is tried on is refused with the reference's
    words, the step named, for each kind of noise; one noise step or two in a pass (their
    figures computed side by side)."""
    df = pd.DataFrame({"a": np.r_[np.arange(200.0), np.inf], "b": np.arange(201.0),
                       "c": np.r_[np.arange(200.0), -np.inf]})
    source = tmp_path / "inf.parquet"
    df.to_parquet(source, index=False)
    engine = engine_for(name, 3, request)
    try:
        for steps in ([{"method": "noise", "columns": ["a"], "p": 10}],
                      [{"method": "noise", "columns": ["b", "c"], "p": 10,
                        "kind": "correlated"}],
                      [{"method": "noise", "columns": ["b"], "p": 10},
                       {"method": "noise", "columns": ["a"], "p": 10}]):
            recipe = parse_recipe({"seed": 1, "steps": steps})
            with pytest.raises(SdcInputError) as expected:
                apply_recipe(recipe, df)
            with pytest.raises(SdcInputError) as refused:
                jobs.apply(engine, source, recipe, tmp_path / "out.parquet")
            assert str(refused.value) == str(expected.value), steps
            assert "holds infinite values" in str(refused.value)
    finally:
        engine.close()
