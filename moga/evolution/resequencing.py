"""Backfill re-sequencing: a child's order becomes the start order of its EASY schedule.

The MOGA decoder starts jobs strictly in the chromosome's order, so a job
that could run in a hole left before the job ahead of it waits. EASY
backfilling fills such holes without delaying the head of the queue. Decoding
a chromosome with EASY (its order as queue priority, its blacklist as is)
and reading off the jobs by start time gives an order that the in-order
decoder turns into a schedule at least as early, job by job, up to the first
job that starts earlier than under EASY (the argument of
:mod:`moga.evolution.seeding`); in practice a shorter schedule at the same
blacklist, so the same energy preference at a shorter makespan.

:class:`Resequencer` applies this to a random share of the children of every
generation (the rates measured against each other are in docs/design.md §7 and
``benchmarks/quality.py``). An EASY decode scans its queue at every event, so
on a batch job-set it costs many in-order decodes, more the larger the set
(``benchmarks/bench_backfill.py``); hence only a few children are
re-sequenced, and they count in the run's evaluations. The chance of
re-sequencing a child is ``rate`` up to :data:`SCALE_JOBS` jobs and
``rate * SCALE_JOBS / J`` beyond, which keeps the share of a generation's
time spent on it at or below its share on 1,000 jobs.

:class:`EasySearch` goes the other way round (``GAParams.easy_search``): the
population evolves in EASY's space, where a random order is already a good
queue priority, and every chromosome it decodes is turned into its in-order
twin for the run's archive: its EASY start order (jobs by start time, ties in
its order) with its EASY allocation as the blacklist
(:func:`~moga.model.chromosome.pinned_blacklists`: each job may use the very
node counts EASY gave it and no others), decoded in order. Pinned so, a job
cannot start in strict order where EASY kept it waiting on other nodes (to
keep a reservation), which with the row's own blacklist it often does, on
slower nodes, delaying every job behind it; the twin's schedule is then
EASY's, job for job, unless some job's pinned nodes are free earlier than
EASY started it. The twin's objectives are always the in-order decoder's
own. A run twins only the rows whose EASY point its archive admits: a
twin's objectives are EASY's or worse for nearly every row, so the twin of
a row the archive already covers is nearly never kept, and most rows are
covered (docs/dev/experiments.md).
"""

from __future__ import annotations

import numpy as np

from decoders.federated import start_orders_of

from ..model.chromosome import pinned_blacklists
from .duplicates import _row_hashes
from .problem import SchedulingProblem

__all__ = ["EasySearch", "Resequencer", "SCALE_JOBS"]

#: Job-set size beyond which the per-child chance falls as 1 / J.
SCALE_JOBS = 1000


class Resequencer:
    """Replace the order of each child, with probability ``rate``, by its EASY start order.

    Parameters
    ----------
    rate : float
        Probability, per child, of being re-sequenced (in [0, 1]), for job-sets
        of up to :data:`SCALE_JOBS` jobs; ``rate * SCALE_JOBS / J`` for larger ones.

    Called as ``resequencer(problem, C, random_state)`` on the children
    ``C`` (rows of ``X``) of a :class:`~moga.evolution.problem.SchedulingProblem`
    decoded in order; it draws one number per child from ``random_state``
    (so runs repeat exactly) and returns ``C`` with the chosen rows' order
    parts replaced.
    """

    def __init__(self, rate: float):
        if isinstance(rate, bool) or not isinstance(rate, (int, float, np.number)) \
                or not 0.0 <= rate <= 1.0:
            raise ValueError(f"resequence rate must lie in [0, 1], got {rate!r}")
        self.rate = float(rate)

    #: The call can write into ``C`` (``out=C``).
    in_place = True

    def __call__(self, problem, C, random_state, out=None):
        """``C`` with the chosen rows re-sequenced: a new array, or ``out`` (``C`` itself,
        a float64 array)."""
        p = self.rate * min(1.0, SCALE_JOBS / max(problem.n_jobs, 1))
        pick = np.flatnonzero(random_state.random(len(C)) < p)
        if pick.size == 0:
            return C
        C = np.array(C, dtype=np.float64) if out is None else out
        C[pick, :problem.n_jobs] = problem.start_orders(C[pick], backfill="easy")
        return C


class EasySearch(SchedulingProblem):
    """The EASY-space problem of an in-order run, and the in-order twins of its rows.

    Parameters
    ----------
    in_order : SchedulingProblem
        The run's problem (``backfill="none"``); its decoder gives the twins'
        objectives and counts their decodes.

    :meth:`decode` decodes with EASY (the order as queue priority), which is
    what the population is ranked on, and keeps the rows' start orders and
    allocations; :meth:`twins` turns rows into in-order chromosomes with their
    objectives.
    """

    def __init__(self, in_order: SchedulingProblem):
        if in_order.backfill != "none":
            raise ValueError(f"EasySearch needs the in-order problem (backfill='none'), got "
                             f"backfill={in_order.backfill!r}")
        super().__init__(in_order.jobset, in_order.federation, model=in_order.model,
                         objectives=in_order.objectives, use_blacklist=in_order.use_blacklist,
                         backfill="easy")
        self.in_order = in_order
        self._last = None  # (row hashes, start times by job, allocations) of the last decode

    def decode(self, X):
        """EASY's objectives (P, n_obj) of the rows of ``X``, and the batch decode."""
        X = np.ascontiguousarray(np.atleast_2d(X), dtype=np.float64)
        # Start times, not start orders: only the rows the archive admits are twinned, so
        # the sort by start time waits for :meth:`twins`.
        b = self._batch(X, "easy", starts=True, allocations=True)
        self._last = (_row_hashes(X), b.starts, b.alloc)
        return self._columns(b), b

    def twins(self, X, rows=None):
        """``(F, C)``: the in-order twins ``C`` of rows of ``X`` and their objectives ``F``.

        Row ``i`` of ``C`` is row ``rows[i]`` of ``X`` (every row when ``rows``
        is None) with its order replaced by the row's EASY start order (jobs by
        start time, ties in the row's order) and its blacklist by the row's
        EASY allocation (:func:`~moga.model.chromosome.pinned_blacklists`;
        kept as is without a blacklist); ``F`` is ``C`` decoded in order. The
        start orders and allocations of the last :meth:`decode` are reused
        when ``X`` holds the same rows.
        """
        X = np.ascontiguousarray(np.atleast_2d(X), dtype=np.float64)
        rows = np.arange(len(X)) if rows is None else np.asarray(rows, dtype=np.int64)
        if rows.size == 0:
            return np.empty((0, len(self.objectives))), X[rows].copy()
        last = self._last
        if last is not None and len(last[0]) == len(X) and np.array_equal(last[0],
                                                                          _row_hashes(X)):
            order = np.rint(X[rows, :self.n_jobs]).astype(np.int64)
            # The decode kept start times by job; by order position they give the start order.
            orders = start_orders_of(order, np.take_along_axis(last[1][rows], order, axis=1))
            alloc = last[2][rows]
        else:
            b = self._batch(X[rows], "easy", start_orders=True, allocations=True)
            orders, alloc = b.start_orders, b.alloc
        C = X[rows].copy()
        C[:, :self.n_jobs] = orders
        if len(C) == 0:
            return np.empty((0, len(self.objectives))), C
        if self.use_blacklist:
            C[:, self.n_jobs:] = pinned_blacklists(alloc, self.federation.nodes).reshape(
                len(C), -1)
        return self.in_order.decode(C)[0], C
