"""The default search of :func:`moga.run` by job-set size and measured decode cost.

When a run is given no population, no generations and no choice of search
(``pop_size``, ``n_gen`` and ``GAParams.easy_search`` all left at None, the
in-order decoder, no islands), :func:`choose_default` picks them:

* up to :data:`SMALL_JOBS` jobs, today's default without measuring anything:
  the EASY search, population 50, 240 generations (:data:`~moga.evolution.params.EASY_BUDGET`);
* above, it times one decode of the submit order with each decoder (EASY and
  in order, each decoded twice and the second timed, so that a Numba compile
  is not counted) and estimates the CPU seconds of the EASY search at
  50 x 240, its seeding included. Within the CPU budget (``cpu_budget``,
  default :data:`CPU_BUDGET`) the EASY search stays; otherwise the run is the
  in-order search (``easy_search=False``) at population 100 with as many
  generations as the budget buys (between :data:`MIN_GEN` and 700).

Either way the chromosomes the run holds (about ``3 * pop + archive_size``
rows of ``8 * n_var`` bytes: the population, its children, a generation's
temporaries and the archive) are held to :data:`ROW_MEMORY`: where they
would exceed it, the archive keeps at most a third of those rows and the
population (a multiple of 10, at least :data:`MIN_POP`) what is left. And
the seeding's decodes are held to :data:`SEED_SHARE` of the
budget (``GAParams.seed_candidates``) when the estimate says they would
cost more. The estimate of a search is ``seeding + n_gen * pop *
per-individual``, a decode of a population member costing
:data:`EASY_FACTOR` (EASY) or :data:`IN_ORDER_FACTOR` (in order) times the
submit order's, the factors covering the costlier decodes of evolved and
random chromosomes and the generation's own bookkeeping.

Above :data:`SMALL_JOBS` the choice therefore depends on the machine's
speed: the run's result reports it (:class:`DefaultChoice`, ``info["default"]``
and ``run.json``), and passing the reported ``pop_size``, ``n_gen`` and
``easy_search`` repeats the run bit for bit on any machine.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass

from .params import BUDGET, EASY_BUDGET, GAParams

__all__ = ["DefaultChoice", "choose_default", "SMALL_JOBS", "CPU_BUDGET", "SEED_SHARE",
           "EASY_FACTOR", "IN_ORDER_FACTOR", "MIN_GEN", "SEED_PAIRS", "ROW_MEMORY", "MIN_POP"]

#: Job-sets of at most this many jobs keep the EASY search at 50 x 240 without measuring.
SMALL_JOBS = 5000
#: CPU seconds the default run of a larger job-set aims at (``moga.run(cpu_budget=...)``).
CPU_BUDGET = 900.0
#: Largest share of the budget the seeding's decodes may take.
SEED_SHARE = 0.1
#: A population member's EASY decode in the EASY search, in submit-order EASY decodes
#: (its in-order twin included).
EASY_FACTOR = 3.0
#: A population member's in-order decode, with its generation's bookkeeping, in
#: submit-order in-order decodes.
IN_ORDER_FACTOR = 3.0
#: Fewest generations the in-order search is given, whatever the budget.
MIN_GEN = 20
#: Bytes of chromosome rows a picked run may hold (population, children, archive).
ROW_MEMORY = 640 * 2**20
#: Smallest population the memory rule leaves.
MIN_POP = 20
#: Seed pairs (order x grid blacklist) decoded by the default seeding, about
#: (9 orders x the grid and its fitted copies on 4 clusters): the estimate's count.
SEED_PAIRS = 500


@dataclass(frozen=True)
class DefaultChoice:
    """What :func:`choose_default` picked, and from what.

    Attributes
    ----------
    rule : {"small", "measured", "explicit"}
        ``"small"``: at most :data:`SMALL_JOBS` jobs, today's default;
        ``"measured"``: picked from the measured decode costs; ``"explicit"``:
        the caller set the population, generations or search (or the run is
        not one the rule covers), nothing was picked.
    search : str
        ``"easy search"`` or ``"in-order search"`` (``"easy decoder"`` with
        ``backfill="easy"``).
    pop_size, n_gen : int
    seed_candidates : int or None
        Seed pairs decoded at most (None: all).
    archive_size : int
        The archive's size (``GAParams.archive_size``; below the caller's only
        under the memory rule).
    n_jobs : int
    cpu_budget : float or None
        The budget aimed at (None under the ``"small"`` and ``"explicit"`` rules).
    easy_decode_s, in_order_decode_s : float or None
        CPU seconds of one decode of the submit order, EASY and in order
        (measured under ``"measured"`` only).
    estimated_cpu_s : float or None
        The estimated CPU seconds of the run picked (seeding and generations).
    easy_search_cpu_s : float or None
        The estimate for the EASY search at 50 x 240, which the rule compared
        with the budget.
    measure_cpu_s : float or None
        CPU seconds the measurement itself took.
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

    def as_dict(self) -> dict:
        """A JSON-ready dict of the fields."""
        return asdict(self)


def check_budget(cpu_budget) -> float:
    """``cpu_budget`` as a float of seconds > 0 (None: :data:`CPU_BUDGET`), or a ValueError."""
    if cpu_budget is None:
        return CPU_BUDGET
    if isinstance(cpu_budget, bool) or not isinstance(cpu_budget, (int, float)) \
            or not 0 < cpu_budget < float("inf"):
        raise ValueError(f"cpu_budget must be a number of CPU seconds > 0, got {cpu_budget!r}")
    return float(cpu_budget)


def applies(params: GAParams, backfill: str, islands) -> bool:
    """Whether the size rule picks this run's search: nothing of it set by the caller."""
    return (backfill == "none" and islands is None and params.archive_size > 0
            and params.pop_size is None and params.n_gen is None
            and params.easy_search is None)


def described(params: GAParams, n_jobs: int, backfill: str = "none") -> DefaultChoice:
    """The ``"explicit"`` record of a run whose resolved parameters are ``params``."""
    search = ("easy decoder" if backfill == "easy" else
              "easy search" if params.easy_search else "in-order search")
    return DefaultChoice("explicit", search, params.pop_size, params.n_gen,
                         params.seed_candidates, params.archive_size, int(n_jobs))


def _decode_cpu(problem, x) -> float:
    """CPU seconds of the second of two decodes of ``x`` (the first may compile)."""
    problem.decode(x)
    t = time.process_time()
    problem.decode(x)
    return max(time.process_time() - t, 1e-9)


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
        CPU seconds aimed at (default :data:`CPU_BUDGET`).
    """
    budget = check_budget(cpu_budget)
    J = len(problem.jobset)
    if J <= SMALL_JOBS:
        pop, gen = EASY_BUDGET
        return (params.replace(easy_search=True, pop_size=pop, n_gen=gen),
                DefaultChoice("small", "easy search", pop, gen, params.seed_candidates,
                              params.archive_size, J))
    from .resequencing import EasySearch

    t0 = time.process_time()
    counters = problem.decode_seconds, problem.n_decoded
    t_easy = _decode_cpu(EasySearch(problem), submit)
    t_in = _decode_cpu(problem, submit)
    problem.decode_seconds, problem.n_decoded = counters
    measured = time.process_time() - t0
    # The heuristics' schedules (seeding's archive and orders): about five EASY decodes.
    fixed = 5 * t_easy

    def cost(per, pop, gen, cap):
        pairs = SEED_PAIRS if cap is None else min(cap, SEED_PAIRS)
        return fixed + pairs * per + pop * gen * per

    def seed_cap(per):
        cap = int(SEED_SHARE * budget / per)
        if params.seed_candidates is not None:
            cap = min(cap, params.seed_candidates)
        return None if cap >= SEED_PAIRS and params.seed_candidates is None else max(cap, 1)

    per_easy = EASY_FACTOR * t_easy + t_in
    rows = max(1, ROW_MEMORY // (8 * submit.shape[1]))
    least = 2 * len(problem.objectives)
    pop, archive = _fitted(EASY_BUDGET[0], params.archive_size, rows, least)
    gen = EASY_BUDGET[1]
    cap = seed_cap(per_easy)
    easy_cost = cost(per_easy, pop, gen, cap)
    common = dict(n_jobs=J, cpu_budget=budget, easy_decode_s=t_easy, in_order_decode_s=t_in,
                  easy_search_cpu_s=easy_cost, measure_cpu_s=measured)
    if easy_cost <= budget:
        return (params.replace(easy_search=True, pop_size=pop, n_gen=gen, seed_candidates=cap,
                               archive_size=archive),
                DefaultChoice("measured", "easy search", pop, gen, cap, archive,
                              estimated_cpu_s=easy_cost, **common))
    per_in = IN_ORDER_FACTOR * t_in
    pop, archive = _fitted(BUDGET[0], params.archive_size, rows, least)
    cap = seed_cap(per_in)
    pairs = SEED_PAIRS if cap is None else min(cap, SEED_PAIRS)
    gen = int((budget - fixed - pairs * per_in) // (pop * per_in))
    gen = max(MIN_GEN, min(BUDGET[1], gen))
    return (params.replace(easy_search=False, pop_size=pop, n_gen=gen, seed_candidates=cap,
                           archive_size=archive),
            DefaultChoice("measured", "in-order search", pop, gen, cap, archive,
                          estimated_cpu_s=cost(per_in, pop, gen, cap), **common))


def _fitted(pop: int, archive: int, rows: int, least: int = 4) -> tuple[int, int]:
    """``(pop, archive)`` with ``3 * pop + archive <= rows`` where the floors allow: the
    archive at most a third of the rows (at least ``least``, two points per objective), the
    population a multiple of 10 of what is left, at least :data:`MIN_POP`."""
    if 3 * pop + archive <= rows:
        return pop, archive
    archive = max(least, min(archive, rows // 3))
    pop = max(MIN_POP, min(pop, (rows - archive) // 3 // 10 * 10))
    return pop, archive
