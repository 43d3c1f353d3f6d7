"""EASY backfilling and the greenest allocation rule, against independent references."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from conftest import instances
from hypothesis import given, settings
from hypothesis import strategies as st
from naive import naive_decode, naive_easy, naive_easy_federated, naive_fifo

import decoders._federated_core as core
import decoders.easy as easy
import moga
from decoders._kernels import entry

# Helpers of the EASY loop without a Python entry point of their own (decoders._kernels.helper).
cluster_mask, free_by_mask, _room_left = map(entry, (core.cluster_mask, core.free_by_mask,
                                                     easy._room_left))


@st.composite
def homogeneous(draw, max_jobs=25):
    """One cluster of speed 1, jobs without communication, integer times (many ties)."""
    nodes = draw(st.integers(1, 16))
    J = draw(st.integers(1, max_jobs))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    tasks = rng.integers(1, nodes + 1, J)
    runtime = rng.integers(1, 30, J).astype(float)
    if draw(st.booleans()):
        release = np.sort(rng.integers(0, 40, J)).astype(float)
    else:
        release = np.zeros(J)
    fed = moga.Federation(names=["c"], nodes=[nodes], speed=[1.0], power_busy=[50.0],
                          power_idle=[10.0], link=[100.0])
    js = moga.JobSet.from_arrays(release, tasks, runtime, sigma=np.zeros(J), bw=np.zeros(J))
    return js, fed


@given(inst=homogeneous(), model=st.sampled_from(["fluid", "at_start"]))
def test_fcfs_equals_fifo_simulator(inst, model):
    js, fed = inst
    s = moga.evaluate(js, fed, model=model)
    expected = naive_fifo(js.release, js.tasks, js.runtime, int(fed.nodes[0]))
    np.testing.assert_allclose(s.start, expected, rtol=1e-12)


@given(inst=homogeneous(), model=st.sampled_from(["fluid", "at_start"]))
def test_easy_equals_textbook_easy(inst, model):
    js, fed = inst
    s = moga.evaluate(js, fed, model=model, backfill="easy")
    starts, reservations = naive_easy(js.release, js.tasks, js.runtime, int(fed.nodes[0]))
    np.testing.assert_allclose(s.start, starts, rtol=1e-12)
    expected = np.array([np.nan if r is None else r for r in reservations])
    np.testing.assert_allclose(s.reservation, expected, rtol=1e-12)
    assert np.all(s.finish == s.start + js.runtime)


def test_easy_backfills_a_small_job_into_the_hole():
    # 4 nodes: job 0 holds 3 until t=10; job 1 (4 tasks) must wait for it; job 2 (1 task,
    # 5 s) fits in the free node and ends before t=10, so it jumps ahead; job 3 (1 task, 50 s)
    # would delay job 1's reservation, so it waits.
    fed = moga.Federation(names=["c"], nodes=[4], speed=[1.0], power_busy=[2.0],
                          power_idle=[1.0], link=[1.0])
    js = moga.JobSet.from_arrays(np.zeros(4), [3, 4, 1, 1], [10.0, 10.0, 5.0, 50.0],
                                 sigma=np.zeros(4), bw=np.zeros(4))
    easy = moga.evaluate(js, fed, backfill="easy")
    assert easy.start.tolist() == [0.0, 10.0, 0.0, 20.0]
    assert easy.reservation[1] == 10.0 and np.isnan(easy.reservation[0])
    fcfs = moga.evaluate(js, fed)
    assert fcfs.start.tolist() == [0.0, 10.0, 20.0, 20.0]


def test_a_start_ahead_of_the_head_moves_its_reservation():
    # 5 nodes. Jobs 0 (3 nodes, 100 s) and 1 (1 node, 20 s) start at 0; the head, job 3
    # (5 nodes), is planned for t=100. Job 2 (1 node, 300 s) arrives at 5 ahead of the head
    # in the order and takes the last free node, so the head's reservation moves to 305.
    # When job 1 ends at 20, job 4 (1 node, 150 s) ends by 305 and backfills.
    fed = moga.Federation(names=["c"], nodes=[5], speed=[1.0], power_busy=[2.0],
                          power_idle=[1.0], link=[1.0])
    js = moga.JobSet.from_arrays(np.array([0.0, 0.0, 5.0, 0.0, 0.0]), [3, 1, 1, 5, 1],
                                 [100.0, 20.0, 300.0, 10.0, 150.0], sigma=np.zeros(5),
                                 bw=np.zeros(5))
    for model in ("fluid", "at_start"):
        easy = moga.evaluate(js, fed, backfill="easy", model=model)
        assert easy.start.tolist() == [0.0, 0.0, 5.0, 305.0, 20.0]
        assert easy.reservation[3] == 100.0  # its first reservation


@given(inst=instances(release=True), model=st.sampled_from(["fluid", "at_start"]),
       rule=st.sampled_from(["fastest", "greenest"]))
def test_easy_schedules_are_valid(inst, model, rule):
    js, fed, _, bl = inst
    order = np.lexsort((np.arange(len(js)), js.release))  # first come, first served
    s = moga.evaluate(js, fed, order, bl, model=model, backfill="easy", rule=rule)
    assert np.all(s.start >= js.release)
    assert np.all(s.alloc.sum(axis=1) == js.tasks)
    s.node_assignment()  # raises if a cluster is ever over capacity
    allow = fed.nodes - np.floor(bl * fed.nodes).astype(int)
    relaxed = allow.sum(axis=1) < js.tasks
    assert s.n_relaxed == int(relaxed.sum())
    assert np.all(s.alloc[~relaxed] <= allow[~relaxed])


@given(inst=instances(), rule=st.sampled_from(["fastest", "greenest"]))
def test_easy_head_never_starts_after_its_reservation_at_start(inst, rule):
    js, fed, _, bl = inst
    order = np.lexsort((np.arange(len(js)), js.release))
    s = moga.evaluate(js, fed, order, bl, model="at_start", backfill="easy", rule=rule)
    held = ~np.isnan(s.reservation)
    assert np.all(s.start[held] <= s.reservation[held] * (1 + 1e-9) + 1e-9)
    assert np.all(s.reservation[held] >= js.release[held])


@given(inst=instances(), model=st.sampled_from(["fluid", "at_start"]))
def test_easy_never_later_than_fcfs_for_the_first_job(inst, model):
    js, fed, _, bl = inst
    order = np.lexsort((np.arange(len(js)), js.release))
    e = moga.evaluate(js, fed, order, bl, model=model, backfill="easy")
    f = moga.evaluate(js, fed, order, bl, model=model)
    assert e.start[order[0]] == f.start[order[0]]


@given(inst=instances(), model=st.sampled_from(["fluid", "at_start"]))
def test_greenest_matches_reference(inst, model):
    js, fed, order, bl = inst
    s = moga.evaluate(js, fed, order, bl, model=model, rule="greenest")
    ref = naive_decode(js.release, js.tasks, js.runtime, js.sigma, js.bw, fed.nodes, fed.speed,
                       fed.power_busy, fed.power_idle, fed.link, order, bl, model, rule="greenest")
    np.testing.assert_array_equal(s.alloc, np.array(ref["alloc"]).reshape(s.alloc.shape))
    assert s.energy == pytest.approx(ref["energy"], rel=1e-9)
    assert s.makespan == pytest.approx(ref["makespan"], rel=1e-9)


def test_greenest_prefers_energy_efficient_clusters():
    fed = moga.Federation.preset()
    js = moga.load_default().jobset(n_jobs=1, federation=fed)
    s = moga.evaluate(js, fed, rule="greenest")
    green = int(np.argmin(fed.power_busy / fed.speed))
    assert s.alloc[0, green] == js.tasks[0]


def test_batch_decodes_easy_and_greenest(default_fed):
    js = moga.load_default().jobset(n_jobs=60, federation=default_fed)
    rng = np.random.default_rng(0)
    orders = np.array([rng.permutation(60) for _ in range(4)])
    bls = rng.uniform(0, 1, (4, 60, 4)) * (rng.uniform(size=(4, 60, 4)) < 0.3)
    b = moga.evaluate_batch(js, default_fed, orders, bls, backfill="easy", rule="greenest")
    for p in range(4):
        s = moga.evaluate(js, default_fed, orders[p], bls[p], backfill="easy", rule="greenest")
        assert (b.makespan[p], b.energy[p]) == (s.makespan, s.energy)


def test_option_errors(default_fed):
    js = moga.load_default().jobset(n_jobs=5, federation=default_fed)
    with pytest.raises(ValueError, match="unknown backfilling 'conservative'"):
        moga.evaluate(js, default_fed, backfill="conservative")
    with pytest.raises(ValueError, match="unknown allocation rule 'cheapest'"):
        moga.evaluate(js, default_fed, rule="cheapest")


def _easy_equals_its_twin(js, fed, order, bl, rule, estimates="exact"):
    """EASY's schedule of ``(order, bl)`` equals the plain-Python twin's, start for start."""
    s = moga.evaluate(js, fed, order, bl, model="at_start", backfill="easy", rule=rule,
                      estimates=estimates)
    start, finish, alloc, reservation = naive_easy_federated(
        js.release, js.tasks, js.runtime, js.sigma, js.bw, fed.nodes, fed.speed, fed.power_busy,
        fed.link, order, bl, rule,
        **({"requested": js.requested} if estimates == "requested" else {}))
    np.testing.assert_allclose(s.start, start, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(s.finish, finish, rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(s.alloc, alloc)
    expected = np.array([np.nan if r is None else r for r in reservation])
    np.testing.assert_allclose(s.reservation, expected, rtol=1e-9, atol=1e-9)


# 9-11 clusters too: the backfill scan's first test reads a table of free nodes by
# cluster set up to TABLE_K (8) clusters and a bit mask beyond. Arrivals over time and
# long queues: a blocked head keeps its reservation over many events, and arrivals ahead
# of it in the order start or become the head.
@settings(max_examples=150)
@given(inst=st.one_of(instances(max_jobs=12),
                      instances(max_jobs=10, min_clusters=9, max_clusters=11, max_nodes=4),
                      instances(max_jobs=24, max_clusters=3, max_nodes=6, release=True)),
       rule=st.sampled_from(["fastest", "greenest", "consolidate"]))
def test_federated_easy_equals_its_plain_python_twin(inst, rule):
    js, fed, order, bl = inst
    _easy_equals_its_twin(js, fed, order, bl, rule)


@given(inst=st.one_of(instances(max_jobs=12, release=True), instances(max_jobs=12)),
       rule=st.sampled_from(["fastest", "greenest", "consolidate"]),
       seed=st.integers(0, 2**32 - 1))
def test_easy_planning_on_requested_times_equals_its_twin(inst, rule, seed):
    # Requested times of 1-4x the run time, some exact, some under it (a job that overruns
    # its request is planned to end now).
    js, fed, order, bl = inst
    rng = np.random.default_rng(seed)
    factor = np.where(rng.random(len(js)) < 0.3, 1.0, rng.uniform(0.5, 4.0, len(js)))
    js = dataclasses.replace(js, requested=js.runtime * factor)
    _easy_equals_its_twin(js, fed, order, bl, rule, estimates="requested")


def test_requested_times_change_easy_only_through_its_plan(default_fed):
    tr = moga.load_default()
    js = tr.jobset(n_jobs=300, federation=default_fed, batch=False)
    exact = moga.evaluate(js, default_fed, backfill="easy")
    same = moga.evaluate(dataclasses.replace(js, requested=js.runtime), default_fed,
                         backfill="easy", estimates="requested")
    np.testing.assert_array_equal(same.start, exact.start)  # estimates equal to run times
    planned = moga.evaluate(js, default_fed, backfill="easy", estimates="requested")
    assert not np.array_equal(planned.start, exact.start)  # the trace's requests differ
    fcfs = moga.evaluate(js, default_fed, estimates="requested")  # no reservation: unused
    np.testing.assert_array_equal(fcfs.start, moga.evaluate(js, default_fed).start)
    with pytest.raises(ValueError, match="estimates must be"):
        moga.evaluate(js, default_fed, backfill="easy", estimates="user")


def naive_start_order(start, order):
    """Jobs by start time, ties in the order of ``order`` (a plain sort of pairs)."""
    pos = {int(j): i for i, j in enumerate(order)}
    return sorted(range(len(start)), key=lambda j: (start[j], pos[j]))


@given(inst=instances(release=True), model=st.sampled_from(["fluid", "at_start"]),
       backfill=st.sampled_from(["none", "easy"]), seed=st.integers(0, 2**32 - 1))
def test_batch_start_orders_and_allocations_equal_each_schedules(inst, model, backfill, seed):
    js, fed, order, bl = inst
    rng = np.random.default_rng(seed)
    orders = np.array([order] + [rng.permutation(len(js)) for _ in range(3)])
    bls = np.array([bl] + [rng.random(bl.shape) ** 2 for _ in range(3)])
    from moga.model.schedule import evaluate_batch

    got = evaluate_batch(js, fed, orders, bls, model=model, backfill=backfill,
                         start_orders=True, allocations=True)
    for p in range(len(orders)):
        s = moga.evaluate(js, fed, orders[p], bls[p], model=model, backfill=backfill)
        assert got.start_orders[p].tolist() == naive_start_order(s.start, orders[p])
        assert got.makespan[p] == s.makespan
        np.testing.assert_array_equal(got.alloc[p], s.alloc)
    plain = evaluate_batch(js, fed, orders, bls, model=model)
    assert plain.start_orders is None and plain.alloc is None
    if backfill == "none":
        # In order, a job never starts before the one ahead of it: the order is its own.
        np.testing.assert_array_equal(got.start_orders, orders)


@given(counts=st.lists(st.integers(0, 3), min_size=1, max_size=70))
def test_cluster_mask_sets_one_bit_per_cluster_with_nodes(counts):
    a = np.array(counts, dtype=np.int64)
    # Beyond 62 clusters every bit is set: the backfill scan's filter then passes everyone.
    want = -1 if a.size > 62 else sum(1 << k for k, c in enumerate(counts) if c > 0)
    assert cluster_mask(a) == want


@given(data=st.data())
def test_room_left_is_the_most_room_any_allowed_allocation_leaves(data):
    """The backfill scan's bound equals the best room over all allocations it admits (a twin)."""
    import itertools

    K = data.draw(st.integers(1, 4))
    ints = st.lists(st.integers(0, 4), min_size=K, max_size=K)
    free, allow, free_s_less_hold, allow_h = (np.array(data.draw(ints), dtype=np.int64)
                                             for _ in range(4))
    cap = np.minimum(free, allow)
    n = data.draw(st.integers(1, max(1, int(cap.sum()))))
    slack_h = np.maximum(0, free_s_less_hold - allow_h)
    room0 = int(np.minimum(free_s_less_hold, allow_h).sum())
    best = None
    for x in itertools.product(*(range(c + 1) for c in cap)):
        if sum(x) == n:
            room = sum(min(a - xk, h) for a, xk, h in zip(free_s_less_hold, x, allow_h, strict=True))
            best = room if best is None else max(best, room)
    got = _room_left(n, free, allow, slack_h, room0)
    if best is None:  # n tasks do not fit: the bound need only not exceed room0
        assert got <= room0
    else:
        assert got == best


@given(free=st.lists(st.integers(0, 50), min_size=1, max_size=8))
def test_free_by_mask_sums_the_free_nodes_of_each_cluster_set(free):
    from decoders._federated_core import TABLE_K

    assert len(free) <= TABLE_K
    table = np.full(1 << len(free), -1, dtype=np.int64)
    free_by_mask(np.array(free, dtype=np.int64), table)
    want = [sum(f for k, f in enumerate(free) if m >> k & 1) for m in range(1 << len(free))]
    assert table.tolist() == want



@pytest.mark.parametrize("seed", range(150))
def test_easy_speed_tiers_equal_the_twin(seed):
    # Queues behind a wide head on clusters of speeds below and above 1, jobs without
    # communication (slower than their run time on a slow cluster) and spread jobs with it:
    # EASY's index keeps out the jobs that cannot end by the reservation at the speed of
    # the cluster where the greedy pick completes them (speed tiers, with the jobs'
    # computation times), and, with blacklists that leave the head slack, those wider
    # than the late width of their tier (the clusters the pick and its shifts may use).
    # The twin tests every queued job, so a skipped job that the exact test would start
    # shows as a different schedule.
    rng = np.random.default_rng(seed)
    K = int(rng.integers(2, 5))
    nodes = rng.integers(3, 12, K)
    J = int(rng.integers(30, 70))
    wide = rng.random(J) < 0.25
    tasks = np.where(wide, rng.integers(nodes.max(), nodes.sum() + 1, J),
                     rng.integers(1, nodes.max() + 3, J))
    runtime = rng.integers(1, 30, J).astype(float)
    release = np.where(rng.random(J) < 0.7, 0.0, rng.integers(0, 40, J).astype(float))
    bl = np.zeros((J, K))
    if seed % 2:
        bl = np.where(rng.random((J, K)) < 0.4, rng.choice([0.25, 0.5, 0.75, 1.0], (J, K)), 0.0)
    sigma = np.where((tasks > 1) & (rng.random(J) < 0.6), rng.uniform(0.0, 1.0, J), 0.0)
    bw = np.where(sigma > 0, rng.choice([5.0, 400.0]), 0.0)
    js = moga.JobSet.from_arrays(release, tasks, runtime, sigma=sigma, bw=bw)
    fed = moga.Federation(names=[f"c{k}" for k in range(K)], nodes=nodes,
                          speed=rng.choice([0.5, 0.8, 1.0, 1.3, 1.6], K),
                          power_busy=rng.choice([60.0, 110.0, 260.0], K),
                          power_idle=np.full(K, 10.0), link=np.full(K, 1000.0))
    order = rng.permutation(J)
    rule = ("fastest", "fastest", "greenest", "consolidate")[seed % 4]
    _easy_equals_its_twin(js, fed, order, bl, rule)


@pytest.mark.parametrize("seed", range(200))
def test_easy_late_refusals_on_the_first_cluster_equal_the_twin(seed):
    # Queues of narrow jobs behind wide ones on clusters of distinct speeds, with blacklists
    # that leave the head slack on some clusters and none on others: EASY's index skips the
    # jobs that cannot end by the reservation and that the pick would place alone on their
    # group's first cluster, where they take the head's room, and searches again when a
    # start takes nodes of that cluster (a skipped job may then spill to a cluster where
    # the head has slack). The twin tests every queued job, so a skipped job that the exact
    # test would start shows as a different schedule.
    rng = np.random.default_rng(seed)
    K = int(rng.integers(2, 5))
    nodes = rng.integers(3, 10, K)
    J = int(rng.integers(30, 70))
    wide = rng.random(J) < 0.3
    tasks = np.where(wide, rng.integers(nodes.max(), nodes.sum() + 1, J), rng.integers(1, 5, J))
    runtime = rng.integers(1, 30, J).astype(float)
    release = np.where(rng.random(J) < 0.7, 0.0, rng.integers(0, 40, J).astype(float))
    bl = np.where(rng.random((J, K)) < 0.4, rng.choice([0.25, 0.5, 0.75, 1.0], (J, K)), 0.0)
    # Some instances with communication (a job spread over clusters may shift tasks).
    sigma = np.zeros(J)
    if seed % 4 == 3:
        sigma = np.where((tasks > 1) & (rng.random(J) < 0.3), rng.uniform(0.0, 1.0, J), 0.0)
    bw = np.where(sigma > 0, 5.0, 0.0)
    js = moga.JobSet.from_arrays(release, tasks, runtime, sigma=sigma, bw=bw)
    fed = moga.Federation(names=[f"c{k}" for k in range(K)], nodes=nodes,
                          speed=rng.choice([0.8, 1.0, 1.3, 1.6], K),
                          power_busy=rng.choice([60.0, 110.0, 260.0], K),
                          power_idle=np.full(K, 10.0), link=np.full(K, 1000.0))
    order = rng.permutation(J)
    rule = "greenest" if seed % 5 == 4 else "fastest"
    _easy_equals_its_twin(js, fed, order, bl, rule)
