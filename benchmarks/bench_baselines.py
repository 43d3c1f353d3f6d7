"""Benchmark of the FCFS and EASY baselines (a benchmark, not a test).

Microseconds per schedule of FCFS and EASY on a 5,000-job HPC2N job-set in
release mode (the first 5,000 jobs of ``../shared/traces/HPC2N-2002-2.2-cln``;
the bundled month, 3,340 jobs, when the shared trace is absent), on the
default federation and on one homogeneous 256-node cluster without
communication (what AccaSim simulates), for both execution models.

With ``--accasim-python PY`` (an interpreter with AccaSim installed, kept out
of moga's dependencies), the same job-set is simulated by AccaSim's
FirstInFirstOut and EASYBackfilling dispatchers (FirstFit allocator) on a
256-core system, and the speed ratios are reported. AccaSim's "EASY" is a
different, aggressive variant (its backfilled jobs can delay the head job),
so only its speed is compared, not its schedules.

Writes ``results/bench_baselines.md`` and ``.json``::

    python benchmarks/bench_baselines.py [--accasim-python /path/to/venv/bin/python]
    python benchmarks/bench_baselines.py --quick   # seconds, to a temporary folder
"""

from __future__ import annotations

import argparse
import gzip
import json
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
from _bench import add_options, out_dir

import moga
from moga.baselines import heuristic
from moga.outputs import atomic_write

ROOT = Path(__file__).resolve().parents[1]
SHARED = "HPC2N-2002-2.2-cln.swf.gz"  # found by moga.resolve_trace, if present


def _median_us(fn, reps):
    fn()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts) * 1e6)


def _accasim(python, trace_path, n_jobs, nodes):
    """Wall seconds of AccaSim's FIFO and EASY on the first ``n_jobs`` jobs of the trace."""
    opener = gzip.open if str(trace_path).endswith(".gz") else open
    with opener(trace_path, "rt") as fh:
        lines = fh.read().splitlines()
    header = [ln for ln in lines if ln.startswith(";")]
    data = [ln.split() for ln in lines if ln.strip() and not ln.startswith(";")][:n_jobs]
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        wl = Path(tmp) / "workload.swf"
        # AccaSim divides by the memory request: give every job 1 kB (fields 7 and 10).
        body = [" ".join(f[:6] + ["1"] + f[7:9] + ["1"] + f[10:]) for f in data]
        wl.write_text("\n".join(header + body) + "\n")
        system = Path(tmp) / "system.json"
        system.write_text(json.dumps({"groups": {"g0": {"core": 1, "mem": 10**6}},
                                      "resources": {"g0": nodes},
                                      "equivalence": {"processor": {"core": 1}},
                                      "start_time": 0}))
        for name in ("fifo", "easy"):
            r = subprocess.run([python, str(ROOT / "benchmarks" / "_accasim_runner.py"), name,
                                str(wl), str(system), str(Path(tmp) / f"res_{name}")],
                               capture_output=True, text=True, check=True)
            out[name] = float(r.stdout.split("seconds")[-1])
    return out


def _default_trace(trace):
    if trace is not None:
        return str(moga.resolve_trace(trace))
    try:
        return str(moga.resolve_trace(SHARED))
    except moga.TraceNotFoundError:
        return None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trace", default=None,
                    help=f"SWF trace (default: {SHARED} where moga.resolve_trace finds it, else "
                         "the bundled month)")
    ap.add_argument("--n-jobs", type=int, default=None, help="jobs (default 5000)")
    ap.add_argument("--reps", type=int, default=None, help="schedules per point (default 50)")
    ap.add_argument("--accasim-python", default=None)
    add_options(ap, "100 jobs of the bundled month, 3 repetitions")
    args = ap.parse_args(argv)
    out = out_dir(args)
    args.n_jobs = args.n_jobs or (100 if args.quick else 5000)
    args.reps = args.reps or (3 if args.quick else 50)
    args.trace = None if args.quick and args.trace is None else _default_trace(args.trace)

    trace = moga.load_swf(args.trace) if args.trace else moga.load_default()
    n = min(args.n_jobs, len(trace))
    platforms = {
        "default federation": moga.Federation.preset("default"),
        "one 256-node cluster": moga.Federation(names=["c"], nodes=[256], speed=[1.0],
                                                power_busy=[70.0], power_idle=[10.0],
                                                link=[1000.0]),
    }
    res = {"trace": trace.name, "n_jobs": n, "mode": "release", "rows": []}
    for pname, fed in platforms.items():
        js = trace.jobset(n_jobs=n, federation=fed, batch=False, seed=0)
        if fed.n_clusters == 1:
            js = moga.JobSet.from_arrays(js.release, js.tasks, js.runtime, sigma=np.zeros(n),
                                         bw=np.zeros(n), id=js.id, name=js.name)
        for model in ("fluid", "at_start"):
            for name in ("FCFS", "EASY"):
                us = _median_us(lambda f=fed, m=model, a=name, j=js: heuristic(j, f, a, m),
                                args.reps)
                row = {"platform": pname, "model": model, "algorithm": name, "us": us,
                       "ns_per_job": 1e3 * us / n}
                res["rows"].append(row)
                print(row, flush=True)
    if args.accasim_python:
        res["accasim_s"] = _accasim(args.accasim_python, args.trace or moga.model.workload
                                    .default_trace_path(), n, 256)
        print("AccaSim", res["accasim_s"], flush=True)

    atomic_write(out / "bench_baselines.json", json.dumps(res, indent=2) + "\n")
    lines = ["# Baseline heuristics benchmark", "",
             f"`python benchmarks/bench_baselines.py`: the first {n} jobs of {trace.name} in "
             "release mode; median microseconds per schedule through `moga.baselines.heuristic` "
             "(validation included); EASY plans on exact run times.", "",
             "| platform | model | algorithm | µs / schedule | ns / job |"
             + (" × faster than AccaSim |" if "accasim_s" in res else ""),
             "|---|---|---|---|---|" + ("---|" if "accasim_s" in res else "")]
    for r in res["rows"]:
        extra = ""
        if "accasim_s" in res:
            acc = res["accasim_s"]["fifo" if r["algorithm"] == "FCFS" else "easy"]
            extra = f" {acc * 1e6 / r['us']:.0f} |"
        lines.append(f"| {r['platform']} | {r['model']} | {r['algorithm']} | {r['us']:.0f} | "
                     f"{r['ns_per_job']:.0f} |" + extra)
    if "accasim_s" in res:
        a = res["accasim_s"]
        lines += ["", f"AccaSim 1.1.3 on the same {n} jobs, 256 one-core nodes, FirstFit "
                  f"allocator: FirstInFirstOut {a['fifo']:.2f} s, EASYBackfilling "
                  f"{a['easy']:.2f} s (its simulation loop alone, output off). Its EASY is an "
                  "aggressive variant, so the schedules differ; only speed is compared."]
    lines.append("")
    atomic_write(out / "bench_baselines.md", "\n".join(lines))
    print(f"wrote {out / 'bench_baselines.md'}")


if __name__ == "__main__":
    main()
