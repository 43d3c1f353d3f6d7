"""The online heuristics on the simulation core, and the public wrapper :func:`simulate`.

The jobs run on the core's event loop (:mod:`decoders.federated`, the loop
of every federated decode and dispatcher): it releases the finishing jobs,
queues the arrivals, starts jobs where they are told to and says when the
next finish or arrival is. The heuristics plan on availability profiles of
their own, one per cluster, where every start and place-holder they decide
is final. At each event at ``t`` the driver (1) lets the core release the
jobs finishing by ``t`` and queue the arrivals, (2) queues the arrivals for
the heuristic, (3) retires the place-holders whose start has come, (4)
trims the profiles' past, (5) drops the waiting jobs that cannot earn
anything any more, even at their best slot (the core takes them out of its
queue: :func:`decoders.steps.drop`), then (6) lets the heuristic
map jobs (:mod:`decoders.online.rules`), (7) keeps the unplaced jobs
waiting, and (8) starts on the core, each on its cluster alone, every job
whose planned start has come: those mapped now and the place-holders
whose time is here (a place-holder starts at a finish, which frees its
nodes). Time then moves to the core's next finish or arrival.

Execution times are the core's (run time x slowdown ``1 / speed``, jobs on
one cluster, no communication), computed the same way in the plans, so
planned and simulated ends agree. Finishes within the core's relative
tolerance count as one event, as in every other simulation: the core ends
them together at the earliest, and the plans free those nodes then too; a
planned start due within the tolerance of the event is made at the event,
and the plans move it there.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from .. import steps
from .._federated_core import E_STARTED
from .._kernels import FINISH_RTOL, heap_pop, heap_push
from .._profiles import init_profiles, job_value, new_profiles, occupy, trim_before
from .._validate import choice_code
from ..value import value_bundles
from ._state import (
    DROPPED,
    PLACED,
    Q_ARRIVED,
    Q_NF,
    Q_NH,
    Q_NPH,
    Q_NW,
    Q_RES_JOB,
    WAITING,
    ProfileOut,
    ValueQueues,
)
from .rules import best_choice, duration, map_easy, map_fcfs_multi, map_max_max

__all__ = ["RULE_CODES", "OnlineResult", "simulate"]

#: The rules of the online kernel by name, with the integer code the kernel uses (the
#: catalogue of named heuristics is :data:`moga.value.ONLINE_HEURISTICS`).
RULE_CODES = {"easy": 0, "fcfs-multi": 1, "max-max-value": 2, "max-max-vpr": 3}


class OnlineResult(NamedTuple):
    """What a simulation returns (arrays indexed like the job arrays)."""

    start: np.ndarray
    finish: np.ndarray
    cluster: np.ndarray
    value: np.ndarray
    reserved: np.ndarray
    total_value: float
    n_run: int
    n_dropped: int
    n_events: int


@njit(cache=True, forceinline=True, error_model="numpy", _nrt=False)
def _init(jobs, plat, prof, out, q):
    J = jobs.release.shape[0]
    init_profiles(prof.times, prof.free, prof.m, plat.nodes)
    for j in range(J):
        out.status[j] = 0
        out.reserved[j] = np.nan
        out.start[j] = np.nan
        out.finish[j] = np.nan
        out.cluster[j] = -1
        out.value[j] = 0.0
    for i in range(q.evi.shape[0]):
        q.evi[i] = 0
    q.evi[Q_RES_JOB] = -1


@njit(cache=True, forceinline=True, error_model="numpy", _nrt=False)
def _advance(t, jobs, plat, prof, out, q, dropped):
    """Steps 2-5 of an event at ``t``; the jobs dropped go to ``dropped``, their count is
    returned."""
    J = jobs.release.shape[0]
    K = plat.nodes.shape[0]
    nw = q.evi[Q_NW]
    arrived = q.evi[Q_ARRIVED]
    while arrived < J and jobs.release[q.by_release[arrived]] <= t:
        j = q.by_release[arrived]
        q.waiting[nw] = j
        out.status[j] = WAITING
        nw += 1
        arrived += 1
    q.evi[Q_ARRIVED] = arrived
    kept = 0
    due = t + FINISH_RTOL * abs(t)  # the core's "now": what it starts at t
    for i in range(q.evi[Q_NPH]):
        if out.start[q.phs[i]] > due:
            q.phs[kept] = q.phs[i]
            kept += 1
    q.evi[Q_NPH] = kept
    # Decisions from now on start at t or later: forget the past of the profiles.
    for k in range(K):
        prof.m[k] = trim_before(prof.times[k], prof.free[k], prof.m[k], t)
    n_dropped = 0
    kept = 0
    for i in range(nw):
        j = q.waiting[i]
        top = best_choice(j, t, 1, jobs, plat, prof)[5]
        if top > 0.0:
            q.waiting[kept] = j
            kept += 1
        else:
            out.status[j] = DROPPED
            dropped[n_dropped] = j
            n_dropped += 1
    q.evi[Q_NW] = kept
    return n_dropped


@njit(cache=True, error_model="numpy", _nrt=False)
def _simulate(core, listed, jobs, plat, prof, out, q, heuristic, small, medium):
    """Run the simulation; returns ``(total value, jobs run, jobs dropped, mapping events,
    planned starts the core refused)``.

    ``core`` (:class:`decoders.steps.DriverCore`): the core's bundles
    (:mod:`decoders._federated_core`) of the same jobs and clusters, with
    ``bl_rows`` (J, K) the blacklist rows that confine a job to its cluster,
    written here, and ``bl`` a read-only view of them, what the core's steps
    read (so they run in the signature the Python seam compiles);
    ``listed`` (J,) work space. The last count is 0 unless plans and core
    disagree.
    """
    cjobs, cplat, st, cout, bl_rows, bl = core.jobs, core.plat, core.st, core.out, core.bl_rows, core.bl
    J = jobs.release.shape[0]
    K = plat.nodes.shape[0]
    _init(jobs, plat, prof, out, q)
    steps.init(cjobs, cplat, st, cout, q.by_release)
    n_events = 0
    n_dropped = 0
    refused = 0
    t = jobs.release[q.by_release[0]] if J > 0 else 0.0
    while J > 0:
        n_events += 1
        t = steps.begin(t, 0, cjobs, cplat, st, cout)
        # The core ends together the jobs whose finishes agree to its tolerance, at the
        # earliest of them: free their nodes in the plans from then on too.
        nf = q.evi[Q_NF]
        while nf > 0 and not np.isnan(cout.finish[q.fj[0]]):
            j = q.fj[0]
            f = q.ft[0]
            nf = heap_pop(q.ft, q.fj, nf)
            if f > cout.finish[j]:
                k = out.cluster[j]
                prof.m[k] = occupy(prof.times[k], prof.free[k], prof.m[k], cout.finish[j], f,
                                   -jobs.tasks[j])
        q.evi[Q_NF] = nf
        n = _advance(t, jobs, plat, prof, out, q, listed)
        for i in range(n):
            steps.drop(cjobs, st, cout, listed[i])
        n_dropped += n
        if heuristic == 0:
            map_easy(t, jobs, plat, prof, out, q)
        elif heuristic == 1:
            map_fcfs_multi(t, jobs, plat, prof, out, q, small, medium)
        else:
            map_max_max(t, jobs, plat, prof, out, q, 1 if heuristic == 2 else 2)
        # Keep the jobs still waiting (placed ones leave the queue).
        kept = 0
        for i in range(q.evi[Q_NW]):
            if out.status[q.waiting[i]] != PLACED:
                q.waiting[kept] = q.waiting[i]
                kept += 1
        q.evi[Q_NW] = kept
        # Start on the core every job whose planned start has come, on its cluster alone.
        n = 0
        due = t + FINISH_RTOL * abs(t)
        nh = q.evi[Q_NH]
        while nh > 0 and q.ht[0] <= due:
            j = q.hj[0]
            nh = heap_pop(q.ht, q.hj, nh)
            for k in range(K):
                bl_rows[j, k] = 0.0 if k == out.cluster[j] else 1.0
            listed[n] = j
            n += 1
        q.evi[Q_NH] = nh
        nxt = steps.map(t, 0, cjobs, cplat, st, cout, bl, listed, n)
        nf = q.evi[Q_NF]
        for i in range(n):
            j = listed[i]
            if st.queue.started[j] == 0:
                refused += 1
                continue
            if t < out.start[j]:
                # A place-holder due within the tolerance starts now: its nodes are taken,
                # in the plans too, from now to its finish on the core.
                k = out.cluster[j]
                f = t + duration(j, k, jobs, plat)
                prof.m[k] = occupy(prof.times[k], prof.free[k], prof.m[k], t, out.start[j],
                                   jobs.tasks[j])
                prof.m[k] = occupy(prof.times[k], prof.free[k], prof.m[k], f, out.finish[j],
                                   -jobs.tasks[j])
                out.start[j] = t
                out.finish[j] = f
            nf = heap_push(q.ft, q.fj, nf, out.finish[j], j)
        q.evi[Q_NF] = nf
        if st.evi[E_STARTED] == J and nxt == np.inf:
            break
        if nxt == np.inf:  # cannot happen: a planned start comes at a finish
            refused += J - st.evi[E_STARTED]
            break
        t = max(t, nxt)
    steps.end(t, 0, cjobs, cplat, st, cout)
    for i in range(q.evi[Q_NW]):
        out.status[q.waiting[i]] = DROPPED  # cannot happen: an idle federation takes every job
    total = 0.0
    n_run = 0
    for j in range(J):
        if out.status[j] == PLACED:
            # The record is the core's: its start and finish, the value earned at that finish.
            out.start[j] = cout.start[j]
            out.finish[j] = cout.finish[j]
            out.value[j] = job_value(cout.finish[j], jobs.v_start[j], jobs.v_final[j],
                                     jobs.soft[j], jobs.hard[j])
            total += out.value[j]
            n_run += 1
    return total, n_run, n_dropped, n_events, refused


def simulate(release, tasks, runtime, v_start, v_final, soft, hard, nodes, speed,
             heuristic: str = "easy", small: int = 16, medium: int = 256) -> OnlineResult:
    """Simulate an online heuristic on a value-function workload.

    Parameters
    ----------
    release, tasks, runtime, v_start, v_final, soft, hard : array_like, shape (J,)
        As in :func:`decoders.value.decode_value`.
    nodes, speed : array_like, shape (K,)
    heuristic : {"easy", "fcfs-multi", "max-max-value", "max-max-vpr"}
    small, medium : int
        Queue thresholds of ``"fcfs-multi"`` (nodes needed): small <= ``small``,
        medium <= ``medium``, large above.

    Returns
    -------
    OnlineResult
        Per job ``start``, ``finish`` (NaN if dropped), ``cluster`` (-1),
        ``value`` earned and ``reserved`` (the place-holder or reservation
        start, NaN if the job started when first mapped); ``total_value``,
        ``n_run``, ``n_dropped`` and ``n_events`` (mapping events).
    """
    code = choice_code("online heuristic", heuristic, RULE_CODES)
    if not 0 < small <= medium:
        raise ValueError(f"queue thresholds must satisfy 0 < small <= medium, got {small}, {medium}")
    jobs, plat = value_bundles(release, tasks, runtime, v_start, v_final, soft, hard, nodes, speed)
    J, K = jobs.release.shape[0], plat.nodes.shape[0]
    # The core's bundles; its order is the arrival order (ties by index).
    c = steps.driver_core(jobs.release, jobs.tasks, jobs.runtime, plat.nodes, plat.speed)
    # Two breakpoints per placement, two where a place-holder starts early, two where the core
    # ends a job early.
    prof = new_profiles(K, 6 * J + 1)
    out = ProfileOut(start=np.empty(J), finish=np.empty(J), cluster=np.empty(J, dtype=np.int64),
                     value=np.empty(J), reserved=np.empty(J), status=np.empty(J, dtype=np.int64))
    q = ValueQueues(by_release=c.order, waiting=np.empty(J, dtype=np.int64),
               phs=np.empty(J, dtype=np.int64), ht=np.empty(J), hj=np.empty(J, dtype=np.int64),
               ft=np.empty(J), fj=np.empty(J, dtype=np.int64), evi=np.empty(6, dtype=np.int64))
    tot, n_run, n_drop, n_ev, refused = _simulate(c, np.empty(J, dtype=np.int64), jobs, plat,
                                                  prof, out, q, code, int(small), int(medium))
    if refused:
        raise RuntimeError(f"the simulation core refused {refused} planned start(s); plans and "
                           "core disagree (please report this with the workload)")
    return OnlineResult(out.start, out.finish, out.cluster, out.value, out.reserved, float(tot),
                        int(n_run), int(n_drop), int(n_ev))
