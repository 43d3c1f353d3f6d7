"""Power-capped online dispatchers: EASY, PRB and the hybrid CP dispatcher.

docs/design.md §11. All three run on the federated event loop
(:func:`decoders.federated.dispatch`) in release mode: jobs arrive at their release,
and at every arrival or finish the dispatcher starts what it chooses. No
instant draws more than the federation's power cap.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import time
import warnings
from dataclasses import dataclass

import numpy as np

from decoders._validate import _idle_least_power
from decoders.federated import CapInfeasibleError

from ..bounds import BOUNDS
from ..model.jobset import POWER_RANGE, JobSet
from ..model.platform import Federation
from ..model.schedule import Schedule, cap_error, dispatch_schedule, schedule_energy, start_order
from ..sim import OnlinePolicy, run_policy
from .cp import CPOptions, serial_schedule, solve_relaxed
from .metrics import PowercapMetrics, powercap_metrics
from .queues import Queues

__all__ = ["DISPATCHERS", "HybridCP", "PREDICTED_RANGE", "PowercapResult", "predict_power",
           "run_dispatcher"]


@dataclass(frozen=True, eq=False)
class PowercapResult(Schedule):
    """One dispatcher's schedule under a power cap: the one schedule record
    (:class:`~moga.model.schedule.Schedule`) with the cap study's metrics beside it.

    Attributes
    ----------
    policy : str
        The dispatcher (``"easy"``, ``"prb"`` or ``"hybrid"``).
    federation : Federation
        With its cap (``federation.power_cap``).
    metrics : PowercapMetrics
    info : dict
        ``wall_s`` (seconds the dispatch took), ``estimates``, ``power_error``,
        ``power_margin`` (and ``power_seed`` with an error); the hybrid adds
        ``events`` (mapping events), ``solves`` (CP-SAT calls), ``fallbacks``
        (events where no solution came in time and PRB's order was used),
        ``skipped`` (events where nothing could start, or all waiting jobs
        together fit the pooled nodes and power now, so the relaxed optimum is
        known without a solve), ``cuts`` (conflict sets fed back to the solver,
        ``CPOptions.passes``), ``solve_seconds`` (each solve's wall time),
        ``decision_s`` and its options.

    The other attributes are :class:`~moga.model.schedule.Schedule`'s; ``order``
    is the start order.
    """

    metrics: PowercapMetrics | None = None

    @property
    def dispatcher(self) -> str:
        """The dispatcher's name (:attr:`policy`)."""
        return self.policy

    @property
    def wall_time(self) -> float:
        """Seconds the dispatch took (``info["wall_s"]``)."""
        return self.info["wall_s"]

    def schedule(self) -> Schedule:
        """The result itself (it is a :class:`~moga.model.schedule.Schedule`); deprecated."""
        warnings.warn("PowercapResult is a Schedule now: use it directly instead of "
                      ".schedule()", DeprecationWarning, stacklevel=2)
        return self


#: Range the predicted power factors are clipped to (that of the drawn factors).
PREDICTED_RANGE = POWER_RANGE


def predict_power(power, error: float, seed: int = 0) -> np.ndarray:
    """Predicted power factors: ``power * exp(N(0, error))``, clipped to :data:`PREDICTED_RANGE`.

    The error model of a dispatcher that knows a job's power only from a
    prediction (of its application and size, say): a multiplicative
    log-normal error, ``error`` its log-space standard deviation (0.1 is
    about 10% off on average), independent between jobs, drawn from stream 2
    of ``seed`` (``numpy.random.default_rng([seed, 2])``; the power factors
    themselves come from stream 1).
    """
    error = BOUNDS["power_error"].check("power_error", error)
    power = np.asarray(power, dtype=np.float64)
    if error == 0:
        return power.copy()
    rng = np.random.default_rng([int(seed), 2])
    return np.clip(power * np.exp(rng.normal(0.0, float(error), power.shape)), *PREDICTED_RANGE)


def run_dispatcher(js: JobSet, fed: Federation, dispatcher: str = "prb",
                   queues: Queues | None = None, model: str = "fluid", rule: str = "fastest",
                   cp: CPOptions | None = None, estimates: str = "exact",
                   power_error: float = 0.0, power_seed: int = 0,
                   power_margin: float = 0.0) -> PowercapResult:
    """Dispatch ``js`` (release mode) on ``fed`` under its power cap.

    Parameters
    ----------
    js : JobSet
        Released at ``js.release`` (extract it with ``batch=False``); its
        ``power`` factors and ``requested`` times are used.
    fed : Federation
        With a cap (:meth:`Federation.with_cap`), or uncapped.
    dispatcher : {"easy", "prb", "hybrid"}
    queues : Queues, optional
        PRB's and the hybrid's queue weights (and the weighted queue time);
        default :class:`Queues` ().
    model : {"fluid", "at_start"}
    rule : {"fastest", "greenest", "consolidate"}
    cp : CPOptions, optional
        The hybrid's use of CP-SAT; default :class:`CPOptions` ().
    estimates : {"exact", "requested"}
        What the dispatchers plan with: the real run times (default) or the
        requested times (``js.requested``), as a production scheduler does:
        EASY's reservation and backfill test, PRB's tie order (duration x
        nodes) and the hybrid's model durations and running jobs' ends. The
        jobs run their real time either way.
    power_error : float
        0 (default): the dispatchers know each job's power factor. Above 0:
        they plan on predicted factors (:func:`predict_power` with this error
        and ``power_seed``), for their power checks, the least-power
        allocation and the hybrid's model, while the jobs draw their real
        power: the metrics (energy, peak power, time above the cap) are those
        of the real draw, so the cap can be exceeded.
    power_seed : int
        Seed of the prediction errors.
    power_margin : float
        In [0, 1): the dispatchers keep below ``(1 - power_margin)`` times
        each cap (a safety margin against prediction errors), the federation
        cap never lowered below what the most demanding job needs alone on
        the idle federation; the metrics are judged against the caps
        themselves. Default 0.

    Returns
    -------
    PowercapResult
        A :class:`~moga.model.schedule.Schedule` with the study's metrics beside it.
    """
    if estimates not in ("exact", "requested"):
        raise ValueError(f"estimates must be 'exact' or 'requested', got {estimates!r}")
    queues = Queues() if queues is None else queues
    cp = CPOptions() if cp is None else cp
    run = DISPATCHERS.get(dispatcher) if isinstance(dispatcher, str) else None
    if run is None:
        raise ValueError(f"unknown dispatcher {dispatcher!r}; choose one of {list(DISPATCHERS)}")
    if not isinstance(js, JobSet) or not isinstance(fed, Federation):
        raise TypeError("run_dispatcher takes a moga.JobSet and a moga.Federation")
    real, judged = js, fed
    power_margin = BOUNDS["power_margin"].check("power_margin", power_margin)
    if BOUNDS["power_error"].check("power_error", power_error):
        # The dispatchers see predicted factors; the metrics use the real ones.
        js = dataclasses.replace(js, power=predict_power(js.power, power_error, power_seed))
    if power_margin and fed.capped:
        fed = _with_margin(js, fed, power_margin)
    t0 = time.perf_counter()
    try:
        d = run(js, fed, queues=queues, cp=cp, model=model, rule=rule, estimates=estimates)
    except CapInfeasibleError as e:  # the kernels' check, named by the job's id here
        what = ("predicted power: " if power_error else "") + (
            f"caps less a {power_margin:g} margin: " if power_margin else "")
        raise cap_error(e, js, fed, what) from None
    info = {**d.info, "wall_s": time.perf_counter() - t0, "estimates": estimates,
            "power_error": float(power_error), "power_margin": float(power_margin)}
    energy = d.energy
    if power_error:
        info["power_seed"] = int(power_seed)
        energy = schedule_energy(real.release, d.start, d.finish, d.alloc, real.power, judged)
    metrics = powercap_metrics(real, judged, d.start, d.finish, d.alloc, energy, queues)
    return PowercapResult(
        jobset=real, federation=judged, order=start_order(d.start),
        blacklist=np.zeros_like(d.alloc, dtype=float), model=model, start=d.start,
        finish=d.finish, alloc=d.alloc, makespan=metrics.makespan, energy=metrics.energy,
        flowtime=float(np.sum(d.finish - real.release)), n_relaxed=0,
        n_coalloc=int(np.sum((d.alloc > 0).sum(axis=1) > 1)),
        backfill="easy" if dispatcher == "easy" else "none", rule=rule, policy=dispatcher,
        info=info, segments=d.segments, metrics=metrics)


def _with_margin(js: JobSet, fed: Federation, margin: float) -> Federation:
    """``fed`` with each cap lowered by ``margin`` (a share of it), the federation cap never
    below what the most demanding job of ``js`` needs alone on the idle federation (its
    least-power allocation at its planned power factor), so that every job can still run."""
    keep = 1.0 - margin
    cap = fed.power_cap
    if cap is not None:
        need = _idle_least_power(js.tasks, js.power, fed.nodes, fed.power_busy, fed.power_idle,
                                 np.full(fed.n_clusters + 1, np.inf))
        cap = min(cap, max(cap * keep, fed.idle_power + float(need.max())))
    return fed.with_cap(cap, None if fed.cluster_caps is None else fed.cluster_caps * keep)


def _prb_rank(queued, t, js, weight, tierank):
    key = weight[queued] * (t - js.release[queued] + 1.0)
    return queued[np.lexsort((tierank[queued], -key))]


def _kernel_dispatch(method: str, js: JobSet, fed: Federation, *, queues: Queues, cp: CPOptions,
                     model: str, rule: str, estimates: str) -> Schedule:
    """EASY or PRB (``method``) in one call of the federated loop's dispatch kernel."""
    return dispatch_schedule(js, fed, method, model=model, rule=rule, estimates=estimates,
                             weight=queues.weights(js.requested))


def _hybrid_dispatch(js: JobSet, fed: Federation, *, queues: Queues, cp: CPOptions, model: str,
                     rule: str, estimates: str) -> Schedule:
    """The hybrid CP dispatcher (:class:`HybridCP`) on a :class:`~moga.sim.Session`."""
    return run_policy(HybridCP(queues, cp), js, fed, model=model, rule=rule, estimates=estimates)


#: The dispatchers by name: ``run(js, fed, *, queues, cp, model, rule, estimates) ->
#: Schedule`` of each.
DISPATCHERS = {
    "easy": functools.partial(_kernel_dispatch, "easy"),
    "prb": functools.partial(_kernel_dispatch, "prb"),
    "hybrid": _hybrid_dispatch,
}


class HybridCP(OnlinePolicy):
    """The hybrid dispatcher: at each event CP-SAT schedules the waiting jobs (relaxed model),
    and the PRB mapper starts, in PRB's rank order, those it schedules now and that fit.

    Events are the arrivals and finishes only: a job the solver starts later
    waits for the next one, where the model is solved afresh (a start the
    solver places between events would rest on its optimistic durations). It
    plans on the session's estimates (:attr:`moga.sim.Session.estimate`: exact
    or requested run times).

    Parameters
    ----------
    queues : Queues, optional
        PRB's queue weights; default :class:`Queues` ().
    cp : CPOptions, optional
        The use of CP-SAT; default :class:`CPOptions` ().

    Its :meth:`summary` counts ``events``, ``solves``, ``fallbacks``,
    ``skipped`` and ``cuts``, lists ``solve_seconds`` and gives the options
    (see :class:`PowercapResult`).
    """

    name = "hybrid"

    def __init__(self, queues: Queues | None = None, cp: CPOptions | None = None):
        self.queues = Queues() if queues is None else queues
        self.cp = CPOptions() if cp is None else cp
        self._stats: dict = {}

    def reset(self, session) -> None:
        js, fed = session.jobset, session.federation
        J = len(js)
        self._weight = self.queues.weights(js.requested)
        tie = js.tasks * session.estimate
        self._tierank = np.empty(J, dtype=np.int64)
        self._tierank[np.lexsort((np.arange(J), tie))] = np.arange(J)
        # Relaxed durations: on the fastest cluster; relaxed power: the least increment per node.
        self._dur = session.estimate * ((1.0 - js.sigma) / fed.speed.max() + js.sigma)
        self._inc = np.maximum(js.power[:, None] * fed.power_busy[None, :]
                               - fed.power_idle[None, :], 0.0)
        self._least = js.tasks * self._inc.min(axis=1)
        self._budget = math.inf if fed.power_cap is None else fed.power_cap - fed.idle_power
        cp = self.cp
        self._stats = {"events": 0, "solves": 0, "fallbacks": 0, "skipped": 0, "cuts": 0,
                       "solve_seconds": [], "window": cp.window, "time_limit": cp.time_limit,
                       "passes": cp.passes}

    def decide(self, session) -> None:
        s, js, cp, stats = session, session.jobset, self.cp, self._stats
        weight, least, inc, budget = self._weight, self._least, self._inc, self._budget
        t = s.now
        stats["events"] += 1
        queued = s.queued()
        listed = queued
        if queued.size >= 2:
            ranked = _prb_rank(queued, t, js, weight, self._tierank)
            cand = ranked[: cp.window]
            free = int(s.free.sum())
            room = budget - float(s.power_used[-1])
            if js.tasks[cand].min() > free or least[cand].min() > room:
                stats["skipped"] += 1  # nothing can start now
                listed = cand[:0]
            elif js.tasks[queued].sum() <= free and least[queued].sum() <= room:
                stats["skipped"] += 1  # all can start now: the relaxed optimum starts all at 0
                listed = ranked
            else:
                run, fin = s.running()
                run_inc = (s.allocation[run] * inc[run]).sum(axis=1)
                args = (self._dur[cand], js.tasks[cand], least[cand])
                running = (fin - t, js.tasks[run], run_inc)
                total = s.federation.total_nodes
                hint = serial_schedule(range(cand.size), *args, total, budget, *running)
                cuts, good = [], None
                for p in range(cp.passes):
                    sol = solve_relaxed(*args, weight[cand], total, budget, *running, hint=hint,
                                        options=cp, cuts=cuts)
                    stats["solves"] += 1
                    stats["solve_seconds"].append(sol.seconds)
                    if sol.start is None:  # no solution in time with the cuts: keep the last
                        break
                    good = sol
                    now = np.flatnonzero(sol.start == 0)
                    if p + 1 == cp.passes or now.size < 2 or \
                            s.would_start(cand[now]).size == now.size:
                        break
                    cuts.append(now)  # they conflict on the real federation: not all at once
                    stats["cuts"] += 1
                if good is None:
                    stats["fallbacks"] += 1
                    listed = ranked
                else:
                    # The solver's "start now" jobs, in its order; the others are
                    # reconsidered at the next arrival or finish, with a fresh solve.
                    listed = cand[good.start == 0]
        s.start(listed)

    def summary(self) -> dict:
        return {**self._stats, "solve_seconds": np.array(self._stats.get("solve_seconds", []))}
