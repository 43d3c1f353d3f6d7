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
import itertools
import time

import numpy as np

from .duplicates import SeenRows, _row_hashes
from .mating import ArrayMating
from .operators import ScheduleSampling
from .survival import Population, survive

__all__ = ["Population", "evolve", "survive"]


def evolve(problem, *, pop_size: int, sampling, selection, crossover, mutation, seed: int,
           stop, observe=None, n_max_iterations: int = 100, improve=None, extra=None):
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
        Mating attempts allowed to replace duplicate children (pymoo's 100).
    improve : callable, optional
        Applied to the mutated children (see :class:`~moga.evolution.mating.ArrayMating`).
    extra : callable, optional
        ``extra(problem, pop, random_state)`` after each generation: rows (or None)
        decoded with the next children (:class:`~moga.evolution.fast_end.FastEndSearch`);
        rows equal to a parent or a child are dropped.

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
    S = sampling._do(problem, pop_size, random_state=rs)
    X = np.ascontiguousarray(S, dtype=np.float64)
    if X is S and not isinstance(sampling, ScheduleSampling):
        X = X.copy()  # another sampling's array may be its own: leave it as it is
    X += 0.0
    del S
    hashes = _row_hashes(X)
    keep = _first_occurrences(X, hashes)
    if keep.size < len(X):
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
        X = F = None  # the last children are in the population now (or gone)
        X, hashes = mating.children(
            problem, pop.X, pop_size, rs,
            functools.partial(_pairs, selection, pop, rs), hashes=pop.hashes)
        if len(X) == 0:  # pymoo stops when no new child can be made
            return pop
        if extra is not None:
            E = extra(problem, pop, rs)
            if E is not None and len(E):
                E = np.ascontiguousarray(E, dtype=np.float64) + 0.0
                seen = SeenRows(itertools.chain(pop.X, X),
                                np.concatenate([pop.hashes, hashes]))
                new = [(row, h) for row, h in zip(E, _row_hashes(E), strict=True)
                       if seen.add(row, h)]
                if new:
                    X = np.vstack([X, np.array([r for r, _ in new])])
                    hashes = np.concatenate([hashes, np.array([h for _, h in new],
                                                              dtype=np.uint64)])
        F = problem.decode(X)[0]
        n_evals += len(X)
        # The population's array is evolve's own (survive's gather at the start).
        pop = _merge_survive(pop, X, F, hashes, pop_size, rs, in_place=True)
        n_gen += 1


def _pairs(selection, pop, rs, n_matings):
    return selection.pairs(pop.rank, pop.crowding, pop.F, n_matings, rs)


def _merge_survive(pop, X, F, hashes, n_survive, random_state,
                   in_place: bool = False) -> Population:
    """:func:`survive` over the population and its children, gathering each kept row once;
    with ``in_place``, written over the population's own array (for a caller that uses the
    old population no more)."""
    n = len(pop)
    both = survive(np.arange(n + len(X))[:, None], np.vstack([pop.F, F]), n_survive,
                   random_state)
    idx = both.X[:, 0]
    A = pop.X
    if in_place and len(idx) == n and A.flags.writeable and A.flags.c_contiguous:
        _rows_in_place(A, idx, X)
    else:
        A = np.empty((len(idx), pop.X.shape[1]))
        for t, i in enumerate(idx):  # row by row: no gathered temporaries
            A[t] = pop.X[i] if i < n else X[i - n]
    return Population(A, both.F, both.rank, both.crowding,
                      np.concatenate([pop.hashes, hashes])[idx])


def _rows_in_place(A, src, B) -> None:
    """Make row ``t`` of ``A`` (n rows) the old row ``A[src[t]]`` when ``src[t] < n``, else
    ``B[src[t] - n]``; each source is used at most once.

    Moving an old row to another position is a chain: position t takes row src[t], whose
    position takes row src[src[t]], and so on. A chain that ends at a row nobody takes is
    copied from that end back (every row is read before it is overwritten); what is left
    are cycles, each rotated through one spare row.
    """
    n = len(A)
    taken = np.zeros(n, dtype=bool)  # old rows some position takes
    for s in src:
        if s < n:
            taken[s] = True
    done = np.zeros(n, dtype=bool)
    for end in range(n):
        if taken[end]:
            continue
        t = end
        while src[t] < n and not done[t]:
            done[t] = True
            if src[t] != t:
                A[t] = A[src[t]]
            t = src[t]
    for start in range(n):
        if done[start] or src[start] >= n:
            continue
        if src[start] == start:
            done[start] = True
            continue
        spare = A[start].copy()
        t = start
        while src[t] != start:
            done[t] = True
            A[t] = A[src[t]]
            t = src[t]
        done[t] = True
        A[t] = spare
    for t in range(n):
        if src[t] >= n:
            A[t] = B[src[t] - n]


def _first_occurrences(X, hashes) -> np.ndarray:
    """Indices of the rows of ``X`` not equal to an earlier row (pymoo's duplicate removal)."""
    seen = SeenRows(X[:0], hashes[:0])
    return np.array([i for i, (row, h) in enumerate(zip(X, hashes, strict=True))
                     if seen.add(row, h)], dtype=np.int64)
