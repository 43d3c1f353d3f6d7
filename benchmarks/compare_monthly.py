"""Baselines against MOGA on three monthly HPC2N job-sets.

For each 30-day window (batch mode, default federation, fluid model):
FCFS, EASY, FCFS-greenest, EASY-greenest, MOGA and MOGA without blacklist
(:func:`moga.run`'s default search and budget unless ``--pop`` / ``--gen`` say
otherwise), random search with MOGA's evaluations, and GA-MF (its own default
budget, or ``--pop`` / ``--gen``), seed 1. Writes ``results/compare_monthly.md``,
``.json`` and one front plot per job-set with the baseline points::

    python benchmarks/compare_monthly.py [--trace HPC2N-2002-2.2-cln.swf.gz]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from _bench import add_options, out_dir

import moga
from moga.baselines import Comparison, compare
from moga.model.workload import default_trace_path
from moga.outputs import atomic_write
from moga.plot import plot_front

ROOT = Path(__file__).resolve().parents[1]
#: Resolved by moga.model.traces: MOGA_TRACES, then ../shared/traces, then the current folder.
DEFAULT_TRACE = "HPC2N-2002-2.2-cln.swf.gz"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trace", default=DEFAULT_TRACE,
                    help="SWF trace: a path, or a file name looked up by moga.resolve_trace")
    ap.add_argument("--windows", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--model", default="fluid", choices=["fluid", "at_start"])
    ap.add_argument("--pop", type=int, default=None,
                    help="population size of MOGA and GA-MF (default: each one's own)")
    ap.add_argument("--gen", type=int, default=None,
                    help="generations of MOGA and GA-MF (default: each one's own)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--from-json", action="store_true",
                    help="only rewrite the report from an existing results/compare_monthly.json")
    add_options(ap, "60 jobs of the bundled month, population 8 x 2 generations")
    args = ap.parse_args(argv)
    out = out_dir(args)
    if args.from_json:
        record = json.loads((out / "compare_monthly.json").read_text())
        for rec in record:
            rec.setdefault("trace", Path(args.trace).name)
            rec.setdefault("model", args.model)
        atomic_write(out / "compare_monthly.md", render(record))
        print(f"wrote {out / 'compare_monthly.md'}")
        return
    if args.quick:
        args.trace, args.windows = str(default_trace_path()), [0]
        args.pop, args.gen = args.pop or 8, args.gen or 2
    args.trace = str(moga.resolve_trace(args.trace))

    trace = moga.load_swf(args.trace)
    fed = moga.Federation.preset("default")
    starts = trace.windows(days=30)
    record = []
    for w in args.windows:
        if args.quick:
            js = trace.jobset(start=starts[w], n_jobs=60, federation=fed, seed=0)
        else:
            js = trace.jobset(start=starts[w], days=30, federation=fed, seed=0)
        c = compare(js, fed, pop_size=args.pop, n_gen=args.gen, seed=args.seed, model=args.model)
        fronts = dict(c.fronts)
        main_front = fronts.pop("MOGA")
        plot_front(main_front, baselines=c.points, fronts=fronts,
                   path=out / f"compare_monthly_w{w}.png", title=f"{js.name} ({args.model})")
        record.append({"window": w, "jobset": js.name, "n_jobs": len(js), "rows": c.rows,
                       "reference": c.reference.tolist(), "trace": Path(args.trace).name,
                       "model": args.model, "budgets": _budgets(c, args), **c.info})
        print(js.name, flush=True)
        print(c.table(), flush=True)
    atomic_write(out / "compare_monthly.json", json.dumps(record, indent=2) + "\n")
    atomic_write(out / "compare_monthly.md", render(record))
    print(f"wrote {out / 'compare_monthly.md'}")


def _budgets(c, args):
    """Per search algorithm of a comparison: its population, generations and evaluations."""
    out = {}
    for name, r in c.results.items():
        if name in ("MOGA", "MOGA without blacklist"):
            p = r.params
        elif name == "GA-MF":
            p = moga.GAParams(pop_size=args.pop, n_gen=args.gen).resolved()
        else:
            continue
        out[name] = {"pop_size": p.pop_size, "n_gen": p.n_gen,
                     "easy_search": bool(p.easy_search), "n_evals": int(r.n_evals)}
    out["random search"] = {"n_evals": int(c.results["random search"].n_evals)}
    return out


def _budget_text(r0):
    """How the record's search algorithms were run, in words."""
    b = r0.get("budgets")
    if b is None:  # records written before the budgets were kept
        p = r0["params"]
        return (f"MOGA, MOGA without blacklist and GA-MF with pop {p['pop_size']} x "
                f"{p['n_gen']} generations, random search with MOGA's evaluation budget")
    m, g = b["MOGA"], b["GA-MF"]
    search = "EASY search (searched through EASY decodes, front in order)" if m["easy_search"] \
        else "in-order search"
    return (f"MOGA and MOGA without blacklist: {search}, pop {m['pop_size']} x {m['n_gen']} "
            f"generations; GA-MF: pop {g['pop_size']} x {g['n_gen']}; random search with "
            f"MOGA's evaluations ({b['random search']['n_evals']:,} on the first job-set)")


def render(record):
    """The Markdown report of a comparison record."""
    r0 = record[0]
    lines = ["# Baselines against MOGA on three monthly HPC2N job-sets", "",
             f"`python benchmarks/compare_monthly.py`: {r0['trace']}, 30-day windows "
             f"{[r['window'] for r in record]} (batch mode), default federation, `{r0['model']}` "
             f"model; {_budget_text(r0)}; seed {r0['seed']}. Front algorithms show their "
             "knee; `hv` is the hypervolume of all their points with objectives divided by "
             "FCFS's, against (1.1, 1.1) (FCFS alone: 0.0100). Mean BSLD: mean bounded "
             "slowdown, 10-minute bound. The EASY heuristics plan on exact run times.", ""]
    lines += summary(record) + [""]
    for rec in record:
        c = Comparison(rec["rows"], {}, {}, np.array(rec["reference"]), None, None, rec["model"])
        lines += [f"## {rec['jobset']}: {rec['n_jobs']} jobs", "", "```", c.table(), "```", "",
                  f"![fronts](compare_monthly_w{rec['window']}.png)", ""]
    return "\n".join(lines)


def summary(record):
    """Median over the job-sets, per algorithm, of the change against FCFS and of hv."""
    names = [r["algorithm"] for r in record[0]["rows"]]
    out = ["| algorithm | Δ makespan vs FCFS | Δ energy vs FCFS | Δ mean BSLD vs FCFS "
           "| hv (FCFS: 0.0100) |", "|---|---|---|---|---|"]
    for name in names:
        ch = []
        for rec in record:
            rows = {r["algorithm"]: r for r in rec["rows"]}
            r, f = rows[name], rows["FCFS"]
            ch.append([100 * (r["makespan_h"] / f["makespan_h"] - 1),
                       100 * (r["energy_MWh"] / f["energy_MWh"] - 1),
                       100 * (r["mean_bounded_slowdown"] / f["mean_bounded_slowdown"] - 1),
                       r["hv"]])
        m = np.median(np.array(ch), axis=0)
        out.append(f"| {name} | {m[0]:+.1f}% | {m[1]:+.1f}% | {m[2]:+.1f}% | {m[3]:.4f} |")
    return ["Medians over the job-sets (front algorithms: their knee):", ""] + out


if __name__ == "__main__":
    main()
