"""A bounded archive of the best non-dominated individuals a run has seen.

NSGA-II keeps at most ``pop_size`` individuals and, once its first front
outgrows the population, truncates it by crowding distance alone: a
non-dominated point can be dropped and later be dominated by nothing the
population still holds, so the final population may be worse than something
the run once evaluated (a seeded heuristic's point, for instance). The archive
keeps every non-dominated objective vector seen, up to ``capacity``; beyond
that it drops, one at a time, the point whose exclusive hypervolume
contribution is smallest (the extremes of each objective are never dropped),
which is the subset that keeps the most hypervolume greedily.
"""

from __future__ import annotations

import moocore
import numpy as np

__all__ = ["ParetoArchive"]


class ParetoArchive:
    """Non-dominated objective vectors with their chromosomes, at most ``capacity`` of them.

    Parameters
    ----------
    capacity : int
        Most points kept (>= 2 per objective, so that the extremes fit).
    scale : array_like (m,)
        Positive objective scales; contributions are computed on ``F / scale``
        so that objectives in joules and in seconds weigh alike.

    Attributes
    ----------
    F : ndarray (n, m)
        The archived objective vectors, one per distinct vector.
    X : ndarray (n, n_var)
        Their chromosomes (the first one seen for each vector).
    """

    def __init__(self, capacity: int, scale):
        scale = np.asarray(scale, dtype=float)
        if scale.ndim != 1 or scale.size < 1 or np.any(~np.isfinite(scale)) or np.any(scale <= 0):
            raise ValueError(f"scale must be positive finite numbers, got {scale}")
        if isinstance(capacity, bool) or not isinstance(capacity, (int, np.integer)) \
                or capacity < 2 * scale.size:
            raise ValueError(f"capacity must be an integer >= {2 * scale.size} "
                             f"(two per objective), got {capacity!r}")
        self.capacity = int(capacity)
        self.scale = scale
        self.F = np.empty((0, scale.size))
        # The chromosomes live in one block of ``capacity`` rows, allocated at the first
        # merge; ``_slot[i]`` is point i's row. A merge copies only the new points' rows
        # (a row of a 55,000-job set holds 275,000 values), into the rows of the points it
        # drops: no row is allocated or freed per merge, so that the memory the archive
        # holds is the block's, whatever the allocator makes of many freed rows.
        self._block = None
        self._slot = np.empty(0, dtype=np.int64)

    @property
    def X(self) -> np.ndarray | None:
        """The archived chromosomes, one row per point of ``F`` (None while empty)."""
        return self._block[self._slot] if len(self._slot) else None

    def __len__(self) -> int:
        return len(self.F)

    def rows(self):
        """``(block, slots)``: the array holding the chromosomes and each point's row in it
        (``X`` is ``block[slots]``), without gathering them; ``(None, slots)`` while empty.
        The block is the archive's own: read it before the next :meth:`update`."""
        return self._block, self._slot

    def admits(self, F) -> np.ndarray:
        """Mask of the rows of ``F`` that :meth:`update` could keep: those no archived
        vector weakly dominates (an equal vector keeps its archived chromosome).

        Lets a caller fetch the chromosomes of these rows only.
        """
        F = np.atleast_2d(np.asarray(F, dtype=float))
        if len(self.F) == 0:
            return np.ones(len(F), dtype=bool)
        if F.shape[1] == 2:
            return ~_covered_2d(self.F, F)
        covered = np.all(self.F[None, :, :] <= F[:, None, :], axis=2).any(axis=1)
        return ~covered

    def update(self, F, X, rows=None) -> None:
        """Merge candidates ``F`` (n, m) with chromosomes ``X`` (n, n_var).

        With ``rows`` (n,), the candidates' chromosomes are the rows ``X[rows]`` of a
        larger array: only the kept ones are copied, without gathering the others.
        """
        F = np.atleast_2d(np.asarray(F, dtype=float))
        X = np.atleast_2d(np.asarray(X, dtype=float))
        if rows is None:
            rows = np.arange(len(X))
        else:
            rows = np.asarray(rows, dtype=np.int64).reshape(-1)
            if rows.size and (rows.min() < 0 or rows.max() >= len(X)):
                raise ValueError(f"rows must index the {len(X)} rows of X, got {rows}")
        if F.shape[1] != self.scale.size or len(F) != len(rows):
            raise ValueError(f"F must be (n, {self.scale.size}) with one row of X per row, "
                             f"got F {F.shape} and {len(rows)} rows of X {X.shape}")
        if len(F) == 0:
            return
        n_old = len(self.F)
        allF = np.vstack([self.F, F])
        # Archived points come first, so an equal vector keeps its archived chromosome.
        _, first = np.unique(allF, axis=0, return_index=True)
        idx = np.sort(first)
        idx = idx[np.asarray(moocore.is_nondominated(allF[idx], keep_weakly=False))]
        if len(idx) > self.capacity:
            idx = idx[_truncate(allF[idx] / self.scale, self.capacity)]
        old, new = idx[idx < n_old], idx[idx >= n_old] - n_old
        if self._block is None:
            self._block = np.empty((self.capacity, X.shape[1]))
        elif X.shape[1] != self._block.shape[1]:
            raise ValueError(f"X must have {self._block.shape[1]} columns as before, "
                             f"got {X.shape[1]}")
        kept = self._slot[old]
        free = np.ones(self.capacity, dtype=bool)
        free[kept] = False
        slots = np.flatnonzero(free)[:new.size]
        for s, i in zip(slots, new, strict=True):
            self._block[s] = X[rows[i]]
        self.F = allF[idx]
        self._slot = np.concatenate([kept, slots])

    def take(self, order) -> np.ndarray:
        """The chromosomes of the points ``order`` (indices into ``F``, each once), as one
        (len(order), n_var) array, and the archive emptied.

        With every row of the block in use, the rows are put in order within the block,
        which becomes the array: the archive's chromosomes are not held twice at the end
        of a run (as :attr:`X` would hold them).
        """
        order = np.asarray(order, dtype=np.int64).reshape(-1)
        if order.size != np.unique(order).size or (
                order.size and (order.min() < 0 or order.max() >= len(self.F))):
            raise ValueError(f"order must be distinct indices of the {len(self.F)} points, "
                             f"got {order}")
        block, slots = self._block, self._slot[order]
        self._block, self._slot, self.F = None, self._slot[:0], self.F[:0]
        if block is None:
            return np.empty((0, 0))
        if slots.size < len(block):
            return block[slots]
        from .engine import _rows_in_place

        _rows_in_place(block, slots, block[:0])
        return block


def _covered_2d(A, F) -> np.ndarray:
    """Mask of the rows of ``F`` (n, 2) weakly dominated by some row of ``A`` (a, 2).

    ``A`` is a set of distinct mutually non-dominated vectors (the archive), so
    sorted by the first objective its second objective falls: among the points
    whose first objective is at most ``f[0]``, the last one has the least
    second objective, and ``f`` is covered exactly when that one's is at most
    ``f[1]``. A binary search per row instead of comparing every pair (the
    archive is asked once per generation).
    """
    order = np.argsort(A[:, 0], kind="stable")
    a0, a1 = A[order, 0], A[order, 1]
    i = np.searchsorted(a0, F[:, 0], side="right") - 1
    return (i >= 0) & (a1[np.maximum(i, 0)] <= F[:, 1])


def _truncate(G, capacity) -> np.ndarray:
    """Indices of ``capacity`` points of the non-dominated set ``G`` kept by dropping, one
    at a time, the least exclusive-hypervolume contributor (extremes protected)."""
    n, m = G.shape
    alive = np.ones(n, dtype=bool)
    protected = np.zeros(n, dtype=bool)
    protected[np.argmin(G, axis=0)] = True
    ref = G.max(axis=0) + 0.1 * np.maximum(np.ptp(G, axis=0), 1e-12)
    if m == 2:
        # Sorted by the first objective, the second decreases: a point's
        # contribution is the rectangle its two neighbours leave it.
        order = np.argsort(G[:, 0], kind="stable")
        S = G[order]
        prev = np.arange(-1, n - 1)
        nxt = np.arange(1, n + 1)

        def contribution(i):
            right = S[nxt[i], 0] if nxt[i] < n else ref[0]
            up = S[prev[i], 1] if prev[i] >= 0 else ref[1]
            return (right - S[i, 0]) * (up - S[i, 1])

        contrib = np.array([contribution(i) for i in range(n)])
        contrib[protected[order]] = np.inf
        for _ in range(n - capacity):
            i = int(np.argmin(contrib))
            alive[order[i]] = False
            contrib[i] = np.inf
            p, q = prev[i], nxt[i]
            if p >= 0:
                nxt[p] = q
            if q < n:
                prev[q] = p
            for j in (p, q):
                if 0 <= j < n and np.isfinite(contrib[j]):
                    contrib[j] = contribution(j)
        return np.flatnonzero(alive)
    while alive.sum() > capacity:
        idx = np.flatnonzero(alive)
        c = np.asarray(moocore.hv_contributions(G[idx], ref=ref), dtype=float)
        c[protected[idx]] = np.inf
        alive[idx[int(np.argmin(c))]] = False
    return np.flatnonzero(alive)
