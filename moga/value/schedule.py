"""Value-decoded schedules and the offline value decoder's wrappers (docs/design.md §6)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from decoders.value import decode_value, decode_value_batch, value_at

from ..errors import InputError
from ..model.jobset import JobSet
from ..model.platform import Federation
from ..model.schedule import Schedule, check_chromosome, schedule_energy, start_order

__all__ = ["ValueSchedule", "evaluate_value", "evaluate_value_batch", "value_at",
           "heuristic_order", "value_arrays", "value_schedule"]


@dataclass(frozen=True, eq=False)
class ValueSchedule(Schedule):
    """A schedule of a value-function workload: the one schedule record
    (:class:`~moga.model.schedule.Schedule`) of every job, with the value each earned.

    A job that was not run (dropped because it could earn nothing any more)
    counts as rejected: NaN ``start`` and ``finish``, no allocation, no part
    in the objectives (``makespan``, ``energy`` and ``flowtime`` are those of
    the jobs run; ``energy`` counts the busy increments at each job's power
    factor, as every schedule does).

    Attributes
    ----------
    cluster : ndarray of int (J,)
        -1 for a job that was not run.
    value : ndarray (J,)
        Value each job earned.
    total_value : float
    n_run : int
        Jobs run.
    n_dropped : int
        Jobs not run because they could earn nothing any more.
    reserved : ndarray (J,) or None
        Online heuristics: each job's reservation or place-holder start (NaN if
        it started when first mapped).
    n_events : int
        Online heuristics: mapping events.

    ``n_relaxed`` counts the jobs whose blacklist was void (offline decoder; 0
    for online heuristics); the other attributes are
    :class:`~moga.model.schedule.Schedule`'s.
    """

    cluster: np.ndarray | None = None
    value: np.ndarray | None = None
    total_value: float = 0.0
    n_run: int = 0
    n_dropped: int = 0
    reserved: np.ndarray | None = None
    n_events: int = 0

    @property
    def max_value(self) -> float:
        """Sum of every job's ``v_start``: what a schedule could earn at most."""
        return float(self.jobset.v_start.sum())

    def schedule(self) -> Schedule:
        """The jobs that ran, as a schedule record of their own (:class:`moga.Schedule`), for
        exports (``to_csv``, ``to_swf``) and Gantt charts without the jobs not run.

        Jobs not run (:attr:`n_dropped` of them, and their count in ``info``)
        are left out: the record's job-set is ``jobset.take(ran)``, named
        ``"<name>, jobs run"``. Each ran inside one cluster; energy is the
        federation's idle power over the makespan plus the run jobs' busy
        increments.
        """
        ran = self.cluster >= 0
        js = self.jobset.take(ran, name=f"{self.jobset.name}, jobs run")
        start, finish, alloc = self.start[ran], self.finish[ran], self.alloc[ran]
        makespan, energy = _totals(js, self.federation, start, finish, alloc)
        return Schedule(jobset=js, federation=self.federation, order=start_order(start),
                        blacklist=np.zeros(alloc.shape), model="at_start", start=start,
                        finish=finish, alloc=alloc, makespan=makespan, energy=energy,
                        flowtime=float(np.sum(finish - js.release)), n_relaxed=self.n_relaxed,
                        n_coalloc=0, info={"n_not_run": int((~ran).sum())})

    def value_by_class(self) -> dict:
        """Value earned and jobs completed per priority class."""
        out = {}
        for c in np.unique(self.jobset.priority):
            sel = self.jobset.priority == c
            out[int(c)] = {"jobs": int(sel.sum()), "completed": int((self.cluster[sel] >= 0).sum()),
                           "value": float(self.value[sel].sum()),
                           "max_value": float(self.jobset.v_start[sel].sum())}
        return out


def _totals(js: JobSet, fed: Federation, start, finish, alloc) -> tuple[float, float]:
    """``(makespan, energy)`` of jobs that each ran inside one cluster: the federation's idle
    power over the makespan plus the jobs' busy increments at their power factors
    (:func:`~moga.model.schedule.schedule_energy`, so that the exported per-job energies
    add up to it)."""
    makespan = float(finish.max() - js.release.min()) if len(js) else 0.0
    return makespan, schedule_energy(js.release, start, finish, alloc, js.power, fed)


def value_schedule(js: JobSet, fed: Federation, r, *, order=None, blacklist=None,
                   n_relaxed: int = 0, n_dropped: int | None = None, reserved=None,
                   n_events: int = 0, policy: str | None = None) -> ValueSchedule:
    """The :class:`ValueSchedule` of a value kernel's result ``r`` (its ``start``, ``finish``,
    ``cluster``, ``value``, ``total_value`` and ``n_run``); ``order`` and ``blacklist`` are
    the decoded chromosome's (default: the start order, no blacklist); ``n_dropped``
    defaults to the jobs not run."""
    ran = r.cluster >= 0
    alloc = np.zeros((len(js), fed.n_clusters), dtype=np.int64)
    alloc[np.flatnonzero(ran), r.cluster[ran]] = js.tasks[ran]
    done = js.take(ran) if not ran.all() else js
    makespan, energy = _totals(done, fed, r.start[ran], r.finish[ran], alloc[ran])
    return ValueSchedule(
        jobset=js, federation=fed,
        order=start_order(r.start) if order is None else np.asarray(order, dtype=np.int64),
        blacklist=np.zeros(alloc.shape) if blacklist is None else np.asarray(blacklist, float),
        model="at_start", start=r.start, finish=r.finish, alloc=alloc, makespan=makespan,
        energy=energy, flowtime=float(np.sum(r.finish[ran] - js.release[ran])),
        n_relaxed=int(n_relaxed), n_coalloc=0, policy=policy,
        info={"n_not_run": int((~ran).sum())},
        cluster=r.cluster, value=r.value, total_value=r.total_value, n_run=r.n_run,
        n_dropped=int(len(js) - r.n_run if n_dropped is None else n_dropped),
        reserved=reserved, n_events=n_events)


def value_arrays(js: JobSet, fed: Federation):
    """The kernel arrays of a value-function job-set on a federation."""
    if not isinstance(js, JobSet) or not isinstance(fed, Federation):
        raise TypeError(f"expected a moga.JobSet and a moga.Federation, got "
                        f"{type(js).__name__} and {type(fed).__name__}")
    if not js.has_values:
        raise ValueError(f"job-set {js.name!r} has no value functions; use "
                         "moga.value.attach_values first")
    if fed.capped:
        raise InputError(f"federation {fed.name!r} has a power cap, which the value-function "
                         "decoders and heuristics do not model; use an uncapped federation "
                         "(Federation.without_cap()) for value workloads")
    return (js.release, js.tasks, js.runtime, js.v_start, js.v_final, js.soft, js.hard,
            fed.nodes, fed.speed)


def evaluate_value(js: JobSet, fed: Federation, order=None, blacklist=None) -> ValueSchedule:
    """Decode one chromosome with the value decoder (default: submit order, no blacklist)."""
    J, K = len(js), fed.n_clusters
    order = js.submit_order if order is None else order
    blacklist = np.zeros((J, K)) if blacklist is None else blacklist
    check_chromosome(order, blacklist, J, K)
    r = decode_value(*value_arrays(js, fed), order, blacklist)
    return value_schedule(js, fed, r, order=order, blacklist=blacklist, n_relaxed=r.n_relaxed)


def evaluate_value_batch(js: JobSet, fed: Federation, orders, blacklists):
    """Batch value decode: ``(total_value, n_run, n_relaxed)``, arrays of shape (P,)."""
    return decode_value_batch(*value_arrays(js, fed), orders, blacklists)


def heuristic_order(s: ValueSchedule) -> np.ndarray:
    """Jobs by start time in a schedule (jobs not run last, by release): an order to seed a GA."""
    key = np.where(np.isnan(s.start), np.inf, s.start)
    return np.lexsort((np.arange(len(key)), s.jobset.release, key))
