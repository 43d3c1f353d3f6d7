"""The one registry of algorithms that ``compare``, sweeps and the CLI share.

Every entry runs on a job-set and a federation and returns a
:class:`~moga.results.SearchResult`: a heuristic as a one-point front, GA-MF
as its best point, MOGA, its ablation and random search as fronts. A
result's representative schedule (the table row of ``compare`` and of a
sweep) is ``result.schedule(result.knee())``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..evolution.params import BUDGET, GAParams
from ..results import SearchResult
from .heuristics import HEURISTICS, heuristic, submit_order

__all__ = ["Algorithm", "ALGORITHMS", "algorithm", "run_algorithm"]

#: Evaluations random search gets when nothing else says (the in-order budget,
#: :data:`~moga.evolution.params.BUDGET`: population times generations).
DEFAULT_RANDOM_EVALS = BUDGET[0] * BUDGET[1]


@dataclass(frozen=True)
class Algorithm:
    """An entry of the registry.

    Attributes
    ----------
    name : str
    kind : {"heuristic", "front", "single"}
        One schedule, a front, or a search that returns its best schedule.
    params : {"none", "ga", "random"}
        What parameters it takes: none, GA parameters (:class:`GAParams`
        fields), or ``n_evals`` (random search).
    """

    name: str
    kind: str
    params: str


#: Every algorithm by name, in the order tables list them.
ALGORITHMS = {a.name: a for a in (
    *(Algorithm(h, "heuristic", "none") for h in HEURISTICS),
    Algorithm("MOGA", "front", "ga"),
    Algorithm("MOGA without blacklist", "front", "ga"),
    Algorithm("random search", "front", "random"),
    Algorithm("GA-MF", "single", "ga"),
)}


def algorithm(name: str) -> Algorithm:
    """The registry entry ``name``, or a ValueError listing the known ones."""
    try:
        return ALGORITHMS[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown algorithm {name!r}; choose from {list(ALGORITHMS)}") from None


def run_algorithm(name: str, js, fed, *, model: str = "fluid", seed: int = 1, params=None,
                  n_evals: int | None = None, progress: bool = False) -> SearchResult:
    """Run algorithm ``name`` of :data:`ALGORITHMS` on a job-set.

    Parameters
    ----------
    params : GAParams, dict or TOML path, optional
        GA parameters of the GA algorithms (ignored by the others).
    n_evals : int, optional
        Budget of random search (default :data:`DEFAULT_RANDOM_EVALS`).
    progress : bool
        Progress bar of MOGA runs.
    """
    from ..evolution.runner import run
    from .search import ga_mf, random_search

    algo = algorithm(name)
    if algo.kind == "heuristic":
        t0 = time.perf_counter()
        s = heuristic(js, fed, name, model)
        wall = time.perf_counter() - t0
        J, K = len(js), fed.n_clusters
        X = np.concatenate([submit_order(js).astype(float), np.zeros(J * K)])[None, :]
        backfill, rule = HEURISTICS[name]
        return SearchResult(name=name, F=np.array([[s.makespan, s.energy]]), X=X, jobset=js,
                            federation=fed, model=model, seed=int(seed), n_evals=1,
                            wall_time=wall, backfill=backfill, rule=rule)
    if name in ("MOGA", "MOGA without blacklist"):
        return run(js, fed, seed=seed, model=model, params=GAParams.coerce(params),
                   use_blacklist=name == "MOGA", progress=progress)
    if name == "GA-MF":
        return ga_mf(js, fed, seed=seed, model=model, params=GAParams.coerce(params))
    return random_search(js, fed, DEFAULT_RANDOM_EVALS if n_evals is None else n_evals,
                         seed=seed, model=model)
