"""The waiting queue of the federated loop and the start of one queued job.

The rules with a queue (EASY, PRB, the listed starts of the steps) share
these helpers: the arrivals join the queue ``st.queue.wq`` at their place in the
order (:func:`enqueue`), started jobs leave it (:func:`dequeue_started`), a
queued job starts where its allowed free nodes and the power budgets hold it
(:func:`try_start`, :func:`place_or_relax`). :func:`reset_loop` resets the
work arrays for a new decode and :func:`arrival_order` sorts the jobs by
release once per job set. Every helper is inlined into the kernels that call
it (``forceinline``).
"""

from __future__ import annotations

import numpy as np

from ._federated_core import (
    E_CURSOR,
    E_HOLES,
    E_NQ,
    E_QH,
    E_RELAXED,
    allowance,
    commit_start,
    fits,
    idle_federation,
    place,
    reset_events,
)
from ._kernels import heap_pop, heap_push, helper


@helper
def place_or_relax(j, relaxed, jobs, plat, st, alloc):
    """:func:`place` job ``j``: 1 when placed, 0 when it does not fit the power budgets now.

    On an idle federation a blacklist that keeps the job out of every power
    budget is void, as one too small for its tasks is: it is placed on its
    whole allowance and 2 returned (the wrappers make sure every job fits an
    idle federation).
    """
    if place(j, jobs, plat, st, alloc, st.run.allow):
        return 1
    if relaxed or not idle_federation(st):
        return 0
    for k in range(plat.nodes.shape[0]):
        st.run.allow[k] = plat.nodes[k]
    return 2 if place(j, jobs, plat, st, alloc, st.run.allow) else 0


@helper
def enqueue(t, jobs, st):
    """Arrivals up to ``t`` join the waiting queue ``wq`` at their place (``pos_of``).

    The arrivals are sorted by place and merged into the queue from its back,
    so a batch of m arrivals into a queue of n costs O(m log m + n), not
    O(m n): a heap sort (in ``sh_t``/``sh_j``, free between shadow
    computations) for a few arrivals, and for a batch of more than J / 8 a
    bucket sweep over the J places (``sh_j`` indexed by place), O(J), as when
    a batch job-set queues all its jobs at once.
    """
    J = jobs.release.shape[0]
    wq, pos_of = st.queue.wq[st.evi[E_QH]:], st.queue.pos_of  # the queue and the room behind it
    nq = st.evi[E_NQ]
    first = st.evi[E_CURSOR]
    arrived = first
    while arrived < J and jobs.release[st.queue.by_release[arrived]] <= t:
        arrived += 1
    m = arrived - first
    sweep = 8 * m > J
    if sweep:  # sh_j by place: the arrival there, or -1
        for p in range(J):
            st.resv.sh_j[p] = -1
        for i in range(first, arrived):
            j = st.queue.by_release[i]
            st.resv.sh_j[pos_of[j]] = j
    else:  # a heap with the latest place on top
        for i in range(first, arrived):
            j = st.queue.by_release[i]
            heap_push(st.resv.sh_t, st.resv.sh_j, i - first, -float(pos_of[j]), j)
    p = J - 1
    q = nq - 1
    w = nq + m - 1
    while m > 0:  # the arrivals, latest place first, merged in from the queue's back
        if sweep:
            j = st.resv.sh_j[p]
            p -= 1
            if j < 0:
                continue
        else:
            j = st.resv.sh_j[0]
            heap_pop(st.resv.sh_t, st.resv.sh_j, m)
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
def dequeue_started(jobs, st, front, first):
    """Drop the started jobs from the queue; returns the next arrival (inf when none).

    The caller knows where they are: the queue's first ``front`` jobs have
    started, and no job before queue place ``first`` (>= ``front``) has
    otherwise. The front is dropped by moving the queue's start (``E_QH``),
    and only the places from ``first`` on are compacted (none when ``first``
    is the queue's length).
    """
    qh = st.evi[E_QH] + front
    nq = st.evi[E_NQ] - front
    wq = st.queue.wq[qh:]
    kept = first - front
    for q in range(first - front, nq):
        if st.queue.started[wq[q]] == 0:
            wq[kept] = wq[q]
            kept += 1
    st.evi[E_NQ] = kept
    st.evi[E_QH] = qh
    if first == front:  # compacted whole: no holes left
        st.evi[E_HOLES] = 0
    arrived = st.evi[E_CURSOR]
    if arrived < jobs.release.shape[0]:
        return jobs.release[st.queue.by_release[arrived]]
    return np.inf


@helper
def try_start(j, t, fluid, jobs, plat, st, out, blacklist):
    """Start queued job ``j`` now if its allowed free nodes and the power budgets hold it."""
    relaxed = allowance(j, blacklist, jobs, plat, st.run.allow)
    if not fits(jobs.tasks[j], st.run.free, st.run.allow):
        return False
    placed = place_or_relax(j, relaxed, jobs, plat, st, out.alloc)
    if placed == 0:
        return False
    st.evi[E_RELAXED] += relaxed or placed == 2
    commit_start(j, t, fluid, jobs, plat, st, out)
    st.queue.started[j] = 1
    return True


@helper
def reset_loop(jobs, plat, st, out, order, queued):
    """Reset the work arrays and outputs for a new decode (``queued``: the rules with a queue).

    Without a queue (the in-order rule) ``out.alloc`` is left as it is: that rule
    writes a job's row whole before it reads it (:func:`commit_one`, or :func:`place`,
    whose pick goes through every cluster), reads no row of a job not started, and
    every job starts by the end of the decode.
    """
    J = order.shape[0]
    K = plat.nodes.shape[0]
    for k in range(K):
        st.run.free[k] = plat.nodes[k]
        st.run.load[k] = 0.0
    for i in range(J):
        st.run.coal[i] = 0
        out.reserve[i] = np.nan
        if queued:
            for k in range(K):
                out.alloc[i, k] = 0
    if queued:
        for i in range(J):
            st.queue.started[i] = 0
            st.queue.pos_of[order[i]] = i
    reset_events(st)


@helper
def arrival_order(jobs, st):
    """``st.queue.by_release``: the jobs by (release, index), a heap sort.

    It depends on the job set alone, so a batch decode sorts once for all its
    rows; the rules with a queue (:func:`reset_loop` with ``queued``) read it.
    """
    J = jobs.release.shape[0]
    n = np.int64(0)
    for i in range(J):
        n = heap_push(st.resv.sh_t, st.resv.sh_j, n, jobs.release[i], i)
    for i in range(J):
        st.queue.by_release[i] = st.resv.sh_j[0]
        n = heap_pop(st.resv.sh_t, st.resv.sh_j, n)
