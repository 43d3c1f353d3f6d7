"""Jobs killed at their requested time (``JobSet.kill_at_request``, ``--kill-at-request``).

The option is a transformation of the job-set: each job's work is cut to its request. The
checks below decode such job-sets and compare what every job ran with the plain rule
``min(runtime, requested)`` (scaled by the slowest speed a job uses), count the killed jobs,
and follow the marks through the files and the command line.
"""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from conftest import instances
from hypothesis import given
from hypothesis import strategies as st
from naive import naive_easy, naive_fifo

import moga
from moga.cli import main
from moga.model.jobset import apply_kill_option

#: Request factors of the random job-sets: some jobs ask for less than they run (killed),
#: some for exactly it, some for more. Multiples of 1/4, so that on integer run times every
#: start and end is exact in binary: the plain-Python twins and the kernels then agree on
#: which jobs end at the same instant (a decimal like 0.3 leaves ends one rounding apart,
#: and a tie at the reservation goes one way in the kernel, the other in the twin).
FACTORS = (0.25, 0.75, 1.0, 1.5)


def with_requests(js, seed):
    """``js`` with requests ``runtime * f``, ``f`` drawn per job from :data:`FACTORS`."""
    rng = np.random.default_rng(seed)
    return dataclasses.replace(js, requested=js.runtime * rng.choice(FACTORS, len(js)))


@st.composite
def homogeneous(draw, max_jobs=20):
    """One cluster of speed 1, jobs without communication, with requests."""
    nodes = draw(st.integers(1, 12))
    J = draw(st.integers(1, max_jobs))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    tasks = rng.integers(1, nodes + 1, J)
    runtime = rng.integers(1, 40, J).astype(float)
    release = (np.sort(rng.integers(0, 50, J)).astype(float) if draw(st.booleans())
               else np.zeros(J))
    fed = moga.Federation(names=["c"], nodes=[nodes], speed=[1.0], power_busy=[60.0],
                          power_idle=[10.0], link=[100.0])
    js = moga.JobSet.from_arrays(release, tasks, runtime, sigma=np.zeros(J), bw=np.zeros(J))
    return with_requests(js, int(rng.integers(2**32))), fed


# -- the rule, on decoded schedules --------------------------------------------------------


@given(inst=homogeneous(), model=st.sampled_from(["fluid", "at_start"]),
       backfill=st.sampled_from(["none", "easy"]))
def test_on_a_speed_one_cluster_every_job_runs_min_of_runtime_and_request(inst, model,
                                                                          backfill):
    js, fed = inst
    s = moga.evaluate(js, fed, model=model, backfill=backfill, kill_at_request=True)
    np.testing.assert_allclose(s.finish - s.start, np.minimum(js.runtime, js.requested),
                               rtol=1e-12)
    over = js.runtime > js.requested
    np.testing.assert_array_equal(s.killed, over)
    assert s.summary()["n_killed"] == int(over.sum())
    # The starts are those of the textbook simulators on the cut run times.
    cut = np.minimum(js.runtime, js.requested)
    if backfill == "none":
        expected = naive_fifo(js.release, js.tasks, cut, int(fed.nodes[0]))
    else:
        expected, _ = naive_easy(js.release, js.tasks, cut, int(fed.nodes[0]))
    np.testing.assert_allclose(s.start, expected, rtol=1e-12)


@given(inst=homogeneous(), model=st.sampled_from(["fluid", "at_start"]))
def test_in_order_on_one_cluster_killing_never_delays_a_job_nor_costs_energy(inst, model):
    # First come, first served on one cluster: with every job no longer, no start moves later
    # (the jobs running at any instant after the previous start are those not yet finished),
    # so no finish, makespan, flowtime or joule grows.
    js, fed = inst
    full = moga.evaluate(js, fed, model=model)
    cut = moga.evaluate(js, fed, model=model, kill_at_request=True)
    assert np.all(cut.start <= full.start) and np.all(cut.finish <= full.finish)
    assert cut.makespan <= full.makespan and cut.flowtime <= full.flowtime
    assert cut.energy <= full.energy * (1 + 1e-12)


@given(inst=instances(sigma_zero=True), model=st.sampled_from(["fluid", "at_start"]),
       seed=st.integers(0, 2**32 - 1))
def test_on_a_federation_a_killed_job_runs_its_request_at_its_slowest_speed(inst, model, seed):
    # Without communication a job lasts its work divided by the slowest speed it uses
    # (docs/guide/models.md), so a killed job ends at its request scaled like its run time.
    js, fed, order, bl = inst
    js = with_requests(js, seed)
    s = moga.evaluate(js, fed, order, bl, model=model, kill_at_request=True)
    slowest = np.array([fed.speed[s.alloc[j] > 0].min() for j in range(len(js))])
    np.testing.assert_allclose((s.finish - s.start) * slowest,
                               np.minimum(js.runtime, js.requested), rtol=1e-9)
    assert s.summary()["n_killed"] == int((js.runtime > js.requested).sum())


def test_a_job_set_without_overruns_gives_the_same_schedule(default_trace, default_fed):
    js = default_trace.jobset(n_jobs=60, federation=default_fed)
    fits = js.take(js.runtime <= js.requested)
    a = moga.evaluate(fits, default_fed, backfill="easy", estimates="requested")
    b = moga.evaluate(fits, default_fed, backfill="easy", estimates="requested",
                      kill_at_request=True)
    for f in ("start", "finish", "alloc"):
        np.testing.assert_array_equal(getattr(a, f), getattr(b, f))
    assert a.energy == b.energy and b.summary()["n_killed"] == 0


# -- the job-set ---------------------------------------------------------------------------


def test_kill_at_request_cuts_marks_counts_and_is_idempotent():
    js = moga.JobSet(id=[7, 8, 9], release=[0.0, 0.0, 5.0], tasks=[1, 2, 1],
                     runtime=[10.0, 30.0, 20.0], sigma=[0.0, 0.1, 0.0], bw=[0.0, 5.0, 0.0],
                     requested=[12.0, 25.0, 20.0], report={"seed": 0})
    assert not js.killed.any() and not js.killed.flags.writeable
    k = js.kill_at_request()
    np.testing.assert_array_equal(k.runtime, [10.0, 25.0, 20.0])
    np.testing.assert_array_equal(k.killed, [False, True, False])
    np.testing.assert_array_equal(k.requested, js.requested)
    assert k.report == {"seed": 0, "killed_at_request": 1}
    again = k.kill_at_request()
    for f in ("runtime", "killed", "requested"):
        np.testing.assert_array_equal(getattr(again, f), getattr(k, f))
    assert again.report == k.report
    # the original is untouched
    np.testing.assert_array_equal(js.runtime, [10.0, 30.0, 20.0])


def test_the_mark_follows_the_job_set_through_its_transformations():
    from moga.realtime import Machine, tag_realtime
    from moga.value import attach_values

    tr = moga.load_default()
    k = tr.jobset(n_jobs=80, federation=moga.Federation.preset(), batch=False)
    k = k.kill_at_request()
    assert k.killed.any()
    idx = np.flatnonzero(k.killed)[:3]
    np.testing.assert_array_equal(k.take(idx).killed, True)
    np.testing.assert_array_equal(k.with_power(seed=1).killed, k.killed)
    np.testing.assert_array_equal(attach_values(k, seed=0).killed, k.killed)
    tagged = tag_realtime(k, Machine(nodes=256), 0.2, seed=0).jobset
    np.testing.assert_array_equal(tagged.killed, k.killed)


def test_a_job_without_a_request_is_never_killed():
    # The trace's field 9 is -1: the request is the run time.
    js = moga.JobSet.from_arrays([0.0, 0.0], [1, 1], [10.0, 20.0])
    k = js.kill_at_request()
    assert not k.killed.any() and k.report["killed_at_request"] == 0
    np.testing.assert_array_equal(k.runtime, js.runtime)


def test_bad_marks_and_options_are_refused():
    base = dict(id=[1, 2], release=[0.0, 0.0], tasks=[1, 1], runtime=[10.0, 20.0],
                sigma=[0.0, 0.0], bw=[0.0, 0.0], requested=[10.0, 15.0])
    with pytest.raises(ValueError, match=r"job 1 \(id 2\) is marked killed"):
        moga.JobSet(**base, killed=[False, True])  # its run time is not its request
    with pytest.raises(ValueError, match=r"killed must have shape \(2,\)"):
        moga.JobSet(**base, killed=[False])
    with pytest.raises(ValueError, match=r"killed\[0\] must be True or False"):
        moga.JobSet(**base, killed=[2, 0])
    js = moga.JobSet(**base)
    with pytest.raises(TypeError, match="kill_at_request must be True or False"):
        apply_kill_option(js, "yes")
    with pytest.raises(TypeError, match="expected a moga.JobSet"):
        apply_kill_option("not a job-set", True)
    assert apply_kill_option(js, False) is js


# -- the record and its files ---------------------------------------------------------------


@pytest.fixture(scope="module")
def killed_schedule():
    tr = moga.load_default()
    fed = moga.Federation.preset()
    js = tr.jobset(n_jobs=60, federation=fed, batch=False)
    return moga.simulate(js, fed, "easy", kill_at_request=True), js


def test_schedule_files_mark_the_killed_jobs(killed_schedule, tmp_path):
    s, js = killed_schedule
    over = js.runtime > js.requested
    assert over.any() and s.summary()["n_killed"] == int(over.sum())
    np.testing.assert_array_equal(s.killed, over)
    s.to_csv(tmp_path / "schedule.csv")
    s.to_swf(tmp_path / "schedule.swf")
    lines = (tmp_path / "schedule.csv").read_text().splitlines()
    head = lines[0].split(",")
    assert head == list(moga.model.export.BATSIM_COLUMNS)  # the columns are Batsim's
    rows = [dict(zip(head, r.split(","), strict=False)) for r in lines[1:]]
    by_id = {int(r["job_id"]): r for r in rows}
    for j in range(len(js)):
        r = by_id[int(js.id[j])]
        if over[j]:
            assert (r["success"], r["final_state"]) == ("0", "COMPLETED_WALLTIME_REACHED")
        else:
            assert (r["success"], r["final_state"]) == ("1", "COMPLETED_SUCCESSFULLY")
    swf = [ln.split() for ln in (tmp_path / "schedule.swf").read_text().splitlines()
           if not ln.startswith(";")]
    status = {int(f[0]): int(f[10]) for f in swf}
    assert [status[int(i)] for i in js.id[over]] == [0] * int(over.sum())
    assert set(status[int(i)] for i in js.id[~over]) == {1}
    back = moga.load_swf(tmp_path / "schedule.swf")  # read back: the killed jobs kept
    assert len(back) == len(js)


def test_default_off_leaves_the_schedule_unchanged():
    tr = moga.load_default()
    fed = moga.Federation.preset()
    js = tr.jobset(n_jobs=60, federation=fed, batch=False)
    a = moga.simulate(js, fed, "easy")
    b = moga.simulate(js, fed, "easy", kill_at_request=False)
    for f in ("start", "finish", "alloc"):
        np.testing.assert_array_equal(getattr(a, f), getattr(b, f))
    assert a.summary() == b.summary() and a.summary()["n_killed"] == 0
    assert not a.killed.any() and "killed_at_request" not in a.jobset.report


# -- the command line ------------------------------------------------------------------------

SMALL = ["--n-jobs", "40"]


def test_simulate_kill_at_request_end_to_end(tmp_path):
    assert main(["simulate", *SMALL, "--no-gantt", "--no-progress", "--kill-at-request",
                 "--out", str(tmp_path / "k")]) == 0
    assert main(["simulate", *SMALL, "--no-gantt", "--no-progress",
                 "--out", str(tmp_path / "d")]) == 0
    tr = moga.load_default()
    js = tr.jobset(n_jobs=40, federation=moga.Federation.preset(), batch=False)
    n = int((js.runtime > js.requested).sum())
    assert n > 0
    k = json.loads((tmp_path / "k" / "metrics.json").read_text())
    d = json.loads((tmp_path / "d" / "metrics.json").read_text())
    assert k["metrics"]["n_killed"] == n and k["jobset_report"]["killed_at_request"] == n
    assert d["metrics"]["n_killed"] == 0 and "killed_at_request" not in d["jobset_report"]
    csv = (tmp_path / "k" / "schedule.csv").read_text()
    assert csv.count("COMPLETED_WALLTIME_REACHED") == n
    assert "COMPLETED_WALLTIME_REACHED" not in (tmp_path / "d" / "schedule.csv").read_text()


def test_run_keeps_the_killed_job_set_in_its_result(tmp_path):
    out = tmp_path / "run"
    assert main(["run", *SMALL, "--pop", "8", "--gen", "2", "--no-progress",
                 "--kill-at-request", "--out", str(out)]) == 0
    doc = json.loads((out / "run.json").read_text())
    res = moga.load_result(out / "result.npz")
    assert res.jobset.killed.sum() == doc["jobset_report"]["killed_at_request"] > 0
    assert res.schedule(res.knee()).summary()["n_killed"] == res.jobset.killed.sum()
    # moga schedule decodes the member again from the saved job-set and checks its objectives
    assert main(["schedule", str(out), "--out", str(tmp_path / "s")]) == 0
    assert "COMPLETED_WALLTIME_REACHED" in (tmp_path / "s" / "schedule.csv").read_text()
    # a result without killed jobs stores no mark
    plain = tmp_path / "plain"
    assert main(["run", *SMALL, "--pop", "8", "--gen", "2", "--no-progress",
                 "--out", str(plain)]) == 0
    assert "js_killed" not in np.load(plain / "result.npz").files
    assert not moga.load_result(plain / "result.npz").jobset.killed.any()


def test_commands_outside_the_option_refuse_it(capsys):
    for command in ("value", "realtime"):
        with pytest.raises(SystemExit):
            main([command, *SMALL, "--kill-at-request"])
        assert "--kill-at-request" in capsys.readouterr().err
