"""The array loop of ``moga.run`` equals pymoo's NSGA-II run, draw for draw."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pymoo.core.population import Population
from pymoo.core.problem import Problem
from pymoo.operators.survival.rank_and_crowding import RankAndCrowding
from pymoo_twin import pymoo_run

import moga
from moga.evolution.engine import survive


@pytest.fixture(scope="module")
def small():
    fed = moga.Federation.preset()
    js = moga.load_default().jobset(n_jobs=120, federation=fed)
    return js, fed


def _both(monkeypatch, *args, **kwargs):
    slow = pymoo_run(*args, **kwargs)
    fast = moga.run(*args, **kwargs)
    return slow, fast


@pytest.mark.parametrize("kwargs", [
    {"seed": 1},
    {"seed": 7, "params": {"archive_size": 0}},
    {"seed": 3, "model": "at_start", "params": {"mating_neighbours": 3}},
    {"seed": 11, "pop_size": 12, "params": {"seeded": False}},
    {"seed": 5, "stagnation": 3, "stagnation_tol": 0.02},
    {"seed": 2, "use_blacklist": False},
    {"seed": 4, "params": {"easy_search": False}},
    {"seed": 6, "params": {"mating_neighbours": 0}},
])
def test_array_loop_equals_pymoo(small, monkeypatch, kwargs):
    js, fed = small
    kwargs = {"pop_size": 24, "n_gen": 30, **kwargs}
    slow, fast = _both(monkeypatch, js, fed, **kwargs)
    np.testing.assert_array_equal(fast.F, slow.F)
    np.testing.assert_array_equal(fast.X, slow.X)
    assert fast.n_evals == slow.n_evals
    for key in ("n_gen", "n_evals", "hv", "front_size"):
        np.testing.assert_array_equal(fast.history[key], slow.history[key])
    assert fast.info["stopped_by"] == slow.info["stopped_by"]


def test_survival_equals_pymoos_rank_and_crowding():
    rng = np.random.default_rng(0)
    for n, keep in ((30, 12), (40, 40), (25, 1), (60, 33)):
        F = np.round(rng.random((n, 2)), 1)  # ties and equal vectors, as on real fronts
        X = rng.random((n, 3))
        pop = Population.new(X=X, F=F)
        want = RankAndCrowding().do(Problem(n_var=3, n_obj=2), pop, n_survive=keep,
                                    random_state=np.random.default_rng(n))
        got = survive(X, F, keep, np.random.default_rng(n))
        np.testing.assert_array_equal(got.X, want.get("X"))
        np.testing.assert_array_equal(got.rank, want.get("rank"))
        np.testing.assert_array_equal(got.crowding, want.get("crowding").astype(float))


def test_survival_of_a_large_set_equals_pymoos_rank_and_crowding():
    from moga.evolution.survival import SMALL_SORT

    rng = np.random.default_rng(1)
    for n, m in ((SMALL_SORT + 1, 2), (3 * SMALL_SORT, 3), (SMALL_SORT, 2)):
        F = np.round(rng.random((n, m)), 1)
        X = rng.random((n, 2))
        pop = Population.new(X=X, F=F)
        want = RankAndCrowding().do(Problem(n_var=2, n_obj=m), pop, n_survive=n // 2,
                                    random_state=np.random.default_rng(n))
        got = survive(X, F, n // 2, np.random.default_rng(n))
        np.testing.assert_array_equal(got.X, want.get("X"))
        np.testing.assert_array_equal(got.crowding, want.get("crowding").astype(float))


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 40), m=st.integers(1, 7),
       levels=st.sampled_from([2, 4, 0]), infinite=st.booleans())
def test_ranks_and_crowding_equal_their_twins_and_pymoo(seed, n, m, levels, infinite):
    from moocore import pareto_rank
    from naive import naive_crowding_distance, naive_pareto_ranks
    from pymoo.operators.survival.rank_and_crowding.metrics import calc_crowding_distance

    from moga.evolution.survival import _crowding_distance, _pareto_ranks

    rng = np.random.default_rng(seed)
    # Coarse values (ties, equal rows, constant objectives) or continuous ones (levels 0).
    F = rng.integers(0, levels, (n, m)).astype(float) if levels else rng.random((n, m))
    if infinite:
        F[rng.random((n, m)) < 0.1] = np.inf
    ranks = _pareto_ranks(F)
    assert ranks.tolist() == naive_pareto_ranks(F.tolist())
    if not infinite:  # (the survival leaves infinite objectives to moocore)
        np.testing.assert_array_equal(ranks, pareto_rank(F))
    cd = _crowding_distance(F)
    assert cd.tolist() == naive_crowding_distance(F.tolist())
    if n > 2:
        with np.errstate(invalid="ignore"):
            want = calc_crowding_distance(F.copy())
        assert cd.tobytes() == want.tobytes()  # bit for bit, as the survival's ties need


def test_resequencer_takes_the_easy_start_order(small):
    from moga.evolution.problem import SchedulingProblem
    from moga.evolution.resequencing import Resequencer
    from moga.model.schedule import evaluate

    js, fed = small
    problem = SchedulingProblem(js, fed)
    J, K = len(js), fed.n_clusters
    rng = np.random.default_rng(3)
    C = np.hstack([np.array([rng.permutation(J) for _ in range(6)]),
                   np.round(rng.random((6, J * K)) ** 3, 2)]).astype(float)
    same = Resequencer(0.0)(problem, C, np.random.default_rng(0))
    np.testing.assert_array_equal(same, C)
    n0 = problem.n_decoded
    out = Resequencer(1.0)(problem, C, np.random.default_rng(0))
    assert problem.n_decoded == n0 + 6  # the EASY decodes count as evaluations
    np.testing.assert_array_equal(out[:, J:], C[:, J:])  # blacklists untouched
    for p in range(6):
        s = evaluate(js, fed, C[p, :J].astype(int), C[p, J:].reshape(J, K), backfill="easy")
        pos = np.empty(J, dtype=int)
        pos[C[p, :J].astype(int)] = np.arange(J)
        np.testing.assert_array_equal(out[p, :J], np.lexsort((pos, s.start)))
        # Decoded in order, the new order is never later than EASY at its first difference.
        t = evaluate(js, fed, out[p, :J].astype(int), C[p, J:].reshape(J, K))
        first = np.flatnonzero(t.start != s.start)
        if first.size:
            j = out[p, :J].astype(int)[np.argmax(np.isin(out[p, :J].astype(int), first))]
            assert t.start[j] < s.start[j]
    # One draw per child, whatever the rate.
    a, b = np.random.default_rng(9), np.random.default_rng(9)
    Resequencer(0.5)(problem, C, a)
    b.random(6)
    assert a.random() == b.random()
    for bad in (-0.1, 1.5, "x", True):
        with pytest.raises(ValueError, match="rate"):
            Resequencer(bad)
    with pytest.raises(ValueError, match="resequence_rate"):
        moga.GAParams(resequence_rate=2)


def test_resequencing_is_off_under_the_easy_decoder(small, monkeypatch):
    from moga.evolution import resequencing

    js, fed = small
    calls = []
    monkeypatch.setattr(resequencing.Resequencer, "__call__",
                        lambda self, problem, C, rs, **kw: calls.append(1) or C)
    moga.run(js, fed, pop_size=10, n_gen=3, backfill="easy")
    moga.run(js, fed, pop_size=10, n_gen=3)  # the EASY search, the default
    assert not calls
    moga.run(js, fed, pop_size=10, n_gen=3, params={"easy_search": False})
    assert calls


def test_easy_search_twins_are_easy_start_orders_pinned_to_easy_nodes(small):
    from moga.evolution.problem import SchedulingProblem
    from moga.evolution.resequencing import EasySearch
    from moga.model.schedule import evaluate

    js, fed = small
    J, K = len(js), fed.n_clusters
    rng = np.random.default_rng(5)
    X = np.hstack([np.array([rng.permutation(J) for _ in range(6)]),
                   np.round(rng.random((6, J * K)) ** 3, 2)]).astype(float)
    search = EasySearch(SchedulingProblem(js, fed))
    F_easy, _ = search.decode(X)
    n_easy = search.n_decoded
    F, C = search.twins(X)
    assert search.n_decoded == n_easy  # the decode's start orders are reused
    assert search.in_order.n_decoded == 6
    fresh = EasySearch(SchedulingProblem(js, fed))
    F2, C2 = fresh.twins(X)  # no decode to reuse: EASY runs first
    np.testing.assert_array_equal(C, C2)
    np.testing.assert_array_equal(F, F2)
    assert fresh.n_decoded == 6
    rows = np.array([4, 1])
    F3, C3 = search.twins(X, rows)  # some rows only, the decode's start orders reused
    np.testing.assert_array_equal(C3, C[rows])
    np.testing.assert_array_equal(F3, F[rows])
    assert search.n_decoded == n_easy and search.in_order.n_decoded == 8
    F4, C4 = EasySearch(SchedulingProblem(js, fed)).twins(X, rows)
    np.testing.assert_array_equal(C4, C[rows])
    np.testing.assert_array_equal(F4, F[rows])
    F5, C5 = search.twins(X, np.array([], dtype=int))
    assert F5.shape == (0, 2) and C5.shape == (0, X.shape[1])
    for p in range(6):
        s = evaluate(js, fed, X[p, :J].astype(int), X[p, J:].reshape(J, K), backfill="easy")
        np.testing.assert_allclose(F_easy[p], [s.makespan, s.energy], rtol=1e-12)
        pos = np.empty(J, dtype=int)
        pos[X[p, :J].astype(int)] = np.arange(J)
        np.testing.assert_array_equal(C[p, :J], np.lexsort((pos, s.start)))
        pinned = C[p, J:].reshape(J, K)
        allow = fed.nodes - np.floor(pinned * fed.nodes)
        np.testing.assert_array_equal(allow, s.alloc)  # each job on its EASY node counts
        t = evaluate(js, fed, C[p, :J].astype(int), pinned)
        np.testing.assert_allclose(F[p], [t.makespan, t.energy], rtol=1e-12)
        if np.array_equal(t.start, s.start):  # the replay is EASY's schedule
            np.testing.assert_array_equal(t.alloc, s.alloc)
            np.testing.assert_allclose(F[p], F_easy[p], rtol=1e-9)
    # Without a blacklist the twin keeps its (empty) one.
    bare = EasySearch(SchedulingProblem(js, fed, use_blacklist=False))
    F6, C6 = bare.twins(X[:, :J])
    assert C6.shape == (6, J)
    for p in range(6):
        s = evaluate(js, fed, X[p, :J].astype(int), backfill="easy")
        pos = np.empty(J, dtype=int)
        pos[X[p, :J].astype(int)] = np.arange(J)
        np.testing.assert_array_equal(C6[p], np.lexsort((pos, s.start)))
        t = evaluate(js, fed, C6[p].astype(int))
        np.testing.assert_allclose(F6[p], [t.makespan, t.energy], rtol=1e-12)
    with pytest.raises(ValueError, match="in-order problem"):
        EasySearch(SchedulingProblem(js, fed, backfill="easy"))


def test_pinned_blacklists_allow_exactly_the_given_node_counts():
    from moga.model.chromosome import pinned_blacklists

    rng = np.random.default_rng(3)
    nodes = np.array([1, 3, 7, 64, 1000])
    alloc = rng.integers(0, nodes + 1, size=(50, 5))
    alloc[0] = 0
    alloc[1] = nodes
    b = pinned_blacklists(alloc, nodes)
    assert b.min() >= 0 and b.max() <= 1
    np.testing.assert_array_equal(nodes - np.floor(b * nodes), alloc)
    np.testing.assert_array_equal(b[1], 0.0)
    for bad in (alloc - 1, alloc + 1, alloc[:, :4]):
        with pytest.raises(ValueError, match="node counts"):
            pinned_blacklists(bad, nodes)


def test_easy_search_returns_an_in_order_front(small, monkeypatch):
    from moga.evolution import resequencing
    from moga.evolution.problem import SchedulingProblem

    js, fed = small
    calls = []
    monkeypatch.setattr(resequencing.Resequencer, "__call__",
                        lambda self, problem, C, rs, **kw: calls.append(1) or C)
    kw = dict(pop_size=16, n_gen=8, seed=2, params={"easy_search": True})
    r = moga.run(js, fed, **kw)
    assert not calls  # re-sequencing is off: the orders are queue priorities
    assert r.backfill == "none" and r.params.easy_search
    np.testing.assert_array_equal(SchedulingProblem(js, fed).decode(r.X)[0], r.F)
    for x in r.X:
        np.testing.assert_array_equal(np.sort(x[:len(js)]), np.arange(len(js)))
    # The rows whose EASY point the archive admitted have an in-order twin, and both count.
    asked = []
    twins = resequencing.EasySearch.twins

    def spy(self, X, rows=None):
        asked.append((len(X), len(rows)))
        return twins(self, X, rows)

    monkeypatch.setattr(resequencing.EasySearch, "twins", spy)
    again = moga.run(js, fed, **kw)
    np.testing.assert_array_equal(r.X, again.X)
    n_twins = sum(n for _, n in asked)
    assert sum(n for n, _ in asked) == r.history["n_evals"][-1]
    assert 0 < n_twins < r.history["n_evals"][-1]  # covered rows are not twinned
    assert r.n_evals >= r.history["n_evals"][-1] + n_twins  # with the seeding's decodes
    monkeypatch.setattr(resequencing.EasySearch, "twins", twins)
    again = moga.run(js, fed, **kw)
    np.testing.assert_array_equal(r.X, again.X)
    default = moga.run(js, fed, pop_size=16, n_gen=8, seed=2)  # the EASY search by default
    np.testing.assert_array_equal(default.X, r.X)
    assert default.params.easy_search
    plain = moga.run(js, fed, pop_size=16, n_gen=8, seed=2, params={"easy_search": False})
    assert not (plain.F.shape == r.F.shape and np.array_equal(plain.F, r.F))
    with pytest.raises(ValueError, match="easy_search applies to the in-order decoder"):
        moga.run(js, fed, backfill="easy", **kw)
    with pytest.raises(ValueError, match="archive"):
        moga.GAParams(easy_search=True, archive_size=0)
    with pytest.raises(ValueError, match="easy_search must be true or false"):
        moga.GAParams(easy_search="yes")
    assert moga.GAParams.from_dict(moga.GAParams(easy_search=True).to_dict()).easy_search


def test_moga_resolves_the_search_and_its_budget():
    from moga.evolution.params import BUDGET, EASY_BUDGET

    def got(p):
        return p.easy_search, p.pop_size, p.n_gen

    p = moga.GAParams()
    assert (p.easy_search, p.pop_size, p.n_gen) == (None, None, None)
    assert got(p.for_moga()) == (True, *EASY_BUDGET) == (True, 50, 240)
    assert got(p.for_moga("easy")) == (False, *EASY_BUDGET)  # EASY's space, searched already
    assert got(p.resolved()) == (False, *BUDGET) == (False, 100, 700)  # GA-MF, value GA
    assert got(moga.GAParams(easy_search=False).for_moga()) == (False, 100, 700)
    assert got(moga.GAParams(archive_size=0).for_moga()) == (False, 100, 700)
    assert got(moga.GAParams(n_gen=5).for_moga()) == (True, 50, 5)
    assert got(moga.GAParams(pop_size=8, easy_search=True).resolved()) == (True, 8, 240)
    assert moga.GAParams.from_dict(moga.GAParams().to_dict()) == moga.GAParams()
    with pytest.raises(ValueError, match="pop_size must be an integer >= 2"):
        moga.GAParams(pop_size=1)


def test_resequencing_chance_falls_with_the_jobset_size():
    from moga.evolution.resequencing import SCALE_JOBS, Resequencer

    class Stub:
        def __init__(self, n_jobs):
            self.n_jobs, self.rows = n_jobs, 0

        def start_orders(self, X, backfill="easy"):
            self.rows += len(X)
            return np.zeros((len(X), self.n_jobs))

    for J, share in ((SCALE_JOBS // 2, 1.0), (2 * SCALE_JOBS, 0.5)):
        stub = Stub(J)
        Resequencer(1.0)(stub, np.ones((2000, J + 1)), np.random.default_rng(1))
        assert abs(stub.rows / 2000 - share) < 0.04


@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 12), m=st.integers(0, 12))
def test_rows_in_place_equals_a_gather(seed, n, m):
    """The survivors written over the population's array: the same rows as a gather."""
    from moga.evolution.engine import _rows_in_place

    rng = np.random.default_rng(seed)
    A = rng.random((n, 3))
    B = rng.random((m, 3))
    src = rng.permutation(n + m)[:n]
    expected = np.vstack([A, B])[src]
    _rows_in_place(A, src, B)
    assert np.array_equal(A, expected)
