"""The decision pack's two documents in a real browser (docs/releases.md, "The pack"): each
opens from the file alone — no request but for the file itself, no script run — and a name
written with markup is shown as its characters."""

import json
from pathlib import Path

import pandas as pd
from playwright.sync_api import Page

from tests.cli_run import run
from tests.conftest import SHARED_DATA

EVIL = "<img src=x onerror=alert(1)>race"


def test_the_pack_s_documents_open_offline_and_show_markup_as_text(page: Page,
                                                                   tmp_path: Path):
    df = pd.read_csv(SHARED_DATA / "actg175.csv")[["age", "gender", "race", "drugs"]]
    data = tmp_path / "data.csv"
    df.rename(columns={"race": EVIL}).to_csv(data, index=False)
    recipe = tmp_path / "r.json"
    recipe.write_text(json.dumps({"version": 1, "seed": 3, "steps": [
        {"method": "band", "column": "age", "width": 10},
        {"method": "pram", "column": EVIL, "p": 0.1}]}), encoding="utf-8")
    out = tmp_path / "pack"
    r = run("pack", data, "--recipe", recipe, "--type", "suf", "--qi", f"age,gender,{EVIL}",
            "--sensitive", "drugs", "--table", f"gender,{EVIL}", "-o", out)
    assert r.returncode == 0, r.stderr
    requests: list[str] = []
    dialogs: list[str] = []
    page.on("request", lambda req: requests.append(req.url))
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    for doc in ("internal.html", "external.html"):
        url = (out / doc).as_uri()
        requests.clear()
        page.goto(url)
        page.wait_for_load_state("load")
        assert requests == [url], requests  # nothing fetched: no image, style, font or script
        assert page.evaluate("document.scripts.length") == 0
        assert page.locator("img").count() == 0  # the name's <img> is text, not an element
        assert page.get_by_text(EVIL).count() > 0
    # the board's document draws the trade-off figure inline
    page.goto((out / "internal.html").as_uri())
    assert page.locator("figure svg").count() == 1
    assert not dialogs
