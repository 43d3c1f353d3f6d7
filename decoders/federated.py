"""The federated decoder: chromosome (order, blacklist) -> schedule, makespan, energy.

Implements docs/design.md §5. Job ``j`` gets at most
``A_jk = N_k - floor(beta_jk * N_k)`` nodes of cluster ``k`` (the blacklist is
void, and counted as relaxed, when these cannot hold the job), takes free
allowed nodes cluster by cluster in the order of the allocation rule, then
shifts tasks one at a time towards slower clusters while its predicted
slowdown does not grow.

Execution follows the slowdown model
``SD_j = (1 - sigma_j) * SP_j + sigma_j * SC_j`` with ``SP_j`` the inverse of
the slowest speed used and ``SC_j`` the worst link utilisation over the
clusters of a co-allocated job (1 for a job in one cluster). Two execution
models:

``"fluid"`` (default)
    rates of co-allocated jobs are recomputed whenever a job starts or ends.
``"at_start"``
    ``SD_j`` is fixed when ``j`` starts.

Two backfilling modes (the rule that picks the next job; the event loop and
the allocation are shared):

``"none"`` (default, the MOGA decoder)
    jobs start strictly in the chromosome's order: job ``order[i+1]`` never
    starts before job ``order[i]``.
``"easy"``
    textbook EASY backfilling over the queue in the chromosome's order (first
    come, first served for the submit order): the first waiting job that does
    not fit (the head) gets a reservation at the earliest time the running
    jobs' predicted finishes free enough allowed nodes for it; a later job may
    start now only if it fits now and either finishes by the reservation or
    leaves enough allowed nodes for the head at the reservation. Under
    ``"at_start"`` predictions are exact, so the head starts no later than its
    reservation. Under ``"fluid"`` a co-allocated job started later can slow
    the running co-allocated jobs down (their links saturate further), so the
    head can start after its reservation.

Two allocation rules: ``"fastest"`` (fastest clusters first; ties to lower
energy per unit of work, then lower index) and ``"greenest"`` (least energy
per unit of work, ``power_busy / speed``, first; ties to the faster cluster,
then lower index).

Layout: private ``@njit`` kernels over plain arrays (``_decode``,
``_decode_easy``, ``_decode_batch``) and public wrappers (:func:`decode`,
:func:`decode_batch`) that validate and convert.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import get_num_threads, njit, prange

from ._federated_core import (
    allocate,
    allocate_and_start,
    allowance,
    commit_start,
    fits,
    next_finish,
    objectives,
    release_due,
)
from ._kernels import FINISH_RTOL, cluster_ranks, heap_pop, heap_push, slowdown
from ._validate import (
    check_blacklists,
    check_orders,
    choice_code,
    prepare,
    readonly,
)

__all__ = ["MODELS", "BACKFILL", "RULES", "FederatedDecode", "BatchDecode", "decode",
           "decode_batch", "allocation_ranks"]

#: Execution models by name, with the integer code the kernels use.
MODELS = {"fluid": 0, "at_start": 1}
#: Backfilling modes.
BACKFILL = {"none": 0, "easy": 1}
#: Allocation rules.
RULES = {"fastest": 0, "greenest": 1}

# Scratch per job the kernels need: floats (fin, sd, heap times, shadow-heap times),
# ints (heap jobs, re-rated list, co-allocation flags, started, waiting queue,
# shadow-heap jobs, jobs by release, position in the order); plus K floats and 5K ints.
_N_FSCRATCH = 4
_N_ISCRATCH = 8
_K_ISCRATCH = 5


class FederatedDecode(NamedTuple):
    """What one decode returns (arrays indexed like the job arrays)."""

    start: np.ndarray
    finish: np.ndarray
    alloc: np.ndarray
    makespan: float
    energy: float
    flowtime: float
    n_relaxed: int
    n_coalloc: int
    reservation: np.ndarray


class BatchDecode(NamedTuple):
    """What a population decode returns, one entry per individual."""

    makespan: np.ndarray
    energy: np.ndarray
    flowtime: np.ndarray
    n_relaxed: np.ndarray
    n_coalloc: np.ndarray


def allocation_ranks(speed, power_busy):
    """``(rank_fastest, rank_greenest, rank_slowest)`` cluster orders of the allocation rules."""
    fastest, slowest = cluster_ranks(speed, power_busy)
    speed = np.asarray(speed, dtype=np.float64)
    epw = np.asarray(power_busy, dtype=np.float64) / speed
    greenest = np.lexsort((np.arange(speed.size), -speed, epw)).astype(np.int64)
    return fastest, greenest, slowest


def _scratch(J, K):
    return (np.empty(_N_FSCRATCH * J + K),
            np.empty(_N_ISCRATCH * J + _K_ISCRATCH * K, dtype=np.int64))


# --------------------------------------------------------------------- kernels
# The kernels run without Numba's reference counting (``_nrt=False``): they
# allocate nothing (scratch comes from the caller), and refcount traffic on
# their many array arguments otherwise costs more than the decoding itself.
@njit(cache=True, error_model="numpy", _nrt=False)
def _decode(release, tasks, runtime, sigma, bw, nodes, speed, pbusy, pidle, link,
            rank_pick, rank_fast, rank_slow, order, blacklist, model, start, finish, alloc,
            reserve, fscratch, iscratch):
    """Decode one chromosome, jobs strictly in order; fills ``start``, ``finish``, ``alloc``.

    Returns ``(makespan, energy, flowtime, n_relaxed, n_coalloc)``.
    """
    J = order.shape[0]
    K = nodes.shape[0]
    fluid = model == 0
    fin = fscratch[0:J]
    sd = fscratch[J:2 * J]
    ht = fscratch[2 * J:3 * J]
    load = fscratch[4 * J:4 * J + K]
    hj = iscratch[0:J]
    cl = iscratch[J:2 * J]
    coal = iscratch[2 * J:3 * J]
    free = iscratch[8 * J:8 * J + K]
    allow = iscratch[8 * J + K:8 * J + 2 * K]
    for k in range(K):
        free[k] = nodes[k]
        load[k] = 0.0
    for i in range(J):
        coal[i] = 0
        reserve[i] = np.nan
        for k in range(K):
            alloc[i, k] = 0
    nh = 0
    ncl = 0
    n_coal_run = 0
    n_relaxed = 0
    n_coalloc = 0
    cl_min = np.inf  # earliest finish in the re-rated list (fluid model)
    saturated = False  # some link over capacity: co-allocated jobs are slowed by their links
    t = 0.0

    pos = 0
    # Each pass places the next job in the order, or releases finished jobs and retries.
    while pos < J:
        j = order[pos]
        if release[j] > t:
            t = release[j]
        t, nh, ncl, cl_min, n_coal_run, saturated = release_due(
            t + FINISH_RTOL * abs(t), t, fluid, ht, hj, nh, cl, ncl, cl_min, n_coal_run,
            saturated, fin, sd, coal, finish, alloc, free, load, sigma, bw, tasks, speed, link)
        relaxed = allowance(j, blacklist, nodes, tasks, allow)
        if not fits(tasks[j], free, allow):
            # Not enough allowed nodes free: jump to the next finish and retry.
            t = max(t, next_finish(ht, nh, cl_min))
            continue
        n_relaxed += relaxed
        nh, ncl, cl_min, n_coal_run, saturated, co = allocate_and_start(
            j, t, fluid, runtime, tasks, sigma, bw, allow, free, speed, load, link, rank_pick,
            rank_fast, rank_slow, alloc, fin, sd, coal, start, ht, hj, nh, cl, ncl, cl_min,
            n_coal_run, saturated)
        n_coalloc += co
        pos += 1
    release_due(np.inf, t, fluid, ht, hj, nh, cl, ncl, cl_min, n_coal_run, saturated, fin, sd,
                coal, finish, alloc, free, load, sigma, bw, tasks, speed, link)
    m, e, fl = objectives(release, start, finish, alloc, nodes, pbusy, pidle)
    return m, e, fl, n_relaxed, n_coalloc


@njit(cache=True, error_model="numpy", _nrt=False)
def _decode_easy(release, tasks, runtime, sigma, bw, nodes, speed, pbusy, pidle, link,
                 rank_pick, rank_fast, rank_slow, order, blacklist, model, start, finish, alloc,
                 reserve, fscratch, iscratch):
    """Decode one chromosome with EASY backfilling over the queue in ``order``.

    The waiting queue holds the arrived, not yet started jobs, sorted by their
    position in ``order``. ``reserve[j]`` receives the first reservation job
    ``j`` got as the blocked head of the queue (NaN if it never waited at the
    head). Returns ``(makespan, energy, flowtime, n_relaxed, n_coalloc)``.
    """
    J = order.shape[0]
    K = nodes.shape[0]
    fluid = model == 0
    fin = fscratch[0:J]
    sd = fscratch[J:2 * J]
    ht = fscratch[2 * J:3 * J]
    sh_t = fscratch[3 * J:4 * J]
    load = fscratch[4 * J:4 * J + K]
    hj = iscratch[0:J]
    cl = iscratch[J:2 * J]
    coal = iscratch[2 * J:3 * J]
    started = iscratch[3 * J:4 * J]
    wq = iscratch[4 * J:5 * J]
    sh_j = iscratch[5 * J:6 * J]
    by_release = iscratch[6 * J:7 * J]
    pos_of = iscratch[7 * J:8 * J]
    free = iscratch[8 * J:8 * J + K]
    allow = iscratch[8 * J + K:8 * J + 2 * K]
    allow_h = iscratch[8 * J + 2 * K:8 * J + 3 * K]
    free_s = iscratch[8 * J + 3 * K:8 * J + 4 * K]
    hold = iscratch[8 * J + 4 * K:8 * J + 5 * K]
    for k in range(K):
        free[k] = nodes[k]
        load[k] = 0.0
    for i in range(J):
        coal[i] = 0
        started[i] = 0
        reserve[i] = np.nan
        pos_of[order[i]] = i
        for k in range(K):
            alloc[i, k] = 0
    # Arrival order: a heap sort of the jobs by (release, index), in place.
    n_arr = 0
    for i in range(J):
        n_arr = heap_push(sh_t, sh_j, n_arr, release[i], i)
    for i in range(J):
        by_release[i] = sh_j[0]
        n_arr = heap_pop(sh_t, sh_j, n_arr)
    nh = 0
    ncl = 0
    nq = 0
    n_coal_run = 0
    n_relaxed = 0
    n_coalloc = 0
    n_started = 0
    n_arrived = 0
    cl_min = np.inf
    saturated = False
    t = release[by_release[0]] if J > 0 else 0.0

    while n_started < J:
        t, nh, ncl, cl_min, n_coal_run, saturated = release_due(
            t + FINISH_RTOL * abs(t), t, fluid, ht, hj, nh, cl, ncl, cl_min, n_coal_run,
            saturated, fin, sd, coal, finish, alloc, free, load, sigma, bw, tasks, speed, link)
        # Arrivals join the queue at their place in the order.
        while n_arrived < J and release[by_release[n_arrived]] <= t:
            j = by_release[n_arrived]
            q = nq
            while q > 0 and pos_of[wq[q - 1]] > pos_of[j]:
                wq[q] = wq[q - 1]
                q -= 1
            wq[q] = j
            nq += 1
            n_arrived += 1

        # Start queued jobs in order while they fit; stop at the first that does not.
        head = -1
        hq = 0
        while hq < nq:
            j = wq[hq]
            relaxed = allowance(j, blacklist, nodes, tasks, allow)
            if not fits(tasks[j], free, allow):
                head = j
                break
            n_relaxed += relaxed
            nh, ncl, cl_min, n_coal_run, saturated, co = allocate_and_start(
                j, t, fluid, runtime, tasks, sigma, bw, allow, free, speed, load, link, rank_pick,
                rank_fast, rank_slow, alloc, fin, sd, coal, start, ht, hj, nh, cl, ncl, cl_min,
                n_coal_run, saturated)
            n_coalloc += co
            started[j] = 1
            n_started += 1
            hq += 1

        if head >= 0:
            free_total = 0
            for k in range(K):
                allow_h[k] = allow[k]
                free_total += free[k]
            shadow = np.nan
            if np.isnan(reserve[head]) or free_total > 0:
                shadow = _shadow(t, tasks[head], allow_h, free, free_s, hold, alloc, ht, hj, nh,
                                 cl, ncl, fin, sh_t, sh_j)
                if np.isnan(reserve[head]):
                    reserve[head] = shadow
            # Backfill: later queued jobs that fit now and do not delay the head's reservation.
            q = hq + 1
            while q < nq and free_total > 0:
                j = wq[q]
                q += 1
                if tasks[j] > free_total:
                    continue
                relaxed = allowance(j, blacklist, nodes, tasks, allow)
                if not fits(tasks[j], free, allow):
                    continue
                allocate(j, tasks, sigma, bw, allow, free, speed, load, link, rank_pick,
                         rank_fast, rank_slow, alloc)
                predicted = t + runtime[j] * slowdown(sigma[j], bw[j], tasks[j], alloc, j, speed,
                                                      load, link, True)
                ends_before = predicted <= shadow
                ok = ends_before
                if not ok:
                    room = 0
                    for k in range(K):
                        room += min(free_s[k] - hold[k] - alloc[j, k], allow_h[k])
                    ok = room >= tasks[head]
                if not ok:
                    for k in range(K):
                        alloc[j, k] = 0
                    continue
                if not ends_before:
                    for k in range(K):
                        hold[k] += alloc[j, k]
                n_relaxed += relaxed
                nh, ncl, cl_min, n_coal_run, saturated, co = commit_start(
                    j, t, fluid, runtime, tasks, sigma, bw, speed, load, link, alloc, free, fin,
                    sd, coal, start, ht, hj, nh, cl, ncl, cl_min, n_coal_run, saturated)
                n_coalloc += co
                started[j] = 1
                n_started += 1
                free_total -= tasks[j]
        # Drop the started jobs from the queue.
        kept = 0
        for q in range(nq):
            if started[wq[q]] == 0:
                wq[kept] = wq[q]
                kept += 1
        nq = kept

        if n_started == J:
            break
        # Next event: a finish or an arrival.
        nxt = next_finish(ht, nh, cl_min)
        if n_arrived < J:
            nxt = min(nxt, release[by_release[n_arrived]])
        if nxt == np.inf:  # cannot happen: a waiting job always fits an idle federation
            break
        t = max(t, nxt)

    release_due(np.inf, t, fluid, ht, hj, nh, cl, ncl, cl_min, n_coal_run, saturated, fin, sd,
                coal, finish, alloc, free, load, sigma, bw, tasks, speed, link)
    m, e, fl = objectives(release, start, finish, alloc, nodes, pbusy, pidle)
    return m, e, fl, n_relaxed, n_coalloc


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _shadow(t, need, allow_h, free, free_s, hold, alloc, ht, hj, nh, cl, ncl, fin, sh_t, sh_j):
    """The head's reservation: replay the running jobs' predicted finishes until it fits.

    Fills ``free_s`` with the nodes free at the reservation (every job finishing
    with the last one replayed included) and clears ``hold``. Returns the time.
    """
    K = free.shape[0]
    for k in range(K):
        free_s[k] = free[k]
        hold[k] = 0
    n_sh = 0
    for i in range(nh):
        n_sh = heap_push(sh_t, sh_j, n_sh, ht[i], hj[i])
    for i in range(ncl):
        n_sh = heap_push(sh_t, sh_j, n_sh, fin[cl[i]], cl[i])
    shadow = t
    while n_sh > 0 and (not fits(need, free_s, allow_h)
                        or sh_t[0] <= shadow + FINISH_RTOL * abs(shadow)):
        # Until the head fits, then every job finishing together with the last one.
        shadow = max(shadow, sh_t[0])
        r = sh_j[0]
        n_sh = heap_pop(sh_t, sh_j, n_sh)
        for k in range(K):
            free_s[k] += alloc[r, k]
    return shadow


@njit(cache=True, parallel=True, error_model="numpy")
def _decode_batch(release, tasks, runtime, sigma, bw, nodes, speed, pbusy, pidle, link,
                  rank_pick, rank_fast, rank_slow, orders, blacklists, model, easy, n_chunks,
                  out_f, out_i):
    """Decode a population in parallel; objectives into ``out_f`` (P, 3), counters into ``out_i`` (P, 2).

    The population is cut into ``n_chunks`` contiguous chunks (one per thread),
    and each chunk reuses one set of work arrays, which stay in cache from one
    decode to the next.
    """
    P, J = orders.shape
    K = nodes.shape[0]
    for c in prange(n_chunks):
        start = np.empty(J)
        finish = np.empty(J)
        reserve = np.empty(J)
        alloc = np.empty((J, K), dtype=np.int64)
        fs = np.empty(_N_FSCRATCH * J + K)
        is_ = np.empty(_N_ISCRATCH * J + _K_ISCRATCH * K, dtype=np.int64)
        for p in range(c * P // n_chunks, (c + 1) * P // n_chunks):
            if easy:
                m, e, fl, nr, nc = _decode_easy(
                    release, tasks, runtime, sigma, bw, nodes, speed, pbusy, pidle, link,
                    rank_pick, rank_fast, rank_slow, orders[p], blacklists[p], model, start,
                    finish, alloc, reserve, fs, is_)
            else:
                m, e, fl, nr, nc = _decode(
                    release, tasks, runtime, sigma, bw, nodes, speed, pbusy, pidle, link,
                    rank_pick, rank_fast, rank_slow, orders[p], blacklists[p], model, start,
                    finish, alloc, reserve, fs, is_)
            out_f[p, 0] = m
            out_f[p, 1] = e
            out_f[p, 2] = fl
            out_i[p, 0] = nr
            out_i[p, 1] = nc


# -------------------------------------------------------------------- wrappers
def _options(model, backfill, rule):
    return (choice_code("execution model", model, MODELS),
            choice_code("backfilling", backfill, BACKFILL),
            choice_code("allocation rule", rule, RULES))


def decode(release, tasks, runtime, sigma, bw, nodes, speed, power_busy, power_idle, link,
           order, blacklist, model: str = "fluid", check: bool = True, backfill: str = "none",
           rule: str = "fastest") -> FederatedDecode:
    """Decode one chromosome into a federated schedule.

    Parameters
    ----------
    release, runtime, sigma, bw : array_like of float, shape (J,)
        Release time (s, >= 0), base run time on a speed-1.0 node (s, > 0),
        communication share in [0, 1] and per-task bandwidth (Mbit/s, >= 0).
    tasks : array_like of int, shape (J,)
        Tasks per job (>= 1, at most the federation's node count).
    nodes, speed, power_busy, power_idle, link : array_like, shape (K,)
        The federation's clusters (see :class:`moga.Federation`).
    order : array_like of int, shape (J,)
        A permutation of ``range(J)``: the placement order (the queue order
        under EASY).
    blacklist : array_like of float, shape (J, K)
        Fraction of each cluster that each job may not use, in [0, 1].
    model : {"fluid", "at_start"}
        Execution model.
    check : bool
        Validate the job and platform arrays (default). ``False`` skips all
        but the width check, for arrays taken from a validated ``JobSet`` and
        ``Federation``; the chromosome is always checked.
    backfill : {"none", "easy"}
        Strict order (the MOGA decoder) or EASY backfilling.
    rule : {"fastest", "greenest"}
        Allocation rule: which clusters a job takes nodes from first.

    Returns
    -------
    FederatedDecode
        Per-job ``start``, ``finish`` and ``alloc`` (J, K); ``makespan`` (s),
        ``energy`` (J), ``flowtime`` (s), ``n_relaxed`` (jobs whose blacklist was
        void), ``n_coalloc`` (jobs spread over two or more clusters) and
        ``reservation`` (EASY: each job's first reservation as blocked head of
        the queue, NaN otherwise).
    """
    code, easy, rule_code = _options(model, backfill, rule)
    arrs = prepare(release, tasks, runtime, sigma, bw, nodes, speed, power_busy, power_idle, link,
                   check)
    J, K = arrs[0].shape[0], arrs[5].shape[0]
    if np.ndim(order) != 1:
        raise ValueError(f"order must be one permutation of shape ({J},), got shape "
                         f"{np.shape(order)}; decode populations with decode_batch")
    order = check_orders(np.asarray(order)[None, :], J)[0]
    if np.ndim(blacklist) != 2:
        raise ValueError(f"blacklist must have shape ({J}, {K}), got shape {np.shape(blacklist)}; "
                         "decode populations with decode_batch")
    blacklist = check_blacklists(np.asarray(blacklist)[None], J, K)[0]
    fastest, greenest, slowest = allocation_ranks(arrs[6], arrs[7])
    pick = greenest if rule_code else fastest
    arrs = readonly(*arrs, pick, fastest, slowest, order, blacklist)
    start, finish, reserve = np.empty(J), np.empty(J), np.empty(J)
    alloc = np.empty((J, K), dtype=np.int64)
    kernel = _decode_easy if easy else _decode
    m, e, fl, nr, nc = kernel(*arrs, code, start, finish, alloc, reserve, *_scratch(J, K))
    return FederatedDecode(start, finish, alloc, float(m), float(e), float(fl), int(nr), int(nc),
                           reserve)


def decode_batch(release, tasks, runtime, sigma, bw, nodes, speed, power_busy, power_idle, link,
                 orders, blacklists, model: str = "fluid", check: bool = True,
                 backfill: str = "none", rule: str = "fastest") -> BatchDecode:
    """Decode a population of chromosomes in parallel (Numba threads).

    Parameters
    ----------
    orders : array_like of int, shape (P, J)
        One permutation of ``range(J)`` per individual.
    blacklists : array_like of float, shape (P, J, K)
        One blacklist per individual, entries in [0, 1].

    Other parameters are as in :func:`decode`.

    Returns
    -------
    BatchDecode
        ``makespan``, ``energy``, ``flowtime`` (float arrays, shape (P,)) and the
        counters ``n_relaxed``, ``n_coalloc`` (int arrays, shape (P,)).
    """
    code, easy, rule_code = _options(model, backfill, rule)
    arrs = prepare(release, tasks, runtime, sigma, bw, nodes, speed, power_busy, power_idle, link,
                   check)
    J, K = arrs[0].shape[0], arrs[5].shape[0]
    orders = check_orders(orders, J)
    if np.ndim(blacklists) != 3 or np.shape(blacklists)[0] != orders.shape[0]:
        raise ValueError(
            f"blacklists must have shape ({orders.shape[0]}, {J}, {K}), got {np.shape(blacklists)}"
        )
    blacklists = check_blacklists(blacklists, J, K)
    fastest, greenest, slowest = allocation_ranks(arrs[6], arrs[7])
    pick = greenest if rule_code else fastest
    arrs = readonly(*arrs, pick, fastest, slowest, orders, blacklists)
    P = orders.shape[0]
    out_f = np.empty((P, 3))
    out_i = np.empty((P, 2), dtype=np.int64)
    n_chunks = max(1, min(P, get_num_threads()))
    _decode_batch(*arrs, code, bool(easy), n_chunks, out_f, out_i)
    return BatchDecode(out_f[:, 0].copy(), out_f[:, 1].copy(), out_f[:, 2].copy(),
                       out_i[:, 0].copy(), out_i[:, 1].copy())
