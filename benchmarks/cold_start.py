"""Cold start of the main job (a benchmark, not a test).

Runs ``moga run --gen 3`` (the bundled month, default federation) three times
in a row in fresh processes, against one empty ``NUMBA_CACHE_DIR``: the first
compiles the kernels, the second and third must load every kernel from the
cache. Records each run's wall time, peak memory (``getrusage``: the largest
process, the command's or the one compiling beside it) and the peak of the
processes' memory together (their resident sizes summed, sampled every 0.1 s
from ``/proc``; Linux only), and whether it compiled (the command's compile
notice), and writes ``results/cold_start.json`` and ``results/cold_start.md``::

    python benchmarks/cold_start.py          # one to two minutes on 2 cores
    python benchmarks/cold_start.py --compile-jobs 1  # every compile in the command's process
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
import threading
import time
from datetime import date
from pathlib import Path

from _bench import add_options, out_dir

ROOT = Path(__file__).resolve().parents[1]
TARGETS = {"first_wall_s": 30.0, "first_peak_gb": 0.5, "later_wall_s": 5.0}


def _tree_rss(root: int) -> int | None:
    """Resident bytes of process ``root`` and its descendants (from ``/proc``), or None."""
    parent, rss = {}, {}
    try:
        for d in os.listdir("/proc"):
            if not d.isdigit():
                continue
            try:
                with open(f"/proc/{d}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            parent[int(d)] = int(fields[1])
            rss[int(d)] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return None
    tree, grew = {root}, True
    while grew:
        more = {p for p, pp in parent.items() if pp in tree} - tree
        grew = bool(more)
        tree |= more
    return sum(rss.get(p, 0) for p in tree)


def _one(cache: Path | None, out: Path, gens: int, extra=(), compile_jobs=None) -> dict:
    env = dict(os.environ) if cache is None else dict(os.environ, NUMBA_CACHE_DIR=str(cache))
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    if compile_jobs is not None:
        env["MOGA_COMPILE_JOBS"] = str(compile_jobs)
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "moga", "run", "--gen", str(gens), "--out",
                             str(out), "--no-progress", *extra], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    together = [0]

    def sample():
        while proc.poll() is None:
            together[0] = max(together[0], _tree_rss(proc.pid) or 0)
            time.sleep(0.1)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, stderr = proc.communicate()
    wall = time.perf_counter() - t0
    sampler.join()
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if proc.returncode != 0:
        raise SystemExit(f"moga run failed ({proc.returncode}):\n{stderr}")
    return {"wall_s": wall, "peak_gb": max(peak, before) / 1e6 if peak > before else None,
            "together_gb": together[0] / 1e9 if together[0] else None,
            "compiled": "compiling the kernels once" in stderr,
            "second_process": "in a second process" in stderr}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gen", type=int, default=None, help="generations per run (default 3)")
    ap.add_argument("--compile-jobs", type=int, default=None, metavar="N",
                    help="MOGA_COMPILE_JOBS for the runs (default: the environment's; 1 keeps "
                         "every compile in the command's process)")
    add_options(ap, "one run of 100 jobs x 2 generations against the current cache")
    args = ap.parse_args(argv)
    out = out_dir(args)
    args.gen = args.gen or (2 if args.quick else 3)
    with tempfile.TemporaryDirectory() as tmp:
        cache = None if args.quick else Path(tmp) / "numba-cache"
        extra = ("--n-jobs", "100", "--pop", "10") if args.quick else ()
        runs = []
        for i in range(1 if args.quick else 3):
            runs.append(_one(cache, Path(tmp) / f"run{i}", args.gen, extra, args.compile_jobs))
            print(f"run {i + 1}: {runs[-1]}", flush=True)
    doc = {"date": date.today().isoformat(), "machine": f"{platform.machine()}, "
           f"{os.cpu_count()} CPUs, Python {platform.python_version()}",
           "load_average_at_end": round(os.getloadavg()[0], 2),
           "command": f"moga run --gen {args.gen}", "compile_jobs": args.compile_jobs,
           "runs": runs, "targets": TARGETS}
    print(json.dumps(doc, indent=2), flush=True)
    from moga.outputs import atomic_write

    atomic_write(out / "cold_start.json", json.dumps(doc, indent=2) + "\n")
    rows = ["| run | wall (s) | peak memory (GB) | processes together (GB) | compiled |",
            "|---|---|---|---|---|"]
    for i, r in enumerate(runs):
        peak = "-" if r["peak_gb"] is None else f"{r['peak_gb']:.2f}"
        both = "-" if r["together_gb"] is None else f"{r['together_gb']:.2f}"
        how = ("yes, EASY in a second process" if r["second_process"] else "yes") \
            if r["compiled"] else "no"
        rows.append(f"| {i + 1} | {r['wall_s']:.1f} | {peak} | {both} | {how} |")
    md = [f"# Cold start of `{doc['command']}`", "",
          f"Measured {doc['date']} on {doc['machine']} by `python benchmarks/cold_start.py`: "
          "three runs in fresh processes against one empty Numba cache"
          + ("" if args.compile_jobs is None else f", MOGA_COMPILE_JOBS={args.compile_jobs}")
          + ". Peak memory is the largest process so far (getrusage), so a later run shows '-' "
          "when it stayed below an earlier one; processes together is the peak of their "
          "resident sizes summed (sampled every 0.1 s). Load average (1 min) at the end: "
          f"{doc['load_average_at_end']}.", "",
          *rows, "",
          f"Targets: first run at most {TARGETS['first_wall_s']:.0f} s and "
          f"{TARGETS['first_peak_gb']} GB; later runs at most {TARGETS['later_wall_s']:.0f} s "
          "and no compile.", ""]
    atomic_write(out / "cold_start.md", "\n".join(md))
    print("\n".join(md))
    return 0


if __name__ == "__main__":
    sys.exit(main())
