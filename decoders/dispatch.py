"""Online dispatchers on the federated event loop: EASY and PRB in one kernel call, and
the steps of that loop for a dispatcher that decides in Python (the hybrid CP one).

docs/design.md §11. Jobs arrive at their release (release mode); at every
arrival or finish the dispatcher starts queued jobs on the federation
(allocation, execution model and power budgets as in
:mod:`decoders.federated`); no blacklist.

``"easy"``
    EASY backfilling in arrival order (first come, first served), power a
    second resource of the head's reservation.
``"prb"``
    The power-capped priority-rule-based list scheduler: at every event the
    queue is ranked by decreasing ``weight[j] * (t - release[j] + 1)``
    (``weight`` = ``max_ewt / ewt`` of the job's queue), ties by increasing
    ``tie[j]`` (duration x nodes), then index; every ranked job that fits
    now (nodes and power) starts, the rest wait for the next event. No
    reservation.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ._federated_core import E_NCL, E_NH, E_NQ, E_QH, E_STARTED, Out, new_state
from ._validate import check_vector, choice_code, prepare
from .federated import (
    MODELS,
    RULES,
    _step_begin,
    _step_drop,
    _step_end,
    _step_init,
    _step_map,
    _step_preempt,
    allocation_ranks,
    bundles,
    check_estimate,
    pick_rank,
    power_inputs,
    run_rows,
)

__all__ = ["DISPATCHERS", "Dispatch", "dispatch", "Stepper", "DriverCore", "driver_core"]

#: Whole-run dispatchers by name, with the kernel's rule code.
DISPATCHERS = {"easy": 1, "prb": 2}


class Dispatch(NamedTuple):
    """What a dispatch returns (arrays indexed like the job arrays)."""

    start: np.ndarray
    finish: np.ndarray
    alloc: np.ndarray
    makespan: float
    energy: float
    flowtime: float
    n_coalloc: int


def _setup(release, tasks, runtime, sigma, bw, nodes, speed, power_busy, power_idle, link,
           power, power_cap, cluster_caps, rule, check, estimate=None):
    arrs = prepare(release, tasks, runtime, sigma, bw, nodes, speed, power_busy, power_idle, link,
                   check)
    J, K = arrs[0].shape[0], arrs[5].shape[0]
    pw, budget = power_inputs(arrs[1], power, arrs[5], arrs[7], arrs[8], power_cap, cluster_caps)
    fastest, greenest, slowest = allocation_ranks(arrs[6], arrs[7])
    pick, consolidate = pick_rank(choice_code("allocation rule", rule, RULES), fastest, greenest)
    fcfs = np.lexsort((np.arange(J), arrs[0])).astype(np.int64)
    return bundles(arrs, pick, fastest, slowest, fcfs, np.zeros((J, K)), pw, budget,
                   check_estimate(estimate, J), consolidate) + (J, K)


def dispatch(release, tasks, runtime, sigma, bw, nodes, speed, power_busy, power_idle, link,
             method: str = "prb", weight=None, tie=None, power=None, power_cap=None,
             cluster_caps=None, model: str = "fluid", rule: str = "fastest",
             check: bool = True, estimate=None) -> Dispatch:
    """Run an online dispatcher over a release-mode workload.

    Parameters
    ----------
    release, tasks, runtime, sigma, bw, nodes, speed, power_busy, power_idle, link
        As in :func:`decoders.federated.decode`.
    method : {"prb", "easy"}
    weight : array_like of float, shape (J,), optional
        PRB's queue weight of each job (``max_ewt / ewt``, > 0); default 1.
    tie : array_like of float, shape (J,), optional
        PRB's tie-break key (smaller first), default ``tasks * runtime``.
    power, power_cap, cluster_caps
        Power factors and caps, as in :func:`decoders.federated.decode`.
    model : {"fluid", "at_start"}
    rule : {"fastest", "greenest", "consolidate"}
        Allocation rule (:data:`decoders.federated.RULES`; the least-power
        allocation takes over where the rule's pick exceeds a budget).
    estimate : array_like of float, shape (J,), optional
        What EASY plans with (its reservation and backfill test; see
        :func:`decoders.federated.decode`); default the run times. PRB plans
        only through ``tie``.

    Returns
    -------
    Dispatch
    """
    mode = choice_code("dispatcher", method, DISPATCHERS)
    code = choice_code("execution model", model, MODELS)
    jobs, plat, order, bl, J, K = _setup(release, tasks, runtime, sigma, bw, nodes, speed,
                                         power_busy, power_idle, link, power, power_cap,
                                         cluster_caps, rule, check, estimate)
    w = np.ones(J) if weight is None else check_vector("weight", weight, J, np.float64, lo=0,
                                                       lo_strict=True)
    tie = jobs.tasks * jobs.runtime if tie is None else check_vector("tie", tie, J, np.float64)
    ties = np.empty((2, J), dtype=np.int64)
    ties[1] = np.lexsort((np.arange(J), tie))
    ties[0, ties[1]] = np.arange(J)
    f, i, _, _, out = run_rows(jobs, plat, order[None], bl[None], code, mode, w, ties)
    return Dispatch(out.start, out.finish, out.alloc, float(f[0, 0]), float(f[0, 1]),
                    float(f[0, 2]), int(i[0, 1]))


class DriverCore(NamedTuple):
    """The loop's bundles for a Numba driver over its steps (:func:`driver_core`)."""

    jobs: tuple
    plat: tuple
    order: np.ndarray
    st: tuple
    out: tuple
    run_w: np.ndarray
    bl_rows: np.ndarray
    bl: np.ndarray


def driver_core(release, tasks, runtime, nodes, speed) -> DriverCore:
    """The loop's state for a driver in Numba (:mod:`decoders.online`, :mod:`decoders.realtime`).

    Jobs without communication on clusters of unit power and no cap, in arrival
    order; ``run_w`` is the writable array that ``jobs.runtime`` and
    ``jobs.est`` view (read only: EASY plans on the run times the driver
    sets), and ``bl`` a read-only view of the writable blacklist
    ``bl_rows``, so that the steps run in the signatures :class:`Stepper`
    compiles.
    """
    J, K = len(release), len(nodes)
    zeros, ones = np.zeros(J), np.ones(K)
    jobs, plat, order, _, _, _ = _setup(release, tasks, runtime, zeros, zeros, nodes, speed, ones,
                                        ones, ones, None, None, None, "fastest", False)
    run_w = np.array(jobs.runtime)
    view = run_w.view()
    view.setflags(write=False)
    bl_rows = np.zeros((J, K))
    bl = bl_rows.view()
    bl.setflags(write=False)
    out = Out(np.full(J, np.nan), np.full(J, np.nan), np.empty((J, K), dtype=np.int64),
              np.empty(J))
    return DriverCore(jobs._replace(runtime=view, est=view), plat, order, new_state(J, K), out, run_w,
                      bl_rows, bl)


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
        (self.jobs, self.plat, order, self.bl, self.J, self.K) = _setup(
            release, tasks, runtime, sigma, bw, nodes, speed, power_busy, power_idle, link, power,
            power_cap, cluster_caps, rule, check)
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
        _step_init(self.jobs, self.plat, self.st, self.out, order)
        self._result = None

    @property
    def done(self) -> bool:
        """True when every job has started or been dropped."""
        return int(self.st.evi[E_STARTED]) == self.J

    def begin(self, t: float) -> float:
        """Release the jobs finishing by ``t`` and queue the arrivals; returns the event time."""
        return float(_step_begin(float(t), self.code, self.jobs, self.plat, self.st, self.out))

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
        return float(_step_map(float(t), self.code, self.jobs, self.plat, self.st, self.out,
                               self.bl, listed, listed.shape[0]))

    def preempt(self, t: float, job: int) -> float:
        """Stop running ``job`` at ``t`` (its nodes, power and link traffic released, its
        allocation cleared) and queue it again at its place; returns its work left, s on a
        speed-1.0 node. Its run time stays what it was until :meth:`set_runtime`."""
        return float(_step_preempt(float(t), self.code, self.jobs, self.plat, self.st,
                                   self.out, int(job)))

    def drop(self, job: int) -> None:
        """Take queued ``job`` out of the queue for good: it never runs (NaN start and
        finish, no allocation) and counts as settled for :attr:`done`."""
        _step_drop(self.jobs, self.st, self.out, int(job))

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
        m, e, fl = _step_end(float(t), self.code, self.jobs, self.plat, self.st, self.out)
        nc = int(np.count_nonzero((self.out.alloc > 0).sum(axis=1) >= 2))
        return Dispatch(self.out.start, self.out.finish, self.out.alloc, float(m), float(e),
                        float(fl), nc)
