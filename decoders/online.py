"""Event-driven online simulator for value-function workloads (docs/design.md §6).

Jobs arrive over time; a job runs inside one cluster for ``runtime / speed_k``,
without preemption, and earns its value function at completion. Mapping
events happen when a job arrives or a running job completes (nodes become
free). At a mapping event a heuristic maps waiting jobs: it starts those that
can start now and may hold reservations (place-holders) for later. Run times
are exact, so every start and place-holder, once made, is final: they are
entered into per-cluster availability profiles, and later decisions only use
what the profiles leave free, so they never delay a start or a place-holder.
Counts of free nodes are enough: nodes within a cluster are identical, and a
count profile that never exceeds a cluster's size always has a node
assignment (lowest free node first), so node packing costs nothing here.

A waiting job that cannot earn any value any more (even started at its
earliest possible slot) is dropped, by every heuristic.

Heuristics (``HEURISTICS``):

``"easy"``
    EASY backfilling: waiting jobs in arrival order; each starts now on the
    cluster where it completes earliest among those where it can start now;
    the first job that cannot start gets the one reservation, at its earliest
    completion, while no other reservation is pending; later jobs backfill
    around it.
``"fcfs-multi"``
    FCFS with multiple queues: waiting jobs split by nodes needed into small
    (<= ``small``), medium (<= ``medium``) and large queues; rounds take 1
    large, 4 medium and 8 small jobs, in arrival order; each starts now if it
    can, else gets a place-holder at its earliest completion; rounds repeat
    until the queues are empty.
``"max-max-value"``
    Phase 1: for every waiting job, the choice (cluster, earliest start) that
    earns the most value (ties: earlier completion); phase 2: commit the job
    whose choice earns the most, as a start or a place-holder, but never one
    that would start after the earliest pending place-holder (such a job
    waits for a later mapping event); repeat until no job can be mapped.
``"max-max-vpr"``
    The same with value per resource, ``value / (nodes * execution time)``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from ._kernels import heap_pop, heap_push
from ._profiles import earliest_fit, init_profiles, job_value, occupy, trim_before
from ._validate import choice_code, readonly
from .value import _prepare_value

__all__ = ["HEURISTICS", "OnlineResult", "simulate"]

#: Online heuristics by name, with the integer code the kernel uses.
HEURISTICS = {"easy": 0, "fcfs-multi": 1, "max-max-value": 2, "max-max-vpr": 3}

_WAITING, _PLACED, _DROPPED = 1, 2, 3


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


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _best_choice(j, t, crit, release, tasks, runtime, v_start, v_final, soft, hard, nodes, speed,
                 times, free, m):
    """Best (cluster, start, finish, value, score) for job ``j`` from time ``t``.

    ``crit``: 0 earliest completion, 1 most value, 2 most value per resource;
    ties go to the earlier completion, then the lower cluster. Cluster -1: no
    cluster can hold the job. ``value`` is the best value any cluster offers.
    """
    K = nodes.shape[0]
    best_k = -1
    best_s = 0.0
    best_f = np.inf
    best_v = 0.0
    best_score = -np.inf
    top_v = 0.0
    t0 = max(t, release[j])
    for k in range(K):
        if nodes[k] < tasks[j]:
            continue
        dur = runtime[j] / speed[k]
        s = earliest_fit(times[k], free[k], m[k], t0, tasks[j], dur)
        f = s + dur
        v = job_value(f, v_start[j], v_final[j], soft[j], hard[j])
        top_v = max(top_v, v)
        if crit == 0:
            score = -f
        elif crit == 1:
            score = v
        else:
            score = v / (tasks[j] * dur)
        if score > best_score or (score == best_score and f < best_f):
            best_k, best_s, best_f, best_v, best_score = k, s, f, v, score
    return best_k, best_s, best_f, best_v, best_score, top_v


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _fits_now(j, t, tasks, runtime, nodes, speed, times, free, m):
    """Cluster where job ``j`` can start at ``t`` and completes earliest (-1: none)."""
    K = nodes.shape[0]
    best_k = -1
    best_f = np.inf
    for k in range(K):
        if nodes[k] < tasks[j]:
            continue
        dur = runtime[j] / speed[k]
        if earliest_fit(times[k], free[k], m[k], t, tasks[j], dur) == t and t + dur < best_f:
            best_k, best_f = k, t + dur
    return best_k


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _place(j, k, s, runtime, tasks, v_start, v_final, soft, hard, speed, times, free, m,
           start, finish, cluster, value, status, ht, hj, nh):
    """Enter job ``j`` into cluster ``k``'s profile at ``s``; returns the event heap size."""
    f = s + runtime[j] / speed[k]
    m[k] = occupy(times[k], free[k], m[k], s, f, tasks[j])
    start[j] = s
    finish[j] = f
    cluster[j] = k
    value[j] = job_value(f, v_start[j], v_final[j], soft[j], hard[j])
    status[j] = _PLACED
    return heap_push(ht, hj, nh, f, j)


@njit(cache=True, error_model="numpy", _nrt=False)
def _simulate(release, tasks, runtime, v_start, v_final, soft, hard, nodes, speed, by_release,
              heuristic, small, medium, start, finish, cluster, value, reserved, status, waiting,
              phs, times, free, m, ht, hj):
    """Run the simulation; returns ``(total value, jobs run, jobs dropped, mapping events)``."""
    J = release.shape[0]
    K = nodes.shape[0]
    init_profiles(times, free, m, nodes)
    for j in range(J):
        status[j] = 0
        reserved[j] = np.nan
        start[j] = np.nan
        finish[j] = np.nan
        cluster[j] = -1
        value[j] = 0.0
    nh = 0
    nw = 0
    n_arrived = 0
    n_events = 0
    n_dropped = 0
    res_job = -1  # EASY's pending reservation
    nph = 0  # pending place-holders: phs[:nph]
    t = release[by_release[0]] if J > 0 else 0.0
    while True:
        # Completions up to t free nodes (the profiles already know): only the event matters.
        while nh > 0 and ht[0] <= t:
            nh = heap_pop(ht, hj, nh)
        while n_arrived < J and release[by_release[n_arrived]] <= t:
            waiting[nw] = by_release[n_arrived]
            status[waiting[nw]] = _WAITING
            nw += 1
            n_arrived += 1
        # Place-holders whose start has come are running now.
        kept = 0
        for i in range(nph):
            if start[phs[i]] > t:
                phs[kept] = phs[i]
                kept += 1
        nph = kept
        n_events += 1
        # Decisions from now on start at t or later: forget the past of the profiles.
        for k in range(K):
            m[k] = trim_before(times[k], free[k], m[k], t)
        # Drop the jobs that cannot earn anything any more.
        kept = 0
        for i in range(nw):
            j = waiting[i]
            _, _, _, _, _, top = _best_choice(j, t, 1, release, tasks, runtime, v_start, v_final,
                                              soft, hard, nodes, speed, times, free, m)
            if top > 0.0:
                waiting[kept] = j
                kept += 1
            else:
                status[j] = _DROPPED
                n_dropped += 1
        nw = kept

        if heuristic == 0:  # EASY backfilling
            if res_job >= 0 and start[res_job] <= t:
                res_job = -1
            for i in range(nw):
                j = waiting[i]
                k = _fits_now(j, t, tasks, runtime, nodes, speed, times, free, m)
                if k >= 0:
                    nh = _place(j, k, t, runtime, tasks, v_start, v_final, soft, hard, speed,
                                times, free, m, start, finish, cluster, value, status, ht, hj, nh)
                elif res_job < 0:
                    k, s, f, v, sc, top = _best_choice(j, t, 0, release, tasks, runtime, v_start,
                                                       v_final, soft, hard, nodes, speed, times,
                                                       free, m)
                    nh = _place(j, k, s, runtime, tasks, v_start, v_final, soft, hard, speed,
                                times, free, m, start, finish, cluster, value, status, ht, hj, nh)
                    reserved[j] = s
                    res_job = j
        elif heuristic == 1:  # FCFS with multiple queues
            left = nw
            while left > 0:
                for q in range(3):
                    quota = 1 if q == 0 else (4 if q == 1 else 8)
                    for i in range(nw):
                        if quota == 0:
                            break
                        j = waiting[i]
                        if status[j] != _WAITING:
                            continue
                        size = 2 if tasks[j] <= small else (1 if tasks[j] <= medium else 0)
                        if size != q:
                            continue
                        quota -= 1
                        left -= 1
                        k = _fits_now(j, t, tasks, runtime, nodes, speed, times, free, m)
                        s = t
                        if k < 0:
                            k, s, f, v, sc, top = _best_choice(j, t, 0, release, tasks, runtime,
                                                               v_start, v_final, soft, hard,
                                                               nodes, speed, times, free, m)
                            reserved[j] = s
                            phs[nph] = j
                            nph += 1
                        nh = _place(j, k, s, runtime, tasks, v_start, v_final, soft, hard, speed,
                                    times, free, m, start, finish, cluster, value, status, ht,
                                    hj, nh)
        else:  # Max-Max Value (2) or Max-Max Value-per-Resource (3)
            crit = 1 if heuristic == 2 else 2
            while True:
                ph = np.inf  # earliest pending place-holder
                for i in range(nph):
                    ph = min(ph, start[phs[i]])
                bj = -1
                bk = -1
                bs = 0.0
                bf = np.inf
                bscore = -np.inf
                for i in range(nw):
                    j = waiting[i]
                    if status[j] == _PLACED:
                        continue
                    k, s, f, v, sc, top = _best_choice(j, t, crit, release, tasks, runtime,
                                                       v_start, v_final, soft, hard, nodes, speed,
                                                       times, free, m)
                    if k < 0 or v <= 0.0 or s > ph:
                        continue
                    if sc > bscore or (sc == bscore and f < bf):
                        bj, bk, bs, bf, bscore = j, k, s, f, sc
                if bj < 0:
                    break
                nh = _place(bj, bk, bs, runtime, tasks, v_start, v_final, soft, hard, speed,
                            times, free, m, start, finish, cluster, value, status, ht, hj, nh)
                if bs > t:
                    reserved[bj] = bs
                    phs[nph] = bj
                    nph += 1
        # Keep the jobs still waiting (placed ones leave the queue).
        kept = 0
        for i in range(nw):
            if status[waiting[i]] != _PLACED:
                waiting[kept] = waiting[i]
                kept += 1
        nw = kept
        # Next mapping event: an arrival or a completion.
        nxt = np.inf
        if n_arrived < J:
            nxt = release[by_release[n_arrived]]
        if nh > 0:
            nxt = min(nxt, ht[0])
        if nxt == np.inf:
            break
        t = max(t, nxt)
    for j in range(nw):
        status[waiting[j]] = _DROPPED  # cannot happen: an idle federation takes every waiting job
    total = 0.0
    n_run = 0
    for j in range(J):
        if status[j] == _PLACED:
            total += value[j]
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
    arrs = readonly(*arrs, by_release)
    start, finish, value, reserved = np.empty(J), np.empty(J), np.empty(J), np.empty(J)
    cluster = np.empty(J, dtype=np.int64)
    status = np.empty(J, dtype=np.int64)
    waiting = np.empty(J, dtype=np.int64)
    phs = np.empty(J, dtype=np.int64)
    times = np.empty((K, 2 * J + 1))
    free = np.empty((K, 2 * J + 1), dtype=np.int64)
    m = np.empty(K, dtype=np.int64)
    ht, hj = np.empty(J), np.empty(J, dtype=np.int64)
    tot, n_run, n_drop, n_ev = _simulate(*arrs, code, int(small), int(medium), start, finish,
                                         cluster, value, reserved, status, waiting, phs, times,
                                         free, m, ht, hj)
    return OnlineResult(start, finish, cluster, value, reserved, float(tot), int(n_run),
                        int(n_drop), int(n_ev))
