"""Fast-end local search: neighbours of the fastest member aimed at its critical jobs.

NSGA-II keeps one point at each end of a front (crowding gives it an
infinite distance) but mates it no more often than any other; the fastest
schedules are therefore improved slowly. Each generation,
:class:`FastEndSearch` decodes the population's member of least makespan,
finds the jobs that end last (its critical jobs) and adds ``k`` neighbours
to the generation's children, each one move on a critical job:

* ``unblock``: clear its blacklist (the fastest clusters open to it);
* ``advance``: move it earlier in the order, by up to a tenth of the jobs;
* ``halve``: halve its blacklist.

The neighbours are decoded with the children and compete in survival; they
count in the run's evaluations.
"""

from __future__ import annotations

import numpy as np

from ..model.chromosome import join, split

__all__ = ["FastEndSearch"]

#: Share of the jobs that count as critical: those that end last.
CRITICAL_SHARE = 0.02


class FastEndSearch:
    """``k`` neighbours per generation of the population's fastest member.

    Called as ``search(problem, pop, random_state)`` after each generation's
    survival; returns the rows to decode with the next children (none when
    the problem has no makespan objective or no blacklist).
    """

    def __init__(self, k: int):
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 0:
            raise ValueError(f"fast_end must be an integer >= 0, got {k!r}")
        self.k = int(k)

    def __call__(self, problem, pop, random_state):
        objectives = getattr(problem, "objectives", ())
        if self.k == 0 or "makespan" not in objectives or not problem.use_blacklist:
            return None
        from ..model.schedule import evaluate

        J, K = problem.n_jobs, problem.n_clusters
        i = int(np.argmin(pop.F[:, objectives.index("makespan")]))
        order, bl = split(pop.X[i], J, K)
        s = evaluate(problem.jobset, problem.federation, order, bl, model=problem.model,
                     backfill=problem.backfill)
        n_late = max(1, int(CRITICAL_SHARE * J))
        late = np.argsort(-s.finish, kind="stable")[:n_late]
        pos = np.empty(J, dtype=np.int64)
        pos[order] = np.arange(J)
        rows = []
        for _ in range(self.k):
            o, b = order.copy(), bl.copy()
            j = int(late[random_state.integers(n_late)])
            move = random_state.integers(3)
            if move == 0:
                b[j] = 0.0
            elif move == 1:
                p = int(pos[j])
                q = int(random_state.integers(max(0, p - max(1, J // 10)), p + 1))
                o = np.insert(np.delete(o, p), q, j)
            else:
                b[j] *= 0.5
            rows.append(join(o, b))
        return np.array(rows)
