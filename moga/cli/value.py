"""``moga value``: the value-function workload's online heuristics against the best known
value and an upper bound."""

from __future__ import annotations

import json

from ..model.platform import Federation
from ..outputs import atomic_write, output_set
from .common import (
    add_workload_args,
    bounded,
    listed,
    plots,
    prepare_out,
    read_trace,
    seed,
    settings,
    step_lines,
    write_schedules,
)

HELP = "value-function workload: online heuristics against the best known value (GA) and an " \
       "upper bound"


def add_arguments(p) -> None:
    add_workload_args(p, power=None, kill=False)
    p.add_argument("--value-seed", type=seed, default=0, help="seed of the value functions")
    p.add_argument("--pop", type=bounded("--pop", "pop_size"), default=50, help="GA population (default 50)")
    p.add_argument("--gen", type=bounded("--gen", "n_gen"), default=40,
                   help="GA generations (default 40)")
    p.add_argument("--seed", type=seed, default=1, help="GA seed (default 1)")
    p.add_argument("--out", default="moga-value", help="output folder (default: moga-value)")
    p.add_argument("--no-progress", action="store_true",
                   help="no per-step progress lines")


def _table(c) -> str:
    lines = [f"{'algorithm':<18} {'value':>10} {'% best known':>12} {'% upper bound':>13} "
             f"{'completed':>9}"]
    for row in c.rows:
        lines.append(f"{row['algorithm']:<18} {row['value']:>10.1f} "
                     f"{row['pct_of_best_known']:>12.1f} {row['pct_of_upper_bound']:>13.1f} "
                     f"{row['completed']:>9d}")
    lines.append(f"{'upper bound':<18} {c.upper_bound:>10.1f}   (maximum, sum of v_start: "
                 f"{c.max_value:.1f})")
    return "\n".join(lines)


def run(args) -> int:
    from ..value import attach_values, compare_value

    out = prepare_out(args.out, ["value.csv", "value.json", "value_over_time.png",
                                 "value_by_class.png"], command="value")
    trace = read_trace(args)
    fed = Federation.load(args.federation, auto_nodes=trace.auto_nodes)
    # Jobs run inside one cluster: the largest cluster bounds the width.
    js = trace.jobset(start=args.start, n_jobs=args.n_jobs, days=args.days,
                      federation=int(fed.nodes.max()), wide=args.wide, seed=args.attr_seed,
                      batch=False)
    js = attach_values(js, seed=args.value_seed)
    print(f"{js.name}: {len(js)} jobs ({js.report['wide_dropped']} wider than the largest "
          f"cluster dropped) on {fed!r}; best-known GA pop {args.pop} x {args.gen}", flush=True)
    c = compare_value(js, fed, pop_size=args.pop, n_gen=args.gen, seed=args.seed,
                      progress=step_lines(not args.no_progress, ""))
    with output_set(out, "value", settings(args)) as o:
        atomic_write(o / "value.csv", c.to_csv())
        atomic_write(o / "value.json", json.dumps(
            {"jobset": js.name, "n_jobs": len(js), "federation": fed.name, "rows": c.rows,
             "best_known": c.best_known.value, "upper_bound": c.upper_bound,
             "max_value": c.max_value,
             "by_class": {k: s.value_by_class() for k, s in c.schedules.items()}},
            indent=2) + "\n")
        print(_table(c))
        drawn = _plots(o, c, js)
        sched_dirs = write_schedules(o, {k: v.schedule() for k, v in c.schedules.items()})
    print(f"wrote {out}/value.csv, value.json, {sched_dirs} (schedule.csv and schedule.swf of "
          "each algorithm; the jobs it never ran are REJECTED)" + listed(drawn))
    return 0


def _plots(out, c, js):
    from ..plot import plot_value_by_class, plot_value_over_time
    from ..value import DEFAULT_CLASSES

    names = [cl.name for cl in DEFAULT_CLASSES]
    return plots([
        ("value_over_time.png", lambda: plot_value_over_time(
            c.schedules, path=out / "value_over_time.png", title=js.name)),
        ("value_by_class.png", lambda: plot_value_by_class(
            c.schedules, names, path=out / "value_by_class.png", title=js.name)),
    ])
