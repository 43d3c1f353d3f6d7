"""``moga trace``: read a trace and print its cleaning report."""

from __future__ import annotations

import json

from ..model.traces import resolve_trace
from ..model.workload import default_trace_path, load_swf
from .common import (
    bounded,
)

HELP = "read a trace and print its cleaning report"


def add_arguments(p) -> None:
    p.add_argument("path", nargs="?", default=None,
                   help="SWF file, as --trace (default: the bundled one)")
    p.add_argument("--trace", dest="trace_opt", default=None,
                   help="SWF file, plain or .gz (default: the bundled month of HPC2N)")
    p.add_argument("--max-procs", type=bounded("--max-procs", "max_procs"), default=None,
                   help="machine size for traces without a MaxProcs header (default: the "
                        "header's, else the widest job)")
    p.add_argument("--skip-malformed", action="store_true",
                   help="skip and count malformed trace lines instead of failing")
    p.add_argument("--json", action="store_true", help="print JSON")


def run(args) -> int:
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
