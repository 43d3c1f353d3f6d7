"""The array loop of ``moga.run`` equals pymoo's NSGA-II run, draw for draw."""

from __future__ import annotations

import numpy as np
import pytest
from pymoo.core.population import Population
from pymoo.core.problem import Problem
from pymoo.operators.survival.rank_and_crowding import RankAndCrowding

import moga
import moga.evolution.runner as runner
from moga.evolution.engine import survive


@pytest.fixture(scope="module")
def small():
    fed = moga.Federation.preset()
    js = moga.load_default().jobset(n_jobs=120, federation=fed)
    return js, fed


def _both(monkeypatch, *args, **kwargs):
    monkeypatch.setattr(runner, "_PYMOO_LOOP", True)
    slow = moga.run(*args, **kwargs)
    monkeypatch.setattr(runner, "_PYMOO_LOOP", False)
    fast = moga.run(*args, **kwargs)
    return slow, fast


@pytest.mark.parametrize("kwargs", [
    {"seed": 1},
    {"seed": 7, "params": {"archive_size": 0}},
    {"seed": 3, "model": "at_start", "params": {"mating_neighbours": 3}},
    {"seed": 11, "pop_size": 12, "params": {"seeded": False}},
    {"seed": 5, "stagnation": 3, "stagnation_tol": 0.02},
    {"seed": 2, "use_blacklist": False},
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
