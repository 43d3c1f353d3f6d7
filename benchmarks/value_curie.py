"""Online heuristics against the best known value (GA) and an upper bound on three CEA-Curie windows.

Each window: ``--n-jobs`` jobs from a start index of the CEA-Curie trace, in
release mode, with seeded value functions (``moga.value.attach_values``,
seed 0); jobs wider than the largest cluster are dropped (jobs run inside
one cluster here) and counted. The federation is the ``curie`` preset scaled
down by ``--scale`` (8: 11,664 nodes in the same four clusters), so that the
windows oversubscribe it: with the full 93,312 nodes every heuristic earns
over 99% of the maximum value and there is nothing to compare. Writes
``results/value_curie.md``, ``.json`` and two plots per window::

    python benchmarks/value_curie.py
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
from moga.plot import plot_value_by_class, plot_value_over_time
from moga.value import DEFAULT_CLASSES, attach_values, compare_value

ROOT = Path(__file__).resolve().parents[1]
#: Resolved by moga.model.traces: MOGA_TRACES, then ../shared/traces, then the current folder.
DEFAULT_TRACE = "CEA-Curie-2011-2.1-cln.swf.gz"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trace", default=DEFAULT_TRACE,
                    help="SWF trace: a path, or a file name looked up by moga.resolve_trace")
    ap.add_argument("--starts", type=int, nargs="+", default=[100000, 150000, 200000])
    ap.add_argument("--n-jobs", type=int, default=1000)
    ap.add_argument("--scale", type=int, default=8)
    ap.add_argument("--pop", type=int, default=50)
    ap.add_argument("--gen", type=int, default=40)
    add_options(ap, "60 bundled jobs on the default federation, population 8 x 2 generations")
    args = ap.parse_args(argv)
    out = out_dir(args)
    if args.quick:
        args.trace, args.starts, args.n_jobs = str(default_trace_path()), [0], 60
        args.pop, args.gen = 8, 2
    args.trace = str(moga.resolve_trace(args.trace))

    trace = moga.load_swf(args.trace)
    c = moga.Federation.preset("curie")
    fed = moga.Federation(names=c.names, nodes=c.nodes // args.scale, speed=c.speed,
                          power_busy=c.power_busy, power_idle=c.power_idle, link=c.link,
                          name=f"curie/{args.scale}")
    if args.quick:
        fed = moga.Federation.preset("default")
    names = [k.name for k in DEFAULT_CLASSES]
    record = []
    for start in args.starts:
        js = trace.jobset(start=start, n_jobs=args.n_jobs, federation=int(fed.nodes.max()),
                          wide="drop", batch=False)
        js = attach_values(js, seed=0)
        r = compare_value(js, fed, pop_size=args.pop, n_gen=args.gen, seed=1)
        plot_value_over_time(r.schedules, path=out / f"value_curie_{start}_time.png",
                             title=js.name)
        plot_value_by_class(r.schedules, names, path=out / f"value_curie_{start}_class.png",
                            title=js.name)
        record.append({"jobset": js.name, "start": start, "n_jobs": len(js),
                       "wide_dropped": js.report["wide_dropped"], "rows": r.rows,
                       "best_known": r.best_known.value, "upper_bound": r.upper_bound,
                       "max_value": r.max_value,
                       "by_class": {k: s.value_by_class() for k, s in r.schedules.items()},
                       "ga_wall_s": r.best_known.wall_time, "ga_evals": r.best_known.n_evals})
        print(js.name, [(row["algorithm"], round(row["pct_of_best_known"], 1),
                         round(row["pct_of_upper_bound"], 1)) for row in r.rows], flush=True)
    atomic_write(out / "value_curie.json", json.dumps(record, indent=2) + "\n")
    algos = [row["algorithm"] for row in record[0]["rows"]]
    lines = ["# Value earned on CEA-Curie: online heuristics against the best known value and "
             "an upper bound", "",
             f"`python benchmarks/value_curie.py`: {args.n_jobs} jobs from each start index of "
             f"{Path(args.trace).name}, release mode, value functions seeded 0 (classes "
             f"{', '.join(f'{k.name} {k.share:.0%} v={k.v_start:g}' for k in DEFAULT_CLASSES)}), "
             f"federation `curie` / {args.scale} ({fed.total_nodes} nodes). Best known: a "
             f"post-mortem GA (pop {args.pop} x {args.gen} generations, seeded with the "
             "heuristics' orders), a feasible schedule and so a lower bound of the optimum. "
             "The online heuristics plan on exact run times (they take no requested times). "
             "Upper bound: every job completing as early as it could (at its release on the "
             "fastest cluster that holds it). Percent of the best known (and of the upper "
             "bound):", "",
             "| window | jobs (dropped) | " + " | ".join(algos) + " | upper bound / best known |",
             "|---|---|" + "---|" * (len(algos) + 1)]
    for rec in record:
        cells = [f"{row['pct_of_best_known']:.1f}% ({row['pct_of_upper_bound']:.1f}%)"
                 for row in rec["rows"]]
        lines.append(f"| {rec['jobset']} | {rec['n_jobs']} ({rec['wide_dropped']}) | "
                     + " | ".join(cells)
                     + f" | {rec['upper_bound'] / rec['best_known']:.3f} |")
    med = {a: (np.median([rec["rows"][i]["pct_of_best_known"] for rec in record]),
               np.median([rec["rows"][i]["pct_of_upper_bound"] for rec in record]))
           for i, a in enumerate(algos)}
    lines += ["", "Median percent of the best known (of the upper bound): "
              + ", ".join(f"{a} {v:.1f}% ({u:.1f}%)" for a, (v, u) in med.items()) + ".", ""]
    lines += [f"![value over time](value_curie_{rec['start']}_time.png) "
              f"![by class](value_curie_{rec['start']}_class.png)" for rec in record]
    atomic_write(out / "value_curie.md", "\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
