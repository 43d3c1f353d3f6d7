"""Schedules: decoding a chromosome on a federation, and what a schedule holds."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from decoders import federated
from decoders._kernels import exact_dot

from ..errors import InputError
from .jobset import JobSet, apply_kill_option
from .platform import Federation

__all__ = ["Schedule", "Segments", "batch_evaluator", "dispatch_schedule", "evaluate",
           "evaluate_batch",
           "check_chromosome", "check_power",
           "power_profile", "schedule_energy", "BSLD_BOUND",
           "cap_runnable", "start_order"]

#: Bounded slowdown's bound (s): a job shorter than this counts as this long.
BSLD_BOUND = 600.0


class Segments(NamedTuple):
    """The executions of a schedule whose jobs may be preempted, one row per execution in
    the order they ended (arrays of equal length).

    ``job`` indexes the job-set; each execution occupies the job's
    allocation on ``[start, end)``: ``read`` s of restart read, ``compute`` s
    of computation kept (saved by a checkpoint, or completed), ``lost`` s of
    computation lost to the preemption, ``write`` s of checkpoint writes;
    ``preempted`` tells whether it ended by preemption. ``alloc`` (rows x K),
    when given, is each execution's own allocation (a job restarted on the
    federation may land elsewhere); None: the job's allocation of the schedule.
    """

    job: np.ndarray
    start: np.ndarray
    end: np.ndarray
    read: np.ndarray
    compute: np.ndarray
    lost: np.ndarray
    write: np.ndarray
    preempted: np.ndarray
    alloc: np.ndarray | None = None


@dataclass(frozen=True, eq=False)
class Schedule:
    """A decoded schedule (docs/design.md §5 and §9).

    Attributes
    ----------
    jobset : JobSet
    federation : Federation
    order : ndarray of int64, shape (J,)
    blacklist : ndarray of float64, shape (J, K)
    model : str
    start, finish : ndarray of float64, shape (J,)
        Per job, indexed like the JobSet, in s. A job an online policy
        rejected (:meth:`moga.sim.Session.reject`) has a NaN finish, and a
        NaN start unless it ran before a preemption (:attr:`rejected`).
    alloc : ndarray of int64, shape (J, K)
        Tasks of each job in each cluster.
    makespan : float
        ``max(finish) - min(release)``, s.
    energy : float
        Busy plus idle energy of every node over the makespan, J.
    flowtime : float
        ``sum(finish - release)``, s.
    n_relaxed : int
        Jobs whose blacklist could not hold them and was voided.
    n_coalloc : int
        Jobs spread over two or more clusters.
    backfill : str
        ``"none"`` (strict order, or a rule that starts every job that fits
        with no reservation), ``"easy"`` (EASY's reservation), or, for a
        Python policy on a :class:`moga.sim.Session`, its class's ``backfill``
        attribute, ``"n/a"`` when it sets none (it starts jobs in an order of
        its own).
    rule : str
        Allocation rule, ``"fastest"``, ``"greenest"`` or ``"consolidate"``.
    reservation : ndarray of float64, shape (J,)
        Under EASY, each job's first reservation as the blocked head of the
        queue (NaN for jobs that never waited at the head); all NaN otherwise.
    policy : str or None
        The online policy that made it (:func:`moga.simulate`), None for
        a decoded chromosome.
    info : dict
        What the policy reports: ``estimates`` (what it planned with),
        ``events``, ``decision_s`` (time spent deciding), ...
    segments : Segments or None
        For a policy that preempts, every execution of every job (``start``
        is then each job's first start and ``finish`` its completion); None
        when each job ran once, on ``[start, finish)``.
    """

    jobset: JobSet
    federation: Federation
    order: np.ndarray
    blacklist: np.ndarray
    model: str
    start: np.ndarray
    finish: np.ndarray
    alloc: np.ndarray
    makespan: float
    energy: float
    flowtime: float
    n_relaxed: int
    n_coalloc: int
    backfill: str = "none"
    rule: str = "fastest"
    reservation: np.ndarray | None = None
    policy: str | None = None
    info: dict = field(default_factory=dict)
    segments: Segments | None = None

    @property
    def energy_kwh(self) -> float:
        """Energy in kWh."""
        return self.energy / 3.6e6

    @property
    def wait(self) -> np.ndarray:
        """Waiting time per job, ``start - release`` (NaN for a rejected job that never ran)."""
        return self.start - self.jobset.release

    @property
    def rejected(self) -> np.ndarray:
        """Per job, whether it never completed: an online policy rejected it (bool, (J,))."""
        return np.isnan(self.finish)

    @property
    def killed(self) -> np.ndarray:
        """Per job, whether it was killed at its requested time (bool, (J,)): a job of a
        job-set killed at its requests (:meth:`JobSet.kill_at_request`) that ran and was
        not rejected; all False otherwise."""
        return self.jobset.killed & ~self.rejected

    def power_profile(self):
        """The federation's power over time: ``(times, watts)``, a step function.

        ``watts[i]`` is drawn on ``[times[i], times[i + 1])``; the last step
        (back to idle power) starts at the last finish. Every node draws idle
        power, and ``power[j] * power_busy[k]`` while it runs job j on cluster k
        (during each of its :attr:`segments` when it was preempted).
        """
        if self.segments is not None:
            j = self.segments.job
            return power_profile(self.segments.start, self.segments.end, self.execution_alloc(),
                                 self.jobset.power[j], self.federation)
        ran = ~self.rejected
        return power_profile(self.start[ran], self.finish[ran], self.alloc[ran],
                             self.jobset.power[ran], self.federation)

    def execution_energy(self) -> np.ndarray:
        """Energy each execution's nodes draw while it runs, J: per row of :attr:`segments`,
        or per job when the schedule has none (0 for a rejected job that never ran).

        An execution on ``alloc[k]`` nodes of each cluster ``k`` draws
        ``sum_k alloc[k] * max(power * power_busy[k], power_idle[k]) * (end - start)``,
        from the exact times; ``schedule.csv``'s ``consumed_energy`` and
        ``segments.csv``'s are these numbers, and :meth:`summary`'s
        ``jobs_energy_J`` is their sum.
        """
        js, fed = self.jobset, self.federation
        draw = np.maximum(js.power[:, None] * fed.power_busy[None, :], fed.power_idle[None, :])
        if self.segments is not None:
            seg = self.segments
            return (self.execution_alloc() * draw[seg.job]).sum(axis=1) * (seg.end - seg.start)
        run = np.where(self.rejected, 0.0, self.finish - self.start)  # no nodes, no time
        return (self.alloc * draw).sum(axis=1) * run

    def bounded_slowdown(self, bound: float = BSLD_BOUND) -> np.ndarray:
        """Per-job bounded slowdown ``max(1, (F - r) / max(F - S, bound))`` (NaN for a
        rejected job)."""
        dur = np.maximum(self.finish - self.start, bound)
        return np.maximum(1.0, (self.finish - self.jobset.release) / dur)

    def value_earned(self) -> np.ndarray:
        """Per-job value earned at its finish (docs/design.md §6), for a job-set with value
        functions (:func:`moga.value.attach_values`); a ValueError otherwise."""
        js = self.jobset
        if not js.has_values:
            raise ValueError(f"{js.name} has no value functions (attach them with "
                             "moga.value.attach_values)")
        from decoders.value import value_at

        return value_at(self.finish, js.v_start, js.v_final, js.soft, js.hard)

    def summary(self) -> dict:
        """Objectives, counters, the energy drawn by the jobs' nodes while they run
        (``jobs_energy_J``, the sum of :meth:`execution_energy`; ``energy_J`` less it is
        the energy of the nodes while idle), the mean wait and the mean bounded slowdown
        (10-minute bound) as a plain dict; the means are over the completed jobs (not
        the ``n_rejected``; the ``n_killed`` jobs killed at their requested time count, as
        having ended there)."""
        rejected = self.rejected
        ran = ~rejected
        return {
            **({"policy": self.policy} if self.policy else {}),
            "model": self.model, "backfill": self.backfill, "rule": self.rule,
            "n_jobs": len(self.jobset), "makespan_s": self.makespan, "energy_J": self.energy,
            "energy_kWh": self.energy_kwh,
            "jobs_energy_J": float(self.execution_energy().sum()), "flowtime_s": self.flowtime,
            "mean_wait_s": float(self.wait[ran].mean()) if ran.any() else float("nan"),
            "mean_bounded_slowdown": (float(self.bounded_slowdown()[ran].mean()) if ran.any()
                                      else float("nan")),
            "n_relaxed": self.n_relaxed, "n_coalloc": self.n_coalloc,
            "n_rejected": int(rejected.sum()), "n_killed": int(self.killed.sum()),
            **({"value_earned": float(self.value_earned().sum())}
               if self.jobset.has_values else {}),
        }

    def to_dataframe(self):
        """One row per job with Batsim's ``out_jobs.csv`` columns, as a pandas DataFrame
        (see :mod:`moga.model.export`; pandas is imported when called)."""
        from .export import to_dataframe

        return to_dataframe(self)

    def to_csv(self, path) -> None:
        """Write the schedule per job as Batsim's ``out_jobs.csv`` (evalys reads it)."""
        from .export import write_csv

        write_csv(self, path)

    def segments_to_csv(self, path) -> None:
        """Write every execution of a schedule with preemptions as ``segments.csv``
        (:data:`moga.model.export.SEGMENT_COLUMNS`)."""
        from .export import write_segments_csv

        write_segments_csv(self, path)

    def to_swf(self, path) -> None:
        """Write the schedule as an SWF trace with its real wait and run times."""
        from .export import write_swf

        write_swf(self, path)

    def node_assignment(self) -> list[list[np.ndarray]]:
        """Concrete node indices for every job: ``result[j][k]`` holds job j's nodes in cluster k.

        Nodes are handed out lowest free index first; a job's nodes are freed at
        its finish, before any job starting at that instant takes nodes. Used
        for Gantt charts and to check capacity. A preempted job's nodes are
        those of its last execution (:meth:`execution_nodes` gives each).

        Raises
        ------
        RuntimeError
            If a cluster would run more tasks at once than it has nodes.
        """
        if self.segments is None:
            return self._assign(np.arange(len(self.jobset)), self.start, self.finish)
        result = [[np.empty(0, dtype=np.int64)] * self.alloc.shape[1]
                  for _ in range(len(self.jobset))]
        for i, nodes in enumerate(self.execution_nodes()):
            result[int(self.segments.job[i])] = nodes  # executions are in the order they ended
        return result

    def execution_nodes(self) -> list[list[np.ndarray]]:
        """Node indices of every execution: ``result[i][k]`` for row ``i`` of
        :attr:`segments` (of job ``i`` when the schedule has no segments)."""
        if self.segments is None:
            return self.node_assignment()
        return self._assign(self.segments.job, self.segments.start, self.segments.end,
                            self.execution_alloc())

    def execution_alloc(self) -> np.ndarray:
        """Nodes of every execution on each cluster, (rows of :attr:`segments`, K); the
        jobs' allocations when the schedule has no segments."""
        seg = self.segments
        if seg is None:
            return self.alloc
        return self.alloc[seg.job] if seg.alloc is None else seg.alloc

    def _assign(self, job, start, end, alloc=None) -> list[list[np.ndarray]]:
        fed = self.federation
        K = self.alloc.shape[1]
        alloc = self.alloc[job] if alloc is None else alloc
        result = [[np.empty(0, dtype=np.int64) for _ in range(K)] for _ in range(len(job))]
        for k in range(K):
            rows = np.flatnonzero(alloc[:, k] > 0)
            # (time, kind, row): kind 0 = release before kind 1 = start at equal times.
            events = [(end[i], 0, i) for i in rows] + [(start[i], 1, i) for i in rows]
            events.sort()
            is_free = np.ones(int(fed.nodes[k]), dtype=bool)
            n_free = is_free.size
            for t, kind, i in events:
                n = int(alloc[i, k])
                if kind == 0:
                    is_free[result[i][k]] = True
                    n_free += n
                else:
                    if n_free < n:
                        raise RuntimeError(
                            f"cluster {fed.names[k]!r} over capacity at t={t}: job {job[i]} "
                            f"needs {n} nodes, {n_free} free"
                        )
                    nodes = np.flatnonzero(is_free)[:n]  # the lowest free indices
                    is_free[nodes] = False
                    n_free -= n
                    result[i][k] = nodes.astype(np.int64)
        return result


def start_order(start) -> np.ndarray:
    """The jobs by start time, ties by index: a schedule record's ``order`` (int64)."""
    start = np.asarray(start)
    return np.lexsort((np.arange(start.shape[0]), start)).astype(np.int64)


def schedule_energy(release, start, finish, alloc, power, fed: Federation) -> float:
    """Energy of a schedule, J: every node's idle power over the makespan (``max(finish) -
    min(release)``) plus each job's busy increments over its run (docs/design.md §5, §11),
    as the decoders count it."""
    if len(start) == 0:
        return 0.0
    inc = alloc * np.maximum(np.asarray(power)[:, None] * fed.power_busy[None, :]
                             - fed.power_idle[None, :], 0.0)
    makespan = float(np.max(finish) - np.min(release))
    return makespan * fed.idle_power + exact_dot(inc.sum(axis=1), finish - start)


def power_profile(start, finish, alloc, power, fed: Federation):
    """``(times, watts)``: the step function of a schedule's power on ``fed`` (see
    :meth:`Schedule.power_profile`)."""
    inc = alloc * np.maximum(np.asarray(power)[:, None] * fed.power_busy[None, :]
                             - fed.power_idle[None, :], 0.0)
    per_job = inc.sum(axis=1)
    times = np.concatenate([start, finish])
    delta = np.concatenate([per_job, -per_job])
    order = np.argsort(times, kind="stable")
    t_sorted = times[order]
    level = np.cumsum(delta[order])
    # One step per distinct instant: the level after every change at that instant; the
    # cumulative sum leaves rounding residue where the federation is back to idle.
    last = np.r_[t_sorted[1:] != t_sorted[:-1], True]
    level = level[last]
    level[np.abs(level) < 1e-9 * fed.peak_power] = 0.0
    return t_sorted[last], fed.idle_power + level


def check_chromosome(order, blacklist, J: int, K: int) -> None:
    """One chromosome's shapes: ``order`` (J,) and ``blacklist`` (J, K); a ValueError otherwise.

    A population given where one chromosome is expected is refused rather than
    decoded row by row (use the batch form for populations).
    """
    if np.ndim(order) != 1 or np.shape(order)[0] != J:
        raise ValueError(f"order must have shape ({J},) (one permutation of the job positions), "
                         f"got shape {np.shape(order)}; decode populations with evaluate_batch")
    if np.shape(blacklist) != (J, K):
        raise ValueError(f"blacklist must have shape ({J}, {K}) (jobs x clusters), got shape "
                         f"{np.shape(blacklist)}; decode populations with evaluate_batch")


def _defaults(js: JobSet, fed: Federation, order, blacklist):
    J, K = len(js), fed.n_clusters
    order = np.arange(J) if order is None else order
    blacklist = np.zeros((J, K)) if blacklist is None else blacklist
    check_chromosome(order, blacklist, J, K)
    return order, blacklist


def dispatch_schedule(js: JobSet, fed: Federation, method: str, *, model: str = "fluid",
                      rule: str = "fastest", estimates: str = "exact",
                      weight=None) -> Schedule:
    """A whole-run dispatcher of the federated loop (:func:`decoders.federated.dispatch`:
    ``"easy"``, ``"prb"``, ``"saf"``) on ``js`` released at its release times, under
    ``fed``'s caps, as a :class:`Schedule`.

    Parameters
    ----------
    js : JobSet
    fed : Federation
    method : str
        A method of :data:`decoders.federated.DISPATCH_METHODS`.
    model, rule : str
        As in :func:`evaluate`.
    estimates : {"exact", "requested"}
        What the dispatcher plans with (EASY's reservation, PRB's ties, SAF's areas).
    weight : array_like of float, shape (J,), optional
        PRB's queue weights; default 1.
    """
    if estimates not in ("exact", "requested"):
        raise ValueError(f"estimates must be 'exact' or 'requested', got {estimates!r}")
    planned = js.requested if estimates == "requested" else js.runtime
    d = federated.dispatch_inputs(
        federated.inputs(js, fed, rule=rule, estimates=estimates, check=False), method,
        weight=weight, tie=js.tasks * planned, model=model)
    return Schedule(jobset=js, federation=fed, order=start_order(d.start),
                    blacklist=np.zeros_like(d.alloc, dtype=float), model=model, start=d.start,
                    finish=d.finish, alloc=d.alloc, makespan=d.makespan, energy=d.energy,
                    flowtime=d.flowtime, n_relaxed=0, n_coalloc=d.n_coalloc,
                    backfill="easy" if method == "easy" else "none", rule=rule)


def evaluate(js: JobSet, fed: Federation, order=None, blacklist=None, model: str = "fluid",
             backfill: str = "none", rule: str = "fastest", estimates: str = "exact", *,
             kill_at_request: bool = False) -> Schedule:
    """Decode one chromosome of ``js`` on ``fed`` into a :class:`Schedule`.

    Parameters
    ----------
    js : JobSet
    fed : Federation
    order : array_like of int, shape (J,), optional
        A permutation of ``range(J)``; default the submit order (``0..J-1``).
    blacklist : array_like of float, shape (J, K), optional
        Entries in [0, 1]; default all zero (no blacklist).
    model : {"fluid", "at_start"}
    backfill : {"none", "easy"}
        Strict order (the MOGA decoder) or EASY backfilling over the queue in ``order``.
    rule : {"fastest", "greenest", "consolidate"}
        Allocation rule.
    estimates : {"exact", "requested"}
        What EASY plans with: the real run times (default) or the requested
        times (``js.requested``, the users' walltime estimates, as Slurm and
        Cobalt plan); the jobs run their real time either way. Used by
        ``backfill="easy"`` only.
    kill_at_request : bool
        Kill every job when it has run for its requested time
        (:meth:`JobSet.kill_at_request`, the schedule's job-set); default
        False, the MOGA paper's model, in which jobs run to completion.

    The job-set's power factors and the federation's power caps, when it has
    them, are honoured (docs/design.md §11): no instant of the schedule draws
    more than the cap.

    Returns
    -------
    Schedule
    """
    js = apply_kill_option(js, kill_at_request)
    _check_types(js, fed)
    order, blacklist = _defaults(js, fed, order, blacklist)
    try:
        r = federated.decode(js, fed, order, blacklist, model=model, check=False,
                             backfill=backfill, rule=rule, estimates=estimates)
    except federated.CapInfeasibleError as e:
        raise cap_error(e, js, fed) from None
    order = np.array(order, dtype=np.int64)
    blacklist = np.array(blacklist, dtype=np.float64)
    for a in (order, blacklist, r.start, r.finish, r.alloc, r.reservation):
        a.setflags(write=False)
    return Schedule(jobset=js, federation=fed, order=order, blacklist=blacklist, model=model,
                    start=r.start, finish=r.finish, alloc=r.alloc, makespan=r.makespan,
                    energy=r.energy, flowtime=r.flowtime, n_relaxed=r.n_relaxed,
                    n_coalloc=r.n_coalloc, backfill=backfill, rule=rule,
                    reservation=r.reservation)


def evaluate_batch(js: JobSet, fed: Federation, orders, blacklists, model: str = "fluid",
                   backfill: str = "none", rule: str = "fastest",
                   start_orders: bool = False, starts: bool = False,
                   allocations: bool = False, finishes: bool = False) -> federated.BatchDecode:
    """Decode a population in parallel: ``orders`` (P, J), ``blacklists`` (P, J, K).

    Options as in :func:`evaluate`; a federation with a power cap
    (:meth:`Federation.with_cap`) is honoured. Returns the objectives and counters per
    individual (:class:`decoders.BatchDecode`), with ``start_orders`` each
    schedule's start order (jobs by start time, ties in the chromosome's order),
    with ``starts`` each job's start time (P, J), with ``finishes`` each job's finish
    time (P, J), and with ``allocations`` each schedule's nodes per job and cluster
    (``alloc``, P, J, K).
    """
    return batch_evaluator(js, fed, model=model, backfill=backfill, rule=rule)(
        orders, blacklists, start_orders=start_orders, starts=starts, allocations=allocations,
        finishes=finishes)


def batch_evaluator(js: JobSet, fed: Federation, model: str = "fluid", backfill: str = "none",
                    rule: str = "fastest"):
    """:func:`evaluate_batch` of ``js`` on ``fed`` set up once: a callable
    ``(orders, blacklists, start_orders=False, starts=False, allocations=False,
    finishes=False)`` that returns what :func:`evaluate_batch` returns, for callers that
    decode one job-set many times (:class:`decoders.federated.BatchDecoder`)."""
    _check_types(js, fed)
    try:
        bundle = federated.inputs(js, fed, rule=rule, check=False)
    except federated.CapInfeasibleError as e:
        raise cap_error(e, js, fed) from None
    return federated.BatchDecoder.of(bundle, model=model, backfill=backfill)


def cap_error(e, js: JobSet, fed: Federation, what: str = "") -> InputError:
    """An :class:`~moga.errors.InputError` for ``e`` (a ``CapInfeasibleError``) that names
    the job by its id in the trace and says how many jobs no cap can run."""
    j = e.job
    caps = []
    if fed.power_cap is not None:
        caps.append(f"federation {fed.power_cap:g} W ({fed.power_cap / fed.peak_power:.3g} x "
                    "peak)")
    if fed.cluster_caps is not None:
        caps += [f"{n} {c:g} W" for n, c in zip(fed.names, fed.cluster_caps, strict=True)
                 if np.isfinite(c)]
    more = f" ({e.count} jobs of {js.name} in all)" if e.count > 1 else ""
    return InputError(
        f"{what}job id {int(js.id[j])} (position {j} of {js.name}: {int(js.tasks[j])} tasks, "
        f"power factor {js.power[j]:g}) cannot run under the power cap ({'; '.join(caps)}) "
        f"even on an idle federation{more}; raise the cap or drop the job")


def check_power(js: JobSet, fed: Federation, what: str = "") -> None:
    """Refuse, before any work, a capped federation on which some job of ``js`` can never run.

    The error names the first such job by its id, the cap, and ``what`` (a prefix such as
    ``"cap 0.4 x peak: "``).
    """
    _check_types(js, fed)
    if not fed.capped:
        return
    try:
        federated.inputs(js, fed, check=False)
    except federated.CapInfeasibleError as e:
        raise cap_error(e, js, fed, what) from None


def cap_runnable(js: JobSet, fed: Federation) -> np.ndarray:
    """Which jobs of ``js`` can ever run under ``fed``'s power caps (all, uncapped): the
    jobs :func:`check_power` would name, as a mask to drop and count them."""
    _check_types(js, fed)
    return federated.runnable_under_cap(js.tasks, js.power, fed.nodes, fed.power_busy,
                                        fed.power_idle, fed.power_cap, fed.cluster_caps)


def _check_types(js, fed):
    if not isinstance(js, JobSet):
        raise TypeError(f"expected a moga.JobSet, got {type(js).__name__}")
    if not isinstance(fed, Federation):
        raise TypeError(f"expected a moga.Federation, got {type(fed).__name__}")
