"""The exact reference: a time-indexed integer program over small instances (docs/design.md §12).

The seed's model, on integer time slots: job j runs in ``p_j`` slots from
its release on; a real-time job runs in one contiguous stretch, a batch job
in at most two (it may be preempted once, and resumes where it stopped:
checkpoints are free here, so the optimum bounds every checkpointing scheme
from below); the running jobs' nodes never exceed the machine's. Objective:
the smallest mean batch-job slowdown ``(C_j - r_j) / p_j`` subject to the
real-time jobs' mean slowdown being at most a threshold; the smallest
threshold in [1.1, 2.0] for which a schedule exists is found by binary
search. Solved with OR-Tools CP-SAT (an integer program: the fractions are
scaled to integers exactly), imported when first used.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from functools import reduce

import numpy as np

__all__ = ["MilpSolution", "solve_milp", "min_threshold"]


@dataclass(frozen=True)
class MilpSolution:
    """``status`` (CP-SAT's name), ``bj_slowdown`` and ``rtj_slowdown`` (means at the
    optimum; NaN without a solution), ``slots`` (J lists of the slots each job runs in),
    ``completion`` (per job), ``seconds``."""

    status: str
    bj_slowdown: float
    rtj_slowdown: float
    slots: list
    completion: np.ndarray
    seconds: float


def _check(release, p, nodes, rtj, capacity):
    release = np.asarray(release, dtype=np.int64)
    p = np.asarray(p, dtype=np.int64)
    nodes = np.asarray(nodes, dtype=np.int64)
    rtj = np.asarray(rtj, dtype=bool)
    if not (release.shape == p.shape == nodes.shape == rtj.shape) or release.ndim != 1:
        raise ValueError("release, p, nodes and rtj must be 1-D arrays of one length")
    if np.any(p < 1) or np.any(release < 0) or np.any(nodes < 1) or np.any(nodes > capacity):
        raise ValueError("need p >= 1 slots, release >= 0 and 1 <= nodes <= capacity")
    return release, p, nodes, rtj


def solve_milp(release, p, nodes, rtj, capacity: int, threshold: float | None = None,
               time_limit: float = 60.0, seed: int = 0) -> MilpSolution:
    """Optimal schedule of a small instance (integer slots).

    Parameters
    ----------
    release, p, nodes : array_like of int, shape (J,)
        Release slot, processing slots (>= 1) and nodes of each job.
    rtj : array_like of bool, shape (J,)
        Real-time jobs (never preempted).
    capacity : int
        Nodes of the machine.
    threshold : float, optional
        Bound on the real-time jobs' mean slowdown; None: no bound.
    time_limit : float
        CP-SAT's wall-clock limit, s (``status`` says whether the optimum was proven).
    seed : int
    """
    from ortools.sat.python import cp_model

    release, p, nodes, rtj = _check(release, p, nodes, rtj, capacity)
    J = p.shape[0]
    H = int(release.max() + p.sum()) if J else 0
    L = reduce(math.lcm, (int(v) for v in p), 1)  # exact integer weights L / p_j
    m = cp_model.CpModel()
    x = [[m.NewBoolVar(f"x{j}_{t}") if t >= release[j] else None for t in range(H)]
         for j in range(J)]
    comp = []
    for j in range(J):
        xs = [v for v in x[j] if v is not None]
        m.Add(sum(xs) == int(p[j]))
        starts = []
        prev = None
        for t in range(int(release[j]), H):
            s = m.NewBoolVar(f"s{j}_{t}")  # a stretch of j starts at t
            if prev is None:
                m.Add(s == x[j][t])
            else:
                m.Add(s >= x[j][t] - prev)
                m.Add(s <= x[j][t])
                m.Add(s <= 1 - prev)
            starts.append(s)
            prev = x[j][t]
        m.Add(sum(starts) <= (1 if rtj[j] else 2))
        c = m.NewIntVar(int(release[j] + p[j]), H, f"c{j}")
        for t in range(int(release[j]), H):
            m.Add(c >= (t + 1) * x[j][t])
        comp.append(c)
    for t in range(H):
        terms = [int(nodes[j]) * x[j][t] for j in range(J) if x[j][t] is not None]
        if terms:
            m.Add(sum(terms) <= int(capacity))
    w = [L // int(v) for v in p]
    bj = [j for j in range(J) if not rtj[j]]
    rt = [j for j in range(J) if rtj[j]]
    if threshold is not None and rt:
        # mean over RTJs of (C - r) / p <= threshold, times L * |RTJ|, exact in integers
        bound = math.floor(threshold * len(rt) * L + 1e-9)
        m.Add(sum(w[j] * (comp[j] - int(release[j])) for j in rt) <= bound)
    m.Minimize(sum(w[j] * comp[j] for j in bj) if bj else 0)
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = int(seed)
    solver.parameters.max_time_in_seconds = float(time_limit)
    t0 = time.perf_counter()
    status = solver.Solve(m)
    secs = time.perf_counter() - t0
    name = solver.StatusName(status)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return MilpSolution(name, math.nan, math.nan, [], np.full(J, np.nan), secs)
    C = np.array([solver.Value(c) for c in comp], dtype=float)
    slots = [[t for t in range(H) if x[j][t] is not None and solver.Value(x[j][t])]
             for j in range(J)]
    sd = (C - release) / p
    return MilpSolution(name, float(sd[~rtj].mean()) if bj else math.nan,
                        float(sd[rtj].mean()) if rt else math.nan, slots, C, secs)


def min_threshold(release, p, nodes, rtj, capacity: int, lo: float = 1.1, hi: float = 2.0,
                  tol: float = 0.01, time_limit: float = 60.0):
    """Binary search of the smallest real-time slowdown bound in ``[lo, hi]`` that a
    schedule meets; returns ``(threshold, MilpSolution)`` (the optimum at it), or
    ``(None, solution at hi)`` when even ``hi`` cannot be met."""
    top = solve_milp(release, p, nodes, rtj, capacity, hi, time_limit)
    if top.status not in ("OPTIMAL", "FEASIBLE"):
        return None, top
    best = (hi, top)
    low = solve_milp(release, p, nodes, rtj, capacity, lo, time_limit)
    if low.status in ("OPTIMAL", "FEASIBLE"):
        return lo, low
    a, b = lo, hi
    while b - a > tol:
        mid = 0.5 * (a + b)
        s = solve_milp(release, p, nodes, rtj, capacity, mid, time_limit)
        if s.status in ("OPTIMAL", "FEASIBLE"):
            b, best = mid, (mid, s)
        else:
            a = mid
    return best
