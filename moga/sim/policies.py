"""Built-in online policies written in Python, on :class:`~moga.sim.Session`.

Both are greedy list schedulers: at every event they rank the waiting jobs
and start, in rank order, every one that fits now (nodes and power caps);
no reservation, no preemption.

``realtime-first``
    Real-time jobs (``JobSet.realtime``) before batch jobs, each class in
    arrival order: the high-priority queue of the real-time study, on a
    federation and under its power caps.
``value-density``
    For job-sets with value functions: by decreasing value earned if the
    job started now and ran its estimate, per node-second of estimate; jobs
    that could earn nothing go last.
"""

from __future__ import annotations

import numpy as np

from .registry import OnlinePolicy

__all__ = ["RealtimeFirst", "ValueDensity", "start_ranked"]


def start_ranked(session, ranked) -> np.ndarray:
    """Start every job of ``ranked`` that fits now, in that order; returns those started.

    Stops early once no free node is left.
    """
    tasks = session.jobset.tasks
    free = int(session.free.sum())
    started = []
    for j in ranked:
        if free == 0:
            break
        if tasks[j] <= free and session.start([j]).size:
            started.append(j)
            free -= int(tasks[j])
    return np.array(started, dtype=np.int64)


class RealtimeFirst(OnlinePolicy):
    """Real-time jobs first, then batch jobs, each in arrival order; every job that fits."""

    name = "realtime-first"

    def decide(self, session):
        q = session.queued()  # arrival order
        rt = session.jobset.realtime[q]
        start_ranked(session, np.concatenate([q[rt], q[~rt]]))


class ValueDensity(OnlinePolicy):
    """Highest value per node-second first (value if started now); every job that fits."""

    name = "value-density"

    def reset(self, session):
        if not session.jobset.has_values:
            raise ValueError(f"policy {self.name!r} needs value functions; "
                             f"{session.jobset.name} has none (moga.value.attach_values)")

    def decide(self, session):
        from decoders.value import value_at

        js, q = session.jobset, session.queued()
        est = session.estimate[q]
        v = value_at(session.now + est / session.federation.speed.max(), js.v_start[q],
                     js.v_final[q], js.soft[q], js.hard[q])
        density = v / (js.tasks[q] * est)
        start_ranked(session, q[np.lexsort((q, -density))])
