"""Benchmark of the federated decoder (a benchmark, not a test).

Measures, on a 1,000-job HPC2N job-set (the bundled month by default) and the
default federation:

* microseconds per decode for each execution model, of the kernel alone and
  through the validating wrapper, and nanoseconds per job;
* a batch of 200 random chromosomes decoded on one Numba thread and with
  one chunk per thread, in order and with EASY backfilling, and the speed-ups;
* the ratio to the plain-Python reference in ``tests/naive.py``.

Writes ``results/bench_decode.json`` and ``results/bench_decode.md``::

    python benchmarks/bench_decode.py            # full run (about a minute)
    python benchmarks/bench_decode.py --quick    # seconds, to a temporary folder
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

import numba
import numpy as np
from _bench import add_options, out_dir

import decoders
import moga
from moga.outputs import atomic_write

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from naive import naive_decode  # noqa: E402

TARGETS = {"naive_ratio_min": 200.0, "ns_per_job_max": 150.0, "batch_speedup_min": 1.8}


def _times(fn, repeat):
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return np.array(out)


def _kernel_call(js, fed, order, bl, model):
    """A closure running the bare decoder (``decoders.decode`` without validation)."""
    arrs = (*js.arrays(), fed.nodes, fed.speed, fed.power_busy, fed.power_idle, fed.link)
    order = np.asarray(order, dtype=np.int64)
    bl = np.asarray(bl, dtype=np.float64)
    return lambda: decoders.decode(*arrs, order, bl, model=model, check=False)


def _thread_runs(batch, reps):
    """Times of ``batch()`` on one Numba thread and on all of them, ``reps`` of each in
    alternation (so that both see the same machine load), each the best of 3 calls."""
    batch()
    single, parallel = [], []
    for _ in range(reps):
        numba.set_num_threads(1)
        single.append(_times(batch, 3).min())
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        parallel.append(_times(batch, 3).min())
    return np.array(single), np.array(parallel)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trace", default=None, help="SWF trace (default: bundled HPC2N month)")
    ap.add_argument("--n-jobs", type=int, default=None, help="jobs (default 1000)")
    ap.add_argument("--pop", type=int, default=None, help="batch size (default 200)")
    add_options(ap)
    args = ap.parse_args(argv)
    out = out_dir(args)
    args.n_jobs = args.n_jobs or (60 if args.quick else 1000)
    args.pop = args.pop or (8 if args.quick else 200)
    reps = 5 if args.quick else 2000
    batch_reps = 1 if args.quick else 30

    trace = moga.load_swf(args.trace) if args.trace else moga.load_default()
    fed = moga.Federation.preset("default")
    js = trace.jobset(n_jobs=args.n_jobs, federation=fed, seed=0)
    J, K = len(js), fed.n_clusters
    rng = np.random.default_rng(0)
    submit, empty = np.arange(J), np.zeros((J, K))
    orders = np.array([rng.permutation(J) for _ in range(args.pop)])
    bls = rng.uniform(0, 1, (args.pop, J, K)) * (rng.uniform(size=(args.pop, J, K)) < 0.3)

    res = {"jobset": js.name, "n_jobs": J, "federation": fed.name, "pop": args.pop,
           "threads": numba.config.NUMBA_NUM_THREADS, "machine": platform.machine(),
           "python": platform.python_version(), "numba": numba.__version__,
           "numpy": np.__version__, "models": {}}
    for model in ("fluid", "at_start"):
        moga.evaluate(js, fed, model=model)  # compile / load the cache
        kern = _times(_kernel_call(js, fed, submit, empty, model), reps)
        kern_rand = np.concatenate([
            _times(_kernel_call(js, fed, orders[p], bls[p], model), max(reps // 20, 5))
            for p in range(min(20, args.pop))])
        wrap = _times(lambda m=model: moga.evaluate(js, fed, model=m), reps // 4)
        n_naive = 1 if args.quick else 2
        naive = _times(lambda m=model: naive_decode(
            js.release, js.tasks, js.runtime, js.sigma, js.bw, fed.nodes, fed.speed,
            fed.power_busy, fed.power_idle, fed.link, submit, empty, m), n_naive)
        single, parallel = _thread_runs(
            lambda m=model: moga.evaluate_batch(js, fed, orders, bls, model=m), batch_reps)
        easy_single, easy_parallel = _thread_runs(
            lambda m=model: moga.evaluate_batch(js, fed, orders, bls, model=m, backfill="easy"),
            max(1, batch_reps // 3))
        r = {
            "kernel_us_median": float(np.median(kern) * 1e6),
            "kernel_us_min": float(kern.min() * 1e6),
            "kernel_ns_per_job_median": float(np.median(kern) * 1e9 / J),
            "kernel_random_chromosomes_us_median": float(np.median(kern_rand) * 1e6),
            "wrapper_us_median": float(np.median(wrap) * 1e6),
            "naive_s": float(np.median(naive)),
            "naive_ratio": float(np.median(naive) / np.median(kern)),
            "batch_single_thread_ms": float(np.median(single) * 1e3),
            "batch_parallel_ms": float(np.median(parallel) * 1e3),
            "batch_us_per_decode_parallel": float(np.median(parallel) * 1e6 / args.pop),
            "batch_speedup": float(np.median(single / parallel)),
            "batch_speedup_best": float(single.min() / parallel.min()),
            "easy_batch_single_thread_ms": float(np.median(easy_single) * 1e3),
            "easy_batch_parallel_ms": float(np.median(easy_parallel) * 1e3),
            "easy_batch_speedup": float(np.median(easy_single / easy_parallel)),
            "easy_batch_speedup_best": float(easy_single.min() / easy_parallel.min()),
        }
        res["models"][model] = r
        print(f"{model}: " + ", ".join(f"{k} {v:.4g}" for k, v in r.items()), flush=True)

    atomic_write(out / "bench_decode.json", json.dumps(res, indent=2) + "\n")
    lines = [
        "# Federated decoder benchmark",
        "",
        f"`python benchmarks/bench_decode.py` on {res['jobset']} ({J} jobs, batch mode), "
        f"federation `{fed.name}`, {res['threads']} Numba threads, numba {res['numba']}, "
        f"numpy {res['numpy']}, Python {res['python']} ({res['machine']}). Medians; a "
        f"batch time is the best of 3 calls, one and all threads alternating {batch_reps} "
        "times (EASY: a third as many); a speed-up is the median of the alternations' "
        "ratios, and in brackets the ratio of the best times (on a shared machine, the "
        "code's own scaling).",
        "",
        "| model | kernel µs/decode | ns/job | random chromosomes µs | via `moga.evaluate` µs "
        "| naive s | × naive | batch 200, 1 thread ms | batch 200, threads ms | speed-up "
        "| EASY batch, 1 thread ms | EASY batch, threads ms | EASY speed-up |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for model, r in res["models"].items():
        lines.append(
            f"| {model} | {r['kernel_us_median']:.0f} | {r['kernel_ns_per_job_median']:.0f} | "
            f"{r['kernel_random_chromosomes_us_median']:.0f} | {r['wrapper_us_median']:.0f} | "
            f"{r['naive_s']:.2f} | {r['naive_ratio']:.0f} | {r['batch_single_thread_ms']:.1f} | "
            f"{r['batch_parallel_ms']:.1f} | {r['batch_speedup']:.2f} "
            f"({r['batch_speedup_best']:.2f}) | {r['easy_batch_single_thread_ms']:.1f} | "
            f"{r['easy_batch_parallel_ms']:.1f} | {r['easy_batch_speedup']:.2f} "
            f"({r['easy_batch_speedup_best']:.2f}) |")
    lines += ["", f"Targets: at least {TARGETS['naive_ratio_min']:.0f}× the naive reference, at "
              f"most {TARGETS['ns_per_job_max']:.0f} ns per job per decode, at least "
              f"{TARGETS['batch_speedup_min']}× batch speed-up on 2 cores.", ""]
    atomic_write(out / "bench_decode.md", "\n".join(lines))
    print(f"wrote {out / 'bench_decode.md'}")


if __name__ == "__main__":
    main()
