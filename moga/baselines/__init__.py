"""Baselines on the same execution and energy model as MOGA, their registry, and ``compare``.

* heuristics (:mod:`.heuristics`): FCFS, EASY, FCFS-greenest, EASY-greenest;
* searches (:mod:`.search`): random search with MOGA's budget, GA-MF;
* MOGA without blacklist: ``moga.run(..., use_blacklist=False)``;
* :data:`ALGORITHMS` (:mod:`.registry`): every algorithm by name, shared by
  :func:`compare`, sweeps and the CLI.
"""
from .compare import Comparison, compare
from .heuristics import HEURISTICS, heuristic, submit_order
from .registry import ALGORITHMS, Algorithm, algorithm, run_algorithm
from .search import ga_mf, random_search

__all__ = ["ALGORITHMS", "Algorithm", "Comparison", "HEURISTICS", "algorithm", "compare",
           "ga_mf", "heuristic", "random_search", "run_algorithm", "submit_order"]
