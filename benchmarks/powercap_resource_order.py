"""The power-capped dispatchers' resource order: fastest clusters first against consolidation.

The seed's mapper (and AccaSim's PRB) orders resources by consolidation: the
fullest cluster that holds the job first, so that wide free blocks stay free
(``rule="consolidate"``, docs/design.md §11). The project's default takes the
fastest clusters first. This runs PRB and the hybrid CP dispatcher (window
16, 0.01 s per event) with both orders on the job-sets of
``benchmarks/powercap_robustness.py`` (three traces of different machines,
three start points each, release mode, the ``default`` federation, every
dispatcher planning on requested times) at caps of 0.6 and 0.4 x peak, and
reports the ratio consolidate / fastest of the weighted queue time and of the
energy (below 1: consolidation is better), as a median with its range over
the start points. Writes ``results/powercap_resource_order.md`` and
``.json``::

    python benchmarks/powercap_resource_order.py      # about 5 min on 2 cores
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

import numpy as np
from _bench import add_options, out_dir
from powercap_robustness import _cell, samples

import moga
from moga.model.workload import default_trace_path
from moga.outputs import atomic_write
from moga.powercap import CPOptions, run_dispatcher

ROOT = Path(__file__).resolve().parents[1]
RULES = ("fastest", "consolidate")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=200, help="jobs per sample")
    ap.add_argument("--samples", type=int, default=3, help="start points per trace (at most 3)")
    ap.add_argument("--caps", type=float, nargs="+", default=[0.6, 0.4])
    ap.add_argument("--dispatchers", nargs="+", default=["prb", "hybrid"],
                    choices=["easy", "prb", "hybrid"])
    add_options(ap, "one sample of 40 bundled jobs, cap 0.6, PRB only")
    args = ap.parse_args(argv)
    out = out_dir(args)
    traces = None
    if args.quick:
        traces, args.jobs, args.samples = {str(default_trace_path()): (0,)}, 40, 1
        args.caps, args.dispatchers = [0.6], ["prb"]
    t_all = time.perf_counter()
    fed0 = moga.Federation.preset("default")
    cp = CPOptions(window=16, time_limit=0.01)
    rows = []
    for trace_name, js, _, _ in samples(fed0, args.jobs, args.samples, min(args.caps), traces):
        for cap in args.caps:
            fed = fed0.with_cap(fraction=cap)
            for d in args.dispatchers:
                res = {}
                for rule in RULES:
                    t0 = time.perf_counter()
                    r = run_dispatcher(js, fed, d, rule=rule, cp=cp, estimates="requested")
                    res[rule] = (r, time.perf_counter() - t0)
                (f, _), (c, wall) = res["fastest"], res["consolidate"]
                wf, wc = f.metrics.weighted_queue_time, c.metrics.weighted_queue_time
                rows.append({"trace": Path(trace_name).name.split("-cln")[0].split(".swf")[0],
                             "jobset": js.name, "n_jobs": len(js), "cap": cap, "dispatcher": d,
                             "wqt_fastest": wf, "wqt_consolidate": wc,
                             "wqt_ratio": wc / wf if wf > 0 else float("nan"),
                             "energy_ratio": c.metrics.energy / f.metrics.energy,
                             "coalloc_fastest": int(np.sum((f.alloc > 0).sum(axis=1) > 1)),
                             "coalloc_consolidate": int(np.sum((c.alloc > 0).sum(axis=1) > 1)),
                             "wall_s": wall})
                print(f"  cap {cap} {d}: weighted queue time ratio {rows[-1]['wqt_ratio']:.3f}",
                      flush=True)
    doc = {"machine": platform.processor() or platform.machine(),
           "wall_s": time.perf_counter() - t_all, "rows": rows}
    atomic_write(out / "powercap_resource_order.json", json.dumps(doc, indent=2) + "\n")
    atomic_write(out / "powercap_resource_order.md", report(doc, args))
    print(report(doc, args))


def report(doc, args) -> str:
    rows = doc["rows"]
    traces = list(dict.fromkeys(r["trace"] for r in rows))
    q = np.array([r["wqt_ratio"] for r in rows])
    md = ["# Power caps: fastest-first against consolidating resource order", "",
          f"Regenerate: `python benchmarks/powercap_resource_order.py` ({doc['machine']}, "
          f"{doc['wall_s']:.0f} s). The job-sets of the robustness study ({args.jobs} jobs from "
          f"each of {args.samples} start points per trace, release mode, the `default` "
          "federation, power factors lognormal(0, 0.25), seed 0); every dispatcher plans on "
          "requested times; the hybrid with a window of 16 and 0.01 s per event. Each cell is "
          "the ratio consolidate / fastest (below 1: consolidation is better), the median "
          "over the start points and its range in brackets.", "",
          f"Consolidation gives a lower weighted queue time in {int(np.sum(q < 1))}, the same "
          f"in {int(np.sum(q == 1))} and a higher one in {int(np.sum(q > 1))} of {len(rows)} "
          "runs (PRB and hybrid together).", ""]
    for metric, title in (("wqt_ratio", "Weighted queue time"), ("energy_ratio", "Energy")):
        md += [f"## {title}, consolidate / fastest", "",
               "| cap (x peak) | dispatcher | " + " | ".join(traces) + " | all |",
               "|---|---|" + "---|" * (len(traces) + 1)]
        for cap in dict.fromkeys(r["cap"] for r in rows):
            for d in dict.fromkeys(r["dispatcher"] for r in rows):
                sub = [r for r in rows if r["cap"] == cap and r["dispatcher"] == d]
                md.append(f"| {cap:g} | {d} | " + " | ".join(
                    _cell([r[metric] for r in sub if r["trace"] == t]) for t in traces)
                    + f" | {_cell([r[metric] for r in sub])} |")
        md.append("")
    cf = sum(r["coalloc_fastest"] for r in rows)
    cc = sum(r["coalloc_consolidate"] for r in rows)
    md += [f"Co-allocated jobs over all runs: {cf} fastest-first, {cc} consolidating.", "",
           "Per run: `results/powercap_resource_order.json`.", ""]
    return "\n".join(md)


if __name__ == "__main__":
    main()
