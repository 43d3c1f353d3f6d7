"""Old import path of the whole-run dispatchers and the Python adapter of the loop's steps.

:func:`dispatch` and :class:`Dispatch` live in :mod:`decoders.federated`,
the steps in :mod:`decoders.steps`.
"""

from __future__ import annotations

import numpy as np

from . import steps
from ._federated_core import E_NCL, E_NH, E_NQ, E_QH, E_STARTED, Out, new_state
from ._validate import choice_code
from .federated import MODELS, Dispatch, dispatch, setup_online

__all__ = ["Dispatch", "dispatch", "Stepper"]


class Stepper:
    """The federated event loop, one event at a time, for a dispatcher written in Python.

    Use: ``t = s.begin(t)`` (jobs finishing by ``t`` leave, arrivals join the
    queue; returns the event time), read :meth:`queued` and :meth:`running`,
    decide, then ``nxt = s.map(t, listed)`` (start the listed queued jobs,
    in that order, where they fit now: nodes and power, within the
    allowance of their blacklist rows, :meth:`set_blacklist`; returns the
    next finish or arrival), until :attr:`done`; then :meth:`finish`.

    Parameters are those of :func:`dispatch` (without ``method``).
    """

    def __init__(self, release, tasks, runtime, sigma, bw, nodes, speed, power_busy, power_idle,
                 link, power=None, power_cap=None, cluster_caps=None, model: str = "fluid",
                 rule: str = "fastest", check: bool = True):
        self.code = choice_code("execution model", model, MODELS)
        self.jobs, self.plat, order, self.bl = setup_online(
            release, tasks, runtime, sigma, bw, nodes, speed, power_busy, power_idle, link,
            power=power, power_cap=power_cap, cluster_caps=cluster_caps, rule=rule, check=check)
        self.J, self.K = self.bl.shape
        # The run times the loop reads, a read-only view (the kernels' argument type) of
        # what :meth:`preempt` and :meth:`set_runtime` change for a restarted job.
        self._runtime = np.array(self.jobs.runtime)
        runtime = self._runtime.view()
        runtime.setflags(write=False)
        self.jobs = self.jobs._replace(runtime=runtime)
        # The blacklist the mapper reads: a read-only view of rows that
        # :meth:`set_blacklist` writes.
        self._bl = np.zeros((self.J, self.K))
        self.bl = self._bl.view()
        self.bl.setflags(write=False)
        self.st = new_state(self.J, self.K)
        self.out = Out(np.full(self.J, np.nan), np.full(self.J, np.nan),
                       np.empty((self.J, self.K), dtype=np.int64), np.empty(self.J))
        steps.init(self.jobs, self.plat, self.st, self.out, order)
        self._result = None

    @property
    def done(self) -> bool:
        """True when every job has started or been dropped."""
        return int(self.st.evi[E_STARTED]) == self.J

    def begin(self, t: float) -> float:
        """Release the jobs finishing by ``t`` and queue the arrivals; returns the event time."""
        return float(steps.begin(float(t), self.code, self.jobs, self.plat, self.st, self.out))

    def queued(self) -> np.ndarray:
        """The waiting jobs (a copy), in arrival order."""
        qh = int(self.st.evi[E_QH])
        return self.st.wq[qh:qh + int(self.st.evi[E_NQ])].copy()

    def running(self):
        """``(jobs, predicted finish)`` of the running jobs."""
        run = np.concatenate([self.st.hj[: int(self.st.evi[E_NH])],
                              self.st.cl[: int(self.st.evi[E_NCL])]])
        return run, self.st.fin[run].copy()

    @property
    def free(self) -> np.ndarray:
        """Free nodes per cluster (a copy)."""
        return self.st.free.copy()

    @property
    def power_used(self) -> np.ndarray:
        """The running jobs' increments over idle power, per cluster then overall, W (a copy)."""
        return self.st.pk.copy()

    def set_blacklist(self, jobs, rows) -> None:
        """Give the queued ``jobs`` the blacklist ``rows`` (n, K) for :meth:`map` (default 0)."""
        self._bl[np.asarray(jobs, dtype=np.int64)] = rows

    def map(self, t: float, listed) -> float:
        """Start the queued jobs ``listed`` in order where they fit now; returns the next event."""
        listed = np.ascontiguousarray(listed, dtype=np.int64)
        return float(steps.map(float(t), self.code, self.jobs, self.plat, self.st, self.out,
                               self.bl, listed, listed.shape[0]))

    def preempt(self, t: float, job: int) -> float:
        """Stop running ``job`` at ``t`` (its nodes, power and link traffic released, its
        allocation cleared) and queue it again at its place; returns its work left, s on a
        speed-1.0 node. Its run time stays what it was until :meth:`set_runtime`."""
        return float(steps.preempt(float(t), self.code, self.jobs, self.plat, self.st,
                                   self.out, int(job)))

    def drop(self, job: int) -> None:
        """Take queued ``job`` out of the queue for good: it never runs (NaN start and
        finish, no allocation) and counts as settled for :attr:`done`."""
        steps.drop(self.jobs, self.st, self.out, int(job))

    def runtime(self, job: int) -> float:
        """The run time the loop gives ``job`` when it starts, s on a speed-1.0 node."""
        return float(self._runtime[job])

    def set_runtime(self, job: int, runtime: float) -> None:
        """Give queued ``job`` this run time (s on a speed-1.0 node, > 0) for its next start."""
        if not runtime > 0:
            raise ValueError(f"a run time must be > 0, got {runtime!r}")
        self._runtime[job] = runtime

    def snapshot(self) -> list:
        """Copies of the loop's whole state, for :meth:`restore` (a dry run of a mapping)."""
        return [a.copy() for a in (*self.st, *self.out, self._bl, self._runtime)]

    def restore(self, snapshot) -> None:
        """Put back the state a :meth:`snapshot` copied."""
        for a, saved in zip((*self.st, *self.out, self._bl, self._runtime), snapshot,
                            strict=True):
            np.copyto(a, saved)

    def finish(self, t: float) -> Dispatch:
        """Let the running jobs end; returns the schedule."""
        if not self.done:
            raise RuntimeError(f"{self.J - int(self.st.evi[E_STARTED])} job(s) never started")
        m, e, fl = steps.end(float(t), self.code, self.jobs, self.plat, self.st, self.out)
        nc = int(np.count_nonzero((self.out.alloc > 0).sum(axis=1) >= 2))
        return Dispatch(self.out.start, self.out.finish, self.out.alloc, float(m), float(e),
                        float(fl), nc)
