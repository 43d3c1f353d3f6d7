"""What a MOGA run of one population (:class:`moga.evolution.search.Search`) and the island
model (:mod:`moga.evolution.islands`) share: the result record, the operators built from
the parameters, the seeded archive, the per-generation recorder, the stop rules and the
submit-order chromosome."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..metrics import normalized_hypervolume
from ..results import SearchResult
from .archive import ParetoArchive
from .mating import NeighbourSelection
from .operators import ScheduleSampling
from .params import GAParams
from .resequencing import EasySearch, Resequencer

__all__ = ["HV_FACTOR", "CpuBudget", "Interrupted", "MaxGenerations", "RunResult",
           "Stagnation", "StopRule", "TimeLimit"]

#: The hypervolume reference point is this factor times the submit-order objectives.
HV_FACTOR = 1.1


#: MOGA's crossover probabilities when :class:`GAParams` leaves them at None.
MOGA_CROSSOVER_PROB = 0.5
#: MOGA's share of children given a whole-cluster blacklist move (``GAParams.cluster_rate``
#: left at None).
MOGA_CLUSTER_RATE = 0.8


@dataclass(kw_only=True)
class RunResult(SearchResult):
    """The outcome of :func:`run`: a :class:`~moga.results.SearchResult` with its history.

    Attributes
    ----------
    F, X, jobset, federation, model, seed, n_evals, wall_time, use_blacklist, info
        As in :class:`~moga.results.SearchResult`; ``F`` is sorted by the first
        objective, one entry per distinct objective vector.
    history : dict of ndarray
        Per generation: ``n_gen``, ``n_evals``, ``hv`` (normalised hypervolume),
        ``front_size``, ``time_s`` (elapsed).
    objectives : tuple of str
    params : GAParams
    reference : ndarray (m,)
        Objectives of the submit order with an empty blacklist, same model.
    ref_point : ndarray (m,)
        ``HV_FACTOR * reference``: the hypervolume reference point; ``hv`` is the
        hypervolume of ``F / reference`` against ``(1.1, 1.1)``.
    decode_time : float
        Seconds spent decoding.
    """

    history: dict
    objectives: tuple
    params: GAParams
    reference: np.ndarray
    ref_point: np.ndarray
    decode_time: float
    name: str = "MOGA"

    def _state(self):
        meta = {"objectives": list(self.objectives), "params": self.params.to_dict(),
                "reference": self.reference.tolist(), "ref_point": self.ref_point.tolist(),
                "decode_time": float(self.decode_time)}
        return meta, {f"history_{k}": np.asarray(v) for k, v in self.history.items()}

    @classmethod
    def _from_state(cls, common: dict, meta: dict, arrays: dict) -> RunResult:
        """The inverse of :meth:`_state` (see :func:`moga.load_result`)."""
        history = {k[len("history_"):]: v for k, v in arrays.items() if k.startswith("history_")}
        return cls(**common, history=history, objectives=tuple(meta["objectives"]),
                   params=GAParams.from_dict(meta["params"]),
                   reference=np.asarray(meta["reference"], dtype=float),
                   ref_point=np.asarray(meta["ref_point"], dtype=float),
                   decode_time=float(meta["decode_time"]))

    @property
    def hv(self) -> float:
        """Normalised hypervolume of the final front."""
        return normalized_hypervolume(self.F, self.reference, HV_FACTOR)

    def summary(self) -> dict:
        """A JSON-ready summary (no chromosomes)."""
        k = self.knee()
        return {
            "algorithm": self.name,
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
            "use_blacklist": bool(self.use_blacklist), "backfill": self.backfill,
            "generations": int(self.history["n_gen"][-1]) if len(self.history["n_gen"]) else 0,
            "partial": self.info.get("stopped_by") in ("interrupted", "cluster lost"),
            **self.info,
        }


class _Recorder:
    """Per-generation history (and the archive's updates) of a run, whichever loop drives it."""

    def __init__(self, reference, t0, on_generation=None, archive=None, twins=None):
        self.reference = reference
        self.t0 = t0
        self.rows = []
        self.on_generation = on_generation
        self.archive = archive
        self.twins = twins

    def record(self, n_gen, n_evals, off_F, off_X, front_F):
        """Record a generation: ``off_X`` (an array, or a callable giving the rows asked
        for) were just decoded to ``off_F``; ``front_F`` is the population's front (used
        without archive). With ``twins`` (:meth:`EasySearch.twins`), the archive is offered
        instead the in-order twins of the rows whose (EASY) objectives it admits."""
        if self.twins is not None:
            rows = np.flatnonzero(self.archive.admits(off_F))
            off_F, off_X = self.twins(off_X if isinstance(off_X, np.ndarray)
                                      else off_X(np.arange(len(off_F))), rows)
        if self.archive is not None:
            # Only candidates the archive may keep, and of those only the kept rows are
            # copied: gathering every offspring's X copies the whole generation (100 rows
            # of J * (K + 1) values).
            new = np.flatnonzero(self.archive.admits(off_F))
            if new.size:
                if isinstance(off_X, np.ndarray):
                    self.archive.update(off_F[new], off_X, rows=new)
                else:
                    self.archive.update(off_F[new], off_X(new))
            F = self.archive.F
        else:
            F = front_F()
        hv = normalized_hypervolume(F, self.reference, HV_FACTOR)
        self.rows.append((n_gen, n_evals, hv, len(F), time.perf_counter() - self.t0))
        if self.on_generation is not None:
            self.on_generation(n_gen, n_evals, hv)

    def stagnated(self, window, tol) -> bool:
        """See :func:`stagnated`."""
        return stagnated(self.rows, window, tol)


def stagnated(rows, window: int, tol: float) -> bool:
    """The hypervolume rose by at most ``tol`` (relative) over the last ``window``
    generations: ``rows`` are ``(n_gen, n_evals, hv, ...)``, one per generation or, in an
    island run, per epoch; the hypervolume then is that of the last row at least ``window``
    generations back (false while there is none)."""
    if not rows:
        return False
    gen, now = rows[-1][0], rows[-1][2]
    for r in reversed(rows):
        if r[0] <= gen - window:
            return now - r[2] <= tol * max(now, 1e-300)
    return False


def _search_parts(problem, params, initial=None):
    """``(search, sampling, selection, crossover, mutation, improve)`` of a run of ``params``
    on ``problem``: the problem the population is decoded by (the EASY search's or the run's
    own) and the NSGA-II operators, as :func:`run` (and each island of an island run) uses them.
    """
    search = problem
    if params.easy_search:
        if problem.backfill != "none":
            raise ValueError("easy_search applies to the in-order decoder (backfill='none'); "
                             "with backfill='easy' the run searches EASY's space already")
        search = EasySearch(problem)
    crossover, mutation = params.operators(crossover_prob=MOGA_CROSSOVER_PROB,
                                            cluster_rate=MOGA_CLUSTER_RATE)
    sampling = ScheduleSampling(seeded=params.seeded, levels=params.seed_levels,
                                initial=initial, heuristics=params.seed_heuristics,
                                select=params.select_seeds, fit=params.fit_seeds,
                                max_candidates=params.seed_candidates)
    selection = NeighbourSelection(params.mating_neighbours) if params.mating_neighbours else None
    # Re-sequencing only makes sense for the in-order decoder (under EASY the order
    # is a queue priority already).
    improve = (Resequencer(params.resequence_rate)
               if params.resequence_rate and problem.backfill == "none" and search is problem
               else None)
    return search, sampling, selection, crossover, mutation, improve


def survival_of(params, n_obj: int):
    """The survival of a run of ``params`` with ``n_obj`` objectives: None (NSGA-II's,
    :func:`~moga.evolution.survival.survive`) or NSGA-III's
    (:class:`~moga.evolution.survival.ReferenceSurvival`, one per population: it has a
    memory). ``GAParams.survival`` left at None gives NSGA-II's for two objectives and
    NSGA-III's for three or more, which measured ahead inside MOGA's loop at equal
    evaluations (``results/objectives_three.md``)."""
    if params.survival == "nsga3" or (params.survival is None and n_obj >= 3):
        from .survival import ReferenceSurvival

        return ReferenceSurvival(n_obj, params.pop_size)
    return None


def _seeded_archive(problem, params, reference):
    """The run's :class:`ParetoArchive` holding the heuristics' allocation seeds (None
    without an archive)."""
    if not params.archive_size:
        return None
    n_obj = len(problem.objectives)
    if params.archive_size < 2 * n_obj:
        raise ValueError(f"archive_size must be 0 or >= {2 * n_obj} (two points "
                         f"per objective), got {params.archive_size}")
    archive = ParetoArchive(params.archive_size, reference)
    if params.seeded and params.seed_heuristics and problem.use_blacklist:
        # The heuristics' schedules, reproduced by their allocation seeds, go to
        # the archive only: in the population they crowd the search (the default
        # run's median fell from 89.9% to 86.8% of the reference front).
        from .seeding import heuristic_seeds

        seeds = heuristic_seeds(problem.jobset, problem.federation, problem.model)
        Xs = np.array([np.concatenate([o.astype(float), bl.reshape(-1)])
                       for o, bl in seeds.values()])
        archive.update(problem.decode(Xs)[0], Xs)
    return archive


# -- stop rules ----------------------------------------------------------------------------


class StopRule:
    """A reason for a search to end, asked after every generation.

    ``rule(search)`` is true when the search should end after the generation
    just made; :attr:`name` is what ``info["stopped_by"]`` then says. A rule
    with a memory of its own gives it in :meth:`state` and takes it back in
    :meth:`set_state`, so a resumed search stops where the uninterrupted one
    would.
    """

    name = "stop"

    def __call__(self, search) -> bool:
        raise NotImplementedError

    def state(self) -> dict:
        """The rule's memory (JSON-ready)."""
        return {}

    def set_state(self, state: dict) -> None:
        """Take back a :meth:`state`."""


class MaxGenerations(StopRule):
    """The search has made ``n_gen`` generations."""

    name = "generations"

    def __init__(self, n_gen: int):
        self.n_gen = int(n_gen)

    def __call__(self, search) -> bool:
        return search.n_gen >= self.n_gen


class TimeLimit(StopRule):
    """``seconds`` of wall time have passed since the search began (resumed runs count the
    time before the interruption too)."""

    name = "time limit"

    def __init__(self, seconds: float):
        self.seconds = float(seconds)

    def __call__(self, search) -> bool:
        return search.elapsed >= self.seconds


class Stagnation(StopRule):
    """The hypervolume rose by at most ``tol`` (relative) over the last ``window``
    generations."""

    name = "stagnation"

    def __init__(self, window: int, tol: float):
        self.window, self.tol = int(window), float(tol)

    def __call__(self, search) -> bool:
        return search.recorder.stagnated(self.window, self.tol)


class Interrupted(StopRule):
    """The caller's ``interrupt()`` turned true (the CLI's turns true on Ctrl-C)."""

    name = "interrupted"

    def __init__(self, interrupt):
        self.interrupt = interrupt

    def __call__(self, search) -> bool:
        return bool(self.interrupt())


class CpuBudget(StopRule):
    """A run the size rule sized has spent its CPU budget: true once the CPU seconds the
    search has used, and one more generation at the mean cost of those after the first
    asked, would pass ``budget``, and the run has had its ``floor`` of generations. The
    rule's estimate picks the search; this stop ends the run at the budget, wherever the
    job-set's decodes are dearer or cheaper than estimated."""

    name = "cpu budget"

    def __init__(self, budget: float, floor: int = 1):
        self.budget, self.floor = float(budget), int(floor)
        self.first = None  # (generation, search CPU seconds) when first asked

    def __call__(self, search) -> bool:
        now = search.cpu_seconds
        if self.first is None:
            self.first = (search.n_gen, now)
        g0, c0 = self.first
        n = search.n_gen
        per = (now - c0) / (n - g0) if n > g0 else 0.0
        return n >= self.floor and now + per > self.budget

    def state(self) -> dict:
        return {"first": None if self.first is None else list(self.first)}

    def set_state(self, state: dict) -> None:
        first = state.get("first")
        self.first = None if first is None else (int(first[0]), float(first[1]))


def _check_stops(time_limit, stagnation) -> None:
    """``time_limit`` and ``stagnation`` of :func:`moga.run`, refused outside their bounds
    (:data:`moga.bounds.BOUNDS`), naming the keyword."""
    from ..bounds import BOUNDS

    for name, v, what in (("time_limit", time_limit, "a number of seconds"),
                          ("stagnation", stagnation, "a number of generations")):
        if v is None:
            continue
        b = BOUNDS[name]
        if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) \
                or (name == "stagnation" and not isinstance(v, (int, np.integer))) \
                or not b.contains(v):
            raise ValueError(f"{name} must be {what} in {b.interval()}, got {v!r}")


def _unsized_warning(params: GAParams, backfill: str, islands) -> str:
    """The warning for a ``cpu_budget`` the size rule cannot apply, naming what the caller
    set (:func:`~moga.evolution.sizing.unsized_by`)."""
    words = {"islands": "islands", "backfill": f"backfill={backfill!r}",
             "archive_size": "archive_size=0"}
    from .sizing import unsized_by

    given = [words.get(n, n) for n in unsized_by(params, backfill, islands)]
    return ("cpu_budget bounds only a run whose population, generations and search the size "
            f"rule picks, and this run was given {', '.join(given)}: it ignores the budget "
            "(bound it with n_gen or time_limit)")


def _submit_individual(jobset, federation=None):
    """The submit order with an empty blacklist (no blacklist part when ``federation`` is None)."""
    J = len(jobset)
    K = 0 if federation is None else federation.n_clusters
    order = jobset.submit_order.astype(float)
    return np.concatenate([order, np.zeros(J * K)])[None, :]
