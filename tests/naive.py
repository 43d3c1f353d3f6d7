"""Slow, plain-Python reference implementations, written from DESIGN.md.

They favour the obvious over the fast: link loads are recomputed from scratch
whenever they are needed, every running job is re-rated at every event of the
fluid model, and every shift is priced by a full slowdown evaluation. The
Numba kernels must agree with them on random inputs.
"""

from __future__ import annotations

import math

RTOL = 1e-9  # finish times within this relative distance finish together (DESIGN.md 5)


def _traffic(bw, tasks, x):
    return bw * x * (tasks - x) / (tasks - 1.0) if tasks > 1 else 0.0


def _cluster_key_fast(k, speed, pbusy):
    return (-speed[k], pbusy[k] / speed[k], k)


def _cluster_key_slow(k, speed, pbusy):
    return (speed[k], pbusy[k] / speed[k], k)


def _predicted(j, x, base, sd_of, coallocated, bw, tasks):
    """SD of job j with allocation x at the loads ``base`` of the others plus its own traffic."""
    own = coallocated(x)
    load = [base[k] + (_traffic(bw[j], tasks[j], x[k]) if own and x[k] > 0 else 0.0)
            for k in range(len(x))]
    return sd_of(j, x, load)


def naive_decode(release, tasks, runtime, sigma, bw, nodes, speed, pbusy, pidle, link,
                 order, blacklist, model="fluid"):
    """Reference federated decoder (DESIGN.md section 5).

    Returns a dict with ``start``, ``finish``, ``alloc`` (lists) and
    ``makespan``, ``energy``, ``flowtime``, ``n_relaxed``, ``n_coalloc``.
    """
    assert model in ("fluid", "at_start")
    J, K = len(release), len(nodes)
    release = [float(v) for v in release]
    tasks = [int(v) for v in tasks]
    runtime = [float(v) for v in runtime]
    sigma = [float(v) for v in sigma]
    bw = [float(v) for v in bw]
    nodes = [int(v) for v in nodes]
    speed = [float(v) for v in speed]
    pbusy = [float(v) for v in pbusy]
    pidle = [float(v) for v in pidle]
    link = [float(v) for v in link]
    fast_first = sorted(range(K), key=lambda k: _cluster_key_fast(k, speed, pbusy))
    slow_first = sorted(range(K), key=lambda k: _cluster_key_slow(k, speed, pbusy))

    start = [0.0] * J
    finish = [0.0] * J
    alloc = [[0] * K for _ in range(J)]
    running = {}  # job -> {"fin": projected finish, "sd": current slowdown}
    free = list(nodes)
    n_relaxed = 0
    n_coalloc = 0

    def coallocated(x):
        return sum(1 for v in x if v > 0) >= 2

    def loads(extra_job=None, extra_x=None):
        load = [0.0] * K
        jobs = [(r, alloc[r]) for r in running]
        if extra_job is not None:
            jobs.append((extra_job, extra_x))
        for r, x in jobs:
            if coallocated(x):
                for k in range(K):
                    if x[k] > 0:
                        load[k] += _traffic(bw[r], tasks[r], x[k])
        return load

    def sd_of(j, x, load):
        sp = 1.0 / min(speed[k] for k in range(K) if x[k] > 0)
        sc = 1.0
        if coallocated(x):
            sc = max([1.0] + [load[k] / link[k] for k in range(K) if x[k] > 0])
        return (1.0 - sigma[j]) * sp + sigma[j] * sc

    def rerate(t):
        load = loads()
        for r, st in running.items():
            new = sd_of(r, alloc[r], load)
            if new != st["sd"]:
                work_left = (st["fin"] - t) / st["sd"]
                st["fin"] = t + work_left * new
                st["sd"] = new

    def release_until(t, horizon):
        while running:
            f = min(st["fin"] for st in running.values())
            if f > horizon:
                break
            group = [r for r, st in running.items() if st["fin"] <= f + RTOL * abs(f)]
            for r in group:
                finish[r] = f
                for k in range(K):
                    free[k] += alloc[r][k]
                del running[r]
            t = max(t, f)
            if model == "fluid":
                rerate(t)
        return t

    t = 0.0
    for j in order:
        j = int(j)
        t = max(t, release[j])
        allow = [nodes[k] - math.floor(blacklist[j][k] * nodes[k]) for k in range(K)]
        relaxed = sum(allow) < tasks[j]
        if relaxed:
            allow = list(nodes)
        while True:
            t = release_until(t, t + RTOL * abs(t))
            if sum(min(free[k], allow[k]) for k in range(K)) >= tasks[j]:
                break
            t = max(t, min(st["fin"] for st in running.values()))
        n_relaxed += relaxed
        cap = [min(free[k], allow[k]) for k in range(K)]
        x = [0] * K
        need = tasks[j]
        for k in fast_first:
            x[k] = min(cap[k], need)
            need -= x[k]
        base = loads()
        current = _predicted(j, x, base, sd_of, coallocated, bw, tasks)
        while True:
            s = min(speed[k] for k in range(K) if x[k] > 0)
            sources = [k for k in fast_first if x[k] > 0 and speed[k] > s]
            if not sources:
                break
            src = sources[0]
            dests = [k for k in slow_first if s <= speed[k] < speed[src] and x[k] < cap[k]]
            if not dests:
                break
            dst = dests[0]
            trial = list(x)
            trial[src] -= 1
            trial[dst] += 1
            sd_new = _predicted(j, trial, base, sd_of, coallocated, bw, tasks)
            if sd_new > current:
                break
            x, current = trial, sd_new
        alloc[j] = x
        for k in range(K):
            free[k] -= x[k]
        if coallocated(x):
            n_coalloc += 1
        start[j] = t
        running[j] = {"fin": None, "sd": None}
        sd = sd_of(j, x, loads())
        running[j].update(fin=t + runtime[j] * sd, sd=sd)
        if model == "fluid" and coallocated(x):
            rerate(t)
    release_until(t, math.inf)

    makespan = max(finish) - min(release) if J else 0.0
    energy = makespan * sum(nodes[k] * pidle[k] for k in range(K))
    for j in range(J):
        for k in range(K):
            energy += alloc[j][k] * (pbusy[k] - pidle[k]) * (finish[j] - start[j])
    flowtime = sum(finish[j] - release[j] for j in range(J))
    return {"start": start, "finish": finish, "alloc": alloc, "makespan": makespan,
            "energy": energy, "flowtime": flowtime, "n_relaxed": n_relaxed,
            "n_coalloc": n_coalloc}


def naive_order_crossover(p1, p2, a, b):
    """Order crossover (OX1) of two permutations, one child.

    The child keeps ``p1[a:b]`` in place; the other positions, taken from
    ``b`` on and wrapping around, receive the genes of ``p2`` not in that
    segment, in the order they appear in ``p2`` from position ``b`` on.
    """
    J = len(p1)
    child = [None] * J
    child[a:b] = p1[a:b]
    segment = set(p1[a:b])
    genes = [p2[(b + s) % J] for s in range(J) if p2[(b + s) % J] not in segment]
    positions = [(b + s) % J for s in range(J) if not a <= (b + s) % J < b]
    for pos, g in zip(positions, genes, strict=True):
        child[pos] = g
    return child
