"""What a visitor supplies, kept in its place (the audit of docs/deploying.md, "What user input
can reach"): each test failed before its fix.

- Markdown of cell values and column names on the Tables page, in the Protect page's
  merge controls and in the sweep's progress text is shown as text, never as an image (which
  the browser would fetch) or a link.
- Recipe files, workspace files and links built to hurt end with one line (an
  :class:`SdcInputError`): a method that is a list or an object, nesting deeper than Python's
  parser goes, a number of thousands of digits; a recipe file larger than the Protect page reads
  is refused before it is parsed (JSON takes about twenty times its size in memory).
- Figures exported on the server load no script from the internet (Kaleido's default page
  fetched MathJax from a CDN).
- A server file or a command-line source whose columns bear the engines' own names is refused
  (a ``__pos`` column was read as the records' positions).
"""

from __future__ import annotations

import base64
import json
import zlib
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from streamlit.delta_generator import DeltaGenerator
from streamlit.testing.v1 import AppTest

from sdc_core.engines.source import open_source
from sdc_core.errors import SdcInputError
from sdc_core.recipe import load_recipe
from tests.apptest import app_test

IMAGE = "![t](http://127.0.0.1:9/x.png)"


def markdown_leaks(texts: list[str]) -> list[str]:
    """The texts holding the image unescaped (an escaped one has ``\\]\\(``)."""
    return [t for t in texts if "](" in t or "![" in t]


def upload(at: AppTest, rows: list[str]) -> None:
    at.file_uploader(key="uploader").set_value(
        ("t.csv", ("\n".join(rows) + "\n").encode(), "text/csv")).run()
    assert not at.exception


# -- Markdown -------------------------------------------------------------------------------


def test_response_table_options_and_findings_stay_text():
    """A hidden option's label (a cell value) was Markdown in the audit's verdict and in the
    findings of the naive table."""
    at = app_test().run()
    upload(at, ["q,other"] + [f"a,{i}" for i in range(30)] + [f"{IMAGE},x"] * 2 + ["b,y"] * 6)
    at.switch_page("views/tables.py").run()
    at.multiselect(key="w_tables_questions_Current").set_value(["q"]).run()
    assert not at.exception
    shown = [e.value for kind in ("markdown", "success", "error") for e in getattr(at, kind)]
    assert any("127\\.0\\.0\\.1" in t for t in shown)  # the option is named, escaped
    assert not markdown_leaks(shown)


def test_merge_controls_quote_the_column_name_as_text():
    """The collapsed labels of a merge's level and label fields held the column name as
    Markdown (a collapsed label is still drawn, hidden)."""
    at = app_test().run()
    upload(at, [f"age,sex,{IMAGE}"] + [f"{20 + i % 5},{'m' if i % 3 else 'f'},"
                                       f"{'a' if i % 2 else 'b'}" for i in range(40)])
    at.multiselect(key="w_qi").set_value(["age", "sex", IMAGE]).run()
    at.switch_page("views/protect.py").run()
    at.multiselect(key="w_p_recode_cols").set_value([IMAGE]).run()
    assert not at.exception
    labels = [w.label for w in [*at.multiselect, *at.text_input]]
    assert any(label.startswith("Levels of ") for label in labels)
    assert not markdown_leaks(labels)


def test_the_sweep_progress_text_quotes_the_setting_as_text(monkeypatch):
    """The progress bar's text (Markdown) named the setting being run with its column as
    written."""
    import ui.infra.workers

    texts: list[str] = []
    original = DeltaGenerator.progress

    def recorded(self, value, text=None, **kwargs):
        texts.append(text or "")
        return original(self, value, text, **kwargs)

    def one_report(fn, *args, progress=None, **kwargs):
        progress(1, 2, f"band {IMAGE} width=5")
        raise SdcInputError("stopped here")

    monkeypatch.setattr(DeltaGenerator, "progress", recorded)
    monkeypatch.setattr(ui.infra.workers, "run", one_report)
    at = app_test().run()
    at.switch_page("views/tradeoffs.py").run()
    next(b for b in at.button if "Run the sweep" in (b.label or "")).click().run()
    assert not at.exception
    assert any("127\\.0\\.0\\.1" in t for t in texts)
    assert not markdown_leaks(texts)


@pytest.mark.parametrize("delimiter", [".;", "((", "|+"])
def test_a_multi_select_delimiter_is_text_not_a_pattern(delimiter):
    """A delimiter of two or three characters (the Tables page takes up to three)
    was a regular expression: ".;" split at any character before a ";", and "((" raised
    re.error."""
    from sdc_core.tables.responses import question_counts

    df = pd.DataFrame({"q": [f"a.b{delimiter}c", "a.b;c|d", "c"]})
    _, counts, responses = question_counts(df, "q", True, delimiter)
    assert counts == {"a.b": 1, "a.b;c|d": 1, "c": 2} and responses == 3


# -- JSON a visitor uploads or links --------------------------------------------------------


DEEP = "[" * 50_000 + "]" * 50_000
BIG = "9" * 5_000


def link(payload: str) -> str:
    return base64.urlsafe_b64encode(zlib.compress(payload.encode(), 9)).decode().rstrip("=")


@pytest.mark.parametrize("method", ["[]", "{}"])
def test_a_method_that_is_no_name_is_refused_in_a_recipe_a_workspace_and_a_link(method):
    from ui import links
    from ui.logic import workspace

    steps = '[{"method": %s, "column": "a"}]' % method
    with pytest.raises(SdcInputError, match="unknown method"):
        load_recipe('{"seed": 1, "steps": %s}' % steps)
    with pytest.raises(SdcInputError, match="unknown method"):
        workspace.read('{"workspace": 1, "recipe": {"seed": 1, "steps": %s}}' % steps, ["a"])
    with pytest.raises(SdcInputError, match="unknown method"):
        links.decode_recipe(link('{"seed": 1, "steps": %s}' % steps))


@pytest.mark.parametrize("text, words", [
    (DEEP, "nested too deeply"),
    ('{"workspace": 1, "roles": {"qi": %s}}' % DEEP, "nested too deeply"),
    ('{"workspace": 1, "risk": {"k": %s}}' % BIG, "more than 4,300 digits"),
])
def test_a_workspace_built_to_hurt_is_refused_with_one_line(text, words):
    from ui.logic import workspace

    with pytest.raises(SdcInputError, match=words):
        workspace.read(text, ["a"])


@pytest.mark.parametrize("payload", ["[" * 30_000 + "]" * 30_000,
                                     '{"seed": %s, "steps": []}' % BIG])
def test_a_link_built_to_hurt_is_refused_with_one_line(payload):
    from ui import links

    assert len(payload) < 100_000  # within what a link may unpack to
    with pytest.raises(SdcInputError, match="cannot be read"):
        links.decode_recipe(link(payload))


def test_a_recipe_file_larger_than_the_page_reads_is_refused_before_it_is_parsed(monkeypatch):
    import sdc_core.recipe
    from sdc_core.checks import MAX_JSON_BYTES as MAX_RECIPE_BYTES
    from ui.logic.protect import read_recipe_file

    good = json.dumps({"seed": 3, "steps": [{"method": "band", "column": "age", "width": 5}]})
    assert read_recipe_file(good.encode()).seed == 3
    huge = ('{"seed": 1, "steps": [' + ",".join(["[]"] * (MAX_RECIPE_BYTES // 3)) + "]}")
    monkeypatch.setattr(sdc_core.recipe, "parse_json", lambda *_: pytest.fail("parsed"))
    with pytest.raises(SdcInputError, match="larger than 2 MB"):
        read_recipe_file(huge.encode())


def test_the_protect_page_refuses_a_recipe_file_too_large_to_read():
    at = app_test().run()
    at.switch_page("views/protect.py").run()
    huge = b'{"seed": 1, "steps": [' + b",".join([b"[]"] * 1_000_000) + b"]}"
    at.file_uploader(key="recipe_upload").set_value(("r.json", huge, "application/json")).run()
    assert not at.exception
    assert any("larger than 2 MB" in e.value for e in at.error)


# -- figures exported on the server -----------------------------------------------------------


def test_figure_export_loads_no_script_from_the_internet(monkeypatch):
    """Kaleido's default page loads MathJax from a CDN; the export's page must load only
    local files."""
    import kaleido
    import plotly.graph_objects as go

    import ui.logic.figure_export as export

    asked: list[dict] = []

    def calc_fig_sync(fig, opts=None, *, topojson=None, kopts=None):
        asked.append(dict(kopts or {}))
        return b"\x89PNG"

    monkeypatch.setattr(export, "chromium", lambda: "/usr/bin/chromium")
    monkeypatch.setattr(kaleido, "calc_fig_sync", calc_fig_sync)
    fig = go.Figure(go.Bar(x=["$x$"], y=[1]))
    assert export.figure_bytes(fig, "png", 600, "note") == b"\x89PNG"
    (kopts,) = asked
    page = kaleido.PageGenerator(plotly=kopts.get("plotlyjs"),
                                 mathjax=kopts.get("mathjax")).generate_index()
    sources = [line for line in page.splitlines() if "<script src=" in line]
    assert sources and not [s for s in sources if "http" in s.lower()]


# -- the engines' own column names ----------------------------------------------------------


@pytest.mark.parametrize("name", ["__pos", "__rid", "__file", "file_row_number"])
@pytest.mark.parametrize("ext", ["parquet", "csv"])
def test_a_source_with_a_column_of_the_engines_own_names_is_refused(tmp_path: Path, name, ext):
    """A Parquet column ``__pos`` was read as the records' positions (the server file's sample
    came out empty or reordered); a CSV column ``__file`` was silently left out."""
    df = pd.DataFrame({name: [100, 7, 5], "x": ["a", "b", "c"]})
    path = tmp_path / f"t.{ext}"
    if ext == "parquet":
        pq.write_table(pa.Table.from_pandas(df, preserve_index=False), path)
    else:
        df.to_csv(path, index=False)
    with pytest.raises(SdcInputError, match=f"rename the file's column\\(s\\) {name}"):
        open_source(path)


def test_a_server_file_named_like_a_pattern_reads_no_file_outside_the_directory(tmp_path: Path):
    """DuckDB reads a path as a glob: a file ``x*.csv`` in the data directory was read with
    ``xlink.csv`` beside it, a link to a file outside the directory that the path checks
    refuse by name."""
    from ui import server_files

    root, outside = tmp_path / "data", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (root / "x*.csv").write_text("a,b\n1,2\n")
    (outside / "secret.csv").write_text("a,b\n9,secret\n")
    (root / "xlink.csv").symlink_to(outside / "secret.csv")
    with pytest.raises(SdcInputError, match="pattern of file names"):
        path = server_files.resolve(root.resolve(), "x*.csv")
        df, _ = server_files.read_sample(path, 1, 100)
        assert "secret" not in df["b"].astype(str).tolist()


def test_a_server_file_with_a_position_column_is_not_opened(tmp_path: Path):
    from ui import server_files

    df = pd.DataFrame({"__pos": [100, 7, 5, 5], "x": ["a", "b", "c", "d"]})
    pq.write_table(pa.Table.from_pandas(df, preserve_index=False), tmp_path / "p.parquet")
    with pytest.raises(SdcInputError, match="engines' own"):
        server_files.resolve(tmp_path.resolve(), "p.parquet")


def test_duckdb_fetches_and_loads_no_extension_by_itself():
    """Nothing leaves the machine: DuckDB's automatic install (a download) and load of known
    extensions are off in every engine connection."""
    from sdc_core.engines.duckdb_engine import DuckDBEngine

    con = DuckDBEngine().con
    settings = con.execute("SELECT current_setting('autoinstall_known_extensions'), "
                           "current_setting('autoload_known_extensions')").fetchone()
    assert settings == (False, False)
