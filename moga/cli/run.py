"""``moga run``: evolve a makespan-energy Pareto front with NSGA-II."""

from __future__ import annotations

import json
import sys

from ..outputs import atomic_write, output_set
from .common import (
    Interrupt,
    add_ga_args,
    add_workload_args,
    listed,
    load_ga,
    plots,
    pos_float,
    pos_int,
    power_cap,
    settings,
)

HELP = "evolve a makespan-energy Pareto front with NSGA-II"

OUTPUTS = ["front.csv", "run.json", "result.npz", "schedule.csv", "schedule.swf", "front.png",
           "convergence.png", "gantt_knee.png"]

#: How ``moga run`` words each ``stopped_by`` of a run.
STOPPED = {"generations": "the generation budget", "time limit": "the time limit",
           "stagnation": "stagnation", "interrupted": "Ctrl-C",
           "cpu budget": "the CPU budget", "no new child": "no new child in 100 matings"}


def add_arguments(p) -> None:
    add_workload_args(p)
    add_ga_args(p, "moga-out")
    p.add_argument("--backfill", choices=["none", "easy"], default="none",
                   help="decoder: jobs strictly in order (default) or EASY backfilling with "
                        "the chromosome's order as queue priority")
    p.add_argument("--time-limit", type=pos_float("--time-limit"), default=None,
                   metavar="SECONDS", help="stop after this many seconds (besides --gen)")
    p.add_argument("--stagnation", type=pos_int("--stagnation"), default=None,
                   metavar="GENS", help="stop when the hypervolume rose by less than 0.1%% "
                                        "over this many generations")
    p.add_argument("--power-cap", type=power_cap, default=None, metavar="CAP",
                   help="evolve under a power budget: 60%% or 0.6x (of the federation's peak "
                        "power) or 2700W / 2.7kW; a bare number is watts (default: none)")
    p.add_argument("--islands", type=pos_int("--islands"), default=None, metavar="N",
                   help="an island model of N islands, each the search on its own stream of "
                        "the seed, ring migration every 20 generations; --gen counts each "
                        "island's generations (docs/guide/cluster.md)")
    p.add_argument("--cpu-budget", type=pos_float("--cpu-budget"), default=None,
                   metavar="SECONDS",
                   help="CPU seconds the default search aims at (default 900 on a job-set "
                        "of more than 5,000 jobs; given, at any size); ignored, with a "
                        "warning, when --pop, --gen, easy_search, --backfill easy or "
                        "--islands is given (docs/guide/tuning.md)")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="with --islands: the Dask scheduler whose workers run the islands "
                        "(default: this process; needs the sweep extra)")


def _evolve(args, js, fed, params, cpu_budget):
    """``moga.run`` with the command's settings and the CPU budget ``cpu_budget`` (None: the
    default); with ``--islands``, an island run, on the workers of ``--scheduler`` if given
    (docs/guide/cluster.md)."""
    from ..errors import InputError, require
    from ..evolution.runner import run as run_moga

    client = None
    if args.scheduler is not None:
        if args.islands is None:
            raise InputError("--scheduler runs islands on a Dask cluster: pass --islands N too")
        client = require("distributed", "moga run --scheduler", "sweep").Client(args.scheduler)
    if args.islands is not None:
        print(f"{args.islands} islands, ring migration every 20 generations, in "
              + (f"the workers of {args.scheduler}" if client else "this process"), flush=True)
    try:
        with Interrupt() as stop:
            return run_moga(js, fed, seed=args.seed, model=args.model, params=params,
                            progress=not args.no_progress, backfill=args.backfill,
                            time_limit=args.time_limit, stagnation=args.stagnation,
                            interrupt=stop, islands=args.islands, client=client,
                            cpu_budget=cpu_budget)
    finally:
        if client is not None:
            client.close()


def _cpu_budget(args, params):
    """``--cpu-budget``, or None with a warning naming what keeps the size rule from this
    run (:func:`~moga.evolution.sizing.unsized_by`) when it cannot apply."""
    from ..evolution.sizing import unsized_by

    unsized = unsized_by(params, args.backfill, args.islands)
    if args.cpu_budget is None or not unsized:
        return args.cpu_budget
    words = {"islands": "--islands", "backfill": f"--backfill {args.backfill}",
             "archive_size": "archive_size = 0 in --params",
             "pop_size": "--pop" if args.pop is not None else "pop_size in --params",
             "n_gen": "--gen" if args.gen is not None else "n_gen in --params",
             "easy_search": "easy_search in --params"}
    print("moga: warning: --cpu-budget bounds only a run whose search, population and "
          "generations the size rule picks, and this run was given "
          f"{', '.join(words[n] for n in unsized)}: it ignores the budget (bound it with "
          "--gen or --time-limit)", file=sys.stderr)
    return None


def run(args) -> int:
    from ..evolution.sizing import CPU_BUDGET, SMALL_JOBS, applies

    trace, fed, js, params, out = load_ga(args, OUTPUTS)
    # The run needs the job-set only: the whole trace's records (tens of MB on a large
    # trace) are let go before it, its report kept for run.json.
    trace_report = trace.report.as_dict()
    del trace
    shown = params.for_moga(args.backfill)
    cpu_budget = _cpu_budget(args, params)
    if applies(params, args.backfill, args.islands) and (len(js) > SMALL_JOBS
                                                          or cpu_budget is not None):
        budget = CPU_BUDGET if cpu_budget is None else cpu_budget
        search = (f"search, population and generations picked by size for a budget of "
                  f"{budget:g} CPU-s")
    else:
        search = f"pop {shown.pop_size}, {shown.n_gen} generations"
    print(f"{js.name}: {len(js)} jobs on {fed!r}; NSGA-II {search}, model {args.model}, seed "
          f"{args.seed}" + (", EASY decoder" if args.backfill == "easy" else
                            ", searched through EASY" if shown.easy_search
                            and "picked" not in search else ""), flush=True)
    if fed.power_cap is not None:
        print(f"power cap {fed.power_cap / 1e3:.2f} kW ({fed.power_cap / fed.peak_power:.0%} of "
              "peak)", flush=True)
    res = _evolve(args, js, fed, params, cpu_budget)
    choice = res.info.get("default", {})
    if choice.get("rule") == "measured":
        print(f"picked the {choice['search']}, pop {choice['pop_size']}, up to "
              f"{choice['n_gen']} generations (about {choice['estimated_gen']} in the budget): "
              f"one submit-order decode {choice['easy_decode_s']:.3f} CPU-s with "
              f"EASY, {choice['in_order_decode_s']:.4f} in order; EASY search at 50 x 240 "
              f"estimated at {choice['easy_search_cpu_s']:.0f} CPU-s, this run at "
              f"{choice['estimated_cpu_s']:.0f} (run.json: default)", flush=True)
    with output_set(out, "run", settings(args)) as o:
        summary, drawn = _write(args, o, res, trace_report, fed, js)
    k = res.knee()
    km, ke = summary["knee_change_pct"]
    print(f"front: {len(res.F)} points, hypervolume {res.hv:.4f}; knee: makespan "
          f"{res.F[k, 0] / 3600:.2f} h ({km:+.1f}%), energy {res.F[k, 1] / 3.6e9:.4f} MWh "
          f"({ke:+.1f}%) against the submit order{' under EASY' if args.backfill == 'easy' else ''}"
          f"; {summary['generations']} generations (stopped by {STOPPED[summary['stopped_by']]}), "
          f"{res.wall_time:.1f} s ({100 * res.decode_time / res.wall_time:.0f}% decoding)")
    print(f"wrote {out}/front.csv, run.json, result.npz, schedule.csv, schedule.swf (the knee)"
          + listed(drawn))
    if summary["partial"]:
        print(f"moga: interrupted after {summary['generations']} generations; {out}/run.json is "
              "marked partial", file=sys.stderr)
        return 130
    return 0


def _front_csv(res) -> str:
    k, submit = res.knee(), res.reference
    rows = ["index,makespan_s,energy_J,makespan_h,energy_MWh,makespan_change_pct,"
            "energy_change_pct,knee"]
    for i, (m, e) in enumerate(res.F):
        rows.append(f"{i},{m:.6f},{e:.6f},{m / 3600:.6f},{e / 3.6e9:.6f},"
                    f"{100 * (m / submit[0] - 1):.4f},{100 * (e / submit[1] - 1):.4f},{int(i == k)}")
    return "\n".join(rows) + "\n"


def _write(args, out, res, trace_report, fed, js):
    """Write the run's files and plots through the output set ``out``; returns ``(summary,
    plots written)``."""
    from ..plot import plot_convergence, plot_front, plot_gantt

    atomic_write(out / "front.csv", _front_csv(res))
    summary = res.summary()
    summary["trace_report"] = trace_report
    summary["jobset_report"] = js.report
    summary["federation_spec"] = fed.to_dict()
    atomic_write(out / "run.json", json.dumps(summary, indent=2, default=str) + "\n")
    res.save(out / "result.npz")
    k = res.knee()
    knee = res.schedule(k)
    knee.to_csv(out / "schedule.csv")
    knee.to_swf(out / "schedule.swf")
    drawn = plots([
        ("front.png", lambda: plot_front(res.F, baselines={"submit order": res.reference},
                                         knee=k, path=out / "front.png",
                                         title=f"{js.name}, {len(js)} jobs ({args.model})")),
        ("convergence.png", lambda: plot_convergence(res.history, path=out / "convergence.png")),
        ("gantt_knee.png", lambda: plot_gantt(knee, path=out / "gantt_knee.png")),
    ])
    return summary, drawn
