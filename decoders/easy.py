"""The one EASY backfilling of the project, on the federated loop's state.

:func:`start_easy` is the rule at one event: arrivals join the queue in the
order; queued jobs start from the front while they fit (nodes and power);
the first that does not (the head) gets a reservation at the earliest time
the running jobs' planned ends free enough allowed nodes (and power) for it
(:func:`_shadow`); a later queued job that fits now starts if it is planned
to end by the reservation or leaves the head enough allowed nodes and power
then (:func:`_backfill`). The candidates come from the index of
:mod:`decoders._backfill_index`, whose power floors keep out, under a cap, the
jobs that could not add their power now. The batch decoder (:mod:`decoders.federated`)
and the steps (:func:`decoders.steps.easy`) call it; every helper is inlined.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._backfill_index import (
    EMPTY,
    FLOOR_MARGIN,
    add_jobs,
    fallback_tiers,
    group_may_pass,
    leaf_after,
    search_group,
    set_leaf,
)
from ._federated_core import (
    E_CURSOR,
    E_HOLES,
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
    cluster_mask,
    commit_start,
    fits,
    free_by_mask,
    is_capped,
    least_power,
    node_increment,
    place,
    planned_end,
    unpower,
)
from ._kernels import FINISH_RTOL, heap_pop, heap_push, helper, slowdown
from ._queue import dequeue_started, enqueue, try_start

#: Waiting jobs (the head included) up to which the backfill loop scans the queue in
#: order, each job past the free-node test going to :func:`_backfill`, instead of
#: searching the candidate index; the jobs started are the same either way.
SCAN_MAX = 32


@helper
def slowdown_floor(plat):
    """A lower bound of any job's slowdown: ``min(1, 1 / fastest speed)`` (SP >= 1 / P_max,
    SC >= 1), less a margin that keeps it below the slowdown computed in floats."""
    sd_min = 1.0
    for k in range(plat.speed.shape[0]):
        sd_min = min(sd_min, 1.0 / plat.speed[k])
    return sd_min * (1.0 - 1e-9)


@helper
def start_easy(t, fluid, jobs, plat, st, out, order, blacklist):
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
    per speed tier, :func:`_speed_tiers`, or are narrow enough,
    :func:`_late_width` or a tier's late width, to leave the head its nodes)
    are visited, and the bounds of these tests only tighten as jobs start,
    so each group's next candidate is searched from where it stood. A queue
    of at most :data:`SCAN_MAX` jobs is scanned in order instead. The
    allowance comes from the table of :func:`allowances`, so the full test is
    a K-term sum, and a candidate that cannot end by the reservation is
    allocated only if :func:`_room_left` says some allocation could leave
    the head room. Started jobs behind the head stay in ``wq`` as holes until
    they are half of it.
    """
    K = st.run.free.shape[0]
    tasks = jobs.tasks
    free = st.run.free
    capped = is_capped(plat)
    by_mask = K <= TABLE_K
    arrived = st.evi[E_CURSOR]
    enqueue(t, jobs, st)
    add_jobs(arrived, st.evi[E_CURSOR], st.queue.by_release, tasks, jobs.est, jobs.sigma, st,
             by_mask)
    wq = st.queue.wq[st.evi[E_QH]:]
    nq = st.evi[E_NQ]
    holes = st.evi[E_HOLES]
    head = -1
    hq = 0
    while hq < nq:
        j = wq[hq]
        if st.queue.started[j]:
            holes -= 1  # a hole reached the front
        elif try_start(j, t, fluid, jobs, plat, st, out, blacklist):
            set_leaf(j, np.int64(EMPTY), np.inf, st, by_mask, 0.0)
        else:
            head = j
            break
        hq += 1

    if head >= 0:
        free_total = np.int64(0)
        for k in range(K):
            st.resv.allow_h[k] = st.run.allow[k]
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
        sd_min = slowdown_floor(plat)
        need = tasks[head]
        room0 = _room_bounds(st)
        allow_j, free_in = st.scan.allow_j, st.scan.free_in
        free_mask = np.int64(-1)
        if by_mask:
            free_by_mask(free, free_in)
        else:
            free_mask = cluster_mask(free)
        n_act = st.evi[E_NACT]
        # Whether the index's late power test knows each group's first cluster (the
        # pick's order is fixed), and the head's tasks for its least-cost bounds.
        by_k1 = capped and by_mask and plat.consolidate[0] == 0
        hn = tasks[head] if capped else -1
        # Without a cap the greedy pick places a job its first cluster holds there alone
        # (_single_bound); ``skipped`` tells whether that test was on in a search yet.
        single = not capped and plat.consolidate[0] == 0
        skipped = False
        f_bits = np.int64(0)
        hf = 0.0
        # Which groups search for their next candidate before each pick: every group
        # afresh behind queue position ``pos`` (mode 1: the head's at first), every
        # group on from its candidate or, under the first-cluster test (which a start
        # may loosen), afresh behind ``pos`` (mode 2: after a start, the started job's
        # position; without a cap, only the groups whose clusters the start took nodes
        # of, once the single-cluster or tier test was on: _took_from), or only group
        # ``best`` past its refused candidate (mode 0). One call site keeps one
        # inlined copy of the search.
        mode = 1
        pos = st.queue.pos_of[head]
        pos_j = head
        best = -1
        # A short queue is scanned in order (the index's walks cost more than the scan).
        scan = nq - hq <= SCAN_MAX
        q = hq + 1
        while free_total > 0:
            if scan:
                j = -1
                while q < nq:
                    c = wq[q]
                    q += 1
                    if st.queue.started[c] == 0 and (not by_mask
                                                     or free_in[st.scan.mask_j[c]] >= tasks[c]):
                        j = c
                        break
                if j < 0:
                    break
                p_best = st.queue.pos_of[j]
            else:
                if mode != 0:
                    # The clusters with a free node (where a job could add its power now) and
                    # the head's least power at the reservation, at first and after a start.
                    f_bits = cluster_mask(free)
                    if capped:
                        hf = _head_floor(head, jobs, plat, st)
                        _cost_nodes(head, jobs, plat, st)
                for a in range(n_act if mode != 0 else 1):
                    m = st.index.g_act[a] if mode != 0 else best
                    leaf = st.index.g_cand[m]
                    if mode == 1 or (mode == 2 and (by_k1 or (
                        skipped and _took_from(m, by_mask, free, out.alloc[j], plat.rank_pick)))):
                        leaf = -1
                    elif leaf < 0:
                        continue  # the group had no candidate left
                    elif mode == 0:
                        leaf += 1
                    c, tested = _candidate(m, leaf, pos, pos_j, t, plat, st, by_mask, free_total,
                                           f_bits, room0, need, sd_min=sd_min, shadow=shadow,
                                           hf=hf, hn=hn, by_k1=by_k1, single=single)
                    st.index.g_cand[m] = c
                    skipped |= tested
                # The candidate first in queue order.
                best = -1
                p_best = order.shape[0]
                for a in range(n_act):
                    m = st.index.g_act[a]
                    c = st.index.g_cand[m]
                    if c >= 0 and st.index.g_pos[st.index.g_off[m] + c] < p_best:
                        p_best = st.index.g_pos[st.index.g_off[m] + c]
                        best = m
                if best < 0:
                    break
                j = order[p_best]
            started = _backfill(j, t, fluid, jobs, plat, st, out, head, need, shadow, sd_min,
                                room0, free_mask=free_mask, by_mask=by_mask, capped=capped,
                                allow=allow_j[j])
            if started:
                set_leaf(j, np.int64(EMPTY), np.inf, st, by_mask, 0.0)
                holes += 1
                free_total -= tasks[j]
                room0 = _room_bounds(st)
                if by_mask:
                    free_by_mask(free, free_in)
                else:
                    free_mask = cluster_mask(free)
                mode = 2  # the bounds tightened
                pos = p_best
                pos_j = j
            else:
                mode = 0
    st.evi[E_HOLES] = holes
    st.evi[E_SSTART] = st.evi[E_STARTED]
    if 2 * holes > nq - hq:  # compact the whole queue (which clears the hole count)
        return dequeue_started(jobs, st, hq, hq)
    return dequeue_started(jobs, st, hq, nq)


@helper
def _candidate(m, leaf, position, pj, t, plat, st, by_mask, free_total, f_bits, room0, need,
               sd_min, shadow, hf, hn, by_k1, single):
    """Group ``m``'s first backfill candidate (a leaf, -1 when none) from ``leaf``, or, with
    ``leaf < 0``, behind queue position ``position`` (that of job ``pj``), and whether the
    single-cluster test (:func:`_single_bound`, on when ``single``) was on in this search.

    The bounds of the index's cheap tests (:func:`~decoders._backfill_index.first_candidate`)
    at this point of the scan: the free nodes of the group's cluster set, its
    :func:`_late_width`, the clusters of its set with a free node (``f_bits``: those
    of the federation) and their slowdown floor (:func:`_sd_floor` of ``sd_min``), the
    power budgets (with ``hn``, the head's tasks, for the least-cost bounds: -1 uncapped)
    and, with ``by_k1``, the allocation rule's first cluster among them (and, when the
    least-power allocations share one cluster order, the group's fall-back tiers:
    :func:`~decoders._backfill_index.fallback_tiers`), or, without a cap, the bounds of
    the single-cluster test; the speed tiers (:func:`_speed_tiers`) for the uncapped
    walk, whose tier late widths, when on, count as such a test too.
    """
    K = st.run.free.shape[0]
    x = st.scan.free_in[m] if by_mask else free_total
    y = _late_width(m, by_mask, st.run.free, st.resv.slack_h, room0, need)
    fm = m & f_bits if by_mask else f_bits
    sd = st.scan.sd_in[fm] if by_mask else _sd_floor(fm, plat.speed, sd_min)
    nt, tw = _speed_tiers(fm, st.run.free, plat.speed, plat.rank_pick, x, single and by_mask,
                          st.index.tiers, st.resv.slack_h, room0, need, y)
    k1 = -1
    fk1, pk1, b1 = np.int64(0), 0.0, np.inf
    if by_k1:
        for i in range(K):
            k = plat.rank_pick[i]
            if (fm >> k) & 1:
                k1, fk1, pk1, b1 = k, st.run.free[k], st.run.pk[k], plat.budget[k]
                break
    nl = fallback_tiers(st.index, fm, st.run.free, plat.speed, x) if (
        k1 >= 0 and st.index.on[1] != 0) else 0
    y1, z = _single_bound(m, by_mask, st.run.free, st.resv.slack_h, room0, need, y,
                          plat.rank_pick, single)
    pk, cap, lpk = st.run.pk[K], plat.budget[K], st.resv.pks[K] + st.resv.hold_p[K]
    if not group_may_pass(m, st, x, y, t, sd, shadow, pk=pk, cap=cap, fm=fm, lpk=lpk, hf=hf, k1=k1,
                          fk1=fk1, pk1=pk1, b1=b1, hn=hn, y1=y1, z=z, nl=nl):
        return -1, z >= 0 or tw
    if leaf < 0:  # the position is looked up only when the group's root passes
        leaf = leaf_after(m, position, pj, st, by_mask)
    return search_group(m, leaf, st, x, y, t, sd, shadow, pk=pk, cap=cap, fm=fm, lpk=lpk, hf=hf,
                        k1=k1, fk1=fk1, pk1=pk1, b1=b1, hn=hn, y1=y1, z=z, nt=nt,
                        tw=tw, nl=nl), z >= 0 or tw


@helper
def _backfill(j, t, fluid, jobs, plat, st, out, head, need, shadow, sd_min, room0, free_mask,
              by_mask, capped, allow):
    """Start candidate ``j`` now if it fits and does not delay the head's reservation.

    ``allow`` is its allowance (a view of the table: :func:`place` only reads
    it). A job that runs past the reservation holds its nodes and power there
    (``hold``, ``hold_p``).
    """
    K = st.run.free.shape[0]
    tasks = jobs.tasks
    free, alloc = st.run.free, out.alloc
    if not by_mask and st.scan.mask_j[j] & free_mask == 0:
        return False  # no free node on its allowed clusters
    late = t + jobs.est[j] * sd_min > shadow  # cannot end by the reservation (as planned)
    if not fits(tasks[j], free, allow):
        return False
    if late and _room_left(tasks[j], free, allow, st.resv.slack_h, room0) < need:
        return False  # no allocation of it would leave the head room
    relaxed = st.scan.relaxed_j[j]
    if not place(j, jobs, plat, st, alloc, allow):
        return False
    predicted = t + jobs.est[j] * slowdown(jobs.sigma[j], jobs.bw[j], tasks[j], alloc, j,
                                               plat.speed, st.run.load, plat.link, np.bool_(True))
    ends_before = predicted <= shadow
    ok = ends_before
    if not ok:
        room = 0
        for k in range(K):
            room += min(st.resv.free_s[k] - st.resv.hold[k] - alloc[j, k], st.resv.allow_h[k])
        ok = room >= need
        if ok and capped:
            ok = _head_power_after(head, j, jobs, plat, st, alloc)
    if not ok:
        for k in range(K):
            alloc[j, k] = 0
        return False
    if not ends_before:
        for k in range(K):
            st.resv.hold[k] += alloc[j, k]
            if capped and alloc[j, k] > 0:
                d = alloc[j, k] * node_increment(j, k, jobs, plat)
                st.resv.hold_p[k] += d
                st.resv.hold_p[K] += d
    st.evi[E_RELAXED] += relaxed
    commit_start(j, t, fluid, jobs, plat, st, out)
    st.queue.started[j] = 1
    if (st.run.fin[j] > shadow + FINISH_RTOL * abs(shadow)) == ends_before:
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
    ``hold`` does, and so does ``st.resv.slack_h`` (for :func:`_room_left` and
    :func:`_late_width`), which this fills. Returns ``room0``.
    """
    room0 = 0
    for k in range(st.run.free.shape[0]):
        a = st.resv.free_s[k] - st.resv.hold[k]
        room0 += min(a, st.resv.allow_h[k])
        st.resv.slack_h[k] = max(0, a - st.resv.allow_h[k])
    return room0


@helper
def sd_floors(plat, st):
    """:func:`_sd_floor` of every set of clusters into ``st.scan.sd_in`` (by mask, up to
    :data:`~decoders._federated_core.TABLE_K` clusters), once per platform: the backfill
    loop then reads a group's floor instead of computing it at every search."""
    sd_min = 1.0  # as in start_easy
    for k in range(plat.speed.shape[0]):
        sd_min = min(sd_min, 1.0 / plat.speed[k])
    sd_min *= 1.0 - 1e-9
    for fm in range(st.scan.sd_in.shape[0]):
        st.scan.sd_in[fm] = _sd_floor(fm, plat.speed, sd_min)


@helper
def _sd_floor(fm, speed, sd_min):
    """A floor of the slowdown of any job placed now on the clusters of the bit set ``fm``.

    A job's slowdown ``(1 - sigma) * SP + sigma * SC`` has ``SC >= 1`` and
    ``SP = 1 / s``, ``s`` the slowest speed it is placed on, which is at most
    the fastest speed of the clusters where it can take a node now: those of
    ``fm`` (its group's clusters with a free node; every bit beyond 62
    clusters). So it is at least ``min(1, 1 / that speed)``, scaled by the
    same margin as ``sd_min`` (the federation-wide floor, which this never
    undercuts: ``sd_min`` when ``fm`` holds the fastest cluster). When the
    fastest clusters are full, this keeps out of the backfill the jobs that
    could end by the reservation only there: their placement would run past
    it, and unless narrow enough (the index's width bound) they would be
    visited only to be refused. ``fm`` only loses bits while one scan starts
    jobs, so the floor only rises, as the index requires; with no bit set
    nothing is free there, the width test keeps every job out, and ``sd_min``
    is returned.
    """
    smax = 0.0
    for k in range(speed.shape[0]):
        if k > 62 or (fm >> k) & 1:
            smax = max(smax, speed[k])
    if smax == 0.0:
        return sd_min
    return max(sd_min, min(1.0, 1.0 / smax) * (1.0 - 1e-9))


@helper
def _speed_tiers(fm, free, speed, rank, x, ordered, tiers, slack_h, room0, need, y):
    """The speed tiers of a group whose clusters with a free node are the bit set ``fm``,
    into ``tiers`` (rows 0, 2, 3 and 4; the walk fills row 1); returns their count (0: none)
    and whether a tier's late width is below the group's ``y`` (:func:`_late_width`).

    A job's slowdown ``(1 - sigma) / s + sigma x SC`` (``SC >= 1``, ``s`` the slowest
    speed it is placed on) is at least ``(1 - sigma) / S + sigma`` for any ``S >= s``: at
    least ``cr / S`` and ``1 + (1 - sigma)(1 / S - 1)``, so its planned run ends no earlier
    than ``t + cr x runtime + cq x comp`` with ``cr = min(1, 1 / S)``, ``cq = max(0, 1 / S
    - 1)`` and ``comp = runtime x (1 - sigma)`` (both scaled by ``sd_min``'s margin): unlike
    ``min(1, 1 / S)``, this knows that a job without communication runs slower than its
    run time on a cluster of speed below 1. ``S`` is the fastest speed of ``fm`` (one tier
    of ``F_0 = x`` nodes) or, when ``ordered`` (no cap, the plain greedy pick in the order
    ``rank``, a group of one cluster set: its jobs are allowed on every cluster of
    ``fm``), per tier: the greedy pick takes a job's nodes cluster by cluster in that
    order, so a job of ``n`` tasks, ``F_{i-1} < n <= F_i`` (``F_i``: the free nodes of
    ``fm``'s first ``i + 1`` clusters in the order), places its last task on the tier's
    cluster ``i`` or later (its allowance may hold fewer), and ``S_i`` is the fastest speed
    of those. The tiers stop at the first with ``F_i >= x`` (wider jobs fail the width
    test). As jobs start, ``F_i`` falls and ``fm`` loses clusters, so each job's tier
    speed only falls and its bound only rises, as the index requires.

    Row 4, when ``ordered``: each tier's late width ``y_i``. A job of the tier whose
    single width (:func:`~decoders._backfill_index.single_width`) is its tasks is allowed
    them on every cluster, so the pick fills every cluster of ``fm`` up to the tier's
    cluster (or, in tier 0, places it alone on the first: no shifts); its slowest speed is
    then the least speed ``s_i`` of those clusters, and the shifts move tasks only to
    clusters of speed at least ``s_i``. By :func:`_room_left`'s identity it leaves the head
    room only if ``n <= y_i = room0 - need + sum min(free[k], slack_h[k])`` over the
    clusters ``k`` of ``fm`` of speed at least ``s_i`` (tier 0: the first cluster alone).
    Unlike the rest, ``y_i`` may rise as jobs start (a job's tier cluster moves to a slower
    one), so once such a width was in use in a scan, a start that takes nodes of a group's
    clusters makes the group search again (:func:`_took_from`); without such a start it only
    falls (``hold`` only grows).
    """
    n = 0
    tw = False
    if ordered:
        cum = 0
        smin = np.inf
        for i in range(rank.shape[0]):
            k = rank[i]
            if (fm >> k) & 1 and free[k] > 0:
                cum += free[k]
                smin = min(smin, speed[k])
                tiers[0, n] = cum
                tiers[2, n] = speed[k]
                if n == 0:
                    tiers[4, n] = room0 - need + min(free[k], slack_h[k])
                else:
                    yi = room0 - need
                    for c in range(speed.shape[0]):
                        if (fm >> c) & 1 and free[c] > 0 and speed[c] >= smin:
                            yi += min(free[c], slack_h[c])
                    tiers[4, n] = yi
                if room0 < need:
                    tiers[4, n] = -1
                tw |= tiers[4, n] < y
                n += 1
        for i in range(n - 2, -1, -1):
            tiers[2, i] = max(tiers[2, i], tiers[2, i + 1])
    else:
        smax = 0.0
        for k in range(speed.shape[0]):
            if k > 62 or (fm >> k) & 1:
                smax = max(smax, speed[k])
        if smax > 0.0:
            tiers[0, 0] = x
            tiers[2, 0] = smax
            tiers[4, 0] = y
            n = 1
    nt = 0
    for i in range(n):
        s = tiers[2, i]
        tiers[2, i] = min(1.0, 1.0 / s) * (1.0 - 1e-9)
        tiers[3, i] = max(0.0, 1.0 / s - 1.0) * (1.0 - 1e-9)
        nt += 1
        if tiers[0, i] >= x:
            break
    return nt, tw


@helper
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


@helper
def _first_cluster(m, by_mask, free, rank):
    """The first cluster in the pick order ``rank`` with a free node in group ``m`` (-1: none).

    Every cluster of group ``m`` (every cluster when not ``by_mask``) is allowed
    to its jobs, so the greedy pick of such a job takes its first nodes there.
    """
    for i in range(rank.shape[0]):
        k = rank[i]
        if free[k] > 0 and (not by_mask or (m >> k) & 1):
            return k
    return -1


@helper
def _single_bound(m, by_mask, free, slack_h, room0, need, y, rank, on):
    """The single-cluster test of candidate group ``m``: ``(y1, z)`` for the index.

    Without a cap and with the plain greedy pick (``on``), a job of the group
    that cannot end by the reservation and whose single width (its tasks,
    which its allowance admits on each of the group's clusters:
    :func:`~decoders._backfill_index.single_width`) is at most ``z``, the
    free nodes of the group's first cluster ``k1`` (:func:`_first_cluster`),
    is placed there alone: :func:`~decoders._federated_core.allocate` takes
    all its tasks there and shifts nothing (one cluster used), and
    :func:`~decoders._federated_core.place` keeps that pick. By
    :func:`_room_left`'s identity it then leaves the head ``room0 -
    max(0, tasks - slack_h[k1])``, at least ``need`` iff ``tasks <= y1 =
    slack_h[k1] + room0 - need``: a wider one is refused by the exact test.
    ``z = -1`` (off) when ``on`` is False, the group has no free node, or
    ``y1`` is at least the width bound ``y`` (:func:`_late_width`, which then
    keeps out every job this test would: with no slack on the group's other
    clusters, as with an empty blacklist, or when ``room0 < need``).
    The test is exact at the state it is computed in but not monotone as
    jobs start (a job that ``k1`` no longer holds spills to other clusters),
    so once it was on in a scan, a group whose ``k1`` loses nodes searches
    again (:func:`_took_first`).
    """
    k1 = _first_cluster(m, by_mask, free, rank) if on and room0 >= need else -1
    if k1 < 0 or slack_h[k1] + room0 - need >= y:
        return EMPTY, -1
    return slack_h[k1] + room0 - need, free[k1]


@helper
def _took_first(m, by_mask, free, alloc_j, rank):
    """Whether a job just started (allocation ``alloc_j``, already out of ``free``) took nodes
    of the first cluster of group ``m`` (:func:`_first_cluster`) as it stood before the start.

    Otherwise that cluster and its free nodes are unchanged (the clusters before it had
    none), the single-cluster test's bound ``y1`` only fell, and a job it skipped before
    the start would still be refused.
    """
    for i in range(rank.shape[0]):
        k = rank[i]
        if free[k] + alloc_j[k] > 0 and (not by_mask or (m >> k) & 1):
            return alloc_j[k] > 0
    return False


@helper
def _took_from(m, by_mask, free, alloc_j, rank):
    """Whether a job just started (allocation ``alloc_j``) took nodes that group ``m``'s
    non-monotone tests read: any of its clusters when ``by_mask`` (the tier late widths of
    :func:`_speed_tiers` and the first cluster of :func:`_single_bound`), else the first
    cluster (:func:`_took_first`)."""
    if not by_mask:
        return _took_first(m, by_mask, free, alloc_j, rank)
    for k in range(alloc_j.shape[0]):
        if (m >> k) & 1 and alloc_j[k] > 0:
            return True
    return False


@helper
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
def _head_floor(head, jobs, plat, st):
    """A floor of the power the head adds at its reservation, whatever runs past it.

    The head's tasks on the cheapest nodes left to it then (``free_s - hold``
    within ``allow_h``, by increasing per-node increment, ties by index, as
    :func:`~decoders._federated_core.least_power` takes them, without the
    per-cluster budgets), times :data:`~decoders._backfill_index.FLOOR_MARGIN`;
    infinite when those nodes cannot hold it. A job running past the
    reservation only takes nodes and adds power, so
    :func:`_head_power_after` never finds the head a cheaper allocation: a
    candidate whose own floor and this one overflow the budget over what is
    drawn then fails it (the index's late power test).
    """
    K = st.run.free.shape[0]
    for i in range(K):
        st.run.rk[i] = i
    for i in range(1, K):  # insertion sort: K is small
        c = st.run.rk[i]
        key = node_increment(head, c, jobs, plat)
        m = i
        while m > 0 and node_increment(head, st.run.rk[m - 1], jobs, plat) > key:
            st.run.rk[m] = st.run.rk[m - 1]
            m -= 1
        st.run.rk[m] = c
    rem = jobs.tasks[head]
    tot = 0.0
    for i in range(K):
        if rem == 0:
            break
        k = st.run.rk[i]
        n = min(min(max(st.resv.free_s[k] - st.resv.hold[k], 0), st.resv.allow_h[k]), rem)
        rem -= n
        tot += n * node_increment(head, k, jobs, plat)
    return np.inf if rem > 0 else tot * FLOOR_MARGIN


@helper
def _cost_nodes(head, jobs, plat, st):
    """The node counts of the index's least-cost bounds, once per scan under a cap
    (:func:`_index_counts`, compiled apart: it is no part of an uncapped decode)."""
    ix = st.index
    _index_counts(jobs.power[head], plat.pbusy, plat.pidle, plat.budget, st.run.free,
                  st.resv.free_s, st.resv.hold, st.resv.allow_h, c_free=ix.c_free,
                  c_resv=ix.c_resv, h_inc=ix.h_inc, c_head=ix.c_head, h_allow=ix.h_allow,
                  p_ord=ix.p_ord, on=ix.on)


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True, error_model="numpy", _nrt=False)
def _index_counts(ph, pbusy, pidle, budget, free, free_s, hold, allow_h, c_free, c_resv, h_inc,
                  c_head, h_allow, p_ord, on):
    """The node counts and head's increments of the index's least-cost bounds
    (:func:`~decoders._backfill_index.least_cost`, :func:`~decoders._backfill_index.fallback_cost`).

    ``c_free``: the free nodes now, where a job's allocation lies. ``c_resv``:
    per cluster, at least what a job holding ``x`` nodes there and the head
    beside it at the reservation take together: the head gets at most
    ``free_s - hold - x`` (:func:`_head_power_after`) and the job at most
    ``free``, so ``max(free_s - hold, free, 0)``. ``h_inc``: the head's
    per-node increments (its power factor ``ph``). Both counts only fall while
    one scan starts jobs. ``c_head`` (``free_s - hold``), ``h_allow`` (the
    head's allowance ``allow_h``), ``p_ord`` (the clusters by busy power, ties
    by index, and each one's place in that order) and ``on[1]`` (1 when the
    idle powers are equal, no cluster has a budget of its own and the busy
    powers are far enough apart that a product with a factor keeps their
    order) serve :func:`~decoders._backfill_index.fallback_cost`.
    """
    K = free.shape[0]
    for k in range(K):
        c_free[k] = free[k]
        c_resv[k] = max(max(free_s[k] - hold[k], free[k]), 0)
        h_inc[k] = max(ph * pbusy[k] - pidle[k], 0.0)
        c_head[k] = free_s[k] - hold[k]
        h_allow[k] = allow_h[k]
    ok = 1
    for i in range(K):
        p_ord[0, i] = i
        if budget[i] < np.inf or pidle[i] != pidle[0]:
            ok = 0
    for i in range(1, K):  # insertion sort: K is small
        c = p_ord[0, i]
        m = i
        while m > 0 and pbusy[p_ord[0, m - 1]] > pbusy[c]:
            p_ord[0, m] = p_ord[0, m - 1]
            m -= 1
        p_ord[0, m] = c
    for i in range(K):
        p_ord[1, p_ord[0, i]] = i
        if i > 0:
            a, b = pbusy[p_ord[0, i - 1]], pbusy[p_ord[0, i]]
            if b != a and b <= a * (1.0 + 1e-12):
                ok = 0
    on[1] = ok


@helper
def _head_power_after(head, j, jobs, plat, st, alloc):
    """Would the head still fit the power budgets at its reservation if ``j`` ran past it?

    The head then has the nodes free at the reservation less those promised
    past it (``hold``) and ``j``'s, and the budgets less the increments of
    the jobs still running then (``pks``), of those promised (``hold_p``)
    and of ``j``.
    """
    K = st.run.free.shape[0]
    tot = 0.0
    for k in range(K):
        st.run.free_h[k] = max(0, st.resv.free_s[k] - st.resv.hold[k] - alloc[j, k])
        d = alloc[j, k] * node_increment(j, k, jobs, plat) if alloc[j, k] > 0 else 0.0
        st.resv.pkh[k] = st.resv.pks[k] + st.resv.hold_p[k] + d
        tot += d
    st.resv.pkh[K] = st.resv.pks[K] + st.resv.hold_p[K] + tot
    return least_power(head, jobs, plat, st.run.free_h, st.resv.allow_h, st.resv.pkh, st.run.rk, st.run.xs)


@helper
def _shadow(t, head, jobs, plat, st, out, capped):
    """The head's reservation: replay the running jobs' planned ends until it fits.

    It fits when its allowed nodes hold it and (under a power cap) its
    least-power allocation fits the budgets left by the jobs still running.
    Fills ``st.resv.free_s`` with the nodes free at the reservation and ``st.resv.pks``
    with the increments still drawn then (every job finishing with the last
    one replayed counted gone), clears ``st.resv.hold`` and ``st.resv.hold_p``.
    Returns the time.
    """
    K = st.run.free.shape[0]
    need = jobs.tasks[head]
    alloc = out.alloc
    free_s, sh_t, sh_j = st.resv.free_s, st.resv.sh_t, st.resv.sh_j
    for k in range(K):
        free_s[k] = st.run.free[k]
        st.resv.hold[k] = 0
    for k in range(K + 1):
        st.resv.pks[k] = st.run.pk[k]
        st.resv.hold_p[k] = 0.0
    # The finishes in time order without copying the event heap: a second heap holds the
    # frontier of the event heap's nodes (code i >= 0 for node i, whose children join when
    # it is taken) and the re-rated co-allocated jobs (code -1 - job), so a replay that
    # stops after m finishes costs O(m log m), not the number of running jobs.
    # Planning on estimates, the planned ends need not follow the event heap's order: every
    # running job then joins the second heap (O(R log R)).
    nh = st.evi[E_NH]
    n_sh = np.int64(0)
    if st.evi[E_PLAN] != 0:
        for i in range(nh):
            n_sh = heap_push(sh_t, sh_j, n_sh, planned_end(st.run.hj[i], t, jobs, st, out), -1 - st.run.hj[i])
        nh = 0
    elif nh > 0:
        n_sh = heap_push(sh_t, sh_j, n_sh, st.run.ht[0], np.int64(0))
    for i in range(st.evi[E_NCL]):
        r = st.run.cl[i]
        n_sh = heap_push(sh_t, sh_j, n_sh, planned_end(r, t, jobs, st, out), -1 - r)
    shadow = t
    while n_sh > 0 and (not _head_fits(head, need, jobs, plat, st, capped)
                        or sh_t[0] <= shadow + FINISH_RTOL * abs(shadow)):
        # Until the head fits, then every job finishing together with the last one.
        shadow = max(shadow, sh_t[0])
        code = sh_j[0]
        n_sh = heap_pop(sh_t, sh_j, n_sh)
        if code >= 0:
            r = st.run.hj[code]
            c = 2 * code + 1
            if c < nh:
                n_sh = heap_push(sh_t, sh_j, n_sh, st.run.ht[c], c)
            if c + 1 < nh:
                n_sh = heap_push(sh_t, sh_j, n_sh, st.run.ht[c + 1], c + 1)
        else:
            r = -1 - code
        for k in range(K):
            free_s[k] += alloc[r, k]
        if capped:
            unpower(r, jobs, plat, alloc, st.resv.pks)
    return shadow


@helper
def _head_fits(head, need, jobs, plat, st, capped):
    if not fits(need, st.resv.free_s, st.resv.allow_h):
        return False
    if not capped:
        return True
    return least_power(head, jobs, plat, st.resv.free_s, st.resv.allow_h, st.resv.pks, st.run.rk, st.run.xs)
