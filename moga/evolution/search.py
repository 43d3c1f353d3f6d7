"""``moga.Search``: a MOGA run that can be stepped, saved, continued and evaluated elsewhere
(``moga.run`` is one stepped until done), and its state's files."""

from __future__ import annotations

import dataclasses
import time

import numpy as np

from ..results import _JOBSET_ARRAYS
from .archive import ParetoArchive
from .params import GAParams, check_seed
from .parts import (  # noqa: F401 (HV_FACTOR, RunResult, StopRule, ... are this module's API too)
    HV_FACTOR,
    CpuBudget,
    Interrupted,
    MaxGenerations,
    RunResult,
    Stagnation,
    StopRule,
    TimeLimit,
    _check_stops,
    _Recorder,
    _search_parts,
    _seeded_archive,
    _submit_individual,
    _unsized_warning,
    survival_of,
)

__all__ = ["HV_FACTOR", "CpuBudget", "Interrupted", "MaxGenerations", "RunResult", "Search",
           "Stagnation", "StopRule", "TimeLimit", "load_state", "save_state"]


# -- the steppable search ------------------------------------------------------------------

#: Format name and version of :meth:`Search.state`; a state of another version is refused.
STATE_FORMAT = "moga-search"
STATE_VERSION = 1
#: The settings a state records and :meth:`Search.from_state` compares with those given.
_SETTINGS = ("seed", "model", "objectives", "use_blacklist", "backfill", "time_limit",
             "stagnation", "stagnation_tol", "power_cap", "kill_at_request", "cpu_budget",
             "pop_size", "n_gen", "params", "islands", "migration")


class Search:
    """NSGA-II over (order, blacklist) chromosomes that can be stepped, saved and continued.

    Built with the arguments of :func:`moga.run`; ``moga.run`` is a Search
    stepped until :attr:`done`:

    >>> s = moga.Search(js, fed, pop_size=40, n_gen=100, seed=1)   # doctest: +SKIP
    >>> while not s.done:
    ...     s.step()
    >>> res = s.result()                                          # a RunResult

    :meth:`state` gives the whole search as a plain, versioned dict of arrays
    (population, archive, random generator, counters, settings, the job-set
    and federation), and :meth:`from_state` continues it: a search restored
    after any number of steps ends with the front of the uninterrupted one,
    bit for bit. :meth:`ask` and :meth:`tell` split a step around its decode
    for an evaluator of the caller's own; ``evaluator`` decodes each
    generation through a Dask client's workers. With ``islands``, a step is
    one epoch of every island (:class:`~moga.evolution.islands.IslandRun`),
    saved and continued the same way.

    Parameters
    ----------
    jobset, federation, pop_size, n_gen, seed, model, params, objectives, initial,
    progress, verbose, use_blacklist, on_generation, backfill, time_limit, stagnation,
    stagnation_tol, power_cap, interrupt, kill_at_request, cpu_budget, islands, client,
    migration
        As in :func:`moga.run`.
    evaluator : dask.distributed.Client, optional
        Decode each generation's chromosomes on the client's workers, in chunks
        (needs the ``sweep`` extra); the front is the same, bit for bit. Not with
        ``islands``.

    Attributes
    ----------
    done : bool
        Whether a stop rule fired (or no new child could be made).
    stopped_by : str or None
        Which: ``"generations"``, ``"time limit"``, ``"stagnation"``,
        ``"interrupted"``, ``"cpu budget"``, ``"no new child"``, or for an
        island run on Dask ``"cluster lost"``.
    stops : list of StopRule
        The rules asked after every generation, in order.
    n_gen, n_evals : int
        Generations made and chromosomes decoded by the population (each
        island's generations and every island's decodes in an island run).
    params : GAParams
        The resolved parameters.
    choice : DefaultChoice
        What the size rule picked, and why (``info["default"]`` of the result).
    """

    def __init__(self, jobset, federation, pop_size: int | None = None,
                 n_gen: int | None = None, seed: int = 1, *, model: str = "fluid",
                 params=None, objectives=("makespan", "energy"), initial=None,
                 progress: bool = False, verbose: bool = False, use_blacklist: bool = True,
                 on_generation=None, backfill: str = "none", time_limit: float | None = None,
                 stagnation: int | None = None, stagnation_tol: float = 1e-3,
                 power_cap: float | None = None, interrupt=None,
                 kill_at_request: bool = False, cpu_budget: float | None = None,
                 evaluator=None, islands: int | None = None, client=None, migration=None,
                 **deprecated):
        from ..model.jobset import apply_kill_option
        from .problem import _use_blacklist
        from .sizing import (
            applies,
            check_budget,
            choose_default,
            described,
            least_generations,
        )

        if "extra" in deprecated:
            import warnings

            warnings.warn("run(extra=...) is now run(initial=...)", DeprecationWarning,
                          stacklevel=3)
            initial = deprecated.pop("extra")
        use_blacklist = _use_blacklist(use_blacklist, deprecated, "run")
        cpu = time.process_time()
        settings = {"seed": check_seed(seed), "model": model, "objectives": tuple(objectives),
                    "use_blacklist": use_blacklist, "backfill": backfill,
                    "time_limit": time_limit, "stagnation": stagnation,
                    "stagnation_tol": stagnation_tol, "power_cap": power_cap,
                    "kill_at_request": kill_at_request, "cpu_budget": cpu_budget,
                    "pop_size": pop_size, "n_gen": n_gen,
                    "params": GAParams.coerce(params).to_dict(), "islands": islands,
                    "migration": None}
        check_budget(cpu_budget)
        if islands is None and (client is not None or migration is not None):
            raise ValueError("client and migration apply to island runs: pass islands=N too")
        if islands is not None:
            from .islands import Migration

            settings["migration"] = dataclasses.asdict(Migration.coerce(migration))
        _check_stops(time_limit, stagnation)
        jobset = apply_kill_option(jobset, kill_at_request)
        if power_cap is not None:
            federation = federation.with_cap(power_cap, federation.cluster_caps)
        params = GAParams.coerce(params).replace(pop_size=pop_size, n_gen=n_gen)
        self._prepare(jobset, federation, settings)
        self._isl = None
        if islands is not None:
            if verbose:
                raise ValueError("island runs report each epoch (progress=True); "
                                 "verbose=False")
            if evaluator is not None:
                raise ValueError("evaluator sends one population's decodes to Dask workers; "
                                 "an island run takes its client as client=")
            if cpu_budget is not None:
                import warnings

                warnings.warn(_unsized_warning(params, backfill, islands), UserWarning,
                              stacklevel=3)
            self._islands(params.for_moga(backfill), initial, client=client,
                          interrupt=interrupt, on_generation=on_generation,
                          progress=progress)
            return
        if applies(params, backfill, None):
            # Nothing of the search set by the caller: picked by size and decode cost (a
            # budget given, at any size).
            params, choice = choose_default(params, self.problem, self._submit, cpu_budget)
            params = params.for_moga(backfill)
            budget = (CpuBudget(choice.cpu_budget, least_generations(choice))
                      if choice.rule == "measured" else None)
        else:
            if cpu_budget is not None:
                import warnings

                warnings.warn(_unsized_warning(params, backfill, None), UserWarning,
                              stacklevel=3)
            budget = None
            params = params.for_moga(backfill)  # the EASY search wherever it applies
            choice = described(params, len(jobset), backfill)
        self.problem.decode_seconds, self.problem.n_decoded = 0.0, 0
        self._build(params, choice, initial, budget, interrupt=interrupt,
                    on_generation=on_generation, progress=progress, verbose=verbose,
                    evaluator=evaluator)
        # The CPU the search has used counts from the call (the size rule's measure too).
        self._cpu0 = cpu
        self.archive = _seeded_archive(self.problem, self.params, self.reference)
        self.recorder.archive = self.archive

    # -- set-up ----------------------------------------------------------------------------
    def _prepare(self, jobset, federation, settings) -> None:
        """The problem, the submit order and its objectives (the reference)."""
        from .problem import SchedulingProblem
        self.jobset, self.federation, self.settings = jobset, federation, dict(settings)
        s = self.settings
        self.problem = SchedulingProblem(jobset, federation, model=s["model"],
                                         objectives=s["objectives"],
                                         use_blacklist=s["use_blacklist"],
                                         backfill=s["backfill"])
        self._submit = _submit_individual(jobset, federation if s["use_blacklist"] else None)
        from ..model.objectives import CATALOGUE

        reference = self.problem.decode(self._submit)[0][0]
        # An objective the submit order already brings to 0 (no job waits) is normalised
        # by its catalogue floor.
        reference = np.maximum(reference, [CATALOGUE[o].floor for o in s["objectives"]])
        if np.any(reference <= 0):
            raise ValueError(f"the submit-order objectives must be > 0 to normalise, got "
                             f"{reference}")
        self.reference = reference

    def _islands(self, params, initial, *, client, interrupt, on_generation, progress,
                 state=None) -> None:
        """The island run (:class:`~moga.evolution.islands.IslandRun`) this search steps,
        new or continued from ``state``."""
        from .islands import IslandRun
        from .sizing import described

        s = self.settings
        self.params = params
        self.choice = described(params, len(self.jobset), s["backfill"])
        self.initial = None if initial is None else np.asarray(initial, dtype=float)
        self.problem.decode_seconds, self.problem.n_decoded = 0.0, 0
        kw = dict(client=client, initial=self.initial, interrupt=interrupt,
                  on_generation=on_generation, progress=progress)
        if state is None:
            self._isl = IslandRun(self.problem, self.reference, params, s["seed"],
                                  islands=s["islands"], migration=s["migration"],
                                  time_limit=s["time_limit"], stagnation=s["stagnation"],
                                  stagnation_tol=s["stagnation_tol"], **kw)
        else:
            self._isl = IslandRun.from_state(state, self.problem, self.reference, params,
                                             s["seed"], **kw)
        self.stops = self._isl.stops
        self.stopped_by = self._isl.stopped_by
        self.evaluator = None
        self._bar = None

    def _build(self, params, choice, initial, budget, *, interrupt, on_generation, progress,
               verbose, evaluator) -> None:
        """The operators, the generation loop, the recorder and the stop rules."""
        from .engine import Evolution
        from .mating import PymooTournament

        s = self.settings
        self.params, self.choice = params, choice
        self.initial = None if initial is None else np.asarray(initial, dtype=float)
        (self.search, sampling, selection, crossover, mutation,
         improve) = _search_parts(self.problem, params, self.initial)
        extra = None
        if params.fast_end:
            from .fast_end import FastEndSearch

            extra = FastEndSearch(params.fast_end)
        self.evolution = Evolution(
            self.search, pop_size=params.pop_size, sampling=sampling,
            selection=selection if selection is not None else PymooTournament(),
            crossover=crossover, mutation=mutation, seed=s["seed"], improve=improve,
            extra=extra, survival=survival_of(params, len(self.problem.objectives)))
        self._user_hook = on_generation
        self.recorder = _Recorder(self.reference, time.perf_counter(), self._on_generation,
                                  None, None if self.search is self.problem
                                  else self.search.twins)
        self.stops = [MaxGenerations(params.n_gen)]
        if s["time_limit"] is not None:
            self.stops.append(TimeLimit(s["time_limit"]))
        if s["stagnation"] is not None:
            self.stops.append(Stagnation(s["stagnation"], s["stagnation_tol"]))
        if interrupt is not None:
            self.stops.append(Interrupted(interrupt))
        if budget is not None:
            self.stops.append(budget)
        self.stopped_by = None
        self.progress, self.verbose = bool(progress), bool(verbose)
        self._bar = None
        self._t0 = time.perf_counter()
        self._cpu0 = 0.0  # set by the caller: the CPU clock when the search began
        self.evaluator = None if evaluator is None else _evaluator(evaluator, self.search)

    def _decoders(self):
        return (self.problem,) if self.search is self.problem else (self.problem, self.search)

    # -- the loop --------------------------------------------------------------------------
    @property
    def n_gen(self) -> int:
        """Generations made (each island's, in an island run)."""
        return self._isl.n_gen if self._isl is not None else self.evolution.n_gen

    @property
    def n_evals(self) -> int:
        """Chromosomes the population (every island's) decoded."""
        if self._isl is not None:
            return int(sum(st.get("n_evals", 0) for st in self._isl.states))
        return self.evolution.n_evals

    @property
    def done(self) -> bool:
        return self.stopped_by is not None

    @property
    def elapsed(self) -> float:
        """Wall seconds since the search began (before an interruption included)."""
        if self._isl is not None:
            return self._isl.elapsed
        return time.perf_counter() - self._t0

    @property
    def cpu_seconds(self) -> float:
        """CPU seconds of this process since the search began (before an interruption
        included)."""
        if self._isl is not None:
            return self._isl.cpu_seconds
        return time.process_time() - self._cpu0

    def ask(self) -> np.ndarray:
        """The chromosomes (n, n_var) whose objectives the next :meth:`tell` takes: the
        initial population first, then each generation's children. Empty when no new
        child can be made (tell an empty array then; the search stops)."""
        if self.done:
            raise RuntimeError(f"the search is done (stopped by {self.stopped_by}); "
                               "result() gives its front")
        if self._isl is not None:
            raise RuntimeError("an island run decodes in its islands: ask() and tell() "
                               "apply to a search of one population")
        X = self.evolution.ask()
        self._n_decoded_at_ask = self.search.n_decoded
        return X

    def tell(self, F) -> None:
        """Take the objectives ``F`` (n, m) of the rows :meth:`ask` gave (in the search's
        own decoder's terms: EASY's for the EASY search) and end the generation: survival,
        the archive, the history and the stop rules."""
        X = self.evolution._asked[0] if self.evolution._asked is not None else None
        if X is not None and len(X) and self.search.n_decoded == self._n_decoded_at_ask:
            self.search.n_decoded += len(X)  # decoded by the caller's own evaluator
        self.evolution.tell(np.asarray(F, dtype=float) if X is not None and len(X)
                            else np.empty((0, len(self.problem.objectives))))
        if self.evolution.exhausted:
            self.stopped_by = "no new child"
            return
        evo = self.evolution
        pop = evo.pop
        # The rules are asked before the generation is recorded, as pymoo asks its
        # termination before its callback: stagnation reads the history up to the
        # generation before.
        for rule in self.stops:
            if rule(self):
                self.stopped_by = rule.name
                break
        self.recorder.record(evo.n_gen, evo.n_evals, np.asarray(F, dtype=float), X,
                             lambda: pop.F[pop.rank == 0])
        if self.done and self._bar is not None:
            self._bar.close()

    def step(self) -> None:
        """Make one generation (the first: the initial population) and ask the stop rules;
        in an island run, one epoch of every island."""
        if self._isl is not None:
            if self.done:
                raise RuntimeError(f"the search is done (stopped by {self.stopped_by}); "
                                   "result() gives its front")
            self._isl.step()
            self.stopped_by = self._isl.stopped_by
            return
        X = self.ask()
        if not len(X):
            F = np.empty((0, len(self.problem.objectives)))
        elif self.evaluator is not None:
            F = self.evaluator(X)
        else:
            F = self.search.decode(X)[0]
        self.tell(F)

    def run(self):
        """Step until a stop rule fires; the :meth:`result`."""
        self.until_done()
        return self.result()

    def until_done(self, after_step=None) -> None:
        """Step until a stop rule fires, calling ``after_step()`` after every step (the
        CLI saves the state there). In an island run a Ctrl-C after the first epoch ends
        the run there (``"interrupted"``)."""
        try:
            if self._isl is not None:
                self._isl.until_done(after_step)
                self.stopped_by = self._isl.stopped_by
                return
            while not self.done:
                self.step()
                if after_step is not None:
                    after_step()
        finally:
            if self._bar is not None:
                self._bar.close()
            if self.evaluator is not None:
                self.evaluator.close()

    def _on_generation(self, n, n_evals, hv):
        if self.progress and self._bar is None:
            from ..progress import Progress

            total = self.params.n_gen
            if self.choice.rule == "measured" and self.choice.estimated_gen:
                total = min(total, int(self.choice.estimated_gen))  # what the budget buys
            self._bar = Progress(total, every=max(1, total // 10))
        if self._bar is not None:
            self._bar.step(f"generation {n}, hv {hv:.4f}")
        if self.verbose:
            import sys

            print(f"n_gen {n:>5}  n_eval {n_evals:>8}  hv {hv:.6f}  "
                  f"front {self.recorder_front_size():>4}", file=sys.stdout, flush=True)
        if self._user_hook is not None:
            self._user_hook(n, n_evals, hv)

    def recorder_front_size(self) -> int:
        """Points of the front the history records (the archive's, else the population's)."""
        if self.archive is not None:
            return len(self.archive.F)
        pop = self.evolution.pop
        return 0 if pop is None else int(np.sum(pop.rank == 0))

    # -- the result ------------------------------------------------------------------------
    def front(self):
        """``(F, X)`` of the front so far: one chromosome per distinct objective vector,
        sorted by the first objective. Once the search is done, the archive hands its rows
        over (no copy is held twice), and :meth:`state` can no longer be taken."""
        if getattr(self, "_released", False):
            raise RuntimeError("the search's front was handed to an earlier result(); "
                               "take result() once, after state()")
        if self.archive is not None:
            F = self.archive.F
        else:
            pop = self.evolution.pop
            if pop is None:
                return np.empty((0, len(self.problem.objectives))), np.empty((0, 0))
            F = pop.F[pop.rank == 0]
        _, first = np.unique(F, axis=0, return_index=True)
        idx = first[np.lexsort(F[first].T[::-1])]
        if self.archive is not None:
            if not self.done:
                return F[idx], self.archive.X[idx]
            # The search is over: the archive's rows are handed over without a copy.
            self._released = True
            return F[idx], self.archive.take(idx)
        pop = self.evolution.pop
        return F[idx], pop.X[pop.rank == 0][idx]

    def result(self) -> RunResult:
        """The :class:`RunResult` of the search so far (its front, history and counters)."""
        if self._isl is not None:
            return self._isl.result()
        F, X = self.front()
        s = self.settings
        rows = self.recorder.rows
        h = np.array(rows, dtype=float).reshape(len(rows), 5)
        hist = {"n_gen": h[:, 0].astype(int), "n_evals": h[:, 1].astype(int), "hv": h[:, 2],
                "front_size": h[:, 3].astype(int), "time_s": h[:, 4]}
        decoders = self._decoders()
        use_blacklist = s["use_blacklist"]
        return RunResult(name="MOGA" if use_blacklist else "MOGA without blacklist", F=F, X=X,
                         history=hist, jobset=self.jobset, federation=self.federation,
                         model=s["model"], objectives=tuple(s["objectives"]), seed=s["seed"],
                         params=self.params, reference=self.reference,
                         ref_point=HV_FACTOR * self.reference, wall_time=self.elapsed,
                         decode_time=sum(p.decode_seconds for p in decoders),
                         n_evals=int(sum(p.n_decoded for p in decoders)),
                         use_blacklist=use_blacklist, backfill=s["backfill"],
                         info={"default": self.choice.as_dict(),
                               "stopped_by": self.stopped_by})

    # -- state -----------------------------------------------------------------------------
    def save(self, path) -> None:
        """Write :meth:`state` to ``path`` atomically (:func:`save_state`), without copying
        the population's and the archive's arrays first."""
        save_state(self.state(copy=False), path)

    def state(self, copy: bool = True) -> dict:
        """The whole search as a plain dict of values and arrays (copies; with
        ``copy=False``, the population's and the archive's own arrays, to be read before
        the next step).

        Keys: ``format``, ``version``, ``moga_version``, ``settings`` (the
        arguments that shape the search), ``params`` and ``choice`` (resolved),
        ``jobset`` (its arrays, name and report), ``federation``
        (:meth:`Federation.to_dict`), ``reference``, ``initial``, ``evolution``
        (:meth:`Evolution.state`: population, random generator, counters),
        ``archive`` (``F``, ``X``, or None), ``history`` (rows), ``counters``
        (decodes and their seconds, elapsed wall and CPU seconds), ``stops``
        (each rule's memory) and ``stopped_by``. :func:`save_state` writes it
        to one file, :func:`load_state` reads it back.
        """
        from ..version import __version__

        if getattr(self, "_released", False):
            raise RuntimeError("state() after result() of a finished search: the archive's "
                               "rows went to the result; take state() first")
        js = self.jobset
        if self._isl is not None:
            return {
                "format": STATE_FORMAT, "version": STATE_VERSION, "moga_version": __version__,
                "settings": {k: (list(v) if isinstance(v, tuple) else v)
                             for k, v in self.settings.items()},
                "params": self.params.to_dict(), "choice": self.choice.as_dict(),
                "jobset": _jobset_state(js), "federation": self.federation.to_dict(),
                "reference": self.reference.copy(),
                "initial": None if self.initial is None else self.initial.copy(),
                "islands": self._isl.state(), "stopped_by": self.stopped_by,
            }
        decoders = self._decoders()
        return {
            "format": STATE_FORMAT, "version": STATE_VERSION, "moga_version": __version__,
            "settings": {k: (list(v) if isinstance(v, tuple) else v)
                         for k, v in self.settings.items()},
            "params": self.params.to_dict(), "choice": self.choice.as_dict(),
            "jobset": _jobset_state(js),
            "federation": self.federation.to_dict(),
            "reference": self.reference.copy(),
            "initial": None if self.initial is None else self.initial.copy(),
            "evolution": self.evolution.state(copy=copy),
            "archive": None if self.archive is None else _archive_state(self.archive, copy,
                                                                        self.problem.n_var),
            "history": np.array(self.recorder.rows, dtype=float).reshape(-1, 5),
            "counters": {"n_decoded": [int(p.n_decoded) for p in decoders],
                         "decode_seconds": [float(p.decode_seconds) for p in decoders],
                         "elapsed": self.elapsed, "cpu_seconds": self.cpu_seconds},
            "stops": {r.name: r.state() for r in self.stops},
            "stopped_by": self.stopped_by,
        }

    @classmethod
    def from_state(cls, state: dict, *, jobset=None, federation=None, interrupt=None,
                   on_generation=None, progress: bool = False, verbose: bool = False,
                   evaluator=None, client=None, **settings) -> Search:
        """The search a :meth:`state` was taken of, ready to step on from there.

        Parameters
        ----------
        state : dict
            From :meth:`state` (or :func:`load_state`).
        jobset, federation : optional
            The job-set and federation the caller means to continue on; the
            state is refused, naming the difference, when they are not those it
            was taken on. Left out, the state's own are used.
        interrupt, on_generation, progress, verbose, evaluator, client
            As in :class:`Search` (these are not part of a state).
        **settings
            Any of :class:`Search`'s settings (``seed``, ``model``,
            ``objectives``, ``use_blacklist``, ``backfill``, ``time_limit``,
            ``stagnation``, ``stagnation_tol``, ``power_cap``,
            ``kill_at_request``, ``cpu_budget``, ``pop_size``, ``n_gen``,
            ``params``) the caller means to continue with: refused, naming the
            setting, when they differ from the state's.

        A state taken where Ctrl-C (``"interrupted"``) or a lost Dask cluster
        (``"cluster lost"``) stopped the search goes on; one its own rules stopped
        (the generations, a time limit, ...) stays done.

        Raises
        ------
        ValueError
            For a state of another format or version, or one that differs from
            what the caller gave.
        """
        from ..model.jobset import JobSet
        from ..model.platform import Federation
        from ..version import __version__
        from .sizing import DefaultChoice

        if not isinstance(state, dict) or state.get("format") != STATE_FORMAT:
            raise ValueError("not a moga search state (no 'format': 'moga-search')")
        if state.get("version") != STATE_VERSION or state.get("moga_version") != __version__:
            raise ValueError(f"the search state is of format version {state.get('version')} "
                             f"and moga {state.get('moga_version')}; this is format version "
                             f"{STATE_VERSION} and moga {__version__}: start the run again")
        saved = dict(state["settings"])
        saved["objectives"] = tuple(saved["objectives"])
        diff = []
        unknown = sorted(set(settings) - set(_SETTINGS))
        if unknown:
            raise TypeError(f"from_state() got unknown setting(s) {unknown}")
        for k, v in settings.items():
            if k == "objectives":
                v = tuple(v)
            elif k == "params":
                if _plain(GAParams.coerce(v).to_dict()) != _plain(saved["params"]):
                    diff.append("params (the GA parameters differ from the state's)")
                continue
            if v != saved.get(k):
                diff.append(f"{k} {v!r} (the state's: {saved.get(k)!r})")
        js_state = state["jobset"]
        own_js = JobSet(name=js_state["name"], report=js_state["report"],
                        **{k: np.asarray(v) for k, v in js_state["arrays"].items()})
        if jobset is not None:
            from ..model.jobset import apply_kill_option

            given = apply_kill_option(jobset, bool(saved["kill_at_request"]))
            why = _jobset_difference(given, own_js)
            if why:
                diff.append(f"job-set {why}")
        own_fed = Federation.from_dict(state["federation"], source="the search state")
        if federation is not None:
            given_fed = federation
            if saved["power_cap"] is not None:
                given_fed = federation.with_cap(saved["power_cap"], federation.cluster_caps)
            if given_fed.to_dict() != own_fed.to_dict():
                diff.append(f"federation {federation.name!r} (the state's: "
                            f"{own_fed.name!r}, or a different spec)")
        if diff:
            raise ValueError("the search state was taken of another run: "
                             + "; ".join(diff))
        self = cls.__new__(cls)
        self.jobset, self.federation, self.settings = own_js, own_fed, saved
        from .problem import SchedulingProblem
        self.problem = SchedulingProblem(own_js, own_fed, model=saved["model"],
                                         objectives=saved["objectives"],
                                         use_blacklist=saved["use_blacklist"],
                                         backfill=saved["backfill"])
        self._submit = _submit_individual(own_js, own_fed if saved["use_blacklist"] else None)
        self.reference = np.array(state["reference"], dtype=float)
        params = GAParams.from_dict(state["params"], source="the search state")
        self._isl = None
        if saved.get("islands") is not None:
            self._islands(params, state["initial"], client=client, interrupt=interrupt,
                          on_generation=on_generation, progress=progress,
                          state=state["islands"])
            self.stopped_by = _resumed(state["stopped_by"])
            self._isl.stopped_by = self.stopped_by
            return self
        choice = DefaultChoice(**state["choice"])
        stops = state.get("stops", {})
        budget = None
        if "cpu budget" in stops:
            from .sizing import least_generations

            budget = CpuBudget(choice.cpu_budget, least_generations(choice))
        self._build(params, choice, state["initial"], budget, interrupt=interrupt,
                    on_generation=on_generation, progress=progress, verbose=verbose,
                    evaluator=evaluator)
        for rule in self.stops:
            rule.set_state(stops.get(rule.name, {}))
        self.evolution.set_state(state["evolution"])
        arch = state["archive"]
        self.archive = None
        if params.archive_size:
            self.archive = ParetoArchive(params.archive_size, self.reference)
            if arch is not None and len(arch["F"]):
                # An archive's own points pass through update unchanged, in their order.
                X = np.asarray(arch["X"], dtype=float)
                self.archive.update(np.asarray(arch["F"], dtype=float), X,
                                    rows=arch.get("rows"))
        self.recorder.archive = self.archive
        c = state["counters"]
        for p, n, sec in zip(self._decoders(), c["n_decoded"], c["decode_seconds"],
                             strict=True):
            p.n_decoded, p.decode_seconds = int(n), float(sec)
        self._t0 = time.perf_counter() - float(c["elapsed"])
        self._cpu0 = time.process_time() - float(c["cpu_seconds"])
        self.recorder.t0 = self._t0
        self.recorder.rows = [(int(r[0]), int(r[1]), float(r[2]), int(r[3]), float(r[4]))
                              for r in np.asarray(state["history"], dtype=float)]
        self.stopped_by = _resumed(state["stopped_by"])
        return self


#: Stops by an event outside the search (Ctrl-C, a lost cluster): a state taken there goes on
#: when continued. The other stops are the search's own and stand.
RESUMABLE_STOPS = ("interrupted", "cluster lost")


def _resumed(stopped_by):
    """The stop of a continued state: none after an event outside the search."""
    return None if stopped_by in RESUMABLE_STOPS else stopped_by


def _archive_state(archive, copy: bool, n_var: int) -> dict:
    """An archive as a state holds it: ``F``, and ``X`` with ``rows`` (point ``i``'s
    chromosome is ``X[rows[i]]``), the archive's block as it is, not gathered."""
    block, slots = archive.rows()
    if block is None:
        return {"F": archive.F.copy(), "X": np.empty((0, n_var)),
                "rows": np.empty(0, dtype=np.int64)}
    return {"F": archive.F.copy(), "X": block.copy() if copy else block,
            "rows": slots.copy()}


def _jobset_state(js) -> dict:
    """A job-set as a state holds it: its arrays, name and report."""
    return {"name": js.name, "report": js.report,
            "arrays": {f: np.array(getattr(js, f)) for f in _JOBSET_ARRAYS
                       if getattr(js, f) is not None}}


def _plain(d):
    """``d`` as JSON gives it back (tuples as lists), for comparing with a saved state."""
    import json

    from ..results import _json_default

    return json.loads(json.dumps(d, default=_json_default))


def _jobset_difference(a, b) -> str:
    """Why the job-sets ``a`` (given) and ``b`` (the state's) differ, or ''."""
    if len(a) != len(b):
        return f"{a.name!r} of {len(a)} jobs (the state's: {b.name!r} of {len(b)} jobs)"
    for f in _JOBSET_ARRAYS:
        x, y = getattr(a, f), getattr(b, f)
        if (x is None) != (y is None) or (x is not None and not np.array_equal(
                np.asarray(x), np.asarray(y))):
            return f"{a.name!r}: its {f} differ from the state's ({b.name!r})"
    return ""


# -- saving a state ------------------------------------------------------------------------


def save_state(state: dict, path) -> None:
    """Write a :meth:`Search.state` to ``path`` (one ``.npz`` file), atomically: the
    arrays as arrays, the rest as JSON."""
    import json

    from ..outputs import atomic_path
    from ..results import _json_default

    arrays = {}

    def strip(v, key):
        if isinstance(v, np.ndarray):
            name = f"a{len(arrays)}"
            arrays[name] = v
            return {"__array__": name}
        if isinstance(v, dict):
            return {k: strip(x, f"{key}.{k}") for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [strip(x, key) for x in v]
        return v

    meta = strip(state, "")
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        np.savez(fh, meta=np.asarray(json.dumps(meta, default=_json_default)), **arrays)


def load_state(path) -> dict:
    """A state written by :func:`save_state`.

    Raises
    ------
    InputError
        Naming the file, if it is missing, damaged or not a search state.
    """
    import json

    from ..errors import InputError
    from ..validation import read_npz

    arrays = read_npz(path, "moga search state")
    try:
        meta = json.loads(str(arrays.pop("meta").item()))
    except (KeyError, ValueError) as e:
        raise InputError(f"{path}: not a moga search state (missing or bad {e})") from None

    def fill(v):
        if isinstance(v, dict):
            if set(v) == {"__array__"}:
                return arrays[v["__array__"]]
            return {k: fill(x) for k, x in v.items()}
        if isinstance(v, list):
            return [fill(x) for x in v]
        return v

    try:
        state = fill(meta)
    except KeyError as e:
        raise InputError(f"{path}: a damaged moga search state (array {e} missing)") from None
    if not isinstance(state, dict) or state.get("format") != STATE_FORMAT:
        raise InputError(f"{path}: not a moga search state")
    return state


def _evaluator(client, search):
    """A callable decoding rows through the Dask ``client`` (see :mod:`moga.evolution.remote`)."""
    from .remote import DaskEvaluator

    return DaskEvaluator(client, search)
