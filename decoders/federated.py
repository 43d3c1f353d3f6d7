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

The rule that picks the jobs to start at an event (the event loop and the
allocation are shared); the decoders take the first two:

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
    head can start after its reservation (:mod:`decoders.easy`).
``"prb"``
    the power-capped priority-rule-based list scheduler of :func:`dispatch`
    (release mode): at every event the queue is ranked by decreasing
    ``weight[j] * (t - release[j] + 1)``, ties by a given key, and every
    ranked job that fits now starts; no reservation.
``"saf"``
    smallest area first, a dispatcher of :func:`dispatch` (release mode): at
    every event every queued job that fits now starts, smallest ``tasks x``
    planned run time first (ties by arrival); no reservation.
listed
    the steps' rule (:func:`decoders.steps.map`): start the queued jobs a
    driver lists, in that order, where they fit now.

Three allocation rules: ``"fastest"`` (fastest clusters first; ties to lower
energy per unit of work, then lower index), ``"greenest"`` (least energy
per unit of work, ``power_busy / speed``, first; ties to the faster cluster,
then lower index) and ``"consolidate"`` (the seed's and AccaSim's
consolidation, per cluster: the fullest cluster that holds the job alone,
else the fullest clusters first; ties in the fastest order).

Layout: one private ``@njit`` event loop over the rows of a population, written
once and specialised per rule (``_decode_in_order``, ``_decode_easy``,
``_decode_prb``, ``_decode_saf``: :func:`_loop_for`; without the GIL, in
threads: :func:`run_rows`), each compiled and cached on its own, with the rules
that start jobs at an event (``_start_in_order``, ``_start_prb``,
:func:`start_listed`; EASY in :mod:`decoders.easy`, the queue in
:mod:`decoders._queue`), the one input bundle (:class:`Inputs`: a job-set and a
federation validated and made into the kernels' arrays, by :func:`inputs` or
:func:`array_inputs` alone), and public wrappers (:func:`decode`,
:func:`decode_batch`, :func:`dispatch`, each with its bundle form) that build
it (see :mod:`decoders._federated_core` for the bundles and every field).
The steps of the loop for a driver outside it are in :mod:`decoders.steps`.
The helpers are compiled with ``forceinline``: LLVM inlines them into the
kernel, so the loop runs as one function, while Numba types each helper once.
"""

from __future__ import annotations

import os
import threading
import types
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple

import numpy as np
from numba import get_num_threads, njit

from . import _cache
from ._backfill_index import build_index, power_floors
from ._federated_core import (
    E_COALLOC,
    E_CURSOR,
    E_NACT,
    E_NQ,
    E_PLAN,
    E_QH,
    E_RELAXED,
    E_STARTED,
    TABLE_K,
    Jobs,
    Platform,
    allowance,
    allowances,
    commit_one,
    commit_start,
    fits,
    is_capped,
    new_out,
    new_state,
    next_finish,
    objectives,
    plans_on_estimates,
    release_due,
    whole_cluster,
)
from ._kernels import FINISH_RTOL, cluster_ranks, heap_pop, heap_push, helper
from ._queue import arrival_order, dequeue_started, enqueue, place_or_relax, reset_loop, try_start
from ._validate import (
    CLUSTER_FIELDS,
    JOB_FIELDS,
    CapInfeasibleError,
    check_blacklists,
    check_orders,
    check_population,
    check_vector,
    choice_code,
    has_fields,
    power_inputs,
    prepare,
    readonly,
    runnable_under_cap,
)
from .easy import sd_floors, start_easy

__all__ = ["CapInfeasibleError", "MODELS", "BACKFILL", "RULES", "FederatedDecode", "BatchDecode",
           "BatchDecoder", "Dispatch", "Inputs", "inputs", "array_inputs", "decode",
           "decode_arrays", "decode_inputs", "decode_batch", "dispatch", "dispatch_inputs",
           "fcfs_order", "model_code", "allocation_ranks", "power_inputs",
           "runnable_under_cap", "JOB_FIELDS", "CLUSTER_FIELDS"]

#: Execution models by name, with the integer code the kernels use.
MODELS = {"fluid": 0, "at_start": 1}
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
    #: Each job's finish time (P, J), indexed like the job arrays, when
    #: ``decode_batch(finishes=True)``.
    finishes: np.ndarray | None = None


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
def _start_in_order(t, fluid, jobs, plat, st, out, order, blacklist, weight, ties):
    """The MOGA rule at time ``t``: start the next jobs of ``order`` while they can start now.

    Stops at the first job not yet released, whose allowed free nodes do not
    hold it, or that fits no power budget now (nothing behind it may start
    first). Returns the release of that job when it is still to come (inf
    otherwise). Most jobs take one cluster whole: without a power cap or
    consolidation such a job is found and started with one pass over the
    clusters (:func:`whole_cluster`, :func:`commit_one`), the general path's
    outcome without its allowance, fit, pick and slowdown passes.
    """
    J = order.shape[0]
    K = st.run.free.shape[0]
    pos = st.evi[E_CURSOR]
    n_relaxed = st.evi[E_RELAXED]
    t_arrival = np.inf
    plain = not is_capped(plat) and plat.consolidate[0] == 0  # whole_cluster's pick
    while pos < J:
        j = order[pos]
        if jobs.release[j] > t:
            t_arrival = jobs.release[j]
            break
        free_total = 0
        for k in range(K):
            free_total += st.run.free[k]
        if free_total < jobs.tasks[j]:  # no allowance holds it: fits would say no
            break
        if plain:
            k = whole_cluster(j, blacklist, jobs, plat, st.run.free)
            if k >= 0:
                commit_one(j, k, t, jobs, plat, st, out)
                pos += 1
                continue
        relaxed = allowance(j, blacklist, jobs, plat, st.run.allow)
        if not fits(jobs.tasks[j], st.run.free, st.run.allow):
            break
        placed = place_or_relax(j, relaxed, jobs, plat, st, out.alloc)
        if placed == 0:
            break
        n_relaxed += relaxed or placed == 2
        commit_start(j, t, fluid, jobs, plat, st, out)
        pos += 1
    st.evi[E_CURSOR] = pos
    st.evi[E_RELAXED] = n_relaxed
    return t_arrival


@helper
def _start_prb(t, fluid, jobs, plat, st, out, order, blacklist, weight, ties):
    """PRB at time ``t``: rank the queue, start every ranked job that fits now, postpone the rest.

    Rank: decreasing ``weight[j] * (t - release[j] + 1)`` (``weight`` is
    ``max_ewt / ewt`` of the job's queue), ties by increasing duration x
    nodes, then index: ``ties[0]`` is each job's place in that tie order,
    ``ties[1]`` the jobs in it. The event heap ranks by (negated key, tie
    place). No reservation. Returns the next arrival.
    """
    K = st.run.free.shape[0]
    enqueue(t, jobs, st)
    n = 0
    wq = st.queue.wq[st.evi[E_QH]:]
    for q in range(st.evi[E_NQ]):
        j = wq[q]
        n = heap_push(st.resv.sh_t, st.resv.sh_j, n, -weight[j] * (t - jobs.release[j] + 1.0), ties[0, j])
    free_total = 0
    for k in range(K):
        free_total += st.run.free[k]
    while n > 0 and free_total > 0:
        j = ties[1, st.resv.sh_j[0]]
        n = heap_pop(st.resv.sh_t, st.resv.sh_j, n)
        if jobs.tasks[j] <= free_total and try_start(j, t, fluid, jobs, plat, st, out, blacklist):
            free_total -= jobs.tasks[j]
    return dequeue_started(jobs, st, 0, 0)


@helper
def _start_saf(t, fluid, jobs, plat, st, out, order, blacklist, weight, ties):
    """Smallest area first at time ``t``: every queued job that fits now (nodes and power)
    starts, smallest area first; the rest wait for the next event. No reservation.

    The area is ``tasks x est`` (the planned run time); the loop's order sorts the
    jobs by area, then release, then index (:func:`dispatch`), so the queue, kept in
    that order, is the ranking. Returns the next arrival.
    """
    K = st.run.free.shape[0]
    enqueue(t, jobs, st)
    free_total = 0
    for k in range(K):
        free_total += st.run.free[k]
    wq = st.queue.wq[st.evi[E_QH]:]
    for q in range(st.evi[E_NQ]):
        if free_total == 0:
            break
        j = wq[q]
        if jobs.tasks[j] <= free_total and try_start(j, t, fluid, jobs, plat, st, out, blacklist):
            free_total -= jobs.tasks[j]
    return dequeue_started(jobs, st, 0, 0)


#: The decorator of a rule's small hook that only forwards to helpers: Numba inlines its
#: code into the loop before typing, so it costs no compile of its own.
hook = njit(inline="always", error_model="numpy", _nrt=False)


@hook
def _start_easy(t, fluid, jobs, plat, st, out, order, blacklist, weight, ties):
    """EASY backfilling at time ``t`` (:func:`decoders.easy.start_easy`), as a rule of the
    loop; returns the next arrival."""
    return start_easy(t, fluid, jobs, plat, st, out, order, blacklist)


@hook
def _no_prepare(jobs, plat, st):
    """The in-order rule's set-up of a call: none."""


@hook
def _prepare_queue(jobs, plat, st):
    """The set-up of a call of a rule with a queue: the jobs in arrival order, which
    depends on the job-set alone (:func:`decoders._queue.arrival_order`)."""
    arrival_order(jobs, st)


@hook
def _prepare_easy(jobs, plat, st):
    """EASY's set-up of a call: the arrival order and, on a federation small enough for
    its table, the slowdown floors of the cluster sets (:func:`decoders.easy.sd_floors`)."""
    arrival_order(jobs, st)
    if plat.nodes.shape[0] <= TABLE_K:
        sd_floors(plat, st)


@hook
def _reset_in_order(jobs, plat, st, out, order):
    """The in-order rule's reset of a row: :func:`decoders._queue.reset_loop` without the
    queue, which the rule does not keep."""
    reset_loop(jobs, plat, st, out, order, False)


@hook
def _reset_queue(jobs, plat, st, out, order):
    """The reset of a row of a rule with a queue (:func:`decoders._queue.reset_loop`)."""
    reset_loop(jobs, plat, st, out, order, True)


@hook
def _no_begin(jobs, plat, st, order, blacklist):
    """The row set-up of a rule that keeps nothing of the row: none."""


@hook
def begin_easy(jobs, plat, st, order, blacklist):
    """EASY's set-up of a row, after the loop's: every job's allowed nodes, under a cap
    their power floors, and the candidate index of the queue (:mod:`decoders._backfill_index`).
    A driver of the steps sets up its EASY the same way (:func:`decoders.steps.init_easy`)."""
    allowances(blacklist, jobs, plat, st)
    if is_capped(plat):
        power_floors(jobs.tasks, jobs.power, plat.pbusy, plat.pidle, st.scan.allow_j, st.index)
    st.evi[E_NACT] = build_index(order, st, plat.nodes.shape[0] <= TABLE_K, plat.nodes.sum())


@helper
def start_listed(t, fluid, jobs, plat, st, out, blacklist, listed, n):
    """Start the jobs ``listed[:n]`` (queued, in that order) that fit now; returns the next arrival."""
    for i in range(n):
        j = listed[i]
        if st.queue.started[j] == 0:
            try_start(j, t, fluid, jobs, plat, st, out, blacklist)
    return dequeue_started(jobs, st, 0, 0)


def _loop(jobs, plat, orders, blacklists, model, lo, hi, st, out, weight, ties, out_f, out_i,
          out_starts, out_alloc, out_finish):
    """Decode chromosomes ``lo`` to ``hi - 1`` of a population with one rule: the event
    loop of every federated decode, written once; :func:`_loop_for` makes it the
    kernel of each rule of :data:`KERNEL_RULES`, whose hooks it calls as the globals
    ``_prepare``, ``_reset``, ``_begin`` and ``_start``.

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
    out_finish : float64[:, :]
        With P rows, ``out_finish[p, j]`` receives the finish of job ``j``;
        shape (0, J) skips it.

    The rule's hooks (:class:`KernelRule`): ``_prepare`` once per call,
    ``_reset`` and then ``_begin`` for every row, ``_start`` at every event (a
    finish or an arrival), after the jobs finishing by then have released their
    nodes; time moves to the next finish or arrival until every job has started.

    One kernel per rule serves one chromosome and a population alike; it runs
    without the GIL, and :func:`run_rows` decodes a population in threads, one
    contiguous chunk each.
    """
    J = orders.shape[1]
    fluid = model == 0
    want_starts = out_starts.shape[0] > 0
    want_alloc = out_alloc.shape[0] > 0
    want_finish = out_finish.shape[0] > 0
    plan = plans_on_estimates(jobs)
    if hi > lo:
        _prepare(jobs, plat, st)  # noqa: F821 - a hook, set by _loop_for
    for p in range(lo, hi):
        order, blacklist = orders[p], blacklists[p]
        _reset(jobs, plat, st, out, order)  # noqa: F821
        st.evi[E_PLAN] = plan
        _begin(jobs, plat, st, order, blacklist)  # noqa: F821
        t = 0.0
        while st.evi[E_STARTED] < J:
            t = release_due(t + FINISH_RTOL * abs(t), t, fluid, jobs, plat, st, out)
            t_arrival = _start(t, fluid, jobs, plat, st, out, order, blacklist, weight,  # noqa: F821
                               ties)
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
        if want_finish:
            for i in range(J):
                out_finish[p, i] = out.finish[i]


def _loop_for(rule, name: str):
    """The event loop (:func:`_loop`) specialised to ``rule`` (a :class:`KernelRule`),
    compiled on first use as the module's kernel ``name``.

    The loop calls the rule's hooks as globals, and a copy of it is made with
    those globals set to this rule's functions: Numba resolves a global at
    compile time, so each specialisation types, inlines and compiles only its
    own rule's code, and a command compiles only the rules it runs. Numba's
    on-disk cache names a kernel's file after its name and keys it by its code
    (the same for every rule), so each specialisation is cached in its own file
    and a later process loads it.
    """
    hooks = dict(globals(), _prepare=rule.prepare, _reset=rule.reset, _begin=rule.begin,
                 _start=rule.start)
    decode = types.FunctionType(_loop.__code__, hooks, name, _loop.__defaults__, _loop.__closure__)
    decode.__qualname__ = name
    decode.__doc__ = _loop.__doc__
    return njit(cache=True, nogil=True, no_cfunc_wrapper=True, error_model="numpy", _nrt=False)(decode)


def _area_order(jobs):
    """Smallest area first's queue: by ``tasks x est`` (the planned area), then release,
    then index."""
    J = jobs.release.shape[0]
    return np.lexsort((np.arange(J), jobs.release, jobs.tasks * jobs.est)).astype(np.int64)


class KernelRule(NamedTuple):
    """A rule of the event loop: what starts jobs at an event (one row of :data:`KERNEL_RULES`).

    A new kernel rule is its ``start`` function (and, when it keeps state of its
    own, its ``prepare``, ``reset`` and ``begin`` hooks), a row here, and its
    catalogue entry (:data:`moga.POLICIES`), twin and test; its loop
    (:func:`_loop_for`), its code, :func:`dispatch`'s methods and its compile group
    follow from the row. The hooks are :data:`~decoders._kernels.helper` functions
    with these arguments (the bundles of :mod:`decoders._federated_core`):

    - ``start(t, fluid, jobs, plat, st, out, order, blacklist, weight, ties)`` at
      every event: start what the rule starts at ``t``; returns the next arrival
      the rule waits for (inf when none);
    - ``prepare(jobs, plat, st)`` once per call, before the rows;
    - ``reset(jobs, plat, st, out, order)`` at each row: the work arrays and
      outputs of an empty federation (the event scalars included);
    - ``begin(jobs, plat, st, order, blacklist)`` at each row, after the loop's own
      set-up.
    """

    #: The rule's number: its loop's place in the table of loops (``run_rows``'s ``mode``).
    code: int
    #: The rule, called at every event with the loop's bundles.
    start: object
    #: Its compile group (:data:`moga.warmup.KERNEL_GROUPS`).
    group: str
    #: Whether :func:`dispatch` runs it as a whole-run dispatcher.
    dispatch: bool = False
    #: The loop's order for :func:`dispatch`, from the job bundle (default arrival order).
    queue: object = None
    #: The set-up of a call (default: the arrival order of a rule with a queue).
    prepare: object = _prepare_queue
    #: The reset of a row (default: that of a rule with a queue).
    reset: object = _reset_queue
    #: The rule's own set-up of a row (default: none).
    begin: object = _no_begin
    #: Whether its work arrays hold EASY's backfill scan and candidate index
    #: (``new_state(..., easy=True)``); the other rules' hold them empty.
    index: bool = False


#: The rules of the event loop by name; the loop is specialised to each
#: (``_decode_<name>``, :func:`_loop_for`), compiled and cached on its own.
KERNEL_RULES = {
    "in_order": KernelRule(0, _start_in_order, "decoder", prepare=_no_prepare,
                           reset=_reset_in_order),
    "easy": KernelRule(1, _start_easy, "EASY decoder", dispatch=True, prepare=_prepare_easy,
                       begin=begin_easy, index=True),
    "prb": KernelRule(2, _start_prb, "PRB dispatcher", dispatch=True),
    "saf": KernelRule(3, _start_saf, "SAF dispatcher", dispatch=True, queue=_area_order),
}
#: Each rule's code.
LOOP_RULES = {name: r.code for name, r in KERNEL_RULES.items()}
#: Backfilling modes, with their rule's code.
BACKFILL = {"none": LOOP_RULES["in_order"], "easy": LOOP_RULES["easy"]}
#: The whole-run dispatchers of :func:`dispatch`, with the kernel's rule code.
_DISPATCH_CODES = {name: r.code for name, r in KERNEL_RULES.items() if r.dispatch}
#: The methods of :func:`dispatch`.
DISPATCH_METHODS = tuple(_DISPATCH_CODES)
#: The loop's specialisation of each rule (its kernel's name, and the kernel), by code.
_LOOP_NAMES = tuple(f"_decode_{name}" for name in KERNEL_RULES)
_LOOPS = tuple(_loop_for(r, f"_decode_{name}") for name, r in KERNEL_RULES.items())
#: Whether each rule's work arrays hold EASY's scan and index, by code.
_INDEXED = tuple(r.index for r in KERNEL_RULES.values())
_decode_in_order, _decode_easy, _decode_prb, _decode_saf = _LOOPS


_POOL = [None, 0, 0]  # the decode threads: executor, its size, the process that made it


def thread_pool(n):
    """A pool of at least ``n`` threads, made again in a forked child (whose threads are gone)."""
    pool, size, pid = _POOL
    if pool is None or size < n or pid != os.getpid():
        if pool is not None and pid == os.getpid():
            pool.shutdown(wait=False)  # too small: its idle threads end
        pool = ThreadPoolExecutor(max_workers=n, thread_name_prefix="moga-decode")
        _POOL[:] = [pool, n, os.getpid()]
    return pool


def run_rows(jobs, plat, orders, blacklists, model, mode, weight=None, ties=None, n_chunks=1,
             starts=False, allocs=False, work=None, finishes=False):
    """Run the loop of rule ``mode`` (:data:`LOOP_RULES`) over every row of ``orders`` (P, J)
    and ``blacklists`` (P, J, K).

    ``n_chunks`` contiguous chunks run in as many threads, each with its own
    work arrays. Returns ``(out_f, out_i, out_starts, out_alloc, out, out_finish)``:
    objectives (P, 3), counters (P, 2), start times by order position (P, J)
    when ``starts`` (else None), every row's allocation (P, J, K) when
    ``allocs`` (else None), the last chunk's :data:`Out`, which holds the
    last row's schedule, and finish times by job (P, J) when ``finishes``
    (else None). ``work``, when given, is a ``(State, Out)`` pair of a
    decode of the same J and K: the one chunk's work arrays, reused (with
    ``n_chunks`` 1; its Out is overwritten).
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
    out_e = np.empty((P if finishes else 0, J))
    n_chunks = max(1, min(P, n_chunks))
    if work is not None and n_chunks != 1:
        raise ValueError(f"reused work arrays serve one chunk, got n_chunks={n_chunks}")
    outs = [new_out(J, K) for _ in range(n_chunks)] if work is None else [work[1]]
    if _cache._ELSEWHERE:  # another process is compiling a loop: load it when it is done
        _cache.await_elsewhere("federated", _LOOP_NAMES[mode])

    def chunk(c):
        # The outputs by keyword (Numba folds them into its signature at no cost; a
        # bundle of them would be typed in Python at every call).
        _LOOPS[mode](jobs, plat, orders, blacklists, model, c * P // n_chunks,
                (c + 1) * P // n_chunks, new_state(J, K, _INDEXED[mode]) if work is None else work[0],
                outs[c], weight, ties, out_f=out_f, out_i=out_i, out_starts=out_s, out_alloc=out_a,
                out_finish=out_e)

    if n_chunks == 1:
        chunk(0)
    else:
        list(thread_pool(n_chunks).map(chunk, range(n_chunks)))
    return (out_f, out_i, (out_s if starts else None), (out_a if allocs else None), outs[-1],
            (out_e if finishes else None))


#: Most jobs for which a thread keeps the work arrays of its last one-row decode
#: (:func:`cached_state`); beyond this, making them costs little next to the decode.
CACHE_MAX_JOBS = 100_000

_CACHE = threading.local()  # each thread's last one-row work arrays: ((J, K, easy), State)


def cached_state(J, K, easy):
    """Work arrays (:data:`decoders._federated_core.State`) for a one-row decode of J jobs on
    K clusters in this thread: the thread's last ones when they have the same shape.

    A one-row decode (:func:`decode_inputs`, :func:`dispatch_inputs`) spends
    as long making fresh arrays as a tenth of its loop; the kernels set every
    field they read at the start of a row (:class:`BatchDecoder` reuses them
    from batch to batch the same way). One set per thread, so that decodes
    in several threads never share one; none is kept past
    :data:`CACHE_MAX_JOBS` jobs.
    """
    key = (J, K, bool(easy))
    last = getattr(_CACHE, "last", None)
    if last is not None and last[0] == key:
        return last[1]
    st = new_state(J, K, easy)
    _CACHE.last = (key, st) if J <= CACHE_MAX_JOBS else None
    return st


# -------------------------------------------------------------------- wrappers
class Inputs(NamedTuple):
    """A job-set on a federation as the kernels take them: the loop's read-only job and
    platform bundles (:data:`decoders._federated_core.Jobs` and ``Platform``), made by
    :func:`inputs` or :func:`array_inputs` and taken by :func:`decode_inputs`,
    :meth:`BatchDecoder.of`, :func:`dispatch_inputs` and :func:`decoders.steps.core`.

    The one place the model becomes kernel arrays (the place another backend would
    replace); build one per job-set and federation and decode it any number of times.
    """

    jobs: tuple
    plat: tuple

    @property
    def n_jobs(self) -> int:
        """J, the number of jobs."""
        return self.jobs.release.shape[0]

    @property
    def n_clusters(self) -> int:
        """K, the number of clusters."""
        return self.plat.nodes.shape[0]


def inputs(jobset, federation, *, rule: str = "fastest", estimates: str = "exact",
           check: bool = True) -> Inputs:
    """The kernels' input bundle of a job-set on a federation.

    Parameters
    ----------
    jobset : object
        Any object with the job arrays (:data:`JOB_FIELDS`) as attributes,
        such as :class:`moga.JobSet`; its power factors ``power`` (J,) are
        read when it has them, its ``requested`` times under
        ``estimates="requested"``.
    federation : object
        Any object with the cluster arrays (:data:`CLUSTER_FIELDS`), such as
        :class:`moga.Federation`; its caps ``power_cap`` and
        ``cluster_caps`` are read when it has them.
    rule : {"fastest", "greenest", "consolidate"}
        Allocation rule (:data:`RULES`).
    estimates : {"exact", "requested"}
        What EASY plans with and smallest area first ranks by: the run times
        or the job-set's requested times (:func:`array_inputs`'s ``estimate``).
    check : bool
        As in :func:`array_inputs`.

    Returns
    -------
    Inputs
    """
    if estimates not in ("exact", "requested"):
        raise ValueError(f"estimates must be 'exact' or 'requested', got {estimates!r}")
    job = _fields("job-set", jobset, JOB_FIELDS)
    cluster = _fields("federation", federation, CLUSTER_FIELDS)
    estimate = None
    if estimates == "requested":
        estimate = getattr(jobset, "requested", None)
        if estimate is None:
            raise ValueError("estimates='requested' needs a job-set with requested times")
    power = getattr(jobset, "power", None)
    if power is not None and np.all(np.asarray(power) == 1.0):
        power = None  # the default, without validating J factors
    return array_inputs(*job, *cluster, power=power,
                        power_cap=getattr(federation, "power_cap", None),
                        cluster_caps=getattr(federation, "cluster_caps", None), rule=rule,
                        estimate=estimate, check=check)


def array_inputs(release, tasks, runtime, sigma, bw, nodes, speed, power_busy, power_idle, link,
                 *, power=None, power_cap=None, cluster_caps=None, rule: str = "fastest",
                 estimate=None, check: bool = True) -> Inputs:
    """The kernels' input bundle of the job and cluster arrays (the array form of
    :func:`inputs`, and the one place the arrays become the kernels' bundles).

    Validates the arrays (``check`` False: only their dtypes, the width check
    and finiteness, for arrays of a validated ``JobSet`` and ``Federation``),
    the power inputs (:func:`power_inputs`), the allocation ``rule`` and the
    planning times ``estimate``, and ranks the clusters for the rule.
    Parameters are those of :func:`decode_arrays`; the arrays come back as
    read-only views.
    """
    rule_code = choice_code("allocation rule", rule, RULES)
    arrs = prepare(release, tasks, runtime, sigma, bw, nodes, speed, power_busy, power_idle, link,
                   check)
    J, K = arrs.release.shape[0], arrs.nodes.shape[0]
    power, budget = power_inputs(arrs.tasks, power, arrs.nodes, arrs.power_busy,
                                 arrs.power_idle, power_cap, cluster_caps)
    fastest, greenest, slowest = _ranks(arrs.speed, arrs.power_busy)
    pick, consolidate = pick_rank(rule_code, fastest, greenest)
    estimate = check_estimate(estimate, J)
    capped = budget is not None and bool(np.any(budget < np.inf))
    budget = _constant(("inf", K + 1), lambda: np.full(K + 1, np.inf)) if budget is None else budget
    ro = _readonly
    jobs = Jobs(release=ro(arrs.release), tasks=ro(arrs.tasks), runtime=ro(arrs.runtime),
                sigma=ro(arrs.sigma), bw=ro(arrs.bw),
                power=(_constant(("ones", J), lambda: np.ones(J)) if power is None
                       else ro(power)),
                est=ro(arrs.runtime if estimate is None else estimate))
    plat = Platform(nodes=ro(arrs.nodes), speed=ro(arrs.speed), pbusy=ro(arrs.power_busy),
                    pidle=ro(arrs.power_idle), link=ro(arrs.link), rank_pick=pick,
                    rank_fast=fastest, rank_slow=slowest, budget=ro(budget),
                    consolidate=_FLAGS[bool(consolidate)], capped=_FLAGS[capped])
    return Inputs(jobs, plat)


#: The two values of a bundle's one-entry flags (``Platform.consolidate``, ``capped``), read only.
_FLAGS = (readonly(np.zeros(1, dtype=np.int64)), readonly(np.ones(1, dtype=np.int64)))
#: Read-only arrays that depend only on their key, shared by the bundles (:func:`_constant`).
_CONSTANTS = {}
#: Most entries of :data:`_CONSTANTS` (it is emptied when full).
_CONSTANTS_MAX = 64


def _constant(key, make):
    """The read-only array ``make()`` of ``key``, made once (the bundles never write theirs)."""
    a = _CONSTANTS.get(key)
    if a is None:
        if len(_CONSTANTS) >= _CONSTANTS_MAX:
            _CONSTANTS.clear()
        if key[0] == "ones" and key[1] > CACHE_MAX_JOBS:
            return readonly(make())
        a = _CONSTANTS[key] = readonly(make())
    return a


def _ranks(speed, power_busy):
    """:func:`allocation_ranks` as read-only arrays, made once per platform."""
    key = ("ranks", speed.tobytes(), power_busy.tobytes())
    ranks = _CONSTANTS.get(key)
    if ranks is None:
        if len(_CONSTANTS) >= _CONSTANTS_MAX:
            _CONSTANTS.clear()
        ranks = _CONSTANTS[key] = tuple(readonly(r) for r in allocation_ranks(speed, power_busy))
    return ranks


def _readonly(a):
    """``a`` itself when it is already read-only, else a read-only view of it."""
    return readonly(a) if a.flags.writeable else a


def fcfs_order(jobs) -> np.ndarray:
    """The arrival order of the job bundle ``jobs`` (first come, first served; ties by
    index), int64, read only: the one order of a release-mode run."""
    J = jobs.release.shape[0]
    return readonly(np.lexsort((np.arange(J), jobs.release)).astype(np.int64))


def model_code(model) -> int:
    """The kernels' code of execution model ``model`` (:data:`MODELS`), or a ValueError
    naming the choices."""
    return choice_code("execution model", model, MODELS)


def pick_rank(rule_code, fastest, greenest):
    """The pick order of allocation rule ``rule_code`` (:data:`RULES`) and whether it
    consolidates (the fastest order breaks its ties)."""
    return (greenest if rule_code == 1 else fastest), rule_code == 2


def check_estimate(estimate, J):
    """Validated planning times (J,) of EASY, s on a speed-1.0 node, or None (plan on run times)."""
    if estimate is None:
        return None
    return check_vector("estimate", estimate, J, np.float64, lo=0, lo_strict=True)


def _options(model, backfill, rule):
    return (model_code(model), choice_code("backfilling", backfill, BACKFILL),
            choice_code("allocation rule", rule, RULES))


def decode(*args, **options) -> FederatedDecode:
    """Decode one chromosome into a federated schedule.

    Two forms, told apart by the first two arguments:

    ``decode(jobset, federation, order=None, blacklist=None, **options)``
        A job-set and a federation: any objects with the job arrays
        (:data:`JOB_FIELDS`) and the cluster arrays (:data:`CLUSTER_FIELDS`)
        as attributes, such as :class:`moga.JobSet` and
        :class:`moga.Federation`. The job-set's power factors (``power``)
        and the federation's caps (``power_cap``, ``cluster_caps``) are read
        when it has them; ``order`` defaults to the submit order, the
        blacklist to none; ``estimates="requested"`` plans EASY on the
        job-set's ``requested`` times (``"exact"``, the default, on its run
        times). The other options are those of the array form.
    ``decode(release, tasks, ..., link, order, blacklist, **options)``
        The arrays themselves, as :func:`decode_arrays` takes them.

    Both build the input bundle (:func:`inputs`, :func:`array_inputs`);
    :func:`decode_inputs` decodes a bundle built once.

    :func:`moga.evaluate` is this decode returning a :class:`moga.Schedule`.
    """
    if len(args) >= 2 and has_fields(args[0], JOB_FIELDS) and has_fields(args[1], CLUSTER_FIELDS):
        return _decode_models(*args, **options)
    if args and not all(_array_like(a) for a in args[:2]):
        _refuse_models(args)
    return decode_arrays(*args, **options)


def _array_like(a) -> bool:
    """True for what the array form takes as an array (the first two are never scalars)."""
    return isinstance(a, (np.ndarray, list, tuple)) or hasattr(a, "__array__")


def _refuse_models(args):
    """Name what is missing when :func:`decode`'s first two arguments are objects that are not
    a job-set and a federation."""
    if len(args) < 2:
        raise TypeError("decode(jobset, federation): no federation given")
    if has_fields(args[0], CLUSTER_FIELDS) and has_fields(args[1], JOB_FIELDS):
        raise TypeError("decode(jobset, federation): the arguments are swapped (the first is a "
                        "federation, the second a job-set)")
    for what, obj, fields in (("job-set", args[0], JOB_FIELDS),
                              ("federation", args[1], CLUSTER_FIELDS)):
        missing = [f for f in fields if not hasattr(obj, f)]
        if missing:
            raise TypeError(f"decode(jobset, federation): the {what} has no attribute "
                            f"{missing[0]!r} (it is a {type(obj).__name__}; a {what} needs "
                            f"{', '.join(fields)})")


def _fields(what, obj, fields) -> list:
    """The arrays ``fields`` of ``obj``, each checked to be 1-D."""
    out = []
    for f in fields:
        v = getattr(obj, f)
        if np.ndim(v) != 1:
            raise ValueError(f"decode(jobset, federation): the {what}'s {f} must be a 1-D array, "
                             f"got {type(v).__name__} of shape {np.shape(v)}")
        out.append(v)
    return out


def _decode_models(jobset, federation, order=None, blacklist=None, *, estimates: str = "exact",
                   backfill: str = "none", check: bool = True, model: str = "fluid",
                   rule: str = "fastest", **options) -> FederatedDecode:
    """:func:`decode`'s job-set and federation form."""
    for name in ("power", "power_cap", "cluster_caps", "estimate"):
        if name in options:
            raise TypeError(f"decode(jobset, federation, ...) reads {name} from the job-set or "
                            "the federation; pass the arrays to decode_arrays to set it")
    if options:
        raise TypeError(f"decode() got an unexpected keyword argument {next(iter(options))!r}")
    if estimates not in ("exact", "requested"):
        raise ValueError(f"estimates must be 'exact' or 'requested', got {estimates!r}")
    _options(model, backfill, rule)
    bundle = inputs(jobset, federation, rule=rule, check=check,
                    estimates=estimates if backfill == "easy" else "exact")
    J, K = bundle.n_jobs, bundle.n_clusters
    order = np.arange(J) if order is None else order
    blacklist = np.zeros((J, K)) if blacklist is None else blacklist
    return decode_inputs(bundle, order, blacklist, model=model, backfill=backfill)


def decode_arrays(release, tasks, runtime, sigma, bw, nodes, speed, power_busy, power_idle, link,
                  order, blacklist, model: str = "fluid", check: bool = True,
                  backfill: str = "none", rule: str = "fastest", power=None, power_cap=None,
                  cluster_caps=None, estimate=None) -> FederatedDecode:
    """Decode one chromosome, given as arrays, into a federated schedule (the array form of
    :func:`decode`, the one the kernels' callers use).

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
    _options(model, backfill, rule)
    bundle = array_inputs(release, tasks, runtime, sigma, bw, nodes, speed, power_busy,
                          power_idle, link, power=power, power_cap=power_cap,
                          cluster_caps=cluster_caps, rule=rule, estimate=estimate, check=check)
    return decode_inputs(bundle, order, blacklist, model=model, backfill=backfill)


def decode_inputs(bundle: Inputs, order, blacklist, *, model: str = "fluid",
                  backfill: str = "none") -> FederatedDecode:
    """Decode one chromosome of the input bundle ``bundle`` (:func:`inputs`).

    ``order`` (J,), ``blacklist`` (J, K), ``model`` and ``backfill`` and the
    result are as in :func:`decode_arrays`.
    """
    code, easy = model_code(model), choice_code("backfilling", backfill, BACKFILL)
    J, K = bundle.n_jobs, bundle.n_clusters
    if np.ndim(order) != 1:
        raise ValueError(f"order must be one permutation of shape ({J},), got shape "
                         f"{np.shape(order)}; decode populations with decode_batch")
    order = check_orders(np.asarray(order)[None, :], J)[0]
    if np.ndim(blacklist) != 2:
        raise ValueError(f"blacklist must have shape ({J}, {K}), got shape {np.shape(blacklist)}; "
                         "decode populations with decode_batch")
    blacklist = check_blacklists(np.asarray(blacklist)[None], J, K)[0]
    work = (cached_state(J, K, _INDEXED[easy]), new_out(J, K))
    f, i, _, _, out, _ = run_rows(bundle.jobs, bundle.plat, readonly(order)[None],
                                  readonly(blacklist)[None], code, easy, work=work)
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
                 starts: bool = False, allocations: bool = False,
                 finishes: bool = False) -> BatchDecode:
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
    finishes : bool
        Also return each job's finish time, shape (P, J).

    Other parameters are as in :func:`decode`.

    Returns
    -------
    BatchDecode
        ``makespan``, ``energy``, ``flowtime`` (float arrays, shape (P,)) and the
        counters ``n_relaxed``, ``n_coalloc`` (int arrays, shape (P,));
        ``start_orders`` (int64, (P, J)), ``starts``, ``alloc`` and ``finishes``
        when asked for, else None.
    """
    return BatchDecoder(release, tasks, runtime, sigma, bw, nodes, speed, power_busy,
                        power_idle, link, model=model, check=check, backfill=backfill, rule=rule,
                        power=power, power_cap=power_cap, cluster_caps=cluster_caps,
                        estimate=estimate)(orders, blacklists, start_orders=start_orders,
                                           starts=starts, allocations=allocations,
                                           finishes=finishes)


class BatchDecoder:
    """:func:`decode_batch` for one job-set and platform, set up once for many populations.

    The job and platform arrays are validated, the power inputs and cluster
    ranks computed and the read-only bundles built at construction; a call
    checks and decodes only its chromosomes. A caller that decodes the same
    jobs many times (a GA's generations) saves that set-up at every call,
    and a small batch (decoded in one thread) reuses the previous one's work
    arrays: an instance decodes one batch at a time (not from several threads
    at once). Parameters are as in :func:`decode_batch`.
    """

    def __init__(self, release, tasks, runtime, sigma, bw, nodes, speed, power_busy, power_idle,
                 link, model: str = "fluid", check: bool = True, backfill: str = "none",
                 rule: str = "fastest", power=None, power_cap=None, cluster_caps=None,
                 estimate=None):
        _options(model, backfill, rule)
        self._adopt(array_inputs(release, tasks, runtime, sigma, bw, nodes, speed, power_busy,
                                 power_idle, link, power=power, power_cap=power_cap,
                                 cluster_caps=cluster_caps, rule=rule, estimate=estimate,
                                 check=check), model, backfill)

    @classmethod
    def of(cls, bundle: Inputs, *, model: str = "fluid", backfill: str = "none") -> BatchDecoder:
        """The decoder of the input bundle ``bundle`` (:func:`inputs`); ``model`` and
        ``backfill`` as in :func:`decode_batch`."""
        self = cls.__new__(cls)
        self._adopt(bundle, model, backfill)
        return self

    def _adopt(self, bundle: Inputs, model: str, backfill: str) -> None:
        self._code = model_code(model)
        self._easy = choice_code("backfilling", backfill, BACKFILL)
        self.n_jobs, self.n_clusters = bundle.n_jobs, bundle.n_clusters
        self._jobs, self._plat = bundle
        self._work = None  # one thread's work arrays, made at the first one-thread call

    def __call__(self, orders, blacklists, start_orders: bool = False, starts: bool = False,
                 allocations: bool = False, finishes: bool = False) -> BatchDecode:
        """Decode ``orders`` (P, J) and ``blacklists`` (P, J, K); options and result as in
        :func:`decode_batch`."""
        J, K = self.n_jobs, self.n_clusters
        orders, blacklists = check_population(orders, blacklists, J, K)
        # Handing rows to threads costs more than decoding a small batch in this one.
        threads = get_num_threads() if orders.size >= THREAD_MIN_SLOTS else 1
        if threads == 1 and self._work is None:
            self._work = (new_state(J, K, _INDEXED[self._easy]), new_out(J, K))
        out_f, out_i, at, alloc, _, fin = run_rows(
            self._jobs, self._plat, orders, blacklists, self._code, self._easy,
            n_chunks=threads, starts=start_orders or starts, allocs=allocations,
            work=self._work if threads == 1 else None, finishes=finishes)
        by_start = by_job = None
        if start_orders:
            by_start = start_orders_of(orders, at)
        if starts:  # ``at`` is by order position
            by_job = np.empty_like(at)
            by_job[np.arange(len(at))[:, None], orders] = at
        return BatchDecode(out_f[:, 0].copy(), out_f[:, 1].copy(), out_f[:, 2].copy(),
                           out_i[:, 0].copy(), out_i[:, 1].copy(), by_start, by_job, alloc,
                           fin)


class Dispatch(NamedTuple):
    """What a dispatch returns (arrays indexed like the job arrays)."""

    start: np.ndarray
    finish: np.ndarray
    alloc: np.ndarray
    makespan: float
    energy: float
    flowtime: float
    n_coalloc: int


def dispatch(release, tasks, runtime, sigma, bw, nodes, speed, power_busy, power_idle, link,
             method: str = "prb", weight=None, tie=None, power=None, power_cap=None,
             cluster_caps=None, model: str = "fluid", rule: str = "fastest",
             check: bool = True, estimate=None) -> Dispatch:
    """Run an online dispatcher over a release-mode workload.

    Parameters
    ----------
    release, tasks, runtime, sigma, bw, nodes, speed, power_busy, power_idle, link
        As in :func:`decode`.
    method : {"prb", "easy", "saf"}
        PRB, EASY backfilling in arrival order, or smallest area first (``tasks
        x`` planned run time, ties by arrival; every queued job that fits starts).
    weight : array_like of float, shape (J,), optional
        PRB's queue weight of each job (``max_ewt / ewt``, > 0); default 1.
    tie : array_like of float, shape (J,), optional
        PRB's tie-break key (smaller first), default ``tasks * runtime``.
    power, power_cap, cluster_caps
        Power factors and caps, as in :func:`decode`.
    model : {"fluid", "at_start"}
    rule : {"fastest", "greenest", "consolidate"}
        Allocation rule (:data:`RULES`; the least-power
        allocation takes over where the rule's pick exceeds a budget).
    estimate : array_like of float, shape (J,), optional
        What EASY plans with (its reservation and backfill test; see
        :func:`decode`) and smallest area first ranks by; default the run
        times. PRB plans only through ``tie``.

    Returns
    -------
    Dispatch
    """
    choice_code("dispatcher", method, _DISPATCH_CODES)
    model_code(model)
    bundle = array_inputs(release, tasks, runtime, sigma, bw, nodes, speed, power_busy,
                          power_idle, link, power=power, power_cap=power_cap,
                          cluster_caps=cluster_caps, rule=rule, estimate=estimate, check=check)
    return dispatch_inputs(bundle, method, weight=weight, tie=tie, model=model)


def dispatch_inputs(bundle: Inputs, method: str = "prb", *, weight=None, tie=None,
                    model: str = "fluid") -> Dispatch:
    """Run an online dispatcher over the input bundle ``bundle`` (:func:`inputs`), released
    at its release times; ``method``, ``weight``, ``tie``, ``model`` and the result as in
    :func:`dispatch`."""
    mode = choice_code("dispatcher", method, _DISPATCH_CODES)
    code = model_code(model)
    jobs, plat = bundle
    J, K = bundle.n_jobs, bundle.n_clusters
    order, bl = fcfs_order(jobs), readonly(np.zeros((J, K)))
    w = np.ones(J) if weight is None else check_vector("weight", weight, J, np.float64, lo=0,
                                                       lo_strict=True)
    tie = jobs.tasks * jobs.runtime if tie is None else check_vector("tie", tie, J, np.float64)
    ties = np.empty((2, J), dtype=np.int64)
    ties[1] = np.lexsort((np.arange(J), tie))
    ties[0, ties[1]] = np.arange(J)
    queue = KERNEL_RULES[method].queue
    if queue is not None:
        order = readonly(queue(jobs))
    work = (cached_state(J, K, _INDEXED[mode]), new_out(J, K))
    f, i, _, _, out, _ = run_rows(jobs, plat, order[None], bl[None], code, mode, w, ties, work=work)
    return Dispatch(out.start, out.finish, out.alloc, float(f[0, 0]), float(f[0, 1]),
                    float(f[0, 2]), int(i[0, 1]))
