"""Compare the baselines with MOGA on one job-set (the algorithms of the registry)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ..evolution.params import GAParams
from ..evolution.runner import HV_FACTOR
from ..metrics import normalized_hypervolume
from ..model.export import format_number
from ..model.jobset import JobSet
from ..model.platform import Federation
from ..model.schedule import Schedule
from .heuristics import heuristic
from .registry import ALGORITHMS, algorithm, run_algorithm

__all__ = ["Comparison", "compare"]


@dataclass
class Comparison:
    """The outcome of :func:`compare`.

    Attributes
    ----------
    rows : list of dict
        One table row per algorithm (:attr:`COLUMNS`).
    fronts : dict
        Objectives (n, 2) of the front algorithms, by name.
    points : dict
        ``(makespan, energy)`` of the one-schedule algorithms, by name.
    reference : ndarray (2,)
        FCFS's objectives: the hypervolume normalisation.
    results : dict
        Every algorithm's :class:`~moga.results.SearchResult`, by name.
    info : dict
        Parameters, seed and evaluation budget (JSON-ready).
    """

    rows: list
    fronts: dict
    points: dict
    reference: np.ndarray
    jobset: JobSet
    federation: Federation
    model: str
    results: dict = field(default_factory=dict)
    info: dict = field(default_factory=dict)

    COLUMNS = ("algorithm", "kind", "makespan_h", "energy_MWh", "flowtime_h",
               "mean_bounded_slowdown", "n_coalloc", "front_size", "hv", "wall_time_s",
               "cpu_time_s", "n_killed")

    def to_csv(self) -> str:
        """The table as CSV text, numbers with all their digits
        (:func:`~moga.model.export.format_number`, as the schedules' files)."""
        lines = [",".join(self.COLUMNS)]
        for r in self.rows:
            lines.append(",".join(_fmt(r[c]) for c in self.COLUMNS))
        return "\n".join(lines) + "\n"

    def table(self) -> str:
        """The table as aligned text; ``wall s`` is elapsed time, which on a shared machine
        measures the machine too, ``CPU s`` the process's CPU time (every thread)."""
        head = (f"{'algorithm':<22} {'makespan h':>10} {'energy MWh':>10} {'flowtime h':>11} "
                f"{'mean BSLD':>9} {'co-alloc':>8} {'front':>5} {'hv':>7} {'wall s':>7} "
                f"{'CPU s':>7}")
        out = [head]
        for r in self.rows:
            out.append(f"{r['algorithm']:<22} {r['makespan_h']:>10.2f} {r['energy_MWh']:>10.4f} "
                       f"{r['flowtime_h']:>11.1f} {r['mean_bounded_slowdown']:>9.2f} "
                       f"{r['n_coalloc']:>8d} {r['front_size']:>5d} {r['hv']:>7.4f} "
                       f"{r['wall_time_s']:>7.2f} {r['cpu_time_s']:>7.2f}")
        return "\n".join(out)


def _fmt(v):
    return format_number(v)


def _row(name, kind, s: Schedule, F, reference, wall, cpu):
    return {"algorithm": name, "kind": kind, "makespan_h": s.makespan / 3600,
            "energy_MWh": s.energy / 3.6e9, "flowtime_h": s.flowtime / 3600,
            "mean_bounded_slowdown": float(s.bounded_slowdown(600.0).mean()),
            "n_coalloc": int(s.n_coalloc), "front_size": int(len(F)),
            "hv": normalized_hypervolume(F, reference, HV_FACTOR), "wall_time_s": float(wall),
            "cpu_time_s": float(cpu), "n_killed": int(s.killed.sum())}


def _warm_up(js, fed, model, names):
    """Load every compiled kernel once, so that no wall time below includes compilation."""
    tiny = js.take(np.arange(min(4, len(js))))
    tiny_params = GAParams(pop_size=4, n_gen=2)
    for name in names:
        run_algorithm(name, tiny, fed, model=model, params=tiny_params, n_evals=4)


def compare(js: JobSet, fed: Federation, pop_size: int | None = None, n_gen: int | None = None,
            seed: int = 1, model: str = "fluid", params=None, algorithms=None,
            progress: bool = False, on_algorithm=None) -> Comparison:
    """Run the heuristics, the search baselines and MOGA on one job-set.

    Front algorithms (MOGA, MOGA without blacklist, random search) are
    represented in the table by the knee of their front, and all by the
    hypervolume of their points (normalised by the submit-order FCFS
    schedule, reference point 1.1). Random search gets MOGA's evaluation
    budget; GA-MF and the ablation get ``pop_size`` and ``n_gen`` (default
    those of ``params``; left at None, each algorithm's own:
    :meth:`GAParams.resolved`).

    Parameters
    ----------
    algorithms : sequence of str, optional
        Names from :data:`moga.baselines.ALGORITHMS`; default all.
    progress : bool
        The GA's progress bar for the algorithms that have one.
    on_algorithm : callable, optional
        Called with each algorithm's name before it runs.
    """
    names = list(ALGORITHMS) if algorithms is None else list(algorithms)
    for name in names:
        algorithm(name)
    params = GAParams.coerce(params).replace(pop_size=pop_size, n_gen=n_gen)
    _warm_up(js, fed, model, names)
    fcfs = heuristic(js, fed, "FCFS", model)
    reference = np.array([fcfs.makespan, fcfs.energy])
    rows, fronts, points, results, cpu = [], {}, {}, {}, {}
    moga_params = params.for_moga()
    n_evals = moga_params.pop_size * moga_params.n_gen
    # MOGA first, so that random search gets the evaluations MOGA really made.
    for name in sorted(names, key=lambda n: n != "MOGA"):
        if on_algorithm is not None:
            on_algorithm(name)
        # CPU time of the process (every thread) besides the wall time: on a shared
        # machine the wall time measures the machine too.
        t0 = time.process_time()
        r = run_algorithm(name, js, fed, model=model, seed=seed, params=params, n_evals=n_evals,
                          progress=progress)
        cpu[name] = time.process_time() - t0
        if name == "MOGA":
            n_evals = r.n_evals
        results[name] = r
    for name in names:
        r = results[name]
        kind = ALGORITHMS[name].kind
        label = {"front": "front (knee)", "single": "single", "heuristic": "heuristic"}[kind]
        s = r.schedule(r.knee())
        rows.append(_row(name, label, s, r.F, reference, r.wall_time, cpu[name]))
        if kind == "front":
            fronts[name] = r.F
        else:
            points[name] = (s.makespan, s.energy)
    return Comparison(rows, fronts, points, reference, js, fed, model, results,
                      {"params": params.to_dict(), "seed": seed, "n_evals_budget": n_evals})
