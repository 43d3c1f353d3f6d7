"""Quality indicators of fronts (moocore underneath) and schedule metrics."""

from __future__ import annotations

import moocore
import numpy as np

__all__ = ["hypervolume", "normalized_hypervolume", "nondominated", "knee_index", "igd_plus",
           "spread", "reference_front", "missing_hypervolume_by_range", "attainment_surface"]


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


def reference_front(fronts) -> np.ndarray:
    """The non-dominated points of the union of several fronts (duplicates dropped).

    Rows come sorted by the first objective, then the second (``np.unique``'s order).
    """
    F = np.vstack([np.atleast_2d(np.asarray(f, dtype=float)) for f in fronts])
    F = np.unique(F, axis=0)
    return F[nondominated(F)]


def attainment_surface(fronts, percentile: float = 50.0) -> np.ndarray:
    """The empirical attainment surface at ``percentile`` percent of several runs' fronts (minimisation).

    A point is attained by a run when some point of its front weakly dominates
    it; the surface bounds the points attained by at least ``percentile``% of
    the runs (``ceil(percentile * n / 100)`` of ``n``). The 50% surface is the
    median run's front in the sense of López-Ibáñez, Paquete and Stützle's
    empirical attainment function (computed by ``moocore.eaf``); 100% is what
    every run attains.

    Parameters
    ----------
    fronts : sequence of array_like (n_i, m)
        One front per run, each at least one point.
    percentile : float
        In (0, 100].

    Returns
    -------
    ndarray (k, m)
        The surface's minimal points, sorted by the first objective.
    """
    fronts = [np.atleast_2d(np.asarray(f, dtype=float)) for f in fronts]
    if not fronts or any(f.size == 0 for f in fronts):
        raise ValueError("attainment_surface needs one non-empty front per run")
    m = fronts[0].shape[1]
    if any(f.ndim != 2 or f.shape[1] != m for f in fronts):
        raise ValueError(f"every front must be (n, {m}), got "
                         f"{[f.shape for f in fronts]}")
    if not 0.0 < float(percentile) <= 100.0:
        raise ValueError(f"percentile must lie in (0, 100], got {percentile!r}")
    sets = np.concatenate([np.full(len(f), i + 1) for i, f in enumerate(fronts)])
    # moocore's levels are the multiples of 100 / n; ask for the level that covers
    # ``percentile`` (ceil(percentile * n / 100) runs).
    n = len(fronts)
    level = 100.0 * np.ceil(float(percentile) * n / 100.0 - 1e-9) / n
    E = np.asarray(moocore.eaf(np.vstack(fronts), sets, percentiles=[level]), dtype=float)
    S = E[:, :m]
    return S[np.lexsort(S.T[::-1])]


def _area_in_slab(F, ref, lo, hi) -> float:
    """Area of the region the 2-D points ``F`` dominate within ``ref``, for ``lo <= f1 < hi``."""
    F = F[np.all(F < ref, axis=1)]
    if F.shape[0] == 0:
        return 0.0
    F = F[np.lexsort((F[:, 1], F[:, 0]))]
    best = np.minimum.accumulate(F[:, 1])  # the attained second objective from each x on
    x = np.append(F[:, 0], ref[0])
    left, right = np.maximum(x[:-1], lo), np.minimum(x[1:], hi)
    return float(np.sum(np.clip(right - left, 0.0, None) * (ref[1] - best)))


def missing_hypervolume_by_range(F, reference, base, parts: int = 3,
                                 factor: float = 1.1) -> np.ndarray:
    """Where a 2-objective front falls short of a reference front, by range of the first objective.

    Both fronts are divided by ``base`` and bounded by ``(factor, factor)``, as in
    :func:`normalized_hypervolume`. The reference's range of the first
    objective (makespan in moga) is cut into ``parts`` equal slabs, the first
    open to the left and the last extended to the bounding point; entry i is
    the reference's hypervolume in slab i less ``F``'s, in percentage points
    of the reference's hypervolume. The entries sum to the whole shortfall;
    slab 0 is the fast end of a makespan-energy front.
    """
    base = np.asarray(base, dtype=float)
    F = np.atleast_2d(np.asarray(F, dtype=float)) / base
    R = np.atleast_2d(np.asarray(reference, dtype=float)) / base
    if F.shape[1] != 2 or R.shape[1] != 2 or base.size != 2:
        raise ValueError("missing_hypervolume_by_range takes two objectives")
    if int(parts) != parts or parts < 1:
        raise ValueError(f"parts must be a positive integer, got {parts!r}")
    ref = np.full(2, factor)
    total = _area_in_slab(R, ref, -np.inf, np.inf)
    if total <= 0.0:
        raise ValueError("the reference front dominates nothing within the bounding point")
    edges = np.linspace(R[:, 0].min(), R[:, 0].max(), int(parts) + 1)
    edges[0], edges[-1] = -np.inf, np.inf
    return np.array([100.0 * (_area_in_slab(R, ref, a, b) - _area_in_slab(F, ref, a, b)) / total
                     for a, b in zip(edges[:-1], edges[1:], strict=True)])


def igd_plus(F, ref_front) -> float:
    """IGD+ of ``F`` against a reference front (minimisation; moocore's implementation).

    Objectives should be on comparable scales (normalise them first).
    """
    F = np.atleast_2d(np.asarray(F, dtype=float))
    R = np.atleast_2d(np.asarray(ref_front, dtype=float))
    return float(moocore.igd_plus(F, ref=R))


def spread(F, ref_front=None) -> float:
    """Deb's spread (Delta) of a two-objective front: 0 for evenly spaced points spanning the extremes.

    ``Delta = (d_f + d_l + sum |d_i - mean d|) / (d_f + d_l + (n - 1) mean d)`` with
    ``d_i`` the gaps between neighbours along the front and ``d_f``, ``d_l`` the
    distances from its ends to the extremes of ``ref_front`` (its own extremes
    when not given). A front of one point has spread 1.
    """
    F = np.atleast_2d(np.asarray(F, dtype=float))
    F = np.unique(F, axis=0)
    F = F[np.argsort(F[:, 0])]
    R = F if ref_front is None else np.atleast_2d(np.asarray(ref_front, dtype=float))
    lo, hi = R[np.argmin(R[:, 0])], R[np.argmin(R[:, 1])]
    if len(F) < 2:
        return 1.0
    d = np.hypot(*np.diff(F, axis=0).T)
    d_f = float(np.hypot(*(F[0] - lo)))
    d_l = float(np.hypot(*(F[-1] - hi)))
    denom = d_f + d_l + (len(F) - 1) * d.mean()
    if denom == 0:
        return 0.0
    return float((d_f + d_l + np.abs(d - d.mean()).sum()) / denom)
