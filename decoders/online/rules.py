"""The online heuristics: what each does at a mapping event (Numba, inlined into the loop).

Each ``map_*`` function is called by the event loop (:mod:`decoders.online.loop`)
at time ``t`` with the waiting jobs in ``q.waiting[:q.evi[Q_NW]]`` (arrival
order), after the loop has dropped the jobs that can earn nothing. It places
jobs with :func:`place` (a start at ``t``, or a reservation / place-holder
later, both final) and leaves the rest waiting. The loop then removes the
placed jobs from the queue.

``map_easy``
    EASY backfilling: waiting jobs in arrival order; each starts now on the
    cluster where it completes earliest among those where it can start now;
    the first job that cannot start gets the one reservation, at its earliest
    completion, while no other reservation is pending; later jobs backfill
    around it.
``map_fcfs_multi``
    FCFS with multiple queues: waiting jobs split by nodes needed into small
    (<= ``small``), medium (<= ``medium``) and large queues; rounds take 1
    large, 4 medium and 8 small jobs, in arrival order; each starts now if it
    can, else gets a place-holder at its earliest completion; rounds repeat
    until the queues are empty.
``map_max_max``
    Phase 1: for every waiting job, the choice (cluster, earliest start) that
    earns the most value (``crit`` 1) or value per resource (``crit`` 2,
    ``value / (nodes * execution time)``), ties to the earlier completion;
    phase 2: commit the job whose choice scores best, as a start or a
    place-holder, but never one that would start after the earliest pending
    place-holder (such a job waits for a later mapping event); repeat until
    no job can be mapped.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .._kernels import heap_push
from .._profiles import earliest_fit, job_value, occupy
from ._state import PLACED, Q_NH, Q_NPH, Q_NW, Q_RES_JOB, WAITING

__all__ = ["duration", "best_choice", "fits_now", "place", "map_easy", "map_fcfs_multi", "map_max_max"]


@njit(cache=True, forceinline=True, error_model="numpy", _nrt=False)
def duration(j, k, jobs, plat):
    """Job ``j``'s execution time on cluster ``k``, computed as the core loop computes it
    (run time x slowdown ``1 / speed``), so that planned and simulated ends agree."""
    return jobs.runtime[j] * (1.0 / plat.speed[k])


@njit(cache=True, forceinline=True, error_model="numpy", _nrt=False)
def best_choice(j, t, crit, jobs, plat, prof):
    """Best (cluster, start, finish, value, score, top value) for job ``j`` from time ``t``.

    ``crit``: 0 earliest completion, 1 most value, 2 most value per resource;
    ties go to the earlier completion, then the lower cluster. Cluster -1: no
    cluster can hold the job. ``top value`` is the best value any cluster offers.
    """
    K = plat.nodes.shape[0]
    best_k = -1
    best_s = 0.0
    best_f = np.inf
    best_v = 0.0
    best_score = -np.inf
    top_v = 0.0
    t0 = max(t, jobs.release[j])
    need = jobs.tasks[j]
    for k in range(K):
        if plat.nodes[k] < need:
            continue
        dur = duration(j, k, jobs, plat)
        s = earliest_fit(prof.times[k], prof.free[k], prof.m[k], t0, need, dur)
        f = s + dur
        v = job_value(f, jobs.v_start[j], jobs.v_final[j], jobs.soft[j], jobs.hard[j])
        top_v = max(top_v, v)
        if crit == 0:
            score = -f
        elif crit == 1:
            score = v
        else:
            score = v / (need * dur)
        if score > best_score or (score == best_score and f < best_f):
            best_k, best_s, best_f, best_v, best_score = k, s, f, v, score
    return best_k, best_s, best_f, best_v, best_score, top_v


@njit(cache=True, forceinline=True, error_model="numpy", _nrt=False)
def fits_now(j, t, jobs, plat, prof):
    """Cluster where job ``j`` can start at ``t`` and completes earliest (-1: none)."""
    K = plat.nodes.shape[0]
    best_k = -1
    best_f = np.inf
    for k in range(K):
        if plat.nodes[k] < jobs.tasks[j]:
            continue
        dur = duration(j, k, jobs, plat)
        if (earliest_fit(prof.times[k], prof.free[k], prof.m[k], t, jobs.tasks[j], dur) == t
                and t + dur < best_f):
            best_k, best_f = k, t + dur
    return best_k


@njit(cache=True, forceinline=True, error_model="numpy", _nrt=False)
def place(j, k, s, jobs, plat, prof, out, q):
    """Enter job ``j`` into cluster ``k``'s profile at ``s`` (final) and file its start.

    The loop starts it on the simulation core once time reaches ``s``: now,
    or at the finish that frees its nodes.
    """
    f = s + duration(j, k, jobs, plat)
    prof.m[k] = occupy(prof.times[k], prof.free[k], prof.m[k], s, f, jobs.tasks[j])
    out.start[j] = s
    out.finish[j] = f
    out.cluster[j] = k
    out.value[j] = job_value(f, jobs.v_start[j], jobs.v_final[j], jobs.soft[j], jobs.hard[j])
    out.status[j] = PLACED
    q.evi[Q_NH] = heap_push(q.ht, q.hj, q.evi[Q_NH], s, j)


@njit(cache=True, forceinline=True, error_model="numpy", _nrt=False)
def _hold(j, s, out, q):
    """Record a place-holder (or reservation) of job ``j`` at ``s``."""
    out.reserved[j] = s
    q.phs[q.evi[Q_NPH]] = j
    q.evi[Q_NPH] += 1


@njit(cache=True, forceinline=True, error_model="numpy", _nrt=False)
def map_easy(t, jobs, plat, prof, out, q):
    """EASY backfilling at a mapping event (see the module docstring)."""
    res_job = q.evi[Q_RES_JOB]
    if res_job >= 0 and out.start[res_job] <= t:
        res_job = -1
    for i in range(q.evi[Q_NW]):
        j = q.waiting[i]
        k = fits_now(j, t, jobs, plat, prof)
        if k >= 0:
            place(j, k, t, jobs, plat, prof, out, q)
        elif res_job < 0:
            k, s, f, v, sc, top = best_choice(j, t, 0, jobs, plat, prof)
            place(j, k, s, jobs, plat, prof, out, q)
            out.reserved[j] = s
            res_job = j
    q.evi[Q_RES_JOB] = res_job


@njit(cache=True, forceinline=True, error_model="numpy", _nrt=False)
def map_fcfs_multi(t, jobs, plat, prof, out, q, small, medium):
    """FCFS with small, medium and large queues at a mapping event (see the module docstring)."""
    nw = q.evi[Q_NW]
    left = nw
    while left > 0:
        for level in range(3):
            quota = 1 if level == 0 else (4 if level == 1 else 8)
            for i in range(nw):
                if quota == 0:
                    break
                j = q.waiting[i]
                if out.status[j] != WAITING:
                    continue
                need = jobs.tasks[j]
                size = 2 if need <= small else (1 if need <= medium else 0)
                if size != level:
                    continue
                quota -= 1
                left -= 1
                k = fits_now(j, t, jobs, plat, prof)
                s = t
                if k < 0:
                    k, s, f, v, sc, top = best_choice(j, t, 0, jobs, plat, prof)
                    _hold(j, s, out, q)
                place(j, k, s, jobs, plat, prof, out, q)


@njit(cache=True, forceinline=True, error_model="numpy", _nrt=False)
def map_max_max(t, jobs, plat, prof, out, q, crit):
    """Max-Max Value (``crit`` 1) or Value-per-Resource (``crit`` 2) at a mapping event."""
    nw = q.evi[Q_NW]
    while True:
        ph = np.inf  # earliest pending place-holder
        for i in range(q.evi[Q_NPH]):
            ph = min(ph, out.start[q.phs[i]])
        bj = -1
        bk = -1
        bs = 0.0
        bf = np.inf
        bscore = -np.inf
        for i in range(nw):
            j = q.waiting[i]
            if out.status[j] == PLACED:
                continue
            k, s, f, v, sc, top = best_choice(j, t, crit, jobs, plat, prof)
            if k < 0 or v <= 0.0 or s > ph:
                continue
            if sc > bscore or (sc == bscore and f < bf):
                bj, bk, bs, bf, bscore = j, k, s, f, sc
        if bj < 0:
            break
        place(bj, bk, bs, jobs, plat, prof, out, q)
        if bs > t:
            _hold(bj, bs, out, q)
