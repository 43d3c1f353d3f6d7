"""``moga.run``: NSGA-II over (order, blacklist) chromosomes, and its result.

``run`` is a :class:`~moga.evolution.search.Search` stepped until a stop rule
fires (or, with ``islands``, an island run: :mod:`moga.evolution.islands`).
"""

from __future__ import annotations

from ..model.jobset import JobSet
from ..model.platform import Federation
from .params import GAParams
from .search import HV_FACTOR, RunResult, Search

__all__ = ["GAParams", "RunResult", "run", "HV_FACTOR"]


def run(jobset: JobSet, federation: Federation, pop_size: int | None = None,
        n_gen: int | None = None, seed: int = 1, *, model: str = "fluid", params=None,
        objectives=("makespan", "energy"), initial=None, progress: bool = False,
        verbose: bool = False, use_blacklist: bool = True, on_generation=None,
        backfill: str = "none", time_limit: float | None = None,
        stagnation: int | None = None, stagnation_tol: float = 1e-3,
        power_cap: float | None = None, interrupt=None, islands: int | None = None,
        client=None, migration=None, kill_at_request: bool = False,
        cpu_budget: float | None = None, evaluator=None,
        **deprecated) -> RunResult:
    """Evolve a Pareto front with NSGA-II.

    Parameters
    ----------
    jobset : JobSet
    federation : Federation
    pop_size, n_gen : int, optional
        Population size and generations (default those of ``params``; left
        at None there, 50 x 240 with the EASY search and 100 x 700 without,
        :meth:`GAParams.resolved`). With these two and ``GAParams.easy_search``
        all left at None (the in-order decoder, no islands) the search,
        population and generations are picked by the job-set's size: up to
        5,000 jobs and no ``cpu_budget`` given, the EASY search at 50 x 240;
        above, or with ``cpu_budget`` given, from timed decodes of
        the submit order with each decoder, the EASY search at population 50
        if ``cpu_budget`` buys at least 40 of its generations by the
        estimate, else the in-order search at population 100, either run
        until its generations (240 or 700) or its CPU budget end it
        (:mod:`moga.evolution.sizing`); ``info["default"]`` says what was
        picked and why.
    seed : int
        Seed of every random draw: the same seed gives a bit-identical result.
    model : {"fluid", "at_start"}
    params : GAParams, dict or path to a TOML file, optional
        GA parameters; ``pop_size`` and ``n_gen`` given here override them.
    objectives : sequence of str
        Default ``("makespan", "energy")``.
    initial : array_like, optional
        Individuals (rows of ``X``) to put in the initial population (the old
        keyword ``extra`` still works, with a warning).
    progress : bool
        A progress bar on stderr, one step per generation; on a run the size
        rule sized, the bar counts the generations its budget is estimated to buy.
    verbose : bool
        A line per generation on stdout (generation, evaluations, hypervolume,
        front size). The result does not depend on it.
    use_blacklist : bool
        False evolves the order alone, every job free to use every node: the
        ablation that shows what the blacklist buys (the old keyword
        ``blacklist`` still works, with a warning).
    on_generation : callable, optional
        Called after every generation as ``on_generation(n_gen, n_evals, hv)``;
        an exception it raises (for example a pruning signal) ends the run.
    backfill : {"none", "easy"}
        The decoder: jobs strictly in the chromosome's order (the MOGA decoder),
        or EASY backfilling with the order as queue priority (the submit order
        with an empty blacklist then is EASY itself, and the hypervolume is
        normalised by it). With ``"none"`` the front is the in-order
        decoder's; unless ``params`` sets ``easy_search=False`` it is searched
        through EASY's space (:attr:`GAParams.easy_search`).
    time_limit : float, optional
        Stop after this many seconds (the generation under way finishes). The
        number of generations then depends on the machine's speed, so a run
        with a time limit repeats only up to it.
    stagnation : int, optional
        Stop when the hypervolume rose by at most ``stagnation_tol`` (relative)
        over the last ``stagnation`` generations.
    power_cap : float, optional
        Evolve under a power budget of this many W (docs/design.md §11): the
        same as passing ``federation.with_cap(power_cap)``. A federation that
        already has caps keeps them. The job-set's ``power`` factors apply.
    interrupt : callable, optional
        Asked after every generation; when it returns True the run ends there
        and returns the front reached so far (``info["stopped_by"]`` is
        ``"interrupted"``). The ``moga run`` command passes one that turns
        true on Ctrl-C.
    islands : int, optional
        Run an island model of this many islands (>= 1), each this search on
        its own stream of ``seed``, with migration between epochs of
        generations; ``n_gen`` then counts each island's generations,
        ``on_generation``, the history and the stop rules come per epoch, and
        the front is the islands' non-dominated union
        (:func:`moga.evolution.islands.run_islands`, docs/guide/cluster.md).
    client : dask.distributed.Client, optional
        With ``islands``: the Dask client whose workers run the islands
        (needs the ``sweep`` extra); None runs them in this process. The
        front does not depend on it.
    migration : Migration or dict, optional
        With ``islands``: the epoch length, migrants and topology
        (:class:`moga.evolution.islands.Migration`; default every 20
        generations, 5 migrants, ring).
    kill_at_request : bool
        Kill every job when it has run for its requested time, as a production
        scheduler does (:meth:`JobSet.kill_at_request`, whose job-set the result
        holds); default False, the MOGA paper's model, in which jobs run their
        trace's work to completion.
    cpu_budget : float, optional
        CPU seconds the size rule aims the run at (default 900,
        :data:`moga.evolution.sizing.CPU_BUDGET`, for job-sets of more than
        5,000 jobs). Given, the rule measures and picks at any size, so a
        smaller job-set is held to it too. A run the rule sized stops before a
        generation that would take the call's CPU seconds past it (``"cpu
        budget"``), though never before the rule's floor of 40 (EASY search) or
        20 (in-order search) generations. When the population, generations or
        search are given (or ``backfill="easy"``, islands or ``archive_size=0``),
        the rule does not apply: a budget given is then ignored with a warning.

    evaluator : dask.distributed.Client, optional
        Decode each generation's chromosomes on the client's workers, in chunks,
        one population in this process (needs the ``sweep`` extra); the front is
        the one without it, bit for bit (:mod:`moga.evolution.remote`,
        docs/guide/cluster.md). Not with ``islands`` (which take ``client``).

    The run ends at whichever comes first: ``n_gen``, the time limit, stagnation,
    an interrupt, the CPU budget of a run the size rule sized, or (as in pymoo) 100
    mating attempts in a row without a child unlike the population's chromosomes;
    ``info["stopped_by"]`` says which (``"generations"``, ``"time limit"``,
    ``"stagnation"``, ``"interrupted"``, ``"cpu budget"``, ``"no new child"``; an island
    run whose Dask cluster was lost mid-run ``"cluster lost"``, with the front of its
    last epoch). Passing the population, the generations run (``history["n_gen"][-1]``)
    and the search repeats a run bit for bit. To step, save or resume a run, build a
    :class:`~moga.evolution.search.Search` with the same arguments.

    Returns
    -------
    RunResult
    """
    return Search(jobset, federation, pop_size, n_gen, seed, model=model, params=params,
                  objectives=objectives, initial=initial, progress=progress, verbose=verbose,
                  use_blacklist=use_blacklist, on_generation=on_generation,
                  backfill=backfill, time_limit=time_limit, stagnation=stagnation,
                  stagnation_tol=stagnation_tol, power_cap=power_cap, interrupt=interrupt,
                  kill_at_request=kill_at_request, cpu_budget=cpu_budget, evaluator=evaluator,
                  islands=islands, client=client, migration=migration, **deprecated).run()
