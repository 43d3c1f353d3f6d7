"""``moga.Search``: a run that can be stepped, saved, continued and evaluated elsewhere."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import moga
from moga.evolution.search import STATE_VERSION, StopRule

POP, GEN = 16, 14


@pytest.fixture(scope="module")
def setup():
    fed = moga.Federation.preset()
    js = moga.load_default().jobset(n_jobs=90, federation=fed)
    return js, fed


def _same(a, b, decodes=True):
    np.testing.assert_array_equal(a.F, b.F)
    np.testing.assert_array_equal(a.X, b.X)
    assert not decodes or a.n_evals == b.n_evals
    for key in ("n_gen", "n_evals", "hv", "front_size"):
        np.testing.assert_array_equal(a.history[key], b.history[key])
    assert a.info["stopped_by"] == b.info["stopped_by"]


CASES = [
    {"seed": 1},
    {"seed": 2, "params": {"archive_size": 0}},
    {"seed": 3, "params": {"easy_search": False, "fast_end": 2}},
    {"seed": 4, "params": {"mating_neighbours": 0}},
    {"seed": 5, "stagnation": 2, "stagnation_tol": 0.05},
    {"seed": 6, "use_blacklist": False, "model": "at_start"},
]


@pytest.mark.parametrize("kwargs", CASES)
def test_a_search_stepped_until_done_is_moga_run(setup, kwargs):
    js, fed = setup
    kwargs = {"pop_size": POP, "n_gen": GEN, **kwargs}
    s = moga.Search(js, fed, **kwargs)
    n = 0
    while not s.done:
        s.step()
        n += 1
        assert s.n_gen == n
    _same(s.result(), moga.run(js, fed, **kwargs))
    with pytest.raises(RuntimeError, match="the search is done"):
        s.step()


@pytest.mark.parametrize("kwargs", CASES)
@pytest.mark.parametrize("steps", [0, 1, 6])
def test_a_state_saved_after_any_step_continues_bit_for_bit(setup, tmp_path, kwargs, steps):
    js, fed = setup
    kwargs = {"pop_size": POP, "n_gen": GEN, **kwargs}
    want = moga.run(js, fed, **kwargs)
    s = moga.Search(js, fed, **kwargs)
    for _ in range(steps):
        if not s.done:
            s.step()
    moga.save_state(s.state(), tmp_path / "s.npz")
    del s
    again = moga.Search.from_state(moga.load_state(tmp_path / "s.npz"), jobset=js,
                                   federation=fed, **{k: v for k, v in kwargs.items()})
    _same(again.run(), want)


@pytest.mark.parametrize("steps", [1, 2])
def test_an_island_run_saved_after_an_epoch_continues_bit_for_bit(setup, tmp_path, steps):
    js, fed = setup
    kw = {"pop_size": POP, "n_gen": 9, "seed": 4, "islands": 3, "migration": {"interval": 3}}
    want = moga.run(js, fed, **kw)
    s = moga.Search(js, fed, **kw)
    for _ in range(steps):
        s.step()
    assert s.n_gen == 3 * steps
    moga.save_state(s.state(), tmp_path / "s.npz")
    again = moga.Search.from_state(moga.load_state(tmp_path / "s.npz"), jobset=js,
                                   federation=fed, islands=3, seed=4)
    got = again.run()
    _same(got, want)
    assert got.info["epochs"] == want.info["epochs"] == 3
    with pytest.raises(ValueError, match=r"islands 2 \(the state's: 3\)"):
        moga.Search.from_state(moga.load_state(tmp_path / "s.npz"), islands=2)
    with pytest.raises(RuntimeError, match="island run decodes in its islands"):
        moga.Search(js, fed, **kw).ask()


def test_a_state_stopped_by_ctrl_c_goes_on_and_one_stopped_by_its_rules_stays_done(setup):
    js, fed = setup
    hits = iter([False, False, True])
    s = moga.Search(js, fed, pop_size=POP, n_gen=GEN, seed=5, interrupt=lambda: next(hits))
    res = s.run()
    assert res.info["stopped_by"] == "interrupted" and res.history["n_gen"][-1] == 3
    s = moga.Search(js, fed, pop_size=POP, n_gen=GEN, seed=5,
                    interrupt=lambda: s.n_gen >= 3)
    while not s.done:
        s.step()
    again = moga.Search.from_state(s.state())
    assert not again.done
    _same(again.run(), moga.run(js, fed, pop_size=POP, n_gen=GEN, seed=5))
    finished = moga.Search(js, fed, pop_size=POP, n_gen=2, seed=5)
    while not finished.done:
        finished.step()
    assert moga.Search.from_state(finished.state()).stopped_by == "generations"


def test_a_state_in_memory_continues_without_the_job_set_given(setup):
    js, fed = setup
    s = moga.Search(js, fed, pop_size=POP, n_gen=GEN, seed=9)
    for _ in range(3):
        s.step()
    state = s.state()
    s.step()  # the state is a copy: stepping on leaves it as it was
    _same(moga.Search.from_state(state).run(), moga.run(js, fed, pop_size=POP, n_gen=GEN,
                                                          seed=9))


def test_ask_and_tell_with_an_evaluator_of_ones_own_is_the_run(setup):
    js, fed = setup
    s = moga.Search(js, fed, pop_size=POP, n_gen=GEN, seed=3)
    decoder = moga.Search(js, fed, pop_size=POP, n_gen=GEN, seed=3).search  # another copy
    while not s.done:
        X = s.ask()
        np.testing.assert_array_equal(s.ask(), X)  # asking again draws nothing
        s.tell(decoder.decode(X)[0] if len(X) else np.empty((0, 2)))
    # The EASY search's in-order twins are decoded here (the evaluator's EASY starts are
    # not at hand), so the decodes counted differ; the search does not.
    _same(s.result(), moga.run(js, fed, pop_size=POP, n_gen=GEN, seed=3), decodes=False)


def test_tell_checks_the_objectives_shape(setup):
    js, fed = setup
    s = moga.Search(js, fed, pop_size=POP, n_gen=GEN, seed=3)
    X = s.ask()
    with pytest.raises(ValueError, match="one row of objectives per asked chromosome"):
        s.tell(np.zeros((len(X) - 1, 2)))


def test_a_stop_rule_of_ones_own_is_asked_with_the_others(setup):
    class Front(StopRule):
        name = "front of 3"

        def __call__(self, search):
            return search.recorder_front_size() >= 3

    js, fed = setup
    s = moga.Search(js, fed, pop_size=POP, n_gen=GEN, seed=1)
    s.stops.append(Front())
    res = s.run()
    assert res.info["stopped_by"] in ("front of 3", "generations")
    assert s.stopped_by == res.info["stopped_by"]


def test_a_state_of_another_run_is_refused_naming_the_difference(setup):
    js, fed = setup
    s = moga.Search(js, fed, pop_size=POP, n_gen=GEN, seed=1)
    s.step()
    state = s.state()
    other_js = moga.load_default().jobset(n_jobs=91, federation=fed)
    with pytest.raises(ValueError, match="job-set .* of 91 jobs"):
        moga.Search.from_state(state, jobset=other_js)
    with pytest.raises(ValueError, match="federation"):
        moga.Search.from_state(state, federation=moga.Federation.preset("small"))
    with pytest.raises(ValueError, match=r"seed 2 \(the state's: 1\)"):
        moga.Search.from_state(state, seed=2)
    with pytest.raises(ValueError, match="objectives"):
        moga.Search.from_state(state, objectives=("makespan", "flowtime"))
    with pytest.raises(ValueError, match="params"):
        moga.Search.from_state(state, params={"mating_neighbours": 3})
    with pytest.raises(TypeError, match="unknown setting"):
        moga.Search.from_state(state, colour="red")
    with pytest.raises(ValueError, match="format version"):
        moga.Search.from_state({**state, "version": STATE_VERSION + 1})
    with pytest.raises(ValueError, match="moga 0.0.1"):
        moga.Search.from_state({**state, "moga_version": "0.0.1"})
    with pytest.raises(ValueError, match="not a moga search state"):
        moga.Search.from_state({"format": "something else"})


def test_a_damaged_state_file_is_an_error_naming_it(tmp_path):
    from moga.errors import InputError

    p = tmp_path / "search.npz"
    p.write_bytes(b"not a zip")
    with pytest.raises(InputError, match="search.npz"):
        moga.load_state(p)
    np.savez(p, meta=np.asarray('{"format": "moga-result-1"}'))
    with pytest.raises(InputError, match="not a moga search state"):
        moga.load_state(p)


@pytest.mark.dask
def test_an_evaluator_on_dask_workers_gives_the_local_front(setup):
    distributed = pytest.importorskip("distributed")
    js, fed = setup
    want = moga.run(js, fed, pop_size=POP, n_gen=6, seed=2)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cl, distributed.Client(cl) as c:
        got = moga.run(js, fed, pop_size=POP, n_gen=6, seed=2, evaluator=c)
    _same(got, want)
    with pytest.raises(ValueError, match="client is closed"):
        moga.run(js, fed, pop_size=POP, n_gen=2, seed=2, evaluator=c)
    with pytest.raises(TypeError, match="dask.distributed.Client"):
        moga.run(js, fed, pop_size=POP, n_gen=2, seed=2, evaluator="tcp://nowhere:1")


@pytest.mark.dask
def test_moga_run_with_a_scheduler_and_no_islands_decodes_on_its_workers(tmp_path, capsys):
    distributed = pytest.importorskip("distributed")
    from moga.cli import main

    args = ["run", "--n-jobs", "60", "--pop", "8", "--gen", "3", "--no-progress"]
    assert main([*args, "--out", str(tmp_path / "here")]) == 0
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cl:
        assert main([*args, "--scheduler", cl.scheduler_address,
                     "--out", str(tmp_path / "there")]) == 0
    assert "decoding each generation on the workers" in capsys.readouterr().out
    assert (tmp_path / "there" / "front.csv").read_text() == \
        (tmp_path / "here" / "front.csv").read_text()


# -- the command line ----------------------------------------------------------------------

ARGS = ["--n-jobs", "300", "--pop", "16", "--gen", "60"]


def _moga(*args, **kw):
    return subprocess.run([sys.executable, "-m", "moga", *args], capture_output=True,
                          text=True, **kw)


def _stopped_at(out, args, sig, at=37):
    """Start ``moga run`` into ``out``, saving every generation, and send it ``sig`` once it
    reports generation ``at`` or later."""
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    p = subprocess.Popen([sys.executable, "-m", "moga", "run", *args, "--out", str(out),
                          "--checkpoint", "1"], stderr=subprocess.PIPE, stdout=subprocess.PIPE,
                         text=True, env=env)
    import re

    for line in p.stderr:
        m = re.search(r"generation (\d+),", line)
        if m and int(m.group(1)) >= at:
            p.send_signal(sig)
            break
    p.communicate(timeout=300)
    return p.returncode


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT])
def test_a_run_killed_or_interrupted_and_resumed_writes_the_uninterrupted_front(tmp_path,
                                                                                sig):
    full = tmp_path / "full"
    assert _moga("run", *ARGS, "--out", str(full), "--no-progress").returncode == 0
    cut = tmp_path / "cut"
    rc = _stopped_at(cut, ARGS, sig)
    assert rc == (-signal.SIGKILL if sig == signal.SIGKILL else 130)
    assert (cut / "search.npz").is_file()
    r = _moga("run", *ARGS, "--resume", str(cut), "--no-progress")
    assert r.returncode == 0, r.stderr
    assert "resuming" in r.stdout
    assert (cut / "front.csv").read_text() == (full / "front.csv").read_text()


@pytest.mark.slow
def test_an_island_run_killed_and_resumed_writes_the_uninterrupted_front(tmp_path):
    args = ["--n-jobs", "200", "--pop", "12", "--gen", "40", "--islands", "2"]
    full = tmp_path / "full"
    assert _moga("run", *args, "--out", str(full), "--no-progress").returncode == 0
    cut = tmp_path / "cut"
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    p = subprocess.Popen([sys.executable, "-m", "moga", "run", *args, "--out", str(cut),
                          "--checkpoint", "1"], stderr=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True, env=env)
    for line in p.stderr:
        if "epoch 2/" in line:
            p.kill()
            break
    p.communicate(timeout=300)
    assert (cut / "search.npz").is_file()
    r = _moga("run", *args, "--resume", str(cut), "--no-progress")
    assert r.returncode == 0, r.stderr
    assert (cut / "front.csv").read_text() == (full / "front.csv").read_text()


@pytest.mark.slow
def test_resume_refuses_other_options_and_a_folder_without_a_state(tmp_path):
    out = tmp_path / "R"
    assert _moga("run", "--n-jobs", "60", "--pop", "8", "--gen", "3", "--out", str(out),
                 "--no-progress").returncode == 0
    r = _moga("run", "--n-jobs", "60", "--pop", "8", "--gen", "3", "--seed", "2",
              "--resume", str(out), "--no-progress")
    assert r.returncode == 2 and "seed 2 (the state's: 1)" in r.stderr
    r = _moga("run", "--n-jobs", "60", "--pop", "8", "--gen", "3",
              "--resume", str(tmp_path / "none"), "--no-progress")
    assert r.returncode == 2 and "no saved search there" in r.stderr
    # A finished run resumed is already done: its outputs are written again, unchanged.
    before = (out / "front.csv").read_text()
    time.sleep(0.01)
    r = _moga("run", "--n-jobs", "60", "--pop", "8", "--gen", "3", "--resume", str(out),
              "--no-progress")
    assert r.returncode == 0 and "already stopped" in r.stdout
    assert (out / "front.csv").read_text() == before


def test_nsga3_survival_runs_and_resumes_bit_for_bit(setup, tmp_path):
    js, fed = setup
    kw = {"pop_size": POP, "n_gen": 8, "seed": 2, "objectives": ("makespan", "energy", "bsld"),
          "params": {"survival": "nsga3"}}
    want = moga.run(js, fed, **kw)
    assert want.F.shape[1] == 3
    # Three objectives default to NSGA-III's survival; NSGA-II's is asked by name.
    _same(moga.run(js, fed, **{**kw, "params": {}}), want)
    assert not np.array_equal(want.F, moga.run(js, fed, **{**kw,
                                                        "params": {"survival": "nsga2"}}).F)
    s = moga.Search(js, fed, **kw)
    for _ in range(3):
        s.step()
    moga.save_state(s.state(), tmp_path / "s.npz")
    _same(moga.Search.from_state(moga.load_state(tmp_path / "s.npz")).run(), want)
    with pytest.raises(ValueError, match="survival must be 'nsga2' or 'nsga3'"):
        moga.GAParams(survival="spea2")
