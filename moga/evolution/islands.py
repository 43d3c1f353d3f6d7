"""An island model of :func:`moga.run`: N searches in synchronous epochs, with migration.

``moga.run(..., islands=N, client=...)`` runs N *islands*, each the run's own
search (by default the EASY search, population 50) on its own random stream,
``numpy.random.SeedSequence(seed).spawn(N)[i]``. The islands evolve in
*epochs* of :attr:`Migration.interval` generations; between two epochs each
island sends :attr:`Migration.migrants` members of its population to its
neighbour on the :attr:`Migration.topology`:

* topology ``"ring"`` (default): island ``i`` sends to island ``(i + 1) % N``;
  ``"none"``: no migration (N independent runs, whose fronts are merged);
* selection: the sender's best members by NSGA-II's order, rank first, then
  larger crowding distance, ties by position in the population;
* replacement: the receiver's population and the migrants go through
  NSGA-II's survival (ties broken by the receiver's own stream), so that each
  migrant replaces one of the island's worst members when it ranks better, and
  is dropped otherwise; a migrant equal to a member is dropped.

The run's front is the non-dominated union of the islands' archives (of their
first fronts without an archive), one chromosome per objective vector, the
first island's first: at most N times ``GAParams.archive_size`` points.

Each epoch of an island is one pure task: its output (the island's whole
state: population, archive, random generator, counters) depends on its inputs
alone (the previous state and the migrants), and the driver collects every
state before the next epoch starts. The front is therefore bit-identical
whatever runs the tasks: this process (no client), or any number of Dask
workers, in any order; a task lost with its worker is recomputed by Dask from
the same inputs, to the same state. Only the stop rules that read a clock
(``time_limit``) or a person (``interrupt``, Ctrl-C) make runs differ.
"""

from __future__ import annotations

import dataclasses
import sys
import time
import uuid
from dataclasses import dataclass

import numpy as np

from ..bounds import BOUNDS
from ..metrics import normalized_hypervolume
from .archive import ParetoArchive
from .engine import Evolution
from .parts import (
    HV_FACTOR,
    Interrupted,
    MaxGenerations,
    RunResult,
    Stagnation,
    TimeLimit,
    _Recorder,
    _search_parts,
    _seeded_archive,
    stagnated,
    survival_of,
)

__all__ = ["IslandRun", "Migration", "TOPOLOGIES", "run_islands"]

#: Migration topologies: who sends to whom after each epoch.
TOPOLOGIES = ("ring", "none")


@dataclass(frozen=True)
class Migration:
    """How the islands of an island run exchange members (see the module docstring).

    Attributes
    ----------
    interval : int
        Generations per epoch (>= 1): migration happens after every
        ``interval`` generations of each island.
    migrants : int
        Members each island sends per migration (>= 0; 0 is no migration).
    topology : {"ring", "none"}
        ``"ring"``: island ``i`` sends to island ``(i + 1) % N``; ``"none"``:
        no migration.
    """

    interval: int = 20
    migrants: int = 5
    topology: str = "ring"

    def __post_init__(self):
        for name, low in (("interval", 1), ("migrants", 0)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < low:
                raise ValueError(f"migration {name} must be an integer >= {low}, got {v!r}")
            object.__setattr__(self, name, int(v))
        if self.topology not in TOPOLOGIES:
            raise ValueError(f"migration topology must be one of {list(TOPOLOGIES)}, "
                             f"got {self.topology!r}")

    @classmethod
    def coerce(cls, migration) -> Migration:
        """``migration`` as a Migration: None (defaults), a Migration or a dict of fields."""
        if migration is None:
            return cls()
        if isinstance(migration, cls):
            return migration
        if isinstance(migration, dict):
            names = {f.name for f in dataclasses.fields(cls)}
            unknown = sorted(set(migration) - names)
            if unknown:
                raise ValueError(f"unknown migration setting(s) {unknown}; known: "
                                 f"{sorted(names)}")
            return cls(**migration)
        raise TypeError(f"migration must be a Migration or a dict, got "
                        f"{type(migration).__name__}")


@dataclass(frozen=True)
class _Spec:
    """What every island task needs besides its state: the problem and the search's settings.

    ``token`` names the run; a worker builds the search's parts once per token.
    ``seed_F`` and ``seed_X`` are the heuristics' allocation seeds that start
    every island's archive (None without them).
    """

    token: str
    jobset: object
    federation: object
    model: str
    objectives: tuple
    use_blacklist: bool
    backfill: str
    params: object
    initial: object
    reference: np.ndarray
    seed_F: np.ndarray | None
    seed_X: np.ndarray | None


class _Parts:
    """The search's parts built from a :class:`_Spec` (problem, operators, mating)."""

    def __init__(self, spec: _Spec):
        from .mating import PymooTournament
        from .problem import SchedulingProblem
        self.problem = SchedulingProblem(spec.jobset, spec.federation, model=spec.model,
                                         objectives=spec.objectives,
                                         use_blacklist=spec.use_blacklist,
                                         backfill=spec.backfill)
        (self.search, self.sampling, selection, self.crossover, self.mutation,
         self.improve) = _search_parts(self.problem, spec.params, spec.initial)
        self.params = spec.params
        self.selection = selection if selection is not None else PymooTournament()
        self.extra = None
        if spec.params.fast_end:
            from .fast_end import FastEndSearch

            self.extra = FastEndSearch(spec.params.fast_end)
        self.decoders = ((self.problem,) if self.search is self.problem
                         else (self.problem, self.search))

    def evolution(self, seed, pop_size: int) -> Evolution:
        """The island's generation loop (:class:`~moga.evolution.engine.Evolution`)."""
        return Evolution(self.search, pop_size=pop_size, sampling=self.sampling,
                         selection=self.selection, crossover=self.crossover,
                         mutation=self.mutation, seed=seed, improve=self.improve,
                         extra=self.extra,
                         survival=survival_of(self.params, len(self.problem.objectives)))

    def counters(self) -> tuple:
        """Decodes so far and their seconds, over the run's decoders."""
        return (sum(p.n_decoded for p in self.decoders),
                sum(p.decode_seconds for p in self.decoders))


#: Parts of the latest runs in this process, by run token (a worker keeps a run's parts
#: from one epoch to the next).
_PARTS: dict = {}


def _parts(spec: _Spec) -> _Parts:
    parts = _PARTS.get(spec.token)
    if parts is None:
        while len(_PARTS) >= 2:
            _PARTS.pop(next(iter(_PARTS)))
        parts = _PARTS[spec.token] = _Parts(spec)
    return parts


def _archive(spec: _Spec, F=None, X=None):
    """An island's archive: the seeds' points, or the archived ``F``, ``X`` of its state."""
    params = spec.params
    if not params.archive_size:
        return None
    archive = ParetoArchive(params.archive_size, spec.reference)
    if F is None:
        F, X = spec.seed_F, spec.seed_X
    if F is not None and len(F):
        # An archive's own points pass through update unchanged, in their order.
        archive.update(F, X)
    return archive


def _epoch(spec: _Spec, state: dict, migrants, until: int, time_left=None, stop=None) -> dict:
    """One island's epoch: its state after its generations up to ``until``.

    ``state`` is ``{"index": i, "seed": SeedSequence}`` before the first epoch
    (which starts the island: sampling and generation 1), else a state
    returned by this function. ``migrants`` (``(X, F)`` or None) join the
    population first (see the module docstring). ``time_left`` (seconds) and
    ``stop`` (a callable) may end the epoch early, after a generation. The
    result depends only on the inputs when neither ends it. The generations are
    the run's own loop (:class:`~moga.evolution.engine.Evolution`) stepped.
    """
    parts = _parts(spec)
    params = spec.params
    search = parts.search
    t_start = time.perf_counter()
    n0, s0 = parts.counters()
    twins = None if search is parts.problem else search.twins
    if "seed" in state:
        evo = parts.evolution(state["seed"], params.pop_size)
        archive = _archive(spec)
        recorder = _Recorder(spec.reference, t_start, None, archive, twins)
        X, F = evo.step()
        recorder.record(evo.n_gen, evo.n_evals, F, lambda rows: X[rows],
                        lambda pop=evo.pop: pop.F[pop.rank == 0])
        stopped = None
        out = {"index": state["index"], "n_decoded": 0, "decode_s": 0.0, "history": []}
    else:
        evo = parts.evolution(0, params.pop_size)
        evo.set_state({"rng": state["rng"], "n_gen": state["n_gen"],
                       "n_evals": state["n_evals"], "exhausted": False,
                       **{k: state[k] for k in ("X", "F", "rank", "crowding", "hashes")},
                       **({"survival": state["survival"]} if "survival" in state else {})})
        archive = _archive(spec, state["archive_F"], state["archive_X"])
        recorder = _Recorder(spec.reference, t_start, None, archive, twins)
        stopped = state["stopped"]
        out = {k: state[k] for k in ("index", "n_decoded", "decode_s")}
        out["history"] = list(state["history"])
        if migrants is not None and len(migrants[0]):
            evo.receive(migrants)
    while stopped is None and evo.n_gen < until:
        if (time_left is not None and time.perf_counter() - t_start >= time_left) \
                or (stop is not None and stop()):
            break
        X, F = evo.step()
        if evo.exhausted:
            stopped = "no new child"
            break
        recorder.record(evo.n_gen, evo.n_evals, F, lambda rows, X=X: X[rows],
                        lambda pop=evo.pop: pop.F[pop.rank == 0])
    n1, s1 = parts.counters()
    pop = evo.pop
    if archive is not None:
        front_F, front_X = archive.F, archive.X
    else:
        first = pop.rank == 0
        front_F, front_X = pop.F[first], pop.X[first]
    state = evo.state()
    if "survival" in state:
        out["survival"] = state["survival"]
    out.update({"rng": state["rng"], "X": state["X"], "F": state["F"],
                "rank": state["rank"], "crowding": state["crowding"],
                "hashes": state["hashes"], "n_gen": evo.n_gen,
                "n_evals": evo.n_evals, "stopped": stopped,
                "archive_F": None if archive is None else archive.F,
                "archive_X": None if archive is None else archive.X,
                "front_F": front_F, "front_X": front_X,
                "hv": normalized_hypervolume(front_F, spec.reference),
                "compute_s": time.perf_counter() - t_start})
    out["n_decoded"] += n1 - n0
    out["decode_s"] += s1 - s0
    out["history"] += [(int(r[0]), float(r[2])) for r in recorder.rows]
    return out


def _emigrants(state: dict, k: int):
    """``(X, F)`` of the ``k`` best members of an island: by rank, then larger crowding
    distance, then position."""
    n = len(state["F"])
    best = np.lexsort((np.arange(n), -state["crowding"], state["rank"]))[:k]
    return state["X"][best], state["F"][best]


def _migrants(states: list, migration: Migration) -> list:
    """Each island's incoming migrants ``(X, F)`` (or None) along the topology."""
    n = len(states)
    if migration.topology == "none" or migration.migrants == 0 or n < 2:
        return [None] * n
    out = [_emigrants(s, migration.migrants) for s in states]
    # Ring: island i receives from island i - 1.
    return [out[(i - 1) % n] for i in range(n)]


def _union(states: list, reference, with_X: bool = False):
    """``(F, X)`` of the islands' non-dominated union (``X`` None unless ``with_X``)."""
    fronts = [s for s in states if "front_F" in s]
    F = np.vstack([s["front_F"] for s in fronts])
    X = np.vstack([s["front_X"] for s in fronts]) if with_X else np.zeros((len(F), 0))
    union = ParetoArchive(max(len(F), 2 * F.shape[1]), reference)
    union.update(F, X)
    return union.F, (union.X if with_X else None)


class _Local:
    """Islands in this process, one after the other."""

    workers = workers_now = 1
    workers_lost = 0
    address = None

    def __init__(self, spec, interrupt):
        self.spec, self.interrupt = spec, interrupt

    def epoch(self, states, migrants, until, time_left, started):
        out = []
        for st, mig in zip(states, migrants, strict=True):
            if st.get("stopped"):
                out.append(st)
            elif started and self.interrupt is not None and self.interrupt():
                out.append(st)  # interrupted: this island keeps its last state
            else:
                out.append(_epoch(self.spec, st, mig, until, time_left, self.interrupt))
        return out

    def close(self):
        _PARTS.pop(self.spec.token, None)


#: The most islands a run takes (``moga.run(islands=)``, ``moga run --islands``): each island
#: holds its own population and archive, so beyond this a run builds islands for minutes and
#: gigabytes before its first generation; no study needs more.
MAX_ISLANDS = BOUNDS["islands"].high


class _Dask:
    """Islands as Dask tasks, one per island and epoch.

    Every wait on the cluster ends: before the first epoch the client must be
    open and its scheduler get a worker within :attr:`WORKER_WAIT_S`; an
    epoch whose scheduler stays unreachable for :attr:`LOST_AFTER_S`, or
    which has no worker for :attr:`WORKER_WAIT_S`, counts the cluster as lost.
    A lost cluster is an error naming the scheduler before the first epoch
    has finished; after it, a warning naming the scheduler, and the run ends
    as an interrupted one does, with the front of the last finished epoch.
    ``interrupt`` (the caller's Ctrl-C flag) is read while waiting: after an
    epoch it drops the epoch under way, before one it ends the run
    (KeyboardInterrupt), as nothing is there to keep.
    """

    #: Seconds to wait for a worker: before the first epoch, and while none is left.
    WORKER_WAIT_S = 60.0
    #: Seconds the client may stay cut off from its scheduler before the cluster counts as
    #: lost (Dask reconnects by itself within its connect timeout).
    LOST_AFTER_S = 30.0
    #: Seconds between the waits' checks (of ``interrupt``, the workers, the connection).
    POLL_S = 0.2

    def __init__(self, client, spec, interrupt):
        from ..errors import require

        self.distributed = require("distributed", "an island run on Dask", "sweep")
        self.dask = require("dask", "an island run on Dask", "sweep")
        if not isinstance(client, self.distributed.Client):
            raise TypeError(f"client must be a dask.distributed.Client, got "
                            f"{type(client).__name__}")
        if client.status != "running":
            raise ValueError(f"the Dask client is closed (status {client.status!r}): pass an "
                             "open client")
        self.client, self.spec, self.interrupt = client, spec, interrupt
        self.address = getattr(client.scheduler, "address", None) or "the scheduler"
        self._wait_for_a_worker()
        self.workers = len(client.nthreads())
        self.known = self._worker_set()
        self.workers_now, self.workers_lost = len(self.known), 0
        # The spec travels once per worker; as a task's result (not scattered data) Dask can
        # recompute it when the worker holding it is lost.
        self.spec_future = client.submit(_identity, spec, key=f"moga-islands-{spec.token}-spec",
                                         pure=False)
        self.n_epoch = 0

    def _n_workers(self) -> int:
        """Workers the scheduler had at the client's last update (no round trip)."""
        try:
            return len(self.client.scheduler_info().get("workers", {}))
        except Exception:  # noqa: BLE001 - a client cut off from its scheduler: none known
            return 0

    def _interrupted(self) -> bool:
        return self.interrupt is not None and bool(self.interrupt())

    def _wait_for_a_worker(self) -> None:
        """Return once the scheduler has a worker; TimeoutError after :attr:`WORKER_WAIT_S`,
        KeyboardInterrupt at the caller's Ctrl-C."""
        deadline = time.monotonic() + self.WORKER_WAIT_S
        while not self._n_workers():
            if self.client.status != "running":
                raise ConnectionError(f"the Dask scheduler at {self.address} cannot be reached "
                                      f"(client {self.client.status}); the island run did not "
                                      "start")
            if self._interrupted():
                raise KeyboardInterrupt
            if time.monotonic() > deadline:
                raise TimeoutError(f"the Dask scheduler at {self.address} has 0 workers after "
                                   f"{self.WORKER_WAIT_S:g} s: start one (dask worker "
                                   f"{self.address}), or run the islands without a scheduler")
            time.sleep(self.POLL_S)

    def _lost(self, why: str, started: bool):
        """The error of a lost cluster: raised before the first epoch has finished; after
        it, a warning and :class:`_ClusterLost`, which ends the run with the last epoch's
        front."""
        msg = f"the Dask scheduler at {self.address} {why}"
        if not started:
            return _ClusterGone(f"{msg}; no epoch of the island run had finished")
        import warnings

        warnings.warn(f"{msg}: the island run ends with the front of its last finished epoch "
                      f"({self.n_epoch - 1})", RuntimeWarning, stacklevel=4)
        return _ClusterLost(msg)

    def _cancel(self, futures) -> None:
        """Cancel ``futures`` where the client can still reach the scheduler."""
        try:
            if self.client.status == "running":
                self.client.cancel(list(futures))
        except Exception:  # noqa: BLE001, S110 - the cluster is gone with them
            pass

    def _wait(self, futures, started) -> bool:
        """Wait for ``futures``; False when ``interrupt`` dropped them. Raises what
        :meth:`_lost` gives when the scheduler stays unreachable or workerless."""
        cut_off = no_worker = None
        while True:
            try:
                self.distributed.wait(futures, timeout=self.POLL_S)
                return True
            except TimeoutError:
                pass
            if self._interrupted():
                self._cancel(futures)
                if not started:
                    raise KeyboardInterrupt  # nothing finished, nothing to keep
                return False
            now = time.monotonic()
            if self.client.status != "running":
                cut_off = cut_off or now
                if now - cut_off > self.LOST_AFTER_S:
                    self._cancel(futures)
                    raise self._lost(f"was lost (client {self.client.status} for "
                                     f"{self.LOST_AFTER_S:g} s)", started)
                continue
            cut_off = None
            if not self._n_workers():
                no_worker = no_worker or now
                if now - no_worker > self.WORKER_WAIT_S:
                    self._cancel(futures)
                    raise self._lost(f"has had 0 workers for {self.WORKER_WAIT_S:g} s", started)
            else:
                no_worker = None

    def epoch(self, states, migrants, until, time_left, started):
        self.n_epoch += 1
        futures = {}
        try:
            with self.dask.config.set({"distributed.admin.large-graph-warning-threshold":
                                       "4GB"}):
                for i, (st, mig) in enumerate(zip(states, migrants, strict=True)):
                    if not st.get("stopped"):
                        futures[i] = self.client.submit(
                            _epoch, self.spec_future, st, mig, until, time_left,
                            key=f"moga-islands-{self.spec.token}-e{self.n_epoch}-i{i}",
                            pure=False)
            if not self._wait(list(futures.values()), started):
                return states  # interrupted: the last epoch's states stand
            done = self.client.gather(list(futures.values()))
        except KeyboardInterrupt:
            self._cancel(futures.values())
            raise
        except _ClusterGone:
            raise
        except Exception as e:
            # An island's own error comes back through an open client and keeps its type;
            # anything else here is the cluster going away under the epoch.
            if self.client.status == "running" and not isinstance(
                    e, (OSError, self.distributed.client.CancelledError)):
                raise
            self._cancel(futures.values())
            first = (str(e).splitlines() or [""])[0]
            raise self._lost(f"was lost ({type(e).__name__}: {first})", started) from None
        out = list(states)
        for i, st in zip(futures, done, strict=True):
            out[i] = st
        self._count_workers()
        return out

    def _worker_set(self) -> set:
        """Addresses of the scheduler's workers at the client's last update."""
        try:
            return set(self.client.scheduler_info().get("workers", {}))
        except Exception:  # noqa: BLE001 - a client cut off from its scheduler: none known
            return set()

    def _count_workers(self) -> None:
        """Note workers that left or joined since the last epoch (a worker restarted by its
        nanny comes back under a new address: it left, and one joined), in one warning line
        (the run's ``info`` counts those lost)."""
        now = self._worker_set()
        left, joined = self.known - now, now - self.known
        self.known = now
        self.workers_now = len(now)
        if not left and not joined:
            return
        import warnings

        self.workers_lost += len(left)
        what = " and ".join(x for x in (f"{len(left)} worker(s) left" if left else "",
                                         f"{len(joined)} joined" if joined else "") if x)
        warnings.warn(f"the Dask scheduler at {self.address}: {what} during epoch "
                      f"{self.n_epoch}, {len(now)} now; the front does not depend on it",
                      RuntimeWarning, stacklevel=2)

    def close(self):
        self._cancel([self.spec_future])


class _ClusterGone(ConnectionError):
    """The Dask cluster of an island run was lost before any epoch had finished."""


class _ClusterLost(KeyboardInterrupt):
    """The Dask cluster of an island run was lost after an epoch had finished: raised as a
    KeyboardInterrupt so that the run ends as an interrupted one does, with the front of the
    last finished epoch (the warning before it names the scheduler)."""


def _identity(x):
    return x


class _CtrlC:
    """Ctrl-C as a flag while an island run waits on Dask.

    Python raises KeyboardInterrupt wherever the main thread is when SIGINT
    arrives, and one raised inside a finaliser (Dask releases its futures in
    ``__del__``) is printed and dropped. While the run's waits are on Dask, the
    first Ctrl-C after an epoch has finished only sets :attr:`hit`, which the
    run reads where it reads ``interrupt``; before that, and on a second
    Ctrl-C, it raises KeyboardInterrupt as usual. The handler is installed
    only in the main thread, and only over Python's default one, so a
    caller's own handler (the CLI's) stays in charge.
    """

    def __init__(self):
        self.hit = False
        self.armed = False
        self._old = None

    def _handle(self, signum, frame):
        if self.hit or not self.armed:
            raise KeyboardInterrupt
        self.hit = True

    def install(self):
        """Put the handler in place (main thread, default handler only)."""
        import signal
        import threading

        if (threading.current_thread() is threading.main_thread()
                and signal.getsignal(signal.SIGINT) is signal.default_int_handler):
            self._old = signal.signal(signal.SIGINT, self._handle)

    def restore(self):
        """Put back the handler that :meth:`install` replaced."""
        import signal

        if self._old is not None:
            signal.signal(signal.SIGINT, self._old)
            self._old = None


def run_islands(problem, reference, params, seed: int, *, islands, client=None, migration=None,
                initial=None, time_limit=None, stagnation=None, stagnation_tol=1e-3,
                interrupt=None, on_generation=None, progress=False):
    """The island run behind ``moga.run(..., islands=N)`` (see the module docstring): an
    :class:`IslandRun` stepped epoch by epoch until a stop rule fires.

    Parameters
    ----------
    problem : SchedulingProblem
        The run's problem (its counters hold only the reference's decode).
    reference : ndarray
        The submit order's objectives, which normalise the hypervolume.
    params : GAParams
        Resolved parameters (:meth:`GAParams.for_moga`); ``n_gen`` counts each
        island's generations.
    seed : int
        The run's seed; island ``i`` draws from ``SeedSequence(seed).spawn(N)[i]``.
    islands : int
        Number of islands (>= 1).
    client : dask.distributed.Client, optional
        Runs the islands' epochs on its workers; None runs them in this process.
    migration : Migration or dict, optional
    initial, time_limit, stagnation, stagnation_tol, interrupt, on_generation, progress
        As in :func:`moga.run`. The stop rules are asked after every epoch;
        ``time_limit`` and ``interrupt`` also end an epoch under way after its
        generation (on Dask, ``interrupt`` drops the epoch under way), and so
        does Ctrl-C (KeyboardInterrupt). ``on_generation(n_gen, n_evals, hv)``
        is called after every epoch with each island's generations, the
        evaluations of all islands and the hypervolume of their union.

    Returns
    -------
    RunResult
        ``history`` has one row per epoch (the union's hypervolume and size);
        ``info`` records the islands, migration settings, executor and workers,
        each island's final hypervolume and the per-epoch wall and compute times.
    """
    return IslandRun(problem, reference, params, seed, islands=islands, client=client,
                     migration=migration, initial=initial, time_limit=time_limit,
                     stagnation=stagnation, stagnation_tol=stagnation_tol, interrupt=interrupt,
                     on_generation=on_generation, progress=progress).run()


class _EpochHistory:
    """The rows of an island run, one per epoch, as the stop rules read a history."""

    def __init__(self):
        self.rows = []

    def stagnated(self, window: int, tol: float) -> bool:
        return stagnated(self.rows, window, tol)


class IslandRun:
    """An island run that is stepped one epoch at a time, saved and continued.

    :meth:`step` runs one epoch of every island (on this process or the
    client's workers), records the union's hypervolume and asks the stop rules
    (:class:`~moga.evolution.search.StopRule`: the generations, the time limit,
    stagnation, an interrupt) in one place; :meth:`state` gives the run as a
    plain dict of arrays (every island's state, the migrants on their way, the
    history) and :meth:`from_state` continues it, to the front of the run that
    was never stopped, bit for bit. Parameters as :func:`run_islands`.
    """

    def __init__(self, problem, reference, params, seed: int, *, islands, client=None,
                 migration=None, initial=None, time_limit=None, stagnation=None,
                 stagnation_tol=1e-3, interrupt=None, on_generation=None, progress=False,
                 _seeded=None):
        if isinstance(islands, bool) or not isinstance(islands, (int, np.integer)) \
                or islands < 1:
            raise ValueError(f"islands must be an integer >= 1, got {islands!r}")
        if islands > MAX_ISLANDS:
            raise ValueError(f"islands must be at most {MAX_ISLANDS:,}, got {int(islands):,}")
        self.islands = int(islands)
        self.migration = Migration.coerce(migration)
        self.problem, self.params, self.seed = problem, params, int(seed)
        self.reference = np.asarray(reference, dtype=float)
        self._t0 = time.perf_counter()
        self._cpu0 = time.process_time()
        if _seeded is None:
            archive = _seeded_archive(problem, params, self.reference)
            _seeded = ((None, None) if archive is None or not len(archive)
                       else (archive.F, archive.X))
        self.spec = _Spec(token=uuid.uuid4().hex, jobset=problem.jobset,
                          federation=problem.federation, model=problem.model,
                          objectives=tuple(problem.objectives),
                          use_blacklist=problem.use_blacklist, backfill=problem.backfill,
                          params=params, initial=initial, reference=self.reference,
                          seed_F=_seeded[0], seed_X=_seeded[1])
        self.initial = initial
        self.ctrl_c = _CtrlC()
        self.client = client
        self._asked = interrupt
        if client is not None:
            asked = interrupt

            def interrupt():
                return self.ctrl_c.hit or (asked is not None and asked())
        self.interrupt = interrupt
        self.executor = (_Local(self.spec, interrupt) if client is None
                         else _Dask(client, self.spec, interrupt))
        self.states = [{"index": i, "seed": s} for i, s in
                       enumerate(np.random.SeedSequence(self.seed).spawn(self.islands))]
        self.incoming = [None] * self.islands
        self.recorder = _EpochHistory()
        self.epoch_wall, self.epoch_compute = [], []
        self.n_gen = 0
        self.stopped_by = None
        self.on_generation, self.progress = on_generation, progress
        self.time_limit = time_limit
        self.stops = [MaxGenerations(params.n_gen)]
        if time_limit is not None:
            self.stops.append(TimeLimit(time_limit))
        if stagnation is not None:
            self.stops.append(Stagnation(stagnation, stagnation_tol))
        if interrupt is not None:
            self.stops.append(Interrupted(interrupt))
        self.settings = {"islands": self.islands, "time_limit": time_limit,
                         "stagnation": stagnation, "stagnation_tol": stagnation_tol,
                         "migration": dataclasses.asdict(self.migration)}

    @property
    def done(self) -> bool:
        return self.stopped_by is not None

    @property
    def elapsed(self) -> float:
        """Wall seconds since the run began (before an interruption included)."""
        return time.perf_counter() - self._t0

    @property
    def cpu_seconds(self) -> float:
        return time.process_time() - self._cpu0

    def step(self) -> None:
        """Run one epoch of every island, record it and ask the stop rules."""
        if self.done:
            raise RuntimeError(f"the island run is done (stopped by {self.stopped_by})")
        params, states = self.params, self.states
        until = min(self.n_gen + self.migration.interval, params.n_gen)
        time_left = (None if self.time_limit is None
                     else self.time_limit - self.elapsed)
        t_epoch = time.perf_counter()
        new = self.executor.epoch(states, self.incoming, until, time_left,
                                  started=self.n_gen > 0)
        advanced = [s for s, old in zip(new, states, strict=True) if s is not old]
        if not advanced and self.interrupt is not None and self.interrupt():
            self.stopped_by = "interrupted"  # the epoch under way was dropped
            return
        self.states = states = new
        self.epoch_wall.append(time.perf_counter() - t_epoch)
        self.epoch_compute.append(max((s["compute_s"] for s in advanced), default=0.0))
        self.n_gen = gen = max(s["n_gen"] for s in states)
        n_evals = self.problem.n_decoded + sum(s["n_decoded"] for s in states)
        F, _ = _union(states, self.reference)
        hv = normalized_hypervolume(F, self.reference, HV_FACTOR)
        self.recorder.rows.append((gen, n_evals, hv, len(F), self.elapsed))
        self.ctrl_c.armed = True
        if self.progress:
            n_epochs = -(-params.n_gen // self.migration.interval)
            print(f"islands: epoch {len(self.recorder.rows)}/{n_epochs}, generation "
                  f"{gen}/{params.n_gen}, {self.elapsed:.0f} s: hv {hv:.4f} (islands "
                  + " ".join(f"{s['hv']:.4f}" for s in states) + ")",
                  file=sys.stderr, flush=True)
        if self.on_generation is not None:
            self.on_generation(gen, n_evals, hv)
        for rule in self.stops:
            if rule(self):
                self.stopped_by = rule.name
                return
        if all(s["stopped"] for s in states):
            self.stopped_by = "no new child"
            return
        self.incoming = _migrants(states, self.migration)

    def run(self):
        """Step until a stop rule fires (Ctrl-C after an epoch ends it there); the
        :meth:`result`."""
        self.until_done()
        return self.result()

    def until_done(self, after_step=None) -> None:
        """Step until a stop rule fires, calling ``after_step()`` after every epoch; a
        Ctrl-C (KeyboardInterrupt) after the first epoch ends the run there."""
        try:
            if self.client is not None:
                self.ctrl_c.install()
            while not self.done:
                self.step()
                if after_step is not None:
                    after_step()
        except _ClusterLost:
            self.stopped_by = "cluster lost"  # the front of the last finished epoch stands
        except KeyboardInterrupt:
            if not self.recorder.rows:
                raise
            self.stopped_by = "interrupted"
        finally:
            self.close()

    def close(self) -> None:
        """Put back the Ctrl-C handler and let the executor go."""
        self.ctrl_c.restore()
        self.executor.close()

    def result(self):
        """The :class:`~moga.evolution.search.RunResult` of the islands' union so far."""
        states, problem, params = self.states, self.problem, self.params
        F, X = _union(states, self.reference, with_X=True)
        _, first = np.unique(F, axis=0, return_index=True)
        idx = first[np.lexsort(F[first].T[::-1])]
        F, X = F[idx], X[idx]
        rows = self.recorder.rows
        h = np.array(rows, dtype=float).reshape(len(rows), 5)
        hist = {"n_gen": h[:, 0].astype(int), "n_evals": h[:, 1].astype(int), "hv": h[:, 2],
                "front_size": h[:, 3].astype(int), "time_s": h[:, 4]}
        m = self.migration
        info = {"stopped_by": self.stopped_by, "islands": self.islands,
                "topology": m.topology, "migration_interval": m.interval,
                "migrants": m.migrants,
                "migrant_selection": "best by rank, then crowding distance",
                "migrant_replacement": "NSGA-II survival of the population and its migrants",
                "island_seeds": f"numpy.random.SeedSequence({self.seed}).spawn({self.islands})",
                "scheduler": self.executor.address, "workers": self.executor.workers,
                "workers_at_end": self.executor.workers_now,
                "workers_lost": self.executor.workers_lost,
                "epochs": len(rows), "island_hv": [float(s.get("hv", 0.0)) for s in states],
                "island_generations": [int(s.get("n_gen", 0)) for s in states],
                "epoch_wall_s": list(self.epoch_wall),
                "epoch_compute_s": list(self.epoch_compute)}
        use_blacklist = problem.use_blacklist
        return RunResult(name="MOGA" if use_blacklist else "MOGA without blacklist", F=F, X=X,
                         history=hist, jobset=problem.jobset, federation=problem.federation,
                         model=problem.model, objectives=tuple(problem.objectives),
                         seed=self.seed, params=params, reference=self.reference,
                         ref_point=HV_FACTOR * self.reference, wall_time=self.elapsed,
                         decode_time=problem.decode_seconds + sum(s.get("decode_s", 0.0)
                                                                  for s in states),
                         n_evals=int(problem.n_decoded + sum(s.get("n_decoded", 0)
                                                             for s in states)),
                         use_blacklist=use_blacklist, backfill=problem.backfill, info=info)

    def state(self) -> dict:
        """The run as a plain dict of values and arrays: every island's state after its last
        epoch, the migrants on their way, the history and the counters (see
        :meth:`from_state`). Taken after the first epoch."""
        if not self.recorder.rows:
            raise RuntimeError("an island run's state is taken after its first epoch")
        keep = ("index", "n_decoded", "decode_s", "history", "rng", "X", "F", "rank",
                "crowding", "hashes", "n_gen", "n_evals", "stopped", "archive_F",
                "archive_X", "front_F", "front_X", "hv", "compute_s")
        return {"states": [{k: s[k] for k in keep + ("survival",) if k in s}
                           for s in self.states],
                "incoming": [None if m is None else {"X": m[0], "F": m[1]}
                             for m in self.incoming],
                "history": np.array(self.recorder.rows, dtype=float).reshape(-1, 5),
                "epoch_wall": list(self.epoch_wall),
                "epoch_compute": list(self.epoch_compute),
                "seeded": (None if self.spec.seed_F is None
                           else {"F": self.spec.seed_F, "X": self.spec.seed_X}),
                "settings": dict(self.settings), "n_gen": self.n_gen,
                "stopped_by": self.stopped_by, "elapsed": self.elapsed,
                "cpu_seconds": self.cpu_seconds,
                "problem_counters": [int(self.problem.n_decoded),
                                     float(self.problem.decode_seconds)]}

    @classmethod
    def from_state(cls, state: dict, problem, reference, params, seed: int, *, client=None,
                   initial=None, interrupt=None, on_generation=None, progress=False):
        """The island run a :meth:`state` was taken of, ready to step on; ``problem``,
        ``reference``, ``params`` and ``seed`` are the run's (the caller checks that they
        are the state's)."""
        st = state["settings"]
        seeded = state["seeded"]
        self = cls(problem, reference, params, seed, islands=st["islands"], client=client,
                   migration=st["migration"], initial=initial, time_limit=st["time_limit"],
                   stagnation=st["stagnation"], stagnation_tol=st["stagnation_tol"],
                   interrupt=interrupt, on_generation=on_generation, progress=progress,
                   _seeded=(None, None) if seeded is None else (seeded["F"], seeded["X"]))
        self.states = [dict(s) for s in state["states"]]
        for s in self.states:
            s["history"] = [tuple(r) for r in s["history"]]
        self.incoming = [None if m is None else (m["X"], m["F"]) for m in state["incoming"]]
        self.recorder.rows = [(int(r[0]), int(r[1]), float(r[2]), int(r[3]), float(r[4]))
                              for r in np.asarray(state["history"], dtype=float)]
        self.epoch_wall = list(state["epoch_wall"])
        self.epoch_compute = list(state["epoch_compute"])
        self.n_gen, self.stopped_by = int(state["n_gen"]), state["stopped_by"]
        self._t0 = time.perf_counter() - float(state["elapsed"])
        self._cpu0 = time.process_time() - float(state["cpu_seconds"])
        self.problem.n_decoded, self.problem.decode_seconds = (
            int(state["problem_counters"][0]), float(state["problem_counters"][1]))
        self.ctrl_c.armed = True
        return self
