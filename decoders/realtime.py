"""The real-time schemes on the simulation core: EASY, a high-priority queue and preemption
with checkpointing (docs/design.md §12).

One machine of ``N`` identical nodes whose jobs take whole partitions
(node counts). The executions run on the core's event loop
(:mod:`decoders.federated`) as one cluster of ``N`` nodes at speed 1, with
the queue in rank order: the driver here starts the front of the queue
(and the real-time jobs' preemptions) there, and the core's EASY
(``steps.easy``, the one EASY of the project) backfills behind the head.
Each execution runs for its restart read, computation and periodic writes,
is stopped with ``steps.stop`` (and queued again with ``steps.requeue``),
and its end comes from the loop. Under JIT the victims leave the core when
preempted and write their checkpoints outside it, while the real-time job
they make room for runs on the core from then on, on its nodes, until its
planned end (its wait for the writes included), so that EASY's
reservations see its nodes come back then; the writers' nodes beyond its
need are claimed (``steps.claim``) until it starts. Jobs arrive at their
submit times; an event is the earliest of the driver's timers
(arrivals, JIT write ends, held starts, triggers) and the core's next
finish (finishes within the core's relative tolerance end together); at
each event the driver takes in what ended and applies the scheme:

``baseline`` (0)
    One queue in arrival order, EASY backfilling behind its head (the
    reservation counts every job ending at its instant).
``highpq`` (1)
    Real-time jobs ahead of batch jobs, each in arrival order; a waiting
    real-time job is the head and holds the reservation.
``preempt`` (2)
    ``highpq``, and a real-time job that does not fit *preempts* running
    batch jobs: the loop stops them, records their segments (kept and lost
    work, checkpoint writes) and requeues them at their original place.

The improved heuristic limits ``preempt`` in one of two readings (codes):
``project`` (1), slowdown thresholds on top of the high-priority queue
(:func:`_victims`), and ``qsim`` (2), the rule as the authors' Qsim fork
codes it: one queue in arrival order; a real-time job is *triggered* once it
has waited ``(trigger - 1)`` times its requested time; while a triggered
real-time job waits, only triggered real-time jobs are scheduled (in arrival
order, each preempting if it does not fit) and no other job starts; batch
jobs whose expected slowdown on requested times exceeds their class threshold
are protected, and the victims minimise a score that spares nearly finished
and already slowed jobs (:func:`_victims_qsim`).

Checkpointing codes: ``none`` (0), ``sys`` (1), ``app`` (2), ``jit`` (3).
Under JIT a preempted job keeps its nodes while it writes its checkpoint,
then hands them to the real-time job, which starts when the last write ends.

The waiting queue is a segment tree over the jobs' fixed queue ranks
holding, per rank, the nodes of a waiting job, so the head (and whether any
job behind it fits the free nodes) is found without scanning the queue. The
running jobs are kept sorted by planned end (the core's projected finish)
for the improved heuristic's reservation test. Victims preempted without a checkpoint rejoin the queue
at the end of the event. The plain-Python twin is
``tests/naive.py:naive_realtime``.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from . import steps
from ._federated_core import E_NH, E_STARTED, next_finish
from ._kernels import FINISH_RTOL, heap_pop, heap_push, stable_argsort
from ._validate import check_vector, choice_code

__all__ = ["SCHEME_CODES", "CHECKPOINT_CODES", "READING_CODES", "RealtimeRun",
           "simulate_realtime"]

#: Scheme names and their kernel codes.
SCHEME_CODES = {"baseline": 0, "highpq": 1, "preempt": 2}
#: Checkpointing names and their kernel codes.
CHECKPOINT_CODES = {"none": 0, "sys": 1, "app": 2, "jit": 3}
#: Readings of the improved heuristic and their kernel codes (0: not improved).
READING_CODES = {"project": 1, "qsim": 2}

_ARRIVE, _FINISH, _RTJ_START, _REQUEUE, _TRIGGER = 0, 1, 2, 3, 4
_FUTURE, _WAITING, _RUNNING, _DONE, _HELD, _WRITING = 0, 1, 2, 3, 4, 5
_BIG = np.iinfo(np.int64).max


class RealtimeRun(NamedTuple):
    """What one run of the loop returns.

    ``start``, ``finish``, ``n_preempted`` are per job; the ``seg_*`` arrays
    hold one row per execution, in the order the executions ended: job,
    start, end, restart read, computation kept, computation lost, checkpoint
    writes and whether it ended by preemption.
    """

    start: np.ndarray
    finish: np.ndarray
    n_preempted: np.ndarray
    seg_job: np.ndarray
    seg_start: np.ndarray
    seg_end: np.ndarray
    seg_read: np.ndarray
    seg_compute: np.ndarray
    seg_lost: np.ndarray
    seg_write: np.ndarray
    seg_preempted: np.ndarray
    n_events: int
    n_preemptions: int


class _Jobs(NamedTuple):
    sub: np.ndarray
    run: np.ndarray
    nodes: np.ndarray
    rtj: np.ndarray
    cls: np.ndarray
    write: np.ndarray
    read: np.ndarray
    interval: np.ndarray
    wall: np.ndarray      # requested time (the qsim reading's slowdowns)
    trig: np.ndarray      # when a real-time job is triggered (the qsim reading)


class _Execs(NamedTuple):
    """Per job, the driver's ledger of its executions (J,): ``status`` (``_FUTURE`` ...),
    ``saved`` (work kept by checkpoints), the current execution's ``seg_start``,
    ``seg_read`` (its restart read) and planned ``end``, and the first ``start``."""

    status: np.ndarray
    saved: np.ndarray
    seg_start: np.ndarray
    seg_read: np.ndarray
    end: np.ndarray
    start: np.ndarray


# ------------------------------------------------------------------ queue tree
# Leaves ``size .. 2 size - 1`` are queue ranks; a waiting job's leaf holds its
# nodes, any other leaf _BIG. Inner nodes hold minima.
@njit(cache=True, error_model="numpy")
def _tree_set(tn, size, rank, n):
    i = size + rank
    tn[i] = n
    i >>= 1
    while i >= 1:
        tn[i] = min(tn[2 * i], tn[2 * i + 1])
        i >>= 1


@njit(cache=True, error_model="numpy")
def _tree_first(tn, size, lo, free, stack):
    """The lowest rank ``>= lo`` whose waiting job takes at most ``free`` nodes; -1 if
    none."""
    if lo >= size:
        return -1
    stack[0] = 1
    stack[1] = 0        # the node's first rank
    stack[2] = size     # and its width
    top = 1
    while top > 0:
        top -= 1
        v, first, width = stack[3 * top], stack[3 * top + 1], stack[3 * top + 2]
        if first + width <= lo or tn[v] > free:
            continue
        if width == 1:
            return first
        half = width >> 1
        stack[3 * top] = 2 * v + 1          # the right child goes below the left one
        stack[3 * top + 1] = first + half
        stack[3 * top + 2] = half
        stack[3 * top + 3] = 2 * v
        stack[3 * top + 4] = first
        stack[3 * top + 5] = half
        top += 2
    return -1


# ------------------------------------------------------- running, by planned end
@njit(cache=True, error_model="numpy")
def _act_insert(ae, aj, n, e, j):
    """Insert ``(e, j)`` into the sorted lists of size ``n``; returns the new size."""
    i = n
    while i > 0 and (ae[i - 1] > e or (ae[i - 1] == e and aj[i - 1] > j)):
        ae[i] = ae[i - 1]
        aj[i] = aj[i - 1]
        i -= 1
    ae[i] = e
    aj[i] = j
    return n + 1


@njit(cache=True, error_model="numpy")
def _act_remove(ae, aj, n, e, j):
    """Remove ``(e, j)`` from the sorted lists of size ``n``; returns the new size."""
    lo, hi = 0, n
    while lo < hi:
        m = (lo + hi) >> 1
        if ae[m] < e or (ae[m] == e and aj[m] < j):
            lo = m + 1
        else:
            hi = m
    for i in range(lo, n - 1):
        ae[i] = ae[i + 1]
        aj[i] = aj[i + 1]
    return n - 1


@njit(cache=True, error_model="numpy")
def _reservation(ae, aj, na, back, need, t, free):
    """EASY's shadow time for ``need`` nodes and the nodes to spare then; ``back[j]``: the
    nodes that come back at ``j``'s planned end (none for a victim writing a JIT checkpoint,
    whose nodes pass to the real-time job it makes room for, but the surplus beyond that
    job's need at the last write's end)."""
    avail = free
    shadow = t
    for i in range(na):
        if avail >= need:
            break
        avail += back[aj[i]]
        shadow = ae[i]
    return shadow, avail - need


# ------------------------------------------------------------- checkpoint model
@njit(cache=True, error_model="numpy")
def _plan(jobs, saved, j, s):
    """``(read, end)`` of a segment of ``j`` starting at ``s``."""
    if jobs.rtj[j]:
        return 0.0, s + jobs.run[j]
    rem = jobs.run[j] - saved[j]
    r = jobs.read[j] if saved[j] > 0 else 0.0
    iv = jobs.interval[j]
    n_w = max(0, math.ceil(rem / iv) - 1) if math.isfinite(iv) else 0
    return r, s + r + rem + n_w * jobs.write[j]


@njit(cache=True, error_model="numpy")
def _cut(jobs, kind, seg_start, seg_read, j, t):
    """What preempting running batch job ``j`` at ``t`` keeps:
    ``(read spent, kept, lost, writes, JIT write after t)``."""
    e = t - seg_start[j]
    r = seg_read[j]
    if e <= r:
        return e, 0.0, 0.0, 0.0, (jobs.write[j] if kind == 3 else 0.0)
    e2 = e - r
    if kind == 0:
        return r, 0.0, e2, 0.0, 0.0
    if kind == 3:
        return r, e2, 0.0, 0.0, jobs.write[j]
    iv, w = jobs.interval[j], jobs.write[j]
    if not math.isfinite(iv):
        return r, 0.0, e2, 0.0, 0.0
    k = math.floor(e2 / (iv + w))
    o = e2 - k * (iv + w)
    return r, k * iv, min(o, iv), k * w + max(0.0, o - iv), 0.0


@njit(cache=True, error_model="numpy")
def _projected_sd(jobs, kind, saved, seg_start, seg_read, j, t):
    """Slowdown of ``j`` if preempted at ``t`` and resumed at once."""
    _, kept, _, _, jit = _cut(jobs, kind, seg_start, seg_read, j, t)
    kept_total = 0.0 if kind == 0 else saved[j] + kept
    rem = jobs.run[j] - kept_total
    back = jobs.read[j] if kept_total > 0 else 0.0
    return (t + jit + back + rem - jobs.sub[j]) / jobs.run[j]


@njit(cache=True, error_model="numpy")
def _running_batch(jobs, status, aj, na):
    """The batch jobs running now (not writing a checkpoint), in the order of ``aj``."""
    cb = np.empty(na, np.int64)
    m = 0
    for i in range(na):
        b = aj[i]
        if not jobs.rtj[b] and status[b] == _RUNNING:
            cb[m] = b
            m += 1
    return cb[:m]


@njit(cache=True, error_model="numpy")
def _kept(keep, idx, cb, nc, out):
    """Write the chosen victims ``cb[idx[a]]`` with ``keep[a]`` (``a < nc``) into ``out``;
    returns how many."""
    n = 0
    for a in range(nc):
        if keep[a]:
            out[n] = cb[idx[a]]
            n += 1
    return n


@njit(cache=True, error_model="numpy")
def _victims(jobs, kind, improved, th_batch, ex, aj, na, j, t, free, out):
    """Batch jobs to preempt for ``j`` (into ``out``); returns how many (0: none)."""
    status, saved, seg_start, seg_read = ex.status, ex.saved, ex.seg_start, ex.seg_read
    need = jobs.nodes[j] - free
    cn = np.empty(na, np.int64)
    cl = np.empty(na)
    cb = np.empty(na, np.int64)
    m = 0
    for b in _running_batch(jobs, status, aj, na):
        if improved and _projected_sd(jobs, kind, saved, seg_start, seg_read, b, t) > \
                th_batch[jobs.cls[b]]:
            continue
        lost = _cut(jobs, kind, seg_start, seg_read, b, t)[2]
        cn[m] = jobs.nodes[b]
        cl[m] = lost * jobs.nodes[b]
        cb[m] = b
        m += 1
    # The single job with the fewest nodes that frees enough (ties: less lost work, lower index).
    best = -1
    for i in range(m):
        if cn[i] >= need and (best < 0 or cn[i] < cn[best] or (cn[i] == cn[best] and (
                cl[i] < cl[best] or (cl[i] == cl[best] and cb[i] < cb[best])))):
            best = i
    if best >= 0:
        out[0] = cb[best]
        return 1
    # Else the widest first until enough, then without those no longer needed.
    idx = np.arange(m)
    for a in range(1, m):
        x = idx[a]
        p = a
        while p > 0:
            y = idx[p - 1]
            if cn[y] > cn[x] or (cn[y] == cn[x] and (cl[y] < cl[x] or (
                    cl[y] == cl[x] and cb[y] < cb[x]))):
                break
            idx[p] = y
            p -= 1
        idx[p] = x
    got = 0
    nc = 0
    for a in range(m):
        if got >= need:
            break
        got += cn[idx[a]]
        nc += 1
    if got < need:
        return 0
    keep = np.ones(nc, np.bool_)
    # Drop in order (nodes, -lost, -index): the chosen are in (-nodes, lost, index) order.
    for a in range(nc - 1, -1, -1):
        c = idx[a]
        if got - cn[c] >= need:
            keep[a] = False
            got -= cn[c]
    return _kept(keep, idx, cb, nc, out)


@njit(cache=True, error_model="numpy")
def _victims_qsim(jobs, th_batch, status, end, aj, na, j, t, free, out):
    """Batch jobs to preempt for ``j`` under the qsim reading (into ``out``); returns how
    many (0: none).

    On requested times: a running batch job ``b`` ends at ``e_b = end[b] + wall[b] -
    run[b]`` and its expected slowdown is ``s_b = (e_b - submit[b]) / wall[b]``; it is
    protected while ``s_b`` exceeds its class threshold. Its score is ``nodes[b] x (5 if
    e_b - t <= min(wall[b] / 4, 900 s) else 1) x log2(2 + s_b)``. With no partition
    topology, a set of jobs stands for a partition: the cheaper of the best single job
    that frees enough and the cover taken by least score per node, then without the
    costliest jobs no longer needed (ties: the single job; then lower index).
    """
    need = jobs.nodes[j] - free
    run = np.sort(_running_batch(jobs, status, aj, na))
    cb = np.empty(run.size, np.int64)
    spn = np.empty(run.size)
    m = 0
    for b in run:
        e = end[b] + jobs.wall[b] - jobs.run[b]
        sd = (e - jobs.sub[b]) / jobs.wall[b]
        if sd > th_batch[jobs.cls[b]]:
            continue
        cb[m] = b
        spn[m] = (5.0 if e - t <= min(0.25 * jobs.wall[b], 900.0) else 1.0) * \
            math.log2(2.0 + sd)
        m += 1
    cb, spn = cb[:m], spn[:m]
    best = -1
    for i in range(m):
        if jobs.nodes[cb[i]] >= need and (best < 0 or spn[i] * jobs.nodes[cb[i]]
                                          < spn[best] * jobs.nodes[cb[best]]):
            best = i
    idx = stable_argsort(spn)
    got = 0
    nc = 0
    for a in range(m):
        if got >= need:
            break
        got += jobs.nodes[cb[idx[a]]]
        nc += 1
    if got < need:
        return 0
    keep = np.ones(nc, np.bool_)
    cover = 0.0
    for a in range(nc - 1, -1, -1):   # the costliest per node first
        c = cb[idx[a]]
        if got - jobs.nodes[c] >= need:
            keep[a] = False
            got -= jobs.nodes[c]
        else:
            cover += spn[idx[a]] * jobs.nodes[c]
    if best >= 0 and spn[best] * jobs.nodes[cb[best]] <= cover:
        out[0] = cb[best]
        return 1
    return _kept(keep, idx, cb, nc, out)


# -------------------------------------------------------------- loop bookkeeping
@njit(cache=True, error_model="numpy")
def _push(ht, hj, ev, nh, seq, t, kind, j, ver):
    """Push event ``(t, kind, j, version)``, growing the arrays when full; returns
    ``(ht, hj, ev, nh, seq)``. ``ev`` rows: kind, job, version, by push order."""
    if seq == ev.shape[1]:
        cap = 2 * seq
        ht2 = np.empty(cap)
        hj2 = np.empty(cap, np.int64)
        ht2[:nh] = ht[:nh]
        hj2[:nh] = hj[:nh]
        ev2 = np.empty((3, cap), np.int64)
        ev2[:, :seq] = ev[:, :seq]
        ht, hj, ev = ht2, hj2, ev2
    ev[0, seq], ev[1, seq], ev[2, seq] = kind, j, ver
    return ht, hj, ev, heap_push(ht, hj, nh, t, seq), seq + 1


@njit(cache=True, error_model="numpy")
def _record(s_job, s_f, s_pre, ns, j, start, end, read, kept, lost, write, preempted):
    """Append one execution, growing the arrays when full; returns ``(s_job, s_f, s_pre,
    ns)``."""
    if ns == s_job.shape[0]:
        cap = 2 * ns
        a = np.empty(cap, np.int64)
        b = np.empty((cap, 6))
        c = np.empty(cap, np.bool_)
        a[:ns] = s_job[:ns]
        b[:ns] = s_f[:ns]
        c[:ns] = s_pre[:ns]
        s_job, s_f, s_pre = a, b, c
    s_job[ns] = j
    s_f[ns, 0], s_f[ns, 1], s_f[ns, 2] = start, end, read
    s_f[ns, 3], s_f[ns, 4], s_f[ns, 5] = kept, lost, write
    s_pre[ns] = preempted
    return s_job, s_f, s_pre, ns + 1


@njit(cache=True, error_model="numpy")
def _begin(jobs, ex, ae, aj, na, j, t, run_w, cout):
    """Start an execution of ``j`` at ``t``; returns the running list's new size.

    The core runs it for ``run_w[j]`` (its read, computation and periodic
    writes, :func:`_duration`); its planned end is the core's, ``t +
    run_w[j]`` (speed 1).
    """
    saved, status, seg_start, seg_read, end, start = (ex.saved, ex.status, ex.seg_start,
                                                      ex.seg_read, ex.end, ex.start)
    r, run_w[j] = _plan(jobs, saved, j, 0.0)
    e = t + run_w[j]
    cout.finish[j] = np.nan
    status[j] = _RUNNING
    seg_start[j], seg_read[j], end[j] = t, r, e
    if np.isnan(start[j]):
        start[j] = t
    return _act_insert(ae, aj, na, e, j)


@njit(cache=True, error_model="numpy")
def _duration(jobs, saved, j):
    """The next execution's length of ``j``: restart read, computation left, periodic
    writes; what the core runs it for and EASY plans with."""
    return _plan(jobs, saved, j, 0.0)[1]


# -------------------------------------------------------------------- the loop
@njit(cache=True, error_model="numpy")
def _simulate(jobs, N, scheme, kind, improved, th_rtj, th_batch, rank, by_rank, arrival, core,
              listed):
    """The loop on the simulation core (module docstring); ``core`` holds the core's
    bundles (:class:`decoders.steps.DriverCore`) of the same jobs on one cluster of ``N``
    nodes at speed 1 (its queue order ``by_rank``): ``bl`` its (empty) blacklist,
    ``run_w`` the writable run times that ``jobs.runtime`` and ``jobs.est`` view;
    ``listed`` (J,) is work space."""
    cjobs, cplat, st, cout, bl, run_w = core.jobs, core.plat, core.st, core.out, core.bl, core.run_w
    J = jobs.sub.shape[0]
    status = np.zeros(J, np.int64)
    saved = np.zeros(J)
    seg_start = np.zeros(J)
    seg_read = np.zeros(J)
    end = np.zeros(J)
    version = np.zeros(J, np.int64)
    start = np.full(J, np.nan)
    ex = _Execs(status=status, saved=saved, seg_start=seg_start, seg_read=seg_read, end=end,
                start=start)
    finish = np.full(J, np.nan)
    npre = np.zeros(J, np.int64)
    held = np.zeros(J, np.int64)
    claim = np.full(J, -1, np.int64)
    back = jobs.nodes.copy()  # nodes that come back at each job's planned end

    s_job = np.empty(J + 16, np.int64)
    s_f = np.empty((J + 16, 6))
    s_pre = np.empty(J + 16, np.bool_)
    ns = 0

    ht = np.empty(2 * J + 16)
    hj = np.empty(2 * J + 16, np.int64)
    ev = np.empty((3, 2 * J + 16), np.int64)
    nh = 0
    seq = 0

    size = 1
    while size < J:
        size *= 2
    tn = np.full(2 * size, _BIG, np.int64)
    stack = np.empty(3 * (2 * 64 + 2), np.int64)
    n_wait = 0

    ae = np.empty(J + 1)
    aj = np.empty(J + 1, np.int64)
    na = 0
    out = np.empty(J, np.int64)
    deferred = np.empty(J, np.int64)
    busy = 0
    n_events = 0
    n_pre = 0
    preempt = scheme == 2
    qsim = improved == 2
    trig = np.empty(J, np.int64)   # qsim: triggered real-time jobs not yet started, by rank
    n_trig = 0

    for j in range(J):  # what EASY plans each queued job's execution to take
        run_w[j] = _duration(jobs, saved, j)
    steps.init_easy(cjobs, cplat, st, cout, by_rank, bl)
    n_start = 0  # jobs to start on the core at the end of this event (in ``listed``)
    mismatch = 0
    for j in arrival:  # in submit order (ties: lower index), the first sequence numbers
        ht, hj, ev, nh, seq = _push(ht, hj, ev, nh, seq, jobs.sub[j], _ARRIVE, j, 0)
    if qsim:
        for j in arrival:
            if jobs.rtj[j]:
                ht, hj, ev, nh, seq = _push(ht, hj, ev, nh, seq, jobs.trig[j], _TRIGGER, j, 0)

    while True:
        t = min(ht[0] if nh > 0 else np.inf, next_finish(st))
        if t == np.inf:
            break
        n_events += 1
        # The core releases the jobs finishing by t (finishes within its tolerance end
        # together, at the earliest of them; the event may move there).
        t = steps.begin(t, 0, cjobs, cplat, st, cout)
        # The running jobs the core released (NaN finish until then): from the front of
        # the list by planned end, which is the core's projected finish.
        i = 0
        lim = t + 3 * FINISH_RTOL * abs(t)
        while i < na and ae[i] <= lim:
            j = aj[i]
            if status[j] != _RUNNING or np.isnan(cout.finish[j]):
                i += 1
                continue
            f = cout.finish[j]
            s, r = seg_start[j], seg_read[j]
            rem = jobs.run[j] - saved[j]
            iv = jobs.interval[j]
            # The periodic writes as planned (not f - s - r - rem, which leaves residue).
            n_w = 0 if jobs.rtj[j] or not math.isfinite(iv) else max(0, math.ceil(rem / iv) - 1)
            s_job, s_f, s_pre, ns = _record(s_job, s_f, s_pre, ns, j, s, f, r, rem, 0.0,
                                            n_w * jobs.write[j], False)
            saved[j] = jobs.run[j]
            status[j] = _DONE
            finish[j] = f
            busy -= jobs.nodes[j]
            na = _act_remove(ae, aj, na, end[j], j)
        while nh > 0 and ht[0] <= t:
            e_id = hj[0]
            nh = heap_pop(ht, hj, nh)
            kind_e, j = ev[0, e_id], ev[1, e_id]
            if ev[2, e_id] != version[j]:
                continue  # planned before a preemption
            if kind_e == _TRIGGER:
                if status[j] == _FUTURE or status[j] == _WAITING:
                    i = n_trig
                    while i > 0 and rank[trig[i - 1]] > rank[j]:
                        trig[i] = trig[i - 1]
                        i -= 1
                    trig[i] = j
                    n_trig += 1
            elif kind_e == _ARRIVE or kind_e == _REQUEUE:
                if kind_e == _REQUEUE:  # a JIT checkpoint is written: the nodes pass to the RTJ
                    na = _act_remove(ae, aj, na, end[j], j)
                    held[claim[j]] += jobs.nodes[j]
                    claim[j] = -1
                    back[j] = jobs.nodes[j]
                    run_w[j] = _duration(jobs, saved, j)
                    steps.requeue(cjobs, cplat, st, j)
                status[j] = _WAITING
                _tree_set(tn, size, rank[j], jobs.nodes[j])
                n_wait += 1
            else:  # a real-time job's JIT wait is over (it runs on the core already)
                busy -= held[j]
                steps.claim(st, 0, jobs.nodes[j] - held[j])  # the surplus back
                held[j] = 0
                na = _act_remove(ae, aj, na, end[j], j)
                na = _begin(jobs, ex, ae, aj, na, j, t, run_w, cout)
                busy += jobs.nodes[j]

        # ---- schedule at t: the queue in rank order, as it stood at the event. Under
        # qsim, the triggered real-time jobs come first, alone (``phase1``); if one of
        # them still waits after that, nothing else starts.
        n_def = 0
        head = -1
        pos = 0
        phase1 = n_trig > 0
        blocked = False
        ti = 0
        while n_wait > 0:
            from_trig = phase1
            if phase1:
                if ti >= n_trig:
                    phase1 = False
                    if blocked:
                        break
                    continue
                j = trig[ti]
                ti += 1
                if status[j] != _WAITING:
                    continue
                p = rank[j]
            else:
                p = _tree_first(tn, size, pos, _BIG - 1, stack)
                if p < 0:
                    break
                j = by_rank[p]
            free = N - busy
            started = False
            if jobs.nodes[j] <= free:
                started = True
            elif from_trig or (jobs.rtj[j] and preempt and not qsim):
                # Preemption: may it, and can it, free enough nodes?
                allowed = True
                if improved == 1:
                    shadow, _ = _reservation(ae, aj, na, back, jobs.nodes[j], t, free)
                    if (shadow + jobs.run[j] - jobs.sub[j]) / jobs.run[j] <= th_rtj:
                        allowed = False
                nv = 0
                if qsim:
                    nv = _victims_qsim(jobs, th_batch, status, end, aj, na, j, t, free, out)
                elif allowed:
                    nv = _victims(jobs, kind, improved == 1, th_batch, ex, aj, na, j, t, free, out)
                if nv > 0:
                    wait = 0.0
                    writing = 0  # nodes of the victims that write a JIT checkpoint
                    for a in range(nv):
                        b = out[a]
                        r, kept, lost, writes, jit = _cut(jobs, kind, seg_start, seg_read, b, t)
                        s_job, s_f, s_pre, ns = _record(s_job, s_f, s_pre, ns, b, seg_start[b],
                                                        t + jit, r, kept, lost, writes + jit,
                                                        True)
                        saved[b] = 0.0 if kind == 0 else saved[b] + kept
                        version[b] += 1
                        npre[b] += 1
                        n_pre += 1
                        wait = max(wait, jit)
                        na = _act_remove(ae, aj, na, end[b], b)
                        steps.stop(t, 0, cjobs, cplat, st, cout, b)
                        if jit > 0:
                            # It keeps its nodes while it writes, then hands them over (on
                            # the core, the real-time job takes them now: see below).
                            status[b] = _WRITING
                            writing += jobs.nodes[b]
                            end[b] = t + jit
                            na = _act_insert(ae, aj, na, end[b], b)
                            claim[b] = j
                            ht, hj, ev, nh, seq = _push(ht, hj, ev, nh, seq, t + jit, _REQUEUE,
                                                        b, version[b])
                        else:
                            busy -= jobs.nodes[b]
                            status[b] = _WAITING
                            deferred[n_def] = b   # in the queue from the next event on
                            n_def += 1
                    if wait > 0:
                        # JIT: the RTJ holds the free nodes it needs now and the victims'
                        # nodes as their checkpoints end; it starts when the last one is
                        # written. On the core it runs from now, on its nodes, to its
                        # planned end (EASY's reservations see it so), and the writers'
                        # nodes beyond its need are claimed until it starts.
                        status[j] = _HELD
                        _tree_set(tn, size, p, _BIG)
                        n_wait -= 1
                        held[j] = max(0, jobs.nodes[j] - writing)
                        busy += held[j]
                        run_w[j] = wait + jobs.run[j]
                        listed[n_start] = j
                        n_start += 1
                        steps.claim(st, 0, max(0, writing - jobs.nodes[j]))
                        end[j] = t + wait + jobs.run[j]
                        na = _act_insert(ae, aj, na, end[j], j)
                        ht, hj, ev, nh, seq = _push(ht, hj, ev, nh, seq, t + wait, _RTJ_START,
                                                    j, version[j])
                        # The writers' nodes pass to it; what it holds beyond its need
                        # comes back when it starts, at the last write's end.
                        last = -1
                        for a in range(nv):
                            b = out[a]
                            if status[b] == _WRITING:
                                back[b] = 0
                                if last < 0 or end[b] > end[last]:
                                    last = b
                        back[last] = max(0, writing - jobs.nodes[j])
                    else:
                        started = True
            if started:
                _tree_set(tn, size, p, _BIG)
                n_wait -= 1
                na = _begin(jobs, ex, ae, aj, na, j, t, run_w, cout)
                busy += jobs.nodes[j]
                listed[n_start] = j
                n_start += 1
            elif status[j] == _WAITING:
                if from_trig:
                    blocked = True
                    continue
                head = p
                break
            if not from_trig:
                pos = p + 1
        kept = 0
        for i in range(n_trig):
            if status[trig[i]] == _WAITING or status[trig[i]] == _FUTURE:
                trig[kept] = trig[i]
                kept += 1
        n_trig = kept

        # Start on the core what this event started: they fit, as the loop counts nodes.
        if n_start > 0:
            steps.map(t, 0, cjobs, cplat, st, cout, bl, listed, n_start)
            for a in range(n_start):
                mismatch += st.queue.started[listed[a]] == 0
            n_start = 0
        # EASY behind the head, on the core (its reservation and backfill test), when some
        # job behind the head fits the free nodes; then the jobs it started, from the
        # core's event heap.
        if head >= 0 and busy < N and _tree_first(tn, size, head + 1, N - busy, stack) >= 0:
            before = st.evi[E_STARTED]
            steps.easy(t, 0, cjobs, cplat, st, cout, by_rank, bl)
            if st.evi[E_STARTED] > before:
                for i in range(st.evi[E_NH]):
                    j = st.run.hj[i]
                    if status[j] != _WAITING:
                        continue
                    _tree_set(tn, size, rank[j], _BIG)
                    n_wait -= 1
                    na = _begin(jobs, ex, ae, aj, na, j, t, run_w, cout)
                    busy += jobs.nodes[j]

        for a in range(n_def):
            b = deferred[a]
            run_w[b] = _duration(jobs, saved, b)
            steps.requeue(cjobs, cplat, st, b)
            _tree_set(tn, size, rank[b], jobs.nodes[b])
            n_wait += 1

    steps.end(t if n_events > 0 else 0.0, 0, cjobs, cplat, st, cout)
    ok = n_wait == 0 and mismatch == 0
    for j in range(J):
        if status[j] != _DONE:
            ok = False
    return (ok, start, finish, npre, s_job[:ns], s_f[:ns], s_pre[:ns], n_events, n_pre)


def simulate_realtime(submit, runtime, nodes, rtj, cls, N, scheme="preempt", checkpointing="jit",
                      write=None, read=None, interval=None, improved=False, rtj_threshold=1.5,
                      batch_thresholds=(3.0, 1.3, 10.0, 2.0), reading="project",
                      requested=None, trigger=1.1) -> RealtimeRun:
    """Run the real-time loop on plain arrays.

    Parameters
    ----------
    submit, runtime : array of float, shape (J,)
        Submit times and run times (> 0), s.
    nodes : array of int, shape (J,)
        Nodes each job takes, at most ``N``.
    rtj : array of bool, shape (J,)
        Real-time jobs.
    cls : array of int, shape (J,)
        Batch class codes in 0..3 (the improved heuristic's thresholds).
    N : int
        Nodes of the machine.
    scheme : {"baseline", "highpq", "preempt"}
    checkpointing : {"none", "sys", "app", "jit"}
    write, read, interval : array of float, shape (J,), optional
        Per job: seconds per checkpoint write and restart read, seconds of
        computation between periodic checkpoints (inf: none). Default: no
        costs and no periodic checkpoints.
    improved : bool
        Limit preemption by the slowdown thresholds (no effect unless
        ``scheme="preempt"``).
    rtj_threshold : float
        A real-time job preempts only when waiting would take its slowdown above this
        (the ``project`` reading).
    batch_thresholds : sequence of 4 floats
        Per batch class, the projected slowdown above which it is not preempted.
    reading : {"project", "qsim"}
        The improved heuristic's reading (module docstring): the project's, or the
        authors' Qsim rule.
    requested : array of float, shape (J,), optional
        Requested times (> 0), s: the qsim reading's trigger and slowdowns. Default: the
        run times.
    trigger : float
        The qsim reading: a real-time job is triggered once ``(t - submit + requested) /
        requested >= trigger``, at least 1.

    Returns
    -------
    RealtimeRun
    """
    if np.ndim(submit) != 1:
        raise ValueError("submit must be one-dimensional")
    J = len(submit)
    sch = choice_code("scheme", scheme, SCHEME_CODES)
    ck = choice_code("checkpointing", checkpointing, CHECKPOINT_CODES)
    if reading not in READING_CODES:
        raise ValueError(f"unknown reading {reading!r}; choose one of {list(READING_CODES)}")
    trigger = float(trigger)
    if not trigger >= 1 or not math.isfinite(trigger):
        raise ValueError(f"trigger must be a slowdown >= 1, got {trigger}")
    N = int(N)
    if N < 1:
        raise ValueError(f"the machine needs at least one node, got {N}")
    zeros = np.zeros(J)
    sub = check_vector("submit", submit, J, np.float64, lo=0)
    run = check_vector("runtime", runtime, J, np.float64, lo=0, lo_strict=True)
    wall = run if requested is None else \
        check_vector("requested", requested, J, np.float64, lo=0, lo_strict=True)
    jobs = _Jobs(sub, run,
                 check_vector("nodes", nodes, J, np.int64, lo=1, hi=N),
                 np.ascontiguousarray(check_vector("rtj", rtj, J, np.int64, lo=0, hi=1),
                                      dtype=np.bool_),
                 check_vector("cls", cls, J, np.int64, lo=0, hi=3),
                 check_vector("write", zeros if write is None else write, J, np.float64, lo=0),
                 check_vector("read", zeros if read is None else read, J, np.float64, lo=0),
                 _intervals(np.full(J, np.inf) if interval is None else interval, J),
                 wall, sub + (trigger - 1.0) * wall)
    th = np.asarray(batch_thresholds, dtype=np.float64)
    if th.shape != (4,) or np.any(np.isnan(th)):
        raise ValueError(f"batch_thresholds must be four numbers, got {batch_thresholds!r}")
    # Queue ranks: arrival order, real-time jobs first unless the scheme is the baseline.
    idx = np.arange(J)
    arrival = np.lexsort((idx, jobs.sub)).astype(np.int64)
    code = READING_CODES[reading] if improved and sch == 2 else 0
    by_rank = arrival if sch == 0 or code == 2 else \
        np.lexsort((idx, jobs.sub, ~jobs.rtj)).astype(np.int64)
    rank = np.empty(J, np.int64)
    rank[by_rank] = idx
    # The simulation core: one cluster of N nodes at speed 1, no communication or power cap.
    c = steps.driver_core(jobs.sub, jobs.nodes, run, np.array([N]), np.ones(1))
    ok, start, finish, npre, s_job, s_f, s_pre, n_ev, n_pre = _simulate(
        jobs, N, sch, ck, code, float(rtj_threshold), th, rank, by_rank, arrival, c,
        np.empty(J, dtype=np.int64))
    if not ok:
        raise RuntimeError("the simulation ended with unfinished jobs")
    return RealtimeRun(start, finish, npre, s_job, *(np.ascontiguousarray(s_f[:, c])
                                                     for c in range(6)), s_pre, int(n_ev),
                       int(n_pre))


def _intervals(a, J):
    arr = np.asarray(a, dtype=np.float64)
    if arr.shape != (J,):
        raise ValueError(f"interval must have shape ({J},), got {arr.shape}")
    if np.any(np.isnan(arr)) or np.any(arr <= 0):
        i = int(np.flatnonzero(np.isnan(arr) | (arr <= 0))[0])
        raise ValueError(f"interval[{i}] must be > 0 (inf: no periodic checkpoint), got {arr[i]}")
    return np.ascontiguousarray(arr)
