"""The hostile corpus: every file, recipe and grid of the probe that found 27 failures, each
through the command line (``main``, in this process) with a memory budget of 40 MB. Each ends
with exit 2 and one readable line, or is read and written with a note — never a traceback, an
internal error or a number that is silently wrong. (The page side: ``tests/test_memory.py``,
``tests/test_app_hostile_text.py``; memory while refusing: ``tests/test_decoded.py``.)"""

from __future__ import annotations

import codecs
import io
import json

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sdc_core.cli import main
from tests.hostile_files import BOMBS, SCALES


@pytest.fixture(autouse=True)
def small_budget(monkeypatch):
    monkeypatch.setenv("SDC_MEMORY_BUDGET", "40MB")
    monkeypatch.delenv("SDC_DEBUG", raising=False)


def cli(capsys, *args) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


def refused(capsys, *args) -> str:
    """The one line of a run that must end with exit 2."""
    code, out, err = cli(capsys, *args)
    assert code == 2, err
    assert out == "" and err.count("\n") == 1 and err.startswith("sdc_core: error: ")
    assert "Traceback" not in err and "internal error" not in err
    return err.strip()


@pytest.mark.parametrize("bomb", sorted(BOMBS))
def test_every_bomb_is_one_line(tmp_path, capsys, bomb):
    name, raw = BOMBS[bomb](SCALES[bomb])
    path = tmp_path / name
    path.write_bytes(raw)
    line = refused(capsys, "risk", path, "--qi", "x")
    assert line.startswith(f"sdc_core: error: {path}: ")
    # refused by its format's bound, or stopped by the capped child's (the budget is set)
    assert ("this session may use" in line or "for one cell" in line
            or "needs more memory than this session may still use (40.0 MB)" in line)


def write(tmp_path, name: str, data: bytes):
    path = tmp_path / name
    path.write_bytes(data)
    return path


def test_files_that_read_wrong_before(tmp_path, capsys):
    # UTF-16 and UTF-32 by their byte-order mark: read, not garbage
    text = "région,n\nÎle,1\nÎle,2\nNord,3\n"
    for bom, codec in ((codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF32_BE, "utf-32-be")):
        path = write(tmp_path, "u.csv", bom + text.encode(codec))
        code, out, err = cli(capsys, "risk", path, "--qi", "région", "--json")
        assert code == 0, err
        assert json.loads(out)["n_classes"] == 2
    # UTF-8 and Latin-1 in one file: refused with the line where it changes
    mixed = "city\n" + "Zürich\n" * 6 + "x\n"
    path = write(tmp_path, "m.csv", mixed.encode() + "Zürich\n".encode("latin-1"))
    assert "mixes encodings: it is UTF-8 up to line 9" in refused(capsys, "risk", path,
                                                                   "--qi", "city")
    # nested Parquet columns
    buf = io.BytesIO()
    pq.write_table(pa.table({"a": [[1, 2], [3]], "b": [1, 2]}), buf)
    path = write(tmp_path, "n.parquet", buf.getvalue())
    assert "hold nested values" in refused(capsys, "risk", path, "--qi", "b")
    # weights that overflow
    path = write(tmp_path, "w.csv", b"age,w\n30,1e308\n40,1e308\n")
    assert "sums beyond the range" in refused(capsys, "risk", path, "--qi", "age",
                                              "--weight", "w")


def test_exports_carry_no_formula_and_say_what_changed(tmp_path, capsys):
    df = pd.DataFrame({"=1+1": ["=HYPERLINK(\"http://x\")", "a\x01b"],
                       "c": pd.Categorical(["@SUM(A1)", "+1"])})
    buf = io.BytesIO()
    df.to_parquet(buf)
    data = write(tmp_path, "h.parquet", buf.getvalue())
    recipe = write(tmp_path, "r.json", b'{"seed": 1, "steps": []}')
    for ext in (".csv", ".xlsx"):
        code, _, err = cli(capsys, "apply", data, "--recipe", recipe, "--out",
                           tmp_path / f"o{ext}")
        assert code == 0, err
        assert "sdc_core: note:" in err and "leading apostrophe" in err
        back = pd.read_csv(tmp_path / "o.csv") if ext == ".csv" else pd.read_excel(
            tmp_path / "o.xlsx")
        assert list(back.columns) == ["'=1+1", "c"]
        assert not any(str(v).startswith(("=", "+", "@")) for v in back.to_numpy().ravel())


@pytest.mark.parametrize(("recipe", "message"), [
    ('{"seed": 1, "steps": [{"method": "pram", "column": "a", "p": -0.5}]}',
     "p must lie in [0, 1], not -0.5"),
    ('{"seed": 1, "steps": [{"method": "noise", "columns": ["n"], "kind": "additive", '
     '"p": 1e308}]}', "too large for floating"),
    ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    ('{"seed": ' + "9" * 5000 + ', "steps": []}', "more than 4,300 digits"),
    ('{"seed": 18446744073709551616, "steps": []}', "seed must be a whole number from 0 to"),
])
def test_hostile_recipes_are_one_line(tmp_path, capsys, recipe, message):
    data = write(tmp_path, "d.csv", b"a,n\nx,1\ny,2\nx,3\n")
    path = write(tmp_path, "r.json", recipe.encode())
    assert message in refused(capsys, "apply", data, "--recipe", path, "--out",
                              tmp_path / "o.csv")


@pytest.mark.parametrize(("grid", "message"), [
    ({"seeds": 1_000_000, "settings": []}, "seeds must be a whole number from 1 to 100"),
    ({"max_settings": 10**9, "settings": []}, "max_settings must be a whole number from 1 to"),
])
def test_hostile_grids_are_one_line(tmp_path, capsys, grid, message):
    data = write(tmp_path, "d.csv", b"a,n\nx,1\ny,2\nx,3\n")
    path = write(tmp_path, "g.json", json.dumps(grid).encode())
    assert message in refused(capsys, "sweep", data, "--grid", path, "--qi", "a", "--output",
                              tmp_path / "s.csv")
