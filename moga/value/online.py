"""Online heuristics on value-function workloads (:mod:`decoders.online`, on the core loop).

Names (:data:`ONLINE_HEURISTICS`), each distinct from the federated
heuristics of :mod:`moga.baselines` (whose ``"EASY"`` runs on the federated
decoder): ``"online-EASY"``, ``"online-FCFS-multi"``, ``"Max-Max-Value"`` and
``"Max-Max-VPR"``. The simulator's own codes (``"easy"``, ``"fcfs-multi"``,
``"max-max-value"``, ``"max-max-vpr"``) are accepted too.
"""

from __future__ import annotations

from decoders.online import simulate

from ..model.jobset import JobSet
from ..model.platform import Federation
from .schedule import ValueSchedule, value_arrays, value_schedule

__all__ = ["ONLINE_HEURISTICS", "online", "run_heuristic"]

#: Online heuristic name -> the simulator's code.
ONLINE_HEURISTICS = {"online-EASY": "easy", "online-FCFS-multi": "fcfs-multi",
                     "Max-Max-Value": "max-max-value", "Max-Max-VPR": "max-max-vpr"}
_BY_CODE = {v: k for k, v in ONLINE_HEURISTICS.items()}


def canonical(name: str) -> str:
    """The registry name of an online heuristic given by name or simulator code."""
    if name in ONLINE_HEURISTICS:
        return name
    if name in _BY_CODE:
        return _BY_CODE[name]
    raise ValueError(f"unknown online heuristic {name!r}; choose one of {list(ONLINE_HEURISTICS)}")


def online(js: JobSet, fed: Federation, heuristic: str = "online-EASY", small: int = 16,
           medium: int = 256) -> ValueSchedule:
    """Simulate an online heuristic (:data:`ONLINE_HEURISTICS`) on a value-function job-set:
    the one schedule record with the values beside it (:class:`ValueSchedule`, a
    :class:`moga.Schedule` whose jobs not run count as rejected).

    ``reserved`` holds each job's reservation or place-holder start (NaN if it
    started when first mapped); ``n_dropped`` counts the jobs dropped because
    they could earn nothing any more. See :mod:`decoders.online` for the rules.
    """
    name = canonical(heuristic)
    code = ONLINE_HEURISTICS[name]
    r = simulate(*value_arrays(js, fed), heuristic=code, small=small, medium=medium)
    return value_schedule(js, fed, r, n_dropped=r.n_dropped, reserved=r.reserved,
                          n_events=r.n_events, policy=name)


def run_heuristic(js: JobSet, fed: Federation, *, heuristic: str, **_common):
    """An online heuristic as the one schedule record of every job (its
    :class:`ValueSchedule`): the jobs it never ran are rejected rows, counted in
    ``summary()``.

    The execution model, allocation rule and estimates of the catalogue's other
    policies (``_common``) do not apply: each job runs inside one cluster, its
    duration known.
    """
    return online(js, fed, heuristic)
