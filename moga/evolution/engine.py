"""NSGA-II's generation loop on plain arrays, draw for draw the same as pymoo's.

pymoo runs NSGA-II on ``Population`` objects: every step wraps its output in
new ``Individual`` objects and reads genes and objectives back one
individual at a time. On a 1,000-job set that bookkeeping cost as much as
decoding the generation (measured: 3.0 s for 200 generations, 1.5 s of
it decoding, on 2 cores). :func:`evolve` keeps the population in arrays and
calls pymoo's own pieces where NSGA-II's behaviour lives (non-dominated
sorting, crowding distance, the randomised sort of the splitting front),
MOGA's operators and selection for the rest, in the order pymoo calls them
and with the same random generator. A run with :func:`evolve` is therefore
bit-identical to ``pymoo.optimize.minimize`` with ``NSGA2`` and the same
operators and seed; ``tests/test_engine.py`` checks this on many runs.

pymoo's loop stays in use where its per-generation table is asked for
(``verbose=True``) and where the mating is pymoo's own tournament
(``GAParams.mating_neighbours = 0``); see :func:`moga.run`.
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass

import numpy as np
from pymoo.operators.survival.rank_and_crowding.metrics import get_crowding_function
from pymoo.util.nds.non_dominated_sorting import NonDominatedSorting
from pymoo.util.randomized_argsort import randomized_argsort

from .mating import ArrayMating
from .operators import SeenRows, _row_hashes

__all__ = ["Population", "evolve", "survive"]


@dataclass
class Population:
    """A population as arrays: chromosomes ``X`` (n, n_var), objectives ``F`` (n, m),
    NSGA-II ``rank`` and ``crowding`` (n,), and the chromosomes' row ``hashes`` (n,)."""

    X: np.ndarray
    F: np.ndarray
    rank: np.ndarray
    crowding: np.ndarray
    hashes: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.X)


_NDS = NonDominatedSorting()
_CROWDING = get_crowding_function("cd")


def survive(X, F, n_survive: int, random_state, hashes=None) -> Population:
    """NSGA-II's survival (pymoo's ``RankAndCrowding``) of the rows of ``X``, ``F``.

    Whole fronts are kept in order of rank; the front that does not fit is
    cut by crowding distance, ties broken by ``random_state`` exactly as
    pymoo breaks them. Survivors come in pymoo's order (by front, the cut
    front by decreasing crowding distance). ``hashes`` (of the rows of ``X``)
    go with their rows.
    """
    F = np.asarray(F, dtype=float)
    n_survive = min(int(n_survive), len(F))
    survivors, ranks, crowds = [], [], []
    n_kept = 0
    for k, front in enumerate(_NDS.do(F, n_stop_if_ranked=n_survive)):
        if n_kept + len(front) > n_survive:
            n_remove = n_kept + len(front) - n_survive
            crowding = _CROWDING.do(F[front, :], n_remove=n_remove)
            keep = randomized_argsort(crowding, order="descending", method="numpy",
                                      random_state=random_state)[:-n_remove]
        else:
            crowding = _CROWDING.do(F[front, :], n_remove=0)
            keep = np.arange(len(front))
        survivors.append(front[keep])
        ranks.append(np.full(len(keep), k))
        crowds.append(crowding[keep])
        n_kept += len(keep)
    idx = np.concatenate(survivors)
    return Population(X[idx], F[idx], np.concatenate(ranks), np.concatenate(crowds),
                      None if hashes is None else hashes[idx])


def evolve(problem, *, pop_size: int, sampling, selection, crossover, mutation, seed: int,
           stop, observe=None, n_max_iterations: int = 100, improve=None):
    """Run NSGA-II and return its final :class:`Population`.

    Parameters
    ----------
    problem : SchedulingProblem
        Decodes a batch of chromosomes with ``problem.decode(X)``.
    pop_size : int
        Population size; also the offspring per generation.
    sampling : pymoo Sampling
        Its ``_do(problem, n, random_state=...)`` gives the initial chromosomes.
    selection : NeighbourSelection
        Parent pairs from arrays (``selection.pairs``).
    crossover, mutation : pymoo Crossover, Mutation
        MOGA's operators (their ``_do`` work on arrays).
    seed : int
        Seed of the one random generator every draw comes from.
    stop : callable
        ``stop(n_gen, elapsed_s)`` is asked after every generation, before
        ``observe`` (as pymoo asks its termination before its callback); a
        true value ends the run after that generation.
    observe : callable, optional
        ``observe(n_gen, n_evals, pop, off_F, off_X)`` after every generation:
        ``off_*`` are the chromosomes decoded in it (the initial population at
        generation 1).
    n_max_iterations : int
        Rounds of mating allowed to replace duplicate children (pymoo's 100).
    improve : callable, optional
        Applied to the mutated children (see :class:`~moga.evolution.mating.ArrayMating`).

    Returns
    -------
    Population
        The final population, in survival order.
    """
    rs = np.random.default_rng(seed)
    t0 = time.time()
    mating = ArrayMating(selection, crossover, mutation, n_max_iterations=n_max_iterations,
                         improve=improve)

    # pymoo compares chromosomes with -0.0 read as 0.0; so does the array loop.
    X = np.ascontiguousarray(sampling._do(problem, pop_size, random_state=rs),
                             dtype=np.float64) + 0.0
    hashes = _row_hashes(X)
    keep = _first_occurrences(X, hashes)
    X, hashes = X[keep], hashes[keep]
    F = problem.decode(X)[0]
    n_evals = len(X)
    pop = survive(X, F, len(X), rs, hashes)
    n_gen = 1
    while True:
        done = stop(n_gen, time.time() - t0)
        if observe is not None:
            observe(n_gen, n_evals, pop, F, X)
        if done:
            return pop
        X, hashes = mating.children(
            problem, pop.X, pop_size, rs,
            functools.partial(_pairs, selection, pop, rs), hashes=pop.hashes)
        if len(X) == 0:  # pymoo stops when no new child can be made
            return pop
        F = problem.decode(X)[0]
        n_evals += len(X)
        pop = _merge_survive(pop, X, F, hashes, pop_size, rs)
        n_gen += 1


def _pairs(selection, pop, rs, n_matings):
    return selection.pairs(pop.rank, pop.crowding, pop.F, n_matings, rs)


def _merge_survive(pop, X, F, hashes, n_survive, random_state) -> Population:
    """:func:`survive` over the population and its children, gathering each kept row once."""
    n = len(pop)
    both = survive(np.arange(n + len(X))[:, None], np.vstack([pop.F, F]), n_survive,
                   random_state)
    idx = both.X[:, 0]
    old, new = idx[idx < n], idx[idx >= n] - n
    out = np.empty((len(idx), pop.X.shape[1]))
    out[idx < n] = pop.X[old]
    out[idx >= n] = X[new]
    return Population(out, both.F, both.rank, both.crowding,
                      np.concatenate([pop.hashes, hashes])[idx])


def _first_occurrences(X, hashes) -> np.ndarray:
    """Indices of the rows of ``X`` not equal to an earlier row (pymoo's duplicate removal)."""
    seen = SeenRows(X[:0], hashes[:0])
    return np.array([i for i, (row, h) in enumerate(zip(X, hashes, strict=True))
                     if seen.add(row, h)], dtype=np.int64)
