"""The federated decoder: chromosome (order, blacklist) -> schedule, makespan, energy.

Implements DESIGN.md section 5. Jobs are placed strictly in the chromosome's
order (no backfilling). Job ``j`` gets at most
``A_jk = N_k - floor(beta_jk * N_k)`` nodes of cluster ``k`` (the blacklist is
void, and counted as relaxed, when these cannot hold the job), waits for
enough free allowed nodes, takes them from the fastest clusters first, then
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

Layout: private ``@njit`` kernels over plain arrays (``_decode``,
``_decode_batch``) and public wrappers (:func:`decode`, :func:`decode_batch`)
that validate and convert.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import get_num_threads, njit, prange

from ._kernels import FINISH_RTOL, cluster_ranks, heap_pop, heap_push, link_traffic, slowdown

__all__ = ["MODELS", "FederatedDecode", "BatchDecode", "decode", "decode_batch"]

#: Execution models by name, with the integer code the kernels use.
MODELS = {"fluid": 0, "at_start": 1}

# Scratch per job the core kernel needs: floats (fin, sd, heap times), ints (heap jobs,
# re-rated list, co-allocation flags); plus K floats and 2K ints per cluster.
_N_FSCRATCH = 3
_N_ISCRATCH = 3


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


class BatchDecode(NamedTuple):
    """What a population decode returns, one entry per individual."""

    makespan: np.ndarray
    energy: np.ndarray
    flowtime: np.ndarray
    n_relaxed: np.ndarray
    n_coalloc: np.ndarray


# --------------------------------------------------------------------- kernels
@njit(cache=True, inline="always", error_model="numpy")
def _refresh_rates(t, cl, ncl, fin, sd, sigma, bw, tasks, alloc, speed, load, link):
    """Fluid model: re-rate the running co-allocated jobs ``cl[:ncl]`` at time ``t``.

    Returns the earliest of their new finish times (inf when none runs).
    """
    earliest = np.inf
    for i in range(ncl):
        r = cl[i]
        new = slowdown(sigma[r], bw[r], tasks[r], alloc, r, speed, load, link, False)
        if new != sd[r]:
            fin[r] = t + (fin[r] - t) / sd[r] * new
            sd[r] = new
        earliest = min(earliest, fin[r])
    return earliest


@njit(cache=True, inline="always", error_model="numpy")
def _saturated(load, link):
    """True when some link carries more than its bandwidth (``U_k > 1``).

    While no link is saturated every ``SC`` is 1, so load changes leave all
    rates as they are and the fluid model need not re-rate anything.
    """
    for k in range(load.shape[0]):
        if load[k] > link[k]:
            return True
    return False


@njit(cache=True, inline="always", error_model="numpy")
def _earliest(cl, ncl, fin):
    """Earliest finish time among the jobs ``cl[:ncl]`` (inf when none)."""
    f = np.inf
    for i in range(ncl):
        f = min(f, fin[cl[i]])
    return f


@njit(cache=True, inline="always", error_model="numpy")
def _allocate_fastest(j, tasks, sigma, bw, allow, free, speed, load, link, rank_fast, rank_slow,
                      alloc):
    """Greedy fastest-first pick, then energy-saving shifts (DESIGN.md section 5, steps 3-4).

    Writes the allocation into ``alloc[j]``; ``allow`` holds the allowance per
    cluster. Shifts move one task at a time from the fastest used cluster
    faster than the slowest used speed ``s`` to the slowest cluster slower than
    it with speed >= ``s`` and a free allowed node, while the predicted
    slowdown does not grow. A move changes only the source's and the
    destination's link traffic (``s`` and so ``SP`` stay fixed), so each move
    is priced in O(1) against the fixed utilisation of the job's other clusters.
    """
    K = alloc.shape[1]
    T = tasks[j]
    remaining = T
    used = 0
    s = np.inf
    for i in range(K):
        k = rank_fast[i]
        take = min(min(free[k], allow[k]), remaining)
        alloc[j, k] = take
        remaining -= take
        if take > 0:
            used += 1
            s = min(s, speed[k])
    if used < 2:
        return
    sig = sigma[j]
    b = bw[j]
    sd_cur = slowdown(sig, b, T, alloc, j, speed, load, link, True)
    sp = 1.0 / s
    while True:
        src = -1
        for i in range(K):
            k = rank_fast[i]
            if alloc[j, k] > 0 and speed[k] > s:
                src = k
                break
        if src < 0:
            return
        dst = -1
        for i in range(K):
            k = rank_slow[i]
            if speed[k] < speed[src] and speed[k] >= s and alloc[j, k] < min(free[k], allow[k]):
                dst = k
                break
        if dst < 0:
            return
        cap_dst = min(free[dst], allow[dst])
        u_other = 1.0
        for k in range(K):
            if alloc[j, k] > 0 and k != src and k != dst:
                u_other = max(u_other, (load[k] + link_traffic(b, T, alloc[j, k])) / link[k])
        xs = alloc[j, src]
        xd = alloc[j, dst]
        while xs > 0 and xd < cap_dst:
            n_used = used - (1 if xs == 1 else 0) + (1 if xd == 0 else 0)
            sc = 1.0
            if n_used >= 2:
                sc = max(u_other, (load[dst] + link_traffic(b, T, xd + 1)) / link[dst])
                if xs > 1:
                    sc = max(sc, (load[src] + link_traffic(b, T, xs - 1)) / link[src])
            sd_new = (1.0 - sig) * sp + sig * sc
            if sd_new > sd_cur:
                break
            xs -= 1
            xd += 1
            used = n_used
            sd_cur = sd_new
        moved_all = xs == 0 or xd == cap_dst
        alloc[j, src] = xs
        alloc[j, dst] = xd
        if not moved_all:
            return


# The core kernel runs without Numba's reference counting (``_nrt=False``):
# it allocates nothing (scratch comes from the caller), and refcount traffic on
# its many array arguments otherwise costs more than the decoding itself.
@njit(cache=True, error_model="numpy", _nrt=False)
def _decode(release, tasks, runtime, sigma, bw, nodes, speed, pbusy, pidle, link,
            rank_fast, rank_slow, order, blacklist, model, start, finish, alloc, fscratch, iscratch):
    """Decode one chromosome; fills ``start``, ``finish``, ``alloc``.

    ``fscratch`` (float64, ``_N_FSCRATCH * J + K``) and ``iscratch`` (int64,
    ``_N_ISCRATCH * J + K``) are work space. Running jobs whose finish time is
    fixed sit in an event heap; in the fluid model the co-allocated ones, whose
    rates change, sit in a short list instead. Returns ``(makespan, energy,
    flowtime, n_relaxed, n_coalloc)``.
    """
    J = order.shape[0]
    K = nodes.shape[0]
    fluid = model == 0
    fin = fscratch[0:J]
    sd = fscratch[J:2 * J]
    ht = fscratch[2 * J:3 * J]
    load = fscratch[3 * J:3 * J + K]
    hj = iscratch[0:J]
    cl = iscratch[J:2 * J]
    coal = iscratch[2 * J:3 * J]
    free = iscratch[3 * J:3 * J + K]
    allow = iscratch[3 * J + K:3 * J + 2 * K]
    for k in range(K):
        free[k] = nodes[k]
        load[k] = 0.0
    for i in range(J):
        coal[i] = 0
        for k in range(K):
            alloc[i, k] = 0
    nh = 0
    ncl = 0
    n_coal_run = 0
    n_relaxed = 0
    n_coalloc = 0
    cl_min = np.inf  # earliest finish in the re-rated list (fluid model)
    saturated = False  # some link over capacity: rates of co-allocated jobs exceed SP-only
    t = 0.0

    pos = 0
    # Each pass places the next job in the order, or releases finished jobs and retries.
    while pos < J or nh + ncl > 0:
        if pos < J:
            j = order[pos]
            if release[j] > t:
                t = release[j]
            horizon = t + FINISH_RTOL * abs(t)
        else:
            j = -1
            horizon = np.inf
        # Release every job finishing by the horizon, one group of equal finishes at a time.
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
                finish[r] = f
                for k in range(K):
                    free[k] += alloc[r, k]
                if coal[r] != 0:
                    any_coal = True
                    n_coal_run -= 1
                    for k in range(K):
                        load[k] -= link_traffic(bw[r], tasks[r], alloc[r, k])
            if f > t:
                t = f
            if any_coal:
                if n_coal_run == 0:
                    for k in range(K):
                        load[k] = 0.0
                    cl_min = np.inf
                    saturated = False
                elif fluid:
                    now_sat = _saturated(load, link)
                    if saturated or now_sat:
                        cl_min = _refresh_rates(t, cl, ncl, fin, sd, sigma, bw, tasks, alloc,
                                                speed, load, link)
                    else:
                        cl_min = _earliest(cl, ncl, fin)
                    saturated = now_sat
        if j < 0:
            break

        tj = tasks[j]
        total = 0
        for k in range(K):
            allow[k] = nodes[k] - np.int64(np.floor(blacklist[j, k] * nodes[k]))
            total += allow[k]
        relaxed = total < tj
        avail = 0
        for k in range(K):
            if relaxed:
                allow[k] = nodes[k]
            avail += min(free[k], allow[k])
        if avail < tj:
            # Not enough allowed nodes free: jump to the next finish and retry.
            f = min(ht[0], cl_min) if nh > 0 else cl_min
            if f > t:
                t = f
            continue

        if relaxed:
            n_relaxed += 1
        _allocate_fastest(j, tasks, sigma, bw, allow, free, speed, load, link,
                          rank_fast, rank_slow, alloc)
        used = 0
        for k in range(K):
            free[k] -= alloc[j, k]
            if alloc[j, k] > 0:
                used += 1
        if used >= 2:
            coal[j] = 1
            n_coalloc += 1
            n_coal_run += 1
            for k in range(K):
                load[k] += link_traffic(bw[j], tj, alloc[j, k])
        sd[j] = slowdown(sigma[j], bw[j], tj, alloc, j, speed, load, link, False)
        start[j] = t
        fin[j] = t + runtime[j] * sd[j]
        if used >= 2 and fluid:
            now_sat = _saturated(load, link)
            if saturated or now_sat:
                cl_min = _refresh_rates(t, cl, ncl, fin, sd, sigma, bw, tasks, alloc, speed,
                                        load, link)
            saturated = now_sat
            cl_min = min(cl_min, fin[j])
            cl[ncl] = j
            ncl += 1
        else:
            nh = heap_push(ht, hj, nh, fin[j], j)
        pos += 1

    return _objectives(release, start, finish, alloc, nodes, pbusy, pidle) + (n_relaxed, n_coalloc)


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _objectives(release, start, finish, alloc, nodes, pbusy, pidle):
    """``(makespan, energy, flowtime)`` of a schedule (DESIGN.md section 5)."""
    J, K = alloc.shape
    if J == 0:
        return 0.0, 0.0, 0.0
    fmax = -np.inf
    rmin = np.inf
    flow = 0.0
    busy = 0.0
    for i in range(J):
        fmax = max(fmax, finish[i])
        rmin = min(rmin, release[i])
        flow += finish[i] - release[i]
        dur = finish[i] - start[i]
        for k in range(K):
            if alloc[i, k] > 0:
                busy += alloc[i, k] * (pbusy[k] - pidle[k]) * dur
    makespan = fmax - rmin
    idle_w = 0.0
    for k in range(K):
        idle_w += nodes[k] * pidle[k]
    return makespan, makespan * idle_w + busy, flow


@njit(cache=True, parallel=True, error_model="numpy")
def _decode_batch(release, tasks, runtime, sigma, bw, nodes, speed, pbusy, pidle, link,
                  rank_fast, rank_slow, orders, blacklists, model, n_chunks, out_f, out_i):
    """Decode a population in parallel; objectives into ``out_f`` (P, 3), counters into ``out_i`` (P, 2).

    The population is cut into ``n_chunks`` contiguous chunks (one per thread),
    and each chunk reuses one set of work arrays, which stay in cache from one
    decode to the next.
    """
    P, J = orders.shape
    K = nodes.shape[0]
    for c in prange(n_chunks):
        start = np.empty(J)
        finish = np.empty(J)
        alloc = np.empty((J, K), dtype=np.int64)
        fs = np.empty(_N_FSCRATCH * J + K)
        is_ = np.empty(_N_ISCRATCH * J + 2 * K, dtype=np.int64)
        for p in range(c * P // n_chunks, (c + 1) * P // n_chunks):
            m, e, fl, nr, nc = _decode(release, tasks, runtime, sigma, bw, nodes, speed, pbusy,
                                       pidle, link, rank_fast, rank_slow, orders[p],
                                       blacklists[p], model, start, finish, alloc, fs, is_)
            out_f[p, 0] = m
            out_f[p, 1] = e
            out_f[p, 2] = fl
            out_i[p, 0] = nr
            out_i[p, 1] = nc


# -------------------------------------------------------------------- wrappers
def _model_code(model: str) -> int:
    try:
        return MODELS[model]
    except (KeyError, TypeError):
        raise ValueError(f"unknown execution model {model!r}; choose one of {list(MODELS)}") from None


def _check_vector(name, a, n, dtype, *, lo=None, lo_strict=False, hi=None):
    arr = np.asarray(a)
    if arr.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},), got {arr.shape}")
    if dtype is np.int64:
        if arr.dtype.kind == "f":
            bad = ~np.isfinite(arr) | (arr != np.round(arr))
            if bad.any():
                raise ValueError(f"{name}[{int(np.flatnonzero(bad)[0])}] is not an integer")
        elif arr.dtype.kind not in "iub":
            raise ValueError(f"{name} must be integer, got dtype {arr.dtype}")
    elif arr.dtype.kind not in "iuf":
        raise ValueError(f"{name} must be numeric, got dtype {arr.dtype}")
    out = np.ascontiguousarray(arr, dtype=dtype)
    if dtype is np.float64 and not np.all(np.isfinite(out)):
        raise ValueError(f"{name}[{int(np.flatnonzero(~np.isfinite(out))[0])}] is not finite")
    if lo is not None:
        bad = out <= lo if lo_strict else out < lo
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            op = ">" if lo_strict else ">="
            raise ValueError(f"{name}[{i}] must be {op} {lo}, got {out[i]}")
    if hi is not None and np.any(out > hi):
        i = int(np.flatnonzero(out > hi)[0])
        raise ValueError(f"{name}[{i}] must be <= {hi}, got {out[i]}")
    return out


def _prepare(release, tasks, runtime, sigma, bw, nodes, speed, power_busy, power_idle, link,
             check=True):
    """Validate and convert the job and platform arrays.

    With ``check=False`` (arrays from an already validated ``JobSet`` and
    ``Federation``) only the dtype conversion and the width check run.
    """
    if not check:
        f64, i64 = np.float64, np.int64
        out = (np.ascontiguousarray(release, f64), np.ascontiguousarray(tasks, i64),
               np.ascontiguousarray(runtime, f64), np.ascontiguousarray(sigma, f64),
               np.ascontiguousarray(bw, f64), np.ascontiguousarray(nodes, i64),
               np.ascontiguousarray(speed, f64), np.ascontiguousarray(power_busy, f64),
               np.ascontiguousarray(power_idle, f64), np.ascontiguousarray(link, f64))
        _check_width(out[1], out[5])
        return out
    nodes_a = np.asarray(nodes)
    K = nodes_a.shape[0] if nodes_a.ndim == 1 else -1
    if K <= 0:
        raise ValueError(f"nodes must be a non-empty 1-D array, got shape {nodes_a.shape}")
    nodes = _check_vector("nodes", nodes, K, np.int64, lo=0, lo_strict=True)
    speed = _check_vector("speed", speed, K, np.float64, lo=0, lo_strict=True)
    power_idle = _check_vector("power_idle", power_idle, K, np.float64, lo=0, lo_strict=True)
    power_busy = _check_vector("power_busy", power_busy, K, np.float64, lo=0, lo_strict=True)
    if np.any(power_busy < power_idle):
        k = int(np.flatnonzero(power_busy < power_idle)[0])
        raise ValueError(f"cluster {k}: power_busy ({power_busy[k]}) < power_idle ({power_idle[k]})")
    link = _check_vector("link", link, K, np.float64, lo=0, lo_strict=True)
    rel = np.asarray(release)
    if rel.ndim != 1:
        raise ValueError(f"release must be 1-D, got shape {rel.shape}")
    J = rel.shape[0]
    release = _check_vector("release", release, J, np.float64, lo=0)
    tasks = _check_vector("tasks", tasks, J, np.int64, lo=1)
    runtime = _check_vector("runtime", runtime, J, np.float64, lo=0, lo_strict=True)
    sigma = _check_vector("sigma", sigma, J, np.float64, lo=0, hi=1)
    bw = _check_vector("bw", bw, J, np.float64, lo=0)
    _check_width(tasks, nodes)
    return (release, tasks, runtime, sigma, bw, nodes, speed, power_busy, power_idle, link)


def _readonly(*arrays):
    """Read-only views, so that every caller hits the same compiled kernel signature."""
    out = []
    for a in arrays:
        v = a.view()
        v.flags.writeable = False
        out.append(v)
    return out


def _check_width(tasks, nodes):
    total = int(nodes.sum())
    if tasks.size and tasks.max() > total:
        i = int(np.flatnonzero(tasks > total)[0])
        raise ValueError(
            f"job {i} needs {tasks[i]} tasks but the federation has only {total} nodes; "
            "drop or clip wide jobs when extracting the job-set"
        )


def _check_orders(orders, J):
    orders = np.asarray(orders)
    if orders.ndim != 2 or orders.shape[1] != J:
        raise ValueError(f"order must have length {J} (one entry per job), got shape {orders.shape[1:]}")
    if orders.dtype.kind == "f":
        if not np.all(orders == np.round(orders)):
            raise ValueError("order must hold integer job positions")
    elif orders.dtype.kind not in "iu":
        raise ValueError(f"order must be integer, got dtype {orders.dtype}")
    orders = np.ascontiguousarray(orders, dtype=np.int64)
    in_range = (orders >= 0) & (orders < J)
    seen = np.zeros(orders.shape, dtype=bool)
    rows = np.broadcast_to(np.arange(orders.shape[0])[:, None], orders.shape)
    seen[rows[in_range], orders[in_range]] = True
    ok = seen.all(axis=1)
    if not ok.all():
        p = int(np.flatnonzero(~ok)[0])
        raise ValueError(
            f"order{'' if orders.shape[0] == 1 else f' #{p}'} is not a permutation of range({J})"
        )
    return orders


def _check_blacklists(blacklists, J, K):
    b = np.asarray(blacklists)
    if b.shape[1:] != (J, K):
        raise ValueError(f"blacklist must have shape ({J}, {K}), got {b.shape[1:]}")
    if b.dtype.kind not in "iuf":
        raise ValueError(f"blacklist must be numeric, got dtype {b.dtype}")
    b = np.ascontiguousarray(b, dtype=np.float64)
    bad = ~((b >= 0.0) & (b <= 1.0))
    if bad.any():
        idx = np.unravel_index(int(np.flatnonzero(bad)[0]), b.shape)
        raise ValueError(f"blacklist entry (job {idx[-2]}, cluster {idx[-1]}) = {b[idx]} is not in [0, 1]")
    return b


def decode(release, tasks, runtime, sigma, bw, nodes, speed, power_busy, power_idle, link,
           order, blacklist, model: str = "fluid", check: bool = True) -> FederatedDecode:
    """Decode one chromosome into a federated schedule.

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
        A permutation of ``range(J)``: the placement order.
    blacklist : array_like of float, shape (J, K)
        Fraction of each cluster that each job may not use, in [0, 1].
    model : {"fluid", "at_start"}
        Execution model.
    check : bool
        Validate the job and platform arrays (default). ``False`` skips all
        but the width check, for arrays taken from a validated ``JobSet`` and
        ``Federation``; the chromosome is always checked.

    Returns
    -------
    FederatedDecode
        Per-job ``start``, ``finish`` and ``alloc`` (J, K); ``makespan`` (s),
        ``energy`` (J), ``flowtime`` (s), ``n_relaxed`` (jobs whose blacklist was
        void) and ``n_coalloc`` (jobs spread over two or more clusters).
    """
    code = _model_code(model)
    arrs = _prepare(release, tasks, runtime, sigma, bw, nodes, speed, power_busy, power_idle, link,
                    check)
    J, K = arrs[0].shape[0], arrs[5].shape[0]
    order = _check_orders(np.asarray(order)[None, :] if np.ndim(order) == 1 else order, J)[0]
    blacklist = _check_blacklists(np.asarray(blacklist)[None], J, K)[0]
    rf, rs = cluster_ranks(arrs[6], arrs[7])
    arrs = _readonly(*arrs, rf, rs, order, blacklist)
    start = np.empty(J)
    finish = np.empty(J)
    alloc = np.empty((J, K), dtype=np.int64)
    fs = np.empty(_N_FSCRATCH * J + K)
    is_ = np.empty(_N_ISCRATCH * J + 2 * K, dtype=np.int64)
    m, e, fl, nr, nc = _decode(*arrs, code, start, finish, alloc, fs, is_)
    return FederatedDecode(start, finish, alloc, float(m), float(e), float(fl), int(nr), int(nc))


def decode_batch(release, tasks, runtime, sigma, bw, nodes, speed, power_busy, power_idle, link,
                 orders, blacklists, model: str = "fluid", check: bool = True) -> BatchDecode:
    """Decode a population of chromosomes in parallel (Numba threads).

    Parameters
    ----------
    orders : array_like of int, shape (P, J)
        One permutation of ``range(J)`` per individual.
    blacklists : array_like of float, shape (P, J, K)
        One blacklist per individual, entries in [0, 1].

    Other parameters are as in :func:`decode`.

    Returns
    -------
    BatchDecode
        ``makespan``, ``energy``, ``flowtime`` (float arrays, shape (P,)) and the
        counters ``n_relaxed``, ``n_coalloc`` (int arrays, shape (P,)).
    """
    code = _model_code(model)
    arrs = _prepare(release, tasks, runtime, sigma, bw, nodes, speed, power_busy, power_idle, link,
                    check)
    J, K = arrs[0].shape[0], arrs[5].shape[0]
    orders = _check_orders(orders, J)
    if np.ndim(blacklists) != 3 or np.shape(blacklists)[0] != orders.shape[0]:
        raise ValueError(
            f"blacklists must have shape ({orders.shape[0]}, {J}, {K}), got {np.shape(blacklists)}"
        )
    blacklists = _check_blacklists(blacklists, J, K)
    rf, rs = cluster_ranks(arrs[6], arrs[7])
    arrs = _readonly(*arrs, rf, rs, orders, blacklists)
    P = orders.shape[0]
    out_f = np.empty((P, 3))
    out_i = np.empty((P, 2), dtype=np.int64)
    n_chunks = max(1, min(P, get_num_threads()))
    _decode_batch(*arrs, code, n_chunks, out_f, out_i)
    return BatchDecode(out_f[:, 0].copy(), out_f[:, 1].copy(), out_f[:, 2].copy(),
                       out_i[:, 0].copy(), out_i[:, 1].copy())
