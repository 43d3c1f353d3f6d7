"""The ``moga`` command."""

from __future__ import annotations

import argparse
import json
import math
import sys
import time

import numpy as np

from .errors import InputError, MissingExtraError
from .model.platform import PRESETS, Federation
from .model.schedule import evaluate
from .model.traces import resolve_trace
from .model.workload import default_trace_path, load_swf
from .outputs import atomic_write, check_writable, safe_name


def _int_arg(name, low):
    """An argparse type: an integer >= ``low``; errors name the option."""
    def parse(text):
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be an integer, got {text!r}") from None
        if v < low:
            raise argparse.ArgumentTypeError(f"{name} must be >= {low}, got {v}")
        return v
    return parse


def _nonneg_int(name):
    return _int_arg(name, 0)


def _pos_int(name):
    return _int_arg(name, 1)


def _float_arg(name, ok, what):
    """An argparse type: a number for which ``ok(v)`` holds; errors name the option."""
    def parse(text):
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a number, got {text!r}") from None
        if not ok(v):
            raise argparse.ArgumentTypeError(f"{name} must be {what}, got {text}")
        return v
    return parse


def _pos_float(name):
    return _float_arg(name, lambda v: 0 < v < float("inf"), "a finite number > 0")


def _nonneg_float(name):
    return _float_arg(name, lambda v: 0 <= v < float("inf"), "a finite number >= 0")


def _fraction(name):
    return _float_arg(name, lambda v: 0 <= v <= 1, "in [0, 1]")


def _seed(text):
    v = _nonneg_int("--seed")(text)
    if v >= 2**32:
        raise argparse.ArgumentTypeError(f"--seed must be < 2**32, got {v}")
    return v


def _trace_path(args):
    return resolve_trace(args.trace) if args.trace else default_trace_path()


def _read_trace(args):
    """The trace of the workload options, read, with the whole-trace warning when no window
    is given."""
    trace = load_swf(_trace_path(args), skip_malformed=args.skip_malformed,
                     max_procs=args.max_procs)
    _check_window(trace, args)
    return trace


#: A job-set of more jobs than this, taken without --n-jobs or --days, gets a warning.
WHOLE_TRACE_WARNING = 5000


def _check_window(trace, args) -> None:
    """Warn before a command works on a whole long trace because no window was given."""
    if args.n_jobs is not None or args.days is not None:
        return
    n = len(trace) - args.start
    if n > WHOLE_TRACE_WARNING:
        print(f"moga: warning: no --n-jobs or --days: the job-set is every job of {trace.name} "
              f"from --start {args.start} on, {n:,} jobs, which can take hours; pick a window "
              f"with --days 30 or --n-jobs N (moga trace --trace FILE lists the 30-day "
              "windows)", file=sys.stderr, flush=True)


def _prepare_out(out, names):
    """Create the output folder and check that every output file can be written, before work.

    A search must not run for results that could not be kept: the probe writes
    real bytes, so a full disk is found here.
    """
    out = check_writable(out, "--out")
    for n in names:
        if (out / n).is_dir():
            raise ValueError(f"--out {out}: {n} is a folder, so the result file cannot be written")
    return out


def _write_schedules(out, schedules: dict) -> str:
    """Write ``schedules/NAME/schedule.csv`` and ``schedule.swf`` (and ``segments.csv`` for a
    schedule with preemptions) for each named schedule; returns the folder's name."""
    for name, s in schedules.items():
        d = out / "schedules" / safe_name(name)
        d.mkdir(parents=True, exist_ok=True)
        s.to_csv(d / "schedule.csv")
        s.to_swf(d / "schedule.swf")
        if s.segments is not None:
            s.segments_to_csv(d / "segments.csv")
    return "schedules/"


def _plots(jobs):
    """Run plot jobs ``(name, callable)``; a failing plot is reported, never fatal.

    Returns the names written. Data files are written before the plots, so a
    plot that fails loses nothing.
    """
    written = []
    for name, fn in jobs:
        try:
            fn()
            written.append(name)
        except Exception as e:  # noqa: BLE001 - a plot must not lose the run's data
            print(f"moga: warning: plot {name} failed ({type(e).__name__}: {e}); the data "
                  "files are complete", file=sys.stderr)
    return written


def _add_workload_args(p: argparse.ArgumentParser, power: str | None = "none",
                       federation: bool = True, online: bool = False) -> None:
    """The workload options; ``power=None`` and ``federation=False`` leave out the options a
    command does not use (so that they are refused rather than ignored). ``online``
    commands release jobs at their submit times unless ``--batch`` is given."""
    g = p.add_argument_group("workload")
    g.add_argument("--trace", default=None,
                   help="SWF trace, plain or .gz (default: the bundled month of HPC2N)")
    g.add_argument("--start", type=_nonneg_int("--start"), default=0,
                   help="index of the first job (default 0)")
    w = g.add_mutually_exclusive_group()
    w.add_argument("--n-jobs", type=_pos_int("--n-jobs"), default=None,
                   help="job-set window by count")
    w.add_argument("--days", type=_pos_float("--days"), default=None,
                   help="job-set window by days (30: a month)")
    if online:
        g.add_argument("--batch", dest="release", action="store_false",
                       help="release every job at 0 instead of at its (shifted) submit time")
    else:
        g.add_argument("--release", action="store_true",
                       help="release jobs at their (shifted) submit times instead of all at 0")
    g.add_argument("--wide", choices=["error", "drop", "clip"], default="error",
                   help="jobs wider than the federation (default: error)")
    g.add_argument("--attr-seed", type=_seed, default=0,
                   help="seed of the drawn job attributes sigma, bw and power (default 0)")
    if power is not None:
        g.add_argument("--power", choices=["none", "lognormal"], default=power,
                       help="per-job power factors: none (all 1) or drawn lognormal around 1 "
                            f"(default: {power})")
    g.add_argument("--max-procs", type=_pos_int("--max-procs"), default=None,
                   help="machine size for traces without a MaxProcs header")
    g.add_argument("--skip-malformed", action="store_true",
                   help="skip and count malformed trace lines instead of failing")
    if federation:
        g.add_argument("--federation", default="default",
                       help=f"preset ({', '.join(PRESETS)}) or a TOML file, optionally "
                            "resized: NAME@N (N nodes in all) or NAME@auto (sized to the "
                            "trace's MaxProcs) (default: default)")


def _add_ga_args(p: argparse.ArgumentParser, out_default: str) -> None:
    from .evolution.params import BUDGET, EASY_BUDGET

    p.add_argument("--model", choices=["fluid", "at_start"], default="fluid",
                   help="execution model (default: fluid)")
    easy, plain = EASY_BUDGET, BUDGET
    p.add_argument("--pop", type=_pos_int("--pop"), default=None,
                   help=f"population size (default {easy[0]} when MOGA decodes with EASY, "
                        f"as by default, {plain[0]} with easy_search = false)")
    p.add_argument("--gen", type=_pos_int("--gen"), default=None,
                   help=f"generations (default {easy[1]} when MOGA decodes with EASY, "
                        f"as by default, {plain[1]} with easy_search = false)")
    p.add_argument("--seed", type=_seed, default=1, help="seed of the GA (default 1)")
    p.add_argument("--params", default=None, help="GA parameters as TOML (e.g. from moga tune)")
    p.add_argument("--out", default=out_default, help=f"output folder (default: {out_default})")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def _load(args, one_cluster: bool = False):
    """``(trace, federation, job-set)`` of the workload options; ``one_cluster``: jobs must fit
    the largest cluster (the value heuristics run each job inside one)."""
    trace = _read_trace(args)
    fed = Federation.load(args.federation, auto_nodes=trace.auto_nodes)
    width = int(fed.nodes.max()) if one_cluster else fed
    js = trace.jobset(start=args.start, n_jobs=args.n_jobs, days=args.days, federation=width,
                      wide=args.wide, seed=args.attr_seed, batch=not args.release,
                      power=None if args.power == "none" else args.power)
    cap = getattr(args, "power_cap", None)
    if cap is not None:
        fed = fed.with_cap(fraction=cap[1]) if cap[0] == "x" else fed.with_cap(cap[1])
    return trace, fed, js


def _cmd_evaluate(args) -> int:
    trace, fed, js = _load(args)
    models = ["fluid", "at_start"] if args.model == "both" else [args.model]
    rows = []
    for m in models:
        evaluate(js.take(slice(0, 1)), fed, model=m)  # loads the compiled kernel
        t0 = time.perf_counter()
        s = evaluate(js, fed, model=m)
        row = s.summary()
        row["decode_ms"] = (time.perf_counter() - t0) * 1e3
        rows.append(row)
    if args.json:
        print(json.dumps({"trace": trace.report.as_dict(), "jobset": js.name,
                          "jobset_report": js.report, "federation": fed.to_dict(),
                          "schedules": rows}, indent=2, default=str))
        return 0
    print(trace.report)
    extra = ", ".join(f"{k.replace('_', ' ')}: {js.report[k]}" for k in ("wide_dropped", "wide_clipped")
                      if js.report.get(k))
    print(f"job-set {js.name}: {len(js)} jobs, {'release' if args.release else 'batch'} mode"
          + (f" ({extra})" if extra else ""))
    print(repr(fed))
    print("submit order, empty blacklist:")
    print(f"  {'model':<9} {'makespan (h)':>12} {'energy (MWh)':>12} {'flowtime (h)':>13} "
          f"{'co-alloc':>8} {'decode (ms)':>11}")
    for r in rows:
        print(f"  {r['model']:<9} {r['makespan_s'] / 3600:>12.2f} {r['energy_J'] / 3.6e9:>12.4f} "
              f"{r['flowtime_s'] / 3600:>13.1f} {r['n_coalloc']:>8d} {r['decode_ms']:>11.2f}")
    return 0


def _load_ga(args, outputs):
    """``(trace, federation, jobset, GAParams, output folder)`` of a GA command."""
    from .evolution.params import GAParams

    out = _prepare_out(args.out, outputs)
    trace, fed, js = _load(args)
    params = GAParams.from_toml(args.params) if args.params else GAParams()
    if args.params and args.gen is None and params.n_gen is not None:
        print(f"moga: note: {params.n_gen} generations from {args.params} (not the default); "
              "pass --gen to change", file=sys.stderr, flush=True)
    params = params.replace(pop_size=args.pop, n_gen=args.gen)
    return trace, fed, js, params, out


def _cmd_run(args) -> int:
    from .evolution.runner import run
    from .plot import plot_convergence, plot_front, plot_gantt

    trace, fed, js, params, out = _load_ga(
        args, ["front.csv", "run.json", "result.npz", "schedule.csv", "schedule.swf",
               "front.png", "convergence.png", "gantt_knee.png"])
    shown = params.for_moga(args.backfill)
    print(f"{js.name}: {len(js)} jobs on {fed!r}; NSGA-II pop {shown.pop_size}, "
          f"{shown.n_gen} generations, model {args.model}, seed {args.seed}"
          + (", EASY decoder" if args.backfill == "easy" else
             ", searched through EASY" if shown.easy_search else ""), flush=True)
    if fed.power_cap is not None:
        print(f"power cap {fed.power_cap / 1e3:.2f} kW ({fed.power_cap / fed.peak_power:.0%} of "
              "peak)", flush=True)
    client = None  # --islands, --scheduler: an island run (docs/guide/cluster.md)
    if args.scheduler is not None:
        if args.islands is None:
            raise InputError("--scheduler runs islands on a Dask cluster: pass --islands N too")
        from .errors import require

        client = require("distributed", "moga run --scheduler", "sweep").Client(args.scheduler)
    if args.islands is not None:
        print(f"{args.islands} islands, ring migration every 20 generations, in "
              + (f"the workers of {args.scheduler}" if client else "this process"), flush=True)
    try:
        with _Interrupt() as stop:
            res = run(js, fed, seed=args.seed, model=args.model, params=params,
                      progress=not args.no_progress, backfill=args.backfill,
                      time_limit=args.time_limit, stagnation=args.stagnation, interrupt=stop,
                      islands=args.islands, client=client)
    finally:
        if client is not None:
            client.close()
    k = res.knee()
    submit = res.reference
    rows = ["index,makespan_s,energy_J,makespan_h,energy_MWh,makespan_change_pct,"
            "energy_change_pct,knee"]
    for i, (m, e) in enumerate(res.F):
        rows.append(f"{i},{m:.6f},{e:.6f},{m / 3600:.6f},{e / 3.6e9:.6f},"
                    f"{100 * (m / submit[0] - 1):.4f},{100 * (e / submit[1] - 1):.4f},{int(i == k)}")
    atomic_write(out / "front.csv", "\n".join(rows) + "\n")
    summary = res.summary()
    summary["trace_report"] = trace.report.as_dict()
    summary["jobset_report"] = js.report
    summary["federation_spec"] = fed.to_dict()
    atomic_write(out / "run.json", json.dumps(summary, indent=2, default=str) + "\n")
    res.save(out / "result.npz")
    knee = res.schedule(k)
    knee.to_csv(out / "schedule.csv")
    knee.to_swf(out / "schedule.swf")
    plots = _plots([
        ("front.png", lambda: plot_front(res.F, baselines={"submit order": submit}, knee=k,
                                         path=out / "front.png",
                                         title=f"{js.name}, {len(js)} jobs ({args.model})")),
        ("convergence.png", lambda: plot_convergence(res.history, path=out / "convergence.png")),
        ("gantt_knee.png", lambda: plot_gantt(knee, path=out / "gantt_knee.png")),
    ])
    km, ke = summary["knee_change_pct"]
    print(f"front: {len(res.F)} points, hypervolume {res.hv:.4f}; knee: makespan "
          f"{res.F[k, 0] / 3600:.2f} h ({km:+.1f}%), energy {res.F[k, 1] / 3.6e9:.4f} MWh "
          f"({ke:+.1f}%) against the submit order{' under EASY' if args.backfill == 'easy' else ''}"
          f"; {summary['generations']} generations (stopped by {_STOPPED[summary['stopped_by']]}), "
          f"{res.wall_time:.1f} s ({100 * res.decode_time / res.wall_time:.0f}% decoding)")
    print(f"wrote {out}/front.csv, run.json, result.npz, schedule.csv, schedule.swf (the knee)"
          + "".join(f", {p}" for p in plots))
    if summary["partial"]:
        print(f"moga: interrupted after {summary['generations']} generations; {out}/run.json is "
              "marked partial", file=sys.stderr)
        return 130
    return 0


#: How ``moga run`` words each ``stopped_by`` of a run.
_STOPPED = {"generations": "the generation budget", "time limit": "the time limit",
            "stagnation": "stagnation", "interrupted": "Ctrl-C",
            "no new child": "no new child in 100 matings"}


class _Interrupt:
    """A context in which the first Ctrl-C asks a search to stop after its generation.

    Calling the object tells whether Ctrl-C came; a second Ctrl-C interrupts at
    once. Outside the main thread (or where signals cannot be set) it does nothing.
    """

    def __init__(self):
        self.hit = False
        self._old = None

    def __call__(self) -> bool:
        return self.hit

    def _handle(self, signum, frame):
        import signal

        if self.hit:
            raise KeyboardInterrupt
        self.hit = True
        signal.signal(signal.SIGINT, signal.default_int_handler)
        print("\nmoga: interrupted: finishing this generation and writing the front reached so "
              "far (Ctrl-C again to abort)", file=sys.stderr, flush=True)

    def __enter__(self):
        import signal
        import threading

        if threading.current_thread() is threading.main_thread():
            self._old = signal.signal(signal.SIGINT, self._handle)
        return self

    def __exit__(self, *exc):
        import signal

        if self._old is not None:
            signal.signal(signal.SIGINT, self._old)
        return False


def _cmd_schedule(args) -> int:
    from pathlib import Path

    from .plot import plot_gantt
    from .results import load_result

    run_dir = Path(args.run_dir)
    src = run_dir / "result.npz" if run_dir.is_dir() else run_dir
    res = load_result(src)
    if args.point == "knee":
        i = res.knee()
    else:
        try:
            i = int(args.point)
        except ValueError:
            raise ValueError(f"--point takes knee or a front index, got {args.point!r}") from None
        if not 0 <= i < len(res.F):
            raise ValueError(f"--point {i}: the front of {src} has {len(res.F)} members "
                             f"(0 to {len(res.F) - 1})")
    out = _prepare_out(args.out or (src.parent / f"schedule-{args.point}"),
                       ["schedule.csv", "schedule.swf", "gantt.png"])
    s = res.schedule(i)
    s.to_csv(out / "schedule.csv")
    s.to_swf(out / "schedule.swf")
    plots = _plots([("gantt.png", lambda: plot_gantt(s, path=out / "gantt.png"))])
    print(f"front member {i} of {len(res.F)} ({'knee' if i == res.knee() else 'index'}): "
          f"makespan {s.makespan / 3600:.2f} h, energy {s.energy / 3.6e9:.4f} MWh")
    print(f"wrote {out}/schedule.csv, schedule.swf" + "".join(f", {p}" for p in plots))
    return 0


def _cap_parser(option: str, bare: str):
    """An argparse type for a power cap, the same syntax in every command.

    ``60%`` (a percentage of the federation's peak power), ``0.6x`` (a
    fraction of peak), ``2700W`` or ``2.7kW`` (watts); a bare number keeps the
    option's own meaning, ``bare`` (``"W"`` for watts, ``"x"`` for a fraction of
    peak). Returns ``("W", watts)`` or ``("x", fraction of peak)``.
    """
    def parse(text):
        t = text.strip().lower().replace(" ", "")
        units = (("kw", "W", 1e3), ("w", "W", 1.0), ("%", "x", 0.01), ("x", "x", 1.0))
        kind, scale = bare, 1.0
        for suffix, k, f in units:
            if t.endswith(suffix):
                t, kind, scale = t[: -len(suffix)], k, f
                break
        try:
            v = float(t) * scale
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{option} takes a cap as 60% or 0.6x (of peak power) or 2700W / 2.7kW, got "
                f"{text!r}") from None
        if not (v > 0 and v != float("inf")):
            raise argparse.ArgumentTypeError(f"{option} must be a finite cap > 0, got {text!r}")
        return kind, v
    return parse


def _power_cap(text: str):
    """``--power-cap`` of moga run: a bare number is watts."""
    return _cap_parser("--power-cap", "W")(text)


def _cap_fraction(cap, fed) -> float:
    """A parsed cap as a fraction of ``fed``'s peak power."""
    kind, v = cap
    return v if kind == "x" else v / fed.peak_power


def _cmd_powercap(args) -> int:
    from .powercap import CPOptions, cap_study
    from .powercap.study import plot_power, plot_wqt, study_table

    args.release = True  # dispatchers are online: jobs arrive at their submit times
    if "hybrid" in args.dispatchers:  # before any dispatch, not at the first hybrid one
        from .errors import require

        require("ortools.sat.python.cp_model", "the hybrid dispatcher (--dispatchers hybrid)",
                "cp")
    out = _prepare_out(args.out, ["powercap.md", "powercap.json", "power.png", "wqt.png"])
    trace, fed, js = _load(args)
    caps = [_cap_fraction(c, fed) for c in args.caps]
    print(f"{js.name}: {len(js)} jobs (release mode) on {fed!r}, peak {fed.peak_power / 1e3:.1f} "
          f"kW, idle {fed.idle_power / 1e3:.1f} kW; caps {', '.join(f'{c:.3g}' for c in caps)} "
          "x peak", flush=True)

    t_start = time.perf_counter()

    def say(c, d):
        if not args.no_progress:
            cap = "uncapped" if c is None else f"cap {c:.2f} x peak"
            print(f"  [{time.perf_counter() - t_start:7.1f} s] {cap}: {d} ...", flush=True)

    results = cap_study(js, fed, caps=caps, dispatchers=args.dispatchers, model=args.model,
                        cp=CPOptions(window=args.window, time_limit=args.cp_time,
                                     passes=args.cp_passes), progress=say,
                        estimates=args.estimates, uncapped=not args.no_uncapped,
                        power_error=args.power_error, power_seed=args.power_seed,
                        power_margin=args.power_margin, rule=args.rule)
    table = study_table(results)
    knows = ("the jobs' power factors" if not args.power_error else
             f"power factors predicted with a log-normal error of {args.power_error:g} "
             f"(seed {args.power_seed}), the metrics from the real draw")
    if args.power_margin:
        knows += f", keeping {args.power_margin:.0%} of each cap free"
    atomic_write(out / "powercap.md", f"# Power-capped dispatching: {js.name}\n\n"
                 f"The dispatchers plan on {args.estimates} run times and {knows}.\n\n"
                 f"{table}\n")
    sched_dirs = _write_schedules(out, {
        (f"{r.dispatcher}-uncapped" if r.federation.power_cap is None else
         f"{r.dispatcher}-cap{r.federation.power_cap / r.federation.peak_power:.3g}"):
        r.schedule() for r in results})
    rows = [{"dispatcher": r.dispatcher, "cap_W": r.federation.power_cap,
             "wall_s": r.wall_time, **r.metrics.as_dict(),
             **{k: (v.tolist() if hasattr(v, "tolist") else v) for k, v in r.info.items()}}
            for r in results]
    atomic_write(out / "powercap.json", json.dumps({"jobset": js.name, "estimates": args.estimates,
                                                   "power_error": args.power_error,
                                                   "power_seed": args.power_seed,
                                                   "power_margin": args.power_margin,
                                                   "jobset_report": js.report,
                                                   "federation": fed.to_dict(), "runs": rows},
                                                  indent=2, default=str) + "\n")
    tight = min(caps)
    plots = _plots([
        ("power.png", lambda: plot_power([r for r in results if r.federation.power_cap is not None
                                          and np.isclose(r.federation.power_cap
                                                         / r.federation.peak_power, tight)],
                                         out / "power.png")),
        ("wqt.png", lambda: plot_wqt(results, out / "wqt.png")),
    ])
    print(table)
    print(f"wrote {out}/powercap.md, powercap.json, {sched_dirs} (schedule.csv and schedule.swf "
          "per dispatcher and cap)" + "".join(f", {p}" for p in plots))
    return 0


#: ``moga simulate``'s online-moga options: option, keyword of OnlineMOGA.
_SEARCH_OPTIONS = (("preference", "preference"), ("objectives", "objectives"),
                   ("pop", "pop_size"), ("gen", "generations"), ("time_budget", "time_budget"),
                   ("window", "window"), ("interval", "interval"), ("seed", "seed"))


def _search_options(args, entry) -> dict | None:
    """The online-moga options given on the command line, checked before any work."""
    given = {kw: getattr(args, opt) for opt, kw in _SEARCH_OPTIONS
             if getattr(args, opt) is not None}
    if not given:
        return None
    if entry is None or "search" not in entry.supports:
        flags = ", ".join("--" + opt.replace("_", "-") for opt, kw in _SEARCH_OPTIONS
                          if kw in given)
        raise InputError(f"{flags}: for --policy online-moga only, not {args.policy}")
    if "objectives" in given:
        given["objectives"] = tuple(o.strip() for o in given["objectives"].split(",") if o.strip())
    try:  # the same checks as the run will make, now
        from .evolution.online import OnlineMOGA

        OnlineMOGA(**given)
    except ValueError as e:
        raise InputError(str(e)) from None
    return given


def _cmd_simulate(args) -> int:
    from .plot import plot_gantt
    from .sim import POLICIES, simulate

    entry = POLICIES.get(args.policy)
    if entry is not None and entry.extra == "cp":  # before any work
        from .errors import require

        require("ortools.sat.python.cp_model", f"the {entry.name} policy", "cp")
    options = _search_options(args, entry)
    out = _prepare_out(args.out, ["schedule.csv", "schedule.swf", "segments.csv", "metrics.json",
                                  "gantt.png"])
    features = entry.supports if entry is not None else frozenset()
    if "one_machine" in features and args.federation == "default":
        args.federation = "machine@auto"
        print(f"moga: note: {args.policy} runs on one machine; --federation machine@auto "
              "(the trace's machine size)", file=sys.stderr, flush=True)
    trace, fed, js = _load(args, one_cluster=entry is not None and entry.kind == "kernel"
                           and "values" in features)
    if "values" in features or args.value_seed is not None:
        from .value import attach_values

        js = attach_values(js, seed=0 if args.value_seed is None else args.value_seed)
    if "realtime" in features or args.rtj_fraction is not None:
        from .realtime import Machine, tag_realtime

        js = tag_realtime(js, Machine(nodes=int(fed.total_nodes)),
                          0.1 if args.rtj_fraction is None else args.rtj_fraction,
                          seed=args.tag_seed).jobset
    print(f"{js.name}: {len(js)} jobs ({'release' if args.release else 'batch'} mode) on "
          f"{fed!r}; policy {args.policy}", flush=True)
    s = simulate(js, fed, args.policy, model=args.model, rule=args.rule,
                 estimates=args.estimates, options=options)
    s.to_csv(out / "schedule.csv")
    s.to_swf(out / "schedule.swf")
    if s.segments is not None:
        s.segments_to_csv(out / "segments.csv")
    else:
        (out / "segments.csv").unlink(missing_ok=True)  # none from an earlier run
    summary = s.summary()
    info = {k: (v.tolist() if hasattr(v, "tolist") else v) for k, v in s.info.items()}
    # A mean over no completed job (every job rejected) is null, not NaN: strict JSON.
    metrics = {k: (None if isinstance(v, float) and math.isnan(v) else v)
               for k, v in summary.items()}
    atomic_write(out / "metrics.json", json.dumps(
        {"policy": s.policy, "jobset": js.name, "jobset_report": js.report,
         "federation": fed.to_dict(), "metrics": metrics, "info": info}, indent=2,
        default=str) + "\n")
    plots = [] if args.no_gantt else _plots(
        [("gantt.png", lambda: plot_gantt(s, path=out / "gantt.png"))])
    print(f"makespan {s.makespan / 3600:.2f} h, energy {s.energy / 3.6e9:.4f} MWh, mean wait "
          f"{summary['mean_wait_s'] / 3600:.2f} h, mean bounded slowdown "
          f"{summary['mean_bounded_slowdown']:.2f}"
          + (f", {summary['n_rejected']} rejected" if summary["n_rejected"] else "")
          + f"; planned on {info['estimates']} times; "
          f"{info['wall_s']:.2f} s" + (f" ({info['decision_s']:.2f} s deciding)"
                                       if "decision_s" in info else ""))
    print(f"wrote {out}/schedule.csv, schedule.swf, "
          + ("segments.csv, " if s.segments is not None else "") + "metrics.json"
          + "".join(f", {p}" for p in plots))
    return 0


def _cmd_realtime(args) -> int:
    import dataclasses

    from .realtime import Machine, Thresholds
    from .realtime.study import SCHEME_SET, plot_slowdowns, realtime_study, study_table

    out = _prepare_out(args.out, ["realtime.md", "realtime.json", "slowdown.png"])
    schemes = list(SCHEME_SET) if args.schemes is None else args.schemes
    used = {SCHEME_SET[s][1] for s in schemes}  # the checkpointing kinds they use
    for option, value, needs in (
            ("--sys-interval", args.sys_interval, "sys" in used),
            ("--app-overhead", args.app_overhead, "app" in used),
            ("--app-data", args.app_data, "app" in used),
            ("--ckpt-data", args.ckpt_data, bool(used & {"sys", "jit"})),
            ("--rtj-threshold", args.rtj_threshold, "preempt-jit-improved" in schemes),
            ("--trigger", args.trigger, "preempt-jit-qsim" in schemes),
            ("--batch-thresholds", args.batch_thresholds,
             bool({"preempt-jit-improved", "preempt-jit-qsim"} & set(schemes)))):
        if value is not None and not needs:
            raise ValueError(f"{option} changes no scheme of --schemes {' '.join(schemes)}")
    io = {k: v for k, v in (("memory_gb", args.memory_gb), ("pfs_gbps", args.pfs_gbps),
                            ("pfs_usable", args.pfs_usable), ("io_nodes_per", args.io_nodes_per),
                            ("io_gbps", args.io_gbps), ("min_io_nodes", args.min_io_nodes))
          if v is not None}
    trace = _read_trace(args)
    if args.machine == "mira":
        machine = dataclasses.replace(Machine.mira(), **io)
    elif args.machine == "auto":
        machine = Machine.scaled(int(trace.auto_nodes),
                                 name=f"{trace.name}@{int(trace.auto_nodes)}", **io)
    else:
        try:
            n = int(args.machine)
        except ValueError:
            raise ValueError(f"--machine takes mira, auto or a node count, got "
                             f"{args.machine!r}") from None
        machine = Machine.scaled(n, name=f"{n} nodes", **io)
    if args.machine == "mira":
        # Jobs keep their share of the trace's machine (docs/guide/realtime.md).
        size = int(trace.auto_nodes)
        js = machine.scale_jobs(trace.jobset(
            start=args.start, n_jobs=args.n_jobs, days=args.days, federation=size,
            wide=args.wide, seed=args.attr_seed, batch=False), size)
        if size != machine.nodes:
            print(f"moga: note: job sizes scaled from the trace's {size} nodes to Mira's "
                  f"{machine.nodes} (x{machine.nodes / size:.3g})", file=sys.stderr, flush=True)
    else:
        js = trace.jobset(start=args.start, n_jobs=args.n_jobs, days=args.days,
                          federation=machine.nodes, wide=args.wide, seed=args.attr_seed,
                          batch=False)
    print(f"{js.name}: {len(js)} jobs (release mode) on {machine.name} ({machine.nodes} nodes"
          + (", partitions" if machine.partitions else "") + f"); real-time shares "
          f"{args.rtj_fraction}; I/O: {machine.io_summary()}", flush=True)

    t_start = time.perf_counter()

    def say(f, label):
        if not args.no_progress:
            print(f"  [{time.perf_counter() - t_start:7.1f} s] {f:.0%} real-time: {label} ...",
                  flush=True)

    runs = realtime_study(js, machine, fractions=args.rtj_fraction, schemes=args.schemes,
                          seed=args.tag_seed,
                          checkpoint={k: v for k, v in (
                              ("sys_interval", args.sys_interval),
                              ("data_fraction", args.ckpt_data),
                              ("app_overhead", args.app_overhead),
                              ("app_fraction", args.app_data)) if v is not None},
                          thresholds=Thresholds(**{k: v for k, v in (
                              ("rtj", args.rtj_threshold),
                              ("trigger", args.trigger),
                              ("batch", args.batch_thresholds)) if v is not None}),
                          slowdown_on=args.slowdown_on, progress=say)
    table = study_table(runs)
    atomic_write(out / "realtime.md", f"# Real-time jobs: {js.name} on {machine.name}\n\n"
                                     f"Slowdowns on {args.slowdown_on}. I/O: "
                                     f"{machine.io_summary()}.\n\n{table}\n")
    atomic_write(out / "realtime.json", json.dumps(
        {"jobset": js.name, "machine": machine.name, "nodes": machine.nodes,
         "io": {k: getattr(machine, k) for k in ("memory_gb", "pfs_gbps", "pfs_usable",
                                                  "io_nodes_per", "io_gbps", "min_io_nodes")},
         "runs": [{"fraction": r.fraction, "scheme": r.label, **r.metrics} for r in runs]},
        indent=2, default=float) + "\n")
    plots = _plots([("slowdown.png", lambda: plot_slowdowns(runs, out / "slowdown.png"))])
    sched = "" if args.no_schedules else ", " + _write_schedules(out, {
        f"rtj{r.fraction:g}-{r.label}": r.result.schedule() for r in runs}) + \
        " (schedule.csv, schedule.swf and segments.csv per share and scheme)"
    print(table)
    print(f"wrote {out}/realtime.md, realtime.json{sched}" + "".join(f", {p}" for p in plots))
    return 0


def _rl_config(lam, beta, c):
    from .rl import ClusterConfig

    return ClusterConfig(lam=lam, beta=beta, c=c)


def _cmd_rl_train(args) -> int:
    from .rl.policy import save_params
    from .rl.schedulers import esjf, mean_edp
    from .rl.study import plot_learning_curve
    from .rl.train import TrainConfig, train

    out = _prepare_out(args.out, ["policy.npz", "learning_curve.png"])
    cfg = _rl_config(args.lam, args.beta, args.c)
    tc = TrainConfig(iterations=args.iterations, sequences=args.sequences,
                     trajectories=args.trajectories, lr=args.lr, seed=args.seed,
                     mask=args.mask,
                     lams=None if args.across_lams is None else tuple(args.across_lams))
    print(f"training Deep-EAS (lambda {cfg.lam}, beta {cfg.beta}): {tc.iterations} iterations x "
          f"{tc.sequences} sequences x {tc.trajectories} trajectories = {tc.episodes} episodes, "
          f"{tc.fraction_of_paper():.2%} of the paper's budget", flush=True)
    res = train(cfg, tc, out=out, resume=not args.no_resume, progress=not args.no_progress)
    save_params(res.params, out / "policy.npz", lam=cfg.lam, beta=cfg.beta, c=cfg.c,
                iterations=tc.iterations, sequences=tc.sequences,
                trajectories=tc.trajectories, seed=tc.seed)
    ref = {"ESJF": mean_edp(esjf, cfg, tc.sequences, seed=tc.seed)}
    plots = _plots([("learning_curve.png", lambda: plot_learning_curve(
        res.history, out / "learning_curve.png", ref))])
    print(f"last iteration: mean EDP {res.history[-1]['mean_edp']:.1f} (ESJF on other "
          f"sequences of the same kind: {ref['ESJF']:.1f})")
    print(f"wrote {out}/policy.npz, checkpoint.npz, history.json" + "".join(f", {p}" for p in plots))
    return 0


def _cmd_rl_evaluate(args) -> int:
    from .rl.policy import load_params, shipped_policy
    from .rl.study import evaluate_grid, grid_table, plot_edp_vs_lambda

    out = _prepare_out(args.out, ["evaluate.md", "evaluate.json", "edp_vs_lambda.png"])
    params, meta = load_params(args.policy) if args.policy else shipped_policy()
    print(f"policy {args.policy or 'shipped with moga'} (trained at lambda {meta.get('lam')}, "
          f"beta {meta.get('beta')}); {args.sequences} unseen sequences per setting", flush=True)
    rows = evaluate_grid(params, args.lam, args.beta, args.sequences, args.seed,
                         base=_rl_config(0.7, 0.5, args.c))
    for r in rows:
        if not r["n_jobs"]:
            print(f"moga: warning: lambda {r['lam']:g}, beta {r['beta']:g}: the "
                  f"{args.sequences} sequences drew no job; that row is n/a (raise --lam or "
                  "--sequences)", file=sys.stderr)
    table = grid_table(rows)
    atomic_write(out / "evaluate.md", f"# Deep-EAS against the heuristics\n\nMean EDP over "
                                     "jobs, with a 95% bootstrap interval over the sequences "
                                     f"in brackets.\n\n{table}\n")
    atomic_write(out / "evaluate.json", json.dumps({"meta": {k: str(v) for k, v in meta.items()},
                                                   "rows": rows}, indent=2) + "\n")
    plots = _plots([("edp_vs_lambda.png", lambda: plot_edp_vs_lambda(
        rows, out / "edp_vs_lambda.png", beta=args.beta[0]))])
    print(table)
    print(f"wrote {out}/evaluate.md, evaluate.json" + "".join(f", {p}" for p in plots))
    return 0


def _cmd_compare(args) -> int:
    from .baselines import compare
    from .plot import plot_front

    trace, fed, js, params, out = _load_ga(args, ["compare.csv", "compare.json", "compare.png"])
    shown = params.for_moga()
    print(f"{js.name}: {len(js)} jobs on {fed!r}; model {args.model}, MOGA pop "
          f"{shown.pop_size} x {shown.n_gen} generations, seed {args.seed}", flush=True)
    c = compare(js, fed, seed=args.seed, model=args.model, params=params,
                algorithms=args.algorithms,
                progress=not args.no_progress)
    atomic_write(out / "compare.csv", c.to_csv())
    sched_dirs = _write_schedules(out, {name: r.schedule(r.knee()) for name, r in c.results.items()})
    atomic_write(out / "compare.json", json.dumps(
        {"jobset": js.name, "n_jobs": len(js), "model": args.model, "rows": c.rows,
         "reference": c.reference.tolist(), **c.info,
         "fronts": {k: v.tolist() for k, v in c.fronts.items()}}, indent=2) + "\n")
    fronts = dict(c.fronts)
    main_front = fronts.pop("MOGA", None)
    if main_front is None and fronts:
        main_front = fronts.pop(next(iter(fronts)))
    plots = []
    if main_front is not None:
        plots = _plots([("compare.png", lambda: plot_front(
            main_front, baselines=c.points, fronts=fronts, path=out / "compare.png",
            title=f"{js.name}, {len(js)} jobs ({args.model})"))])
    print(c.table())
    print(f"wrote {out}/compare.csv, compare.json, {sched_dirs} (schedule.csv and schedule.swf "
          "of each algorithm's knee)" + "".join(f", {p}" for p in plots))
    return 0


def _cmd_sweep(args) -> int:
    from .experiments.sweep import load_config, run_sweep

    cfg = load_config(args.config)
    n = len(cfg.runs())
    print(f"sweep {cfg.name!r}: {len(cfg.traces)} trace(s), "
          f"{sum(len(t.windows) for t in cfg.traces)} job-set(s), {len(cfg.algorithms)} "
          f"algorithm(s), {len(cfg.seeds)} seed(s): {n} runs -> {args.out}", flush=True)
    stats = run_sweep(cfg, args.out, scheduler=args.scheduler, workers=args.workers,
                      max_runs=args.max_runs, progress=not args.no_progress)
    print(f"{stats['done']} run(s) done, {stats['skipped']} already in the store, "
          f"{stats['failed']} failed")
    for f in stats["failures"]:
        print(f"  failed: {f['run_id']}: {f['error']}", file=sys.stderr)
    return 1 if stats["failed"] else 0


def _cmd_report(args) -> int:
    from .experiments.report import make_report

    written = make_report(args.out, args.dest)
    if written["foreign"]:
        print(f"moga: warning: {len(written['foreign'])} run row(s) in {args.out} do not belong "
              "to its recorded configuration (another sweep wrote into it); left out of the "
              "report", file=sys.stderr)
    print(f"wrote {written['report']} with {len(written['plots'])} plot(s) and "
          f"{len(written['tables'])} table(s)")
    return 0


def _cmd_tune(args) -> int:
    from .experiments.tuning import plot_study, tune

    out = _prepare_out(args.out, ["best.toml", "trials.csv", "tune.json", "history.png",
                                  "importances.png"])
    trace = _read_trace(args)
    fed = Federation.load(args.federation, auto_nodes=trace.auto_nodes)
    starts = args.starts or [args.start]
    jobsets = [trace.jobset(start=s, n_jobs=args.n_jobs, days=args.days, federation=fed,
                            wide=args.wide, seed=args.attr_seed, batch=not args.release,
                            power=None if args.power == "none" else args.power)
               for s in starts]
    print(f"tuning on {len(jobsets)} job-set(s) ({', '.join(js.name for js in jobsets)}), "
          f"{args.seeds} seed(s), {args.budget} evaluations per run, {args.trials} trials",
          flush=True)
    res = tune(jobsets, fed, n_trials=args.trials, seeds=args.seeds, storage=args.storage,
               study_name=args.study_name, timeout=args.timeout, budget=args.budget,
               model=args.model, sampler_seed=args.sampler_seed,
               progress=not args.no_progress)
    trials = res.trials()
    keys = sorted({k for t in trials for k in t} - {"number", "state", "value"})
    lines = [",".join(["number", "state", "value"] + keys)]
    for t in trials:
        lines.append(",".join("" if t.get(k) is None else str(t.get(k))
                              for k in ["number", "state", "value"] + keys))
    atomic_write(out / "trials.csv", "\n".join(lines) + "\n")
    atomic_write(out / "best.toml", res.to_toml())
    atomic_write(out / "tune.json", json.dumps(
        {"jobsets": [js.name for js in jobsets], "budget": res.budget, "seeds": args.seeds,
         "model": args.model, "best_value": res.best_value,
         "best_params": res.best_params.to_dict(), "n_trials": len(trials),
         "wall_time_s": res.wall_time}, indent=2) + "\n")
    plots = []
    _plots([("plots", lambda: plots.extend(plot_study(res, out)))])
    print(f"best mean hypervolume {res.best_value:.4f} with {res.best_params}")
    print(f"wrote {out}/best.toml, trials.csv, tune.json"
          + "".join(f", {p.name}" for p in plots))
    return 0


def _cmd_value(args) -> int:
    from .plot import plot_value_by_class, plot_value_over_time
    from .value import DEFAULT_CLASSES, attach_values, compare_value

    out = _prepare_out(args.out, ["value.csv", "value.json", "value_over_time.png",
                                  "value_by_class.png"])
    trace = _read_trace(args)
    fed = Federation.load(args.federation, auto_nodes=trace.auto_nodes)
    # Jobs run inside one cluster: the largest cluster bounds the width.
    js = trace.jobset(start=args.start, n_jobs=args.n_jobs, days=args.days,
                      federation=int(fed.nodes.max()), wide=args.wide, seed=args.attr_seed,
                      batch=False)
    js = attach_values(js, seed=args.value_seed)
    print(f"{js.name}: {len(js)} jobs ({js.report['wide_dropped']} wider than the largest "
          f"cluster dropped) on {fed!r}; best-known GA pop {args.pop} x {args.gen}", flush=True)
    c = compare_value(js, fed, pop_size=args.pop, n_gen=args.gen, seed=args.seed)
    atomic_write(out / "value.csv", c.to_csv())
    atomic_write(out / "value.json", json.dumps(
        {"jobset": js.name, "n_jobs": len(js), "federation": fed.name, "rows": c.rows,
         "best_known": c.best_known.value, "upper_bound": c.upper_bound,
         "max_value": c.max_value,
         "by_class": {k: s.value_by_class() for k, s in c.schedules.items()}},
        indent=2) + "\n")
    print(f"{'algorithm':<18} {'value':>10} {'% best known':>12} {'% upper bound':>13} "
          f"{'completed':>9}")
    for row in c.rows:
        print(f"{row['algorithm']:<18} {row['value']:>10.1f} {row['pct_of_best_known']:>12.1f} "
              f"{row['pct_of_upper_bound']:>13.1f} {row['completed']:>9d}")
    print(f"{'upper bound':<18} {c.upper_bound:>10.1f}   (maximum, sum of v_start: "
          f"{c.max_value:.1f})")
    names = [cl.name for cl in DEFAULT_CLASSES]
    plots = _plots([
        ("value_over_time.png", lambda: plot_value_over_time(
            c.schedules, path=out / "value_over_time.png", title=js.name)),
        ("value_by_class.png", lambda: plot_value_by_class(
            c.schedules, names, path=out / "value_by_class.png", title=js.name)),
    ])
    sched_dirs = _write_schedules(out, {k: v.schedule() for k, v in c.schedules.items()})
    print(f"wrote {out}/value.csv, value.json, {sched_dirs} (schedule.csv and schedule.swf of "
          "the jobs each algorithm ran)" + "".join(f", {p}" for p in plots))
    return 0


def _cmd_trace(args) -> int:
    if args.path and args.trace_opt and args.path != args.trace_opt:
        raise ValueError(f"give the trace once: {args.path!r} and --trace {args.trace_opt!r}")
    name = args.trace_opt or args.path
    path = resolve_trace(name) if name else default_trace_path()
    trace = load_swf(path, skip_malformed=args.skip_malformed, max_procs=args.max_procs)
    if args.json:
        print(json.dumps({"report": trace.report.as_dict(), "header": trace.header}, indent=2))
        return 0
    print(trace.report)
    for k in ("Computer", "Installation", "MaxProcs", "UnixStartTime", "StartTime", "EndTime"):
        if k in trace.header:
            print(f"  {k}: {trace.header[k]}")
    windows = trace.windows(days=30)
    print(f"  {len(trace)} jobs in {len(windows)} 30-day windows (start indices: "
          f"{windows[:6]}{' ...' if len(windows) > 6 else ''})")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``moga`` command."""
    parser = argparse.ArgumentParser(
        prog="moga",
        description="Multi-objective evolutionary scheduling on heterogeneous federated clusters.")
    from . import __version__

    parser.add_argument("--version", action="version", version=f"moga {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("evaluate", help="makespan and energy of the submit order on a job-set")
    _add_workload_args(p)
    p.add_argument("--model", choices=["fluid", "at_start", "both"], default="both",
                   help="execution model (default: both)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=_cmd_evaluate)
    p = sub.add_parser("run", help="evolve a makespan-energy Pareto front with NSGA-II")
    _add_workload_args(p)
    _add_ga_args(p, "moga-out")
    p.add_argument("--backfill", choices=["none", "easy"], default="none",
                   help="decoder: jobs strictly in order (default) or EASY backfilling with "
                        "the chromosome's order as queue priority")
    p.add_argument("--time-limit", type=_pos_float("--time-limit"), default=None,
                   metavar="SECONDS", help="stop after this many seconds (besides --gen)")
    p.add_argument("--stagnation", type=_pos_int("--stagnation"), default=None,
                   metavar="GENS", help="stop when the hypervolume rose by less than 0.1%% "
                                        "over this many generations")
    p.add_argument("--power-cap", type=_power_cap, default=None, metavar="CAP",
                   help="evolve under a power budget: 60%% or 0.6x (of the federation's peak "
                        "power) or 2700W / 2.7kW; a bare number is watts (default: none)")
    p.add_argument("--islands", type=_pos_int("--islands"), default=None, metavar="N",
                   help="an island model of N islands, each the search on its own stream of "
                        "the seed, ring migration every 20 generations; --gen counts each "
                        "island's generations (docs/guide/cluster.md)")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="with --islands: the Dask scheduler whose workers run the islands "
                        "(default: this process; needs the sweep extra)")
    p.set_defaults(func=_cmd_run)
    p = sub.add_parser("schedule", help="write the schedule files and a Gantt chart of a "
                                         "front member of a moga run")
    p.add_argument("run_dir", help="output folder of moga run (or its result.npz)")
    p.add_argument("--point", default="knee",
                   help="knee, or the index of a front member in front.csv (default: knee)")
    p.add_argument("--out", default=None,
                   help="output folder (default: RUN_DIR/schedule-POINT)")
    p.set_defaults(func=_cmd_schedule)
    p = sub.add_parser("powercap", help="power-capped dispatching: EASY, PRB and hybrid CP at "
                                         "several caps (release mode)")
    _add_workload_args(p, power="lognormal")
    p.add_argument("--caps", type=_cap_parser("--caps", "x"), nargs="+",
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
    p.add_argument("--window", type=_int_arg("--window", 2), default=16,
                   help="hybrid: waiting jobs in the CP model per event (default 16)")
    p.add_argument("--cp-time", type=_pos_float("--cp-time"), default=0.01,
                   help="hybrid: CP-SAT deterministic time limit per event (default 0.01)")
    p.add_argument("--cp-passes", type=_pos_int("--cp-passes"), default=1,
                   help="the hybrid's solves per event: conflict sets the mapper meets are fed "
                        "back as cuts until none is left (default 1: no feedback)")
    p.add_argument("--estimates", choices=["exact", "requested"], default="exact",
                   help="what the dispatchers plan with: exact run times or the requested "
                        "(walltime) ones (default: exact)")
    p.add_argument("--power-error", type=_nonneg_float("--power-error"), default=0.0,
                   help="plan on power factors predicted with this log-normal error (log-space "
                        "standard deviation, e.g. 0.1); the metrics use the real draw (default "
                        "0: the dispatchers know each job's power)")
    p.add_argument("--power-seed", type=_seed, default=0,
                   help="seed of the power prediction errors (default 0)")
    p.add_argument("--power-margin", type=_float_arg("--power-margin", lambda v: 0 <= v < 1,
                                                     "in [0, 1)"), default=0.0,
                   help="share of each cap the dispatchers keep free, a safety margin against "
                        "prediction errors; metrics are judged against the caps (default 0)")
    p.add_argument("--no-uncapped", action="store_true",
                   help="skip the uncapped baseline runs (by default each dispatcher also runs "
                        "without a cap, and each capped row counts the jobs its cap moved)")
    p.add_argument("--out", default="moga-powercap", help="output folder (default: moga-powercap)")
    p.add_argument("--no-progress", action="store_true", help="no per-run progress lines")
    p.set_defaults(func=_cmd_powercap)
    p = sub.add_parser("simulate", help="run an online policy (registered, or yours as "
                                         "path.py:Class) on a trace (release mode)")
    _add_workload_args(p, power="none", online=True)
    p.add_argument("--policy", default="easy",
                   help="a registered policy (moga.sim.POLICIES: fcfs, easy, prb, hybrid, "
                        "realtime-first, realtime-preempt, value-density, online-moga, "
                        "online-EASY, online-FCFS-multi, "
                        "Max-Max-Value, Max-Max-VPR, rt-baseline, rt-highpq, rt-preempt-none, "
                        "rt-preempt-sys, rt-preempt-app, rt-preempt-jit, "
                        "rt-preempt-jit-improved, rt-preempt-jit-qsim) or "
                        "path/to/file.py:Class (an OnlinePolicy; docs/guide/policies.md) "
                        "(default: easy)")
    p.add_argument("--estimates", choices=["requested", "exact"], default=None,
                   help="what the policy plans with: requested (walltime) or exact run times "
                        "(default: requested for Python policies, exact for the kernels)")
    p.add_argument("--power-cap", type=_power_cap, default=None,
                   help="federation power cap: 60%% or 0.6x (of peak) or 2700W / 2.7kW "
                        "(default: none)")
    p.add_argument("--model", choices=["fluid", "at_start"], default="fluid",
                   help="execution model (default: fluid)")
    p.add_argument("--rule", choices=["fastest", "greenest", "consolidate"], default="fastest",
                   help="allocation rule (default: fastest)")
    p.add_argument("--value-seed", type=_seed, default=None,
                   help="attach seeded value functions (default: seed 0 for the policies that "
                        "use values, none otherwise)")
    p.add_argument("--rtj-fraction", type=_fraction("--rtj-fraction"), default=None,
                   help="tag this share of jobs as real-time, in [0, 1] (default: 0.1 for "
                        "realtime-first, realtime-preempt and the rt- schemes, none "
                        "otherwise)")
    p.add_argument("--tag-seed", type=_seed, default=0, help="seed of the real-time tags "
                                                              "(default 0)")
    g = p.add_argument_group("online-moga options (docs/guide/online-moga.md)")
    g.add_argument("--preference", default=None,
                   help="how a decision picks a front member: knee, weight:W, slowdown:X, "
                        "energy:X or bsld:B (default: slowdown:0)")
    g.add_argument("--objectives", default=None,
                   help="comma-separated window objectives from makespan, energy, flowtime, "
                        "bsld (default: energy,bsld)")
    g.add_argument("--pop", type=_pos_int("--pop"), default=None,
                   help="population of a decision's GA (default 20)")
    g.add_argument("--gen", type=_pos_int("--gen"), default=None,
                   help="generations per decision (default 10)")
    g.add_argument("--time-budget", type=_pos_float("--time-budget"), default=None,
                   help="wall-clock seconds a decision may take (default: none)")
    g.add_argument("--window", type=_pos_int("--window"), default=None,
                   help="waiting jobs planned per decision, in arrival order (default 32)")
    g.add_argument("--interval", type=_nonneg_float("--interval"), default=None,
                   help="simulated seconds between decisions unless 4 jobs joined or left the "
                        "window (default 0: every event where a job could start)")
    g.add_argument("--seed", type=_seed, default=None, help="seed of the GA (default 1)")
    p.add_argument("--no-gantt", action="store_true", help="do not draw gantt.png")
    p.add_argument("--out", default="moga-simulate", help="output folder (default: moga-simulate)")
    p.set_defaults(func=_cmd_simulate)
    p = sub.add_parser("realtime", help="real-time jobs on a batch system: high-priority queue, "
                                         "preemption and checkpointing (release mode)")
    _add_workload_args(p, power=None, federation=False)
    p.add_argument("--machine", default="auto",
                   help="mira (49,152 nodes in partitions), auto (the trace's MaxProcs) or a "
                        "node count (default: auto)")
    p.add_argument("--rtj-fraction", type=_fraction("--rtj-fraction"), nargs="+",
                   default=[0.1], help="shares of real-time jobs, each in [0, 1] (default 0.1)")
    p.add_argument("--schemes", nargs="+", default=None,
                   choices=["baseline", "highpq", "preempt-none", "preempt-sys", "preempt-app",
                            "preempt-jit", "preempt-jit-improved", "preempt-jit-qsim"],
                   help="default: all eight (preempt-jit-improved is the project's reading "
                        "of the improved heuristic, preempt-jit-qsim the authors' Qsim rule)")
    p.add_argument("--tag-seed", type=_seed, default=0, help="seed of the real-time tags")
    p.add_argument("--sys-interval", type=_pos_float("--sys-interval"), default=None,
                   help="SYS-CKPT interval, s of computation (default 3600)")
    p.add_argument("--ckpt-data", type=_fraction("--ckpt-data"), default=None,
                   help="SYS and JIT checkpoint data per node, share of node memory "
                        "(default 0.5)")
    p.add_argument("--app-overhead", type=_fraction("--app-overhead"), default=None,
                   help="APP-CKPT's budget: share of the requested time spent writing "
                        "(default 0.05)")
    p.add_argument("--app-data", type=_fraction("--app-data"), default=None,
                   help="APP-CKPT data per node, share of node memory (default 0.25)")
    p.add_argument("--rtj-threshold", type=_pos_float("--rtj-threshold"), default=None,
                   help="improved heuristic: a real-time job preempts only when waiting would "
                        "take its slowdown above this (default 1.5; preempt-jit-improved)")
    p.add_argument("--trigger", type=_pos_float("--trigger"), default=None,
                   help="preempt-jit-qsim: a real-time job turns preemptive once its slowdown "
                        "on its requested time, had it started now, reaches this (default 1.1)")
    p.add_argument("--batch-thresholds", type=_pos_float("--batch-thresholds"), nargs=4,
                   default=None, metavar=("NS", "NL", "WS", "WL"),
                   help="improved heuristic: projected slowdown above which a batch job of "
                        "each class (narrow-short, narrow-long, wide-short, wide-long) is not "
                        "preempted (default 3.0 1.3 10.0 2.0)")
    p.add_argument("--memory-gb", type=_pos_float("--memory-gb"), default=None,
                   help="memory per node, GB (default 16, Mira's)")
    p.add_argument("--pfs-gbps", type=_pos_float("--pfs-gbps"), default=None,
                   help="file-system bandwidth, GB/s (default: Mira's 240 with --machine mira, "
                        "else 240 x nodes / 49152, Mira's scaled to the machine)")
    p.add_argument("--pfs-usable", type=_fraction("--pfs-usable"), default=None,
                   help="share of the file system usable for checkpoints (default 0.9)")
    p.add_argument("--io-nodes-per", type=_int_arg("--io-nodes-per", 1), default=None,
                   help="compute nodes per I/O node (default 128, Mira's)")
    p.add_argument("--io-gbps", type=_pos_float("--io-gbps"), default=None,
                   help="bandwidth of one I/O node, GB/s (default 4, Mira's)")
    p.add_argument("--min-io-nodes", type=_nonneg_float("--min-io-nodes"), default=None,
                   help="I/O nodes a job has at least (default 1; 0: a proportional share)")
    p.add_argument("--out", default="moga-realtime", help="output folder (default: moga-realtime)")
    p.add_argument("--slowdown-on", choices=["runtime", "walltime"], default="runtime",
                   help="divide slowdowns by the run time or by the requested time (the "
                        "authors' definition) (default: runtime)")
    p.add_argument("--no-schedules", action="store_true",
                   help="do not write schedules/ (the schedule files of every run)")
    p.add_argument("--no-progress", action="store_true", help="no per-run progress lines")
    p.set_defaults(func=_cmd_realtime)
    p = sub.add_parser("rl", help="Deep-EAS: train and evaluate a reinforcement-learning "
                                   "scheduler (energy-delay product)")
    rl = p.add_subparsers(dest="rl_command", required=True)
    q = rl.add_parser("train", help="train the policy with REINFORCE (needs moga[rl])")
    q.add_argument("--lam", type=_pos_float("--lam"), default=0.7, help="arrival rate (0.7)")
    q.add_argument("--beta", type=float, default=0.5, help="share of short jobs (0.5)")
    q.add_argument("--c", type=_pos_float("--c"), default=4.0, help="estimator accuracy (4)")
    q.add_argument("--iterations", type=_pos_int("--iterations"), default=60,
                   help="training iterations in all, resumed ones included (default 60)")
    q.add_argument("--sequences", type=_pos_int("--sequences"), default=12,
                   help="training job sequences per iteration (default 12)")
    q.add_argument("--trajectories", type=_pos_int("--trajectories"), default=6,
                   help="episodes per sequence and iteration, >= 2 (default 6)")
    q.add_argument("--lr", type=_pos_float("--lr"), default=1e-3,
                   help="Adam's learning rate (default 0.001)")
    q.add_argument("--seed", type=_seed, default=0, help="seed of every draw (default 0)")
    q.add_argument("--across-lams", type=_fraction("--across-lams"), nargs="+", default=None,
                   metavar="LAM", help="train one policy across these arrival rates (training "
                                       "sequence i at the i-th in turn) instead of --lam's alone")
    q.add_argument("--mask", action="store_true",
                   help="sample only actions the cluster can carry out (default: the paper's "
                        "setting, where an infeasible action waits)")
    q.add_argument("--out", default="moga-rl", help="output folder, resumed (default: moga-rl)")
    q.add_argument("--no-resume", action="store_true", help="start afresh even if a checkpoint "
                                                            "is there")
    q.add_argument("--no-progress", action="store_true", help="no progress bar")
    q.set_defaults(func=_cmd_rl_train)
    q = rl.add_parser("evaluate", help="mean EDP of the policy and the heuristics")
    q.add_argument("--policy", default=None, help="policy.npz (default: the shipped one)")
    q.add_argument("--lam", type=_pos_float("--lam"), nargs="+",
                   default=[0.1, 0.3, 0.5, 0.7, 0.9],
                   help="arrival rates to evaluate at (default 0.1 0.3 0.5 0.7 0.9)")
    q.add_argument("--beta", type=float, nargs="+", default=[0.5],
                   help="shares of short jobs (default 0.5)")
    q.add_argument("--c", type=_pos_float("--c"), default=4.0,
                   help="estimator accuracy (default 4)")
    q.add_argument("--sequences", type=_pos_int("--sequences"), default=30,
                   help="unseen job sequences per setting (default 30)")
    q.add_argument("--seed", type=_seed, default=1,
                   help="seed of the sequences and of the policy's sampling (default 1)")
    q.add_argument("--out", default="moga-rl-eval", help="output folder (default: moga-rl-eval)")
    q.add_argument("--no-progress", action="store_true", help="accepted for consistency")
    q.set_defaults(func=_cmd_rl_evaluate)
    p = sub.add_parser("compare", help="baselines (FCFS, EASY, GA-MF, random search, ...) "
                                        "and MOGA on one job-set")
    _add_workload_args(p)
    _add_ga_args(p, "moga-compare")
    p.add_argument("--algorithms", nargs="+", default=None,
                   help="a subset: FCFS EASY FCFS-greenest EASY-greenest MOGA "
                        "'MOGA without blacklist' 'random search' GA-MF")
    p.set_defaults(func=_cmd_compare)
    p = sub.add_parser("sweep", help="run a benchmark sweep (TOML config) on Dask")
    p.add_argument("config", help="sweep configuration (TOML)")
    p.add_argument("--scheduler", default=None,
                   help="Dask scheduler address (default: an embedded LocalCluster); "
                        "'synchronous' runs in this process")
    p.add_argument("--workers", type=_pos_int("--workers"), default=None,
                   help="workers of the embedded cluster (default: the CPU count)")
    p.add_argument("--out", default="moga-sweep", help="results store (default: moga-sweep)")
    p.add_argument("--max-runs", type=_nonneg_int("--max-runs"), default=None,
                   help="stop after this many runs (rerun to continue)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=_cmd_sweep)
    p = sub.add_parser("report", help="statistics, tests and plots of a sweep's results store")
    p.add_argument("out", metavar="STORE", help="results store of moga sweep (its --out)")
    p.add_argument("--out", "--dest", dest="dest", default=None,
                   help="report folder (default: STORE/report); --dest is the older name")
    p.set_defaults(func=_cmd_report)
    p = sub.add_parser("tune", help="tune GA parameters with Optuna; writes best.toml")
    _add_workload_args(p)
    p.add_argument("--starts", type=_nonneg_int("--starts"), nargs="+", default=None,
                   help="first job of each job-set to tune on (default: --start)")
    p.add_argument("--model", choices=["fluid", "at_start"], default="fluid",
                   help="execution model (default: fluid)")
    p.add_argument("--trials", type=_pos_int("--trials"), default=50,
                   help="trials in the study (default 50)")
    p.add_argument("--seeds", type=_pos_int("--seeds"), default=3,
                   help="GA seeds per job-set (default 3)")
    p.add_argument("--budget", type=_pos_int("--budget"), default=20000,
                   help="evaluations per run, population x generations (default 20000)")
    p.add_argument("--storage", default=None,
                   help="sqlite:///file.db or a journal file, to resume a study")
    p.add_argument("--study-name", default=None,
                   help="study name in the storage (default: moga-tune)")
    p.add_argument("--timeout", type=_pos_float("--timeout"), default=None,
                   help="stop starting trials after this many seconds")
    p.add_argument("--sampler-seed", type=_seed, default=0,
                   help="seed of Optuna's sampler (default 0)")
    p.add_argument("--out", default="moga-tune", help="output folder (default: moga-tune)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=_cmd_tune)
    p = sub.add_parser("value", help="value-function workload: online heuristics against the "
                                      "best known value (GA) and an upper bound")
    _add_workload_args(p, power=None)
    p.add_argument("--value-seed", type=_seed, default=0, help="seed of the value functions")
    p.add_argument("--pop", type=_pos_int("--pop"), default=50, help="GA population (default 50)")
    p.add_argument("--gen", type=_pos_int("--gen"), default=40,
                   help="GA generations (default 40)")
    p.add_argument("--seed", type=_seed, default=1, help="GA seed (default 1)")
    p.add_argument("--out", default="moga-value", help="output folder (default: moga-value)")
    p.add_argument("--no-progress", action="store_true",
                   help="accepted for consistency (this command draws no bar)")
    p.set_defaults(func=_cmd_value)
    from .warmup import KERNEL_GROUPS

    p = sub.add_parser("warmup", help="compile every Numba kernel ahead of use (for a shared "
                                       "install or a CI image)")
    p.add_argument("--groups", nargs="+", choices=list(KERNEL_GROUPS), default=None,
                   help="kernel groups to compile (default: all)")
    p.set_defaults(func=_cmd_warmup)
    p = sub.add_parser("trace", help="read a trace and print its cleaning report")
    p.add_argument("path", nargs="?", default=None,
                   help="SWF file, as --trace (default: the bundled one)")
    p.add_argument("--trace", dest="trace_opt", default=None,
                   help="SWF file, plain or .gz (default: the bundled month of HPC2N)")
    p.add_argument("--max-procs", type=_pos_int("--max-procs"), default=None,
                   help="machine size for traces without a MaxProcs header (default: the "
                        "header's, else the widest job)")
    p.add_argument("--skip-malformed", action="store_true",
                   help="skip and count malformed trace lines instead of failing")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=_cmd_trace)
    return parser


#: What the compile notice says a cold kernel group costs (``moga warmup`` prints each group's
#: time; ``benchmarks/cold_start.py`` measures the main job's first run).
COMPILE_NOTE = "about a minute per group on 2 cores"


def _compile_notice(command: str, policy: str | None = None) -> None:
    """Say so before a command compiles kernels that are not in the cache."""
    from .warmup import cold_groups, command_groups

    groups = command_groups(command, policy)
    if not groups:
        return
    cold = cold_groups(groups)
    if cold:
        print(f"moga: compiling the kernels once ({', '.join(cold)}): {COMPILE_NOTE}; later "
              "runs load them from the cache (moga warmup compiles every kernel ahead)",
              file=sys.stderr, flush=True)


def _cmd_warmup(args) -> int:
    from .warmup import warmup

    print("compiling or loading every kernel group:", flush=True)
    secs = warmup(args.groups, say=lambda line: print(line, flush=True))
    print(f"done in {sum(secs.values()):.1f} s")
    return 0


def _show_warning(message, category, filename, lineno, file=None, line=None):
    """Warnings as one line each, as the command's other messages."""
    print(f"moga: warning: {message}", file=sys.stderr if file is None else file)


def main(argv=None) -> int:
    """Entry point of the ``moga`` command; returns the exit status."""
    import warnings

    parser = build_parser()
    args = parser.parse_args(argv)
    shown = warnings.showwarning
    warnings.showwarning = _show_warning
    try:
        _compile_notice(args.command, getattr(args, "policy", None))
        return args.func(args)
    except KeyboardInterrupt:
        print("\nmoga: interrupted", file=sys.stderr)
        return 130
    except MissingExtraError as e:
        print(f"moga: error: {e}", file=sys.stderr)
        return 2
    except (ValueError, OSError) as e:
        # Bad input and unusable files: the project's errors name the file, option or field.
        print(f"moga: error: {e}", file=sys.stderr)
        return 2
    finally:
        warnings.showwarning = shown


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
