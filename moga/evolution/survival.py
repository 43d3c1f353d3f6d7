"""NSGA-II's survival on arrays (pymoo's ``RankAndCrowding``, draw for draw)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit
from pymoo.operators.survival.rank_and_crowding.metrics import get_crowding_function
from pymoo.util.nds.non_dominated_sorting import NonDominatedSorting

from decoders._kernels import stable_argsort

__all__ = ["Population", "ReferenceSurvival", "SURVIVALS", "survive"]


@dataclass
class Population:
    """A population as arrays: chromosomes ``X`` (n, n_var), objectives ``F`` (n, m),
    NSGA-II ``rank`` and ``crowding`` (n,), and the chromosomes' row ``hashes`` (n,)."""

    X: np.ndarray
    F: np.ndarray
    rank: np.ndarray
    crowding: np.ndarray
    hashes: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.X)


_NDS = NonDominatedSorting()
_CROWDING = get_crowding_function("cd")
#: Most rows sorted by :func:`_pareto_ranks` (quadratic); larger sets, and sets with
#: infinite objectives, go to pymoo's sorting (moocore).
SMALL_SORT = 64


@njit(cache=True)
def _pareto_ranks(F):
    """Pareto rank (0 for the non-dominated rows) of every row of ``F`` (n, m), minimising;
    equal rows do not dominate each other (moocore's ``pareto_rank``)."""
    n, m = F.shape
    # dom[i] counts the rows that dominate row i; peeled front by front.
    dom = np.zeros(n, dtype=np.int64)
    beats = np.zeros((n, n), dtype=np.bool_)
    for i in range(n):
        for j in range(n):
            if i == j:
                continue
            le = True
            lt = False
            for k in range(m):
                if F[i, k] > F[j, k]:
                    le = False
                    break
                if F[i, k] < F[j, k]:
                    lt = True
            if le and lt:
                beats[i, j] = True
                dom[j] += 1
    rank = np.full(n, -1, dtype=np.int64)
    left = n
    r = 0
    while left > 0:
        for i in range(n):
            if rank[i] < 0 and dom[i] == 0:
                rank[i] = r
                left -= 1
        for i in range(n):
            if rank[i] == r:
                for j in range(n):
                    if beats[i, j]:
                        dom[j] -= 1
        r += 1
    return rank


@njit(cache=True)
def _crowding_distance(F):
    """pymoo's crowding distance (``calc_crowding_distance``) of the rows of ``F`` (n, m),
    operation for operation (for ``m < 8``: pymoo's sum over the objectives is numpy's, pairwise
    from 8 on): ``inf`` for the ends of each objective's order and for every
    row of a set of at most two; an objective equal over all rows adds nothing."""
    n, m = F.shape
    cd = np.zeros(n)
    if n <= 2:
        cd[:] = np.inf
        return cd
    part = np.empty((n, m))
    for k in range(m):
        col = F[:, k].copy()
        order = stable_argsort(col)
        s = col[order]
        norm = s.max() - s.min()
        for p in range(n):
            last = s[p] - s[p - 1] if p > 0 else np.inf
            nxt = s[p + 1] - s[p] if p < n - 1 else np.inf
            # pymoo divides by NaN where the norm is 0, then zeroes the NaNs.
            dl = last / norm if norm != 0 else np.nan
            dn = nxt / norm if norm != 0 else np.nan
            if np.isnan(dl):
                dl = 0.0
            if np.isnan(dn):
                dn = 0.0
            part[order[p], k] = dl + dn
    for i in range(n):
        # numpy sums a row of fewer than 8 entries left to right (not pairwise).
        t = part[i, 0]
        for k in range(1, m):
            t += part[i, k]
        cd[i] = t / m
    return cd


@njit(cache=True)
def _ranked_fronts(F, n_stop):
    """The fronts of ``F`` (m < 8 objectives) up to the one that brings the ranked rows to
    ``n_stop``: ``(order, rank, crowding, start, end)``, with ``order[:end]`` those fronts'
    rows by rank (ascending within a front), ``order[start:end]`` the last of them, and
    ``crowding`` each ranked row's crowding distance within its front."""
    n = F.shape[0]
    rank = _pareto_ranks(F)
    order = stable_argsort(rank)
    crowding = np.zeros(n)
    start = end = 0
    while end < n:
        start = end
        while end < n and rank[order[end]] == rank[order[start]]:
            end += 1
        front = order[start:end]
        cd = _crowding_distance(F[front])
        # Element by element: an array assigned to a slice or an index array brings in
        # Numba's shape-mismatch error, whose message formatting takes seconds to compile.
        for q in range(end - start):
            crowding[front[q]] = cd[q]
        if end >= n_stop:
            break
    return order, rank, crowding, start, end


def _fronts(F, n_stop: int) -> list:
    """The non-dominated fronts of ``F`` (row indices, ascending), up to the one that brings
    the ranked rows to ``n_stop`` (pymoo's ``NonDominatedSorting.do``)."""
    if len(F) > SMALL_SORT or not np.isfinite(F).all():  # moocore ranks infinities its way
        return _NDS.do(F, n_stop_if_ranked=n_stop)
    rank = _pareto_ranks(F)
    fronts, n_ranked = [], 0
    for r in range(int(rank.max()) + 1 if len(F) else 0):
        front = np.flatnonzero(rank == r)
        fronts.append(front)
        n_ranked += len(front)
        if n_ranked >= n_stop:
            break
    return fronts


def survive(X, F, n_survive: int, random_state, hashes=None) -> Population:
    """NSGA-II's survival (pymoo's ``RankAndCrowding``) of the rows of ``X``, ``F``.

    Whole fronts are kept in order of rank; the front that does not fit is
    cut by crowding distance, ties broken by ``random_state`` exactly as
    pymoo breaks them. Survivors come in pymoo's order (by front, the cut
    front by decreasing crowding distance). ``hashes`` (of the rows of ``X``)
    go with their rows.
    """
    F = np.asarray(F, dtype=float)
    n_survive = min(int(n_survive), len(F))
    if 0 < len(F) <= SMALL_SORT and F.shape[1] < 8 and np.isfinite(F).all():
        order, rank, crowding, start, end = _ranked_fronts(np.ascontiguousarray(F), n_survive)
        idx = order[:end]
        if end > n_survive:  # the last front is cut, as below
            front = order[start:end]
            cut = crowding[front]
            perm = random_state.permutation(len(cut))
            keep = perm[np.argsort(cut[perm], kind="quicksort")][::-1][:n_survive - start]
            idx = np.concatenate([order[:start], front[keep]])
        return Population(X[idx], F[idx], rank[idx], crowding[idx],
                          None if hashes is None else hashes[idx])
    survivors, ranks, crowds = [], [], []
    n_kept = 0
    for k, front in enumerate(_fronts(F, n_survive)):
        crowding = (_crowding_distance(np.ascontiguousarray(F[front, :])) if F.shape[1] < 8
                    else _CROWDING.do(F[front, :], n_remove=0))
        if n_kept + len(front) > n_survive:
            n_remove = n_kept + len(front) - n_survive
            # pymoo's randomized_argsort (method "numpy", descending), without its wrapper.
            perm = random_state.permutation(len(crowding))
            keep = perm[np.argsort(crowding[perm], kind="quicksort")][::-1][:-n_remove]
        else:
            keep = np.arange(len(front))
        survivors.append(front[keep])
        ranks.append(np.full(len(keep), k))
        crowds.append(crowding[keep])
        n_kept += len(keep)
    idx = np.concatenate(survivors)
    return Population(X[idx], F[idx], np.concatenate(ranks), np.concatenate(crowds),
                      None if hashes is None else hashes[idx])


#: Survivals a run can use (``GAParams.survival``): NSGA-II's rank and crowding distance, or
#: NSGA-III's reference directions.
SURVIVALS = ("nsga2", "nsga3")


class ReferenceSurvival:
    """NSGA-III's survival (pymoo's ``ReferenceDirectionSurvival``) with the array interface
    of :func:`survive`.

    The reference directions are Das and Dennis's, as many as fit the population
    (``n_partitions`` the largest whose count is at most ``pop_size``). Survivors
    get NSGA-II's rank and, as ``crowding``, minus their distance to their niche's
    direction, so that the mating's tournament (lower rank, then larger
    ``crowding``) prefers members close to a direction. The normalisation's ideal,
    worst and nadir points persist across generations, as in pymoo; :meth:`state`
    and :meth:`set_state` carry them.
    """

    def __init__(self, n_obj: int, pop_size: int):
        from pymoo.algorithms.moo.nsga3 import ReferenceDirectionSurvival
        from pymoo.util.ref_dirs import get_reference_directions

        p = 1
        while _n_directions(n_obj, p + 1) <= pop_size:
            p += 1
        self.ref_dirs = get_reference_directions("das-dennis", n_obj, n_partitions=p)
        self.survival = ReferenceDirectionSurvival(self.ref_dirs)
        self.n_obj = n_obj

    def __call__(self, X, F, n_survive: int, random_state, hashes=None) -> Population:
        from pymoo.core.population import Population as PymooPopulation
        from pymoo.core.problem import Problem

        F = np.asarray(F, dtype=float)
        pop = PymooPopulation.new(F=F, index=np.arange(len(F)))
        out = self.survival.do(Problem(n_var=1, n_obj=self.n_obj), pop,
                               n_survive=min(int(n_survive), len(F)),
                               random_state=random_state)
        idx = np.asarray(out.get("index"), dtype=np.int64)
        return Population(X[idx], F[idx], np.asarray(out.get("rank"), dtype=np.int64),
                          -np.asarray(out.get("dist_to_niche"), dtype=float),
                          None if hashes is None else hashes[idx])

    def state(self) -> dict:
        """The normalisation's points (arrays, or None before the first survival)."""
        n = self.survival.norm
        return {k: None if getattr(n, k) is None else np.array(getattr(n, k))
                for k in ("ideal_point", "worst_point", "nadir_point", "extreme_points")}

    def set_state(self, state: dict) -> None:
        """Take back a :meth:`state`."""
        n = self.survival.norm
        for k, v in state.items():
            setattr(n, k, None if v is None else np.array(v, dtype=float))


def _n_directions(n_obj: int, p: int) -> int:
    """Das and Dennis's directions for ``n_obj`` objectives and ``p`` partitions."""
    from math import comb

    return comb(p + n_obj - 1, n_obj - 1)
