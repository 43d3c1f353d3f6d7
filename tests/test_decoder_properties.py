"""Properties every decoded schedule must have (docs/design.md §5)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import instances
from hypothesis import given
from hypothesis import strategies as st
from naive import naive_decode

import moga

MODELS = st.sampled_from(["fluid", "at_start"])


def _busy_per_cluster(s, t):
    """Tasks running in each cluster at instant ``t`` (a job occupies [start, finish))."""
    running = (s.start <= t) & (t < s.finish)
    return s.alloc[running].sum(axis=0)


@given(inst=instances(), model=MODELS)
def test_no_cluster_over_capacity(inst, model):
    js, fed, order, bl = inst
    s = moga.evaluate(js, fed, order, bl, model=model)
    for t in np.unique(s.start):
        assert np.all(_busy_per_cluster(s, t) <= fed.nodes)
    s.node_assignment()  # raises when some cluster would be over capacity


@given(inst=instances(), model=MODELS)
def test_start_after_release_and_in_order(inst, model):
    js, fed, order, bl = inst
    s = moga.evaluate(js, fed, order, bl, model=model)
    assert np.all(s.start >= js.release)
    assert np.all(np.diff(s.start[order]) >= 0)
    assert np.all(s.finish > s.start)
    assert np.all(s.alloc.sum(axis=1) == js.tasks)
    assert np.all(s.alloc >= 0)


@given(inst=instances(), model=MODELS)
def test_objectives_match_their_definitions(inst, model):
    js, fed, order, bl = inst
    s = moga.evaluate(js, fed, order, bl, model=model)
    M = s.finish.max() - js.release.min()
    assert s.makespan == pytest.approx(M, rel=1e-12)
    assert s.flowtime == pytest.approx(np.sum(s.finish - js.release), rel=1e-12)
    # Energy node by node: C_n * CT_n + I_n * (M - CT_n), CT_n from concrete node assignments.
    nodes = s.node_assignment()
    energy = 0.0
    for k in range(fed.n_clusters):
        busy = np.zeros(fed.nodes[k])
        for j in range(len(js)):
            busy[nodes[j][k]] += s.finish[j] - s.start[j]
        assert np.all(busy <= M * (1 + 1e-12))
        energy += np.sum(fed.power_busy[k] * busy + fed.power_idle[k] * (M - busy))
    assert s.energy == pytest.approx(energy, rel=1e-9)


@given(inst=instances(), model=MODELS)
def test_single_cluster_job_duration(inst, model):
    js, fed, order, bl = inst
    s = moga.evaluate(js, fed, order, bl, model=model)
    for j in np.flatnonzero((s.alloc > 0).sum(axis=1) == 1):
        k = int(np.flatnonzero(s.alloc[j])[0])
        expected = js.runtime[j] * ((1 - js.sigma[j]) / fed.speed[k] + js.sigma[j])
        assert s.finish[j] - s.start[j] == pytest.approx(expected, rel=1e-8)


@given(inst=instances(sigma_zero=True), model=MODELS)
def test_single_cluster_job_lasts_runtime_over_speed_without_communication(inst, model):
    js, fed, order, bl = inst
    s = moga.evaluate(js, fed, order, bl, model=model)
    for j in np.flatnonzero((s.alloc > 0).sum(axis=1) == 1):
        k = int(np.flatnonzero(s.alloc[j])[0])
        assert s.finish[j] - s.start[j] == pytest.approx(js.runtime[j] / fed.speed[k], rel=1e-8)


@given(inst=instances(sigma_zero=True), model=MODELS)
def test_without_communication_slowest_node_rules(inst, model):
    js, fed, order, bl = inst
    s = moga.evaluate(js, fed, order, bl, model=model)
    for j in range(len(js)):
        slowest = fed.speed[s.alloc[j] > 0].min()
        assert s.finish[j] - s.start[j] == pytest.approx(js.runtime[j] / slowest, rel=1e-8)


@given(inst=instances(single_cluster=True))
def test_at_start_equals_fluid_on_one_cluster(inst):
    js, fed, order, bl = inst
    a = moga.evaluate(js, fed, order, bl, model="at_start")
    f = moga.evaluate(js, fed, order, bl, model="fluid")
    assert a.n_coalloc == f.n_coalloc == 0
    np.testing.assert_array_equal(a.start, f.start)
    np.testing.assert_array_equal(a.finish, f.finish)
    assert (a.makespan, a.energy) == (f.makespan, f.energy)


@given(inst=instances())
def test_at_start_equals_fluid_when_nothing_coallocated(inst):
    js, fed, order, bl = inst
    f = moga.evaluate(js, fed, order, bl, model="fluid")
    a = moga.evaluate(js, fed, order, bl, model="at_start")
    if f.n_coalloc == 0 or a.n_coalloc == 0:
        np.testing.assert_array_equal(a.alloc, f.alloc)
        np.testing.assert_array_equal(a.finish, f.finish)
        assert (a.makespan, a.energy) == (f.makespan, f.energy)


@given(inst=instances(), model=MODELS)
def test_blacklist_allowance_respected_unless_relaxed(inst, model):
    js, fed, order, bl = inst
    s = moga.evaluate(js, fed, order, bl, model=model)
    allow = fed.nodes - np.floor(bl * fed.nodes).astype(int)
    relaxed = allow.sum(axis=1) < js.tasks
    assert s.n_relaxed == int(relaxed.sum())
    assert np.all(s.alloc[~relaxed] <= allow[~relaxed])
    assert s.n_coalloc == int(((s.alloc > 0).sum(axis=1) >= 2).sum())


@given(inst=instances(), model=MODELS)
def test_full_blacklist_on_all_but_one_cluster(inst, model):
    js, fed, order, _ = inst
    K = fed.n_clusters
    bl = np.ones((len(js), K))
    bl[:, 0] = 0.0
    s = moga.evaluate(js, fed, order, bl, model=model)
    fits = js.tasks <= fed.nodes[0]
    assert np.all(s.alloc[fits, 1:] == 0)
    assert s.n_relaxed == int((~fits).sum())


def test_near_equal_finishes_are_released_together():
    fed = moga.Federation(names=["a"], nodes=[2], speed=[1.0], power_busy=[2.0],
                          power_idle=[1.0], link=[100.0])
    js = moga.JobSet.from_arrays(np.zeros(3), [1, 1, 2], [100.0, 100.0 * (1 + 1e-12), 5.0])
    s = moga.evaluate(js, fed)
    assert s.finish[0] == s.finish[1] == 100.0
    assert s.start[2] == 100.0


def test_shift_moves_tasks_to_slower_clusters():
    # 6 tasks, no communication: greedy takes 4 fast + 2 slow (SP set by the slow cluster),
    # then every fast task moves to the slow cluster, since SD does not change.
    fed = moga.Federation(names=["fast", "slow"], nodes=[4, 8], speed=[2.0, 1.0],
                          power_busy=[100.0, 30.0], power_idle=[5.0, 5.0], link=[100.0, 100.0])
    js = moga.JobSet.from_arrays([0.0], [6], [10.0], sigma=[0.0], bw=[0.0])
    s = moga.evaluate(js, fed)
    assert s.alloc.tolist() == [[0, 6]]
    assert s.n_coalloc == 0
    assert s.finish[0] == pytest.approx(10.0)


def test_saturated_links_slow_coallocated_jobs():
    # 4 tasks over two 2-node clusters: each link carries bw*2*2/3 = 40 Mbit/s on a 10 Mbit/s link.
    fed = moga.Federation(names=["a", "b"], nodes=[2, 2], speed=[1.0, 1.0],
                          power_busy=[2.0, 2.0], power_idle=[1.0, 1.0], link=[10.0, 10.0])
    js = moga.JobSet.from_arrays([0.0], [4], [100.0], sigma=[0.5], bw=[30.0])
    for model in ("fluid", "at_start"):
        s = moga.evaluate(js, fed, model=model)
        assert s.n_coalloc == 1
        assert s.finish[0] == pytest.approx(100.0 * (0.5 + 0.5 * 4.0))


def test_fluid_job_speeds_up_when_link_frees():
    # Two co-allocated jobs share saturated links; when the short one ends, the long one
    # speeds up under the fluid model but keeps its start-time rate under at_start.
    fed = moga.Federation(names=["a", "b"], nodes=[2, 2], speed=[1.0, 1.0],
                          power_busy=[2.0, 2.0], power_idle=[1.0, 1.0], link=[10.0, 10.0])
    js = moga.JobSet.from_arrays([0.0, 0.0], [2, 2], [10.0, 100.0], sigma=[1.0, 1.0],
                                 bw=[30.0, 30.0])
    bl = np.array([[0.5, 0.5], [0.5, 0.5]])  # one node per cluster each: both co-allocated
    f = moga.evaluate(js, fed, [0, 1], bl, model="fluid")
    a = moga.evaluate(js, fed, [0, 1], bl, model="at_start")
    # Each job puts 30 Mbit/s on each link. Alone: U = 3; together: U = 6.
    assert a.finish[0] == pytest.approx(30.0)      # job 0 started alone, SD 3
    assert a.finish[1] == pytest.approx(600.0)     # job 1 started with both, SD 6
    assert f.finish[0] == pytest.approx(60.0)      # SD 6 while both run
    # job 1: 60 s at SD 6 does 10 units; 90 units left at SD 3 take 270 s.
    assert f.finish[1] == pytest.approx(330.0)


def test_link_traffic_is_symmetric_in_the_split():
    from decoders._kernels import link_traffic

    rng = np.random.default_rng(0)
    for _ in range(2000):
        n = int(rng.integers(2, 10**6))
        x = int(rng.integers(0, n + 1))
        bw = float(rng.uniform(0, 1000))
        assert link_traffic(bw, n, x) == link_traffic(bw, n, n - x)


def test_an_exactly_equal_shift_is_taken():
    # Two clusters of equal speed: moving tasks between them leaves SP alone, and with a
    # symmetric split the slowdown is mathematically unchanged; the move must not depend on
    # rounding. sigma > 0 and saturated links make SC matter.
    fed = moga.Federation(names=["a", "b", "c"], nodes=[3, 3, 3], speed=[2.0, 1.0, 1.0],
                          power_busy=[100.0, 50.0, 40.0], power_idle=[10.0, 10.0, 10.0],
                          link=[1.0, 1.0, 1.0])
    js = moga.JobSet.from_arrays([0.0], [6], [10.0], sigma=[0.3], bw=[7.77])
    s = moga.evaluate(js, fed)
    ref = naive_decode(js.release, js.tasks, js.runtime, js.sigma, js.bw, fed.nodes, fed.speed,
                       fed.power_busy, fed.power_idle, fed.link, [0], np.zeros((1, 3)))
    assert s.alloc.tolist() == [ref["alloc"][0]]


def test_shift_runs_that_saturate_part_way_match_the_twin():
    # Greedy puts 24 of 30 tasks on "fast" and 6 on "slow"; the shifts then move tasks from
    # "fast" to "slow", and both links' traffic grows until "slow" holds half of them.
    # Swept over bandwidths, the run of moves stays unsaturated throughout (taken whole),
    # saturates part way (each further move priced) or is refused at once; an earlier
    # co-allocated job loads the links first. The narrow link is the destination's, then
    # the source's, so that each end's check is the one that decides.
    bl = np.zeros((2, 3))
    bl[0] = [1.0, 0.75, 39 / 40]  # job 0: one node on "mid", one on "slow"
    for link in ([100.0, 10.0, 10.0], [10.0, 10.0, 100.0]):
        fed = moga.Federation(names=["fast", "mid", "slow"], nodes=[24, 4, 40],
                              speed=[2.0, 1.0, 1.0], power_busy=[100.0, 50.0, 40.0],
                              power_idle=[10.0, 10.0, 10.0], link=link)
        seen = set()
        for bw in np.linspace(0.0, 2.0, 101):
            js = moga.JobSet.from_arrays([0.0, 0.0], [2, 30], [50.0, 10.0], sigma=[0.4, 0.5],
                                         bw=[5.0, bw])
            s = moga.evaluate(js, fed, [0, 1], bl)
            ref = naive_decode(js.release, js.tasks, js.runtime, js.sigma, js.bw, fed.nodes,
                               fed.speed, fed.power_busy, fed.power_idle, fed.link, [0, 1], bl)
            assert s.alloc.tolist() == ref["alloc"], (link, bw)
            assert s.finish.tolist() == pytest.approx(ref["finish"], rel=1e-12), (link, bw)
            seen.add(tuple(s.alloc[1]))
        assert len(seen) >= 6, link  # whole runs, runs cut at several places, no move
