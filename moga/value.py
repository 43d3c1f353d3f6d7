"""Value-function workloads (DESIGN.md section 6): a seeded generator and the offline decoder.

Generator (:func:`attach_values`), all draws from one ``numpy`` generator:

* priority classes, by default three: high (share 10%, ``v_start`` 16),
  medium (30%, 4) and low (60%, 1);
* ``v_final = v_start * f`` with ``f ~ U(0.1, 0.5)``, below ``v_start``;
* soft deadline ``release + a * runtime`` with ``a ~ U(1, 4)``, and hard
  deadline ``soft + b * runtime`` with ``b ~ U(1, 3)``; ``runtime`` is the
  base run time (a node of speed 1.0), so faster clusters leave slack.

A job earns ``v_start`` if it completes by its soft deadline, then a value
decaying linearly to ``v_final`` at its hard deadline, then nothing.

Jobs run inside one cluster here, so extract job-sets against the largest
cluster: ``trace.jobset(..., federation=int(fed.nodes.max()), wide="drop")``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from pymoo.core.problem import Problem

from decoders.online import HEURISTICS as ONLINE_HEURISTICS
from decoders.online import simulate
from decoders.value import decode_value, decode_value_batch, value_at

from .jobset import JobSet
from .platform import Federation
from .problem import split

__all__ = ["PriorityClass", "DEFAULT_CLASSES", "attach_values", "evaluate_value",
           "evaluate_value_batch", "ValueSchedule", "value_at", "ValueProblem", "UpperBound",
           "upper_bound", "ONLINE_HEURISTICS", "online", "compare_value"]


@dataclass(frozen=True)
class PriorityClass:
    """A priority class: its name, share of the jobs and starting value."""

    name: str
    share: float
    v_start: float


DEFAULT_CLASSES = (PriorityClass("high", 0.1, 16.0), PriorityClass("medium", 0.3, 4.0),
                   PriorityClass("low", 0.6, 1.0))


def attach_values(js: JobSet, seed: int = 0, classes=DEFAULT_CLASSES, final_fraction=(0.1, 0.5),
                  soft_factor=(1.0, 4.0), hard_factor=(1.0, 3.0)) -> JobSet:
    """A copy of ``js`` with seeded value functions (see the module docstring).

    Parameters
    ----------
    js : JobSet
    seed : int
    classes : sequence of PriorityClass
        Shares must sum to 1; class 0 is the highest priority.
    final_fraction : (float, float)
        Range of ``v_final / v_start``, within [0, 1].
    soft_factor, hard_factor : (float, float)
        Ranges of ``a`` and ``b`` (multiples of the base run time), >= 0.
    """
    shares = np.array([c.share for c in classes], dtype=float)
    if len(classes) == 0 or np.any(shares < 0) or not np.isclose(shares.sum(), 1.0):
        raise ValueError(f"class shares must be >= 0 and sum to 1, got {shares.tolist()}")
    if any(c.v_start <= 0 for c in classes):
        raise ValueError("every class needs v_start > 0")
    lo, hi = final_fraction
    if not 0.0 <= lo <= hi <= 1.0:
        raise ValueError(f"final_fraction must satisfy 0 <= low <= high <= 1, got {final_fraction}")
    for name, (a, b) in (("soft_factor", soft_factor), ("hard_factor", hard_factor)):
        if not 0.0 <= a <= b:
            raise ValueError(f"{name} must satisfy 0 <= low <= high, got {(a, b)}")
    rng = np.random.default_rng(seed)
    J = len(js)
    priority = rng.choice(len(classes), size=J, p=shares / shares.sum())
    v_start = np.array([c.v_start for c in classes])[priority]
    v_final = v_start * rng.uniform(lo, hi, J)
    soft = js.release + rng.uniform(*soft_factor, J) * js.runtime
    hard = soft + rng.uniform(*hard_factor, J) * js.runtime
    report = dict(js.report, value_seed=seed,
                  value_classes=[(c.name, c.share, c.v_start) for c in classes])
    return JobSet(id=js.id, release=js.release, tasks=js.tasks, runtime=js.runtime,
                  sigma=js.sigma, bw=js.bw, name=js.name, report=report, v_start=v_start,
                  v_final=v_final, soft=soft, hard=hard, priority=priority)


@dataclass(frozen=True, eq=False)
class ValueSchedule:
    """A value-decoded schedule: per job ``start``, ``finish`` (NaN if not run),
    ``cluster`` (-1 if not run) and ``value``; ``total_value``, ``n_run``, ``n_relaxed``."""

    jobset: JobSet
    federation: Federation
    start: np.ndarray
    finish: np.ndarray
    cluster: np.ndarray
    value: np.ndarray
    total_value: float
    n_run: int
    n_relaxed: int
    reserved: np.ndarray | None = None
    n_events: int = 0

    @property
    def max_value(self) -> float:
        """Sum of every job's ``v_start``: what a schedule could earn at most."""
        return float(self.jobset.v_start.sum())

    def value_by_class(self) -> dict:
        """Value earned and jobs completed per priority class."""
        out = {}
        for c in np.unique(self.jobset.priority):
            sel = self.jobset.priority == c
            out[int(c)] = {"jobs": int(sel.sum()), "completed": int((self.cluster[sel] >= 0).sum()),
                           "value": float(self.value[sel].sum()),
                           "max_value": float(self.jobset.v_start[sel].sum())}
        return out


def _arrays(js: JobSet, fed: Federation):
    if not js.has_values:
        raise ValueError(f"job-set {js.name!r} has no value functions; use "
                         "moga.value.attach_values first")
    return (js.release, js.tasks, js.runtime, js.v_start, js.v_final, js.soft, js.hard,
            fed.nodes, fed.speed)


def evaluate_value(js: JobSet, fed: Federation, order=None, blacklist=None) -> ValueSchedule:
    """Decode one chromosome with the value decoder (default: submit order, no blacklist)."""
    J, K = len(js), fed.n_clusters
    order = np.lexsort((np.arange(J), js.release)) if order is None else order
    blacklist = np.zeros((J, K)) if blacklist is None else blacklist
    r = decode_value(*_arrays(js, fed), order, blacklist)
    return ValueSchedule(js, fed, r.start, r.finish, r.cluster, r.value, r.total_value, r.n_run,
                         r.n_relaxed)


def evaluate_value_batch(js: JobSet, fed: Federation, orders, blacklists):
    """Batch value decode: ``(total_value, n_run, n_relaxed)``, arrays of shape (P,)."""
    return decode_value_batch(*_arrays(js, fed), orders, blacklists)


class ValueProblem(Problem):
    """pymoo problem: maximise total value over (order, blacklist) (it minimises ``-value``).

    Same ``X`` layout as :class:`moga.problem.SchedulingProblem`, so MOGA's
    operators apply; the population is decoded in one parallel batch call.
    """

    def __init__(self, jobset: JobSet, federation: Federation):
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


@dataclass
class UpperBound:
    """The outcome of :func:`upper_bound`: the best value found and its schedule."""

    value: float
    X: np.ndarray
    schedule: ValueSchedule
    history: np.ndarray
    n_evals: int
    wall_time: float
    seed: int


def upper_bound(js: JobSet, fed: Federation, pop_size: int = 100, n_gen: int = 200,
                seed: int = 1, extra=None, params=None) -> UpperBound:
    """A (loose) upper bound of the value earned: a GA over (order, blacklist) with the
    offline value decoder, which knows the whole future.

    The initial population holds the submit order with uniform blacklists (as
    in MOGA), the rows of ``extra`` (for example the orders the online
    heuristics produced, see :func:`moga.problem.join`), and random individuals.
    ``history`` is the best value after each generation.
    """
    import time

    from pymoo.algorithms.soo.nonconvex.ga import GA
    from pymoo.core.callback import Callback
    from pymoo.optimize import minimize

    from .operators import ScheduleDuplicateElimination, ScheduleSampling
    from .run import GAParams

    params = (params or GAParams()).replace(pop_size=pop_size, n_gen=n_gen)
    problem = ValueProblem(js, fed)
    crossover, mutation = params.operators()
    best = []

    class _Best(Callback):
        def notify(self, algorithm):
            best.append(-float(algorithm.opt.get("F").min()))

    algo = GA(pop_size=params.pop_size,
              sampling=ScheduleSampling(seeded=params.seeded, levels=params.seed_levels,
                                        extra=extra),
              crossover=crossover, mutation=mutation,
              eliminate_duplicates=ScheduleDuplicateElimination())
    t0 = time.perf_counter()
    res = minimize(problem, algo, ("n_gen", params.n_gen), seed=int(seed), callback=_Best())
    wall = time.perf_counter() - t0
    X = np.atleast_2d(res.X)[0]
    order, bl = split(X, len(js), fed.n_clusters)
    s = evaluate_value(js, fed, order, bl)
    return UpperBound(s.total_value, X, s, np.array(best), problem.n_decoded, wall, int(seed))


def online(js: JobSet, fed: Federation, heuristic: str = "easy", small: int = 16,
           medium: int = 256) -> ValueSchedule:
    """Simulate an online heuristic (:data:`ONLINE_HEURISTICS`) on a value-function job-set.

    ``reserved`` holds each job's reservation or place-holder start (NaN if it
    started when first mapped); ``n_relaxed`` counts the dropped jobs here.
    See :mod:`decoders.online` for the heuristics.
    """
    r = simulate(*_arrays(js, fed), heuristic=heuristic, small=small, medium=medium)
    return ValueSchedule(js, fed, r.start, r.finish, r.cluster, r.value, r.total_value, r.n_run,
                         r.n_dropped, r.reserved, r.n_events)


def heuristic_order(s: ValueSchedule) -> np.ndarray:
    """Jobs by start time in a schedule (jobs not run last, by release): an order to seed a GA."""
    key = np.where(np.isnan(s.start), np.inf, s.start)
    return np.lexsort((np.arange(len(key)), s.jobset.release, key))


def compare_value(js: JobSet, fed: Federation, pop_size: int = 100, n_gen: int = 200,
                  seed: int = 1) -> dict:
    """The online heuristics and the GA upper bound on one job-set.

    The GA's initial population is seeded with the heuristics' orders (jobs by
    start time). Returns ``{"rows": [...], "bound": UpperBound, "schedules": {...}}``,
    each row with the value earned and its percentage of the bound.
    """
    from .problem import join

    schedules = {h: online(js, fed, h) for h in ONLINE_HEURISTICS}
    K = fed.n_clusters
    extra = np.vstack([join(heuristic_order(s), np.zeros((len(js), K)))
                       for s in schedules.values()])
    bound = upper_bound(js, fed, pop_size=pop_size, n_gen=n_gen, seed=seed, extra=extra)
    rows = []
    for name, s in list(schedules.items()) + [("GA upper bound", bound.schedule)]:
        rows.append({"algorithm": name, "value": s.total_value,
                     "pct_of_bound": 100 * s.total_value / bound.value if bound.value else 0.0,
                     "pct_of_max": 100 * s.total_value / s.max_value, "completed": s.n_run,
                     "jobs": len(js)})
    return {"rows": rows, "bound": bound, "schedules": schedules}
