"""Benchmark of sweep throughput (a benchmark, not a test).

Runs the same sweep (default: 4 job-sets of 300 jobs from the bundled month x
MOGA pop 40 x 40 generations, FCFS, EASY, GA-MF x 2 seeds = 32 runs) on an
embedded Dask LocalCluster with 1 and with 2 workers, into fresh stores, and
reports runs per minute. Writes ``results/bench_sweep.md`` and ``.json``::

    python benchmarks/bench_sweep.py
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from _bench import add_options, out_dir

from moga.experiments.sweep import config_from_dict, run_sweep
from moga.outputs import atomic_write

ROOT = Path(__file__).resolve().parents[1]

CONFIG = {
    "name": "throughput", "seeds": [1, 2], "model": "fluid",
    "trace": [{"name": "bundled", "path": "bundled", "n_jobs": 300,
               "starts": [0, 800, 1600, 2400]}],
    "algorithms": {"MOGA": {"pop_size": 40, "n_gen": 40}, "FCFS": {}, "EASY": {},
                   "GA-MF": {"pop_size": 40, "n_gen": 40}},
}


#: The quick mode's sweep: 4 small runs in this process (no Dask cluster).
QUICK = {
    "name": "quick", "seeds": [1], "model": "fluid",
    "trace": [{"name": "bundled", "path": "bundled", "n_jobs": 40, "starts": [0, 800]}],
    "algorithms": {"MOGA": {"pop_size": 8, "n_gen": 2}, "EASY": {}},
}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_options(ap, "4 runs of 40 jobs in this process, without Dask")
    args = ap.parse_args(argv)
    out = out_dir(args)
    config = QUICK if args.quick else CONFIG
    cfg = config_from_dict(config, "bench_sweep")
    res = {"runs": len(cfg.runs()), "config": config, "workers": {}}
    for workers in (1,) if args.quick else (1, 2):
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.perf_counter()
            how = {"scheduler": "synchronous"} if args.quick else {"workers": workers}
            stats = run_sweep(cfg, tmp, progress=False, **how)
            wall = time.perf_counter() - t0
        res["workers"][workers] = {"wall_s": wall, "runs_per_minute": 60 * stats["done"] / wall}
        print(workers, res["workers"][workers], flush=True)
    if args.quick:
        atomic_write(out / "bench_sweep.json", json.dumps(res, indent=2) + "\n")
        print(f"wrote {out / 'bench_sweep.json'}")
        return
    atomic_write(out / "bench_sweep.json", json.dumps(res, indent=2) + "\n")
    w1, w2 = res["workers"][1], res["workers"][2]
    atomic_write(out / "bench_sweep.md", "\n".join([
        "# Sweep throughput", "",
        f"`python benchmarks/bench_sweep.py`: {res['runs']} runs (4 job-sets of 300 jobs from "
        "the bundled month x MOGA 40 x 40, FCFS, EASY, GA-MF 40 x 40 x 2 seeds), embedded Dask "
        "LocalCluster, one process per worker, wall time including cluster start-up.", "",
        "| workers | wall s | runs / minute |", "|---|---|---|",
        f"| 1 | {w1['wall_s']:.1f} | {w1['runs_per_minute']:.0f} |",
        f"| 2 | {w2['wall_s']:.1f} | {w2['runs_per_minute']:.0f} |", ""]))
    print(f"wrote {out / 'bench_sweep.md'}")


if __name__ == "__main__":
    main()
