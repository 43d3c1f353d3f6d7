"""Search baselines: random search and GA-MF, returning :class:`~moga.results.SearchResult`.

* :func:`random_search`: random chromosomes (uniform orders and blacklists)
  with MOGA's evaluation budget, keeping the non-dominated ones;
* :func:`ga_mf`: GA-MF after Gabaldon et al. (2015), a single-objective GA
  minimising makespan + flowtime over the order alone (empty blacklist).

The third, MOGA without blacklist, is ``moga.run(..., use_blacklist=False)``.
"""

from __future__ import annotations

import time

import numpy as np
from pymoo.algorithms.soo.nonconvex.ga import GA
from pymoo.optimize import minimize

from ..evolution.duplicates import ScheduleDuplicateElimination
from ..evolution.operators import ScheduleSampling
from ..evolution.params import GAParams, check_seed
from ..evolution.problem import SchedulingProblem
from ..metrics import nondominated
from ..model.chromosome import join
from ..model.jobset import JobSet
from ..model.platform import Federation
from ..model.schedule import evaluate, evaluate_batch
from ..results import SearchResult

__all__ = ["random_search", "ga_mf"]


def random_search(js: JobSet, fed: Federation, n_evals: int, seed: int = 1, model: str = "fluid",
                  batch: int = 200) -> SearchResult:
    """Random search: ``n_evals`` chromosomes with uniformly random orders and blacklists.

    Decoded in parallel batches; returns the non-dominated ones (makespan, energy).
    """
    if isinstance(n_evals, bool) or not isinstance(n_evals, (int, np.integer)) or n_evals < 1:
        raise ValueError(f"n_evals must be an integer >= 1, got {n_evals!r}")
    seed = check_seed(seed)
    rng = np.random.default_rng(seed)
    J, K = len(js), fed.n_clusters
    t0 = time.perf_counter()
    best_F = np.empty((0, 2))
    best_X = np.empty((0, J + J * K))
    done = 0
    while done < n_evals:
        n = min(batch, n_evals - done)
        orders = np.argsort(rng.random((n, J)), axis=1)
        bls = rng.random((n, J, K))
        b = evaluate_batch(js, fed, orders, bls, model=model)
        F = np.vstack([best_F, np.column_stack([b.makespan, b.energy])])
        X = np.vstack([best_X, join(orders, bls)])
        keep = nondominated(F)
        best_F, best_X = F[keep], X[keep]
        done += n
    _, first = np.unique(best_F, axis=0, return_index=True)
    idx = first[np.lexsort(best_F[first].T[::-1])]
    return SearchResult(name="random search", F=best_F[idx], X=best_X[idx], jobset=js,
                        federation=fed, model=model, seed=seed, n_evals=done,
                        wall_time=time.perf_counter() - t0)


def ga_mf(js: JobSet, fed: Federation, pop_size: int | None = None, n_gen: int | None = None,
          seed: int = 1, model: str = "fluid", params=None) -> SearchResult:
    """GA-MF (Gabaldon et al. 2015): a GA minimising makespan + flowtime over the order alone.

    Same decoder, empty blacklist; the initial population holds the submit
    order and random orders. ``pop_size`` and ``n_gen`` default to those of
    ``params`` (100 x 700 when left at None there). Returns the best schedule as a one-point front
    (makespan, energy).
    """
    params = GAParams.coerce(params).replace(pop_size=pop_size, n_gen=n_gen).resolved()
    seed = check_seed(seed)
    problem = SchedulingProblem(js, fed, model=model, objectives=("makespan+flowtime",),
                                use_blacklist=False)
    crossover, mutation = params.operators()
    # As published: the submit order and random orders, no other heuristic seeds.
    algorithm = GA(pop_size=params.pop_size, sampling=ScheduleSampling(seeded=True,
                                                                       heuristics=False),
                   crossover=crossover, mutation=mutation,
                   eliminate_duplicates=ScheduleDuplicateElimination())
    t0 = time.perf_counter()
    res = minimize(problem, algorithm, ("n_gen", params.n_gen), seed=seed)
    wall = time.perf_counter() - t0
    X = np.atleast_2d(res.X)[:1]
    order = np.rint(X[0]).astype(np.int64)
    s = evaluate(js, fed, order, None, model=model)
    return SearchResult(name="GA-MF", F=np.array([[s.makespan, s.energy]]), X=X, jobset=js,
                        federation=fed, model=model, seed=seed, n_evals=problem.n_decoded,
                        wall_time=wall, use_blacklist=False,
                        info={"makespan_plus_flowtime": float(np.atleast_2d(res.F)[0, 0])})
