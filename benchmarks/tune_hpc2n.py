"""Tune MOGA on two HPC2N job-sets, then test tuned against default parameters on a third.

Tuning: the first ``--n-jobs`` jobs of 30-day windows 1 and 2 (batch mode,
default federation, fluid model), ``--seeds`` GA seeds each, ``--budget``
evaluations per run, ``--trials`` Optuna trials (TPE, seed 0, median pruning).
Test: the first ``--n-jobs`` jobs of window 3, never seen while tuning, with
``--test-seeds`` seeds, tuned against default parameters (population 100 and
the same budget); normalised hypervolume per seed and a Wilcoxon signed-rank
test paired by seed. Writes ``results/tune/`` (best.toml, history.png,
importances.png) and ``results/tune_hpc2n.md`` / ``.json``::

    python benchmarks/tune_hpc2n.py
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from _bench import add_options, out_dir
from scipy.stats import wilcoxon

import moga
from moga.experiments.tuning import plot_study
from moga.model.workload import default_trace_path
from moga.outputs import atomic_write

ROOT = Path(__file__).resolve().parents[1]
#: Resolved by moga.model.traces: MOGA_TRACES, then ../shared/traces, then the current folder.
DEFAULT_TRACE = "HPC2N-2002-2.2-cln.swf.gz"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trace", default=DEFAULT_TRACE,
                    help="SWF trace: a path, or a file name looked up by moga.resolve_trace")
    ap.add_argument("--n-jobs", type=int, default=500)
    ap.add_argument("--budget", type=int, default=4000)
    ap.add_argument("--trials", type=int, default=30)
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--test-seeds", type=int, default=8)
    add_options(ap, "40 bundled jobs, 2 trials of a 400-evaluation budget, 2 test seeds")
    args = ap.parse_args(argv)
    out = out_dir(args)
    if args.quick:
        args.trace, args.n_jobs, args.budget = str(default_trace_path()), 40, 400
        args.trials, args.seeds, args.test_seeds = 2, 1, 2
    args.trace = str(moga.resolve_trace(args.trace))

    trace = moga.load_swf(args.trace)
    fed = moga.Federation.preset("default")
    starts = [0, 100, 200, 300] if args.quick else trace.windows(days=30)
    train = [trace.jobset(start=starts[w], n_jobs=args.n_jobs, federation=fed) for w in (1, 2)]
    test = trace.jobset(start=starts[3], n_jobs=args.n_jobs, federation=fed)
    res = moga.tune(train, fed, n_trials=args.trials, seeds=args.seeds, budget=args.budget)
    (out / "tune").mkdir(parents=True, exist_ok=True)
    atomic_write(out / "tune" / "best.toml", res.to_toml())
    plot_study(res, out / "tune")

    pop = moga.GAParams().for_moga().pop_size
    default = moga.GAParams(pop_size=pop, n_gen=args.budget // pop)
    tuned = res.best_params
    seeds = list(range(101, 101 + args.test_seeds))
    hv = {"default": [], "tuned": []}
    for s in seeds:
        hv["default"].append(moga.run(test, fed, seed=s, params=default).hv)
        hv["tuned"].append(moga.run(test, fed, seed=s, params=tuned).hv)
    d, t = np.array(hv["default"]), np.array(hv["tuned"])
    p = float(wilcoxon(t, d).pvalue) if np.count_nonzero(t - d) >= 2 else None
    states = [tr["state"] for tr in res.trials()]
    record = {"train": [js.name for js in train], "test": test.name, "budget": args.budget,
              "trials": len(states), "pruned": states.count("PRUNED"),
              "best_train_hv": res.best_value, "tuned": tuned.to_dict(),
              "default": default.to_dict(), "test_seeds": seeds, "hv": hv,
              "wilcoxon_p": p, "tuning_wall_s": res.wall_time}
    atomic_write(out / "tune_hpc2n.json", json.dumps(record, indent=2) + "\n")
    better = int(np.sum(t > d))
    if p is not None and p < 0.05:
        verdict = ("The tuned parameters beat the defaults" if np.median(t - d) > 0
                   else "The defaults beat the tuned parameters")
    else:
        verdict = "Neither beat the other significantly"
    lines = [
        "# Tuning MOGA on HPC2N", "",
        f"`python benchmarks/tune_hpc2n.py`: tuned on {', '.join(record['train'])} "
        f"({args.seeds} seeds each, {args.budget} evaluations per run, {len(states)} trials, "
        f"{record['pruned']} pruned; {res.wall_time:.0f} s); tested on the unseen {test.name} "
        f"with {args.test_seeds} seeds at the same budget.", "",
        "| parameters | population x generations | test hv mean | test hv median | min | max |",
        "|---|---|---|---|---|---|",
        f"| default | {default.pop_size} x {default.n_gen} | {d.mean():.4f} | {np.median(d):.4f} "
        f"| {d.min():.4f} | {d.max():.4f} |",
        f"| tuned | {tuned.pop_size} x {tuned.n_gen} | {t.mean():.4f} | {np.median(t):.4f} "
        f"| {t.min():.4f} | {t.max():.4f} |", "",
        f"Tuned better on {better} of {len(seeds)} seeds; Wilcoxon signed-rank p = "
        f"{'n/a' if p is None else f'{p:.3g}'}. {verdict} on the unseen job-set.", "",
        "Tuned parameters (`results/tune/best.toml`):", "", "```toml", tuned.to_toml().strip(),
        "```", "", "![history](tune/history.png)", "![importances](tune/importances.png)", ""]
    atomic_write(out / "tune_hpc2n.md", "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
