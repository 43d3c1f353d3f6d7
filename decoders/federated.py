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

Three allocation rules: ``"fastest"`` (fastest clusters first; ties to lower
energy per unit of work, then lower index), ``"greenest"`` (least energy
per unit of work, ``power_busy / speed``, first; ties to the faster cluster,
then lower index) and ``"consolidate"`` (the seed's and AccaSim's
consolidation, per cluster: the fullest cluster that holds the job alone,
else the fullest clusters first; ties in the fastest order).

Layout: one private ``@njit`` event loop over the rows of a population
(``_decode``, without the GIL, in threads: :func:`run_rows`) with the rules
that start jobs at an event (``_start_in_order``, ``_start_easy``,
``_start_prb``), and public
wrappers (:func:`decode`, :func:`decode_batch`) that validate, convert and
bundle the arrays (see :mod:`decoders._federated_core` for the bundles and
every field). The helpers are compiled with ``forceinline``: LLVM inlines
them into the kernel, so the loop runs as one function, while Numba types
each helper once.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple

import numpy as np
from numba import get_num_threads, njit

from ._backfill_index import (
    EMPTY,
    add_jobs,
    build_index,
    first_candidate,
    first_candidate_behind,
    set_leaf,
)
from ._federated_core import (
    E_COALLOC,
    E_CURSOR,
    E_HOLES,
    E_INDEX,
    E_NACT,
    E_NCL,
    E_NH,
    E_NQ,
    E_PLAN,
    E_QH,
    E_RELAXED,
    E_RERATE,
    E_SHEAD,
    E_SRERATE,
    E_SSTART,
    E_STARTED,
    TABLE_K,
    Jobs,
    Platform,
    allowance,
    allowances,
    cluster_mask,
    commit_start,
    fits,
    free_by_mask,
    idle_federation,
    is_capped,
    least_power,
    new_out,
    new_state,
    next_finish,
    node_increment,
    objectives,
    place,
    planned_end,
    plans_on_estimates,
    release_due,
    reset_events,
    unpower,
)
from ._kernels import FINISH_RTOL, cluster_ranks, heap_pop, heap_push, helper, slowdown
from ._validate import (
    check_blacklists,
    check_orders,
    check_vector,
    choice_code,
    prepare,
    readonly,
)

__all__ = ["CapInfeasibleError", "MODELS", "BACKFILL", "RULES", "FederatedDecode", "BatchDecode", "decode",
           "decode_batch", "allocation_ranks", "power_inputs"]

#: Execution models by name, with the integer code the kernels use.
MODELS = {"fluid": 0, "at_start": 1}
#: Backfilling modes.
BACKFILL = {"none": 0, "easy": 1}
#: Allocation rules.
RULES = {"fastest": 0, "greenest": 1, "consolidate": 2}

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


#: Job slots (rows x jobs) from which a batch decode spreads its rows over threads.
THREAD_MIN_SLOTS = 20_000


class BatchDecode(NamedTuple):
    """What a population decode returns, one entry per individual."""

    makespan: np.ndarray
    energy: np.ndarray
    flowtime: np.ndarray
    n_relaxed: np.ndarray
    n_coalloc: np.ndarray
    #: Each schedule's start order (P, J), when ``decode_batch(start_orders=True)``.
    start_orders: np.ndarray | None = None
    #: Each job's start time (P, J), indexed like the job arrays, when
    #: ``decode_batch(starts=True)``.
    starts: np.ndarray | None = None
    #: Each schedule's nodes per job and cluster (int32, (P, J, K)), when
    #: ``decode_batch(allocations=True)``.
    alloc: np.ndarray | None = None


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
@helper
def _start_in_order(t, fluid, jobs, plat, st, out, order, blacklist):
    """The MOGA rule at time ``t``: start the next jobs of ``order`` while they can start now.

    Stops at the first job not yet released, whose allowed free nodes do not
    hold it, or that fits no power budget now (nothing behind it may start
    first). Returns the release of that job when it is still to come (inf
    otherwise).
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
        placed = _place_or_relax(j, relaxed, jobs, plat, st, out.alloc)
        if placed == 0:
            break
        n_relaxed += relaxed or placed == 2
        commit_start(j, t, fluid, jobs, plat, st, out)
        pos += 1
    st.evi[E_CURSOR] = pos
    st.evi[E_RELAXED] = n_relaxed
    return t_arrival


@helper
def _place_or_relax(j, relaxed, jobs, plat, st, alloc):
    """:func:`place` job ``j``: 1 when placed, 0 when it does not fit the power budgets now.

    On an idle federation a blacklist that keeps the job out of every power
    budget is void, as one too small for its tasks is: it is placed on its
    whole allowance and 2 returned (the wrappers make sure every job fits an
    idle federation).
    """
    if place(j, jobs, plat, st, alloc, st.allow):
        return 1
    if relaxed or not idle_federation(st):
        return 0
    for k in range(plat.nodes.shape[0]):
        st.allow[k] = plat.nodes[k]
    return 2 if place(j, jobs, plat, st, alloc, st.allow) else 0


@helper
def _enqueue(t, jobs, st):
    """Arrivals up to ``t`` join the waiting queue ``wq`` at their place (``pos_of``).

    The arrivals are sorted by place and merged into the queue from its back,
    so a batch of m arrivals into a queue of n costs O(m log m + n), not
    O(m n): a heap sort (in ``sh_t``/``sh_j``, free between shadow
    computations) for a few arrivals, and for a batch of more than J / 8 a
    bucket sweep over the J places (``sh_j`` indexed by place), O(J), as when
    a batch job-set queues all its jobs at once.
    """
    J = jobs.release.shape[0]
    wq, pos_of = st.wq[st.evi[E_QH]:], st.pos_of  # the queue and the room behind it
    nq = st.evi[E_NQ]
    first = st.evi[E_CURSOR]
    arrived = first
    while arrived < J and jobs.release[st.by_release[arrived]] <= t:
        arrived += 1
    m = arrived - first
    sweep = 8 * m > J
    if sweep:  # sh_j by place: the arrival there, or -1
        for p in range(J):
            st.sh_j[p] = -1
        for i in range(first, arrived):
            j = st.by_release[i]
            st.sh_j[pos_of[j]] = j
    else:  # a heap with the latest place on top
        for i in range(first, arrived):
            j = st.by_release[i]
            heap_push(st.sh_t, st.sh_j, i - first, -float(pos_of[j]), j)
    p = J - 1
    q = nq - 1
    w = nq + m - 1
    while m > 0:  # the arrivals, latest place first, merged in from the queue's back
        if sweep:
            j = st.sh_j[p]
            p -= 1
            if j < 0:
                continue
        else:
            j = st.sh_j[0]
            heap_pop(st.sh_t, st.sh_j, m)
        m -= 1
        while q >= 0 and pos_of[wq[q]] > pos_of[j]:
            wq[w] = wq[q]
            w -= 1
            q -= 1
        wq[w] = j
        w -= 1
    st.evi[E_NQ] = arrived - first + nq
    st.evi[E_CURSOR] = arrived


@helper
def _dequeue_started(jobs, st, front, first):
    """Drop the started jobs from the queue; returns the next arrival (inf when none).

    The caller knows where they are: the queue's first ``front`` jobs have
    started, and no job before queue place ``first`` (>= ``front``) has
    otherwise. The front is dropped by moving the queue's start (``E_QH``),
    and only the places from ``first`` on are compacted (none when ``first``
    is the queue's length).
    """
    qh = st.evi[E_QH] + front
    nq = st.evi[E_NQ] - front
    wq = st.wq[qh:]
    kept = first - front
    for q in range(first - front, nq):
        if st.started[wq[q]] == 0:
            wq[kept] = wq[q]
            kept += 1
    st.evi[E_NQ] = kept
    st.evi[E_QH] = qh
    if first == front:  # compacted whole: no holes left
        st.evi[E_HOLES] = 0
    arrived = st.evi[E_CURSOR]
    if arrived < jobs.release.shape[0]:
        return jobs.release[st.by_release[arrived]]
    return np.inf


@helper
def _try_start(j, t, fluid, jobs, plat, st, out, blacklist):
    """Start queued job ``j`` now if its allowed free nodes and the power budgets hold it."""
    relaxed = allowance(j, blacklist, jobs, plat, st.allow)
    if not fits(jobs.tasks[j], st.free, st.allow):
        return False
    placed = _place_or_relax(j, relaxed, jobs, plat, st, out.alloc)
    if placed == 0:
        return False
    st.evi[E_RELAXED] += relaxed or placed == 2
    commit_start(j, t, fluid, jobs, plat, st, out)
    st.started[j] = 1
    return True


@helper
def _start_easy(t, fluid, jobs, plat, st, out, order, blacklist):
    """EASY backfilling at time ``t`` over the queue in ``order`` (see the module docstring).

    Arrivals join the waiting queue ``wq`` at their place in the order; queued
    jobs start from the front while they fit (nodes and power); the first that
    does not (the head) gets its reservation (the first one is kept in
    ``out.reserve``); later queued jobs that fit now start if they end by the
    reservation or leave the head enough allowed nodes and power then.
    Returns the next arrival (inf when every job has arrived).

    A batch job-set keeps most of its jobs queued at every event, so the
    backfill candidates come from the index of :mod:`decoders._backfill_index`
    in queue order: only the jobs that pass the cheap tests (their allowed
    clusters hold their tasks now, and they can end by the reservation at
    their fastest, a slowdown of at least ``min(1, 1 / fastest speed)``, or
    are narrow enough, :func:`_late_width`, to leave the head its nodes)
    are visited, and the bounds of these tests only tighten as jobs start,
    so each group's next candidate is searched from where it stood. The
    allowance comes from the table of :func:`allowances`, so the full test is
    a K-term sum, and a candidate that cannot end by the reservation is
    allocated only if :func:`_room_left` says some allocation could leave
    the head room. Started jobs behind the head stay in ``wq`` as holes until
    they are half of it.
    """
    K = st.free.shape[0]
    tasks = jobs.tasks
    free = st.free
    capped = is_capped(plat)
    by_mask = K <= TABLE_K
    arrived = st.evi[E_CURSOR]
    _enqueue(t, jobs, st)
    add_jobs(arrived, st.evi[E_CURSOR], st.by_release, tasks, jobs.est, st, by_mask)
    wq = st.wq[st.evi[E_QH]:]
    nq = st.evi[E_NQ]
    holes = st.evi[E_HOLES]
    head = -1
    hq = 0
    while hq < nq:
        j = wq[hq]
        if st.started[j]:
            holes -= 1  # a hole reached the front
        elif _try_start(j, t, fluid, jobs, plat, st, out, blacklist):
            set_leaf(j, EMPTY, np.inf, st, by_mask)
        else:
            head = j
            break
        hq += 1

    if head >= 0:
        free_total = 0
        for k in range(K):
            st.allow_h[k] = st.allow[k]
            free_total += free[k]
        # The last reservation stands while the head is the same and, since it was
        # computed, no job started but by this rule's backfill and no finish moved
        # (exact run times): so do the nodes and power left then (``free_s - hold``,
        # ``pks + hold_p``; a job that ended by then had been counted gone).
        if not (st.evi[E_SHEAD] == head + 1 and st.evi[E_PLAN] == 0
                and st.evi[E_SRERATE] == st.evi[E_RERATE]
                and st.evi[E_SSTART] == st.evi[E_STARTED]):
            st.evi[E_SHEAD] = 0
        shadow = np.nan
        if np.isnan(out.reserve[head]) or free_total > 0:
            if st.evi[E_SHEAD] == head + 1:
                shadow = st.evf[1]
            else:
                shadow = _shadow(t, head, jobs, plat, st, out, capped)
                st.evi[E_SHEAD] = head + 1
                st.evi[E_SRERATE] = st.evi[E_RERATE]
                st.evf[1] = shadow
            if np.isnan(out.reserve[head]):
                out.reserve[head] = shadow
        # Backfill: later queued jobs that fit now and do not delay the head's reservation.
        # A job's slowdown is at least min(1, 1 / fastest speed) (SP >= 1 / P_max, SC >= 1);
        # the margin keeps this lower bound below the slowdown computed in floats.
        sd_min = 1.0
        for k in range(K):
            sd_min = min(sd_min, 1.0 / plat.speed[k])
        sd_min *= 1.0 - 1e-9
        need = tasks[head]
        room0 = _room_bounds(st)
        allow_j, free_in = st.allow_j, st.free_in
        free_mask = np.int64(-1)
        if by_mask:
            free_by_mask(free, free_in)
        else:
            free_mask = cluster_mask(free)
        n_act = st.evi[E_NACT]
        if free_total > 0:
            # Each group's first candidate behind the head.
            p_head = st.pos_of[head]
            for a in range(n_act):
                m = st.g_act[a]
                x = free_in[m] if by_mask else free_total
                y = _late_width(m, by_mask, free, st.slack_h, room0, need)
                st.g_cand[m] = first_candidate_behind(m, p_head, st, x, y, t, sd_min, shadow)
        while free_total > 0:
            # The candidate first in queue order.
            best = -1
            p_best = order.shape[0]
            for a in range(n_act):
                m = st.g_act[a]
                c = st.g_cand[m]
                if c >= 0 and st.g_pos[st.g_off[m] + c] < p_best:
                    p_best = st.g_pos[st.g_off[m] + c]
                    best = m
            if best < 0:
                break
            j = order[p_best]
            started = _backfill(j, t, fluid, jobs, plat, st, out, head, need, shadow, sd_min,
                                room0, free_mask, by_mask, capped, allow_j[j])
            if started:
                set_leaf(j, EMPTY, np.inf, st, by_mask)
                holes += 1
                free_total -= tasks[j]
                room0 = _room_bounds(st)
                if by_mask:
                    free_by_mask(free, free_in)
                else:
                    free_mask = cluster_mask(free)
                # The bounds tightened: every group searches on from its candidate.
                for a in range(n_act):
                    m = st.g_act[a]
                    c = st.g_cand[m]
                    if c >= 0:
                        x = free_in[m] if by_mask else free_total
                        y = _late_width(m, by_mask, free, st.slack_h, room0, need)
                        st.g_cand[m] = first_candidate(m, c, st, x, y, t, sd_min, shadow)
            else:
                x = free_in[best] if by_mask else free_total
                y = _late_width(best, by_mask, free, st.slack_h, room0, need)
                st.g_cand[best] = first_candidate(best, st.g_cand[best] + 1, st, x, y, t, sd_min,
                                                  shadow)
    st.evi[E_HOLES] = holes
    st.evi[E_SSTART] = st.evi[E_STARTED]
    if 2 * holes > nq - hq:  # compact the whole queue (which clears the hole count)
        return _dequeue_started(jobs, st, hq, hq)
    return _dequeue_started(jobs, st, hq, nq)


@helper
def _backfill(j, t, fluid, jobs, plat, st, out, head, need, shadow, sd_min, room0, free_mask,
              by_mask, capped, allow):
    """Start candidate ``j`` now if it fits and does not delay the head's reservation.

    ``allow`` is its allowance (a view of the table: :func:`place` only reads
    it). A job that runs past the reservation holds its nodes and power there
    (``hold``, ``hold_p``).
    """
    K = st.free.shape[0]
    tasks = jobs.tasks
    free, alloc = st.free, out.alloc
    if not by_mask and st.mask_j[j] & free_mask == 0:
        return False  # no free node on its allowed clusters
    late = t + jobs.est[j] * sd_min > shadow  # cannot end by the reservation (as planned)
    if not fits(tasks[j], free, allow):
        return False
    if late and _room_left(tasks[j], free, allow, st.slack_h, room0) < need:
        return False  # no allocation of it would leave the head room
    relaxed = st.relaxed_j[j]
    if not place(j, jobs, plat, st, alloc, allow):
        return False
    predicted = t + jobs.est[j] * slowdown(jobs.sigma[j], jobs.bw[j], tasks[j], alloc, j,
                                               plat.speed, st.load, plat.link, True)
    ends_before = predicted <= shadow
    ok = ends_before
    if not ok:
        room = 0
        for k in range(K):
            room += min(st.free_s[k] - st.hold[k] - alloc[j, k], st.allow_h[k])
        ok = room >= need
        if ok and capped:
            ok = _head_power_after(head, j, jobs, plat, st, alloc)
    if not ok:
        for k in range(K):
            alloc[j, k] = 0
        return False
    if not ends_before:
        for k in range(K):
            st.hold[k] += alloc[j, k]
            if capped and alloc[j, k] > 0:
                d = alloc[j, k] * node_increment(j, k, jobs, plat)
                st.hold_p[k] += d
                st.hold_p[K] += d
    st.evi[E_RELAXED] += relaxed
    commit_start(j, t, fluid, jobs, plat, st, out)
    st.started[j] = 1
    if (st.fin[j] > shadow + FINISH_RTOL * abs(shadow)) == ends_before:
        # It ends on the other side of the reservation than planned (its own traffic,
        # the tie tolerance): the reservation is replayed at the next event.
        st.evi[E_SHEAD] = 0
    return True


@helper
def _room_bounds(st):
    """The head's room at the reservation before any backfilled job runs past it.

    The room ``sum_k min(free_s[k] - hold[k] - x_k, allow_h[k])`` that the
    backfill rule tests for a job of allocation ``x`` is at most ``room0 =
    sum_k min(free_s[k] - hold[k], allow_h[k])``. It changes only when
    ``hold`` does, and so does ``st.slack_h`` (for :func:`_room_left` and
    :func:`_late_width`), which this fills. Returns ``room0``.
    """
    room0 = 0
    for k in range(st.free.shape[0]):
        a = st.free_s[k] - st.hold[k]
        room0 += min(a, st.allow_h[k])
        st.slack_h[k] = max(0, a - st.allow_h[k])
    return room0


@njit(cache=True, forceinline=True, error_model="numpy", _nrt=False)
def _late_width(m, by_mask, free, slack_h, room0, need):
    """The widest job of candidate group ``m`` that may run past the reservation.

    By :func:`_room_left`, a job of ``n`` tasks that cannot end by the
    reservation leaves the head room only if ``n <= room0 - need + sum_k
    min(free[k], allow[k], slack_h[k])``; its allowance is zero outside its
    cluster set, which is the group ``m`` when ``by_mask``, so the sum over
    that set of ``min(free[k], slack_h[k])`` bounds it for every job of the
    group. Returns -1 when no job of the group can (``room0 < need``). The
    bound only falls while one scan starts jobs, as the index requires, and
    it keeps out the many candidates whose allowed clusters hold no node the
    head could spare.
    """
    if room0 < need:
        return -1
    y = room0 - need
    for k in range(free.shape[0]):
        if not by_mask or (m >> k) & 1:
            y += min(free[k], slack_h[k])
    return y


@njit(cache=True, forceinline=True, error_model="numpy", _nrt=False)
def _room_left(n, free, allow, slack_h, room0):
    """The most room any allocation of ``n`` tasks within ``min(free, allow)`` leaves the head.

    With ``a_k = free_s[k] - hold[k]`` and ``h_k = allow_h[k]``, a job
    holding ``x_k`` nodes of cluster k past the reservation leaves the head
    ``min(a_k - x_k, h_k) = min(a_k, h_k) - max(0, x_k - slack_h[k])`` there:
    only the nodes beyond the slack ``max(0, a_k - h_k)`` cost the head any.
    Over the allocations the allowance admits, the room is therefore at most
    ``room0 - max(0, n - sum_k min(free_k, allow_k, slack_h[k]))``. A
    candidate that cannot end by the reservation and fails this bound would
    fail the exact test too, so skipping it before its allocation is
    computed changes no schedule.
    """
    spare = 0
    for k in range(free.shape[0]):
        spare += min(min(free[k], allow[k]), slack_h[k])
    return room0 - max(0, n - spare)


@helper
def _head_power_after(head, j, jobs, plat, st, alloc):
    """Would the head still fit the power budgets at its reservation if ``j`` ran past it?

    The head then has the nodes free at the reservation less those promised
    past it (``hold``) and ``j``'s, and the budgets less the increments of
    the jobs still running then (``pks``), of those promised (``hold_p``)
    and of ``j``.
    """
    K = st.free.shape[0]
    tot = 0.0
    for k in range(K):
        st.free_h[k] = max(0, st.free_s[k] - st.hold[k] - alloc[j, k])
        d = alloc[j, k] * node_increment(j, k, jobs, plat) if alloc[j, k] > 0 else 0.0
        st.pkh[k] = st.pks[k] + st.hold_p[k] + d
        tot += d
    st.pkh[K] = st.pks[K] + st.hold_p[K] + tot
    return least_power(head, jobs, plat, st.free_h, st.allow_h, st.pkh, st.rk, st.xs)


@helper
def _shadow(t, head, jobs, plat, st, out, capped):
    """The head's reservation: replay the running jobs' planned ends until it fits.

    It fits when its allowed nodes hold it and (under a power cap) its
    least-power allocation fits the budgets left by the jobs still running.
    Fills ``st.free_s`` with the nodes free at the reservation and ``st.pks``
    with the increments still drawn then (every job finishing with the last
    one replayed counted gone), clears ``st.hold`` and ``st.hold_p``.
    Returns the time.
    """
    K = st.free.shape[0]
    need = jobs.tasks[head]
    alloc = out.alloc
    free_s, sh_t, sh_j = st.free_s, st.sh_t, st.sh_j
    for k in range(K):
        free_s[k] = st.free[k]
        st.hold[k] = 0
    for k in range(K + 1):
        st.pks[k] = st.pk[k]
        st.hold_p[k] = 0.0
    # The finishes in time order without copying the event heap: a second heap holds the
    # frontier of the event heap's nodes (code i >= 0 for node i, whose children join when
    # it is taken) and the re-rated co-allocated jobs (code -1 - job), so a replay that
    # stops after m finishes costs O(m log m), not the number of running jobs.
    # Planning on estimates, the planned ends need not follow the event heap's order: every
    # running job then joins the second heap (O(R log R)).
    nh = st.evi[E_NH]
    n_sh = 0
    if st.evi[E_PLAN] != 0:
        for i in range(nh):
            n_sh = heap_push(sh_t, sh_j, n_sh, planned_end(st.hj[i], t, jobs, st, out), -1 - st.hj[i])
        nh = 0
    elif nh > 0:
        n_sh = heap_push(sh_t, sh_j, n_sh, st.ht[0], 0)
    for i in range(st.evi[E_NCL]):
        r = st.cl[i]
        n_sh = heap_push(sh_t, sh_j, n_sh, planned_end(r, t, jobs, st, out), -1 - r)
    shadow = t
    while n_sh > 0 and (not _head_fits(head, need, jobs, plat, st, capped)
                        or sh_t[0] <= shadow + FINISH_RTOL * abs(shadow)):
        # Until the head fits, then every job finishing together with the last one.
        shadow = max(shadow, sh_t[0])
        code = sh_j[0]
        n_sh = heap_pop(sh_t, sh_j, n_sh)
        if code >= 0:
            r = st.hj[code]
            c = 2 * code + 1
            if c < nh:
                n_sh = heap_push(sh_t, sh_j, n_sh, st.ht[c], c)
            if c + 1 < nh:
                n_sh = heap_push(sh_t, sh_j, n_sh, st.ht[c + 1], c + 1)
        else:
            r = -1 - code
        for k in range(K):
            free_s[k] += alloc[r, k]
        if capped:
            unpower(r, jobs, plat, alloc, st.pks)
    return shadow


@helper
def _head_fits(head, need, jobs, plat, st, capped):
    if not fits(need, st.free_s, st.allow_h):
        return False
    if not capped:
        return True
    return least_power(head, jobs, plat, st.free_s, st.allow_h, st.pks, st.rk, st.xs)


@helper
def _start_prb(t, fluid, jobs, plat, st, out, blacklist, weight, ties):
    """PRB at time ``t``: rank the queue, start every ranked job that fits now, postpone the rest.

    Rank: decreasing ``weight[j] * (t - release[j] + 1)`` (``weight`` is
    ``max_ewt / ewt`` of the job's queue), ties by increasing duration x
    nodes, then index: ``ties[0]`` is each job's place in that tie order,
    ``ties[1]`` the jobs in it. The event heap ranks by (negated key, tie
    place). No reservation. Returns the next arrival.
    """
    K = st.free.shape[0]
    _enqueue(t, jobs, st)
    n = 0
    wq = st.wq[st.evi[E_QH]:]
    for q in range(st.evi[E_NQ]):
        j = wq[q]
        n = heap_push(st.sh_t, st.sh_j, n, -weight[j] * (t - jobs.release[j] + 1.0), ties[0, j])
    free_total = 0
    for k in range(K):
        free_total += st.free[k]
    while n > 0 and free_total > 0:
        j = ties[1, st.sh_j[0]]
        n = heap_pop(st.sh_t, st.sh_j, n)
        if jobs.tasks[j] <= free_total and _try_start(j, t, fluid, jobs, plat, st, out, blacklist):
            free_total -= jobs.tasks[j]
    return _dequeue_started(jobs, st, 0, 0)


@helper
def _start_listed(t, fluid, jobs, plat, st, out, blacklist, listed, n):
    """Start the jobs ``listed[:n]`` (queued, in that order) that fit now; returns the next arrival."""
    for i in range(n):
        j = listed[i]
        if st.started[j] == 0:
            _try_start(j, t, fluid, jobs, plat, st, out, blacklist)
    return _dequeue_started(jobs, st, 0, 0)


@helper
def _init(jobs, plat, st, out, order, queued):
    """Reset the work arrays and outputs for a new decode (``queued``: the rules with a queue)."""
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
    if queued:
        for i in range(J):
            st.started[i] = 0
            st.pos_of[order[i]] = i
    reset_events(st)


@helper
def _arrival_order(jobs, st):
    """``st.by_release``: the jobs by (release, index), a heap sort.

    It depends on the job set alone, so a batch decode sorts once for all its
    rows; the rules with a queue (:func:`_init` with ``queued``) read it.
    """
    J = jobs.release.shape[0]
    n = 0
    for i in range(J):
        n = heap_push(st.sh_t, st.sh_j, n, jobs.release[i], i)
    for i in range(J):
        st.by_release[i] = st.sh_j[0]
        n = heap_pop(st.sh_t, st.sh_j, n)


@njit(cache=True, nogil=True, error_model="numpy", _nrt=False)
def _decode(jobs, plat, orders, blacklists, model, mode, lo, hi, st, out, weight, ties, out_f,
            out_i, out_starts, out_alloc):
    """Decode chromosomes ``lo`` to ``hi - 1`` of a population: the event loop of every federated decode.

    Parameters
    ----------
    jobs, plat, st, out : named tuples
        See :mod:`decoders._federated_core`; ``st`` is work space, ``out`` is filled.
    orders : int64[:, :]
        (P, J): each row a permutation of the jobs, the placement order (the
        queue order under EASY).
    blacklists : float64[:, :, :]
        (P, J, K) fractions in [0, 1].
    model : int
        ``MODELS`` code (0 fluid, 1 at_start).
    mode : int
        The rule's code: 0 strict order (:func:`_start_in_order`), 1 EASY
        (:func:`_start_easy`), 2 PRB (:func:`_start_prb`).
    lo, hi : int
        The rows to decode; every row reuses the work arrays ``st``, and
        ``out`` holds the schedule of the last one.
    weight, ties : float64[:], int64[:, :]
        PRB's queue weights and tie order (see :func:`_start_prb`; unused by the
        other rules).
    out_f, out_i : float64[:, :], int64[:, :]
        (P, 3) and (P, 2): row p's ``(makespan, energy, flowtime)`` and
        ``(n_relaxed, n_coalloc)``.
    out_starts : float64[:, :]
        With P rows, ``out_starts[p, i]`` receives the start of job
        ``orders[p, i]``; shape (0, J) skips it.
    out_alloc : int32[:, :, :]
        With P rows, ``out_alloc[p]`` receives row p's allocation (J, K);
        shape (0, J, K) skips it.

    At each event (a finish or an arrival) the jobs finishing by then release
    their nodes, then the rule starts what it can; time moves to the next
    finish or arrival until every job has started.

    One kernel serves one chromosome and a population alike, so a first use
    compiles the loop once; it runs without the GIL, and :func:`run_rows`
    decodes a population in threads, one contiguous chunk each.
    """
    J = orders.shape[1]
    fluid = model == 0
    want_starts = out_starts.shape[0] > 0
    want_alloc = out_alloc.shape[0] > 0
    plan = plans_on_estimates(jobs)
    if mode != 0 and hi > lo:
        _arrival_order(jobs, st)
    for p in range(lo, hi):
        order, blacklist = orders[p], blacklists[p]
        _init(jobs, plat, st, out, order, mode != 0)
        st.evi[E_PLAN] = plan
        if mode == 1:
            allowances(blacklist, jobs, plat, st)
            st.evi[E_NACT] = build_index(order, st, plat.nodes.shape[0] <= TABLE_K)
        t = 0.0
        while st.evi[E_STARTED] < J:
            t = release_due(t + FINISH_RTOL * abs(t), t, fluid, jobs, plat, st, out)
            if mode == 1:
                t_arrival = _start_easy(t, fluid, jobs, plat, st, out, order, blacklist)
            elif mode == 2:
                t_arrival = _start_prb(t, fluid, jobs, plat, st, out, blacklist, weight, ties)
            else:
                t_arrival = _start_in_order(t, fluid, jobs, plat, st, out, order, blacklist)
            if st.evi[E_STARTED] == J:
                break
            nxt = min(next_finish(st), t_arrival)
            if nxt == np.inf:  # cannot happen: a waiting job always fits an idle federation
                break
            t = max(t, nxt)
        release_due(np.inf, t, fluid, jobs, plat, st, out)
        out_f[p, 0], out_f[p, 1], out_f[p, 2] = objectives(jobs, plat, out)
        out_i[p, 0] = st.evi[E_RELAXED]
        out_i[p, 1] = st.evi[E_COALLOC]
        if want_starts:
            for i in range(J):
                out_starts[p, i] = out.start[order[i]]
        if want_alloc:
            for i in range(J):
                for k in range(out.alloc.shape[1]):
                    out_alloc[p, i, k] = out.alloc[i, k]


_POOL = [None, 0, 0]  # the decode threads: executor, its size, the process that made it


def _executor(n):
    """A pool of at least ``n`` threads, made again in a forked child (whose threads are gone)."""
    pool, size, pid = _POOL
    if pool is None or size < n or pid != os.getpid():
        if pool is not None and pid == os.getpid():
            pool.shutdown(wait=False)  # too small: its idle threads end
        pool = ThreadPoolExecutor(max_workers=n, thread_name_prefix="moga-decode")
        _POOL[:] = [pool, n, os.getpid()]
    return pool


def run_rows(jobs, plat, orders, blacklists, model, mode, weight=None, ties=None, n_chunks=1,
             starts=False, allocs=False):
    """Run :func:`_decode` over every row of ``orders`` (P, J) and ``blacklists`` (P, J, K).

    ``n_chunks`` contiguous chunks run in as many threads, each with its own
    work arrays. Returns ``(out_f, out_i, out_starts, out_alloc, out)``:
    objectives (P, 3), counters (P, 2), start times by order position (P, J)
    when ``starts`` (else None), every row's allocation (P, J, K) when
    ``allocs`` (else None), and the last chunk's :data:`Out`, which holds the
    last row's schedule.
    """
    P, J = orders.shape
    K = plat.nodes.shape[0]
    # Fresh writable copies, so that every call has the kernel's one signature.
    weight = np.array([] if weight is None else weight, dtype=np.float64)
    ties = np.array(np.zeros((2, 0)) if ties is None else ties, dtype=np.int64)
    out_f = np.empty((P, 3))
    out_i = np.empty((P, 2), dtype=np.int64)
    out_s = np.empty((P if starts else 0, J))
    out_a = np.empty((P if allocs else 0, J, K), dtype=np.int32)
    n_chunks = max(1, min(P, n_chunks))
    outs = [new_out(J, K) for _ in range(n_chunks)]

    def chunk(c):
        _decode(jobs, plat, orders, blacklists, model, mode, c * P // n_chunks,
                (c + 1) * P // n_chunks, new_state(J, K), outs[c], weight, ties, out_f, out_i,
                out_s, out_a)

    if n_chunks == 1:
        chunk(0)
    else:
        list(_executor(n_chunks).map(chunk, range(n_chunks)))
    return out_f, out_i, (out_s if starts else None), (out_a if allocs else None), outs[-1]


# Steps of the event loop for a driver outside it, in Python (the hybrid CP dispatcher
# solves a model between them, moga.sim.Session) or in Numba (decoders.online,
# decoders.realtime): _step_init (or _step_init_easy), then per event _step_begin
# (release, queue the arrivals) and _step_map (start a given list of queued jobs) or
# _step_easy (EASY over the queue), then _step_end. _step_preempt stops a running job
# and queues it again; _step_stop and _step_requeue are its two halves, for a driver
# that holds a stopped job back for a while; _step_drop takes a queued job away for
# good; _step_claim keeps free nodes out of use.
@njit(cache=True, error_model="numpy", _nrt=False)
def _step_init(jobs, plat, st, out, order):
    _init(jobs, plat, st, out, order, True)
    _arrival_order(jobs, st)
    st.evi[E_PLAN] = plans_on_estimates(jobs)


@njit(cache=True, error_model="numpy", _nrt=False)
def _step_init_easy(jobs, plat, st, out, order, blacklist):
    """:func:`_step_init` for a driver that calls :func:`_step_easy`: EASY's candidate
    index over ``order`` is built and the steps keep it up to date (``E_INDEX``)."""
    _step_init(jobs, plat, st, out, order)
    allowances(blacklist, jobs, plat, st)
    st.evi[E_NACT] = build_index(order, st, plat.nodes.shape[0] <= TABLE_K)
    st.evi[E_INDEX] = 1


@njit(cache=True, error_model="numpy", _nrt=False)
def _step_begin(t, model, jobs, plat, st, out):
    t = release_due(t + FINISH_RTOL * abs(t), t, model == 0, jobs, plat, st, out)
    arrived = st.evi[E_CURSOR]
    _enqueue(t, jobs, st)
    if st.evi[E_INDEX] != 0:
        add_jobs(arrived, st.evi[E_CURSOR], st.by_release, jobs.tasks, jobs.est, st,
                 plat.nodes.shape[0] <= TABLE_K)
    return t


@njit(cache=True, error_model="numpy", _nrt=False)
def _step_map(t, model, jobs, plat, st, out, blacklist, listed, n):
    """Start ``listed[:n]`` where they fit; returns the next finish or arrival."""
    t_arrival = _start_listed(t, model == 0, jobs, plat, st, out, blacklist, listed, n)
    if st.evi[E_INDEX] != 0:
        for i in range(n):
            if st.started[listed[i]] == 1:
                set_leaf(listed[i], EMPTY, np.inf, st, plat.nodes.shape[0] <= TABLE_K)
    return min(next_finish(st), t_arrival)


@njit(cache=True, error_model="numpy", _nrt=False)
def _step_easy(t, model, jobs, plat, st, out, order, blacklist):
    """EASY backfilling over the queue in ``order`` (the order of :func:`_step_init_easy`)
    at ``t``; returns the next finish or arrival. The jobs it starts are in the event
    heap with ``started`` 1."""
    t_arrival = _start_easy(t, model == 0, jobs, plat, st, out, order, blacklist)
    return min(next_finish(st), t_arrival)


@njit(cache=True, error_model="numpy", _nrt=False)
def _step_stop(t, model, jobs, plat, st, out, r):
    """Stop running job ``r`` at ``t``, out of the queue (``started`` 3) until
    :func:`_step_requeue`.

    Its nodes, power and link traffic are released as its finish at ``t``
    would release them (other co-allocated jobs are re-rated) and its
    allocation is cleared. Returns its work left, s on a speed-1.0 node.
    """
    left = (st.fin[r] - t) / st.sd[r]
    st.fin[r] = t
    nh = st.evi[E_NH]
    in_heap = False
    for i in range(nh):
        if st.hj[i] == r:  # lower its key to t: sift up
            while i > 0:
                p = (i - 1) >> 1
                if st.ht[p] < t or (st.ht[p] == t and st.hj[p] < r):
                    break
                st.ht[i] = st.ht[p]
                st.hj[i] = st.hj[p]
                i = p
            st.ht[i] = t
            st.hj[i] = r
            in_heap = True
            break
    if not in_heap:  # a re-rated co-allocated job
        st.evf[0] = min(st.evf[0], t)
    release_due(t, t, model == 0, jobs, plat, st, out)
    st.coal[r] = 0  # a restart on one cluster is not co-allocated
    for k in range(out.alloc.shape[1]):
        out.alloc[r, k] = 0
    st.started[r] = 3
    st.evi[E_STARTED] -= 1
    st.evi[E_SHEAD] = 0  # a planned end moved: EASY's next reservation afresh
    return left


@njit(cache=True, error_model="numpy", _nrt=False)
def _step_requeue(jobs, plat, st, r):
    """Queue job ``r``, stopped by :func:`_step_stop`, again at its place in the order.

    The queue first moves to the front of ``wq``, without the jobs in it that
    no longer wait (EASY's holes, stopped jobs); its next start runs for
    ``jobs.runtime[r]``.
    """
    qh, nq = st.evi[E_QH], st.evi[E_NQ]
    m = 0
    for i in range(nq):
        j = st.wq[qh + i]
        if st.started[j] == 0 and j != r:
            st.wq[m] = j
            m += 1
    i = m
    while i > 0 and st.pos_of[st.wq[i - 1]] > st.pos_of[r]:
        st.wq[i] = st.wq[i - 1]
        i -= 1
    st.wq[i] = r
    st.evi[E_QH] = 0
    st.evi[E_NQ] = m + 1
    st.evi[E_HOLES] = 0
    st.started[r] = 0
    if st.evi[E_INDEX] != 0:
        set_leaf(r, jobs.tasks[r], jobs.est[r], st, plat.nodes.shape[0] <= TABLE_K)


@njit(cache=True, error_model="numpy", _nrt=False)
def _step_preempt(t, model, jobs, plat, st, out, r):
    """Stop running job ``r`` at ``t`` and queue it again at its place.

    Its nodes, power and link traffic are released as its finish at ``t``
    would release them (other co-allocated jobs are re-rated), its
    allocation is cleared, and it joins the waiting queue at its place in the
    order. Returns its work left, s on a speed-1.0 node.
    """
    left = _step_stop(t, model, jobs, plat, st, out, r)
    _step_requeue(jobs, plat, st, r)
    return left


@njit(cache=True, error_model="numpy", _nrt=False)
def _step_claim(st, k, n):
    """Keep ``n`` free nodes of cluster ``k`` out of use (a negative ``n`` gives them back):
    for a job that waits for them, outside the queue. EASY's next reservation is
    computed afresh."""
    st.free[k] -= n
    st.evi[E_SHEAD] = 0


@njit(cache=True, error_model="numpy", _nrt=False)
def _step_drop(jobs, st, out, r):
    """Take queued job ``r`` out of the queue for good: it never runs.

    It counts as settled (``E_STARTED``, so the loop can end) with
    ``started`` 2, NaN start and finish and no allocation; the next mapping
    drops it from the queue as it drops started jobs.
    """
    st.started[r] = 2
    st.evi[E_STARTED] += 1
    out.start[r] = np.nan
    out.finish[r] = np.nan
    for k in range(out.alloc.shape[1]):
        out.alloc[r, k] = 0


@njit(cache=True, error_model="numpy", _nrt=False)
def _step_end(t, model, jobs, plat, st, out):
    release_due(np.inf, t, model == 0, jobs, plat, st, out)
    m, e, fl = objectives(jobs, plat, out)
    return m, e, fl


# -------------------------------------------------------------------- wrappers
def bundles(arrs, rank_pick, rank_fast, rank_slow, orders, blacklists, power=None, budget=None,
            estimate=None, consolidate=False):
    """``(jobs, plat, orders, blacklists)``: read-only arrays, jobs and platform as named tuples.

    ``power`` (J,) defaults to 1.0 per job, ``budget`` (K + 1,) to no cap,
    ``estimate`` (J,, what EASY plans with) to the run times; ``consolidate``
    makes the pick consolidate (``rank_pick`` then breaks its ties).
    """
    J, K = arrs[0].shape[0], arrs[5].shape[0]
    power = np.ones(J) if power is None else power
    budget = np.full(K + 1, np.inf) if budget is None else budget
    estimate = arrs[2] if estimate is None else estimate
    a = readonly(*arrs[:5], power, estimate, *arrs[5:], rank_pick, rank_fast, rank_slow, budget,
                 np.array([int(bool(consolidate))], dtype=np.int64), orders, blacklists)
    return Jobs(*a[0:7]), Platform(*a[7:17]), a[17], a[18]


def pick_rank(rule_code, fastest, greenest):
    """The pick order of allocation rule ``rule_code`` (:data:`RULES`) and whether it
    consolidates (the fastest order breaks its ties)."""
    return (greenest if rule_code == 1 else fastest), rule_code == 2


def check_estimate(estimate, J):
    """Validated planning times (J,) of EASY, s on a speed-1.0 node, or None (plan on run times)."""
    if estimate is None:
        return None
    return check_vector("estimate", estimate, J, np.float64, lo=0, lo_strict=True)


class CapInfeasibleError(ValueError):
    """Jobs that no schedule can run under the power caps; ``job`` is the first one's
    position, ``count`` how many there are."""

    def __init__(self, job: int, count: int, message: str):
        super().__init__(message)
        self.job = job
        self.count = count


def _budgets(nodes, power_idle, power_cap, cluster_caps):
    """The power the running jobs may add to idle power: per cluster, then overall (K + 1;
    ``inf`` where uncapped)."""
    K = nodes.shape[0]
    budget = np.full(K + 1, np.inf)
    if cluster_caps is not None:
        caps = np.asarray(cluster_caps, dtype=np.float64)
        if caps.shape != (K,) or np.isnan(caps).any():
            raise ValueError(f"cluster_caps must hold one number (or inf) per cluster ({K}), "
                             f"got {cluster_caps!r}")
        budget[:K] = caps - nodes * power_idle
    if power_cap is not None:
        budget[K] = float(power_cap) - float(np.dot(nodes, power_idle))
    return budget


def power_inputs(tasks, power, nodes, power_busy, power_idle, power_cap=None, cluster_caps=None):
    """Validated power factors (J,) and budgets (K + 1,) of a decode, or ``(None, None)``.

    The budgets are the caps less idle power (per cluster, then overall;
    ``inf`` for none). Under a cap every job must fit an idle federation on
    its least-power allocation (its tasks on the nodes with the smallest
    increment), or it could never start: the error names the first that
    does not.
    """
    J, K = tasks.shape[0], nodes.shape[0]
    if power is None and power_cap is None and cluster_caps is None:
        return None, None
    power = np.ones(J) if power is None else check_vector("power", power, J, np.float64, lo=0,
                                                          lo_strict=True)
    budget = _budgets(nodes, power_idle, power_cap, cluster_caps)
    if (budget <= 0).any():
        where = "the federation" if budget[K] <= 0 else f"cluster {int(np.flatnonzero(budget <= 0)[0])}"
        raise ValueError(f"the power cap of {where} does not exceed its idle power: no job "
                         "could ever run")
    if np.isfinite(budget).any():
        need = _idle_least_power(tasks, power, nodes, power_busy, power_idle, budget)
        bad = ~np.isfinite(need)
        if bad.any():
            j = int(np.flatnonzero(bad)[0])
            raise CapInfeasibleError(
                j, int(bad.sum()),
                f"job {j} ({tasks[j]} tasks, power factor {power[j]:g}) cannot run under the power "
                f"cap even on an idle federation (its least-power allocation needs more than the "
                f"budgets left by idle power: {budget.tolist()} W); raise the cap or drop the job")
    return power, budget


def runnable_under_cap(tasks, power, nodes, power_busy, power_idle, power_cap=None,
                       cluster_caps=None) -> np.ndarray:
    """Which jobs can run under the caps at all: on an idle federation, their least-power
    allocation fits the budgets the caps leave above idle power (bool, shape (J,))."""
    tasks = np.asarray(tasks, dtype=np.int64)
    budget = _budgets(np.asarray(nodes), np.asarray(power_idle, dtype=np.float64), power_cap,
                      cluster_caps)
    if not np.isfinite(budget).any():
        return np.ones(tasks.shape[0], dtype=bool)
    power = np.ones(tasks.shape[0]) if power is None else np.asarray(power, dtype=np.float64)
    return np.isfinite(_idle_least_power(tasks, power, np.asarray(nodes),
                                         np.asarray(power_busy, dtype=np.float64),
                                         np.asarray(power_idle, dtype=np.float64), budget))


def _idle_least_power(tasks, power, nodes, power_busy, power_idle, budget):
    """Each job's least-power increment on an idle federation (inf where it does not fit)."""
    inc = np.maximum(power[:, None] * power_busy[None, :] - power_idle[None, :], 0.0)
    J, K = inc.shape
    order = np.lexsort((np.broadcast_to(np.arange(K), (J, K)), inc), axis=1)
    rem = tasks.astype(np.int64).copy()
    total = np.zeros(J)
    rows = np.arange(J)
    for i in range(K):
        k = order[:, i]
        ik = inc[rows, k]
        n = np.minimum(nodes[k], rem)
        lim = np.where((ik > 0) & np.isfinite(budget[k]),
                       np.floor(np.divide(budget[k], ik, out=np.full(J, np.inf), where=ik > 0)),
                       np.inf)
        n = np.minimum(n, np.maximum(lim, 0)).astype(np.int64)
        rem -= n
        total += n * ik
    return np.where((rem == 0) & (total <= budget[K]), total, np.inf)


def _options(model, backfill, rule):
    return (choice_code("execution model", model, MODELS),
            choice_code("backfilling", backfill, BACKFILL),
            choice_code("allocation rule", rule, RULES))


def decode(release, tasks, runtime, sigma, bw, nodes, speed, power_busy, power_idle, link,
           order, blacklist, model: str = "fluid", check: bool = True, backfill: str = "none",
           rule: str = "fastest", power=None, power_cap=None, cluster_caps=None,
           estimate=None) -> FederatedDecode:
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
    rule : {"fastest", "greenest", "consolidate"}
        Allocation rule: which clusters a job takes nodes from first (module
        docstring).
    power : array_like of float, shape (J,), optional
        Per-job power factors (> 0; default 1): a node running job j on
        cluster k draws ``power[j] * power_busy[k]`` W (docs/design.md §11).
    power_cap : float, optional
        The federation's power budget, W: idle power plus the running jobs'
        increments never exceeds it. A job starts only when it fits (the
        rule's allocation, else its least-power one); EASY's reservation
        counts power as a second resource.
    cluster_caps : array_like of float, shape (K,), optional
        Per-cluster budgets, W (``inf`` for none).
    estimate : array_like of float, shape (J,), optional
        What EASY plans with (> 0, s on a speed-1.0 node), typically the
        requested times: the reservation replays the running jobs' planned
        ends (predicted duration x ``estimate / runtime``, never before now)
        and a job backfills if it is planned to end by the reservation. The
        jobs still run their real time. Default: the run times (exact
        planning). Ignored without backfilling.

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
    pw, budget = power_inputs(arrs[1], power, arrs[5], arrs[7], arrs[8], power_cap, cluster_caps)
    fastest, greenest, slowest = allocation_ranks(arrs[6], arrs[7])
    pick, consolidate = pick_rank(rule_code, fastest, greenest)
    jobs, plat, order, blacklist = bundles(arrs, pick, fastest, slowest, order, blacklist, pw,
                                           budget, check_estimate(estimate, J), consolidate)
    f, i, _, _, out = run_rows(jobs, plat, order[None], blacklist[None], code, easy)
    return FederatedDecode(out.start, out.finish, out.alloc, float(f[0, 0]), float(f[0, 1]),
                           float(f[0, 2]), int(i[0, 0]), int(i[0, 1]), out.reserve)


def start_orders_of(orders, at):
    """Each row's jobs by start time, ties in the row's order: ``at`` (P, J) holds the
    start times by order position of ``orders`` (P, J). A stable sort keeps the ties."""
    return np.take_along_axis(orders, np.argsort(at, axis=1, kind="stable"), axis=1)


def decode_batch(release, tasks, runtime, sigma, bw, nodes, speed, power_busy, power_idle, link,
                 orders, blacklists, model: str = "fluid", check: bool = True,
                 backfill: str = "none", rule: str = "fastest", power=None, power_cap=None,
                 cluster_caps=None, start_orders: bool = False, estimate=None,
                 starts: bool = False, allocations: bool = False) -> BatchDecode:
    """Decode a population of chromosomes in parallel (Numba threads).

    Parameters
    ----------
    orders : array_like of int, shape (P, J)
        One permutation of ``range(J)`` per individual.
    blacklists : array_like of float, shape (P, J, K)
        One blacklist per individual, entries in [0, 1].

    start_orders : bool
        Also return each schedule's start order (its jobs by start time, ties
        in the chromosome's order), shape (P, J).
    starts : bool
        Also return each job's start time, shape (P, J).
    allocations : bool
        Also return each schedule's nodes per job and cluster, shape (P, J, K).

    Other parameters are as in :func:`decode`.

    Returns
    -------
    BatchDecode
        ``makespan``, ``energy``, ``flowtime`` (float arrays, shape (P,)) and the
        counters ``n_relaxed``, ``n_coalloc`` (int arrays, shape (P,));
        ``start_orders`` (int64, (P, J)), ``starts`` and ``alloc`` when asked
        for, else None.
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
    pw, budget = power_inputs(arrs[1], power, arrs[5], arrs[7], arrs[8], power_cap, cluster_caps)
    fastest, greenest, slowest = allocation_ranks(arrs[6], arrs[7])
    pick, consolidate = pick_rank(rule_code, fastest, greenest)
    jobs, plat, orders, blacklists = bundles(arrs, pick, fastest, slowest, orders, blacklists, pw,
                                             budget, check_estimate(estimate, J), consolidate)
    # Handing rows to threads costs more than decoding a small batch in this one.
    threads = get_num_threads() if orders.size >= THREAD_MIN_SLOTS else 1
    out_f, out_i, at, alloc, _ = run_rows(jobs, plat, orders, blacklists, code, easy,
                                          n_chunks=threads, starts=start_orders or starts,
                                          allocs=allocations)
    by_start = by_job = None
    if start_orders:
        by_start = start_orders_of(orders, at)
    if starts:  # ``at`` is by order position
        by_job = np.empty_like(at)
        np.put_along_axis(by_job, orders, at, axis=1)
    return BatchDecode(out_f[:, 0].copy(), out_f[:, 1].copy(), out_f[:, 2].copy(),
                       out_i[:, 0].copy(), out_i[:, 1].copy(), by_start, by_job, alloc)
