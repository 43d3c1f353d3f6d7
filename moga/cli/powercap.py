"""``moga powercap``: power-capped dispatching at several caps."""

from __future__ import annotations

import json
import sys

import numpy as np

from ..errors import InputError
from ..outputs import atomic_write, output_set
from .common import (
    add_workload_args,
    bounded,
    cap_fraction,
    cap_parser,
    listed,
    load_workload,
    plots,
    prepare_out,
    seed,
    settings,
    step_lines,
    write_schedules,
)

#: The largest ``--power-error`` of ``moga powercap`` (log-space standard deviation).
MAX_POWER_ERROR = 2.0

HELP = "power-capped dispatching: EASY, PRB and hybrid CP at several caps (release mode)"


def add_arguments(p) -> None:
    add_workload_args(p, power="lognormal")
    p.add_argument("--caps", type=cap_parser("--caps", "x"), nargs="+",
                   default=[("x", 1.0), ("x", 0.8), ("x", 0.6), ("x", 0.4)], metavar="CAP",
                   help="caps: 60%% or 0.6x (of the federation's peak power) or 2700W / 2.7kW; "
                        "a bare number is a fraction of peak (default: 1.0 0.8 0.6 0.4)")
    p.add_argument("--dispatchers", nargs="+", choices=["easy", "prb", "hybrid"],
                   default=["easy", "prb", "hybrid"], help="default: all three")
    p.add_argument("--model", choices=["fluid", "at_start"], default="fluid",
                   help="execution model (default: fluid)")
    p.add_argument("--rule", choices=["fastest", "greenest", "consolidate"], default="fastest",
                   help="the dispatchers' allocation rule: fastest clusters first, greenest "
                        "first, or consolidate (the fullest cluster that holds the job; the "
                        "seed's and AccaSim's order) (default: fastest)")
    p.add_argument("--window", type=bounded("--window", "cp_window"), default=None,
                   help="hybrid: waiting jobs in the CP model per event (default 16)")
    p.add_argument("--cp-time", type=bounded("--cp-time", "time_limit"), default=None,
                   help="hybrid: CP-SAT deterministic time limit per event (default 0.01)")
    p.add_argument("--cp-passes", type=bounded("--cp-passes", "cp_passes"), default=None,
                   help="the hybrid's solves per event: conflict sets the mapper meets are fed "
                        "back as cuts until none is left (default 1: no feedback)")
    p.add_argument("--estimates", choices=["exact", "requested"], default="exact",
                   help="what the dispatchers plan with: exact run times or the requested "
                        "(walltime) ones (default: exact)")
    _add_power_knowledge(p)
    p.add_argument("--no-uncapped", action="store_true",
                   help="skip the uncapped baseline runs (by default each dispatcher also runs "
                        "without a cap, and each capped row counts the jobs its cap moved)")
    p.add_argument("--out", default="moga-powercap", help="output folder (default: moga-powercap)")
    p.add_argument("--no-progress", action="store_true", help="no per-run progress lines")


def _add_power_knowledge(p) -> None:
    """What the dispatchers know of the jobs' power."""
    p.add_argument("--power-error", type=bounded("--power-error", "power_error"), default=0.0,
                   help="plan on power factors predicted with this log-normal error (log-space "
                        "standard deviation, e.g. 0.1); the metrics use the real draw (default "
                        "0: the dispatchers know each job's power)")
    p.add_argument("--power-seed", type=seed, default=0,
                   help="seed of the power prediction errors (default 0)")
    p.add_argument("--power-margin", type=bounded("--power-margin", "power_margin"), default=0.0,
                   help="share of each cap the dispatchers keep free, a safety margin against "
                        "prediction errors; metrics are judged against the caps (default 0)")


def run(args) -> int:
    from ..powercap import CPOptions, cap_study
    from ..powercap.study import study_table

    args.release = True  # dispatchers are online: jobs arrive at their submit times
    _check_hybrid_options(args)
    if "hybrid" in args.dispatchers:  # before any dispatch, not at the first hybrid one
        from ..errors import require

        require("ortools.sat.python.cp_model", "the hybrid dispatcher (--dispatchers hybrid)",
                "cp")
    out = prepare_out(args.out, ["powercap.md", "powercap.json", "power.png", "wqt.png"],
                      command="powercap")
    trace, fed, js = load_workload(args)
    caps = [cap_fraction(c, fed) for c in args.caps]
    _check_caps(caps, args)
    print(f"{js.name}: {len(js)} jobs (release mode) on {fed!r}, peak {fed.peak_power / 1e3:.1f} "
          f"kW, idle {fed.idle_power / 1e3:.1f} kW; caps {', '.join(f'{c:.3g}' for c in caps)} "
          "x peak", flush=True)
    line = step_lines(not args.no_progress, "")

    def say(c, d):
        line(f"{'uncapped' if c is None else f'cap {c:.2f} x peak'}: {d}")

    results = cap_study(js, fed, caps=caps, dispatchers=args.dispatchers, model=args.model,
                        cp=_cp_options(CPOptions, args), progress=say,
                        estimates=args.estimates, uncapped=not args.no_uncapped,
                        power_error=args.power_error, power_seed=args.power_seed,
                        power_margin=args.power_margin, rule=args.rule)
    table = study_table(results)
    with output_set(out, "powercap", settings(args)) as o:
        atomic_write(o / "powercap.md", f"# Power-capped dispatching: {js.name}\n\n"
                     f"The dispatchers plan on {args.estimates} run times and {_knows(args)}."
                     f"\n\n{table}\n")
        sched_dirs = write_schedules(o, {
            (f"{r.dispatcher}-uncapped" if r.federation.power_cap is None else
             f"{r.dispatcher}-cap{r.federation.power_cap / r.federation.peak_power:.3g}"):
            r for r in results})
        atomic_write(o / "powercap.json", _json(args, js, fed, results))
        drawn = _plots(o, results, min(caps))
    print(table)
    print(f"wrote {out}/powercap.md, powercap.json, {sched_dirs} (schedule.csv and schedule.swf "
          "per dispatcher and cap)" + listed(drawn))
    return 0


def _check_hybrid_options(args) -> None:
    """Refuse the hybrid's options when no hybrid dispatcher runs (they would be ignored)."""
    given = [o for o, v in (("--window", args.window), ("--cp-time", args.cp_time),
                            ("--cp-passes", args.cp_passes)) if v is not None]
    if given and "hybrid" not in args.dispatchers:
        raise InputError(f"{', '.join(given)}: for --dispatchers hybrid only, not "
                         f"{' '.join(args.dispatchers)}")


def _cp_options(CPOptions, args):
    """The hybrid's CP options: those given, the library's defaults for the others."""
    return CPOptions(**{k: v for k, v in (("window", args.window),
                                          ("time_limit", args.cp_time),
                                          ("passes", args.cp_passes)) if v is not None})


def _check_caps(caps, args) -> None:
    """Warn of a cap that can never bind; refuse a power error too large to mean anything."""
    if max(caps) > 1:
        print(f"moga: warning: --caps {max(caps):.3g} x peak power can never bind (a bare "
              "number is a fraction of peak here: 0.6 or 60% is 60%)", file=sys.stderr,
              flush=True)
    if args.power_error > MAX_POWER_ERROR:
        raise InputError(f"--power-error {args.power_error:g}: a log-space standard deviation "
                         f"above {MAX_POWER_ERROR:g} draws power factors off by more than "
                         f"e^{3 * MAX_POWER_ERROR:g}; give e.g. 0.1")


def _knows(args) -> str:
    """What the dispatchers know of the jobs' power, in words."""
    knows = ("the jobs' power factors" if not args.power_error else
             f"power factors predicted with a log-normal error of {args.power_error:g} "
             f"(seed {args.power_seed}), the metrics from the real draw")
    if args.power_margin:
        knows += f", keeping {args.power_margin:.0%} of each cap free"
    return knows


def _json(args, js, fed, results) -> str:
    rows = [{"dispatcher": r.dispatcher, "cap_W": r.federation.power_cap,
             "wall_s": r.wall_time, **r.metrics.as_dict(),
             **{k: (v.tolist() if hasattr(v, "tolist") else v) for k, v in r.info.items()}}
            for r in results]
    return json.dumps({"jobset": js.name, "estimates": args.estimates,
                       "power_error": args.power_error, "power_seed": args.power_seed,
                       "power_margin": args.power_margin, "jobset_report": js.report,
                       "federation": fed.to_dict(), "runs": rows}, indent=2, default=str) + "\n"


def _plots(out, results, tight):
    """The power and W-Q-T plots, written through the output set ``out``."""
    from ..powercap.study import plot_power, plot_wqt

    def at_tight(r):
        cap = r.federation.power_cap
        return cap is not None and np.isclose(cap / r.federation.peak_power, tight)

    return plots([
        ("power.png", lambda: plot_power([r for r in results if at_tight(r)], out / "power.png")),
        ("wqt.png", lambda: plot_wqt(results, out / "wqt.png")),
    ])
