"""EASY's backfill candidates without a scan of the whole queue.

A batch job-set keeps most of its jobs queued at every event, so a backfill
scan that visits every queued job behind the head costs the queue's length
per event, quadratic in the job count over a decode. The scan's cheap tests
reject nearly all of them, and each test compares a job's width and run time
with bounds that only tighten while one scan runs:

* its allowed clusters must hold ``tasks <= X`` free nodes (``X`` is the
  ``free_by_mask`` entry of the job's cluster set, or the federation's free
  nodes beyond :data:`~decoders._federated_core.TABLE_K` clusters);
* it must end by the reservation at its fastest (``t + runtime * sd_min <=
  shadow``) or be narrow enough to leave the head room (``tasks <= Y``);
* under a power cap, the least power it can add must fit the federation's
  budget over the running jobs' increments (``pk + floor <= cap``), its floor
  being its tasks times its per-node increment on the cheapest cluster that
  has free nodes and is in its cluster set (:func:`power_floors` keeps
  ``tasks x increment`` per job and cluster): a cap leaves nodes idle, so
  without this test nearly every queued job passes the others and is
  visited only for :func:`~decoders._federated_core.place` to refuse it;
* without a cap and with the plain greedy pick, a job that cannot end by the
  reservation and that its group's first cluster in the pick order with a
  free node (``k1``) holds whole (``tasks <= free[k1]``, and ``tasks`` at
  most its allowance on each of its group's clusters: its *single width*)
  is placed there alone, so it leaves the head room only if ``tasks <= Y1``
  (``slack_h[k1]`` plus the head's spare room, see
  :func:`decoders.easy.start_easy`).

The queued jobs are therefore grouped by cluster set (one group beyond
``TABLE_K`` clusters), each group in queue order, and each group keeps a
segment tree of the minimum width, the minimum run time of the jobs of at
most ``2**b`` tasks for a few ``b`` (:data:`R_BUCKETS`) and of all, the
maximum single width and, per cluster, the minimum power floor over its
queued jobs. The run-time buckets keep a subtree of narrow late jobs and
short jobs too wide for ``X`` from looking as if one of them could end by
the reservation: the walk reads the bucket of the least ``2**b >= X``.
:func:`first_candidate` walks one tree from a leaf and returns the first job
that passes the tests, pruning every subtree whose minima fail them; the
backfill loop merges the groups in queue order. The jobs it returns are exactly those the full scan would not
have skipped, in the same order, so the schedules are the same.

Layout, in :data:`~decoders._federated_core.State` (``st.index``): ``g_leaf`` (J: a job's
leaf in its group), ``g_off`` (G + 1: where each group's leaves start in
``g_pos``, the queue positions of the leaves), ``g_toff`` (G + 1: where each
group's tree starts in ``tr_t``/``tr_r``/``tr_w``/``tr_p``; a tree of ``S`` leaves,
a power of two, has nodes ``1 .. 2S - 1``; ``tr_r`` has a column per width
bucket, ``tr_p`` one per cluster),
``p_floor`` (J x K: each job's power floor on each cluster, zero until
:func:`power_floors` sets it), ``g_act`` (the non-empty groups, their count
in ``E_NACT``), ``g_cand`` (G: each group's next candidate leaf, -1 when
none) and ``dfs`` (the walk's stack).
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: Width of an empty leaf: above every bound.
EMPTY = np.iinfo(np.int64).max

#: Columns of ``tr_r``: column ``b < R_BUCKETS - 1`` holds the least run time of the jobs
#: of at most ``2**b`` tasks, the last one that of every job.
R_BUCKETS = 8


@njit(cache=True, forceinline=True, error_model="numpy", _nrt=False)
def group_of(j, st, by_mask):
    """Job ``j``'s group: its allowance's cluster set, or 0 beyond ``TABLE_K`` clusters."""
    return st.scan.mask_j[j] if by_mask else 0


@njit(cache=True, forceinline=True, error_model="numpy", _nrt=False)
def build_index(order, st, by_mask):
    """Group the jobs by cluster set in queue order and empty every tree; returns the active count.

    ``order`` gives the queue positions (``order[p]`` is the job at position
    ``p``); every job's cluster set is in ``st.scan.mask_j`` (:func:`allowances`).
    """
    J = order.shape[0]
    G = st.index.g_cand.shape[0]
    g_off, g_toff = st.index.g_off, st.index.g_toff
    for m in range(G + 1):
        g_off[m] = 0
    for p in range(J):
        g_off[group_of(order[p], st, by_mask) + 1] += 1
    n_act = 0
    g_toff[0] = 0
    for m in range(G):
        n = g_off[m + 1]
        if n > 0:
            st.index.g_act[n_act] = m
            n_act += 1
        size = 1
        while size < n:
            size *= 2
        g_toff[m + 1] = g_toff[m] + 2 * size
        g_off[m + 1] += g_off[m]
        st.index.g_cand[m] = g_off[m]  # fill cursor
    for p in range(J):
        j = order[p]
        m = group_of(j, st, by_mask)
        c = st.index.g_cand[m]
        st.index.g_pos[c] = p
        st.index.g_leaf[j] = c - g_off[m]
        st.index.g_cand[m] = c + 1
    for i in range(g_toff[G]):
        st.index.tr_t[i] = EMPTY
        for b in range(R_BUCKETS):
            st.index.tr_r[i, b] = np.inf
        st.index.tr_w[i] = 0
        for k in range(st.index.tr_p.shape[1]):
            st.index.tr_p[i, k] = np.inf
    return n_act


#: A power floor is scaled down by this much, so that the increments the exact test adds
#: up in floats (K terms, each at least the floor's share) never fall below it.
FLOOR_MARGIN = 1.0 - 1e-9


@njit(cache=True, forceinline=True, error_model="numpy", _nrt=False)
def power_floors(tasks, power, pbusy, pidle, p_floor):
    """Each job's power floor on each cluster: ``tasks[j]`` times its per-node increment
    there, ``max(power[j] * pbusy[k] - pidle[k], 0)``
    (:func:`~decoders._federated_core.node_increment`), times :data:`FLOOR_MARGIN`. No
    allocation of the job on a set of clusters adds less power than its least floor on
    them."""
    for j in range(tasks.shape[0]):
        for k in range(pbusy.shape[0]):
            p_floor[j, k] = tasks[j] * max(power[j] * pbusy[k] - pidle[k], 0.0) * FLOOR_MARGIN


@njit(cache=True, forceinline=True, error_model="numpy", _nrt=False)
def single_width(j, tasks, st, by_mask):
    """Job ``j``'s single width in the index: ``tasks`` when its allowance admits that many
    on each cluster of its group (every cluster beyond ``TABLE_K``), else :data:`EMPTY`;
    0 for an empty leaf (``tasks == EMPTY``), which the maximum then ignores.

    A job whose single width is at most the free nodes of a cluster of its group takes
    all its tasks there when the greedy pick reaches that cluster first."""
    if tasks == EMPTY:
        return 0
    m = group_of(j, st, by_mask)
    for k in range(st.scan.allow_j.shape[1]):
        if (not by_mask or (m >> k) & 1) and st.scan.allow_j[j, k] < tasks:
            return EMPTY
    return tasks


@njit(cache=True, forceinline=True, error_model="numpy", _nrt=False)
def _leaf_runtimes(tr_r, node, tasks, runtime):
    """A leaf's run-time columns: ``runtime`` in each width bucket that holds ``tasks``."""
    for b in range(R_BUCKETS):
        tr_r[node, b] = runtime if b == R_BUCKETS - 1 or tasks <= (1 << b) else np.inf


@njit(cache=True, forceinline=True, error_model="numpy", _nrt=False)
def set_leaf(j, tasks, runtime, st, by_mask):
    """Job ``j`` joins (``tasks``, ``runtime``) or leaves (``EMPTY``, ``inf``) its group's tree."""
    m = group_of(j, st, by_mask)
    off = st.index.g_toff[m]
    size = (st.index.g_toff[m + 1] - off) // 2
    node = size + st.index.g_leaf[j]
    st.index.tr_t[off + node] = tasks
    _leaf_runtimes(st.index.tr_r, off + node, tasks, runtime)
    st.index.tr_w[off + node] = single_width(j, tasks, st, by_mask)
    K = st.index.tr_p.shape[1]
    for k in range(K):
        st.index.tr_p[off + node, k] = np.inf if tasks == EMPTY else st.index.p_floor[j, k]
    node //= 2
    while node >= 1:
        a = off + 2 * node
        st.index.tr_t[off + node] = min(st.index.tr_t[a], st.index.tr_t[a + 1])
        for b in range(R_BUCKETS):
            st.index.tr_r[off + node, b] = min(st.index.tr_r[a, b], st.index.tr_r[a + 1, b])
        st.index.tr_w[off + node] = max(st.index.tr_w[a], st.index.tr_w[a + 1])
        for k in range(K):
            st.index.tr_p[off + node, k] = min(st.index.tr_p[a, k], st.index.tr_p[a + 1, k])
        node //= 2


@njit(cache=True, forceinline=True, error_model="numpy", _nrt=False)
def add_jobs(first, last, by_release, tasks, runtime, st, by_mask):
    """Jobs ``by_release[first:last]`` (arrivals) join their groups' trees.

    One :func:`set_leaf` each, a walk to the root; a batch of more than an
    eighth of the jobs (a batch job-set's arrival at time 0) sets its leaves
    and then recomputes every tree bottom up, O(J) instead of O(m log J).
    """
    J = by_release.shape[0]
    if 8 * (last - first) <= J:
        for i in range(first, last):
            j = by_release[i]
            set_leaf(j, tasks[j], runtime[j], st, by_mask)
        return
    for i in range(first, last):
        j = by_release[i]
        m = group_of(j, st, by_mask)
        off = st.index.g_toff[m]
        node = off + (st.index.g_toff[m + 1] - off) // 2 + st.index.g_leaf[j]
        st.index.tr_t[node] = tasks[j]
        _leaf_runtimes(st.index.tr_r, node, tasks[j], runtime[j])
        st.index.tr_w[node] = single_width(j, tasks[j], st, by_mask)
        for k in range(st.index.tr_p.shape[1]):
            st.index.tr_p[node, k] = st.index.p_floor[j, k]
    for m in range(st.index.g_cand.shape[0]):
        off = st.index.g_toff[m]
        for node in range((st.index.g_toff[m + 1] - off) // 2 - 1, 0, -1):
            a = off + 2 * node
            st.index.tr_t[off + node] = min(st.index.tr_t[a], st.index.tr_t[a + 1])
            for b in range(R_BUCKETS):
                st.index.tr_r[off + node, b] = min(st.index.tr_r[a, b], st.index.tr_r[a + 1, b])
            st.index.tr_w[off + node] = max(st.index.tr_w[a], st.index.tr_w[a + 1])
            for k in range(st.index.tr_p.shape[1]):
                st.index.tr_p[off + node, k] = min(st.index.tr_p[a, k], st.index.tr_p[a + 1, k])


@njit(cache=True, forceinline=True, error_model="numpy", _nrt=False)
def group_may_pass(m, st, x, y, t, sd_min, shadow, pk=0.0, cap=np.inf, fm=-1, lpk=0.0, hf=0.0,
                   y1=EMPTY, z=-1):
    """Whether some job of group ``m`` may pass the cheap tests (:func:`first_candidate`).

    The tree's root holds the group's least width, least run time and least
    power floor; when they fail the tests, every job does. Most groups fail
    here at most events (the head is blocked, so few nodes are free, or
    under a cap little power is left), and the test is one look-up where a
    walk climbs the tree.
    """
    ix = st.index
    return _may_pass(ix.tr_t, ix.tr_r, ix.tr_w, ix.tr_p, ix.g_toff[m] + 1, x, y, t, sd_min, shadow,
                     pk=pk, cap=cap, fm=fm, lpk=lpk, hf=hf, y1=y1, z=z)


@njit(cache=True, forceinline=True, error_model="numpy", _nrt=False)
def _may_pass(tr_t, tr_r, tr_w, tr_p, node, x, y, t, sd_min, shadow, pk, cap, fm, lpk, hf, y1, z):
    """Whether some job below ``node`` may pass the cheap tests (see :func:`first_candidate`)."""
    w = tr_t[node]
    if w > x:
        return False
    p = 0.0
    if cap < np.inf:
        p = _floor(tr_p, node, fm)
        if pk + p > cap:
            return False
    # Only the jobs of at most x tasks may pass, so the least run time among those of at
    # most 2**b >= x tasks tells whether one may end by the reservation; a short job too
    # wide for x does not make the narrow late ones below look as if they might.
    b = 0
    while b < R_BUCKETS - 1 and (1 << b) < x:
        b += 1
    if t + tr_r[node, b] * sd_min > shadow:  # running past the reservation
        if w > y1 and tr_w[node] <= z:
            return False  # each is placed alone on the first cluster, where it takes the head's room
        return w <= y and not (cap < np.inf and lpk + p + hf > cap)
    return True


@njit(cache=True, forceinline=True, error_model="numpy", _nrt=False)
def _floor(tr_p, node, fm):
    """The least power floor at ``node`` over the clusters of the bit set ``fm``."""
    least = np.inf
    for k in range(tr_p.shape[1]):
        if k > 62 or (fm >> k) & 1:
            least = min(least, tr_p[node, k])
    return least


@njit(cache=True, forceinline=True, error_model="numpy", _nrt=False)
def first_candidate(m, leaf, st, x, y, t, sd_min, shadow, pk=0.0, cap=np.inf, fm=-1, lpk=0.0,
                    hf=0.0, y1=EMPTY, z=-1):
    """The first leaf ``>= leaf`` of group ``m`` whose job passes the cheap tests, or -1.

    A job passes when ``tasks <= x``, either ``tasks <= y`` or
    ``t + runtime * sd_min <= shadow``, and ``pk + floor <= cap`` (``floor``:
    its least power floor over the clusters of the bit set ``fm``, those it
    may run on now; ``pk``: the running jobs' increments over the whole
    federation, ``cap``: its budget, infinite without a cap). A job that
    cannot end by the reservation must moreover leave the head its power
    then: ``lpk + floor + hf <= cap`` (``lpk``: the increments still drawn at
    the reservation and those promised past it, ``hf``: the head's least
    floor). A job that cannot end by the reservation and whose single width
    (:func:`single_width`) is at most ``z`` must moreover be at most ``y1``
    wide (``z = -1`` turns this test off). An empty leaf never passes.
    """
    if not group_may_pass(m, st, x, y, t, sd_min, shadow, pk, cap, fm, lpk, hf, y1, z):
        return -1
    ix = st.index
    off = ix.g_toff[m]
    return _walk(ix.tr_t, ix.tr_r, ix.tr_w, ix.tr_p, ix.dfs, off, (ix.g_toff[m + 1] - off) // 2, leaf,
                 x, y, t, sd_min=sd_min, shadow=shadow, pk=pk, cap=cap, fm=fm, lpk=lpk, hf=hf,
                 y1=y1, z=z)


@njit(cache=True, forceinline=True, error_model="numpy", _nrt=False)
def first_candidate_behind(m, position, st, x, y, t, sd_min, shadow, pk=0.0, cap=np.inf,
                           fm=-1, lpk=0.0, hf=0.0, y1=EMPTY, z=-1):
    """:func:`first_candidate` from the first leaf of group ``m`` behind queue position
    ``position``; the position is looked up only when the group's root passes."""
    if not group_may_pass(m, st, x, y, t, sd_min, shadow, pk, cap, fm, lpk, hf, y1, z):
        return -1
    ix = st.index
    off = ix.g_toff[m]
    return _walk(ix.tr_t, ix.tr_r, ix.tr_w, ix.tr_p, ix.dfs, off, (ix.g_toff[m + 1] - off) // 2,
                 first_after(m, position, st), x, y, t, sd_min=sd_min, shadow=shadow, pk=pk,
                 cap=cap, fm=fm, lpk=lpk, hf=hf, y1=y1, z=z)


@njit(cache=True, error_model="numpy", _nrt=False)
def _walk(tr_t, tr_r, tr_w, tr_p, stack, off, size, leaf, x, y, t, sd_min, shadow, pk, cap, fm,
          lpk, hf, y1, z):
    """:func:`first_candidate` in the tree at ``off`` of ``size`` leaves (not inlined: the
    backfill loop calls it from three places, and one compiled copy keeps compiling cheap)."""
    if leaf >= size:
        return -1
    lo = leaf + size
    hi = 2 * size
    while lo < hi:
        if lo & 1:
            # The subtree of ``lo`` covers the next leaves in order: search it depth first.
            n = 1
            stack[0] = lo
            while n > 0:
                n -= 1
                node = stack[n]
                if not _may_pass(tr_t, tr_r, tr_w, tr_p, off + node, x, y, t, sd_min, shadow,
                                 pk=pk, cap=cap, fm=fm, lpk=lpk, hf=hf, y1=y1, z=z):
                    continue  # no job below passes
                if node >= size:
                    return node - size
                stack[n] = 2 * node + 1
                stack[n + 1] = 2 * node
                n += 2
            lo += 1
        lo //= 2
        hi //= 2
    return -1


@njit(cache=True, forceinline=True, error_model="numpy", _nrt=False)
def first_after(m, position, st):
    """The first leaf of group ``m`` whose queue position is after ``position``."""
    lo = st.index.g_off[m]
    hi = st.index.g_off[m + 1]
    base = lo
    while lo < hi:
        mid = (lo + hi) // 2
        if st.index.g_pos[mid] <= position:
            lo = mid + 1
        else:
            hi = mid
    return lo - base
