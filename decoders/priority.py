"""Priority rules on the federated loop: EASY (or strict order) over a ranking made at each event.

A priority rule ranks the waiting jobs at every event by a score (lower first,
ties by release, then index) that may change with the clock, so EASY's
candidate index of :mod:`decoders.easy`, built once over a fixed order, does
not serve it. :func:`easy_listed` is the step that takes the ranking as it
stands at ``t``: queued jobs start in ranked order while they fit (nodes and
power); the first that does not (the head) gets its reservation
(:func:`decoders.easy._shadow`), and a later ranked job starts only if it fits
now and cannot delay the head (:func:`decoders.easy._backfill`: it is planned
to end by the reservation, or leaves the head enough allowed nodes and power
then). Without backfilling the ranked jobs start while they fit and the rest
wait. It is the built-in EASY's rule (:func:`decoders.easy.start_easy`) with a
scan in ranked order in place of the index, so a ranking by release gives the
built-in schedule.

The loop over the steps, :func:`drive`, is compiled once and cached: at each
event it calls the rule's scoring pass through its address (:func:`score_cfunc`,
the one part compiled per rule: a loop over the queue with the score inlined)
and hands the keys to the step. :func:`run_rule` sets the loop up and runs it.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from llvmlite import ir
from numba import carray, cfunc, njit, types
from numba.extending import intrinsic

from . import steps
from ._federated_core import (
    E_CURSOR,
    E_NQ,
    E_QH,
    E_SHEAD,
    E_STARTED,
    Out,
    Scan,
    allowances,
    cluster_mask,
    is_capped,
    new_state,
    next_finish,
    release_due,
)
from ._kernels import FINISH_RTOL, helper
from ._queue import dequeue_started, enqueue, try_start
from ._validate import choice_code, readonly
from .easy import _backfill, _late_width, _room_bounds, _shadow, slowdown_floor
from .federated import CapInfeasibleError, Inputs, fcfs_order, model_code

__all__ = ["BACKFILL", "SCORE_SIG", "RuleResult", "drive", "easy_listed", "init_allowances", "run_rule",
           "score_cfunc", "with_scan", "CapInfeasibleError"]

#: Front starts of one event found by a scan for the first-ranked job; beyond, the rest of
#: the listed jobs become a heap.
SCAN_STARTS = 4
#: Backfill picks of one event found by a pass over the candidates; beyond, the rest become a
#: heap.
BACKFILL_PASSES = 2
#: How a rule starts the ranked jobs: strict order (``"none"``) or EASY backfilling, with
#: the code :func:`easy_listed` takes.
BACKFILL = {"none": 0, "easy": 1}


@helper
def _before(a, b, key, release):
    """Whether job ``a`` ranks before job ``b``: smaller key, then earlier release, then index."""
    if key[a] != key[b]:
        return key[a] < key[b]
    if release[a] != release[b]:
        return release[a] < release[b]
    return a < b


@helper
def _sift_down(heap, i, n, key, release):
    j = heap[i]
    while True:
        c = 2 * i + 1
        if c >= n:
            break
        if c + 1 < n and _before(heap[c + 1], heap[c], key, release):
            c += 1
        if not _before(heap[c], j, key, release):
            break
        heap[i] = heap[c]
        i = c
    heap[i] = j


@helper
def _heapify(heap, n, key, release):
    for i in range(n // 2 - 1, -1, -1):
        _sift_down(heap, i, n, key, release)


@helper
def _pop(heap, n, key, release):
    """Remove the first-ranked job (read ``heap[0]`` first); returns the new size."""
    n -= 1
    if n > 0:
        heap[0] = heap[n]
        _sift_down(heap, 0, n, key, release)
    return n


@njit(cache=True, error_model="numpy", _nrt=False)
def init_allowances(jobs, plat, st, blacklist):
    """The allowance table of :func:`easy_listed`'s backfill test (``st.scan``, of
    :func:`with_scan`), from ``blacklist``: once per run, after :func:`decoders.steps.init`."""
    allowances(blacklist, jobs, plat, st)


@njit(cache=True, error_model="numpy", _nrt=False)
def easy_listed(t, model, jobs, plat, st, out, blacklist, listed, n, key, backfill, first=-1):
    """:func:`_easy_ranked` as a step of its own (for :meth:`moga.sim.Session.start_easy`)."""
    return _easy_ranked(t, model, jobs, plat, st, out, blacklist, listed, n, key, backfill,
                        first=first, min_tasks=np.int64(0))


@helper
def _easy_ranked(t, model, jobs, plat, st, out, blacklist, listed, n, key, backfill, first,
                 min_tasks):
    """Start the queued jobs ``listed[:n]`` at ``t`` in the order of ``key`` (by job; lower
    first, ties by release, then index): EASY backfilling (``backfill`` 1) or strict order
    (0). Returns the next finish or arrival.

    Strict order: ranked jobs start while they fit now (nodes and power); the first
    that does not stops the rest. EASY: that job (the head) gets its reservation, the
    earliest time the running jobs' planned ends leave its allowed nodes and power
    (the first one is kept in ``out.reserve``), and each later ranked job that fits
    now starts if it is planned to end by the reservation or leaves the head enough
    allowed nodes and power then. ``listed`` is work space: it is reordered. The
    allowance table ``st.scan`` must hold every job's row (:func:`init_allowances`). ``first``,
    when not -1, is the place in ``listed`` of the first-ranked job, and every listed job
    is waiting (:func:`drive` knows both as it scores them), and ``min_tasks`` is at most the
    fewest tasks of a listed waiting job (it is found here when ``first`` is -1).
    """
    fluid = model == 0
    K = st.run.free.shape[0]
    tasks = jobs.tasks
    free = st.run.free
    started0 = st.evi[E_STARTED]
    # The listed jobs still waiting, and the first-ranked of them.
    m = n
    b = first
    if first < 0:
        m = 0
        min_tasks = np.iinfo(np.int64).max
        for i in range(n):
            j = listed[i]
            if st.queue.started[j] == 0:
                min_tasks = min(min_tasks, tasks[j])
                listed[m] = j
                if b < 0 or _before(j, listed[b], key, jobs.release):
                    b = m
                m += 1
    # The front: the first-ranked job by a scan while few start (an event starts one or
    # two), then from a heap (a batch of arrivals on an idle federation starts many).
    head = -1
    heaped = False
    while m > 0:
        if not heaped and st.evi[E_STARTED] - started0 >= SCAN_STARTS:
            _heapify(listed, m, key, jobs.release)
            heaped = True
        if heaped:
            j = listed[0]
            m = _pop(listed, m, key, jobs.release)
        else:
            if b < 0:
                b = 0
                for i in range(1, m):
                    if _before(listed[i], listed[b], key, jobs.release):
                        b = i
            j = listed[b]
            m -= 1
            listed[b] = listed[m]
            b = -1
        if not try_start(j, t, fluid, jobs, plat, st, out, blacklist):
            head = j
            break
    st.evi[E_SHEAD] = 0  # the built-in EASY's reservation of its last scan is stale now
    if head >= 0 and backfill == 1:
        free_total = 0
        for k in range(K):
            st.resv.allow_h[k] = st.run.allow[k]  # the head's allowance (its try_start's)
            free_total += free[k]
        shadow = np.nan
        if np.isnan(out.reserve[head]) or free_total > 0:
            shadow = _shadow(t, head, jobs, plat, st, out, is_capped(plat))
            if np.isnan(out.reserve[head]):
                out.reserve[head] = shadow
        sd_min = slowdown_floor(plat)
        need = tasks[head]
        room0 = _room_bounds(st)
        free_mask = cluster_mask(free)
        capped = is_capped(plat)
        # The candidates, ranked: the jobs that fit the free nodes now and either may end
        # by the reservation or are narrow enough to leave the head room past it
        # (_late_width, the bound of _backfill's own test). Both bounds only tighten as
        # jobs start, so a job that fails them now would be refused at this event anyway.
        # The first BACKFILL_PASSES picks each pass over the candidates, dropping those
        # that fail the bounds, and take the first-ranked of the rest (an event backfills
        # one or two jobs); then the rest become a heap (many narrow jobs backfill).
        y = _late_width(0, False, free, st.resv.slack_h, room0, need)
        # No waiting job is narrow enough for the free nodes: no pass (the fewest tasks
        # only grow as the front starts).
        c = m if free_total >= max(min_tasks, 1) else 0
        passes = 0
        while c > 0:
            if passes < BACKFILL_PASSES:
                passes += 1
                k = 0
                b = -1
                for i in range(c):
                    j = listed[i]
                    if tasks[j] <= free_total and (tasks[j] <= y
                                                   or t + jobs.est[j] * sd_min <= shadow):
                        listed[k] = j
                        if b < 0 or _before(j, listed[b], key, jobs.release):
                            b = k
                        k += 1
                if b < 0:
                    break
                j = listed[b]
                c = k - 1
                listed[b] = listed[c]
                if passes == BACKFILL_PASSES:
                    _heapify(listed, c, key, jobs.release)
            else:
                j = listed[0]
                c = _pop(listed, c, key, jobs.release)
                if tasks[j] > free_total or (tasks[j] > y and t + jobs.est[j] * sd_min > shadow):
                    continue
            if _backfill(j, t, fluid, jobs, plat, st, out, head, need, shadow, sd_min, room0,
                         free_mask=free_mask, by_mask=False, capped=capped,
                         allow=st.scan.allow_j[j]):
                free_total -= tasks[j]
                room0 = _room_bounds(st)
                free_mask = cluster_mask(free)
                y = _late_width(0, False, free, st.resv.slack_h, room0, need)
                if free_total <= 0:
                    break
    if st.evi[E_STARTED] == started0:  # nothing left the queue
        arrived = st.evi[E_CURSOR]
        t_arrival = np.inf
        if arrived < jobs.release.shape[0]:
            t_arrival = jobs.release[st.queue.by_release[arrived]]
        return min(next_finish(st), t_arrival)
    return min(next_finish(st), dequeue_started(jobs, st, 0, 0))


def with_scan(st, J: int, K: int):
    """``st`` (a :func:`~decoders._federated_core.new_state` of J jobs on K clusters, with or
    without EASY's arrays) with the allowance table :func:`easy_listed` reads."""
    return st._replace(scan=Scan(allow_j=np.empty((J, K), dtype=np.int64),
                                 relaxed_j=np.empty(J, dtype=np.int64),
                                 mask_j=np.empty(J, dtype=np.int64),
                                 free_in=np.zeros(0, dtype=np.int64), sd_in=np.zeros(0)))


_I64P, _F8P = types.CPointer(types.int64), types.CPointer(types.float64)
#: The C signature of a rule's scoring pass (:func:`score_cfunc`): ``(now, queue, n,
#: release, tasks, estimate, key, listed, J, fewest)`` -> the first-ranked place, or -2 - job
#: of a NaN.
SCORE_SIG = types.int64(types.float64, _I64P, types.int64, _F8P, _I64P, _F8P, _F8P, _I64P,
                        types.int64, _I64P)


@intrinsic
def _call_scores(typingctx, addr, now, queue, n, release, tasks, est, key, listed, J, fewest):
    """Call the scoring pass compiled at address ``addr`` (:func:`score_cfunc`); the arrays
    are given by their data's addresses."""
    sig = types.int64(types.intp, types.float64, types.intp, types.int64, types.intp,
                      types.intp, types.intp, types.intp, types.intp, types.int64, types.intp)

    def codegen(context, builder, signature, args):
        d, i64 = ir.DoubleType(), ir.IntType(64)
        ip, dp = i64.as_pointer(), d.as_pointer()
        kinds = [d, ip, i64, dp, ip, dp, dp, ip, i64, ip]
        fnty = ir.FunctionType(i64, kinds)
        fn = builder.inttoptr(args[0], fnty.as_pointer())
        call = [a if k in (d, i64) else builder.inttoptr(a, k)
                for a, k in zip(args[1:], kinds, strict=True)]
        return builder.call(fn, call)

    return sig, codegen


def score_cfunc(score):
    """The scoring pass of a rule ``score`` (a Numba dispatcher or a function), compiled as a
    C function of :data:`SCORE_SIG` whose ``address`` :func:`drive` calls at each event.

    It scores the queue's ``n`` jobs (of ``J``) (``now``, their release, tasks and estimate) into
    ``key`` (by job) and ``listed`` (the jobs), writes the fewest tasks of a queued job to
    ``fewest[0]``, and returns the place in ``listed`` of the first-ranked job (-1 for
    none), ``-2 - j`` for the first job ``j`` whose score is NaN, or ``n`` when the score
    raised. The score is compiled into it, so this is the one part compiled per rule, with
    NumPy's error model: a division by zero gives inf or NaN, not an exception (an
    exception could not leave a C function; one the score raises is caught).
    """
    fn = njit(error_model="numpy")(getattr(score, "py_func", score))

    @cfunc(SCORE_SIG, error_model="numpy")
    def scores(now, queue, n, release, tasks, est, key, listed, J, fewest):
        q, rel, tk = carray(queue, n), carray(release, J), carray(tasks, J)
        es, ky, ls = carray(est, J), carray(key, J), carray(listed, n)
        b = -1
        mt = np.iinfo(np.int64).max
        # The first-ranked so far: its key, release and job in registers (a comparison
        # through the arrays would wait on the loads of the last pick at every job).
        bk, br, bj = np.inf, np.inf, np.int64(0)
        for i in range(n):
            j = q[i]
            r = rel[j]
            mt = min(mt, tk[j])
            try:
                v = np.float64(fn(now, r, tk[j], es[j]))
            except Exception:  # a C function cannot raise: n is no place, drive stops
                return n
            if np.isnan(v):
                return -2 - j
            ky[j] = v
            ls[i] = j
            if b < 0 or v < bk or (v == bk and (r < br or (r == br and j < bj))):
                b, bk, br, bj = i, v, r, j
        carray(fewest, 1)[0] = mt
        return b

    return scores


@njit(cache=True, error_model="numpy")
def drive(score, jobs, plat, st, out, blacklist, model, backfill, key, listed):
    """The event loop of a priority rule whose scoring pass is compiled at address
    ``score`` (:func:`score_cfunc`), after :func:`decoders.steps.init` and :func:`init_allowances`.

    At each event the pass scores every queued job and :func:`easy_listed` starts
    jobs by those keys. The loop stops at the first NaN and returns ``(job, t)`` of
    it (``(J, t)`` if the pass failed), ``(-1, t)`` once every job has started. The pass is called through its
    address, so this loop compiles once for every rule and is cached; the steps are
    inlined into it (a call of a step passes every array of the loop's bundles).
    """
    J = jobs.release.shape[0]
    t = 0.0
    wq, rel, tasks, est = st.queue.wq, jobs.release, jobs.tasks, jobs.est
    fewest = np.empty(1, dtype=np.int64)
    while st.evi[E_STARTED] < J:
        # steps.begin, inlined: the jobs finishing by t end, the arrivals queue
        t = release_due(t + FINISH_RTOL * abs(t), t, model == 0, jobs, plat, st, out)
        enqueue(t, jobs, st)
        qh, nq = st.evi[E_QH], st.evi[E_NQ]
        b = _call_scores(score, t, wq.ctypes.data + 8 * qh, nq, rel.ctypes.data,
                         tasks.ctypes.data, est.ctypes.data, key.ctypes.data,
                         listed.ctypes.data, J, fewest.ctypes.data)
        if b <= -2:
            return -2 - b, t
        if b >= nq or (b < 0 and nq > 0):  # not a place: the pass failed
            return J, t
        nxt = _easy_ranked(t, model, jobs, plat, st, out, blacklist, listed, nq, key, backfill,
                           first=b, min_tasks=fewest[0])
        if st.evi[E_STARTED] == J or nxt == np.inf:
            break
        t = max(t, nxt)
    return -1, t


class RuleResult(NamedTuple):
    """What :func:`run_rule` returns (arrays indexed like the job arrays)."""

    start: np.ndarray
    finish: np.ndarray
    alloc: np.ndarray
    reservation: np.ndarray
    makespan: float
    energy: float
    flowtime: float
    n_coalloc: int
    #: The first job whose score was NaN (J: the scoring failed), and the event's time
    #: (-1 and the last event's time when none was); the schedule is then incomplete.
    nan_job: int
    nan_t: float


def run_rule(score, bundle: Inputs, *, backfill: str = "easy", model: str = "fluid") -> RuleResult:
    """Run the priority rule compiled at address ``score`` (:func:`score_cfunc`) over a
    release-mode workload.

    ``bundle`` is the input bundle (:func:`decoders.federated.inputs`); its jobs'
    planning times (``est``: the run times, or the requested times of
    ``inputs(..., estimates="requested")``) are what the rule plans with (its
    reservation and backfill test, and the score's ``estimate``).
    """
    code = model_code(model)
    bf = choice_code("backfilling", backfill, BACKFILL)
    jobs, plat = bundle
    order = fcfs_order(jobs)
    J, K = bundle.n_jobs, bundle.n_clusters
    bl = readonly(np.zeros((J, K)))
    st = with_scan(new_state(J, K, easy=False), J, K)
    out = Out(np.full(J, np.nan), np.full(J, np.nan), np.empty((J, K), dtype=np.int64),
              np.empty(J))
    steps.init(jobs, plat, st, out, order)
    init_allowances(jobs, plat, st, bl)
    nan_job, t = drive(score, jobs, plat, st, out, bl, code, bf, np.zeros(J), np.empty(J, np.int64))
    if nan_job >= 0:
        return RuleResult(out.start, out.finish, out.alloc, out.reserve, np.nan, np.nan, np.nan,
                          0, int(nan_job), float(t))
    m, e, fl = steps.end(t, code, jobs, plat, st, out)
    n_coalloc = int(np.count_nonzero((out.alloc > 0).sum(axis=1) >= 2))
    return RuleResult(out.start, out.finish, out.alloc, out.reserve, float(m), float(e),
                      float(fl), n_coalloc, -1, float(t))
