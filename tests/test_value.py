"""Value functions and the offline value decoder."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from naive import naive_online, naive_value_decode

import moga
import moga.value
from decoders.online import RULE_CODES, simulate
from moga.value import DEFAULT_CLASSES, attach_values, evaluate_value, evaluate_value_batch, value_at


def _fed(nodes):
    """One cluster of ``nodes`` nodes at speed 1."""
    return moga.Federation(names=["a"], nodes=[nodes], speed=[1.0], power_busy=[2.0],
                           power_idle=[1.0], link=[1.0])


def _jobs(release, tasks, runtime, v_start, v_final, soft, hard, priority=None):
    """A value-function job-set from plain lists."""
    base = moga.JobSet.from_arrays(release, tasks, runtime)
    return moga.JobSet(id=base.id, release=base.release, tasks=base.tasks, runtime=base.runtime,
                       sigma=base.sigma, bw=base.bw, v_start=v_start, v_final=v_final, soft=soft,
                       hard=hard, priority=[0] * len(base) if priority is None else priority)


@st.composite
def value_instances(draw, max_jobs=12):
    K = draw(st.integers(1, 3))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    nodes = rng.integers(1, 6, K)
    speed = rng.choice([0.5, 1.0, 2.0], K)
    J = draw(st.integers(1, max_jobs))
    tasks = rng.integers(1, nodes.max() + 1, J)
    runtime = rng.integers(1, 20, J).astype(float)
    release = rng.integers(0, 30, J).astype(float)
    fed = moga.Federation(names=[f"c{k}" for k in range(K)], nodes=nodes, speed=speed,
                          power_busy=np.full(K, 50.0), power_idle=np.full(K, 10.0),
                          link=np.full(K, 100.0))
    js = moga.JobSet.from_arrays(release, tasks, runtime)
    js = attach_values(js, seed=draw(st.integers(0, 1000)), soft_factor=(0.5, 3.0),
                       hard_factor=(0.0, 3.0))
    order = rng.permutation(J)
    bl = rng.choice([0.0, 0.5, 1.0], (J, K))
    return js, fed, order, bl


@given(inst=value_instances())
def test_decoder_equals_naive_twin(inst):
    js, fed, order, bl = inst
    s = evaluate_value(js, fed, order, bl)
    ref = naive_value_decode(js.release, js.tasks, js.runtime, js.v_start, js.v_final, js.soft,
                             js.hard, fed.nodes, fed.speed, order, bl)
    assert s.cluster.tolist() == ref["cluster"]
    run = s.cluster >= 0
    np.testing.assert_allclose(s.start[run], np.array(ref["start"], dtype=float)[run])
    assert s.total_value == pytest.approx(ref["total"], rel=1e-12)
    assert s.n_relaxed == ref["n_relaxed"]


@given(inst=value_instances(max_jobs=20))
def test_no_oversubscription_and_jobs_not_run_earn_nothing(inst):
    js, fed, order, bl = inst
    s = evaluate_value(js, fed, order, bl)
    run = s.cluster >= 0
    assert np.all(s.value[~run] == 0) and np.all(np.isnan(s.start[~run]))
    assert np.all(s.start[run] >= js.release[run])
    np.testing.assert_allclose(s.finish[run] - s.start[run],
                               js.runtime[run] / fed.speed[s.cluster[run]])
    np.testing.assert_allclose(s.value, value_at(s.finish, js.v_start, js.v_final, js.soft,
                                                 js.hard))
    assert np.all(s.value[run] > 0)
    for k in range(fed.n_clusters):
        on = np.flatnonzero(s.cluster == k)
        for t in s.start[on]:
            busy = js.tasks[on][(s.start[on] <= t) & (t < s.finish[on])].sum()
            assert busy <= fed.nodes[k]
    assert s.total_value == pytest.approx(s.value.sum())


def test_value_function_edges():
    v = value_at([5.0, 10.0, 15.0, 20.0, 20.0001, np.nan], 8.0, 2.0, 10.0, 20.0)
    assert v.tolist()[:5] == [8.0, 8.0, 5.0, 2.0, 0.0] and v[5] == 0.0
    # soft == hard: v_start up to the deadline, v_final exactly at it... both the same instant
    assert value_at(10.0, 8.0, 2.0, 10.0, 10.0) == 8.0
    assert value_at(10.5, 8.0, 2.0, 10.0, 10.0) == 0.0


def test_exact_deadlines_in_the_decoder():
    fed = _fed(1)
    js = _jobs([0.0, 0.0], [1, 1], [10.0, 10.0], [4.0, 4.0], [1.0, 1.0], [10.0, 10.0],
               [20.0, 20.0])
    s = evaluate_value(js, fed)
    assert s.value.tolist() == [4.0, 1.0]  # the second completes exactly at its hard deadline
    js2 = _jobs([0.0, 0.0], [1, 1], [10.0, 10.0], [4.0, 4.0], [1.0, 1.0], [10.0, 10.0],
                [19.0, 19.0])
    s2 = evaluate_value(js2, fed)
    assert s2.value.tolist() == [4.0, 0.0] and s2.cluster.tolist() == [0, -1]


def test_holes_are_used():
    # Job 0 occupies [0, 10) on the only node; job 1 (placed first in the order) was put at
    # [20, 30); job 2 fits in the hole [10, 20).
    fed = _fed(1)
    js = _jobs([0.0, 20.0, 0.0], [1, 1, 1], [10.0, 10.0, 10.0], [1.0] * 3, [0.5] * 3,
               [100.0] * 3, [200.0] * 3)
    s = evaluate_value(js, fed, order=[0, 1, 2])
    assert s.start.tolist() == [0.0, 20.0, 10.0]


def test_generator_is_seeded_and_documented_shares():
    js = moga.load_default().jobset(n_jobs=3000, federation=moga.Federation.preset())
    a, b = attach_values(js, seed=4), attach_values(js, seed=4)
    np.testing.assert_array_equal(a.soft, b.soft)
    shares = np.bincount(a.priority, minlength=3) / len(a)
    np.testing.assert_allclose(shares, [c.share for c in DEFAULT_CLASSES], atol=0.03)
    assert np.all(a.v_final < a.v_start) and np.all(a.hard >= a.soft)
    assert np.all(a.soft >= a.release + a.runtime * 0.999)
    sub = a.take(np.arange(10))
    assert sub.has_values and len(sub.v_start) == 10
    with pytest.raises(ValueError, match="shares"):
        attach_values(js, classes=DEFAULT_CLASSES[:2])
    with pytest.raises(ValueError, match="no value functions"):
        evaluate_value(js, moga.Federation.preset())


def test_values_keep_the_jobs_power_requested_times_and_flags():
    js = moga.load_default().jobset(n_jobs=200, federation=moga.Federation.preset(),
                                    power="lognormal", seed=3, batch=False)
    assert np.any(js.power != 1.0) and np.any(js.requested != js.runtime)
    a = attach_values(js, seed=1)
    for f in ("id", "release", "tasks", "runtime", "sigma", "bw", "power", "requested",
              "realtime", "killed"):
        np.testing.assert_array_equal(getattr(a, f), getattr(js, f), err_msg=f)
    assert a.name == js.name and a.report["value_seed"] == 1


def test_batch_equals_single():
    fed = moga.Federation.preset()
    js = attach_values(moga.load_default().jobset(n_jobs=80, federation=fed, batch=False))
    rng = np.random.default_rng(1)
    orders = np.array([rng.permutation(80) for _ in range(5)])
    bls = rng.choice([0.0, 0.5, 1.0], (5, 80, 4))
    tot, n_run, n_rel = evaluate_value_batch(js, fed, orders, bls)
    for p in range(5):
        s = evaluate_value(js, fed, orders[p], bls[p])
        assert tot[p] == s.total_value and n_run[p] == s.n_run and n_rel[p] == s.n_relaxed


def test_best_known_is_at_least_the_submit_order_value():
    fed = moga.Federation.preset()
    js = attach_values(moga.load_default().jobset(n_jobs=120, federation=fed, batch=False),
                       soft_factor=(0.5, 1.5), hard_factor=(0.2, 1.0), seed=2)
    submit = evaluate_value(js, fed)
    bk = moga.value.best_known(js, fed, pop_size=16, n_gen=8, seed=3)
    assert bk.value >= submit.total_value
    assert np.all(np.diff(bk.history) >= 0) and bk.history[-1] == bk.value
    again = moga.value.best_known(js, fed, pop_size=16, n_gen=8, seed=3)
    assert again.value == bk.value
    from moga.evolution.problem import join
    order = np.argsort(-js.v_start, kind="stable")  # a heuristic order, seeded in
    initial = join(order, np.zeros((len(js), fed.n_clusters)))
    bk2 = moga.value.best_known(js, fed, pop_size=16, n_gen=2, seed=3, initial=initial)
    assert bk2.value >= evaluate_value(js, fed, order).total_value
    # The true upper bound is above every feasible schedule, the best known included.
    assert moga.value.upper_bound(js, fed) >= max(bk.value, bk2.value) - 1e-9


HEURISTIC_NAMES = list(moga.value.ONLINE_HEURISTICS)


@given(inst=value_instances(max_jobs=25), h=st.sampled_from(HEURISTIC_NAMES))
def test_online_schedules_are_valid(inst, h):
    js, fed, _, _ = inst
    s = moga.value.online(js, fed, h, small=1, medium=3)
    run = s.cluster >= 0
    assert s.n_run + s.n_dropped == len(js) and s.n_relaxed == 0  # every job runs or is dropped
    assert np.all(s.value[~run] == 0) and np.all(s.start[run] >= js.release[run])
    np.testing.assert_allclose(s.finish[run] - s.start[run],
                               js.runtime[run] / fed.speed[s.cluster[run]])
    np.testing.assert_allclose(s.value, value_at(s.finish, js.v_start, js.v_final, js.soft,
                                                 js.hard))
    for k in range(fed.n_clusters):
        on = np.flatnonzero(s.cluster == k)
        for t in s.start[on]:
            assert js.tasks[on][(s.start[on] <= t) & (t < s.finish[on])].sum() <= fed.nodes[k]
    held = ~np.isnan(s.reserved)
    # Reservations and place-holders are never delayed: their jobs start then (to the core
    # loop's tolerance, within which finishes count as one).
    np.testing.assert_allclose(s.start[held], s.reserved[held], rtol=1e-9)
    assert s.total_value == pytest.approx(s.value.sum())


@given(inst=value_instances(max_jobs=25), h=st.sampled_from(HEURISTIC_NAMES))
def test_an_online_run_is_the_one_schedule_record(inst, h):
    """A heuristic's result is a Schedule of every job: those not run count as rejected, the
    objectives those of the jobs run, and schedule() the record of the jobs run."""
    js, fed, _, _ = inst
    s = moga.value.online(js, fed, h, small=1, medium=3)
    assert isinstance(s, moga.Schedule) and s.policy == h
    run = s.cluster >= 0
    np.testing.assert_array_equal(s.rejected, ~run)
    np.testing.assert_array_equal(s.alloc.sum(axis=1), np.where(run, js.tasks, 0))
    ran = s.schedule()
    assert len(ran.jobset) == s.n_run and ran.makespan == s.makespan
    assert ran.energy == pytest.approx(s.energy) and ran.flowtime == pytest.approx(s.flowtime)
    summary = s.summary()
    assert summary["n_rejected"] == s.n_dropped
    assert summary["value_earned"] == pytest.approx(s.total_value)


def test_easy_backfills_without_delaying_the_reservation():
    fed = _fed(4)
    js = _jobs([0.0, 1.0, 2.0, 3.0], [3, 4, 1, 1], [10.0, 10.0, 5.0, 50.0], [1.0] * 4,
               [0.5] * 4, [1e3] * 4, [2e3] * 4)
    s = moga.value.online(js, fed, "online-EASY")
    assert s.start.tolist() == [0.0, 10.0, 2.0, 20.0]
    assert s.reserved[1] == 10.0 and np.isnan(s.reserved[2])


@pytest.mark.parametrize("h", sorted(RULE_CODES))
def test_online_runs_on_the_core_loop_with_its_tolerance(h):
    # Two jobs end 1e-11 s apart: the core loop ends them together at the earlier finish,
    # so the two-node job waiting for both starts then, as in the twin.
    fed = _fed(2)
    js = _jobs([0.0, 0.0, 1.0], [1, 1, 2], [10.0, 10.0 + 1e-11, 5.0], [1.0] * 3, [0.5] * 3,
               [1e3] * 3, [2e3] * 3)
    r = simulate(js.release, js.tasks, js.runtime, js.v_start, js.v_final, js.soft, js.hard,
                 fed.nodes, fed.speed, heuristic=h)
    assert r.start.tolist() == [0.0, 0.0, 10.0] and r.finish.tolist() == [10.0, 10.0, 15.0]
    assert r.n_events == 4  # at 0, at 1, at 10 (both finishes), at 15
    assert r.reserved[2] == 10.0 + 1e-11  # planned at the later finish, started at the first
    ref = naive_online(js.release, js.tasks, js.runtime, js.v_start, js.v_final, js.soft,
                       js.hard, fed.nodes, fed.speed, h)
    assert ref["start"] == r.start.tolist() and ref["finish"] == r.finish.tolist()
    assert ref["n_events"] == r.n_events
    # The schedule record is the core's: one cluster per job, energy from it.
    sched = moga.value.online(js, fed, h).schedule()
    assert sched.alloc.tolist() == [[1], [1], [2]] and sched.makespan == 15.0


def test_max_max_value_prefers_valuable_jobs():
    fed = _fed(1)
    js = _jobs([0.0, 0.0], [1, 1], [10.0, 10.0], [1.0, 16.0], [0.1, 1.6], [10.0, 10.0],
               [30.0, 30.0], priority=[2, 0])
    mmv = moga.value.online(js, fed, "Max-Max-Value")
    assert mmv.start.tolist() == [10.0, 0.0]
    easy = moga.value.online(js, fed, "easy")  # the simulator's code names it too
    assert easy.start.tolist() == [0.0, 10.0] and mmv.total_value > easy.total_value


def test_heuristics_lie_between_zero_and_the_upper_bound_and_below_the_best_known():
    fed = moga.Federation.preset()
    tr = moga.load_default()
    for start in (0, 1500):
        # Jobs may not span clusters here: drop those wider than the largest cluster.
        js = attach_values(tr.jobset(start=start, n_jobs=150, federation=int(fed.nodes.max()),
                                     wide="drop", batch=False), seed=start)
        r = moga.value.compare_value(js, fed, pop_size=16, n_gen=6, seed=1)
        heur = [row for row in r.rows if row["algorithm"] in moga.value.ONLINE_HEURISTICS]
        assert len(heur) == 4
        # Seeded with the heuristics' orders, the GA's best known value is at least theirs ...
        assert all(row["value"] <= r.best_known.value + 1e-9 for row in heur)
        # ... and no schedule earns more than the upper bound.
        assert all(0 <= row["value"] <= r.upper_bound + 1e-9 for row in r.rows)
        assert all(row["pct_of_upper_bound"] <= row["pct_of_best_known"] + 1e-9 for row in heur)


def test_online_argument_errors():
    fed = moga.Federation.preset()
    js = attach_values(moga.load_default().jobset(n_jobs=5, federation=fed))
    with pytest.raises(ValueError, match="unknown online heuristic"):
        moga.value.online(js, fed, "sjf")
    with pytest.raises(ValueError, match="thresholds"):
        moga.value.online(js, fed, "fcfs-multi", small=10, medium=5)


@given(inst=value_instances(max_jobs=22), h=st.sampled_from(sorted(RULE_CODES)),
       thresholds=st.sampled_from([(1, 3), (2, 2), (16, 256)]), batch=st.booleans())
def test_online_simulator_equals_its_plain_python_twin(inst, h, thresholds, batch):
    js, fed, _, _ = inst
    if batch:  # everything queued at once: the heuristics' orderings decide alone
        js = moga.JobSet(id=js.id, release=np.zeros(len(js)), tasks=js.tasks, runtime=js.runtime,
                         sigma=js.sigma, bw=js.bw, v_start=js.v_start, v_final=js.v_final,
                         soft=js.soft - js.release, hard=js.hard - js.release,
                         priority=js.priority)
    small, medium = thresholds
    r = simulate(js.release, js.tasks, js.runtime, js.v_start, js.v_final, js.soft, js.hard,
                 fed.nodes, fed.speed, heuristic=h, small=small, medium=medium)
    ref = naive_online(js.release, js.tasks, js.runtime, js.v_start, js.v_final, js.soft,
                       js.hard, fed.nodes, fed.speed, h, small, medium)
    assert r.cluster.tolist() == ref["cluster"]
    run = r.cluster >= 0
    np.testing.assert_allclose(r.start[run], np.array(ref["start"], dtype=float)[run],
                               rtol=1e-12)
    held = np.array([np.nan if v is None else v for v in ref["reserved"]])
    np.testing.assert_allclose(r.reserved, held, rtol=1e-12)
    assert (r.n_run, r.n_dropped, r.n_events) == (ref["n_run"], ref["n_dropped"],
                                                   ref["n_events"])
    assert r.total_value == pytest.approx(ref["total"], rel=1e-12)
