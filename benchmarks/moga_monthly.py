"""MOGA on three monthly HPC2N job-sets: the knee of the front against the submit order.

For each 30-day window of the HPC2N trace (batch mode, default federation,
the given execution model), runs :func:`moga.run` (its default search and
budget unless ``--pop`` / ``--gen`` say otherwise, seed 1) and reports the
knee of the front as percent change in makespan and energy against the
submit order with an empty blacklist, decoded on the same model.

Writes ``results/moga_monthly.md``, ``.json`` and one front plot per job-set::

    python benchmarks/moga_monthly.py [--trace HPC2N-2002-2.2-cln.swf.gz]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from _bench import add_options, out_dir

import moga
from moga.model.workload import default_trace_path
from moga.outputs import atomic_write
from moga.plot import plot_front

ROOT = Path(__file__).resolve().parents[1]
#: Resolved by moga.model.traces: MOGA_TRACES, then ../shared/traces, then the current folder.
DEFAULT_TRACE = "HPC2N-2002-2.2-cln.swf.gz"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trace", default=DEFAULT_TRACE,
                    help="SWF trace: a path, or a file name looked up by moga.resolve_trace")
    ap.add_argument("--windows", type=int, nargs="+", default=[1, 2, 3],
                    help="which 30-day windows of the trace (default: the 2nd to 4th)")
    ap.add_argument("--model", default="fluid", choices=["fluid", "at_start"])
    ap.add_argument("--pop", type=int, default=None,
                    help="population size (default: moga.run's)")
    ap.add_argument("--gen", type=int, default=None,
                    help="generations (default: moga.run's)")
    ap.add_argument("--seed", type=int, default=1)
    add_options(ap, "60 jobs of the bundled month, population 8 x 2 generations")
    args = ap.parse_args(argv)
    out = out_dir(args)
    if args.quick:
        args.trace, args.windows = str(default_trace_path()), [0]
        args.pop, args.gen = args.pop or 8, args.gen or 2
    args.trace = str(moga.resolve_trace(args.trace))

    trace = moga.load_swf(args.trace)
    fed = moga.Federation.preset("default")
    starts = trace.windows(days=30)
    rows = []
    for w in args.windows:
        size = {"n_jobs": 60} if args.quick else {"days": 30}
        js = trace.jobset(start=starts[w], federation=fed, seed=0, **size)
        r = moga.run(js, fed, pop_size=args.pop, n_gen=args.gen, seed=args.seed, model=args.model)
        k = r.knee()
        change = 100 * (r.F[k] / r.reference - 1)
        best = 100 * (r.F.min(axis=0) / r.reference - 1)
        row = {"window": w, "jobset": js.name, "n_jobs": len(js),
               "submit_makespan_h": r.reference[0] / 3600, "submit_energy_MWh": r.reference[1] / 3.6e9,
               "knee_makespan_h": r.F[k, 0] / 3600, "knee_energy_MWh": r.F[k, 1] / 3.6e9,
               "knee_makespan_change_pct": change[0], "knee_energy_change_pct": change[1],
               "best_makespan_change_pct": best[0], "best_energy_change_pct": best[1],
               "front_size": len(r.F), "hv": r.hv, "wall_time_s": r.wall_time}
        rows.append(row)
        plot_front(r.F, baselines={"submit order": r.reference}, knee=k,
                   path=out / f"moga_monthly_w{w}.png", title=f"{js.name} ({args.model})")
        print(json.dumps(row), flush=True)

    ga = r.params  # the resolved search and budget of the runs
    search = ("EASY search (in-order front, searched through EASY decodes)" if ga.easy_search
              else "in-order search")
    atomic_write(out / "moga_monthly.json", json.dumps(
        {"trace": Path(args.trace).name, "model": args.model, "pop": ga.pop_size,
         "n_gen": ga.n_gen, "easy_search": ga.easy_search, "seed": args.seed, "rows": rows},
        indent=2) + "\n")
    lines = [
        "# MOGA knee against the submit order, three monthly HPC2N job-sets", "",
        f"`python benchmarks/moga_monthly.py`: {Path(args.trace).name}, 30-day windows "
        f"{args.windows} (batch mode), default federation, `{args.model}` model, NSGA-II, "
        f"{search}, pop {ga.pop_size} x {ga.n_gen} generations, seed {args.seed}. Negative is "
        "better.", "",
        "| window | jobs | submit order: makespan h / energy MWh | knee: makespan h / energy MWh "
        "| knee Δ makespan | knee Δ energy | best Δ makespan on front | best Δ energy on front "
        "| front points | GA time s |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['jobset']} | {r['n_jobs']} | {r['submit_makespan_h']:.1f} / "
            f"{r['submit_energy_MWh']:.2f} | {r['knee_makespan_h']:.1f} / {r['knee_energy_MWh']:.2f} "
            f"| {r['knee_makespan_change_pct']:+.1f}% | {r['knee_energy_change_pct']:+.1f}% "
            f"| {r['best_makespan_change_pct']:+.1f}% | {r['best_energy_change_pct']:+.1f}% "
            f"| {r['front_size']} | {r['wall_time_s']:.0f} |")
    med = np.median([[r["knee_makespan_change_pct"], r["knee_energy_change_pct"]] for r in rows],
                    axis=0)
    lines += ["", f"Median knee change: makespan {med[0]:+.1f}%, energy {med[1]:+.1f}%.", ""]
    atomic_write(out / "moga_monthly.md", "\n".join(lines))
    print(f"wrote {out / 'moga_monthly.md'}")


if __name__ == "__main__":
    main()
