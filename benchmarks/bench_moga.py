"""Benchmark of a MOGA generation (a benchmark, not a test).

* Time per generation, split into batch decoding and everything else (pymoo's
  selection and survival, our operators, duplicate elimination), for
  population 100 on a 1,000-job job-set of the bundled HPC2N month;
* the same with pymoo's stock operators (``OrderCrossover`` and
  ``InversionMutation`` on the order, ``UniformCrossover`` and ``PM`` on the
  blacklist, pymoo's default pairwise duplicate elimination), for comparison;
* the wall time of the default ``moga run`` (bundled month, pop 100,
  400 generations), unless ``--quick``.

Writes ``results/bench_moga.json`` and ``results/bench_moga.md``::

    python benchmarks/bench_moga.py
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

import numba
import numpy as np
from _bench import add_options, out_dir
from pymoo.algorithms.moo.nsga2 import NSGA2
from pymoo.core.crossover import Crossover
from pymoo.core.mutation import Mutation
from pymoo.operators.crossover.ox import OrderCrossover
from pymoo.operators.crossover.ux import UniformCrossover
from pymoo.operators.mutation.inversion import InversionMutation
from pymoo.operators.mutation.pm import PM
from pymoo.optimize import minimize

import moga
from moga.evolution.operators import ScheduleSampling
from moga.evolution.problem import SchedulingProblem
from moga.outputs import atomic_write

ROOT = Path(__file__).resolve().parents[1]


class StockCrossover(Crossover):
    """pymoo's OrderCrossover on the order part, UniformCrossover on the blacklist part."""

    def __init__(self):
        super().__init__(2, 2, prob=0.9)
        self.ox, self.ux = OrderCrossover(), UniformCrossover()

    def _do(self, problem, X, *args, random_state=None, **kwargs):
        J = problem.n_jobs
        order = self.ox._do(problem, X[:, :, :J].astype(int), random_state=random_state)
        bl = self.ux._do(problem, X[:, :, J:], random_state=random_state)
        return np.concatenate([order.astype(float), bl], axis=2)


class StockMutation(Mutation):
    """pymoo's InversionMutation on the order part, polynomial mutation on the blacklist part."""

    def __init__(self):
        super().__init__()
        self.inv, self.pm = InversionMutation(), PM(eta=20)

    def _do(self, problem, X, *args, random_state=None, **kwargs):
        J, n = problem.n_jobs, problem.n_var - problem.n_jobs
        shim = SimpleNamespace(n_var=n, xl=np.zeros(n), xu=np.ones(n))
        order = self.inv._do(problem, X[:, :J].astype(int), random_state=random_state)
        bl = self.pm._do(shim, X[:, J:], random_state=random_state)
        return np.hstack([order.astype(float), bl])


def _generation_times(js, fed, pop, n_gen, stock, seed=1):
    problem = SchedulingProblem(js, fed)
    if stock:
        algo = NSGA2(pop_size=pop, sampling=ScheduleSampling(), crossover=StockCrossover(),
                     mutation=StockMutation(), eliminate_duplicates=True)
        t0 = time.perf_counter()
        minimize(problem, algo, ("n_gen", n_gen), seed=seed)
        wall = time.perf_counter() - t0
        return wall, problem.decode_seconds
    # In order, as the stock operators' run: the operators are what this compares.
    r = moga.run(js, fed, pop_size=pop, n_gen=n_gen, seed=seed, params={"easy_search": False})
    return r.wall_time, r.decode_time


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-jobs", type=int, default=None, help="jobs (default 1000)")
    ap.add_argument("--pop", type=int, default=None, help="population (default 100)")
    ap.add_argument("--gen", type=int, default=None, help="generations (default 50)")
    add_options(ap, "60 jobs, population 10, 2 generations, no default run")
    args = ap.parse_args(argv)
    out = out_dir(args)
    args.n_jobs = args.n_jobs or (60 if args.quick else 1000)
    args.pop = args.pop or (10 if args.quick else 100)
    n_gen = args.gen or (2 if args.quick else 50)

    fed = moga.Federation.preset("default")
    js = moga.load_default().jobset(n_jobs=args.n_jobs, federation=fed, seed=0)
    moga.run(js, fed, pop_size=10, n_gen=2)  # compile / load caches
    res = {"jobset": js.name, "n_jobs": len(js), "pop": args.pop, "n_gen": n_gen,
           "threads": numba.config.NUMBA_NUM_THREADS, "variants": {}}
    for name, stock in (("moga operators", False), ("pymoo stock operators", True)):
        wall, dec = _generation_times(js, fed, args.pop, n_gen, stock)
        r = {"ms_per_generation": 1e3 * wall / n_gen, "decode_ms_per_generation": 1e3 * dec / n_gen,
             "other_ms_per_generation": 1e3 * (wall - dec) / n_gen, "decode_share": dec / wall}
        res["variants"][name] = r
        print(f"{name}: " + ", ".join(f"{k} {v:.3g}" for k, v in r.items()), flush=True)

    if not args.quick:
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-m", "moga.cli", "run", "--out", tmp, "--no-progress"],
                           check=True, capture_output=True)
            res["default_run_s"] = time.perf_counter() - t0
            summary = json.loads((Path(tmp) / "run.json").read_text())
            res["default_run"] = {k: summary[k] for k in ("jobset", "n_jobs", "n_evals",
                                                          "generations", "params",
                                                          "wall_time_s", "decode_time_s",
                                                          "front_size", "hv", "knee_change_pct")}
        print(f"default moga run: {res['default_run_s']:.1f} s", flush=True)

    atomic_write(out / "bench_moga.json", json.dumps(res, indent=2) + "\n")
    lines = ["# MOGA generation benchmark", "",
             f"`python benchmarks/bench_moga.py`: NSGA-II over strict orders "
             f"(`easy_search=False`), population {args.pop}, {n_gen} generations on "
             f"{js.name} ({len(js)} jobs), default federation, fluid model, "
             f"{res['threads']} Numba threads.", "",
             "| operators | ms / generation | decoding ms | everything else ms | decoding share |",
             "|---|---|---|---|---|"]
    for name, r in res["variants"].items():
        lines.append(f"| {name} | {r['ms_per_generation']:.1f} | {r['decode_ms_per_generation']:.1f} "
                     f"| {r['other_ms_per_generation']:.1f} | {100 * r['decode_share']:.0f}% |")
    if "default_run_s" in res:
        d = res["default_run"]
        how = " searched through EASY" if d["params"].get("easy_search") else ""
        lines += ["", f"Default `moga run` (bundled month, {d['n_jobs']} jobs, pop "
                  f"{d['params']['pop_size']}, {d['generations']} generations{how}, "
                  f"{d['n_evals']} evaluations): {res['default_run_s']:.1f} s end to "
                  f"end including start-up and plots ({d['wall_time_s']:.1f} s in the GA, "
                  f"{100 * d['decode_time_s'] / d['wall_time_s']:.0f}% of it decoding)."]
    lines.append("")
    atomic_write(out / "bench_moga.md", "\n".join(lines))
    print(f"wrote {out / 'bench_moga.md'}")


if __name__ == "__main__":
    main()
