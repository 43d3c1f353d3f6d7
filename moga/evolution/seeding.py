"""Heuristic seeds of the initial population: the orders of cheap baselines.

The front should start where every heuristic stands, so that the search only
has to improve on them: the initial population holds the orders below, each
with the empty blacklist and with uniform grid blacklists
(:func:`moga.evolution.operators.seed_blacklists`).

==================  ==========================================================
``FCFS``            submit order (ties by position)
``EASY``            EASY backfilling's start order (under the problem's model)
``EASY-greenest``   the start order of EASY with the greenest allocation rule
``SJF`` / ``LJF``   shortest / longest base run time first
``widest``          most tasks first; ``narrowest``: fewest first
``least-work``      smallest ``tasks x runtime`` first; ``most-work``: largest
==================  ==========================================================

Ties keep the submit order. Under the in-order decoder a start order decodes
to a schedule at least as early for every job up to the first one that starts
earlier than in the heuristic's schedule, not to the same schedule (a job that
fits earlier starts earlier); ``moga.run(..., backfill="easy")`` searches over
EASY queue orders instead, where the submit order gives EASY exactly.
"""

from __future__ import annotations

import numpy as np

from ..model.jobset import JobSet
from ..model.platform import Federation
from ..model.schedule import evaluate

__all__ = ["HEURISTIC_ORDERS", "heuristic_orders"]

#: Names of the seeded orders, in the order they enter the population.
HEURISTIC_ORDERS = ("FCFS", "EASY", "EASY-greenest", "SJF", "LJF", "widest", "narrowest",
                    "least-work", "most-work")


def _by(key, submit_rank):
    return np.lexsort((submit_rank, key)).astype(np.int64)


def heuristic_orders(js: JobSet, fed: Federation, model: str = "fluid",
                     names=HEURISTIC_ORDERS) -> dict:
    """The seeded orders of ``js`` on ``fed`` by name (see the module docstring).

    Orders equal to one already listed are left out, so every value is distinct.
    """
    J = len(js)
    submit = np.lexsort((np.arange(J), js.release)).astype(np.int64)
    rank = np.empty(J, dtype=np.int64)
    rank[submit] = np.arange(J)
    work = js.tasks * js.runtime
    out = {}
    for name in names:
        if name == "FCFS":
            order = submit
        elif name in ("EASY", "EASY-greenest"):
            rule = "greenest" if name.endswith("greenest") else "fastest"
            s = evaluate(js, fed, submit, None, model=model, backfill="easy", rule=rule)
            order = _by(s.start, rank)
        elif name == "SJF":
            order = _by(js.runtime, rank)
        elif name == "LJF":
            order = _by(-js.runtime, rank)
        elif name == "widest":
            order = _by(-js.tasks, rank)
        elif name == "narrowest":
            order = _by(js.tasks, rank)
        elif name == "least-work":
            order = _by(work, rank)
        elif name == "most-work":
            order = _by(-work, rank)
        else:
            raise ValueError(f"unknown seed order {name!r}; choose from {list(HEURISTIC_ORDERS)}")
        if not any(np.array_equal(order, o) for o in out.values()):
            out[name] = order
    return out
