"""pymoo problems over the federated decoder (DESIGN.md section 7).

An individual ``X`` is one float vector: ``J`` order entries (a permutation of
``0..J-1`` stored as floats) then ``J * K`` blacklist entries in [0, 1], row
by row (job-major). :func:`split` and :func:`join` convert between ``X`` and
``(order, blacklist)``.
"""

from __future__ import annotations

import time

import numpy as np
from pymoo.core.problem import Problem

from .jobset import JobSet
from .platform import Federation
from .schedule import evaluate_batch

__all__ = ["OBJECTIVES", "SchedulingProblem", "split", "join"]

#: Objectives a problem can minimise, with their units ("makespan+flowtime" is the
#: single objective of GA-MF, after Gabaldon et al. 2015).
OBJECTIVES = {"makespan": "s", "energy": "J", "flowtime": "s", "makespan+flowtime": "s"}


def split(X, n_jobs: int, n_clusters: int):
    """``(orders, blacklists)`` of a population ``X`` (P, J + J*K), or of one individual.

    Returns int64 orders (P, J) and float blacklists (P, J, K); for a 1-D ``X``
    the leading population axis is dropped.
    """
    X = np.asarray(X, dtype=np.float64)
    single = X.ndim == 1
    X2 = np.atleast_2d(X)
    expected = n_jobs + n_jobs * n_clusters
    if X2.shape[1] != expected:
        raise ValueError(
            f"an individual has {n_jobs} order + {n_jobs}x{n_clusters} blacklist entries = "
            f"{expected} values, got {X2.shape[1]}"
        )
    orders = np.rint(X2[:, :n_jobs]).astype(np.int64)
    bls = X2[:, n_jobs:].reshape(X2.shape[0], n_jobs, n_clusters)
    return (orders[0], bls[0]) if single else (orders, bls)


def join(orders, blacklists) -> np.ndarray:
    """The inverse of :func:`split`: ``X`` from orders (P, J) and blacklists (P, J, K)."""
    orders = np.asarray(orders)
    blacklists = np.asarray(blacklists, dtype=np.float64)
    single = orders.ndim == 1
    o = np.atleast_2d(orders).astype(np.float64)
    b = blacklists.reshape(o.shape[0], -1)
    X = np.hstack([o, b])
    return X[0] if single else X


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
        Names from :data:`OBJECTIVES`, default ``("makespan", "energy")``.
    blacklist : bool
        True (default): ``X`` carries a blacklist. False: ``X`` is the order
        alone and every job may use every node (the ablation without blacklist,
        and GA-MF).

    Attributes
    ----------
    decode_seconds : float
        Wall time spent in batch decoding so far.
    n_decoded : int
        Individuals decoded so far.
    """

    def __init__(self, jobset: JobSet, federation: Federation, model: str = "fluid",
                 objectives=("makespan", "energy"), blacklist: bool = True):
        objectives = tuple(objectives)
        unknown = [o for o in objectives if o not in OBJECTIVES]
        if unknown or not objectives:
            raise ValueError(f"objectives must be a non-empty subset of {list(OBJECTIVES)}, "
                             f"got {list(objectives)}")
        J, K = len(jobset), federation.n_clusters
        K_enc = K if blacklist else 0
        xu = np.concatenate([np.full(J, J - 1.0), np.ones(J * K_enc)])
        super().__init__(n_var=J + J * K_enc, n_obj=len(objectives), xl=np.zeros(J + J * K_enc),
                         xu=xu, vtype=float)
        self.use_blacklist = bool(blacklist)
        self.jobset = jobset
        self.federation = federation
        self.model = model
        self.objectives = objectives
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
        orders, bls = self.split(np.atleast_2d(X))
        t0 = time.perf_counter()
        b = evaluate_batch(self.jobset, self.federation, orders, bls, model=self.model)
        self.decode_seconds += time.perf_counter() - t0
        self.n_decoded += orders.shape[0]
        cols = {"makespan": b.makespan, "energy": b.energy, "flowtime": b.flowtime,
                "makespan+flowtime": b.makespan + b.flowtime}
        return np.column_stack([cols[o] for o in self.objectives]), b

    def _evaluate(self, X, out, *args, **kwargs):
        F, b = self.decode(X)
        out["F"] = F
