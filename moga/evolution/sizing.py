"""The default search of :func:`moga.run` by job-set size and measured decode cost.

When a run is given no population, no generations and no choice of search
(``pop_size``, ``n_gen`` and ``GAParams.easy_search`` all left at None, the
in-order decoder, no islands), :func:`choose_default` picks them:

* up to :data:`SMALL_JOBS` jobs, unless the caller gives a CPU budget,
  today's default without measuring anything: the EASY search, population
  50, 240 generations (:data:`~moga.evolution.params.EASY_BUDGET`);
* above, or at any size with a CPU budget given, it times a decode of the
  submit order with each decoder (EASY and in order, the least of
  :data:`TIMED_DECODES` after an untimed one, so that a Numba compile is not
  counted) and estimates the CPU seconds of the EASY
  search at 50 x 240, its seeding included. It picks the EASY search at
  population 50 where the estimate fits the CPU budget (``cpu_budget``,
  default :data:`CPU_BUDGET`) at least :data:`MIN_EASY_GEN` generations;
  with fewer, the in-order search (``easy_search=False``) at population 100.
  At equal CPU the EASY search's front beats the in-order search's once it
  has had a few dozen generations (``benchmarks/size_rule.py``), so it is
  cut rather than swapped for the in-order search until the cut leaves too
  few. Either search is given its full generations (240 or 700) and
  :func:`moga.run` stops it before a generation that would take the call's
  CPU seconds past the budget, never before :func:`least_generations`: the
  estimate only picks the search (and says how many generations it expects,
  ``estimated_gen``), since a member's cost differs from one job-set to
  another and the estimate can be off by about a factor of two either way;
  the measured CPU then spends the budget whichever way it is off.

Either way the chromosomes the run holds (about ``3 * pop + archive_size``
rows of ``8 * n_var`` bytes: the population, its children, a generation's
temporaries and the archive) are held to :data:`ROW_MEMORY`: where they
would exceed it, the archive keeps at most a third of those rows and the
population (a multiple of 10, at least :data:`MIN_POP`) what is left. And
the seeding's decodes are held to :data:`SEED_SHARE` of the
budget (``GAParams.seed_candidates``) when the estimate says they would
cost more. The estimate of a search (:func:`estimate`) is the heuristics'
schedules (five EASY decodes), plus :data:`SEED_PAIRS` seed pairs at
:data:`SEED_FACTOR` members each, plus ``pop * n_gen`` members; a member
costs :data:`EASY_FACTOR` submit-order EASY decodes and one in-order decode
(its twin for the archive) in the EASY search, :data:`IN_ORDER_FACTOR`
submit-order in-order decodes in the in-order search, a generation's own
bookkeeping included (:func:`member_cost`). The factors are measured on
evolved populations of several job-sets (``benchmarks/size_rule.py``); a
member's cost against the submit order's differs from one job-set to
another, so a run's CPU can differ from its estimate by up to a factor of
about two either way (``results/size_rule.md``).

Where it measures, the choice therefore depends on the machine's
speed: the run's result reports it (:class:`DefaultChoice`, ``info["default"]``
and ``run.json``), and passing the reported ``pop_size``, ``n_gen`` and
``easy_search`` repeats the run bit for bit on any machine.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass

from .params import BUDGET, EASY_BUDGET, GAParams

__all__ = ["DefaultChoice", "choose_default", "SMALL_JOBS", "CPU_BUDGET", "SEED_SHARE",
           "EASY_FACTOR", "IN_ORDER_FACTOR", "SEED_FACTOR", "MIN_GEN", "MIN_EASY_GEN",
           "SEED_PAIRS", "ROW_MEMORY", "MIN_POP", "measure", "member_cost", "estimate",
           "fitted_generations", "fitted_population", "least_generations", "unsized_by"]

#: Job-sets of at most this many jobs keep the EASY search at 50 x 240 without measuring,
#: unless the caller gives a CPU budget.
SMALL_JOBS = 5000
#: CPU seconds the default run of a larger job-set aims at (``moga.run(cpu_budget=...)``).
CPU_BUDGET = 900.0
#: Largest share of the budget the seeding's decodes may take.
SEED_SHARE = 0.1
#: A population member of the EASY search, with its generation's bookkeeping, in
#: submit-order EASY decodes (its in-order twin counted apart: :func:`member_cost`).
EASY_FACTOR = 1.5
#: A population member of the in-order search, with its generation's bookkeeping, in
#: submit-order in-order decodes.
IN_ORDER_FACTOR = 1.0
#: Fewest generations the in-order search is given, whatever the budget.
MIN_GEN = 20
#: Fewest EASY-search generations the budget must buy by the estimate: below, the in-order
#: search. Also the floor the CPU stop leaves an EASY search.
MIN_EASY_GEN = 40
#: Bytes of chromosome rows a picked run may hold (population, children, archive).
ROW_MEMORY = 640 * 2**20
#: Smallest population the memory rule leaves.
MIN_POP = 20
#: Timed decodes of the submit order with each decoder (the least counts).
TIMED_DECODES = 3
#: Seed pairs (order x grid blacklist) decoded by the default seeding, about
#: (9 orders x the grid and its fitted copies on 4 clusters): the estimate's count.
SEED_PAIRS = 500
#: A seed pair's decode in population members (:func:`member_cost`).
SEED_FACTOR = 0.65


@dataclass(frozen=True)
class DefaultChoice:
    """What :func:`choose_default` picked, and from what.

    Attributes
    ----------
    rule : {"small", "measured", "explicit"}
        ``"small"``: at most :data:`SMALL_JOBS` jobs and no CPU budget given, today's
        default;
        ``"measured"``: picked from the measured decode costs; ``"explicit"``:
        the caller set the population, generations or search (or the run is
        not one the rule covers), nothing was picked.
    search : str
        ``"easy search"`` or ``"in-order search"`` (``"easy decoder"`` with
        ``backfill="easy"``).
    pop_size, n_gen : int
        Population and generations (under ``"measured"``, the generations at
        most: the run stops at its CPU budget).
    seed_candidates : int or None
        Seed pairs decoded at most (None: all).
    archive_size : int
        The archive's size (``GAParams.archive_size``; below the caller's only
        under the memory rule).
    n_jobs : int
    cpu_budget : float or None
        The budget aimed at (None under the ``"small"`` and ``"explicit"`` rules).
    easy_decode_s, in_order_decode_s : float or None
        CPU seconds of one decode of the submit order, EASY and in order (the
        least of :data:`TIMED_DECODES`; measured under ``"measured"`` only).
    estimated_cpu_s : float or None
        The estimated CPU seconds of the run picked (seeding and generations).
    easy_search_cpu_s : float or None
        The estimate for the EASY search at 50 x 240, which the rule compared
        with the budget.
    measure_cpu_s : float or None
        CPU seconds the measurement itself took.
    estimated_gen : int or None
        The generations the estimate says the budget buys (at least the
        search's floor; under ``"measured"`` only).
    """

    rule: str
    search: str
    pop_size: int
    n_gen: int
    seed_candidates: int | None
    archive_size: int
    n_jobs: int
    cpu_budget: float | None = None
    easy_decode_s: float | None = None
    in_order_decode_s: float | None = None
    estimated_cpu_s: float | None = None
    easy_search_cpu_s: float | None = None
    measure_cpu_s: float | None = None
    estimated_gen: int | None = None

    def as_dict(self) -> dict:
        """A JSON-ready dict of the fields."""
        return asdict(self)


def check_budget(cpu_budget) -> float:
    """``cpu_budget`` as a float of seconds > 0 (None: :data:`CPU_BUDGET`), or a ValueError."""
    if cpu_budget is None:
        return CPU_BUDGET
    from ..bounds import BOUNDS

    b = BOUNDS["cpu_budget"]
    if isinstance(cpu_budget, bool) or not isinstance(cpu_budget, (int, float)) \
            or not b.contains(cpu_budget):
        raise ValueError(f"cpu_budget must be a number of CPU seconds > 0 (in {b.interval()}), "
                         f"got {cpu_budget!r}")
    return float(cpu_budget)


def unsized_by(params: GAParams, backfill: str, islands) -> tuple[str, ...]:
    """What the caller set that keeps the size rule from a run (empty where it applies):
    ``"islands"``, ``"backfill"``, ``"archive_size"`` (0) and whichever of
    ``"pop_size"``, ``"n_gen"`` and ``"easy_search"`` are given."""
    why = (("islands",) if islands is not None else ()) + (
        ("backfill",) if backfill != "none" else ()) + (
        ("archive_size",) if params.archive_size <= 0 else ())
    return why + tuple(n for n in ("pop_size", "n_gen", "easy_search")
                       if getattr(params, n) is not None)


def applies(params: GAParams, backfill: str, islands) -> bool:
    """Whether the size rule picks this run's search: nothing of it set by the caller
    (:func:`unsized_by` empty)."""
    return not unsized_by(params, backfill, islands)


def described(params: GAParams, n_jobs: int, backfill: str = "none") -> DefaultChoice:
    """The ``"explicit"`` record of a run whose resolved parameters are ``params``."""
    search = ("easy decoder" if backfill == "easy" else
              "easy search" if params.easy_search else "in-order search")
    return DefaultChoice("explicit", search, params.pop_size, params.n_gen,
                         params.seed_candidates, params.archive_size, int(n_jobs))


def least_generations(choice: DefaultChoice) -> int:
    """The fewest generations a run the rule sized is given whatever its CPU: the rule's
    floor for the search it picked (:data:`MIN_EASY_GEN` or :data:`MIN_GEN`), at most
    the generations it picked."""
    floor = MIN_EASY_GEN if choice.search == "easy search" else MIN_GEN
    return min(floor, choice.n_gen)


def _decode_cpu(problem, x) -> float:
    """CPU seconds of a decode of ``x``: the least of :data:`TIMED_DECODES` decodes after
    an untimed one (which may compile); the least, because other work on the machine only
    ever adds to a decode's time."""
    problem.decode(x)
    best = float("inf")
    for _ in range(TIMED_DECODES):
        t = time.process_time()
        problem.decode(x)
        best = min(best, time.process_time() - t)
    return max(best, 1e-9)


def measure(problem, submit) -> tuple[float, float]:
    """``(easy_s, in_order_s)``: CPU seconds of one decode of ``submit`` with the EASY
    search's decoder and with ``problem``'s (in order); ``problem``'s decode counters are
    left as found."""
    from .resequencing import EasySearch

    counters = problem.decode_seconds, problem.n_decoded
    t_easy = _decode_cpu(EasySearch(problem), submit)
    t_in = _decode_cpu(problem, submit)
    problem.decode_seconds, problem.n_decoded = counters
    return t_easy, t_in


def member_cost(easy: bool, easy_s: float, in_order_s: float) -> float:
    """Estimated CPU seconds of one population member of the EASY search (``easy``) or the
    in-order search, a generation's bookkeeping included, from the submit order's decodes:
    :data:`EASY_FACTOR` EASY decodes and one in-order decode (its twin), or
    :data:`IN_ORDER_FACTOR` in-order decodes."""
    if easy:
        return EASY_FACTOR * easy_s + in_order_s
    return IN_ORDER_FACTOR * in_order_s


def seed_pairs(cap) -> int:
    """Seed pairs the seeding decodes under the cap ``cap`` (None: :data:`SEED_PAIRS`)."""
    return SEED_PAIRS if cap is None else min(cap, SEED_PAIRS)


def estimate(easy: bool, easy_s: float, in_order_s: float, pop: int, gen: int, cap) -> float:
    """Estimated CPU seconds of a run of the EASY search (``easy``) or the in-order search at
    ``pop`` x ``gen`` with the seed cap ``cap``: the heuristics' schedules (five EASY
    decodes), the seeding (:func:`seed_pairs` at :data:`SEED_FACTOR` members each) and
    ``pop * gen`` members (:func:`member_cost`)."""
    per = member_cost(easy, easy_s, in_order_s)
    return 5 * easy_s + SEED_FACTOR * seed_pairs(cap) * per + pop * gen * per


def fitted_generations(easy: bool, easy_s: float, in_order_s: float, pop: int, cap,
                       budget: float) -> int:
    """Most generations (0 if none) of the EASY search (``easy``) or the in-order search at
    population ``pop`` and seed cap ``cap`` whose :func:`estimate` fits ``budget``."""
    left = budget - estimate(easy, easy_s, in_order_s, 0, 0, cap)
    return max(0, int(left // (pop * member_cost(easy, easy_s, in_order_s))))


def fitted_population(easy: bool, archive: int, n_var: int, n_obj: int) -> tuple[int, int]:
    """``(pop, archive)`` of the EASY search (``easy``: population 50) or the in-order
    search (100) held to :data:`ROW_MEMORY` for chromosomes of ``n_var`` genes (see
    :func:`_fitted`)."""
    pop = EASY_BUDGET[0] if easy else BUDGET[0]
    return _fitted(pop, archive, max(1, ROW_MEMORY // (8 * n_var)), 2 * n_obj)


def choose_default(params: GAParams, problem, submit, cpu_budget=None):
    """``(params, choice)``: ``params`` with the search, population, generations and seed
    cap that the size rule picks for ``problem`` (see the module docstring), and the
    :class:`DefaultChoice` that says why.

    Parameters
    ----------
    params : GAParams
        The caller's parameters, with ``pop_size``, ``n_gen`` and ``easy_search``
        at None (:func:`applies`).
    problem : SchedulingProblem
        The run's problem (in-order decoder); its decode counters are left as found.
    submit : ndarray (1, n_var)
        The submit order with an empty blacklist.
    cpu_budget : float, optional
        CPU seconds aimed at. None: :data:`CPU_BUDGET`, and a job-set of at most
        :data:`SMALL_JOBS` jobs gets today's default unmeasured. Given, the rule
        measures and picks at any size, so that the budget binds.
    """
    budget = check_budget(cpu_budget)
    J = len(problem.jobset)
    if J <= SMALL_JOBS and cpu_budget is None:
        pop, gen = EASY_BUDGET
        return (params.replace(easy_search=True, pop_size=pop, n_gen=gen),
                DefaultChoice("small", "easy search", pop, gen, params.seed_candidates,
                              params.archive_size, J))
    t0 = time.process_time()
    t_easy, t_in = measure(problem, submit)
    measured = time.process_time() - t0
    n_var, n_obj = submit.shape[1], len(problem.objectives)

    def seed_cap(easy):
        per = SEED_FACTOR * member_cost(easy, t_easy, t_in)
        cap = int(SEED_SHARE * budget / per)
        if params.seed_candidates is not None:
            cap = min(cap, params.seed_candidates)
        return None if cap >= SEED_PAIRS and params.seed_candidates is None else max(cap, 1)

    pop, archive = fitted_population(True, params.archive_size, n_var, n_obj)
    gen = EASY_BUDGET[1]
    cap = seed_cap(True)
    easy_cost = estimate(True, t_easy, t_in, pop, gen, cap)
    common = dict(n_jobs=J, cpu_budget=budget, easy_decode_s=t_easy, in_order_decode_s=t_in,
                  easy_search_cpu_s=easy_cost, measure_cpu_s=measured)
    # The generations the budget buys by the estimate: the EASY search while they are
    # enough. The run gets the search's full generations and its CPU stop ends it.
    fits = min(gen, fitted_generations(True, t_easy, t_in, pop, cap, budget))
    if easy_cost <= budget or fits >= MIN_EASY_GEN:
        return (params.replace(easy_search=True, pop_size=pop, n_gen=gen, seed_candidates=cap,
                               archive_size=archive),
                DefaultChoice("measured", "easy search", pop, gen, cap, archive,
                              estimated_cpu_s=estimate(True, t_easy, t_in, pop, fits, cap),
                              estimated_gen=fits, **common))
    pop, archive = fitted_population(False, params.archive_size, n_var, n_obj)
    cap = seed_cap(False)
    gen = BUDGET[1]
    fits = fitted_generations(False, t_easy, t_in, pop, cap, budget)
    fits = max(MIN_GEN, min(gen, fits))
    return (params.replace(easy_search=False, pop_size=pop, n_gen=gen, seed_candidates=cap,
                           archive_size=archive),
            DefaultChoice("measured", "in-order search", pop, gen, cap, archive,
                          estimated_cpu_s=estimate(False, t_easy, t_in, pop, fits, cap),
                          estimated_gen=fits, **common))


def _fitted(pop: int, archive: int, rows: int, least: int = 4) -> tuple[int, int]:
    """``(pop, archive)`` with ``3 * pop + archive <= rows`` where the floors allow: the
    archive at most a third of the rows (at least ``least``, two points per objective), the
    population a multiple of 10 of what is left, at least :data:`MIN_POP`."""
    if 3 * pop + archive <= rows:
        return pop, archive
    archive = max(least, min(archive, rows // 3))
    pop = max(MIN_POP, min(pop, (rows - archive) // 3 // 10 * 10))
    return pop, archive
