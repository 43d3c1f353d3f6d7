"""Shared Numba helpers of the decoders: slowdown model and cluster orderings.

Everything here works on plain arrays; nothing imports from ``moga``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

#: Relative tolerance under which finish times count as equal (docs/design.md §5).
FINISH_RTOL = 1e-9
#: An energy-saving shift is kept while the predicted slowdown grows by at most this relative
#: amount: mathematically equal slowdowns must not be refused or taken by rounding.
SHIFT_RTOL = 1e-12

#: The decorator of a kernel's helper that Python never calls: typed once by Numba, marked
#: ``alwaysinline`` for LLVM (``forceinline``), which inlines it into every kernel that
#: calls it, without Python or C wrappers of its own (compiling those is pure cost: a
#: helper taking the state bundles would get a wrapper unboxing every array of them, built
#: again in every helper's compile) and without reference counting (the helpers allocate
#: nothing). Calling such a helper from Python crashes the interpreter: tests go through
#: :func:`entry`. Numba compiles a helper once per argument signature, and a constant
#: argument is typed as a literal of its value, so a helper also called with a variable
#: there is passed ``np.int64(...)`` (and its defaults spelled out): one compiled copy.
helper = njit(cache=True, forceinline=True, no_cpython_wrapper=True, no_cfunc_wrapper=True,
              error_model="numpy", _nrt=False)


@njit(cache=True, error_model="numpy")
def stable_argsort(a):
    """The indices that sort the 1-D array ``a`` ascending, equal values in the order of
    their indices and NaNs last: ``np.argsort(a, kind="stable")``.

    A bottom-up merge sort: the same order as Numba's ``np.argsort(kind="mergesort")``,
    whose generic implementation takes seconds to compile in every kernel group that
    uses it; this one takes a fraction of that.
    """
    n = a.size
    idx = np.arange(n)
    tmp = np.empty(n, dtype=np.int64)
    width = 1
    while width < n:
        lo = 0
        while lo < n:
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            i, j, k = lo, mid, lo
            while i < mid and j < hi:
                x, y = a[idx[i]], a[idx[j]]
                # The right run's value goes first only when strictly smaller (a NaN is
                # larger than any number): equal values keep their order.
                if y < x or (x != x and y == y):
                    tmp[k] = idx[j]
                    j += 1
                else:
                    tmp[k] = idx[i]
                    i += 1
                k += 1
            while i < mid:
                tmp[k] = idx[i]
                i += 1
                k += 1
            while j < hi:
                tmp[k] = idx[j]
                j += 1
                k += 1
            lo = hi
        idx, tmp = tmp, idx
        width *= 2
    return idx


def exact_dot(a, b) -> float:
    """``sum(a * b)`` over 1-D arrays: each product rounded once, their sum correctly
    rounded (:func:`math.fsum`), so the same float on every machine.

    A BLAS dot product (``np.dot``, ``@``) sums in an order set by the CPU's kernel
    (OpenBLAS picks one per CPU), so a cap's budget or a schedule's energy computed
    with it differs in its last bits from one machine to another, and a comparison
    on it can move a schedule.
    """
    return math.fsum(np.multiply(np.asarray(a, dtype=np.float64),
                                 np.asarray(b, dtype=np.float64)).ravel().tolist())


def entry(fn):
    """A Python entry point of the kernel helper ``fn`` (a :data:`helper`, which has none).

    Keyword and default arguments are bound in Python and passed by position to a
    small compiled function that calls ``fn``; for tests and experiments.
    """
    import inspect

    sig = inspect.signature(fn.py_func)
    call = njit(lambda *args: fn(*args))

    def run(*args, **kwargs):
        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        return call(*bound.args)

    run.__doc__ = fn.__doc__
    run.__wrapped__ = fn
    run.py_func = fn.py_func
    return run


def cluster_ranks(speed, power_busy):
    """Cluster orderings used by the allocation rules.

    Parameters
    ----------
    speed, power_busy : array_like of float, shape (K,)

    Returns
    -------
    fastest : ndarray of int64, shape (K,)
        Fastest first; ties to lower ``power_busy / speed``, then lower index.
    slowest : ndarray of int64, shape (K,)
        Slowest first; ties to lower ``power_busy / speed``, then lower index.
    """
    speed = np.asarray(speed, dtype=np.float64)
    epw = np.asarray(power_busy, dtype=np.float64) / speed
    idx = np.arange(speed.size)
    fastest = np.lexsort((idx, epw, -speed)).astype(np.int64)
    slowest = np.lexsort((idx, epw, speed)).astype(np.int64)
    return fastest, slowest


@njit(cache=True, forceinline=True, error_model="numpy")
def link_traffic(bw, tasks, x):
    """Traffic ``L_jk`` (Mbit/s) that a job puts on a cluster link holding ``x`` of its tasks.

    The integer product ``x * (tasks - x)`` comes first, so that ``x`` and
    ``tasks - x`` tasks give the same float.
    """
    if tasks <= 1:
        return 0.0
    return bw * (x * (tasks - x)) / (tasks - 1.0)


@helper
def speed_term(sigma, inv_speed):
    """The speed term ``(1 - sigma) * SP`` of a job's slowdown, ``inv_speed`` being ``SP``,
    one over the least speed of its clusters (docs/design.md §3)."""
    return (1.0 - sigma) * inv_speed


@helper
def with_links(sp, sigma, sc):
    """A job's slowdown from its speed term ``sp`` (:func:`speed_term`) and the worst
    utilisation ``sc`` (at least 1) of its links: ``sp + sigma * SC``. Every slowdown the
    decoders compute goes through these two, in this order of operations."""
    return sp + sigma * sc


@njit(cache=True, forceinline=True, error_model="numpy")
def slowdown(sigma, bw, tasks, alloc, j, speed, load, link, add_self):
    """Slowdown ``SD_j`` of job ``j`` with allocation ``alloc[j]`` at link loads ``load``.

    Parameters
    ----------
    sigma, bw : float
        The job's communication share and per-task bandwidth.
    tasks : int
        The job's task count.
    alloc : int64[:, :]
        Tasks of each job in each cluster; row ``j`` is read.
    j : int
        The job's row.
    speed, link : float64[:]
        Cluster speeds and link bandwidths.
    load : float64[:]
        Sum of ``L_jk`` over running co-allocated jobs, per cluster.
    add_self : bool
        Add the job's own traffic to ``load`` (a job not yet counted in it).

    Returns
    -------
    float
        ``(1 - sigma) * SP + sigma * SC``.
    """
    K = alloc.shape[1]
    smin = np.inf
    used = 0
    # Selects rather than branches: which clusters a job uses follows no pattern a branch
    # predictor learns, and the unused clusters' terms (1.0, inf) change neither extreme.
    for k in range(K):
        on = alloc[j, k] > 0
        used += on
        smin = min(smin, speed[k] if on else np.inf)
    sc = 1.0
    if used >= 2:
        for k in range(K):
            xk = alloc[j, k]
            lk = load[k]
            if add_self:
                lk += link_traffic(bw, tasks, xk)
            sc = max(sc, lk / link[k] if xk > 0 else 1.0)
    return with_links(speed_term(sigma, 1.0 / smin), sigma, sc)


# ------------------------------------------------------------------ event heap
# A binary min-heap of (time, job) pairs in two parallel arrays; ties go to the
# lower job index so that the event order never depends on insertion history.
# Sifting moves a hole instead of swapping pairs.
@njit(cache=True, forceinline=True, error_model="numpy")
def heap_push(ht, hj, n, t, j):
    """Push ``(t, j)`` onto a heap of size ``n``; returns the new size."""
    one = np.uint64(1)
    i = np.uint64(n)  # unsigned positions: indexing needs no wraparound of negative indices
    while i > np.uint64(0):
        p = (i - one) >> one
        if ht[p] < t or (ht[p] == t and hj[p] < j):
            break
        ht[i] = ht[p]
        hj[i] = hj[p]
        i = p
    ht[i] = t
    hj[i] = j
    return n + 1


@njit(cache=True, forceinline=True, error_model="numpy")
def heap_pop(ht, hj, n):
    """Remove the top of a heap of size ``n`` (read ``ht[0], hj[0]`` first); returns the new size."""
    n -= 1
    one = np.uint64(1)
    m = np.uint64(n)  # unsigned positions: indexing needs no wraparound of negative indices
    t = ht[m]
    j = hj[m]
    i = np.uint64(0)
    while True:
        c = i + i + one
        if c >= m:
            break
        d = c + one
        if d < m and (ht[d] < ht[c] or (ht[d] == ht[c] and hj[d] < hj[c])):
            c = d
        if ht[c] < t or (ht[c] == t and hj[c] < j):
            ht[i] = ht[c]
            hj[i] = hj[c]
            i = c
        else:
            break
    ht[i] = t
    hj[i] = j
    return n
