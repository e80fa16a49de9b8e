"""Work survives: a reload takes the session's work over (resume token), undo/redo and reset of
the Protect settings, and a workspace file opened on the pages (what the file holds and how it
reads back are tests/test_workspace.py's)."""

import ast
import json
import sys
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
from streamlit.testing.v1 import AppTest

from sdc_core.roles import Roles
from tests.apptest import app_test
from tests.conftest import plain
from tests.state_source import WIDGET_HELPERS
from tests.workspaces import SURVEY, SURVEY_ANALYSES, survey_workspace
from ui import resume, state
from ui.infra import memory
from ui.infra.memory import Ledger
from ui.resume import Holder, Registry


def test_a_token_is_taken_over_only_from_an_ended_session_of_the_same_user():
    reg = Registry()
    reg.register("t", Holder("a", None, {"x": 1}))
    connected = {"a"}
    assert reg.take("t", Holder("b", None, {}), lambda s: s in connected) is None  # a 2nd tab
    connected.clear()
    assert reg.take("t", Holder("b", "eve", {}), lambda s: False) is None  # another user
    assert reg.take("t", Holder("a", None, {}), lambda s: False) is None  # its own token
    old = reg.take("t", Holder("b", None, {}), lambda s: False)
    assert old is not None and old.session == "a" and old.state == {"x": 1}
    assert reg.take("t", Holder("c", None, {}), lambda s: s == "b") is None  # now b's
    reg.forget(["b"])
    assert len(reg) == 0 and reg.take("t", Holder("c", None, {}), lambda s: False) is None


class Live:
    """A connected session's state as Streamlit's object gives it: the work among the
    widgets' values, and a data set whose 800 kB table is counted as data."""

    def __init__(self) -> None:
        table = pd.DataFrame({"x": range(100_000)})
        self.filtered_state = {"dataset": SimpleNamespace(table=SimpleNamespace(df=table)),
                               "roles": "r" * 10_000, "protect_history": list(range(1000)),
                               "w_p_band_age": 10}


def test_a_closed_tabs_work_is_counted_while_it_is_kept():
    """Issue 51, item 9: of a closed tab, the registry keeps only the work a reload takes
    over, entered in the ledger (less its table, counted as data), until it is taken over,
    back in use after a reconnection, or dropped."""
    ledger = Ledger()
    reg = Registry(ledger)
    live = Live()
    reg.register("t", Holder("a", None, live), now=0.0)
    reg.used("t", live, now=1.0)
    connected = {"a"}

    def prune(now: float) -> list[str]:
        return reg.prune(lambda s: s in connected, lambda s: False, idle=3600.0,
                         grace=3600.0, now=now)

    prune(2.0)
    assert ledger.kept() == 0 and reg.holder("t").state is live  # connected: live, uncounted
    connected.clear()
    prune(3.0)
    saved = reg.holder("t").state
    assert saved == resume.kept(live.filtered_state)  # not the widgets
    least = sys.getsizeof(saved["roles"]) + sys.getsizeof(saved["protect_history"])
    assert least < ledger.kept() < least + 64 * 1024  # the work, not the 800 kB table
    connected.add("a")  # it reconnects: its live state again, not counted
    reg.used("t", live, now=4.0)
    prune(5.0)
    assert reg.holder("t").state is live and ledger.kept() == 0
    connected.clear()
    prune(6.0)
    assert ledger.kept() > least
    assert reg.take("t", Holder("b", None, Live()), lambda s: False, now=7.0) is not None
    assert ledger.kept() == 0  # a reload took it over: live again
    prune(8.0)  # the reloaded tab is closed too
    assert ledger.kept() > least
    assert prune(8.0 + 3601.0) == ["b"]  # unused for the idle window: dropped
    assert len(reg) == 0 and ledger.kept() == 0


def test_kept_state_is_the_work_not_the_widgets():
    saved = {"dataset": 1, "roles": 2, "protect_history": 3, "w_kept_w_t_seed": 4,
             "w_p_band_age": 5, "recipe_upload": 6, "resume_token": 7}
    assert resume.kept(saved) == {"dataset": 1, "roles": 2, "protect_history": 3,
                                  "w_kept_w_t_seed": 4}


#: What a reload took over before ui/state.py declared its values (issue 52): the plain values
#: of the pages, and every kept widget value (``w_kept_…``)
KEPT_BEFORE = ("dataset", "roles", "protect", "protect_history", "sweep", "known",
               "risk_options", "whole_file_risk", "lesson", "lesson_values", "lessons_done",
               "projector", "chart_format", "suda_dis_fraction", "risk_view", "link_opened",
               "analyses", "sampling", "cross_table",
               "release_type")  # the release type chosen on the Protect page (a reload keeps it)


def test_a_reload_keeps_exactly_the_values_declared_kept():
    """Issue 52: what a reload takes over is read from the declaration of ui/state.py, and it
    is what it was before."""
    declared = {v.key.replace("*", "x"): v.kept for v in state.VALUES}
    assert len(declared) == len(state.VALUES)  # every key (family) declared once
    saved = dict.fromkeys([*declared, "w_p_band_age", "w_t_goal", "recipe_upload",
                           "resume_token", "not_declared"], 0)
    taken = set(resume.kept(saved))
    assert taken == {k for k, kept in declared.items() if kept}
    assert taken == {*KEPT_BEFORE, "w_kept_x"}


def session_keys(source: str) -> set[str]:
    """The keys a module's source reads or writes in ``st.session_state`` (a subscript,
    ``get``/``pop``/``setdefault``, ``in``), each a text or, for an f-string, a family with
    ``*`` for each value put in (a module constant put in is its text). Inside a widget helper
    (:data:`tests.state_source.WIDGET_HELPERS`) the key is a widget's; inside ``_new``, the
    keys its calls hand it."""
    tree = ast.parse(source)
    constants = {t.id: n.value.value for n in tree.body if isinstance(n, ast.Assign)
                 and isinstance(n.value, ast.Constant) for t in n.targets
                 if isinstance(t, ast.Name)}

    def text(expr: ast.expr) -> str:
        if isinstance(expr, ast.Constant):
            return str(expr.value)
        if isinstance(expr, ast.Name) and expr.id in constants:
            return str(constants[expr.id])
        if isinstance(expr, ast.JoinedStr):
            return "".join(text(part.value) if isinstance(part, ast.FormattedValue)
                           and isinstance(part.value, ast.Name) and part.value.id in constants
                           else "*" if isinstance(part, ast.FormattedValue) else text(part)
                           for part in expr.values)
        return "?" + ast.unparse(expr)  # not known from the source: never declared

    def is_state(expr: ast.expr) -> bool:
        return isinstance(expr, ast.Attribute) and expr.attr == "session_state"

    helpers = WIDGET_HELPERS | {"forget_widgets", "_new"}
    keys = set()
    for fn in [n for n in tree.body if isinstance(n, ast.FunctionDef)]:
        for node in ast.walk(fn):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                    and node.func.id == "_new":
                keys.add(text(node.args[0]))
            if fn.name in helpers:
                continue
            if isinstance(node, ast.Subscript) and is_state(node.value):
                keys.add(text(node.slice))
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and is_state(node.func.value) and node.func.attr in (
                        "get", "pop", "setdefault"):
                keys.add(text(node.args[0]))
            elif isinstance(node, ast.Compare) and any(is_state(c) for c in node.comparators):
                keys.add(text(node.left))
    return keys


def declared(key: str) -> bool:
    return any(v.key == key or v.names(key) for v in state.VALUES)


def test_every_session_value_of_ui_state_is_declared():
    """Issue 52: a key ui/state.py reads or writes in the session's state and does not declare
    (ui.state.VALUES, with its lifetime) fails here."""
    keys = session_keys(Path(state.__file__).read_text())
    assert {"dataset", "protect_history", "w_kept_*", "*_file_id", "suda_requested*"} <= keys
    assert [k for k in keys if not declared(k)] == []
    late = session_keys('import streamlit as st\n_NEW = "new_value"\n'
                        'def f(part):\n    st.session_state[_NEW] = 1\n'
                        '    return st.session_state.get(f"{part}_shown")\n')
    assert sorted(k for k in late if not declared(k)) == ["*_shown", "new_value"]


def address_token(at: AppTest) -> str:
    """The resume token in the session's address (set by the test: a string; by the app: a
    list)."""
    value = at.query_params[resume.PARAM]
    return value if isinstance(value, str) else value[0]


def opened(at: AppTest, *keys: str) -> AppTest:
    """Open the expanders of these keys and run: what is folded in them is drawn only once
    they are open."""
    for key in keys:
        at.session_state[key] = True
    return at.run()


def recipe_code(at: AppTest) -> str:
    """The JSON in the Protect page's "Recipe of these settings", opened."""
    return opened(at, "p_recipe").main.code[0].value


def app() -> AppTest:
    return app_test()


def test_a_reload_returns_the_same_work(monkeypatch):
    """A reload is a new session with the old address: it finds the data set, roles, risk
    settings and Protect settings as they were, with the data's memory moved to it; a second
    tab on the same address while the first is connected starts afresh."""
    first = app().run()
    token = address_token(first)
    first.switch_page("views/data.py").run()
    first.multiselect(key="w_sensitive").set_value(["treat", "karnof"]).run()
    first.switch_page("views/risk.py").run()
    first.number_input(key="w_risk_k").set_value(3).run()
    first.switch_page("views/protect.py").run()
    first.slider(key="w_p_band_age").set_value(10).run()
    recipe = recipe_code(first)
    held = memory.LEDGER.total()

    # AppTest gives every session one id: the reloaded session gets another
    monkeypatch.setattr(state, "session_id", lambda: "reloaded")
    monkeypatch.setattr(memory, "is_active", lambda session: False)  # the first tab is gone
    again = app()
    again.query_params[resume.PARAM] = token
    again.run()
    again.switch_page("views/protect.py").run()
    assert not again.exception
    assert address_token(again) == token
    assert again.slider(key="w_p_band_age").value == 10
    assert recipe_code(again) == recipe
    assert not any("has ended" in w.value for w in again.warning)
    assert memory.LEDGER.total() == held  # the data moved, it was not loaded again
    again.switch_page("views/data.py").run()
    assert again.multiselect(key="w_sensitive").value == ["treat", "karnof"]
    again.switch_page("views/risk.py").run()
    assert again.number_input(key="w_risk_k").value == 3

    monkeypatch.setattr(state, "session_id", lambda: "second tab")
    monkeypatch.setattr(memory, "is_active", lambda session: True)  # the reloaded tab is open
    other = app()
    other.query_params[resume.PARAM] = token
    other.run()
    assert any("open in another tab" in w.value for w in other.warning)
    other.switch_page("views/protect.py").run()
    assert address_token(other) != token
    assert other.slider(key="w_p_band_age").value == 0


def test_an_unknown_token_opens_a_fresh_session_and_says_so():
    at = app()
    at.query_params[resume.PARAM] = "no-such-token"
    at.run()
    assert any("has ended" in w.value for w in at.warning)
    token = address_token(at)
    assert token != "no-such-token"
    link = " ".join(c.value for c in at.sidebar.code)  # "Copy link to this state"
    assert "?" in link and token not in link and resume.PARAM not in link


def test_undo_redo_and_reset_all_on_protect():
    at = app().run()
    at.switch_page("views/protect.py").run()
    assert at.button(key="p_undo").disabled and at.button(key="p_redo").disabled
    at.slider(key="w_p_band_age").set_value(10).run()
    at.slider(key="w_p_pram_p").set_value(0.1).run()
    both = recipe_code(at)
    at.button(key="p_undo").click().run()
    assert at.slider(key="w_p_pram_p").value == 0.0 and at.slider(key="w_p_band_age").value == 10
    at.button(key="p_undo").click().run()
    assert at.slider(key="w_p_band_age").value == 0 and at.button(key="p_undo").disabled
    at.button(key="p_redo").click().run()
    at.button(key="p_redo").click().run()
    assert recipe_code(at) == both and at.button(key="p_redo").disabled
    at.button(key="p_reset").click().run()
    assert at.slider(key="w_p_band_age").value == 0 and at.slider(key="w_p_pram_p").value == 0.0
    assert any("No method is active" in i.value for i in at.info)
    at.button(key="p_undo").click().run()  # the reset itself can be undone
    assert recipe_code(at) == both
    at.slider(key="w_p_band_age").set_value(5).run()  # a new change drops what was undone
    assert at.button(key="p_redo").disabled


def test_opening_a_workspace_on_the_data_page_restores_the_work():
    at = app().run()
    at.switch_page("views/data.py").run()
    raw = SURVEY.to_csv(index=False).encode()
    at.file_uploader(key="uploader").set_value(("survey.csv", raw, "text/csv")).run()
    assert at.session_state["analyses"] is None  # an upload has no analyses of its own
    text = survey_workspace(fingerprint="other", analyses=SURVEY_ANALYSES)
    at.file_uploader(key="workspace_upload").set_value(("w.json", text.encode(), "x")).run()
    assert not at.exception
    assert at.session_state["analyses"] == SURVEY_ANALYSES
    assert any("Workspace opened" in s.value and "survey.csv (40 records)" in plain(s.value)
               for s in at.success)
    assert at.multiselect(key="w_qi").value == ["age", "sex"]
    at.switch_page("views/protect.py").run()
    assert at.slider(key="w_p_band_age").value == 10 and at.number_input(key="w_p_seed").value == 7
    at.switch_page("views/tradeoffs.py").run()
    assert at.text_input(key="w_t_band_values").value == "5, 10"
    bad = survey_workspace(roles=Roles(qi=["zip"]))
    at.switch_page("views/data.py").run()
    at.file_uploader(key="workspace_upload").set_value(("bad.json", bad.encode(), "x")).run()
    assert any("nothing of it is applied" in e.value for e in at.error)
    assert at.multiselect(key="w_qi").value == ["age", "sex"]  # unchanged


def test_a_workspace_the_tradeoffs_page_cannot_draw_is_refused_and_the_page_stays_drawn():
    """A Trade-offs field of a type its widget cannot draw (a toggle given text, a values
    field given a number) broke the page on every visit once a workspace kept it."""
    at = app().run()
    at.switch_page("views/data.py").run()
    for fields in ({"w_t_combine": "yes"}, {"w_t_band_values": 5}):
        text = json.dumps({"workspace": 1, "tradeoffs": fields})
        at.file_uploader(key="workspace_upload").set_value(("w.json", text.encode(), "x")).run()
        assert any("nothing of it is applied" in e.value for e in at.error)
    at.switch_page("views/tradeoffs.py").run()
    assert not at.exception
    assert not [e.value for e in at.error if "could not be shown" in e.value]
    assert at.toggle(key="w_t_combine").value is False


def test_a_token_is_taken_over_only_by_the_browser_that_made_it():
    """Issue 39 item 3: the resume token alone takes nothing over; the browser's cookie must
    match, after a closed tab and after a network drop alike (the holder disconnected)."""
    reg = Registry()
    reg.register("t", Holder("teacher", None, {"x": 1}, browser="run.teacher"))
    away = lambda s: False  # noqa: E731 (the teacher's tab closed, or her network dropped)
    assert reg.take("t", Holder("student", None, {}, browser="run.student"), away) is None
    assert reg.take("t", Holder("student", None, {}, browser=None), away) is None
    assert reg.holder("t").session == "teacher"  # still hers
    old = reg.take("t", Holder("reload", None, {}, browser="run.teacher"), away)
    assert old is not None and old.session == "teacher"


def test_the_browser_cookie_names_this_process():
    from ui.infra import server

    browser = server.new_browser_id()
    run, secret = browser.split(".", 1)
    assert run == server.SERVER_RUN and len(secret) >= 22  # 128 random bits, URL-safe
    assert server.issued_here(browser) and not server.issued_here("0badc0de." + secret)
    assert server.new_browser_id() != browser
