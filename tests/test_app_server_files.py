"""AppTest of opening a file on the server (SDC_DATA_DIR): listing, refusal of paths outside
the directory, the sample and its labels, the whole file's risk, and the Export command."""

import shlex

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from sdc_core.data.io import read_table
from sdc_core.engines import EngineOptions, jobs, open_engine
from tests.apptest import app_test, tiles
from tests.child_probe import PEAK
from tests.conftest import ROOT, plain
from ui import server_files
from ui.logic.protect import ProtectSettings

N = 5000
LIMIT = 1000
QI = ["age", "sex", "region"]


def table(n: int, seed: int) -> pd.DataFrame:
    r = np.random.default_rng(seed)
    return pd.DataFrame({"age": r.integers(18, 90, n), "sex": r.choice(["F", "M"], n),
                         "region": r.choice([f"r{i}" for i in range(12)], n),
                         "w": r.uniform(1.0, 3.0, n).round(2),
                         "income": r.normal(3000.0, 800.0, n).round(1)})


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """The operator's directory (its name has a space, to check the command's quoting), with a
    file of 5,000 records, a directory of two parts, a small CSV, things that are not listed,
    and a file outside it."""
    base = tmp_path_factory.mktemp("server")
    root = base / "server data"
    root.mkdir()
    table(N, 1).to_parquet(root / "census.parquet")
    (root / "parts").mkdir()
    table(600, 2).to_parquet(root / "parts" / "part-0.parquet")
    table(400, 3).to_parquet(root / "parts" / "part-1.parquet")
    table(300, 4).to_csv(root / "small.csv", index=False)
    (root / "readme.md").write_text("not data")
    (root / ".hidden.parquet").write_bytes((root / "census.parquet").read_bytes())
    (root / "empty_dir").mkdir()
    table(50, 5).to_parquet(base / "secret.parquet")
    (root / "link.parquet").symlink_to(base / "secret.parquet")
    (root / "inside_link.parquet").symlink_to(root / "census.parquet")
    (root / "mixed").mkdir()  # a directory of parts, one of them a link that leads outside
    table(60, 6).to_parquet(root / "mixed" / "part-0.parquet")
    (root / "mixed" / "part-1.parquet").symlink_to(base / "secret.parquet")
    return root


@pytest.fixture
def root(files, monkeypatch):
    monkeypatch.setenv(server_files.ENV_VAR, str(files))
    monkeypatch.setattr(server_files, "SAMPLE_LIMIT", LIMIT)
    return files


def app() -> AppTest:
    at = app_test(timeout=60).run()
    assert not at.exception
    return at


def open_on_server(at: AppTest, name: str, typed: bool = False, seed: int = 0) -> AppTest:
    if typed:
        at.text_input(key="srv_path").set_value(name)
    else:
        at.selectbox(key="srv_pick").set_value(name)
    at.number_input(key="srv_seed").set_value(seed)
    at.button(key="srv_open").click().run()
    assert not at.exception
    return at


def test_the_option_is_hidden_without_the_variable(monkeypatch):
    monkeypatch.delenv(server_files.ENV_VAR, raising=False)
    at = app()
    assert "Open a file on the server" not in [e.label for e in at.expander]
    assert "srv_open" not in [b.key for b in at.button]
    assert "srv_pick" not in [s.key for s in at.selectbox]


def test_the_directory_is_listed(root):
    at = app()
    assert "Open a file on the server" in [e.label for e in at.expander]
    # no hidden file, no other format, no empty directory, no link that leads outside
    assert at.selectbox(key="srv_pick").options == ["census.parquet", "inside_link.parquet",
                                                    "mixed/", "parts/", "small.csv"]


def test_a_large_file_opens_as_a_labelled_sample(root):
    at = open_on_server(app(), "census.parquet")
    assert not at.error
    name = f"census.parquet — sample of {LIMIT:,} of {N:,} records (seed 0)"
    assert plain(at.subheader[0].value) == name
    assert tiles(at)[0].label == "Records in the sample" and tiles(at)[0].value == "1,000"
    assert "This is a sample: 1,000 of the 5,000 records" in at.info[0].value
    assert at.sidebar.markdown[0].value == f"**{server_files.md(name)}**"
    assert any("A sample" in c.value and "1,000 of the 5,000 records" in c.value
               for c in at.sidebar.caption)
    ds = at.session_state["dataset"]
    assert ds.source.path == (root / "census.parquet").resolve()
    assert (ds.source.total, ds.source.sampled, ds.source.seed) == (N, LIMIT, 0)
    # the sample is the rows whose position hash is among the 1,000 smallest, in file order
    whole = read_table(root / "census.parquet")
    picked = server_files.sample_positions(N, LIMIT, 0)
    pd.testing.assert_frame_equal(ds.df, whole.iloc[picked].reset_index(drop=True))


def test_the_sample_is_a_function_of_file_and_seed(monkeypatch):
    first = server_files.sample_positions(N, LIMIT, 0)
    assert len(first) == LIMIT and len(np.unique(first)) == LIMIT
    assert np.all(np.diff(first) > 0) and first[-1] < N
    monkeypatch.setattr(server_files, "_CHUNK", 7)  # hashed in other chunks: the same records
    np.testing.assert_array_equal(server_files.sample_positions(N, LIMIT, 0), first)
    assert not np.array_equal(server_files.sample_positions(N, LIMIT, 1), first)
    np.testing.assert_array_equal(server_files.sample_positions(300, LIMIT, 0), np.arange(300))


def test_another_seed_gives_another_sample(root):
    at = open_on_server(app(), "census.parquet", seed=7)
    ds = at.session_state["dataset"]
    assert ds.name.endswith("(seed 7)")
    whole = read_table(root / "census.parquet")
    picked = server_files.sample_positions(N, LIMIT, 7)
    pd.testing.assert_frame_equal(ds.df, whole.iloc[picked].reset_index(drop=True))


def test_a_small_file_is_read_whole(root):
    at = open_on_server(app(), "small.csv")
    ds = at.session_state["dataset"]
    assert ds.name == "small.csv" and not ds.source.is_sample
    assert tiles(at)[0].label == "Records" and tiles(at)[0].value == "300"
    assert not at.info and not any("A sample" in c.value for c in at.sidebar.caption)
    pd.testing.assert_frame_equal(ds.df, read_table(root / "small.csv"))


def test_a_directory_of_parts_and_a_typed_path(root):
    at = open_on_server(app(), "parts", typed=True)
    ds = at.session_state["dataset"]
    assert ds.name == "parts/" and ds.source.total == 1000 and len(ds.df) == 1000
    at = open_on_server(app(), "parts/part-1.parquet", typed=True)
    assert at.session_state["dataset"].name == "part-1.parquet"


@pytest.mark.parametrize("path", ["../secret.parquet", "link.parquet", "parts/../../secret.parquet",
                                  "{outside}"])
def test_a_path_outside_the_directory_is_refused(root, path):
    path = path.format(outside=root.parent / "secret.parquet")
    at = open_on_server(app(), path, typed=True)
    assert len(at.error) == 1
    assert "leads outside the server's data directory" in at.error[0].value
    assert at.session_state["dataset"].is_example  # the example is still there
    assert tiles(at)[0].value == "2,139"


def test_a_directory_with_a_part_outside_is_refused(root):
    at = open_on_server(app(), "mixed/")
    assert len(at.error) == 1
    assert "its part part-1.parquet leads outside" in plain(at.error[0].value)
    assert at.session_state["dataset"].is_example


def test_a_link_that_stays_inside_opens(root):
    at = open_on_server(app(), "inside_link.parquet")
    assert not at.error
    assert at.session_state["dataset"].source.path == (root / "census.parquet").resolve()


def test_a_missing_file_is_an_error(root):
    at = open_on_server(app(), "nothing.parquet", typed=True)
    assert len(at.error) == 1 and "no such file or directory" in at.error[0].value


def test_duckdb_runs_under_a_memory_limit_the_operator_can_set(root, monkeypatch):
    """The server's DuckDB gets a memory limit (2GB unless the operator sets another); a
    setting DuckDB refuses is an error on the page, and the current data set stays."""
    assert server_files._engine_options().memory_limit == "2GB"
    monkeypatch.setenv("SDC_DUCKDB_MEMORY_LIMIT", "lots")
    at = open_on_server(app(), "census.parquet")
    assert len(at.error) == 1 and "DuckDB setting refused" in at.error[0].value
    assert "census.parquet" not in at.sidebar.markdown[0].value


def test_a_file_beyond_the_memory_budget_is_refused(root, monkeypatch):
    monkeypatch.setenv("SDC_MEMORY_BUDGET", "1kB")
    at = open_on_server(app(), "census.parquet")
    assert len(at.error) == 1
    assert "memory budget of 1.0 kB" in plain(at.error[0].value)  # (beside the examples)
    assert at.session_state["dataset"].is_example


def figures(at: AppTest) -> pd.DataFrame:
    return next(d.value for d in at.dataframe if "whole file" in d.value.columns)


def test_the_risk_of_the_whole_file_equals_the_engine_job(root):
    at = open_on_server(app(), "census.parquet")
    at.multiselect(key="w_qi").set_value(QI).run()
    at.selectbox(key="w_weight").set_value(None).run()
    before = figures(at)
    assert set(before["whole file"]) == {"not computed yet"}
    assert before["sample"][0] == "1,000"
    at.button(key="srv_risk").click().run()
    assert not at.exception and not at.error
    engine = open_engine("duckdb", EngineOptions())
    try:
        expected = jobs.risk(engine, root / "census.parquet", QI, k=5)
    finally:
        engine.close()
    assert at.session_state["whole_file_risk"]["result"] == expected
    shown = figures(at).set_index("measure")
    assert shown.loc["Records", "whole file"] == "5,000"
    assert shown.loc["Equivalence classes", "whole file"] == f"{expected['n_classes']:,}"
    assert shown.loc["Unique records", "whole file"] == f"{expected['percent_unique']:.2f} %"
    assert shown.loc["Global risk", "whole file"] == \
        f"{expected['global_risk_percent']:.2f} %"
    assert shown.loc["Records in classes ≤ 5", "sample"].endswith(" %")
    # the figures stay on a rerun, and go when the roles change
    at.run()
    assert figures(at).set_index("measure").loc["Records", "whole file"] == "5,000"
    at.multiselect(key="w_qi").set_value(["age", "sex"]).run()
    assert set(figures(at)["whole file"]) == {"not computed yet"}


def test_the_whole_file_risk_with_a_weight(root):
    at = open_on_server(app(), "parts/", seed=3)
    at.multiselect(key="w_qi").set_value(["sex", "region"]).run()
    at.selectbox(key="w_weight").set_value("w").run()
    at.button(key="srv_risk").click().run()
    engine = open_engine("duckdb", EngineOptions())
    try:
        expected = jobs.risk(engine, root / "parts", ["sex", "region"], weight="w", k=5)
    finally:
        engine.close()
    assert at.session_state["whole_file_risk"]["result"] == expected


def test_a_file_changed_since_it_was_opened_is_flagged(root, tmp_path, monkeypatch):
    data = tmp_path / "data"
    data.mkdir()
    table(200, 9).to_parquet(data / "t.parquet")
    monkeypatch.setenv(server_files.ENV_VAR, str(data))
    at = open_on_server(app(), "t.parquet")
    at.multiselect(key="w_qi").set_value(["sex"]).run()
    assert not at.warning
    table(210, 9).to_parquet(data / "t.parquet")
    at.run()
    assert any("has changed on the server since it was opened" in w.value for w in at.warning)


def test_export_shows_the_command_that_protects_the_whole_file(root):
    at = open_on_server(app(), "census.parquet")
    at.switch_page("views/export.py").run()
    assert not at.exception
    path = (root / "census.parquet").resolve()
    assert " " in str(path)  # so the path is quoted
    assert at.main.code[0].value == (
        f"python -m sdc_core apply {shlex.quote(str(path))} --recipe census_recipe.json -o "
        "census_protected.parquet --engine duckdb")
    assert "The protected data downloaded here is the sample's" in at.info[0].value
    assert "No protection is set yet" in at.info[1].value
    assert any("protected sample (1,000 records), not the whole file" in c.value
               for c in at.caption)
    assert "Save the recipe above as `census_recipe.json`" in at.markdown[0].value


def test_export_names_a_step_the_engine_refuses(root):
    at = open_on_server(app(), "census.parquet")
    at.multiselect(key="w_qi").set_value(QI).run()
    at.session_state["protect"] = ProtectSettings(values={"local_suppression": {"k": 3}})
    at.switch_page("views/export.py").run()
    assert not at.exception
    assert any("refuse this recipe" in plain(w.value) and "local_suppression" in plain(w.value)
               for w in at.warning)


def test_nothing_is_offered_for_an_upload(root):
    at = app()
    at.switch_page("views/export.py").run()
    assert not at.main.code  # the example: no server command (the sidebar has the link)


def test_the_decoded_size_is_what_pandas_takes(tmp_path):
    """:func:`server_files.decoded_size` (DuckDB's sums, before anything is read) against the
    table pandas holds after the read: within the per-value bookkeeping (a null mask)."""
    import duckdb

    rng = np.random.default_rng(39)
    df = pd.DataFrame({"name": [f"n{'x' * int(k)}" for k in rng.integers(0, 40, 5000)],
                       "age": rng.integers(0, 90, 5000), "w": rng.random(5000)})
    df.loc[::7, "name"] = None
    df.to_parquet(tmp_path / "t.parquet")
    con = duckdb.connect()
    query = f"SELECT * FROM read_parquet('{tmp_path / 't.parquet'}')"
    need = server_files.decoded_size(con, query, 65_536)
    held = con.sql(query).to_arrow_table().to_pandas().memory_usage(deep=True, index=False).sum()
    assert abs(need - held) <= 0.05 * held, (need, held)
    with pytest.raises(server_files.SdcInputError, match="a text value of 40 characters"):
        server_files.decoded_size(con, query, 39)


_BOMB_PROBE = """
import json, resource, sys
sys.path.insert(0, {root!r})
from pathlib import Path
from ui import server_files
from sdc_core.errors import SdcInputError
before = peak()
seen = []
def admit(need):
    seen.append(need)
    raise SdcInputError("refused")
try:
    server_files.read_sample(Path({path!r}), 0, server_files.SAMPLE_LIMIT, admit=admit)
except SdcInputError as err:
    message = str(err)
after = peak()
print(json.dumps({{"need": seen[0], "message": message, "grew": after - before}}))
"""


def test_a_server_file_is_admitted_before_it_is_read(tmp_path):
    """A Parquet file of a few kB whose 50,000 values of 60,000 characters take 3 GB once read:
    what it will take is computed before the read and handed to the admission, which refuses
    it; the process grows by far less than the table."""
    import json
    import subprocess
    import sys

    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "bomb.parquet"
    part = pa.table({"x": pa.array(["v" * 60_000] * 2_500)})
    with pq.ParquetWriter(path, part.schema, compression="zstd") as writer:
        for _ in range(20):
            writer.write_table(part)
    assert path.stat().st_size < 100_000
    code = PEAK + _BOMB_PROBE.format(root=str(ROOT), path=str(path))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300, check=True)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["need"] == 50_000 * (60_000 + 8)
    assert result["message"] == "refused"
    assert result["grew"] < 300_000_000, result["grew"]


def test_a_directory_of_too_many_parts_is_refused_before_any_is_opened(tmp_path, monkeypatch):
    parts = tmp_path / "parts"
    parts.mkdir()
    for i in range(server_files.MAX_PARTS + 1):
        (parts / f"p{i:05}.csv").write_text("a,b\n1,2\n")
    opened = []
    monkeypatch.setattr(server_files, "open_source", lambda p: opened.append(p))
    with pytest.raises(server_files.SdcInputError, match="more than 500 entries"):
        server_files.resolve(tmp_path, "parts")
    assert not opened
    (parts / "p00000.csv").unlink()
    monkeypatch.undo()
    assert len(server_files.open_source(server_files.resolve(tmp_path, "parts")).files) == 500


def test_a_file_swapped_for_a_link_while_it_is_read_is_refused(tmp_path, monkeypatch):
    """The path is checked, then read: a file replaced by a link to one outside the data
    directory between the two is caught after the read (its path and stamp checked again) and
    nothing of it is kept."""
    root = tmp_path / "data"
    root.mkdir()
    outside = tmp_path / "secret.csv"
    outside.write_text("pin,name\n" + "".join(f"{i},n{i}\n" for i in range(50)))
    table(200, 1).to_csv(root / "open.csv", index=False)
    monkeypatch.setenv("SDC_DATA_DIR", str(root))
    read = server_files.read_sample

    def swapping(path, *args, **kwargs):
        out = read(path, *args, **kwargs)
        (root / "open.csv").unlink()
        (root / "open.csv").symlink_to(outside)  # the swap, during the read
        return out

    monkeypatch.setattr(server_files, "read_sample", swapping)
    at = open_on_server(app(), "open.csv")
    said = [plain(e.value) for e in at.error]
    assert any("The file was not opened" in e and ("leads outside" in e or "changed while it "
                                                   "was read" in e) for e in said), said
    assert at.session_state["dataset"].is_example
