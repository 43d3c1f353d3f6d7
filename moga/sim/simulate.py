"""Run any registered or user policy on a job-set: one call, one schedule record."""

from __future__ import annotations

import dataclasses
import time

from ..model.jobset import JobSet
from ..model.platform import Federation
from ..model.schedule import Schedule, evaluate
from .registry import (
    POLICIES,
    OnlinePolicy,
    load_policy,
    policy_info,
    session_policy,
)
from .session import ESTIMATES, Session

__all__ = ["simulate"]


def _resolve(policy):
    """``(name, PolicyInfo or None, OnlinePolicy or None)`` of a policy given by name,
    ``path.py:Class`` or instance."""
    if isinstance(policy, str):
        if policy in POLICIES:
            return policy, POLICIES[policy], None
        if ".py:" in policy:
            obj = load_policy(policy)
            return getattr(obj, "name", type(obj).__name__), None, obj
        policy_info(policy)  # the error listing the names
    if callable(getattr(policy, "decide", None)):
        return getattr(policy, "name", type(policy).__name__), None, policy
    raise TypeError(f"policy must be a registered name, 'path.py:Class' or an object with "
                    f"decide(session), got {type(policy).__name__}")


def simulate(jobset: JobSet, federation: Federation, policy="easy", *, model: str = "fluid",
             rule: str = "fastest", estimates: str | None = None,
             options: dict | None = None, progress=None) -> Schedule:
    """Simulate an online policy on ``jobset`` (jobs arriving at their release) on ``federation``.

    Parameters
    ----------
    jobset : JobSet
    federation : Federation
        With its power caps, if any (every policy of :data:`POLICIES` honours them).
    policy : str or OnlinePolicy
        A name of :data:`moga.sim.POLICIES`, ``"path/to/file.py:ClassName"`` (a
        user's :class:`~moga.sim.OnlinePolicy`), or such an object.
    model : {"fluid", "at_start"}
    rule : {"fastest", "greenest", "consolidate"}
        Allocation rule.
    estimates : {"requested", "exact"}, optional
        What the policy plans with. Python policies default to the requested
        times; the kernel policies and the hybrid to exact run times, and
        ``easy``, ``prb`` and ``hybrid`` also plan on the requested times if
        asked (the others offer no other choice; asking for one is an
        error).
    options : dict, optional
        Keyword arguments of a registered Python policy that takes options
        (``online-moga``: :class:`moga.evolution.OnlineMOGA`;
        ``realtime-preempt``: :class:`moga.sim.policies.RealtimePreempt`).
    progress : callable, optional
        ``progress(done, total)`` for a policy driven through a :class:`Session`
        (users' and the registered Python policies): see :func:`run_policy`. A
        kernel policy runs in one call and never calls it.

    Returns
    -------
    Schedule
        With ``policy`` set and ``info`` holding ``estimates``, ``wall_s`` (the
        whole simulation), for Python policies ``events`` and ``decision_s``
        (time spent in ``decide``), and what a policy's ``summary()`` adds.
    """
    name, entry, obj = _resolve(policy)
    if options and entry is None:
        raise ValueError("options are for a registered policy given by name; configure your "
                         "own policy object instead")
    if estimates is not None and estimates not in ESTIMATES:
        raise ValueError(f"estimates must be one of {list(ESTIMATES)}, got {estimates!r}")
    if entry is None:  # a user's policy
        return run_policy(obj, jobset, federation, model=model, rule=rule,
                          estimates=estimates or "requested", name=name, progress=progress)
    est = estimates or entry.estimates[0]
    if est not in entry.estimates:
        raise ValueError(f"policy {name!r} plans on {' or '.join(entry.estimates)} run times "
                         f"only, not {est!r}")
    own = session_policy(name, options)
    if options and own is None:
        raise ValueError(f"policy {name!r} takes no options, got {sorted(options)}")
    if own is not None:
        return run_policy(own, jobset, federation, model=model, rule=rule, estimates=est,
                          name=name, progress=progress)
    t0 = time.perf_counter()
    if entry.kind == "kernel":
        s = _run_kernel(name, jobset, federation, model, rule, est)
    else:  # a registered Python policy with its own driver
        s = _run_registered_python(name, jobset, federation, model, rule, est)
    info = {"estimates": est, "wall_s": time.perf_counter() - t0}
    return dataclasses.replace(s, policy=name, info={**s.info, **info})


#: ``run_policy`` reports progress at most this often, s of wall-clock time (and at the end).
PROGRESS_INTERVAL_S = 0.5


def run_policy(policy: OnlinePolicy, jobset: JobSet, federation: Federation, *,
               model: str = "fluid", rule: str = "fastest", estimates: str = "requested",
               name: str | None = None, progress=None) -> Schedule:
    """Drive a :class:`Session` with ``policy.decide`` at every event; returns the schedule.

    ``progress(done, total)``, if given, is called after an event at most every
    :data:`PROGRESS_INTERVAL_S` seconds and after the last one, with the jobs
    started or rejected so far (``done``) and the job-set's size (``total``).
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
    return session.result(name, info)


def _jobs_done(session: Session) -> int:
    """Jobs started or rejected so far: those arrived less those waiting."""
    arrived = int((session.jobset.release <= session.now).sum())
    return arrived - int(session.queued().size) if not session.done else len(session.jobset)


def _run_realtime(name, js, fed) -> Schedule:
    """A real-time scheme (``rt-`` + a label of :data:`moga.realtime.study.SCHEME_SET`) on a
    one-cluster federation, with the job-set's real-time tags and the default checkpoint
    model."""
    from ..errors import InputError
    from ..realtime import Machine, RealtimeJobs
    from ..realtime import simulate as simulate_realtime
    from ..realtime.study import SCHEME_SET

    if fed.n_clusters != 1:
        raise InputError(f"policy {name!r} runs on one machine of identical nodes; got "
                         f"{fed.n_clusters} clusters (use a one-cluster federation, e.g. the "
                         "preset machine@N)")
    if fed.capped:
        raise InputError(f"policy {name!r} has no power cap; drop the cap")
    scheme, kind, improved = SCHEME_SET[name[3:]]
    rj = RealtimeJobs.from_jobset(js, Machine.from_cluster(fed, 0))
    return simulate_realtime(rj, scheme, kind, improved).schedule(fed)


def _run_kernel(name, js, fed, model, rule, estimates="exact") -> Schedule:
    from ..value.online import ONLINE_HEURISTICS, online

    if name.startswith("rt-"):
        return _run_realtime(name, js, fed)
    if name in ONLINE_HEURISTICS:
        return online(js, fed, name).schedule()
    if name in ("fcfs", "easy"):
        return evaluate(js, fed, js.submit_order, None, model=model,
                        backfill="easy" if name == "easy" else "none", rule=rule,
                        estimates=estimates)
    from ..powercap.dispatchers import run_dispatcher

    return run_dispatcher(js, fed, name, model=model, rule=rule, estimates=estimates).schedule()


def _run_registered_python(name, js, fed, model, rule, estimates="exact") -> Schedule:
    from ..powercap.dispatchers import run_dispatcher

    r = run_dispatcher(js, fed, name, model=model, rule=rule, estimates=estimates)
    info = {k: v for k, v in r.info.items() if k != "solve_seconds"}
    info["decision_s"] = float(r.info["solve_seconds"].sum())
    return dataclasses.replace(r.schedule(), info=info)
