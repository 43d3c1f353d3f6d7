"""The real-time scheduling simulator: baseline EASY, a high-priority queue, and preemption
with NO/SYS/APP/JIT checkpointing (docs/design.md §12).

The settings and results of the event loop in :mod:`decoders.realtime` (a
Numba kernel whose plain-Python twin is ``tests/naive.py:naive_realtime``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from decoders.realtime import simulate_realtime

from ..bounds import BOUNDS
from ..errors import InputError
from ..model.schedule import Schedule, Segments, start_order
from .machine import Machine
from .workload import CLASS_NAMES, RealtimeJobs

__all__ = ["SCHEMES", "CHECKPOINTS", "Checkpointing", "Thresholds", "Segment", "RealtimeResult",
           "simulate", "run_scheme"]

#: Scheduling schemes.
SCHEMES = ("baseline", "highpq", "preempt")
#: Checkpointing of preempted batch jobs.
CHECKPOINTS = ("none", "sys", "app", "jit")


@dataclass(frozen=True)
class Checkpointing:
    """How preempted batch jobs keep their work.

    Parameters
    ----------
    kind : {"none", "sys", "app", "jit"}
        NO-CKPT (restart from scratch), SYS-CKPT (every running batch job
        checkpoints every ``sys_interval`` s of computation, resumes from the
        last), APP-CKPT (per job: ``k = floor(requested * app_overhead / w)``
        checkpoints of write time ``w``, one every ``requested / (k + 1)`` s of
        computation), JIT-CKPT (a checkpoint is written when the job is
        preempted; the real-time job waits for it).
    sys_interval : float
        SYS-CKPT's interval, s of computation.
    data_fraction : float
        Checkpoint data per node as a share of node memory for SYS and JIT
        (the process image), in (0, 1].
    app_fraction : float
        APP-CKPT's data per node as a share of memory (the application saves
        less than its image).
    app_overhead : float
        APP-CKPT's budget: the share of the requested time spent writing.

    Writes and restart reads take ``Machine.io_time(nodes, data)``.
    """

    kind: str = "jit"
    sys_interval: float = 3600.0
    data_fraction: float = 0.5
    app_fraction: float = 0.25
    app_overhead: float = 0.05

    def __post_init__(self):
        if not isinstance(self.kind, str) or self.kind not in CHECKPOINTS:
            raise InputError(f"unknown checkpointing {self.kind!r}; choose one of "
                             f"{list(CHECKPOINTS)}")
        BOUNDS["sys_interval"].check("sys_interval", self.sys_interval)
        for f in ("data_fraction", "app_fraction"):
            BOUNDS["ckpt_fraction"].check(f, getattr(self, f))
        BOUNDS["app_overhead"].check("app_overhead", self.app_overhead)

    def costs(self, rj: RealtimeJobs):
        """Per job ``(write, read, interval)``: seconds per checkpoint write and restart
        read, and seconds of computation between periodic checkpoints (inf: none)."""
        J = len(rj)
        mem = rj.machine.memory_gb
        inf = np.full(J, np.inf)
        if self.kind == "none":
            return np.zeros(J), np.zeros(J), inf
        frac = self.app_fraction if self.kind == "app" else self.data_fraction
        w = rj.machine.io_time(rj.nodes, frac * mem)
        if self.kind == "jit":
            return w, w.copy(), inf
        if self.kind == "sys":
            return w, w.copy(), np.full(J, float(self.sys_interval))
        k = np.floor(rj.requested * self.app_overhead / w)
        interval = np.where(k >= 1, rj.requested / np.maximum(k + 1, 1), np.inf)
        return w, w.copy(), interval


@dataclass(frozen=True)
class Thresholds:
    """The improved heuristic's slowdown thresholds.

    In the project's reading (``improved="project"``), a real-time job
    preempts only when waiting for its reservation would take its slowdown
    above ``rtj``, and a batch job may be preempted only while its projected
    slowdown (resumed at once after the lost work, the JIT write and the
    restart) stays within its class's threshold (order of
    :data:`moga.realtime.workload.CLASS_NAMES`).

    In the authors' Qsim reading (``improved="qsim"``), a real-time job turns
    preemptive once ``(now - submit + requested) / requested >= trigger``
    (``rtj`` is not used), and a batch job is protected while its expected
    slowdown on requested times, ``(planned end by requested time - submit) /
    requested``, exceeds its class's threshold. The seed's values.
    """

    rtj: float = 1.5
    batch: tuple = (3.0, 1.3, 10.0, 2.0)
    trigger: float = 1.1

    def __post_init__(self):
        BOUNDS["slowdown_threshold"].check("rtj threshold", self.rtj)
        BOUNDS["trigger"].check("trigger", self.trigger)
        try:
            batch = tuple(self.batch)
        except TypeError:
            batch = ()
        if len(batch) != 4:
            raise InputError(f"batch thresholds: give four slowdowns, one per batch class; got "
                             f"{self.batch!r}")
        for name, b in zip(CLASS_NAMES, batch, strict=True):
            BOUNDS["slowdown_threshold"].check(f"batch threshold of {name}", b)


@dataclass(frozen=True)
class Segment:
    """One execution of a job: ``[start, end)`` on its nodes.

    ``read``: restart read at its start; ``compute``: computation kept (saved
    by a checkpoint, or completed); ``lost``: computation lost to the
    preemption; ``write``: checkpoint writes (periodic, and JIT's at its
    end); ``preempted``: whether it ended by preemption.
    """

    job: int
    start: float
    end: float
    read: float
    compute: float
    lost: float
    write: float
    preempted: bool


@dataclass(frozen=True, eq=False)
class RealtimeResult(Schedule):
    """A simulation's schedule: the one schedule record (:class:`moga.Schedule`, on the
    machine's one-cluster federation, :meth:`Machine.federation`), every execution in
    :attr:`segments`, with the scheme's own record beside it.

    Attributes
    ----------
    jobs : RealtimeJobs
    scheme, checkpointing : str
    improved : bool
    start : ndarray
        First start of each job.
    finish : ndarray
        Completion of each job.
    n_preempted : ndarray of int64
        Times each job was preempted.
    run : decoders.realtime.RealtimeRun
        The loop's output, with every execution as arrays (``seg_*``).
    info : dict
        ``events`` and ``preemptions`` counts.
    reading : {"project", "qsim"} or None
        The improved heuristic's reading (None when not improved).

    The other attributes are :class:`~moga.model.schedule.Schedule`'s.
    """

    jobs: RealtimeJobs | None = None
    scheme: str = "preempt"
    checkpointing: str = "jit"
    improved: bool = False
    n_preempted: np.ndarray | None = None
    run: object = None
    reading: str | None = None

    def executions(self) -> list:
        """Every execution as a :class:`Segment`, in the order they ended (the rows of
        :attr:`segments`)."""
        g = self.segments
        return [Segment(int(j), float(s), float(e), float(rd), float(c), float(lo), float(w),
                        bool(p))
                for j, s, e, rd, c, lo, w, p in zip(g.job, g.start, g.end, g.read, g.compute,
                                                     g.lost, g.write, g.preempted, strict=True)]

    def schedule(self, federation=None) -> Schedule:
        """This schedule, or the same run priced on ``federation``: one cluster of the
        machine's nodes whose powers price the energy.

        Raises
        ------
        InputError
            If ``federation`` is not one cluster of the machine's nodes.
        """
        if federation is None:
            return self
        return Schedule(**_record(self.jobs, self.start, self.finish, self.run, federation,
                                  self.policy, self.info))


def _record(rj: RealtimeJobs, start, finish, run, fed, policy: str, info: dict) -> dict:
    """The :class:`~moga.model.schedule.Schedule` fields of a run on ``fed``."""
    if fed.n_clusters != 1 or int(fed.nodes[0]) != rj.machine.nodes:
        raise InputError(f"a real-time schedule needs a one-cluster federation of "
                         f"{rj.machine.nodes} nodes, got {fed!r}")
    js = rj.jobset
    alloc = rj.nodes.astype(np.int64)[:, None].copy()
    segs = Segments(run.seg_job, run.seg_start, run.seg_end, run.seg_read, run.seg_compute,
                    run.seg_lost, run.seg_write, run.seg_preempted)
    makespan = float(finish.max() - js.release.min()) if len(js) else 0.0
    inc = np.maximum(js.power[run.seg_job] * fed.power_busy[0] - fed.power_idle[0], 0.0)
    energy = fed.idle_power * makespan + float(np.sum(inc * rj.nodes[run.seg_job]
                                                      * (run.seg_end - run.seg_start)))
    return {"jobset": js, "federation": fed, "order": start_order(start),
            "blacklist": np.zeros(alloc.shape), "model": "at_start", "start": start.copy(),
            "finish": finish.copy(), "alloc": alloc, "makespan": makespan, "energy": energy,
            "flowtime": float(np.sum(finish - js.release)), "n_relaxed": 0, "n_coalloc": 0,
            "backfill": "easy", "policy": policy, "info": dict(info), "segments": segs}


def simulate(rj: RealtimeJobs, scheme: str = "preempt", checkpointing=None,
             improved: bool | str = False,
             thresholds: Thresholds | None = None) -> RealtimeResult:
    """Simulate a scheme on a tagged workload.

    Parameters
    ----------
    rj : RealtimeJobs
    scheme : {"baseline", "highpq", "preempt"}
        ``"baseline"``: one queue, first come first served with EASY
        backfilling. ``"highpq"``: real-time jobs in a queue ahead of the
        batch queue (each first come, first served): a waiting real-time job
        is the head and holds the reservation, and batch jobs start only by
        backfilling around it.
        ``"preempt"``: the high-priority queue, and a real-time job that does
        not fit preempts running batch jobs (never real-time ones): the
        single batch job with the fewest nodes that frees enough, else the
        widest ones until enough are free and then without those no longer
        needed (ties: less lost work, then lower index). Preempted jobs
        rejoin the batch queue at their original place.
    checkpointing : Checkpointing or str, optional
        What a preempted batch job keeps (default JIT).
    improved : bool or {"project", "qsim"}
        The seed's improved heuristic, with ``scheme="preempt"``: :class:`Thresholds`
        limit preemption. ``True`` or ``"project"``: the project's reading, on top of
        the high-priority queue. ``"qsim"``: the rule as the authors' Qsim fork codes
        it: one queue in arrival order; a real-time job turns preemptive after waiting
        ``trigger - 1`` times its requested time; while such a job waits, no other job
        starts; batch jobs whose expected slowdown on requested times exceeds their
        class threshold are protected; the victims minimise the sum of ``nodes x (5 if
        the job is nearly done: at most min(25% of its requested time, 15 min) left) x
        log2(2 + its expected slowdown)``. With no partition topology, a set of running
        jobs stands for the partition: the cheaper of the best single job and the
        cover by least score per node (docs/design.md §12).
    thresholds : Thresholds, optional

    Returns
    -------
    RealtimeResult
        The one schedule record, on the machine's federation, with the scheme's
        record beside it.

    Durations are known (the run time, plus restart reads and checkpoint
    writes), and EASY's reservations use them.
    """
    if scheme not in SCHEMES:
        raise ValueError(f"unknown scheme {scheme!r}; choose one of {list(SCHEMES)}")
    if improved is True or improved == "project":
        reading = "project"
    elif improved == "qsim":
        reading = "qsim"
    elif improved is False or improved is None:
        reading = None
    else:
        raise ValueError(f"improved must be False, True, 'project' or 'qsim', got {improved!r}")
    ck = checkpointing if isinstance(checkpointing, Checkpointing) else \
        Checkpointing(checkpointing or "jit")
    th = thresholds or Thresholds()
    write, read, interval = ck.costs(rj)
    run = simulate_realtime(rj.submit, rj.runtime, rj.nodes, rj.rtj, rj.cls, rj.machine.nodes,
                            scheme=scheme, checkpointing=ck.kind, write=write, read=read,
                            interval=interval, improved=reading is not None,
                            rtj_threshold=th.rtj, batch_thresholds=th.batch,
                            reading=reading or "project", requested=rj.requested,
                            trigger=th.trigger)
    reading = reading if scheme == "preempt" else None   # no preemption to limit
    label = scheme + (f"-{ck.kind}" if scheme == "preempt" else "") \
        + ("-improved" if reading == "project" else "-qsim" if reading else "")
    info = {"events": run.n_events, "preemptions": run.n_preemptions}
    return RealtimeResult(**_record(rj, run.start, run.finish, run, rj.machine.federation(),
                                    label, info),
                          jobs=rj, scheme=scheme, checkpointing=ck.kind,
                          improved=reading is not None, n_preempted=run.n_preempted, run=run,
                          reading=reading)


def run_scheme(js, federation, *, scheme: str, checkpointing: str, improved: bool | str = False,
               name: str | None = None, **_common):
    """A scheme on a job-set with real-time tags (``js.realtime``) on a one-cluster federation,
    with the default checkpoint model: the one schedule record (:class:`moga.Schedule`).

    ``name`` (the catalogue's, default the scheme's label) names the policy in
    errors. The execution model, allocation rule and estimates of the catalogue's
    other policies (``_common``) do not apply: one machine, every job's duration
    known (:func:`simulate`).

    Raises
    ------
    InputError
        If the federation has more than one cluster or a power cap.
    """
    name = name or scheme
    if federation.n_clusters != 1:
        raise InputError(f"policy {name!r} runs on one machine of identical nodes; got "
                         f"{federation.n_clusters} clusters (use a one-cluster federation, e.g. "
                         "the preset machine@N)")
    if federation.capped:
        raise InputError(f"policy {name!r} has no power cap; drop the cap")
    rj = RealtimeJobs.from_jobset(js, Machine.from_cluster(federation, 0))
    return simulate(rj, scheme, checkpointing, improved).schedule(federation)
