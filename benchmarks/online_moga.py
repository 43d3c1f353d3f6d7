"""Online MOGA against the online heuristics on release-mode months of three traces.

For each trace, the 30-day window ``--window`` (the second by default) in
release mode (jobs arrive at their submit time) on its federation: HPC2N on
the default preset, CTC-SP2 on the default preset sized to the trace
(``default@auto``), CEA-Curie on the ``curie`` preset. Every dispatcher plans
on the requested (walltime) times, what a production dispatcher knows:

* EASY (fastest clusters first), EASY-greenest (the greenest first), FCFS
  and PRB, on the kernel event loop;
* online MOGA (:class:`moga.evolution.OnlineMOGA`) at each ``--preferences``,
  its default GA budget (population 20, 10 generations per decision).

Reports energy, makespan, mean wait, mean bounded slowdown (10-minute
bound), the decisions and their wall time, and whether some online MOGA
point uses less energy than EASY at no more mean bounded slowdown.
Writes ``results/online_moga.md`` and ``.json``::

    python benchmarks/online_moga.py            # about 40 min on 2 cores
    python benchmarks/online_moga.py --traces HPC2N-2002-2.2-cln.swf.gz --preferences knee
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
from moga import simulate
from moga.evolution import OnlineMOGA
from moga.model.workload import default_trace_path
from moga.outputs import atomic_write

ROOT = Path(__file__).resolve().parents[1]
#: Trace file (resolved by moga.resolve_trace) -> federation spec.
TRACES = {"HPC2N-2002-2.2-cln.swf.gz": "default",
          "CTC-SP2-1996-3.1-cln.swf.gz": "default@auto",
          "CEA-Curie-2011-2.1-cln.swf.gz": "curie"}
PREFERENCES = ("slowdown:0", "slowdown:0.1", "knee")
#: Baselines: label -> (policy, allocation rule).
BASELINES = {"EASY": ("easy", "fastest"), "EASY-greenest": ("easy", "greenest"),
             "FCFS": ("fcfs", "fastest"), "PRB": ("prb", "fastest")}


def _row(label, s, wall):
    m = s.summary()
    info = s.info
    return {"policy": label, "energy_MWh": s.energy / 3.6e9, "makespan_h": s.makespan / 3600,
            "mean_wait_h": m["mean_wait_s"] / 3600,
            "mean_bsld": m["mean_bounded_slowdown"], "wall_s": wall,
            "decisions": info.get("decisions"),
            "decision_mean_ms": 1e3 * info["decision_mean_s"] if "decisions" in info else None,
            "decision_p95_ms": 1e3 * info["decision_p95_s"] if "decisions" in info else None,
            "decision_max_ms": 1e3 * info["decision_max_s"] if "decisions" in info else None,
            "decision_total_s": info.get("decision_s") if "decisions" in info else None,
            "decision_cpu_ms": (1e3 * info["decision_cpu_s"] / max(1, info["decisions"])
                                if "decisions" in info else None),
            "plan_mismatches": info.get("plan_mismatches"),
            "fallback_starts": info.get("fallback_starts")}


def run_trace(trace_file, fed_spec, window, preferences, pop, gen, seed, n_jobs=None):
    tr = moga.load_swf(moga.resolve_trace(trace_file))
    fed = moga.Federation.load(fed_spec, auto_nodes=tr.auto_nodes)
    start = tr.windows(days=30)[window]
    size = {"days": 30} if n_jobs is None else {"n_jobs": n_jobs}
    js = tr.jobset(start=start, federation=fed, seed=0, batch=False, wide="drop", **size)
    # The kernels are compiled (or loaded from the cache) here, so that no decision's time
    # includes them.
    simulate(js.take(np.arange(min(len(js), 40))), fed,
             OnlineMOGA(pop_size=4, generations=2, seed=seed))
    rows = []
    for label, (policy, rule) in BASELINES.items():
        est = "exact" if policy == "fcfs" else "requested"  # FCFS does not plan
        t0 = time.perf_counter()
        s = simulate(js, fed, policy, rule=rule, estimates=est)
        rows.append(_row(label, s, time.perf_counter() - t0))
    for pref in preferences:
        t0 = time.perf_counter()
        s = simulate(js, fed, OnlineMOGA(preference=pref, pop_size=pop, generations=gen,
                                         seed=seed))
        rows.append(_row(f"online MOGA {pref}", s, time.perf_counter() - t0))
        print(f"  {js.name}: {rows[-1]['policy']}: {rows[-1]['energy_MWh']:.3f} MWh, bsld "
              f"{rows[-1]['mean_bsld']:.2f}, {rows[-1]['wall_s']:.0f} s", flush=True)
    easy = rows[0]
    for r in rows:
        r["energy_vs_easy_pct"] = 100 * (r["energy_MWh"] / easy["energy_MWh"] - 1)
        r["bsld_vs_easy_pct"] = 100 * (r["mean_bsld"] / easy["mean_bsld"] - 1)
    wins = [r["policy"] for r in rows if r["policy"].startswith("online")
            and r["energy_MWh"] < easy["energy_MWh"] and r["mean_bsld"] <= easy["mean_bsld"]]
    return {"trace": trace_file, "jobset": js.name, "n_jobs": len(js), "federation": fed.name,
            "nodes": int(fed.total_nodes), "dropped_wide": js.report.get("wide_dropped", 0),
            "rows": rows, "goal_met_by": wins}


def _table(res) -> list[str]:
    md = ["| policy | energy MWh (vs EASY) | makespan h | mean wait h | mean bsld (vs EASY) | "
          "decisions | ms per decision: mean / p95 / max | CPU ms per decision | deciding s | "
          "run s |",
          "|---|---|---|---|---|---|---|---|---|---|"]
    for r in res["rows"]:
        dec = ("" if r["decisions"] is None else
               f"{r['decisions']} | {r['decision_mean_ms']:.1f} / {r['decision_p95_ms']:.1f} / "
               f"{r['decision_max_ms']:.0f} | {r['decision_cpu_ms']:.1f} | "
               f"{r['decision_total_s']:.0f}")
        md.append(f"| {r['policy']} | {r['energy_MWh']:.2f} ({r['energy_vs_easy_pct']:+.1f}%) | "
                  f"{r['makespan_h']:.1f} | {r['mean_wait_h']:.2f} | {r['mean_bsld']:.2f} "
                  f"({r['bsld_vs_easy_pct']:+.1f}%) | " + (dec or " | | | ") +
                  f" | {r['wall_s']:.1f} |")
    return md


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--traces", nargs="+", default=list(TRACES),
                    help=f"trace files (default: {', '.join(TRACES)})")
    ap.add_argument("--window", type=int, default=1, help="which 30-day window (default 1)")
    ap.add_argument("--preferences", nargs="+", default=list(PREFERENCES))
    ap.add_argument("--pop", type=int, default=20)
    ap.add_argument("--gen", type=int, default=10)
    ap.add_argument("--seed", type=int, default=1)
    add_options(ap, "60 jobs of the bundled month, one preference, population 4 x 2 generations")
    args = ap.parse_args(argv)
    out = out_dir(args)
    n_jobs = None
    if args.quick:
        args.traces, args.window, n_jobs = [str(default_trace_path())], 0, 60
        args.preferences, args.pop, args.gen = args.preferences[:1], 4, 2
    results = []
    for trace in args.traces:
        print(f"{trace} ...", flush=True)
        results.append(run_trace(trace, TRACES.get(trace, "default@auto"), args.window,
                                 args.preferences, args.pop, args.gen, args.seed, n_jobs))
    doc = {"machine": platform.processor() or platform.machine(), "window": args.window,
           "pop": args.pop, "gen": args.gen, "seed": args.seed, "results": results}
    atomic_write(out / "online_moga.json", json.dumps(doc, indent=2) + "\n")
    md = ["# Online MOGA against the online heuristics", "",
          "Regenerate: `python benchmarks/online_moga.py` (writes this file and "
          "`online_moga.json`). Each trace's 30-day window "
          f"{args.window} in release mode; every dispatcher plans on the requested times "
          "(FCFS does not plan); online MOGA with a population of "
          f"{args.pop}, {args.gen} generations per decision, window 32, seed {args.seed}. "
          "Bounded slowdown with a 10-minute bound. Decision times are wall-clock on "
          f"{doc['machine']} (2 cores; a decision's small decode batches run in one thread); "
          "CPU ms per decision is the process CPU time (`time.process_time`) spent deciding, "
          "over the decisions.",
          ""]
    for res in results:
        md += [f"## {res['jobset']}: {res['n_jobs']} jobs on {res['federation']} "
               f"({res['nodes']} nodes)", ""] + _table(res) + [""]
        if res["goal_met_by"]:
            md.append("Less energy than EASY at no more mean bounded slowdown: "
                      + ", ".join(res["goal_met_by"]) + ".")
        else:
            md.append("No online MOGA point uses less energy than EASY at no more mean bounded "
                      "slowdown on this trace.")
        md.append("")
    everywhere = [r["policy"] for r in results[0]["rows"]
                  if all(r["policy"] in res["goal_met_by"] for res in results)]
    md += ["## Summary", "",
           "Less energy than EASY at no more mean bounded slowdown on every trace: "
           + (", ".join(everywhere) if everywhere else "no online MOGA setting") + ".", ""]
    atomic_write(out / "online_moga.md", "\n".join(md))
    print(f"wrote {out / 'online_moga.md'}")


if __name__ == "__main__":
    main()
