"""Compiling kernel groups in other processes: ``moga warmup --jobs`` and a command's
costliest cold group compiled beside it (``moga.warmup.compile_ahead``)."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import moga
from decoders import _cache
from moga import warmup


class FakeProcess:
    """A stand-in for the ``moga warmup`` process: records its groups and waits."""

    def __init__(self, groups, lines=None, returncode=0):
        self.groups = list(groups)
        self.returncode = returncode
        self.waits = 0
        self.relay = type("Relay", (), {"join": lambda self: None})()
        if lines is not None:
            for g in self.groups:
                lines(f"{g}: compiled in 1.0 s")

    def wait(self):
        self.waits += 1
        return self.returncode

    def poll(self):
        return self.returncode


@pytest.fixture
def no_waits():
    before = dict(_cache._ELSEWHERE)
    _cache._ELSEWHERE.clear()
    yield
    _cache._ELSEWHERE.clear()
    _cache._ELSEWHERE.update(before)


def test_shares_balance_the_compile_cost():
    groups = ["decoder", "EASY decoder", "search", "PRB dispatcher"]
    shares = warmup._share(groups, 2)
    assert shares[0] == ["EASY decoder"]  # the costliest alone
    assert sorted(shares[1]) == ["PRB dispatcher", "decoder", "search"]
    assert warmup._share(["decoder", "EASY decoder", "search"], 2) == [["EASY decoder"],
                                                                      ["decoder", "search"]]
    assert sorted(g for s in warmup._share(groups, 9) for g in s) == sorted(groups)
    assert len(warmup._share(groups, 9)) == 4  # never an empty share
    assert warmup._share(groups, 1) == [groups]
    assert set(warmup.COMPILE_COST) == set(warmup.KERNEL_GROUPS)


def test_compile_jobs_reads_its_variable(monkeypatch):
    monkeypatch.setenv("MOGA_COMPILE_JOBS", "3")
    assert warmup.compile_jobs() == 3
    for bad in ("two", "0", "-1", "1.5"):
        monkeypatch.setenv("MOGA_COMPILE_JOBS", bad)
        with pytest.raises(ValueError, match="MOGA_COMPILE_JOBS"):
            warmup.compile_jobs()
    monkeypatch.delenv("MOGA_COMPILE_JOBS")
    assert 1 <= warmup.compile_jobs() <= 4


def test_warmup_shares_cold_groups_and_compiles_a_failed_share_here(monkeypatch):
    started, compiled, lines = [], [], []
    cold = {"decoder", "EASY decoder", "search"}

    def elsewhere(groups, say=None):
        started.append(FakeProcess(groups, say, returncode=0 if "search" not in groups else 1))
        return started[-1]

    monkeypatch.setattr(warmup, "cold_groups", lambda names: [g for g in names if g in cold])
    monkeypatch.setattr(warmup, "_elsewhere", elsewhere)
    monkeypatch.setattr(warmup, "_compile", compiled.append)
    secs = warmup.warmup(["decoder", "EASY decoder", "search", "value decoders"], say=lines.append,
                         jobs=2)
    assert list(secs) == ["decoder", "EASY decoder", "search", "value decoders"]
    assert [p.groups for p in started] == [["decoder", "search"]]
    assert started[0].waits == 1
    # EASY here; "value decoders" (warm) loaded here; the failed process's groups, still
    # cold, here afterwards.
    assert compiled == ["EASY decoder", "value decoders", "decoder", "search"]
    assert "decoder: compiled in 1.0 s" in lines
    assert any("search: the process compiling it failed (exit 1)" in line for line in lines)
    with pytest.raises(ValueError, match="jobs must be at least 1"):
        warmup.warmup(["decoder"], jobs=0)


def test_warmup_in_one_process_starts_none(monkeypatch):
    monkeypatch.setattr(warmup, "cold_groups", lambda names: list(names))
    monkeypatch.setattr(warmup, "_elsewhere", lambda *a: pytest.fail("started a process"))
    monkeypatch.setattr(warmup, "_compile", lambda g: None)
    assert list(warmup.warmup(["decoder", "search"], say=None)) == ["decoder", "search"]


def test_compile_ahead_hands_over_the_costliest_loop_and_the_loop_waits(monkeypatch, no_waits):
    started = []

    def elsewhere(groups, say=None):
        started.append(FakeProcess(groups))
        return started[-1]

    monkeypatch.setattr(warmup, "_elsewhere", elsewhere)
    monkeypatch.setattr(warmup, "compile_jobs", lambda: 2)
    monkeypatch.setattr(warmup, "cold_groups", lambda names: list(names))
    # No loop group but the first, which this process needs at once: nothing to overlap.
    assert warmup.compile_ahead(["decoder", "search"]) is None
    assert warmup.compile_ahead(["EASY decoder"]) is None
    assert started == []
    assert warmup.compile_ahead(["decoder", "EASY decoder", "search"]) == "EASY decoder"
    assert [p.groups for p in started] == [["EASY decoder"]]
    assert set(_cache._ELSEWHERE) == {("federated", "_decode_easy")}
    fed = moga.Federation.preset()
    js = moga.load_default().jobset(n_jobs=10, federation=fed)
    moga.evaluate(js, fed)  # the in-order loop does not wait
    assert started[0].waits == 0
    a = moga.evaluate(js, fed, backfill="easy")
    assert started[0].waits == 1 and not _cache._ELSEWHERE
    b = moga.evaluate(js, fed, backfill="easy")  # waited once
    assert started[0].waits == 1
    assert np.array_equal(a.start, b.start)
    monkeypatch.setattr(warmup, "compile_jobs", lambda: 1)
    assert warmup.compile_ahead(["decoder", "EASY decoder", "search"]) is None


def test_await_elsewhere_forgets_every_kernel_of_a_wait(no_waits):
    calls = []
    _cache.compiling_elsewhere([("m", "a"), ("m", "b")], lambda: calls.append(1))
    _cache.await_elsewhere("m", "x")
    assert calls == []
    _cache.await_elsewhere("m", "b")
    assert calls == [1] and not _cache._ELSEWHERE
    _cache.await_elsewhere("m", "a")
    assert calls == [1]


def test_is_cached_takes_a_dotted_module(tmp_path):
    code = ("from decoders import _cache\n"
            "print(_cache.is_cached('moga.evolution.survival', '_crowding_distance'))\n"
            "d = _cache._kernel_cache_dir('moga.evolution.survival', '_crowding_distance')\n"
            "d.mkdir(parents=True, exist_ok=True)\n"
            "(d / 'survival._crowding_distance-1.py311.nbi').write_text('index')\n"
            "print(_cache.is_cached('moga.evolution.survival', '_crowding_distance'))\n"
            "print(_cache._kernel_cache_dir('moga.evolution.survival', 'nope'))\n")
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["False", "True", "None"]


@pytest.mark.slow
def test_warmup_jobs_compiles_in_two_processes(tmp_path):
    """Two light groups on an empty cache, one in a second ``moga warmup`` process: both end
    in the cache and each says it compiled."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    groups = ["value decoders", "decoder"]
    out = subprocess.run([sys.executable, "-m", "moga", "warmup", "--jobs", "2", "--groups",
                          *groups], env=env, capture_output=True, text=True, check=True).stdout
    assert "up to 2 at once" in out
    for g in groups:
        assert f"{g}: compiled in" in out
    check = ("from moga.warmup import cold_groups; import sys; "
             f"print(cold_groups({groups!r}))")
    assert subprocess.run([sys.executable, "-c", check], env=env, capture_output=True, text=True,
                          check=True).stdout.strip() == "[]"


def test_a_process_compiling_alone_saves_only_its_groups_kernels(tmp_path):
    """The helpers a group compiles are saved by the process that started it, never by two
    processes at once (Numba's index of a function is read, extended and written again)."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    code = ("import sys; from moga.warmup import _compile_alone; "
            "sys.exit(_compile_alone(['value decoders']))")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout
    assert "  value decoders: compiled in" in out
    saved = sorted(p.name.split("-")[0] for p in (tmp_path / "cache").rglob("*.nbi"))
    assert saved == ["value._decode_value", "value._decode_value_batch"]
