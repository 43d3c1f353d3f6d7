"""Evolutionary operators on (order, blacklist) chromosomes (docs/design.md §7).

All operators are pymoo operators and can be handed to any pymoo algorithm
whose problem is a :class:`~moga.evolution.problem.SchedulingProblem` (or any problem
with ``n_jobs`` and ``n_clusters`` attributes and the same ``X`` layout).
Every random draw comes from the ``random_state`` pymoo passes in, so seeded
runs repeat exactly. The work is vectorised over the population; the one loop
that is not (applying sequences of swaps) is jitted.
"""

from __future__ import annotations

import itertools

import numpy as np
from numba import njit
from pymoo.core.crossover import Crossover
from pymoo.core.duplicate import DuplicateElimination
from pymoo.core.mutation import Mutation
from pymoo.core.sampling import Sampling

__all__ = ["ScheduleSampling", "ScheduleCrossover", "ScheduleMutation",
           "ScheduleDuplicateElimination", "seed_blacklists"]


def _dims(problem):
    """``(J, K)`` of the encoding: K is 0 when ``X`` holds the order alone."""
    J = int(problem.n_jobs)
    return J, (int(problem.n_var) - J) // J


def _submit_order(problem, J):
    """Positions sorted by release time, ties by position (the index order without a job-set)."""
    js = getattr(problem, "jobset", None)
    if js is None:
        return np.arange(J)
    return np.lexsort((np.arange(J), js.release))


def seed_blacklists(n_jobs: int, speed, levels=(0.0, 0.5, 1.0)) -> np.ndarray:
    """Uniform blacklists on a grid of levels per cluster.

    Every cluster but the slowest ones gets each level in ``levels`` for all
    jobs (the slowest clusters stay at 0, so that every job keeps somewhere
    to run without voiding its blacklist); one blacklist per combination. The
    all-zero blacklist comes first.

    Returns
    -------
    ndarray, shape (n_combinations, n_jobs, K)
    """
    speed = np.asarray(speed, dtype=float)
    K = speed.size
    free_clusters = np.flatnonzero(speed > speed.min())
    levels = sorted({float(v) for v in levels} | {0.0})
    if any(not 0.0 <= v <= 1.0 for v in levels):
        raise ValueError(f"blacklist levels must lie in [0, 1], got {levels}")
    combos = list(itertools.product(levels, repeat=free_clusters.size))
    out = np.zeros((len(combos), n_jobs, K))
    for i, combo in enumerate(combos):
        out[i][:, free_clusters] = combo
    return out


class ScheduleSampling(Sampling):
    """Initial population: seeded individuals, then random ones.

    Parameters
    ----------
    seeded : bool
        Include the submit order combined with the uniform blacklists of
        :func:`seed_blacklists` (at most half the population; the empty
        blacklist always, the others drawn at random without replacement).
    levels : sequence of float
        Blacklist levels of the seeding grid.
    initial : array_like, optional
        More individuals (rows of ``X``) to include first, e.g. heuristic orders.

    Random individuals have a uniformly random order and blacklist entries
    uniform in [0, 1].
    """

    def __init__(self, seeded: bool = True, levels=(0.0, 0.5, 1.0), initial=None):
        super().__init__()
        self.seeded = seeded
        self.levels = tuple(levels)
        self.initial = None if initial is None else np.atleast_2d(np.asarray(initial, dtype=float))

    def _do(self, problem, n_samples, *args, random_state=None, **kwargs):
        J, K = _dims(problem)
        rows = []
        if self.initial is not None:
            if self.initial.shape[1] != J + J * K:
                raise ValueError(f"initial individuals must have {J + J * K} values, "
                                 f"got {self.initial.shape[1]}")
            rows.append(self.initial[:n_samples])
        n_left = n_samples - sum(len(r) for r in rows)
        if self.seeded and n_left > 0:
            if K == 0:
                bls = np.zeros((1, J, 0))
            else:
                speed = problem.federation.speed if hasattr(problem, "federation") else np.ones(K)
                bls = seed_blacklists(J, speed, self.levels)
            n_seed = min(len(bls), max(1, n_samples // 2), n_left)
            pick = np.concatenate([[0], 1 + random_state.permutation(len(bls) - 1)])[:n_seed]
            order = np.tile(_submit_order(problem, J).astype(float), (n_seed, 1))
            rows.append(np.hstack([order, bls[pick].reshape(n_seed, -1)]))
        n_rand = n_samples - sum(len(r) for r in rows)
        if n_rand > 0:
            orders = np.argsort(random_state.random((n_rand, J)), axis=1).astype(float)
            rows.append(np.hstack([orders, random_state.random((n_rand, J * K))]))
        return np.vstack(rows)[:n_samples]


class ScheduleCrossover(Crossover):
    """Two parents, two children: order crossover on the order, uniform or blend on the blacklist.

    Parameters
    ----------
    prob_order : float
        Probability that a mating crosses the order parts (else children copy them).
    prob_blacklist : float
        Probability that a mating crosses the blacklist parts.
    blacklist : {"uniform", "blend"}
        Uniform crossover (each entry from either parent) or blend crossover
        BLX-alpha (each entry uniform in the parents' interval widened by
        ``alpha`` on both sides, clipped to [0, 1]).
    alpha : float
        Widening of the blend crossover.
    """

    def __init__(self, prob_order: float = 0.9, prob_blacklist: float = 0.9,
                 blacklist: str = "uniform", alpha: float = 0.5, **kwargs):
        super().__init__(2, 2, prob=1.0, **kwargs)
        for name, p in (("prob_order", prob_order), ("prob_blacklist", prob_blacklist)):
            if not 0.0 <= p <= 1.0:
                raise ValueError(f"{name} must lie in [0, 1], got {p}")
        if blacklist not in ("uniform", "blend"):
            raise ValueError(f"blacklist crossover must be 'uniform' or 'blend', got {blacklist!r}")
        if alpha < 0:
            raise ValueError(f"alpha must be >= 0, got {alpha}")
        self.prob_order = prob_order
        self.prob_blacklist = prob_blacklist
        self.blacklist = blacklist
        self.alpha = alpha

    def _do(self, problem, X, *args, random_state=None, **kwargs):
        J, K = _dims(problem)
        _, n, n_var = X.shape
        X = np.ascontiguousarray(X, dtype=np.float64)
        cuts = np.sort(random_state.integers(0, J + 1, (2, n, 2)), axis=2)
        do_order = random_state.random(n) < self.prob_order
        do_bl = random_state.random(n) < self.prob_blacklist
        out = np.empty_like(X)
        _order_crossover_into(X, J, cuts, do_order, out)
        if self.blacklist == "uniform":
            # One random bit per entry: 8 entries per random byte.
            bits = random_state.integers(0, 256, (n, -(-(n_var - J) // 8)), dtype=np.uint8)
            _uniform_into(X, J, bits, do_bl, out)
        else:
            u = random_state.random((2, n, n_var - J))
            _blend_into(X, J, u, do_bl, self.alpha, out)
        return out


@njit(cache=True)
def _order_crossover_into(X, J, cuts, do_order, out):
    """Order crossover (OX1) of the order parts of parents ``X[0], X[1]`` into ``out[:, :, :J]``.

    Child ``c`` of mating ``m`` keeps ``X[c, m, a:b]`` in place (``a, b = cuts[c, m]``)
    and fills the other positions, from ``b`` on and wrapping around, with the
    remaining genes in the order they appear in the other parent from
    position ``b`` on. Matings with ``do_order[m]`` false copy their parents.
    """
    n = X.shape[1]
    taken = np.zeros(J, dtype=np.bool_)
    for m in range(n):
        for c in range(2):
            p1 = X[c, m]
            p2 = X[1 - c, m]
            if not do_order[m]:
                for i in range(J):
                    out[c, m, i] = p1[i]
                continue
            a = cuts[c, m, 0]
            b = cuts[c, m, 1]
            taken[:] = False
            for i in range(a, b):
                out[c, m, i] = p1[i]
                taken[np.int64(p1[i])] = True
            pos = b
            for s in range(J):
                g = p2[(b + s) % J]
                if not taken[np.int64(g)]:
                    if pos == J:
                        pos = 0
                    out[c, m, pos] = g
                    pos += 1


@njit(cache=True)
def _uniform_into(X, J, bits, do_bl, out):
    """Uniform crossover of the blacklist parts: bit set -> child 0 takes parent 0's entry."""
    n, n_var = X.shape[1], X.shape[2]
    for m in range(n):
        if not do_bl[m]:
            for i in range(J, n_var):
                out[0, m, i] = X[0, m, i]
                out[1, m, i] = X[1, m, i]
            continue
        for i in range(n_var - J):
            if (bits[m, i >> 3] >> (7 - (i & 7))) & 1:
                out[0, m, J + i] = X[0, m, J + i]
                out[1, m, J + i] = X[1, m, J + i]
            else:
                out[0, m, J + i] = X[1, m, J + i]
                out[1, m, J + i] = X[0, m, J + i]


@njit(cache=True)
def _blend_into(X, J, u, do_bl, alpha, out):
    """BLX-alpha on the blacklist parts, clipped to [0, 1]."""
    n, n_var = X.shape[1], X.shape[2]
    for m in range(n):
        for i in range(J, n_var):
            x0 = X[0, m, i]
            x1 = X[1, m, i]
            if not do_bl[m]:
                out[0, m, i] = x0
                out[1, m, i] = x1
                continue
            lo = min(x0, x1)
            w = max(x0, x1) - lo
            for c in range(2):
                v = lo - alpha * w + u[c, m, i - J] * (1.0 + 2.0 * alpha) * w
                out[c, m, i] = min(1.0, max(0.0, v))


@njit(cache=True)
def _apply_swaps(orders, rows, i, j):
    """Swap ``orders[rows[s], i[s]]`` with ``orders[rows[s], j[s]]``, in sequence."""
    for s in range(rows.shape[0]):
        r = rows[s]
        a = orders[r, i[s]]
        orders[r, i[s]] = orders[r, j[s]]
        orders[r, j[s]] = a


class ScheduleMutation(Mutation):
    """Swap mutation on the order, uniform reset on the blacklist.

    Parameters
    ----------
    order_rate : float, optional
        Per-position probability that a position of the order is swapped with
        another random position; default ``1 / J`` (one swap per individual on
        average).
    blacklist_rate : float, optional
        Per-entry probability that a blacklist entry is redrawn uniformly in
        [0, 1]; default ``1 / J`` (about K entries per individual).
    prob : float
        Probability that an individual is mutated at all (pymoo's ``prob``).
    """

    def __init__(self, order_rate: float | None = None, blacklist_rate: float | None = None,
                 prob: float = 1.0, **kwargs):
        super().__init__(prob=prob, **kwargs)
        for name, r in (("order_rate", order_rate), ("blacklist_rate", blacklist_rate)):
            if r is not None and not 0.0 <= r <= 1.0:
                raise ValueError(f"{name} must lie in [0, 1], got {r}")
        self.order_rate = order_rate
        self.blacklist_rate = blacklist_rate

    def _do(self, problem, X, *args, random_state=None, **kwargs):
        J, K = _dims(problem)
        n = X.shape[0]
        order_rate = 1.0 / J if self.order_rate is None else self.order_rate
        bl_rate = 1.0 / J if self.blacklist_rate is None else self.blacklist_rate
        orders = np.rint(X[:, :J]).astype(np.int64)
        n_swaps = random_state.binomial(J, order_rate, n)
        rows = np.repeat(np.arange(n), n_swaps)
        i = random_state.integers(0, J, rows.size)
        j = random_state.integers(0, J, rows.size)
        _apply_swaps(orders, rows, i, j)
        out = np.empty_like(X, dtype=np.float64)
        out[:, :J] = orders
        out[:, J:] = X[:, J:]
        if K == 0:
            return out
        # Entries to reset: a binomial count per individual, then that many positions.
        n_reset = random_state.binomial(J * K, bl_rate, n)
        rows = np.repeat(np.arange(n), n_reset)
        cols = J + random_state.integers(0, J * K, rows.size)
        out[rows, cols] = random_state.random(rows.size)
        return out


@njit(cache=True)
def _row_hashes(X):
    """A 64-bit hash of the bits of each row of ``X`` (FNV-1a over 64-bit words, then mixed)."""
    n, m = X.shape
    bits = X.view(np.uint64)
    out = np.empty(n, dtype=np.uint64)
    for i in range(n):
        h = np.uint64(14695981039346656037)
        for j in range(m):
            h = (h ^ bits[i, j]) * np.uint64(1099511628211)
            h ^= h >> np.uint64(29)
        out[i] = h
    return out


class ScheduleDuplicateElimination(DuplicateElimination):
    """Drop individuals whose chromosome equals another's, without pairwise Python loops.

    Two chromosomes are duplicates when all their values are equal (the
    operators copy genes exactly, so equal genes are equal bit for bit). Rows
    are hashed in one jitted pass and grouped by hash with one sort; rows that
    share a hash are then compared in full, so a hash collision never drops an
    individual.
    """

    def _do(self, pop, other, is_duplicate):
        X = pop.get("X")
        n_other = 0
        if other is not None and len(other) > 0:
            X = np.vstack([other.get("X"), X])
            n_other = len(other)
        X = np.ascontiguousarray(X, dtype=np.float64) + 0.0  # + 0.0 folds -0.0 into 0.0
        h = _row_hashes(X)
        order = np.argsort(h, kind="stable")
        hs = h[order]
        same = np.flatnonzero(hs[1:] == hs[:-1]) + 1  # sorted positions equal to their predecessor
        dup = np.zeros(X.shape[0], dtype=bool)
        for pos in same:  # only rows whose hash repeats: actual duplicates, or rare collisions
            i = order[pos]
            group_start = pos
            while group_start > 0 and hs[group_start - 1] == hs[pos]:
                group_start -= 1
            earlier = order[group_start:pos]
            dup[i] = any(not dup[e] and np.array_equal(X[e], X[i]) for e in earlier)
        is_duplicate |= dup[n_other:]
        return is_duplicate
