"""Streamlit's configuration read without its lock in the server (``ui.infra.server.
lock_free_config_reads``; docs/deploying.md, "A class at once, measured"): the same values as
Streamlit's own reads, its error for an unknown name, a change made with ``set_option`` seen,
and a read that no longer waits while another thread holds the lock."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from streamlit import config

from ui.infra.server import lock_free_config_reads


@pytest.fixture
def lock_free(monkeypatch):
    """The server's reads, undone after the test."""
    monkeypatch.setattr(config, "get_option", config.get_option)
    monkeypatch.setattr(config, "get_options_for_section", config.get_options_for_section)
    locked = config.get_option
    lock_free_config_reads()
    assert config.get_option is not locked
    return locked


def test_every_option_reads_as_streamlit_reads_it(lock_free):
    names = list(config.get_config_options())
    assert len(names) > 100
    assert [config.get_option(n) for n in names] == [lock_free(n) for n in names]


def test_every_section_reads_as_streamlit_reads_it(monkeypatch):
    locked = config.get_options_for_section
    monkeypatch.setattr(config, "get_option", config.get_option)
    monkeypatch.setattr(config, "get_options_for_section", locked)
    lock_free_config_reads()
    assert config.get_options_for_section is not locked
    sections = {o.section for o in config.get_config_options().values()}
    assert {"theme", "server", "client"} <= sections
    for section in sections:
        assert config.get_options_for_section(section) == locked(section)


def test_an_unknown_option_is_streamlit_s_error(lock_free):
    with pytest.raises(RuntimeError, match="not defined"):
        config.get_option("server.noSuchOption")


def test_a_change_is_seen(lock_free):
    before = config.get_option("global.minCachedMessageSize")
    config.set_option("global.minCachedMessageSize", before + 1)
    try:
        assert config.get_option("global.minCachedMessageSize") == before + 1
    finally:
        config.set_option("global.minCachedMessageSize", before)


def test_installed_twice_it_wraps_once(lock_free):
    once = config.get_option
    lock_free_config_reads()
    assert config.get_option is once


def test_a_read_does_not_wait_for_the_lock(lock_free):
    """While another thread holds the configuration's lock, a read returns at once; Streamlit's
    own read waits for the lock."""
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with config._config_lock:
            held.set()
            release.wait(10)

    with ThreadPoolExecutor(2) as pool:
        holder = pool.submit(hold)
        assert held.wait(10)
        try:
            fast = pool.submit(config.get_option, "global.minCachedMessageSize")
            assert fast.result(timeout=2) > 0
            theme = pool.submit(config.get_options_for_section, "theme")
            assert "base" in theme.result(timeout=2)
            slow = threading.Thread(target=lock_free, args=("global.minCachedMessageSize",),
                                    daemon=True)
            slow.start()
            slow.join(0.5)
            assert slow.is_alive()  # Streamlit's read waits while the lock is held
        finally:
            release.set()
        holder.result(10)
        slow.join(10)
        assert not slow.is_alive()
