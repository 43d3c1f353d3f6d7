"""Online MOGA: the blacklist GA as a dispatcher for jobs that arrive over time.

At a decision event the waiting jobs (the first ``window`` of them in arrival
order) form a small scheduling problem: their order and blacklist
(:mod:`moga.model.chromosome`) are evolved by MOGA's NSGA-II loop
(:func:`moga.evolution.engine.evolve`, MOGA's operators and neighbourhood
mating) for a bounded number of generations or seconds, the jobs already
running a fixed prefix of every decode. The preference picks one member of
the front; the jobs that member starts now are started, with its blacklist,
and the session advances. The next decision starts from the members of the
previous front that still apply (warm start) besides the seeds.

The window's model (docs/guide/online-moga.md):

* times are relative to the event; every waiting job is released at 0 and
  lasts its estimate (:attr:`moga.sim.Session.estimate`: the requested time
  by default), so a plan never uses what a dispatcher cannot know;
* a running job holds exactly its nodes (a blacklist that allows those alone)
  until its planned finish, without communication;
* the decoder is the MOGA decoder (jobs strictly in order, the GA finding
  the order that backfills), on the session's execution model and power caps.

Objectives of the window (any of :data:`WINDOW_OBJECTIVES`): its makespan,
energy (compute and idle, running jobs included), flowtime and ``"bsld"``,
the mean bounded slowdown of the waiting jobs, ``max(1, (w + s + d) /
max(d, tau))`` with ``w`` the time waited so far, ``s`` the planned start,
``d`` the estimate and ``tau`` the bound of :meth:`moga.Schedule.bounded_slowdown`
(:data:`moga.model.schedule.BSLD_BOUND`).
"""

from __future__ import annotations

import itertools
import math
import time

import numpy as np

from decoders._kernels import exact_dot

from ..bounds import BOUNDS
from ..metrics import knee_index
from ..model.chromosome import pinned_blacklists, split
from ..model.jobset import JobSet
from ..model.objectives import view
from ..model.schedule import BSLD_BOUND, batch_evaluator
from ..sim.registry import OnlinePolicy
from .engine import evolve
from .mating import NeighbourSelection
from .operators import ScheduleSampling
from .params import GAParams, check_seed
from .problem import SchedulingProblem

__all__ = ["OnlineMOGA", "WINDOW_OBJECTIVES", "WindowProblem", "non_dominated",
           "parse_preference", "pick_member", "pinned_blocks", "single_job_rows",
           "window_problem"]

#: Objectives a decision can minimise over its window: the entries of the catalogue
#: (:data:`moga.model.objectives.CATALOGUE`) that :meth:`WindowProblem.objectives_of`
#: computes, each by the catalogue's definition applied to the window's planned schedule
#: (times from the event; ``bsld`` counting the time each job has waited so far).
WINDOW_OBJECTIVES = view("makespan", "energy", "flowtime", "bsld")
#: Preference kinds (:func:`parse_preference`).
PREFERENCES = ("knee", "weight", "slowdown", "energy", "bsld")
#: How a decision with one waiting job is made (:class:`OnlineMOGA`'s ``single``).
SINGLE = ("enumerate", "ga")
#: Most clusters for which a one-job window is enumerated (2 x K! candidate rows).
ENUMERATE_MAX_CLUSTERS = 5
#: Planned remaining time of a running job past its estimate (s): it ends "now".
_OVERRUN_S = 1.0


class WindowProblem(SchedulingProblem):
    """The waiting jobs' (order, blacklist) problem at one event.

    ``X`` encodes the ``q`` waiting jobs as in :class:`SchedulingProblem`
    (``jobset`` is theirs); every decode puts the ``r`` running jobs of
    ``full`` (its first rows, ``pinned_bl`` their blacklists) first.

    Parameters
    ----------
    queue : JobSet
        The waiting jobs, released at 0, lasting their estimates.
    full : JobSet
        The running jobs (first ``n_pinned`` rows) then ``queue``'s.
    federation : Federation
    n_pinned : int
    pinned_bl : ndarray (n_pinned, K)
    waited : ndarray (q,)
        Time each waiting job has waited so far, s.
    objectives : sequence of str
        From :data:`WINDOW_OBJECTIVES`.
    model : {"fluid", "at_start"}
    """

    def __init__(self, queue: JobSet, full: JobSet, federation, n_pinned: int, pinned_bl,
                 waited, objectives=("makespan", "energy"), model: str = "fluid"):
        objectives = _check_objectives(objectives)
        super().__init__(queue, federation, model=model, objectives=("makespan",))
        self.n_obj = len(objectives)
        self.objectives = objectives
        self._cols = [WINDOW_OBJECTIVES.index(o) for o in objectives]
        self.full = full
        self.n_pinned = int(n_pinned)
        self.pinned_bl = np.asarray(pinned_bl, dtype=np.float64).reshape(self.n_pinned,
                                                                         self.n_clusters)
        self.waited = np.asarray(waited, dtype=np.float64)
        d = queue.runtime
        self._bsld_den = np.maximum(d, BSLD_BOUND)
        self._bsld_num = self.waited + d
        self._decoder = None

    def full_rows(self, X):
        """``(orders, blacklists)`` of the whole window (running jobs first) for rows ``X``."""
        orders, bls = self.split(np.atleast_2d(X))
        P, r = orders.shape[0], self.n_pinned
        full_o = np.empty((P, r + self.n_jobs), dtype=np.int64)
        full_o[:, :r] = np.arange(r)
        full_o[:, r:] = orders + r
        full_b = np.empty((P, r + self.n_jobs, self.n_clusters))
        full_b[:, :r] = self.pinned_bl
        full_b[:, r:] = bls
        return full_o, full_b

    def evaluate_rows(self, X):
        """``(objectives (P, 4) in WINDOW_OBJECTIVES' order, starts (P, q))`` of rows ``X``."""
        orders, bls = self.full_rows(X)
        t0 = time.perf_counter()
        if self._decoder is None:  # set up once for the decision's generations
            self._decoder = batch_evaluator(self.full, self.federation, model=self.model)
        b = self._decoder(orders, bls, starts=True)
        self.decode_seconds += time.perf_counter() - t0
        self.n_decoded += orders.shape[0]
        return self.objectives_of(b.makespan, b.energy, b.flowtime, b.starts[:, self.n_pinned:])

    def objectives_of(self, makespan, energy, flowtime, starts):
        """``(G (P, 4), starts)``: the window objectives of decoded rows, rounded (to 1 us,
        1 mJ and 1e-9) so that schedules equal up to float noise tie."""
        # The mean over the waiting jobs, as numpy's mean computes it (sum, then divide).
        bsld = np.maximum(1.0, (self._bsld_num + starts) / self._bsld_den).sum(axis=1)
        bsld /= starts.shape[1]
        G = np.empty((len(bsld), 4))
        for col, v, digits in ((0, makespan, 6), (1, energy, 3), (2, flowtime, 6), (3, bsld, 9)):
            v.round(digits, out=G[:, col])
        return G, starts

    def decode(self, X):
        """Objective matrix (P, n_obj) of rows ``X``, and the full matrix (P, 4)."""
        G, _ = self.evaluate_rows(X)
        return G[:, self._cols], G

    def start_orders(self, X, backfill: str = "easy"):
        raise NotImplementedError("a window problem has no re-sequencing")


def _check_objectives(objectives) -> tuple:
    """``objectives`` as a tuple, refused unless a non-empty subset of :data:`WINDOW_OBJECTIVES`."""
    objectives = tuple(objectives)
    if not objectives or any(o not in WINDOW_OBJECTIVES for o in objectives):
        raise ValueError(f"objectives must be a non-empty subset of {list(WINDOW_OBJECTIVES)}, "
                         f"got {list(objectives)}")
    return objectives


def window_problem(session, jobs, objectives=("makespan", "energy"),
                   max_pinned: int = 64) -> WindowProblem:
    """The :class:`WindowProblem` of the waiting ``jobs`` at ``session.now``.

    Running jobs hold their nodes until their planned finish
    (:meth:`~moga.sim.Session.running`); a job past its estimate is planned
    to end in :data:`_OVERRUN_S` s. Up to ``max_pinned`` running jobs are
    pinned one by one; beyond, their nodes are pinned per cluster in
    ``max_pinned // K`` blocks (:func:`pinned_blocks`), so that a decode's
    cost does not grow with the machine's size.
    """
    js, fed, now = session.jobset, session.federation, session.now
    jobs = np.asarray(jobs, dtype=np.int64)
    run, planned = session.running()
    p_tasks, p_runtime, p_power, p_bl = pinned_blocks(
        session.allocation[run], np.maximum(planned - now, _OVERRUN_S), js.power[run],
        fed.nodes, fed.speed, max_pinned)
    est = session.estimate[jobs]
    q, r = len(jobs), len(p_tasks)
    queue = JobSet(id=js.id[jobs], release=np.zeros(q), tasks=js.tasks[jobs], runtime=est,
                   sigma=js.sigma[jobs], bw=js.bw[jobs], name=f"{js.name} window",
                   power=js.power[jobs])
    full = JobSet(id=np.concatenate([np.arange(r), js.id[jobs]]),
                  release=np.zeros(r + q), tasks=np.concatenate([p_tasks, js.tasks[jobs]]),
                  runtime=np.concatenate([p_runtime, est]),
                  sigma=np.concatenate([np.zeros(r), js.sigma[jobs]]),
                  bw=np.concatenate([np.zeros(r), js.bw[jobs]]),
                  name=f"{js.name} window", power=np.concatenate([p_power, js.power[jobs]]))
    return WindowProblem(queue, full, fed, r, p_bl, now - js.release[jobs], objectives,
                         model=session.model)


def pinned_blocks(alloc, remaining, power, nodes, speed, max_pinned: int = 64):
    """The window's fixed prefix: ``(tasks, runtime, power, blacklist)`` of pinned rows.

    ``alloc`` (r, K) holds the running jobs' nodes, ``remaining`` (r,) their
    planned time left (s), ``power`` (r,) their power factors. A pinned row
    holds exactly its nodes (its blacklist allows those alone: ``beta_k =
    min(1, (N_k - a_k + 0.5) / N_k)``) for ``remaining`` seconds without
    communication (``runtime = remaining * slowest speed used``).

    Up to ``max_pinned`` jobs, one row per job. Beyond, each cluster's held
    nodes form at most ``max(1, max_pinned // K)`` rows: the jobs' pieces on
    that cluster by planned end, cut into groups of consecutive pieces, each
    group holding its nodes until its latest end (never earlier than the
    jobs it stands for) at the node-weighted mean power factor.
    """
    alloc = np.asarray(alloc, dtype=np.int64)
    r, K = alloc.shape
    if r <= max_pinned:
        used = alloc > 0
        smin = np.where(used, speed[None, :], np.inf).min(axis=1) if r else np.zeros(0)
        bl = np.minimum(1.0, (nodes - alloc + 0.5) / nodes)
        return alloc.sum(axis=1), remaining * smin, np.asarray(power, dtype=np.float64), bl
    per = max(1, max_pinned // K)
    tasks, runtime, pw, held = [], [], [], []
    for k in range(K):
        on = np.flatnonzero(alloc[:, k] > 0)
        if on.size == 0:
            continue
        on = on[np.argsort(remaining[on], kind="stable")]
        for group in np.array_split(on, min(per, on.size)):
            a = alloc[group, k]
            tasks.append(int(a.sum()))
            runtime.append(float(remaining[group].max()) * speed[k])
            pw.append(exact_dot(a, power[group]) / a.sum())
            row = np.zeros(K, dtype=np.int64)
            row[k] = tasks[-1]
            held.append(row)
    held = np.array(held)
    return (np.array(tasks, dtype=np.int64), np.array(runtime), np.array(pw),
            np.minimum(1.0, (nodes - held + 0.5) / nodes))


def single_job_rows(problem) -> np.ndarray:
    """Candidate rows ``X`` of a window of one waiting job: its placements.

    A placement is the job's node count per cluster, imposed by a blacklist
    whose allowances are those counts (:func:`moga.model.chromosome.pinned_blacklists`):
    the job starts as soon as they are free. For every order of the clusters,
    the job's tasks fill the clusters in that order, once over the nodes the
    running jobs leave free (the placements that start now) and once over
    all nodes (those that wait for running jobs to end). A blacklist admits
    no other allocation than some count per cluster, and filling in every
    order covers each cluster set with the nodes of its clusters used in
    turn. Rows are unique, ``1 + K`` genes each (the order ``0``, then the
    blacklist).
    """
    if problem.n_jobs != 1:
        raise ValueError(f"single_job_rows needs a window of one waiting job, got "
                         f"{problem.n_jobs}")
    nodes = np.asarray(problem.federation.nodes, dtype=np.int64)
    K = nodes.size
    held = nodes[None, :] - np.floor(problem.pinned_bl * nodes[None, :]).astype(np.int64)
    free = np.maximum(nodes - held.sum(axis=0), 0)
    t = int(problem.jobset.tasks[0])
    allocs = set()
    for cap in (free, nodes):
        if cap.sum() < t:
            continue
        for perm in itertools.permutations(range(K)):
            x, rem = np.zeros(K, dtype=np.int64), t
            for k in perm:
                x[k] = min(int(cap[k]), rem)
                rem -= x[k]
            allocs.add(tuple(x.tolist()))
    rows = [np.concatenate([[0.0], pinned_blacklists(np.array(a), nodes)])
            for a in sorted(allocs)]
    return np.array(rows).reshape(len(rows), 1 + K)


def non_dominated(F) -> np.ndarray:
    """Boolean mask of the rows of ``F`` (n, m) that no other row dominates (minimisation;
    equal rows do not dominate each other)."""
    F = np.asarray(F, dtype=np.float64)
    le = (F[:, None, :] <= F[None, :, :]).all(axis=2)
    lt = (F[:, None, :] < F[None, :, :]).any(axis=2)
    return ~(le & lt).any(axis=0)


def _unique_rows(X) -> np.ndarray:
    """The rows of ``X`` without repeats, first occurrences in their order."""
    _, idx = np.unique(X + 0.0, axis=0, return_index=True)
    return X[np.sort(idx)]


def parse_preference(preference) -> tuple[str, float]:
    """``(kind, value)`` of a preference string.

    ``"knee"``
        The knee of the front on its first two objectives (nearest the
        ideal point, objectives scaled to [0, 1] over the front, with more).
    ``"weight:W"``
        The least ``W * makespan + (1 - W) * energy``, both scaled to [0, 1]
        over the front (``0 <= W <= 1``).
    ``"slowdown:X"``
        The least energy among the members whose window bounded slowdown is
        at most ``(1 + X)`` times the front's least (``X >= 0``).
    ``"energy:X"``
        The least window bounded slowdown among the members whose energy is at
        most ``(1 + X)`` times the front's least (``X >= 0``).
    ``"bsld:B"``
        The least energy among the members whose window bounded slowdown is
        at most ``B`` (``B >= 1``); the least slowdown when none is.
    """
    if not isinstance(preference, str):
        raise ValueError(f"preference must be a string such as 'knee' or 'slowdown:0.1', got "
                         f"{preference!r}")
    kind, sep, value = preference.partition(":")
    if kind not in PREFERENCES:
        raise ValueError(f"preference {preference!r}: the kind must be one of "
                         f"{list(PREFERENCES)}")
    if kind == "knee":
        if sep:
            raise ValueError(f"preference {preference!r}: 'knee' takes no value")
        return kind, math.nan
    try:
        v = float(value)
    except ValueError:
        raise ValueError(f"preference {preference!r}: {kind!r} needs a number, as in "
                         f"'{kind}:0.1'") from None
    if not math.isfinite(v) or v < 0 or (kind == "weight" and v > 1) or \
            (kind == "bsld" and v < 1):
        bound = {"weight": "in [0, 1]", "bsld": ">= 1"}.get(kind, ">= 0")
        raise ValueError(f"preference {preference!r}: the value must be {bound}")
    return kind, v


def _scaled(a):
    lo, hi = a.min(), a.max()
    return (a - lo) / (hi - lo) if hi > lo else np.zeros_like(a)


def pick_member(G, F, preference) -> int:
    """Index of the chosen member of a front.

    ``G`` (n, 4) holds every window objective (:data:`WINDOW_OBJECTIVES`),
    ``F`` (n, m) the evolved ones; ``preference`` is parsed by
    :func:`parse_preference`. Ties go to the lower index.
    """
    kind, v = parse_preference(preference)
    m, e, b = G[:, 0], G[:, 1], G[:, 3]
    if kind == "knee":
        return int(knee_index(F[:, :2]))
    if kind == "weight":
        return int(np.argmin(v * _scaled(m) + (1 - v) * _scaled(e)))
    if kind == "slowdown":
        ok = b <= (1 + v) * b.min() * (1 + 1e-12)
        return int(np.flatnonzero(ok)[np.lexsort((b[ok], e[ok]))[0]])
    if kind == "bsld":
        ok = b <= v
        if not ok.any():
            return int(np.lexsort((e, b))[0])
        return int(np.flatnonzero(ok)[np.lexsort((b[ok], e[ok]))[0]])
    ok = e <= (1 + v) * e.min() * (1 + 1e-12)
    return int(np.flatnonzero(ok)[np.lexsort((e[ok], b[ok]))[0]])


class OnlineMOGA(OnlinePolicy):
    """The blacklist GA as an online dispatcher (docs/guide/online-moga.md).

    Parameters
    ----------
    preference : str
        How a decision picks a member of its front (:func:`parse_preference`);
        default ``"slowdown:0"``: the least energy among the members of least
        window slowdown.
    objectives : sequence of str
        What the window's GA minimises (:data:`WINDOW_OBJECTIVES`); default
        ``("energy", "bsld")``.
    pop_size : int
        Population size of a decision's GA (>= 4).
    generations : int
        Generations per decision (>= 1).
    time_budget : float, optional
        Wall-clock seconds a decision may take (the generation under way
        finishes): the production setting, where the dispatcher must answer
        in time. The result then depends on the machine's speed.
    window : int
        The first ``window`` waiting jobs in arrival order are planned; the
        others wait for a later decision (>= 1).
    interval : float
        Simulated seconds between decisions: at an event sooner than this
        after the last decision, the GA runs only if at least ``min_change``
        jobs joined or left the window since (or nothing runs). 0 (default):
        a decision at every event where a waiting job could fit.
    min_change : int
        See ``interval`` (>= 1).
    max_pinned : int
        Running jobs pinned one by one in a window; beyond, their nodes are
        pinned in blocks per cluster (:func:`pinned_blocks`) (>= 1).
    warm_start : bool
        Start each decision from the previous front's members, restricted to
        the jobs still waiting (new arrivals appended in arrival order).
    single : {"enumerate", "ga"}
        How a decision with one waiting job in its window is made. ``"ga"``
        (default): the GA, as for a larger window. ``"enumerate"``: no GA; one
        decode of every candidate placement (:func:`single_job_rows`: the job's nodes filled cluster by
        cluster in every order of the clusters, over the free nodes and over
        all nodes, with the warm and seed rows) and the preference's pick of
        their front (about half the CPU time on the HPC2N month, but a much
        higher bounded slowdown on CEA-Curie: docs/dev/experiments.md).
        Federations of more than :data:`ENUMERATE_MAX_CLUSTERS` clusters always use the GA.
    seed : int
        Seed of every random draw of the run.
    params : GAParams, dict or path, optional
        Operators' settings (mutation rates, order moves, crossover
        probabilities, seeding levels); ``pop_size`` and ``generations`` here
        take precedence.

    Notes
    -----
    A decision is skipped at an event where no waiting job of the window could
    fit the free nodes, and within ``interval`` of the last one unless the
    window changed enough. :meth:`summary` (merged into the schedule's ``info``)
    reports the decisions, their wall time (total, mean, 95th percentile,
    largest), the process CPU time they took (total) and the GA's evaluations.
    """

    name = "online-moga"

    def __init__(self, preference: str = "slowdown:0", objectives=("energy", "bsld"),
                 pop_size: int = 20, generations: int = 10, time_budget: float | None = None,
                 window: int = 32, interval: float = 0.0, min_change: int = 4,
                 max_pinned: int = 64, warm_start: bool = True, single: str = "ga",
                 seed: int = 1, params=None):
        kind, _ = parse_preference(preference)
        objectives = _check_objectives(objectives)
        if kind in ("knee", "weight") and len(objectives) < 2:
            raise ValueError(f"preference {preference!r} picks between two objectives; the "
                             f"search has {list(objectives)}")
        for name, v, key in (("pop_size", pop_size, "online_pop"),
                             ("generations", generations, "online_gen"),
                             ("window", window, "online_window"), ("max_pinned", max_pinned, None),
                             ("min_change", min_change, None)):
            low, high = (1, None) if key is None else (BOUNDS[key].low, BOUNDS[key].high)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < low:
                raise ValueError(f"{name} must be an integer >= {low}, got {v!r}")
            if high is not None and v > high:
                raise ValueError(f"{name} must be an integer <= {high:,}, got {v!r}")
        if time_budget is not None:
            time_budget = BOUNDS["time_limit"].check("time_budget", time_budget)
        self.interval = BOUNDS["interval"].check("interval", interval)
        self.min_change = int(min_change)
        self.preference = preference
        self.objectives = objectives
        self.pop_size, self.generations = int(pop_size), int(generations)
        self.time_budget = time_budget
        self.window = int(window)
        self.max_pinned = int(max_pinned)
        self.warm_start = bool(warm_start)
        if single not in SINGLE:
            raise ValueError(f"single must be one of {list(SINGLE)}, got {single!r}")
        self.single = single
        self.seed = check_seed(seed)
        self.params = GAParams.coerce(params).replace(pop_size=self.pop_size,
                                                      n_gen=self.generations)
        self.reset(None)

    # ------------------------------------------------------------------ the loop
    def reset(self, session) -> None:
        self._rng = np.random.default_rng(self.seed)
        self._warm = None  # (job positions (q,), X rows of the last front)
        self.log = []  # (t, started jobs, their blacklist rows) per decision that started some
        self._times = []
        self._cpu = 0.0  # process CPU seconds spent deciding
        self._evals = 0
        self._mismatch = 0
        self._fallback = 0
        self._skipped = 0
        self._last = None  # (time, window) of the last decision

    def decide(self, session) -> None:
        q = session.queued()[: self.window]
        if q.size == 0:
            return
        free = session.free
        if session.jobset.tasks[q].min() > free.sum():
            return
        if self.interval and session.running()[0].size and self._last is not None:
            last_t, last_q = self._last
            changed = np.setxor1d(last_q, q, assume_unique=True).size
            if session.now - last_t < self.interval and changed < self.min_change:
                self._skipped += 1
                return
        self._last = (session.now, q.copy())
        t0, c0 = time.perf_counter(), time.process_time()
        jobs, bl = self.plan(session, q)
        started = session.start(jobs, blacklist=bl) if jobs.size else jobs
        rows = bl[np.isin(jobs, started)]
        if started.size != jobs.size:
            self._mismatch += 1
        if started.size == 0 and session.running()[0].size == 0:
            # Nothing runs and the plan started nothing: start the head of the queue so that
            # the simulation moves on (counted; the window's model is then off).
            self._fallback += 1
            started, rows = session.start(q[:1]), np.zeros((1, free.size))
        if started.size:
            self.log.append((session.now, started.copy(), rows))
        self._times.append(time.perf_counter() - t0)
        self._cpu += time.process_time() - c0

    def plan(self, session, q):
        """``(jobs, blacklist rows)`` the chosen member starts now, for the waiting ``q``."""
        return self.plan_window(window_problem(session, q, self.objectives, self.max_pinned), q)

    def plan_window(self, problem, q):
        """:meth:`plan` on a window problem already built (``q``: its waiting jobs)."""
        seed = int(self._rng.integers(2**31 - 1))
        initial = self._initial(problem, q)
        if self.single == "enumerate" and problem.n_jobs == 1 and \
                problem.n_clusters <= ENUMERATE_MAX_CLUSTERS:
            # One job: its placements are few enough to decode them all at once.
            X = _unique_rows(np.vstack([initial, single_job_rows(problem)]))
            G, starts = problem.evaluate_rows(X)
            F = G[:, [WINDOW_OBJECTIVES.index(o) for o in self.objectives]]
            front = non_dominated(F)
            X, F, G, starts = X[front], F[front], G[front], starts[front]
        else:
            pop = self._evolve(problem, initial, seed)
            front = pop.rank == 0
            X, F = pop.X[front], pop.F[front]
            G, starts = problem.evaluate_rows(X)
        i = pick_member(G, F, self.preference)
        self._evals += problem.n_decoded
        if self.warm_start:
            self._warm = (q.copy(), X)
        order, bl = problem.split(X[i : i + 1])
        order, bl = order[0], bl[0]
        # The in-order decoder starts a prefix of the order at once.
        now_mask = starts[i, order] <= 0.0
        n_now = int(np.argmin(now_mask)) if not now_mask.all() else order.size
        pick = order[:n_now]
        return q[pick], bl[pick]

    def _evolve(self, problem, initial, seed):
        p = self.params
        crossover, mutation = p.operators(crossover_prob=0.5)
        sampling = ScheduleSampling(seeded=p.seeded, levels=p.seed_levels, initial=initial,
                                    heuristics=False, select=False)
        k = max(1, min(p.mating_neighbours or 1, self.pop_size // 2))
        budget = self.time_budget

        def stop(n_gen, elapsed):
            return n_gen >= self.generations or (budget is not None and elapsed >= budget)

        return evolve(problem, pop_size=self.pop_size, sampling=sampling,
                      selection=NeighbourSelection(k), crossover=crossover, mutation=mutation,
                      seed=seed, stop=stop)

    def _initial(self, problem, q):
        """Rows to seed a decision with: the previous front's members that still apply, and
        the waiting jobs shortest (estimate) first and smallest first, every node allowed."""
        J, K = problem.n_jobs, problem.n_clusters
        rows = []
        est, tasks = problem.jobset.runtime, problem.jobset.tasks
        for key in (est, tasks):
            order = np.lexsort((np.arange(J), key)).astype(float)
            rows.append(np.concatenate([order, np.zeros(J * K)]))
        if self._warm is not None:
            old_q, old_X = self._warm
            pos = np.full(int(max(old_q.max(), q.max())) + 1, -1, dtype=np.int64)
            pos[q] = np.arange(J)
            old_orders, old_bls = split(old_X, len(old_q), K)
            n, J_old = old_orders.shape
            jobs = pos[old_q[old_orders]]  # (n, J_old): each old position's job now, -1 gone
            keep = jobs >= 0
            r, c = np.nonzero(keep)
            # Jobs still waiting keep their old relative order; new ones follow in queue order.
            key = np.broadcast_to(J_old + np.arange(J), (n, J)).copy()
            key[r, jobs[r, c]] = c
            orders = np.argsort(key, axis=1, kind="stable").astype(float)
            bls = np.zeros((n, J, K))
            bls[r, jobs[r, c]] = old_bls[r, old_orders[r, c]]
            rows.extend(np.hstack([orders, bls.reshape(n, J * K)]))
        return np.array(rows[: max(2, self.pop_size // 2)])

    def summary(self) -> dict:
        """Decisions made and their cost, for the schedule's ``info``."""
        t = np.asarray(self._times)
        return {"decisions": int(t.size), "decision_mean_s": float(t.mean()) if t.size else 0.0,
                "decision_p95_s": float(np.percentile(t, 95)) if t.size else 0.0,
                "decision_max_s": float(t.max()) if t.size else 0.0,
                "decision_cpu_s": float(self._cpu),
                "ga_evaluations": int(self._evals), "plan_mismatches": int(self._mismatch),
                "fallback_starts": int(self._fallback), "preference": self.preference,
                "objectives": list(self.objectives), "pop_size": self.pop_size,
                "generations": self.generations, "window": self.window,
                "max_pinned": self.max_pinned, "single": self.single, "interval": self.interval,
                "min_change": self.min_change, "skipped_by_interval": int(self._skipped),
                "time_budget": self.time_budget, "seed": self.seed}
