"""``moga sweep``: a benchmark sweep (TOML configuration) on Dask."""

from __future__ import annotations

import sys

from .common import (
    bounded,
)

HELP = "run a benchmark sweep (TOML config) on Dask"


def add_arguments(p) -> None:
    p.add_argument("config", help="sweep configuration (TOML)")
    p.add_argument("--scheduler", default=None,
                   help="Dask scheduler address (default: an embedded LocalCluster); "
                        "'synchronous' runs in this process")
    p.add_argument("--workers", type=bounded("--workers", "workers"), default=None,
                   help="workers of the embedded cluster (default: the CPU count)")
    p.add_argument("--out", default="moga-sweep", help="results store (default: moga-sweep)")
    p.add_argument("--max-runs", type=bounded("--max-runs", "max_runs"), default=None,
                   help="stop after this many runs (rerun to continue)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def run(args) -> int:
    from ..experiments.sweep import load_config, run_sweep

    cfg = load_config(args.config)
    n = len(cfg.runs())
    print(f"sweep {cfg.name!r}: {len(cfg.traces)} trace(s), "
          f"{sum(len(t.windows) for t in cfg.traces)} job-set(s), {len(cfg.algorithms)} "
          f"algorithm(s), {len(cfg.seeds)} seed(s): {n} runs -> {args.out}", flush=True)
    stats = run_sweep(cfg, args.out, scheduler=args.scheduler, workers=args.workers,
                      max_runs=args.max_runs, progress=not args.no_progress)
    print(f"{stats['done']} run(s) done, {stats['skipped']} already in the store, "
          f"{stats['failed']} failed")
    for f in stats["failures"]:
        print(f"  failed: {f['run_id']}: {f['error']}", file=sys.stderr)
    return 1 if stats["failed"] else 0
