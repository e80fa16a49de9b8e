"""The teacher's view of the class, its figures (issue 54): the runs of the last minute, their
median and 95th percentile against a plain loop written from the definition, the window's
edges with an injected clock, the verdict's threshold, and the server's record of runs under
many threads and at its bound (``ui.logic.run_times``, ``ui.infra.pace``)."""

import math
import random
import threading

import pytest

from ui.infra import pace
from ui.infra.pace import Record
from ui.logic.run_times import (
    KEEPING_UP,
    WINDOW,
    RunTimes,
    busy,
    class_line,
    seconds_text,
    verdict,
    window_times,
)


def percentile_loop(values: list[float], q: float) -> float:
    """The q-th percentile by its definition (Hyndman and Fan's 7, NumPy's default): sort,
    h = (n − 1)·q/100, and go from the ⌊h⌋-th value a fraction h − ⌊h⌋ of the way to the
    next."""
    xs = sorted(values)
    h = (len(xs) - 1) * q / 100
    j = math.floor(h)
    if j + 1 >= len(xs):
        return xs[j]
    return xs[j] + (h - j) * (xs[j + 1] - xs[j])


class Clock:
    """A clock the test moves by hand."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize("n", [1, 2, 3, 7, 20, 101, 2000])
def test_the_figures_are_those_of_a_loop_over_the_runs_of_the_window(n):
    rng = random.Random(n)
    now = 5000.0
    runs = [(now - rng.uniform(0, 2 * WINDOW), rng.lognormvariate(-2, 1)) for _ in range(n)]
    inside = []
    for end, seconds in runs:
        if now - WINDOW < end <= now:
            inside.append(seconds)
    got = window_times(runs, now)
    assert got.runs == len(inside)
    if not inside:
        assert got == RunTimes(0, None, None)
        return
    assert got.median == pytest.approx(percentile_loop(inside, 50), rel=1e-12)
    assert got.p95 == pytest.approx(percentile_loop(inside, 95), rel=1e-12)
    assert min(inside) <= got.median <= got.p95 <= max(inside)


def test_an_empty_window_has_no_figures_and_says_so():
    assert window_times([], 100.0) == RunTimes(0, None, None)
    old = [(10.0, 0.5), (39.999, 3.0)]  # ended 60 s or more before 100
    assert window_times(old + [(40.0, 2.0)], 100.0) == RunTimes(0, None, None)
    none = window_times(old, 100.0)
    assert verdict(none) == "no moves in the last minute" and not busy(none)
    assert seconds_text(none.median) == "—"


def recent(record: Record):
    """The record's figures for the minute before its clock's now."""
    return window_times(*record.snapshot())


def test_runs_leave_the_record_s_window_sixty_seconds_after_they_end():
    clock = Clock(1000.0)
    record = Record(clock=clock)
    record.add(2.5)  # ends at 1000
    clock.now = 1030.0
    record.add(0.1)
    record.add(0.3)
    assert recent(record) == RunTimes(3, 0.3, pytest.approx(percentile_loop([2.5, .1, .3], 95)))
    clock.now = 1059.9
    assert recent(record).runs == 3 and busy(recent(record))
    clock.now = 1060.0  # the first run ended 60 s ago: out
    assert recent(record) == RunTimes(2, pytest.approx(0.2), pytest.approx(0.29))
    assert verdict(recent(record)) == "keeping up"
    clock.now = 1090.0
    assert recent(record) == RunTimes(0, None, None)
    assert len(record.runs()) == 3  # kept, only out of the window


def test_the_verdict_turns_busy_just_past_one_second_at_the_95th_percentile():
    fast = window_times([(1.0, 0.05)] * 94 + [(1.0, KEEPING_UP)] * 6, 1.0)
    assert fast.p95 == KEEPING_UP and verdict(fast) == "keeping up"
    slow = window_times([(1.0, 0.05)] * 94 + [(1.0, 1.2)] * 6, 1.0)
    assert slow.p95 > KEEPING_UP and busy(slow)
    assert verdict(slow) == "busy — wait a moment before the next instruction"
    # one slow move in a hundred is not a busy server
    one = window_times([(1.0, 0.05)] * 99 + [(1.0, 30.0)], 1.0)
    assert verdict(one) == "keeping up"


def test_the_teacher_s_line_has_counts_and_seconds_only():
    times = window_times([(1.0, 0.04)] * 3 + [(1.0, 1.5)] * 2, 1.0)
    assert class_line(times, 28) == (
        f"**28** sessions connected · **5** moves in the last minute (median "
        f"{seconds_text(times.median)}, 95\u00a0% within {seconds_text(times.p95)}): "
        "**busy — wait a moment before the next instruction**")
    assert seconds_text(times.median) == "0.04\u00a0s" and seconds_text(times.p95) == "1.5\u00a0s"
    assert class_line(RunTimes(0, None, None), None) == (
        "**—** sessions connected · **0** moves in the last minute: "
        "**no moves in the last minute**")
    assert class_line(RunTimes(1, 0.2, 0.2), 1).startswith(
        "**1** session connected · **1** move in the last minute (median 0.20\u00a0s")


def test_the_record_keeps_its_last_runs_only():
    clock = Clock(0.0)
    record = Record(kept=100, clock=clock)
    for i in range(250):
        record.add(i / 1000, end=float(i))
    kept = record.runs()
    assert len(kept) == 100 and [end for end, _ in kept] == [float(i) for i in range(150, 250)]
    assert pace.KEPT >= 60 * 60  # a class of sixty moving once a second for a minute


def test_many_threads_add_runs_while_the_figures_are_read():
    record = Record(kept=100_000)
    threads, per_thread = 8, 3000
    failures: list[BaseException] = []
    stop = threading.Event()

    def add(t: int) -> None:
        for i in range(per_thread):
            record.add(t + i / per_thread)

    def read() -> None:
        try:
            while not stop.is_set():
                recent(record)
        except BaseException as err:  # noqa: BLE001 - the test reports what the reader met
            failures.append(err)

    reader = threading.Thread(target=read)
    reader.start()
    adders = [threading.Thread(target=add, args=(t,)) for t in range(threads)]
    for a in adders:
        a.start()
    for a in adders:
        a.join()
    stop.set()
    reader.join()
    assert not failures
    seconds = sorted(s for _, s in record.runs())
    assert seconds == sorted(t + i / per_thread for t in range(threads) for i in range(per_thread))
    assert recent(record).runs == threads * per_thread


def test_a_run_is_timed_once_however_it_ends_and_a_part_inside_it_is_not_a_run(monkeypatch):
    clock = Clock(50.0)
    record = Record(clock=clock)
    monkeypatch.setattr(pace, "RECORD", record)
    with pace.timed():
        clock.now = 50.25
        with pace.timed():  # a fragment drawn by its page's run
            clock.now = 50.5
    assert record.runs() == [(50.5, 0.5)]
    with pytest.raises(KeyError), pace.timed():  # a run that ends in an error, or a stop
        clock.now = 52.0
        raise KeyError("x")
    assert record.runs() == [(50.5, 0.5), (52.0, 1.5)]
    with pace.timed():  # the thread is out of its run again: a new run is timed
        clock.now = 52.125
    assert record.runs()[-1] == (52.125, 0.125)



def test_a_run_counts_from_the_arrival_of_the_latest_request_it_serves(monkeypatch):
    clock = Clock(10.0)
    record, arrivals = Record(clock=clock), pace.Arrivals()
    monkeypatch.setattr(pace, "RECORD", record)
    monkeypatch.setattr(pace, "ARRIVALS", arrivals)
    arrivals.note("a", 9.0)
    arrivals.note("a", 9.5)  # a second move before the run started: the run answers it
    arrivals.note("b", 8.0)
    with pace.timed("a"):
        clock.now = 10.25
    assert record.runs() == [(10.25, 0.75)]
    with pace.timed("a"):  # served: a run of "a" without a new request counts from its start
        clock.now = 11.0
    assert record.runs()[-1] == (11.0, 0.75)
    with pace.timed(None):  # no session: from its start; "b"'s request stays for its run
        clock.now = 11.5
    assert record.runs()[-1] == (11.5, 0.5)
    with pace.timed("b"):
        clock.now = 12.0
    assert record.runs()[-1] == (12.0, 4.0)
    arrivals.note("c", 99.0)  # noted on another clock's time, after the run began: not used
    with pace.timed("c"):
        clock.now = 12.5
    assert record.runs()[-1] == (12.5, 0.5)
    assert arrivals.take("a") is None and arrivals.take("c") is None


def test_pending_requests_are_kept_for_a_bounded_number_of_sessions():
    arrivals = pace.Arrivals(kept=3)
    for i, session in enumerate("abcd"):
        arrivals.note(session, float(i))
    assert arrivals.take("a") is None  # the oldest left for "d"
    arrivals.note("b", 7.0)  # noted again: now the newest
    arrivals.note("e", 8.0)
    assert [arrivals.take(s) for s in "bcde"] == [7.0, None, 3.0, 8.0]
