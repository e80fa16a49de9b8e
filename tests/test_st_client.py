"""The headless protocol client of the load benchmark (bench/st_client.py) against a real
``streamlit run app.py``: it reads the pages, moves a slider, downloads and uploads."""

import csv
import io
import json

from bench.st_client import StSession
from tests.conftest import run_async


def metric(session: StSession, label: str) -> str:
    return session.metrics()[label]


async def drive(url: str) -> None:
    s = StSession(timeout=60)
    await s.connect(url)
    try:
        assert s.page == "Data"
        assert "ACTG 175 (AIDS clinical trial, 2139 patients)" in s.text()
        assert metric(s, "Records") == "2,139"
        assert s.widget("Quasi-identifiers", "multiselect").value == ["age", "gender", "race"]
        assert s.errors() == []

        await s.switch_page("Protect")
        assert s.page == "Protect"
        before = metric(s, "Linkage attack re-identifications")
        assert "No method is active" in s.text()
        seconds = await s.set_value("Band width of age", 10)  # a fragment run
        assert 0 < seconds < 30
        assert s.widget("Band width of age", "slider").value == [10.0]
        assert "No method is active" not in s.text()
        assert metric(s, "Linkage attack re-identifications") != before
        assert "Load a recipe" in s.text()  # outside the fragment: still there
        assert s.errors() == []

        await s.switch_page("export")  # by URL path
        recipe = json.loads(await s.download("Download the recipe (JSON)"))  # a media URL
        assert recipe["steps"] == [{"method": "band", "column": "age", "width": 10}]
        rows = list(csv.DictReader(io.StringIO(
            (await s.download("Download CSV")).decode())))  # deferred: made on click
        assert len(rows) == 2139 and "pidnum" not in rows[0]  # "Not released" left out
        assert len({r["age"] for r in rows}) <= 8  # banded

        await s.switch_page("Data")
        await s.upload("Upload a table", "empty.csv", b"")
        assert "empty.csv" in " ".join(s.errors())  # "The file was not loaded: …"
        await s.upload("Upload a table", "tiny.csv",
                       b"zipcode,sex,income\n1000,F,10\n1001,M,20\n1002,F,30\n")
        assert s.widget("Upload a table").value == ["tiny.csv"]
        assert "zipcode" in s.widget("Quasi-identifiers", "multiselect").proto.options
        assert metric(s, "Records") == "3" and "tiny.csv" in s.text()
        assert s.errors() == []
    finally:
        await s.close()


def test_client_reads_moves_downloads_and_uploads(app_url):
    run_async(drive(app_url))
