"""``moga compare``: the baselines and MOGA on one job-set."""

from __future__ import annotations

import json

from ..outputs import atomic_write, output_set
from .common import (
    add_ga_args,
    add_workload_args,
    listed,
    load_ga,
    plots,
    settings,
    step_lines,
    write_schedules,
)

HELP = "baselines (FCFS, EASY, GA-MF, random search, ...) and MOGA on one job-set"


def add_arguments(p) -> None:
    add_workload_args(p)
    add_ga_args(p, "moga-compare")
    p.add_argument("--algorithms", nargs="+", default=None,
                   help="a subset: FCFS EASY FCFS-greenest EASY-greenest MOGA "
                        "'MOGA without blacklist' 'random search' GA-MF")


def run(args) -> int:
    from ..baselines import compare

    trace, fed, js, params, out = load_ga(args, ["compare.csv", "compare.json", "compare.png"])
    shown = params.for_moga()
    print(f"{js.name}: {len(js)} jobs on {fed!r}; model {args.model}, MOGA pop "
          f"{shown.pop_size} x {shown.n_gen} generations, seed {args.seed}", flush=True)
    c = compare(js, fed, seed=args.seed, model=args.model, params=params,
                algorithms=args.algorithms, progress=not args.no_progress,
                on_algorithm=step_lines(not args.no_progress, ""))
    with output_set(out, "compare", settings(args)) as o:
        atomic_write(o / "compare.csv", c.to_csv())
        sched_dirs = write_schedules(o, {name: r.schedule(r.knee()) for name, r in c.results.items()})
        atomic_write(o / "compare.json", json.dumps(
            {"jobset": js.name, "n_jobs": len(js), "model": args.model, "rows": c.rows,
             "reference": c.reference.tolist(), **c.info,
             "fronts": {k: v.tolist() for k, v in c.fronts.items()}}, indent=2) + "\n")
        drawn = _plot(args, o, c, js)
    print(c.table())
    print(f"wrote {out}/compare.csv, compare.json, {sched_dirs} (schedule.csv and schedule.swf "
          "of each algorithm's knee)" + listed(drawn))
    return 0


def _plot(args, out, c, js):
    from ..plot import plot_front

    fronts = dict(c.fronts)
    main_front = fronts.pop("MOGA", None)
    if main_front is None and fronts:
        main_front = fronts.pop(next(iter(fronts)))
    if main_front is None:
        return []
    return plots([("compare.png", lambda: plot_front(
        main_front, baselines=c.points, fronts=fronts, path=out / "compare.png",
        title=f"{js.name}, {len(js)} jobs ({args.model})",
        mode="batch" if js.report.get("batch", True) else "release"))])
