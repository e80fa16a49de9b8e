"""Small versions of the load benchmark (bench/bench_load.py) against a real server: a few
sessions through the whole journey at once, and uploads read at the same time under a memory
budget that admits only some of them."""

from pathlib import Path

import pytest

from bench.bench_load import STEPS, admission_run, run_sessions
from bench.server import alive, free_port, start_server, stop_server
from sdc_core.data.io import EXAMPLE_PATH, read_table
from tests.big_upload import HELD, NEED, UPLOAD
from tests.conftest import run_async
from ui.infra import memory


@pytest.fixture
def server(tmp_path: Path, request):
    """A server on a free port, with the environment the test's ``env`` mark gives."""
    mark = request.node.get_closest_marker("env")
    port = free_port()
    proc = start_server(port, mark.args[0] if mark else None, log=tmp_path / "server.log")
    yield port
    stop_server(proc)


def test_three_sessions_through_the_journey_at_once(server: int):
    times, failures = run_async(run_sessions(f"http://127.0.0.1:{server}", 3, rows=300,
                                               think=0.0, ramp=0.0))
    # each journey checks that the session sees its own upload and exports its own rows
    assert failures == []
    assert {step: len(times[step]) for step in STEPS} == {
        **{step: 3 for step in STEPS}, "slider": 15}
    assert alive(server)


def example_counted() -> int:
    """What the ledger counts of the example, once for the server whoever opens it: its table
    and one session's results, and what the shared caches keep of all sessions' results."""
    table = memory.memory_bytes(read_table(EXAMPLE_PATH))
    return int(memory.FOOTPRINT * table) + int(memory.SHARED_RESULTS * table)


# Two uploads read at once fit (2 × NEED), a third never does, even after the other two are
# read (2 × HELD + NEED): the outcome does not depend on how the uploads interleave.
BUDGET = (2 * NEED + 2 * HELD + NEED) // 2 + example_counted()


@pytest.mark.env({"SDC_MEMORY_BUDGET": str(BUDGET)})
def test_uploads_at_once_are_admitted_only_as_far_as_the_budget_goes(server: int):
    """Three sessions (opened on the example, which the ledger counts once) upload at the same
    moment: two are admitted and work, one is refused with the reason."""
    assert 1.1 * 2 * NEED < 2 * HELD + NEED  # the budget has room on both sides
    files = [UPLOAD.replace(b"code_g", f"code_{i}".encode(), 1) for i in range(3)]  # 3 hashes
    rows = run_async(admission_run(f"http://127.0.0.1:{server}", 3, files))
    admitted = [r for r in rows.values() if r["admitted"]]
    refused = [r for r in rows.values() if not r["admitted"]]
    assert len(admitted) == 2 and len(refused) == 1, rows
    assert all(r["works"] for r in admitted)
    assert "the server is busy: 2 other sessions hold" in refused[0]["message"]
    assert "try a smaller file or later" in refused[0]["message"]
    assert alive(server)
