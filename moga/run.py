"""``moga.run``: NSGA-II over (order, blacklist) chromosomes, and its result."""

from __future__ import annotations

import dataclasses
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from pymoo.algorithms.moo.nsga2 import NSGA2
from pymoo.core.callback import Callback
from pymoo.optimize import minimize

from .jobset import JobSet
from .metrics import knee_index, normalized_hypervolume
from .operators import ScheduleCrossover, ScheduleDuplicateElimination, ScheduleMutation, ScheduleSampling
from .platform import Federation
from .problem import SchedulingProblem, split
from .schedule import Schedule, evaluate

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = ["GAParams", "RunResult", "run", "HV_FACTOR"]

#: The hypervolume reference point is this factor times the submit-order objectives.
HV_FACTOR = 1.1


@dataclass(frozen=True)
class GAParams:
    """Parameters of the genetic algorithm.

    Attributes
    ----------
    pop_size, n_gen : int
        Population size and number of generations.
    prob_order_crossover, prob_blacklist_crossover : float
        Probability that a mating crosses the order / blacklist parts.
    blacklist_crossover : {"uniform", "blend"}
    blend_alpha : float
        Widening of the blend crossover.
    order_mutation_rate, blacklist_mutation_rate : float or None
        Per-gene mutation frequencies (None: ``1 / J``).
    seeded : bool
        Seed the initial population with the submit order and uniform blacklists.
    seed_levels : tuple of float
        Blacklist levels of that seeding grid.
    """

    pop_size: int = 100
    n_gen: int = 200
    prob_order_crossover: float = 0.9
    prob_blacklist_crossover: float = 0.9
    blacklist_crossover: str = "uniform"
    blend_alpha: float = 0.5
    order_mutation_rate: float | None = None
    blacklist_mutation_rate: float | None = None
    seeded: bool = True
    seed_levels: tuple = (0.0, 0.5, 1.0)

    def __post_init__(self):
        if int(self.pop_size) != self.pop_size or self.pop_size < 2:
            raise ValueError(f"pop_size must be an integer >= 2, got {self.pop_size}")
        if int(self.n_gen) != self.n_gen or self.n_gen < 1:
            raise ValueError(f"n_gen must be an integer >= 1, got {self.n_gen}")
        object.__setattr__(self, "seed_levels", tuple(float(v) for v in self.seed_levels))
        # The operators validate the rest; build them once to fail early with their messages.
        self.operators()

    def operators(self):
        """``(crossover, mutation)`` configured by these parameters."""
        return (ScheduleCrossover(self.prob_order_crossover, self.prob_blacklist_crossover,
                                  self.blacklist_crossover, self.blend_alpha),
                ScheduleMutation(self.order_mutation_rate, self.blacklist_mutation_rate))

    def replace(self, **changes) -> GAParams:
        """A copy with some fields changed (None values are ignored)."""
        return dataclasses.replace(self, **{k: v for k, v in changes.items() if v is not None})

    def to_dict(self) -> dict:
        """Plain dict of the parameters (None values left out)."""
        d = dataclasses.asdict(self)
        d["seed_levels"] = list(self.seed_levels)
        return {k: v for k, v in d.items() if v is not None}

    @classmethod
    def from_dict(cls, d: dict, source: str = "parameters") -> GAParams:
        """Build from a dict; unknown keys raise an error naming them and ``source``."""
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(d) - names)
        if unknown:
            raise ValueError(f"{source}: unknown GA parameter(s) {unknown}; known: {sorted(names)}")
        try:
            return cls(**d)
        except (TypeError, ValueError) as e:
            raise ValueError(f"{source}: {e}") from None

    @classmethod
    def from_toml(cls, path) -> GAParams:
        """Read parameters from a TOML file (top level, or a ``[ga]`` table)."""
        path = Path(path)
        with path.open("rb") as fh:
            doc = tomllib.load(fh)
        return cls.from_dict(doc.get("ga", doc), source=str(path))

    def to_toml(self) -> str:
        """The parameters as TOML that :meth:`from_toml` reads."""
        lines = []
        for k, v in self.to_dict().items():
            if isinstance(v, bool):
                v = str(v).lower()
            elif isinstance(v, str):
                v = f'"{v}"'
            lines.append(f"{k} = {v}")
        return "\n".join(lines) + "\n"


@dataclass
class RunResult:
    """The outcome of :func:`run`.

    Attributes
    ----------
    F : ndarray (n, m)
        Objectives of the final non-dominated front, sorted by the first
        objective; one entry per distinct objective vector.
    X : ndarray (n, J + J*K)
        Their chromosomes (see :func:`moga.problem.split`).
    history : dict of ndarray
        Per generation: ``n_gen``, ``n_evals``, ``hv`` (normalised hypervolume),
        ``front_size``, ``time_s`` (elapsed).
    reference : ndarray (m,)
        Objectives of the submit order with an empty blacklist, same model.
    ref_point : ndarray (m,)
        ``HV_FACTOR * reference``: the hypervolume reference point; ``hv`` is the
        hypervolume of ``F / reference`` against ``(1.1, 1.1)``.
    """

    F: np.ndarray
    X: np.ndarray
    history: dict
    jobset: JobSet
    federation: Federation
    model: str
    objectives: tuple
    seed: int
    params: GAParams
    reference: np.ndarray
    ref_point: np.ndarray
    wall_time: float
    decode_time: float
    n_evals: int
    extra: dict = field(default_factory=dict)

    @property
    def hv(self) -> float:
        """Normalised hypervolume of the final front."""
        return normalized_hypervolume(self.F, self.reference, HV_FACTOR)

    def knee(self) -> int:
        """Index of the knee of the front (see :func:`moga.metrics.knee_index`)."""
        return knee_index(self.F)

    def chromosome(self, i: int):
        """``(order, blacklist)`` of front member ``i`` (a zero blacklist for runs without one)."""
        J, K = len(self.jobset), self.federation.n_clusters
        if self.extra.get("use_blacklist", True):
            return split(self.X[i], J, K)
        order, _ = split(self.X[i], J, 0)
        return order, np.zeros((J, K))

    def schedule(self, i: int) -> Schedule:
        """Decode front member ``i`` into a :class:`~moga.schedule.Schedule`."""
        if not -len(self.F) <= i < len(self.F):
            raise IndexError(f"the front has {len(self.F)} members, got index {i}")
        order, bl = self.chromosome(i)
        return evaluate(self.jobset, self.federation, order, bl, model=self.model)

    def summary(self) -> dict:
        """A JSON-ready summary (no chromosomes)."""
        k = self.knee()
        return {
            "jobset": self.jobset.name, "n_jobs": len(self.jobset),
            "federation": self.federation.name, "model": self.model,
            "objectives": list(self.objectives), "seed": self.seed,
            "params": self.params.to_dict(), "n_evals": self.n_evals,
            "wall_time_s": self.wall_time, "decode_time_s": self.decode_time,
            "reference": self.reference.tolist(), "ref_point": self.ref_point.tolist(),
            "hv": self.hv, "front_size": int(len(self.F)), "knee": int(k),
            "knee_F": self.F[k].tolist(),
            "knee_change_pct": (100 * (self.F[k] / self.reference - 1)).tolist(),
            "hv_history": self.history["hv"].tolist(),
            "use_blacklist": bool(self.extra.get("use_blacklist", True)),
        }


class _History(Callback):
    def __init__(self, reference, t0, on_generation=None):
        super().__init__()
        self.reference = reference
        self.t0 = t0
        self.rows = []
        self.on_generation = on_generation

    def notify(self, algorithm):
        F = algorithm.opt.get("F")
        hv = normalized_hypervolume(F, self.reference, HV_FACTOR)
        self.rows.append((algorithm.n_gen, algorithm.evaluator.n_eval, hv, len(F),
                          time.perf_counter() - self.t0))
        if self.on_generation is not None:
            self.on_generation(algorithm.n_gen, algorithm.evaluator.n_eval, hv)


def run(jobset: JobSet, federation: Federation, pop_size: int | None = None,
        n_gen: int | None = None, seed: int = 1, *, model: str = "fluid", params=None,
        objectives=("makespan", "energy"), extra=None, progress: bool = False,
        verbose: bool = False, blacklist: bool = True, on_generation=None) -> RunResult:
    """Evolve a Pareto front with NSGA-II.

    Parameters
    ----------
    jobset : JobSet
    federation : Federation
    pop_size, n_gen : int, optional
        Population size and generations (default 100 and 200, or those of ``params``).
    seed : int
        Seed of every random draw: the same seed gives a bit-identical result.
    model : {"fluid", "at_start"}
    params : GAParams, dict or path to a TOML file, optional
        GA parameters; ``pop_size`` and ``n_gen`` given here override them.
    objectives : sequence of str
        Default ``("makespan", "energy")``.
    extra : array_like, optional
        Individuals (rows of ``X``) to put in the initial population.
    progress, verbose : bool
        pymoo's progress bar and per-generation table.
    blacklist : bool
        False evolves the order alone, every job free to use every node: the
        ablation that shows what the blacklist buys.
    on_generation : callable, optional
        Called after every generation as ``on_generation(n_gen, n_evals, hv)``;
        an exception it raises (for example a pruning signal) ends the run.

    Returns
    -------
    RunResult
    """
    if params is None:
        params = GAParams()
    elif isinstance(params, dict):
        params = GAParams.from_dict(params)
    elif not isinstance(params, GAParams):
        params = GAParams.from_toml(params)
    params = params.replace(pop_size=pop_size, n_gen=n_gen)
    if int(seed) != seed:
        raise ValueError(f"seed must be an integer, got {seed}")

    problem = SchedulingProblem(jobset, federation, model=model, objectives=objectives,
                                blacklist=blacklist)
    base, _ = problem.decode(_submit_individual(jobset, federation if blacklist else None))
    reference = base[0]
    if np.any(reference <= 0):
        raise ValueError(f"the submit-order objectives must be > 0 to normalise, got {reference}")
    problem.decode_seconds, problem.n_decoded = 0.0, 0

    crossover, mutation = params.operators()
    algorithm = NSGA2(
        pop_size=params.pop_size,
        sampling=ScheduleSampling(seeded=params.seeded, levels=params.seed_levels, extra=extra),
        crossover=crossover,
        mutation=mutation,
        eliminate_duplicates=ScheduleDuplicateElimination(),
    )
    t0 = time.perf_counter()
    history = _History(reference, t0, on_generation)
    res = minimize(problem, algorithm, ("n_gen", params.n_gen), seed=int(seed),
                   callback=history, verbose=verbose, progress=progress, save_history=False)
    wall = time.perf_counter() - t0

    F, X = np.atleast_2d(res.F), np.atleast_2d(res.X)
    # One chromosome per distinct objective vector, sorted by the first objective.
    _, first = np.unique(F, axis=0, return_index=True)
    idx = first[np.lexsort(F[first].T[::-1])]
    F, X = F[idx], X[idx]
    h = np.array(history.rows, dtype=float)
    hist = {"n_gen": h[:, 0].astype(int), "n_evals": h[:, 1].astype(int), "hv": h[:, 2],
            "front_size": h[:, 3].astype(int), "time_s": h[:, 4]}
    return RunResult(F=F, X=X, history=hist, jobset=jobset, federation=federation, model=model,
                     objectives=tuple(objectives), seed=int(seed), params=params,
                     reference=reference, ref_point=HV_FACTOR * reference, wall_time=wall,
                     decode_time=problem.decode_seconds, n_evals=int(problem.n_decoded),
                     extra={"use_blacklist": bool(blacklist)})


def _submit_individual(jobset, federation=None):
    """The submit order with an empty blacklist (no blacklist part when ``federation`` is None)."""
    J = len(jobset)
    K = 0 if federation is None else federation.n_clusters
    order = np.lexsort((np.arange(J), jobset.release)).astype(float)
    return np.concatenate([order, np.zeros(J * K)])[None, :]
