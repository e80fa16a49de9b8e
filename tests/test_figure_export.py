"""Server-side figure export: caption, print layout, and real PNG/SVG/PDF files from Kaleido
with the Debian Chromium (required in CI, as for the browser tests)."""

import datetime as dt
import os
import struct

import plotly.graph_objects as go
import pytest

from ui.figure_export import ExportUnavailable, caption, chromium, figure_bytes, for_print

FIG = go.Figure(go.Bar(x=["a", "b"], y=[3, 1])).update_layout(title_text="Class sizes")
NOTE = "ACTG 175; band age width=10; seed 42 <b>x</b>"


@pytest.fixture
def with_chromium():
    if chromium() is None:
        if os.environ.get("CI"):
            pytest.fail("Chromium is required in CI for the figure export")
        pytest.skip("Debian chromium is not installed (make test installs it as root)")


def test_caption_names_context_version_and_date():
    from sdc_core import __version__
    assert caption("ACTG 175; seed 3", dt.date(2026, 1, 2)) == \
        f"ACTG 175; seed 3 · sdc_core {__version__} · 2026-01-02"


def test_print_layout_is_fixed_and_escaped():
    out = for_print(FIG, NOTE, 1000)
    assert out.layout.width == 1000 and out.layout.height == 600
    assert out.layout.font.family.startswith("Liberation Sans")
    assert out.layout.title.text == "Class sizes"
    assert out.layout.title.subtitle.text == \
        "ACTG 175; band age width=10; seed 42 &lt;b&gt;x&lt;/b&gt;"
    assert FIG.layout.width is None  # the chart on the page is not changed


def test_without_chromium_the_message_says_what_to_install(monkeypatch):
    monkeypatch.delenv("BROWSER_PATH", raising=False)
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(ExportUnavailable, match="apt-get install chromium"):
        figure_bytes(FIG, "png", 800, NOTE)


def test_png_svg_pdf_at_the_chosen_width(with_chromium):
    png = figure_bytes(FIG, "png", 900, NOTE)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", png[16:24])  # the IHDR chunk
    assert (width, height) == (900, 540)
    svg = figure_bytes(FIG, "svg", 700, NOTE).decode()
    assert 'width="700"' in svg and "seed 42" in svg and "Class sizes" in svg
    pdf = figure_bytes(FIG, "pdf", 700, NOTE)
    assert pdf.startswith(b"%PDF-") and len(pdf) > 1000
    with pytest.raises(ValueError, match="format must be one of"):
        figure_bytes(FIG, "gif", 700, NOTE)
