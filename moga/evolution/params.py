"""GA parameters: one validated, immutable set, readable from dicts and TOML files."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..bounds import BOUNDS
from ..model.tomlfile import read_toml
from .operators import ScheduleCrossover, ScheduleMutation

__all__ = ["GAParams", "check_seed", "BUDGET", "EASY_BUDGET"]

#: ``(pop_size, n_gen)`` left at None: NSGA-II over the in-order decoder (MOGA
#: without the EASY search, the MOGA paper's budget), GA-MF and the value GA.
BUDGET = (100, 700)
#: ``(pop_size, n_gen)`` left at None for MOGA's runs that decode with EASY: the
#: EASY search (the default of :func:`moga.run`) and the EASY-space run
#: (``backfill="easy"``). An EASY decode costs several in-order ones, and at this
#: budget the run takes less time than the in-order search at :data:`BUDGET`.
EASY_BUDGET = (50, 240)



def check_seed(seed, name: str = "seed") -> int:
    """``seed`` as an int in [0, 2**32), or a ValueError naming ``name``."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        if not (isinstance(seed, (float, np.floating)) and float(seed).is_integer()):
            raise ValueError(f"{name} must be an integer in [0, 2**32), got {seed!r}")
    seed = int(seed)
    if not BOUNDS["seed"].contains(seed):
        raise ValueError(f"{name} must be an integer in [0, 2**32), got {seed}")
    return seed


@dataclass(frozen=True)
class GAParams:
    """Parameters of the genetic algorithm.

    Attributes
    ----------
    pop_size, n_gen : int or None
        Population size and number of generations. None (default): the
        algorithm's own budget, 50 x 240 for MOGA's runs that decode with EASY
        (its default EASY search and ``backfill="easy"``,
        :data:`EASY_BUDGET`) and 100 x 700 otherwise (:data:`BUDGET`: MOGA
        with ``easy_search=False``, as in the MOGA paper, GA-MF and the value
        GA).
    prob_order_crossover, prob_blacklist_crossover : float or None
        Probability that a mating crosses the order / blacklist parts. None
        (default): the algorithm's own value, 0.5 for MOGA (:func:`moga.run`;
        with neighbourhood mating, a child of two close parents that copies one
        and mutates it is as likely to land on the front as a crossed one, and
        cheaper to make good) and 0.9 for GA-MF and the value GA, as published.
    blacklist_crossover : {"uniform", "blend"}
    order_crossover : {"ox1", "prefix"}
        OX1 or the one-point order crossover (:class:`ScheduleCrossover`).
    blend_alpha : float
        Widening of the blend crossover.
    order_mutation_rate, blacklist_mutation_rate : float or None
        Per-gene mutation frequencies (None: ``1 / J``).
    order_moves : tuple of str
        Order mutations drawn uniformly: ``"swap"``, ``"insert"`` (a shift),
        ``"invert"`` (a short segment).
    cluster_rate : float or None
        Probability per child of a whole-cluster blacklist move (one cluster,
        one level, a run of jobs; :class:`ScheduleMutation`). None (default):
        the algorithm's own value, 0.8 for MOGA (:func:`moga.run`; a front
        between the fastest and the greenest schedule needs many blacklist
        entries to agree, which single-entry resets rarely reach) and 0.2 for
        the value GA and online MOGA's windows.
    seeded : bool
        Seed the initial population with heuristic orders and uniform blacklists.
    seed_heuristics : bool
        Seed the orders of cheap heuristics (EASY's start order, shortest,
        longest, widest, ... first; :mod:`moga.evolution.seeding`) besides the
        submit order.
    seed_levels : tuple of float
        Blacklist levels of that seeding grid.
    select_seeds : bool
        MOGA only: the seeded half of the first population is picked by
        NSGA-II's survival among every seed order with every grid blacklist
        and every fitted copy of the grid blacklists that void some job's
        (:func:`~moga.evolution.operators.fitted_blacklists`, unless
        ``fit_seeds`` is off), all decoded (about 250 to 500 evaluations on 4
        clusters), instead of a fixed precedence
        (:class:`~moga.evolution.operators.ScheduleSampling`).
    seed_candidates : int or None
        With ``select_seeds``: decode at most this many seed pairs (order x
        grid blacklist), the submit order with the empty blacklist and the
        other orders with it first, then the FCFS and EASY orders with the
        grid, then the rest, each group in a random order drawn from the run's
        seed (:class:`~moga.evolution.operators.ScheduleSampling`). None
        (default): all of them; :func:`moga.run`'s size rule sets it where
        decodes are expensive (:mod:`moga.evolution.sizing`).
    fit_seeds : bool
        With ``select_seeds``: also offer the fitted copies of the grid
        blacklists, in which a job too wide for its allowance is given just
        enough nodes on its greenest barred clusters instead of a void
        blacklist (which lets it run anywhere, the fastest nodes first).
    mating_neighbours : int
        MOGA only: the second parent of a mating is one of the first parent's
        ``mating_neighbours`` nearest individuals in objective space
        (:class:`~moga.evolution.mating.NeighbourSelection`); 0 restores
        NSGA-II's independent binary tournaments.
    archive_size : int
        MOGA only: the run keeps the best ``archive_size`` non-dominated points
        it has evaluated (:class:`~moga.evolution.archive.ParetoArchive`) and
        returns them as its front; 0 returns NSGA-II's final first front.
    resequence_rate : float
        MOGA only (in-order decoder): probability per child of taking its EASY
        schedule's start order as its order, scaled down as 1,000 / J above
        1,000 jobs (:class:`~moga.evolution.resequencing.Resequencer`); 0
        turns it off.
    fast_end : int
        MOGA only (array loop): neighbours of the fastest member added to each
        generation's children (:class:`~moga.evolution.fast_end.FastEndSearch`);
        0 (default) turns it off.
    easy_search : bool or None
        MOGA only, in-order decoder (``backfill="none"``): the population
        evolves in EASY's space (its orders are EASY's queue priorities) and
        every chromosome decoded whose EASY point the archive admits is also
        offered to it as its in-order twin, its EASY start order with each job
        pinned to its EASY nodes, decoded in order
        (:class:`~moga.evolution.resequencing.EasySearch`). The front returned
        is in-order, as without it. None (default): on wherever it applies
        (the in-order decoder with the archive), with the budget of
        :data:`EASY_BUDGET`; False gives the MOGA paper's search over
        in-order chromosomes, with re-sequencing, at :data:`BUDGET`. Needs
        the archive (``archive_size > 0``); re-sequencing is then off.
    survival : {"nsga2", "nsga3"} or None
        MOGA only: the population's survival, NSGA-II's rank and crowding
        distance or NSGA-III's reference directions
        (:class:`~moga.evolution.survival.ReferenceSurvival`). None (default):
        NSGA-II's for two objectives, NSGA-III's for three, the better of the two
        at equal evaluations inside MOGA's loop on three objectives
        (``results/objectives_three.md``).
    """

    pop_size: int | None = None
    n_gen: int | None = None
    prob_order_crossover: float | None = None
    prob_blacklist_crossover: float | None = None
    blacklist_crossover: str = "uniform"
    order_crossover: str = "prefix"
    blend_alpha: float = 0.5
    order_mutation_rate: float | None = None
    blacklist_mutation_rate: float | None = None
    order_moves: tuple = ("swap", "insert", "invert")
    cluster_rate: float | None = None
    seeded: bool = True
    seed_levels: tuple = (0.0, 0.5, 1.0)
    seed_heuristics: bool = True
    select_seeds: bool = True
    fit_seeds: bool = True
    seed_candidates: int | None = None
    archive_size: int = 200
    mating_neighbours: int = 10
    resequence_rate: float = 0.03
    fast_end: int = 0
    easy_search: bool | None = None
    survival: str | None = None

    def __post_init__(self):
        for name in ("pop_size", "n_gen", "archive_size", "mating_neighbours", "fast_end",
                     "seed_candidates"):
            v = getattr(self, name)
            if v is None and name in ("pop_size", "n_gen", "seed_candidates"):
                continue
            low, high = BOUNDS[name].low, BOUNDS[name].high
            # A float (10.0 from a TOML file) is refused: pymoo needs a true int.
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < low:
                raise ValueError(f"{name} must be an integer >= {low}, got {v!r}")
            if v > high:
                raise ValueError(f"{name} must be an integer <= {high:,}, got {v!r}")
            object.__setattr__(self, name, int(v))
        for name in ("prob_order_crossover", "prob_blacklist_crossover", "blend_alpha",
                     "order_mutation_rate", "blacklist_mutation_rate", "cluster_rate"):
            v = getattr(self, name)
            if v is None and (name.endswith("_rate") or name.startswith("prob_")):
                continue
            if isinstance(v, bool) or not isinstance(v, (int, float, np.number)) \
                    or not math.isfinite(v):
                raise ValueError(f"{name} must be a finite number, got {v!r}")
        r = self.resequence_rate
        if isinstance(r, bool) or not isinstance(r, (int, float, np.number)) \
                or not BOUNDS["resequence_rate"].contains(r):
            raise ValueError(f"resequence_rate must lie in [0, 1], got {r!r}")
        object.__setattr__(self, "resequence_rate", float(r))
        for name in ("seeded", "seed_heuristics", "select_seeds", "fit_seeds", "easy_search"):
            if name == "easy_search" and self.easy_search is None:
                continue
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise ValueError(f"{name} must be true or false, got {getattr(self, name)!r}")
        if not isinstance(self.order_crossover, str):
            raise ValueError(f"order_crossover must be 'ox1' or 'prefix', got "
                             f"{self.order_crossover!r}")
        if not isinstance(self.blacklist_crossover, str):
            raise ValueError(f"blacklist_crossover must be 'uniform', 'rows' or 'blend', got "
                             f"{self.blacklist_crossover!r}")
        levels = self.seed_levels
        if isinstance(levels, (str, bytes)) or not hasattr(levels, "__iter__"):
            raise ValueError(f"seed_levels must be a list of numbers in [0, 1], got {levels!r}")
        if any(isinstance(v, bool) or not isinstance(v, (int, float, np.number)) for v in levels):
            raise ValueError(f"seed_levels must be a list of numbers in [0, 1], got {levels!r}")
        object.__setattr__(self, "seed_levels", tuple(float(v) for v in levels))
        if self.survival is not None and self.survival not in ("nsga2", "nsga3"):
            raise ValueError(f"survival must be 'nsga2' or 'nsga3', got {self.survival!r}")
        if self.easy_search and self.archive_size == 0:
            raise ValueError("easy_search needs the archive (archive_size > 0): the in-order "
                             "front is gathered there")
        moves = self.order_moves
        if isinstance(moves, (str, bytes)) or not hasattr(moves, "__iter__") \
                or not all(isinstance(m, str) for m in moves):
            raise ValueError(f"order_moves must be a list of 'swap', 'insert', 'invert', "
                             f"got {moves!r}")
        object.__setattr__(self, "order_moves", tuple(moves))
        # The operators validate the rest; build them once to fail early with their messages.
        self.operators()

    def resolved(self, easy_search: bool = False, easy_decoder: bool = False) -> GAParams:
        """A copy with ``pop_size``, ``n_gen`` and ``easy_search`` filled in.

        ``easy_search`` is what the algorithm does when the field is None
        (MOGA: whether its EASY search applies), ``easy_decoder`` whether it
        decodes with EASY backfilling; the budget left at None is
        :data:`EASY_BUDGET` when either searches through EASY decodes and
        :data:`BUDGET` otherwise.
        """
        easy = bool(easy_search if self.easy_search is None else self.easy_search)
        pop, gen = EASY_BUDGET if easy or easy_decoder else BUDGET
        return dataclasses.replace(self, easy_search=easy,
                                   pop_size=pop if self.pop_size is None else self.pop_size,
                                   n_gen=gen if self.n_gen is None else self.n_gen)

    def for_moga(self, backfill: str = "none") -> GAParams:
        """Resolved as :func:`moga.run` resolves them: the EASY search on (unless
        ``easy_search`` is False) with the in-order decoder and the archive, and
        the EASY budget with ``backfill="easy"``."""
        return self.resolved(easy_search=backfill == "none" and self.archive_size > 0,
                             easy_decoder=backfill == "easy")

    def operators(self, crossover_prob: float = 0.9, cluster_rate: float = 0.2):
        """``(crossover, mutation)`` configured by these parameters.

        ``crossover_prob`` and ``cluster_rate`` are the algorithm's defaults
        for the crossover probabilities and the cluster-move rate left at None.
        """
        po, pb = (crossover_prob if p is None else p
                  for p in (self.prob_order_crossover, self.prob_blacklist_crossover))
        return (ScheduleCrossover(po, pb,
                                  self.blacklist_crossover, self.blend_alpha,
                                  order=self.order_crossover),
                ScheduleMutation(self.order_mutation_rate, self.blacklist_mutation_rate,
                                 order_moves=self.order_moves,
                                 cluster_rate=(cluster_rate if self.cluster_rate is None
                                               else self.cluster_rate)))

    @classmethod
    def coerce(cls, params) -> GAParams:
        """``params`` as GAParams: None (defaults), a GAParams, a dict or a TOML file path."""
        if params is None:
            return cls()
        if isinstance(params, cls):
            return params
        if isinstance(params, dict):
            return cls.from_dict(params)
        if isinstance(params, (str, Path)):
            return cls.from_toml(params)
        raise TypeError(f"params must be GAParams, a dict or a TOML path, got {type(params).__name__}")

    def replace(self, **changes) -> GAParams:
        """A copy with some fields changed (None values are ignored)."""
        return dataclasses.replace(self, **{k: v for k, v in changes.items() if v is not None})

    def to_dict(self) -> dict:
        """Plain dict of the parameters (None values left out)."""
        d = dataclasses.asdict(self)
        d["seed_levels"] = list(self.seed_levels)
        d["order_moves"] = list(self.order_moves)
        return {k: v for k, v in d.items() if v is not None}

    @classmethod
    def from_dict(cls, d: dict, source: str = "parameters") -> GAParams:
        """Build from a dict; unknown keys raise an error naming them and ``source``."""
        names = {f.name for f in dataclasses.fields(cls)}
        if not isinstance(d, dict):
            raise ValueError(f"{source}: GA parameters must be a table, got {d!r}")
        unknown = sorted(set(d) - names)
        if unknown:
            raise ValueError(f"{source}: unknown GA parameter(s) {unknown}; known: {sorted(names)}")
        try:
            return cls(**d)
        except (TypeError, ValueError) as e:
            raise ValueError(f"{source}: {e}") from None

    @classmethod
    def from_toml(cls, path) -> GAParams:
        """Read parameters from a TOML file (top level, or a ``[ga]`` table)."""
        path = Path(path)
        doc = read_toml(path, "GA parameters")
        ga = doc.get("ga", doc)
        if not isinstance(ga, dict):
            raise ValueError(f"{path}: ga: must be a table of GA parameters, got {ga!r}")
        return cls.from_dict(ga, source=str(path))

    def to_toml(self) -> str:
        """The parameters as TOML that :meth:`from_toml` reads."""
        lines = []
        for k, v in self.to_dict().items():
            if isinstance(v, bool):
                v = str(v).lower()
            elif isinstance(v, str):
                v = f'"{v}"'
            lines.append(f"{k} = {v}")
        return "\n".join(lines) + "\n"
