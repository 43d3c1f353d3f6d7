"""``moga tune``: tune the GA's parameters with Optuna."""

from __future__ import annotations

import json

from ..model.platform import Federation
from ..outputs import atomic_write, output_set
from .common import (
    add_workload_args,
    bounded,
    jobset_of,
    plots,
    prepare_out,
    read_trace,
    seed,
    settings,
)

HELP = "tune GA parameters with Optuna; writes best.toml"


def add_arguments(p) -> None:
    add_workload_args(p)
    p.add_argument("--starts", type=bounded("--starts", "start"), nargs="+", default=None,
                   help="first job of each job-set to tune on (default: --start)")
    p.add_argument("--model", choices=["fluid", "at_start"], default="fluid",
                   help="execution model (default: fluid)")
    p.add_argument("--trials", type=bounded("--trials", "trials"), default=50,
                   help="trials in the study (default 50)")
    p.add_argument("--seeds", type=bounded("--seeds", "tune_seeds"), default=3,
                   help="GA seeds per job-set (default 3)")
    p.add_argument("--budget", type=bounded("--budget", "n_evals"), default=20000,
                   help="evaluations per run, population x generations (default 20000)")
    p.add_argument("--storage", default=None,
                   help="sqlite:///file.db or a journal file, to resume a study")
    p.add_argument("--study-name", default=None,
                   help="study name in the storage (default: moga-tune)")
    p.add_argument("--timeout", type=bounded("--timeout", "time_limit"), default=None,
                   help="stop starting trials after this many seconds")
    p.add_argument("--sampler-seed", type=seed, default=0,
                   help="seed of Optuna's sampler (default 0)")
    p.add_argument("--out", default="moga-tune", help="output folder (default: moga-tune)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def _trials_csv(trials) -> str:
    keys = sorted({k for t in trials for k in t} - {"number", "state", "value"})
    lines = [",".join(["number", "state", "value"] + keys)]
    for t in trials:
        lines.append(",".join("" if t.get(k) is None else str(t.get(k))
                              for k in ["number", "state", "value"] + keys))
    return "\n".join(lines) + "\n"


def run(args) -> int:
    from ..experiments.tuning import plot_study, tune

    out = prepare_out(args.out, ["best.toml", "trials.csv", "tune.json", "history.png",
                                 "importances.png"], command="tune")
    trace = read_trace(args)
    fed = Federation.load(args.federation, auto_nodes=trace.auto_nodes)
    jobsets = [jobset_of(trace, args, fed, start=s) for s in args.starts or [args.start]]
    print(f"tuning on {len(jobsets)} job-set(s) ({', '.join(js.name for js in jobsets)}), "
          f"{args.seeds} seed(s), {args.budget} evaluations per run, {args.trials} trials",
          flush=True)
    res = tune(jobsets, fed, n_trials=args.trials, seeds=args.seeds, storage=args.storage,
               study_name=args.study_name, timeout=args.timeout, budget=args.budget,
               model=args.model, sampler_seed=args.sampler_seed,
               progress=not args.no_progress)
    with output_set(out, "tune", settings(args)) as o:
        trials = res.trials()
        atomic_write(o / "trials.csv", _trials_csv(trials))
        atomic_write(o / "best.toml", res.to_toml())
        atomic_write(o / "tune.json", json.dumps(
            {"jobsets": [js.name for js in jobsets], "budget": res.budget, "seeds": args.seeds,
             "model": args.model, "best_value": res.best_value,
             "best_params": res.best_params.to_dict(), "n_trials": len(trials),
             "wall_time_s": res.wall_time}, indent=2) + "\n")
        drawn = []
        plots([("plots", lambda: drawn.extend(plot_study(res, o.stage)))])
    print(f"best mean hypervolume {res.best_value:.4f} with {res.best_params}")
    print(f"wrote {out}/best.toml, trials.csv, tune.json"
          + "".join(f", {p.name}" for p in drawn))
    return 0
