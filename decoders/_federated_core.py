"""The federated decoders' state and the pieces of their shared event loop.

The kernels of :mod:`decoders.federated` run one event loop, written once and
specialised per rule (:func:`decoders.federated._loop_for`); what differs is the
rule that starts jobs at an event. The loop's data travels in four bundles, named
tuples built once per decode (they hold views, nothing is copied):

``jobs`` (:data:`Jobs`)
    The job arrays, shape (J,): ``release`` (s), ``tasks``, ``runtime``
    (s on a speed-1.0 node), ``sigma`` (communication share), ``bw``
    (Mbit/s per task), ``power`` (power factor: a node running the job
    draws ``power * pbusy[k]``), ``est`` (the run time EASY plans with, s on
    a speed-1.0 node: ``runtime`` itself, or the requested time; see
    :func:`planned_end`).
``plat`` (:data:`Platform`)
    The cluster arrays, shape (K,): ``nodes``, ``speed``, ``pbusy``,
    ``pidle`` (W per node), ``link`` (Mbit/s), and three cluster orders:
    ``rank_pick`` (the allocation rule's greedy order), ``rank_fast`` and
    ``rank_slow`` (sources and destinations of the energy-saving shift);
    ``budget`` (K + 1: the power the running jobs may add to idle power, per
    cluster and then overall, W; ``inf`` where there is no cap);
    ``consolidate`` (1,: 1 when the pick consolidates, :func:`allocate`); and
    ``capped`` (1,: 1 when some budget is finite, :func:`is_capped`).
``st`` (:data:`State`)
    The decoder's mutable arrays, in five bundles of their own and the loop's
    scalars, built in one place by keyword (:func:`new_state`):

    ``st.run`` (:data:`Running`): the running jobs and the clusters. Per job:
    ``fin`` (projected finish), ``sd`` (current slowdown), ``sp`` (a running
    co-allocated job's fixed speed term ``(1 - sigma) * SP``, which re-rating
    reuses), ``ht``/``hj`` (the
    event heap of running jobs with fixed finishes, times and jobs), ``cl``
    (fluid model: the running co-allocated jobs, re-rated at every event
    while a link is saturated), ``coal`` (1 for a co-allocated job). Per
    cluster: ``free`` nodes, ``load`` (link traffic of running co-allocated
    jobs), ``util`` (scratch of re-rating: each link's utilisation),
    ``allow`` (the current job's allowance), ``pk`` (K + 1: busy power
    increment of the running jobs, per cluster then overall); ``xs``, ``rk``
    and ``free_h`` are per-cluster scratch of the least-power allocation.

    ``st.queue`` (:data:`Queue`), for the rules that keep a queue:
    ``started`` (per job), ``wq`` (the waiting queue), ``by_release`` (jobs by
    arrival), ``pos_of`` (a job's position in the order).

    ``st.resv`` (:data:`Reservation`), EASY's reservation: ``sh_t``/``sh_j``
    (its replay heap), per cluster ``allow_h`` (the head's allowance),
    ``free_s`` (free nodes at the reservation), ``hold`` (nodes promised past
    it), ``slack_h`` (nodes a job may hold past the reservation without
    taking any from the head's room: ``max(0, free_s - hold - allow_h)``);
    power (K + 1): ``pks`` (of the jobs still running at the reservation),
    ``hold_p`` (of the jobs promised past it) and ``pkh`` (scratch).

    ``st.scan`` (:data:`Scan`), EASY's backfill scan: every job's allowance
    ``allow_j`` (J, K), ``relaxed_j`` (J,) and ``mask_j`` (J,: the clusters
    the allowance opens, one bit each), filled once per decode by
    :func:`allowances`, and up to :data:`TABLE_K` clusters ``free_in``
    (``2**K``: the free nodes of each set of clusters, by mask, see
    :func:`free_by_mask`) and ``sd_in`` (``2**K``: each set's slowdown floor,
    :func:`decoders.easy.sd_floors`).

    ``st.index`` (:data:`Index`): EASY's candidate index, whose fields
    ``g_*``, ``tr_*``, ``p_floor``, ``tiers`` and ``dfs``
    :mod:`decoders._backfill_index` describes.

    ``st.evi`` and ``st.evf``: the loop's scalars (below).
``out`` (:data:`Out`)
    What the decode writes: ``start``, ``finish`` (J,), ``alloc`` (J, K:
    tasks of each job in each cluster) and ``reserve`` (J: EASY's first
    reservation of a job as blocked head, NaN otherwise).

The scalars of the loop are ``st.evi`` (int64, indices
``E_*``): ``E_NH`` (heap size), ``E_NCL`` (re-rated jobs), ``E_NCOAL``
(co-allocated jobs running), ``E_SAT`` (1 while some link is over
capacity), the counters ``E_STARTED``, ``E_COALLOC`` and ``E_RELAXED``, and
the rule's cursors ``E_CURSOR`` (in order: position in the order; EASY: jobs
arrived), ``E_NQ`` (EASY: queue length) and ``E_QH`` (where the queue starts
in ``wq``: the queue is ``wq[E_QH:E_QH + E_NQ]``; under EASY it may hold
``E_HOLES`` started jobs, skipped and compacted away once they are half of
it) and ``E_NACT`` (the non-empty groups of EASY's candidate index,
:mod:`decoders._backfill_index`, whose fields ``g_*``, ``tr_*``, ``p_floor``,
``p_top``, the power fields and ``dfs`` that module describes) and ``E_PLAN`` (1 when
some job's ``est`` differs from its run time), ``E_RERATE`` (re-ratings that moved a finish so far),
and EASY's reservation of the last scan (``E_SHEAD``: its head + 1, 0 for
none; ``E_SRERATE`` and ``E_SSTART``: the re-ratings and starts counted
then; ``st.evf[1]``: its time); ``st.evf[0]`` is the earliest finish among
the re-rated jobs; ``E_INDEX`` is 1 when a driver keeps EASY's candidate
index up to date through the loop's steps. Helpers read them into locals on
entry and
write them back on exit, so that hot loops run on registers. Everything here
is inlined into the kernels, which run without reference counting.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from ._backfill_index import R_BUCKETS
from ._kernels import (
    FINISH_RTOL,
    SHIFT_RTOL,
    heap_pop,
    heap_push,
    helper,
    link_traffic,
    speed_term,
    with_links,
)

__all__ = ["Jobs", "Platform", "State", "Running", "Queue", "Reservation", "Scan", "Index", "Out",
           "new_out", "new_state", "reset_events", "place", "least_power",
           "allowances", "cluster_mask", "free_by_mask", "TABLE_K", "power_fits", "is_capped",
           "idle_federation", "node_increment", "whole_cluster", "commit_one", "E_NH", "E_NCL",
           "E_NCOAL", "E_SAT", "E_STARTED",
           "E_COALLOC", "E_RELAXED", "E_CURSOR", "E_NQ", "E_QH", "E_HOLES", "E_NACT", "E_PLAN",
           "E_RERATE", "E_SHEAD", "E_SRERATE", "E_SSTART", "E_INDEX", "n_groups",
           "planned_end", "plans_on_estimates"]

Jobs = namedtuple("Jobs", "release tasks runtime sigma bw power est")
Platform = namedtuple("Platform", "nodes speed pbusy pidle link rank_pick rank_fast rank_slow "
                                  "budget consolidate capped")
Running = namedtuple("Running", "fin sd sp ht hj cl coal free load util allow pk xs rk free_h")
Queue = namedtuple("Queue", "started wq by_release pos_of")
Reservation = namedtuple("Reservation", "sh_t sh_j allow_h free_s hold slack_h pks hold_p pkh")
Scan = namedtuple("Scan", "allow_j relaxed_j mask_j free_in sd_in")
Index = namedtuple("Index", "g_leaf g_off g_toff g_pos g_act g_cand tr_i tr_rg tr_p p_floor "
                             "tr_n tr_q p_top tr_m p_fac on pb pi c_free c_resv h_inc c_head h_allow "
                             "p_ord dfs tiers")
State = namedtuple("State", "run queue resv scan index evi evf")
Out = namedtuple("Out", "start finish alloc reserve")

#: Most clusters for which EASY's scan keeps the free nodes of every set of
#: clusters (``State.scan.free_in``, ``2**K`` entries, rebuilt at every scan).
TABLE_K = 8

#: Indices of the loop's integer scalars in ``State.evi``.
(E_NH, E_NCL, E_NCOAL, E_SAT, E_STARTED, E_COALLOC, E_RELAXED, E_CURSOR, E_NQ, E_QH, E_HOLES,
 E_NACT, E_PLAN, E_RERATE, E_SHEAD, E_SRERATE, E_SSTART, E_INDEX) = range(18)


@helper
def reset_events(st):
    """The loop scalars of an empty federation at the start of a decode."""
    for i in range(st.evi.shape[0]):
        st.evi[i] = 0
    st.evf[0] = np.inf
    for i in range(st.run.pk.shape[0]):
        st.run.pk[i] = 0.0


def new_out(J, K):
    """Empty output arrays (:data:`Out`) of a decode of J jobs on K clusters."""
    return Out(np.empty(J), np.empty(J), np.empty((J, K), dtype=np.int64), np.empty(J))


def _lined(shape, dtype):
    """An empty C-contiguous array whose data starts on a 64-byte boundary (a cache line), so
    that the index's node records (:mod:`decoders._backfill_index`) do not straddle lines."""
    size = int(np.prod(shape)) * np.dtype(dtype).itemsize
    buf = np.empty(size + 64, dtype=np.uint8)
    start = -buf.ctypes.data % 64
    return buf[start:start + size].view(dtype).reshape(shape)


def new_state(J, K, easy=True):
    """Fresh work arrays for decodes of J jobs on K clusters (reusable from decode to decode).

    The one place the loop's :data:`State` is built, field by field (the
    module docstring says what each holds). ``easy`` False leaves EASY's
    backfill scan and candidate index (``scan``, ``index``) empty, arrays of
    length 0 of the same types, for a decode whose rule is not EASY: the
    loop keeps one signature and a rule that never reads them allocates
    none of their (J, K) and tree arrays.
    """
    J, K = int(J), int(K)
    Je = J if easy else 0  # the jobs of EASY's scan and index
    f = np.empty((5, J))
    i = np.empty((8, J), dtype=np.int64)
    ie = np.empty((4, Je), dtype=np.int64)
    c = np.empty((9, K), dtype=np.int64)
    p = np.zeros((4, K + 1))
    u = np.empty((2, K))
    G = n_groups.py_func(K) if easy else 0
    n_tree = 4 * J + 2 * G + 2 if easy else 0
    g = np.empty((2, G + 1), dtype=np.int64)
    n_sets = 1 << min(K, TABLE_K) if easy else 0
    return State(
        # the event loop: finishes, slowdowns, the event heap, re-rated jobs; the clusters'
        # free nodes, link load, the current job's allowance and power; allocation scratch
        run=Running(fin=f[0], sd=f[1], sp=f[4], ht=f[2], hj=i[0], cl=i[1], coal=i[2], free=c[0],
                    load=u[0], util=u[1], allow=c[1], pk=p[0], xs=c[5], rk=c[6], free_h=c[7]),
        # the queue of the rules that keep one
        queue=Queue(started=i[3], wq=i[4], by_release=i[6], pos_of=i[7]),
        # EASY's reservation: its replay heap, the head's room and power
        resv=Reservation(sh_t=f[3], sh_j=i[5], allow_h=c[2], free_s=c[3], hold=c[4], slack_h=c[8],
                         pks=p[1], hold_p=p[2], pkh=p[3]),
        # EASY's backfill scan: the allowance table and the free nodes by cluster set
        scan=Scan(allow_j=np.empty((Je, K), dtype=np.int64), relaxed_j=ie[0], mask_j=ie[1],
                  free_in=np.zeros(n_sets, dtype=np.int64), sd_in=np.zeros(n_sets)),
        # EASY's candidate index (decoders._backfill_index)
        index=Index(g_leaf=ie[2], g_off=g[0], g_toff=g[1], g_pos=ie[3],
                    g_act=np.empty(G, dtype=np.int64), g_cand=np.empty(G, dtype=np.int64),
                    tr_i=_lined((n_tree, 4), np.int64),
                    tr_rg=_lined((n_tree, 2 * R_BUCKETS), np.float32), tr_p=np.empty((n_tree, K)),
                    p_floor=np.zeros((Je, K)),
                    tr_n=np.empty(n_tree, dtype=np.int64), tr_q=np.empty((n_tree, K)),
                    p_top=np.full((Je, K), np.inf), tr_m=np.empty(n_tree), p_fac=np.zeros(Je),
                    on=np.zeros(3, dtype=np.int64), pb=np.zeros(K), pi=np.zeros(K),
                    c_free=np.zeros(K, dtype=np.int64), c_resv=np.zeros(K, dtype=np.int64),
                    h_inc=np.zeros(K), c_head=np.zeros(K, dtype=np.int64),
                    h_allow=np.zeros(K, dtype=np.int64), p_ord=np.zeros((2, K), dtype=np.int64),
                    dfs=np.empty(2 * 64 + 8, dtype=np.int64),
                    tiers=np.zeros((10, K))),
        # the loop's scalars (E_* indices) and its float scalars
        evi=np.zeros(18, dtype=np.int64), evf=np.full(2, np.inf),
    )


@helper
def n_groups(K):
    """Groups of EASY's candidate index (:mod:`decoders._backfill_index`): one per cluster set
    up to :data:`TABLE_K` clusters, else one."""
    return 1 << K if K <= TABLE_K else 1


@helper
def refresh_rates(t, jobs, plat, st, out, ncl):
    """Fluid model: re-rate the running co-allocated jobs ``cl[:ncl]`` at time ``t``.

    Each job's new slowdown is :func:`slowdown`'s, bit for bit, computed from
    parts made once: the links' utilisations ``load[k] / link[k]`` (one
    division per link, into ``util``, rather than one per job and link) and
    the job's speed term ``sp`` (fixed since its start, :func:`commit_start`).
    Every job here is co-allocated, so its ``SC`` is the worst utilisation
    over its clusters, at least 1. Returns the earliest of their new finish
    times (inf when none runs).
    """
    K = st.run.load.shape[0]
    util, alloc = st.run.util, out.alloc
    for k in range(K):
        util[k] = st.run.load[k] / plat.link[k]
    earliest = np.inf
    for i in range(ncl):
        r = st.run.cl[i]
        sc = 1.0
        for k in range(K):  # a select, as in slowdown: an unused cluster's 1.0 changes nothing
            sc = max(sc, util[k] if alloc[r, k] > 0 else 1.0)
        new = with_links(st.run.sp[r], jobs.sigma[r], sc)
        if new != st.run.sd[r]:
            st.run.fin[r] = t + (st.run.fin[r] - t) / st.run.sd[r] * new
            st.run.sd[r] = new
            st.evi[E_RERATE] += 1
        earliest = min(earliest, st.run.fin[r])
    return earliest


@helper
def saturated_links(load, link):
    """True when some link carries more than its bandwidth (``U_k > 1``).

    While no link is saturated every ``SC`` is 1, so load changes leave all
    rates as they are and the fluid model need not re-rate anything.
    """
    for k in range(load.shape[0]):
        if load[k] > link[k]:
            return True
    return False


@helper
def earliest(cl, ncl, fin):
    """Earliest finish time among the jobs ``cl[:ncl]`` (inf when none)."""
    f = np.inf
    for i in range(ncl):
        f = min(f, fin[cl[i]])
    return f


@helper
def allocate(j, jobs, plat, st, alloc, allow):
    """Greedy pick in ``rank_pick`` order, then energy-saving shifts (docs/design.md §5, steps 3-4).

    When ``plat.consolidate[0]`` the pick's order is made at the call from
    the allowed free nodes ``c_k = min(free_k, allow_k)``: the cluster of
    least ``c_k`` that holds every task alone (best fit), else the clusters
    by increasing ``c_k`` (the fullest first); ties in ``rank_pick`` order.

    Writes the allocation into ``alloc[j]``; ``allow`` holds the allowance per
    cluster. Shifts move one task at a time from the fastest used cluster
    faster than the slowest used speed ``s`` (ties: the order of
    ``rank_fast``) to the slowest cluster slower than it with speed >= ``s``
    and a free allowed node (ties: lower ``power_busy / speed``, then lower
    index), while the predicted slowdown does not grow (beyond a relative
    ``SHIFT_RTOL``, so that a move that is equal in exact arithmetic is taken
    whatever the rounding). A move changes only
    the source's and the destination's link traffic (``s`` and so ``SP`` stay
    fixed), so each move is priced in O(1) against the fixed utilisation of
    the job's other clusters. When a move prices ``SC = 1`` and no further
    move of the run could load either link past 1 (:func:`_unsaturated_run`),
    every further move prices the same slowdown and the whole run is taken
    at once.
    """
    K = alloc.shape[1]
    speed, free, load, link = plat.speed, st.run.free, st.run.load, plat.link
    T = jobs.tasks[j]
    remaining = T
    used = 0
    s = np.inf
    order = plat.rank_pick
    if plat.consolidate[0]:
        order = st.run.rk
        _consolidating(T, free, allow, plat.rank_pick, order)
    for i in range(K):
        k = order[i]
        take = min(min(free[k], allow[k]), remaining)
        alloc[j, k] = take
        remaining -= take
        if take > 0:
            used += 1
            s = min(s, speed[k])
    if used < 2:
        return
    sig = jobs.sigma[j]
    b = jobs.bw[j]
    sp = 1.0 / s
    sc = 1.0
    for k in range(K):  # slowdown(..., add_self=True) of the pick, whose used clusters are known
        xk = alloc[j, k]
        sc = max(sc, (load[k] + link_traffic(b, T, xk)) / link[k] if xk > 0 else 1.0)
    sd_cur = with_links(speed_term(sig, sp), sig, sc)
    while True:
        src = -1
        for i in range(K):
            k = plat.rank_fast[i]
            if alloc[j, k] > 0 and speed[k] > s:
                src = k
                break
        if src < 0:
            return
        dst = -1
        for i in range(K):
            k = plat.rank_slow[i]
            if speed[k] < speed[src] and speed[k] >= s and alloc[j, k] < min(free[k], allow[k]):
                dst = k
                break
        if dst < 0:
            return
        cap_dst = min(free[dst], allow[dst])
        u_other = 1.0
        for k in range(K):
            if alloc[j, k] > 0 and k != src and k != dst:
                u_other = max(u_other, _link_use(k, b, T, alloc[j, k], load, link))
        xs = alloc[j, src]
        xd = alloc[j, dst]
        first = True
        while xs > 0 and xd < cap_dst:
            n_used = used - (1 if xs == 1 else 0) + (1 if xd == 0 else 0)
            sc = 1.0
            if n_used >= 2:
                sc = max(u_other, _link_use(dst, b, T, xd + 1, load, link))
                if xs > 1:
                    sc = max(sc, _link_use(src, b, T, xs - 1, load, link))
            sd_new = with_links(speed_term(sig, sp), sig, sc)
            if sd_new > sd_cur * (1.0 + SHIFT_RTOL):
                break
            xs -= 1
            xd += 1
            used = n_used
            sd_cur = sd_new
            if first and sc == 1.0 and _unsaturated_run(xs, xd, cap_dst, src, dst, b, T, load,
                                                         link):
                # Every further move prices SC = 1 and so the same sd_new: all are taken.
                m = min(xs, cap_dst - xd)
                if m == xs:
                    used -= 1
                xs -= m
                xd += m
            first = False
        moved_all = xs == 0 or xd == cap_dst
        alloc[j, src] = xs
        alloc[j, dst] = xd
        if not moved_all:
            return


@helper
def _consolidating(T, free, allow, rank, out):
    """The consolidating pick order into ``out`` (K,): :func:`allocate`'s rule."""
    K = out.shape[0]
    best = -1
    cb = 0
    for i in range(K):
        k = rank[i]
        c = min(free[k], allow[k])
        if c >= T and (best < 0 or c < cb):
            best = k
            cb = c
    if best >= 0:
        out[0] = best
        n = 1
        for i in range(K):
            if rank[i] != best:
                out[n] = rank[i]
                n += 1
        return
    for i in range(K):  # insertion sort by allowed free nodes, stable in rank order
        k = rank[i]
        c = min(free[k], allow[k])
        m = i
        while m > 0 and min(free[out[m - 1]], allow[out[m - 1]]) > c:
            out[m] = out[m - 1]
            m -= 1
        out[m] = k


@helper
def _link_use(k, b, T, x, load, link):
    """Utilisation ``U_k`` of link ``k`` if job traffic for ``x`` of ``T`` tasks joined ``load[k]``.

    The one expression the shift rule prices moves with: taking a run of
    moves at once (:func:`_unsaturated_run`) is exact only because it
    compares the very floats the one-at-a-time loop would.
    """
    return (load[k] + link_traffic(b, T, x)) / link[k]


@helper
def _unsaturated_run(xs, xd, cap_dst, src, dst, b, T, load, link):
    """True when no further one-task move from ``src`` to ``dst`` would load either link past 1.

    The moves left put ``xd + 1 .. xd + m`` tasks on ``dst`` and ``xs - 1 ..
    xs - m`` on ``src`` (``m = min(xs, cap_dst - xd)``; no term for 0 tasks).
    A link's term (:func:`_link_use`, as in :func:`allocate`'s loop) is
    monotone in the integer ``x * (T - x)``, which peaks at the ``x`` of the
    range nearest ``T / 2``; so the largest term of each range is evaluated
    once, and the loop's ``SC`` is 1.0 at every one of those moves iff both
    are at most 1.
    """
    m = min(xs, cap_dst - xd)
    if m <= 0:
        return False
    x = min(max(T // 2, xd + 1), xd + m)
    if _link_use(dst, b, T, x, load, link) > 1.0:
        return False
    lo = max(1, xs - m)
    if lo > xs - 1:
        return True
    x = min(max(T // 2, lo), xs - 1)
    return _link_use(src, b, T, x, load, link) <= 1.0


@helper
def allowance(j, blacklist, jobs, plat, allow):
    """Fill ``allow`` with job ``j``'s allowance ``N_k - floor(beta_jk N_k)``.

    Returns True when the allowance cannot hold the job: the blacklist is then
    void (``allow = N``) and the caller counts it as relaxed. The fractions
    are in [0, 1] (the wrappers check them), so ``beta_jk N_k >= 0`` and the
    conversion to an integer, which truncates, is the floor.
    """
    nodes = plat.nodes
    K = nodes.shape[0]
    total = 0
    for k in range(K):
        allow[k] = nodes[k] - np.int64(blacklist[j, k] * nodes[k])
        total += allow[k]
    if total < jobs.tasks[j]:
        for k in range(K):
            allow[k] = nodes[k]
        return True
    return False


@helper
def allowances(blacklist, jobs, plat, st):
    """Every job's :func:`allowance` into ``st.scan.allow_j`` and ``st.scan.relaxed_j`` (1 when void).

    EASY's backfill test reads the allowance from this table instead of
    recomputing it (K floors), so the test is a K-term sum.
    """
    for j in range(blacklist.shape[0]):
        st.scan.relaxed_j[j] = allowance(j, blacklist, jobs, plat, st.scan.allow_j[j])
        st.scan.mask_j[j] = cluster_mask(st.scan.allow_j[j])


@helper
def cluster_mask(counts):
    """Bit k set for every cluster k with ``counts[k] > 0`` (every bit beyond 62 clusters).

    ``mask_j[j]`` (a job's allowed clusters) indexes :func:`free_by_mask`'s
    table up to :data:`TABLE_K` clusters and groups the jobs of EASY's
    candidate index; beyond, ``mask_j[j] & cluster_mask(free)`` tells in one
    operation whether an allowed cluster has a free node, a necessary
    condition of :func:`fits` (``n >= 1`` tasks need a free allowed node).
    """
    K = counts.shape[0]
    if K > 62:
        return np.int64(-1)
    m = np.int64(0)
    for k in range(K):
        if counts[k] > 0:
            m |= np.int64(1) << np.int64(k)
    return m


@helper
def free_by_mask(free, table):
    """Fill ``table`` (``2**K``) with the free nodes of every set of clusters: bit k is cluster k.

    ``table[mask_j[j]] < tasks[j]`` tells with one look-up that job j's
    allowed clusters hold fewer free nodes than its tasks, a necessary
    condition of :func:`fits` that also covers "no free allowed node"; EASY's
    candidate index (:mod:`decoders._backfill_index`) prunes on it. ``2**K``
    additions, for ``K <= TABLE_K``.
    """
    table[0] = 0
    for k in range(free.shape[0]):
        b = 1 << k
        for m in range(b):
            table[b + m] = table[m] + free[k]


@helper
def fits(n, free, allow):
    """True when ``n`` tasks fit in the free nodes the allowance ``allow`` admits."""
    avail = 0
    for k in range(free.shape[0]):
        avail += min(free[k], allow[k])
    return avail >= n


@helper
def next_finish(st):
    """Earliest projected finish among running jobs (inf when none runs)."""
    return min(st.run.ht[0], st.evf[0]) if st.evi[E_NH] > 0 else st.evf[0]


@helper
def release_due(horizon, t, fluid, jobs, plat, st, out):
    """Release every job finishing by ``horizon``, one group of equal finishes at a time.

    Jobs whose finish times agree to ``FINISH_RTOL`` finish together at the
    earliest of them; their nodes and link traffic are released at once, then
    (fluid model, some link saturated) the co-allocated jobs still running are
    re-rated. Returns the new time.
    """
    K = st.run.free.shape[0]
    evi = st.evi
    nh, ncl, cl_min, n_coal_run, saturated = (evi[E_NH], evi[E_NCL], st.evf[0], evi[E_NCOAL],
                                              evi[E_SAT] != 0)
    r = st.run
    ht, hj, cl, fin, free, load, alloc = r.ht, r.hj, r.cl, r.fin, r.free, r.load, out.alloc
    capped = is_capped(plat)
    while nh + ncl > 0:
        f = min(ht[0], cl_min) if nh > 0 else cl_min
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
            out.finish[r] = f
            for k in range(K):
                free[k] += alloc[r, k]
            if capped:
                unpower(r, jobs, plat, alloc, st.run.pk)
            if st.run.coal[r] != 0:
                any_coal = True
                n_coal_run -= 1
                for k in range(K):
                    load[k] -= link_traffic(jobs.bw[r], jobs.tasks[r], alloc[r, k])
        if f > t:
            t = f
        if any_coal:
            if n_coal_run == 0:
                for k in range(K):
                    load[k] = 0.0
                cl_min = np.inf
                saturated = False
            elif fluid:
                now_sat = saturated_links(load, plat.link)
                if saturated or now_sat:
                    cl_min = refresh_rates(t, jobs, plat, st, out, ncl)
                else:
                    cl_min = earliest(cl, ncl, fin)
                saturated = now_sat
    if capped and nh + ncl == 0:
        for k in range(K + 1):  # an idle federation draws no increment: drop rounding residue
            st.run.pk[k] = 0.0
    evi[E_NH], evi[E_NCL], evi[E_NCOAL], evi[E_SAT] = nh, ncl, n_coal_run, saturated
    st.evf[0] = cl_min
    return t


@helper
def commit_start(j, t, fluid, jobs, plat, st, out):
    """Start job ``j`` at ``t`` with the allocation already in ``out.alloc[j]``.

    Takes its nodes, adds its link traffic, fixes its slowdown and projected
    finish, re-rates the running co-allocated jobs (fluid model), files it in
    the heap or the re-rated list and counts it.
    """
    K = st.run.free.shape[0]
    evi = st.evi
    nh, ncl, cl_min, n_coal_run, saturated = (evi[E_NH], evi[E_NCL], st.evf[0], evi[E_NCOAL],
                                              evi[E_SAT] != 0)
    alloc, free, load = out.alloc, st.run.free, st.run.load
    tj = jobs.tasks[j]
    used = 0
    smin = np.inf
    for k in range(K):
        free[k] -= alloc[j, k]
        if alloc[j, k] > 0:
            used += 1
            smin = min(smin, plat.speed[k])
    if is_capped(plat):
        pk = st.run.pk
        for k in range(K):
            if alloc[j, k] > 0:
                d = alloc[j, k] * node_increment(j, k, jobs, plat)
                pk[k] += d
                pk[K] += d
    # slowdown's float, from the used clusters and the least speed found above: its speed
    # term, then the worst utilisation of the job's links once its traffic is on them
    sigma = jobs.sigma[j]
    sp = speed_term(sigma, 1.0 / smin)
    sc = 1.0
    if used >= 2:
        st.run.coal[j] = 1
        n_coal_run += 1
        for k in range(K):
            xk = alloc[j, k]
            load[k] += link_traffic(jobs.bw[j], tj, xk)
            sc = max(sc, load[k] / plat.link[k] if xk > 0 else 1.0)
    st.run.sd[j] = with_links(sp, sigma, sc)
    out.start[j] = t
    st.run.fin[j] = t + jobs.runtime[j] * st.run.sd[j]
    if used >= 2 and fluid:
        st.run.sp[j] = sp
        now_sat = saturated_links(load, plat.link)
        if saturated or now_sat:
            cl_min = refresh_rates(t, jobs, plat, st, out, ncl)
        saturated = now_sat
        cl_min = min(cl_min, st.run.fin[j])
        st.run.cl[ncl] = j
        ncl += 1
    else:
        nh = heap_push(st.run.ht, st.run.hj, nh, st.run.fin[j], j)
    evi[E_NH], evi[E_NCL], evi[E_NCOAL], evi[E_SAT] = nh, ncl, n_coal_run, saturated
    st.evf[0] = cl_min
    evi[E_STARTED] += 1
    if used >= 2:
        evi[E_COALLOC] += 1


@helper
def whole_cluster(j, blacklist, jobs, plat, free):
    """The cluster that :func:`place` gives all of job ``j``'s tasks at once, else -1.

    The first cluster of ``rank_pick`` with a free node in ``j``'s allowance
    (:func:`allowance`'s formula, cluster by cluster) when it holds every task:
    then the allowance holds the job (no relaxing), the greedy pick of
    :func:`allocate` puts every task there and has no shift to make. -1 when
    that cluster holds fewer (or no cluster has a free allowed node): the
    caller takes the general path. For the uncapped, non-consolidating pick
    only (the caller checks); :func:`commit_one` starts the job.
    """
    nodes = plat.nodes
    for i in range(nodes.shape[0]):
        k = plat.rank_pick[i]
        c = min(free[k], nodes[k] - np.int64(blacklist[j, k] * nodes[k]))
        if c > 0:
            return k if c >= jobs.tasks[j] else np.int64(-1)
    return np.int64(-1)


@helper
def commit_one(j, k, t, jobs, plat, st, out):
    """Start job ``j`` at ``t`` on cluster ``k`` alone: :func:`commit_start` for one cluster.

    The job's row of ``out.alloc`` gets all its tasks on ``k``; it takes
    ``k``'s nodes, puts no traffic on the links, and its slowdown is
    :func:`slowdown`'s float for one cluster (``SC = 1``). No power budget
    (the caller checks that none is finite).
    """
    T = jobs.tasks[j]
    for kk in range(out.alloc.shape[1]):
        out.alloc[j, kk] = 0
    out.alloc[j, k] = T
    st.run.free[k] -= T
    sigma = jobs.sigma[j]
    sd = with_links(speed_term(sigma, 1.0 / plat.speed[k]), sigma, 1.0)
    st.run.sd[j] = sd
    out.start[j] = t
    fin = t + jobs.runtime[j] * sd
    st.run.fin[j] = fin
    st.evi[E_NH] = heap_push(st.run.ht, st.run.hj, st.evi[E_NH], fin, j)
    st.evi[E_STARTED] += 1


@helper
def objectives(jobs, plat, out):
    """``(makespan, energy, flowtime)`` of a schedule (docs/design.md §5)."""
    J, K = out.alloc.shape
    if J == 0:
        return 0.0, 0.0, 0.0
    fmax = -np.inf
    rmin = np.inf
    flow = 0.0
    busy = 0.0
    for i in range(J):
        fmax = max(fmax, out.finish[i])
        rmin = min(rmin, jobs.release[i])
        flow += out.finish[i] - jobs.release[i]
        dur = out.finish[i] - out.start[i]
        # The energy is summed job by job, cluster by cluster, over the clusters used. An
        # unused cluster's term is +0.0 (every factor is finite and non-negative), which
        # adds nothing: so a job in one cluster adds the sum of its terms at once, and only
        # a co-allocated job's terms go into ``busy`` one at a time.
        used = 0
        one = 0.0
        for k in range(K):
            x = out.alloc[i, k]
            used += x > 0
            one += x * node_increment(i, k, jobs, plat) * dur
        if used <= 1:
            busy += one
        else:
            for k in range(K):
                if out.alloc[i, k] > 0:
                    busy += out.alloc[i, k] * node_increment(i, k, jobs, plat) * dur
    makespan = fmax - rmin
    idle_w = 0.0
    for k in range(K):
        idle_w += plat.nodes[k] * plat.pidle[k]
    return makespan, makespan * idle_w + busy, flow


# ----------------------------------------------------------------------- power
# docs/design.md §11: a node running job j on cluster k draws power[j] * pbusy[k]
# instead of pidle[k]; the running jobs' increments, per cluster and overall,
# must stay within ``plat.budget`` (cap less idle power).
@helper
def node_increment(j, k, jobs, plat):
    """Power one node of cluster ``k`` adds over idle while it runs job ``j``, W.

    A busy node never draws less than idle (a factor below ``pidle / pbusy``
    gives no increment), so the federation's power rises only when a job
    starts and the budgets need checking only then.
    """
    return max(jobs.power[j] * plat.pbusy[k] - plat.pidle[k], 0.0)


@helper
def is_capped(plat):
    """True when some power budget is finite (``plat.capped``, set with the budgets, so that
    the loop's every start and event tells it with one load)."""
    return plat.capped[0] != 0


@helper
def unpower(r, jobs, plat, alloc, pk):
    """Take job ``r``'s increments out of ``pk`` (it finished)."""
    K = alloc.shape[1]
    for k in range(K):
        if alloc[r, k] > 0:
            d = alloc[r, k] * node_increment(r, k, jobs, plat)
            pk[k] -= d
            pk[K] -= d


@helper
def power_fits(j, jobs, plat, x, pk):
    """True when job ``j`` with tasks ``x`` (K,) per cluster fits the budgets over ``pk``."""
    K = x.shape[0]
    tot = 0.0
    for k in range(K):
        if x[k] > 0:
            d = x[k] * node_increment(j, k, jobs, plat)
            if pk[k] + d > plat.budget[k]:
                return False
            tot += d
    return pk[K] + tot <= plat.budget[K]


@helper
def least_power(j, jobs, plat, free, allow, pk, rk, x):
    """The allocation of least power: job ``j``'s tasks on the cheapest allowed free nodes.

    Clusters are taken by increasing per-node increment (ties: lower index),
    each up to its free allowed nodes and its own budget over ``pk``. Writes
    the allocation into ``x`` (K,) and returns True when it holds every task
    within the cluster and overall budgets.
    """
    K = free.shape[0]
    for i in range(K):
        rk[i] = i
        x[i] = 0
    for i in range(1, K):  # insertion sort: K is small
        c = rk[i]
        key = node_increment(j, c, jobs, plat)
        m = i
        while m > 0 and node_increment(j, rk[m - 1], jobs, plat) > key:
            rk[m] = rk[m - 1]
            m -= 1
        rk[m] = c
    rem = jobs.tasks[j]
    tot = 0.0
    for i in range(K):
        if rem == 0:
            break
        k = rk[i]
        inc = node_increment(j, k, jobs, plat)
        n = min(min(free[k], allow[k]), rem)
        if inc > 0.0 and plat.budget[k] < np.inf:
            room = plat.budget[k] - pk[k]
            m = np.int64(np.floor(room / inc)) if room > 0.0 else 0
            m = min(m, n)
            # Rounding of the quotient: settle on the largest m with pk + m inc <= budget.
            while m > 0 and pk[k] + m * inc > plat.budget[k]:
                m -= 1
            while m < n and pk[k] + (m + 1) * inc <= plat.budget[k]:
                m += 1
            n = max(m, 0)
        x[k] = n
        rem -= n
        tot += n * inc
    return rem == 0 and pk[K] + tot <= plat.budget[K]


@helper
def place(j, jobs, plat, st, alloc, allow):
    """Allocate job ``j`` (whose allowed free nodes hold it) within the power budgets.

    The allocation rule's pick (:func:`allocate`) when it fits the budgets,
    else the least-power allocation (:func:`least_power`); returns False, with
    ``alloc[j]`` cleared, when neither fits now.
    """
    allocate(j, jobs, plat, st, alloc, allow)
    if not is_capped(plat):
        return True
    K = alloc.shape[1]
    for k in range(K):
        st.run.xs[k] = alloc[j, k]
    if power_fits(j, jobs, plat, st.run.xs, st.run.pk):
        return True
    ok = least_power(j, jobs, plat, st.run.free, allow, st.run.pk, st.run.rk, st.run.xs)
    for k in range(K):
        alloc[j, k] = st.run.xs[k] if ok else 0
    return ok


@helper
def plans_on_estimates(jobs):
    """1 when some job's ``est`` differs from its run time (``E_PLAN``), else 0."""
    for i in range(jobs.est.shape[0]):
        if jobs.est[i] != jobs.runtime[i]:
            return 1
    return 0


@helper
def planned_end(r, t, jobs, st, out):
    """When running job ``r`` is planned to end, seen at ``t``: what EASY's reservation replays.

    Its projected finish when it plans on its run time (``est == runtime``);
    else the predicted duration scaled by ``est / runtime`` (as
    :class:`moga.sim.Session` plans), never before ``t``: a job that overruns
    its request is planned to end now.
    """
    if jobs.est[r] == jobs.runtime[r]:
        return st.run.fin[r]
    s = out.start[r]
    return max(t, s + (st.run.fin[r] - s) * (jobs.est[r] / jobs.runtime[r]))


@helper
def idle_federation(st):
    """True when no job is running."""
    return st.evi[E_NH] + st.evi[E_NCL] == 0
