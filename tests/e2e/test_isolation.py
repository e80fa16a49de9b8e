"""Isolation between browser sessions, end to end: several Chromium contexts (each one its own
Streamlit session) on one real server upload their own tables, interleaved, and every page and
every download of each session shows its own data and nothing of the others'.

The caches of ``ui.compute`` are shared by all sessions and keyed by the file's content hash and
every parameter; session state is not shared. The second test uploads byte-identical files in
three sessions (two with the same file name) with different roles: a cache keyed by content
alone would hand one session's role-dependent results (risk figures, released columns, report)
to another.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import pytest
from playwright.sync_api import Browser, Page
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from sdc_core.data.io import read_table
from sdc_core.recipe import fingerprint
from tests.e2e.conftest import (
    CEILING_SECONDS,
    follow,
    give_each,
    new_page,
    pick_options,
    ran,
    runs,
    see,
    wait_idle,
)

pytestmark = pytest.mark.e2e

#: Every page of the app (app.py's st.navigation) and the heading it shows.
PAGES = {"Data": "Data", "Risk": "Disclosure risk", "Protect": "Protect",
         "Trade-offs": "Trade-offs", "Randomized response lab": "Randomized response lab",
         "Tables": "Tables", "Export": "Export", "Lessons": "Lessons"}


@dataclass
class Session:
    """One browser context (one Streamlit session) and the table it uploaded."""

    name: str
    page: Page
    file: Path | None = None  # None: the session keeps the built-in example
    qi: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    tokens: list[str] = field(default_factory=list)  # must never show in another session

    @property
    def raw(self) -> bytes:
        return self.file.read_bytes()

    @property
    def df(self) -> pd.DataFrame:
        return read_table(self.raw, self.file.name)  # what the app reads, for the fingerprint

    @property
    def sha(self) -> str:
        """What the sidebar shows as the file SHA-256 (its first 16 hex digits), computed here."""
        return hashlib.sha256(self.raw).hexdigest()[:16]


def open_sessions(browser: Browser, app_url: str, names: list[str]) -> list[Session]:
    sessions = []
    for name in names:
        context = browser.new_context(viewport={"width": 1440, "height": 1000},
                                      accept_downloads=True)
        sessions.append(Session(name, new_page(context)))
    for s in sessions:
        s.page.goto(app_url)
    for s in sessions:
        see(s.page.get_by_role("heading", name="Data", exact=True)).to_be_visible()
        wait_idle(s.page)
    return sessions


def close_sessions(sessions: list[Session]) -> None:
    for s in sessions:
        s.page.context.close()


def upload_all(sessions: list[Session]) -> None:
    """Every session picks its file before any of them is waited for: the server loads them
    at the same time."""
    give_each([(s.page, s.file) for s in sessions])
    for s in sessions:
        see(s.page.get_by_test_id("stSidebar")).to_contain_text(s.file.name)


def go_all(sessions: list[Session], title: str) -> None:
    """Every session opens the page before any is waited for (their runs overlap)."""
    before = [runs(s.page).finished for s in sessions]
    for s in sessions:
        s.page.get_by_role("link", name=title, exact=True).click()
    for s, ran_before in zip(sessions, before, strict=True):
        wait_idle(s.page, since=ran_before)
        see(s.page.get_by_role("heading", name=PAGES[title], exact=True)).to_be_visible()


def multiselect(page: Page, label: str):
    return page.get_by_test_id("stMultiSelect").filter(has_text=label)


def sidebar_lines(page: Page) -> list[str]:
    return [line.strip() for line in page.get_by_test_id("stSidebar").inner_text().splitlines()]


def check_isolated(s: Session, others: list[Session], where: str) -> str:
    """Nothing of the other sessions anywhere in this session's page (visible or not: the HTML
    holds collapsed expanders, hidden tabs, chart text and tooltips); the sidebar names this
    session's own data set. Returns the page's HTML."""
    html = s.page.content()
    for o in others:
        for token in o.tokens:
            assert token not in html, \
                f"{where}: session {s.name} shows {token!r}, which only session {o.name} has"
    lines = sidebar_lines(s.page)
    if s.file is None:
        assert any(line.startswith("ACTG 175") for line in lines), (where, lines)
    else:
        assert s.file.name in lines, (where, s.name, lines)
        assert f"file SHA-256 {s.sha}…" in " ".join(lines), (where, s.name, lines)
        assert f"Quasi-identifiers: {', '.join(s.qi)}" in lines, (where, s.name, lines)
    return html


def main_html(s: Session) -> str:
    return s.page.get_by_test_id("stMain").inner_html()


def download(page: Page, button: str) -> tuple[str, bytes]:
    """Click a download button once the page is idle (the click reruns the page, which renews
    the deferred downloads: a click during a run may reach a download already renewed)."""
    wait_idle(page)
    with page.expect_download(timeout=CEILING_SECONDS * 1000) as info:
        page.get_by_role("button", name=button, exact=True).click()
    return info.value.suggested_filename, Path(info.value.path()).read_bytes()


def figures(df: pd.DataFrame, qi: list[str]) -> tuple[float, float]:
    """Expected re-identifications Σ 1/f_k and the share of unique records (%), by pandas."""
    fk = df.groupby(qi)[qi[0]].transform("size")
    return float((1 / fk).sum()), float(100 * (fk == 1).mean())


def number(v: float) -> str:
    """How the pages print a count: whole, or with two decimals."""
    return f"{v:,.0f}" if float(v).is_integer() else f"{v:,.2f}"


def check_no_tokens(data: bytes | str, others: list[Session], where: str) -> None:
    text = data if isinstance(data, str) else data.decode("utf-8", errors="replace")
    for o in others:
        for token in o.tokens:
            assert token not in text, f"{where} holds {token!r} of session {o.name}"


def table_of(name: str, data: bytes) -> pd.DataFrame:
    return read_table(data, name)


# ------------------------------------------------------------------------------------------
# 1. Different files: nothing of one session on any page or in any download of another.


def write_alpha(folder: Path) -> Path:
    rows = [f"A_SECRET_{i % 3},{20 + i % 4},{'FM'[i % 2]},{1.5 * i + 0.25}" for i in range(30)]
    path = folder / "alpha_upload.csv"
    path.write_text("alpha_only_col,age,sex,alpha_score\n" + "\n".join(rows) + "\n")
    return path


def write_beta(folder: Path) -> Path:
    rows = [f"B_SECRET_{i % 4};beta_region_{i % 3};{'XY'[i % 2]};{2.5 * i + 0.75}"
            for i in range(36)]
    path = folder / "beta_upload.csv"
    path.write_text("beta_only_col;region;gender;beta_measure\n" + "\n".join(rows) + "\n")
    return path


def test_sessions_with_different_files_never_see_each_other(browser: Browser, app_url: str,
                                                            tmp_path: Path):
    a, b, o = open_sessions(browser, app_url, ["A", "B", "observer"])
    try:
        a.file, b.file = write_alpha(tmp_path), write_beta(tmp_path)
        # what only A (only B) has: names, values, its file name, both fingerprints
        a.tokens = ["alpha_only_col", "alpha_score", "alpha_upload", *(
            f"A_SECRET_{i}" for i in range(3)), a.sha, fingerprint(a.df)]
        b.tokens = ["beta_only_col", "beta_measure", "beta_upload", "beta_region_", *(
            f"B_SECRET_{i}" for i in range(4)), b.sha, fingerprint(b.df)]
        o.tokens = ["pidnum", "cd420"]  # columns of the example the observer keeps
        a.qi, b.qi = ["age", "sex"], ["region", "gender"]  # suggested from the column names
        upload_all([a, b])
        sessions = [a, b, o]

        def others(s: Session) -> list[Session]:
            return [x for x in sessions if x is not s]

        for s in (a, b):
            check_isolated(s, others(s), "Data after upload")
            see(s.page.get_by_test_id("stMetricValue").first).to_have_text(
                str(len(s.df)))
        # interleaved: A tags its secret column as a key, B does the same while A's page
        # reruns, the observer looks on
        pick_options(a.page, "Quasi-identifiers", ["alpha_only_col"])
        a.qi = ["age", "sex", "alpha_only_col"]
        pick_options(b.page, "Quasi-identifiers", ["beta_only_col"])
        b.qi = ["region", "gender", "beta_only_col"]
        for s in sessions:
            s.page.get_by_role("tab", name="Preview").click()
        for s in sessions:  # the tab's table is drawn once it is chosen
            see(s.page.get_by_role("tabpanel", name="Preview").get_by_test_id(
                "stDataFrame")).to_be_visible()
            wait_idle(s.page)
            for token in s.tokens[:4] if s is not o else []:  # the grid fills its cells'
                # table after it is drawn, which a slow machine may not have done yet
                with contextlib.suppress(PlaywrightTimeout):
                    follow(s.page, lambda ms, s=s, token=token: s.page.wait_for_function(
                        "t => document.documentElement.outerHTML.includes(t)", arg=token,
                        timeout=ms))
            html = check_isolated(s, others(s), "Data, Preview tab")
            if s is o:
                assert "pidnum" in html
            else:
                for token in s.tokens[:4]:  # the preview grid shows the session's own values
                    assert token in html, f"Data preview of {s.name} lacks {token!r}"

        for title in ("Risk", "Protect", "Trade-offs", "Randomized response lab",
                      "Tables", "Export", "Data"):
            go_all(sessions, title)
            for s in sessions:
                check_isolated(s, others(s), title)
            for s in (a, b):
                own = main_html(s)
                if title in ("Risk", "Protect", "Trade-offs", "Tables", "Data"):
                    cols = [t for t in s.tokens if t.endswith(("_col", "_score", "_measure"))]
                    assert any(c in own for c in cols), f"{title} of {s.name} shows none of {cols}"
                if title == "Export":
                    assert s.sha in own
                if title in ("Risk", "Protect"):
                    reids, unique = figures(s.df, s.qi)
                    metric = s.page.get_by_test_id("stMetricValue")
                    see(metric.nth(0 if title == "Risk" else 1)).to_have_text(
                        f"{number(reids)} ({100 * reids / len(s.df):.2f} %)")
                    if title == "Risk":
                        see(metric.nth(2)).to_have_text(f"{unique:.2f} %")
            if title == "Risk":
                check_risk_figure_download(a, others(a))
                check_risk_figure_download(b, others(b))
            if title == "Trade-offs":  # A and B sweep at the same time; the observer does not
                for s in (a, b):
                    s.page.get_by_role("button", name="Run the sweep").click()
                for s in (a, b):
                    see(s.page.locator(".gtitle", has_text="Risk against information loss")) \
                        .to_be_visible()
                    wait_idle(s.page)
                    check_isolated(s, others(s), "Trade-offs after the sweep")
            if title == "Tables":
                for s in (a, b):
                    name, data = download(s.page, "Download the published table (CSV)")
                    check_no_tokens(data, others(s), f"{s.name}'s published table")
                    published = pd.read_csv(io.BytesIO(data))
                    first = s.df.columns[0]  # the first categorical column: a question
                    assert set(published.loc[published["question"] == first, "option"]) >= set(
                        s.df[first].astype(str)), f"{s.name}'s published table"
            if title == "Export":
                for s in sessions:
                    check_export_downloads(s, others(s))
                see(o.page.get_by_role("button", name="Download the trade-off table (CSV)")) \
                    .to_have_count(0)  # no sweep in the observer's session
    finally:
        close_sessions([a, b, o])


def check_risk_figure_download(s: Session, others: list[Session]) -> None:
    """The class-size histogram exported for print (SVG drawn on the server) names this
    session's file and keys only."""
    page = s.page
    with ran(page):  # the popover's controls are drawn once it is open
        page.get_by_role("button", name="Export for print").first.click()
    body = page.get_by_test_id("stPopoverBody")
    with ran(page):
        body.get_by_text("SVG", exact=True).click()
    name, data = download(page, "Download SVG")
    with ran(page):  # closed: the page runs again
        page.keyboard.press("Escape")
    svg = data.decode()
    assert name == f"{s.file.stem}_class_sizes.svg"  # named after the data set, not its file
    assert svg.startswith("<svg") and s.file.name in svg
    assert all(q in svg for q in s.qi), f"{s.name}'s histogram caption lacks its keys"
    check_no_tokens(svg, others, f"{s.name}'s histogram SVG")


def check_export_downloads(s: Session, others: list[Session]) -> None:
    """Every download of the Export page: this session's data, nothing of the others'."""
    page = s.page
    files = {}
    buttons = (["Download CSV", "Download PARQUET", "Download XLSX", "Download the recipe (JSON)",
                "Download the report (HTML)", "Download the trade-off table (CSV)"] if s.file
               else ["Download CSV", "Download the report (HTML)"])  # the observer: the example
    for button in buttons:
        name, data = download(page, button)
        check_no_tokens(data, others, f"{s.name}: {button} ({name})")
        if button.startswith("Download ") and button.split()[1] in ("CSV", "PARQUET", "XLSX"):
            check_no_tokens(str(table_of(name, data).to_dict()), others,
                            f"{s.name}: {button} ({name}), as read")
        files[button] = (name, data)
    if s.file is None:
        name, data = files["Download CSV"]
        assert name == "actg175_protected.csv" and b"cd420" in data
        return
    own = s.df
    for button in ("Download CSV", "Download PARQUET", "Download XLSX"):
        name, data = files[button]
        assert name.startswith(f"{Path(s.file.name).stem}_protected."), name
        got = table_of(name, data)
        pd.testing.assert_frame_equal(got.reset_index(drop=True), own, check_dtype=False,
                                      obj=f"{s.name}'s {button}")
    recipe = json.loads(files["Download the recipe (JSON)"][1])
    assert recipe["input_fingerprint"] == fingerprint(own)
    assert s.file.name in recipe.get("description", "")
    report = files["Download the report (HTML)"][1].decode()
    assert f"Disclosure-control report: {s.file.name}" in report
    assert fingerprint(own) in report and s.sha in report
    assert re.search(r"<td>quasi-identifiers</td>\s*<td>" + re.escape(", ".join(s.qi))
                     + "</td>", report), f"{s.name}'s report roles"
    sweep = files["Download the trade-off table (CSV)"][1].decode()
    assert any(c in sweep for c in own.columns if c not in ("age", "sex", "region", "gender"))


# ------------------------------------------------------------------------------------------
# 2. The same bytes in three sessions (two with the same file name), different roles.


def write_shared(path: Path) -> Path:
    ages = [23, 31, 38, 44, 52, 67]
    regions = ["north", "south", "east", "west", "centre"]
    rows = [f"{ages[(i * 7) % 6]},{'FM'[i % 2]},{regions[(i * 3) % 5 if i % 4 else 0]},"
            f"remark_{'xyz'[i % 3]},{1000.5 + 37 * i}" for i in range(48)]
    path.write_text("age,sex,region,remark,income\n" + "\n".join(rows) + "\n")
    return path


def report_cell(report: str, row: str) -> str:
    found = re.search(r"<td>" + re.escape(row) + r"</td>\s*<td>([^<]*)</td>", report)
    assert found, f"no row {row!r} in the report"
    return found.group(1)


def test_same_content_with_different_roles_keeps_each_sessions_roles(
        browser: Browser, app_url: str, tmp_path: Path):
    c, d, e = open_sessions(browser, app_url, ["C", "D", "E"])
    try:
        (tmp_path / "c").mkdir()
        (tmp_path / "d").mkdir()
        c.file = write_shared(tmp_path / "c" / "shared.csv")
        d.file = write_shared(tmp_path / "d" / "shared.csv")  # same name, same bytes
        e.file = write_shared(tmp_path / "shared_copy.csv")  # same bytes, another name
        assert c.raw == d.raw == e.raw and c.sha == d.sha == e.sha
        sessions = [c, d, e]
        c.qi = ["age", "sex", "region"]  # suggested from the column names: C keeps them
        d.qi, d.ignore = ["age", "sex"], ["remark"]
        e.qi = ["region"]
        expected = {s.name: figures(s.df, s.qi) for s in sessions}
        assert len(set(expected.values())) == 3, expected  # the roles give different figures
        e.tokens = ["shared_copy"]  # the only thing E has that C and D have not

        upload_all(sessions)
        for s in sessions:
            see(s.page.get_by_test_id("stSidebar")).to_contain_text(
                "Quasi-identifiers: age, sex, region")
        # C opens Risk while D retags (its page reruns at the same time), then E retags
        c.page.get_by_role("link", name="Risk", exact=True).click()
        pick_options(d.page, "Quasi-identifiers", d.qi, clear=True)
        pick_options(d.page, "Not released", d.ignore)
        pick_options(e.page, "Quasi-identifiers", e.qi, clear=True)

        def check(s: Session, title: str) -> None:
            others = [x for x in sessions if x is not s]
            check_isolated(s, others, title)
            reids, unique = expected[s.name]
            metric = s.page.get_by_test_id("stMetricValue")
            if title == "Risk":
                see(metric.nth(0)).to_have_text(
                    f"{number(reids)} ({100 * reids / len(s.df):.2f} %)")
                see(metric.nth(2)).to_have_text(f"{unique:.2f} %")
                see(s.page.get_by_text(f"Quasi-identifiers: {', '.join(s.qi)}.")) \
                    .to_be_visible()
            elif title == "Protect":
                see(metric.nth(1)).to_have_text(
                    f"{number(reids)} ({100 * reids / len(s.df):.2f} %)")
            elif title == "Data":
                chips = multiselect(s.page, "Quasi-identifiers").inner_text()
                for col in ("age", "sex", "region"):
                    assert (col in chips) == (col in s.qi), (s.name, chips)
                assert ("remark" in multiselect(s.page, "Not released").inner_text()) == (
                    "remark" in s.ignore)

        see(c.page.get_by_role("heading", name="Disclosure risk")).to_be_visible()
        wait_idle(c.page)
        check(c, "Risk")
        # the pages whose content depends on the roles (the response tables and the randomized
        # response lab do not; the first test covers them), the three sessions' runs overlapping
        for title in ("Data", "Risk", "Protect", "Trade-offs", "Export"):
            go_all(sessions, title)
            for s in sessions:
                check(s, title)
            if title == "Risk":  # C leaves and comes back after D and E saw theirs
                go_all([c], "Protect")
                go_all([c], "Risk")
                check(c, "Risk, again")
            if title == "Export":
                for s in sessions:
                    check_role_downloads(s, expected[s.name], [x for x in sessions
                                                                if x is not s])
    finally:
        close_sessions([c, d, e])


def check_role_downloads(s: Session, expected: tuple[float, float],
                         others: list[Session]) -> None:
    """The Export page's data and report follow this session's roles: its released columns,
    its keys and its risk figures."""
    page = s.page
    released = [col for col in s.df.columns if col not in s.ignore]
    name, data = download(page, "Download CSV")
    assert name == f"{Path(s.file.name).stem}_protected.csv"
    check_no_tokens(data, others, f"{s.name}'s CSV")
    got = table_of(name, data)
    assert list(got.columns) == released, (s.name, list(got.columns))
    pd.testing.assert_frame_equal(got, s.df[released], check_dtype=False)
    name, data = download(page, "Download the report (HTML)")
    report = data.decode()
    check_no_tokens(report, others, f"{s.name}'s report")
    assert f"Disclosure-control report: {s.file.name}" in report
    assert report_cell(report, "quasi-identifiers") == ", ".join(s.qi)
    assert report_cell(report, "not released") == ", ".join(s.ignore)
    reids, unique = expected
    assert float(report_cell(report, "keys' re-identifications")) \
        == pytest.approx(reids, rel=1e-5)
    assert float(report_cell(report, "unique records (%)")) == pytest.approx(
        unique, rel=1e-5)
