"""The steps of the federated event loop, for a driver outside it.

A driver in Python (:class:`moga.sim.Session`) or in Numba
(:mod:`decoders.online`, :mod:`decoders.realtime`) runs the loop one event at
a time: :func:`init` (or :func:`init_easy`), then per event :func:`begin`
(release the jobs finishing by ``t``, queue the arrivals) and :func:`map`
(start a given list of queued jobs where they fit) or :func:`easy` (EASY
over the queue), then :func:`end`. :func:`preempt` stops a running job and
queues it again; :func:`stop` and :func:`requeue` are its two halves, for a
driver that holds a stopped job back for a while; :func:`drop` takes a
queued job away for good; :func:`claim` keeps free nodes out of use.
:func:`core` sets up the loop's state over an input bundle
(:func:`decoders.federated.inputs`), :func:`driver_core` over the few arrays of a
Numba driver. A driver in Python reads the state through :func:`queued`,
:func:`running`, :func:`status`, :func:`n_settled`, :func:`free`,
:func:`power_used`, :func:`slowdowns` and :func:`state_arrays`, never through its
layout.

Import the module, not its names (``from decoders import steps``;
``steps.map(...)``): ``map`` is a step here, not the builtin.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from ._backfill_index import EMPTY, add_jobs, set_leaf
from ._federated_core import (
    E_CURSOR,
    E_HOLES,
    E_INDEX,
    E_NCL,
    E_NH,
    E_NQ,
    E_PLAN,
    E_QH,
    E_SHEAD,
    E_STARTED,
    TABLE_K,
    Out,
    new_state,
    next_finish,
    objectives,
    plans_on_estimates,
    release_due,
)
from ._kernels import FINISH_RTOL
from ._queue import arrival_order, enqueue, reset_loop
from ._validate import readonly
from .easy import sd_floors, start_easy
from .federated import Inputs, array_inputs, begin_easy, fcfs_order, start_listed


@njit(cache=True, error_model="numpy", _nrt=False)
def init(jobs, plat, st, out, order):
    reset_loop(jobs, plat, st, out, order, True)
    arrival_order(jobs, st)
    st.evi[E_PLAN] = plans_on_estimates(jobs)


@njit(cache=True, error_model="numpy", _nrt=False)
def init_easy(jobs, plat, st, out, order, blacklist):
    """:func:`init` for a driver that calls :func:`easy`: EASY's candidate
    index over ``order`` is built and the steps keep it up to date (``E_INDEX``)."""
    init(jobs, plat, st, out, order)
    if plat.nodes.shape[0] <= TABLE_K:
        sd_floors(plat, st)
    begin_easy(jobs, plat, st, order, blacklist)  # the loop's own set-up of an EASY row
    st.evi[E_INDEX] = 1


@njit(cache=True, error_model="numpy", _nrt=False)
def begin(t, model, jobs, plat, st, out):
    t = release_due(t + FINISH_RTOL * abs(t), t, model == 0, jobs, plat, st, out)
    arrived = st.evi[E_CURSOR]
    enqueue(t, jobs, st)
    if st.evi[E_INDEX] != 0:
        add_jobs(arrived, st.evi[E_CURSOR], st.queue.by_release, jobs.tasks, jobs.est, jobs.sigma,
                 st, plat.nodes.shape[0] <= TABLE_K)
    return t


@njit(cache=True, error_model="numpy", _nrt=False)
def map(t, model, jobs, plat, st, out, blacklist, listed, n):
    """Start ``listed[:n]`` where they fit; returns the next finish or arrival."""
    t_arrival = start_listed(t, model == 0, jobs, plat, st, out, blacklist, listed, n)
    if st.evi[E_INDEX] != 0:
        for i in range(n):
            if st.queue.started[listed[i]] == 1:
                set_leaf(listed[i], EMPTY, np.inf, st, plat.nodes.shape[0] <= TABLE_K)
    return min(next_finish(st), t_arrival)


@njit(cache=True, error_model="numpy", _nrt=False)
def easy(t, model, jobs, plat, st, out, order, blacklist):
    """EASY backfilling over the queue in ``order`` (the order of :func:`init_easy`)
    at ``t``; returns the next finish or arrival. The jobs it starts are in the event
    heap with ``started`` 1."""
    t_arrival = start_easy(t, model == 0, jobs, plat, st, out, order, blacklist)
    return min(next_finish(st), t_arrival)


@njit(cache=True, error_model="numpy", _nrt=False)
def stop(t, model, jobs, plat, st, out, r):
    """Stop running job ``r`` at ``t``, out of the queue (``started`` 3) until
    :func:`requeue`.

    Its nodes, power and link traffic are released as its finish at ``t``
    would release them (other co-allocated jobs are re-rated) and its
    allocation is cleared. Returns its work left, s on a speed-1.0 node.
    """
    left = (st.run.fin[r] - t) / st.run.sd[r]
    st.run.fin[r] = t
    nh = st.evi[E_NH]
    in_heap = False
    for i in range(nh):
        if st.run.hj[i] == r:  # lower its key to t: sift up
            while i > 0:
                p = (i - 1) >> 1
                if st.run.ht[p] < t or (st.run.ht[p] == t and st.run.hj[p] < r):
                    break
                st.run.ht[i] = st.run.ht[p]
                st.run.hj[i] = st.run.hj[p]
                i = p
            st.run.ht[i] = t
            st.run.hj[i] = r
            in_heap = True
            break
    if not in_heap:  # a re-rated co-allocated job
        st.evf[0] = min(st.evf[0], t)
    release_due(t, t, model == 0, jobs, plat, st, out)
    st.run.coal[r] = 0  # a restart on one cluster is not co-allocated
    for k in range(out.alloc.shape[1]):
        out.alloc[r, k] = 0
    st.queue.started[r] = 3
    st.evi[E_STARTED] -= 1
    st.evi[E_SHEAD] = 0  # a planned end moved: EASY's next reservation afresh
    return left


@njit(cache=True, error_model="numpy", _nrt=False)
def requeue(jobs, plat, st, r):
    """Queue job ``r``, stopped by :func:`stop`, again at its place in the order.

    The queue first moves to the front of ``wq``, without the jobs in it that
    no longer wait (EASY's holes, stopped jobs); its next start runs for
    ``jobs.runtime[r]``.
    """
    qh, nq = st.evi[E_QH], st.evi[E_NQ]
    m = 0
    for i in range(nq):
        j = st.queue.wq[qh + i]
        if st.queue.started[j] == 0 and j != r:
            st.queue.wq[m] = j
            m += 1
    i = m
    while i > 0 and st.queue.pos_of[st.queue.wq[i - 1]] > st.queue.pos_of[r]:
        st.queue.wq[i] = st.queue.wq[i - 1]
        i -= 1
    st.queue.wq[i] = r
    st.evi[E_QH] = 0
    st.evi[E_NQ] = m + 1
    st.evi[E_HOLES] = 0
    st.queue.started[r] = 0
    if st.evi[E_INDEX] != 0:
        set_leaf(r, jobs.tasks[r], jobs.est[r], st, plat.nodes.shape[0] <= TABLE_K,
                 jobs.est[r] * (1.0 - jobs.sigma[r]))


@njit(cache=True, error_model="numpy", _nrt=False)
def preempt(t, model, jobs, plat, st, out, r):
    """Stop running job ``r`` at ``t`` and queue it again at its place.

    Its nodes, power and link traffic are released as its finish at ``t``
    would release them (other co-allocated jobs are re-rated), its
    allocation is cleared, and it joins the waiting queue at its place in the
    order. Returns its work left, s on a speed-1.0 node.
    """
    left = stop(t, model, jobs, plat, st, out, r)
    requeue(jobs, plat, st, r)
    return left


@njit(cache=True, error_model="numpy", _nrt=False)
def claim(st, k, n):
    """Keep ``n`` free nodes of cluster ``k`` out of use (a negative ``n`` gives them back):
    for a job that waits for them, outside the queue. EASY's next reservation is
    computed afresh."""
    st.run.free[k] -= n
    st.evi[E_SHEAD] = 0


@njit(cache=True, error_model="numpy", _nrt=False)
def drop(jobs, st, out, r):
    """Take queued job ``r`` out of the queue for good: it never runs.

    It counts as settled (``E_STARTED``, so the loop can end) with
    ``started`` 2, NaN start and finish and no allocation; the next mapping
    drops it from the queue as it drops started jobs.
    """
    st.queue.started[r] = 2
    st.evi[E_STARTED] += 1
    out.start[r] = np.nan
    out.finish[r] = np.nan
    for k in range(out.alloc.shape[1]):
        out.alloc[r, k] = 0


@njit(cache=True, error_model="numpy", _nrt=False)
def end(t, model, jobs, plat, st, out):
    release_due(np.inf, t, model == 0, jobs, plat, st, out)
    m, e, fl = objectives(jobs, plat, out)
    return m, e, fl


class DriverCore(NamedTuple):
    """The loop's bundles and state for a driver of the steps (:func:`core`)."""

    jobs: tuple
    plat: tuple
    order: np.ndarray
    st: tuple
    out: tuple
    run_w: np.ndarray
    bl_rows: np.ndarray
    bl: np.ndarray


def core(bundle: Inputs, *, easy: bool = True) -> DriverCore:
    """The loop's state for a driver of the steps over the input bundle ``bundle``
    (:func:`decoders.federated.inputs`), jobs in arrival order.

    ``run_w`` is the writable array that ``jobs.runtime`` and ``jobs.est``
    view (read only: a driver may change a job's run time, and EASY plans on
    the run times the driver sets), and ``bl`` a read-only view of the
    writable blacklist ``bl_rows`` (zeros: a driver sets the rows of the jobs
    it lists), so that the steps run in one signature for every driver.
    ``easy`` False leaves EASY's scan and index empty, for a driver that never
    calls :func:`init_easy`.
    """
    jobs, plat = bundle
    J, K = bundle.n_jobs, bundle.n_clusters
    run_w = np.array(jobs.runtime)
    view = readonly(run_w)
    bl_rows = np.zeros((J, K))
    out = Out(np.full(J, np.nan), np.full(J, np.nan), np.empty((J, K), dtype=np.int64),
              np.empty(J))
    return DriverCore(jobs._replace(runtime=view, est=view), plat, fcfs_order(jobs),
                      new_state(J, K, easy), out, run_w, bl_rows, readonly(bl_rows))


def driver_core(release, tasks, runtime, nodes, speed) -> DriverCore:
    """:func:`core` for a driver in Numba (:mod:`decoders.online`, :mod:`decoders.realtime`):
    jobs without communication on clusters of unit power and no cap."""
    J, K = len(release), len(nodes)
    zeros, ones = np.zeros(J), np.ones(K)
    return core(array_inputs(release, tasks, runtime, zeros, zeros, nodes, speed, ones, ones, ones,
                             check=False))


# ------------------------------------------------ reading the state (for a Python driver)
def queued(st) -> np.ndarray:
    """The waiting jobs in queue order (a copy): queued, and not started, stopped or dropped."""
    qh = int(st.evi[E_QH])
    q = st.queue.wq[qh:qh + int(st.evi[E_NQ])]
    return q[st.queue.started[q] == 0]


def running(st) -> tuple[np.ndarray, np.ndarray]:
    """``(jobs, projected finish)`` of the running jobs (copies): the event heap's jobs, then
    the re-rated co-allocated ones."""
    run = np.concatenate([st.run.hj[:int(st.evi[E_NH])], st.run.cl[:int(st.evi[E_NCL])]])
    return run, st.run.fin[run].copy()


def status(st) -> np.ndarray:
    """Each job's status (J,), a read-only view: 0 waiting or not arrived yet, 1 started
    (running or finished), 2 dropped (:func:`drop`), 3 stopped (:func:`stop`)."""
    return readonly(st.queue.started)


def n_settled(st) -> int:
    """The jobs started or dropped so far (the loop ends when all are)."""
    return int(st.evi[E_STARTED])


def free(st) -> np.ndarray:
    """Free nodes per cluster (a copy)."""
    return st.run.free.copy()


def power_used(st) -> np.ndarray:
    """Power the running jobs add to idle power, per cluster then overall, W (a copy)."""
    return st.run.pk.copy()


def slowdowns(st) -> np.ndarray:
    """Each job's current slowdown (J,), a read-only view (meaningful for running jobs)."""
    return readonly(st.run.sd)


def state_arrays(st, out) -> list:
    """Every array of the state ``st`` and the output ``out``: what a driver saves and
    restores to undo steps (a dry run)."""
    return [a for part in (*st, *out) for a in (part if isinstance(part, tuple) else (part,))]
