"""Run a Python policy on a :class:`Session`: one loop, one schedule record.

The catalogue of named policies and :func:`moga.simulate`, which runs any of
them, live above the seam (:mod:`moga.policies`).
"""

from __future__ import annotations

import time

from ..model.jobset import JobSet
from ..model.platform import Federation
from ..model.schedule import Schedule
from .registry import OnlinePolicy
from .session import Session

__all__ = ["run_policy"]

#: ``run_policy`` reports progress at most this often, s of wall-clock time (and at the end).
PROGRESS_INTERVAL_S = 0.5


def run_policy(policy: OnlinePolicy, jobset: JobSet, federation: Federation, *,
               model: str = "fluid", rule: str = "fastest", estimates: str = "requested",
               name: str | None = None, progress=None) -> Schedule:
    """Drive a :class:`Session` with ``policy.decide`` at every event; returns the schedule.

    ``info`` holds ``decision_s`` (time spent in ``decide``), ``wall_s``, and what
    the policy's ``summary()``, if it has one, reports. ``progress(done, total)``,
    if given, is called after an event at most every :data:`PROGRESS_INTERVAL_S`
    seconds and after the last one, with the jobs started or rejected so far
    (``done``) and the job-set's size (``total``).
    """
    t0 = time.perf_counter()
    session = Session(jobset, federation, model=model, rule=rule, estimates=estimates)
    reset = getattr(policy, "reset", None)
    if callable(reset):
        reset(session)
    deciding, shown = 0.0, t0
    while not session.done:
        t1 = time.perf_counter()
        policy.decide(session)
        deciding += time.perf_counter() - t1
        session.advance()
        if progress is not None and (session.done or t1 - shown >= PROGRESS_INTERVAL_S):
            shown = t1
            progress(_jobs_done(session), len(jobset))
    name = name or getattr(policy, "name", type(policy).__name__)
    info = {"decision_s": deciding, "wall_s": time.perf_counter() - t0}
    summary = getattr(policy, "summary", None)
    if callable(summary):  # a policy's own account of its decisions
        info = {**summary(), **info}
    return session.result(name, info, backfill=getattr(policy, "backfill", "n/a"))


def _jobs_done(session: Session) -> int:
    """Jobs started or rejected so far: those arrived less those waiting."""
    if session.done:
        return len(session.jobset)
    arrived = int((session.jobset.release <= session.now).sum())
    return arrived - int(session.queued().size)
