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

from ..errors import InputError, require
from ..validation import check_number

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


#: CP-SAT's integers are int64; every linear expression of the model stays below this.
_INT_LIMIT = 2**62
#: The most (job, slot) pairs the time-indexed model is built with: each is a few Boolean
#: variables and constraints, so beyond this the build alone outgrows memory.
MAX_JOB_SLOTS = 1_000_000


def _int_array(name, v):
    try:
        a = np.asarray(v, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be numbers, got {v!r}") from None
    if a.ndim != 1:
        raise InputError(f"{name} must be a 1-D array, got shape {a.shape}")
    bad = ~np.isfinite(a) | (a != np.round(a))
    if bad.any():
        j = int(np.flatnonzero(bad)[0])
        raise InputError(f"{name}[{j}] must be a whole number of slots, got {float(a[j])!r} "
                         "(the program works on integer time slots)")
    if a.size and np.abs(a).max() >= _INT_LIMIT:
        raise InputError(f"{name} holds values too large for integer slots")
    return a.astype(np.int64)


def _check(release, p, nodes, rtj, capacity):
    release, p, nodes = (_int_array(n, v) for n, v in
                         (("release", release), ("p", p), ("nodes", nodes)))
    rtj = np.asarray(rtj)
    if rtj.dtype != bool:
        if rtj.dtype.kind not in "iuf" or not np.isin(rtj, (0, 1)).all():
            raise InputError("rtj must hold booleans (True for a real-time job)")
        rtj = rtj.astype(bool)
    if not (release.shape == p.shape == nodes.shape == rtj.shape):
        raise InputError("release, p, nodes and rtj must be 1-D arrays of one length")
    if isinstance(capacity, bool) or not isinstance(capacity, (int, np.integer)) or capacity < 1:
        raise InputError(f"capacity must be an integer >= 1, got {capacity!r}")
    for name, a, ok in (("p", p, p >= 1), ("release", release, release >= 0),
                        ("nodes", nodes, (nodes >= 1) & (nodes <= capacity))):
        if not ok.all():
            j = int(np.flatnonzero(~ok)[0])
            raise InputError(f"job {j}: {name} = {a[j]} out of range (need p >= 1 slots, "
                             f"release >= 0 and 1 <= nodes <= capacity = {capacity})")
    J = p.shape[0]
    H = int(release.max() + p.sum()) if J else 0
    if J * H > MAX_JOB_SLOTS:
        raise InputError(
            f"the time-indexed program would have {J} jobs x {H:,} slots (latest release "
            f"{int(release.max())} + total processing {int(p.sum())}), more than the "
            f"{MAX_JOB_SLOTS:,} job-slot pairs it is built for; it is meant for small "
            "instances: use fewer jobs, or coarser slots")
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
        Wall-clock limit, s, for building the model and solving it together
        (``status`` says whether the optimum was proven; ``"UNKNOWN"`` when the
        limit struck before any solution, the build included).
    seed : int

    Raises
    ------
    InputError
        For fractional, non-finite or out-of-range inputs, a bad ``threshold``
        or ``time_limit``, or processing times whose exact integer weights
        (``lcm(p) / p_j``) would overflow the solver's 64-bit integers.
    """
    t_begin = time.perf_counter()
    release, p, nodes, rtj = _check(release, p, nodes, rtj, capacity)
    if threshold is not None:
        threshold = check_number("threshold", threshold, 0, low_open=True)
    time_limit = check_number("time_limit", time_limit, 0, low_open=True)
    cp_model = require("ortools.sat.python.cp_model", "the exact integer program", "cp")

    J = p.shape[0]
    H = int(release.max() + p.sum()) if J else 0
    L = reduce(math.lcm, (int(v) for v in p), 1)  # exact integer weights L / p_j
    # The objective and the threshold row are sums of L / p_j * C_j with C_j <= H.
    if J and L * J * max(H, 1) >= _INT_LIMIT:
        raise InputError(
            f"the exact integer weights lcm(p) / p_j overflow the solver's 64-bit integers "
            f"(lcm of the {len(set(p.tolist()))} distinct processing times is {L:.3g}); use "
            "fewer distinct processing times, or times with a smaller common multiple")

    def unknown():
        return MilpSolution("UNKNOWN", math.nan, math.nan, [], np.full(J, np.nan),
                            time.perf_counter() - t_begin)

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
        if time.perf_counter() - t_begin > time_limit:
            return unknown()
    for t in range(H):
        terms = [int(nodes[j]) * x[j][t] for j in range(J) if x[j][t] is not None]
        if terms:
            m.Add(sum(terms) <= int(capacity))
        if t % 256 == 255 and time.perf_counter() - t_begin > time_limit:
            return unknown()
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
    left = time_limit - (time.perf_counter() - t_begin)
    if left <= 0:
        return unknown()
    solver.parameters.max_time_in_seconds = left
    status = solver.Solve(m)
    secs = time.perf_counter() - t_begin
    name = solver.StatusName(status)
    if status == cp_model.MODEL_INVALID:  # a bug: the inputs were checked above
        raise RuntimeError(f"CP-SAT refused the model: {m.Validate()}")
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
    ``(None, solution at hi)`` when ``hi`` is not met: its ``status`` says whether that is
    proven (``"INFEASIBLE"``) or the time limit struck (``"UNKNOWN"``). ``time_limit``
    bounds each solve; a bound whose solve times out counts as not met.

    Raises
    ------
    InputError
        If there is no real-time job (no bound to search), ``lo``, ``hi`` or ``tol``
        are not finite numbers with ``1 <= lo <= hi`` and ``tol > 0``, or the instance
        is refused by :func:`solve_milp`.
    """
    lo, hi, tol = (check_number(n, v, 0, low_open=True)
                   for n, v in (("lo", lo), ("hi", hi), ("tol", tol)))
    if not 1.0 <= lo <= hi:
        raise InputError(f"need 1 <= lo <= hi, got lo = {lo}, hi = {hi}")
    release, p, nodes, rtj = _check(release, p, nodes, rtj, capacity)
    if not rtj.any():
        raise InputError("min_threshold needs at least one real-time job (rtj): without one "
                         "there is no bound to search")
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
