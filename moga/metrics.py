"""Quality indicators of fronts (moocore underneath) and schedule metrics."""

from __future__ import annotations

import moocore
import numpy as np

__all__ = ["hypervolume", "normalized_hypervolume", "nondominated", "knee_index"]


def hypervolume(F, ref) -> float:
    """Hypervolume of the points ``F`` (n, m) dominated region bounded by ``ref`` (minimisation).

    Points that do not strictly dominate ``ref`` contribute nothing.
    """
    F = np.atleast_2d(np.asarray(F, dtype=float))
    ref = np.asarray(ref, dtype=float)
    inside = np.all(F < ref, axis=1)
    if not inside.any():
        return 0.0
    return float(moocore.hypervolume(F[inside], ref=ref))


def normalized_hypervolume(F, base, factor: float = 1.1) -> float:
    """Hypervolume of ``F / base`` against the point ``(factor, ..., factor)``.

    With ``base`` the objectives of a reference schedule (moga uses the submit
    order with an empty blacklist), the value is comparable across job-sets:
    the reference schedule alone scores ``(factor - 1) ** m``.
    """
    base = np.asarray(base, dtype=float)
    if np.any(base <= 0):
        raise ValueError(f"base objectives must be > 0, got {base}")
    F = np.atleast_2d(np.asarray(F, dtype=float)) / base
    return hypervolume(F, np.full(base.size, factor))


def nondominated(F) -> np.ndarray:
    """Boolean mask of the points of ``F`` (n, m) that no other point dominates (minimisation)."""
    F = np.atleast_2d(np.asarray(F, dtype=float))
    return np.asarray(moocore.is_nondominated(F, keep_weakly=True))


def knee_index(F) -> int:
    """Index of the knee of a two-objective front.

    Objectives are scaled to [0, 1] over the front; the knee is the point
    farthest below the line joining the two extremes. With fewer than three
    distinct points, or none below the line, it is the point nearest the ideal
    point (0, 0).
    """
    F = np.atleast_2d(np.asarray(F, dtype=float))
    if F.shape[0] == 1:
        return 0
    lo, hi = F.min(axis=0), F.max(axis=0)
    span = np.where(hi > lo, hi - lo, 1.0)
    G = (F - lo) / span
    nearest = int(np.argmin(np.hypot(G[:, 0], G[:, 1]) if G.shape[1] >= 2 else G[:, 0]))
    if F.shape[1] != 2 or len(np.unique(G, axis=0)) < 3:
        return nearest
    a = G[np.argmin(G[:, 0])]
    b = G[np.argmin(G[:, 1])]
    d = b - a
    # Signed distance: positive on the side of the ideal point.
    dist = (d[0] * (G[:, 1] - a[1]) - d[1] * (G[:, 0] - a[0])) / max(np.hypot(*d), 1e-300)
    dist = -dist if (d[0] * (0 - a[1]) - d[1] * (0 - a[0])) < 0 else dist
    best = int(np.argmax(dist))
    return best if dist[best] > 1e-12 else nearest
