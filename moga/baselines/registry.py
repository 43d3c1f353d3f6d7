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

__all__ = ["Algorithm", "ALGORITHMS", "algorithm", "in_objectives", "run_algorithm"]

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
                  n_evals: int | None = None, progress: bool = False,
                  objectives=None) -> SearchResult:
    """Run algorithm ``name`` of :data:`ALGORITHMS` on a job-set.

    Parameters
    ----------
    params : GAParams, dict or TOML path, optional
        GA parameters of the GA algorithms (ignored by the others).
    n_evals : int, optional
        Budget of random search (default :data:`DEFAULT_RANDOM_EVALS`).
    progress : bool
        Progress bar of MOGA runs.
    objectives : sequence of str, optional
        Catalogue objectives of the result's ``F`` (default makespan and energy).
        MOGA searches them; the other algorithms search as they always do, and
        their members are then measured in these objectives, the dominated ones
        left out (:func:`in_objectives`).
    """
    from ..model.objectives import DEFAULT

    objectives = DEFAULT if objectives is None else tuple(objectives)
    if name in ("MOGA", "MOGA without blacklist") or objectives == DEFAULT:
        return _run_algorithm(name, js, fed, model=model, seed=seed, params=params,
                              n_evals=n_evals, progress=progress, objectives=objectives)
    return in_objectives(_run_algorithm(name, js, fed, model=model, seed=seed, params=params,
                                        n_evals=n_evals, progress=progress), objectives)


def in_objectives(res: SearchResult, objectives) -> SearchResult:
    """``res`` with ``F`` the catalogue ``objectives`` of its members' schedules: the
    distinct non-dominated ones, sorted by the first objective."""
    import dataclasses

    import moocore

    from ..model.objectives import values_of_schedule

    F = np.array([values_of_schedule(res.schedule(i), objectives) for i in range(len(res.F))])
    _, first = np.unique(F, axis=0, return_index=True)
    keep = first[np.asarray(moocore.is_nondominated(F[first], keep_weakly=False))]
    keep = keep[np.lexsort(F[keep].T[::-1])]
    return dataclasses.replace(res, F=F[keep], X=res.X[keep])


def _run_algorithm(name, js, fed, *, model, seed, params, n_evals, progress,
                   objectives=None) -> SearchResult:
    """:func:`run_algorithm` in the algorithm's own objectives (MOGA: ``objectives``)."""
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
                   use_blacklist=name == "MOGA", progress=progress,
                   **({} if objectives is None else {"objectives": objectives}))
    if name == "GA-MF":
        return ga_mf(js, fed, seed=seed, model=model, params=GAParams.coerce(params))
    return random_search(js, fed, DEFAULT_RANDOM_EVALS if n_evals is None else n_evals,
                         seed=seed, model=model)
