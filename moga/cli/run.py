"""``moga run``: evolve a makespan-energy Pareto front with NSGA-II."""

from __future__ import annotations

import json
import os
import shutil
import sys

from ..outputs import atomic_write, output_set
from .common import (
    Interrupt,
    add_ga_args,
    add_workload_args,
    bounded,
    listed,
    load_ga,
    plots,
    power_cap,
    settings,
)

HELP = "evolve a makespan-energy Pareto front with NSGA-II"

OUTPUTS = ["front.csv", "run.json", "result.npz", "search.npz", "schedule.csv", "schedule.swf",
           "front.png", "convergence.png", "gantt_knee.png"]

#: The default output folder (``--out``).
OUT_DEFAULT = "moga-out"
#: ``moga run`` saves the search state every this many generations (``--checkpoint``) ...
CHECKPOINT_GEN = 25
#: ... and after any generation that ends this many seconds after the last save.
CHECKPOINT_S = 300.0
#: The file of the search state in the output folder (``--resume``).
STATE_FILE = "search.npz"

#: How ``moga run`` words each ``stopped_by`` of a run.
STOPPED = {"generations": "the generation budget", "time limit": "the time limit",
           "stagnation": "stagnation", "interrupted": "Ctrl-C",
           "cpu budget": "the CPU budget", "no new child": "no new child in 100 matings",
           "cluster lost": "the loss of the Dask cluster"}


def add_arguments(p) -> None:
    add_workload_args(p)
    add_ga_args(p, OUT_DEFAULT)
    p.add_argument("--backfill", choices=["none", "easy"], default="none",
                   help="decoder: jobs strictly in order (default) or EASY backfilling with "
                        "the chromosome's order as queue priority")
    p.add_argument("--objectives", type=_objectives, default=None, metavar="A,B[,C]",
                   help="two or three objectives to minimise, from "
                        + ", ".join(_catalogue()) + " (default makespan,energy; "
                        "docs/guide/objectives.md)")
    p.add_argument("--time-limit", type=bounded("--time-limit", "time_limit"), default=None,
                   metavar="SECONDS", help="stop after this many seconds (besides --gen)")
    p.add_argument("--stagnation", type=bounded("--stagnation", "stagnation"), default=None,
                   metavar="GENS", help="stop when the hypervolume rose by less than 0.1%% "
                                        "over this many generations")
    p.add_argument("--power-cap", type=power_cap, default=None, metavar="CAP",
                   help="evolve under a power budget: 60%% or 0.6x (of the federation's peak "
                        "power) or 2700W / 2.7kW; a bare number is watts (default: none)")
    from ..evolution.islands import MAX_ISLANDS

    p.add_argument("--islands", type=bounded("--islands", "islands"), default=None,
                   metavar="N",
                   help=f"an island model of N islands (at most {MAX_ISLANDS:,}), each the "
                        "search on its own stream of the seed, ring migration every 20 "
                        "generations; --gen counts each island's generations "
                        "(docs/guide/cluster.md)")
    p.add_argument("--cpu-budget", type=bounded("--cpu-budget", "cpu_budget"), default=None,
                   metavar="SECONDS",
                   help="CPU seconds the default search aims at (default 900 on a job-set "
                        "of more than 5,000 jobs; given, at any size); ignored, with a "
                        "warning, when --pop, --gen, easy_search, --backfill easy or "
                        "--islands is given (docs/guide/tuning.md)")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="a Dask scheduler: with --islands its workers run the islands, "
                        "without, they decode each generation of the one population (the "
                        "same front; default: this process; needs the sweep extra)")
    p.add_argument("--resume", default=None, metavar="DIR",
                   help="continue the run whose search state DIR/search.npz holds (saved "
                        "every --checkpoint generations, on Ctrl-C and at the end), with the "
                        "same workload and options; --out left at its default writes into "
                        "DIR. The front is the uninterrupted run's, bit for bit")
    p.add_argument("--checkpoint", type=bounded("--checkpoint", "checkpoint"), default=CHECKPOINT_GEN,
                   metavar="GENS",
                   help=f"save the search state to OUT/search.npz every GENS generations "
                        f"(default {CHECKPOINT_GEN}) and at least every "
                        f"{CHECKPOINT_S:g} s")


def _evolve(args, js, fed, params, cpu_budget, out):
    """``moga.run`` with the command's settings and the CPU budget ``cpu_budget`` (None: the
    default), its search state saved to ``out`` as it goes (``--checkpoint``) or continued
    from ``--resume``; with ``--islands``, an island run, on the workers of ``--scheduler``
    if given, else each generation decoded there (docs/guide/cluster.md). Returns the
    result."""
    from ..errors import require

    client = None
    if args.scheduler is not None:
        client = require("distributed", "moga run --scheduler", "sweep").Client(args.scheduler)
    if args.islands is not None:
        print(f"{args.islands} islands, ring migration every 20 generations, in "
              + (f"the workers of {args.scheduler}" if client else "this process"), flush=True)
    elif client is not None:
        print(f"decoding each generation on the workers of {args.scheduler}", flush=True)
    try:
        with Interrupt(armed=False) as stop:
            search = _search(args, js, fed, params, cpu_budget, stop, client)
            if search.n_gen == 0:
                _print_choice(search.choice.as_dict())
            _step(search, out / STATE_FILE, args.checkpoint, stop)
            return search.result()  # _step saved the final state first
    finally:
        if client is not None:
            client.close()


def _search(args, js, fed, params, cpu_budget, stop, client):
    """The command's :class:`~moga.evolution.search.Search`: new, or continued from
    ``--resume`` (refused, naming the difference, when the workload or options differ)."""
    from pathlib import Path

    from ..errors import InputError
    from ..evolution.search import Search, load_state

    options = dict(seed=args.seed, model=args.model, params=params, backfill=args.backfill,
                   time_limit=args.time_limit, stagnation=args.stagnation,
                   cpu_budget=cpu_budget, islands=args.islands, **_objectives_kw(args))
    where = ({"client": client} if args.islands is not None else {"evaluator": client})
    if args.resume is None:
        return Search(js, fed, progress=not args.no_progress, interrupt=stop, **where,
                      **options)
    path = Path(args.resume) / STATE_FILE
    if not path.is_file():
        raise InputError(f"--resume {args.resume}: no saved search there ({path} is missing; "
                         f"moga run saves it every --checkpoint generations)")
    state = load_state(path)
    try:
        search = Search.from_state(state, jobset=js, federation=fed,
                                   progress=not args.no_progress, interrupt=stop, **where,
                                   **options)
    except ValueError as e:
        raise InputError(f"--resume {args.resume}: {e}") from None
    print(f"resuming {path}: generation {search.n_gen}"
          + (f", already stopped by {STOPPED[search.stopped_by]}" if search.done else ""),
          flush=True)
    return search


def _step(search, path, every: int, stop=None) -> None:
    """Step ``search`` until it is done, saving its state to ``path`` every ``every``
    generations, after a generation that ends :data:`CHECKPOINT_S` seconds after the last
    save, and at the end (atomically: the file is always a whole state). ``stop`` (an
    :class:`Interrupt`) is armed once the search has a generation to write."""
    import time

    last = [search.n_gen, time.monotonic()]
    if stop is not None:
        stop.armed = search.n_gen > 0

    def checkpoint():
        if stop is not None:
            stop.armed = True
        if search.n_gen - last[0] >= every or time.monotonic() - last[1] >= CHECKPOINT_S:
            search.save(path)
            last[:] = [search.n_gen, time.monotonic()]

    search.until_done(checkpoint)
    if search.n_gen:  # an island run interrupted before its first epoch has no state
        search.save(path)  # the last state, which the output set takes in


def _print_choice(choice: dict) -> None:
    """The size rule's pick and its estimate, before the first generation."""
    if choice.get("rule") != "measured":
        return
    print(f"picked the {choice['search']}, pop {choice['pop_size']}, up to "
          f"{choice['n_gen']} generations, about {choice['estimated_gen']} in the budget "
          f"(estimated {choice['estimated_cpu_s']:.0f} CPU-s): one submit-order decode "
          f"{choice['easy_decode_s']:.3f} CPU-s with EASY, {choice['in_order_decode_s']:.4f} "
          f"in order; EASY search at 50 x 240 estimated at "
          f"{choice['easy_search_cpu_s']:.0f} CPU-s (run.json: default)", flush=True)


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

    if args.resume is not None and args.out == OUT_DEFAULT:
        # --out left at its default: the resumed run writes into its own folder.
        args.out = args.resume
        print(f"moga: note: writing into {args.resume}, the resumed run's folder (--out to "
              "choose another)", file=sys.stderr, flush=True)
    if args.scheduler is not None:  # a missing extra is the first and only line
        from ..errors import require

        require("distributed", "moga run --scheduler", "sweep")
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
    res = _evolve(args, js, fed, params, cpu_budget, out)
    with output_set(out, "run", settings(args)) as o:
        summary, drawn = _write(args, o, res, trace_report, fed, js)
        if (out / STATE_FILE).is_file():
            # The last state, saved by _step, joins the set (a link: no second copy; the
            # saved file stays should the set fail).
            try:
                os.link(out / STATE_FILE, o / STATE_FILE)
            except OSError:
                shutil.copyfile(out / STATE_FILE, o / STATE_FILE)
    print(f"front: {len(res.F)} points, hypervolume {res.hv:.4f}; knee: {_knee_words(res)} "
          f"against the submit order{' under EASY' if args.backfill == 'easy' else ''}"
          f"; {summary['generations']} generations (stopped by {STOPPED[summary['stopped_by']]}), "
          f"{res.wall_time:.1f} s ({_decoding_words(res)})")
    print(f"wrote {out}/front.csv, run.json, result.npz, "
          + "search.npz, schedule.csv, schedule.swf (the knee)"
          + listed(drawn))
    if summary["partial"]:
        why = ("interrupted" if summary["stopped_by"] == "interrupted"
               else "the Dask cluster was lost")
        print(f"moga: {why} after {summary['generations']} generations; {out}/run.json is "
              f"marked partial; continue it with the same options and --resume {out}",
              file=sys.stderr)
        return 130 if summary["stopped_by"] == "interrupted" else 1
    return 0


def _catalogue():
    """The catalogue's objective names."""
    from ..model.objectives import CATALOGUE

    return list(CATALOGUE)


def _objectives(text: str) -> tuple:
    """``--objectives``: two or three catalogue names, comma-separated."""
    import argparse

    from ..model.objectives import check_objectives

    try:
        return check_objectives(text, counts=(2, 3))
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _objectives_kw(args) -> dict:
    """``{"objectives": ...}`` when ``--objectives`` is given, else nothing (the default)."""
    return {} if args.objectives is None else {"objectives": args.objectives}


def _decoding_words(res) -> str:
    """The time spent decoding: a share of the wall time, or for islands, which decode in
    parallel (threads or Dask workers), the seconds summed over them, which may exceed
    the wall time."""
    n = res.info.get("islands") if isinstance(res.info, dict) else None
    if n:
        return f"{res.decode_time:.1f} s decoding summed over the {n} islands"
    return f"{100 * res.decode_time / max(res.wall_time, 1e-9):.0f}% decoding"


def _knee_words(res) -> str:
    """The knee's objectives and their change against the submit order, e.g. ``makespan
    12.34 h (-5.0%), energy 1.2345 MWh (-1.2%)``."""
    from ..model.objectives import CATALOGUE

    k = res.knee()
    return ", ".join(f"{name} {CATALOGUE[name].shown(v)} ({100 * (v / r - 1):+.1f}%)"
                     for name, v, r in zip(res.objectives, res.F[k], res.reference, strict=True))


def _front_csv(res) -> str:
    """``front.csv``: per member its index, each objective in its unit (``makespan_s``), in
    its display unit where that differs (``makespan_h``), its change against the submit
    order in percent, and whether it is the knee."""
    from ..model.objectives import CATALOGUE

    k, submit = res.knee(), res.reference
    objs = [CATALOGUE[name] for name in res.objectives]
    shown = [o for o in objs if o.display != (o.unit, 1.0)]
    head = (["index"] + [o.column for o in objs]
            + [f"{o.name}_{o.display[0].replace(' ', '.')}" for o in shown]
            + [f"{o.name}_change_pct" for o in objs] + ["knee"])
    rows = [",".join(head)]
    for i, f in enumerate(res.F):
        rows.append(",".join([str(i)] + [f"{v:.6f}" for v in f]
                             + [f"{f[objs.index(o)] * o.display[1]:.6f}" for o in shown]
                             + [f"{100 * (v / r - 1):.4f}" for v, r in zip(f, submit, strict=True)]
                             + [str(int(i == k))]))
    return "\n".join(rows) + "\n"


def _front_plot(res, path, title):
    """``front.png``: the front against the submit order, as a scatter for two objectives
    and a scatter matrix for three."""
    from ..plot import plot_front, plot_front_matrix

    if len(res.objectives) == 2:
        return plot_front(res.F, objectives=res.objectives, baselines={
            "submit order": res.reference}, knee=res.knee(), path=path, title=title)
    return plot_front_matrix(res.F, res.objectives, baselines={"submit order": res.reference},
                             knee=res.knee(), path=path, title=title)


def _write(args, out, res, trace_report, fed, js):
    """Write the run's files and plots through the output set ``out``; returns ``(summary,
    plots written)``."""
    from ..plot import plot_convergence, plot_gantt

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
        ("front.png", lambda: _front_plot(res, out / "front.png",
                                          f"{js.name}, {len(js)} jobs ({args.model})")),
        ("convergence.png", lambda: plot_convergence(res.history, path=out / "convergence.png")),
        ("gantt_knee.png", lambda: plot_gantt(knee, path=out / "gantt_knee.png")),
    ])
    return summary, drawn
