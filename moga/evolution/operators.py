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
from pymoo.core.mutation import Mutation
from pymoo.core.sampling import Sampling

from ..model.chromosome import pinned_blacklists

# Duplicate elimination lives in its own module; its names stay importable from here.
from .duplicates import ScheduleDuplicateElimination, SeenRows, _row_hashes  # noqa: F401
from .survival import survive

__all__ = ["ScheduleSampling", "ScheduleCrossover", "ScheduleMutation",
           "ScheduleDuplicateElimination", "seed_blacklists", "fitted_blacklists", "ORDER_MOVES"]


def _dims(problem):
    """``(J, K)`` of the encoding: K is 0 when ``X`` holds the order alone."""
    J = int(problem.n_jobs)
    return J, (int(problem.n_var) - J) // J


def _submit_order(problem, J):
    """Positions sorted by release time, ties by position (the index order without a job-set)."""
    js = getattr(problem, "jobset", None)
    if js is None:
        return np.arange(J)
    return js.submit_order


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


def fitted_blacklists(blacklists, tasks, nodes, greenest) -> np.ndarray:
    """The blacklists that void some job's, each fitted to its jobs' widths.

    A job whose allowance ``sum_k N_k - floor(beta_jk N_k)`` is below its
    width has a void blacklist and may run anywhere, the fastest clusters
    first: a uniform blacklist that bars the fast clusters sends every job too
    wide for the slow ones there, the most power-hungry nodes. The fitted copy
    opens such a job's barred clusters in ``greenest`` order, each fully or
    just as far as the job still needs, so that its allowance equals its
    width; other jobs' rows are unchanged.

    Parameters
    ----------
    blacklists : ndarray, shape (B, J, K)
    tasks : array_like of int, shape (J,)
    nodes : array_like of int, shape (K,)
    greenest : array_like of int, shape (K,)
        Clusters by energy per unit of work, least first (the greenest
        allocation rule's order).

    Returns
    -------
    ndarray, shape (B', J, K)
        One fitted copy per blacklist that voids some job's (B' <= B).
    """
    blacklists = np.asarray(blacklists, dtype=float)
    tasks = np.asarray(tasks, dtype=np.int64)
    nodes = np.asarray(nodes, dtype=np.int64)
    if blacklists.ndim != 3 or blacklists.shape[1:] != (tasks.size, nodes.size):
        raise ValueError(f"blacklists must have shape (B, {tasks.size}, {nodes.size}), "
                         f"got {blacklists.shape}")
    if sorted(np.asarray(greenest).tolist()) != list(range(nodes.size)):
        raise ValueError(f"greenest must be an order of the {nodes.size} clusters, got "
                         f"{list(greenest)}")
    out = []
    for bl in blacklists:
        allow = nodes - np.floor(bl * nodes).astype(np.int64)
        short = tasks - allow.sum(axis=1)
        if not (short > 0).any():
            continue
        fitted = bl.copy()
        for k in greenest:
            n = int(nodes[k])
            barred = n - allow[:, k]
            whole = (short > 0) & (short >= barred) & (barred > 0)
            part = (short > 0) & (short < barred)
            # Whole: every node allowed; part: the allowance grows by what it lacks.
            fit = whole | part
            grown = np.where(whole, n, allow[:, k] + short)[fit]
            fitted[fit, k] = pinned_blacklists(grown[:, None], nodes[k:k + 1])[:, 0]
            short = np.where(whole, short - barred, np.where(part, 0, short))
        out.append(fitted)
    return np.array(out).reshape(len(out), *blacklists.shape[1:])


class ScheduleSampling(Sampling):
    """Initial population: given individuals, seeded individuals, then random ones.

    Parameters
    ----------
    seeded : bool
        Include seeded individuals (at most half the population): first every
        seed order with the empty blacklist, then the FCFS and EASY orders with
        the uniform blacklists of :func:`seed_blacklists`, then the other seed
        orders with them (each group in a random order drawn from the run's
        seed); or, with ``select``, the best of all these pairs.
    levels : sequence of float
        Blacklist levels of that seeding grid.
    heuristics : bool
        Seed the orders of cheap heuristics (:mod:`moga.evolution.seeding`)
        besides the submit order; needs a problem with ``jobset`` and
        ``federation`` (the submit order alone otherwise).
    initial : array_like, optional
        More individuals (rows of ``X``) to include first, e.g. heuristic orders.
    select : bool
        Pick the seeded individuals by NSGA-II's survival (rank, then crowding
        distance; ties drawn from the run's generator) among every seed order
        with every blacklist of the grid and every fitted copy of those that
        void some job's (:func:`fitted_blacklists`; needs the federation's
        ``power_busy``), all decoded with ``problem.decode`` (they count as
        evaluations), instead of the fixed precedence above. Needs a problem
        with ``decode``.
    fit : bool
        With ``select``: include the fitted copies of the grid blacklists.
    max_candidates : int, optional
        With ``select``: decode at most this many of those pairs, taken in the
        precedence of the fixed seeding above (every order with the empty
        blacklist, then the FCFS and EASY orders with the other blacklists,
        then the other orders with them, each group in a random order drawn
        from the run's seed); None (default) decodes them all. Bounds the
        seeding's cost where decodes are expensive.

    Random individuals have a uniformly random order and blacklist entries
    uniform in [0, 1].
    """

    #: Most candidate seeds decoded per batch when ``select`` is on (fewer on large
    #: job-sets, see :data:`RANDOM_CHUNK`).
    SELECT_CHUNK = 64

    def __init__(self, seeded: bool = True, levels=(0.0, 0.5, 1.0), initial=None,
                 heuristics: bool = True, select: bool = False, fit: bool = True,
                 max_candidates: int | None = None):
        super().__init__()
        if max_candidates is not None and (isinstance(max_candidates, bool)
                                           or not isinstance(max_candidates, (int, np.integer))
                                           or max_candidates < 1):
            raise ValueError(f"max_candidates must be an integer >= 1, got {max_candidates!r}")
        self.max_candidates = None if max_candidates is None else int(max_candidates)
        self.fit = bool(fit)
        self.seeded = seeded
        self.levels = tuple(levels)
        self.heuristics = heuristics
        self.select = bool(select)
        self.initial = None if initial is None else np.atleast_2d(np.asarray(initial, dtype=float))

    def seed_orders(self, problem, J):
        """``{name: order}`` of the seeded orders (the submit order first)."""
        js, fed = getattr(problem, "jobset", None), getattr(problem, "federation", None)
        if not self.heuristics or js is None or fed is None:
            return {"FCFS": _submit_order(problem, J)}
        from .seeding import heuristic_orders

        return heuristic_orders(js, fed, model=getattr(problem, "model", "fluid"))

    def _do(self, problem, n_samples, *args, random_state=None, **kwargs):
        J, K = _dims(problem)
        # One array for the whole population, filled part by part (no stacked copies).
        X = np.empty((n_samples, J + J * K))
        n = 0
        if self.initial is not None:
            if self.initial.shape[1] != J + J * K:
                raise ValueError(f"initial individuals must have {J + J * K} values, "
                                 f"got {self.initial.shape[1]}")
            n = len(self.initial[:n_samples])
            X[:n] = self.initial[:n]
        n_left = n_samples - n
        if self.seeded and n_left > 0:
            orders = self.seed_orders(problem, J)
            if K == 0:
                bls = np.zeros((1, J, 0))
            else:
                speed = problem.federation.speed if hasattr(problem, "federation") else np.ones(K)
                bls = seed_blacklists(J, speed, self.levels)
            n_seed = min(max(1, n_samples // 2), n_left)
            if self.select and hasattr(problem, "decode"):
                if self.fit:
                    bls = np.concatenate([bls, self._fitted(problem, bls)])
                n += len(self._selected(problem, orders, bls, n_seed, random_state, X[n:]))
            else:
                picked = _precedence(list(orders), len(bls), random_state)
                n += len(_seed_rows(orders, bls, picked[:n_seed], X[n:]))
        n_rand = n_samples - n
        if n_rand > 0:
            X[n:, :J] = np.argsort(random_state.random((n_rand, J)), axis=1)
            # The blacklist draws of all the rows, a few rows at a time: the same numbers
            # as one (n_rand, J * K) draw, without its copy.
            step = max(1, RANDOM_CHUNK // max(J * K, 1))
            for i in range(n, n_samples, step):
                X[i:i + step, J:] = random_state.random((min(step, n_samples - i), J * K))
        return X

    @staticmethod
    def _fitted(problem, bls):
        """:func:`fitted_blacklists` of the grid on ``problem``'s job-set (none without one)."""
        js, fed = getattr(problem, "jobset", None), getattr(problem, "federation", None)
        if js is None or fed is None or bls.shape[2] == 0:
            return bls[:0]
        from decoders.federated import allocation_ranks

        greenest = allocation_ranks(fed.speed, fed.power_busy)[1]
        return fitted_blacklists(bls, js.tasks, fed.nodes, greenest)

    def _selected(self, problem, orders, bls, n_seed, random_state, out=None):
        """The ``n_seed`` best seed pairs (order x grid blacklist) by NSGA-II's survival
        (their rows, in ``out`` if given)."""

        distinct, seen = [], set()
        for name, order in orders.items():  # two heuristics can give the same order
            key = np.asarray(order).tobytes()
            if key not in seen:
                seen.add(key)
                distinct.append(name)
        pairs = [(n, b) for n in distinct for b in range(len(bls))]
        if self.max_candidates is not None and len(pairs) > self.max_candidates:
            pairs = _precedence(distinct, len(bls), random_state)[:max(self.max_candidates,
                                                                       n_seed)]
        J = len(next(iter(orders.values())))
        chunk = max(1, min(self.SELECT_CHUNK, RANDOM_CHUNK // max(J + bls[0].size, 1)))
        F = np.vstack([problem.decode(_seed_rows(orders, bls, pairs[i:i + chunk]))[0]
                       for i in range(0, len(pairs), chunk)])
        keep = survive(np.arange(len(pairs))[:, None], F, n_seed, random_state).X[:, 0]
        return _seed_rows(orders, bls, [pairs[i] for i in keep], out)


def _precedence(names, n_bls, random_state) -> list:
    """Every ``(order name, blacklist index)`` pair in the fixed seeding's precedence: each
    order with the empty blacklist (index 0), then the FCFS and EASY orders with the other
    blacklists, then the other orders with them, each of the last two groups in a random
    order drawn from ``random_state``."""
    main = [n for n in names if n in ("FCFS", "EASY")]
    rest = [n for n in names if n not in main]
    tiers = [[(n, 0) for n in names]]
    for group in (main, rest):
        pairs = [(n, b) for n in group for b in range(1, n_bls)]
        tiers.append([pairs[i] for i in random_state.permutation(len(pairs))])
    return [pair for tier in tiers for pair in tier]


#: Values per temporary block of the initial population (random blacklists, seed rows
#: decoded together): bounds its memory on large job-sets (64 MB).
RANDOM_CHUNK = 1 << 23


def _seed_rows(orders, bls, pairs, out=None) -> np.ndarray:
    """Chromosomes of ``(order name, blacklist index)`` pairs (the first rows of ``out``
    if given)."""
    J = len(next(iter(orders.values())))
    rows = np.empty((len(pairs), J + bls[0].size)) if out is None else out[:len(pairs)]
    for i, (n, b) in enumerate(pairs):
        rows[i, :J] = orders[n]
        rows[i, J:] = bls[b].reshape(-1)
    return rows


class ScheduleCrossover(Crossover):
    """Two parents, two children: order crossover on the order, uniform or blend on the blacklist.

    Parameters
    ----------
    prob_order : float
        Probability that a mating crosses the order parts (else children copy them).
    prob_blacklist : float
        Probability that a mating crosses the blacklist parts.
    blacklist : {"uniform", "rows", "blend"}
        Uniform crossover (each entry from either parent), row crossover (each
        job's whole row from either parent) or blend crossover
        BLX-alpha (each entry uniform in the parents' interval widened by
        ``alpha`` on both sides, clipped to [0, 1]).
    alpha : float
        Widening of the blend crossover.
    order : {"ox1", "prefix"}
        Order crossover (OX1: a segment in place, the rest in the other
        parent's order from the segment's end, wrapping) or the one-point order
        crossover (a prefix in place, the rest in the other parent's order).
    """

    def __init__(self, prob_order: float = 0.9, prob_blacklist: float = 0.9,
                 blacklist: str = "uniform", alpha: float = 0.5, order: str = "ox1", **kwargs):
        super().__init__(2, 2, prob=1.0, **kwargs)
        if order not in ("ox1", "prefix"):
            raise ValueError(f"order crossover must be 'ox1' or 'prefix', got {order!r}")
        self.order = order
        for name, p in (("prob_order", prob_order), ("prob_blacklist", prob_blacklist)):
            if not 0.0 <= p <= 1.0:
                raise ValueError(f"{name} must lie in [0, 1], got {p}")
        if blacklist not in ("uniform", "rows", "blend"):
            raise ValueError(f"blacklist crossover must be 'uniform', 'rows' or 'blend', got "
                             f"{blacklist!r}")
        if alpha < 0:
            raise ValueError(f"alpha must be >= 0, got {alpha}")
        self.prob_order = prob_order
        self.prob_blacklist = prob_blacklist
        self.blacklist = blacklist
        self.alpha = alpha

    def _do(self, problem, X, *args, random_state=None, **kwargs):
        _, n, n_var = X.shape
        X = np.ascontiguousarray(X, dtype=np.float64)
        parents = np.column_stack([np.arange(n), n + np.arange(n)])
        return self.children(problem, X.reshape(2 * n, n_var), parents, random_state)

    def children(self, problem, X, parents, random_state) -> np.ndarray:
        """The children (2, n, n_var) of the parent pairs ``parents`` (n, 2), rows of ``X``.

        The same children and random draws as :meth:`_do` on ``X[parents.T]``, without
        gathering the parents into a new array.
        """
        J, K = _dims(problem)
        X = np.ascontiguousarray(X, dtype=np.float64)
        parents = np.ascontiguousarray(parents, dtype=np.int64)
        n, n_var = parents.shape[0], X.shape[1]
        cuts = np.sort(random_state.integers(0, J + 1, (2, n, 2)), axis=2)
        do_order = random_state.random(n) < self.prob_order
        do_bl = random_state.random(n) < self.prob_blacklist
        out = np.empty((2, n, n_var))
        _order_crossover_into(X, parents, J, cuts, do_order, out, self.order == "prefix")
        if self.blacklist == "uniform":
            # One random bit per entry: 8 entries per random byte.
            bits = random_state.integers(0, 256, (n, -(-(n_var - J) // 8)), dtype=np.uint8)
            _uniform_into(X, parents, J, bits, do_bl, out)
        elif self.blacklist == "rows":
            # One random bit per job: a job's whole row comes from one parent.
            K = (n_var - J) // max(J, 1)
            per_job = random_state.random((n, J)) < 0.5
            bits = np.packbits(np.repeat(per_job, K, axis=1), axis=1)
            _uniform_into(X, parents, J, bits, do_bl, out)
        else:
            u = random_state.random((2, n, n_var - J))
            _blend_into(X, parents, J, u, do_bl, self.alpha, out)
        return out


@njit(cache=True)
def _order_crossover_into(X, parents, J, cuts, do_order, out, prefix=False):
    """Order crossover of the order parts of the parent pairs into ``out[:, :, :J]``.

    Mating ``m``'s parents are rows ``parents[m, 0]`` and ``parents[m, 1]`` of ``X``.
    OX1 (``prefix`` false): child ``c`` of mating ``m`` keeps its parent ``c``'s
    positions ``a:b`` (``a, b = cuts[c, m]``) in place and fills the other
    positions, from ``b`` on and wrapping around, with the remaining genes in
    the order they appear in the other parent from position ``b`` on.

    One-point (``prefix`` true): the child keeps its parent's first ``b``
    jobs in place and lists the others in the order they appear in the other
    parent, from its start: both parents' relative orders survive and the
    prefix keeps its positions, which is what a list scheduler's early
    decisions depend on.

    Matings with ``do_order[m]`` false copy their parents.
    """
    n = parents.shape[0]
    taken = np.zeros(J, dtype=np.bool_)
    for m in range(n):
        for c in range(2):
            p1 = X[parents[m, c]]
            p2 = X[parents[m, 1 - c]]
            if not do_order[m]:
                for i in range(J):
                    out[c, m, i] = p1[i]
                continue
            a = 0 if prefix else cuts[c, m, 0]
            b = cuts[c, m, 1]
            off = 0 if prefix else b
            taken[:] = False
            for i in range(a, b):
                out[c, m, i] = p1[i]
                taken[np.int64(p1[i])] = True
            pos = b
            for s in range(J):
                g = p2[(off + s) % J]
                if not taken[np.int64(g)]:
                    if pos == J:
                        pos = 0
                    out[c, m, pos] = g
                    pos += 1


@njit(cache=True)
def _uniform_into(X, parents, J, bits, do_bl, out):
    """Uniform crossover of the blacklist parts: bit set -> child 0 takes parent 0's entry."""
    n, n_var = parents.shape[0], X.shape[1]
    for m in range(n):
        x0 = X[parents[m, 0]]
        x1 = X[parents[m, 1]]
        if not do_bl[m]:
            for i in range(J, n_var):
                out[0, m, i] = x0[i]
                out[1, m, i] = x1[i]
            continue
        for i in range(n_var - J):
            if (bits[m, i >> 3] >> (7 - (i & 7))) & 1:
                out[0, m, J + i] = x0[J + i]
                out[1, m, J + i] = x1[J + i]
            else:
                out[0, m, J + i] = x1[J + i]
                out[1, m, J + i] = x0[J + i]


@njit(cache=True)
def _blend_into(X, parents, J, u, do_bl, alpha, out):
    """BLX-alpha on the blacklist parts, clipped to [0, 1]."""
    n, n_var = parents.shape[0], X.shape[1]
    for m in range(n):
        for i in range(J, n_var):
            x0 = X[parents[m, 0], i]
            x1 = X[parents[m, 1], i]
            if not do_bl[m]:
                out[0, m, i] = x0
                out[1, m, i] = x1
                continue
            lo = min(x0, x1)
            w = max(x0, x1) - lo
            for c in range(2):
                v = lo - alpha * w + u[c, m, i - J] * (1.0 + 2.0 * alpha) * w
                out[c, m, i] = min(1.0, max(0.0, v))


#: Order moves of :class:`ScheduleMutation`, by name, with the code the kernel uses.
ORDER_MOVES = {"swap": 0, "insert": 1, "invert": 2}


@njit(cache=True)
def _apply_order_moves(orders, rows, kinds, i, j):
    """Apply moves to ``orders`` in sequence; move ``s`` acts on row ``rows[s]``.

    ``kinds[s]``: 0 swaps positions ``i`` and ``j``; 1 takes the job at
    position ``i`` out and inserts it at position ``j`` (the jobs between
    shift by one); 2 reverses the segment between positions ``i`` and ``j``
    (both included).
    """
    for s in range(rows.shape[0]):
        r = rows[s]
        a = i[s]
        b = j[s]
        k = kinds[s]
        if k == 0:
            t = orders[r, a]
            orders[r, a] = orders[r, b]
            orders[r, b] = t
        elif k == 1:
            t = orders[r, a]
            if a < b:
                for q in range(a, b):
                    orders[r, q] = orders[r, q + 1]
            else:
                for q in range(a, b, -1):
                    orders[r, q] = orders[r, q - 1]
            orders[r, b] = t
        else:
            lo = min(a, b)
            hi = max(a, b)
            while lo < hi:
                t = orders[r, lo]
                orders[r, lo] = orders[r, hi]
                orders[r, hi] = t
                lo += 1
                hi -= 1


@njit(cache=True)
def _apply_cluster_moves(out, J, K, rows, cluster, lo, hi, level):
    """Blacklist moves on whole clusters: for move ``s``, the jobs at order positions
    ``lo[s] .. hi[s] - 1`` of row ``rows[s]`` get blacklist ``level[s]`` on ``cluster[s]``."""
    for s in range(rows.shape[0]):
        r = rows[s]
        k = cluster[s]
        for p in range(lo[s], hi[s]):
            job = np.int64(out[r, p])
            out[r, J + job * K + k] = level[s]


class ScheduleMutation(Mutation):
    """Order moves on the order; uniform resets and whole-cluster moves on the blacklist.

    Parameters
    ----------
    order_rate : float, optional
        Per-position rate of order moves: each individual gets a binomial
        ``(J, order_rate)`` number of moves; default ``1 / J`` (one move per
        individual on average).
    blacklist_rate : float, optional
        Per-entry probability that a blacklist entry is redrawn uniformly in
        [0, 1]; default ``1 / J`` (about K entries per individual).
    prob : float
        Probability that an individual is mutated at all (pymoo's ``prob``).
    order_moves : sequence of str
        The moves drawn (uniformly) for each order mutation: ``"swap"`` two
        positions, ``"insert"`` a job elsewhere (a shift), ``"invert"`` a short
        segment (at most ``max_segment`` positions).
    max_segment : int, optional
        Longest inverted segment and longest insertion distance; default
        ``max(2, J // 20)``.
    cluster_rate : float
        Probability per individual of a whole-cluster blacklist move: a random
        cluster gets one level (0, 0.5 or 1) for a random run of consecutive
        jobs of the order (or all of them). Energy-saving schedules need many
        blacklist entries to agree; single-entry resets rarely get there.
    """

    def __init__(self, order_rate: float | None = None, blacklist_rate: float | None = None,
                 prob: float = 1.0, order_moves=("swap", "insert", "invert"),
                 max_segment: int | None = None, cluster_rate: float = 0.2, **kwargs):
        super().__init__(prob=prob, **kwargs)
        for name, r in (("order_rate", order_rate), ("blacklist_rate", blacklist_rate),
                        ("cluster_rate", cluster_rate)):
            if r is not None and not 0.0 <= r <= 1.0:
                raise ValueError(f"{name} must lie in [0, 1], got {r}")
        moves = tuple(order_moves)
        unknown = [m for m in moves if m not in ORDER_MOVES]
        if unknown or not moves:
            raise ValueError(f"order_moves must be a non-empty subset of {list(ORDER_MOVES)}, "
                             f"got {list(moves)}")
        if max_segment is not None and max_segment < 1:
            raise ValueError(f"max_segment must be >= 1, got {max_segment}")
        self.order_rate = order_rate
        self.blacklist_rate = blacklist_rate
        self.order_moves = moves
        self.max_segment = max_segment
        self.cluster_rate = cluster_rate

    #: :meth:`_do` can write the mutated rows into its input (``out=X``).
    in_place = True

    def _do(self, problem, X, *args, random_state=None, out=None, **kwargs):
        """The mutated rows of ``X``: a new array, or ``out`` (which may be ``X`` itself)."""
        J, K = _dims(problem)
        n = X.shape[0]
        rs = random_state
        order_rate = 1.0 / J if self.order_rate is None else self.order_rate
        bl_rate = 1.0 / J if self.blacklist_rate is None else self.blacklist_rate
        seg = max(2, J // 20) if self.max_segment is None else self.max_segment
        # Every draw first, in a fixed order; one kernel then applies them.
        n_moves = rs.binomial(J, order_rate, n)
        n_ord = int(n_moves.sum())
        move = rs.integers(0, len(self.order_moves), n_ord)
        i = rs.integers(0, J, n_ord)
        # Swaps reach anywhere; inserts and inversions stay within max_segment positions.
        far = rs.integers(0, J, n_ord)
        shift = rs.integers(-seg, seg + 1, n_ord)
        if out is None:
            out = np.empty_like(X, dtype=np.float64)
        if K == 0:
            _mutate_into(X, out, J, K, self._codes(), n_moves, move, i, far, shift,
                         n_reset=_NO_INT, cols=_NO_INT, values=_NO_FLOAT, rows=_NO_INT,
                         cluster=_NO_INT, level=_NO_INT, a=_NO_PAIRS, whole=_NO_BOOL)
            return out
        # Entries to reset: a binomial count per individual, then that many positions.
        n_reset = rs.binomial(J * K, bl_rate, n)
        n_res = int(n_reset.sum())
        cols = J + rs.integers(0, J * K, n_res)
        values = rs.random(n_res)
        # Whole-cluster moves.
        rows = np.flatnonzero(rs.random(n) < self.cluster_rate)
        m = rows.size
        cluster = rs.integers(0, K, m)
        level = rs.integers(0, 3, m)
        a = rs.integers(0, J + 1, (m, 2))
        whole = rs.random(m) < 0.25
        _mutate_into(X, out, J, K, self._codes(), n_moves, move, i, far, shift,
                     n_reset=n_reset, cols=cols, values=values, rows=rows, cluster=cluster,
                     level=level, a=a, whole=whole)
        return out

    def _codes(self) -> np.ndarray:
        """The kernel's codes (:data:`ORDER_MOVES`) of this mutation's order moves."""
        codes = getattr(self, "_code_array", None)
        if codes is None:
            codes = self._code_array = np.array([ORDER_MOVES[m] for m in self.order_moves],
                                                dtype=np.int64)
        return codes


_NO_INT = np.zeros(0, dtype=np.int64)
_NO_FLOAT = np.zeros(0)
_NO_BOOL = np.zeros(0, dtype=np.bool_)
_NO_PAIRS = np.zeros((0, 2), dtype=np.int64)


@njit(cache=True)
def _mutate_into(X, out, J, K, codes, n_moves, move, i, far, shift, n_reset, cols, values,
                 rows, cluster, level, a, whole):
    """Apply :class:`ScheduleMutation`'s drawn moves to the rows of ``X``, into ``out``
    (which may be ``X``).

    Row ``r`` gets its ``n_moves[r]`` order moves in turn (move ``s``: kind
    ``codes[move[s]]`` at position ``i[s]``, to ``far[s]`` for a swap, else to
    ``i[s] + shift[s]`` clipped to the order), then its ``n_reset[r]`` blacklist
    entries ``cols`` set to ``values``, in turn; then, for each ``rows[t]``, the
    jobs at order positions ``lo .. hi - 1`` (all of them when ``whole[t]``,
    else between the two draws of ``a[t]``) get level ``(0, 0.5, 1)[level[t]]``
    on ``cluster[t]``.
    """
    n = X.shape[0]
    s = 0
    orders = np.empty((1, J), dtype=np.int64)
    one = np.zeros(1, dtype=np.int64)
    kind = np.empty(1, dtype=np.int64)
    ii = np.empty(1, dtype=np.int64)
    jj = np.empty(1, dtype=np.int64)
    for r in range(n):
        for p in range(J):
            orders[0, p] = np.int64(np.rint(X[r, p]))
        for _ in range(n_moves[r]):
            kind[0] = codes[move[s]]
            ii[0] = i[s]
            if kind[0] == 0:
                jj[0] = far[s]
            else:
                jj[0] = min(max(i[s] + shift[s], 0), J - 1)
            _apply_order_moves(orders, one, kind, ii, jj)
            s += 1
        for p in range(J):
            out[r, p] = orders[0, p]
        for p in range(J, X.shape[1]):
            out[r, p] = X[r, p]
    t = 0
    for r in range(n_reset.size):
        for _ in range(n_reset[r]):
            out[r, cols[t]] = values[t]
            t += 1
    m = rows.size
    lo = np.empty(m, dtype=np.int64)
    hi = np.empty(m, dtype=np.int64)
    value = np.empty(m)
    for t in range(m):
        lo[t] = 0 if whole[t] else min(a[t, 0], a[t, 1])
        hi[t] = J if whole[t] else max(a[t, 0], a[t, 1])
        value[t] = 0.5 * level[t]
    _apply_cluster_moves(out, J, K, rows, cluster, lo, hi, value)
