"""``moga.run``: NSGA-II over (order, blacklist) chromosomes, and its result."""

from __future__ import annotations

import time

import numpy as np
from pymoo.algorithms.moo.nsga2 import NSGA2
from pymoo.core.callback import Callback
from pymoo.core.termination import Termination
from pymoo.optimize import minimize
from pymoo.termination.collection import TerminationCollection
from pymoo.termination.max_gen import MaximumGenerationTermination
from pymoo.termination.max_time import TimeBasedTermination

from ..model.jobset import JobSet, apply_kill_option
from ..model.platform import Federation
from .duplicates import ScheduleDuplicateElimination
from .engine import evolve
from .mating import ArrayMating
from .params import GAParams, check_seed
from .problem import SchedulingProblem, _use_blacklist
from .search import (
    HV_FACTOR,
    RunResult,
    _Recorder,
    _search_parts,
    _seeded_archive,
    _stopped_by,
)
from .sizing import (
    applies,
    check_budget,
    choose_default,
    described,
    least_generations,
    unsized_by,
)

__all__ = ["GAParams", "RunResult", "run", "HV_FACTOR"]

#: True runs every search through pymoo's ``minimize`` (tests compare the two loops).
_PYMOO_LOOP = False
class _Stagnation(Termination):
    """pymoo's termination: the recorder's hypervolume stagnated (see ``_Recorder.stagnated``)."""

    def __init__(self, recorder, window, tol):
        super().__init__()
        self.recorder, self.window, self.tol = recorder, int(window), float(tol)

    def _update(self, algorithm):
        return 1.0 if self.recorder.stagnated(self.window, self.tol) else 0.0


class _Interrupt(Termination):
    """pymoo's termination: the caller's ``interrupt()`` turned true."""

    def __init__(self, interrupt):
        super().__init__()
        self.interrupt = interrupt

    def _update(self, algorithm):
        return 1.0 if self.interrupt() else 0.0


class _CpuBudget:
    """Whether a run picked by the size rule has spent its CPU budget: true once the CPU
    seconds since the call began, and one more generation at the mean cost of those after
    the first, would pass ``budget``, and the run has had its ``floor`` of generations
    (the rule's least for the search it picked). The rule's estimate picks the search;
    this stop ends the run at the budget, wherever the job-set's decodes are dearer or
    cheaper than estimated."""

    def __init__(self, start: float, budget: float, floor: int = 1):
        self.start, self.budget, self.floor = start, budget, floor
        self.first = None  # (generation, CPU seconds) when first asked
        self.reached = False

    def __call__(self, n_gen: int) -> bool:
        now = time.process_time()
        if self.first is None:
            self.first = (n_gen, now)
        g0, c0 = self.first
        per = (now - c0) / (n_gen - g0) if n_gen > g0 else 0.0
        self.reached = self.reached or (n_gen >= self.floor
                                        and now - self.start + per > self.budget)
        return self.reached


def _unsized_warning(params: GAParams, backfill: str, islands) -> str:
    """The warning for a ``cpu_budget`` the size rule cannot apply, naming what the caller
    set (:func:`~moga.evolution.sizing.unsized_by`)."""
    words = {"islands": "islands", "backfill": f"backfill={backfill!r}",
             "archive_size": "archive_size=0"}
    given = [words.get(n, n) for n in unsized_by(params, backfill, islands)]
    return ("cpu_budget bounds only a run whose population, generations and search the size "
            f"rule picks, and this run was given {', '.join(given)}: it ignores the budget "
            "(bound it with n_gen or time_limit)")


class _CpuStop(Termination):
    """pymoo's termination: a :class:`_CpuBudget` spent."""

    def __init__(self, budget: _CpuBudget):
        super().__init__()
        self.budget = budget

    def _update(self, algorithm):
        return 1.0 if self.budget(algorithm.n_gen) else 0.0


class _History(Callback):
    """pymoo's callback, feeding a :class:`_Recorder`."""

    def __init__(self, recorder):
        super().__init__()
        self.recorder = recorder

    def notify(self, algorithm):
        # The offspring just evaluated (the initial population at generation 1).
        off = algorithm.off if algorithm.off is not None else algorithm.pop
        self.recorder.record(algorithm.n_gen, algorithm.evaluator.n_eval, off.get("F"),
                             lambda rows: off[rows].get("X"),
                             lambda: algorithm.opt.get("F"))


def run(jobset: JobSet, federation: Federation, pop_size: int | None = None,
        n_gen: int | None = None, seed: int = 1, *, model: str = "fluid", params=None,
        objectives=("makespan", "energy"), initial=None, progress: bool = False,
        verbose: bool = False, use_blacklist: bool = True, on_generation=None,
        backfill: str = "none", time_limit: float | None = None,
        stagnation: int | None = None, stagnation_tol: float = 1e-3,
        power_cap: float | None = None, interrupt=None, islands: int | None = None,
        client=None, migration=None, kill_at_request: bool = False,
        cpu_budget: float | None = None,
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
        A progress bar on stderr, one step per generation.
    verbose : bool
        pymoo's per-generation table. The run then goes through pymoo's own
        loop, as it does with ``mating_neighbours=0`` (pymoo's tournament):
        the same result, bit for bit, with more bookkeeping per generation.
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

    The run ends at whichever comes first: ``n_gen``, the time limit, stagnation,
    an interrupt, the CPU budget of a run the size rule sized, or (as in pymoo) 100
    mating attempts in a row without a child unlike the population's chromosomes;
    ``info["stopped_by"]`` says which (``"generations"``, ``"time limit"``,
    ``"stagnation"``, ``"interrupted"``, ``"cpu budget"``, ``"no new child"``). Passing
    the population, the generations run (``history["n_gen"][-1]``) and the search
    repeats a run bit for bit.

    Returns
    -------
    RunResult
    """
    if "extra" in deprecated:
        import warnings

        warnings.warn("run(extra=...) is now run(initial=...)", DeprecationWarning, stacklevel=2)
        initial = deprecated.pop("extra")
    use_blacklist = _use_blacklist(use_blacklist, deprecated, "run")
    jobset = apply_kill_option(jobset, kill_at_request)
    if power_cap is not None:
        federation = federation.with_cap(power_cap, federation.cluster_caps)
    params = GAParams.coerce(params).replace(pop_size=pop_size, n_gen=n_gen)
    seed = check_seed(seed)
    check_budget(cpu_budget)
    cpu0 = time.process_time()

    if time_limit is not None and not (isinstance(time_limit, (int, float))
                                       and 0 < time_limit < float("inf")):
        raise ValueError(f"time_limit must be a number of seconds > 0, got {time_limit!r}")
    if stagnation is not None and (isinstance(stagnation, bool)
                                   or not isinstance(stagnation, (int, np.integer))
                                   or stagnation < 1):
        raise ValueError(f"stagnation must be a number of generations >= 1, got {stagnation!r}")
    problem = SchedulingProblem(jobset, federation, model=model, objectives=objectives,
                                use_blacklist=use_blacklist, backfill=backfill)
    submit = _submit_individual(jobset, federation if use_blacklist else None)
    base, _ = problem.decode(submit)
    reference = base[0]
    if np.any(reference <= 0):
        raise ValueError(f"the submit-order objectives must be > 0 to normalise, got {reference}")
    if islands is None and (client is not None or migration is not None):
        raise ValueError("client and migration apply to island runs: pass islands=N too")
    if applies(params, backfill, islands):
        # Nothing of the search set by the caller: picked by size and decode cost (a
        # budget given, at any size).
        params, choice = choose_default(params, problem, submit, cpu_budget)
        params = params.for_moga(backfill)
        spent = (_CpuBudget(cpu0, choice.cpu_budget, least_generations(choice))
                 if choice.rule == "measured" else None)
    else:
        if cpu_budget is not None:
            import warnings

            warnings.warn(_unsized_warning(params, backfill, islands), UserWarning,
                          stacklevel=2)
        spent = None
        params = params.for_moga(backfill)  # the EASY search wherever it applies
        choice = described(params, len(jobset), backfill)
    problem.decode_seconds, problem.n_decoded = 0.0, 0
    if islands is not None:
        from .islands import run_islands

        if verbose or not params.mating_neighbours or _PYMOO_LOOP:
            raise ValueError("islands run NSGA-II's array loop: they need neighbourhood mating "
                             "(mating_neighbours >= 1) and verbose=False")
        return run_islands(problem, reference, params, seed, islands=islands, client=client,
                           migration=migration, initial=initial, time_limit=time_limit,
                           stagnation=stagnation, stagnation_tol=stagnation_tol,
                           interrupt=interrupt, on_generation=on_generation,
                           progress=progress)
    search, sampling, selection, crossover, mutation, improve = _search_parts(problem, params,
                                                                              initial)
    t0 = time.perf_counter()
    archive = _seeded_archive(problem, params, reference)
    bar = None
    if progress and not (verbose or selection is None or _PYMOO_LOOP):
        from ..progress import Progress

        bar = Progress(params.n_gen, every=max(1, params.n_gen // 10))
        user_hook = on_generation

        def on_generation(n, n_evals, hv):
            bar.step(f"generation {n}, hv {hv:.4f}")
            if user_hook is not None:
                user_hook(n, n_evals, hv)
    history = _Recorder(reference, t0, on_generation, archive,
                        None if search is problem else search.twins)

    if selection is not None and not (verbose or _PYMOO_LOOP):
        # The array loop: the same run as pymoo's, without its per-individual bookkeeping.
        def stop(n, elapsed):
            return (n >= params.n_gen or (time_limit is not None and elapsed >= time_limit)
                    or (stagnation is not None and history.stagnated(stagnation, stagnation_tol))
                    or (interrupt is not None and bool(interrupt()))
                    or (spent is not None and spent(n)))

        def observe(n, n_evals, pop, off_F, off_X):
            history.record(n, n_evals, off_F, off_X, lambda: pop.F[pop.rank == 0])

        extra = None
        if params.fast_end:
            from .fast_end import FastEndSearch

            extra = FastEndSearch(params.fast_end)
        pop = evolve(search, pop_size=params.pop_size, sampling=sampling, selection=selection,
                     crossover=crossover, mutation=mutation, seed=seed, stop=stop,
                     observe=observe, improve=improve, extra=extra)
        # The population's front is the result only without an archive: with one, the
        # population is dropped here, before the archive's rows are gathered.
        front_F, front_X = ((pop.F[pop.rank == 0], pop.X[pop.rank == 0]) if archive is None
                            else (None, None))
        del pop
        if bar is not None:
            bar.close()
    else:
        front_F, front_X = _run_pymoo(search, params, sampling, selection, crossover,
                                      mutation, improve, seed, history=history,
                                      time_limit=time_limit, stagnation=stagnation,
                                      stagnation_tol=stagnation_tol, verbose=verbose,
                                      progress=progress, interrupt=interrupt, spent=spent)
    wall = time.perf_counter() - t0

    front_X = None if archive is not None else np.atleast_2d(front_X)
    F = archive.F if archive is not None else np.atleast_2d(front_F)
    front_F = None
    # One chromosome per distinct objective vector, sorted by the first objective.
    _, first = np.unique(F, axis=0, return_index=True)
    idx = first[np.lexsort(F[first].T[::-1])]
    # The archive's rows are gathered once, each released as it is copied.
    F, X = F[idx], (archive.take(idx) if archive is not None else front_X[idx])
    front_X = None
    # With easy_search, the EASY decodes and the twins' in-order ones both count.
    decoders = (problem,) if search is problem else (problem, search)
    h = np.array(history.rows, dtype=float)
    hist = {"n_gen": h[:, 0].astype(int), "n_evals": h[:, 1].astype(int), "hv": h[:, 2],
            "front_size": h[:, 3].astype(int), "time_s": h[:, 4]}
    return RunResult(name="MOGA" if use_blacklist else "MOGA without blacklist", F=F, X=X,
                     history=hist, jobset=jobset, federation=federation, model=model,
                     objectives=tuple(objectives), seed=seed, params=params,
                     reference=reference, ref_point=HV_FACTOR * reference, wall_time=wall,
                     decode_time=sum(p.decode_seconds for p in decoders),
                     n_evals=int(sum(p.n_decoded for p in decoders)),
                     use_blacklist=use_blacklist, backfill=backfill,
                     info={"default": choice.as_dict(), "stopped_by": _stopped_by(
                         hist, params.n_gen, time_limit, wall,
                         stagnation is not None and history.stagnated(stagnation,
                                                                      stagnation_tol),
                         interrupt is not None and bool(interrupt()),
                         spent is not None and spent.reached)})


def _run_pymoo(problem, params, sampling, selection, crossover, mutation, improve, seed,
               history, time_limit, stagnation, stagnation_tol, verbose, progress,
               interrupt=None, spent=None):
    """The run through pymoo's ``minimize`` (its display, progress bar and tournament)."""
    algorithm = NSGA2(
        pop_size=params.pop_size,
        **({} if selection is None else {"selection": selection}),
        sampling=sampling,
        crossover=crossover,
        mutation=mutation,
        eliminate_duplicates=ScheduleDuplicateElimination(),
    )
    # The same mating on arrays: bit-identical children, a fraction of pymoo's bookkeeping.
    algorithm.mating = ArrayMating(algorithm.mating.selection, crossover, mutation,
                                   improve=improve)
    stops = [MaximumGenerationTermination(params.n_gen)]
    if time_limit is not None:
        stops.append(TimeBasedTermination(float(time_limit)))
    if stagnation is not None:
        stops.append(_Stagnation(history, stagnation, stagnation_tol))
    if interrupt is not None:
        stops.append(_Interrupt(interrupt))
    if spent is not None:
        stops.append(_CpuStop(spent))
    # copy_termination=False: the stagnation test reads this run's history.
    res = minimize(problem, algorithm, TerminationCollection(*stops), seed=seed,
                   copy_termination=False, callback=_History(history), verbose=verbose,
                   progress=progress, save_history=False)
    return res.F, res.X


def _submit_individual(jobset, federation=None):
    """The submit order with an empty blacklist (no blacklist part when ``federation`` is None)."""
    J = len(jobset)
    K = 0 if federation is None else federation.n_clusters
    order = jobset.submit_order.astype(float)
    return np.concatenate([order, np.zeros(J * K)])[None, :]
