"""NSGA-II's generation loop on plain arrays, draw for draw the same as pymoo's.

pymoo runs NSGA-II on ``Population`` objects: every step wraps its output in
new ``Individual`` objects and reads genes and objectives back one
individual at a time. On a 1,000-job set that bookkeeping cost as much as
decoding the generation. :class:`Evolution` keeps the population in arrays and
calls pymoo's own pieces where NSGA-II's behaviour lives (non-dominated
sorting, crowding distance, the randomised sort of the splitting front, the
binary tournament of :class:`~moga.evolution.mating.PymooTournament`),
MOGA's operators and selection for the rest, in the order pymoo calls them
and with the same random generator. A run is therefore bit-identical to
``pymoo.optimize.minimize`` with ``NSGA2`` and the same operators and seed;
``tests/test_engine.py`` checks this on many runs against the twin in
``tests/pymoo_twin.py``.

:class:`Evolution` is the package's one generation loop: one generation per
:meth:`~Evolution.step` (or :meth:`~Evolution.ask` and :meth:`~Evolution.tell`
around a decode made elsewhere), its whole state in :meth:`~Evolution.state`.
:class:`moga.Search` (``moga.run``), the island model's epochs and the online
MOGA's decisions (:func:`evolve`) all step it.
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

__all__ = ["Evolution", "Population", "evolve", "survive"]


class Evolution:
    """NSGA-II on arrays, one generation per :meth:`step`: the package's one generation loop.

    :meth:`step` makes generation 1 (the sampled population) the first time,
    then one generation of children and survival each time. :meth:`ask` and
    :meth:`tell` split a step around its decode, for an evaluator of the
    caller's own; :meth:`state` and :meth:`set_state` carry the whole loop
    (population, random generator, counters) so that a loop restored from a
    state continues draw for draw as the one it was taken from.

    Parameters
    ----------
    problem : SchedulingProblem
        Decodes a batch of chromosomes with ``problem.decode(X)``.
    pop_size : int
        Population size; also the offspring per generation.
    sampling : pymoo Sampling
        Its ``_do(problem, n, random_state=...)`` gives the initial chromosomes.
    selection : object
        Parent pairs from arrays (``selection.pairs(rank, crowding, F, n, rs)``).
    crossover, mutation : pymoo Crossover, Mutation
        MOGA's operators (their ``_do`` work on arrays).
    seed : int or numpy.random.SeedSequence
        Seed of the one random generator every draw comes from.
    n_max_iterations : int
        Mating attempts allowed to replace duplicate children (pymoo's 100).
    improve : callable, optional
        Applied to the mutated children (see :class:`~moga.evolution.mating.ArrayMating`).
    extra : callable, optional
        ``extra(problem, pop, random_state)`` after each generation: rows (or None)
        decoded with the next children (:class:`~moga.evolution.fast_end.FastEndSearch`);
        rows equal to a parent or a child are dropped.
    survival : callable, optional
        ``survival(X, F, n, random_state, hashes)`` gives the survivors as a
        :class:`Population` (default :func:`survive`, NSGA-II's;
        :class:`~moga.evolution.survival.ReferenceSurvival` is NSGA-III's). One
        with ``state()``/``set_state()`` has its memory carried in :meth:`state`.

    Attributes
    ----------
    pop : Population or None
        The population, in survival order (None before generation 1).
    n_gen, n_evals : int
        Generations made and chromosomes decoded.
    exhausted : bool
        True once a step could make no new child (pymoo then stops).
    """

    def __init__(self, problem, *, pop_size: int, sampling, selection, crossover, mutation,
                 seed, n_max_iterations: int = 100, improve=None, extra=None, survival=None):
        self.problem = problem
        self.survive = survive if survival is None else survival
        self.pop_size = int(pop_size)
        self.sampling, self.selection, self.extra = sampling, selection, extra
        self.rs = np.random.default_rng(seed)
        self.mating = ArrayMating(selection, crossover, mutation,
                                  n_max_iterations=n_max_iterations, improve=improve)
        self.pop = None
        self.n_gen = self.n_evals = 0
        self.exhausted = False
        self._asked = None  # (X, hashes) handed out by ask, waiting for tell

    def ask(self) -> np.ndarray:
        """The chromosomes the next generation decodes (n, n_var): the initial population
        before generation 1, then the children (empty when no new child could be made).

        Asking again before :meth:`tell` gives the same rows without new draws.
        """
        if self._asked is not None:
            return self._asked[0]
        rs = self.rs
        if self.pop is None:
            # pymoo compares chromosomes with -0.0 read as 0.0; so does the array loop.
            S = self.sampling._do(self.problem, self.pop_size, random_state=rs)
            X = np.ascontiguousarray(S, dtype=np.float64)
            if X is S and not isinstance(self.sampling, ScheduleSampling):
                X = X.copy()  # another sampling's array may be its own: leave it as it is
            X += 0.0
            del S
            hashes = _row_hashes(X)
            keep = _first_occurrences(X, hashes)
            if keep.size < len(X):
                X, hashes = X[keep], hashes[keep]
        else:
            pop = self.pop
            X, hashes = self.mating.children(
                self.problem, pop.X, self.pop_size, rs,
                functools.partial(_pairs, self.selection, pop, rs), hashes=pop.hashes)
            if len(X) and self.extra is not None:
                X, hashes = _with_extra(self.extra(self.problem, pop, rs), pop, X, hashes)
        self._asked = (X, hashes)
        return X

    def tell(self, F) -> None:
        """Take the objectives ``F`` (n, m) of the rows :meth:`ask` gave, in their order,
        and make the generation's survival."""
        if self._asked is None:
            raise RuntimeError("tell() needs the rows of an ask() first")
        X, hashes = self._asked
        F = np.asarray(F, dtype=np.float64)
        if F.ndim != 2 or len(F) != len(X):
            raise ValueError(f"tell() needs one row of objectives per asked chromosome "
                             f"({len(X)}), got an array of shape {F.shape}")
        self._asked = None
        if len(X) == 0:  # pymoo stops when no new child can be made
            self.exhausted = True
            return
        self.n_evals += len(X)
        if self.pop is None:
            self.pop = self.survive(X, F, len(X), self.rs, hashes)
        else:
            # The population's array is the loop's own (survive's gather, or a state's copy).
            self.pop = _merge_survive(self.pop, X, F, hashes, self.pop_size, self.rs,
                                      in_place=True, survival=self.survive)
        self.n_gen += 1

    def step(self):
        """Make one generation: ``(X, F)`` of the chromosomes decoded in it (``(X, None)``
        with no row when no new child could be made, :attr:`exhausted` then true)."""
        X = self.ask()
        F = self.problem.decode(X)[0] if len(X) else np.empty((0, 0))
        self.tell(F)
        return X, (F if len(X) else None)

    def state(self, copy: bool = True) -> dict:
        """The loop's state as plain values and arrays (copies; with ``copy=False`` the
        population's own arrays, to be read before the next step): see :meth:`set_state`."""
        if self._asked is not None:
            raise RuntimeError("state() between ask() and tell(): tell the objectives first")
        pop = self.pop
        own = (lambda a: a.copy()) if copy else (lambda a: a)
        return {"rng": self.rs.bit_generator.state, "n_gen": self.n_gen,
                "n_evals": self.n_evals, "exhausted": self.exhausted,
                **({"survival": self.survive.state()} if hasattr(self.survive, "state")
                   else {}),
                **({} if pop is None else
                   {"X": own(pop.X), "F": own(pop.F), "rank": own(pop.rank),
                    "crowding": own(pop.crowding), "hashes": own(pop.hashes)})}

    def set_state(self, state: dict) -> None:
        """Continue from a :meth:`state` (of a loop built with the same settings)."""
        self.rs = np.random.Generator(getattr(np.random, state["rng"]["bit_generator"])())
        self.rs.bit_generator.state = state["rng"]
        self.n_gen, self.n_evals = int(state["n_gen"]), int(state["n_evals"])
        self.exhausted = bool(state["exhausted"])
        if "survival" in state:
            self.survive.set_state(state["survival"])
        self._asked = None
        self.pop = (None if "X" not in state else
                    Population(np.array(state["X"], dtype=np.float64),
                               np.array(state["F"], dtype=np.float64),
                               np.array(state["rank"]), np.array(state["crowding"],
                                                                 dtype=np.float64),
                               np.array(state["hashes"], dtype=np.uint64)))

    def receive(self, migrants) -> None:
        """Let migrants ``(X, F)`` join the population: NSGA-II's survival of both, members
        first (a migrant equal to a member is dropped)."""
        mX, mF = migrants
        if self.pop is None or not len(mX):
            return
        pop = self.pop
        X = np.vstack([pop.X, mX])
        F = np.vstack([pop.F, mF])
        hashes = np.concatenate([pop.hashes, _row_hashes(mX)])
        keep = _first_occurrences(X, hashes)
        self.pop = self.survive(X[keep], F[keep], self.pop_size, self.rs, hashes[keep])


def evolve(problem, *, pop_size: int, sampling, selection, crossover, mutation, seed: int,
           stop, observe=None, n_max_iterations: int = 100, improve=None, extra=None):
    """Run NSGA-II (an :class:`Evolution` stepped until ``stop``) and return its final
    :class:`Population`.

    Parameters
    ----------
    problem, pop_size, sampling, selection, crossover, mutation, seed, n_max_iterations,
    improve, extra
        As in :class:`Evolution`.
    stop : callable
        ``stop(n_gen, elapsed_s)`` is asked after every generation, before
        ``observe``; a true value ends the run after that generation.
    observe : callable, optional
        ``observe(n_gen, n_evals, pop, off_F, off_X)`` after every generation:
        ``off_*`` are the chromosomes decoded in it (the initial population at
        generation 1).

    Returns
    -------
    Population
        The final population, in survival order.
    """
    t0 = time.time()
    evo = Evolution(problem, pop_size=pop_size, sampling=sampling, selection=selection,
                    crossover=crossover, mutation=mutation, seed=seed,
                    n_max_iterations=n_max_iterations, improve=improve, extra=extra)
    while True:
        X, F = evo.step()
        if evo.exhausted:
            return evo.pop
        done = stop(evo.n_gen, time.time() - t0)
        if observe is not None:
            observe(evo.n_gen, evo.n_evals, evo.pop, F, X)
        if done:
            return evo.pop


def _with_extra(E, pop, X, hashes):
    """The children ``X`` and the extra rows ``E`` unlike any parent or child."""
    if E is None or not len(E):
        return X, hashes
    E = np.ascontiguousarray(E, dtype=np.float64) + 0.0
    seen = SeenRows(itertools.chain(pop.X, X), np.concatenate([pop.hashes, hashes]))
    new = [(row, h) for row, h in zip(E, _row_hashes(E), strict=True) if seen.add(row, h)]
    if not new:
        return X, hashes
    return (np.vstack([X, np.array([r for r, _ in new])]),
            np.concatenate([hashes, np.array([h for _, h in new], dtype=np.uint64)]))


def _pairs(selection, pop, rs, n_matings):
    return selection.pairs(pop.rank, pop.crowding, pop.F, n_matings, rs)


def _merge_survive(pop, X, F, hashes, n_survive, random_state,
                   in_place: bool = False, survival=survive) -> Population:
    """``survival`` (:func:`survive`) over the population and its children, gathering each
    kept row once; with ``in_place``, written over the population's own array (for a caller
    that uses the old population no more)."""
    n = len(pop)
    both = survival(np.arange(n + len(X))[:, None], np.vstack([pop.F, F]), n_survive,
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
