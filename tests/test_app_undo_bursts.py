"""Undo on the Protect page takes a burst of one control's changes back as one step (ten presses
on the seed's + left ten undo steps, as many as the server's runs took them in): a pause ends a
burst, a burst back where it began is no step, a slow run does not split one and a later
redrawing does not revive it; in AppTest and in a real server."""

from dataclasses import replace
from types import SimpleNamespace

import pytest
import streamlit as st

from bench.st_client import StSession
from tests.apptest import protect_page
from tests.conftest import run_async
from ui import state


@pytest.mark.parametrize("burst, steps", [(3600.0, 1), (0.0, 10)])
def test_ten_presses_on_a_number_field_are_one_undo_step_in_a_burst(
        monkeypatch: pytest.MonkeyPatch, burst: float, steps: int):
    """Ten presses on the seed's + left two undo steps (as many as the server's runs took
    them in): a burst of one control's changes is one step, a pause ends it."""
    monkeypatch.setattr(state, "BURST_SECONDS", burst)
    at = protect_page()
    at.slider(key="w_p_pram_p").set_value(0.1).run()
    for _ in range(10):
        at.number_input(key="w_p_seed").increment().run()
    assert at.number_input(key="w_p_seed").value == 52
    assert len(at.session_state["protect_history"].past) == 1 + steps
    for _ in range(steps):
        at.button(key="p_undo").click().run()
    assert at.number_input(key="w_p_seed").value == 42
    assert at.slider(key="w_p_pram_p").value == 0.1  # the change before the burst stays


def test_a_burst_back_where_it_began_is_no_step(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(state, "BURST_SECONDS", 3600.0)
    at = protect_page()
    at.number_input(key="w_p_seed").increment().run()
    at.number_input(key="w_p_seed").decrement().run()
    assert at.button(key="p_undo").disabled
    at.number_input(key="w_p_seed").increment().run()  # a step again, which undo takes back
    at.button(key="p_undo").click().run()
    assert at.number_input(key="w_p_seed").value == 42 and at.button(key="p_undo").disabled


async def presses(url: str) -> dict[str, object]:
    """Ten presses on the seed's + in a real server, one run each, then one Undo."""
    s = StSession(timeout=60)
    await s.connect(url)
    try:
        await s.switch_page("Protect")
        for seed in range(43, 53):
            await s.set_value("Seed", seed)
        seen: dict[str, object] = {"seed": s.widget("Seed", "number_input").value}
        await s.click("Undo")
        seen |= {"after_undo": s.widget("Seed", "number_input").value,
                 "undo_left": not s.widget("Undo", "button").proto.disabled,
                 "errors": s.errors()}
    finally:
        await s.close()
    return seen


def test_ten_presses_in_a_real_server_are_one_undo_step(app_url):
    seen = run_async(presses(app_url))
    assert seen["errors"] == []
    assert seen["seed"] == 52 and seen["after_undo"] == 42
    assert seen["undo_left"] is False


def test_a_burst_goes_on_from_its_first_drawing_not_from_later_ones(
        monkeypatch: pytest.MonkeyPatch):
    """A run of several seconds does not split a burst; a redrawing a minute later (an
    expander opened) does not revive it."""
    now = [0.0]
    monkeypatch.setattr(state, "time", SimpleNamespace(monotonic=lambda: now[0]))

    def press(seed: int, at: float) -> int:
        now[0] = at
        state.set_protect_settings(replace(state.protect_settings(), seed=seed),
                                   source="w_p_seed")
        return len(state.protect_history().past)

    def drawn(at: float) -> None:
        now[0] = at
        state.settle_protect()
    try:
        assert press(43, 0.0) == 1
        drawn(5.0)  # a slow run: its results 5 s after the press
        assert press(44, 6.0) == 1  # 1 s after they were drawn: the same burst
        drawn(7.0)
        drawn(60.0)  # a redrawing of the same settings
        assert press(45, 61.0) == 2  # a minute after the burst: a step of its own
    finally:
        for key in ("protect", "protect_history"):
            st.session_state.pop(key, None)
