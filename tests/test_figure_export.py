"""Server-side figure export: caption, print layout, and real PNG/SVG/PDF files from Kaleido
with the Debian Chromium (required in CI, as for the browser tests)."""

import datetime as dt
import os
import re
import struct

import plotly.graph_objects as go
import pytest

from ui.logic.figure_export import (
    ExportUnavailable,
    caption,
    chromium,
    document_title,
    figure_bytes,
    for_print,
    pdf_with_title,
)

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


def _tiny_pdf(info: bytes) -> bytes:
    """A one-page PDF with a classic cross-reference table and ``info`` as its Info
    dictionary, laid out as Chromium writes them."""
    objects = [b"<<" + info + b">>", b"<</Type /Catalog /Pages 3 0 R>>",
               b"<</Type /Pages /Kids [4 0 R] /Count 1>>",
               b"<</Type /Page /Parent 3 0 R /MediaBox [0 0 10 10]>>"]
    out, offsets = b"%PDF-1.4\n", []
    for i, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (i, body)
    xref = len(out)
    out += b"xref\n0 5\n0000000000 65535 f \n" + b"".join(b"%010d 00000 n \n" % o
                                                          for o in offsets)
    return out + b"trailer\n<</Size 5\n/Root 2 0 R\n/Info 1 0 R>>\nstartxref\n%d\n%%%%EOF\n" % xref


def test_the_pdf_title_is_rewritten_as_an_incremental_update():
    original = _tiny_pdf(b"/Title (Kaleido-fier \\(x\\) (nested))\n/Producer (Skia/PDF m156)")
    pdf = pdf_with_title(original, "risk (class sizes) \\ k")
    assert pdf.startswith(original)  # the original bytes are kept
    update = pdf[len(original):]
    assert b"/Title (risk \\(class sizes\\) \\\\ k)" in update
    assert b"/Producer (Skia/PDF m156)" in update and b"Kaleido" not in update
    xref = int(re.findall(rb"startxref\s+(\d+)", pdf)[-1])
    assert pdf[xref:].startswith(b"xref\n0 1\n0000000000 65535 f \n1 1\n")
    entry = int(pdf[xref:].split(b"\n")[4][:10])
    assert pdf[entry:].startswith(b"1 0 obj\n<</Title (risk")
    prev = int(re.findall(rb"startxref\s+(\d+)", original)[-1])
    assert b"/Prev %d>>" % prev in update and b"/Root 2 0 R" in update
    assert pdf_with_title(original, "Größe").count(b"/Title <FEFF0047") == 1  # UTF-16BE


def test_a_titled_figure_names_its_pdf_and_an_untitled_one_its_file():
    assert document_title(go.Figure().update_layout(title_text="a &lt;b&gt; <b>c</b>"),
                          "f") == "a <b> c"
    assert document_title(go.Figure(), "actg175_class_sizes") == "actg175_class_sizes"


def test_the_exported_pdf_is_titled_after_the_figure_not_kaleido(with_chromium):
    """Chromium titles the PDF after the page Kaleido draws in, "Kaleido-fier"."""
    def title(pdf: bytes) -> bytes:  # the newest Info dictionary's: the one readers show
        return re.findall(rb"/Title\s*(\([^)]*\))", pdf)[-1]

    assert title(figure_bytes(FIG, "pdf", 700, NOTE, "actg175_class_sizes")) == b"(Class sizes)"
    untitled = go.Figure(go.Bar(x=["a"], y=[1]))
    assert title(figure_bytes(untitled, "pdf", 700, NOTE, "actg175_bars")) == b"(actg175_bars)"
