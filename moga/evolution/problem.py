"""pymoo problems over the federated decoder (docs/design.md §7).

An individual ``X`` is one float vector: ``J`` order entries (a permutation of
``0..J-1`` stored as floats) then ``J * K`` blacklist entries in [0, 1], row
by row (job-major). :func:`split` and :func:`join` convert between ``X`` and
``(order, blacklist)``.
"""

from __future__ import annotations

import time

import numpy as np
from pymoo.core.problem import Problem
from pymoo.core.repair import Repair

from ..model.chromosome import join, repair, split
from ..model.jobset import JobSet
from ..model.objectives import Decoded, Units, check_objectives, columns, needs_of
from ..model.platform import Federation
from ..model.schedule import evaluate_batch

__all__ = ["OBJECTIVES", "SchedulingProblem", "ScheduleRepair", "split", "join"]

#: Most chromosome values decoded in one batch (16 MB of genes, 7 rows of a 55,000-job set
#: on 4 clusters): the decoder's contiguous copy of a batch's blacklists is a transient on
#: top of the population and its children, and smaller batches decode as fast.
DECODE_BLOCK = 1 << 21

#: Objectives a problem can minimise, with their units: a live view of the catalogue
#: (:data:`moga.objectives.CATALOGUE`) as ``{name: unit}``.
OBJECTIVES = Units()


class SchedulingProblem(Problem):
    """Minimise schedule objectives over (order, blacklist) chromosomes.

    The whole population is decoded in one parallel batch call per generation.

    Parameters
    ----------
    jobset : JobSet
    federation : Federation
    model : {"fluid", "at_start"}
        Execution model of the decoder.
    objectives : sequence of str
        Names from the catalogue (:data:`moga.objectives.CATALOGUE`), default
        ``("makespan", "energy")``. The decode is asked for the per-job
        outputs (starts, finishes, allocations) only when one of them reads
        them.
    use_blacklist : bool
        True (default): ``X`` carries a blacklist. False: ``X`` is the order
        alone and every job may use every node (the ablation without blacklist,
        and GA-MF).
    backfill : {"none", "easy"}
        The decoder: jobs strictly in order (the MOGA decoder, default), or
        EASY backfilling with the order as the queue priority.

    Notes
    -----
    The order part of every individual must be a permutation. MOGA's
    operators (:mod:`moga.evolution.operators`) keep it one; with pymoo's
    stock operators pass ``repair=ScheduleRepair()`` to the algorithm.

    Attributes
    ----------
    decode_seconds : float
        Wall time spent in batch decoding so far.
    n_decoded : int
        Individuals decoded so far.
    """

    def __init__(self, jobset: JobSet, federation: Federation, model: str = "fluid",
                 objectives=("makespan", "energy"), use_blacklist: bool = True,
                 backfill: str = "none", **kwargs):
        use_blacklist = _use_blacklist(use_blacklist, kwargs, "SchedulingProblem")
        if backfill not in ("none", "easy"):
            raise ValueError(f"backfill must be 'none' or 'easy', got {backfill!r}")
        objectives = check_objectives(objectives)
        J, K = len(jobset), federation.n_clusters
        K_enc = K if use_blacklist else 0
        xu = np.concatenate([np.full(J, J - 1.0), np.ones(J * K_enc)])
        super().__init__(n_var=J + J * K_enc, n_obj=len(objectives), xl=np.zeros(J + J * K_enc),
                         xu=xu, vtype=float)
        self.use_blacklist = bool(use_blacklist)
        self.jobset = jobset
        self.federation = federation
        self.model = model
        self.backfill = backfill
        self.objectives = objectives
        self._needs = needs_of(objectives)
        self.n_jobs = J
        self.n_clusters = K
        self.decode_seconds = 0.0
        self.n_decoded = 0

    def split(self, X):
        """``(orders, blacklists)`` of ``X`` (see :func:`split`); zero blacklists without one."""
        if self.use_blacklist:
            return split(X, self.n_jobs, self.n_clusters)
        X = np.asarray(X, dtype=np.float64)
        orders, _ = split(X, self.n_jobs, 0)
        return orders, np.zeros(orders.shape + (self.n_clusters,))

    def decode(self, X):
        """Batch-decode ``X`` (P, n_var); returns the objective matrix (P, n_obj) and counters."""
        b = self._batch(X, self.backfill)
        return self._columns(b), b

    def _columns(self, b) -> np.ndarray:
        """The objective matrix (P, n_obj) of the batch decode ``b``, by the catalogue."""
        return columns(self.objectives, Decoded.of_batch(b, self.jobset, self.federation))

    def start_orders(self, X, backfill: str = "easy") -> np.ndarray:
        """The start orders (P, J) of the rows of ``X`` decoded with ``backfill``.

        Jobs by start time, ties in the row's order; see
        :class:`~moga.evolution.resequencing.Resequencer`. The decodes count
        in ``n_decoded`` and ``decode_seconds``.
        """
        return self._batch(X, backfill, start_orders=True, objectives=False).start_orders

    def _batch(self, X, backfill, start_orders=False, allocations=False, starts=False,
               objectives=True):
        """One timed, counted batch decode of the rows of ``X``.

        With ``objectives``, the decode also gives the per-job outputs the problem's
        objectives read (:attr:`moga.objectives.Objective.needs`). A large population
        is decoded in blocks of rows (:data:`DECODE_BLOCK` values each): the decoder's
        contiguous copy of the blacklists then stays small.
        """
        needs = self._needs if objectives else frozenset()
        X = np.atleast_2d(X)
        t0 = time.perf_counter()
        rows = max(1, DECODE_BLOCK // max(X.shape[1], 1))
        try:
            parts = []
            for i in range(0, len(X), rows):
                orders, bls = self.split(X[i:i + rows])
                parts.append(evaluate_batch(self.jobset, self.federation, orders, bls,
                                            model=self.model, backfill=backfill,
                                            start_orders=start_orders,
                                            allocations=allocations or "alloc" in needs,
                                            starts=starts or "start" in needs,
                                            finishes="finish" in needs))
            b = parts[0] if len(parts) == 1 else type(parts[0])(*(
                None if f[0] is None else np.concatenate(f) for f in zip(*parts, strict=True)))
        except ValueError as e:
            if "not a permutation" not in str(e):
                raise
            # The decoder has checked the orders already; say what to do about it.
            raise ValueError(
                f"{e} (pymoo's stock operators do not keep the order part a permutation): use "
                "MOGA's operators (moga.evolution.operators) or pass "
                "repair=moga.evolution.ScheduleRepair() to the algorithm") from None
        self.decode_seconds += time.perf_counter() - t0
        self.n_decoded += len(X)
        return b

    def _evaluate(self, X, out, *args, **kwargs):
        F, b = self.decode(X)
        out["F"] = F


class ScheduleRepair(Repair):
    """Make any individual valid: orders as random keys, blacklists clipped to [0, 1].

    Lets pymoo's stock samplings, crossovers and mutations work on a
    :class:`SchedulingProblem` (see :func:`moga.model.chromosome.repair`).
    """

    def _do(self, problem, X, **kwargs):
        K = problem.n_clusters if getattr(problem, "use_blacklist", True) else 0
        return repair(X, problem.n_jobs, K)


def _use_blacklist(use_blacklist, kwargs, where):
    """The ``use_blacklist`` flag, accepting the old keyword ``blacklist`` with a warning."""
    if "blacklist" in kwargs:
        import warnings

        warnings.warn(f"{where}(blacklist=...) is now use_blacklist=...", DeprecationWarning,
                      stacklevel=3)
        use_blacklist = kwargs.pop("blacklist")
    if kwargs:
        raise TypeError(f"{where}() got unexpected keyword argument(s) {sorted(kwargs)}")
    return bool(use_blacklist)
