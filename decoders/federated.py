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

Layout: one private ``@njit`` event loop (``_decode``) with the two rules
that start jobs at an event (``_start_in_order``, ``_start_easy``), its batch
form (``_decode_batch``), and public wrappers (:func:`decode`,
:func:`decode_batch`) that validate, convert and bundle the arrays (see
:mod:`decoders._federated_core` for the bundles and every field).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import get_num_threads, njit, prange

from ._federated_core import (
    E_COALLOC,
    E_CURSOR,
    E_NCL,
    E_NH,
    E_NQ,
    E_RELAXED,
    E_STARTED,
    Jobs,
    Out,
    Platform,
    allocate,
    allowance,
    commit_start,
    fits,
    new_state,
    next_finish,
    objectives,
    release_due,
    reset_events,
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


# --------------------------------------------------------------------- kernels
# The kernels run without Numba's reference counting (``_nrt=False``): they
# allocate nothing (work arrays come from the caller), and refcount traffic on
# their many arrays otherwise costs more than the decoding itself. The data
# travels in the bundles of :mod:`decoders._federated_core` (jobs, plat, st,
# out).
@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _start_in_order(t, fluid, jobs, plat, st, out, order, blacklist):
    """The MOGA rule at time ``t``: start the next jobs of ``order`` while they can start now.

    Stops at the first job not yet released or whose allowed free nodes do not
    hold it (nothing behind it may start first). Returns the release of that
    job when it is still to come (inf otherwise).
    """
    J = order.shape[0]
    pos = st.evi[E_CURSOR]
    n_relaxed = st.evi[E_RELAXED]
    t_arrival = np.inf
    while pos < J:
        j = order[pos]
        if jobs.release[j] > t:
            t_arrival = jobs.release[j]
            break
        relaxed = allowance(j, blacklist, jobs, plat, st.allow)
        if not fits(jobs.tasks[j], st.free, st.allow):
            break
        n_relaxed += relaxed
        allocate(j, jobs, plat, st, out.alloc, st.allow)
        commit_start(j, t, fluid, jobs, plat, st, out)
        pos += 1
    st.evi[E_CURSOR] = pos
    st.evi[E_RELAXED] = n_relaxed
    return t_arrival


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _start_easy(t, fluid, jobs, plat, st, out, order, blacklist):
    """EASY backfilling at time ``t`` over the queue in ``order`` (see the module docstring).

    Arrivals join the waiting queue ``wq`` at their place in the order; queued
    jobs start from the front while they fit; the first that does not (the
    head) gets its reservation (the first one is kept in ``out.reserve``);
    later queued jobs that fit now start if they end by the reservation or
    leave the head enough allowed nodes then. Returns the next arrival (inf
    when every job has arrived).
    """
    J = order.shape[0]
    K = st.free.shape[0]
    wq, pos_of, tasks = st.wq, st.pos_of, jobs.tasks
    free, allow, alloc = st.free, st.allow, out.alloc
    nq = st.evi[E_NQ]
    arrived = st.evi[E_CURSOR]
    n_relaxed = st.evi[E_RELAXED]
    while arrived < J and jobs.release[st.by_release[arrived]] <= t:
        j = st.by_release[arrived]
        q = nq
        while q > 0 and pos_of[wq[q - 1]] > pos_of[j]:
            wq[q] = wq[q - 1]
            q -= 1
        wq[q] = j
        nq += 1
        arrived += 1

    head = -1
    hq = 0
    while hq < nq:
        j = wq[hq]
        relaxed = allowance(j, blacklist, jobs, plat, allow)
        if not fits(tasks[j], free, allow):
            head = j
            break
        n_relaxed += relaxed
        allocate(j, jobs, plat, st, alloc, allow)
        commit_start(j, t, fluid, jobs, plat, st, out)
        st.started[j] = 1
        hq += 1

    if head >= 0:
        free_total = 0
        for k in range(K):
            st.allow_h[k] = allow[k]
            free_total += free[k]
        shadow = np.nan
        if np.isnan(out.reserve[head]) or free_total > 0:
            shadow = _shadow(t, tasks[head], st, alloc)
            if np.isnan(out.reserve[head]):
                out.reserve[head] = shadow
        # Backfill: later queued jobs that fit now and do not delay the head's reservation.
        q = hq + 1
        while q < nq and free_total > 0:
            j = wq[q]
            q += 1
            if tasks[j] > free_total:
                continue
            relaxed = allowance(j, blacklist, jobs, plat, allow)
            if not fits(tasks[j], free, allow):
                continue
            allocate(j, jobs, plat, st, alloc, allow)
            predicted = t + jobs.runtime[j] * slowdown(jobs.sigma[j], jobs.bw[j], tasks[j], alloc,
                                                       j, plat.speed, st.load, plat.link, True)
            ends_before = predicted <= shadow
            ok = ends_before
            if not ok:
                room = 0
                for k in range(K):
                    room += min(st.free_s[k] - st.hold[k] - alloc[j, k], st.allow_h[k])
                ok = room >= tasks[head]
            if not ok:
                for k in range(K):
                    alloc[j, k] = 0
                continue
            if not ends_before:
                for k in range(K):
                    st.hold[k] += alloc[j, k]
            n_relaxed += relaxed
            commit_start(j, t, fluid, jobs, plat, st, out)
            st.started[j] = 1
            free_total -= tasks[j]
    # Drop the started jobs from the queue.
    kept = 0
    for q in range(nq):
        if st.started[wq[q]] == 0:
            wq[kept] = wq[q]
            kept += 1
    st.evi[E_NQ] = kept
    st.evi[E_CURSOR] = arrived
    st.evi[E_RELAXED] = n_relaxed
    if arrived < J:
        return jobs.release[st.by_release[arrived]]
    return np.inf


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _shadow(t, need, st, alloc):
    """The head's reservation: replay the running jobs' predicted finishes until it fits.

    Fills ``st.free_s`` with the nodes free at the reservation (every job
    finishing with the last one replayed included) and clears ``st.hold``.
    Returns the time.
    """
    K = st.free.shape[0]
    free_s, sh_t, sh_j = st.free_s, st.sh_t, st.sh_j
    for k in range(K):
        free_s[k] = st.free[k]
        st.hold[k] = 0
    n_sh = 0
    for i in range(st.evi[E_NH]):
        n_sh = heap_push(sh_t, sh_j, n_sh, st.ht[i], st.hj[i])
    for i in range(st.evi[E_NCL]):
        n_sh = heap_push(sh_t, sh_j, n_sh, st.fin[st.cl[i]], st.cl[i])
    shadow = t
    while n_sh > 0 and (not fits(need, free_s, st.allow_h)
                        or sh_t[0] <= shadow + FINISH_RTOL * abs(shadow)):
        # Until the head fits, then every job finishing together with the last one.
        shadow = max(shadow, sh_t[0])
        r = sh_j[0]
        n_sh = heap_pop(sh_t, sh_j, n_sh)
        for k in range(K):
            free_s[k] += alloc[r, k]
    return shadow


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _init(jobs, plat, st, out, order, easy):
    """Reset the work arrays and outputs for a new decode."""
    J = order.shape[0]
    K = plat.nodes.shape[0]
    for k in range(K):
        st.free[k] = plat.nodes[k]
        st.load[k] = 0.0
    for i in range(J):
        st.coal[i] = 0
        out.reserve[i] = np.nan
        for k in range(K):
            out.alloc[i, k] = 0
    if easy:
        for i in range(J):
            st.started[i] = 0
            st.pos_of[order[i]] = i
        # Arrival order: a heap sort of the jobs by (release, index).
        n = 0
        for i in range(J):
            n = heap_push(st.sh_t, st.sh_j, n, jobs.release[i], i)
        for i in range(J):
            st.by_release[i] = st.sh_j[0]
            n = heap_pop(st.sh_t, st.sh_j, n)


@njit(cache=True, error_model="numpy", _nrt=False)
def _decode(jobs, plat, order, blacklist, model, easy, st, out):
    """Decode one chromosome: the event loop shared by both rules.

    Parameters
    ----------
    jobs, plat, st, out : named tuples
        See :mod:`decoders._federated_core`; ``st`` is work space, ``out`` is filled.
    order : int64[:]
        A permutation of the jobs: the placement order (the queue order under EASY).
    blacklist : float64[:, :]
        (J, K) fractions in [0, 1].
    model : int
        ``MODELS`` code (0 fluid, 1 at_start).
    easy : bool
        EASY backfilling (:func:`_start_easy`) or strict order (:func:`_start_in_order`).

    Returns
    -------
    (makespan, energy, flowtime, n_relaxed, n_coalloc)

    At each event (a finish or an arrival) the jobs finishing by then release
    their nodes, then the rule starts what it can; time moves to the next
    finish or arrival until every job has started.
    """
    J = order.shape[0]
    fluid = model == 0
    _init(jobs, plat, st, out, order, easy)
    reset_events(st)
    t = 0.0
    while st.evi[E_STARTED] < J:
        t = release_due(t + FINISH_RTOL * abs(t), t, fluid, jobs, plat, st, out)
        if easy:
            t_arrival = _start_easy(t, fluid, jobs, plat, st, out, order, blacklist)
        else:
            t_arrival = _start_in_order(t, fluid, jobs, plat, st, out, order, blacklist)
        if st.evi[E_STARTED] == J:
            break
        nxt = min(next_finish(st), t_arrival)
        if nxt == np.inf:  # cannot happen: a waiting job always fits an idle federation
            break
        t = max(t, nxt)
    release_due(np.inf, t, fluid, jobs, plat, st, out)
    m, e, fl = objectives(jobs, plat, out)
    return m, e, fl, st.evi[E_RELAXED], st.evi[E_COALLOC]


@njit(cache=True, parallel=True, error_model="numpy")
def _decode_batch(jobs, plat, orders, blacklists, model, easy, n_chunks, out_f, out_i):
    """Decode a population in parallel; objectives into ``out_f`` (P, 3), counters into ``out_i`` (P, 2).

    The population is cut into ``n_chunks`` contiguous chunks (one per thread),
    and each chunk reuses one set of work arrays, which stay in cache from one
    decode to the next.
    """
    P, J = orders.shape
    K = plat.nodes.shape[0]
    for c in prange(n_chunks):
        st = new_state(J, K)
        out = Out(np.empty(J), np.empty(J), np.empty((J, K), dtype=np.int64), np.empty(J))
        for p in range(c * P // n_chunks, (c + 1) * P // n_chunks):
            m, e, fl, nr, nc = _decode(jobs, plat, orders[p], blacklists[p], model, easy, st, out)
            out_f[p, 0] = m
            out_f[p, 1] = e
            out_f[p, 2] = fl
            out_i[p, 0] = nr
            out_i[p, 1] = nc


# -------------------------------------------------------------------- wrappers
def bundles(arrs, rank_pick, rank_fast, rank_slow, orders, blacklists):
    """``(jobs, plat, orders, blacklists)``: read-only arrays, jobs and platform as named tuples."""
    a = readonly(*arrs, rank_pick, rank_fast, rank_slow, orders, blacklists)
    return Jobs(*a[0:5]), Platform(*a[5:13]), a[13], a[14]


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
    jobs, plat, order, blacklist = bundles(arrs, pick, fastest, slowest, order, blacklist)
    out = Out(np.empty(J), np.empty(J), np.empty((J, K), dtype=np.int64), np.empty(J))
    m, e, fl, nr, nc = _decode(jobs, plat, order, blacklist, code, bool(easy), new_state(J, K),
                               out)
    return FederatedDecode(out.start, out.finish, out.alloc, float(m), float(e), float(fl),
                           int(nr), int(nc), out.reserve)


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
    jobs, plat, orders, blacklists = bundles(arrs, pick, fastest, slowest, orders, blacklists)
    P = orders.shape[0]
    out_f = np.empty((P, 3))
    out_i = np.empty((P, 2), dtype=np.int64)
    n_chunks = max(1, min(P, get_num_threads()))
    _decode_batch(jobs, plat, orders, blacklists, code, bool(easy), n_chunks, out_f, out_i)
    return BatchDecode(out_f[:, 0].copy(), out_f[:, 1].copy(), out_f[:, 2].copy(),
                       out_i[:, 0].copy(), out_i[:, 1].copy())
