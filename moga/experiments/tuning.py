"""GA parameter tuning with Optuna.

:func:`tune` searches GA parameters that maximise the mean normalised
hypervolume of MOGA fronts over some job-sets and seeds, at an equal budget
of evaluations: ``n_gen = budget // pop_size``, so a larger population gets
fewer generations. Each job-set's reference point is fixed (1.1 times its
submit-order schedule's objectives, see :func:`moga.run`), so hypervolumes
are comparable across trials.

Runs of a trial are reported to Optuna after every generation, at step
``run_index * budget + evaluations so far`` with the run's current
hypervolume, and a median pruner stops trials that fall behind the others at
the same step (not before five trials have finished, nor in the first half of
a trial's first run). The sampler is Optuna's TPE, seeded. Studies live in any
Optuna storage: a SQLite URL (``sqlite:///tune.db``) or a journal file
(any other path); a study resumed from its storage keeps its finished trials
and only runs the missing ones.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import require
from ..evolution.params import GAParams
from ..evolution.runner import run

__all__ = ["DEFAULT_SPACE", "TuneResult", "tune", "suggest", "open_storage"]

#: The default search space: name -> (kind, low, high[, "log"]) or ("categorical", choices).
DEFAULT_SPACE = {
    "pop_size": ("int", 20, 200, 10),
    "prob_order_crossover": ("float", 0.5, 1.0),
    "prob_blacklist_crossover": ("float", 0.5, 1.0),
    "order_mutation_rate": ("float", 1e-4, 0.05, "log"),
    "blacklist_mutation_rate": ("float", 1e-4, 0.05, "log"),
    "blacklist_crossover": ("categorical", ["uniform", "blend"]),
    "order_crossover": ("categorical", ["prefix", "ox1"]),
    "cluster_rate": ("float", 0.0, 1.0),
}


def suggest(trial, space: dict) -> dict:
    """Draw one parameter set from ``space`` with an Optuna trial."""
    params = {}
    for name, spec in space.items():
        kind = spec[0]
        if kind == "int":
            step = spec[3] if len(spec) > 3 else 1
            params[name] = trial.suggest_int(name, spec[1], spec[2], step=step)
        elif kind == "float":
            params[name] = trial.suggest_float(name, spec[1], spec[2],
                                               log=len(spec) > 3 and spec[3] == "log")
        elif kind == "categorical":
            params[name] = trial.suggest_categorical(name, list(spec[1]))
        else:
            raise ValueError(f"search space: {name}: unknown kind {kind!r} "
                             "(int, float or categorical)")
    return params


def _check_space(space: dict) -> None:
    import dataclasses

    fields = {f.name for f in dataclasses.fields(GAParams)} - {"n_gen"}
    for name, spec in space.items():
        if name not in fields:
            raise ValueError(f"search space: unknown GA parameter {name!r}; tunable: "
                             f"{sorted(fields)} (n_gen follows from the budget)")
        if not isinstance(spec, (tuple, list)) or not spec:
            raise ValueError(f"search space: {name}: expected (kind, ...), got {spec!r}")


def _population(p: dict) -> int:
    """The population of a trial's parameters ``p``: its own, else ``moga.run``'s default."""
    return int(p["pop_size"]) if "pop_size" in p else int(GAParams(**p).for_moga().pop_size)


def _largest_population(space: dict) -> int:
    """The largest ``pop_size`` a trial can draw from ``space`` (the default when untuned)."""
    spec = space.get("pop_size")
    if spec is None:
        return _population({})
    if spec[0] == "categorical":
        return int(max(spec[1]))
    return int(spec[2])


def _repair_journal(path: Path) -> int:
    """Cut a journal file back to its last complete line; returns the bytes removed.

    A process killed while appending leaves a partial last line, which Optuna
    cannot read back; every complete line before it is a whole operation.
    """
    data = path.read_bytes()
    if not data or data.endswith(b"\n"):
        return 0
    keep = data.rfind(b"\n") + 1
    path.with_name(path.name + ".truncated-tail").write_bytes(data[keep:])
    with open(path, "r+b") as fh:
        fh.truncate(keep)
    return len(data) - keep


def open_storage(storage):
    """An Optuna storage from a URL (``sqlite:///...``), a journal file path, or None (memory).

    A journal whose last line was cut by a crash is repaired first (the cut
    tail is kept beside it as ``<file>.truncated-tail``).
    """
    if storage is None or not isinstance(storage, (str, Path)):
        return storage
    s = str(storage)
    if not s.strip():
        raise ValueError("storage: empty; give sqlite:///file.db or a journal file path")
    if "://" in s:
        return s
    from optuna.storages import JournalStorage
    from optuna.storages.journal import JournalFileBackend

    path = Path(s)
    if path.is_dir():
        raise ValueError(f"storage {s}: is a folder; give a journal file path or sqlite:///f.db")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists():
            cut = _repair_journal(path)
            if cut:
                import warnings

                warnings.warn(f"storage {s}: removed a partial last line ({cut} bytes) left by "
                              "an interrupted write; kept in "
                              f"{path.name}.truncated-tail", RuntimeWarning, stacklevel=2)
        return JournalStorage(JournalFileBackend(s))
    except OSError as e:
        raise ValueError(f"storage {s}: cannot open the journal file: {e.strerror or e}") from None


@dataclass
class TuneResult:
    """The outcome of :func:`tune`."""

    best_params: GAParams
    best_value: float
    study: object
    budget: int
    wall_time: float

    def to_toml(self) -> str:
        """The best parameters as TOML (``moga run --params`` and sweep configs read it)."""
        return (f"# moga tune: mean normalised hypervolume {self.best_value:.6f} at "
                f"{self.budget} evaluations per run\n" + self.best_params.to_toml())

    def trials(self) -> list[dict]:
        """One dict per trial: number, state, value and parameters."""
        return [{"number": t.number, "state": t.state.name, "value": t.value, **t.params}
                for t in self.study.trials]


#: The largest evaluation budget per run :func:`tune` takes.
MAX_BUDGET = 10_000_000
#: The user attribute of a trial that names the process running it, ``"host:pid"``. Several
#: ``moga tune`` may share one storage; on opening it, a RUNNING trial is failed and its
#: parameters run again only when its process is gone (this host, a pid no longer alive).
OWNER = "moga_owner"
#: Seconds after its start from which a RUNNING trial that names no process (one written by
#: an older moga, or killed before its first line) counts as left by a killed process.
UNOWNED_STALE_S = 60.0


def _owner() -> str:
    import os
    import socket

    return f"{socket.gethostname()}:{os.getpid()}"


def _abandoned(trial) -> bool:
    """True when the RUNNING ``trial`` has no live process to finish it: its owner ran on this
    host and is gone, or it names none and started over :data:`UNOWNED_STALE_S` ago. A trial
    of another host is never taken for abandoned (no way to tell)."""
    import datetime
    import socket

    from ..outputs import _pid_alive

    owner = trial.user_attrs.get(OWNER)
    if isinstance(owner, str) and ":" in owner:
        host, _, pid = owner.rpartition(":")
        if host != socket.gethostname():
            return False
        return not (pid.isdigit() and _pid_alive(int(pid)))
    start = trial.datetime_start
    if start is None:
        return True
    now = datetime.datetime.now(start.tzinfo) if start.tzinfo else datetime.datetime.now()
    return (now - start).total_seconds() > UNOWNED_STALE_S


def study_settings(jobsets, federation, seeds, budget, model, space) -> dict:
    """What makes trials of a study comparable; stored with the study and checked on resume."""
    import hashlib

    def digest(js):
        h = hashlib.sha256()
        for a in (js.release, js.tasks, js.runtime, js.sigma, js.bw):
            h.update(np.ascontiguousarray(a).tobytes())
        return h.hexdigest()[:16]

    return {"jobsets": [{"name": js.name, "n_jobs": len(js), "digest": digest(js)}
                        for js in jobsets],
            "federation": federation.to_dict(), "seeds": list(seeds), "budget": int(budget),
            "model": model,
            "space": {k: list(v) if isinstance(v, tuple) else v for k, v in space.items()}}


def tune(jobsets, federation, space=None, n_trials: int = 50, seeds=3, storage=None,
         study_name: str | None = None, timeout: float | None = None, budget: int = 20000,
         model: str = "fluid", sampler_seed: int = 0, prune: bool = True,
         verbose: bool = False, progress: bool = False) -> TuneResult:
    """Tune GA parameters on job-sets with Optuna.

    Parameters
    ----------
    jobsets : JobSet or sequence of JobSet
    federation : Federation
    space : dict, optional
        Search space (see :data:`DEFAULT_SPACE`, the default).
    n_trials : int
        Trials the study should hold when done; a resumed study runs only the
        missing ones.
    seeds : int or sequence of int
        GA seeds per job-set (an int n means seeds 1..n).
    storage : str or Path, optional
        ``sqlite:///file.db`` (or any Optuna URL) or a journal file path;
        default in memory.
    study_name : str, optional
        Needed to resume a study from a storage (default "moga-tune").
    timeout : float, optional
        Stop starting trials after this many seconds.
    budget : int
        Evaluations per run (population x generations).
    model : {"fluid", "at_start"}
    sampler_seed : int
        Seed of the TPE sampler.
    prune : bool
        Use the median pruner on intermediate hypervolumes.
    verbose : bool
        Let Optuna log every trial.
    progress : bool
        A progress bar over the trials on a terminal, periodic lines otherwise.

    Notes
    -----
    A study in a storage records its settings (job-sets, federation, seeds,
    budget, model, space); resuming it with other settings raises a
    ValueError saying what differs. Trials left RUNNING by a killed process
    are marked failed on resume and their parameters run again; trials that
    another live process runs (several ``moga tune`` may share one storage) are
    left to it (:data:`OWNER`).

    Returns
    -------
    TuneResult
    """
    optuna = require("optuna", "tuning", "tune")

    if not verbose:
        optuna.logging.set_verbosity(optuna.logging.WARNING)
    jobsets = [jobsets] if not isinstance(jobsets, (list, tuple)) else list(jobsets)
    if not jobsets:
        raise ValueError("give at least one job-set")
    seeds = list(range(1, seeds + 1)) if isinstance(seeds, int) else list(seeds)
    if not seeds:
        raise ValueError("give at least one seed")
    if isinstance(budget, bool) or not isinstance(budget, (int, np.integer)) or budget < 4:
        raise ValueError(f"budget must be an integer of at least 4 evaluations, got {budget!r}")
    if budget > MAX_BUDGET:
        raise ValueError(f"budget must be at most {MAX_BUDGET:,} evaluations per run (days of "
                         f"search per trial), got {budget:,}")
    if isinstance(n_trials, bool) or not isinstance(n_trials, (int, np.integer)) or n_trials < 1:
        raise ValueError(f"n_trials must be an integer >= 1, got {n_trials!r}")
    if timeout is not None and not (isinstance(timeout, (int, float)) and 0 < timeout < np.inf):
        raise ValueError(f"timeout must be a number of seconds > 0, got {timeout!r}")
    if model not in ("fluid", "at_start"):
        raise ValueError(f"model must be 'fluid' or 'at_start', got {model!r}")
    space = dict(DEFAULT_SPACE if space is None else space)
    _check_space(space)
    top = _largest_population(space)
    if budget < 2 * top:
        raise ValueError(
            f"budget {budget} evaluations per run is below two generations of the largest "
            f"population the space can draw (pop_size up to {top}: {2 * top} evaluations), so "
            f"trials would not have equal budgets; raise the budget (--budget) to at least "
            f"{2 * top}, or narrow pop_size in the space")
    settings = study_settings(jobsets, federation, seeds, budget, model, space)
    runs = [(js, s) for js in jobsets for s in seeds]

    def objective(trial):
        trial.set_user_attr(OWNER, _owner())
        p = suggest(trial, space)
        pop = _population(p)
        params = GAParams(**{**p, "n_gen": max(1, budget // pop)})
        hvs = []
        for i, (js, seed) in enumerate(runs):
            def report(n_gen, n_evals, hv, i=i):
                if prune:
                    trial.report(hv, step=i * budget + min(n_evals, budget))
                    if trial.should_prune():
                        raise optuna.TrialPruned()
            left = None if timeout is None else timeout - (time.perf_counter() - t0)
            if left is not None and left <= 0:
                raise optuna.TrialPruned()  # out of time: not a trial of the full budget
            r = run(js, federation, seed=seed, model=model, params=params, on_generation=report,
                    time_limit=left)
            if r.info.get("stopped_by") == "time limit":
                raise optuna.TrialPruned()
            hvs.append(r.hv)
        return float(np.mean(hvs))

    sampler = optuna.samplers.TPESampler(seed=sampler_seed)
    # No pruning before 5 trials have finished, nor in the first half of a trial's first run:
    # early hypervolumes mostly reflect the seeded individuals.
    pruner = optuna.pruners.MedianPruner(n_startup_trials=5, n_warmup_steps=budget // 2) \
        if prune else optuna.pruners.NopPruner()
    study = _open_study(optuna, study_name or "moga-tune", storage, sampler, pruner, settings)
    counted = (optuna.trial.TrialState.COMPLETE, optuna.trial.TrialState.PRUNED)
    done = sum(t.state in counted for t in study.trials)
    t0 = time.perf_counter()
    if n_trials > done:
        from ..progress import Progress

        bar = Progress(n_trials - done, enabled=progress,
                       every=max(1, (n_trials - done) // 10))

        def step(study, trial):
            best = study.best_value if any(t.state == optuna.trial.TrialState.COMPLETE
                                           for t in study.trials) else float("nan")
            bar.step(f"trial {trial.number} {trial.state.name.lower()}, best {best:.4f}")

        # moga's own progress lines: a bar on a terminal, periodic lines in a log. Optuna
        # logs a trial's exception (Ctrl-C included) with its traceback at WARNING; the
        # exception itself reaches the caller.
        level = optuna.logging.get_verbosity()
        if not verbose:
            optuna.logging.set_verbosity(optuna.logging.ERROR)
        try:
            study.optimize(objective, n_trials=n_trials - done, timeout=timeout,
                           gc_after_trial=False, show_progress_bar=False, callbacks=[step])
        except (ValueError, AssertionError) as e:
            # Optuna refuses the result of a trial that something else finished meanwhile
            # (another process on the storage, such as an older moga's resume, took it for
            # abandoned): "Cannot tell a FAIL trial.", which some Optuna versions let an
            # assertion of their own bookkeeping hide (the refusal is then its context).
            told = next((x for x in (e, e.__context__) if isinstance(x, ValueError)
                         and str(x).startswith("Cannot tell a ")), None)
            if told is None:
                raise
            from ..errors import InputError

            where = f"storage {storage}" if storage is not None else "the in-memory storage"
            raise InputError(f"{where}: a trial this run was computing was marked "
                             f"{str(told)[len('Cannot tell a '):].split()[0]} by another "
                             "process sharing the storage, so its result cannot be recorded; "
                             "run moga tune again (the finished trials are kept)") from None
        finally:
            optuna.logging.set_verbosity(level)
        bar.close()
    wall = time.perf_counter() - t0
    completed = [t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]
    if not completed:
        from ..errors import InputError

        raise InputError("no trial completed (a trial cut by the timeout does not count); "
                         "raise the number of trials or the timeout, or lower the budget")
    best = study.best_trial
    pop = _population(best.params)
    best_params = GAParams(**{**best.params, "n_gen": max(1, budget // pop)})
    return TuneResult(best_params, float(best.value), study, budget, wall)


def _open_study(optuna, name, storage, sampler, pruner, settings):
    """Create or resume a study; refuse other settings; fail and requeue stale RUNNING trials."""
    import json

    where = f"storage {storage}" if storage is not None else "the in-memory storage"
    try:
        study = optuna.create_study(study_name=name, storage=open_storage(storage),
                                    direction="maximize", sampler=sampler, pruner=pruner,
                                    load_if_exists=True)
        trials = study.trials
    except ValueError as e:
        if str(e).startswith("storage"):
            raise
        raise ValueError(f"{where}: cannot open study {name!r}: {e}") from None
    except Exception as e:  # noqa: BLE001 - sqlalchemy, JSON and Optuna errors alike
        raise ValueError(f"{where}: cannot open study {name!r} ({type(e).__name__}: "
                         f"{str(e).splitlines()[0] if str(e) else ''}); give sqlite:///file.db "
                         "or a journal file path") from None
    settings = json.loads(json.dumps(settings))
    stored = study.user_attrs.get("moga_settings")
    if stored is None:
        if trials:
            raise ValueError(f"{where}: study {name!r} holds trials that moga did not record "
                             "settings for; use another study name")
        study.set_user_attr("moga_settings", settings)
    elif stored != settings:
        diff = [k for k in sorted(set(stored) | set(settings)) if stored.get(k) != settings.get(k)]
        raise ValueError(f"{where}: study {name!r} was made with other settings ({', '.join(diff)} "
                         "differ); its trials would not be comparable. Use another study name "
                         "or the same settings")
    for t in trials:
        if t.state == optuna.trial.TrialState.RUNNING and _abandoned(t):
            # Left by a killed process: no one will finish it. A trial that another live
            # process runs is left to it, which would otherwise fail to record it.
            study._storage.set_trial_state_values(t._trial_id, optuna.trial.TrialState.FAIL)
            study.enqueue_trial(t.params, skip_if_exists=False)
    return study


def plot_study(result: TuneResult, dest) -> list[Path]:
    """Optuna's optimisation history and parameter importances, as PNG files in ``dest``."""
    import warnings

    import optuna.visualization.matplotlib as ovm

    from ..plot import _save

    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    written = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the matplotlib backend is marked experimental
        ax = ovm.plot_optimization_history(result.study)
        p = dest / "history.png"
        _save(ax.figure, p, dpi=110)
        written.append(p)
        complete = [t for t in result.study.trials if t.state.name == "COMPLETE"]
        if len(complete) >= 2:
            ax = ovm.plot_param_importances(result.study)
            p = dest / "importances.png"
            _save(ax.figure, p, dpi=110)
            written.append(p)
    return written
