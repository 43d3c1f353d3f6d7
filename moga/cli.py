"""The ``moga`` command."""

from __future__ import annotations

import argparse
import json
import sys
import time

from .platform import PRESETS, Federation
from .schedule import evaluate
from .workload import default_trace_path, load_swf


def _add_workload_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("workload")
    g.add_argument("--trace", default=None,
                   help="SWF trace, plain or .gz (default: the bundled month of HPC2N)")
    g.add_argument("--start", type=int, default=0, help="index of the first job (default 0)")
    w = g.add_mutually_exclusive_group()
    w.add_argument("--n-jobs", type=int, default=None, help="job-set window by count")
    w.add_argument("--days", type=float, default=None, help="job-set window by days (30: a month)")
    g.add_argument("--release", action="store_true",
                   help="release jobs at their (shifted) submit times instead of all at 0")
    g.add_argument("--wide", choices=["error", "drop", "clip"], default="error",
                   help="jobs wider than the federation (default: error)")
    g.add_argument("--seed", type=int, default=0, help="seed of the job attributes (default 0)")
    g.add_argument("--max-procs", type=int, default=None,
                   help="machine size for traces without a MaxProcs header")
    g.add_argument("--skip-malformed", action="store_true",
                   help="skip and count malformed trace lines instead of failing")
    g.add_argument("--federation", default="default",
                   help=f"preset ({', '.join(PRESETS)}) or a TOML file (default: default)")


def _load(args):
    path = args.trace or default_trace_path()
    trace = load_swf(path, skip_malformed=args.skip_malformed, max_procs=args.max_procs)
    fed = Federation.load(args.federation)
    js = trace.jobset(start=args.start, n_jobs=args.n_jobs, days=args.days, federation=fed,
                      wide=args.wide, seed=args.seed, batch=not args.release)
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


def _cmd_trace(args) -> int:
    path = args.path or default_trace_path()
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
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("evaluate", help="makespan and energy of the submit order on a job-set")
    _add_workload_args(p)
    p.add_argument("--model", choices=["fluid", "at_start", "both"], default="both",
                   help="execution model (default: both)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=_cmd_evaluate)
    p = sub.add_parser("trace", help="read a trace and print its cleaning report")
    p.add_argument("path", nargs="?", default=None, help="SWF file (default: the bundled one)")
    p.add_argument("--max-procs", type=int, default=None)
    p.add_argument("--skip-malformed", action="store_true")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=_cmd_trace)
    return parser


def main(argv=None) -> int:
    """Entry point of the ``moga`` command; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (ValueError, OSError) as e:
        print(f"moga: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
