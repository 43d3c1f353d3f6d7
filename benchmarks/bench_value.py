"""Benchmark of the value decoder and the online simulator (a benchmark, not a test).

On 10,000 jobs of CEA-Curie in release mode (from job 100,000; the bundled
HPC2N month, 3,340 jobs, when the shared trace is absent) with seeded value
functions, on the ``curie`` preset scaled down by 8: decodes per second of
the offline value decoder (submit order, and a batch of random chromosomes
in parallel), and mapping events per second of each online heuristic.
Writes ``results/bench_value.md`` and ``.json``::

    python benchmarks/bench_value.py
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from _bench import add_options, out_dir

import moga
from moga.outputs import atomic_write
from moga.value import ONLINE_HEURISTICS, attach_values, evaluate_value, evaluate_value_batch, online

ROOT = Path(__file__).resolve().parents[1]
SHARED = "CEA-Curie-2011-2.1-cln.swf.gz"  # found by moga.resolve_trace, if present


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-jobs", type=int, default=None, help="jobs (default 10000)")
    add_options(ap, "100 jobs of the bundled month")
    args = ap.parse_args(argv)
    out = out_dir(args)
    args.n_jobs = args.n_jobs or (100 if args.quick else 10000)
    c = moga.Federation.preset("curie")
    fed = moga.Federation(names=c.names, nodes=c.nodes // 8, speed=c.speed,
                          power_busy=c.power_busy, power_idle=c.power_idle, link=c.link,
                          name="curie/8")
    try:
        if args.quick:
            raise moga.TraceNotFoundError(SHARED)
        trace, start = moga.load_swf(moga.resolve_trace(SHARED)), 100000
    except moga.TraceNotFoundError:
        trace, start = moga.load_default(), 0
        fed = moga.Federation.preset("default")
    n = min(args.n_jobs, len(trace) - start)
    js = attach_values(trace.jobset(start=start, n_jobs=n, federation=int(fed.nodes.max()),
                                    wide="drop", batch=False), seed=0)
    J, K = len(js), fed.n_clusters
    evaluate_value(js.take(np.arange(10)), fed)
    t0 = time.perf_counter()
    reps = 3
    for _ in range(reps):
        evaluate_value(js, fed)
    single = (time.perf_counter() - t0) / reps
    rng = np.random.default_rng(0)
    P = 8
    orders = np.array([rng.permutation(J) for _ in range(P)])
    bls = rng.choice([0.0, 0.5], (P, J, K), p=[0.8, 0.2])
    # Compile / load the batch kernel on a tiny problem first.
    evaluate_value_batch(js.take(np.arange(10)), fed, np.tile(np.arange(10), (2, 1)),
                         np.zeros((2, 10, K)))
    t0 = time.perf_counter()
    evaluate_value_batch(js, fed, orders, bls)
    batch = time.perf_counter() - t0
    res = {"jobset": js.name, "n_jobs": J, "federation": fed.name,
           "decode_s": single, "decodes_per_s": 1 / single,
           "batch_random_decodes_per_s": P / batch, "online": {}}
    for h in ONLINE_HEURISTICS:
        online(js.take(np.arange(20)), fed, h)
        t0 = time.perf_counter()
        s = online(js, fed, h)
        wall = time.perf_counter() - t0
        res["online"][h] = {"wall_s": wall, "events": s.n_events,
                            "events_per_s": s.n_events / wall, "value_pct_of_max":
                            100 * s.total_value / s.max_value}
        print(h, res["online"][h], flush=True)
    atomic_write(out / "bench_value.json", json.dumps(res, indent=2) + "\n")
    lines = ["# Value decoder and online simulator benchmark", "",
             f"`python benchmarks/bench_value.py`: {js.name}, {J} jobs, release mode, federation "
             f"`{fed.name}`; the online heuristics plan on exact run times.", "",
             f"Offline value decoder: {res['decodes_per_s']:.2f} decodes/s (submit order, "
             f"{1e3 * single:.0f} ms each); {res['batch_random_decodes_per_s']:.2f} decodes/s for "
             f"a batch of {P} random chromosomes in parallel.", "",
             "| heuristic | mapping events | wall s | events / s | value (% of max) |",
             "|---|---|---|---|---|"]
    for h, r in res["online"].items():
        lines.append(f"| {h} | {r['events']} | {r['wall_s']:.2f} | {r['events_per_s']:.0f} | "
                     f"{r['value_pct_of_max']:.1f} |")
    atomic_write(out / "bench_value.md", "\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
