"""The online simulator's event loop and its public wrapper :func:`simulate`.

Mapping events happen when a job arrives or a running job completes. At each
event the loop (1) forgets the completions up to now (the profiles already
free their nodes), (2) queues the arrivals, (3) retires the place-holders
whose start has come, (4) trims the profiles' past, (5) drops the waiting
jobs that cannot earn anything any more, even at their best slot, then (6)
lets the heuristic map jobs (:mod:`decoders.online.rules`) and (7) keeps the
unplaced jobs waiting. Time then moves to the next arrival or completion.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from .._kernels import heap_pop
from .._profiles import init_profiles, trim_before
from .._validate import choice_code, readonly
from ..value import _prepare_value
from ._state import (
    DROPPED,
    PLACED,
    Q_ARRIVED,
    Q_NH,
    Q_NPH,
    Q_NW,
    Q_RES_JOB,
    WAITING,
    Jobs,
    Out,
    Platform,
    Profiles,
    Queues,
)
from .rules import best_choice, map_easy, map_fcfs_multi, map_max_max

__all__ = ["HEURISTICS", "OnlineResult", "simulate"]

#: Online heuristics by their simulator code, with the integer the kernel uses.
HEURISTICS = {"easy": 0, "fcfs-multi": 1, "max-max-value": 2, "max-max-vpr": 3}


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
def _advance(t, jobs, plat, prof, out, q):
    """Steps 1-5 of an event at ``t``; returns the jobs dropped."""
    J = jobs.release.shape[0]
    K = plat.nodes.shape[0]
    nh = q.evi[Q_NH]
    while nh > 0 and q.ht[0] <= t:
        nh = heap_pop(q.ht, q.hj, nh)
    q.evi[Q_NH] = nh
    nw = q.evi[Q_NW]
    arrived = q.evi[Q_ARRIVED]
    while arrived < J and jobs.release[jobs.by_release[arrived]] <= t:
        j = jobs.by_release[arrived]
        q.waiting[nw] = j
        out.status[j] = WAITING
        nw += 1
        arrived += 1
    q.evi[Q_ARRIVED] = arrived
    kept = 0
    for i in range(q.evi[Q_NPH]):
        if out.start[q.phs[i]] > t:
            q.phs[kept] = q.phs[i]
            kept += 1
    q.evi[Q_NPH] = kept
    # Decisions from now on start at t or later: forget the past of the profiles.
    for k in range(K):
        prof.m[k] = trim_before(prof.times[k], prof.free[k], prof.m[k], t)
    dropped = 0
    kept = 0
    for i in range(nw):
        j = q.waiting[i]
        top = best_choice(j, t, 1, jobs, plat, prof)[5]
        if top > 0.0:
            q.waiting[kept] = j
            kept += 1
        else:
            out.status[j] = DROPPED
            dropped += 1
    q.evi[Q_NW] = kept
    return dropped


@njit(cache=True, error_model="numpy", _nrt=False)
def _simulate(jobs, plat, prof, out, q, heuristic, small, medium):
    """Run the simulation; returns ``(total value, jobs run, jobs dropped, mapping events)``."""
    J = jobs.release.shape[0]
    _init(jobs, plat, prof, out, q)
    n_events = 0
    n_dropped = 0
    t = jobs.release[jobs.by_release[0]] if J > 0 else 0.0
    while True:
        n_events += 1
        n_dropped += _advance(t, jobs, plat, prof, out, q)
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
        # Next mapping event: an arrival or a completion.
        nxt = np.inf
        if q.evi[Q_ARRIVED] < J:
            nxt = jobs.release[jobs.by_release[q.evi[Q_ARRIVED]]]
        if q.evi[Q_NH] > 0:
            nxt = min(nxt, q.ht[0])
        if nxt == np.inf:
            break
        t = max(t, nxt)
    for i in range(q.evi[Q_NW]):
        out.status[q.waiting[i]] = DROPPED  # cannot happen: an idle federation takes every job
    total = 0.0
    n_run = 0
    for j in range(J):
        if out.status[j] == PLACED:
            total += out.value[j]
            n_run += 1
    return total, n_run, n_dropped, n_events


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
    code = choice_code("online heuristic", heuristic, HEURISTICS)
    if not 0 < small <= medium:
        raise ValueError(f"queue thresholds must satisfy 0 < small <= medium, got {small}, {medium}")
    arrs = _prepare_value(release, tasks, runtime, v_start, v_final, soft, hard, nodes, speed)
    J, K = arrs[0].shape[0], arrs[7].shape[0]
    by_release = np.lexsort((np.arange(J), arrs[0])).astype(np.int64)
    a = readonly(*arrs, by_release)
    jobs = Jobs(*a[0:7], a[9])
    plat = Platform(a[7], a[8])
    prof = Profiles(np.empty((K, 2 * J + 1)), np.empty((K, 2 * J + 1), dtype=np.int64),
                    np.empty(K, dtype=np.int64))
    out = Out(np.empty(J), np.empty(J), np.empty(J, dtype=np.int64), np.empty(J), np.empty(J),
              np.empty(J, dtype=np.int64))
    q = Queues(np.empty(J, dtype=np.int64), np.empty(J, dtype=np.int64), np.empty(J),
               np.empty(J, dtype=np.int64), np.empty(5, dtype=np.int64))
    tot, n_run, n_drop, n_ev = _simulate(jobs, plat, prof, out, q, code, int(small), int(medium))
    return OnlineResult(out.start, out.finish, out.cluster, out.value, out.reserved, float(tot),
                        int(n_run), int(n_drop), int(n_ev))
