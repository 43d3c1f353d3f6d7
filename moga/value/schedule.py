"""Value-decoded schedules and the offline value decoder's wrappers (docs/design.md §6)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from decoders.value import decode_value, decode_value_batch, value_at

from ..errors import InputError
from ..model.jobset import JobSet
from ..model.platform import Federation
from ..model.schedule import check_chromosome, start_order

__all__ = ["ValueSchedule", "evaluate_value", "evaluate_value_batch", "value_at",
           "heuristic_order", "value_arrays"]


@dataclass(frozen=True, eq=False)
class ValueSchedule:
    """A schedule of a value-function workload.

    Attributes
    ----------
    jobset, federation
    start, finish : ndarray (J,)
        NaN for a job that was not run.
    cluster : ndarray of int (J,)
        -1 for a job that was not run.
    value : ndarray (J,)
        Value each job earned.
    total_value : float
    n_run : int
        Jobs run.
    n_relaxed : int
        Jobs whose blacklist was void (offline decoder; 0 for online heuristics).
    n_dropped : int
        Jobs not run because they could earn nothing any more.
    reserved : ndarray (J,) or None
        Online heuristics: each job's reservation or place-holder start (NaN if
        it started when first mapped).
    n_events : int
        Online heuristics: mapping events.
    """

    jobset: JobSet
    federation: Federation
    start: np.ndarray
    finish: np.ndarray
    cluster: np.ndarray
    value: np.ndarray
    total_value: float
    n_run: int
    n_relaxed: int = 0
    n_dropped: int = 0
    reserved: np.ndarray | None = None
    n_events: int = 0

    @property
    def max_value(self) -> float:
        """Sum of every job's ``v_start``: what a schedule could earn at most."""
        return float(self.jobset.v_start.sum())

    def schedule(self):
        """Every job as the one schedule record (:class:`moga.Schedule`), for its exports
        (``to_csv``, ``to_swf``), summary and Gantt chart.

        A job not run (:attr:`n_dropped` of them) is a rejected job of the
        record (NaN start and finish, no nodes: ``REJECTED`` in ``schedule.csv``,
        status 5 in ``schedule.swf``), counted by ``n_rejected`` and in ``info``
        (``n_not_run``, ``rejected``). Each job ran inside one cluster; energy
        is the federation's idle power over the makespan plus the run jobs' busy
        increments.
        """
        from ..model.schedule import Schedule

        js, fed = self.jobset, self.federation
        ran = self.cluster >= 0
        start = np.where(ran, self.start, np.nan)
        finish = np.where(ran, self.finish, np.nan)
        alloc = np.zeros((len(js), fed.n_clusters), dtype=np.int64)
        alloc[np.flatnonzero(ran), self.cluster[ran]] = js.tasks[ran]
        makespan = float(finish[ran].max() - js.release.min()) if ran.any() else 0.0
        inc = np.maximum(fed.power_busy - fed.power_idle, 0.0)
        energy = fed.idle_power * makespan + float(((alloc[ran] * inc).sum(axis=1)
                                                    * (finish[ran] - start[ran])).sum())
        order = start_order(start)
        n_out = int((~ran).sum())
        info = {"n_not_run": n_out}
        if n_out:
            info["rejected"] = n_out
        return Schedule(js, fed, order, np.zeros(alloc.shape), "at_start", start, finish, alloc,
                        makespan, energy, float(np.sum(finish[ran] - js.release[ran])),
                        self.n_relaxed, 0, info=info)

    def value_by_class(self) -> dict:
        """Value earned and jobs completed per priority class."""
        out = {}
        for c in np.unique(self.jobset.priority):
            sel = self.jobset.priority == c
            out[int(c)] = {"jobs": int(sel.sum()), "completed": int((self.cluster[sel] >= 0).sum()),
                           "value": float(self.value[sel].sum()),
                           "max_value": float(self.jobset.v_start[sel].sum())}
        return out


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
    n_dropped = int(len(js) - r.n_run)
    return ValueSchedule(js, fed, r.start, r.finish, r.cluster, r.value, r.total_value, r.n_run,
                         r.n_relaxed, n_dropped)


def evaluate_value_batch(js: JobSet, fed: Federation, orders, blacklists):
    """Batch value decode: ``(total_value, n_run, n_relaxed)``, arrays of shape (P,)."""
    return decode_value_batch(*value_arrays(js, fed), orders, blacklists)


def heuristic_order(s: ValueSchedule) -> np.ndarray:
    """Jobs by start time in a schedule (jobs not run last, by release): an order to seed a GA."""
    key = np.where(np.isnan(s.start), np.inf, s.start)
    return np.lexsort((np.arange(len(key)), s.jobset.release, key))
