"""Real-time workloads: which jobs are real-time, and the job classes of the metrics."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from ..model.jobset import JobSet
from .machine import Machine

__all__ = ["JobClasses", "RealtimeJobs", "tag_realtime", "CLASS_NAMES"]

#: Class names, by code (narrow/wide x short/long).
CLASS_NAMES = ("narrow-short", "narrow-long", "wide-short", "wide-long")


@dataclass(frozen=True)
class JobClasses:
    """Narrow/wide by nodes, short/long by requested time.

    Parameters
    ----------
    wide_fraction : float
        A job is wide when it takes more than this share of the machine's
        nodes (default 1/12: 4,096 of Mira's 49,152 nodes, eight midplanes).
    long_seconds : float
        A job is long when it requests more than this (default 2 h).

    The seed names the classes but not their bounds; these are this
    project's choices, parameters of every study.
    """

    wide_fraction: float = 1.0 / 12.0
    long_seconds: float = 7200.0

    def __post_init__(self):
        if not 0 < self.wide_fraction < 1:
            raise ValueError(f"wide_fraction must be in (0, 1), got {self.wide_fraction}")
        if not self.long_seconds > 0:
            raise ValueError(f"long_seconds must be > 0, got {self.long_seconds}")

    def classify(self, nodes, requested, machine_nodes: int) -> np.ndarray:
        """Class codes (indices into :data:`CLASS_NAMES`)."""
        wide = np.asarray(nodes) > self.wide_fraction * machine_nodes
        long = np.asarray(requested) > self.long_seconds
        return (2 * wide + long).astype(np.int64)


@dataclass(frozen=True, eq=False)
class RealtimeJobs:
    """A job-set on a machine with real-time tags.

    Attributes
    ----------
    jobset : JobSet
        Its ``realtime`` column holds the tags (``rtj``).
    machine : Machine
    nodes : ndarray of int64
        Nodes each job takes (its size rounded up to a partition).
    rtj : ndarray of bool
        Real-time jobs.
    cls : ndarray of int64
        Class codes (:data:`CLASS_NAMES`).
    fraction, seed : float, int or None
        How the tags were drawn (``seed`` None: the job-set's own tags,
        :meth:`from_jobset`).
    """

    jobset: JobSet
    machine: Machine
    nodes: np.ndarray
    rtj: np.ndarray
    cls: np.ndarray
    fraction: float
    seed: int | None

    @classmethod
    def from_jobset(cls, js: JobSet, machine: Machine,
                    classes: JobClasses | None = None) -> RealtimeJobs:
        """The job-set on ``machine`` with the real-time tags it already carries
        (``js.realtime``, all False unless tagged)."""
        classes = JobClasses() if classes is None else classes
        nodes = machine.job_nodes(js.tasks)
        rtj = js.realtime
        return cls(js, machine, nodes, rtj, classes.classify(nodes, js.requested, machine.nodes),
                   float(rtj.mean()) if len(js) else 0.0, None)

    @property
    def submit(self) -> np.ndarray:
        return self.jobset.release

    @property
    def runtime(self) -> np.ndarray:
        return self.jobset.runtime

    @property
    def requested(self) -> np.ndarray:
        return self.jobset.requested

    def __len__(self) -> int:
        return len(self.jobset)


def tag_realtime(js: JobSet, machine: Machine, fraction: float = 0.1, seed: int = 0,
                 classes: JobClasses | None = None) -> RealtimeJobs:
    """Tag a seeded share of the jobs as real-time (the rest are batch jobs).

    Parameters
    ----------
    js : JobSet
        Released at its submit times (``batch=False``); ``tasks`` are nodes.
    machine : Machine
    fraction : float
        Share of real-time jobs, in [0, 1]: exactly ``round(fraction * J)``
        jobs, drawn without replacement from ``default_rng(seed)``.
    seed : int
    classes : JobClasses, optional
    """
    if not 0 <= fraction <= 1:
        raise ValueError(f"the real-time fraction must be in [0, 1], got {fraction}")
    classes = JobClasses() if classes is None else classes
    nodes = machine.job_nodes(js.tasks)
    J = len(js)
    rtj = np.zeros(J, dtype=bool)
    rtj[np.random.default_rng(seed).choice(J, int(round(fraction * J)), replace=False)] = True
    cls = classes.classify(nodes, js.requested, machine.nodes)
    js = dataclasses.replace(js, realtime=rtj)
    return RealtimeJobs(js, machine, nodes, js.realtime, cls, float(fraction), int(seed))
