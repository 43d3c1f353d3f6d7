"""Cold start of the main job (a benchmark, not a test).

Runs ``moga run --gen 3`` (the bundled month, default federation) three times
in a row in fresh processes, against one empty ``NUMBA_CACHE_DIR``: the first
compiles the kernels, the second and third must load every kernel from the
cache. Records each run's wall time and peak memory (``getrusage`` of the
child) and whether it compiled (the command's compile notice), and writes
``results/cold_start.json`` and ``results/cold_start.md``::

    python benchmarks/cold_start.py          # one to two minutes on 2 cores
    python benchmarks/cold_start.py --quick  # one small warm run, to a temporary folder

The targets (issue 65), on a quiet 2-core machine: the first run at most 30 s
and 0.5 GB, every later run at most 5 s.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

from _bench import add_options, out_dir

ROOT = Path(__file__).resolve().parents[1]
TARGETS = {"first_wall_s": 30.0, "first_peak_gb": 0.5, "later_wall_s": 5.0}


def _one(cache: Path | None, out: Path, gens: int, extra=()) -> dict:
    env = dict(os.environ) if cache is None else dict(os.environ, NUMBA_CACHE_DIR=str(cache))
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "moga", "run", "--gen", str(gens), "--out",
                        str(out), "--no-progress", *extra], env=env, capture_output=True,
                       text=True)
    wall = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if r.returncode != 0:
        raise SystemExit(f"moga run failed ({r.returncode}):\n{r.stderr}")
    return {"wall_s": wall, "peak_gb": max(peak, before) / 1e6 if peak > before else None,
            "compiled": "compiling the kernels once" in r.stderr}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gen", type=int, default=None, help="generations per run (default 3)")
    add_options(ap, "one run of 100 jobs x 2 generations against the current cache")
    args = ap.parse_args(argv)
    out = out_dir(args)
    args.gen = args.gen or (2 if args.quick else 3)
    with tempfile.TemporaryDirectory() as tmp:
        cache = None if args.quick else Path(tmp) / "numba-cache"
        extra = ("--n-jobs", "100", "--pop", "10") if args.quick else ()
        runs = []
        for i in range(1 if args.quick else 3):
            runs.append(_one(cache, Path(tmp) / f"run{i}", args.gen, extra))
            print(f"run {i + 1}: {runs[-1]}", flush=True)
    doc = {"date": date.today().isoformat(), "machine": f"{platform.machine()}, "
           f"{os.cpu_count()} CPUs, Python {platform.python_version()}",
           "load_average_at_end": round(os.getloadavg()[0], 2),
           "command": f"moga run --gen {args.gen}", "runs": runs, "targets": TARGETS}
    print(json.dumps(doc, indent=2), flush=True)
    from moga.outputs import atomic_write

    atomic_write(out / "cold_start.json", json.dumps(doc, indent=2) + "\n")
    rows = ["| run | wall (s) | peak memory (GB) | compiled |", "|---|---|---|---|"]
    for i, r in enumerate(runs):
        peak = "-" if r["peak_gb"] is None else f"{r['peak_gb']:.2f}"
        rows.append(f"| {i + 1} | {r['wall_s']:.1f} | {peak} | {'yes' if r['compiled'] else 'no'} |")
    md = [f"# Cold start of `{doc['command']}`", "",
          f"Measured {doc['date']} on {doc['machine']} by `python benchmarks/cold_start.py`: "
          "three runs in fresh processes against one empty Numba cache. Peak memory is the "
          "largest child so far (getrusage), so a later run shows '-' when it stayed below an "
          f"earlier one. Load average (1 min) at the end: {doc['load_average_at_end']}.", "",
          *rows, "",
          f"Targets: first run at most {TARGETS['first_wall_s']:.0f} s and "
          f"{TARGETS['first_peak_gb']} GB; later runs at most {TARGETS['later_wall_s']:.0f} s "
          "and no compile.", ""]
    atomic_write(out / "cold_start.md", "\n".join(md))
    print("\n".join(md))
    return 0


if __name__ == "__main__":
    sys.exit(main())
