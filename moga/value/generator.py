"""Seeded value functions for a job-set (docs/design.md §6).

Generator (:func:`attach_values`), all draws from one ``numpy`` generator:

* priority classes, by default three: high (share 10%, ``v_start`` 16),
  medium (30%, 4) and low (60%, 1);
* ``v_final = v_start * f`` with ``f ~ U(0.1, 0.5)``, below ``v_start``;
* soft deadline ``release + a * runtime`` with ``a ~ U(1, 4)``, and hard
  deadline ``soft + b * runtime`` with ``b ~ U(1, 3)``; ``runtime`` is the
  base run time (a node of speed 1.0), so faster clusters leave slack.

A job earns ``v_start`` if it completes by its soft deadline, then a value
decaying linearly to ``v_final`` at its hard deadline, then nothing.

Jobs run inside one cluster here, so extract job-sets against the largest
cluster: ``trace.jobset(..., federation=int(fed.nodes.max()), wide="drop")``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..model.jobset import JobSet

__all__ = ["PriorityClass", "DEFAULT_CLASSES", "attach_values"]


@dataclass(frozen=True)
class PriorityClass:
    """A priority class: its name, share of the jobs and starting value."""

    name: str
    share: float
    v_start: float


DEFAULT_CLASSES = (PriorityClass("high", 0.1, 16.0), PriorityClass("medium", 0.3, 4.0),
                   PriorityClass("low", 0.6, 1.0))


def attach_values(js: JobSet, seed: int = 0, classes=DEFAULT_CLASSES, final_fraction=(0.1, 0.5),
                  soft_factor=(1.0, 4.0), hard_factor=(1.0, 3.0)) -> JobSet:
    """A copy of ``js`` with seeded value functions (see the module docstring).

    Parameters
    ----------
    js : JobSet
    seed : int
    classes : sequence of PriorityClass
        Shares must sum to 1; class 0 is the highest priority.
    final_fraction : (float, float)
        Range of ``v_final / v_start``, within [0, 1].
    soft_factor, hard_factor : (float, float)
        Ranges of ``a`` and ``b`` (multiples of the base run time), >= 0.
    """
    shares = np.array([c.share for c in classes], dtype=float)
    if len(classes) == 0 or np.any(shares < 0) or not np.isclose(shares.sum(), 1.0):
        raise ValueError(f"class shares must be >= 0 and sum to 1, got {shares.tolist()}")
    if any(c.v_start <= 0 for c in classes):
        raise ValueError("every class needs v_start > 0")
    lo, hi = final_fraction
    if not 0.0 <= lo <= hi <= 1.0:
        raise ValueError(f"final_fraction must satisfy 0 <= low <= high <= 1, got {final_fraction}")
    for name, (a, b) in (("soft_factor", soft_factor), ("hard_factor", hard_factor)):
        if not 0.0 <= a <= b:
            raise ValueError(f"{name} must satisfy 0 <= low <= high, got {(a, b)}")
    rng = np.random.default_rng(seed)
    J = len(js)
    priority = rng.choice(len(classes), size=J, p=shares / shares.sum())
    v_start = np.array([c.v_start for c in classes])[priority]
    v_final = v_start * rng.uniform(lo, hi, J)
    soft = js.release + rng.uniform(*soft_factor, J) * js.runtime
    hard = soft + rng.uniform(*hard_factor, J) * js.runtime
    report = dict(js.report, value_seed=seed,
                  value_classes=[(c.name, c.share, c.v_start) for c in classes])
    # Every other field (power factors, requested times, flags) is kept as it is.
    return replace(js, report=report, v_start=v_start, v_final=v_final, soft=soft, hard=hard,
                   priority=priority)
