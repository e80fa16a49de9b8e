"""The memory ledger's accounting (ui.infra.memory.Ledger), on ledgers of the test's own: the
built-in data sets shared by every session are counted once and never freed by the idle
window, an admission leaves the budget less what the server holds, and a session's data moves
to the session that takes its work over. The server's one ledger, the pages and the uploads
are tests/test_memory.py's and tests/test_ledger_sharing.py's."""

from __future__ import annotations

import pandas as pd

from ui.infra.memory import Ledger
from ui.logic.session import Table


def test_admission_subtracts_the_shared_data_once_and_the_others_data():
    """What an admission leaves is the budget less what the server holds: the shared data
    once, the other sessions' entries and reservations; a session's own entry is replaced."""
    ledger = Ledger()
    ledger.share("example:a", 200)
    ledger.share("example:a", 200)  # entered again by every session that opens it: once
    ledger.share("example:b", 60)
    ledger.share("example:b", 100)  # entered again larger: the larger counts
    ledger.hold("x", 300, "x.csv", Table(None))
    assert ledger.total() == (1, 600)
    assert ledger.room("y", 1000) == 400 and ledger.room("x", 1000) == 700
    refused = ledger.admit("y", 401, limit=1000)
    assert refused == ("the server is busy: 1 other session holds 300 bytes of its 1.0 kB "
                       "budget (and its built-in data sets 300 bytes), and this file would "
                       "take about 401 bytes; try a smaller file or later")
    assert ledger.admit("y", 400, limit=1000) is None
    assert ledger.total() == (2, 1000)
    alone = Ledger()
    alone.share("example:a", 200)
    assert alone.admit("z", 801, limit=1000) == (
        "this file would take about 801 bytes in the server, more than the 800 bytes its "
        "memory budget of 1.0 kB leaves beside its built-in data sets (200 bytes); try a "
        "smaller file (or a sample of it)")


def test_shared_data_is_never_freed_by_the_idle_window():
    ledger = Ledger()
    ledger.share("example:a", 200)
    ledger.hold("x", 300, "x.csv", Table(pd.DataFrame({"v": [1]})), now=0.0)
    assert ledger.prune(lambda s: False, idle=60.0, grace=60.0, now=1000.0) == ["x"]
    assert ledger.total() == (0, 200) and ledger.shared() == 200


def test_the_ledger_moves_a_sessions_data_to_the_one_taking_it_over():
    class Holding:
        df = "table"

    ledger = Ledger()
    ledger.hold("a", 1000, "survey.csv", Holding(), now=0.0)
    ledger.prune(lambda s: False, idle=3600.0, grace=3600.0, now=10.0)  # a's tab is closed
    ledger.move("a", "b", now=20.0)
    assert ledger.held("a") == 0 and ledger.held("b") == 1000 and ledger.total() == (1, 1000)
    # b is in use from now: the idle window counts from the take-over
    assert ledger.prune(lambda s: s == "b", idle=3600.0, grace=3600.0, now=3000.0) == []
