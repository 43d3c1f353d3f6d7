"""Compiling kernel groups in other processes: ``moga warmup --jobs`` and a command's
costliest cold group compiled beside it (``moga.warmup.compile_ahead``)."""

from __future__ import annotations

import os
import random
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
        self.terminated = False
        self.tail = ["KeyError: 'boom'"] if returncode else []
        self.relay = type("Relay", (), {"join": lambda self: None})()
        if lines is not None and not returncode:
            for g in self.groups:
                lines(f"{g}: compiled in 1.5 s")

    def terminate(self):
        self.terminated = True

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
    cold = {"decoder", "EASY decoder", "search", "PRB dispatcher"}

    def elsewhere(groups, say=None):
        ok = "PRB dispatcher" not in groups
        started.append(FakeProcess(groups, say, returncode=0 if ok else 1))
        if ok:
            cold.difference_update(groups)
        return started[-1]

    def compile_here(g):
        compiled.append(g)
        cold.discard(g)

    monkeypatch.setattr(warmup, "cold_groups", lambda names: [g for g in names if g in cold])
    monkeypatch.setattr(warmup, "_elsewhere", elsewhere)
    monkeypatch.setattr(warmup, "_compile", compile_here)
    secs = warmup.warmup(["decoder", "EASY decoder", "search", "value decoders", "PRB dispatcher"],
                         say=lines.append, jobs=3)
    assert list(secs) == ["decoder", "EASY decoder", "search", "value decoders", "PRB dispatcher"]
    assert [p.groups for p in started] == [["search"], ["decoder", "PRB dispatcher"]]
    assert all(p.waits == 1 for p in started)
    assert secs["search"] == 1.5  # the other process's own seconds
    # EASY here; "value decoders" (warm) loaded here; the failed process's groups here after.
    assert compiled == ["EASY decoder", "value decoders", "decoder", "PRB dispatcher"]
    assert "search: compiled in 1.5 s" in lines
    assert ("PRB dispatcher: the process compiling it failed (exit 1: KeyError: 'boom'); "
            "compiling it here") in lines
    with pytest.raises(ValueError, match=r"jobs must be in \[1, 64\]"):
        warmup.warmup(["decoder"], jobs=0)


def test_warmup_stops_its_processes_when_it_raises(monkeypatch):
    started = []

    def elsewhere(groups, say=None):
        started.append(FakeProcess(groups))
        started[-1].returncode = None  # still running
        return started[-1]

    def boom(g):
        raise RuntimeError("compile failed")

    monkeypatch.setattr(warmup, "cold_groups", lambda names: list(names))
    monkeypatch.setattr(warmup, "_elsewhere", elsewhere)
    monkeypatch.setattr(warmup, "_compile", boom)
    with pytest.raises(RuntimeError, match="compile failed"):
        warmup.warmup(["decoder", "EASY decoder"], say=None, jobs=2)
    assert [p.groups for p in started] == [["decoder"]]
    assert started[0].terminated


def test_warmup_in_one_process_starts_none(monkeypatch):
    monkeypatch.setattr(warmup, "cold_groups", lambda names: list(names))
    monkeypatch.setattr(warmup, "_elsewhere", lambda *a: pytest.fail("started a process"))
    monkeypatch.setattr(warmup, "_compile", lambda g: None)
    assert list(warmup.warmup(["decoder", "search"], say=None)) == ["decoder", "search"]


def test_compile_ahead_hands_over_the_costliest_loop_and_the_loop_waits(monkeypatch, no_waits):
    started = []
    cold = {"decoder", "EASY decoder", "search"}

    def elsewhere(groups, say=None):
        started.append(FakeProcess(groups))
        cold.difference_update(groups)  # the process leaves them in the cache
        return started[-1]

    monkeypatch.setattr(warmup, "_elsewhere", elsewhere)
    monkeypatch.setattr(warmup, "compile_jobs", lambda: 2)
    monkeypatch.setattr(warmup, "cold_groups", lambda names: [g for g in names if g in cold])
    compiled = []

    def compile_here(g):
        assert started[0].waits == 0  # before this process waits for the other
        compiled.append(g)
        cold.discard(g)
        random.random()
        np.random.random()  # noqa: NPY002 - a warm-up's draws must not move the command's

    monkeypatch.setattr(warmup, "_compile", compile_here)
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
    cold.discard("decoder")  # compiled by that call
    states = random.getstate(), np.random.get_state()[1].copy()  # noqa: NPY002
    a = moga.evaluate(js, fed, backfill="easy")
    assert started[0].waits == 1 and not _cache._ELSEWHERE
    # Meanwhile this process compiled its other cold group, and nothing else.
    assert compiled == ["search"]
    assert random.getstate() == states[0]
    assert np.array_equal(np.random.get_state()[1], states[1])  # noqa: NPY002
    b = moga.evaluate(js, fed, backfill="easy")  # waited once
    assert started[0].waits == 1
    assert np.array_equal(a.start, b.start)
    monkeypatch.setattr(warmup, "compile_jobs", lambda: 1)
    cold.add("EASY decoder")
    assert warmup.compile_ahead(["decoder", "EASY decoder", "search"]) is None


def test_compile_ahead_warns_and_goes_on_alone(monkeypatch, no_waits):
    monkeypatch.setattr(warmup, "cold_groups", lambda names: list(names))
    monkeypatch.setenv("MOGA_COMPILE_JOBS", "two")
    with pytest.warns(UserWarning, match="MOGA_COMPILE_JOBS must be a whole number"):
        assert warmup.compile_ahead(["decoder", "EASY decoder"]) is None
    monkeypatch.setenv("MOGA_COMPILE_JOBS", "2")

    def cannot(groups, say=None):
        raise OSError("no such file")

    monkeypatch.setattr(warmup, "_elsewhere", cannot)
    with pytest.warns(UserWarning, match="could not start a second process to compile EASY "
                                         "decoder .no such file."):
        assert warmup.compile_ahead(["decoder", "EASY decoder"]) is None
    assert not _cache._ELSEWHERE
    failed = FakeProcess(["EASY decoder"], returncode=1)
    monkeypatch.setattr(warmup, "_elsewhere", lambda groups, say=None: failed)
    assert warmup.compile_ahead(["decoder", "EASY decoder"]) == "EASY decoder"
    with pytest.warns(UserWarning, match=r"compiling EASY decoder failed \(exit 1: KeyError"):
        _cache.await_elsewhere("federated", "_decode_easy")


def test_a_loop_called_while_this_process_compiles_waits_too(monkeypatch, no_waits):
    """A warm-up run meanwhile that reaches the awaited loop waits for the other process
    (and then loads the loop) rather than compiling it here as well."""
    proc = FakeProcess(["EASY decoder"])
    cold = {"decoder", "EASY decoder", "search"}

    def elsewhere(groups, say=None):
        cold.difference_update(groups)  # the process leaves them in the cache
        return proc

    monkeypatch.setattr(warmup, "_elsewhere", elsewhere)
    monkeypatch.setattr(warmup, "compile_jobs", lambda: 2)
    monkeypatch.setattr(warmup, "cold_groups", lambda names: [g for g in names if g in cold])
    seen = []

    def compile_here(g):
        cold.discard(g)
        _cache.await_elsewhere("federated", "_decode_easy")  # as a run of the loop would
        seen.append((g, proc.waits))

    monkeypatch.setattr(warmup, "_compile", compile_here)
    assert warmup.compile_ahead(["decoder", "EASY decoder", "search"]) == "EASY decoder"
    _cache.await_elsewhere("federated", "_decode_easy")
    assert seen == [("decoder", 1), ("search", 1)] and proc.waits == 1
    assert not _cache._ELSEWHERE


def test_threads_calling_the_awaited_loop_at_once_all_wait_for_the_process(monkeypatch,
                                                                          no_waits):
    """Two threads reaching the awaited loop together: each goes on only once this
    process's other groups are compiled and the other process has ended."""
    import threading
    import time

    class SlowProcess(FakeProcess):
        def wait(self):
            time.sleep(0.2)
            return super().wait()

    proc = SlowProcess(["EASY decoder"])
    cold = {"decoder", "EASY decoder", "search"}

    def elsewhere(groups, say=None):
        cold.difference_update(groups)
        return proc

    def compile_here(g):
        time.sleep(0.1)
        cold.discard(g)

    monkeypatch.setattr(warmup, "_elsewhere", elsewhere)
    monkeypatch.setattr(warmup, "compile_jobs", lambda: 2)
    monkeypatch.setattr(warmup, "cold_groups", lambda names: [g for g in names if g in cold])
    monkeypatch.setattr(warmup, "_compile", compile_here)
    assert warmup.compile_ahead(["decoder", "EASY decoder", "search"]) == "EASY decoder"
    seen = []

    def call():
        _cache.await_elsewhere("federated", "_decode_easy")
        seen.append((proc.waits, sorted(cold)))

    threads = [threading.Thread(target=call) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == [(1, []), (1, [])]
    assert not _cache._ELSEWHERE


@pytest.mark.slow
@pytest.mark.parametrize("group", sorted(warmup.KERNEL_GROUPS))
def test_a_groups_warm_up_runs_no_loop_of_another_group(monkeypatch, group):
    """What :func:`compile_ahead` relies on: compiling a group here while another process
    compiles a loop never compiles that loop here too. Each group's warm-up runs only
    its own loops of the federated kernel, or the in-order one, which every command
    with a search uses first."""
    from decoders import federated

    ran = set()
    run_rows = federated.run_rows

    def spy(jobs, plat, orders, blacklists, model, mode, *args, **kwargs):
        ran.add(federated._LOOP_NAMES[mode])
        return run_rows(jobs, plat, orders, blacklists, model, mode, *args, **kwargs)

    monkeypatch.setattr(federated, "run_rows", spy)
    warmup._compile(group)
    own = {k for m, k in warmup.KERNEL_GROUPS[group][1] if m == "federated"}
    assert ran <= own | {"_decode_in_order"}, f"{group} runs {sorted(ran - own)}"


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
    lines = out.splitlines()
    first_end = min(i for i, line in enumerate(lines) if "compiled in" in line)
    for g in groups:  # both groups started compiling before either had ended
        assert any(f"{g}: compiling (" in line for line in lines[:first_end]), out
        assert f"{g}: compiled in" in out
    check = ("from moga.warmup import cold_groups; import sys; "
             f"print(cold_groups({groups!r}))")
    assert subprocess.run([sys.executable, "-c", check], env=env, capture_output=True, text=True,
                          check=True).stdout.strip() == "[]"


def _save_many(args):
    """Save ``n`` signatures ``(tag, i)`` of one function's cache index (a worker)."""
    path, tag, n = args
    from numba.core.caching import IndexDataCacheFile

    import decoders  # noqa: F401 - locks the saves

    f = IndexDataCacheFile(path, "mod.fn-1.py311", ("stamp", 1))
    for i in range(n):
        f.save((tag, i), f"{tag}-{i}")


def test_processes_saving_one_function_at_once_keep_every_signature(tmp_path):
    """Numba reads, extends and writes a function's index: without the lock, two processes
    saving at once lose each other's signatures or point them at the other's data."""
    import multiprocessing

    from numba.core.caching import IndexDataCacheFile

    assert _cache.lock_cache_saves()
    assert getattr(IndexDataCacheFile.save, "_moga_locked", False)
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(2) as pool:
        pool.map(_save_many, [(str(tmp_path), "a", 60), (str(tmp_path), "b", 60)])
    f = IndexDataCacheFile(str(tmp_path), "mod.fn-1.py311", ("stamp", 1))
    for tag in "ab":
        for i in range(60):
            assert f.load((tag, i)) == f"{tag}-{i}"


@pytest.mark.slow
def test_a_loop_compiled_in_a_second_process_is_loaded_here(tmp_path):
    """The real path: compile_ahead starts the process, the loop's first call waits for it
    and loads the kernel from the cache (a hit, no compile here)."""
    code = ("import moga, decoders.federated as f\n"
            "from moga.warmup import compile_ahead\n"
            "from moga.model.schedule import dispatch_schedule\n"
            "print(compile_ahead(['decoder', 'PRB dispatcher']))\n"
            "fed = moga.Federation.preset()\n"
            "js = moga.load_default().jobset(n_jobs=12, federation=fed)\n"
            "dispatch_schedule(js, fed, 'prb')\n"
            "print(sum(f._decode_prb.stats.cache_hits.values()), "
            "sum(f._decode_prb.stats.cache_misses.values()))\n")
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache"), "MOGA_COMPILE_JOBS": "2"}
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       check=True)
    assert r.stdout.split() == ["PRB", "dispatcher", "1", "0"], r.stdout + r.stderr
