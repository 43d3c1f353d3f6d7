"""Running a sweep: one run (:func:`run_one`) and the Dask driver (:func:`run_sweep`)."""

from __future__ import annotations

import functools
import json
import os
import time

import numpy as np

from ...bounds import BOUNDS
from ...errors import require
from ...model.objectives import DEFAULT as DEFAULT_OBJECTIVES
from ...model.objectives import values_of_schedule
from ...progress import Progress
from .config import RunSpec, SweepConfig, TraceSpec, load_config
from .store import finished_runs, front_columns, open_store, write_run

__all__ = ["run_one", "run_sweep", "check_windows"]


@functools.lru_cache(maxsize=8)
def _trace(path, max_procs):
    from ...model.workload import load_default, load_swf

    return load_default(max_procs=max_procs) if path == "bundled" else \
        load_swf(path, max_procs=max_procs)


def _starts(tspec: TraceSpec):
    """``(trace, window starts)``: for count windows, the starts themselves."""
    trace = _trace(tspec.path, tspec.max_procs)
    if tspec.days is not None:
        return trace, trace.windows(days=tspec.days)
    return trace, None


def check_windows(cfg: SweepConfig) -> None:
    """Every window of the sweep exists in its trace; a ValueError naming the trace otherwise."""
    for t in cfg.traces:
        trace, starts = _starts(t)
        for w in t.windows:
            if starts is not None and w >= len(starts):
                raise ValueError(f"{cfg.source}: trace {t.name!r}: window {w} does not exist "
                                 f"({len(starts)} windows of {t.days:g} days)")
            if starts is None and w >= len(trace):
                raise ValueError(f"{cfg.source}: trace {t.name!r}: start {w} is past the end "
                                 f"({len(trace)} jobs)")


@functools.lru_cache(maxsize=64)
def _jobset(tspec: TraceSpec, window: int):
    from ...model.platform import Federation

    trace, starts = _starts(tspec)
    fed = Federation.load(tspec.federation, auto_nodes=trace.auto_nodes)
    if starts is not None:
        if window >= len(starts):
            raise ValueError(f"trace {tspec.name}: window {window} does not exist "
                             f"({len(starts)} windows of {tspec.days:g} days)")
        start = starts[window]
        js = trace.jobset(start=start, days=tspec.days, federation=fed, wide=tspec.wide,
                          seed=0, batch=not tspec.release)
    else:
        start = window
        js = trace.jobset(start=window, n_jobs=tspec.n_jobs, federation=fed, wide=tspec.wide,
                          seed=0, batch=not tspec.release)
    return js, fed, start


def run_one(spec: RunSpec) -> dict:
    """Run one task; returns ``{"row": dict, "front": ndarray (n, 2)}``.

    The row's ``hv`` is the hypervolume of the front with objectives divided by
    the FCFS schedule's on the same job-set, against (1.1, 1.1).
    """
    from ...baselines.heuristics import heuristic
    from ...baselines.registry import ALGORITHMS, run_algorithm
    from ...metrics import normalized_hypervolume

    if spec.numba_threads:
        import numba

        numba.set_num_threads(max(1, min(spec.numba_threads, numba.config.NUMBA_NUM_THREADS)))
    js, fed, start = _jobset(spec.trace, spec.window)
    fcfs = heuristic(js, fed, "FCFS", spec.model)
    default = spec.objectives == DEFAULT_OBJECTIVES
    ref = (np.array([fcfs.makespan, fcfs.energy]) if default
           else values_of_schedule(fcfs, spec.objectives))
    t0 = time.perf_counter()
    r = run_algorithm(spec.algorithm, js, fed, model=spec.model, seed=spec.seed,
                      params=spec.params if ALGORITHMS[spec.algorithm].params == "ga" else None,
                      n_evals=spec.params.get("n_evals"), objectives=spec.objectives)
    rep = r.schedule(r.knee())
    wall = time.perf_counter() - t0
    row = {
        "run_id": spec.run_id, "sweep": spec.sweep, "trace": spec.trace.name,
        "window": spec.window, "start": start, "n_jobs": len(js), "jobset": js.name,
        "algorithm": spec.algorithm, "seed": spec.seed, "model": spec.model,
        "federation": fed.name, "params": json.dumps(spec.params, sort_keys=True),
        "makespan_s": rep.makespan, "energy_J": rep.energy, "flowtime_s": rep.flowtime,
        "ref_makespan_s": ref[0], "ref_energy_J": ref[1],
        "hv": normalized_hypervolume(r.F, ref), "front_size": len(r.F), "n_evals": r.n_evals,
        "wall_time_s": wall,
    }
    if not default:  # a store of makespan-energy runs keeps its rows' columns
        row["objectives"] = ",".join(spec.objectives)
        row["ref"] = json.dumps([float(v) for v in ref])
    return {"row": row, "front": np.asarray(r.F, dtype=float),
            "columns": front_columns(spec.objectives)}


def run_sweep(config, out, scheduler=None, workers=None, max_runs=None, progress=True,
              retries=2, task=None) -> dict:
    """Run a sweep, writing each finished run at once; skip runs already in ``out``.

    Parameters
    ----------
    config : SweepConfig or path
    out : path
        The results store (created if needed; a store made with another
        configuration is refused, see :mod:`.store`).
    scheduler : str, optional
        A Dask scheduler address (``tcp://host:8786``); ``"synchronous"`` runs
        in this process without Dask; default: an embedded ``LocalCluster``.
    workers : int, optional
        Workers of the embedded cluster (>= 1; default: the CPU count), one
        thread each; Numba threads per task are the CPU count divided by the workers.
    max_runs : int, optional
        Stop after this many runs (>= 0; the rest stays for a later call).
    retries : int
        Times a failed task is retried (a task whose worker dies is
        rescheduled by Dask on its own).
    task : callable, optional
        What runs one :class:`RunSpec` (default :func:`run_one`); a wrapper
        must return what :func:`run_one` returns.

    Returns
    -------
    dict
        ``{"total", "skipped", "done", "failed"}`` counts and the ``failures``.
    """
    cfg = config if isinstance(config, SweepConfig) else load_config(config)
    bw, bm = BOUNDS["workers"], BOUNDS["max_runs"]
    for name, v, low, high in (("workers", workers, bw.low, bw.high),
                               ("max_runs", max_runs, bm.low, bm.high),
                               ("retries", retries, 0, None)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < low):
            raise ValueError(f"{name} must be an integer >= {low}, got {v!r}")
        if v is not None and high is not None and v > high:
            raise ValueError(f"{name} must be an integer <= {high:,}, got {v!r}")
    if workers is not None and scheduler is not None:
        raise ValueError("workers sizes the embedded cluster; it cannot be given with a "
                         "scheduler address")
    task = run_one if task is None else task
    check_windows(cfg)
    cpus = os.cpu_count() or 1
    n_workers = workers or cpus
    threads = max(1, cpus // n_workers) if scheduler is None else 0
    specs = cfg.runs(numba_threads=threads)
    out = open_store(out, cfg.fingerprint(), run_ids=[s.run_id for s in specs])
    done_ids = finished_runs(out)
    todo = [s for s in specs if s.run_id not in done_ids]
    if max_runs is not None:
        todo = todo[:max_runs]
    stats = {"total": len(specs), "skipped": sum(s.run_id in done_ids for s in specs),
             "done": 0, "failed": 0, "failures": []}
    bar = Progress(len(todo), enabled=progress)

    def record(result):
        write_run(out, result)
        stats["done"] += 1
        bar.step(result["row"]["run_id"])

    if not todo:
        return stats
    if scheduler == "synchronous":
        with bar:
            for s in todo:
                record(task(s))
        return stats

    distributed = require("distributed", "a sweep on Dask", "sweep")
    Client, LocalCluster, as_completed = (distributed.Client, distributed.LocalCluster,
                                          distributed.as_completed)

    cluster = None
    if scheduler is None:
        cluster = LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                               dashboard_address=None)
        client = Client(cluster)
    else:
        client = Client(scheduler)
    try:
        futures = {client.submit(task, s, key=f"moga-{s.run_id}", retries=retries,
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
