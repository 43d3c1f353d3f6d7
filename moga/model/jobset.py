"""JobSet: the immutable array container of a workload, and its seeded model attributes."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np

from decoders._kernels import exact_dot

__all__ = ["JobSet", "apply_kill_option", "draw_attributes", "draw_power", "SIGMA_RANGE",
           "BW_RANGE", "POWER_SPREAD", "POWER_RANGE", "POWER_FACTOR_MAX"]

#: Default range of the communication share ``sigma_j`` of a multi-task job (uniform).
SIGMA_RANGE = (0.0, 0.5)
#: Default range of the per-task bandwidth ``bw_j`` of a multi-task job, Mbit/s (uniform).
BW_RANGE = (10.0, 100.0)


def draw_attributes(tasks, seed=0, sigma_range=SIGMA_RANGE, bw_range=BW_RANGE):
    """Draw the per-job model attributes the traces lack.

    ``sigma_j ~ U(sigma_range)`` and ``bw_j ~ U(bw_range)`` for every job with two
    or more tasks; a single-task job never communicates (``sigma = bw = 0``).
    Both draws come from one ``numpy.random.default_rng(seed)``, sigma first, so
    the same tasks and seed give the same attributes.

    Parameters
    ----------
    tasks : array_like of int, shape (J,)
    seed : int or numpy.random.Generator
    sigma_range : (float, float)
        Within [0, 1], low <= high.
    bw_range : (float, float)
        Mbit/s, 0 <= low <= high.

    Returns
    -------
    sigma, bw : ndarray of float64, shape (J,)
    """
    lo, hi = map(float, sigma_range)
    if not (0.0 <= lo <= hi <= 1.0):
        raise ValueError(f"sigma_range must satisfy 0 <= low <= high <= 1, got {sigma_range}")
    blo, bhi = map(float, bw_range)
    if not (0.0 <= blo <= bhi) or not np.isfinite(bhi):
        raise ValueError(f"bw_range must satisfy 0 <= low <= high < inf, got {bw_range}")
    tasks = np.asarray(tasks)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    sigma = rng.uniform(lo, hi, tasks.shape[0])
    bw = rng.uniform(blo, bhi, tasks.shape[0])
    single = tasks <= 1
    sigma[single] = 0.0
    bw[single] = 0.0
    return sigma, bw


#: Log-space standard deviation of the drawn per-job power factors (lognormal around 1).
POWER_SPREAD = 0.25
#: Range the drawn power factors are clipped to.
POWER_RANGE = (0.5, 1.5)
#: Largest power factor a job may have: a node running it draws at most this many times its
#: rated busy power (larger factors are data errors, not workloads).
POWER_FACTOR_MAX = 10.0


def draw_power(n, seed=0, spread=POWER_SPREAD, clip=POWER_RANGE):
    """Draw per-job power factors (docs/design.md §11): ``exp(N(0, spread))`` clipped to ``clip``.

    A job's node draws ``factor * power_busy`` while it computes there. Traces
    carry no power, so the factor is drawn; it comes from stream 1 of the
    seed (``numpy.random.default_rng([seed, 1])``), so the ``sigma`` and
    ``bw`` draws of the same seed are unchanged by it.

    Parameters
    ----------
    n : int
        Number of jobs.
    seed : int
    spread : float
        >= 0; 0 gives every job the factor 1.
    clip : (float, float)
        0 < low <= 1 <= high.

    Returns
    -------
    ndarray of float64, shape (n,)
    """
    lo, hi = map(float, clip)
    if not (0.0 < lo <= 1.0 <= hi) or not np.isfinite(hi):
        raise ValueError(f"power clip range must satisfy 0 < low <= 1 <= high < inf, got {clip}")
    if not (spread >= 0 and np.isfinite(spread)):
        raise ValueError(f"power spread must be >= 0, got {spread}")
    rng = np.random.default_rng([int(seed), 1])
    return np.clip(np.exp(rng.normal(0.0, float(spread), int(n))), lo, hi)


def _frozen(a, dtype):
    a = np.array(a, dtype=dtype, copy=True)
    a.setflags(write=False)
    return a


def _flags(a, n: int, name: str) -> np.ndarray:
    """A per-job flag array of a JobSet, read-only bool of shape (n,): all False for None;
    a ValueError naming ``name`` for a wrong shape or a value other than True/False/0/1."""
    a = np.zeros(n, dtype=bool) if a is None else np.asarray(a)
    if a.shape != (n,):
        raise ValueError(f"JobSet.{name} must have shape ({n},), got {a.shape}")
    if a.dtype != bool:
        if not np.all(np.isin(a, (0, 1))):
            i = int(np.flatnonzero(~np.isin(a, (0, 1)))[0])
            raise ValueError(f"JobSet.{name}[{i}] must be True or False, got {a[i]}")
        a = a.astype(bool)
    return _frozen(a, bool)


@dataclass(frozen=True, eq=False)
class JobSet:
    """A set of parallel jobs as numpy arrays, indexed by position ``0..J-1``.

    Attributes
    ----------
    id : ndarray of int64
        Job numbers (from the trace, or ``0..J-1``).
    release : ndarray of float64
        Release times in s (>= 0).
    tasks : ndarray of int64
        Tasks per job (>= 1); one task per node.
    runtime : ndarray of float64
        Base run time in s on a node of speed 1.0 (> 0).
    sigma : ndarray of float64
        Communication share in [0, 1].
    bw : ndarray of float64
        Per-task bandwidth in Mbit/s (>= 0).
    name : str
        Where the job-set came from.
    report : dict
        How it was extracted (window, wide-job policy counts, seed, mode).
    v_start, v_final, soft, hard : ndarray of float64 or None
        Value functions (docs/design.md §6), when attached
        (:func:`moga.value.attach_values`): value ``v_start`` until the soft
        deadline ``soft`` (absolute time, s), linear decay to ``v_final`` at
        ``hard``, 0 after it.
    priority : ndarray of int64 or None
        Priority class of each job (0 = highest), with the value functions.
    power : ndarray of float64
        Power factor of each job, in (0, :data:`POWER_FACTOR_MAX`]: on cluster k a node running it draws
        ``max(power * power_busy[k], power_idle[k])`` W (docs/design.md §11). All 1.0 unless given
        (the MOGA study's model); :func:`draw_power` draws them.
    requested : ndarray of float64
        Requested (wall-clock limit) time in s (> 0), what dispatchers that
        classify jobs by queue see; the run time where the trace has none.
    realtime : ndarray of bool
        Real-time jobs (:func:`moga.realtime.tag_realtime` tags them); all
        False unless given.
    killed : ndarray of bool
        Jobs killed at their requested time (:meth:`kill_at_request`): their
        ``runtime`` is their request, less than the trace's run time. All False
        unless given; a killed job's ``runtime`` must equal its ``requested``.

    Raises
    ------
    ValueError
        On wrong shapes or out-of-range values, naming the array and the job.
    """

    id: np.ndarray
    release: np.ndarray
    tasks: np.ndarray
    runtime: np.ndarray
    sigma: np.ndarray
    bw: np.ndarray
    name: str = "jobset"
    report: dict = field(default_factory=dict)
    v_start: np.ndarray | None = None
    v_final: np.ndarray | None = None
    soft: np.ndarray | None = None
    hard: np.ndarray | None = None
    priority: np.ndarray | None = None
    power: np.ndarray | None = None
    requested: np.ndarray | None = None
    realtime: np.ndarray | None = None
    killed: np.ndarray | None = None

    def __post_init__(self):
        n = np.shape(self.release)[0] if np.ndim(self.release) == 1 else -1
        if n < 0:
            raise ValueError(f"release must be 1-D, got shape {np.shape(self.release)}")
        if self.power is None:
            object.__setattr__(self, "power", np.ones(n))
        if self.requested is None:
            object.__setattr__(self, "requested", np.asarray(self.runtime))
        object.__setattr__(self, "realtime", _flags(self.realtime, n, "realtime"))
        object.__setattr__(self, "killed", _flags(self.killed, n, "killed"))
        for f, dt in (("id", np.int64), ("release", np.float64), ("tasks", np.int64),
                      ("runtime", np.float64), ("sigma", np.float64), ("bw", np.float64),
                      ("power", np.float64), ("requested", np.float64)):
            raw = np.asarray(getattr(self, f))
            if raw.shape != (n,):
                raise ValueError(f"JobSet.{f} must have shape ({n},), got {raw.shape}")
            if dt is np.int64 and raw.dtype.kind == "f" and np.any(raw != np.round(raw)):
                i = int(np.flatnonzero(raw != np.round(raw))[0])
                raise ValueError(f"JobSet.{f}[{i}] must be an integer, got {raw[i]}")
            arr = _frozen(raw, dt)
            if dt is np.float64 and not np.all(np.isfinite(arr)):
                i = int(np.flatnonzero(~np.isfinite(arr))[0])
                raise ValueError(f"JobSet.{f}[{i}] is not finite")
            object.__setattr__(self, f, arr)
        checks = (
            ("release", self.release < 0, ">= 0"),
            ("tasks", self.tasks < 1, ">= 1"),
            ("runtime", self.runtime <= 0, "> 0"),
            ("sigma", (self.sigma < 0) | (self.sigma > 1), "in [0, 1]"),
            ("bw", self.bw < 0, ">= 0"),
            ("power", (self.power <= 0) | (self.power > POWER_FACTOR_MAX),
             f"in (0, {POWER_FACTOR_MAX:g}] (a multiple of the node's rated busy power)"),
            ("requested", self.requested <= 0, "> 0"),
        )
        for f, bad, what in checks:
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                raise ValueError(
                    f"JobSet.{f}[{i}] (job id {self.id[i]}) must be {what}, got {getattr(self, f)[i]}"
                )
        cut = self.killed & (self.runtime != self.requested)
        if cut.any():
            i = int(np.flatnonzero(cut)[0])
            raise ValueError(f"JobSet job {i} (id {self.id[i]}) is marked killed at its requested "
                             f"time {self.requested[i]}, but its run time is {self.runtime[i]}; "
                             "JobSet.kill_at_request() sets both")
        object.__setattr__(self, "report", dict(self.report))
        self._check_values(n)

    _VALUE_FIELDS = ("v_start", "v_final", "soft", "hard", "priority")

    def _check_values(self, n):
        given = [getattr(self, f) is not None for f in self._VALUE_FIELDS]
        if not any(given):
            return
        if not all(given):
            missing = [f for f, g in zip(self._VALUE_FIELDS, given, strict=True) if not g]
            raise ValueError(f"value functions need all of {list(self._VALUE_FIELDS)}; "
                             f"missing {missing}")
        for f in self._VALUE_FIELDS:
            dt = np.int64 if f == "priority" else np.float64
            arr = _frozen(getattr(self, f), dt)
            if arr.shape != (n,):
                raise ValueError(f"JobSet.{f} must have shape ({n},), got {arr.shape}")
            if dt is np.float64 and not np.all(np.isfinite(arr)):
                raise ValueError(f"JobSet.{f}[{int(np.flatnonzero(~np.isfinite(arr))[0])}] "
                                 "is not finite")
            object.__setattr__(self, f, arr)
        for what, bad in (("v_final must lie in [0, v_start]",
                           (self.v_final < 0) | (self.v_final > self.v_start)),
                          ("soft deadline must not precede the release",
                           self.soft < self.release),
                          ("hard deadline must not precede the soft one", self.hard < self.soft)):
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                raise ValueError(f"JobSet job {i} (id {self.id[i]}): {what}")

    @property
    def has_values(self) -> bool:
        """True when value functions are attached."""
        return self.v_start is not None

    @classmethod
    def from_arrays(cls, release, tasks, runtime, sigma=None, bw=None, id=None, seed=0,
                    name="jobset", sigma_range=SIGMA_RANGE, bw_range=BW_RANGE) -> JobSet:
        """Build a job-set from arrays, drawing ``sigma`` and ``bw`` when not given.

        Missing attributes are drawn by :func:`draw_attributes` with ``seed``.
        """
        tasks = np.asarray(tasks)
        if sigma is None or bw is None:
            s, b = draw_attributes(tasks, seed, sigma_range, bw_range)
            sigma = s if sigma is None else sigma
            bw = b if bw is None else bw
        if id is None:
            id = np.arange(np.shape(release)[0])
        return cls(id=id, release=release, tasks=tasks, runtime=runtime, sigma=sigma, bw=bw,
                   name=name, report={"seed": seed if isinstance(seed, int) else None})

    def __len__(self) -> int:
        return int(self.release.shape[0])

    @property
    def submit_order(self) -> np.ndarray:
        """Job positions by release time, ties by position (first come, first served), int64."""
        return np.lexsort((np.arange(len(self)), self.release)).astype(np.int64)

    @property
    def n_jobs(self) -> int:
        """Number of jobs ``J``."""
        return len(self)

    @property
    def work(self) -> float:
        """Total base work, sum of ``tasks * runtime`` (node-seconds at speed 1.0)."""
        return exact_dot(self.tasks, self.runtime)

    def arrays(self):
        """``(release, tasks, runtime, sigma, bw)``, the order the decoders take."""
        return self.release, self.tasks, self.runtime, self.sigma, self.bw

    def take(self, index, name=None) -> JobSet:
        """A job-set of the jobs at ``index`` (positions or a boolean mask)."""
        values = {f: getattr(self, f)[index] for f in self._VALUE_FIELDS} if self.has_values \
            else {}
        return JobSet(id=self.id[index], release=self.release[index], tasks=self.tasks[index],
                      runtime=self.runtime[index], sigma=self.sigma[index], bw=self.bw[index],
                      name=name or self.name, report=dict(self.report),
                      power=self.power[index], requested=self.requested[index],
                      realtime=self.realtime[index], killed=self.killed[index], **values)

    def with_power(self, power=None, *, seed=None, spread=POWER_SPREAD,
                   clip=POWER_RANGE) -> JobSet:
        """The same jobs with power factors: given (shape (J,)) or drawn by :func:`draw_power`.

        ``seed`` defaults to the job-set's own seed (its ``report``), so the
        draw follows from the seed that drew ``sigma`` and ``bw``.
        """
        if power is None:
            if seed is None:
                seed = self.report.get("seed") or 0
            power = draw_power(len(self), seed, spread, clip)
            report = dict(self.report, power=f"lognormal(0, {spread:g}) clipped to {tuple(clip)}",
                          power_seed=int(seed))
        else:
            report = dict(self.report, power="given")
        return dataclasses.replace(self, power=power, report=report)

    def kill_at_request(self) -> JobSet:
        """The same jobs, each killed when it has run for its requested time, as a production
        scheduler (Slurm, Batsim) kills a job at its walltime.

        A job's requested time (SWF field 9) is, like its run time, a figure for the
        trace's machine: on the cluster the job runs on it scales by the same slowdown
        as the run time (docs/guide/models.md). Killing the job when it has run for its
        request so scaled is cutting its work to the request: the new ``runtime`` is
        ``min(runtime, requested)``, and the jobs whose run time exceeded their request
        are marked in :attr:`killed`. On a node of speed 1.0, with no link saturation, a
        killed job so ends exactly at its start plus its request. Every decoder, policy
        and study runs the result unchanged; schedules count the killed jobs
        (``Schedule.summary()["n_killed"]``) and mark them in their files.

        A job without a request in the trace has its run time as its request
        (:meth:`moga.Trace.jobset`), so it is never killed. Idempotent: the result of a
        job-set already killed at its requests is the same job-set.

        Returns
        -------
        JobSet
            With ``report["killed_at_request"]``, the number of killed jobs.
        """
        over = self.runtime > self.requested
        killed = self.killed | over
        report = dict(self.report, killed_at_request=int(killed.sum()))
        return dataclasses.replace(self, runtime=np.minimum(self.runtime, self.requested),
                                   killed=killed, report=report)

    def __repr__(self) -> str:
        return (f"JobSet({self.name!r}, {len(self)} jobs, max tasks "
                f"{int(self.tasks.max()) if len(self) else 0}, work {self.work / 3600:.1f} node-h)")


def apply_kill_option(jobset, kill_at_request) -> JobSet:
    """``jobset`` as the ``kill_at_request`` keyword of ``moga.run``, ``moga.evaluate`` and
    ``moga.simulate`` asks: killed at its requests (:meth:`JobSet.kill_at_request`) when
    True, unchanged when False; a TypeError for a keyword that is not a bool or, when
    True, a job-set that is not a :class:`JobSet`."""
    if not isinstance(kill_at_request, (bool, np.bool_)):
        raise TypeError(f"kill_at_request must be True or False, got {kill_at_request!r}")
    if not kill_at_request:
        return jobset
    if not isinstance(jobset, JobSet):
        raise TypeError(f"expected a moga.JobSet, got {type(jobset).__name__}")
    return jobset.kill_at_request()
