"""The chromosome encoding: one float vector per individual.

An individual ``X`` holds ``J`` order entries (a permutation of ``0..J-1``
stored as floats) then ``J * K`` blacklist entries in [0, 1], row by row
(job-major). :func:`split` and :func:`join` convert between ``X`` and
``(order, blacklist)``; :func:`repair` turns any float vector into a valid one
(docs/design.md §7).
"""

from __future__ import annotations

import numpy as np

__all__ = ["split", "join", "repair", "is_permutation", "pinned_blacklists"]


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


def pinned_blacklists(alloc, nodes) -> np.ndarray:
    """Blacklists whose allowances are the node counts ``alloc`` (..., J, K).

    A job's allowance on cluster k is ``N_k - floor(beta_k N_k)``; the
    fraction ``(N_k - a_k + 0.5) / N_k``, clipped to [0, 1], gives exactly
    ``a_k`` nodes (0 where ``a_k`` is 0, every node where it is ``N_k``), so a
    schedule's allocation as a blacklist lets each job run on its nodes of
    that schedule and nowhere else. ``alloc`` must lie in ``[0, nodes]``.
    """
    alloc = np.asarray(alloc)
    N = np.asarray(nodes, dtype=np.float64)
    if alloc.shape[-1:] != N.shape or np.any(alloc < 0) or np.any(alloc > N):
        raise ValueError(f"alloc must hold node counts in [0, nodes] per cluster "
                         f"({N.size} clusters), got shape {alloc.shape}")
    b = np.clip((N - alloc + 0.5) / N, 0.0, 1.0)
    b[alloc == N] = 0.0
    return b


def is_permutation(orders) -> np.ndarray:
    """Per row of ``orders`` (P, J): True when it is a permutation of ``range(J)``."""
    o = np.atleast_2d(np.asarray(orders))
    J = o.shape[1]
    srt = np.sort(o, axis=1)
    return np.all(srt == np.arange(J), axis=1)


def repair(X, n_jobs: int, n_clusters: int) -> np.ndarray:
    """A valid population from any float matrix ``X`` (P, J + J*K), as random keys.

    Rows whose order part already is a permutation keep it; in the others the
    order becomes the ranks of the entries (ties by position), so any
    operator's output decodes. Blacklist entries are clipped to [0, 1] and NaN
    becomes 0.
    """
    X = np.array(np.atleast_2d(X), dtype=np.float64)
    expected = n_jobs + n_jobs * n_clusters
    if X.shape[1] != expected:
        raise ValueError(f"an individual has {expected} values, got {X.shape[1]}")
    keys = X[:, :n_jobs]
    keys = np.where(np.isfinite(keys), keys, np.inf)
    ok = is_permutation(np.rint(keys)) & np.all(np.isclose(keys, np.rint(keys)), axis=1)
    bad = ~ok
    if bad.any():
        # The chromosome's order lists jobs by ascending key (ties by position).
        X[bad, :n_jobs] = np.argsort(keys[bad], axis=1, kind="stable")
    X[:, :n_jobs] = np.rint(X[:, :n_jobs])
    bl = X[:, n_jobs:]
    bl[~np.isfinite(bl)] = 0.0
    np.clip(bl, 0.0, 1.0, out=bl)
    return X
