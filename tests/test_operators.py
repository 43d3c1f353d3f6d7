"""Operators keep chromosomes valid, match their references and repeat under a seed."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from naive import naive_fitted_row, naive_order_crossover
from pymoo.core.population import Population

import moga
from moga.evolution.operators import (
    ScheduleCrossover,
    ScheduleDuplicateElimination,
    ScheduleMutation,
    ScheduleSampling,
    _order_crossover_into,
    fitted_blacklists,
    seed_blacklists,
)
from moga.evolution.problem import SchedulingProblem, join, split


@pytest.fixture(scope="module")
def problem():
    fed = moga.Federation.preset()
    js = moga.load_default().jobset(n_jobs=60, federation=fed)
    return SchedulingProblem(js, fed)


@pytest.fixture(scope="module")
def wide_problem(problem):
    """The fixture's job-set with every fifth job 150 tasks wide (wider than the 96-node
    slowest cluster, so grid blacklists void their rows)."""
    js = problem.jobset
    tasks = js.tasks.copy()
    tasks[::5] = 150
    wide = moga.JobSet.from_arrays(js.release, tasks, js.runtime, js.sigma, js.bw)
    return SchedulingProblem(wide, problem.federation)


def _valid(problem, X):
    orders, bls = split(X, problem.n_jobs, problem.n_clusters)
    assert np.all(np.sort(orders, axis=1) == np.arange(problem.n_jobs))
    assert np.all(X[:, :problem.n_jobs] == np.rint(X[:, :problem.n_jobs]))
    assert np.all((bls >= 0) & (bls <= 1))


def _pairs(n):
    """Mating m's parents are rows m and n + m (the layout of ``X.reshape(2 * n, -1)``)."""
    return np.column_stack([np.arange(n), n + np.arange(n)])


@given(J=st.integers(1, 30), seed=st.integers(0, 2**32 - 1), n=st.integers(1, 6))
def test_jitted_order_crossover_matches_reference(J, seed, n):
    rng = np.random.default_rng(seed)
    X = np.stack([np.array([rng.permutation(J) for _ in range(n)], dtype=float) for _ in range(2)])
    cuts = np.sort(rng.integers(0, J + 1, (2, n, 2)), axis=2)
    out = np.empty_like(X)
    _order_crossover_into(X.reshape(2 * n, J), _pairs(n), J, cuts, np.ones(n, dtype=bool), out)
    for m in range(n):
        for c in range(2):
            a, b = cuts[c, m]
            expected = naive_order_crossover(list(X[c, m]), list(X[1 - c, m]), a, b)
            assert out[c, m].tolist() == expected


def test_order_crossover_keeps_relative_order_of_the_other_parent():
    # Textbook example: p1 = 1 2 3 | 4 5 6 7 | 8 9, p2 = 4 5 2 1 8 7 6 9 3 (0-based genes).
    p1 = [g - 1 for g in [1, 2, 3, 4, 5, 6, 7, 8, 9]]
    p2 = [g - 1 for g in [4, 5, 2, 1, 8, 7, 6, 9, 3]]
    child = naive_order_crossover(p1, p2, 3, 7)
    assert [g + 1 for g in child] == [2, 1, 8, 4, 5, 6, 7, 9, 3]


@given(seed=st.integers(0, 2**32 - 1), kind=st.sampled_from(["uniform", "blend"]),
       po=st.floats(0, 1), pb=st.floats(0, 1))
def test_crossover_offspring_are_valid(problem, seed, kind, po, pb):
    rng = np.random.default_rng(seed)
    pop = ScheduleSampling(seeded=False).do(problem, 10, random_state=rng)
    parents = rng.integers(0, 10, (8, 2))
    off = ScheduleCrossover(po, pb, kind).do(problem, pop, parents, random_state=rng)
    assert len(off) == 16
    _valid(problem, off.get("X"))


def test_uniform_crossover_children_take_each_entry_from_a_parent(problem):
    rng = np.random.default_rng(3)
    pop = ScheduleSampling(seeded=False).do(problem, 2, random_state=rng)
    off = ScheduleCrossover(1.0, 1.0, "uniform").do(problem, pop, np.array([[0, 1]]),
                                                    random_state=rng)
    J = problem.n_jobs
    P, C = pop.get("X")[:, J:], off.get("X")[:, J:]
    from_first = C[0] == P[0]
    assert np.all(from_first | (C[0] == P[1]))
    np.testing.assert_array_equal(C[1], np.where(from_first, P[1], P[0]))
    assert 0.3 < from_first.mean() < 0.7


def test_no_crossover_copies_parents(problem):
    rng = np.random.default_rng(1)
    pop = ScheduleSampling(seeded=False).do(problem, 2, random_state=rng)
    off = ScheduleCrossover(0.0, 0.0).do(problem, pop, np.array([[0, 1]]), random_state=rng)
    np.testing.assert_array_equal(off.get("X"), pop.get("X"))


@given(seed=st.integers(0, 2**32 - 1), ro=st.floats(0, 1), rb=st.floats(0, 1))
def test_mutation_keeps_chromosomes_valid(problem, seed, ro, rb):
    rng = np.random.default_rng(seed)
    pop = ScheduleSampling(seeded=False).do(problem, 8, random_state=rng)
    before = pop.get("X").copy()
    mutated = ScheduleMutation(ro, rb, cluster_rate=0.0).do(problem, pop, random_state=rng)
    _valid(problem, mutated.get("X"))
    if ro == 0 and rb == 0:
        np.testing.assert_array_equal(mutated.get("X"), before)


def test_mutation_rates(problem):
    rng = np.random.default_rng(0)
    pop = ScheduleSampling(seeded=False).do(problem, 200, random_state=rng)
    before = pop.get("X").copy()
    J = problem.n_jobs
    after = ScheduleMutation(order_rate=0.0, blacklist_rate=0.1, cluster_rate=0.0).do(
        problem, pop, random_state=rng).get("X")
    np.testing.assert_array_equal(after[:, :J], before[:, :J])
    changed = (after[:, J:] != before[:, J:]).mean()
    assert 0.08 < changed < 0.11  # positions are drawn with replacement, so a little under 0.1


def test_sampling_seeds_submit_order_and_grid(problem):
    rng = np.random.default_rng(0)
    X = ScheduleSampling(seeded=True, heuristics=False).do(problem, 40, random_state=rng).get("X")
    _valid(problem, X)
    J = problem.n_jobs
    orders, bls = split(X, J, problem.n_clusters)
    assert np.array_equal(orders[0], np.arange(J)) and not bls[0].any()
    n_seeded = int(np.sum(np.all(orders == np.arange(J), axis=1)))
    assert n_seeded == 20  # half the population (27 grid points available)
    grid = seed_blacklists(J, problem.federation.speed)
    assert grid.shape == (27, J, 4) and not grid[:, :, 3].any()
    for b in bls[:n_seeded]:
        assert any(np.array_equal(b, g) for g in grid)


def _naive_ranks(F):
    """Non-domination rank of each row of ``F`` by repeated peeling (minimisation)."""
    F = np.asarray(F)
    rank = np.full(len(F), -1)
    r = 0
    while (rank < 0).any():
        left = np.flatnonzero(rank < 0)
        for i in left:
            if not any(np.all(F[j] <= F[i]) and np.any(F[j] < F[i]) for j in left):
                rank[i] = r
        r += 1
    return rank


@pytest.mark.parametrize("n, wide", [(10, False), (40, False), (40, True)])
def test_selected_seeds_are_the_best_ranked_candidates(problem, wide_problem, n, wide):
    """select=True keeps whole non-domination fronts of all seed pairs, best first."""
    problem = wide_problem if wide else problem
    J, K = problem.n_jobs, problem.n_clusters
    sampling = ScheduleSampling(select=True)
    X = sampling.do(problem, n, random_state=np.random.default_rng(3)).get("X")
    _valid(problem, X)
    orders = sampling.seed_orders(problem, J)
    grid = seed_blacklists(J, problem.federation.speed)
    grid = np.concatenate([grid, ScheduleSampling._fitted(problem, grid)])
    names = list({o.tobytes(): name for name, o in reversed(orders.items())}.values())
    cand = np.array([np.concatenate([orders[m], b.reshape(-1)]) for m in names for b in grid])
    F = np.array([[s.makespan, s.energy] for s in (
        moga.evaluate(problem.jobset, problem.federation, c[:J].astype(int), c[J:].reshape(J, K))
        for c in cand)])
    rank = _naive_ranks(F)
    seeded = X[:n // 2]
    picked = [int(np.flatnonzero(np.all(cand == row, axis=1))[0]) for row in seeded]
    assert len(set(picked)) == n // 2
    worst = rank[picked].max()
    # Every candidate of a better front than the worst one kept is kept.
    assert set(np.flatnonzero(rank < worst)) <= set(picked)
    # The other half is random, as without selection.
    assert not any(np.all(cand == row, axis=1).any() for row in X[n // 2:])
    again = sampling.do(problem, n, random_state=np.random.default_rng(3)).get("X")
    np.testing.assert_array_equal(X, again)


@pytest.mark.parametrize("wide, fit", [(False, True), (True, True), (True, False)])
def test_seed_selection_counts_its_decodes(problem, wide_problem, wide, fit):
    problem = wide_problem if wide else problem
    fresh = SchedulingProblem(problem.jobset, problem.federation)
    ScheduleSampling(select=True, fit=fit).do(fresh, 10, random_state=np.random.default_rng(0))
    n_orders = len({o.tobytes() for o in ScheduleSampling().seed_orders(fresh, fresh.n_jobs).values()})
    grid = seed_blacklists(fresh.n_jobs, fresh.federation.speed)
    n_fitted = len(ScheduleSampling._fitted(fresh, grid))
    assert (n_fitted > 0) == wide  # only wide jobs can void a grid blacklist
    assert fresh.n_decoded == n_orders * (27 + n_fitted * fit)


@given(seed=st.integers(0, 2**32 - 1), J=st.integers(1, 12), K=st.integers(1, 4),
       n_bl=st.integers(1, 4))
def test_fitted_blacklists_equal_their_plain_python_twin(seed, J, K, n_bl):
    rng = np.random.default_rng(seed)
    nodes = rng.integers(1, 40, K)
    tasks = rng.integers(1, nodes.sum() + 1, J)
    # Blacklists on a coarse grid, so that some rows are void and some are not.
    bls = rng.integers(0, 5, (n_bl, J, K)) / 4.0
    greenest = rng.permutation(K)
    fitted = fitted_blacklists(bls, tasks, nodes, greenest)
    voiding = [b for b in bls
               if any(naive_fitted_row(b[j], tasks[j], nodes, greenest) is not None for j in range(J))]
    assert fitted.shape == (len(voiding), J, K)
    for b, f in zip(voiding, fitted, strict=True):
        assert np.all((f >= 0) & (f <= b))  # a fitted row only opens clusters
        allow = nodes - np.floor(f * nodes).astype(int)
        for j in range(J):
            want = naive_fitted_row(b[j], tasks[j], nodes, greenest)
            if want is None:
                np.testing.assert_array_equal(f[j], b[j])
            else:
                assert allow[j].tolist() == want and allow[j].sum() == tasks[j]


def test_fitted_blacklists_open_the_greenest_barred_cluster_first():
    # Clusters of 10, 20 and 30 nodes, greenest first: 2, 1, 0. The grid row bars
    # clusters 0 and 1; a 35-task job needs 5 more nodes than cluster 2's 30.
    row = np.array([[1.0, 1.0, 0.0], [1.0, 1.0, 0.0]])
    out = fitted_blacklists(row[None], [35, 30], [10, 20, 30], [2, 1, 0])
    allow = np.array([10, 20, 30]) - np.floor(out[0] * [10, 20, 30])
    assert allow.tolist() == [[0, 5, 30], [0, 0, 30]]
    assert fitted_blacklists(row[None], [30, 1], [10, 20, 30], [2, 1, 0]).shape == (0, 2, 3)
    with pytest.raises(ValueError, match="greenest must be an order of the 3 clusters"):
        fitted_blacklists(row[None], [35, 30], [10, 20, 30], [2, 1])
    with pytest.raises(ValueError, match=r"blacklists must have shape \(B, 2, 3\)"):
        fitted_blacklists(row, [35, 30], [10, 20, 30], [2, 1, 0])


def test_sampling_with_initial_individuals(problem):
    J, K = problem.n_jobs, problem.n_clusters
    extra = join(np.arange(J)[::-1], np.full((J, K), 0.25))
    X = ScheduleSampling(initial=extra).do(problem, 6, random_state=np.random.default_rng(0)).get("X")
    np.testing.assert_array_equal(X[0], extra)
    with pytest.raises(ValueError, match="initial individuals must have"):
        ScheduleSampling(initial=extra[:-1]).do(problem, 6, random_state=np.random.default_rng(0))


def test_duplicate_elimination(problem):
    rng = np.random.default_rng(0)
    X = ScheduleSampling(seeded=False).do(problem, 5, random_state=rng).get("X")
    pop = Population.new("X", np.vstack([X, X[[1, 3]], X[[1]]]))
    other = Population.new("X", X[[4]])
    kept = ScheduleDuplicateElimination().do(pop, other)
    np.testing.assert_array_equal(kept.get("X"), X[[0, 1, 2, 3]])
    y = X[[0]].copy()
    y[0, -1] = np.nextafter(y[0, -1], 2.0)
    assert len(ScheduleDuplicateElimination().do(Population.new("X", np.vstack([X[[0]], y])))) == 2


def test_operator_argument_errors():
    with pytest.raises(ValueError, match="prob_order"):
        ScheduleCrossover(prob_order=1.5)
    with pytest.raises(ValueError, match="'uniform', 'rows' or 'blend'"):
        ScheduleCrossover(blacklist="sbx")
    with pytest.raises(ValueError, match="order_rate"):
        ScheduleMutation(order_rate=-0.1)
    with pytest.raises(ValueError, match="levels"):
        seed_blacklists(3, [1.0, 2.0], levels=(0.0, 2.0))


@given(seed=st.integers(0, 2**32 - 1), J=st.integers(1, 30), n_moves=st.integers(0, 40))
def test_order_moves_equal_their_plain_python_twin(seed, J, n_moves):
    from naive import naive_order_move

    from moga.evolution.operators import _apply_order_moves

    rng = np.random.default_rng(seed)
    P = 3
    orders = np.array([rng.permutation(J) for _ in range(P)], dtype=np.int64)
    rows = rng.integers(0, P, n_moves)
    kinds = rng.integers(0, 3, n_moves)
    i = rng.integers(0, J, n_moves)
    j = rng.integers(0, J, n_moves)
    expected = [list(o) for o in orders]
    for s in range(n_moves):
        expected[rows[s]] = naive_order_move(expected[rows[s]], kinds[s], i[s], j[s])
    _apply_order_moves(orders, rows, kinds, i, j)
    assert orders.tolist() == expected
    assert all(sorted(o) == list(range(J)) for o in orders.tolist())


@given(seed=st.integers(0, 2**32 - 1), J=st.integers(1, 20), K=st.integers(1, 4),
       n_moves=st.integers(0, 10))
def test_cluster_moves_equal_their_plain_python_twin(seed, J, K, n_moves):
    from naive import naive_cluster_move

    from moga.evolution.operators import _apply_cluster_moves

    rng = np.random.default_rng(seed)
    P = 2
    orders = np.array([rng.permutation(J) for _ in range(P)])
    bls = rng.random((P, J, K))
    X = join(orders, bls)
    rows = rng.integers(0, P, n_moves)
    cluster = rng.integers(0, K, n_moves)
    a = rng.integers(0, J + 1, (n_moves, 2))
    lo, hi = a.min(axis=1), a.max(axis=1)
    level = rng.choice([0.0, 0.5, 1.0], n_moves)
    expected = [b.tolist() for b in bls]
    for s in range(n_moves):
        expected[rows[s]] = naive_cluster_move(orders[rows[s]], expected[rows[s]], cluster[s],
                                               lo[s], hi[s], level[s])
    _apply_cluster_moves(X, J, K, rows, cluster, lo, hi, level)
    assert X[:, J:].reshape(P, J, K).tolist() == expected


def test_mutation_keeps_permutations_and_levels(problem):
    J, K = problem.n_jobs, problem.n_clusters
    rng = np.random.default_rng(1)
    X = join(np.array([rng.permutation(J) for _ in range(50)]), rng.random((50, J, K)))
    m = ScheduleMutation(order_rate=0.05, blacklist_rate=0.0, cluster_rate=1.0)
    Y = m._do(problem, X, random_state=np.random.default_rng(2))
    orders = np.rint(Y[:, :J]).astype(int)
    assert all(sorted(o) == list(range(J)) for o in orders)
    changed = Y[:, J:] != X[:, J:]
    assert changed.any() and np.isin(Y[:, J:][changed], [0.0, 0.5, 1.0]).all()
    again = m._do(problem, X, random_state=np.random.default_rng(2))
    np.testing.assert_array_equal(Y, again)  # one seed, one result
    with pytest.raises(ValueError, match="order_moves"):
        ScheduleMutation(order_moves=("scramble",))


def test_sampling_seeds_every_heuristic_order(problem):
    from moga.evolution.seeding import heuristic_orders

    J, K = problem.n_jobs, problem.n_clusters
    orders = heuristic_orders(problem.jobset, problem.federation, problem.model)
    assert list(orders)[0] == "FCFS" and "EASY" in orders and len(orders) >= 5
    X = ScheduleSampling(seeded=True).do(problem, 60, random_state=np.random.default_rng(0)).get("X")
    got, bls = split(X, J, K)
    for name, order in orders.items():
        rows = np.flatnonzero(np.all(got == order, axis=1))
        assert rows.size >= 1, name
        assert not bls[rows[0]].any(), name  # each with the empty blacklist first
    assert len(X) == 60 and sum(np.all(got == o, axis=1).sum() for o in orders.values()) == 30


@given(seed=st.integers(0, 2**32 - 1), J=st.integers(1, 25), n=st.integers(1, 6))
def test_prefix_crossover_equals_its_plain_python_twin(seed, J, n):
    from naive import naive_prefix_crossover

    rng = np.random.default_rng(seed)
    X = np.array([[rng.permutation(J) for _ in range(n)] for _ in range(2)], dtype=float)
    cuts = np.sort(rng.integers(0, J + 1, (2, n, 2)), axis=2)
    do_order = rng.random(n) < 0.8
    out = np.empty_like(X)
    _order_crossover_into(X.reshape(2 * n, J), _pairs(n), J, cuts, do_order, out, True)
    for m in range(n):
        for c in range(2):
            if not do_order[m]:
                assert out[c, m].tolist() == X[c, m].tolist()
                continue
            expected = naive_prefix_crossover(list(X[c, m]), list(X[1 - c, m]), cuts[c, m, 1])
            assert out[c, m].tolist() == expected


def test_prefix_crossover_example():
    from naive import naive_prefix_crossover

    assert naive_prefix_crossover([0, 1, 2, 3, 4], [4, 3, 2, 1, 0], 2) == [0, 1, 4, 3, 2]
    with pytest.raises(ValueError, match="order crossover"):
        ScheduleCrossover(order="pmx")


@pytest.mark.parametrize("blacklist", ["uniform", "rows", "blend"])
@pytest.mark.parametrize("order", ["ox1", "prefix"])
def test_crossover_of_parents_in_place_equals_crossover_of_gathered_parents(problem, blacklist,
                                                                            order):
    """``children(X, parents)`` reads the parents where they are: the same children and
    draws as ``_do`` on the gathered parents ``X[parents.T]``."""
    rng = np.random.default_rng(3)
    pop = ScheduleSampling(seeded=False)._do(problem, 12, random_state=rng)
    parents = rng.integers(0, 12, (7, 2))
    xo = ScheduleCrossover(prob_order=0.7, prob_blacklist=0.6, blacklist=blacklist, order=order)
    a = xo._do(problem, pop[parents.T], random_state=np.random.default_rng(5))
    rs = np.random.default_rng(5)
    b = xo.children(problem, pop, parents, rs)
    assert np.array_equal(a, b)
    r0 = np.random.default_rng(5)
    xo._do(problem, pop[parents.T], random_state=r0)
    assert rs.random() == r0.random()  # the same number of draws


def test_mutation_in_place_equals_mutation_into_a_new_array(problem):
    rng = np.random.default_rng(4)
    X = ScheduleSampling(seeded=False)._do(problem, 10, random_state=rng)
    mut = ScheduleMutation(order_rate=0.2, blacklist_rate=0.2, cluster_rate=0.5)
    new = mut._do(problem, X, random_state=np.random.default_rng(6))
    assert not np.array_equal(new, X)
    same = mut._do(problem, X, random_state=np.random.default_rng(6), out=X)
    assert same is X and np.array_equal(X, new)


class _Dims:
    """The two sizes the operators read off a problem."""

    def __init__(self, J, K):
        self.n_jobs, self.n_var = J, J + J * K


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), J=st.integers(1, 25), K=st.integers(0, 4),
       n=st.integers(1, 12), rates=st.sampled_from([(None, None, 0.2), (0.3, 0.2, 0.7),
                                                     (1.0, 0.0, 1.0), (0.0, 1.0, 0.0)]),
       moves=st.sampled_from([("swap",), ("insert", "invert"), ("swap", "insert", "invert")]),
       seg=st.sampled_from([None, 1, 3]), in_place=st.booleans())
def test_mutation_equals_its_plain_python_twin(seed, J, K, n, rates, moves, seg, in_place):
    from naive import naive_mutation

    from moga.evolution.operators import ORDER_MOVES

    rng = np.random.default_rng(seed)
    X = join(np.array([rng.permutation(J) for _ in range(n)]), rng.random((n, J, K)))
    mut = ScheduleMutation(*rates[:2], order_moves=moves, max_segment=seg, cluster_rate=rates[2])
    twin = np.random.default_rng(seed + 1)
    want = naive_mutation(X.tolist(), J, K, [ORDER_MOVES[m] for m in moves],
                          1 / J if rates[0] is None else rates[0],
                          1 / J if rates[1] is None else rates[1],
                          max(2, J // 20) if seg is None else seg, rates[2], twin)
    rs = np.random.default_rng(seed + 1)
    got = mut._do(_Dims(J, K), X, random_state=rs, out=X if in_place else None)
    assert got.tolist() == want
    assert (got is X) == in_place
    assert rs.random() == twin.random()  # the same draws
