"""Power caps (docs/design.md §11): the decoders and dispatchers against plain-Python twins,
an independent power-profile checker, the CP model against brute force, and the errors."""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pytest
from conftest import SHARED_TRACES, instances
from hypothesis import given
from hypothesis import strategies as st
from naive import (
    naive_decode,
    naive_easy_federated,
    naive_power_profile,
    naive_power_violations,
    naive_prb,
    naive_serial_schedule,
)

import moga
from decoders._validate import _idle_least_power
from decoders.federated import dispatch, power_inputs
from moga.model.schedule import cap_runnable
from moga.powercap import CPOptions, Queues, cap_study, run_dispatcher, solve_relaxed
from moga.powercap.cp import serial_schedule
from moga.powercap.study import moved_by_cap, study_table


@st.composite
def capped(draw, max_jobs=12, cluster_caps=None):
    """A small instance with per-job power factors and a binding power cap."""
    js, fed, order, bl = draw(instances(max_jobs=max_jobs))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    js = js.with_power(rng.uniform(0.5, 1.5, len(js)))
    need = _idle_least_power(js.tasks, js.power, fed.nodes, fed.power_busy, fed.power_idle,
                             np.full(fed.n_clusters + 1, np.inf))
    cap = fed.idle_power + max(float(need.max()), 1.0) * draw(st.floats(1.001, 3.0))
    ccaps = None
    if cluster_caps if cluster_caps is not None else draw(st.booleans()):
        inc = np.maximum(fed.power_busy * 1.5 - fed.power_idle, 1.0) * fed.nodes
        ccaps = fed.nodes * fed.power_idle + inc * rng.uniform(0.4, 1.0, fed.n_clusters)
        try:
            power_inputs(js.tasks, js.power, fed.nodes, fed.power_busy, fed.power_idle, cap, ccaps)
        except ValueError:
            ccaps = None
    return js, fed.with_cap(cap, ccaps), order, bl


def _check_profile(start, finish, alloc, js, fed):
    prof = naive_power_profile(start, finish, alloc, js.power, fed.power_busy, fed.power_idle,
                               fed.nodes)
    assert naive_power_violations(prof, fed.power_cap, fed.cluster_caps) == []
    return prof


@given(inst=capped(), model=st.sampled_from(["fluid", "at_start"]),
       rule=st.sampled_from(["fastest", "greenest"]))
def test_capped_in_order_decoder_equals_its_twin(inst, model, rule):
    js, fed, order, bl = inst
    s = moga.evaluate(js, fed, order, bl, model=model, rule=rule)
    ref = naive_decode(js.release, js.tasks, js.runtime, js.sigma, js.bw, fed.nodes, fed.speed,
                       fed.power_busy, fed.power_idle, fed.link, order, bl, model=model, rule=rule,
                       power=js.power, cap=fed.power_cap, cluster_caps=fed.cluster_caps)
    np.testing.assert_allclose(s.start, ref["start"], rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(s.finish, ref["finish"], rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(s.alloc, ref["alloc"])
    assert s.n_relaxed == ref["n_relaxed"]
    np.testing.assert_allclose(s.energy, ref["energy"], rtol=1e-9)
    _check_profile(s.start, s.finish, s.alloc, js, fed)


def _capped_easy_equals_its_twin(js, fed, order, bl, rule):
    """Capped EASY's schedule (``at_start``) against the plain-Python twin's: starts,
    finishes and allocations; returns the decode and the twin's reservations."""
    s = moga.evaluate(js, fed, order, bl, model="at_start", backfill="easy", rule=rule)
    start, finish, alloc, reservation = naive_easy_federated(
        js.release, js.tasks, js.runtime, js.sigma, js.bw, fed.nodes, fed.speed, fed.power_busy,
        fed.link, order, bl, rule, pidle=fed.power_idle, power=js.power, cap=fed.power_cap,
        cluster_caps=fed.cluster_caps)
    np.testing.assert_allclose(s.start, start, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(s.finish, finish, rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(s.alloc, alloc)
    return s, reservation


@given(inst=capped(), rule=st.sampled_from(["fastest", "greenest"]))
def test_capped_easy_equals_its_twin(inst, rule):
    js, fed, order, bl = inst
    s, reservation = _capped_easy_equals_its_twin(js, fed, order, bl, rule)
    expected = np.array([np.nan if r is None else r for r in reservation])
    np.testing.assert_allclose(s.reservation, expected, rtol=1e-9, atol=1e-9)
    _check_profile(s.start, s.finish, s.alloc, js, fed)
    # Exact predictions and no later arrival ahead of it in the queue: a blocked head
    # never starts after its first reservation, power notwithstanding.
    if np.all(np.diff(js.release[order]) >= 0):
        held = ~np.isnan(s.reservation)
        assert np.all(s.start[held] <= s.reservation[held] * (1 + 1e-9) + 1e-9)


@given(inst=capped(), seed=st.integers(0, 2**32 - 1))
def test_capped_easy_on_requested_times_equals_its_twin(inst, seed):
    js, fed, order, bl = inst
    rng = np.random.default_rng(seed)
    js = dataclasses.replace(js, requested=js.runtime * rng.choice([0.7, 1.0, 1.5, 3.0], len(js)))
    s = moga.evaluate(js, fed, order, bl, model="at_start", backfill="easy",
                      estimates="requested")
    start, finish, alloc, reservation = naive_easy_federated(
        js.release, js.tasks, js.runtime, js.sigma, js.bw, fed.nodes, fed.speed, fed.power_busy,
        fed.link, order, bl, pidle=fed.power_idle, power=js.power, cap=fed.power_cap,
        cluster_caps=fed.cluster_caps, requested=js.requested)
    np.testing.assert_allclose(s.start, start, rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(s.alloc, alloc)
    _check_profile(s.start, s.finish, s.alloc, js, fed)


@pytest.mark.parametrize("seed", range(60))
def test_capped_easy_fall_back_tiers_equal_the_twin(seed):
    # Long queues (the candidate index, not the short-queue scan) under a binding cap,
    # with equal idle powers and no cluster budgets, the cheaper clusters often the slower:
    # a job whose pick on its group's first cluster does not fit the power now falls back
    # to its least-power allocation, and the index keeps it out as late by the speeds of
    # the cheapest clusters (the fall-back tiers). The twin tests every queued job, so a
    # skipped job that the exact test would start shows as a different schedule.
    rng = np.random.default_rng(seed)
    K = int(rng.integers(2, 5))
    nodes = rng.integers(3, 12, K)
    J = int(rng.integers(50, 90))
    tasks = np.where(rng.random(J) < 0.2, rng.integers(nodes.max(), nodes.sum() + 1, J),
                     rng.integers(1, nodes.max() + 1, J))
    runtime = rng.integers(1, 30, J).astype(float)
    release = np.where(rng.random(J) < 0.8, 0.0, rng.integers(0, 40, J).astype(float))
    bl = np.zeros((J, K))
    if seed % 2:
        bl = np.where(rng.random((J, K)) < 0.3, rng.choice([0.25, 0.5, 1.0], (J, K)), 0.0)
    sigma = np.where((tasks > 1) & (rng.random(J) < 0.5), rng.uniform(0.0, 1.0, J), 0.0)
    bw = np.where(sigma > 0, 400.0, 0.0)
    js = moga.JobSet.from_arrays(release, tasks, runtime, sigma=sigma, bw=bw).with_power(
        rng.uniform(0.5, 1.5, J))
    speed = np.sort(rng.choice([0.5, 0.8, 1.0, 1.3, 1.6], K))
    busy = np.sort(rng.choice([40.0, 60.0, 110.0, 180.0, 260.0], K, replace=False))
    if seed % 3 == 0:
        busy = rng.permutation(busy)  # no speed order among the prices
    fed = moga.Federation(names=[f"c{k}" for k in range(K)], nodes=nodes, speed=speed,
                          power_busy=busy, power_idle=np.full(K, 10.0),
                          link=np.full(K, 1000.0))
    fed = fed.with_cap(fraction=float(rng.choice([0.45, 0.6, 0.8])))
    js = js.take(cap_runnable(js, fed))
    order = rng.permutation(len(js))
    bl = bl[: len(js)]
    _capped_easy_equals_its_twin(js, fed, order, bl, ("fastest", "greenest")[seed % 2])


def test_dispatchers_plan_on_requested_times_if_asked():
    js, fed = _real(120)
    fed = fed.with_cap(fraction=0.6)
    for d in ("easy", "prb"):
        exact = run_dispatcher(js, fed, d)
        planned = run_dispatcher(js, fed, d, estimates="requested")
        assert planned.info["estimates"] == "requested" and exact.info["estimates"] == "exact"
        assert planned.metrics.time_above_cap == 0.0
        if d == "easy":  # the kernel EASY of moga.evaluate, on the arrival order
            ref = moga.evaluate(js, fed, np.lexsort((np.arange(len(js)), js.release)),
                                backfill="easy", estimates="requested")
            np.testing.assert_array_equal(planned.start, ref.start)
        else:  # PRB's only use of time: its tie order
            w = Queues().weights(js.requested)
            ref = dispatch(*js.arrays(), fed.nodes, fed.speed, fed.power_busy, fed.power_idle,
                           fed.link, method="prb", weight=w, tie=js.tasks * js.requested,
                           power=js.power, power_cap=fed.power_cap)
            np.testing.assert_array_equal(planned.start, ref.start)
    with pytest.raises(ValueError, match="estimates must be"):
        run_dispatcher(js, fed, "easy", estimates="guess")


@given(inst=capped(), rule=st.sampled_from(["fastest", "consolidate"]))
def test_prb_equals_its_twin(inst, rule):
    js, fed, _, _ = inst
    w = np.random.default_rng(len(js)).choice([1.0, 4.0, 24.0], len(js))
    d = dispatch(*js.arrays(), fed.nodes, fed.speed, fed.power_busy, fed.power_idle, fed.link,
                 method="prb", weight=w, power=js.power, power_cap=fed.power_cap,
                 cluster_caps=fed.cluster_caps, model="at_start", rule=rule)
    start, finish, alloc = naive_prb(js.release, js.tasks, js.runtime, js.sigma, js.bw, fed.nodes,
                                     fed.speed, fed.power_busy, fed.power_idle, fed.link, w,
                                     power=js.power, cap=fed.power_cap,
                                     cluster_caps=fed.cluster_caps, rule=rule)
    np.testing.assert_allclose(d.start, start, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(d.finish, finish, rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(d.alloc, alloc)


@given(inst=capped(max_jobs=10), dispatcher=st.sampled_from(["easy", "prb", "hybrid"]),
       model=st.sampled_from(["fluid", "at_start"]))
def test_no_dispatcher_exceeds_the_cap(inst, dispatcher, model):
    js, fed, _, _ = inst
    r = run_dispatcher(js, fed, dispatcher, model=model)
    assert np.all(r.start >= js.release - 1e-9)
    _check_profile(r.start, r.finish, r.alloc, js, fed)
    assert r.metrics.time_above_cap == 0.0
    assert r.metrics.peak_power <= fed.power_cap * (1 + 1e-9)


def _real(n_jobs=150, seed=0):
    fed = moga.Federation.preset("default")
    js = moga.load_default().jobset(n_jobs=n_jobs, federation=fed, batch=False, power="lognormal",
                                    seed=seed)
    return js, fed


@pytest.mark.parametrize("frac", [0.8, 0.4])
def test_real_jobset_stays_under_the_cap(frac):
    js, fed = _real()
    fed = fed.with_cap(fraction=frac)
    results = cap_study(js, moga.Federation.preset("default"), caps=[frac],
                        cp=CPOptions(window=8, time_limit=0.02))
    assert [r.metrics.cap is None for r in results] == [True] * 3 + [False] * 3
    for r in results[3:]:
        _check_profile(r.start, r.finish, r.alloc, js, fed)
        assert r.metrics.time_above_cap == 0.0
        assert r.metrics.peak_power <= fed.power_cap * (1 + 1e-9)
    for backfill in ("none", "easy"):
        s = moga.evaluate(js, fed, backfill=backfill)
        _check_profile(s.start, s.finish, s.alloc, js, fed)
    table = study_table(results)
    assert table.count("\n") == 1 + len(results) and "hybrid" in table
    rows = [line.split(" | ") for line in table.splitlines()[2:]]
    assert [row[0] for row in rows] == ["| none"] * 3 + [f"| {frac:.2f}"] * 3
    moved = [int(row[9]) for row in rows[3:]]  # the cap moves some jobs of every dispatcher
    assert moved == [moved_by_cap(r, results[i]) for i, r in enumerate(results[3:])]
    assert moved[1] > 0  # PRB under the cap


def test_a_cap_that_never_binds_moves_no_job():
    js, fed = _real(60)
    results = cap_study(js, fed, caps=[50.0], dispatchers=["easy", "prb"])  # 50 x peak
    assert [moved_by_cap(r, results[i]) for i, r in enumerate(results[2:])] == [0, 0]
    assert cap_study(js, fed, caps=[0.8], dispatchers=["prb"], uncapped=False)[0].metrics.cap


@pytest.mark.skipif(not (SHARED_TRACES / "CTC-SP2-1996-3.1-cln.swf.gz").exists(),
                    reason="needs ../shared/traces (the shared workload traces)")
def test_unseen_trace_stays_under_the_cap():
    tr = moga.load_swf(moga.resolve_trace("CTC-SP2-1996-3.1-cln.swf.gz"))
    fed = moga.Federation.preset("default").scaled(int(tr.max_procs)).with_cap(fraction=0.5)
    js = tr.jobset(start=2000, n_jobs=300, federation=fed, batch=False, power="lognormal")
    for d in ("easy", "prb"):
        r = run_dispatcher(js, fed, d)
        _check_profile(r.start, r.finish, r.alloc, js, fed)


def test_cap_binds_and_costs_time():
    js, fed = _real(200)
    loose = run_dispatcher(js, fed.with_cap(fraction=1.0), "prb").metrics
    tight = run_dispatcher(js, fed.with_cap(fraction=0.35), "prb").metrics
    assert tight.peak_power < loose.peak_power
    assert tight.mean_wait > loose.mean_wait


def test_hybrid_is_reproducible_and_reports_its_solves():
    js, fed = _real(120)
    fed = fed.with_cap(fraction=0.4)
    opts = CPOptions(window=8, time_limit=0.02)
    a = run_dispatcher(js, fed, "hybrid", cp=opts)
    b = run_dispatcher(js, fed, "hybrid", cp=opts)
    np.testing.assert_array_equal(a.start, b.start)
    assert a.info["solves"] > 0 and a.info["solve_seconds"].size == a.info["solves"]
    assert 0 <= a.info["fallbacks"] <= a.info["solves"]


def test_a_dispatch_is_the_one_schedule_and_the_hybrid_an_online_policy():
    """run_dispatcher returns a Schedule with the metrics beside it; the hybrid is an
    OnlinePolicy that run_policy drives on a Session, its statistics from summary()."""
    from moga.powercap import HybridCP
    from moga.sim import OnlinePolicy, run_policy

    js, fed = _real(120)
    fed = fed.with_cap(fraction=0.4)
    opts = CPOptions(window=8, time_limit=0.02)
    r = run_dispatcher(js, fed, "hybrid", cp=opts)
    assert isinstance(r, moga.Schedule) and r.policy == "hybrid" == r.dispatcher
    assert r.metrics.makespan == r.makespan and r.info["wall_s"] == r.wall_time
    own = run_policy(HybridCP(cp=opts), js, fed, estimates="exact")
    assert isinstance(HybridCP(), OnlinePolicy)
    np.testing.assert_array_equal(own.start, r.start)
    np.testing.assert_array_equal(own.alloc, r.alloc)
    assert own.info["solves"] == r.info["solves"] and own.info["events"] == r.info["events"]
    prb = run_dispatcher(js, fed, "prb")
    assert isinstance(prb, moga.Schedule) and prb.metrics.time_above_cap == 0
    with pytest.warns(DeprecationWarning, match="Schedule"):
        assert prb.schedule() is prb


def test_hybrid_feeds_conflict_sets_back_to_the_solver():
    js, fed = _real(150)
    fed = fed.with_cap(fraction=0.4)
    one = run_dispatcher(js, fed, "hybrid", cp=CPOptions(window=8, time_limit=0.02))
    loop = run_dispatcher(js, fed, "hybrid", cp=CPOptions(window=8, time_limit=0.02, passes=4))
    assert one.info["cuts"] == 0 and one.info["passes"] == 1
    assert loop.info["cuts"] > 0  # the mapper met conflicts and the solver got cuts
    assert loop.info["solves"] > loop.info["cuts"]  # each cut is one more solve of an event
    assert loop.metrics.time_above_cap == 0.0
    _check_profile(loop.start, loop.finish, loop.alloc, js, fed)
    again = run_dispatcher(js, fed, "hybrid", cp=CPOptions(window=8, time_limit=0.02, passes=4))
    np.testing.assert_array_equal(loop.start, again.start)
    with pytest.raises(ValueError, match="passes"):
        CPOptions(passes=0)


def test_a_cut_keeps_a_conflict_set_from_running_at_once():
    # Two jobs that fit together in the relaxed model; the cut forbids it.
    free = solve_relaxed([5, 5], [1, 1], [1.0, 1.0], [1.0, 1.0], 4, 100.0,
                         options=CPOptions(time_limit=5.0))
    assert free.start.tolist() == [0, 0]
    cut = solve_relaxed([5, 5], [1, 1], [1.0, 1.0], [1.0, 2.0], 4, 100.0,
                        options=CPOptions(time_limit=5.0), cuts=[[0, 1]])
    assert cut.start.tolist() == [5, 0]  # the heavier job first, the other after it


def test_would_start_is_a_dry_run():
    from moga.sim import Session

    js, fed = _real(40)
    s = Session(js, fed)
    q = s.queued()
    free, power = s.free, s.power_used
    dry = s.would_start(q)
    assert dry.size > 0 and s.queued().tolist() == q.tolist()
    np.testing.assert_array_equal(s.free, free)
    np.testing.assert_array_equal(s.power_used, power)
    assert s.start(q).tolist() == dry.tolist()


# ----------------------------------------------------------------- CP model
def _serial_sgs(perm, dur, nodes, power, cap_n, cap_p):
    """Each job in turn at its earliest start where nodes and power hold it (integer time)."""
    horizon = int(sum(dur)) + 1
    use_n = [0] * horizon
    use_p = [0] * horizon
    start = [0] * len(dur)
    for i in perm:
        s = 0
        while any(use_n[u] + nodes[i] > cap_n or use_p[u] + power[i] > cap_p
                  for u in range(s, s + dur[i])):
            s += 1
        for u in range(s, s + dur[i]):
            use_n[u] += nodes[i]
            use_p[u] += power[i]
        start[i] = s
    return start


@pytest.mark.parametrize("seed", range(8))
def test_cp_optimum_equals_brute_force_over_orders(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 6))
    cap_n, cap_p = int(rng.integers(3, 8)), int(rng.integers(50, 200))
    dur = rng.integers(1, 6, n)
    nodes = rng.integers(1, cap_n + 1, n)
    power = rng.integers(1, cap_p + 1, n)
    w = rng.choice([1.0, 4.0, 24.0], n)
    sol = solve_relaxed(dur, nodes, power, w, cap_n, cap_p, options=CPOptions(time_limit=10.0))
    assert sol.status == "OPTIMAL"
    scale = 1000
    best = min(sum(int(w[i] * scale) * s for i, s in enumerate(
        _serial_sgs(p, dur, nodes, power, cap_n, cap_p))) for p in itertools.permutations(range(n)))
    assert sol.objective == best
    # The solver's schedule itself respects both capacities.
    for u in range(int(sol.start.max() + dur.max())):
        on = (sol.start <= u) & (u < sol.start + dur)
        assert nodes[on].sum() <= cap_n and power[on].sum() <= cap_p


@given(seed=st.integers(0, 2**32 - 1))
def test_serial_schedule_equals_its_twin(seed):
    rng = np.random.default_rng(seed)
    n, capn, capp = int(rng.integers(1, 7)), int(rng.integers(3, 9)), int(rng.integers(50, 200))
    dur, nodes, power = rng.uniform(0.5, 6, n), rng.integers(1, capn + 1, n), rng.uniform(0, capp, n)
    r = int(rng.integers(0, 4))
    run = (rng.uniform(0, 8, r), rng.integers(0, capn // 2 + 1, r), rng.uniform(0, capp / 3, r))
    order = rng.permutation(n)
    assert serial_schedule(order, dur, nodes, power, capn, capp, *run).tolist() == \
        naive_serial_schedule(order, dur, nodes, power, capn, capp, *run)


def test_cp_always_has_a_solution_when_what_runs_fits():
    # Three running jobs draw 9.9 W of a 10 W budget: rounded up to whole watts they would
    # take 12 and leave the model infeasible from its start.
    sol = solve_relaxed([2], [1], [0.5], [1.0], 8, 10.0, running_end=[5, 5, 5],
                        running_nodes=[1, 1, 1], running_power=[3.3, 3.3, 3.3])
    assert sol.status == "OPTIMAL" and sol.start is not None


def test_cp_takes_a_job_that_fits_the_cap_within_a_watt():
    # 1.566 W fits 1.958 W, but rounded (up to 2 W, the capacity down to 1 W) it would
    # not: the job is clipped to the rounded capacity, not refused (hypothesis found it
    # through the hybrid dispatcher on one 1-node cluster).
    sol = solve_relaxed([3, 2], [1, 1], [1.566, 0.68], [1.0, 1.0], 1, 1.958)
    assert sol.status == "OPTIMAL" and sol.start.tolist() == [2, 0]  # shorter first
    assert serial_schedule([0, 1], [3, 2], [1, 1], [1.566, 0.68], 1, 1.958).tolist() == [0, 3]
    with pytest.raises(ValueError, match="more power than the cap"):
        solve_relaxed([3], [1], [2.5], [1.0], 1, 1.958)


def test_cp_counts_running_jobs():
    # One running job holds all nodes for 5 s: the waiting job cannot start before.
    sol = solve_relaxed([2], [3], [10], [1.0], 3, 100.0, running_end=[5], running_nodes=[3],
                        running_power=[0])
    assert sol.start.tolist() == [5]


# ------------------------------------------------------------------- errors
def test_cap_errors_name_the_problem():
    fed = moga.Federation.preset("default")
    with pytest.raises(ValueError, match="must exceed the federation's idle power"):
        fed.with_cap(fed.idle_power)
    with pytest.raises(ValueError, match="cluster 'fast'.*must exceed its idle power"):
        fed.with_cap(cluster_caps=[100.0, np.inf, np.inf, np.inf])
    js = moga.JobSet.from_arrays([0.0], [200], [10.0], sigma=[0.0], bw=[0.0])
    with pytest.raises(ValueError, match=r"job id \d+ \(position 0 of .*cannot run under the power cap"):
        moga.evaluate(js, fed.with_cap(fed.idle_power + 100.0))
    with pytest.raises(ValueError, match=r"JobSet.power\[0\].*must be in \(0, 10\]"):
        js.with_power([0.0])
    with pytest.raises(ValueError, match="caps are fractions of peak power"):
        cap_study(js, fed, caps=[0.0])
    with pytest.raises(ValueError, match="does not exceed the federation's idle"):
        cap_study(js, fed, caps=[0.05])
    with pytest.raises(ValueError, match="unknown dispatcher"):
        run_dispatcher(js, fed, "sjf")
    with pytest.raises(ValueError, match="one ewt per queue"):
        Queues(names=("a", "b"), limits=(), ewt=(1.0, 2.0))


def test_power_cap_in_toml_round_trips(tmp_path):
    fed = moga.Federation.preset("default").with_cap(12000.0, [np.inf, 9000.0, np.inf, np.inf])
    p = tmp_path / "f.toml"
    p.write_text(fed.to_toml())
    back = moga.Federation.from_toml(p)
    assert back.power_cap == 12000.0
    np.testing.assert_array_equal(back.cluster_caps, fed.cluster_caps)
    p.write_text(fed.to_toml().replace("power_cap = 12000.0", 'power_cap = "lots"'))
    with pytest.raises(ValueError, match="power_cap must be a number"):
        moga.Federation.from_toml(p)
    big = fed.scaled(512)
    assert big.power_cap / big.peak_power == pytest.approx(fed.power_cap / fed.peak_power)


def test_power_factors_are_drawn_from_the_seed():
    tr = moga.load_default()
    a = tr.jobset(n_jobs=50, power="lognormal", seed=3)
    b = tr.jobset(n_jobs=50, power="lognormal", seed=3)
    c = tr.jobset(n_jobs=50, seed=3)
    np.testing.assert_array_equal(a.power, b.power)
    np.testing.assert_array_equal(a.sigma, c.sigma)  # the power draw leaves sigma, bw alone
    assert np.all(c.power == 1.0) and np.all((a.power >= 0.5) & (a.power <= 1.5))
    assert not np.allclose(a.power, 1.0)
    assert np.all(a.requested > 0)
    with pytest.raises(ValueError, match="one factor per job"):
        tr.jobset(n_jobs=50, power=np.ones(3))


def test_queue_weights():
    q = Queues()
    np.testing.assert_array_equal(q.classify([60, 1800, 1801, 21600, 90000]), [0, 0, 1, 1, 2])
    np.testing.assert_array_equal(q.weights([60, 7200, 90000]), [24.0, 4.0, 1.0])
    assert q.weighted_queue_time([60, 90000], [0.0, 0.0], [10.0, 10.0]) == 250.0


def test_moga_run_under_a_cap_keeps_every_front_schedule_under_it():
    js, fed = _real(60)
    cap = 0.4 * fed.peak_power
    res = moga.run(js, fed, pop_size=10, n_gen=4, seed=2, power_cap=cap)
    assert res.federation.power_cap == cap
    for i in range(len(res.F)):
        s = res.schedule(i)
        _check_profile(s.start, s.finish, s.alloc, js, res.federation)
        t, w = s.power_profile()
        assert w.max() <= cap * (1 + 1e-9)


def test_dispatchers_plan_on_predicted_power_and_are_judged_on_the_real_draw():
    from moga.model.schedule import schedule_energy
    from moga.powercap import predict_power

    js, fed = _real(150)
    fed = fed.with_cap(fraction=0.5)
    for d in ("easy", "prb"):
        exact = run_dispatcher(js, fed, d)
        # The decoder's energy is the one formula of schedule_energy.
        assert schedule_energy(js.release, exact.start, exact.finish, exact.alloc, js.power,
                               fed) == pytest.approx(exact.metrics.energy, rel=1e-12)
        r = run_dispatcher(js, fed, d, power_error=0.3, power_seed=4)
        assert r.info["power_error"] == 0.3 and r.info["power_seed"] == 4
        assert r.jobset is js
        # The schedule is the one the dispatcher makes knowing the predicted factors...
        seen = dataclasses.replace(js, power=predict_power(js.power, 0.3, 4))
        blind = run_dispatcher(seen, fed, d)
        np.testing.assert_array_equal(r.start, blind.start)
        np.testing.assert_array_equal(r.alloc, blind.alloc)
        # ... and its metrics are those of the real draw (an independent profile check).
        assert r.metrics.energy == pytest.approx(schedule_energy(
            js.release, r.start, r.finish, r.alloc, js.power, fed), rel=1e-12)
        profile = naive_power_profile(r.start, r.finish, r.alloc, js.power, fed.power_busy,
                                      fed.power_idle, fed.nodes)
        assert r.metrics.peak_power == pytest.approx(max(p[1] for p in profile), rel=1e-9)
    # Predictions are seeded, multiplicative and clipped; no error is exact knowledge.
    p = predict_power(js.power, 0.3, 4)
    np.testing.assert_array_equal(p, predict_power(js.power, 0.3, 4))
    assert not np.array_equal(p, predict_power(js.power, 0.3, 5))
    assert p.min() >= 0.5 and p.max() <= 1.5
    np.testing.assert_array_equal(predict_power(js.power, 0.0), js.power)
    np.testing.assert_array_equal(run_dispatcher(js, fed, "prb", power_error=0.0).start,
                                  run_dispatcher(js, fed, "prb").start)
    with pytest.raises(ValueError, match="power_error"):
        run_dispatcher(js, fed, "prb", power_error=-0.1)


def test_a_wrong_power_prediction_can_exceed_the_cap():
    js, fed = _real(300, seed=1)
    fed = fed.with_cap(fraction=0.45)
    over = [run_dispatcher(js, fed, "prb", power_error=0.5, power_seed=s).metrics.time_above_cap
            for s in range(3)]
    assert max(over) > 0
    assert run_dispatcher(js, fed, "prb").metrics.time_above_cap == 0
    # A margin is planning under lower caps, judged against the real ones.
    m = run_dispatcher(js, fed, "prb", power_error=0.5, power_seed=0, power_margin=0.3)
    low = run_dispatcher(js, fed.with_cap(fed.power_cap * 0.7), "prb", power_error=0.5,
                         power_seed=0)
    np.testing.assert_array_equal(m.start, low.start)
    assert m.federation is fed and m.metrics.cap == fed.power_cap
    assert m.info["power_margin"] == 0.3
    assert m.metrics.time_above_cap <= low.metrics.time_above_cap
    with pytest.raises(ValueError, match="power_margin"):
        run_dispatcher(js, fed, "prb", power_margin=1.0)


def test_cap_runnable_marks_the_jobs_check_power_refuses():
    from moga.errors import InputError
    from moga.model.schedule import cap_runnable, check_power

    fed = moga.Federation.preset("default")
    js = moga.JobSet.from_arrays(np.zeros(4), [1, 250, 8, 256], np.full(4, 10.0),
                                 sigma=np.zeros(4), bw=np.zeros(4)).with_power(
        np.array([1.0, 1.5, 1.0, 1.5]))
    assert cap_runnable(js, fed).all()                      # no cap: every job
    tight = fed.with_cap(fraction=0.5)
    ok = cap_runnable(js, tight)
    assert ok.tolist() == [True, False, True, False]
    with pytest.raises(InputError, match="2 jobs"):
        check_power(js, tight)
    check_power(js.take(ok), tight)                         # what is left runs


def _capped_easy_against_its_twin(js, fed, capped_fed, order, bl, rule):
    """Capped EASY's schedule of ``(order, bl)``, checked against the twin's starts and
    allocations."""
    s = moga.evaluate(js, capped_fed, order, bl, model="at_start", backfill="easy", rule=rule)
    start, finish, alloc, _ = naive_easy_federated(
        js.release, js.tasks, js.runtime, js.sigma, js.bw, fed.nodes, fed.speed, fed.power_busy,
        fed.link, order, bl, rule, pidle=fed.power_idle, power=js.power,
        cap=capped_fed.power_cap)
    np.testing.assert_allclose(s.start, start, rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(s.alloc, alloc)
    return s


@pytest.mark.parametrize("frac, rule, shuffled", [(0.85, "fastest", False), (0.55, "fastest", True),
                                                  (0.55, "greenest", False)])
def test_capped_easy_on_a_long_batch_queue_equals_its_twin(frac, rule, shuffled):
    # A batch queue long enough for EASY's candidate index to prune late jobs on the
    # allocation rule's first cluster (and to search afresh after each start).
    fed = moga.Federation.preset("default")
    js = moga.load_default().jobset(n_jobs=160, federation=fed, power="lognormal", seed=3)
    capped_fed = fed.with_cap(fraction=frac)
    js = js.take(cap_runnable(js, capped_fed))
    J, K = len(js), fed.n_clusters
    rng = np.random.default_rng(7)
    order, bl = js.submit_order, np.zeros((J, K))
    if shuffled:
        order = rng.permutation(J)
        bl = np.where(rng.random((J, K)) < 0.3, rng.random((J, K)), 0.0)
    s = _capped_easy_against_its_twin(js, fed, capped_fed, order, bl, rule)
    _check_profile(s.start, s.finish, s.alloc, js, capped_fed)


@pytest.mark.parametrize("seed", range(6))
def test_capped_easy_on_random_batch_queues_equals_its_twin(seed):
    # The index's power bounds may only keep out jobs the exact test refuses: on random
    # batch queues, caps and chromosomes, a bound that kept out a job the scan would
    # start changes the schedule, and the twin (a scan of the whole queue) sees it.
    rng = np.random.default_rng(100 + seed)
    fed = moga.Federation.preset("default")
    js = moga.load_default().jobset(start=int(rng.integers(0, 3000)), n_jobs=120, federation=fed,
                                    power="lognormal", seed=int(rng.integers(0, 1000)))
    capped_fed = fed.with_cap(fraction=float(rng.uniform(0.4, 0.95)))
    js = js.take(cap_runnable(js, capped_fed))
    J, K = len(js), fed.n_clusters
    order = rng.permutation(J) if seed % 2 else js.submit_order
    bl = np.where(rng.random((J, K)) < 0.3, rng.random((J, K)), 0.0) if seed % 2 else np.zeros((J, K))
    rule = "greenest" if seed % 3 == 2 else "fastest"
    _capped_easy_against_its_twin(js, fed, capped_fed, order, bl, rule)
