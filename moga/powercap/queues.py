"""Queues by requested time, their expected wait times, and the weighted queue time.

docs/design.md §11. The power-capped dispatcher's objective weighs each job's
wait by how long its queue is expected to wait: ``max_ewt / ewt_i``, so a
minute in the debug queue costs as much as 24 in the long one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from decoders._kernels import exact_dot

__all__ = ["Queues"]


@dataclass(frozen=True)
class Queues:
    """Queues by requested time, shortest first.

    Parameters
    ----------
    names : tuple of str
        Queue names.
    limits : tuple of float
        Requested-time limits (s) of every queue but the last: a job goes to
        the first queue whose limit is at least its requested time, else to
        the last. Default 30 min (debug) and 6 h (parallel), as on Eurora.
    ewt : tuple of float
        Expected wait time of each queue, s (> 0): debug 3,600, parallel
        21,600, long 86,400 (the seed's values).
    """

    names: tuple = ("debug", "parallel", "long")
    limits: tuple = (1800.0, 21600.0)
    ewt: tuple = (3600.0, 21600.0, 86400.0)

    def __post_init__(self):
        n = len(self.names)
        if n < 1 or len(self.ewt) != n or len(self.limits) != n - 1:
            raise ValueError(f"queues need one ewt per queue and one limit per queue but the last; "
                             f"got {n} names, {len(self.ewt)} ewt, {len(self.limits)} limits")
        if any(not (e > 0 and np.isfinite(e)) for e in self.ewt):
            raise ValueError(f"expected wait times must be finite and > 0, got {self.ewt}")
        if list(self.limits) != sorted(self.limits) or any(not lim > 0 for lim in self.limits):
            raise ValueError(f"queue limits must be > 0 and increasing, got {self.limits}")

    def classify(self, requested) -> np.ndarray:
        """The queue index of each job, from its requested time (s)."""
        return np.searchsorted(np.asarray(self.limits, dtype=float),
                               np.asarray(requested, dtype=float), side="left").astype(np.int64)

    def weights(self, requested) -> np.ndarray:
        """``max_ewt / ewt`` of each job's queue."""
        ewt = np.asarray(self.ewt, dtype=float)
        return ewt.max() / ewt[self.classify(requested)]

    def weighted_queue_time(self, requested, release, start) -> float:
        """``sum_i (max_ewt / ewt_i) * (start_i - release_i)``, s (the seed's objective)."""
        return exact_dot(self.weights(requested), np.asarray(start) - np.asarray(release))
