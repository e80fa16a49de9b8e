"""AppTest of the Risk page's protected view (issue 25, item 5): every section measured on the
table the Protect page's settings release, beside the original."""

from streamlit.testing.v1 import AppTest

from sdc_core.data.io import EXAMPLE_PATH, read_table
from sdc_core.recipe import apply_recipe, parse_recipe
from sdc_core.risk import risk_profile, riskiest_classes, sensitive_report
from sdc_core.risk.suda2 import suda2
from tests.apptest import app_test, risk_page_with_age_banded, tiles
from tests.conftest import plain
from tests.hostile_text import IMAGE, LINK, hostile_csv, leaks

QI = ["age", "gender", "race"]


#: The keys' re-identifications of the original on the Risk page: the count with its percentage
KEYS, ORIGINAL = "Keys' re-identifications", "182 (8.51 %)"


def values(at: AppTest, label: str) -> list[str]:
    return [m.value for m in tiles(at) if m.label == label]


def test_the_protected_view_measures_the_released_table():
    at = risk_page_with_age_banded(10)
    assert values(at, KEYS) == [ORIGINAL]  # the original until asked
    steps = at.session_state["protect"].steps(QI)
    released = apply_recipe(parse_recipe({"version": 1, "seed": 42, "steps": steps}),
                            read_table(EXAMPLE_PATH)).data
    p = risk_profile(released, QI)
    suda = suda2(released, QI, 0.01).summary()
    ldiv, _ = sensitive_report(released, p, ["treat"],
                               [c for c in released.columns if c != "pidnum"])

    at.radio(key="w_risk_view").set_value("protected").run()
    assert not at.exception
    assert values(at, KEYS) == [f"{p.expected_reidentifications:g} "
                                f"({p.avg_linkage_risk_percent:.2f} %)"] == ["25 (1.17 %)"]
    metric = next(m for m in tiles(at) if m.label == KEYS)
    assert metric.delta == "-157 (was 182)"
    assert values(at, "Smallest class") == [f"{p.min_k:g}"]
    assert values(at, "Median class size") == [f"{p.median_k:g}"] != ["33"]
    assert values(at, "Records with MSUs") == [f"{suda['n_records_score_positive']:,}"] != ["29"]
    assert values(at, "Max SUDA score") == [f"{suda['max_score']:g}"]
    assert values(at, "l-diversity of treat") == [f"min l = {ldiv['treat'].min_l}"]
    top = next(d.value for d in at.dataframe if "individual_risk" in d.value.columns)
    expected = riskiest_classes(released, p, top=10)
    assert top[QI + ["k"]].astype(str).values.tolist() == \
        expected[QI + ["k"]].astype(str).values.tolist()
    # the released values: the bands themselves, "40–49"
    assert all(a == f"{int(a[:2])}–{int(a[:2]) + 9}" and int(a[:2]) % 10 == 0
               for a in top["age"])
    assert "band age width=10" in plain(" ".join(c.value for c in at.caption))

    at.radio(key="w_risk_view").set_value("both").run()
    assert not at.exception
    assert values(at, KEYS) == [ORIGINAL, "25 (1.17 %)"]
    assert values(at, "Records with MSUs") == ["29", f"{suda['n_records_score_positive']:,}"]
    assert [m.value for m in at.markdown if m.value.endswith(" data**")][:2] == [
        "**Original data**", "**Protected data**"]


def test_without_protection_the_page_says_so_and_shows_the_original():
    at = app_test().run()
    at.switch_page("views/risk.py").run()
    at.radio(key="w_risk_view").set_value("protected").run()
    assert not at.exception
    assert any("No protection is set on the Protect page" in i.value for i in at.info)
    assert values(at, KEYS) == [ORIGINAL]


def test_the_choice_survives_a_page_change():
    at = risk_page_with_age_banded(10)
    at.radio(key="w_risk_view").set_value("protected").run()
    at.switch_page("views/data.py").run()
    at.switch_page("views/risk.py").run()
    assert at.radio(key="w_risk_view").value == "protected"
    assert values(at, KEYS) == ["25 (1.17 %)"]


def test_the_protected_view_shows_hostile_names_and_values_as_text():
    at = app_test().run()
    at.file_uploader(key="uploader").set_value((f"{IMAGE}.csv", hostile_csv(), "text/csv")).run()
    at.multiselect(key="w_qi").set_value(["age", "sex", IMAGE]).run()
    at.multiselect(key="w_sensitive").set_value([LINK]).run()
    at.switch_page("views/protect.py").run()
    at.slider(key="w_p_pram_p").set_value(0.2).run()
    at.switch_page("views/risk.py").run()
    at.radio(key="w_risk_view").set_value("both").run()
    assert not at.exception
    assert len(values(at, KEYS)) == 2  # the protection applied
    assert not leaks(at)


def test_the_protected_view_reads_the_protect_pages_cache_entry(monkeypatch):
    """One truth: the Risk page finds the table the Protect page computed (same recipe, numeric
    and known columns), and computes no workbench of its own."""
    import ui.compute
    import ui.infra.workers
    calls: list[str] = []
    detached = ui.compute.detached

    def counted(*args, **kwargs):
        calls.append(args[1])
        return detached(*args, **kwargs)

    monkeypatch.setattr(ui.infra.workers, "workers", lambda: 0)  # counted here, not in a worker
    monkeypatch.setattr(ui.compute, "detached", counted)
    at = app_test().run()
    at.switch_page("views/protect.py").run()
    at.slider(key="w_p_band_age").set_value(7).run()
    at.multiselect(key="w_p_known").set_value(["wtkg"]).run()
    seen = len(calls)
    at.switch_page("views/risk.py").run()
    at.radio(key="w_risk_view").set_value("both").run()
    assert not at.exception and values(at, KEYS)[0] == ORIGINAL
    assert len(calls) == seen  # a cache hit


def test_slow_suda2_runs_on_request_for_each_table(monkeypatch):
    import ui.suda_cache

    monkeypatch.setattr(ui.suda_cache, "AUTO_SECONDS", 0.0)
    at = risk_page_with_age_banded(10)
    at.radio(key="w_risk_view").set_value("both").run()
    assert values(at, "Max SUDA score") == []
    at.button(key="risk_suda_go_protected").click().run()
    assert not at.exception and len(values(at, "Max SUDA score")) == 1
    at.button(key="risk_suda_go").click().run()
    shown = values(at, "Max SUDA score")
    assert len(shown) == 2 and shown[0] == "2"  # the original's beside the protected one's
