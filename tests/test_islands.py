"""Island runs (moga.run(..., islands=N)): the engine's steps, reproducibility, stops, Dask."""

from __future__ import annotations

import os
import signal
import threading
import time

import numpy as np
import pytest

import moga
from moga.evolution import islands as isl
from moga.evolution.params import GAParams
from moga.evolution.problem import SchedulingProblem
from moga.evolution.search import _seeded_archive, _submit_individual

POP, GEN = 16, 12
MIGRATION = {"interval": 4, "migrants": 3}


@pytest.fixture(scope="module")
def setup():
    fed = moga.Federation.preset()
    js = moga.load_default().jobset(start=100, n_jobs=60, federation=fed, seed=2)
    return js, fed


def _islands(setup, n=3, **kw):
    js, fed = setup
    kw.setdefault("migration", MIGRATION)
    return moga.run(js, fed, pop_size=POP, n_gen=kw.pop("n_gen", GEN), seed=5, islands=n, **kw)


@pytest.fixture(scope="module")
def local(setup):
    return _islands(setup)


def _same(a, b):
    np.testing.assert_array_equal(a.F, b.F)
    np.testing.assert_array_equal(a.X, b.X)


def test_an_island_steps_as_the_engine_draw_for_draw(setup):
    """One island without migrants, epoch by epoch, is moga.run's search bit for bit."""
    js, fed = setup
    params = GAParams(pop_size=POP, n_gen=GEN).for_moga()
    problem = SchedulingProblem(js, fed)
    reference = problem.decode(_submit_individual(js, fed))[0][0]
    seeded = _seeded_archive(problem, params, reference)
    spec = isl._Spec(token="engine-twin", jobset=js, federation=fed, model="fluid",
                     objectives=("makespan", "energy"), use_blacklist=True, backfill="none",
                     params=params, initial=None, reference=reference, seed_F=seeded.F,
                     seed_X=seeded.X)
    state = {"index": 0, "seed": 9}
    for until in (5, 10, GEN):
        state = isl._epoch(spec, state, None, until)
    ref = moga.run(js, fed, pop_size=POP, n_gen=GEN, seed=9)
    F, X = state["front_F"], state["front_X"]
    idx = np.lexsort(F.T[::-1])
    np.testing.assert_array_equal(F[idx], ref.F)
    np.testing.assert_array_equal(X[idx], ref.X)
    assert state["n_gen"] == GEN


def test_an_island_run_repeats_and_its_front_is_the_union(setup, local):
    _same(local, _islands(setup))
    assert local.info["islands"] == 3 and local.info["topology"] == "ring"
    assert local.info["migrants"] == 3 and local.info["migration_interval"] == 4
    assert local.info["stopped_by"] == "generations" and local.info["epochs"] == 3
    assert list(local.history["n_gen"]) == [4, 8, 12]
    # The front is non-dominated, one point per objective vector, sorted.
    F = local.F
    assert len(np.unique(F, axis=0)) == len(F)
    assert not any(np.all(F <= f, axis=1).sum() > 1 for f in F)
    assert np.all(np.diff(F[:, 0]) > 0)
    # Each front member decodes to its objectives.
    js, fed = setup
    for i in (0, len(F) - 1):
        s = local.schedule(i)
        np.testing.assert_allclose([s.makespan, s.energy], F[i])
    summary = local.summary()
    assert summary["generations"] == GEN and summary["islands"] == 3
    assert local.hv >= max(local.info["island_hv"]) - 1e-12


def test_progress_has_a_line_per_epoch_with_each_island(setup, capsys):
    _islands(setup, n=2, progress=True)
    lines = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("islands:")]
    assert len(lines) == 3 and lines[-1].startswith("islands: epoch 3/3, generation 12/12")
    assert lines[0].count("(islands ") == 1 and len(lines[0].split("(islands ")[1].split()) == 2


def test_migration_changes_the_run_and_none_is_independent_islands(setup, local):
    alone = _islands(setup, migration={"interval": 4, "topology": "none"})
    assert not np.array_equal(alone.F, local.F) or not np.array_equal(alone.X, local.X)
    # Without migration island 0 is the one island of a run of one island (the same stream).
    assert alone.info["topology"] == "none"
    assert alone.info["island_hv"][0] == _islands(setup, n=1).hv


def test_bad_island_settings_are_refused(setup):
    js, fed = setup
    with pytest.raises(ValueError, match="islands must be an integer >= 1"):
        moga.run(js, fed, pop_size=POP, n_gen=2, islands=0)
    with pytest.raises(ValueError, match="pass islands=N"):
        moga.run(js, fed, pop_size=POP, n_gen=2, migration={"interval": 2})
    with pytest.raises(ValueError, match="topology must be one of"):
        moga.run(js, fed, pop_size=POP, n_gen=2, islands=2, migration={"topology": "star"})
    with pytest.raises(ValueError, match="unknown migration setting"):
        isl.Migration.coerce({"every": 3})
    with pytest.raises(ValueError, match="interval must be an integer >= 1"):
        isl.Migration(interval=0)
    with pytest.raises(ValueError, match="verbose=False"):
        moga.run(js, fed, pop_size=POP, n_gen=2, islands=2, verbose=True)
    with pytest.raises(TypeError, match="dask.distributed.Client"):
        moga.run(js, fed, pop_size=POP, n_gen=2, islands=2, client="tcp://nowhere:8786")


def test_interrupt_keeps_the_front_of_the_last_epoch(setup):
    calls = []

    def interrupt():
        return len(calls) >= 2

    res = _islands(setup, interrupt=interrupt, on_generation=lambda *a: calls.append(a))
    assert res.info["stopped_by"] == "interrupted" and res.summary()["partial"]
    assert res.history["n_gen"][-1] == 8
    _same(res, _islands(setup, n_gen=8))


def test_keyboard_interrupt_keeps_the_front(setup):
    def hook(n_gen, n_evals, hv):
        if n_gen == 8:
            raise KeyboardInterrupt

    res = _islands(setup, on_generation=hook)
    assert res.info["stopped_by"] == "interrupted"
    _same(res, _islands(setup, n_gen=8))


def test_a_time_limit_ends_the_run_early(setup):
    res = _islands(setup, n_gen=400, time_limit=0.05)
    assert res.info["stopped_by"] == "time limit"
    assert res.history["n_gen"][-1] < 400


def test_stagnation_is_read_at_epoch_ends(setup):
    res = _islands(setup, stagnation=4, stagnation_tol=1.0)
    assert res.info["stopped_by"] == "stagnation" and res.history["n_gen"][-1] == 8


def test_run_island_migrants_are_the_best_by_rank_and_crowding():
    state = {"X": np.arange(10.0)[:, None], "F": np.zeros((10, 2)),
             "rank": np.array([1, 0, 0, 2, 0, 1, 1, 0, 0, 0]),
             "crowding": np.array([9, 1, np.inf, 5, 2, 3, 4, 2, 0.5, np.inf])}
    X, _ = isl._emigrants(state, 4)
    assert X[:, 0].tolist() == [2, 9, 4, 7]
    states = [dict(state, X=state["X"] + 100 * i) for i in range(3)]
    incoming = isl._migrants(states, isl.Migration(migrants=1))
    assert [m[0][0, 0] for m in incoming] == [202, 2, 102]  # ring: i receives from i - 1


def test_moga_run_islands_records_them_in_run_json(tmp_path, capsys):
    import json

    from moga.cli import main

    out = tmp_path / "out"
    assert main(["run", "--n-jobs", "30", "--pop", "8", "--gen", "3", "--islands", "2",
                 "--out", str(out), "--no-progress"]) == 0
    summary = json.loads((out / "run.json").read_text())
    assert summary["islands"] == 2 and summary["topology"] == "ring"
    assert summary["workers"] == 1 and summary["scheduler"] is None


# -- on a Dask LocalCluster of 2 worker processes ---------------------------------------

def _cluster(n_workers):
    distributed = pytest.importorskip("distributed")
    return distributed.LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                                    dashboard_address=None)


@pytest.fixture(scope="module")
def cluster():
    distributed = pytest.importorskip("distributed")
    with _cluster(2) as c, distributed.Client(c) as client:
        yield c, client


@pytest.mark.dask
def test_dask_front_with_1_worker_equals_the_local_one(setup, local):
    distributed = pytest.importorskip("distributed")
    with _cluster(1) as c, distributed.Client(c) as client:
        one = _islands(setup, client=client)
    assert one.info["workers"] == 1
    _same(one, local)


@pytest.mark.dask
def test_dask_front_with_2_workers_equals_the_local_one_even_if_one_dies(setup, local, cluster):
    c, client = cluster
    two = _islands(setup, client=client)
    _same(two, local)
    assert two.info["workers"] == 2 and two.info["scheduler"]
    # A worker killed mid-run: Dask recomputes what it held; the front is the same.
    pids = client.run(os.getpid)
    victim = sorted(pids)[0]
    killed = []

    def hook(n_gen, n_evals, hv):
        if n_gen == 4:  # while the second epoch runs
            threading.Timer(0.01, lambda: (os.kill(pids[victim], signal.SIGKILL),
                                           killed.append(victim))).start()

    with pytest.warns(RuntimeWarning, match=r"1 worker\(s\) left"):
        hit = _islands(setup, client=client, on_generation=hook)
    assert killed
    _same(hit, local)
    assert hit.info["workers_lost"] == 1  # run.json counts it (friction 2 of newcomer-5)
    client.wait_for_workers(2, timeout=120)
    assert pids[victim] not in client.run(os.getpid).values()


@pytest.fixture
def default_sigint():
    """Python's own Ctrl-C handler for the test: a process started in the background by a
    shell without job control inherits SIGINT ignored, and Python then installs none."""
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, old)


@pytest.mark.dask
def test_dask_ctrl_c_keeps_the_front(setup, cluster, default_sigint):
    c, client = cluster

    def hook(n_gen, n_evals, hv):
        if n_gen == 4:  # Ctrl-C while the next epoch runs on the workers
            threading.Timer(0.01, os.kill, (os.getpid(), signal.SIGINT)).start()

    res = _islands(setup, client=client, on_generation=hook, n_gen=400)
    assert res.info["stopped_by"] == "interrupted"
    _same(res, _islands(setup, n_gen=int(res.history["n_gen"][-1])))


@pytest.mark.slow
@pytest.mark.dask
def test_the_islands_benchmark_runs_in_quick_mode(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(root)] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    subprocess.run([sys.executable, str(root / "benchmarks" / "islands.py"), "--quick",
                    "--out", str(tmp_path)], check=True, env=env, capture_output=True)
    text = (tmp_path / "islands.md").read_text()
    assert "## Equal total evaluations" in text and "Estimate, not a measurement" in text
    assert "| 64 |" in text


def test_ctrl_c_while_waiting_on_dask_is_a_flag_once_an_epoch_is_in(default_sigint):
    ctrl_c = isl._CtrlC()
    ctrl_c.install()
    try:
        assert signal.getsignal(signal.SIGINT) == ctrl_c._handle
        with pytest.raises(KeyboardInterrupt):  # no epoch in: nothing to keep
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.1)
        ctrl_c.armed = True
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.1)
        assert ctrl_c.hit
        with pytest.raises(KeyboardInterrupt):  # a second Ctrl-C aborts
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.1)
    finally:
        ctrl_c.restore()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
