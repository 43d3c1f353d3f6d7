"""The real-time event loop against the plain-Python simulator it replaced (not a test).

Job-sets: the first 10k, 30k and 100k jobs of RICC-2010-2 (shared traces)
from job ``--start`` on, in release mode, on an 8,192-node machine
(partition size 1, Mira's memory and I/O model), 10% real-time jobs (seed
0), the preemptive scheme with JIT checkpointing. Times
:func:`moga.realtime.simulate` (the Numba loop in :mod:`decoders.realtime`)
and the event-driven Python simulator of commit ``cef42a6``
(``moga/realtime/simulator.py`` there, read from this repository's git
history), best of ``--repeat`` runs each, and counts the jobs whose start
differs: the Python simulator plans EASY's reservation as the real-time
driver did before the schemes used the core's EASY (docs/design.md §12),
so the schedules part where that reading matters. The Python simulator
runs up to ``--python-max`` jobs.

Writes ``results/realtime_speed.json`` and ``results/realtime_speed.md``::

    python benchmarks/realtime_speed.py        # about 5 minutes on 2 cores
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import platform
import subprocess
import sys
from pathlib import Path

import numpy as np
from _bench import add_options, best_of, out_dir

import moga
from moga.model.workload import default_trace_path
from moga.outputs import atomic_write
from moga.realtime import Checkpointing, Machine, simulate, tag_realtime

ROOT = Path(__file__).resolve().parents[1]
#: The last commit whose moga.realtime.simulate was the plain-Python event loop.
PYTHON_COMMIT = "cef42a6"
SIZES = (10_000, 30_000, 100_000)


def python_simulator():
    """The ``simulate`` of :data:`PYTHON_COMMIT`'s ``moga/realtime/simulator.py``, imported
    inside ``moga.realtime`` so that its relative imports resolve."""
    try:
        src = subprocess.run(["git", "show", f"{PYTHON_COMMIT}:moga/realtime/simulator.py"],
                             cwd=ROOT, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        raise SystemExit(f"needs the git history with commit {PYTHON_COMMIT} "
                         f"(a full clone): {e}") from None
    name = "moga.realtime._python_simulator"
    spec = importlib.util.spec_from_loader(name, loader=None)
    mod = importlib.util.module_from_spec(spec)
    mod.__package__ = "moga.realtime"
    sys.modules[name] = mod
    exec(compile(src, f"{PYTHON_COMMIT}:moga/realtime/simulator.py", "exec"), mod.__dict__)
    return mod.simulate


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trace", default="RICC-2010-2.swf.gz")
    ap.add_argument("--start", type=int, default=20000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--python-max", type=int, default=30_000,
                    help="largest job-set the Python simulator runs (default 30000)")
    add_options(ap, "100 and 200 bundled jobs, without the Python simulator")
    args = ap.parse_args(argv)
    out = out_dir(args)
    sizes = SIZES
    if args.quick:
        args.trace, args.start, args.repeat = str(default_trace_path()), 0, 1
        args.python_max, sizes = 0, (100, 200)
    old = python_simulator() if args.python_max > 0 else None
    trace = moga.load_swf(moga.resolve_trace(args.trace), max_procs=8192)
    machine = Machine(8192, name="8192 nodes")
    ck = Checkpointing("jit")
    small = tag_realtime(trace.jobset(start=args.start, n_jobs=20, federation=8192,
                                      batch=False), machine, 0.1, seed=0)
    simulate(small, "preempt", ck)  # compiles or loads the kernel
    rows = []
    for n in sizes:
        js = trace.jobset(start=args.start, n_jobs=n, federation=8192, batch=False)
        rj = tag_realtime(js, machine, 0.1, seed=0)
        t_k, k = best_of(lambda rj=rj: simulate(rj, "preempt", ck), args.repeat)
        row = {"jobs": len(js), "realtime_jobs": int(rj.rtj.sum()), "kernel_s": t_k,
               "events": k.info["events"], "preemptions": k.info["preemptions"]}
        if n <= args.python_max:
            t_p, p = best_of(lambda rj=rj: old(rj, "preempt", "jit"), 1)
            moved = int(np.count_nonzero(p.start != k.start))
            row.update(python_s=t_p, speedup=t_p / t_k, started_elsewhere=moved)
        rows.append(row)
        print(row, flush=True)
    slope = float(np.polyfit(np.log([r["jobs"] for r in rows]),
                             np.log([r["kernel_s"] for r in rows]), 1)[0])
    machine_desc = f"{platform.processor() or platform.machine()}, {platform.system()}"
    lines = ["| jobs | real-time jobs | events | preemptions | Python simulator (s) | "
             "Numba loop (s) | speed-up | jobs started at another time |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        py = f"{r['python_s']:.2f}" if "python_s" in r else "-"
        sp = f"{r['speedup']:.0f}x" if "speedup" in r else "-"
        same = f"{r['started_elsewhere']:,}" if "started_elsewhere" in r else "-"
        lines.append(f"| {r['jobs']:,} | {r['realtime_jobs']:,} | {r['events']:,} | "
                     f"{r['preemptions']:,} | {py} | {r['kernel_s']:.3f} | {sp} | {same} |")
    text = (
        "# The real-time event loop: speed\n\n"
        f"Generated by `python benchmarks/realtime_speed.py` on "
        f"{datetime.date.today().isoformat()} ({machine_desc}, one process). RICC-2010-2 from "
        f"job {args.start}, release mode, 8,192 nodes, 10% real-time jobs (seed 0), preemption "
        f"with JIT checkpointing, planning on exact run times; best of {args.repeat} runs of "
        "the Numba loop, one of the "
        f"Python simulator of commit {PYTHON_COMMIT}. The last column counts the jobs that "
        "start at another time in the two: the loop's EASY is the core's, whose reservation "
        "counts every job ending at its instant and sees a real-time job waiting for "
        "checkpoint writes on its nodes until its planned end (docs/design.md §12).\n\n"
        + "\n".join(lines) + "\n\n"
        f"Cost exponent of the Numba loop (log-log slope over the job counts): {slope:.2f}.\n")
    atomic_write(out / "realtime_speed.md", text)
    atomic_write(out / "realtime_speed.json", json.dumps(
        {"trace": args.trace, "start": args.start, "rows": rows, "exponent": slope,
         "python_commit": PYTHON_COMMIT, "machine": machine_desc}, indent=2) + "\n")
    print(text)


if __name__ == "__main__":
    main()
