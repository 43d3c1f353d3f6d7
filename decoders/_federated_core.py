"""Inline Numba helpers shared by the federated kernels (in-order and EASY).

They operate on the decoder state: per-job arrays (``fin`` projected finish,
``sd`` slowdown, ``coal`` co-allocation flag), per-cluster arrays (``free``
nodes, ``load`` link traffic), the event heap ``(ht, hj, nh)`` of running jobs
with fixed finish times and, in the fluid model, the list ``cl[:ncl]`` of
running co-allocated jobs whose rates change (earliest finish ``cl_min``).
Scalars of the state travel in and out as arguments and return values.
Everything is inlined into the kernels, which run without reference counting.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._kernels import FINISH_RTOL, heap_pop, heap_push, link_traffic, slowdown


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def refresh_rates(t, cl, ncl, fin, sd, sigma, bw, tasks, alloc, speed, load, link):
    """Fluid model: re-rate the running co-allocated jobs ``cl[:ncl]`` at time ``t``.

    Returns the earliest of their new finish times (inf when none runs).
    """
    earliest = np.inf
    for i in range(ncl):
        r = cl[i]
        new = slowdown(sigma[r], bw[r], tasks[r], alloc, r, speed, load, link, False)
        if new != sd[r]:
            fin[r] = t + (fin[r] - t) / sd[r] * new
            sd[r] = new
        earliest = min(earliest, fin[r])
    return earliest


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def saturated_links(load, link):
    """True when some link carries more than its bandwidth (``U_k > 1``).

    While no link is saturated every ``SC`` is 1, so load changes leave all
    rates as they are and the fluid model need not re-rate anything.
    """
    for k in range(load.shape[0]):
        if load[k] > link[k]:
            return True
    return False


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def earliest(cl, ncl, fin):
    """Earliest finish time among the jobs ``cl[:ncl]`` (inf when none)."""
    f = np.inf
    for i in range(ncl):
        f = min(f, fin[cl[i]])
    return f


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def allocate(j, tasks, sigma, bw, allow, free, speed, load, link, rank_pick, rank_fast,
             rank_slow, alloc):
    """Greedy pick in ``rank_pick`` order, then energy-saving shifts (docs/design.md §5, steps 3-4).

    Writes the allocation into ``alloc[j]``; ``allow`` holds the allowance per
    cluster. ``rank_pick`` is the allocation rule: fastest clusters first
    (the MOGA decoder) or greenest first (least energy per unit of work).
    Shifts move one task at a time from the fastest used cluster faster than
    the slowest used speed ``s`` (ties: the order of ``rank_fast``) to the
    slowest cluster slower than it with speed >= ``s`` and a free allowed node
    (ties: lower ``power_busy / speed``, then lower index), while the predicted
    slowdown does not grow. A move changes only the source's and the
    destination's link traffic (``s`` and so ``SP`` stay fixed), so each move
    is priced in O(1) against the fixed utilisation of the job's other clusters.
    """
    K = alloc.shape[1]
    T = tasks[j]
    remaining = T
    used = 0
    s = np.inf
    for i in range(K):
        k = rank_pick[i]
        take = min(min(free[k], allow[k]), remaining)
        alloc[j, k] = take
        remaining -= take
        if take > 0:
            used += 1
            s = min(s, speed[k])
    if used < 2:
        return
    sig = sigma[j]
    b = bw[j]
    sd_cur = slowdown(sig, b, T, alloc, j, speed, load, link, True)
    sp = 1.0 / s
    while True:
        src = -1
        for i in range(K):
            k = rank_fast[i]
            if alloc[j, k] > 0 and speed[k] > s:
                src = k
                break
        if src < 0:
            return
        dst = -1
        for i in range(K):
            k = rank_slow[i]
            if speed[k] < speed[src] and speed[k] >= s and alloc[j, k] < min(free[k], allow[k]):
                dst = k
                break
        if dst < 0:
            return
        cap_dst = min(free[dst], allow[dst])
        u_other = 1.0
        for k in range(K):
            if alloc[j, k] > 0 and k != src and k != dst:
                u_other = max(u_other, (load[k] + link_traffic(b, T, alloc[j, k])) / link[k])
        xs = alloc[j, src]
        xd = alloc[j, dst]
        while xs > 0 and xd < cap_dst:
            n_used = used - (1 if xs == 1 else 0) + (1 if xd == 0 else 0)
            sc = 1.0
            if n_used >= 2:
                sc = max(u_other, (load[dst] + link_traffic(b, T, xd + 1)) / link[dst])
                if xs > 1:
                    sc = max(sc, (load[src] + link_traffic(b, T, xs - 1)) / link[src])
            sd_new = (1.0 - sig) * sp + sig * sc
            if sd_new > sd_cur:
                break
            xs -= 1
            xd += 1
            used = n_used
            sd_cur = sd_new
        moved_all = xs == 0 or xd == cap_dst
        alloc[j, src] = xs
        alloc[j, dst] = xd
        if not moved_all:
            return


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def allowance(j, blacklist, nodes, tasks, allow):
    """Fill ``allow`` with job ``j``'s allowance ``N_k - floor(beta_jk N_k)``.

    Returns True when the allowance cannot hold the job: the blacklist is then
    void (``allow = N``) and the caller counts it as relaxed.
    """
    K = nodes.shape[0]
    total = 0
    for k in range(K):
        allow[k] = nodes[k] - np.int64(np.floor(blacklist[j, k] * nodes[k]))
        total += allow[k]
    if total < tasks[j]:
        for k in range(K):
            allow[k] = nodes[k]
        return True
    return False


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def fits(n, free, allow):
    """True when ``n`` tasks fit in the free nodes the allowance ``allow`` admits."""
    avail = 0
    for k in range(free.shape[0]):
        avail += min(free[k], allow[k])
    return avail >= n


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def next_finish(ht, nh, cl_min):
    """Earliest projected finish among running jobs (inf when none runs)."""
    return min(ht[0], cl_min) if nh > 0 else cl_min


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def release_due(horizon, t, fluid, ht, hj, nh, cl, ncl, cl_min, n_coal_run, saturated, fin, sd,
                coal, finish, alloc, free, load, sigma, bw, tasks, speed, link):
    """Release every job finishing by ``horizon``, one group of equal finishes at a time.

    Jobs whose finish times agree to ``FINISH_RTOL`` finish together at the
    earliest of them; their nodes and link traffic are released at once, then
    (fluid model, some link saturated) the co-allocated jobs still running are
    re-rated. Returns the updated ``(t, nh, ncl, cl_min, n_coal_run, saturated)``.
    """
    K = free.shape[0]
    while nh + ncl > 0:
        f = next_finish(ht, nh, cl_min)
        if f > horizon:
            break
        thr = f + FINISH_RTOL * abs(f)
        any_coal = False
        i = 0
        while True:
            if nh > 0 and ht[0] <= thr:
                r = hj[0]
                nh = heap_pop(ht, hj, nh)
            elif i < ncl and cl_min <= thr:
                r = cl[i]
                if fin[r] > thr:
                    i += 1
                    continue
                ncl -= 1
                cl[i] = cl[ncl]
            else:
                break
            finish[r] = f
            for k in range(K):
                free[k] += alloc[r, k]
            if coal[r] != 0:
                any_coal = True
                n_coal_run -= 1
                for k in range(K):
                    load[k] -= link_traffic(bw[r], tasks[r], alloc[r, k])
        if f > t:
            t = f
        if any_coal:
            if n_coal_run == 0:
                for k in range(K):
                    load[k] = 0.0
                cl_min = np.inf
                saturated = False
            elif fluid:
                now_sat = saturated_links(load, link)
                if saturated or now_sat:
                    cl_min = refresh_rates(t, cl, ncl, fin, sd, sigma, bw, tasks, alloc, speed,
                                           load, link)
                else:
                    cl_min = earliest(cl, ncl, fin)
                saturated = now_sat
    return t, nh, ncl, cl_min, n_coal_run, saturated


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def commit_start(j, t, fluid, runtime, tasks, sigma, bw, speed, load, link, alloc, free, fin, sd,
                 coal, start, ht, hj, nh, cl, ncl, cl_min, n_coal_run, saturated):
    """Start job ``j`` at ``t`` with the allocation already in ``alloc[j]``.

    Takes its nodes, adds its link traffic, fixes its slowdown and projected
    finish, re-rates the running co-allocated jobs (fluid model) and files it
    in the heap or the re-rated list. Returns ``(nh, ncl, cl_min, n_coal_run,
    saturated, coallocated)``.
    """
    K = free.shape[0]
    tj = tasks[j]
    used = 0
    for k in range(K):
        free[k] -= alloc[j, k]
        if alloc[j, k] > 0:
            used += 1
    if used >= 2:
        coal[j] = 1
        n_coal_run += 1
        for k in range(K):
            load[k] += link_traffic(bw[j], tj, alloc[j, k])
    sd[j] = slowdown(sigma[j], bw[j], tj, alloc, j, speed, load, link, False)
    start[j] = t
    fin[j] = t + runtime[j] * sd[j]
    if used >= 2 and fluid:
        now_sat = saturated_links(load, link)
        if saturated or now_sat:
            cl_min = refresh_rates(t, cl, ncl, fin, sd, sigma, bw, tasks, alloc, speed, load, link)
        saturated = now_sat
        cl_min = min(cl_min, fin[j])
        cl[ncl] = j
        ncl += 1
    else:
        nh = heap_push(ht, hj, nh, fin[j], j)
    return nh, ncl, cl_min, n_coal_run, saturated, used >= 2


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def objectives(release, start, finish, alloc, nodes, pbusy, pidle):
    """``(makespan, energy, flowtime)`` of a schedule (docs/design.md §5)."""
    J, K = alloc.shape
    if J == 0:
        return 0.0, 0.0, 0.0
    fmax = -np.inf
    rmin = np.inf
    flow = 0.0
    busy = 0.0
    for i in range(J):
        fmax = max(fmax, finish[i])
        rmin = min(rmin, release[i])
        flow += finish[i] - release[i]
        dur = finish[i] - start[i]
        for k in range(K):
            if alloc[i, k] > 0:
                busy += alloc[i, k] * (pbusy[k] - pidle[k]) * dur
    makespan = fmax - rmin
    idle_w = 0.0
    for k in range(K):
        idle_w += nodes[k] * pidle[k]
    return makespan, makespan * idle_w + busy, flow




@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def allocate_and_start(j, t, fluid, runtime, tasks, sigma, bw, allow, free, speed, load, link,
                       rank_pick, rank_fast, rank_slow, alloc, fin, sd, coal, start, ht, hj, nh,
                       cl, ncl, cl_min, n_coal_run, saturated):
    """:func:`allocate` then :func:`commit_start`: job ``j`` starts now on its allocation."""
    allocate(j, tasks, sigma, bw, allow, free, speed, load, link, rank_pick, rank_fast, rank_slow,
             alloc)
    return commit_start(j, t, fluid, runtime, tasks, sigma, bw, speed, load, link, alloc, free,
                        fin, sd, coal, start, ht, hj, nh, cl, ncl, cl_min, n_coal_run, saturated)
