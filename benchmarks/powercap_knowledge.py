"""What the power-capped dispatchers know: exact or requested run times, real or predicted power.

The three HPC2N months of ``benchmarks/powercap.py`` (release mode, the
``default`` federation, power factors lognormal around 1, seed 0), EASY and
PRB at caps of 0.6 and 0.4 x peak, planning on

* exact or requested (walltime) run times (``estimates``), and
* the jobs' real power factors or predictions with a log-normal error of
  0.1 or 0.3 (``power_error``; three prediction seeds each, the mean and the
  range reported), with a safety margin of 0, 10% or 20% of each cap kept
  free (``power_margin``).

The metrics are those of the real draw: with predicted power a cap can be
exceeded, and the table says by how much (peak power) and how long. The
hybrid CP dispatcher takes minutes per run and is left to
``benchmarks/powercap.py``. Writes ``results/powercap_knowledge.md`` and
``.json``::

    python benchmarks/powercap_knowledge.py          # about 3 minutes on 2 cores
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

import numpy as np
from _bench import add_options, out_dir

import moga
from moga.model.workload import default_trace_path
from moga.outputs import atomic_write
from moga.powercap import run_dispatcher

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_TRACE = "HPC2N-2002-2.2-cln.swf.gz"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trace", default=DEFAULT_TRACE)
    ap.add_argument("--starts", type=int, nargs="+", default=[40000, 80000, 120000])
    ap.add_argument("--days", type=float, default=30.0)
    ap.add_argument("--caps", type=float, nargs="+", default=[0.6, 0.4])
    ap.add_argument("--errors", type=float, nargs="+", default=[0.0, 0.1, 0.3])
    ap.add_argument("--margins", type=float, nargs="+", default=[0.0, 0.1, 0.2],
                    help="safety margins tried with predicted power (share of the cap kept free)")
    ap.add_argument("--seeds", type=int, default=3, help="prediction seeds per error")
    add_options(ap, "half a day of the bundled month, cap 0.6, errors 0 and 0.1, one seed")
    args = ap.parse_args(argv)
    out = out_dir(args)
    if args.quick:
        args.trace, args.starts, args.days = str(default_trace_path()), [0], 0.5
        args.caps, args.errors, args.margins, args.seeds = [0.6], [0.0, 0.1], [0.1], 1
    t_all = time.perf_counter()
    trace = moga.load_swf(moga.resolve_trace(args.trace))
    fed0 = moga.Federation.preset("default")
    rows = []
    for start in args.starts:
        js = trace.jobset(start=start, days=args.days, federation=fed0, batch=False,
                          power="lognormal", seed=0)
        print(f"{js.name}: {len(js)} jobs", flush=True)
        for cap in args.caps:
            fed = fed0.with_cap(fraction=cap)
            for d in ("easy", "prb"):
                for est in ("exact", "requested"):
                    for err, margin in [(e, m) for e in args.errors
                                        for m in (args.margins if e else [0.0])]:
                        runs = [run_dispatcher(js, fed, d, estimates=est, power_error=err,
                                               power_seed=s, power_margin=margin)
                                for s in (range(args.seeds) if err else [0])]
                        ms = [r.metrics for r in runs]

                        def stat(key, ms=ms):
                            v = np.array([getattr(m, key) for m in ms])
                            return float(v.mean()), float(v.min()), float(v.max())

                        rows.append({"jobset": js.name, "n_jobs": len(js), "cap": cap,
                                     "dispatcher": d, "estimates": est, "power_error": err,
                                     "power_margin": margin,
                                     "seeds": len(runs),
                                     **{k: stat(k) for k in ("weighted_queue_time", "mean_bsld",
                                                             "energy", "peak_power",
                                                             "time_above_cap")}})
    doc = {"machine": platform.processor() or platform.machine(),
           "wall_s": time.perf_counter() - t_all, "cap_W_per_fraction": fed0.peak_power,
           "rows": rows}
    atomic_write(out / "powercap_knowledge.json", json.dumps(doc, indent=2) + "\n")

    def cell(v, scale=1.0, fmt=".2f"):
        mean, lo, hi = (x * scale for x in v)
        return f"{mean:{fmt}}" if lo == hi else f"{mean:{fmt}} ({lo:{fmt}}-{hi:{fmt}})"

    md = ["# What the power-capped dispatchers know", "",
          "Regenerate: `python benchmarks/powercap_knowledge.py` "
          f"({doc['machine']}, {doc['wall_s']:.0f} s). HPC2N months in release mode on the "
          "`default` federation, power factors lognormal(0, 0.25) clipped to [0.5, 1.5] "
          "(seed 0). Dispatchers plan on exact or requested run times and on the real power "
          "factors (error 0) or predictions `p exp(N(0, error))` clipped to [0.5, 1.5] "
          f"({args.seeds} prediction seeds: mean, and the range in brackets), keeping a margin "
          "of the cap free; every metric is the real draw's, against the cap itself. "
          "Weighted queue time in hours; peak power in kW against the cap; "
          "time above the cap in hours.", ""]
    for name in dict.fromkeys(r["jobset"] for r in rows):
        sub = [r for r in rows if r["jobset"] == name]
        md += [f"## {name} ({sub[0]['n_jobs']} jobs)", "",
               "| cap (x peak, kW) | dispatcher | run times | power error | margin | weighted "
               "queue time (h) | mean bsld | energy (MWh) | peak power (kW) | time above cap "
               "(h) |", "|---|---|---|---|---|---|---|---|---|---|"]
        for r in sub:
            md.append(f"| {r['cap']:.2f} ({r['cap'] * fed0.peak_power / 1e3:.1f}) | "
                      f"{r['dispatcher']} | {r['estimates']} | {r['power_error']:g} | "
                      f"{r['power_margin']:g} | "
                      f"{cell(r['weighted_queue_time'], 1 / 3600, '.0f')} | "
                      f"{cell(r['mean_bsld'])} | {cell(r['energy'], 1 / 3.6e9, '.3f')} | "
                      f"{cell(r['peak_power'], 1e-3, '.1f')} | "
                      f"{cell(r['time_above_cap'], 1 / 3600, '.1f')} |")
        md.append("")
    atomic_write(out / "powercap_knowledge.md", "\n".join(md))
    print("\n".join(md))


if __name__ == "__main__":
    main()
