"""The hybrid dispatcher's relaxed scheduling model, solved with OR-Tools CP-SAT.

docs/design.md §11 (the seed's model 5.1-5.2). The waiting jobs are interval
variables of fixed duration; the federation's nodes are one pool (the
cluster boundaries are relaxed away) and power is a second pooled resource
whose capacity is the cap less idle power; jobs already running hold their
nodes and power until their predicted finish. The objective is the weighted
queue time ``sum_i w_i (s_i - q_i)``. Times are integer seconds from now,
power integer watts (waiting jobs' demands rounded up, the running jobs' and
the capacity down, so that what runs now always fits), weights integers
(scaled by :data:`WEIGHT_SCALE`).

OR-Tools is imported when a model is first solved, so the rest of moga
does not need it.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from ..bounds import BOUNDS
from ..errors import require
from ..validation import check_int

__all__ = ["CPOptions", "RelaxedSolution", "solve_relaxed", "serial_schedule", "WEIGHT_SCALE"]

#: Weights are scaled to integers by this factor (CP-SAT objectives are integer).
WEIGHT_SCALE = 1000


@dataclass(frozen=True)
class CPOptions:
    """How the hybrid dispatcher uses CP-SAT.

    Parameters
    ----------
    window : int
        At most this many waiting jobs (the first by PRB rank) enter the model
        at an event; the others wait for a later event. CP-SAT's effort grows
        quickly with the jobs in the model, and the seed's dispatcher too
        solved one event's queue at a time.
    time_limit : float
        CP-SAT's deterministic time limit per event (its own work units,
        roughly seconds; a wall-clock limit would make runs irreproducible).
    seed : int
        CP-SAT's random seed (one search worker, so runs are bit-identical).
    passes : int
        Solves per event of the seed's feedback loop: when the mapper cannot
        start every job the solver starts now (they conflict on the real
        clusters or power), that set becomes a cut (a cumulative of demand 1
        and capacity ``|set| - 1``: not all of them at once) and the model is
        solved again, until no conflict is left or ``passes`` solves were
        made. 1 (default): one solve, no feedback.
    """

    window: int = 16
    time_limit: float = 0.01
    seed: int = 0
    passes: int = 1

    def __post_init__(self):
        BOUNDS["cp_window"].check("window", self.window)
        BOUNDS["cp_passes"].check("passes", self.passes)
        BOUNDS["time_limit"].check("time_limit", self.time_limit)
        check_int("seed", self.seed, 0, 2**31 - 1)


@dataclass(frozen=True)
class RelaxedSolution:
    """A solve's outcome: ``start`` (s from now, int, None without a solution), ``status``
    (CP-SAT's name), ``objective`` (sum of scaled weights times starts) and ``seconds``."""

    start: np.ndarray | None
    status: str
    objective: float
    seconds: float


def _whole_watts(power, power_capacity):
    """Job powers and the power capacity in whole watts: ``(pw, cap)`` (cap None without one).

    Powers round up and the capacity down, so a rounded schedule never draws
    more than the real capacity; a job that fits the real capacity but whose
    rounded power exceeds the rounded one (both within a watt) is clipped to it
    rather than refused. A ValueError when a job needs more than the capacity.
    """
    power = np.maximum(np.asarray(power, dtype=float), 0.0)
    pw = np.ceil(power).astype(np.int64)
    if not math.isfinite(power_capacity):
        return pw, None
    if np.any(power > power_capacity):
        raise ValueError("a job needs more power than the cap leaves over idle power")
    cap = int(math.floor(power_capacity))
    return np.minimum(pw, cap), cap


def serial_schedule(order, duration, nodes, power, node_capacity, power_capacity,
                    running_end=(), running_nodes=(), running_power=()) -> np.ndarray:
    """The serial schedule of ``order`` in the relaxed model: each job in turn at the earliest
    integer time from which its nodes and power fit for its whole duration.

    The hybrid dispatcher hints CP-SAT with it, built in PRB's order (the
    seed's search, too, follows the list scheduler's priorities), so that the
    solver starts from a schedule as good as the list scheduler's.
    """
    dur = np.maximum(1, np.ceil(np.asarray(duration, dtype=float))).astype(np.int64)
    pw, cap_p = _whole_watts(power, power_capacity)
    cap_p = np.iinfo(np.int64).max if cap_p is None else cap_p
    # The usage profile: breakpoints and the nodes and power used from each to the next.
    ends = np.ceil(np.asarray(running_end, dtype=float)).astype(np.int64)
    keep = ends > 0
    times = np.array([0], dtype=np.int64)
    use_n = np.zeros(1, dtype=np.int64)
    use_p = np.zeros(1, dtype=np.int64)

    def add(s, e, n, p):
        nonlocal times, use_n, use_p
        for x in (s, e):
            i = np.searchsorted(times, x)
            if i == times.size or times[i] != x:  # split the segment that holds x
                times = np.insert(times, i, x)
                use_n = np.insert(use_n, i, use_n[i - 1])
                use_p = np.insert(use_p, i, use_p[i - 1])
        lo, hi = np.searchsorted(times, s), np.searchsorted(times, e)
        use_n[lo:hi] += n
        use_p[lo:hi] += p

    for e, n, p in zip(ends[keep], np.asarray(running_nodes)[keep],
                       np.floor(np.maximum(np.asarray(running_power, dtype=float), 0.0))[keep],
                       strict=True):
        add(0, int(e), int(n), int(p))
    start = np.zeros(dur.shape[0], dtype=np.int64)
    for i in order:
        d, n, p = int(dur[i]), int(nodes[i]), int(pw[i])
        ok_n = use_n + n <= node_capacity
        ok_p = use_p + p <= cap_p
        ok = ok_n & ok_p
        for c in np.flatnonzero(ok):
            s = int(times[c])
            hi = np.searchsorted(times, s + d)  # segments c .. hi-1 overlap [s, s + d)
            if ok[c:hi].all():
                start[i] = s
                add(s, s + d, n, p)
                break
    return start


def solve_relaxed(duration, nodes, power, weight, node_capacity, power_capacity,
                  running_end=(), running_nodes=(), running_power=(), hint=None,
                  options: CPOptions = CPOptions(), cuts=()) -> RelaxedSolution:
    """Solve the relaxed model over the waiting jobs.

    Parameters
    ----------
    duration : array_like of float, shape (n,)
        Estimated durations, s (rounded up to whole seconds, at least 1).
    nodes : array_like of int, shape (n,)
        Nodes each job needs (<= ``node_capacity``).
    power : array_like of float, shape (n,)
        Power each job adds over idle while it runs, W.
    weight : array_like of float, shape (n,)
        Objective weights (``max_ewt / ewt``), > 0.
    node_capacity : int
        Nodes of the federation.
    power_capacity : float
        Power the running jobs may add over idle power (cap less idle), W;
        ``inf`` for no cap.
    running_end, running_nodes, running_power : array_like
        The running jobs: predicted finish (s from now), nodes and power.
    hint : array_like of int, optional
        Start times to hint the search with (a known feasible schedule).
    options : CPOptions
    cuts : sequence of array_like of int
        Conflict sets (positions among the waiting jobs): for each, a
        cumulative of demand 1 and capacity ``len(set) - 1``, so that not
        all of its jobs run at once.

    Returns
    -------
    RelaxedSolution
    """
    cp_model = require("ortools.sat.python.cp_model", "the hybrid CP dispatcher", "cp")

    dur = np.maximum(1, np.ceil(np.asarray(duration, dtype=float))).astype(np.int64)
    n = dur.shape[0]
    nodes = np.asarray(nodes, dtype=np.int64)
    pw, cap = _whole_watts(power, power_capacity)
    w = np.maximum(1, np.round(np.asarray(weight, dtype=float) * WEIGHT_SCALE)).astype(np.int64)
    r_end = np.maximum(0, np.ceil(np.asarray(running_end, dtype=float))).astype(np.int64)
    r_nodes = np.asarray(running_nodes, dtype=np.int64)
    # Running jobs' power rounds down: rounded up, their sum could exceed the capacity
    # (which rounds down) although the real draw fits, leaving no solution at all.
    r_pw = np.floor(np.maximum(np.asarray(running_power, dtype=float), 0.0)).astype(np.int64)
    if np.any(nodes > node_capacity):
        raise ValueError("a job needs more nodes than the federation has")
    horizon = int(dur.sum() + (r_end.max() if r_end.size else 0))

    m = cp_model.CpModel()
    starts, intervals = [], []
    for i in range(n):
        s = m.NewIntVar(0, horizon, f"s{i}")
        starts.append(s)
        intervals.append(m.NewIntervalVar(s, int(dur[i]), s + int(dur[i]), f"x{i}"))
    fixed = [m.NewIntervalVar(0, int(e), int(e), f"r{i}") for i, e in enumerate(r_end) if e > 0]
    keep = r_end > 0
    m.AddCumulative(intervals + fixed, [int(v) for v in nodes] + [int(v) for v in r_nodes[keep]],
                    int(node_capacity))
    if cap is not None:
        m.AddCumulative(intervals + fixed, [int(v) for v in pw] + [int(v) for v in r_pw[keep]],
                        cap)
    for cut in cuts:
        cut = [int(i) for i in cut]
        if len(cut) >= 2:
            m.AddCumulative([intervals[i] for i in cut], [1] * len(cut), len(cut) - 1)
    m.Minimize(sum(int(w[i]) * starts[i] for i in range(n)))
    if hint is not None:
        for i, h in enumerate(np.asarray(hint, dtype=np.int64)):
            m.AddHint(starts[i], int(min(max(h, 0), horizon)))

    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = int(options.seed)
    solver.parameters.max_deterministic_time = float(options.time_limit)
    t0 = time.perf_counter()
    status = solver.Solve(m)
    seconds = time.perf_counter() - t0
    name = solver.StatusName(status)
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        start = np.array([solver.Value(s) for s in starts], dtype=np.int64)
        return RelaxedSolution(start, name, float(solver.ObjectiveValue()), seconds)
    return RelaxedSolution(None, name, math.inf, seconds)
