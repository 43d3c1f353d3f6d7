"""Baselines on the same execution and energy model as MOGA, and a comparison.

Heuristics (each one decode of the federated kernel, submit order, no blacklist):

* ``fcfs``: first come, first served, jobs strictly in submit order, fastest
  clusters first (the MOGA decoder on the submit order);
* ``easy``: textbook EASY backfilling (one reservation for the blocked head);
* ``fcfs_greenest`` / ``easy_greenest``: the same with the greenest
  allocation rule (least energy per unit of work first).

Search baselines:

* :func:`random_search`: random chromosomes (uniform orders and blacklists)
  with MOGA's evaluation budget, keeping the non-dominated ones;
* :func:`ga_mf`: GA-MF after Gabaldon et al. (2015), a single-objective GA
  minimising makespan + flowtime over the order alone (empty blacklist);
* MOGA without blacklist: ``moga.run(..., blacklist=False)``, the ablation
  that shows what the blacklist buys.

:func:`compare` runs them all with MOGA on one job-set.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
from pymoo.algorithms.soo.nonconvex.ga import GA
from pymoo.optimize import minimize

from .jobset import JobSet
from .metrics import knee_index, nondominated, normalized_hypervolume
from .operators import ScheduleDuplicateElimination, ScheduleSampling
from .platform import Federation
from .problem import SchedulingProblem, join
from .run import HV_FACTOR, GAParams, run
from .schedule import Schedule, evaluate, evaluate_batch

__all__ = ["HEURISTICS", "submit_order", "heuristic", "random_search", "ga_mf", "compare",
           "Comparison", "FrontResult"]

#: Heuristic name -> (backfilling, allocation rule).
HEURISTICS = {
    "FCFS": ("none", "fastest"),
    "EASY": ("easy", "fastest"),
    "FCFS-greenest": ("none", "greenest"),
    "EASY-greenest": ("easy", "greenest"),
}


def submit_order(js: JobSet) -> np.ndarray:
    """Job positions by release time, ties by position."""
    return np.lexsort((np.arange(len(js)), js.release))


def heuristic(js: JobSet, fed: Federation, name: str = "FCFS", model: str = "fluid") -> Schedule:
    """Schedule of one of :data:`HEURISTICS` (submit order, empty blacklist)."""
    if name not in HEURISTICS:
        raise ValueError(f"unknown heuristic {name!r}; choose one of {list(HEURISTICS)}")
    backfill, rule = HEURISTICS[name]
    return evaluate(js, fed, submit_order(js), None, model=model, backfill=backfill, rule=rule)


@dataclass
class FrontResult:
    """A set of non-dominated schedules found by a search baseline."""

    name: str
    F: np.ndarray
    X: np.ndarray
    n_evals: int
    wall_time: float
    jobset: JobSet
    federation: Federation
    model: str
    use_blacklist: bool = True

    def knee(self) -> int:
        """Index of the knee of the front."""
        return knee_index(self.F)

    def schedule(self, i: int) -> Schedule:
        """Decode front member ``i``."""
        J, K = len(self.jobset), self.federation.n_clusters
        order = np.rint(self.X[i, :J]).astype(np.int64)
        bl = self.X[i, J:].reshape(J, K) if self.use_blacklist else np.zeros((J, K))
        return evaluate(self.jobset, self.federation, order, bl, model=self.model)


def random_search(js: JobSet, fed: Federation, n_evals: int, seed: int = 1, model: str = "fluid",
                  batch: int = 200) -> FrontResult:
    """Random search: ``n_evals`` chromosomes with uniformly random orders and blacklists.

    Decoded in parallel batches; returns the non-dominated ones (makespan, energy).
    """
    if n_evals < 1:
        raise ValueError(f"n_evals must be >= 1, got {n_evals}")
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
    return FrontResult("random search", best_F[idx], best_X[idx], done,
                       time.perf_counter() - t0, js, fed, model)


def ga_mf(js: JobSet, fed: Federation, pop_size: int | None = None, n_gen: int | None = None,
          seed: int = 1, model: str = "fluid", params: GAParams | None = None) -> FrontResult:
    """GA-MF (Gabaldon et al. 2015): a GA minimising makespan + flowtime over the order alone.

    Same decoder, empty blacklist; the initial population holds the submit
    order and random orders. ``pop_size`` and ``n_gen`` default to those of
    ``params`` (100 and 200). Returns the best schedule as a one-point front
    (makespan, energy).
    """
    params = (params or GAParams()).replace(pop_size=pop_size, n_gen=n_gen)
    problem = SchedulingProblem(js, fed, model=model, objectives=("makespan+flowtime",),
                                blacklist=False)
    crossover, mutation = params.operators()
    algorithm = GA(pop_size=params.pop_size, sampling=ScheduleSampling(seeded=True),
                   crossover=crossover, mutation=mutation,
                   eliminate_duplicates=ScheduleDuplicateElimination())
    t0 = time.perf_counter()
    res = minimize(problem, algorithm, ("n_gen", params.n_gen), seed=int(seed))
    wall = time.perf_counter() - t0
    X = np.atleast_2d(res.X)[:1]
    order = np.rint(X[0]).astype(np.int64)
    s = evaluate(js, fed, order, None, model=model)
    return FrontResult("GA-MF", np.array([[s.makespan, s.energy]]), X, problem.n_decoded, wall,
                       js, fed, model, use_blacklist=False)


@dataclass
class Comparison:
    """The outcome of :func:`compare`."""

    rows: list
    fronts: dict
    points: dict
    reference: np.ndarray
    jobset: JobSet
    federation: Federation
    model: str
    extra: dict = field(default_factory=dict)

    COLUMNS = ("algorithm", "kind", "makespan_h", "energy_MWh", "flowtime_h",
               "mean_bounded_slowdown", "n_coalloc", "front_size", "hv", "wall_time_s")

    def to_csv(self) -> str:
        """The table as CSV text."""
        lines = [",".join(self.COLUMNS)]
        for r in self.rows:
            lines.append(",".join(_fmt(r[c]) for c in self.COLUMNS))
        return "\n".join(lines) + "\n"

    def table(self) -> str:
        """The table as aligned text."""
        head = (f"{'algorithm':<22} {'makespan h':>10} {'energy MWh':>10} {'flowtime h':>11} "
                f"{'mean BSLD':>9} {'co-alloc':>8} {'front':>5} {'hv':>7} {'time s':>7}")
        out = [head]
        for r in self.rows:
            out.append(f"{r['algorithm']:<22} {r['makespan_h']:>10.2f} {r['energy_MWh']:>10.4f} "
                       f"{r['flowtime_h']:>11.1f} {r['mean_bounded_slowdown']:>9.2f} "
                       f"{r['n_coalloc']:>8d} {r['front_size']:>5d} {r['hv']:>7.4f} "
                       f"{r['wall_time_s']:>7.2f}")
        return "\n".join(out)


def _fmt(v):
    return f"{v:.6g}" if isinstance(v, float) else str(v)


def _row(name, kind, s: Schedule, F, reference, wall):
    return {"algorithm": name, "kind": kind, "makespan_h": s.makespan / 3600,
            "energy_MWh": s.energy / 3.6e9, "flowtime_h": s.flowtime / 3600,
            "mean_bounded_slowdown": float(s.bounded_slowdown(600.0).mean()),
            "n_coalloc": int(s.n_coalloc), "front_size": int(len(F)),
            "hv": normalized_hypervolume(F, reference, HV_FACTOR), "wall_time_s": float(wall)}


def _warm_up(js, fed, model):
    """Load every compiled kernel once, so that no wall time below includes compilation."""
    tiny = js.take(np.arange(min(4, len(js))))
    for name in HEURISTICS:
        heuristic(tiny, fed, name, model)
    run(tiny, fed, pop_size=4, n_gen=2, model=model)
    run(tiny, fed, pop_size=4, n_gen=2, model=model, blacklist=False)
    ga_mf(tiny, fed, pop_size=4, n_gen=2, model=model)


def compare(js: JobSet, fed: Federation, pop_size: int | None = None, n_gen: int | None = None,
            seed: int = 1, model: str = "fluid", params=None, algorithms=None,
            progress: bool = False) -> Comparison:
    """Run the heuristics, the search baselines and MOGA on one job-set.

    Front algorithms (MOGA, MOGA without blacklist, random search) are
    represented in the table by the knee of their front, and all by the
    hypervolume of their points (normalised by the submit-order FCFS
    schedule, reference point 1.1). Random search gets MOGA's evaluation
    budget; GA-MF and the ablation get MOGA's population and generations
    (``pop_size`` and ``n_gen``, default those of ``params``: 100 and 200).

    Parameters
    ----------
    algorithms : sequence of str, optional
        A subset of ``list(HEURISTICS) + ["MOGA", "MOGA without blacklist",
        "random search", "GA-MF"]``; default all.
    """
    known = list(HEURISTICS) + ["MOGA", "MOGA without blacklist", "random search", "GA-MF"]
    algorithms = known if algorithms is None else list(algorithms)
    unknown = [a for a in algorithms if a not in known]
    if unknown:
        raise ValueError(f"unknown algorithm(s) {unknown}; choose from {known}")
    params = params if isinstance(params, GAParams) else (
        GAParams() if params is None else GAParams.from_dict(params))
    params = params.replace(pop_size=pop_size, n_gen=n_gen)
    _warm_up(js, fed, model)
    fcfs = heuristic(js, fed, "FCFS", model)
    reference = np.array([fcfs.makespan, fcfs.energy])
    rows, fronts, points = [], {}, {}
    n_evals = params.pop_size * params.n_gen
    for name in algorithms:
        if name in HEURISTICS:
            t0 = time.perf_counter()
            s = heuristic(js, fed, name, model)
            wall = time.perf_counter() - t0
            F = np.array([[s.makespan, s.energy]])
            rows.append(_row(name, "heuristic", s, F, reference, wall))
            points[name] = (s.makespan, s.energy)
        elif name in ("MOGA", "MOGA without blacklist"):
            r = run(js, fed, seed=seed, model=model, params=params,
                    blacklist=name == "MOGA", progress=progress)
            n_evals = r.n_evals if name == "MOGA" else n_evals
            rows.append(_row(name, "front (knee)", r.schedule(r.knee()), r.F, reference,
                             r.wall_time))
            fronts[name] = r.F
        elif name == "random search":
            fr = random_search(js, fed, n_evals, seed=seed, model=model)
            rows.append(_row(name, "front (knee)", fr.schedule(fr.knee()), fr.F, reference,
                             fr.wall_time))
            fronts[name] = fr.F
        else:
            fr = ga_mf(js, fed, seed=seed, model=model, params=params)
            s = fr.schedule(0)
            rows.append(_row(name, "single", s, fr.F, reference, fr.wall_time))
            points[name] = (s.makespan, s.energy)
    return Comparison(rows, fronts, points, reference, js, fed, model,
                      {"params": params.to_dict(), "seed": seed, "n_evals_budget": n_evals})
