"""The value decoder: chromosome (order, blacklist) -> value earned (docs/design.md §6).

Each job carries a value function: ``v_start`` if it completes by ``soft``,
then a linear decay to ``v_final`` at ``hard``, then 0. A job runs inside one
cluster (no co-allocation) for ``runtime / speed_k``. The whole future is
known, so jobs are placed in the chromosome's order, each on the cluster and
at the earliest start at or after its release, holes of the availability
profile included, that earn it the most value (ties: the earlier completion,
then the lower cluster index). A job that can earn nothing is not run.

The blacklist gates clusters: job ``j`` may run on cluster ``k`` only if its
allowance ``N_k - floor(beta_jk * N_k)`` holds its tasks; when no cluster
does, the blacklist is void (counted as relaxed) and every cluster large
enough is allowed.

Availability profiles are step functions of free nodes per cluster, kept as
breakpoint arrays; a profile of free-node counts is enough, since a count
that never exceeds a cluster's nodes always has a node-by-node assignment
(:meth:`moga.schedule.Schedule.node_assignment` builds one the same way).
"""

from __future__ import annotations

from collections import namedtuple
from typing import NamedTuple

import numpy as np
from numba import get_num_threads, njit, prange

from ._profiles import (
    ProfilePlatform,
    Profiles,
    ValueJobs,
    earliest_fit,
    init_profiles,
    job_value,
    new_profiles,
    occupy,
)
from ._validate import (
    check_blacklists,
    check_clusters,
    check_orders,
    check_population,
    check_vector,
    readonly,
)

__all__ = ["ValueDecode", "decode_value", "decode_value_batch", "value_at"]


#: What the value decoder writes per job: ``start``, ``finish`` (NaN: not run),
#: ``cluster`` (-1: not run) and ``value`` earned.
ValueOut = namedtuple("ValueOut", "start finish cluster value")


class ValueDecode(NamedTuple):
    """What one value decode returns (arrays indexed like the job arrays)."""

    start: np.ndarray
    finish: np.ndarray
    cluster: np.ndarray
    value: np.ndarray
    total_value: float
    n_run: int
    n_relaxed: int


def value_at(finish, v_start, v_final, soft, hard):
    """Vectorised value function: the value of completing at ``finish`` (NaN earns 0)."""
    finish = np.asarray(finish, dtype=float)
    v_start, v_final = np.asarray(v_start, dtype=float), np.asarray(v_final, dtype=float)
    soft, hard = np.asarray(soft, dtype=float), np.asarray(hard, dtype=float)
    span = np.where(hard > soft, hard - soft, 1.0)
    decay = v_start + (v_final - v_start) * (finish - soft) / span
    out = np.where(finish <= soft, v_start, np.where(finish <= hard, decay, 0.0))
    return np.where(np.isnan(finish), 0.0, out)


@njit(cache=True, error_model="numpy", _nrt=False)
def _decode_value(jobs, plat, order, blacklist, out, prof):
    """Place every job in order; fills ``out`` (:data:`ValueOut`).

    ``prof`` (:data:`decoders._profiles.Profiles`, (K, 2J + 1)) is work space.
    Returns ``(total value, jobs run, relaxed blacklists)``.
    """
    release, tasks, runtime = jobs.release, jobs.tasks, jobs.runtime
    v_start, v_final, soft, hard = jobs.v_start, jobs.v_final, jobs.soft, jobs.hard
    nodes, speed = plat.nodes, plat.speed
    start, finish, cluster, value = out.start, out.finish, out.cluster, out.value
    times, free, m = prof.times, prof.free, prof.m
    J = order.shape[0]
    K = nodes.shape[0]
    init_profiles(times, free, m, nodes)
    total = 0.0
    n_run = 0
    n_relaxed = 0
    for p in range(J):
        j = order[p]
        start[j] = np.nan
        finish[j] = np.nan
        cluster[j] = -1
        value[j] = 0.0
        allowed_any = False
        for k in range(K):
            if nodes[k] - np.int64(np.floor(blacklist[j, k] * nodes[k])) >= tasks[j]:
                allowed_any = True
        if not allowed_any:
            n_relaxed += 1
        best_k = -1
        best_v = 0.0
        best_s = 0.0
        best_f = np.inf
        for k in range(K):
            cap = nodes[k] - np.int64(np.floor(blacklist[j, k] * nodes[k])) if allowed_any \
                else nodes[k]
            if cap < tasks[j]:
                continue
            dur = runtime[j] / speed[k]
            s = earliest_fit(times[k], free[k], m[k], release[j], tasks[j], dur)
            f = s + dur
            v = job_value(f, v_start[j], v_final[j], soft[j], hard[j])
            if v > best_v or (v == best_v and v > 0.0 and f < best_f):
                best_k, best_v, best_s, best_f = k, v, s, f
        if best_k < 0:
            continue
        k = best_k
        m[k] = occupy(times[k], free[k], m[k], best_s, best_f, tasks[j])
        start[j] = best_s
        finish[j] = best_f
        cluster[j] = k
        value[j] = best_v
        total += best_v
        n_run += 1
    return total, n_run, n_relaxed


@njit(cache=True, parallel=True, error_model="numpy")
def _decode_value_batch(jobs, plat, orders, blacklists, n_chunks, out_v, out_i):
    P, J = orders.shape
    K = plat.nodes.shape[0]
    for c in prange(n_chunks):
        out = ValueOut(np.empty(J), np.empty(J), np.empty(J, dtype=np.int64), np.empty(J))
        prof = Profiles(np.empty((K, 2 * J + 1)), np.empty((K, 2 * J + 1), dtype=np.int64),
                        np.empty(K, dtype=np.int64))
        for p in range(c * P // n_chunks, (c + 1) * P // n_chunks):
            tot, nr, nx = _decode_value(jobs, plat, orders[p], blacklists[p], out, prof)
            out_v[p] = tot
            out_i[p, 0] = nr
            out_i[p, 1] = nx


def value_bundles(release, tasks, runtime, v_start, v_final, soft, hard, nodes, speed):
    """Validated, read-only ``(jobs, plat)`` (:data:`~decoders._profiles.ValueJobs`,
    :data:`~decoders._profiles.ProfilePlatform`) of a value decode or simulation."""
    nodes, speed = check_clusters(nodes, speed)
    J = np.shape(release)[0] if np.ndim(release) == 1 else -1
    if J < 0:
        raise ValueError(f"release must be 1-D, got shape {np.shape(release)}")
    release = check_vector("release", release, J, np.float64, lo=0)
    tasks = check_vector("tasks", tasks, J, np.int64, lo=1)
    runtime = check_vector("runtime", runtime, J, np.float64, lo=0, lo_strict=True)
    v_start = check_vector("v_start", v_start, J, np.float64, lo=0)
    v_final = check_vector("v_final", v_final, J, np.float64, lo=0)
    soft = check_vector("soft", soft, J, np.float64)
    hard = check_vector("hard", hard, J, np.float64)
    if np.any(v_final > v_start):
        i = int(np.flatnonzero(v_final > v_start)[0])
        raise ValueError(f"job {i}: v_final ({v_final[i]}) exceeds v_start ({v_start[i]})")
    if np.any(hard < soft):
        i = int(np.flatnonzero(hard < soft)[0])
        raise ValueError(f"job {i}: hard deadline ({hard[i]}) before soft deadline ({soft[i]})")
    if np.any(tasks > nodes.max()):
        i = int(np.flatnonzero(tasks > nodes.max())[0])
        raise ValueError(f"job {i} needs {tasks[i]} nodes but the largest cluster has "
                         f"{nodes.max()}; jobs may not span clusters here")
    ro = readonly
    jobs = ValueJobs(release=ro(release), tasks=ro(tasks), runtime=ro(runtime),
                     v_start=ro(v_start), v_final=ro(v_final), soft=ro(soft), hard=ro(hard))
    return jobs, ProfilePlatform(nodes=ro(nodes), speed=ro(speed))


def decode_value(release, tasks, runtime, v_start, v_final, soft, hard, nodes, speed, order,
                 blacklist) -> ValueDecode:
    """Decode one chromosome with the value decoder.

    Parameters
    ----------
    release, runtime : array_like of float, shape (J,)
        Arrival (s, >= 0) and base run time on a speed-1.0 node (s, > 0).
    tasks : array_like of int, shape (J,)
        Nodes a job needs, inside one cluster.
    v_start, v_final, soft, hard : array_like of float, shape (J,)
        Value functions: ``0 <= v_final <= v_start``, ``soft <= hard`` (absolute times, s).
    nodes, speed : array_like, shape (K,)
    order : array_like of int, shape (J,)
        A permutation of ``range(J)``.
    blacklist : array_like of float, shape (J, K)
        In [0, 1].

    Returns
    -------
    ValueDecode
        ``start``, ``finish`` (NaN for jobs not run), ``cluster`` (-1), ``value``
        per job, ``total_value``, ``n_run`` and ``n_relaxed``.
    """
    jobs, plat = value_bundles(release, tasks, runtime, v_start, v_final, soft, hard, nodes, speed)
    J, K = jobs.release.shape[0], plat.nodes.shape[0]
    if np.ndim(order) != 1:
        raise ValueError(f"order must be one permutation of shape ({J},), got shape "
                         f"{np.shape(order)}; decode populations with decode_value_batch")
    order = check_orders(np.asarray(order)[None, :], J)[0]
    blacklist = check_blacklists(np.asarray(blacklist)[None], J, K)[0]
    order, blacklist = readonly(order), readonly(blacklist)
    out = ValueOut(start=np.empty(J), finish=np.empty(J), cluster=np.empty(J, dtype=np.int64),
                   value=np.empty(J))
    tot, nr, nx = _decode_value(jobs, plat, order, blacklist, out, new_profiles(K, 2 * J + 1))
    return ValueDecode(out.start, out.finish, out.cluster, out.value, float(tot), int(nr),
                       int(nx))


def decode_value_batch(release, tasks, runtime, v_start, v_final, soft, hard, nodes, speed,
                       orders, blacklists):
    """Decode a population in parallel; returns ``(total_value (P,), n_run (P,), n_relaxed (P,))``."""
    jobs, plat = value_bundles(release, tasks, runtime, v_start, v_final, soft, hard, nodes, speed)
    J, K = jobs.release.shape[0], plat.nodes.shape[0]
    orders, blacklists = check_population(orders, blacklists, J, K)
    P = orders.shape[0]
    out_v = np.empty(P)
    out_i = np.empty((P, 2), dtype=np.int64)
    _decode_value_batch(jobs, plat, orders, blacklists, max(1, min(P, get_num_threads())), out_v,
                        out_i)
    return out_v, out_i[:, 0].copy(), out_i[:, 1].copy()
