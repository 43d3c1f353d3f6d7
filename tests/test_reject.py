"""Rejection as a verb of the federated loop: ``Session.reject`` and what the record says."""

from __future__ import annotations

import numpy as np
import pytest

import moga
from moga import simulate
from moga.sim import OnlinePolicy, Session


def workload(n=80, release=True):
    tr = moga.load_default()
    fed = moga.Federation.load("default@auto", auto_nodes=tr.auto_nodes)
    return tr.jobset(n_jobs=n, federation=fed, batch=not release), fed


class FcfsRejecting(OnlinePolicy):
    """First come, first served that rejects the jobs in ``refuse`` when they are waiting."""

    name = "fcfs-rejecting"

    def __init__(self, refuse=()):
        self.refuse = set(int(j) for j in refuse)

    def decide(self, session):
        q = session.queued()
        session.reject([j for j in q if j in self.refuse])
        for j in session.queued():
            if not session.start([j]).size:
                break


@pytest.mark.parametrize("release", [True, False])
def test_rejected_jobs_leave_the_schedule_of_the_others_as_without_them(release):
    js, fed = workload(release=release)
    refuse = np.arange(3, len(js), 7)
    kept = np.setdiff1d(np.arange(len(js)), refuse)
    s = simulate(js, fed, FcfsRejecting(refuse), estimates="exact")
    alone = simulate(js.take(kept), fed, FcfsRejecting(), estimates="exact")
    np.testing.assert_array_equal(s.rejected, np.isin(np.arange(len(js)), refuse))
    assert np.isnan(s.start[refuse]).all() and (s.alloc[refuse] == 0).all()
    np.testing.assert_array_equal(s.start[kept], alone.start)
    np.testing.assert_array_equal(s.finish[kept], alone.finish)
    np.testing.assert_array_equal(s.alloc[kept], alone.alloc)
    assert s.makespan == pytest.approx(alone.makespan, rel=1e-12)  # job 0 is kept
    assert s.energy == pytest.approx(alone.energy, rel=1e-12)
    assert s.flowtime == pytest.approx(alone.flowtime, rel=1e-12)
    assert s.info["rejected"] == refuse.size
    summary = s.summary()
    assert summary["n_rejected"] == refuse.size
    assert summary["mean_wait_s"] == pytest.approx(alone.summary()["mean_wait_s"], rel=1e-12)
    assert np.isfinite(summary["mean_bounded_slowdown"])
    t, w = s.power_profile()
    assert np.isfinite(t).all() and np.isfinite(w).all()
    s.node_assignment()  # capacity holds


def test_reject_refuses_what_is_not_waiting():
    js, fed = workload(n=20)
    s = Session(js, fed)
    first = s.queued()[:1]
    s.start(first)
    with pytest.raises(ValueError, match=f"job {int(first[0])} is not waiting"):
        s.reject(first)
    late = int(np.flatnonzero(js.release > s.now)[0])
    with pytest.raises(ValueError, match=f"job {late} is not waiting"):
        s.reject([late])
    with pytest.raises(ValueError, match="integers"):
        s.reject([0.5])
    q = s.queued()
    if q.size:
        with pytest.raises(ValueError, match="twice"):
            s.reject([q[0], q[0]])
        assert s.reject(q[:1]).tolist() == q[:1].tolist()
        with pytest.raises(ValueError, match="rejected"):
            s.reject(q[:1])
        with pytest.raises(ValueError, match="not waiting"):
            s.start(q[:1])
    assert s.reject([]).size == 0


def test_rejecting_every_job_gives_an_empty_schedule():
    js, fed = workload(n=10, release=False)
    s = Session(js, fed)
    s.reject(s.queued())
    assert s.done
    r = s.result()
    assert r.rejected.all() and r.makespan == 0.0 and r.energy == 0.0 and r.flowtime == 0.0
    assert np.isnan(r.summary()["mean_wait_s"])


def test_a_preempted_job_rejected_keeps_its_execution():
    fed = moga.Federation(names=["c"], nodes=[4], speed=[1.0], power_busy=[50.0],
                          power_idle=[10.0], link=[100.0])
    js = moga.JobSet.from_arrays(np.array([0.0, 10.0]), np.array([4, 4]),
                                 np.array([100.0, 20.0]), sigma=np.zeros(2), bw=np.zeros(2))
    s = Session(js, fed, estimates="exact")
    s.start([0])
    s.advance()
    s.preempt([0])
    s.start([1])
    s.reject([0])
    while not s.done:
        s.advance()
    r = s.result()
    assert r.rejected.tolist() == [True, False]
    assert r.start.tolist()[0] == 0.0 and np.isnan(r.finish[0])
    seg = r.segments
    assert seg.job.tolist() == [0, 1] and seg.preempted.tolist() == [True, False]
    # Job 0 ran on 4 nodes for 10 s, job 1 for 20 s; the federation idles until 30.
    assert r.makespan == 30.0
    assert r.energy == pytest.approx(30.0 * 4 * 10.0 + (10.0 + 20.0) * 4 * 40.0)


def test_rejected_jobs_in_the_exports(tmp_path):
    js, fed = workload(n=30)
    s = simulate(js, fed, FcfsRejecting([2, 5]), estimates="exact")
    s.to_csv(tmp_path / "schedule.csv")
    s.to_swf(tmp_path / "schedule.swf")
    rows = (tmp_path / "schedule.csv").read_text().splitlines()
    head = rows[0].split(",")
    cells = {int(r.split(",")[0]): dict(zip(head, r.split(","), strict=False)) for r in rows[1:]}
    for j in (2, 5):
        row = cells[int(js.id[j])]
        assert row["success"] == "0" and row["final_state"] == "REJECTED"
        assert row["starting_time"] == "nan" and row["consumed_energy"] == "0.0"
    assert sum(c["final_state"] == "COMPLETED_SUCCESSFULLY" for c in cells.values()) == 28
    swf = [r.split() for r in (tmp_path / "schedule.swf").read_text().splitlines()
           if not r.startswith(";")]
    by_id = {int(f[0]): f for f in swf}
    for j in (2, 5):
        f = by_id[int(js.id[j])]
        assert f[10] == "5" and f[2] == "-1" and f[3] == "-1" and f[4] == "-1"
    assert sum(f[10] == "1" for f in swf) == 28


def test_value_density_rejects_the_jobs_that_can_earn_nothing():
    from moga.sim.policies import ValueDensity
    from moga.value import attach_values

    js, fed = workload(n=150, release=False)  # one release: a long queue, values run out
    js = attach_values(js, seed=3)
    # On exact run times: planned on the requests, which overstate them, a job the plan
    # says can earn nothing may still earn something.
    keep = simulate(js, fed, "value-density", estimates="exact")
    drop = moga.simulate(js, fed, ValueDensity(reject=True), estimates="exact")
    assert drop.info["rejected_jobs"] == drop.info["rejected"] > 0
    assert keep.summary()["n_rejected"] == 0
    # A rejected job could earn nothing, and rejecting frees nodes for jobs that still can.
    assert float(drop.value_earned().sum()) >= float(keep.value_earned().sum())
    assert (drop.value_earned()[drop.rejected] == 0).all()
    with pytest.raises(ValueError, match="reject must be True or False"):
        ValueDensity(reject="yes")


POLICY = '''
from moga.sim import OnlinePolicy


class RejectWide(OnlinePolicy):
    name = "reject-wide"

    def decide(self, session):
        q = session.queued()
        session.reject(q[session.jobset.tasks[q] > {limit}])
        for j in session.queued():
            if not session.start([j]).size:
                break
'''


@pytest.mark.parametrize("limit", [16, 0])
def test_moga_simulate_with_a_rejecting_policy(tmp_path, capsys, limit):
    import json

    from moga.cli import main

    path = tmp_path / "policy.py"
    path.write_text(POLICY.replace("{limit}", str(limit)))
    out = tmp_path / "sim"
    assert main(["simulate", "--policy", f"{path}:RejectWide", "--n-jobs", "120",
                 "--out", str(out)]) == 0
    doc = json.loads((out / "metrics.json").read_text())  # strict JSON: no NaN
    n = doc["metrics"]["n_rejected"]
    assert n == doc["info"]["rejected"] > 0
    assert f"{n} rejected" in capsys.readouterr().out
    assert (out / "gantt.png").stat().st_size > 0
    assert (out / "schedule.csv").read_text().count("REJECTED") == n
    if limit == 0:  # every job rejected: no mean over completed jobs
        assert n == 120 and doc["metrics"]["mean_wait_s"] is None
