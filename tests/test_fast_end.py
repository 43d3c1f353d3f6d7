"""The fast-end local search: neighbours of the fastest member on its critical jobs."""

from __future__ import annotations

import numpy as np
import pytest

import moga
from moga.evolution.fast_end import CRITICAL_SHARE, FastEndSearch
from moga.evolution.problem import SchedulingProblem
from moga.evolution.survival import survive
from moga.model.chromosome import split


@pytest.fixture(scope="module")
def setup():
    fed = moga.Federation.preset("default")
    js = moga.load_default().jobset(n_jobs=150, federation=fed)
    problem = SchedulingProblem(js, fed)
    rng = np.random.default_rng(0)
    X = np.hstack([np.argsort(rng.random((12, 150)), axis=1).astype(float),
                   rng.random((12, 150 * 4)) * 0.7])
    pop = survive(X, problem.decode(X)[0], 12, np.random.default_rng(0))
    return js, fed, problem, pop


def test_neighbours_change_one_critical_job_of_the_fastest_member(setup):
    js, fed, problem, pop = setup
    rows = FastEndSearch(30)(problem, pop, np.random.default_rng(1))
    assert rows.shape == (30, pop.X.shape[1])
    i = int(np.argmin(pop.F[:, 0]))
    order, bl = split(pop.X[i], 150, 4)
    fin = moga.evaluate(js, fed, order, bl).finish
    late = set(np.argsort(-fin, kind="stable")[:max(1, int(CRITICAL_SHARE * 150))].tolist())
    for row in rows:
        o, b = split(row, 150, 4)
        changed_bl = np.flatnonzero(np.any(b != bl, axis=1))
        if changed_bl.size:  # unblock or halve: one critical job's row, nothing else
            assert changed_bl.size == 1 and int(changed_bl[0]) in late
            np.testing.assert_array_equal(o, order)
            assert np.all(b[changed_bl[0]] <= bl[changed_bl[0]])
        elif not np.array_equal(o, order):  # advance: a critical job moved earlier
            moved = [j for j in late if np.flatnonzero(o == j)[0] < np.flatnonzero(order == j)[0]]
            assert len(moved) == 1
            rest_o = o[o != moved[0]]
            np.testing.assert_array_equal(rest_o, order[order != moved[0]])


def test_off_without_makespan_or_blacklist_or_k(setup):
    js, fed, problem, pop = setup
    assert FastEndSearch(0)(problem, pop, np.random.default_rng(0)) is None
    p2 = SchedulingProblem(js, fed, objectives=("energy", "flowtime"))
    assert FastEndSearch(3)(p2, pop, np.random.default_rng(0)) is None
    with pytest.raises(ValueError, match="fast_end"):
        FastEndSearch(-1)
    with pytest.raises(ValueError, match="fast_end"):
        moga.GAParams(fast_end=-2)


def test_runs_with_it_repeat_and_count_its_evaluations():
    fed = moga.Federation.preset("default")
    js = moga.load_default().jobset(n_jobs=120, federation=fed)
    a, b = (moga.run(js, fed, pop_size=20, n_gen=15, seed=3, params={"fast_end": 4})
            for _ in range(2))
    np.testing.assert_array_equal(a.F, b.F)
    off = moga.run(js, fed, pop_size=20, n_gen=15, seed=3)
    assert a.n_evals > off.n_evals
