"""Built-in online policies written in Python, on :class:`~moga.sim.Session`.

They are greedy list schedulers: at every event they rank the waiting jobs
and start, in rank order, every one that fits now (nodes and power caps);
no reservation.

``realtime-first``
    Real-time jobs (``JobSet.realtime``) before batch jobs, each class in
    arrival order: the high-priority queue of the real-time study, on a
    federation and under its power caps.
``realtime-preempt``
    ``realtime-first``, and a real-time job that does not fit stops batch
    jobs for it (:meth:`~moga.sim.Session.preempt`), the most recently
    started first, as few as free its nodes; they are queued again with
    their work kept (a checkpoint written at the preemption, read back at
    the restart) or lost (``checkpoint="none"``). Nothing is stopped when
    all the running batch jobs would not free enough nodes.
``value-density``
    For job-sets with value functions: by decreasing value earned if the
    job started now and ran its estimate, per node-second of estimate; jobs
    that could earn nothing go last, or, with ``reject=True``, are rejected
    (:meth:`~moga.sim.Session.reject`), as the value paper's heuristics drop
    them: value functions never rise, so such a job can earn nothing later.
"""

from __future__ import annotations

import numpy as np

from ..validation import check_number
from .registry import OnlinePolicy

__all__ = ["RealtimeFirst", "RealtimePreempt", "ValueDensity", "start_ranked"]


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
    backfill = "none"

    def decide(self, session):
        q = session.queued()  # arrival order
        rt = session.jobset.realtime[q]
        start_ranked(session, np.concatenate([q[rt], q[~rt]]))


class RealtimePreempt(OnlinePolicy):
    """Real-time jobs first, preempting batch jobs for them; then batch jobs in arrival order.

    Parameters
    ----------
    checkpoint : {"jit", "none"}
        ``"jit"`` (default): a preempted job keeps its work (a checkpoint
        written at the preemption) and restarts with ``restart`` s of work
        more (reading it back); ``"none"``: it starts over.
    restart : float
        Restart work of a ``"jit"`` checkpoint, s on a speed-1.0 node (>= 0).
    """

    name = "realtime-preempt"
    backfill = "none"

    def __init__(self, checkpoint: str = "jit", restart: float = 0.0):
        if checkpoint not in ("jit", "none"):
            raise ValueError(f"checkpoint must be 'jit' or 'none', got {checkpoint!r}")
        self.checkpoint, self.restart = checkpoint, check_number("restart", restart, 0)
        self.preemptions = 0

    def reset(self, session):
        self.preemptions = 0

    def decide(self, session):
        js = session.jobset
        q = session.queued()
        rt = js.realtime[q]
        for j in q[rt]:
            if session.start([j]).size:
                continue
            run = session.running()[0]
            batch = run[~js.realtime[run]]
            need = int(js.tasks[j]) - int(session.free.sum())
            if need <= 0 or batch.size == 0 or js.tasks[batch].sum() < need:
                continue  # it waits for power, or no batch jobs could free its nodes
            # The most recently started first (the least work lost), ties by position.
            victims = batch[np.lexsort((-batch, -session.current_start(batch)))]
            n = int(np.searchsorted(np.cumsum(js.tasks[victims]), need)) + 1
            keep, restart = (1.0, self.restart) if self.checkpoint == "jit" else (0.0, 0.0)
            session.preempt(victims[:n], keep=keep, restart=restart)
            self.preemptions += n
            session.start([j])
        start_ranked(session, session.queued()[~js.realtime[session.queued()]])

    def summary(self) -> dict:
        return {"checkpoint": self.checkpoint, "restart_s": self.restart,
                "preempted_jobs": self.preemptions}


class ValueDensity(OnlinePolicy):
    """Highest value per node-second first (value if started now); every job that fits.

    Parameters
    ----------
    reject : bool
        Reject the waiting jobs that would earn nothing even if they started
        now on the fastest nodes and ran their estimate (default False: they
        wait at the back of the queue and run when nodes are left over).
    """

    name = "value-density"
    backfill = "none"

    def __init__(self, reject: bool = False):
        if not isinstance(reject, (bool, np.bool_)):
            raise ValueError(f"reject must be True or False, got {reject!r}")
        self.reject = bool(reject)
        self.rejected = 0

    def reset(self, session):
        self.rejected = 0
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
        if self.reject:
            self.rejected += session.reject(q[v <= 0]).size
            keep = v > 0
            q, density = q[keep], density[keep]
        start_ranked(session, q[np.lexsort((q, -density))])

    def summary(self) -> dict:
        return {"reject": self.reject, "rejected_jobs": self.rejected}
