"""Heuristics on the same execution and energy model as MOGA.

Each is one decode of the federated kernel, submit order, empty blacklist:

* ``FCFS``: first come, first served, jobs strictly in submit order, fastest
  clusters first (the MOGA decoder on the submit order);
* ``EASY``: textbook EASY backfilling (one reservation for the blocked head);
* ``FCFS-greenest`` / ``EASY-greenest``: the same with the greenest allocation
  rule (least energy per unit of work first).

They live with the model, below both the evolution (whose seeds start from
them) and the baselines (which compare with them);
:mod:`moga.baselines.heuristics` re-exports them.
"""

from __future__ import annotations

import numpy as np

from .jobset import JobSet
from .platform import Federation
from .schedule import Schedule, evaluate

__all__ = ["HEURISTICS", "submit_order", "heuristic"]

#: Heuristic name -> (backfilling, allocation rule).
HEURISTICS = {
    "FCFS": ("none", "fastest"),
    "EASY": ("easy", "fastest"),
    "FCFS-greenest": ("none", "greenest"),
    "EASY-greenest": ("easy", "greenest"),
}


def submit_order(js: JobSet) -> np.ndarray:
    """Job positions by release time, ties by position."""
    return js.submit_order


def heuristic(js: JobSet, fed: Federation, name: str = "FCFS", model: str = "fluid") -> Schedule:
    """Schedule of one of :data:`HEURISTICS` (submit order, empty blacklist)."""
    if name not in HEURISTICS:
        raise ValueError(f"unknown heuristic {name!r}; choose one of {list(HEURISTICS)}")
    backfill, rule = HEURISTICS[name]
    return evaluate(js, fed, submit_order(js), None, model=model, backfill=backfill, rule=rule)
