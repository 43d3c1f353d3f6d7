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

The steps are cached dispatchers of their own; a driver over them
(:func:`driver_for`) is the one part compiled per rule: it calls the user's
score on each queued job at each event and hands the keys to
:func:`easy_listed`. :func:`run_rule` sets the loop up and runs it.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from . import steps
from ._federated_core import (
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
)
from ._kernels import helper
from ._queue import dequeue_started, try_start
from .easy import _backfill, _room_bounds, _shadow
from .federated import CapInfeasibleError, setup_online

__all__ = ["BACKFILL", "RuleResult", "easy_listed", "driver_for", "prepare", "run_rule",
           "with_scan", "CapInfeasibleError"]

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
def prepare(jobs, plat, st, blacklist):
    """The allowance table of :func:`easy_listed`'s backfill test (``st.scan``, of
    :func:`with_scan`), from ``blacklist``: once per run, after :func:`decoders.steps.init`."""
    allowances(blacklist, jobs, plat, st)


@njit(cache=True, error_model="numpy", _nrt=False)
def easy_listed(t, model, jobs, plat, st, out, blacklist, listed, n, key, backfill):
    """Start the queued jobs ``listed[:n]`` at ``t`` in the order of ``key`` (by job; lower
    first, ties by release, then index): EASY backfilling (``backfill`` 1) or strict order
    (0). Returns the next finish or arrival.

    Strict order: ranked jobs start while they fit now (nodes and power); the first
    that does not stops the rest. EASY: that job (the head) gets its reservation, the
    earliest time the running jobs' planned ends leave its allowed nodes and power
    (the first one is kept in ``out.reserve``), and each later ranked job that fits
    now starts if it is planned to end by the reservation or leaves the head enough
    allowed nodes and power then. ``listed`` is work space: it is reordered. The
    allowance table ``st.scan`` must hold every job's row (:func:`prepare`).
    """
    fluid = model == 0
    K = st.run.free.shape[0]
    tasks = jobs.tasks
    free = st.run.free
    m = 0
    for i in range(n):  # the listed jobs still waiting, as a heap
        if st.queue.started[listed[i]] == 0:
            listed[m] = listed[i]
            m += 1
    _heapify(listed, m, key, jobs.release)
    head = -1
    while m > 0:
        j = listed[0]
        m = _pop(listed, m, key, jobs.release)
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
        # The jobs that could fit now, ranked; free nodes only fall as jobs start, so a
        # job wider than they are now never starts at this event.
        c = 0
        for i in range(m):
            if tasks[listed[i]] <= free_total:
                listed[c] = listed[i]
                c += 1
        _heapify(listed, c, key, jobs.release)
        # As in decoders.easy.start_easy: a job's slowdown is at least
        # min(1, 1 / fastest speed), less a margin under the floats.
        sd_min = 1.0
        for k in range(K):
            sd_min = min(sd_min, 1.0 / plat.speed[k])
        sd_min *= 1.0 - 1e-9
        need = tasks[head]
        room0 = _room_bounds(st)
        free_mask = cluster_mask(free)
        capped = is_capped(plat)
        while c > 0 and free_total > 0:
            j = listed[0]
            c = _pop(listed, c, key, jobs.release)
            if tasks[j] > free_total:
                continue
            if _backfill(j, t, fluid, jobs, plat, st, out, head, need, shadow, sd_min, room0,
                         free_mask=free_mask, by_mask=False, capped=capped,
                         allow=st.scan.allow_j[j]):
                free_total -= tasks[j]
                room0 = _room_bounds(st)
                free_mask = cluster_mask(free)
    return min(next_finish(st), dequeue_started(jobs, st, 0, 0))


def with_scan(st, J: int, K: int):
    """``st`` (a :func:`~decoders._federated_core.new_state` of J jobs on K clusters, with or
    without EASY's arrays) with the allowance table :func:`easy_listed` reads."""
    return st._replace(scan=Scan(allow_j=np.empty((J, K), dtype=np.int64),
                                 relaxed_j=np.empty(J, dtype=np.int64),
                                 mask_j=np.empty(J, dtype=np.int64),
                                 free_in=np.zeros(0, dtype=np.int64), sd_in=np.zeros(0)))


def driver_for(score):
    """The event loop of a priority rule ``score`` (a Numba dispatcher), compiled on first use.

    ``score(now, submit, tasks, estimate)`` is called on every queued job at every
    event (``submit``: its release; ``estimate``: what it plans with); the loop
    stops at the first NaN and returns ``(job, t)`` of it, ``(-1, t)`` once every job
    has started. Only this loop compiles per rule: the steps are cached on their own.
    """

    @njit(error_model="numpy")
    def drive(jobs, plat, st, out, blacklist, model, backfill, key, listed):
        J = jobs.release.shape[0]
        t = 0.0
        while st.evi[E_STARTED] < J:
            t = steps.begin(t, model, jobs, plat, st, out)
            qh, nq = st.evi[E_QH], st.evi[E_NQ]
            for i in range(nq):
                j = st.queue.wq[qh + i]
                v = np.float64(score(t, jobs.release[j], jobs.tasks[j], jobs.est[j]))
                if np.isnan(v):
                    return j, t
                key[j] = v
                listed[i] = j
            nxt = easy_listed(t, model, jobs, plat, st, out, blacklist, listed, nq, key,
                              backfill)
            if st.evi[E_STARTED] == J or nxt == np.inf:
                break
            t = max(t, nxt)
        return -1, t

    return drive


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
    #: The first job whose score was NaN, and the event's time (-1 and the last event's
    #: time when none was); the schedule is then incomplete.
    nan_job: int
    nan_t: float


def run_rule(drive, release, tasks, runtime, sigma, bw, nodes, speed, power_busy, power_idle,
             link, *, backfill: str = "easy", model: str = "fluid", rule: str = "fastest",
             power=None, power_cap=None, cluster_caps=None, estimate=None,
             check: bool = True) -> RuleResult:
    """Run the driver ``drive`` (:func:`driver_for`) over a release-mode workload.

    Arguments as in :func:`decoders.federated.dispatch`; ``estimate`` is what the
    rule plans with (its reservation and backfill test, and the score's
    ``estimate``), default the run times.
    """
    from ._validate import choice_code
    from .federated import MODELS

    code = choice_code("execution model", model, MODELS)
    bf = choice_code("backfilling", backfill, BACKFILL)
    jobs, plat, order, bl = setup_online(release, tasks, runtime, sigma, bw, nodes, speed,
                                         power_busy, power_idle, link, power=power,
                                         power_cap=power_cap, cluster_caps=cluster_caps,
                                         rule=rule, check=check, estimate=estimate)
    J, K = order.shape[0], plat.nodes.shape[0]
    st = with_scan(new_state(J, K, easy=False), J, K)
    out = Out(np.full(J, np.nan), np.full(J, np.nan), np.empty((J, K), dtype=np.int64),
              np.empty(J))
    steps.init(jobs, plat, st, out, order)
    prepare(jobs, plat, st, bl)
    nan_job, t = drive(jobs, plat, st, out, bl, code, bf, np.zeros(J), np.empty(J, np.int64))
    if nan_job >= 0:
        return RuleResult(out.start, out.finish, out.alloc, out.reserve, np.nan, np.nan, np.nan,
                          0, int(nan_job), float(t))
    m, e, fl = steps.end(t, code, jobs, plat, st, out)
    n_coalloc = int(np.count_nonzero((out.alloc > 0).sum(axis=1) >= 2))
    return RuleResult(out.start, out.finish, out.alloc, out.reserve, float(m), float(e),
                      float(fl), n_coalloc, -1, float(t))
