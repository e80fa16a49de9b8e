"""New sessions take turns (ui.infra.turns, docs/deploying.md "Errors, closed tabs and load"):
at most a few first runs at once, the others in the order they came, a turn given back when its
run hands a job to a worker process; and a session's first run is cheap to compile (no
Streamlit magic)."""

from __future__ import annotations

import ast
import threading
import time
import tomllib
from pathlib import Path

import pytest

from ui.infra import turns as module
from ui.infra.turns import Turns

ROOT = Path(__file__).resolve().parents[1]


def until(done, seconds: float = 5) -> bool:
    """Wait until ``done()`` (at most ``seconds``); whether it is."""
    deadline = time.monotonic() + seconds
    while not done() and time.monotonic() < deadline:
        time.sleep(0.001)
    return done()


@pytest.mark.parametrize("slots", [1, 2, 3])
def test_at_most_the_slots_hold_a_turn_and_the_others_come_in_order(slots):
    """Threads ask one after the other: the first ``slots`` hold a turn at once, the others
    wait; each release lets in exactly one, the one that asked first."""
    turns, n = Turns(slots), 3 * slots + 2
    order: list[int] = []
    lock = threading.Lock()

    def take(i: int) -> None:
        turns.acquire()
        with lock:
            order.append(i)

    for i in range(n):  # the next asks only once this one holds or waits
        threading.Thread(target=take, args=(i,), daemon=True).start()
        assert until(lambda i=i: len(order) + turns.waiting() == i + 1)
    assert sorted(order) == list(range(slots)) and turns.waiting() == n - slots
    for held in range(slots, n):
        turns.release()
        assert until(lambda held=held: len(order) > held)
        time.sleep(0.01)  # a second one let in would be in by now
        assert order[slots:] == list(range(slots, held + 1))  # first come, first served
    assert turns.waiting() == 0


def test_a_released_slot_is_free_again_and_no_one_waits():
    turns = Turns(1)
    turns.acquire()
    assert turns.waiting() == 0
    turns.release()
    got = threading.Event()

    def take() -> None:
        turns.acquire()
        got.set()

    threading.Thread(target=take).start()
    assert got.wait(5)


def test_only_a_first_run_waits_for_a_turn(monkeypatch):
    busy = Turns(1)
    monkeypatch.setattr(module, "FIRST", busy)
    ran = {True: threading.Event(), False: threading.Event()}

    def run(first: bool) -> None:
        with module.first_run(first):
            ran[first].set()

    busy.acquire()  # every slot taken
    try:
        threading.Thread(target=run, args=(False,), daemon=True).start()
        assert ran[False].wait(5)  # a later run goes at once
        threading.Thread(target=run, args=(True,), daemon=True).start()
        deadline = time.monotonic() + 5
        while busy.waiting() == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert busy.waiting() == 1 and not ran[True].is_set()  # a first run waits
    finally:
        busy.release()
    assert ran[True].wait(5)  # and runs at its turn


def test_a_first_run_that_waits_on_a_worker_lets_the_next_go(monkeypatch):
    """A first page that computes (a link to the Risk page) waits on a worker process: its
    turn ends when it hands the job over, and the next new session need not wait for the
    job."""
    from ui.infra import workers

    monkeypatch.setattr(module, "FIRST", Turns(1))
    monkeypatch.setenv(workers.WORKERS_ENV, "1")
    handed, next_went = threading.Event(), threading.Event()

    def computing() -> None:
        with module.first_run(True):
            handed.set()
            workers.run(time.sleep, 3)

    def after() -> None:
        with module.first_run(True):
            next_went.set()

    try:
        first = threading.Thread(target=computing, daemon=True)
        first.start()
        assert handed.wait(60)
        threading.Thread(target=after, daemon=True).start()
        assert next_went.wait(60)
        assert first.is_alive()  # its job still runs: the next went before it ended
        first.join(60)
        assert module.FIRST.waiting() == 0
        module.FIRST.acquire()  # the slot is free again, given back once only
        module.FIRST.release()
    finally:
        workers.shutdown()


def test_a_turn_given_back_is_given_back_once(monkeypatch):
    turns = Turns(1)
    monkeypatch.setattr(module, "FIRST", turns)
    with module.first_run(True):
        module.give_back()
        module.give_back()
        turns.acquire()  # free after the first give_back
    assert turns.waiting() == 0
    got = threading.Event()

    def take() -> None:
        turns.acquire()
        got.set()

    threading.Thread(target=take, daemon=True).start()
    assert not got.wait(0.3)  # the block's end released nothing more: one slot, held
    turns.release()
    assert got.wait(5)


# -- compiled cheaply --------------------------------------------------------------------------


def magic_statements(path: Path) -> list[int]:
    """The lines of ``path`` holding an expression statement Streamlit's magic would have
    drawn with ``st.write``: not a call, not a docstring, not ``yield`` nor ``await``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    kinds = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    found = []
    for parent in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(parent, field, None)
            if not isinstance(block, list):
                continue
            for i, node in enumerate(block):
                if not isinstance(node, ast.Expr) or isinstance(
                        node.value, ast.Call | ast.Yield | ast.YieldFrom | ast.Await):
                    continue
                docstring = (i == 0 and isinstance(parent, kinds)
                             and isinstance(node.value, ast.Constant)
                             and isinstance(node.value.value, str))
                if not docstring:
                    found.append(node.lineno)
    return found


def test_the_pages_are_compiled_without_magic():
    """Streamlit compiles the entry point and the page again for the first visitor after every
    session has left; with magic that rewrote the page's syntax tree in Python first, eight
    times the work (views/data.py, best of 20 on a busy machine: 9 ms of compiling became
    78 ms, under the script cache's lock that every run takes)."""
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["runner"]["magicEnabled"] is False
    scripts = [ROOT / "app.py", *sorted((ROOT / "views").glob("*.py"))]
    assert len(scripts) > 5
    drawn = {p.name: lines for p in scripts if (lines := magic_statements(p))}
    assert drawn == {}, f"expressions only magic would draw: {drawn}"


def test_the_magic_check_finds_what_magic_draws(tmp_path):
    page = tmp_path / "page.py"
    page.write_text('"""The page."""\nimport streamlit as st\nx = 1\nx\nst.write(x)\n'
                    'def f():\n    """Doc."""\n    "shown"\n    yield 1\n')
    assert magic_statements(page) == [4, 8]
