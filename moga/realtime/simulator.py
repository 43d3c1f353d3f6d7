"""The real-time scheduling simulator: baseline EASY, a high-priority queue, and preemption
with NO/SYS/APP/JIT checkpointing (docs/design.md §12).

An event-driven simulation in plain Python over heaps: its state changes
(preemptions that rewrite running jobs, checkpoint bookkeeping, requeues) are
branchy and sparse, and a month of a large trace runs in seconds, so a Numba
kernel would buy little; the tests check every schedule with an independent
checker instead.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import InputError
from ..validation import check_number
from .workload import CLASS_NAMES, RealtimeJobs

__all__ = ["SCHEMES", "CHECKPOINTS", "Checkpointing", "Thresholds", "Segment", "RealtimeResult",
           "simulate"]

#: Scheduling schemes.
SCHEMES = ("baseline", "highpq", "preempt")
#: Checkpointing of preempted batch jobs.
CHECKPOINTS = ("none", "sys", "app", "jit")

_ARRIVE, _FINISH, _RTJ_START, _REQUEUE = range(4)
_FUTURE, _WAITING, _RUNNING, _DONE, _HELD, _WRITING = range(6)


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
        check_number("sys_interval", self.sys_interval, 0, low_open=True, allow_inf=True)
        for f in ("data_fraction", "app_fraction"):
            check_number(f, getattr(self, f), 0, 1, low_open=True)
        check_number("app_overhead", self.app_overhead, 0, 1, low_open=True, high_open=True)

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

    A real-time job preempts only when waiting for its reservation would take
    its slowdown above ``rtj``; a batch job may be preempted only while its
    projected slowdown (resumed at once after the lost work, the JIT write
    and the restart) stays within its class's threshold (order of
    :data:`moga.realtime.workload.CLASS_NAMES`). The seed's values.
    """

    rtj: float = 1.5
    batch: tuple = (3.0, 1.3, 10.0, 2.0)

    def __post_init__(self):
        check_number("rtj threshold", self.rtj, 1, allow_inf=True)
        try:
            batch = tuple(self.batch)
        except TypeError:
            batch = ()
        if len(batch) != 4:
            raise InputError(f"batch thresholds: give four slowdowns, one per batch class; got "
                             f"{self.batch!r}")
        for name, b in zip(CLASS_NAMES, batch, strict=True):
            check_number(f"batch threshold of {name}", b, 1, allow_inf=True)


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
class RealtimeResult:
    """A simulation's schedule.

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
    segments : list of Segment
        Every execution, in the order they ended.
    info : dict
        ``events`` and ``preemptions`` counts.
    """

    jobs: RealtimeJobs
    scheme: str
    checkpointing: str
    improved: bool
    start: np.ndarray
    finish: np.ndarray
    n_preempted: np.ndarray
    segments: list
    info: dict = field(default_factory=dict)


def simulate(rj: RealtimeJobs, scheme: str = "preempt", checkpointing=None,
             improved: bool = False, thresholds: Thresholds | None = None) -> RealtimeResult:
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
    improved : bool
        The seed's improved heuristic: :class:`Thresholds` limit preemption.
    thresholds : Thresholds, optional

    Returns
    -------
    RealtimeResult

    Durations are known (the run time, plus restart reads and checkpoint
    writes), and EASY's reservations use them.
    """
    if scheme not in SCHEMES:
        raise ValueError(f"unknown scheme {scheme!r}; choose one of {list(SCHEMES)}")
    ck = checkpointing if isinstance(checkpointing, Checkpointing) else \
        Checkpointing(checkpointing or "jit")
    th = thresholds or Thresholds()
    return _Sim(rj, scheme, ck, bool(improved), th).run()


class _Sim:
    def __init__(self, rj, scheme, ck, improved, th):
        self.rj, self.scheme, self.ck, self.improved, self.th = rj, scheme, ck, improved, th
        J = len(rj)
        self.J = J
        self.sub = rj.submit.astype(float)
        self.run_t = rj.runtime.astype(float)
        self.nodes = rj.nodes.astype(np.int64)
        self.rtj = rj.rtj
        self.write, self.read, self.interval = ck.costs(rj)
        self.N = int(rj.machine.nodes)
        self.status = np.zeros(J, dtype=np.int64)
        self.saved = np.zeros(J)           # computation kept so far
        self.seg_start = np.zeros(J)
        self.seg_read = np.zeros(J)
        self.end = np.full(J, np.nan)       # planned end of the running segment
        self.version = np.zeros(J, dtype=np.int64)
        self.start = np.full(J, np.nan)
        self.finish = np.full(J, np.nan)
        self.npre = np.zeros(J, dtype=np.int64)
        self.segments: list[Segment] = []
        self.busy = 0                       # nodes of running and held jobs
        self.active: dict[int, float] = {}  # running or held job -> planned end
        self.events: list = []
        self.seq = 0
        self.queue: set[int] = set()
        self.held: dict[int, int] = {}      # JIT: nodes a waiting real-time job holds
        self.claim: dict[int, int] = {}     # JIT: writing batch job -> real-time job it serves
        self.n_events = 0
        self.n_preemptions = 0

    # ----------------------------------------------------------- bookkeeping
    def push(self, t, kind, j):
        self.seq += 1
        heapq.heappush(self.events, (t, self.seq, kind, j, int(self.version[j])))

    def plan(self, j, s):
        """``(read, end)`` of a segment of ``j`` starting at ``s``."""
        if self.rtj[j]:
            return 0.0, s + self.run_t[j]
        rem = self.run_t[j] - self.saved[j]
        r = self.read[j] if self.saved[j] > 0 else 0.0
        n_w = max(0, math.ceil(rem / self.interval[j]) - 1) if math.isfinite(self.interval[j]) else 0
        return r, s + r + rem + n_w * self.write[j]

    def begin(self, j, t):
        r, e = self.plan(j, t)
        self.status[j] = _RUNNING
        self.queue.discard(j)
        self.seg_start[j], self.seg_read[j], self.end[j] = t, r, e
        if np.isnan(self.start[j]):
            self.start[j] = t
        self.busy += self.nodes[j]
        self.active[j] = e
        self.push(e, _FINISH, j)

    def duration(self, j, t):
        return self.plan(j, t)[1] - t

    def complete(self, j, t):
        s, r = self.seg_start[j], self.seg_read[j]
        rem = self.run_t[j] - self.saved[j]
        self.segments.append(Segment(j, s, t, r, rem, 0.0, t - s - r - rem, False))
        self.saved[j] = self.run_t[j]
        self.status[j] = _DONE
        self.finish[j] = t
        self.busy -= self.nodes[j]
        del self.active[j]

    def cut(self, j, t):
        """What preempting running batch job ``j`` at ``t`` keeps:
        ``(read spent, kept, lost, writes, JIT write after t)``."""
        e = t - self.seg_start[j]
        r = self.seg_read[j]
        if e <= r:
            return e, 0.0, 0.0, 0.0, (self.write[j] if self.ck.kind == "jit" else 0.0)
        e2 = e - r
        kind = self.ck.kind
        if kind == "none":
            return r, 0.0, e2, 0.0, 0.0
        if kind == "jit":
            return r, e2, 0.0, 0.0, self.write[j]
        I, w = self.interval[j], self.write[j]
        if not math.isfinite(I):
            return r, 0.0, e2, 0.0, 0.0
        k = math.floor(e2 / (I + w))
        o = e2 - k * (I + w)
        return r, k * I, min(o, I), k * w + max(0.0, o - I), 0.0

    def projected_sd(self, j, t):
        r, kept, _, _, jit = self.cut(j, t)
        kept_total = 0.0 if self.ck.kind == "none" else self.saved[j] + kept
        rem = self.run_t[j] - kept_total
        back = self.read[j] if kept_total > 0 else 0.0
        return (t + jit + back + rem - self.sub[j]) / self.run_t[j]

    # --------------------------------------------------------------- policy
    def reservation(self, need, t, free):
        """EASY's shadow time and the nodes to spare then."""
        avail = free
        shadow = t
        for e, j in sorted((e, j) for j, e in self.active.items()):
            if avail >= need:
                break
            avail += self.nodes[j]
            shadow = e
        return shadow, avail - need

    def victims(self, j, t, free):
        need = self.nodes[j] - free
        cands = []
        for b, _ in self.active.items():
            if self.rtj[b] or self.status[b] != _RUNNING:
                continue
            if self.improved and self.projected_sd(b, t) > self.th.batch[self.rj.cls[b]]:
                continue
            _, _, lost, _, _ = self.cut(b, t)
            cands.append((int(self.nodes[b]), lost * self.nodes[b], b))
        fit = [c for c in cands if c[0] >= need]
        if fit:
            return [min(fit)[2]]
        chosen, got = [], 0
        for c in sorted(cands, key=lambda c: (-c[0], c[1], c[2])):
            if got >= need:
                break
            chosen.append(c)
            got += c[0]
        if got < need:
            return []
        for c in sorted(chosen, key=lambda c: (c[0], -c[1], -c[2])):
            if got - c[0] >= need:
                chosen.remove(c)
                got -= c[0]
        return [c[2] for c in chosen]

    def preempt_for(self, j, t, free):
        """Start real-time job ``j`` by preempting batch jobs; False if it may not or cannot."""
        if self.improved:
            shadow, _ = self.reservation(self.nodes[j], t, free)
            if (shadow + self.run_t[j] - self.sub[j]) / self.run_t[j] <= self.th.rtj:
                return False
        vs = self.victims(j, t, free)
        if not vs:
            return False
        wait = 0.0
        free_taken = max(0, int(self.nodes[j]) - sum(int(self.nodes[b]) for b in vs))
        for b in vs:
            r, kept, lost, writes, jit = self.cut(b, t)
            s = self.seg_start[b]
            self.segments.append(Segment(b, s, t + jit, r, kept, lost, writes + jit, True))
            self.saved[b] = 0.0 if self.ck.kind == "none" else self.saved[b] + kept
            self.version[b] += 1
            self.npre[b] += 1
            self.n_preemptions += 1
            wait = max(wait, jit)
            if jit > 0:
                # It keeps its nodes while it writes, then hands them to the real-time job.
                self.status[b] = _WRITING
                self.active[b] = t + jit
                self.claim[b] = j
                self.push(t + jit, _REQUEUE, b)
            else:
                self.busy -= self.nodes[b]
                del self.active[b]
                self.status[b] = _WAITING
                self.queue.add(b)
        if wait > 0:
            # JIT: the real-time job holds free nodes now and the victims' nodes as their
            # checkpoints end, and starts when the last one is written.
            self.status[j] = _HELD
            self.queue.discard(j)
            self.held[j] = free_taken
            self.busy += free_taken
            self.active[j] = t + wait + self.run_t[j]
            self.push(t + wait, _RTJ_START, j)
        else:
            self.begin(j, t)
        return True

    def schedule(self, t):
        waiting = list(self.queue)
        if self.scheme == "baseline":
            order = sorted(waiting, key=lambda j: (self.sub[j], j))
        else:
            order = sorted(waiting, key=lambda j: (not self.rtj[j], self.sub[j], j))
        i = 0
        head = None
        while i < len(order):
            j = order[i]
            free = self.N - self.busy
            if self.nodes[j] <= free:
                self.begin(j, t)
            elif not (self.rtj[j] and self.scheme == "preempt" and self.preempt_for(j, t, free)):
                head = j
                break
            i += 1
        if head is None:
            return
        free = self.N - self.busy
        shadow, extra = self.reservation(self.nodes[head], t, free)
        for j in order[i + 1:]:
            if free <= 0:
                break
            if self.nodes[j] > free:
                continue
            if t + self.duration(j, t) <= shadow:
                self.begin(j, t)
                free -= self.nodes[j]
            elif self.nodes[j] <= extra:
                self.begin(j, t)
                free -= self.nodes[j]
                extra -= self.nodes[j]

    # ------------------------------------------------------------------ run
    def run(self) -> RealtimeResult:
        for j in np.lexsort((np.arange(self.J), self.sub)):
            self.push(self.sub[j], _ARRIVE, int(j))
        while self.events:
            t = self.events[0][0]
            self.n_events += 1
            while self.events and self.events[0][0] <= t:
                _, _, kind, j, ver = heapq.heappop(self.events)
                if ver != self.version[j]:
                    continue  # a finish planned before a preemption
                if kind == _ARRIVE:
                    self.status[j] = _WAITING
                    self.queue.add(j)
                elif kind == _REQUEUE:  # a JIT checkpoint is written
                    del self.active[j]
                    self.held[self.claim.pop(j)] += int(self.nodes[j])  # nodes stay busy
                    self.status[j] = _WAITING
                    self.queue.add(j)
                elif kind == _FINISH:
                    self.complete(j, t)
                else:  # a real-time job's JIT wait is over
                    self.busy -= self.held.pop(j)
                    del self.active[j]
                    self.begin(j, t)
            self.schedule(t)
        if self.queue or np.any(self.status != _DONE):
            raise RuntimeError("the simulation ended with unfinished jobs")
        return RealtimeResult(self.rj, self.scheme, self.ck.kind, self.improved, self.start,
                              self.finish, self.npre, self.segments,
                              {"events": self.n_events, "preemptions": self.n_preemptions})
