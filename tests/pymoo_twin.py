"""The slow, obviously correct twin of ``moga.run``'s generation loop: pymoo's own NSGA-II.

:func:`pymoo_run` builds a :class:`moga.Search` (its problem, operators,
archive, history and stop rules), then runs pymoo's ``minimize`` with
``NSGA2`` on those operators instead of stepping the search, and gives the
result the search would give. ``tests/test_engine.py`` checks that the
stepped loop equals it, bit for bit.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from pymoo.algorithms.moo.nsga2 import NSGA2
from pymoo.core.callback import Callback
from pymoo.core.termination import Termination
from pymoo.optimize import minimize
from pymoo.termination.collection import TerminationCollection

from moga.evolution.duplicates import ScheduleDuplicateElimination
from moga.evolution.mating import ArrayMating, PymooTournament
from moga.evolution.search import Search, _search_parts
from moga.evolution.survival import Population


class _Rule(Termination):
    """pymoo's termination asking one of the search's stop rules."""

    def __init__(self, rule, search, fired):
        super().__init__()
        self.rule, self.search, self.fired = rule, search, fired

    def _update(self, algorithm):
        view = SimpleNamespace(n_gen=algorithm.n_gen, elapsed=self.search.elapsed,
                               cpu_seconds=self.search.cpu_seconds,
                               recorder=self.search.recorder)
        if self.rule(view):
            self.fired.append(self.rule.name)
            return 1.0
        return 0.0


class _History(Callback):
    """pymoo's callback, feeding the search's recorder."""

    def __init__(self, recorder):
        super().__init__()
        self.recorder = recorder

    def notify(self, algorithm):
        off = algorithm.off if algorithm.off is not None else algorithm.pop
        self.recorder.record(algorithm.n_gen, algorithm.evaluator.n_eval, off.get("F"),
                             lambda rows: off[rows].get("X"),
                             lambda: algorithm.opt.get("F"))


def pymoo_run(*args, **kwargs):
    """``moga.run(*args, **kwargs)`` through pymoo's ``minimize`` (no islands)."""
    s = Search(*args, **kwargs)
    params = s.params
    _, sampling, selection, crossover, mutation, improve = _search_parts(
        s.problem, params, s.initial)
    algorithm = NSGA2(pop_size=params.pop_size,
                      **({} if selection is None else {"selection": selection}),
                      sampling=sampling, crossover=crossover, mutation=mutation,
                      eliminate_duplicates=ScheduleDuplicateElimination())
    algorithm.mating = ArrayMating(algorithm.mating.selection, crossover, mutation,
                                   improve=improve)
    assert selection is not None or isinstance(s.evolution.selection, PymooTournament)
    fired = []
    stops = [_Rule(r, s, fired) for r in s.stops]
    res = minimize(s.search, algorithm, TerminationCollection(*stops), seed=s.settings["seed"],
                   copy_termination=False, callback=_History(s.recorder), verbose=False,
                   save_history=False)
    s.stopped_by = fired[0] if fired else "no new child"
    F, X = np.atleast_2d(res.F), np.atleast_2d(res.X)
    s.evolution.pop = Population(X, F, np.zeros(len(F), dtype=int), np.zeros(len(F)),
                                 np.zeros(len(F), dtype=np.uint64))
    s.evolution.n_gen = int(res.algorithm.n_gen)
    return s.result()
