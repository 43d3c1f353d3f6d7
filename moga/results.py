"""The shared result vocabulary of every search (docs/design.md §7).

MOGA (:func:`moga.run`), its ablation, random search and GA-MF all return a
:class:`SearchResult` (MOGA a :class:`~moga.evolution.runner.RunResult`, which
adds its history): the same names with the same meanings everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .metrics import knee_index
from .model.chromosome import split
from .model.jobset import JobSet
from .model.platform import Federation
from .model.schedule import Schedule, evaluate

__all__ = ["SearchResult"]


@dataclass(kw_only=True)
class SearchResult:
    """Non-dominated schedules found by a search.

    Attributes
    ----------
    name : str
        The algorithm ("MOGA", "MOGA without blacklist", "random search", "GA-MF").
    F : ndarray (n, m)
        Objectives of the distinct non-dominated points, sorted by the first.
    X : ndarray (n, J + J*K), or (n, J) without a blacklist
        Their chromosomes (:func:`moga.model.chromosome.split`).
    jobset, federation, model
        What was scheduled, on what, under which execution model.
    seed : int
        The seed of every random draw of the search.
    n_evals : int
        Chromosomes decoded.
    wall_time : float
        Seconds the search took.
    use_blacklist : bool
        Whether ``X`` carries a blacklist (False: every job may use every node).
    backfill, rule : str
        Decoder options the members are decoded with (a heuristic's EASY
        backfilling and allocation rule; ``"none"`` and ``"fastest"`` for MOGA).
    info : dict
        Anything else the algorithm reports (JSON-ready).
    """

    name: str
    F: np.ndarray
    X: np.ndarray
    jobset: JobSet
    federation: Federation
    model: str
    seed: int
    n_evals: int
    wall_time: float
    use_blacklist: bool = True
    backfill: str = "none"
    rule: str = "fastest"
    info: dict = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.F)

    def knee(self) -> int:
        """Index of the knee of the front (see :func:`moga.metrics.knee_index`)."""
        return knee_index(self.F)

    def chromosome(self, i: int):
        """``(order, blacklist)`` of member ``i`` (a zero blacklist without one)."""
        J, K = len(self.jobset), self.federation.n_clusters
        if not -len(self.F) <= i < len(self.F):
            raise IndexError(f"the front has {len(self.F)} members, got index {i}")
        if self.use_blacklist:
            return split(self.X[i], J, K)
        order, _ = split(self.X[i], J, 0)
        return order, np.zeros((J, K))

    def schedule(self, i: int) -> Schedule:
        """Decode member ``i`` into a :class:`~moga.model.schedule.Schedule`."""
        order, bl = self.chromosome(i)
        return evaluate(self.jobset, self.federation, order, bl, model=self.model,
                        backfill=self.backfill, rule=self.rule)
