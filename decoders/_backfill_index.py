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
  without a cap, "at its fastest" is per speed tier
  (:func:`decoders.easy._speed_tiers`): a job ends no earlier than ``t + cr x
  runtime + cq x comp`` (``comp``: its computation time, ``runtime x (1 -
  sigma)``), with the coefficients of the speed of the fastest cluster the
  greedy pick may complete it on, given its tasks (:func:`_tier_late`), and,
  with the plain greedy pick, a late job of its single width must be at most
  its tier's late width (:func:`_tier_skip`);
* under a power cap, the least power it can add must fit the federation's
  budget over the running jobs' increments (``pk + floor <= cap``), its floor
  being its tasks times its per-node increment on the cheapest cluster that
  has free nodes and is in its cluster set (:func:`power_floors` keeps
  ``tasks x increment`` per job and cluster): a cap leaves nodes idle, so
  without this test nearly every queued job passes the others and is
  visited only for :func:`~decoders._federated_core.place` to refuse it;
* under a power cap, a job that cannot end by the reservation must leave the
  head its power then (``lpk + floor + hf <= cap``, ``hf`` the head's least
  power, :func:`~decoders.easy._head_floor`). The least floor is loose there:
  the allocation rule puts a job that fits on its first cluster ``k1`` (the
  first of ``rank_pick`` in its cluster set with a free node) wholly there,
  and keeps that allocation when it fits the budgets now, so such a job adds
  exactly ``tasks x increment`` on ``k1``, its top (:func:`power_floors`). When
  every job of a subtree fits on ``k1`` (its widest job within ``free[k1]``,
  and ``k1``'s allowance holding each) and the largest top fits the budgets
  now, each adds that, so the least floor column ``k1`` replaces the least
  floor in the late test. This test does not only tighten as jobs start (a
  start may fill ``k1``, or leave a top that fitted no longer fitting, and
  the job then falls back to its least-power allocation), so while it is in
  use the backfill loop searches every group afresh behind a started job;
* under a power cap, least-cost bounds (:func:`least_cost`) from a subtree's
  least width and least power factor: the job's cheapest free nodes now (by
  its per-node increment, each cluster up to its free nodes) must fit the
  budget over ``pk``, which also counts the nodes that the floor's one
  cheapest cluster lacks; and a late job and the head together must fit it
  over ``lpk`` on the nodes they share at the reservation, each node at the
  lesser of the two increments: a job that takes the head's cheap nodes
  pushes the head onto dearer ones, which the separate floors miss. Both
  only tighten as jobs start;
* under a power cap, for a late subtree whose jobs all fit wholly on ``k1``
  but whose least top there does not fit the budget now, with an allowance
  holding each job on every cluster of its group (its single width), equal
  idle powers and no per-cluster budget: every job falls back to its
  least-power allocation, which fills the free nodes in the one cluster
  order by busy power, so the subtree's least width and factor give a
  floor of that allocation's power plus the head's least power beside it
  at the reservation (:func:`fallback_cost`). It is exact for the least
  job, where the lesser-increment bound lets the head ride on the job's
  cheap nodes;
* under a power cap, with that same cluster order (equal idle powers and no
  per-cluster budget), a subtree whose jobs all fit wholly on ``k1`` but
  whose least floor there does not fit now, each job of positive increments,
  falls back to least-power allocations, which run no faster than the
  cheapest clusters that hold them (:func:`fallback_tiers`): "can end by
  the reservation" is then the speed-tier test of those tiers instead of
  the fastest speed, so the late tests above apply to the jobs that the
  cap sends to slow nodes;
* without a cap and with the plain greedy pick, a job that cannot end by the
  reservation and that its group's first cluster in the pick order with a
  free node (``k1``) holds whole (``tasks <= free[k1]``, and ``tasks`` at
  most its allowance on each of its group's clusters: its *single width*)
  is placed there alone, so it leaves the head room only if ``tasks <= Y1``
  (``slack_h[k1]`` plus the head's spare room, see
  :func:`decoders.easy.start_easy`).

The queued jobs are therefore grouped by cluster set (one group beyond
``TABLE_K`` clusters), each group in queue order, and each group keeps a
segment tree of the minimum width, the minimum run time and computation
time of the jobs of fewer than ``2**(b + 1)`` tasks for each ``b`` up to
:data:`R_BUCKETS` and of all, the maximum single width, the minimum width of the jobs without
one and, per cluster, the minimum power floor over its
queued jobs, and, for the late power tests, the maximum width, per cluster
the maximum top, and the least power factor. The run-time buckets keep a
subtree of narrow late jobs and short jobs too wide for ``X`` from looking as
if one of them could end by the reservation: the walk reads the bucket of
the least ``2**(b + 1) > X`` (:func:`_bucket`), per speed tier that of its
width. :func:`first_candidate` walks one
tree from a leaf and returns the first job that passes the tests, pruning
every subtree whose minima fail them; the backfill loop merges the groups in
queue order. The jobs it returns are exactly those the full scan would not
have skipped, in the same order, so the schedules are the same.

Layout, in :data:`~decoders._federated_core.State` (``st.index``): ``g_leaf`` (J: a job's
leaf in its group), ``g_off`` (G + 1: where each group's leaves start in
``g_pos``, the queue positions of the leaves), ``g_toff`` (G + 1: where each
group's tree starts in ``tr_i``/``tr_rg``/``tr_p``; a tree of ``S`` leaves, a
power of two, has nodes ``1 .. 2S - 1``, a row each; ``tr_i`` holds a node's
integer fields side by side (columns :data:`T_W`, :data:`T_SW`, :data:`T_U`:
least width, greatest single width, least width without a single width),
``tr_rg`` (float32, :func:`tree_time`) its least run and computation times,
a pair of columns per width bucket, and ``tr_p`` a column per cluster; a walk
reads a node's tests from one 32-byte record and the pair of its bucket; both
arrays start on a cache line), ``tiers`` (10 x K: the speed tiers of the group
searched, :func:`decoders.easy._speed_tiers`, rows 0 to 4, and its fall-back
tiers under a cap, :func:`fallback_tiers`, rows 5 to 8),
``p_floor`` (J x K: each job's power floor on each cluster, zero until
:func:`power_floors` sets it), ``tr_n`` and ``tr_q`` (the maximum width and,
a column per cluster, the maximum top), ``p_top`` (J x K: each job's top on
each cluster, infinite until :func:`power_floors` sets it, and where the
allowance cannot hold the job), ``tr_m`` and ``p_fac`` (the least power
factor, and each job's), ``on`` (3,: ``on[0]`` is 1 once :func:`power_floors` ran; until
then the trees keep only widths, single widths, run and computation times, so an
uncapped decode pays nothing for the power fields), ``pb``/``pi`` (K: the clusters' busy and
idle power), ``c_free``, ``c_resv`` and ``h_inc`` (K: the node counts and the
head's increments of :func:`least_cost`, set by the backfill loop at each
scan, :func:`~decoders.easy._cost_nodes`, which also sets ``c_head``, the nodes
free at the reservation less those promised past it, ``h_allow``, the head's
allowance, ``p_ord``, the clusters by busy power and each one's place in that
order, and ``on[1]``, 1 when :func:`fallback_cost` holds; ``on[2]``: the width buckets
kept, :func:`build_index`), ``g_act`` (the non-empty groups,
their count in ``E_NACT``), ``g_cand`` (G: each group's next candidate leaf,
-1 when none) and ``dfs`` (the walk's stack).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._kernels import helper

#: Width of an empty leaf: above every bound.
EMPTY = np.iinfo(np.int64).max

#: Width buckets of ``tr_rg``: bucket ``b < R_BUCKETS - 1`` holds the least run time (column
#: ``2 b``) and computation time (column ``2 b + 1``) of the jobs of fewer than ``2**(b + 1)``
#: tasks, the last one those of every job. Edges just below the powers of two keep the jobs
#: of a power-of-two width, the common ones, out of the buckets read for fewer free nodes
#: than their tasks, and the buckets go on to jobs of 32,767 tasks: a width bound that falls
#: back to every job lets the short wide jobs of a subtree open it for its narrow late ones.
R_BUCKETS = 16

#: Columns of ``tr_i``, a node's integer record: its subtree's least width, greatest single
#: width (:func:`single_width`) and least width among the jobs without a single width.
#: Column 3 is unused: it makes a record 32 bytes, two sibling nodes to a cache line.
T_W, T_SW, T_U = 0, 1, 2


@helper
def group_of(j, st, by_mask):
    """Job ``j``'s group: its allowance's cluster set, or 0 beyond ``TABLE_K`` clusters."""
    return st.scan.mask_j[j] if by_mask else 0


@helper
def build_index(order, st, by_mask, nodes=EMPTY):
    """Group the jobs by cluster set in queue order and empty every tree; returns the active count.

    ``order`` gives the queue positions (``order[p]`` is the job at position
    ``p``); every job's cluster set is in ``st.scan.mask_j`` (:func:`allowances`).
    ``nodes``: the federation's nodes, which every width bound ``x`` the walks are given
    (free nodes) must not exceed; the trees keep only the width buckets these may read
    (``on[2]``: the buckets up to :func:`_bucket` of ``nodes``), so a small federation's
    trees stay as cheap to build and update as before.
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
    powered = st.index.on[0] != 0
    nb = _bucket(nodes) + 1
    st.index.on[2] = nb
    for i in range(g_toff[G]):
        st.index.tr_i[i, T_W] = EMPTY
        st.index.tr_i[i, T_SW] = 0
        st.index.tr_i[i, T_U] = EMPTY
        for c in range(2 * nb):  # the buckets past these are never read
            st.index.tr_rg[i, c] = np.float32(np.inf)
        if powered:
            st.index.tr_n[i] = 0
            st.index.tr_m[i] = np.inf
            for k in range(st.index.tr_p.shape[1]):
                st.index.tr_p[i, k] = np.inf
                st.index.tr_q[i, k] = -np.inf
    return n_act


#: A power floor is scaled down by this much, so that the increments the exact test adds
#: up in floats (K terms, each at least the floor's share) never fall below it.
FLOOR_MARGIN = 1.0 - 1e-9


@helper
def power_floors(tasks, power, pbusy, pidle, allow_j, ix):
    """Each job's power floor and top on each cluster, into the index ``ix`` (``st.index``),
    which from then on keeps its power fields (``ix.on``).

    Its tasks times its per-node increment there, ``max(power[j] * pbusy[k] -
    pidle[k], 0)`` (:func:`~decoders._federated_core.node_increment`): times
    :data:`FLOOR_MARGIN` into ``p_floor`` (no allocation of the job on a set of
    clusters adds less power than its least floor on them), divided by it into
    ``p_top`` (no less than what the job adds with all its tasks there), or
    infinite there when its allowance ``allow_j`` holds fewer nodes than its tasks.
    Its power factor goes into ``p_fac`` and the clusters' busy and idle power
    into ``pb`` and ``pi`` (:func:`least_cost`).
    """
    ix.on[0] = 1
    for k in range(pbusy.shape[0]):
        ix.pb[k] = pbusy[k]
        ix.pi[k] = pidle[k]
    for j in range(tasks.shape[0]):
        ix.p_fac[j] = power[j]
        for k in range(pbusy.shape[0]):
            p = tasks[j] * max(power[j] * pbusy[k] - pidle[k], 0.0)
            ix.p_floor[j, k] = p * FLOOR_MARGIN
            ix.p_top[j, k] = p / FLOOR_MARGIN if allow_j[j, k] >= tasks[j] else np.inf


@helper
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


@helper
def _pull(st, off, node):
    """Node ``node`` of the tree at ``off`` from its two children (the power fields only
    while the index keeps them); returns whether any of its fields changed.

    Every ancestor of a node is a function of its children alone, so when a leaf
    changes and a node on its path to the root comes out unchanged, so do all
    the nodes above it (:func:`set_leaf` stops there)."""
    ix = st.index
    a = off + 2 * node
    i = off + node
    ti, rg = ix.tr_i, ix.tr_rg
    w = min(ti[a, T_W], ti[a + 1, T_W])
    sw = max(ti[a, T_SW], ti[a + 1, T_SW])
    u = min(ti[a, T_U], ti[a + 1, T_U])
    changed = w != ti[i, T_W] or sw != ti[i, T_SW] or u != ti[i, T_U]
    ti[i, T_W] = w
    ti[i, T_SW] = sw
    ti[i, T_U] = u
    for c in range(2 * ix.on[2]):
        v = min(rg[a, c], rg[a + 1, c])
        changed |= v != rg[i, c]
        rg[i, c] = v
    if ix.on[0] != 0:
        n = max(ix.tr_n[a], ix.tr_n[a + 1])
        f = min(ix.tr_m[a], ix.tr_m[a + 1])
        changed |= n != ix.tr_n[i] or f != ix.tr_m[i]
        ix.tr_n[i] = n
        ix.tr_m[i] = f
        for k in range(ix.tr_p.shape[1]):
            p = min(ix.tr_p[a, k], ix.tr_p[a + 1, k])
            q = max(ix.tr_q[a, k], ix.tr_q[a + 1, k])
            changed |= p != ix.tr_p[i, k] or q != ix.tr_q[i, k]
            ix.tr_p[i, k] = p
            ix.tr_q[i, k] = q
    return changed


@helper
def _put(st, node, j, tasks, runtime, by_mask, comp):
    """Leaf ``node`` (absolute) holds job ``j`` (``tasks``, ``runtime``, ``comp``) or nothing
    (``EMPTY``, ``inf``); the power fields only while the index keeps them. Its run time
    goes into each width bucket of ``tr_rg`` kept (``on[2]``) that holds ``tasks``, its
    computation time beside it, both as :func:`tree_time`."""
    ix = st.index
    ix.tr_i[node, T_W] = tasks
    inf = np.float32(np.inf)
    r = inf if tasks == EMPTY else tree_time(runtime)
    g = inf if tasks == EMPTY else tree_time(comp)
    for b in range(ix.on[2]):
        held = b == R_BUCKETS - 1 or tasks < (2 << b)
        ix.tr_rg[node, 2 * b] = r if held else inf
        ix.tr_rg[node, 2 * b + 1] = g if held else inf
    sw = single_width(j, tasks, st, by_mask)
    ix.tr_i[node, T_SW] = sw
    ix.tr_i[node, T_U] = tasks if sw == EMPTY else EMPTY
    if ix.on[0] != 0:
        empty = tasks == EMPTY
        ix.tr_n[node] = 0 if empty else tasks
        ix.tr_m[node] = np.inf if empty else ix.p_fac[j]
        for k in range(ix.tr_p.shape[1]):
            ix.tr_p[node, k] = np.inf if empty else ix.p_floor[j, k]
            ix.tr_q[node, k] = -np.inf if empty else ix.p_top[j, k]


@helper
def tree_time(v):
    """A job's run time, or its computation time ``runtime x (1 - sigma)``, as ``tr_rg``
    keeps it: in float32 (half the memory of the many width buckets), scaled down
    first by more than float32's rounding, so never above the value given (the index's
    time tests stay lower bounds)."""
    return np.float32(min(v * (1.0 - 1e-6), 3.0e38))


@helper
def set_leaf(j, tasks, runtime, st, by_mask, comp=0.0):
    """Job ``j`` joins (``tasks``, ``runtime``) or leaves (``EMPTY``, ``inf``) its group's tree.

    ``comp``: its computation time, ``runtime x (1 - sigma)`` (:func:`tree_time`); the
    default 0 keeps the speed-tier test to the run time alone (a lower bound whatever
    ``sigma``)."""
    m = group_of(j, st, by_mask)
    off = st.index.g_toff[m]
    size = (st.index.g_toff[m + 1] - off) // 2
    node = size + st.index.g_leaf[j]
    _put(st, off + node, j, tasks, runtime, by_mask, comp)
    node //= 2
    while node >= 1 and _pull(st, off, node):  # an unchanged node leaves those above as they are
        node //= 2


@helper
def add_jobs(first, last, by_release, tasks, runtime, sigma, st, by_mask):
    """Jobs ``by_release[first:last]`` (arrivals) join their groups' trees (``sigma``: the
    jobs' communication shares, for their computation times).

    One :func:`set_leaf` each, a walk to the root; a batch of more than an
    eighth of the jobs (a batch job-set's arrival at time 0) sets its leaves
    and then recomputes every tree bottom up, O(J) instead of O(m log J).
    """
    J = by_release.shape[0]
    if 8 * (last - first) <= J:
        for i in range(first, last):
            j = by_release[i]
            set_leaf(j, tasks[j], runtime[j], st, by_mask, runtime[j] * (1.0 - sigma[j]))
        return
    for i in range(first, last):
        j = by_release[i]
        m = group_of(j, st, by_mask)
        off = st.index.g_toff[m]
        leaf = off + (st.index.g_toff[m + 1] - off) // 2 + st.index.g_leaf[j]
        _put(st, leaf, j, tasks[j], runtime[j], by_mask, runtime[j] * (1.0 - sigma[j]))
    for m in range(st.index.g_cand.shape[0]):
        off = st.index.g_toff[m]
        for node in range((st.index.g_toff[m + 1] - off) // 2 - 1, 0, -1):
            _pull(st, off, node)


@helper
def group_may_pass(m, st, x, y, t, sd_min, shadow, pk=0.0, cap=np.inf, fm=-1, lpk=0.0, hf=0.0,
                   k1=-1, fk1=0, pk1=0.0, b1=np.inf, hn=-1, y1=EMPTY, z=-1, nl=0):
    """Whether some job of group ``m`` may pass the cheap tests (:func:`first_candidate`).

    The tree's root holds the group's least width, least run time and least
    power floor; when they fail the tests, every job does. Most groups fail
    here at most events (the head is blocked, so few nodes are free, or
    under a cap little power is left), and the test is one look-up where a
    walk climbs the tree.
    """
    ix = st.index
    node = ix.g_toff[m] + 1
    if cap == np.inf:  # the width and run-time tests alone, as in _walk_plain
        w = ix.tr_i[node, T_W]
        return not (w > x or (t + ix.tr_rg[node, 2 * _bucket(x)] * sd_min > shadow
                              and (w > y or (w > y1 and ix.tr_i[node, T_SW] <= z))))
    return _may_pass(ix, node, x, y, t, sd_min, shadow, pk=pk, cap=cap,
                     fm=fm, lpk=lpk, hf=hf, k1=k1, fk1=fk1, pk1=pk1, b1=b1, hn=hn, y1=y1, z=z,
                     nl=nl)


@helper
def _may_pass(ix, node, x, y, t, sd_min, shadow, pk, cap, fm, lpk, hf, k1, fk1, pk1, b1, hn, y1,
              z, nl=0):
    """Whether some job below ``node`` may pass the cheap tests (see :func:`first_candidate`)."""
    tr_p = ix.tr_p
    w = ix.tr_i[node, T_W]
    if w > x:
        return False
    p = 0.0
    if cap < np.inf:
        p = _floor(tr_p, node, fm)
        if pk + p > cap:
            return False
    late = t + ix.tr_rg[node, 2 * _bucket(x)] * sd_min > shadow
    if (not late and nl > 0 and k1 >= 0 and ix.tr_n[node] <= fk1 and ix.tr_q[node, k1] < np.inf
            and pk + tr_p[node, k1] > cap
            and ix.tr_m[node] * ix.pb[ix.p_ord[0, 0]] - ix.pi[ix.p_ord[0, 0]] > 0.0):
        # Every job below fits wholly on k1, where no top fits now: each falls back to
        # its least-power allocation, placed at the speeds of the fall-back tiers.
        late = _tier_late(ix.tr_rg, ix.tiers, nl, node, w, t, shadow, np.int64(5))
    if late:  # running past the reservation
        if w > y:
            return False
        if w > y1 and ix.tr_i[node, T_SW] <= z:
            return False  # each is placed alone on the first cluster, where it takes the head's room
        if cap < np.inf:
            if lpk + p + hf > cap:
                return False
            if k1 >= 0 and ix.tr_n[node] <= fk1:
                # Every job below fits wholly on k1; when every top fits now, each
                # adds its top there, at least the floor column k1.
                q = ix.tr_q[node, k1]
                if pk + q <= cap and pk1 + q <= b1 and (
                        lpk + tr_p[node, k1] + hf > cap
                        or hn > 0 and lpk + tr_p[node, k1] + _fallback_cost(
                            ix.pb, ix.pi, ix.h_inc, ix.p_ord, ix.c_free, ix.c_head, ix.h_allow,
                            w, 0.0, fm, hn, k1) > cap):
                    return False  # or the head's least power beside its least width there
                if (ix.on[1] != 0 and pk + tr_p[node, k1] > cap and ix.tr_i[node, T_SW] < EMPTY
                        and lpk + _fallback_cost(ix.pb, ix.pi, ix.h_inc, ix.p_ord, ix.c_free,
                                                 ix.c_head, ix.h_allow, w, ix.tr_m[node],
                                                 fm, hn, np.int64(-1)) > cap):
                    # Every job below falls back to its least-power allocation, which
                    # takes the head's cheapest nodes first.
                    return False
            if hn > 0 and lpk + _least_cost(ix.pb, ix.pi, ix.h_inc, w, ix.tr_m[node],
                                         np.int64(-1), ix.c_resv, hn) > cap:
                return False  # it and the head cannot both have cheap enough nodes then
    if cap < np.inf and hn >= 0 and pk + _least_cost(ix.pb, ix.pi, ix.h_inc, w, ix.tr_m[node], fm,
                                                     ix.c_free, np.int64(0)) > cap:
        return False  # not even its cheapest free nodes fit now
    return True


@helper
def _bucket(x):
    """The width bucket of ``tr_rg`` the walk reads for the width bound ``x``: the
    least ``b`` with ``2**(b + 1) > x`` (the bucket of the jobs of fewer than ``2**(b + 1)``
    tasks, which holds every job of at most ``x``), or the last (every job).

    Only the jobs of at most ``x`` tasks may pass, so the least run time among those of
    that bucket tells whether one may end by the reservation; a short job too wide for
    ``x`` (at least ``2**(b + 1)`` tasks) does not make the narrow late ones beside it
    look as if they might.
    """
    b = 0
    while b < R_BUCKETS - 1 and (2 << b) <= x:
        b += 1
    return b


@helper
def least_cost(ix, n, pf, fm, nodes, hn):
    """A floor of the power ``n`` tasks of power factor at least ``pf`` and ``hn`` tasks of
    the head add on the clusters of the bit set ``fm`` holding ``nodes[k]`` between them.

    Each node of cluster ``k`` costs at least the lesser of the two per-node increments
    there (``max(pf * pb[k] - pi[k], 0)`` and, with ``hn > 0``, the head's ``h_inc[k]``),
    and the cheapest ``n + hn`` nodes are taken (by increasing cost, ties by index, one
    cluster at a time), times :data:`FLOOR_MARGIN`; infinite when the nodes cannot hold
    them. Every allocation of a job of ``n`` or more tasks and factor ``pf`` or more,
    with the head's beside it within ``nodes``, adds at least this (the increments grow
    with the factor and are never negative).
    """
    return _least_cost(ix.pb, ix.pi, ix.h_inc, n, pf, fm, nodes, hn)


@helper
def _next_cheaper(c, k, last_c, last_k, bc):
    """Whether cluster ``k`` at per-node cost ``c`` comes after cluster ``last_k`` at
    ``last_c`` in the order by cost, ties by index, and before the best so far (``bc``):
    one step of taking clusters cheapest first, as :func:`_least_cost` and
    :func:`_fallback_cost` do."""
    return (c > last_c or (c == last_c and k > last_k)) and c < bc


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True, error_model="numpy", _nrt=False)
def _least_cost(pb, pi, h_inc, n, pf, fm, nodes, hn):
    """:func:`least_cost` on the arrays it reads: ``pb``/``pi`` (the clusters' busy and idle
    power) and ``h_inc`` (the head's per-node increments). Not inlined: the late tests call
    it twice in every copy of the index walk, and one compiled copy keeps compiling cheap."""
    rem = n + max(hn, 0)
    tot = 0.0
    last_c = -1.0
    last_k = np.int64(-1)
    K = nodes.shape[0]
    while rem > 0:
        best = -1
        bc = np.inf
        for k in range(K):
            if nodes[k] <= 0 or not (k > 62 or (fm >> k) & 1):
                continue
            c = max(pf * pb[k] - pi[k], 0.0)
            if hn > 0:
                c = min(c, h_inc[k])
            if _next_cheaper(c, k, last_c, last_k, bc):
                best = k
                bc = c
        if best < 0:
            return np.inf
        take = min(rem, nodes[best])
        tot += take * bc
        rem -= take
        last_c = bc
        last_k = best
    return tot * FLOOR_MARGIN


@helper
def fallback_cost(ix, n, pf, fm, hn, k1=-1):
    """:func:`_fallback_cost` on the index ``ix``'s node counts (``c_free``, ``c_head``,
    ``h_allow``), the head's increments ``h_inc`` and the cluster order ``p_ord``."""
    return _fallback_cost(ix.pb, ix.pi, ix.h_inc, ix.p_ord, ix.c_free, ix.c_head, ix.h_allow, n,
                          pf, fm, hn, k1)


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True, error_model="numpy", _nrt=False)
def _fallback_cost(pb, pi, h_inc, p_ord, c_free, c_head, h_allow, n, pf, fm, hn, k1=-1):
    """A floor of the power a job of ``n`` or more tasks and power factor ``pf`` or more
    adds with its least-power allocation now, plus the least power the ``hn`` tasks of the
    head add at the reservation beside it, times :data:`FLOOR_MARGIN`; 0 (no bound) when
    the clusters' increments at ``pf`` are not all positive, infinite when the job, or then
    the head, cannot be placed.

    Valid when the clusters' idle powers are equal, ``p_ord[0]`` orders their busy powers
    strictly (``p_ord[1]``: each cluster's place in that order), no cluster has a budget
    of its own and each job's allowance holds its tasks on every cluster of its group
    (:func:`~decoders.easy._cost_nodes` sets ``on[1]`` for the first three): every such
    job orders the clusters by increment as ``p_ord[0]`` does, so its least-power
    allocation fills the free nodes ``c_free`` of the clusters of the bit set ``fm`` in
    that order, a superset of the nodes the ``n``-task job of factor ``pf`` takes, each
    costing it no less. Beside an allocation ``x`` the head has at most ``min(max(c_head -
    x, 0), h_allow)`` nodes of each cluster (``c_head``: the nodes free at the reservation
    less those promised past it; ``h_allow``: its allowance), and its least power on
    fewer nodes is no less: its cheapest nodes by its per-node increments ``h_inc`` (ties
    by index), as :func:`~decoders._federated_core.least_power` takes them.

    With ``k1 >= 0``, the job's allocation is instead its ``n`` or more tasks on
    cluster ``k1`` alone (the pick of a job that fits there wholly, when its top fits
    the budgets now), and only the head's least power beside ``n`` tasks there is
    returned: it needs none of the conditions above (the head's own budgets only
    make it dearer).
    """
    K = pb.shape[0]
    tot = 0.0
    cut = K  # the place in p_ord[0] of the last cluster the job takes nodes of
    last = 0  # its nodes there
    if k1 < 0:
        for k in range(K):
            if pf * pb[k] - pi[k] <= 0.0:
                return 0.0
        rem = n
        for i in range(K):
            k = p_ord[0, i]
            if rem == 0:
                break
            if not (k > 62 or (fm >> k) & 1):
                continue
            take = min(rem, c_free[k])
            if take > 0:
                tot += take * (pf * pb[k] - pi[k])
                rem -= take
                cut = i
                last = take
        if rem > 0:
            return np.inf
    rem = hn
    last_c = -1.0
    last_k = np.int64(-1)
    while rem > 0:
        best = -1
        bc = np.inf
        for k in range(K):
            c = h_inc[k]
            if _next_cheaper(c, k, last_c, last_k, bc):
                best = k
                bc = c
        if best < 0:
            return np.inf
        i = p_ord[1, best]
        x = 0
        if k1 >= 0:
            x = n if best == k1 else 0
        elif best > 62 or (fm >> best) & 1:
            x = c_free[best] if i < cut else (last if i == cut else 0)
        take = min(rem, min(max(c_head[best] - x, 0), h_allow[best]))
        tot += take * bc
        rem -= take
        last_c = bc
        last_k = best
    return tot * FLOOR_MARGIN


@helper
def fallback_tiers(ix, fm, free, speed, x):
    """The fall-back speed tiers of a group whose clusters with a free node are the bit set
    ``fm``, into rows 5 to 8 of ``ix.tiers`` (as rows 0 to 3 of
    :func:`decoders.easy._speed_tiers`); returns their count.

    With ``ix.on[1]`` (equal idle powers, busy powers far enough apart, no budget of a
    cluster's own: :func:`~decoders.easy._cost_nodes`), a job whose per-node increments
    are all positive orders the clusters by increment as ``ix.p_ord[0]`` orders them by
    busy power, so its least-power allocation
    (:func:`~decoders._federated_core.least_power`) takes ``min(free, allow)`` nodes of
    ``fm``'s clusters in that order until it holds its tasks. Its allowance holds a node
    of each cluster of its group, so it takes one at least of every cluster of ``fm`` up
    to its last, and a job of ``n`` tasks, ``F_{i-1} < n <= F_i`` (``F_i``: the free
    nodes of ``fm``'s first ``i + 1`` clusters in that order), places its last task on
    tier ``i``'s cluster or a later one (its allowance may hold fewer than the free
    nodes): the slowest speed it runs at is at most ``S_i``, the least speed of ``fm``'s
    first ``i + 1`` clusters, and it ends no earlier than ``t + cr_i x runtime + cq_i x
    comp`` (``cr_i = min(1, 1 / S_i)``, ``cq_i = max(0, 1 / S_i - 1)``, with ``sd_min``'s
    margin). The cheapest clusters are often the slow ones, where a job that would end
    by the reservation at the fastest speed runs past it. The tiers stop at the first
    with ``F_i >= x``. As jobs start, ``F_i`` falls and ``fm`` loses clusters; a job's
    tier then holds the same clusters or more of the order (a lost cluster's free nodes
    were zero, as in every cluster before a start's first), so ``S_i`` only falls and
    each bound only rises.
    """
    tiers = ix.tiers
    nt = 0
    cum = 0
    s = np.inf
    for i in range(ix.p_ord.shape[1]):
        k = ix.p_ord[0, i]
        if (fm >> k) & 1 and free[k] > 0:
            cum += free[k]
            s = min(s, speed[k])
            tiers[5, nt] = cum
            tiers[6, nt] = _bucket(np.int64(min(cum, x)))
            tiers[7, nt] = min(1.0, 1.0 / s) * (1.0 - 1e-9)
            tiers[8, nt] = max(0.0, 1.0 / s - 1.0) * (1.0 - 1e-9)
            nt += 1
            if cum >= x:
                break
    return nt


@helper
def _floor(tr_p, node, fm):
    """The least power floor at ``node`` over the clusters of the bit set ``fm``."""
    least = np.inf
    for k in range(tr_p.shape[1]):
        if k > 62 or (fm >> k) & 1:
            least = min(least, tr_p[node, k])
    return least


@helper
def first_candidate(m, leaf, st, x, y, t, sd_min, shadow, pk=0.0, cap=np.inf, fm=-1, lpk=0.0,
                    hf=0.0, k1=-1, fk1=0, pk1=0.0, b1=np.inf, hn=-1, y1=EMPTY, z=-1, nt=0,
                    tw=False, nl=0):
    """The first leaf ``>= leaf`` of group ``m`` whose job passes the cheap tests, or -1.

    A job passes when ``tasks <= x``, either ``tasks <= y`` or
    ``t + runtime * sd_min <= shadow``, and ``pk + floor <= cap`` (``floor``:
    its least power floor over the clusters of the bit set ``fm``, those it
    may run on now; ``pk``: the running jobs' increments over the whole
    federation, ``cap``: its budget, infinite without a cap). A job that
    cannot end by the reservation must moreover leave the head its power
    then: ``lpk + floor + hf <= cap`` (``lpk``: the increments still drawn at
    the reservation and those promised past it, ``hf``: the head's least
    floor). With ``k1 >= 0`` (the allocation rule's first cluster for the
    group: the first of its order in ``fm``; -1 when the rule has no fixed
    order or the group no single cluster set), a late job that fits wholly
    on ``k1`` (``tasks <= fk1``, the free nodes there, and its allowance
    holds it) and whose top there fits the budgets now (``pk + top <= cap``,
    ``pk1 + top <= b1``: the cluster's increments and budget) must leave the
    head its power with its floor on ``k1``: ``lpk + floor_k1 + hf <=
    cap``. With ``hn >= 0``, the scan's node counts in the index
    (:func:`least_cost`: ``c_free``, the free nodes now, and ``c_resv``, the
    nodes a job and the head may share at the reservation, with the head's
    per-node increments ``h_inc``) bound the power from the subtree's least
    width and power factor: a job must fit ``pk`` plus its cheapest free nodes
    in ``fm``, and, with ``hn > 0`` (the head's tasks), a late job must fit
    ``lpk`` plus the cheapest nodes of ``c_resv`` for its tasks and the
    head's together; with ``k1 >= 0`` and ``on[1]``, a late subtree whose jobs fit
    wholly on ``k1`` (their single widths finite) but none of whose floors there fits
    now must fit ``lpk`` plus :func:`fallback_cost`; with ``nl > 0`` (and ``on[1]``), a job
    that fits wholly on ``k1`` but whose floor there does not fit now, its increments
    positive, cannot end by the reservation when the ``nl`` fall-back tiers of rows 5 to
    8 of ``st.index.tiers`` (:func:`fallback_tiers`) say so. A job that cannot end by the
    reservation and whose
    single width (:func:`single_width`) is at most ``z`` must moreover be at
    most ``y1`` wide (``z = -1`` turns this test off). Without a cap and with
    ``nt > 0``, "cannot end by the reservation" is the speed-tier test of
    ``st.index.tiers`` (:func:`_tier_late`) instead of ``t + runtime x sd_min
    > shadow``. An empty leaf never passes.
    """
    if not group_may_pass(m, st, x, y, t, sd_min, shadow, pk=pk, cap=cap, fm=fm, lpk=lpk, hf=hf,
                          k1=k1, fk1=fk1, pk1=pk1, b1=b1, hn=hn, y1=y1, z=z, nl=nl):
        return -1
    return search_group(m, leaf, st, x, y, t, sd_min, shadow, pk=pk, cap=cap, fm=fm, lpk=lpk,
                        hf=hf, k1=k1, fk1=fk1, pk1=pk1, b1=b1, hn=hn, y1=y1, z=z, nt=nt, tw=tw,
                        nl=nl)


@helper
def first_candidate_behind(m, position, st, x, y, t, sd_min, shadow, pk=0.0, cap=np.inf,
                           fm=-1, lpk=0.0, hf=0.0, k1=-1, fk1=0, pk1=0.0, b1=np.inf, hn=-1,
                           y1=EMPTY, z=-1, nt=0, tw=False, nl=0):
    """:func:`first_candidate` from the first leaf of group ``m`` behind queue position
    ``position``; the position is looked up only when the group's root passes."""
    if not group_may_pass(m, st, x, y, t, sd_min, shadow, pk=pk, cap=cap, fm=fm, lpk=lpk, hf=hf,
                          k1=k1, fk1=fk1, pk1=pk1, b1=b1, hn=hn, y1=y1, z=z, nl=nl):
        return -1
    return search_group(m, first_after(m, position, st), st, x, y, t, sd_min, shadow, pk=pk,
                        cap=cap, fm=fm, lpk=lpk, hf=hf, k1=k1, fk1=fk1, pk1=pk1, b1=b1, hn=hn,
                        y1=y1, z=z, nt=nt, tw=tw, nl=nl)


@helper
def search_group(m, leaf, st, x, y, t, sd_min, shadow, pk, cap, fm, lpk, hf, k1, fk1, pk1, b1,
                 hn, y1=EMPTY, z=-1, nt=0, tw=False, nl=0):
    """The walk of group ``m``'s tree from ``leaf``: :func:`_walk` under a cap, else
    :func:`_walk_plain`, which passes only the widths, run times, computation times, single
    widths and the ``nt`` speed tiers."""
    ix = st.index
    off = ix.g_toff[m]
    size = (ix.g_toff[m + 1] - off) // 2
    if cap < np.inf:
        return _walk(ix, off, size, leaf, x, y, t, sd_min=sd_min, shadow=shadow, pk=pk, cap=cap,
                     fm=fm, lpk=lpk, hf=hf, k1=k1, fk1=fk1, pk1=pk1, b1=b1, hn=hn, y1=y1, z=z,
                     nl=nl)
    return _walk_plain(ix.tr_i, ix.tr_rg, ix.tiers, ix.dfs, off, size,
                       leaf=leaf, x=x, y=y, t=t, sd_min=sd_min, shadow=shadow, y1=y1, z=z, nt=nt,
                       tw=tw)


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True, error_model="numpy", _nrt=False)
def _walk_plain(tr_i, tr_rg, tiers, stack, off, size, leaf, x, y, t, sd_min, shadow, y1, z, nt,
                tw):
    """:func:`_walk` without a power budget (``cap`` infinite): the width, run-time (or, with
    ``nt > 0``, speed-tier: :func:`_tier_late`) and single-cluster tests only, on the arrays
    they read (a call passes every array it is given)."""
    if leaf >= size:
        return -1
    b = _bucket(x)
    for i in range(nt):
        tiers[1, i] = _bucket(np.int64(min(tiers[0, i], x)))
    lo = leaf + size
    hi = 2 * size
    while lo < hi:
        if lo & 1:
            n = 1
            stack[0] = lo
            while n > 0:
                n -= 1
                node = stack[n]
                w = tr_i[off + node, T_W]
                if w > x:
                    continue  # too wide for the free nodes
                if tw:
                    # The tiers' late widths apply to the jobs of their single width (at most
                    # T_SW when all are, at most x in a mixed subtree, none in another leaf),
                    # the late width y to the others (of least width T_U).
                    u = tr_i[off + node, T_U]
                    sw = tr_i[off + node, T_SW]
                    if sw == EMPTY:
                        sw = 0 if node >= size else x
                    if (u > y and (u == EMPTY or _tier_late(tr_rg, tiers, nt, off + node, u,
                                                            t, shadow, np.int64(0)))
                            and _tier_skip(tr_rg, tiers, nt, off + node, w, sw, t, shadow)):
                        continue
                elif w > y or (w > y1 and tr_i[off + node, T_SW] <= z):
                    # Every job below would take the head's room: it must end by the reservation.
                    if nt > 0:
                        if _tier_late(tr_rg, tiers, nt, off + node, w, t, shadow, np.int64(0)):
                            continue
                    elif t + tr_rg[off + node, 2 * b] * sd_min > shadow:
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


@helper
def _tier_late(tr_rg, tiers, nt, node, w, t, shadow, r0=0):
    """Whether no job below ``node`` (least width ``w``) can end by the reservation, by the
    speed tiers of ``tiers`` (rows ``r0`` to ``r0 + 3``: free nodes ``F_i``, the ``tr_rg``
    width bucket of ``min(F_i, x)``, and the coefficients ``cr_i``, ``cq_i``;
    :func:`decoders.easy._speed_tiers`, or :func:`fallback_tiers` from row 5).

    A job of ``n`` tasks in tier ``i`` (``F_{i-1} < n <= F_i``) ends no earlier than ``t +
    cr_i x runtime + cq_i x comp`` (``comp``: its computation time, :func:`tree_time`), and
    the subtree's least run time and computation time among the jobs of the tier's width
    bucket bound that from below, tier by tier from the first that may hold ``w`` tasks.
    """
    for i in range(nt):
        if tiers[r0, i] < w:
            continue  # no job below is this narrow
        b = np.int64(tiers[r0 + 1, i])
        if t + (tr_rg[node, 2 * b] * tiers[r0 + 2, i]
                 + tr_rg[node, 2 * b + 1] * tiers[r0 + 3, i]) <= shadow:
            return False
    return True


@helper
def _tier_skip(tr_rg, tiers, nt, node, w, sw, t, shadow):
    """Whether every job below ``node`` (widths ``w .. sw``, each its single width) cannot
    end by the reservation and is wider than its tier's late width (``tiers`` row 4,
    :func:`decoders.easy._speed_tiers`), tier by tier, as :func:`_tier_late` tests the first.
    """
    lo_f = 0.0
    for i in range(nt):
        hi_f = tiers[0, i]
        lo = max(np.float64(w), lo_f + 1.0)
        lo_f = hi_f
        if lo > hi_f:
            continue  # no job below is in this tier
        if lo > sw:
            break  # nor in the next
        if lo <= tiers[4, i]:
            return False  # one may be narrow enough to leave the head room
        b = np.int64(tiers[1, i])
        if t + (tr_rg[node, 2 * b] * tiers[2, i] + tr_rg[node, 2 * b + 1] * tiers[3, i]) <= shadow:
            return False
    return True


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True, error_model="numpy", _nrt=False)
def _walk(ix, off, size, leaf, x, y, t, sd_min, shadow, pk, cap, fm, lpk, hf, k1, fk1, pk1, b1,
          hn, y1, z, nl):
    """:func:`first_candidate` in the tree at ``off`` of ``size`` leaves, under a power
    budget (not inlined: one compiled copy keeps compiling cheap; :func:`_walk_plain` is the
    uncapped search, on the arrays it reads)."""
    if leaf >= size:
        return -1
    stack = ix.dfs
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
                if not _may_pass(ix, off + node, x, y, t, sd_min, shadow, pk=pk, cap=cap, fm=fm,
                                 lpk=lpk, hf=hf, k1=k1, fk1=fk1, pk1=pk1, b1=b1, hn=hn, y1=y1,
                                 z=z, nl=nl):
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


@helper
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


@helper
def leaf_after(m, position, j, st, by_mask):
    """:func:`first_after` when job ``j`` is the one at queue position ``position``: its own
    next leaf when it belongs to group ``m`` (the leaves of a group are in queue order), so
    the backfill loop, which searches behind the head or a job it just started, mostly
    skips the binary search."""
    if group_of(j, st, by_mask) == m:
        return st.index.g_leaf[j] + 1
    return first_after(m, position, st)
