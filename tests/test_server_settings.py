"""The server's settings read from its environment (docs/deploying.md): ``SDC_WORKERS`` that is
not a whole number is reported and the default used (ui.infra.workers), and ``SDC_WARMUP=0``
leaves the warm-up out (ui.infra.warmup). The worker processes and the warm-up themselves are
tests/test_workers.py's and tests/test_warmup.py's."""

import pytest

from ui.infra import warmup, workers


@pytest.mark.parametrize("text", ["two", "-1", "1.5"])
def test_an_unreadable_setting_is_reported_and_the_default_used(monkeypatch, text):
    monkeypatch.setenv(workers.WORKERS_ENV, text)
    assert workers.settings_problems() == [
        f"SDC_WORKERS: not a whole number of worker processes (0: none, the work runs in the "
        f"session's thread): {text!r}"]
    assert workers.workers() == workers.default_workers() >= 1
    monkeypatch.setenv(workers.WORKERS_ENV, " 3 ")
    assert workers.settings_problems() == [] and workers.workers() == 3


def test_the_warm_up_can_be_left_out(monkeypatch):
    monkeypatch.setenv(warmup.WARMUP_ENV, "0")
    assert warmup.start() is None
