"""The heuristics operators run today (FCFS, EASY, their greenest variants).

They are defined in :mod:`moga.model.heuristics`, below both the evolution
(its seeds start from them) and the baselines; this module keeps their names
here.
"""

from ..model.heuristics import HEURISTICS, heuristic, submit_order

__all__ = ["HEURISTICS", "submit_order", "heuristic"]
