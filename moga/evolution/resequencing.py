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
"""

from __future__ import annotations

import numpy as np

__all__ = ["Resequencer", "SCALE_JOBS"]

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

    def __call__(self, problem, C, random_state):
        p = self.rate * min(1.0, SCALE_JOBS / max(problem.n_jobs, 1))
        pick = np.flatnonzero(random_state.random(len(C)) < p)
        if pick.size == 0:
            return C
        C = np.array(C, dtype=np.float64)
        C[pick, :problem.n_jobs] = problem.start_orders(C[pick], backfill="easy")
        return C
