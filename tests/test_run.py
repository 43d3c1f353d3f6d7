"""NSGA-II runs: reproducibility, fronts, results, and the operators inside stock pymoo."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pymoo.algorithms.moo.nsga2 import NSGA2
from pymoo.optimize import minimize

import moga
from moga.evolution.operators import (
    ScheduleCrossover,
    ScheduleDuplicateElimination,
    ScheduleMutation,
    ScheduleSampling,
)
from moga.evolution.problem import SchedulingProblem, split
from moga.metrics import knee_index, normalized_hypervolume


@pytest.fixture(scope="module")
def setup():
    fed = moga.Federation.preset()
    js = moga.load_default().jobset(start=100, n_jobs=80, federation=fed, seed=2)
    return js, fed


@pytest.fixture(scope="module")
def result(setup):
    js, fed = setup
    return moga.run(js, fed, pop_size=24, n_gen=12, seed=7)


def test_same_seed_is_bit_identical(setup, result):
    js, fed = setup
    again = moga.run(js, fed, pop_size=24, n_gen=12, seed=7)
    np.testing.assert_array_equal(result.F, again.F)
    np.testing.assert_array_equal(result.X, again.X)
    np.testing.assert_array_equal(result.history["hv"], again.history["hv"])
    other = moga.run(js, fed, pop_size=24, n_gen=12, seed=8)
    assert not np.array_equal(result.X, other.X)


def test_front_is_mutually_non_dominated(result):
    F = result.F
    for i in range(len(F)):
        dominated = np.all(F <= F[i], axis=1) & np.any(F < F[i], axis=1)
        assert not dominated.any()


def test_front_dominates_or_contains_the_seeded_submit_order(result):
    ref = result.reference
    assert np.any(np.all(result.F <= ref, axis=1))


def test_front_members_decode_to_their_objectives(result):
    for i in range(len(result.F)):
        s = result.schedule(i)
        assert (s.makespan, s.energy) == tuple(result.F[i])
    with pytest.raises(IndexError):
        result.schedule(len(result.F))


def test_history_and_summary(result):
    h = result.history
    assert h["n_gen"].tolist() == list(range(1, 13))
    assert np.all(np.diff(h["hv"]) >= -1e-12)  # elitist: the front never loses hypervolume
    assert h["hv"][-1] == pytest.approx(result.hv)
    assert result.hv >= normalized_hypervolume(result.reference, result.reference)
    s = result.summary()
    assert s["front_size"] == len(result.F) and s["n_evals"] == result.n_evals
    assert 0 <= s["knee"] < len(result.F)
    np.testing.assert_allclose(result.ref_point, 1.1 * result.reference)


def test_params_from_toml_and_overrides(setup, tmp_path):
    js, fed = setup
    p = tmp_path / "ga.toml"
    p.write_text(moga.GAParams(pop_size=10, n_gen=3, blacklist_crossover="blend").to_toml())
    params = moga.GAParams.from_toml(p)
    assert params.blacklist_crossover == "blend" and params.pop_size == 10
    r = moga.run(js, fed, params=p, n_gen=2, seed=1)
    assert r.params.n_gen == 2 and r.params.pop_size == 10 and len(r.history["hv"]) == 2
    with pytest.raises(ValueError, match="unknown GA parameter"):
        moga.GAParams.from_dict({"pop": 3})
    with pytest.raises(ValueError, match="pop_size"):
        moga.GAParams(pop_size=1)


def test_operators_work_in_stock_pymoo(setup):
    js, fed = setup
    problem = SchedulingProblem(js, fed, model="at_start", objectives=("makespan", "flowtime"))
    algo = NSGA2(pop_size=16, sampling=ScheduleSampling(), crossover=ScheduleCrossover(),
                 mutation=ScheduleMutation(), eliminate_duplicates=ScheduleDuplicateElimination())
    res = minimize(problem, algo, ("n_gen", 5), seed=3)
    orders, bls = split(res.X, len(js), fed.n_clusters)
    assert np.all(np.sort(orders, axis=1) == np.arange(len(js)))
    s = moga.evaluate(js, fed, orders[0], bls[0], model="at_start")
    assert (s.makespan, s.flowtime) == tuple(res.F[0])


def test_problem_rejects_bad_objectives(setup):
    js, fed = setup
    with pytest.raises(ValueError, match="objectives"):
        SchedulingProblem(js, fed, objectives=("makespan", "cost"))
    with pytest.raises(ValueError, match="order \\+"):
        split(np.zeros(7), 3, 4)


def test_knee_index():
    F = np.array([[0.0, 1.0], [0.1, 0.3], [0.5, 0.2], [1.0, 0.0]])
    assert knee_index(F) == 1
    # Two points scale to (0, 1) and (1, 0), equally near the ideal point: the first wins.
    assert knee_index(F[[0, 3]]) == 0 and knee_index(F[[3, 0]]) == 0
    assert knee_index(F[[2]]) == 0


def test_stock_pymoo_operators_need_the_repair_and_say_so(setup):
    from pymoo.algorithms.moo.nsga2 import NSGA2
    from pymoo.optimize import minimize

    from moga.evolution import ScheduleRepair

    js, fed = setup
    problem = SchedulingProblem(js, fed)
    with pytest.raises(ValueError, match="not a permutation.*ScheduleRepair"):
        minimize(problem, NSGA2(pop_size=6), ("n_gen", 2), seed=1)
    res = minimize(problem, NSGA2(pop_size=6, repair=ScheduleRepair()), ("n_gen", 3), seed=1)
    orders, bls = problem.split(np.atleast_2d(res.X))
    assert all(sorted(o) == list(range(len(js))) for o in orders)
    assert np.all((bls >= 0) & (bls <= 1))


def test_repair_keeps_valid_individuals_and_ranks_the_others():
    from moga.model.chromosome import repair

    X = np.array([[2.0, 0.0, 1.0, 0.3, 1.7], [0.4, 0.1, 0.9, -1.0, np.nan]])
    R = repair(X[:, :3], 3, 0)
    np.testing.assert_array_equal(R[0], [2, 0, 1])  # already a permutation: kept
    np.testing.assert_array_equal(R[1], [1, 0, 2])  # keys 0.4, 0.1, 0.9: job 1 first
    B = repair(np.array([[1.0, 0.0, 1.5, -0.5]]), 2, 1)
    np.testing.assert_array_equal(B[0], [1, 0, 1.0, 0.0])


def test_time_limit_and_stagnation_stop_a_run(setup):
    js, fed = setup
    r = moga.run(js, fed, pop_size=10, n_gen=10_000, time_limit=0.5)
    assert r.info["stopped_by"] == "time limit" and r.history["n_gen"][-1] < 10_000
    r = moga.run(js, fed, pop_size=10, n_gen=500, stagnation=2, stagnation_tol=10.0)
    assert r.info["stopped_by"] == "stagnation" and r.history["n_gen"][-1] <= 4
    r = moga.run(js, fed, pop_size=10, n_gen=4, stagnation=50)
    assert r.info["stopped_by"] == "generations"
    for bad in ({"time_limit": 0}, {"time_limit": float("nan")}, {"stagnation": 0}):
        with pytest.raises(ValueError, match="time_limit|stagnation"):
            moga.run(js, fed, pop_size=10, n_gen=2, **bad)


def test_a_run_that_cannot_make_a_new_child_says_so(setup):
    js, fed = setup
    # Three jobs without a blacklist have 6 orders: the population soon holds them all.
    r = moga.run(js.take([0, 1, 2]), fed, pop_size=10, n_gen=200, use_blacklist=False,
                 stagnation=500)
    assert r.history["n_gen"][-1] < 200
    assert r.info["stopped_by"] == "no new child"


def test_easy_start_order_in_order_reproduces_easy_in_release_mode_only(default_fed):
    from moga.baselines import heuristic

    tr = moga.load_default()
    for start in (0, 1000, 2000):
        js = tr.jobset(start=start, n_jobs=400, federation=default_fed, batch=False)
        easy = heuristic(js, default_fed, "EASY")
        order = np.lexsort((np.arange(len(js)), easy.start))
        s = moga.evaluate(js, default_fed, order)
        # Jobs arrive over time: each job's EASY start is also the earliest the in-order
        # decoder can give it after the jobs started before it, so the schedules agree.
        np.testing.assert_array_equal(s.start, easy.start)
    # In batch mode they do not: a job that EASY held back (it would have delayed the
    # blocked head's reservation) fits earlier behind the same predecessors in order, and
    # the in-order decoder starts it then, which shifts every later job.
    js = tr.jobset(start=2000, n_jobs=1000, federation=default_fed)
    easy = heuristic(js, default_fed, "EASY", "at_start")
    order = np.lexsort((np.arange(len(js)), easy.start))
    s = moga.evaluate(js, default_fed, order, model="at_start")
    earlier = s.start < easy.start - 1e-9
    assert earlier.any() and not np.array_equal(s.start, easy.start)
    # The EASY decoder for MOGA reproduces EASY from the submit order, in every mode.
    e2 = moga.evaluate(js, default_fed, np.arange(len(js)), model="at_start", backfill="easy")
    np.testing.assert_array_equal(e2.start, easy.start)


def test_easy_moga_starts_from_easy_and_covers_it(setup):
    from moga.baselines import heuristic

    js, fed = setup
    easy = heuristic(js, fed, "EASY")
    r = moga.run(js, fed, pop_size=12, n_gen=4, backfill="easy", seed=3)
    assert r.backfill == "easy" and r.summary()["backfill"] == "easy"
    np.testing.assert_allclose(r.reference, [easy.makespan, easy.energy])
    assert np.any(np.all(r.F <= r.reference * (1 + 1e-12), axis=1))  # EASY weakly dominated
    s = r.schedule(0)
    assert s.backfill == "easy" and (s.makespan, s.energy) == tuple(r.F[0])


def test_seeded_moga_front_covers_the_heuristics_in_release_mode(default_fed):
    from moga.baselines import heuristic

    js = moga.load_default().jobset(start=500, n_jobs=300, federation=default_fed, batch=False)
    r = moga.run(js, default_fed, pop_size=40, n_gen=5, seed=2)
    for name in ("FCFS", "EASY"):
        h = heuristic(js, default_fed, name)
        point = np.array([h.makespan, h.energy])
        assert np.any(np.all(r.F <= point * (1 + 1e-12), axis=1)), name


def test_allocation_blacklist_allows_exactly_the_allocation():
    from moga.evolution.seeding import allocation_blacklist

    nodes = np.array([1, 3, 7, 48, 96])
    alloc = np.array([[0, 1, 2, 48, 95], [1, 3, 7, 0, 1]])
    bl = allocation_blacklist(alloc, nodes)
    np.testing.assert_array_equal(nodes - np.floor(bl * nodes), alloc)
    with pytest.raises(ValueError, match="alloc"):
        allocation_blacklist(alloc[:, :3], nodes)
    with pytest.raises(ValueError, match="alloc entries"):
        allocation_blacklist(alloc + 1, nodes)


def _seed_matches_or_starts_a_job_earlier(js, fed, name, model):
    """Decode heuristic ``name``'s allocation seed in order against the heuristic itself:
    the same schedule, or the first job (in the seed's order) whose start differs starts
    *earlier* than the heuristic started it (a job EASY held back for a reservation)."""
    from moga.baselines import heuristic
    from moga.evolution.seeding import heuristic_seeds

    order, bl = heuristic_seeds(js, fed, model, names=(name,))[name]
    h = heuristic(js, fed, name, model)
    s = moga.evaluate(js, fed, order, bl, model=model)
    if np.array_equal(s.start, h.start):
        np.testing.assert_array_equal(s.alloc, h.alloc)
        assert (s.makespan, s.energy) == (h.makespan, h.energy)
        return True
    differ = order[s.start[order] != h.start[order]]
    assert s.start[differ[0]] < h.start[differ[0]]
    return False


@pytest.mark.parametrize("name", ["EASY", "EASY-greenest", "FCFS-greenest"])
@pytest.mark.parametrize("model", ["fluid", "at_start"])
def test_allocation_seeds_reproduce_the_heuristics_on_the_bundled_month(default_fed, name,
                                                                        model):
    tr = moga.load_default()
    exact = [_seed_matches_or_starts_a_job_earlier(
        tr.jobset(start=start, n_jobs=500, federation=default_fed, batch=batch), default_fed,
        name, model) for start in (0, 1500) for batch in (True, False)]
    assert all(exact), exact


def test_allocation_seeds_match_or_start_a_job_earlier_on_random_instances():
    from hypothesis import given
    from hypothesis import strategies as st

    from moga.model.jobset import JobSet
    from moga.model.platform import Federation

    seen = {True: 0, False: 0}

    @given(seed=st.integers(0, 2**32 - 1), J=st.integers(2, 25),
           name=st.sampled_from(["EASY", "EASY-greenest", "FCFS-greenest"]),
           model=st.sampled_from(["fluid", "at_start"]))
    def check(seed, J, name, model):
        rng = np.random.default_rng(seed)
        nodes = rng.integers(1, 6, 3)
        fed = Federation.from_clusters([
            {"name": n, "nodes": int(c), "speed": v, "power_busy": p, "power_idle": 10.0,
             "link": 50.0}
            for n, c, v, p in zip("abc", nodes, (1.6, 1.0, 0.8), (290.0, 70.0, 40.0),
                                  strict=True)])
        js = JobSet.from_arrays(release=np.sort(rng.integers(0, 30, J)).astype(float),
                                tasks=rng.integers(1, int(fed.nodes.sum()) + 1, J),
                                runtime=rng.integers(1, 40, J).astype(float),
                                sigma=rng.uniform(0, 1, J), bw=rng.uniform(0, 40, J))
        seen[_seed_matches_or_starts_a_job_earlier(js, fed, name, model)] += 1

    check()
    assert seen[True] > 0


def test_seeded_moga_front_covers_every_heuristic_in_batch_mode(default_fed):
    from moga.baselines import heuristic

    js = moga.load_default().jobset(start=1500, n_jobs=400, federation=default_fed)
    r = moga.run(js, default_fed, pop_size=40, n_gen=3, seed=2)
    for name in ("FCFS", "EASY", "FCFS-greenest", "EASY-greenest"):
        h = heuristic(js, default_fed, name)
        point = np.array([h.makespan, h.energy])
        assert np.any(np.all(r.F <= point * (1 + 1e-12), axis=1)), name


def test_old_keywords_still_work_with_a_warning(setup):
    js, fed = setup
    with pytest.warns(DeprecationWarning, match="use_blacklist"):
        r = moga.run(js, fed, pop_size=6, n_gen=2, blacklist=False)
    assert not r.use_blacklist and r.name == "MOGA without blacklist"
    X0 = moga.model.join(np.arange(len(js)), np.zeros((len(js), fed.n_clusters)))
    with pytest.warns(DeprecationWarning, match="initial"):
        moga.run(js, fed, pop_size=6, n_gen=2, extra=X0[None, :])
    with pytest.raises(TypeError, match="unexpected keyword"):
        moga.run(js, fed, pop_size=6, n_gen=2, colour="red")


@given(seed=st.integers(0, 2**32 - 1), sizes=st.lists(st.integers(1, 12), min_size=1, max_size=4))
def test_reference_front_is_the_distinct_non_dominated_union(seed, sizes):
    from moga.metrics import reference_front

    rng = np.random.default_rng(seed)
    fronts = [np.round(rng.random((n, 2)) * 6) / 6 for n in sizes]  # coarse: ties, equal rows
    fronts.append(fronts[0].copy())  # a front merged twice, as a stored reference is
    pts = {tuple(p) for f in fronts for p in f}
    twin = {p for p in pts
            if not any(q != p and all(a <= b for a, b in zip(q, p, strict=True)) for q in pts)}
    got = reference_front(fronts)
    assert len(got) == len(twin)
    assert {tuple(p) for p in got} == twin


def test_missing_hypervolume_by_range_by_hand_and_in_sum():
    from moga.metrics import missing_hypervolume_by_range, normalized_hypervolume

    ref = np.array([[0.2, 0.8], [0.6, 0.3]])  # dominated area 0.12 + 0.40 within (1.1, 1.1)
    run = np.array([[0.4, 0.8], [0.6, 0.5]])  # 0.06 + 0.30
    got = missing_hypervolume_by_range(run, ref, [1.0, 1.0], parts=2)
    np.testing.assert_allclose(got, [100 * 0.06 / 0.52, 100 * 0.10 / 0.52])
    rng = np.random.default_rng(0)
    for _ in range(20):
        base = rng.uniform(1, 3, 2)
        R = rng.uniform(0.2, 1.0, (12, 2)) * base
        F = R[:6] * rng.uniform(1.0, 1.2, (6, 2))
        R = np.vstack([R, F])
        parts = missing_hypervolume_by_range(F, R, base)
        hv_r, hv_f = normalized_hypervolume(R, base), normalized_hypervolume(F, base)
        assert parts.sum() == pytest.approx(100 * (hv_r - hv_f) / hv_r, abs=1e-9)
        assert np.all(parts >= -1e-9)  # R holds F: F misses, never adds
    with pytest.raises(ValueError, match="two objectives"):
        missing_hypervolume_by_range(np.ones((2, 3)), np.ones((2, 3)), np.ones(3))


@given(seed=st.integers(0, 2**32 - 1), sizes=st.lists(st.integers(1, 8), min_size=1, max_size=5),
       percentile=st.floats(1.0, 100.0))
def test_attainment_surface_equals_its_twin(seed, sizes, percentile):
    from moga.metrics import attainment_surface

    rng = np.random.default_rng(seed)
    fronts = [np.round(rng.random((n, 2)) * 6) / 6 for n in sizes]  # coarse: ties
    k = int(np.ceil(percentile * len(fronts) / 100 - 1e-9))

    def attained(z):  # runs whose front weakly dominates z
        return sum(bool(np.any(np.all(f <= z, axis=1))) for f in fronts)

    # The surface's corners lie on the grid of the fronts' coordinates.
    xs = sorted({p[0] for f in fronts for p in f})
    ys = sorted({p[1] for f in fronts for p in f})
    grid = [(x, y) for x in xs for y in ys if attained(np.array([x, y])) >= k]
    twin = {p for p in grid
            if not any(q != p and q[0] <= p[0] and q[1] <= p[1] for q in grid)}
    got = attainment_surface(fronts, percentile)
    assert {tuple(p) for p in got} == twin
    assert np.all(np.diff(got[:, 0]) > 0)


def test_attainment_surface_refuses_bad_input():
    from moga.metrics import attainment_surface

    with pytest.raises(ValueError, match="non-empty front"):
        attainment_surface([])
    with pytest.raises(ValueError, match="non-empty front"):
        attainment_surface([np.ones((2, 2)), np.empty((0, 2))])
    with pytest.raises(ValueError, match=r"every front must be \(n, 2\)"):
        attainment_surface([np.ones((2, 2)), np.ones((2, 3))])
    with pytest.raises(ValueError, match="percentile"):
        attainment_surface([np.ones((2, 2))], 0)
    with pytest.raises(ValueError, match="percentile"):
        attainment_surface([np.ones((2, 2))], 101)
