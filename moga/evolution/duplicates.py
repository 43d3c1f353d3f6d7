"""Duplicate elimination: row hashes of chromosomes and the one duplicate check (:class:`SeenRows`).

Both NSGA-II loops use it: pymoo's (:class:`ScheduleDuplicateElimination`)
and the array loop of :mod:`moga.evolution.engine` and
:mod:`moga.evolution.mating`.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from pymoo.core.duplicate import DuplicateElimination

__all__ = ["ScheduleDuplicateElimination", "SeenRows"]


@njit(cache=True)
def _row_hashes(X):
    """A 64-bit hash of the bits of each row of ``X``.

    Four interleaved FNV-1a-style lanes over the row's 64-bit words (four
    independent multiply chains run about four times faster than one), then
    mixed. Equal rows hash equal; callers compare rows in full on a match.
    """
    n, m = X.shape
    bits = X.view(np.uint64)
    prime = np.uint64(1099511628211)
    out = np.empty(n, dtype=np.uint64)
    for i in range(n):
        h0 = np.uint64(14695981039346656037)
        h1 = h0 ^ np.uint64(1)
        h2 = h0 ^ np.uint64(2)
        h3 = h0 ^ np.uint64(3)
        j = 0
        while j + 4 <= m:
            h0 = (h0 ^ bits[i, j]) * prime
            h1 = (h1 ^ bits[i, j + 1]) * prime
            h2 = (h2 ^ bits[i, j + 2]) * prime
            h3 = (h3 ^ bits[i, j + 3]) * prime
            h0 ^= h0 >> np.uint64(29)
            h1 ^= h1 >> np.uint64(29)
            h2 ^= h2 >> np.uint64(29)
            h3 ^= h3 >> np.uint64(29)
            j += 4
        while j < m:
            h0 = (h0 ^ bits[i, j]) * prime
            h0 ^= h0 >> np.uint64(29)
            j += 1
        h = h0
        for lane in (h1, h2, h3):
            h = (h ^ lane) * prime
            h ^= h >> np.uint64(29)
        out[i] = h
    return out


class ScheduleDuplicateElimination(DuplicateElimination):
    """Drop individuals whose chromosome equals another's, without pairwise Python loops.

    Two chromosomes are duplicates when all their values are equal (the
    operators copy genes exactly, so equal genes are equal bit for bit). Rows
    are hashed in one jitted pass; only when some hash repeats are the genes
    read and compared in full (:class:`SeenRows`), so a hash collision never
    drops an individual.
    """

    def _do(self, pop, other, is_duplicate):
        n_other = 0 if other is None else len(other)
        h_other = _hashes(other) if n_other else np.empty(0, dtype=np.uint64)
        h_pop = _hashes(pop)
        h = np.concatenate([h_other, h_pop])
        if np.unique(h).size == h.size:  # no hash repeats: no duplicate, no genes to read
            return is_duplicate
        seen = SeenRows(_plain(other.get("X")) if n_other else np.empty((0, 0)), h_other)
        for i, (row, hi) in enumerate(zip(_plain(pop.get("X")), h_pop, strict=True)):
            if not seen.add(row, hi):
                is_duplicate[i] = True
        return is_duplicate


class SeenRows:
    """Chromosomes seen so far, looked up by row hash and compared in full.

    The one duplicate check of the package: a row is new unless a row seen
    before has the same hash and equal genes, so a hash collision never
    drops an individual.
    """

    def __init__(self, X, hashes):
        self.rows: dict = {}
        for row, h in zip(X, hashes, strict=True):
            self.rows.setdefault(int(h), []).append(row)

    def add(self, row, h) -> bool:
        """Record ``row``; False when an equal row was already there."""
        same = self.rows.setdefault(int(h), [])
        if any(np.array_equal(r, row) for r in same):
            return False
        same.append(row)
        return True


def _plain(X) -> np.ndarray:
    """``X`` as contiguous float64 with ``-0.0`` read as ``0.0`` (as the hashes see it)."""
    return np.ascontiguousarray(X, dtype=np.float64) + 0.0


def _hashes(pop) -> np.ndarray:
    """The row hashes of a population, computed once per individual and kept on it.

    pymoo makes new individuals for new chromosomes and never edits ``X`` in
    place, so a kept hash stays valid; a duplicate check compares full rows
    anyway, so even a stale one could only miss a duplicate, never drop a
    distinct individual.
    """
    kept = pop.get("moga_hash")
    missing = [i for i, v in enumerate(kept) if v is None]
    if missing:
        X = _plain(pop[missing].get("X"))
        for i, v in zip(missing, _row_hashes(X), strict=True):
            pop[i].set("moga_hash", v)
            kept[i] = v
    return kept.astype(np.uint64)
