"""The run's archive and its neighbourhood mating equal their plain-Python twins."""

from __future__ import annotations

import moocore
import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from naive import naive_archive, naive_hypervolume_2d, naive_nearest_neighbours
from pymoo.core.population import Population

import moga
from moga.evolution.archive import ParetoArchive
from moga.evolution.mating import NeighbourSelection, nearest_neighbours


def _front(rng, n, m=2):
    """``n`` random points, many of them non-dominated (on a noisy simplex)."""
    w = rng.dirichlet(np.ones(m), n)
    return w + 0.05 * rng.random((n, m))


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), capacity=st.integers(4, 12),
       sizes=st.lists(st.integers(1, 15), min_size=1, max_size=4))
def test_archive_equals_its_twin_in_two_objectives(seed, capacity, sizes):
    rng = np.random.default_rng(seed)
    scale = np.array([2.0, 0.5])
    batches = []
    for n in sizes:
        F = _front(rng, n) * scale
        if n > 2:
            F[1] = F[0]  # an equal vector: the first chromosome seen is kept
        batches.append((F, rng.random((n, 3))))
    arch = ParetoArchive(capacity, scale)
    for F, X in batches:
        arch.update(F, X)
    twin = naive_archive(batches, capacity, scale)
    got = sorted((tuple(f), tuple(x)) for f, x in zip(arch.F, arch.X, strict=True))
    want = sorted((f, tuple(x)) for f, x in twin)
    assert got == want


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), capacity=st.integers(4, 12),
       sizes=st.lists(st.integers(1, 15), min_size=1, max_size=5))
def test_archive_rows_and_take_equal_the_plain_merges(seed, capacity, sizes):
    """Candidates given as rows of a larger array, then taken out in an order: the same
    points and chromosomes as merging the gathered rows, and the archive left empty."""
    rng = np.random.default_rng(seed)
    scale = np.array([2.0, 0.5])
    plain, by_rows = ParetoArchive(capacity, scale), ParetoArchive(capacity, scale)
    for n in sizes:
        F = _front(rng, n) * scale
        big = rng.random((n + 3, 4))
        rows = rng.permutation(n + 3)[:n]
        plain.update(F, big[rows])
        by_rows.update(F, big, rows=rows)
        assert np.array_equal(plain.F, by_rows.F) and np.array_equal(plain.X, by_rows.X)
    order = rng.permutation(len(plain))
    want_F, want_X = plain.F[order], plain.X[order]
    X = by_rows.take(order)
    assert np.array_equal(X, want_X) and len(want_F) == len(order)
    assert len(by_rows) == 0 and by_rows.X is None
    with pytest.raises(ValueError, match="rows must index"):
        plain.update(F[:1], big, rows=[n + 3])
    with pytest.raises(ValueError, match="distinct indices"):
        plain.take([0, 0])


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), capacity=st.integers(6, 10))
def test_archive_equals_its_twin_in_three_objectives(seed, capacity):
    rng = np.random.default_rng(seed)
    F = _front(rng, 25, 3)

    def hv(points, ref):
        return float(moocore.hypervolume(np.array(points), ref=np.array(ref)))

    arch = ParetoArchive(capacity, np.ones(3))
    X = np.arange(25.0)[:, None]
    arch.update(F, X)
    twin = naive_archive([(F, X)], capacity, np.ones(3), hv=hv)
    assert sorted(map(tuple, arch.F)) == sorted(f for f, _ in twin)


def test_two_dimensional_hypervolume_twin_agrees_with_moocore():
    rng = np.random.default_rng(3)
    F = _front(rng, 30)
    ref = np.array([1.2, 1.2])
    assert naive_hypervolume_2d(F, ref) == pytest.approx(
        float(moocore.hypervolume(F, ref=ref)), rel=1e-12)


def test_archive_keeps_the_extremes_and_refuses_bad_input():
    arch = ParetoArchive(4, [1.0, 1.0])
    F = np.array([[0.0, 1.0], [0.1, 0.5], [0.2, 0.45], [0.5, 0.2], [0.55, 0.19], [1.0, 0.0]])
    arch.update(F, np.arange(6.0)[:, None])
    assert len(arch) == 4
    assert {0.0, 1.0} <= set(arch.F[:, 0])
    with pytest.raises(ValueError, match="capacity"):
        ParetoArchive(3, [1.0, 1.0])
    with pytest.raises(ValueError, match="scale"):
        ParetoArchive(10, [1.0, 0.0])
    with pytest.raises(ValueError, match="one row of X"):
        arch.update(F, np.zeros((2, 1)))


@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 25), k=st.integers(1, 30))
def test_nearest_neighbours_equal_their_twin(seed, n, k):
    rng = np.random.default_rng(seed)
    F = np.round(rng.random((n, 2)) * 8) / 8  # coarse values: ties in distance happen
    assert nearest_neighbours(F, k).tolist() == naive_nearest_neighbours(F, k)


@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 25), k=st.integers(1, 30),
       n_rows=st.integers(0, 30))
def test_nearest_neighbours_of_some_rows_equal_their_twin(seed, n, k, n_rows):
    rng = np.random.default_rng(seed)
    F = np.round(rng.random((n, 2)) * 8) / 8
    rows = rng.integers(0, n, n_rows)  # repeats and any order
    twin = naive_nearest_neighbours(F, k)
    assert nearest_neighbours(F, k, rows).tolist() == [twin[i] for i in rows]


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_arch=st.integers(1, 20), n_new=st.integers(1, 30),
       m=st.sampled_from([2, 3]))
def test_archive_admits_what_no_archived_vector_weakly_dominates(seed, n_arch, n_new, m):
    rng = np.random.default_rng(seed)
    arch = ParetoArchive(2 * m + 20, np.ones(m))
    arch.update(np.round(_front(rng, n_arch, m) * 8) / 8, np.zeros((n_arch, 1)))
    F = np.round(_front(rng, n_new, m) * 8) / 8  # coarse: equal coordinates happen
    F[: min(n_new, len(arch.F))] = arch.F[: min(n_new, len(arch))]  # equal vectors: covered
    twin = [not any(all(a <= b for a, b in zip(g, f, strict=True)) for g in arch.F) for f in F]
    assert arch.admits(F).tolist() == twin


def test_neighbour_selection_pairs_a_tournament_winner_with_a_neighbour():
    rng = np.random.default_rng(0)
    F = _front(rng, 40)
    pop = Population.new(F=F)
    rank = rng.integers(0, 3, 40)
    crowd = rng.random(40)
    for i, ind in enumerate(pop):
        ind.set("rank", rank[i])
        ind.set("crowding", crowd[i])
    sel = NeighbourSelection(5)
    P = sel._do(None, pop, 200, 2, random_state=np.random.default_rng(7))
    # The same draws, by hand.
    rs = np.random.default_rng(7)
    a, b = rs.integers(0, 40, 200), rs.integers(0, 40, 200)
    pick = rs.integers(0, 5, 200)
    nb = naive_nearest_neighbours(F, 5)
    for s in range(200):
        x, y = a[s], b[s]
        y_wins = rank[y] < rank[x] or (rank[y] == rank[x] and crowd[y] > crowd[x])
        first = y if y_wins else x
        assert P[s].tolist() == [first, nb[first][pick[s]]]
    with pytest.raises(ValueError, match="neighbours"):
        NeighbourSelection(0)


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 30), m=st.integers(1, 3),
       k=st.integers(1, 12), n_select=st.integers(0, 25))
def test_neighbour_pairs_equal_their_twin_on_ties(seed, n, m, k, n_select):
    rng = np.random.default_rng(seed)
    F = np.round(rng.random((n, m)) * 4) / 4  # ties in distance and equal rows
    rank = rng.integers(0, 3, n).astype(float)
    rank[rng.random(n) < 0.2] = np.inf  # individuals without a rank lose
    crowd = np.round(rng.random(n) * 3) / 3
    crowd[rng.random(n) < 0.2] = np.inf
    got = NeighbourSelection(k).pairs(rank, crowd, F, n_select, np.random.default_rng(seed))
    rs = np.random.default_rng(seed)
    a, b = rs.integers(0, n, n_select), rs.integers(0, n, n_select)
    nb = naive_nearest_neighbours(F, k)
    pick = rs.integers(0, len(nb[0]), n_select)
    want = []
    for s in range(n_select):
        x, y = a[s], b[s]
        first = y if rank[y] < rank[x] or (rank[y] == rank[x] and crowd[y] > crowd[x]) else x
        want.append([first, nb[first][pick[s]]])
    assert got.reshape(-1, 2).tolist() == want
    # A population of one mates with itself.
    one = NeighbourSelection(k).pairs(rank[:1], crowd[:1], F[:1], 3, rs)
    assert one.tolist() == [[0, 0]] * 3


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_pop=st.integers(0, 8),
       sizes=st.lists(st.integers(0, 8), min_size=1, max_size=4))
def test_lazy_duplicate_check_keeps_what_seen_rows_keep(seed, n_pop, sizes):
    from moga.evolution.duplicates import SeenRows, _row_hashes
    from moga.evolution.mating import _LazySeen

    rng = np.random.default_rng(seed)
    pool = rng.integers(0, 2, (6, 3)).astype(float)  # few distinct rows: repeats happen
    X = pool[rng.integers(0, 6, n_pop)]
    lazy, full = _LazySeen(X, _row_hashes(X)), SeenRows(X, _row_hashes(X))
    for size in sizes:
        C = pool[rng.integers(0, 6, size)] if rng.random() < 0.5 else rng.random((size, 3))
        h = _row_hashes(C)
        want = [i for i, (row, hi) in enumerate(zip(C, h, strict=True)) if full.add(row, hi)]
        assert lazy.add_rows(C, h).tolist() == want


@pytest.fixture(scope="module")
def small():
    fed = moga.Federation.preset()
    js = moga.load_default().jobset(n_jobs=80, federation=fed)
    return js, fed


def test_archive_front_weakly_dominates_the_final_population(small):
    js, fed = small
    # The archive only watches the search: both runs evolve the same populations.
    plain = moga.run(js, fed, pop_size=20, n_gen=15, seed=4, params={"archive_size": 0})
    kept = moga.run(js, fed, pop_size=20, n_gen=15, seed=4, params={"archive_size": 10_000})
    for f in plain.F:
        assert np.any(np.all(kept.F <= f, axis=1))
    assert kept.hv >= plain.hv
    # Nothing is ever dropped below capacity, so the hypervolume never falls.
    assert np.all(np.diff(kept.history["hv"]) >= 0)
    small_arch = moga.run(js, fed, pop_size=20, n_gen=15, seed=4, params={"archive_size": 6})
    assert len(small_arch.F) <= 6
    with pytest.raises(ValueError, match="archive_size"):
        moga.run(js, fed, pop_size=20, n_gen=2, params={"archive_size": 3})


def test_crossover_probabilities_default_per_algorithm():
    p = moga.GAParams()
    assert p.prob_order_crossover is None and "prob_order_crossover" not in p.to_dict()
    cx, _ = p.operators()
    assert (cx.prob_order, cx.prob_blacklist) == (0.9, 0.9)
    cx, _ = p.operators(crossover_prob=0.5)
    assert (cx.prob_order, cx.prob_blacklist) == (0.5, 0.5)
    cx, _ = p.replace(prob_order_crossover=0.7).operators(crossover_prob=0.5)
    assert (cx.prob_order, cx.prob_blacklist) == (0.7, 0.5)


def test_cluster_move_rate_defaults_per_algorithm(small):
    p = moga.GAParams()
    assert p.cluster_rate is None and "cluster_rate" not in p.to_dict()
    assert p.operators()[1].cluster_rate == 0.2
    assert p.operators(cluster_rate=0.8)[1].cluster_rate == 0.8
    assert p.replace(cluster_rate=0.3).operators(cluster_rate=0.8)[1].cluster_rate == 0.3
    # moga.run gives MOGA's own rate to a parameter left at None.
    from moga.evolution.parts import MOGA_CLUSTER_RATE

    js, fed = small
    kw = dict(pop_size=12, n_gen=6, seed=3)
    default = moga.run(js, fed, **kw)
    same = moga.run(js, fed, params={"cluster_rate": MOGA_CLUSTER_RATE}, **kw)
    other = moga.run(js, fed, params={"cluster_rate": 0.0}, **kw)
    assert np.array_equal(default.X, same.X) and np.array_equal(default.F, same.F)
    assert not (default.X.shape == other.X.shape and np.array_equal(default.X, other.X))


@settings(max_examples=25, deadline=None)
@example(seed=4, n_pop=4, n_off=1, neighbours=3, rates=(0.0, 0.0), prob=0.0)  # no child at all
@given(seed=st.integers(0, 2**32 - 1), n_pop=st.integers(4, 30),
       n_off=st.integers(1, 40), neighbours=st.sampled_from([0, 3]),
       rates=st.sampled_from([(None, None), (0.0, 0.0), (0.02, 0.0)]),
       prob=st.sampled_from([0.0, 0.5, 1.0]))
def test_array_mating_equals_pymoo_mating(small, seed, n_pop, n_off, neighbours, rates, prob):
    """The array mating makes pymoo's children: same draws, same duplicates dropped."""
    from pymoo.core.mating import Mating
    from pymoo.operators.selection.tournament import TournamentSelection
    from pymoo.operators.survival.rank_and_crowding import RankAndCrowding

    from moga.evolution.mating import ArrayMating
    from moga.evolution.operators import ScheduleDuplicateElimination, ScheduleMutation
    from moga.evolution.problem import SchedulingProblem

    js, fed = small
    problem = SchedulingProblem(js, fed)
    rng = np.random.default_rng(seed)
    J, K = len(js), fed.n_clusters
    # A small population with repeated chromosomes, so that children often duplicate.
    X = np.hstack([np.argsort(rng.random((n_pop, J)), axis=1),
                   np.round(rng.random((n_pop, J * K)), 1)]).astype(float)
    X[n_pop // 2:] = X[: n_pop - n_pop // 2]
    pop = Population.new(X=X, F=_front(rng, n_pop))
    pop = RankAndCrowding().do(problem, pop, n_survive=n_pop)
    if neighbours:
        selection = NeighbourSelection(neighbours)
    else:
        from pymoo.algorithms.moo.nsga2 import binary_tournament

        selection = TournamentSelection(func_comp=binary_tournament)
    crossover, _ = moga.GAParams().operators(crossover_prob=prob)
    mutation = ScheduleMutation(order_rate=rates[0], blacklist_rate=rates[1])
    ref = Mating(selection, crossover, mutation, eliminate_duplicates=ScheduleDuplicateElimination(),
                 n_max_iterations=5)
    from pymoo.algorithms.moo.nsga2 import NSGA2

    def children(mating):
        # pymoo's tournament breaks crowding ties with the algorithm's own generator,
        # which in a run is the one passed as random_state.
        algorithm = NSGA2()
        algorithm.random_state = np.random.default_rng(seed)
        return mating.do(problem, pop, n_off, random_state=algorithm.random_state,
                         algorithm=algorithm)

    want = children(ref)
    got = children(ArrayMating(selection, crossover, mutation, n_max_iterations=5))
    # An empty Population gives X of shape (0,) from either mating: compare as rows.
    np.testing.assert_array_equal(got.get("X").reshape(-1, X.shape[1]),
                                  want.get("X").reshape(-1, X.shape[1]))
