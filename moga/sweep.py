"""Benchmark sweeps (trace x job-set x algorithm x seed) on Dask, with a resumable store.

A sweep is described by a TOML file (see ``benchmarks/sweeps/``)::

    name = "small"
    seeds = [1, 2, 3]
    model = "fluid"                 # or "at_start"
    federation = "default"          # preset or TOML path (relative to this file)

    [[trace]]
    name = "HPC2N"
    path = "../../../shared/traces/HPC2N-2002-2.2-cln.swf.gz"   # or "bundled"
    days = 30                       # windows of 30 days ...
    windows = [1, 2, 3]             # ... these ones (indices of Trace.windows(days))
    # n_jobs = 500 and starts = [0, 500] instead: windows by count, from these job indices
    # max_procs = 8192, federation = "ricc", wide = "drop", release = true: optional

    [algorithms.MOGA]               # GA parameters (GAParams fields), or params = "tuned.toml"
    pop_size = 100
    n_gen = 200
    [algorithms.FCFS]
    [algorithms.EASY]
    [algorithms.GA-MF]

Each (job-set, algorithm, seed) is one Dask task. Every finished run is
written at once to the results store, a folder with one file per run:
``runs/<run_id>.csv`` (one header line and one row: ids, parameters,
objectives, hypervolume, wall time) and ``fronts/<run_id>.csv`` (its front),
each written to a temporary name and renamed, so that a crash never leaves a
half-written run. Running the sweep again with the same folder skips every
run that has its row: no loss, no duplicates.
"""

from __future__ import annotations

import csv
import functools
import io
import json
import os
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .run import GAParams

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = ["ALGORITHMS", "SweepConfig", "RunSpec", "load_config", "run_sweep", "run_one",
           "load_results", "ROW_FIELDS"]

#: Algorithms a sweep can run; the GA ones take GAParams fields.
ALGORITHMS = ("MOGA", "MOGA without blacklist", "GA-MF", "random search", "FCFS", "EASY",
              "FCFS-greenest", "EASY-greenest")
_GA = {"MOGA", "MOGA without blacklist", "GA-MF"}

#: Columns of a run's row, in order.
ROW_FIELDS = ("run_id", "sweep", "trace", "window", "start", "n_jobs", "jobset", "algorithm",
              "seed", "model", "federation", "params", "makespan_s", "energy_J", "flowtime_s",
              "ref_makespan_s", "ref_energy_J", "hv", "front_size", "n_evals", "wall_time_s")


@dataclass(frozen=True)
class TraceSpec:
    """One trace of a sweep and its job-set windows."""

    name: str
    path: str
    windows: tuple
    days: float | None
    n_jobs: int | None
    federation: str
    max_procs: int | None = None
    wide: str = "error"
    release: bool = False


@dataclass(frozen=True)
class RunSpec:
    """One task: a job-set, an algorithm with its parameters, a seed."""

    sweep: str
    trace: TraceSpec
    window: int
    algorithm: str
    params: dict
    seed: int
    model: str
    numba_threads: int = 0

    @property
    def run_id(self) -> str:
        raw = f"{self.trace.name}-w{self.window}-{self.algorithm}-s{self.seed}"
        return re.sub(r"[^A-Za-z0-9_.-]+", "_", raw)


@dataclass
class SweepConfig:
    """A validated sweep configuration."""

    name: str
    seeds: tuple
    model: str
    traces: tuple
    algorithms: dict
    source: str = ""
    extra: dict = field(default_factory=dict)

    def runs(self, numba_threads: int = 0) -> list[RunSpec]:
        """Every (job-set, algorithm, seed) of the sweep, in a fixed order."""
        return [RunSpec(self.name, t, w, a, p, s, self.model, numba_threads)
                for t in self.traces for w in t.windows
                for a, p in self.algorithms.items() for s in self.seeds]


def _err(source, key, msg):
    return ValueError(f"{source}: {key}: {msg}")


def load_config(path) -> SweepConfig:
    """Read and validate a sweep TOML file; errors name the file and the key."""
    path = Path(path)
    src = str(path)
    try:
        with path.open("rb") as fh:
            doc = tomllib.load(fh)
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"{src}: not valid TOML: {e}") from None
    return config_from_dict(doc, src, base=path.parent)


def _resolve(base, p):
    if p == "bundled":
        return p
    q = Path(p)
    return str(q if q.is_absolute() else (base / q).resolve())


def config_from_dict(doc: dict, source: str = "sweep", base=Path(".")) -> SweepConfig:
    """Validate a sweep configuration given as a dict (the TOML form)."""
    from .platform import Federation

    known = {"name", "seeds", "model", "federation", "trace", "algorithms"}
    unknown = sorted(set(doc) - known)
    if unknown:
        raise _err(source, ", ".join(unknown), f"unknown key(s); known: {sorted(known)}")
    name = doc.get("name", Path(source).stem)
    seeds = doc.get("seeds", [1])
    if (not isinstance(seeds, list) or not seeds
            or not all(isinstance(s, int) and not isinstance(s, bool) for s in seeds)):
        raise _err(source, "seeds", f"must be a non-empty list of integers, got {seeds!r}")
    if len(set(seeds)) != len(seeds):
        raise _err(source, "seeds", "must not repeat")
    model = doc.get("model", "fluid")
    if model not in ("fluid", "at_start"):
        raise _err(source, "model", f"must be 'fluid' or 'at_start', got {model!r}")
    default_fed = doc.get("federation", "default")

    def check_fed(key, spec):
        resolved = spec if spec in ("default", "ricc", "curie") else _resolve(base, spec)
        try:
            Federation.load(resolved)
        except ValueError as e:
            raise _err(source, key, str(e)) from None
        return resolved

    default_fed = check_fed("federation", default_fed)
    traces = doc.get("trace")
    if not isinstance(traces, list) or not traces:
        raise _err(source, "trace", "give at least one [[trace]] table")
    tspecs = []
    tkeys = {"name", "path", "days", "windows", "n_jobs", "starts", "max_procs", "federation",
             "wide", "release"}
    for i, t in enumerate(traces):
        key = f"trace[{i}]"
        if not isinstance(t, dict):
            raise _err(source, key, "must be a table")
        unknown = sorted(set(t) - tkeys)
        if unknown:
            raise _err(source, f"{key}.{unknown[0]}", f"unknown key; known: {sorted(tkeys)}")
        if "path" not in t:
            raise _err(source, f"{key}.path", "missing (a file, relative to the config, or "
                                               "'bundled')")
        tpath = _resolve(base, t["path"])
        if tpath != "bundled" and not Path(tpath).exists():
            raise _err(source, f"{key}.path", f"no such file: {tpath}")
        by_days = "days" in t
        by_count = "n_jobs" in t
        if by_days == by_count:
            raise _err(source, key, "give either days (with windows) or n_jobs (with starts)")
        if by_days:
            days = t["days"]
            if not isinstance(days, (int, float)) or isinstance(days, bool) or days <= 0:
                raise _err(source, f"{key}.days", f"must be a positive number, got {days!r}")
            wins = t.get("windows")
            wkey = "windows"
        else:
            n = t["n_jobs"]
            if not isinstance(n, int) or isinstance(n, bool) or n <= 0:
                raise _err(source, f"{key}.n_jobs", f"must be a positive integer, got {n!r}")
            wins = t.get("starts")
            wkey = "starts"
        if (not isinstance(wins, list) or not wins
                or not all(isinstance(w, int) and not isinstance(w, bool) and w >= 0
                           for w in wins)):
            raise _err(source, f"{key}.{wkey}", f"must be a non-empty list of integers >= 0, "
                                                 f"got {wins!r}")
        wide = t.get("wide", "error")
        if wide not in ("error", "drop", "clip"):
            raise _err(source, f"{key}.wide", f"must be error, drop or clip, got {wide!r}")
        mp = t.get("max_procs")
        if mp is not None and (not isinstance(mp, int) or mp <= 0):
            raise _err(source, f"{key}.max_procs", f"must be a positive integer, got {mp!r}")
        fed = check_fed(f"{key}.federation", t["federation"]) if "federation" in t else default_fed
        tname = str(t.get("name", Path(tpath).name.split(".swf")[0]))
        tspecs.append(TraceSpec(tname, tpath, tuple(wins), float(t["days"]) if by_days else None,
                                t.get("n_jobs"), fed, mp, wide, bool(t.get("release", False))))
    if len({t.name for t in tspecs}) != len(tspecs):
        raise _err(source, "trace", "trace names must be unique")
    algos = doc.get("algorithms")
    if not isinstance(algos, dict) or not algos:
        raise _err(source, "algorithms", f"give at least one [algorithms.NAME] table, NAME in "
                                         f"{list(ALGORITHMS)}")
    checked = {}
    for a, p in algos.items():
        key = f"algorithms.{a}"
        if a not in ALGORITHMS:
            raise _err(source, key, f"unknown algorithm; choose from {list(ALGORITHMS)}")
        p = dict(p or {})
        if a in _GA:
            if "params" in p:
                ppath = _resolve(base, p.pop("params"))
                try:
                    p = {**GAParams.from_toml(ppath).to_dict(), **p}
                except (OSError, ValueError) as e:
                    raise _err(source, f"{key}.params", str(e)) from None
            try:
                p = GAParams.from_dict(p, source=f"{source}: {key}").to_dict()
            except ValueError as e:
                raise ValueError(str(e)) from None
        elif a == "random search":
            unknown = sorted(set(p) - {"n_evals"})
            if unknown:
                raise _err(source, f"{key}.{unknown[0]}", "unknown key; known: ['n_evals']")
            if "n_evals" in p and (not isinstance(p["n_evals"], int) or p["n_evals"] < 1):
                raise _err(source, f"{key}.n_evals", "must be a positive integer")
            p.setdefault("n_evals", 20000)
        elif p:
            raise _err(source, f"{key}.{next(iter(p))}", "heuristics take no parameters")
        checked[a] = p
    return SweepConfig(str(name), tuple(seeds), model, tuple(tspecs), checked, source)


# ------------------------------------------------------------------- one run
@functools.lru_cache(maxsize=8)
def _trace(path, max_procs):
    from .workload import load_default, load_swf

    return load_default(max_procs=max_procs) if path == "bundled" else \
        load_swf(path, max_procs=max_procs)


@functools.lru_cache(maxsize=64)
def _jobset(tspec: TraceSpec, window: int):
    from .platform import Federation

    trace = _trace(tspec.path, tspec.max_procs)
    fed = Federation.load(tspec.federation)
    if tspec.days is not None:
        starts = trace.windows(days=tspec.days)
        if window >= len(starts):
            raise ValueError(f"trace {tspec.name}: window {window} does not exist "
                             f"({len(starts)} windows of {tspec.days:g} days)")
        js = trace.jobset(start=starts[window], days=tspec.days, federation=fed, wide=tspec.wide,
                          seed=0, batch=not tspec.release)
        start = starts[window]
    else:
        js = trace.jobset(start=window, n_jobs=tspec.n_jobs, federation=fed, wide=tspec.wide,
                          seed=0, batch=not tspec.release)
        start = window
    return js, fed, start


def run_one(spec: RunSpec) -> dict:
    """Run one task; returns ``{"row": dict, "front": ndarray (n, 2)}``.

    The row's ``hv`` is the hypervolume of the front with objectives divided by
    the FCFS schedule's on the same job-set, against (1.1, 1.1).
    """
    from .baselines import HEURISTICS, ga_mf, heuristic, random_search
    from .metrics import normalized_hypervolume
    from .run import run

    _inject_fault()
    if spec.numba_threads:
        import numba

        numba.set_num_threads(max(1, min(spec.numba_threads, numba.config.NUMBA_NUM_THREADS)))
    js, fed, start = _jobset(spec.trace, spec.window)
    fcfs = heuristic(js, fed, "FCFS", spec.model)
    ref = np.array([fcfs.makespan, fcfs.energy])
    t0 = time.perf_counter()
    n_evals = 1
    if spec.algorithm in HEURISTICS:
        s = heuristic(js, fed, spec.algorithm, spec.model)
        front = np.array([[s.makespan, s.energy]])
        rep = s
    elif spec.algorithm in ("MOGA", "MOGA without blacklist"):
        r = run(js, fed, seed=spec.seed, model=spec.model, params=GAParams(**_ga(spec.params)),
                blacklist=spec.algorithm == "MOGA")
        front, n_evals, rep = r.F, r.n_evals, r.schedule(r.knee())
    elif spec.algorithm == "GA-MF":
        fr = ga_mf(js, fed, seed=spec.seed, model=spec.model, params=GAParams(**_ga(spec.params)))
        front, n_evals, rep = fr.F, fr.n_evals, fr.schedule(0)
    else:
        fr = random_search(js, fed, spec.params["n_evals"], seed=spec.seed, model=spec.model)
        front, n_evals, rep = fr.F, fr.n_evals, fr.schedule(fr.knee())
    wall = time.perf_counter() - t0
    row = {
        "run_id": spec.run_id, "sweep": spec.sweep, "trace": spec.trace.name,
        "window": spec.window, "start": start, "n_jobs": len(js), "jobset": js.name,
        "algorithm": spec.algorithm, "seed": spec.seed, "model": spec.model,
        "federation": fed.name, "params": json.dumps(spec.params, sort_keys=True),
        "makespan_s": rep.makespan, "energy_J": rep.energy, "flowtime_s": rep.flowtime,
        "ref_makespan_s": ref[0], "ref_energy_J": ref[1],
        "hv": normalized_hypervolume(front, ref), "front_size": len(front), "n_evals": n_evals,
        "wall_time_s": wall,
    }
    return {"row": row, "front": np.asarray(front, dtype=float)}


# Fault injection for the tests: with MOGA_SWEEP_TEST_CRASH=PATH in a worker's environment,
# the first task to run there creates PATH and kills its process, as a crashing node would.
_FAULT_ENV = "MOGA_SWEEP_TEST_CRASH"


def _inject_fault():
    marker = os.environ.get(_FAULT_ENV)
    if marker and not os.path.exists(marker):
        Path(marker).write_text("crashed once\n")
        os._exit(1)


def _ga(params: dict) -> dict:
    p = dict(params)
    if "seed_levels" in p:
        p["seed_levels"] = tuple(p["seed_levels"])
    return p


# --------------------------------------------------------------- the store
def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def _write_run(out: Path, result: dict) -> None:
    row = result["row"]
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=ROW_FIELDS, lineterminator="\n")
    w.writeheader()
    w.writerow({k: _cell(v) for k, v in row.items()})
    front = "makespan_s,energy_J\n" + "".join(f"{float(m)!r},{float(e)!r}\n"
                                               for m, e in result["front"])
    # The front first: a run counts as finished once its row exists.
    _atomic_write(out / "fronts" / f"{row['run_id']}.csv", front)
    _atomic_write(out / "runs" / f"{row['run_id']}.csv", buf.getvalue())


def _cell(v):
    """Floats written exactly (repr round-trips), numpy scalars as plain numbers."""
    if isinstance(v, (float, np.floating)):
        return repr(float(v))
    if isinstance(v, (np.integer,)):
        return int(v)
    return v


def finished_runs(out) -> set:
    """Run ids with a row in the store."""
    d = Path(out) / "runs"
    return {p.stem for p in d.glob("*.csv")} if d.exists() else set()


_NUMERIC = {"window", "start", "n_jobs", "seed", "front_size", "n_evals"}


def load_results(out):
    """``(rows, fronts)``: every run's row (dicts, numbers converted) and front (n, 2), by run id."""
    out = Path(out)
    rows, fronts = [], {}
    for p in sorted((out / "runs").glob("*.csv")):
        with p.open() as fh:
            for r in csv.DictReader(fh):
                for k, v in r.items():
                    if k in _NUMERIC:
                        r[k] = int(v)
                    elif k.endswith(("_s", "_J")) or k == "hv":
                        r[k] = float(v)
                rows.append(r)
        fp = out / "fronts" / f"{p.stem}.csv"
        fronts[p.stem] = np.loadtxt(fp, delimiter=",", skiprows=1, ndmin=2)
    return rows, fronts


# -------------------------------------------------------------- the driver
def run_sweep(config, out, scheduler=None, workers=None, max_runs=None, progress=True,
              retries=2) -> dict:
    """Run a sweep, writing each finished run at once; skip runs already in ``out``.

    Parameters
    ----------
    config : SweepConfig or path
    out : path
        The results store (created if needed).
    scheduler : str, optional
        A Dask scheduler address (``tcp://host:8786``); ``"synchronous"`` runs
        in this process without Dask; default: an embedded ``LocalCluster``.
    workers : int, optional
        Workers of the embedded cluster (default: the CPU count), one thread
        each; Numba threads per task are the CPU count divided by the workers.
    max_runs : int, optional
        Stop after this many runs (the rest stays for a later call).
    retries : int
        Times a failed task is retried (a task whose worker dies is
        rescheduled by Dask on its own).

    Returns
    -------
    dict
        ``{"total", "skipped", "done", "failed"}`` counts and the ``failures``.
    """
    cfg = config if isinstance(config, SweepConfig) else load_config(config)
    out = Path(out)
    (out / "runs").mkdir(parents=True, exist_ok=True)
    (out / "fronts").mkdir(parents=True, exist_ok=True)
    (out / "config.json").write_text(json.dumps(
        {"name": cfg.name, "source": cfg.source, "seeds": cfg.seeds, "model": cfg.model,
         "algorithms": cfg.algorithms, "traces": [t.__dict__ for t in cfg.traces]},
        indent=2, default=str) + "\n")
    cpus = os.cpu_count() or 1
    n_workers = workers or cpus
    threads = max(1, cpus // n_workers) if scheduler is None else 0
    specs = cfg.runs(numba_threads=threads)
    done_ids = finished_runs(out)
    todo = [s for s in specs if s.run_id not in done_ids]
    if max_runs is not None:
        todo = todo[:max_runs]
    stats = {"total": len(specs), "skipped": sum(s.run_id in done_ids for s in specs),
             "done": 0, "failed": 0, "failures": []}
    bar = _Progress(len(todo), enabled=progress)

    def record(result):
        _write_run(out, result)
        stats["done"] += 1
        bar.step(result["row"]["run_id"])

    if scheduler == "synchronous":
        for s in todo:
            record(run_one(s))
        bar.close()
        return stats

    from distributed import Client, LocalCluster, as_completed

    cluster = None
    if scheduler is None:
        cluster = LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                               dashboard_address=None)
        client = Client(cluster)
    else:
        client = Client(scheduler)
    try:
        futures = {client.submit(run_one, s, key=f"moga-{s.run_id}", retries=retries,
                                 pure=False): s for s in todo}
        for fut in as_completed(futures):
            try:
                record(fut.result())
            except Exception as e:  # noqa: BLE001 - one failed run must not stop the sweep
                stats["failed"] += 1
                stats["failures"].append({"run_id": futures[fut].run_id, "error": repr(e)})
                bar.step(futures[fut].run_id + " FAILED")
    finally:
        bar.close()
        client.close()
        if cluster is not None:
            cluster.close()
    return stats


class _Progress:
    """A one-line progress bar on stderr (a plain line per run when not a terminal)."""

    def __init__(self, total, enabled=True):
        self.total, self.n, self.enabled = total, 0, enabled
        self.tty = sys.stderr.isatty()
        self.t0 = time.perf_counter()

    def step(self, label):
        self.n += 1
        if not self.enabled:
            return
        frac = self.n / max(self.total, 1)
        bar = "#" * int(30 * frac)
        msg = (f"[{bar:<30}] {self.n}/{self.total} {time.perf_counter() - self.t0:6.0f} s  "
               f"{label}")
        if self.tty:
            sys.stderr.write("\r" + msg[:120].ljust(120))
        else:
            sys.stderr.write(msg + "\n")
        sys.stderr.flush()

    def close(self):
        if self.enabled and self.tty and self.n:
            sys.stderr.write("\n")
