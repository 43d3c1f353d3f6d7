"""``moga evaluate``: makespan and energy of the submit order on a job-set."""

from __future__ import annotations

import json
import time

from ..model.schedule import evaluate
from .common import add_workload_args, load_workload

HELP = "makespan and energy of the submit order on a job-set"


def add_arguments(p) -> None:
    add_workload_args(p)
    p.add_argument("--model", choices=["fluid", "at_start", "both"], default="both",
                   help="execution model (default: both)")
    p.add_argument("--json", action="store_true", help="print JSON")


def run(args) -> int:
    trace, fed, js = load_workload(args)
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
