"""The Python seam of the simulation core: the federated event loop, one event at a time.

A :class:`Session` runs the same Numba event loop as the decoders and the
kernel dispatchers (:mod:`decoders.federated`), calling its steps
(:mod:`decoders.steps`) directly: jobs arrive at their
release, nodes are allocated by the allocation rule (fastest or greenest
clusters first, co-allocation across clusters, the power caps of the
federation honoured), execution follows the slowdown model. Between events
a policy written in Python reads the queue and the running jobs and starts
the jobs it chooses; the session then advances to the next arrival or
finish. The hybrid CP dispatcher and users' own policies run on it, in the
style of batsim-py's ``proceed_time`` with the scheduler outside.

Planning on estimates: what a policy sees of the running jobs' ends, and of
the queued jobs' lengths (:attr:`Session.estimate`), is the requested
(wall-clock limit) time by default, as Slurm, Cobalt, AccaSim and Batsim
plan; the jobs still run their real time. ``estimates="exact"`` shows the
real run times.
"""

from __future__ import annotations

import math

import numpy as np

from decoders import steps
from decoders.federated import CapInfeasibleError, Dispatch, inputs, model_code

from ..errors import InputError
from ..model.jobset import JobSet
from ..model.platform import Federation
from ..model.schedule import Schedule, Segments, cap_error, schedule_energy, start_order
from ..validation import check_number

__all__ = ["ESTIMATES", "PolicyStalled", "Session"]

#: What policies plan with: the requested times, or the exact run times.
ESTIMATES = ("requested", "exact")

#: The largest restart work :meth:`Session.preempt` takes, s on a speed-1.0 node (the
#: bound on times that traces accept).
MAX_RESTART = 1e10


def _positions(jobs, verb: str, n: int | None = None) -> np.ndarray:
    """``jobs`` as a 1-D int64 array of distinct job positions.

    A ValueError naming ``verb`` for any other dtype or shape, a repeated
    position, or (given the job-set's size ``n``) a position outside it: a job
    is started, stopped or rejected once per call.
    """
    listed = np.atleast_1d(np.asarray(jobs))
    if listed.ndim != 1:
        raise ValueError(f"{verb} takes a 1-D sequence of job positions, got shape "
                         f"{listed.shape}")
    if listed.size and listed.dtype.kind not in "iu":
        raise ValueError(f"{verb} takes job positions (integers), got dtype {listed.dtype}")
    listed = listed.astype(np.int64)
    if n is not None:
        out = (listed < 0) | (listed >= n)
        if out.any():
            raise ValueError(f"{verb}: {int(listed[out][0])} is not a job of the set "
                             f"(positions 0 to {n - 1})")
    uniq, counts = np.unique(listed, return_counts=True)
    if (counts > 1).any():
        raise ValueError(f"{verb} got job {int(uniq[counts > 1][0])} twice")
    return listed


class PolicyStalled(RuntimeError):
    """A policy left jobs waiting with nothing running and no arrival to come."""


class Session:
    """The federated event loop driven from Python (docs/guide/policies.md).

    Parameters
    ----------
    jobset : JobSet
        The jobs; each arrives at its ``release`` (all at 0 for a batch job-set).
    federation : Federation
        The platform, with its power caps if it has them.
    model : {"fluid", "at_start"}
        Execution model (see :mod:`decoders.federated`).
    rule : {"fastest", "greenest", "consolidate"}
        Allocation rule of :meth:`start`.
    estimates : {"requested", "exact"}
        What :attr:`estimate` and :meth:`running` report: the requested times
        (``jobset.requested``, default) or the real run times.

    Notes
    -----
    Use::

        s = Session(js, fed)
        while not s.done:
            s.start(pick(s.queued()))   # any number of calls per event
            s.advance()
        schedule = s.result()
    """

    def __init__(self, jobset: JobSet, federation: Federation, *, model: str = "fluid",
                 rule: str = "fastest", estimates: str = "requested"):
        if not isinstance(jobset, JobSet):
            raise TypeError(f"Session takes a moga.JobSet, got {type(jobset).__name__}")
        if not isinstance(federation, Federation):
            raise TypeError(f"Session takes a moga.Federation, got {type(federation).__name__}")
        if estimates not in ESTIMATES:
            raise ValueError(f"estimates must be one of {list(ESTIMATES)}, got {estimates!r}")
        if len(jobset) == 0:
            raise InputError(f"{jobset.name} has no jobs to simulate")
        self.jobset, self.federation = jobset, federation
        self.model, self.rule, self.estimates = model, rule, estimates
        self._code = model_code(model)
        try:
            bundle = inputs(jobset, federation, rule=rule, check=False, estimates=estimates)
        except CapInfeasibleError as e:
            raise cap_error(e, jobset, federation) from None
        # The loop reads read-only views (the steps' argument types) of what :meth:`preempt`
        # changes (a restarted job's run time, ``_runtime``) and :meth:`start` sets for one
        # call (the blacklist rows of the listed jobs, ``_bl``).
        c = steps.core(bundle, easy=False)  # no candidate index: start_easy scans
        self._jobs, self._plat, self._st, self._out = c.jobs, c.plat, c.st, c.out
        self._est = None  # requested: what start_easy's reservation plans with (only it)
        if estimates == "requested":
            self._est = np.array(bundle.jobs.est)
            est_view = self._est.view()
            est_view.setflags(write=False)
            self._jobs = self._jobs._replace(est=est_view)
        self._runtime, self._bl, self._bl_view = c.run_w, c.bl_rows, c.bl
        self._easy = None  # start_easy's table and work arrays, made on its first call
        steps.init(self._jobs, self._plat, self._st, self._out, c.order)
        est = jobset.requested if estimates == "requested" else jobset.runtime
        self._estimate = np.array(est, dtype=np.float64)
        self._estimate.setflags(write=False)
        self._scale = self._estimate / jobset.runtime
        self.events = 0
        # Preemption: the executions stopped so far, each job's first start, and the
        # restart work (s on a speed-1.0 node) its current execution began with.
        self._stopped = []
        self._first = np.full(len(jobset), np.nan)
        self._read = np.zeros(len(jobset))
        self._rejected = np.zeros(len(jobset), dtype=bool)
        self._t = float(jobset.release.min())
        self._begin(self._t)

    def _begin(self, t: float) -> None:
        self._t = float(steps.begin(float(t), self._code, self._jobs, self._plat, self._st,
                                    self._out))
        self.events += 1

    def _map(self, listed) -> float:
        """Start the queued jobs ``listed`` (int64) in order where they fit now; returns the
        next finish or arrival."""
        listed = np.ascontiguousarray(listed, dtype=np.int64)
        return float(steps.map(self._t, self._code, self._jobs, self._plat, self._st, self._out,
                               self._bl_view, listed, listed.shape[0]))

    @property
    def now(self) -> float:
        """The time of the current event, s."""
        return self._t

    @property
    def done(self) -> bool:
        """True once every job has started or been rejected."""
        return steps.n_settled(self._st) == len(self.jobset)

    @property
    def estimate(self) -> np.ndarray:
        """What the policy plans with: each job's run time on a speed-1.0 node, s (read-only):
        the requested time, or the real one under ``estimates="exact"``."""
        return self._estimate

    def queued(self) -> np.ndarray:
        """The waiting jobs (positions in the job-set), in arrival order (a copy)."""
        return steps.queued(self._st)

    def running(self) -> tuple[np.ndarray, np.ndarray]:
        """``(jobs, planned finish)`` of the running jobs.

        The planned finish is the start plus the predicted duration scaled by
        the estimate (``estimate / runtime``), never before :attr:`now`: a job
        that overruns its request is planned to end now.
        """
        run, fin = steps.running(self._st)
        start = self._out.start[run]
        planned = start + (fin - start) * self._scale[run]
        return run, np.maximum(planned, self._t)

    def current_start(self, jobs) -> np.ndarray:
        """When the current execution of each of these running jobs started, s (a restarted
        job's restart; its first start is in the result's ``start``)."""
        listed = _positions(jobs, "current_start", len(self.jobset))
        self._check_running(listed, "current_start")
        return self._out.start[listed].copy()

    @property
    def free(self) -> np.ndarray:
        """Free nodes per cluster (a copy)."""
        return steps.free(self._st)

    @property
    def power_used(self) -> np.ndarray:
        """Power the running jobs add to idle power, per cluster then overall, W (a copy)."""
        return steps.power_used(self._st)

    @property
    def allocation(self) -> np.ndarray:
        """Nodes of each job on each cluster, (J, K), zero for jobs not started (a read-only
        view: it changes as jobs start)."""
        alloc = self._out.alloc.view()
        alloc.setflags(write=False)
        return alloc

    def start(self, jobs, blacklist=None) -> np.ndarray:
        """Start the given queued jobs now, in that order, each where it fits (nodes and power).

        Parameters
        ----------
        jobs : array_like of int
            Positions of waiting jobs.
        blacklist : array_like of float, shape (len(jobs), K), optional
            Each job's blacklist fractions (docs/design.md §4): job ``jobs[i]``
            may use ``N_k - floor(blacklist[i, k] * N_k)`` nodes of cluster
            ``k``, the allocation rule choosing among them; a blacklist that
            leaves fewer nodes than the job's tasks is void, as in the decoders.
            Default: every node allowed.

        Returns the jobs that started; a job that does not fit now stays queued.

        Raises
        ------
        ValueError
            If a job is not waiting (not arrived yet, already started, or not a
            position of the job-set), or the blacklist has the wrong shape or
            values outside [0, 1].
        """
        listed = _positions(jobs, "start", len(self.jobset))
        if listed.size == 0:
            return listed
        bl = None
        if blacklist is not None:
            try:
                bl = np.asarray(blacklist, dtype=np.float64)
            except (TypeError, ValueError):
                raise ValueError("blacklist must hold numbers (fractions in [0, 1]), got "
                                 f"{np.asarray(blacklist).dtype}") from None
            K = self.federation.n_clusters
            if bl.shape != (listed.size, K):
                raise ValueError(f"blacklist must have shape ({listed.size}, {K}) (one row per "
                                 f"job, one column per cluster), got {bl.shape}")
            bad_bl = ~((bl >= 0) & (bl <= 1))
            if bad_bl.any():
                i, k = np.argwhere(bad_bl)[0]
                raise ValueError(f"blacklist of job {int(listed[i])} on cluster "
                                 f"{self.federation.names[k]!r} is {bl[i, k]!r}, not in [0, 1]")
        self._check_waiting(listed)
        before = steps.status(self._st)[listed]
        if bl is None:
            self._map(listed)
        else:
            self._bl[listed] = bl
            self._map(listed)
            self._bl[listed] = 0.0  # a blacklist holds for this call only
        now = listed[(steps.status(self._st)[listed] == 1) & (before == 0)]
        self._first[now] = np.where(np.isnan(self._first[now]), self._t, self._first[now])
        return now

    def start_easy(self, jobs, backfill: str = "easy") -> np.ndarray:
        """EASY backfilling over the given queued jobs, in that order: the kernel's step
        that users' priority rules run (:class:`moga.sim.PriorityRule`).

        Jobs start in the given order while they fit now (nodes and power); the
        first that does not (the head) gets a reservation at the earliest time the
        running jobs' planned ends (on :attr:`estimate`) leave its nodes and power,
        and each later listed job starts only if it fits now and is planned to end by
        the reservation or leaves the head enough nodes and power then. With
        ``backfill="none"`` the jobs after the head wait. Every node is allowed (no
        blacklist). Returns the jobs that started.

        Raises
        ------
        ValueError
            If a job is not waiting, or a position repeats.
        """
        from decoders import priority

        if backfill not in priority.BACKFILL:
            raise ValueError(f"backfill must be one of {list(priority.BACKFILL)}, got "
                             f"{backfill!r}")
        listed = _positions(jobs, "start_easy", len(self.jobset))
        if listed.size == 0:
            return listed
        self._check_waiting(listed)
        J, K = len(self.jobset), self.federation.n_clusters
        if self._easy is None:  # EASY's allowance table and ranks, made on first use
            st = priority.with_scan(self._st, J, K)
            priority.init_allowances(self._jobs, self._plat, st, self._bl_view)
            self._easy = (st, np.zeros(J), np.empty(J, dtype=np.int64))
            self._st = st
        st, key, work = self._easy
        key[listed] = np.arange(listed.size, dtype=np.float64)
        work[:listed.size] = listed
        before = st.queue.started[listed].copy()
        priority.easy_listed(self._t, self._code, self._jobs, self._plat, st, self._out,
                             self._bl_view, work, listed.size, key,
                             priority.BACKFILL[backfill])
        now = listed[(st.queue.started[listed] == 1) & (before == 0)]
        self._first[now] = np.where(np.isnan(self._first[now]), self._t, self._first[now])
        return now

    def _check_waiting(self, listed) -> None:
        """A ValueError naming the first of ``listed`` (int64) that is not waiting: arrived
        (the loop queues a job once its release is due), not started and not rejected."""
        bad = (listed < 0) | (listed >= len(self.jobset))
        ok = listed[~bad]
        bad[~bad] = (self.jobset.release[ok] > self._t) | (steps.status(self._st)[ok] != 0)
        if bad.any():
            j = int(listed[np.flatnonzero(bad)[0]])
            raise ValueError(f"job {j} is not waiting at t={self._t:g} (not arrived, already "
                             "started or rejected, or not a job of the set)")

    def _check_running(self, listed, verb: str) -> None:
        """A ValueError naming the first of ``listed`` (distinct, in range) that is not
        running now (waiting, finished, rejected or not arrived)."""
        running = np.zeros(len(self.jobset), dtype=bool)
        running[self.running()[0]] = True
        bad = ~running[listed]
        if bad.any():
            raise ValueError(f"{verb}: job {int(listed[bad][0])} is not running at "
                             f"t={self._t:g}")

    def reject(self, jobs) -> np.ndarray:
        """Take these waiting jobs away for good: they never run (Batsim's ``REJECT_JOB``).

        Parameters
        ----------
        jobs : array_like of int
            Positions of waiting jobs (a preempted job queued again is waiting).

        Returns the jobs rejected. In the result a rejected job has a NaN
        ``finish`` (and a NaN ``start`` unless it ran before a preemption), no
        allocation, and no part in the objectives or the per-job means;
        :attr:`moga.Schedule.rejected` marks it and ``info["rejected"]`` counts
        the rejected jobs. The executions of a job preempted before its
        rejection stay in the schedule's segments.

        Raises
        ------
        ValueError
            If a job is not waiting (not arrived yet, already started or
            rejected, or not a position of the job-set), or a position repeats.
        """
        listed = _positions(jobs, "reject", len(self.jobset))
        if listed.size == 0:
            return listed
        self._check_waiting(listed)
        for j in listed.tolist():
            steps.drop(self._jobs, self._st, self._out, int(j))
        self._rejected[listed] = True
        return listed

    def would_start(self, jobs, blacklist=None) -> np.ndarray:
        """The jobs :meth:`start` would start now, in that order, without starting any (a dry
        run on a copy of the loop's state)."""
        state = (*steps.state_arrays(self._st, self._out), self._bl, self._runtime)
        saved = [a.copy() for a in state]
        first = self._first.copy()
        try:
            return self.start(jobs, blacklist)
        finally:
            for a, copy in zip(state, saved, strict=True):
                np.copyto(a, copy)
            self._first = first

    def preempt(self, jobs, keep: float = 1.0, restart: float = 0.0) -> np.ndarray:
        """Stop these running jobs now and queue them again, each at its arrival place.

        Parameters
        ----------
        jobs : array_like of int
            Positions of running jobs.
        keep : float
            Share of the work done in the stopped execution that is kept, in
            [0, 1]: 1 (default) resumes where it stopped (a checkpoint written
            at the preemption), 0 starts over (no checkpoint).
        restart : float
            Work added to the next execution, s on a speed-1.0 node (reading a
            checkpoint back, say), >= 0.

        Returns the jobs stopped. Their nodes, power and link traffic are
        released at once (other co-allocated jobs are re-rated, fluid model);
        each stopped execution becomes a row of the schedule's ``segments``,
        and a restarted job may be placed elsewhere.

        Raises
        ------
        ValueError
            If a job is not running, or ``keep`` or ``restart`` is out of range.
        """
        listed = _positions(jobs, "preempt", len(self.jobset))
        keep = check_number("keep", keep, 0, 1)
        restart = check_number("restart", restart, 0, MAX_RESTART)
        self._check_running(listed, "preempt")
        st, out, t = self._st, self._out, self._t
        for j in listed.tolist():
            start, alloc = float(out.start[j]), out.alloc[j].copy()
            sd = float(steps.slowdowns(st)[j])
            before = float(self._runtime[j])
            left = float(steps.preempt(t, self._code, self._jobs, self._plat, st, out, int(j)))
            done = max(before - left, 0.0)
            read = self._read[j]
            useful = max(done - read, 0.0)
            # The run time of its next start, s on a speed-1.0 node (> 0).
            self._runtime[j] = max(left - max(read - done, 0.0) + (1 - keep) * useful + restart,
                                   1e-9 * before)
            if self._est is not None:  # start_easy plans the rest as running() does
                self._est[j] = self._runtime[j] * self._scale[j]
            read_wall = min(read * sd, t - start)
            compute = t - start - read_wall
            self._stopped.append((j, start, t, read_wall, keep * compute, (1 - keep) * compute,
                                  alloc))
            self._read[j] = restart
        return listed

    def advance(self) -> float:
        """Move to the next arrival or finish; returns its time (``inf`` once every job started).

        Raises
        ------
        PolicyStalled
            If jobs wait, nothing runs and no arrival is to come.
        """
        if self.done:
            return math.inf
        nxt = self._map(np.zeros(0, dtype=np.int64))
        if nxt == math.inf:
            raise PolicyStalled(f"at t={self._t:g} {self.queued().size} job(s) wait on an idle "
                                "federation and no job arrives: the policy must start one")
        self._begin(max(self._t, nxt))
        return self._t

    def result(self, policy: str = "session", info: dict | None = None,
               backfill: str = "n/a") -> Schedule:
        """The finished schedule (every job started or rejected), as the one schedule record.

        ``order`` is the start order; the blacklist is empty; ``backfill`` is what the
        record says of how the jobs were started (:attr:`OnlinePolicy.backfill`; ``"n/a"``
        by default, since a session does not know the order its caller followed).
        """
        if not self.done:
            raise RuntimeError(f"{self.queued().size} job(s) are still waiting; advance first")
        d = self._finish()
        js = self.jobset
        info = dict(info or {})
        info.setdefault("estimates", self.estimates)
        info.setdefault("events", self.events)
        start, energy, segments = d.start.copy(), d.energy, None
        makespan, flowtime = d.makespan, d.flowtime
        done = ~self._rejected
        if self._stopped:
            segments = self._segments(d)
            start = self._first.copy()  # a preempted job's first start
            energy = schedule_energy(js.release, segments.start, segments.end, segments.alloc,
                                     js.power[segments.job], self.federation)
            info.setdefault("preemptions", len(self._stopped))
        if self._rejected.any():
            info.setdefault("rejected", int(self._rejected.sum()))
            # The objectives of what ran: the last end of any execution, the completed
            # jobs' flow times; the idle federation until then.
            ends = segments.end if segments is not None else d.finish[done]
            makespan = float(ends.max() - js.release.min()) if ends.size else 0.0
            flowtime = float((d.finish[done] - js.release[done]).sum())
            if segments is None:  # (with segments, the energy above counts what ran)
                energy = schedule_energy(js.release, d.start[done], d.finish[done],
                                         d.alloc[done], js.power[done], self.federation)
        arrays = {"order": start_order(start), "blacklist": np.zeros(d.alloc.shape),
                  "start": start, "finish": d.finish.copy(), "alloc": d.alloc.copy()}
        for a in arrays.values():
            a.setflags(write=False)
        return Schedule(jobset=js, federation=self.federation, model=self.model, **arrays,
                        makespan=makespan, energy=energy, flowtime=flowtime, n_relaxed=0,
                        n_coalloc=d.n_coalloc, backfill=str(backfill), rule=self.rule,
                        reservation=None, policy=policy, info=info, segments=segments)

    def _finish(self) -> Dispatch:
        """Let the running jobs end: the loop's schedule and objectives."""
        m, e, fl = steps.end(self._t, self._code, self._jobs, self._plat, self._st, self._out)
        out = self._out
        n_coalloc = int(np.count_nonzero((out.alloc > 0).sum(axis=1) >= 2))
        return Dispatch(out.start, out.finish, out.alloc, float(m), float(e), float(fl), n_coalloc)

    def _segments(self, d) -> Segments:
        """Every execution: the stopped ones and each job's last, in the order they ended."""
        J = len(self.jobset)
        sd = steps.slowdowns(self._st)
        last = [(j, float(d.start[j]), float(d.finish[j]),
                 min(self._read[j] * float(sd[j]), float(d.finish[j] - d.start[j])))
                for j in range(J) if not self._rejected[j]]
        rows = [(j, s, e, r, c, lost, a, True) for j, s, e, r, c, lost, a in self._stopped]
        rows += [(j, s, e, r, e - s - r, 0.0, d.alloc[j].copy(), False) for j, s, e, r in last]
        rows.sort(key=lambda row: (row[2], row[0]))
        col = list(zip(*rows, strict=True))
        return Segments(np.array(col[0], dtype=np.int64), np.array(col[1]), np.array(col[2]),
                        np.array(col[3]), np.array(col[4]), np.array(col[5]), np.zeros(len(rows)),
                        np.array(col[7], dtype=bool), np.array(col[6], dtype=np.int64))
