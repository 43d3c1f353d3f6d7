"""Preemption as a verb of the federated loop: ``Session.preempt`` and its segments."""

from __future__ import annotations

import numpy as np
import pytest

import moga
from moga import simulate
from moga.model.schedule import schedule_energy
from moga.sim import OnlinePolicy, Session


def one_cluster(nodes=4, speed=1.0):
    return moga.Federation(names=["c"], nodes=[nodes], speed=[speed], power_busy=[50.0],
                           power_idle=[10.0], link=[100.0])


def jobs(release, tasks, runtime):
    n = len(tasks)
    return moga.JobSet.from_arrays(np.array(release, float), np.array(tasks),
                                   np.array(runtime, float), sigma=np.zeros(n), bw=np.zeros(n))


def run_hand_worked(keep, restart):
    """Job 0 (4 nodes, 100 s) runs from 0; job 1 (4 nodes, 20 s) arrives at 10 and preempts
    it; job 0 restarts when job 1 ends."""
    js, fed = jobs([0, 10], [4, 4], [100, 20]), one_cluster()
    s = Session(js, fed, estimates="exact")
    s.start([0])
    s.advance()
    assert s.now == 10
    assert s.preempt([0], keep=keep, restart=restart).tolist() == [0]
    assert s.queued().tolist() == [0, 1] and s.free.tolist() == [4]
    assert s.allocation[0].tolist() == [0]
    assert s.start([1]).tolist() == [1]
    s.advance()
    assert s.now == 30
    assert s.start([0]).tolist() == [0]
    while not s.done:
        s.advance()
    return js, fed, s.result()


@pytest.mark.parametrize("keep, restart, end", [(1.0, 0.0, 120.0), (0.0, 0.0, 130.0),
                                                (1.0, 5.0, 125.0), (0.5, 0.0, 125.0)])
def test_hand_worked_preemption(keep, restart, end):
    js, fed, r = run_hand_worked(keep, restart)
    np.testing.assert_allclose(r.finish, [end, 30.0])
    np.testing.assert_allclose(r.start, [0.0, 10.0])  # a preempted job's first start
    seg = r.segments
    assert seg.job.tolist() == [0, 1, 0] and seg.preempted.tolist() == [True, False, False]
    np.testing.assert_allclose(seg.start, [0, 10, 30])
    np.testing.assert_allclose(seg.end, [10, 30, end])
    np.testing.assert_allclose(seg.compute[0], 10 * keep)
    np.testing.assert_allclose(seg.lost[0], 10 * (1 - keep))
    np.testing.assert_allclose(seg.read[2], restart)
    busy = 4 * 40.0 * (10 + 20 + (end - 30))  # 4 nodes, 40 W over idle, while running
    assert r.energy == pytest.approx(4 * 10.0 * end + busy)
    assert r.info["preemptions"] == 1
    times, watts = r.power_profile()
    assert watts.max() == pytest.approx(4 * 50.0)


def test_preempt_refuses_what_is_not_running():
    js, fed = jobs([0, 10], [4, 4], [100, 20]), one_cluster()
    s = Session(js, fed)
    with pytest.raises(ValueError, match="job 1 is not running"):
        s.preempt([1])
    s.start([0])
    for bad in ({"keep": 1.5}, {"keep": True}, {"restart": -1.0}):
        with pytest.raises(ValueError, match="keep|restart"):
            s.preempt([0], **bad)


class RandomPreempt(OnlinePolicy):
    """Start every waiting job that fits, in arrival order; at every third event stop one
    running job drawn at random, keeping ``keep`` of its work."""

    name = "random-preempt"

    def __init__(self, keep=1.0, seed=0):
        self.keep, self.rng, self.n = keep, np.random.default_rng(seed), 0

    def decide(self, session):
        self.n += 1
        run = session.running()[0]
        if self.n % 3 == 0 and run.size:
            session.preempt([int(self.rng.choice(run))], keep=self.keep)
        session.start(session.queued())


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("model", ["fluid", "at_start"])
def test_random_preemptions_conserve_work_nodes_and_energy(seed, model):
    rng = np.random.default_rng(seed)
    J = 25
    fed = moga.Federation(names=["a", "b", "c"], nodes=[6, 8, 10], speed=[1.5, 1.0, 0.7],
                          power_busy=[200.0, 90.0, 40.0], power_idle=[10.0, 10.0, 10.0],
                          link=[1e6, 1e6, 1e6])
    js = jobs(np.sort(rng.integers(0, 300, J)), rng.integers(1, 14, J), rng.integers(10, 200, J))
    r = simulate(js, fed, RandomPreempt(seed=seed), model=model)
    seg = r.segments
    assert seg is not None and seg.preempted.sum() == r.info["preemptions"] > 0
    alloc = r.execution_alloc()
    np.testing.assert_array_equal(alloc.sum(axis=1), js.tasks[seg.job])
    # Work: every execution runs at its slowest cluster's speed (no communication).
    smin = np.where(alloc > 0, fed.speed, np.inf).min(axis=1)
    work = np.bincount(seg.job, weights=seg.compute * smin, minlength=J)
    np.testing.assert_allclose(work, js.runtime, rtol=1e-9)
    assert np.all(seg.lost == 0)
    r.execution_nodes()  # raises if a cluster is ever over capacity
    assert r.energy == pytest.approx(schedule_energy(js.release, seg.start, seg.end, alloc,
                                                     js.power[seg.job], fed), rel=1e-12)
    idle = fed.idle_power * r.makespan
    busy = sum(float((alloc[i] * (fed.power_busy - fed.power_idle)).sum())
               * (seg.end[i] - seg.start[i]) for i in range(len(seg.job)))
    assert r.energy == pytest.approx(idle + busy, rel=1e-9)
    assert np.all(r.finish >= js.release + js.runtime / fed.speed.max() - 1e-9)


@pytest.mark.parametrize("seed", range(3))
def test_preempting_co_allocated_jobs_on_saturated_links(seed):
    rng = np.random.default_rng(seed)
    J = 30
    fed = moga.Federation(names=["a", "b"], nodes=[6, 6], speed=[1.2, 1.0],
                          power_busy=[120.0, 90.0], power_idle=[10.0, 10.0], link=[50.0, 50.0])
    js = moga.JobSet.from_arrays(np.sort(rng.integers(0, 200, J)).astype(float),
                                 rng.integers(2, 10, J), rng.integers(10, 200, J).astype(float),
                                 sigma=rng.uniform(0.2, 0.8, J), bw=rng.uniform(5, 40, J))
    r = simulate(js, fed, RandomPreempt(seed=seed), model="fluid")
    seg = r.segments
    assert seg.preempted.any()
    r.execution_nodes()
    alloc = r.execution_alloc()
    smin = np.where(alloc > 0, fed.speed, np.inf).min(axis=1)
    work = np.bincount(seg.job, weights=seg.compute * smin, minlength=J)
    assert np.all(work >= js.runtime * (1 - 1e-9))  # link slowdown only stretches the work
    assert r.energy == pytest.approx(schedule_energy(js.release, seg.start, seg.end, alloc,
                                                     js.power[seg.job], fed), rel=1e-12)


def test_restarting_from_scratch_loses_the_work_done():
    rng = np.random.default_rng(9)
    J = 20
    js = jobs(np.sort(rng.integers(0, 100, J)), rng.integers(1, 4, J), rng.integers(10, 100, J))
    fed = one_cluster(nodes=6)
    r = simulate(js, fed, RandomPreempt(keep=0.0, seed=1))
    seg = r.segments
    kept = np.bincount(seg.job, weights=seg.compute, minlength=J)
    np.testing.assert_allclose(kept, js.runtime)  # only the last execution counts
    assert seg.lost[seg.preempted].sum() > 0
    np.testing.assert_allclose(seg.lost[seg.preempted],
                               (seg.end - seg.start)[seg.preempted])


def test_segments_export(tmp_path):
    js, fed, r = run_hand_worked(1.0, 0.0)
    r.segments_to_csv(tmp_path / "segments.csv")
    lines = (tmp_path / "segments.csv").read_text().splitlines()
    assert len(lines) == 4
    r.to_csv(tmp_path / "schedule.csv")


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("checkpoint, restart", [("jit", 0.0), ("jit", 7.0), ("none", 0.0)])
def test_realtime_preempt_equals_its_twin(seed, checkpoint, restart):
    import dataclasses

    from naive import naive_realtime_preempt

    rng = np.random.default_rng(seed)
    J = 30
    js = jobs(np.sort(rng.integers(0, 500, J)), rng.integers(1, 9, J), rng.integers(5, 150, J))
    js = dataclasses.replace(js, realtime=rng.random(J) < 0.3)
    fed = one_cluster(nodes=10)
    r = simulate(js, fed, "realtime-preempt", options={"checkpoint": checkpoint,
                                                       "restart": restart})
    first, finish, execs = naive_realtime_preempt(js.release, js.tasks, js.runtime, js.realtime,
                                                  10, keep=checkpoint == "jit",
                                                  restart=restart)
    np.testing.assert_allclose(r.start, first)
    np.testing.assert_allclose(r.finish, finish)
    seg = r.segments
    if seg is None:
        assert len(execs) == J
        return
    assert seg.job.tolist() == [e[0] for e in execs]
    np.testing.assert_allclose(seg.start, [e[1] for e in execs])
    np.testing.assert_allclose(seg.end, [e[2] for e in execs])
    assert r.info["checkpoint"] == checkpoint


def test_realtime_preempt_helps_real_time_jobs_under_a_power_cap():
    import dataclasses

    tr = moga.load_default()
    fed = moga.Federation.preset().scaled(96).with_cap(fraction=0.7)
    js = tr.jobset(n_jobs=300, federation=fed, batch=False, seed=0, wide="drop")
    rng = np.random.default_rng(0)
    js = dataclasses.replace(js, realtime=rng.random(len(js)) < 0.1)
    first = simulate(js, fed, "realtime-first")
    pre = simulate(js, fed, "realtime-preempt")
    assert pre.info["preempted_jobs"] >= pre.info["preemptions"] > 0
    rt = js.realtime
    assert pre.wait[rt].mean() <= first.wait[rt].mean()
    times, watts = pre.power_profile()
    assert watts.max() <= fed.power_cap * (1 + 1e-9)
    pre.execution_nodes()
