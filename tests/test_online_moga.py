"""Online MOGA: the window problem, the Session's blacklisted starts, the twin of the loop."""

from __future__ import annotations

import dataclasses
import itertools
import json

import numpy as np
import pytest
from naive import naive_online_moga

import moga
from moga import simulate
from moga.cli import main
from moga.evolution.online import (
    WINDOW_OBJECTIVES,
    OnlineMOGA,
    non_dominated,
    parse_preference,
    pick_member,
    pinned_blocks,
    single_job_rows,
    window_problem,
)
from moga.sim import Session

FED = moga.Federation(names=["fast", "mid", "slow"], nodes=[4, 6, 8], speed=[1.6, 1.2, 0.8],
                      power_busy=[290.0, 120.0, 40.0], power_idle=[10.0, 10.0, 10.0],
                      link=[1000.0, 1000.0, 1000.0])


def tiny(seed, J=14, sigma=0.0):
    """Random release-mode jobs on :data:`FED`, requested times above the run times."""
    rng = np.random.default_rng(seed)
    release = np.sort(rng.integers(0, 400, J)).astype(float)
    runtime = rng.integers(20, 300, J).astype(float)
    js = moga.JobSet.from_arrays(release, rng.integers(1, 12, J), runtime,
                                 sigma=np.full(J, sigma), bw=np.full(J, 10.0 if sigma else 0.0))
    return dataclasses.replace(js, requested=np.round(runtime * rng.uniform(1, 3, J)))


def policy(**kw):
    return OnlineMOGA(**{"pop_size": 8, "generations": 3, "window": 6, "seed": 3, **kw})


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("kw", [{}, {"preference": "knee", "objectives": ("makespan", "energy")},
                                {"preference": "weight:0.3", "warm_start": False},
                                {"preference": "energy:0.2",
                                 "objectives": ("energy", "bsld", "flowtime")}])
def test_loop_matches_twin_event_by_event(seed, kw):
    js = tiny(seed)
    p = policy(**kw)
    s = simulate(js, FED, p)
    twin = policy(**kw)
    start, finish, alloc, log = naive_online_moga(js.release, js.tasks, js.runtime, js.requested,
                                                  FED.nodes, FED.speed, FED.power_busy,
                                                  FED.power_idle, twin, FED)
    assert len(p.log) == len(log)
    for (t, jobs, rows), (t2, jobs2, rows2) in zip(p.log, log, strict=True):
        assert t == pytest.approx(t2)
        assert jobs.tolist() == jobs2
        np.testing.assert_allclose(rows, np.array(rows2).reshape(rows.shape))
    np.testing.assert_allclose(s.start, start)
    np.testing.assert_allclose(s.finish, finish)
    np.testing.assert_array_equal(s.alloc, alloc)
    assert s.info["fallback_starts"] == 0 and s.info["plan_mismatches"] == 0


def test_same_seed_same_schedule_other_seed_runs():
    js = tiny(5, J=20)
    a, b = (simulate(js, FED, policy(seed=4)) for _ in range(2))
    np.testing.assert_array_equal(a.start, b.start)
    np.testing.assert_array_equal(a.alloc, b.alloc)
    c = simulate(js, FED, policy(seed=5))
    assert np.all(c.start >= js.release)


def test_window_holds_running_jobs_on_their_nodes():
    js = tiny(7, J=10)
    s = Session(js, FED, model="at_start")
    s.start([0], blacklist=[[1.0, 0.0, 0.0]])  # kept off the fast cluster
    assert s.allocation[0, 0] == 0
    while s.jobset.release[1] > s.now:
        s.advance()
    q = s.queued()
    wp = window_problem(s, q)
    run, planned = s.running()
    # Decoding the arrival order: every running job starts at 0 on exactly its nodes.
    X = np.concatenate([np.arange(len(q), dtype=float), np.zeros(len(q) * 3)])
    orders, bls = wp.full_rows(X[None])
    d = moga.evaluate(wp.full, FED, orders[0], bls[0], model="at_start")
    np.testing.assert_array_equal(d.start[: len(run)], 0.0)
    np.testing.assert_array_equal(d.alloc[: len(run)], s.allocation[run])
    np.testing.assert_allclose(d.finish[: len(run)], np.maximum(planned - s.now, 1.0))
    np.testing.assert_allclose(wp.waited, s.now - js.release[q])


def test_session_start_honours_blacklist_and_checks_it():
    js = tiny(8, J=6)
    s = Session(js, FED)
    with pytest.raises(ValueError, match="shape"):
        s.start([0], blacklist=np.zeros((2, 3)))
    with pytest.raises(ValueError, match="cluster 'mid'"):
        s.start([0], blacklist=[[0.0, 1.5, 0.0]])
    t = int(js.tasks[0])
    started = s.start([0], blacklist=[[1.0, 1.0, 0.0]])
    assert started.tolist() == [0]
    assert s.allocation[0].tolist() == [0, 0, t]


def test_batch_decode_starts_match_single_decodes():
    js = tiny(9, J=12, sigma=0.3)
    rng = np.random.default_rng(0)
    orders = np.array([rng.permutation(12) for _ in range(5)])
    bls = rng.random((5, 12, 3)) * 0.6
    b = moga.evaluate_batch(js, FED, orders, bls, starts=True)
    for p in range(5):
        np.testing.assert_allclose(b.starts[p], moga.evaluate(js, FED, orders[p], bls[p]).start)


def test_preferences_pick_as_documented():
    G = np.array([[10.0, 5.0, 0, 3.0], [12.0, 4.0, 0, 2.0], [15.0, 3.0, 0, 2.1],
                  [20.0, 2.0, 0, 4.0]])
    F = G[:, [1, 3]]
    assert pick_member(G, F, "slowdown:0") == 1
    assert pick_member(G, F, "slowdown:0.06") == 2
    assert pick_member(G, F, "energy:0") == 3
    assert pick_member(G, F, "energy:0.5") == 2
    assert pick_member(G, F, "weight:1") == 0
    assert pick_member(G, F, "weight:0") == 3
    assert pick_member(G, F, "bsld:2.5") == 2  # the least energy within the bound
    assert pick_member(G, F, "bsld:1") == 1  # none within: the least slowdown
    for bad in ("fast", "weight:2", "slowdown:-1", "knee:1", "energy:x", 0.5, "bsld:0.5"):
        with pytest.raises(ValueError, match="preference"):
            parse_preference(bad)


@pytest.mark.parametrize("kw, match", [({"pop_size": 2}, "pop_size"), ({"generations": 0},
                                       "generations"), ({"window": 1.5}, "window"),
                                       ({"objectives": ("speed",)}, "objectives"),
                                       ({"time_budget": 0}, "time_budget"),
                                       ({"preference": "greedy"}, "preference")])
def test_bad_options_are_named(kw, match):
    with pytest.raises(ValueError, match=match):
        OnlineMOGA(**kw)


def test_registered_by_name_with_options_and_summary():
    js = tiny(10, J=16)
    s = simulate(js, FED, "online-moga", options={"pop_size": 6, "generations": 2})
    assert s.policy == "online-moga"
    assert s.info["decisions"] >= 1 and s.info["ga_evaluations"] > 0
    assert s.info["pop_size"] == 6 and s.info["estimates"] == "requested"
    assert s.info["decision_max_s"] >= s.info["decision_mean_s"] > 0
    with pytest.raises(ValueError, match="takes no options"):
        simulate(js, FED, "easy", options={"pop_size": 6})
    with pytest.raises(ValueError, match="online-moga"):
        simulate(js, FED, "online-moga", options={"speed": 6})


def test_interval_spaces_decisions_and_still_schedules_everything():
    js = tiny(13, J=40)
    every = policy()
    simulate(js, FED, every)
    spaced = policy(interval=300.0, min_change=3)
    s = simulate(js, FED, spaced)
    assert s.info["skipped_by_interval"] > 0
    assert s.info["decisions"] < every.summary()["decisions"]
    assert np.all(s.start >= js.release) and s.info["fallback_starts"] == 0
    with pytest.raises(ValueError, match="interval"):
        OnlineMOGA(interval=-1.0)


def test_time_budget_bounds_generations():
    js = tiny(11, J=16)
    p = policy(generations=10_000, time_budget=0.01)
    simulate(js, FED, p)
    assert p.summary()["ga_evaluations"] < 10_000 * 8 * p.summary()["decisions"]


def test_cli_simulate_online_moga(tmp_path, capsys):
    out = tmp_path / "sim"
    assert main(["simulate", "--policy", "online-moga", "--n-jobs", "60", "--pop", "6", "--gen",
                 "2", "--preference", "knee", "--objectives", "makespan,energy", "--no-gantt",
                 "--out", str(out)]) == 0
    info = json.loads((out / "metrics.json").read_text())["info"]
    assert info["preference"] == "knee" and info["objectives"] == ["makespan", "energy"]
    assert main(["simulate", "--policy", "easy", "--pop", "6", "--out", str(tmp_path / "e")]) == 2
    assert "--pop: for --policy online-moga only" in capsys.readouterr().err
    assert main(["simulate", "--policy", "online-moga", "--preference", "slowdown:-1",
                 "--out", str(tmp_path / "f")]) == 2


def test_pinned_blocks_hold_every_node_at_least_as_long():
    rng = np.random.default_rng(3)
    r = 40
    alloc = np.zeros((r, 3), dtype=np.int64)
    for i in range(r):  # some co-allocated
        for k in rng.choice(3, rng.integers(1, 3), replace=False):
            alloc[i, k] = rng.integers(1, 3)
    nodes = alloc.sum(axis=0) + 2
    speed = np.array([1.6, 1.2, 0.8])
    remaining = rng.uniform(10, 1000, r)
    power = rng.uniform(0.5, 1.5, r)
    exact = pinned_blocks(alloc, remaining, power, nodes, speed, max_pinned=r)
    assert len(exact[0]) == r
    tasks, runtime, pw, bl = pinned_blocks(alloc, remaining, power, nodes, speed, max_pinned=9)
    assert len(tasks) <= 9
    held = nodes - np.floor(bl * nodes).astype(int)  # each block's allowance: its nodes
    np.testing.assert_array_equal(held.sum(axis=1), tasks)
    assert np.all((held > 0).sum(axis=1) == 1)
    k_of = held.argmax(axis=1)
    end = runtime / speed[k_of]
    for t in rng.uniform(0, 1000, 50):  # nodes held at t by the blocks >= by the jobs
        for k in range(3):
            jobs_held = alloc[remaining > t, k].sum()
            assert held[(k_of == k) & (end > t), k].sum() >= jobs_held
    np.testing.assert_array_equal(np.bincount(k_of, weights=tasks, minlength=3),
                                  alloc.sum(axis=0))
    assert np.all((pw >= power.min() - 1e-12) & (pw <= power.max() + 1e-12))


def test_grouped_running_jobs_still_schedule_everything():
    js = tiny(12, J=30)
    s = simulate(js, FED, policy(max_pinned=2))
    assert np.all(s.start >= js.release) and s.info["fallback_starts"] == 0


def test_under_a_power_cap_the_cap_holds():
    js = tiny(14, J=30).with_power(np.random.default_rng(0).uniform(0.6, 1.4, 30))
    fed = FED.with_cap(fraction=0.5)
    s = simulate(js, fed, policy())
    times, watts = s.power_profile()
    assert watts.max() <= fed.power_cap * (1 + 1e-9)
    assert np.all(s.start >= js.release) and s.info["fallback_starts"] == 0


def one_job_window(seed):
    """A session of :func:`tiny` jobs advanced to an event with one waiting job, and its
    window problem."""
    js = tiny(seed, J=12)
    s = Session(js, FED)
    p = policy(single="ga")
    while True:
        q = s.queued()[: p.window]
        if q.size == 1 and s.running()[0].size:
            return s, q, window_problem(s, q)
        if q.size:
            jobs, bl = p.plan(s, q)
            s.start(jobs, blacklist=bl)
        s.advance()


def test_single_job_rows_are_every_ordered_fill():
    for seed in range(4):
        s, q, wp = one_job_window(seed)
        X = single_job_rows(wp)
        assert len(np.unique(X, axis=0)) == len(X) and X.shape[1] == 1 + 3
        np.testing.assert_array_equal(X[:, 0], 0.0)
        t = int(s.jobset.tasks[q[0]])
        orders, bls = wp.full_rows(X)
        b = moga.evaluate_batch(wp.full, FED, orders, bls, allocations=True, starts=True)
        alloc = b.alloc[:, -1]
        # Each row places the job on exactly the counts its blacklist allows.
        np.testing.assert_array_equal(alloc.sum(axis=1), t)
        allowed = FED.nodes - np.floor(X[:, 1:] * FED.nodes).astype(int)
        np.testing.assert_array_equal(alloc, allowed)
        # The fills over the free nodes, in every cluster order, are there and start now.
        free = s.free
        for perm in itertools.permutations(range(3)):
            x, rem = np.zeros(3, dtype=int), t
            for k in perm:
                x[k] = min(free[k], rem)
                rem -= x[k]
            if rem == 0:
                i = np.flatnonzero((alloc == x).all(axis=1))
                assert i.size == 1 and b.starts[i[0], -1] == 0.0
    with pytest.raises(ValueError, match="one waiting job"):
        js = tiny(0, J=6)
        single_job_rows(window_problem(Session(js, FED), np.arange(2)))


@pytest.mark.parametrize("preference", ["slowdown:0", "energy:0.1", "knee", "bsld:2"])
def test_one_job_decision_is_the_preferred_candidate(preference):
    """A one-job window is decided without the GA: the pick is the preference's member of the
    candidates' front, found here by decoding each candidate alone."""
    objectives = ("makespan", "energy") if preference == "knee" else ("energy", "bsld")
    for seed in range(3):
        s, q, wp = one_job_window(seed)
        p = policy(preference=preference, objectives=objectives, single="enumerate")
        jobs, bl = p.plan_window(wp, q)
        assert p._evals == wp.n_decoded  # one decode of the candidates
        X = np.unique(np.vstack([p._initial(window_problem(s, q, objectives), q),
                                 single_job_rows(wp)]), axis=0)
        G, starts = [], []
        for row in X:
            o, b = wp.full_rows(row[None])
            d = moga.evaluate(wp.full, FED, o[0], b[0])
            g, st = wp.objectives_of(np.array([d.makespan]), np.array([d.energy]),
                                     np.array([d.flowtime]), d.start[None, -1:])
            G.append(g[0])
            starts.append(st[0, 0])
        G = np.array(G)
        F = G[:, [WINDOW_OBJECTIVES.index(o) for o in objectives]]
        front = non_dominated(F)
        i = pick_member(G[front], F[front], preference)
        want = X[front][i]
        if np.array(starts)[front][i] <= 0.0:
            assert jobs.tolist() == q.tolist()
            np.testing.assert_array_equal(bl[0], want[1:])
        else:
            assert jobs.size == 0


def test_single_option_checked_and_ga_kept_on_request():
    with pytest.raises(ValueError, match=r"single must be one of \['enumerate', 'ga'\]"):
        OnlineMOGA(single="exact")
    js = tiny(12, J=30)
    fast, ga = policy(single="enumerate"), policy()
    a, b = simulate(js, FED, fast), simulate(js, FED, ga)
    assert a.info["single"] == "enumerate" and b.info["single"] == "ga"
    assert a.info["ga_evaluations"] < b.info["ga_evaluations"]
    again = simulate(js, FED, policy(single="enumerate"))
    np.testing.assert_array_equal(a.start, again.start)
    np.testing.assert_array_equal(a.alloc, again.alloc)


def test_non_dominated_mask():
    F = np.array([[1.0, 5.0], [2.0, 2.0], [3.0, 3.0], [1.0, 5.0], [4.0, 1.0]])
    assert non_dominated(F).tolist() == [True, True, False, True, True]
