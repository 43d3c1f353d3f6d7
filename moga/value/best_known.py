"""The best known value of a workload (a post-mortem GA) and a true upper bound.

* :func:`best_known`: a GA over (order, blacklist) with the offline value
  decoder, which knows the whole future. It returns a feasible schedule, so
  its value is a *lower* bound of the optimum: the best known, not a bound
  from above. Seeded with the heuristics' orders it is at least as good as
  each of them.
* :func:`upper_bound`: every job earns at most the value of completing as
  early as it possibly could (started at its release on the fastest cluster
  large enough to hold it), whatever the other jobs do; the sum over jobs is
  at least the optimum.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
from pymoo.core.problem import Problem

from ..evolution.params import GAParams, check_seed
from ..model.chromosome import split
from ..model.jobset import JobSet
from ..model.platform import Federation
from .schedule import ValueSchedule, evaluate_value, evaluate_value_batch, value_arrays, value_at

__all__ = ["ValueProblem", "BestKnown", "best_known", "upper_bound"]


class ValueProblem(Problem):
    """pymoo problem: maximise total value over (order, blacklist) (it minimises ``-value``).

    Same ``X`` layout as :class:`moga.evolution.SchedulingProblem`, so MOGA's
    operators apply; the population is decoded in one parallel batch call.
    """

    def __init__(self, jobset: JobSet, federation: Federation):
        value_arrays(jobset, federation)
        J, K = len(jobset), federation.n_clusters
        xu = np.concatenate([np.full(J, J - 1.0), np.ones(J * K)])
        super().__init__(n_var=J + J * K, n_obj=1, xl=np.zeros(J + J * K), xu=xu, vtype=float)
        self.jobset, self.federation = jobset, federation
        self.n_jobs, self.n_clusters = J, K
        self.n_decoded = 0

    def _evaluate(self, X, out, *args, **kwargs):
        orders, bls = split(np.atleast_2d(X), self.n_jobs, self.n_clusters)
        total, _, _ = evaluate_value_batch(self.jobset, self.federation, orders, bls)
        self.n_decoded += len(total)
        out["F"] = -total[:, None]


@dataclass(kw_only=True)
class BestKnown:
    """The outcome of :func:`best_known`.

    Attributes
    ----------
    name : str
        ``"best known (GA)"``.
    value : float
        The best total value found (a feasible schedule's value).
    X : ndarray (J + J*K,)
        Its chromosome.
    schedule : ValueSchedule
    history : ndarray
        The best value after each generation.
    seed, n_evals, wall_time
        As in :class:`moga.results.SearchResult`.
    info : dict
    """

    value: float
    X: np.ndarray
    schedule: ValueSchedule
    history: np.ndarray
    seed: int
    n_evals: int
    wall_time: float
    name: str = "best known (GA)"
    info: dict = field(default_factory=dict)


def best_known(js: JobSet, fed: Federation, pop_size: int | None = None,
               n_gen: int | None = None, seed: int = 1, initial=None,
               params=None) -> BestKnown:
    """The best value a post-mortem GA finds with the offline value decoder.

    The initial population holds the submit order with uniform blacklists (as
    in MOGA), the rows of ``initial`` (for example the orders the online
    heuristics produced, see :func:`moga.model.chromosome.join`), and random
    individuals. ``pop_size`` and ``n_gen`` default to those of ``params``
    (100 x 700 when left at None there).
    """
    from pymoo.algorithms.soo.nonconvex.ga import GA
    from pymoo.core.callback import Callback
    from pymoo.optimize import minimize

    from ..evolution.duplicates import ScheduleDuplicateElimination
    from ..evolution.operators import ScheduleSampling

    params = GAParams.coerce(params).replace(pop_size=pop_size, n_gen=n_gen).resolved()
    seed = check_seed(seed)
    if len(js) == 0:
        raise ValueError(f"job-set {js.name!r} is empty: nothing to schedule")
    problem = ValueProblem(js, fed)
    crossover, mutation = params.operators()
    best = []

    class _Best(Callback):
        def notify(self, algorithm):
            best.append(-float(algorithm.opt.get("F").min()))

    algo = GA(pop_size=params.pop_size,
              sampling=ScheduleSampling(seeded=params.seeded, levels=params.seed_levels,
                                        initial=initial, heuristics=False),
              crossover=crossover, mutation=mutation,
              eliminate_duplicates=ScheduleDuplicateElimination())
    t0 = time.perf_counter()
    res = minimize(problem, algo, ("n_gen", params.n_gen), seed=seed, callback=_Best())
    wall = time.perf_counter() - t0
    X = np.atleast_2d(res.X)[0]
    order, bl = split(X, len(js), fed.n_clusters)
    s = evaluate_value(js, fed, order, bl)
    return BestKnown(value=s.total_value, X=X, schedule=s, history=np.array(best), seed=seed,
                     n_evals=problem.n_decoded, wall_time=wall,
                     info={"params": params.to_dict()})


def upper_bound(js: JobSet, fed: Federation) -> float:
    """A true upper bound of the value any schedule can earn on ``fed``.

    Job ``j`` cannot complete before ``release_j + runtime_j / P_max(j)``, with
    ``P_max(j)`` the fastest speed of a cluster holding at least ``tasks_j``
    nodes, and value functions never grow with the completion time; the sum of
    these best values bounds the optimum from above (0 for jobs no cluster
    holds).
    """
    release, tasks, runtime, v_start, v_final, soft, hard, nodes, speed = value_arrays(js, fed)
    if len(js) == 0:
        return 0.0
    fits = nodes[None, :] >= tasks[:, None]
    best_speed = np.where(fits, speed[None, :], 0.0).max(axis=1)
    finish = np.where(best_speed > 0, release + runtime / np.where(best_speed > 0, best_speed, 1.0),
                      np.nan)
    return float(value_at(finish, v_start, v_final, soft, hard).sum())
