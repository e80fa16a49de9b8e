"""The release type and the decision pack on the pages: the Protect page's type selector and
the status it says, the same type on the Export page, the pack its button downloads (the files
of docs/releases.md, "The pack", for the type chosen), and the decision's fields as text:
Markdown, HTML and a script written escaped, a text past its bound never taken."""

from __future__ import annotations

import io
import json
import zipfile

from sdc_core import pack
from sdc_core.errors import SdcInputError
from sdc_core.pack import MAX_FIELD
from sdc_core.release_types import RELEASE_TYPES
from tests.apptest import app_on, app_test, downloads, errors, no_traceback, tile_notes
from tests.conftest import plain
from tests.hostile_text import IMAGE, LINK, hostile_csv, leaks
from ui.logic.release_view import target_label

FILES = ("released.csv", "internal.html", "external.html", "manifest.json",
         "manifest-internal.json")
SCRIPT = "<script>alert('pack')</script>"
HOSTILE = f"{SCRIPT} **bold** {IMAGE} <b>board</b> {LINK}"


def pack_of(made: dict) -> zipfile.ZipFile:
    """The decision pack the Export page's button downloads (made on click: its data is the
    function that makes it)."""
    data = made["dl_pack"]
    return zipfile.ZipFile(io.BytesIO(data() if callable(data) else data))


def read(z: zipfile.ZipFile, name: str) -> bytes:
    return z.read(f"release-pack/{name}")


def status_notes(at) -> list[str]:
    return [n for n in tile_notes(at) if n.startswith("As a ")]


def test_the_protect_page_offers_the_release_types_and_says_the_status():
    at = app_on("views/protect.py")
    chooser = at.selectbox(key="w_release_type")
    assert chooser.label == "Release type"
    assert chooser.options == ["public-use file", "scientific-use file", "teaching file",
                               "secure-access file"]
    assert chooser.value == "suf"  # the default
    assert any("Intruder" in c.value and "Targets" in c.value for c in at.caption)
    (note,) = status_notes(at)
    assert note.startswith("As a scientific-use file, this release") and "(fail)" in note
    chooser.set_value("secure").run()
    no_traceback(at)
    (note,) = status_notes(at)
    assert note.startswith("As a secure-access file") and "review" in note  # always reviewed


def test_the_type_chosen_on_protect_is_the_one_export_packs(monkeypatch):
    made = downloads(monkeypatch)
    at = app_on("views/protect.py")
    at.slider(key="w_p_band_age").set_value(20).run()
    at.selectbox(key="w_release_type").set_value("puf").run()
    at.switch_page("views/export.py").run()
    no_traceback(at)
    assert not errors(at)
    assert any("Release type: **public\\-use file**" in c.value for c in at.caption)
    # the type's targets, their defaults the type's own
    limits = {plain(n.label): n.value for n in at.number_input}
    puf = RELEASE_TYPES["puf"]
    assert limits == {plain(target_label(t, puf.k)): t.limit for t in puf.targets}
    assert "attribute-inference gain (points): at most" in limits
    at.number_input(key="w_x_target_puf_linkage_risk_percent").set_value(2.5).run()
    at.selectbox(key="w_x_decision").set_value("approved with conditions").run()
    z = pack_of(made)
    assert {f"release-pack/{name}" for name in FILES} <= set(z.namelist())
    manifest = json.loads(read(z, "manifest.json"))
    assert manifest["release_type"]["type"] == "puf"
    assert manifest["release_type"]["k"] == 5
    targets = {t["figure"]: t["limit"] for t in manifest["release_type"]["targets"]}
    assert targets["linkage_risk_percent"] == 2.5  # as the steward set it
    assert manifest["decision"]["decision"] == "approved with conditions"
    internal = json.loads(read(z, "manifest-internal.json"))
    assert {"method": "band", "column": "age", "width": 20} in [
        {k: v for k, v in s.items() if k in ("method", "column", "width")}
        for s in internal["recipe"]["steps"]]
    # the columns tagged "Not released" (the example's pidnum) are not in the released file
    released = read(z, "released.csv").decode().splitlines()[0].split(",")
    assert "pidnum" not in released and "age" in released


def test_the_status_on_protect_is_the_packs(monkeypatch):
    made = downloads(monkeypatch)
    at = app_on("views/protect.py")
    at.slider(key="w_p_band_age").set_value(20).run()
    at.selectbox(key="w_release_type").set_value("teaching").run()
    (note,) = status_notes(at)
    at.switch_page("views/export.py").run()
    manifest = json.loads(read(pack_of(made), "manifest.json"))
    (release,) = [o for o in manifest["outputs"] if o["uid"] == "release"]
    assert f"({release['status']})" in note


def test_hostile_decision_text_is_written_escaped_in_the_pack(monkeypatch):
    made = downloads(monkeypatch)
    at = app_on("views/export.py")
    for key in ("w_x_steward", "w_x_checker", "w_x_board"):
        at.text_input(key=key).input(HOSTILE)
    at.text_area(key="w_x_comments").input(HOSTILE + "\n# heading\n" + SCRIPT).run()
    no_traceback(at)
    assert not errors(at) and not leaks(at)
    z = pack_of(made)
    for name in ("internal.html", "external.html"):
        html = read(z, name).decode()
        assert SCRIPT not in html and "<b>board</b>" not in html, name
        assert not any(tag in html for tag in ("<img", "<a href=\"http://127")), name
    internal = read(z, "internal.html").decode()
    assert "&lt;script&gt;alert(" in internal  # written as text
    manifest = json.loads(read(z, "manifest.json"))
    assert manifest["decision"]["steward"] == HOSTILE  # kept as given, in JSON


def test_a_text_past_its_bound_is_not_taken_or_is_refused(monkeypatch):
    made = downloads(monkeypatch)
    at = app_on("views/export.py")
    field = at.text_input(key="w_x_steward")
    assert field.max_chars == MAX_FIELD
    assert at.text_area(key="w_x_comments").max_chars == MAX_FIELD
    field.input("x" * (MAX_FIELD + 1)).run()  # as the browser: the field takes no more
    assert at.text_input(key="w_x_steward").value == ""
    # a client that sends it anyway: the server keeps the first MAX_FIELD characters
    at.text_input(key="w_x_steward").set_value("x" * (MAX_FIELD + 1)).run()
    no_traceback(at)
    assert not errors(at)
    manifest = json.loads(read(pack_of(made), "manifest.json"))
    assert manifest["decision"]["steward"] == "x" * MAX_FIELD


def test_a_decision_the_core_refuses_is_said_not_raised(monkeypatch):
    made = downloads(monkeypatch)

    def refuse(data: object) -> None:
        raise SdcInputError("decision: comments is 9,999 characters; at most 4,000 <b>x</b>")
    monkeypatch.setattr(pack, "parse_decision", refuse)
    at = app_on("views/export.py")
    no_traceback(at)
    assert any(e.startswith("The decision pack cannot be made: decision: comments is")
               for e in errors(at)), errors(at)
    assert any("\\<b\\>" in e.value for e in at.error)  # escaped
    assert "dl_pack" not in made


def test_hostile_names_stay_text_in_the_pack_section(monkeypatch):
    made = downloads(monkeypatch)
    at = app_test().run()
    at.file_uploader(key="uploader").set_value((f"{IMAGE}.csv", hostile_csv(), "text/csv")).run()
    at.multiselect(key="w_qi").set_value(["age", "sex", IMAGE]).run()
    at.multiselect(key="w_sensitive").set_value([LINK]).run()
    at.switch_page("views/protect.py").run()
    no_traceback(at)
    assert not leaks(at)
    at.switch_page("views/export.py").run()
    no_traceback(at)
    assert not leaks(at)
    html = read(pack_of(made), "internal.html").decode()
    assert "<img" not in html and 'href="http://127.0.0.1:9' not in html


def test_without_quasi_identifiers_the_pack_section_says_so(monkeypatch):
    made = downloads(monkeypatch)
    at = app_test().run()
    at.multiselect(key="w_qi").set_value([]).run()
    at.switch_page("views/export.py").run()
    no_traceback(at)
    assert any("to make a decision pack" in c.value for c in at.caption)
    assert "dl_pack" not in made
