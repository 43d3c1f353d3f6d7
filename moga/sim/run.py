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


def run_policy(policy: OnlinePolicy, jobset: JobSet, federation: Federation, *,
               model: str = "fluid", rule: str = "fastest", estimates: str = "requested",
               name: str | None = None) -> Schedule:
    """Drive a :class:`Session` with ``policy.decide`` at every event; returns the schedule.

    ``info`` holds ``decision_s`` (time spent in ``decide``), ``wall_s``, and what
    the policy's ``summary()``, if it has one, reports.
    """
    t0 = time.perf_counter()
    session = Session(jobset, federation, model=model, rule=rule, estimates=estimates)
    reset = getattr(policy, "reset", None)
    if callable(reset):
        reset(session)
    deciding = 0.0
    while not session.done:
        t1 = time.perf_counter()
        policy.decide(session)
        deciding += time.perf_counter() - t1
        session.advance()
    name = name or getattr(policy, "name", type(policy).__name__)
    info = {"decision_s": deciding, "wall_s": time.perf_counter() - t0}
    summary = getattr(policy, "summary", None)
    if callable(summary):  # a policy's own account of its decisions
        info = {**summary(), **info}
    return session.result(name, info)
