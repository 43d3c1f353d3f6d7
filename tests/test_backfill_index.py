"""EASY's candidate index (decoders._backfill_index) against a scan of the queue."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from decoders import _backfill_index as bi
from decoders._backfill_index import EMPTY
from decoders._federated_core import new_state
from decoders._kernels import entry

# The index's helpers have no Python entry point of their own (decoders._kernels.helper).
build_index, fallback_cost, fallback_tiers, first_after, first_candidate = map(entry, (
    bi.build_index, bi.fallback_cost, bi.fallback_tiers, bi.first_after, bi.first_candidate))
first_candidate_behind, least_cost, power_floors, set_leaf = map(entry, (
    bi.first_candidate_behind, bi.least_cost, bi.power_floors, bi.set_leaf))
single_width, tree_time, add_jobs, _bucket, leaf_after = map(entry, (
    bi.single_width, bi.tree_time, bi.add_jobs, bi._bucket, bi.leaf_after))


def naive_first(order, queued, mask, tasks, runtime, m, after, x, y, t, sd_min, shadow):
    """The first queued job of cluster set ``m`` behind position ``after`` that the cheap
    tests of the backfill scan keep, by a scan of the queue in order (None when none)."""
    for p in range(after + 1, order.size):
        j = order[p]
        if not queued[j] or mask[j] != m:
            continue
        if tasks[j] <= x and (tasks[j] <= y or t + runtime[j] * sd_min <= shadow):
            return j
    return None


def _wide(rng, n):
    """``n`` widths at and beside the powers of two up to ``2**16``: the edges of the index's
    width buckets and past the last one (``R_BUCKETS``)."""
    return np.maximum(1, (1 << rng.integers(0, 17, n)) + rng.integers(-1, 2, n))


def _random_queue(seed, wide=False):
    """A random queue for the index tests: ``(rng, J, K, state, order, cluster-set mask,
    tasks, run times)``, the masks already in the state; ``wide``: widths of :func:`_wide`."""
    rng = np.random.default_rng(seed)
    J = int(rng.integers(1, 90))
    K = int(rng.integers(1, 4))
    st = new_state(J, K)
    order = rng.permutation(J).astype(np.int64)
    mask = rng.integers(0, 1 << K, J)
    st.scan.mask_j[:] = mask
    tasks = _wide(rng, J) if wide else rng.integers(1, 12, J)
    runtime = rng.choice([1.0, 5.0, 10.0, 60.0], J) * rng.integers(1, 4, J)
    return rng, J, K, st, order, mask, tasks, runtime


def _queries(rng, K, mask, queued, tasks, runtime, st, comp=None, every=False):
    """Six times some jobs join and leave the index (:func:`_join_and_leave`), then twenty
    cluster sets to query are drawn: yielded when some job has that set (or ``every``)."""
    for _ in range(6):
        _join_and_leave(rng, queued, tasks, runtime, st, comp)
        for _ in range(20):
            m = int(rng.integers(0, 1 << K))
            if every or np.any(mask == m):
                yield m


def _join_and_leave(rng, queued, tasks, runtime, st, comp=None):
    """Some jobs join the index's queue (with computation times ``comp``, if given), some
    leave it; ``queued`` follows."""
    J = len(queued)
    for j in rng.choice(J, size=int(rng.integers(0, J + 1)), replace=False):
        if queued[j] and rng.random() < 0.3:
            queued[j] = False
            set_leaf(j, EMPTY, np.inf, st, True)
        elif not queued[j]:
            queued[j] = True
            if comp is None:
                set_leaf(j, tasks[j], runtime[j], st, True)
            else:
                set_leaf(j, tasks[j], runtime[j], st, True, comp[j])


#: Seeds of each random twin check that the quick pass (``-m "not slow"``) runs; the full
#: suite runs every seed. The checks are many cheap queries each, and the quick pass is for
#: an edit-and-test loop.
QUICK_SEEDS = 5


def _quick_few(values, quick=QUICK_SEEDS):
    """``values`` as parameters, all but the first ``quick`` marked slow."""
    return [v if i < quick else pytest.param(*(v if isinstance(v, tuple) else (v,)),
                                             marks=pytest.mark.slow)
            for i, v in enumerate(values)]


@pytest.mark.parametrize("seed, wide", _quick_few([(s, False) for s in range(40)])
                         + _quick_few([(s, True) for s in range(40, 60)]))
def test_first_candidate_matches_a_scan_of_the_queue(seed, wide):
    # ``wide``: widths and free-node bounds at the width buckets' edges and past the last.
    rng, J, K, st, order, mask, tasks, runtime = _random_queue(seed, wide)
    # The federation's nodes bound every x; the trees keep the buckets these may read.
    nodes = int(_wide(rng, 1)[0]) if wide else EMPTY
    n_act = build_index(order, st, True, nodes)
    assert sorted(st.index.g_act[:n_act]) == sorted(set(mask.tolist()))
    queued = np.zeros(J, dtype=bool)
    for m in _queries(rng, K, mask, queued, tasks, runtime, st, every=True):
        after = int(rng.integers(-1, J))
        x, y = int(rng.integers(0, 14)), int(rng.integers(-1, 14))
        if wide:
            x = min(int(_wide(rng, 1)[0]), nodes) if rng.random() < 0.9 else 0
            y = int(rng.integers(-1, x + 2))
        t, sd, shadow = float(rng.integers(0, 50)), float(rng.choice([0.5, 1.0])), 60.0
        want = naive_first(order, queued, mask, tasks, runtime, m, after, x, y, t, sd, shadow)
        n_m = int(np.count_nonzero(mask == m))
        if n_m == 0:
            assert want is None
            continue
        leaf = first_after(m, after, st)
        got = first_candidate(m, leaf, st, x, y, t, sd, shadow)
        assert first_candidate_behind(m, after, st, x, y, t, sd, shadow) == got
        if want is None:
            assert got == -1
        else:
            assert got >= 0
            assert order[st.index.g_pos[st.index.g_off[m] + got]] == want


@pytest.mark.parametrize("seed", range(6))
def test_leaf_after_the_job_at_a_position_is_first_after(seed):
    # The backfill loop's look-up behind the head or a started job (leaf_after) against the
    # binary search over the group's queue positions, for every group and position.
    rng, J, K, st, order, mask, tasks, runtime = _random_queue(seed)
    n_act = build_index(order, st, True, EMPTY)
    for m in st.index.g_act[:n_act]:
        for p in range(J):
            assert leaf_after(m, p, order[p], st, True) == first_after(m, p, st)
    build_index(order, st, False, EMPTY)  # one group (0) beyond TABLE_K clusters
    for p in range(J):
        assert leaf_after(0, p, order[p], st, False) == first_after(0, p, st)


def test_one_group_beyond_the_table():
    """Beyond TABLE_K clusters every job is in group 0."""
    J = 5
    st = new_state(J, 9)
    order = np.arange(J, dtype=np.int64)
    st.scan.mask_j[:] = [1, 2, 4, 8, 16]
    assert build_index(order, st, False) == 1
    for j in range(J):
        set_leaf(j, j + 1, 10.0, st, False)
    assert first_candidate(0, 0, st, 3, 10, 0.0, 1.0, 5.0) == 0
    assert first_candidate(0, 1, st, 3, -1, 0.0, 1.0, 5.0) == -1
    assert first_candidate(0, 1, st, 3, -1, 0.0, 1.0, 10.0) == 1


def best_room(n, free, allow, a, h):
    """The most room any allocation of ``n`` tasks within ``min(free, allow)`` leaves a head
    allowed ``h`` nodes of the ``a`` free at its reservation, by enumerating allocations
    (None when none holds the job)."""
    import itertools

    caps = np.minimum(free, allow)
    best = None
    for x in itertools.product(*(range(c + 1) for c in caps)):
        if sum(x) == n:
            room = sum(min(a[k] - x[k], h[k]) for k in range(len(x)))
            best = room if best is None else max(best, room)
    return best


@pytest.mark.parametrize("seed", _quick_few(range(60)))
def test_the_late_width_bound_keeps_every_job_that_could_leave_the_head_room(seed):
    # The candidate index skips a job that cannot end by the reservation when it is wider
    # than _late_width of its cluster set; no allocation of such a job may leave the head
    # its nodes, or the index would change schedules.
    from decoders import easy

    # The kernels' own code run as Python (the helpers have no Python entry point).
    _late_width = easy._late_width.py_func
    _room_bounds = easy._room_bounds.py_func
    _room_left = easy._room_left.py_func
    rng = np.random.default_rng(seed)
    K = int(rng.integers(1, 4))
    st = new_state(4, K)
    st.run.free[:] = rng.integers(0, 5, K)
    st.resv.free_s[:] = st.run.free + rng.integers(0, 4, K)  # nodes free at the reservation
    st.resv.hold[:] = [rng.integers(0, s + 1) for s in st.resv.free_s]
    st.resv.allow_h[:] = rng.integers(0, 6, K) * (rng.random(K) < 0.7)
    room0 = _room_bounds(st)
    a = st.resv.free_s - st.resv.hold
    need = int(rng.integers(1, max(2, room0 + 2)))
    kept = 0
    for _ in range(40):
        allow = rng.integers(0, 6, K) * (rng.random(K) < 0.6)
        mask = int(sum(1 << k for k in range(K) if allow[k] > 0))
        n = int(rng.integers(1, 9))
        room = best_room(n, st.run.free, allow, a, st.resv.allow_h)
        if room is None:
            continue
        bound = _room_left(n, st.run.free, allow, st.resv.slack_h, room0)
        assert bound >= room
        if room >= need:
            kept += 1
            assert n <= _late_width(mask, True, st.run.free, st.resv.slack_h, room0, need)
            assert n <= _late_width(0, False, st.run.free, st.resv.slack_h, room0, need)
    if room0 < need:
        assert kept == 0 and _late_width(0, False, st.run.free, st.resv.slack_h, room0, need) == -1


def naive_first_capped(order, queued, mask, tasks, runtime, floors, m, after, x, y, t, sd_min,
                       shadow, pk, cap, fm, lpk, hf, tops=None, k1=-1, fk1=0, pk1=0.0, b1=np.inf):
    """:func:`naive_first` with the power tests: the job's least floor over the clusters of
    ``fm`` must fit ``cap`` over ``pk`` now, and, if it may not end by the reservation, over
    ``lpk`` with the head's floor ``hf``; such a job that fits wholly on cluster ``k1``
    (``tasks <= fk1``, a finite top there) with its top fitting now (over ``pk`` and over
    ``pk1`` within ``b1``) must fit it with its floor on ``k1`` instead."""
    for p in range(after + 1, order.size):
        j = order[p]
        if not queued[j] or mask[j] != m:
            continue
        f = min([floors[j, k] for k in range(floors.shape[1]) if (fm >> k) & 1], default=np.inf)
        if tasks[j] > x or pk + f > cap:
            continue
        if t + runtime[j] * sd_min <= shadow:
            return j
        if tasks[j] > y or lpk + f + hf > cap:
            continue
        if k1 >= 0 and tasks[j] <= fk1:
            q = tops[j, k1]
            if pk + q <= cap and pk1 + q <= b1 and lpk + floors[j, k1] + hf > cap:
                continue
        return j
    return None


@pytest.mark.parametrize("seed", _quick_few(range(40)))
def test_first_candidate_under_a_cap_matches_a_scan_of_the_queue(seed):
    rng, J, K, st, order, mask, tasks, runtime = _random_queue(seed)
    power = rng.uniform(0.5, 1.5, J)
    pbusy, pidle = rng.choice([20.0, 50.0, 90.0], K), np.full(K, 10.0)
    allow = rng.integers(0, 14, (J, K))
    power_floors(tasks, power, pbusy, pidle, allow, st.index)
    floors, tops = np.array(st.index.p_floor), np.array(st.index.p_top)
    exact = tasks[:, None] * np.maximum(power[:, None] * pbusy - pidle, 0)
    assert np.all(floors <= exact) and np.allclose(floors, exact, rtol=1e-8)
    held = allow >= tasks[:, None]
    assert np.all(tops[held] >= exact[held]) and np.allclose(tops[held], exact[held], rtol=1e-8)
    assert np.all(np.isinf(tops[~held]))
    build_index(order, st, True)
    queued = np.zeros(J, dtype=bool)
    for m in _queries(rng, K, mask, queued, tasks, runtime, st):
        after = int(rng.integers(-1, J))
        x, y = int(rng.integers(0, 14)), int(rng.integers(-1, 14))
        t, sd, shadow = float(rng.integers(0, 50)), float(rng.choice([0.5, 1.0])), 60.0
        pk, lpk, hf = (float(v) for v in rng.uniform(0, 600, 3))
        cap, fm = float(rng.choice([700.0, 1200.0, np.inf])), int(rng.integers(0, 1 << K))
        k1, fk1, pk1, b1 = -1, 0, 0.0, np.inf
        if rng.random() < 0.7:
            k1, fk1 = int(rng.integers(0, K)), int(rng.integers(0, 14))
            pk1, b1 = float(rng.uniform(0, 300)), float(rng.choice([400.0, 900.0, np.inf]))
        want = naive_first_capped(order, queued, mask, tasks, runtime, floors, m, after, x,
                                  y, t, sd, shadow, pk, cap, fm, lpk, hf, tops, k1, fk1, pk1,
                                  b1)
        got = first_candidate(m, first_after(m, after, st), st, x, y, t, sd, shadow, pk,
                              cap, fm, lpk, hf, k1, fk1, pk1, b1)
        assert first_candidate_behind(m, after, st, x, y, t, sd, shadow, pk, cap, fm, lpk,
                                      hf, k1, fk1, pk1, b1) == got
        if want is None:
            assert got == -1
        else:
            assert got >= 0 and order[st.index.g_pos[st.index.g_off[m] + got]] == want


def test_the_first_cluster_late_power_test_matches_a_scan_of_the_queue():
    # Late jobs (a reservation at 1 s) with room for their width, so that the test on the
    # allocation rule's first cluster decides: each query against the scan, and some
    # queries where the test keeps a job out that the least floor lets in.
    decided = 0
    for seed in range(30):
        decided += _first_cluster_queries(seed)
    assert decided > 0


def _first_cluster_queries(seed):
    """Random queries of one random queue against the scan; returns how many the test on
    the first cluster decided."""
    rng, J, K, st, order, mask, tasks, runtime = _random_queue(seed)
    power = rng.uniform(0.5, 1.5, J)
    pbusy, pidle = rng.choice([20.0, 50.0, 90.0], K), np.full(K, 10.0)
    allow = np.where(rng.random((J, K)) < 0.8, 14, rng.integers(0, 14, (J, K)))
    power_floors(tasks, power, pbusy, pidle, allow, st.index)
    floors, tops = np.array(st.index.p_floor), np.array(st.index.p_top)
    build_index(order, st, True)
    queued = rng.random(J) < 0.7
    for j in np.flatnonzero(queued):
        set_leaf(j, tasks[j], runtime[j], st, True)
    decided = 0
    for _ in range(60):
        m = int(rng.integers(1, 1 << K))
        if not np.any(mask[queued] == m):
            continue
        k1 = int(rng.choice(np.flatnonzero([(m >> k) & 1 for k in range(K)])))
        fk1, pk1, b1 = int(rng.integers(4, 14)), float(rng.uniform(0, 300)), np.inf
        pk, cap = float(rng.uniform(0, 400)), 1200.0
        lpk, hf = float(rng.uniform(0, 700)), float(rng.uniform(0, 400))
        args = (order, queued, mask, tasks, runtime, floors, m, -1, 13, 13, 0.0, 1.0, 1.0, pk,
                cap, m, lpk, hf)
        want = naive_first_capped(*args, tops, k1, fk1, pk1, b1)
        decided += want != naive_first_capped(*args)
        got = first_candidate(m, 0, st, 13, 13, 0.0, 1.0, 1.0, pk, cap, m, lpk, hf, k1, fk1,
                              pk1, b1)
        if want is None:
            assert got == -1
        else:
            assert got >= 0 and order[st.index.g_pos[st.index.g_off[m] + got]] == want
    return decided


def _splits(n, caps):
    """Every way of putting ``n`` tasks on clusters holding at most ``caps[k]`` each."""
    for x in itertools.product(*(range(min(c, n) + 1) for c in caps)):
        if sum(x) == n:
            yield np.array(x)


def _priced_index(pbusy, pidle):
    """A fresh index (4 jobs) over clusters of these busy and idle powers."""
    ix = new_state(4, len(pbusy)).index
    ix.pb[:], ix.pi[:] = pbusy, pidle
    return ix


@pytest.mark.parametrize("seed", _quick_few(range(60)))
def test_least_cost_is_below_every_allocation_of_a_job_and_the_head(seed):
    # The index's least-cost bounds skip a job only when every allocation of it (now,
    # and with the head's beside it at the reservation) overflows the budget, so they
    # must never exceed the cheapest such allocation, found here by enumeration, for
    # any job at least as wide and at least as power-hungry as the subtree's least.
    rng = np.random.default_rng(seed)
    K = int(rng.integers(1, 4))
    pbusy = rng.choice([20.0, 38.8, 70.0, 152.4, 292.2], K)
    pidle = rng.choice([10.0, 30.0], K)
    ix = _priced_index(pbusy, pidle)
    for _ in range(40):
        n, hn = int(rng.integers(1, 5)), int(rng.integers(1, 5))
        pf = float(rng.choice([0.1, 0.3, 0.5, 1.0, 1.5]))
        n_j, p_j = n + int(rng.integers(0, 2)), pf * float(rng.choice([1.0, 1.0, 1.3]))
        p_h = float(rng.uniform(0.1, 2.0))
        inc_j = np.maximum(p_j * pbusy - pidle, 0.0)
        ix.h_inc[:] = np.maximum(p_h * pbusy - pidle, 0.0)
        free = rng.integers(0, 5, K)
        fm = int(rng.integers(0, 1 << K))
        allow = rng.integers(0, 6, K) * np.array([(fm >> k) & 1 for k in range(K)])
        # Now: the job alone on its allowed free nodes.
        ix.c_free[:] = free
        now = [x @ inc_j for x in _splits(n_j, np.minimum(free, allow))]
        got = least_cost(ix, n, pf, fm, ix.c_free, 0)
        assert got <= min(now, default=np.inf)
        # At the reservation: the head on what the job leaves of ``free_s - hold``.
        a = rng.integers(-1, 7, K)
        ix.c_resv[:] = np.maximum(np.maximum(a, free), 0)
        both = [x @ inc_j + y @ ix.h_inc
                for x in _splits(n_j, np.minimum(free, allow))
                for y in _splits(hn, np.maximum(a - x, 0))]
        got = least_cost(ix, n, pf, -1, ix.c_resv, hn)
        assert got <= min(both, default=np.inf)


def _greedy(n, order, nodes):
    """``n`` tasks on ``nodes`` filled in the cluster order ``order`` (None: they do not fit)."""
    x = np.zeros(len(nodes), dtype=np.int64)
    for k in order:
        x[k] = min(n - x.sum(), nodes[k])
    return x if x.sum() == n else None


@pytest.mark.parametrize("seed", _quick_few(range(60)))
def test_fallback_cost_is_below_the_least_power_allocations_of_a_job_and_the_head(seed):
    # The index's fall-back bound skips a late job whose pick does not fit the power now
    # only when its least-power allocation and the head's beside it overflow the budget:
    # it must not exceed that sum for any job at least as wide and as power-hungry as
    # the subtree's least (equal idle powers, busy powers apart, no per-cluster budget,
    # allowances that hold the job), and equal it for the least job itself. With k1, the
    # head's least power beside a job whose tasks all lie on k1.
    rng = np.random.default_rng(seed)
    K = int(rng.integers(1, 5))
    pbusy = rng.choice([20.0, 38.8, 70.0, 152.4, 292.2], K, replace=False)
    pidle = np.full(K, float(rng.choice([0.0, 10.0, 30.0])))
    ix = _priced_index(pbusy, pidle)
    ix.p_ord[0] = np.argsort(pbusy, kind="stable")
    ix.p_ord[1, ix.p_ord[0]] = np.arange(K)
    for _ in range(40):
        n, hn = int(rng.integers(1, 6)), int(rng.integers(1, 6))
        pf = float(rng.choice([0.1, 0.3, 0.5, 1.0, 1.5]))
        n_j, p_j = n + int(rng.integers(0, 3)), pf * float(rng.choice([1.0, 1.0, 1.3, 2.0]))
        p_h = float(rng.uniform(0.1, 2.0))
        ix.h_inc[:] = np.maximum(p_h * pbusy - pidle, 0.0)
        ix.c_free[:] = rng.integers(0, 5, K)
        ix.c_head[:] = rng.integers(-1, 8, K)
        ix.h_allow[:] = rng.integers(0, 8, K)
        fm = int(rng.integers(0, 1 << K))
        # A job whose pick puts its tasks on one cluster k1: the head's least power beside.
        k1 = int(rng.integers(0, K))
        x = np.zeros(K, dtype=np.int64)
        x[k1] = n_j
        y = _greedy(hn, np.lexsort((np.arange(K), ix.h_inc)),
                    np.minimum(np.maximum(ix.c_head - x, 0), ix.h_allow))
        want = np.inf if y is None else y @ ix.h_inc
        got = fallback_cost(ix, n, pf, fm, hn, k1)
        assert got <= want
        if n_j == n:
            assert got == pytest.approx(want * (1.0 - 1e-9), rel=1e-12)
        got = fallback_cost(ix, n, pf, fm, hn)
        if np.any(pf * pbusy - pidle <= 0.0):
            assert got == 0.0
            continue
        # The slow twin: the job's least-power allocation (clusters by its increment,
        # ties by index, on its group's free nodes), then the head's on what is left.
        inc_j = np.maximum(p_j * pbusy - pidle, 0.0)
        in_fm = np.array([(fm >> k) & 1 for k in range(K)])
        x = _greedy(n_j, np.lexsort((np.arange(K), inc_j)), ix.c_free * in_fm)
        if x is None:
            want = np.inf
        else:
            left = np.minimum(np.maximum(ix.c_head - x, 0), ix.h_allow)
            y = _greedy(hn, np.lexsort((np.arange(K), ix.h_inc)), left)
            want = np.inf if y is None else x @ inc_j + y @ ix.h_inc
        assert got <= want
        if (n_j, p_j) == (n, pf):
            assert got == pytest.approx(want * (1.0 - 1e-9), rel=1e-12)


def test_least_cost_takes_the_cheapest_nodes_first():
    st = new_state(2, 3)
    ix = st.index
    ix.pb[:], ix.pi[:] = [100.0, 20.0, 50.0], 10.0
    ix.h_inc[:] = [5.0, 40.0, 40.0]
    nodes = np.array([4, 2, 9])
    # 5 tasks of factor 1 on clusters 1 (2 x 10 W) and 2 (3 x 40 W).
    assert least_cost(ix, 5, 1.0, -1, nodes, 0) == pytest.approx(140.0)
    assert least_cost(ix, 5, 1.0, 0b011, nodes, 0) == pytest.approx(290.0)  # 3 at 90 W
    assert least_cost(ix, 5, 1.0, 0b010, nodes, 0) == np.inf  # 2 nodes for 5 tasks
    # With 3 head tasks: cluster 0 at the head's 5 W, then cluster 1 at 10 W.
    assert least_cost(ix, 5, 1.0, -1, nodes, 3) == pytest.approx(4 * 5.0 + 2 * 10.0 + 2 * 40.0)


@pytest.mark.parametrize("seed", _quick_few(range(40)))
def test_the_single_cluster_test_matches_a_scan_of_the_queue(seed):
    # A job that cannot end by the reservation is skipped when it is wider than y1 and its
    # single width (its tasks if its allowance admits them on every cluster of its group,
    # EMPTY otherwise) is at most z.

    rng, J, K, st, order, mask, tasks, runtime = _random_queue(seed)
    st.scan.allow_j[:] = rng.integers(0, 14, (J, K)) * ((mask[:, None] >> np.arange(K)) & 1)
    sw = np.array([t if all(st.scan.allow_j[j, k] >= t for k in range(K) if (mask[j] >> k) & 1)
                   else EMPTY for j, t in enumerate(tasks)])
    assert [single_width(j, tasks[j], st, True) for j in range(J)] == sw.tolist()
    build_index(order, st, True)
    queued = np.zeros(J, dtype=bool)
    for m in _queries(rng, K, mask, queued, tasks, runtime, st):
        after = int(rng.integers(-1, J))
        x, y = int(rng.integers(0, 14)), int(rng.integers(-1, 14))
        y1, z = int(rng.integers(0, 10)), int(rng.integers(-1, 14))
        t, sd, shadow = float(rng.integers(0, 50)), float(rng.choice([0.5, 1.0])), 60.0
        want = None
        for p in range(after + 1, J):
            j = order[p]
            if not queued[j] or mask[j] != m or tasks[j] > x:
                continue
            if t + runtime[j] * sd <= shadow or (tasks[j] <= y
                                                 and not (tasks[j] > y1 and sw[j] <= z)):
                want = j
                break
        got = first_candidate(m, first_after(m, after, st), st, x, y, t, sd, shadow, y1=y1,
                              z=z)
        assert first_candidate_behind(m, after, st, x, y, t, sd, shadow, y1=y1, z=z) == got
        if want is None:
            assert got == -1
        else:
            assert got >= 0 and order[st.index.g_pos[st.index.g_off[m] + got]] == want


@pytest.mark.parametrize("seed, wide", _quick_few([(s, False) for s in range(40)])
                         + _quick_few([(s, True) for s in range(40, 70)]))
def test_the_speed_tier_tests_match_a_scan_of_the_queue(seed, wide):
    # Tier i holds the jobs of F[i-1] < tasks <= F[i]; a job of tier i that cannot end by the
    # reservation there (t + cr_i x runtime + cq_i x comp > shadow) is skipped when wider
    # than the late width y (or the single-cluster test's y1), or, with the tier late
    # widths on (tw) and its single width its tasks, wider than y_i. ``wide``: widths and
    # tiers at the width buckets' edges and past the last, whose bucket (that of min(F[i],
    # x)) must hold every job of the tier and may hold none wider than x.

    rng, J, K, st, order, mask, tasks, runtime = _random_queue(seed, wide)
    bits = (mask[:, None] >> np.arange(K)) & 1
    if wide:  # most allowances hold the tasks on every cluster: single widths
        st.scan.allow_j[:] = (tasks[:, None] + rng.integers(-1, 2, (J, K))) * bits
    else:
        st.scan.allow_j[:] = rng.integers(0, 14, (J, K)) * bits
    sw = np.array([single_width(j, tasks[j], st, True) for j in range(J)])
    sigma = np.where(rng.random(J) < 0.5, rng.uniform(0.0, 1.0, J), 0.0)
    comp = runtime * (1.0 - sigma)
    g = np.array([tree_time.py_func(c) for c in comp], dtype=np.float64)
    r = np.array([tree_time.py_func(v) for v in runtime], dtype=np.float64)  # as tr_rg keeps it
    nodes = int(_wide(rng, 1)[0]) if wide else EMPTY  # at least every x, as in a federation
    build_index(order, st, True, nodes)
    queued = np.zeros(J, dtype=bool)
    for m in _queries(rng, K, mask, queued, tasks, runtime, st, comp=comp):
        n = int(rng.integers(1, K + 1))
        f = np.cumsum(_wide(rng, n) if wide else rng.integers(1, 6, n)).astype(float)
        x = int(rng.integers(0, f[-1] + 1))
        if wide and rng.random() < 0.6:  # at a tier's edge or a bucket's
            x = int(min(f[-1], max(0, rng.choice([*f, *_wide(rng, 2)]) + rng.integers(-1, 2))))
        if wide:
            x = min(x, nodes)
        nt = int(np.searchsorted(f, x)) + 1  # up to the first tier that holds x tasks
        speed = np.sort(rng.choice([0.5, 0.8, 1.0, 1.3, 1.6], nt))[::-1]
        tiers = st.index.tiers
        tiers[:] = 0.0
        tiers[0, :nt] = f[:nt]
        tiers[2, :nt] = np.minimum(1.0, 1.0 / speed) * (1.0 - 1e-9)
        tiers[3, :nt] = np.maximum(0.0, 1.0 / speed - 1.0) * (1.0 - 1e-9)
        hi = x + 2 if wide else 14
        y = int(rng.integers(-1, hi))
        tiers[4, :nt] = np.minimum(rng.integers(-1, hi, nt), y)
        tw = bool(rng.random() < 0.7)
        y1, z = int(rng.integers(0, x + 1 if wide else 10)), int(rng.integers(-1, hi))
        if tw:  # as the backfill loop makes them: tier 0 is the first cluster's
            y1, z = max(y1, int(tiers[4, 0])), min(z, int(f[0]))
        t, shadow = float(rng.integers(0, 50)), 60.0
        after = int(rng.integers(-1, J))
        want = None
        for p in range(after + 1, J):
            j = order[p]
            if not queued[j] or mask[j] != m or tasks[j] > x:
                continue
            i = int(np.searchsorted(f, tasks[j]))  # its tier
            late = t + (r[j] * tiers[2, i] + g[j] * tiers[3, i]) > shadow
            if tw and sw[j] < EMPTY:
                skip = late and tasks[j] > tiers[4, i]
            else:
                skip = late and (tasks[j] > y or (tasks[j] > y1 and sw[j] <= z))
            if not skip:
                want = j
                break
        sd = tiers[2, 0]  # the group's floor: the first tier's, the fastest speed's
        got = first_candidate(m, first_after(m, after, st), st, x, y, t, sd, shadow, y1=y1,
                              z=z, nt=nt, tw=tw)
        assert first_candidate_behind(m, after, st, x, y, t, sd, shadow, y1=y1, z=z, nt=nt,
                                      tw=tw) == got
        if want is None:
            assert got == -1
        else:
            assert got >= 0 and order[st.index.g_pos[st.index.g_off[m] + got]] == want


def _least_power_slowest(n, pf, pbusy, pidle, speed, free, allow):
    """The slowest speed of the least-power allocation of ``n`` tasks of factor ``pf`` (the
    clusters by increasing per-node increment, ties by index, each up to ``min(free,
    allow)``), by a sort; None when the nodes cannot hold them."""
    inc = np.maximum(pf * pbusy - pidle, 0.0)
    rem, slowest = n, np.inf
    for k in sorted(range(len(inc)), key=lambda k: (inc[k], k)):
        take = min(rem, free[k], allow[k])
        if take > 0:
            slowest = min(slowest, speed[k])
            rem -= take
    return None if rem > 0 else slowest


@pytest.mark.parametrize("seed", _quick_few(range(40)))
def test_the_fall_back_tiers_bound_the_least_power_allocations(seed):
    # Equal idle powers, distinct busy powers: every job of positive increments orders the
    # clusters by busy power, and its least-power allocation is no faster than its tier.
    rng = np.random.default_rng(seed)
    K = int(rng.integers(1, 6))
    st = new_state(4, K)
    ix = st.index
    speed = rng.choice([0.5, 0.8, 1.0, 1.3, 1.6], K)
    pbusy = rng.permutation(np.array([30.0, 60.0, 90.0, 150.0, 290.0])[:K])
    pidle = np.full(K, 10.0)
    ix.p_ord[0] = np.argsort(pbusy, kind="stable")
    checked = 0
    for _ in range(60):
        free = rng.integers(0, 9, K)
        fm = int(rng.integers(0, 1 << K))
        x = int(sum(free[k] for k in range(K) if (fm >> k) & 1))
        if x == 0:
            continue
        nl = fallback_tiers(ix, fm, free, speed, x)
        tiers = np.array(ix.tiers)
        assert 1 <= nl <= K and tiers[5, nl - 1] >= x
        for _ in range(10):
            n = int(rng.integers(1, x + 1))
            pf = float(rng.uniform(0.4, 2.0))
            # Its allowance holds a node at least of each cluster of its group (fm here).
            allow = np.where([(fm >> k) & 1 for k in range(K)], rng.integers(1, 12, K), 0)
            s = _least_power_slowest(n, pf, pbusy, pidle, speed, free, allow)
            if s is None:
                continue
            i = int(np.searchsorted(tiers[5, :nl], n))  # its tier: F[i-1] < n <= F[i]
            assert tiers[7, i] <= min(1.0, 1.0 / s) and tiers[8, i] <= max(0.0, 1.0 / s - 1.0)
            checked += 1
    assert checked > 0


@pytest.mark.parametrize("seeds", [range(8), pytest.param(range(8, 40), marks=pytest.mark.slow)],
                         ids=["seeds-0-7", "seeds-8-39"])
def test_the_fall_back_late_test_matches_a_scan_of_the_queue(seeds):
    # A job that fits wholly on k1 (tasks <= fk1, a finite top there) whose floor there does
    # not fit now (pk + floor > cap) and whose increments are positive falls back: it
    # cannot end by the reservation when its fall-back tier says so, and must then pass the
    # late tests (the late width y, the head's power over lpk) as a late job does. Each
    # query against the scan, and some jobs that only the fall-back tiers find late.
    found = sum(_fall_back_queries(seed) for seed in seeds)
    assert found > 0 or seeds.start > 0  # seed 4 has such a job


def _fall_back_queries(seed):
    """Random queries of one random queue against the scan; returns how many jobs the
    fall-back tiers found late that the slowdown floor did not."""

    rng, J, K, st, order, mask, tasks, runtime = _random_queue(seed)
    power = rng.uniform(0.1, 1.5, J)
    pbusy, pidle = rng.permutation(np.array([20.0, 50.0, 90.0])[:K]), np.full(K, 10.0)
    allow = np.where(rng.random((J, K)) < 0.8, 14, rng.integers(0, 14, (J, K)))
    power_floors(tasks, power, pbusy, pidle, allow, st.index)
    floors, tops = np.array(st.index.p_floor), np.array(st.index.p_top)
    st.index.p_ord[0] = np.argsort(pbusy, kind="stable")
    sigma = np.where(rng.random(J) < 0.5, rng.uniform(0.0, 1.0, J), 0.0)
    comp = runtime * (1.0 - sigma)
    g = np.array([tree_time.py_func(c) for c in comp], dtype=np.float64)
    build_index(order, st, True)
    queued = np.zeros(J, dtype=bool)
    decided = 0
    for m in _queries(rng, K, mask, queued, tasks, runtime, st, comp=comp):
        nl = int(rng.integers(1, K + 1))
        f = np.cumsum(rng.integers(1, 6, nl)).astype(float)
        x = int(rng.integers(0, f[-1] + 1))
        nl = int(np.searchsorted(f, x)) + 1  # up to the first tier that holds x tasks
        s = np.minimum.accumulate(rng.choice([0.5, 0.8, 1.0, 1.3, 1.6], nl))
        tiers = st.index.tiers
        tiers[5:] = 0.0
        tiers[5, :nl] = f[:nl]
        # The tr_rg bucket of min(F_i, x): the bucket that holds every job that wide.
        tiers[6, :nl] = [_bucket.py_func(int(min(v, x))) for v in f[:nl]]
        tiers[7, :nl] = np.minimum(1.0, 1.0 / s) * (1.0 - 1e-9)
        tiers[8, :nl] = np.maximum(0.0, 1.0 / s - 1.0) * (1.0 - 1e-9)
        y = int(rng.integers(-1, 14))
        t, sd, shadow = float(rng.integers(0, 50)), 0.625, 60.0
        pk, lpk, hf = (float(v) for v in rng.uniform(0, 600, 3))
        cap, fm = float(rng.choice([700.0, 1200.0])), int(rng.integers(0, 1 << K))
        k1, fk1 = int(rng.integers(0, K)), int(rng.integers(0, 14))
        after = int(rng.integers(-1, J))
        p0 = st.index.p_ord[0, 0]
        want = None
        for p in range(after + 1, J):
            j = order[p]
            if not queued[j] or mask[j] != m:
                continue
            fl = min([floors[j, k] for k in range(K) if (fm >> k) & 1], default=np.inf)
            if tasks[j] > x or pk + fl > cap:
                continue
            late = t + runtime[j] * sd > shadow
            falls = (tasks[j] <= fk1 and tops[j, k1] < np.inf and pk + floors[j, k1] > cap
                     and power[j] * pbusy[p0] - pidle[p0] > 0.0)
            if not late and falls:
                i = int(np.searchsorted(f, tasks[j]))  # its tier
                late = t + (runtime[j] * tiers[7, i] + g[j] * tiers[8, i]) > shadow
                decided += late
            if late and (tasks[j] > y or lpk + fl + hf > cap):
                continue
            if late and tasks[j] <= fk1 and pk + tops[j, k1] <= cap and (
                    lpk + floors[j, k1] + hf > cap):
                continue
            want = j
            break
        got = first_candidate(m, first_after(m, after, st), st, x, y, t, sd, shadow, pk, cap, fm,
                              lpk, hf, k1, fk1, nl=nl)
        assert first_candidate_behind(m, after, st, x, y, t, sd, shadow, pk, cap, fm, lpk, hf,
                                      k1, fk1, nl=nl) == got
        if want is None:
            assert got == -1
        else:
            assert got >= 0 and order[st.index.g_pos[st.index.g_off[m] + got]] == want
    return decided


def _node_records(st, order, queued, tasks, runtime, comp, sw):
    """Every tree node's integer record and width-bucket times, from its leaves' jobs by a
    scan: ``(tr_i[:, :3], tr_rg)`` as the index should hold them (the buckets kept)."""
    from decoders._backfill_index import R_BUCKETS

    ix = st.index
    nb = int(ix.on[2])
    want_i = np.array(ix.tr_i[:, :3])
    want_rg = np.array(ix.tr_rg[:, :2 * nb])
    for m in range(len(ix.g_cand)):
        off, size = ix.g_toff[m], (ix.g_toff[m + 1] - ix.g_toff[m]) // 2
        jobs = [order[ix.g_pos[ix.g_off[m] + i]] if i < ix.g_off[m + 1] - ix.g_off[m] else -1
                for i in range(size)]
        for node in range(1, 2 * size):
            lo = node
            while lo < size:
                lo *= 2
            span = lo // node  # the node's leaves: lo - size .. lo - size + span - 1
            held = [j for j in jobs[lo - size:lo - size + span] if j >= 0 and queued[j]]
            want_i[off + node] = (min((tasks[j] for j in held), default=EMPTY),
                                  max((sw[j] for j in held), default=0),
                                  min((tasks[j] for j in held if sw[j] == EMPTY), default=EMPTY))
            for b in range(nb):
                inb = [j for j in held if b == R_BUCKETS - 1 or tasks[j] < (2 << b)]
                want_rg[off + node, 2 * b] = min((tree_time.py_func(runtime[j]) for j in inb),
                                                 default=np.inf)
                want_rg[off + node, 2 * b + 1] = min((tree_time.py_func(comp[j]) for j in inb),
                                                     default=np.inf)
    return want_i, want_rg


@pytest.mark.parametrize("seed, wide", _quick_few([(s, False) for s in range(15)])
                         + _quick_few([(s, True) for s in range(15, 30)]))
def test_the_node_records_hold_their_leaves_minima(seed, wide):
    # Each node's record (least width, greatest single width, least width without a single
    # width; per width bucket the least run and computation times) against its leaves' jobs,
    # after a batch of arrivals (add_jobs' bottom-up rebuild) and then jobs joining and
    # leaving one at a time (set_leaf's walk to the root).

    rng, J, K, st, order, mask, tasks, runtime = _random_queue(seed, wide)
    bits = (mask[:, None] >> np.arange(K)) & 1
    st.scan.allow_j[:] = (tasks[:, None] + rng.integers(-1, 2, (J, K))) * bits
    sw = np.array([single_width(j, tasks[j], st, True) for j in range(J)])
    sigma = np.where(rng.random(J) < 0.5, rng.uniform(0.0, 1.0, J), 0.0)
    comp = runtime * (1.0 - sigma)
    nodes = int(_wide(rng, 1)[0]) if wide else EMPTY
    build_index(order, st, True, nodes)
    queued = np.zeros(J, dtype=bool)
    first = rng.permutation(J)[:int(rng.integers(0, J + 1))].astype(np.int64)
    add_jobs(0, len(first), first, tasks, runtime, sigma, st, True)
    queued[first] = True
    for step in range(4):
        want_i, want_rg = _node_records(st, order, queued, tasks, runtime, comp, sw)
        n, nb = st.index.g_toff[-1], int(st.index.on[2])  # the trees' rows, the buckets kept
        assert np.array_equal(st.index.tr_i[:n, :3], want_i[:n]), step
        assert np.array_equal(st.index.tr_rg[:n, :2 * nb], want_rg[:n]), step
        _join_and_leave(rng, queued, tasks, runtime, st, comp)
