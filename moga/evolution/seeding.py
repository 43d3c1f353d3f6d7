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

Ties keep the submit order. Under the in-order decoder a start order alone
decodes to a schedule at least as early for every job up to the first one that
starts earlier than in the heuristic's schedule, not to the same schedule (a
job that fits earlier starts earlier, on other clusters or nodes than the
heuristic gave it). :func:`heuristic_seeds` therefore also pairs the start
orders of the heuristics that the empty blacklist does not reproduce
(``EASY``, ``EASY-greenest``, ``FCFS-greenest``) with their *allocation
blacklists* (:func:`allocation_blacklist`): job j may use exactly the nodes
the heuristic gave it on each cluster, and none elsewhere. Decoded in order,
such a seed gives the heuristic's schedule unless some job can start before
its heuristic start time on those nodes, which only EASY's reservation can
have forbidden; but with run times known exactly, a job that the head's
reservation keeps waiting stays waiting until that head starts (the shadow
time stays put and the spare nodes only shrink), so the head comes first in
the start order and the in-order decoder, which never starts a job before
its predecessor, cannot start the job earlier either. Where that reasoning
fails (finish times that move after a start), the first job whose start
differs starts earlier than in the heuristic: the tests check this, and
exactness on the bundled month. On the monthly job-sets of the shared traces
that ``benchmarks/quality.py`` measures, all three were reproduced exactly
except EASY-greenest on RICC and CTC-SP2, where 6 of 55,103 and 1 of 7,077
jobs start earlier (by up to 3 s and 605 s) under the fluid model, with
makespan and energy equal to the last bit.

:func:`moga.run` decodes these seeds once and puts them in its archive, not
in its population: the final front then weakly dominates each of these
heuristics wherever its seed reproduces it, and the search is not crowded by
three restrictive blacklists (in the population they lowered the default
run's median from 89.9% to 86.8% of the reference front, 1,000-job sets of
``benchmarks/quality.py``, 5 seeds).
``moga.run(..., backfill="easy")`` searches over EASY queue orders instead,
where the submit order gives EASY exactly.
"""

from __future__ import annotations

import numpy as np

from ..model.chromosome import pinned_blacklists
from ..model.heuristics import heuristic
from ..model.jobset import JobSet
from ..model.platform import Federation
from ..model.schedule import evaluate

__all__ = ["HEURISTIC_ORDERS", "ALLOCATION_SEEDS", "heuristic_orders", "heuristic_seeds",
           "allocation_blacklist"]

#: Names of the seeded orders, in the order they enter the population.
HEURISTIC_ORDERS = ("FCFS", "EASY", "EASY-greenest", "SJF", "LJF", "widest", "narrowest",
                    "least-work", "most-work")
#: Heuristics (of :data:`moga.baselines.HEURISTICS`) seeded with their allocation blacklists.
ALLOCATION_SEEDS = ("EASY", "EASY-greenest", "FCFS-greenest")


def _by(key, submit_rank):
    return np.lexsort((submit_rank, key)).astype(np.int64)


def allocation_blacklist(alloc, nodes) -> np.ndarray:
    """The blacklist that allows job j exactly ``alloc[j, k]`` nodes of cluster k.

    ``floor(beta * N_k)`` nodes are barred (docs/design.md §5), so
    ``beta = (N_k - x + 1/2) / N_k`` bars ``N_k - x`` of them whatever the
    rounding of the division; an unused cluster gets 1 (all barred), a wholly
    used one 0. One schedule's
    :func:`~moga.model.chromosome.pinned_blacklists`.

    Parameters
    ----------
    alloc : array_like of int, shape (J, K)
        Tasks of each job on each cluster (a :class:`~moga.Schedule`'s ``alloc``).
    nodes : array_like of int, shape (K,)

    Returns
    -------
    ndarray, shape (J, K)
    """
    alloc = np.asarray(alloc)
    nodes = np.asarray(nodes, dtype=float)
    if alloc.ndim != 2 or alloc.shape[1] != nodes.size:
        raise ValueError(f"alloc must be (J, {nodes.size}), got shape {alloc.shape}")
    if np.any(alloc < 0) or np.any(alloc > nodes):
        raise ValueError("alloc entries must lie in [0, nodes of their cluster]")
    return pinned_blacklists(alloc, nodes)


def heuristic_seeds(js: JobSet, fed: Federation, model: str = "fluid",
                    names=ALLOCATION_SEEDS) -> dict:
    """``{name: (order, blacklist)}``: start order and allocation blacklist of each heuristic.

    See the module docstring; ``names`` are among :data:`ALLOCATION_SEEDS`.
    """
    rank = _submit_rank(js)
    out = {}
    for name in names:
        if name not in ALLOCATION_SEEDS:
            raise ValueError(f"unknown allocation seed {name!r}; choose from "
                             f"{list(ALLOCATION_SEEDS)}")
        s = heuristic(js, fed, name, model)
        out[name] = (_by(s.start, rank), allocation_blacklist(s.alloc, fed.nodes))
    return out


def _submit_rank(js: JobSet) -> np.ndarray:
    """Each job's position in the submit order (release time, ties by position)."""
    rank = np.empty(len(js), dtype=np.int64)
    rank[js.submit_order] = np.arange(len(js))
    return rank


def heuristic_orders(js: JobSet, fed: Federation, model: str = "fluid",
                     names=HEURISTIC_ORDERS) -> dict:
    """The seeded orders of ``js`` on ``fed`` by name (see the module docstring).

    Orders equal to one already listed are left out, so every value is distinct.
    """
    J = len(js)
    submit = js.submit_order
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
