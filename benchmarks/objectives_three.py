"""Three objectives: NSGA-II against NSGA-III (pymoo's, with MOGA's operators), and what the
catalogue's per-job objectives cost a population decode (a benchmark, not a test).

Both algorithms run through pymoo's ``minimize`` on the same in-order
:class:`~moga.evolution.SchedulingProblem` of three objectives, with the same
sampling, crossover, mutation and duplicate elimination (MOGA's, at MOGA's
crossover probability and cluster rate), the same population and generations,
hence equal evaluations; only the survival (and pymoo's mating selection of
each) differs. NSGA-III's reference directions are Das and Dennis's for 3
objectives and 12 partitions (91 directions; population 92). Each run's
final non-dominated front is scored by the normalised hypervolume of
:func:`moga.run` (objectives divided by the submit order's, reference point
1.1 each). Medians over seeds, per objective set.

The decode cost: CPU time of one decode of 200 random chromosomes of 1,000 jobs
on one thread, per objective set, in order and with EASY.

Writes ``results/objectives_three.json`` and ``results/objectives_three.md``::

    python benchmarks/objectives_three.py            # several minutes
    python benchmarks/objectives_three.py --quick    # seconds, to a temporary folder
"""

from __future__ import annotations

import argparse
import json
import platform
import time

import numba
import numpy as np
from _bench import add_options, out_dir
from pymoo.algorithms.moo.nsga2 import NSGA2
from pymoo.algorithms.moo.nsga3 import NSGA3
from pymoo.optimize import minimize
from pymoo.util.ref_dirs import get_reference_directions

import moga
from moga.evolution.operators import ScheduleDuplicateElimination, ScheduleSampling
from moga.evolution.params import GAParams
from moga.evolution.parts import HV_FACTOR, MOGA_CLUSTER_RATE, MOGA_CROSSOVER_PROB
from moga.evolution.problem import SchedulingProblem
from moga.metrics import nondominated, normalized_hypervolume
from moga.model.objectives import submit_reference
from moga.outputs import atomic_write

SETS = (("makespan", "energy", "bsld"), ("makespan", "energy", "wait"))
#: What each objective set is run with: pymoo's two, then MOGA's own loop with NSGA-II's
#: survival (its default) and with NSGA-III's (``GAParams.survival = "nsga3"``), at equal
#: evaluations between the two.
ALGORITHMS = ("NSGA-II", "NSGA-III", "moga.run", "moga.run NSGA-III")
COST_SETS = (("makespan", "energy"), ("makespan", "energy", "wait"),
             ("makespan", "energy", "bsld"), ("makespan", "energy", "peak_power"))


def _algorithm(name, pop, seed):
    crossover, mutation = GAParams().operators(crossover_prob=MOGA_CROSSOVER_PROB,
                                               cluster_rate=MOGA_CLUSTER_RATE)
    common = dict(sampling=ScheduleSampling(), crossover=crossover, mutation=mutation,
                  eliminate_duplicates=ScheduleDuplicateElimination())
    if name == "NSGA-II":
        return NSGA2(pop_size=pop, **common)
    dirs = get_reference_directions("das-dennis", 3, n_partitions=12 if pop >= 92 else 3)
    return NSGA3(ref_dirs=dirs, pop_size=pop, **common)


def _one(js, fed, objectives, name, pop, n_gen, seed, reference):
    problem = SchedulingProblem(js, fed, objectives=objectives)
    t0 = time.process_time()
    res = minimize(problem, _algorithm(name, pop, seed), ("n_gen", n_gen), seed=seed,
                   verbose=False)
    cpu = time.process_time() - t0
    F = np.atleast_2d(res.pop.get("F"))
    F = F[nondominated(F)]
    return {"algorithm": name, "objectives": list(objectives), "seed": seed,
            "hv": normalized_hypervolume(F, reference, HV_FACTOR), "front_size": int(len(F)),
            "n_evals": int(res.algorithm.evaluator.n_eval), "cpu_s": cpu}


def _moga(js, fed, objectives, pop, n_gen, seed, reference, survival=None):
    """``moga.run`` at the same population and generations: its own loop (neighbourhood
    mating, the EASY search's twins, the archive), so more decodes per generation; with
    ``survival="nsga3"``, NSGA-III's survival in that loop."""
    t0 = time.process_time()
    res = moga.run(js, fed, pop_size=pop, n_gen=n_gen, seed=seed, objectives=objectives,
                   params={"survival": "nsga2" if survival is None else survival})
    cpu = time.process_time() - t0
    assert np.allclose(res.reference, reference, rtol=1e-12)
    return {"algorithm": "moga.run" if survival is None else "moga.run NSGA-III",
            "objectives": list(objectives), "seed": seed,
            "hv": normalized_hypervolume(res.F, reference, HV_FACTOR),
            "front_size": int(len(res.F)), "n_evals": int(res.n_evals), "cpu_s": cpu}


def _decode_cost(js, fed, P, repeat):
    J, K = len(js), fed.n_clusters
    rng = np.random.default_rng(0)
    X = np.hstack([np.array([rng.permutation(J) for _ in range(P)], dtype=float),
                   rng.random((P, J * K)) * (rng.random((P, J * K)) < 0.3)])
    rows = []
    for backfill in ("none", "easy"):
        for objectives in COST_SETS:
            p = SchedulingProblem(js, fed, objectives=objectives, backfill=backfill)
            p.decode(X[:2])
            ts = []
            for _ in range(repeat):
                t0 = time.process_time()
                p.decode(X)
                ts.append(time.process_time() - t0)
            rows.append({"backfill": backfill, "objectives": list(objectives),
                         "cpu_ms_min": 1e3 * min(ts), "cpu_ms_median": 1e3 * float(np.median(ts))})
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=500, help="jobs of the bundled month")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--gen", type=int, default=100)
    ap.add_argument("--only", nargs="+", choices=ALGORITHMS, default=None,
                    help="run these algorithms only, the others' runs read from the "
                         "existing objectives_three.json of --out (same jobs, seeds, "
                         "population and generations)")
    add_options(ap)
    args = ap.parse_args(argv)
    out = out_dir(args)
    kept = []
    if args.only:
        old = json.loads((out / "objectives_three.json").read_text())
        if (old["jobs"], old["seeds"], old["n_gen"]) != (args.jobs, args.seeds, args.gen):
            raise SystemExit("--only: the stored runs are of other jobs, seeds or generations")
        kept = [r for r in old["runs"] if r["algorithm"] not in args.only]
    jobs, seeds, n_gen, pop = args.jobs, args.seeds, args.gen, 92
    cost_jobs, cost_rows, repeat = 1000, 200, 9
    if args.quick:
        jobs, seeds, n_gen, pop, cost_jobs, cost_rows, repeat = 150, 2, 3, 12, 60, 8, 2
    fed = moga.Federation.preset("default")
    trace = moga.load_default()
    js = trace.jobset(n_jobs=jobs, federation=fed)
    runs = list(kept)
    for objectives in SETS:
        reference = submit_reference(js, fed, objectives)
        for seed in range(1, seeds + 1):
            for name in ALGORITHMS:
                if args.only and name not in args.only:
                    continue
                r = (_moga(js, fed, objectives, pop, n_gen, seed, reference)
                     if name == "moga.run" else
                     _moga(js, fed, objectives, pop, n_gen, seed, reference, "nsga3")
                     if name == "moga.run NSGA-III" else
                     _one(js, fed, objectives, name, pop, n_gen, seed, reference))
                runs.append(r)
                print(f"{','.join(objectives)} {name} seed {seed}: hv {r['hv']:.4f}, "
                      f"front {r['front_size']}, {r['cpu_s']:.1f} CPU-s", flush=True)
    numba.set_num_threads(1)
    cost = _decode_cost(trace.jobset(n_jobs=cost_jobs, federation=fed), fed, cost_rows, repeat)
    summary = []
    for objectives in SETS:
        row = {"objectives": list(objectives)}
        for name in ALGORITHMS:
            mine = [r for r in runs if r["algorithm"] == name
                    and r["objectives"] == list(objectives)]
            hv = [r["hv"] for r in mine]
            row[name] = {"hv_median": float(np.median(hv)), "hv_min": float(np.min(hv)),
                         "hv_max": float(np.max(hv)),
                         "n_evals_median": float(np.median([r["n_evals"] for r in mine]))}
        summary.append(row)
    pymoo_evals = next(r["n_evals"] for r in runs if r["algorithm"] == "NSGA-II")
    data = {"jobs": jobs, "seeds": seeds, "pop_size": pop, "n_gen": n_gen,
            "n_evals": pymoo_evals, "summary": summary, "runs": runs,
            "decode_cost": {"jobs": cost_jobs, "rows": cost_rows, "rows_cost": cost},
            "machine": platform.processor() or platform.machine(), "quick": bool(args.quick)}
    atomic_write(out / "objectives_three.json", json.dumps(data, indent=2) + "\n")
    lines = ["# Three objectives: NSGA-II against NSGA-III", "",
             f"{jobs} jobs of the bundled month, default federation, fluid model, the in-order "
             f"decoder; both algorithms through pymoo's `minimize` with MOGA's sampling, "
             f"crossover, mutation and duplicate elimination, population {pop}, {n_gen} "
             f"generations ({pymoo_evals} evaluations each), seeds 1 to {seeds}. "
             "Hypervolume of the final non-dominated front, objectives divided by the submit "
             "order's, reference point 1.1 each (the submit order alone scores 0.001).", "",
             "`moga.run` at the same population and generations runs MOGA's own loop "
             "(NSGA-II survival, neighbourhood mating, the EASY search and its in-order "
             "twins, the archive of 200): more decodes, shown for reference; `moga.run "
             "NSGA-III` is that loop with NSGA-III's survival (`GAParams.survival = "
             "\"nsga3\"`), at about the same evaluations as `moga.run`.", "",
             "| objectives | algorithm | median hv | min-max | evaluations |",
             "|---|---|---|---|---|"]
    for row in summary:
        for name in ALGORITHMS:
            a = row[name]
            lines.append(f"| {', '.join(row['objectives'])} | {name} | {a['hv_median']:.4f} "
                         f"| {a['hv_min']:.4f}-{a['hv_max']:.4f} | "
                         f"{a['n_evals_median']:.0f} |")
    lines += ["", "Reading: " + " ".join(
        f"On {', '.join(row['objectives'])}, NSGA-III's median hypervolume differs from "
        f"NSGA-II's by "
        f"{100 * (row['NSGA-III']['hv_median'] / row['NSGA-II']['hv_median'] - 1):+.1f}% at "
        f"equal evaluations, and `moga.run`'s from NSGA-III's by "
        f"{100 * (row['moga.run']['hv_median'] / row['NSGA-III']['hv_median'] - 1):+.1f}% "
        f"with {row['moga.run']['n_evals_median'] / data['n_evals'] - 1:+.0%} evaluations."
        for row in summary),
        "", "Inside MOGA's loop, at about equal evaluations: " + " ".join(
            f"on {', '.join(row['objectives'])}, NSGA-III's survival's median hypervolume "
            f"differs from NSGA-II's by "
            f"{100 * (row['moga.run NSGA-III']['hv_median'] / row['moga.run']['hv_median'] - 1):+.1f}%."
            for row in summary)]
    best = {row["objectives"][2]: ("nsga3" if row["moga.run NSGA-III"]["hv_median"]
                                   > row["moga.run"]["hv_median"] else "nsga2")
            for row in summary}
    lines += ["", "The default survival for three objectives (`GAParams.survival` left at "
              "None), from this measurement: "
              + ("NSGA-III's" if set(best.values()) == {"nsga3"} else
                  "NSGA-II's" if set(best.values()) == {"nsga2"} else
                  "NSGA-II's (the sets disagree)") + "."]
    lines += ["", f"## Decode cost per objective set ({cost_rows} random chromosomes of "
              f"{cost_jobs} jobs, one thread, CPU ms, min of {repeat})", "",
              "| decoder | objectives | min | median |", "|---|---|---|---|"]
    for r in cost:
        lines.append(f"| {r['backfill']} | {', '.join(r['objectives'])} | "
                     f"{r['cpu_ms_min']:.1f} | {r['cpu_ms_median']:.1f} |")
    lines += ["", "`python benchmarks/objectives_three.py` wrote this page "
              "(`results/objectives_three.json` holds every run)."]
    atomic_write(out / "objectives_three.md", "\n".join(lines) + "\n")
    print(f"wrote {out}/objectives_three.md")


if __name__ == "__main__":
    main()
