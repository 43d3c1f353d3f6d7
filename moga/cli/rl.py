"""``moga rl train`` and ``moga rl evaluate``: the Deep-EAS scheduler."""

from __future__ import annotations

import json
import sys

from ..outputs import atomic_write, output_set
from .common import (
    bounded,
    listed,
    plots,
    prepare_out,
    seed,
    settings,
    step_lines,
)

HELP = "Deep-EAS: train and evaluate a reinforcement-learning scheduler (energy-delay product)"


def add_arguments(p) -> None:
    rl = p.add_subparsers(dest="rl_command", required=True)
    q = rl.add_parser("train", help="train the policy with REINFORCE (needs moga[rl])")
    add_train_arguments(q)
    q.set_defaults(func=run_train)
    q = rl.add_parser("evaluate", help="mean EDP of the policy and the heuristics")
    add_evaluate_arguments(q)
    q.set_defaults(func=run_evaluate)


def add_train_arguments(q) -> None:
    q.add_argument("--lam", type=bounded("--lam", "lam"), default=0.7, help="arrival rate (0.7)")
    q.add_argument("--beta", type=bounded("--beta", "beta"), default=0.5, help="share of short jobs (0.5)")
    q.add_argument("--c", type=bounded("--c", "estimate_c"), default=4.0, help="estimator accuracy (4)")
    q.add_argument("--iterations", type=bounded("--iterations", "rl_count"), default=60,
                   help="training iterations in all, resumed ones included (default 60)")
    q.add_argument("--sequences", type=bounded("--sequences", "rl_count"), default=12,
                   help="training job sequences per iteration (default 12)")
    q.add_argument("--trajectories", type=bounded("--trajectories", "rl_count"), default=6,
                   help="episodes per sequence and iteration, >= 2 (default 6)")
    q.add_argument("--lr", type=bounded("--lr", "learning_rate"), default=1e-3,
                   help="Adam's learning rate (default 0.001)")
    q.add_argument("--seed", type=seed, default=0, help="seed of every draw (default 0)")
    q.add_argument("--across-lams", type=bounded("--across-lams", "lam"), nargs="+", default=None,
                   metavar="LAM", help="train one policy across these arrival rates (training "
                                       "sequence i at the i-th in turn) instead of --lam's alone")
    q.add_argument("--mask", action="store_true",
                   help="sample only actions the cluster can carry out (default: the paper's "
                        "setting, where an infeasible action waits)")
    q.add_argument("--out", default="moga-rl", help="output folder, resumed (default: moga-rl)")
    q.add_argument("--no-resume", action="store_true", help="start afresh even if a checkpoint "
                                                            "is there")
    q.add_argument("--no-progress", action="store_true", help="no progress bar")


def add_evaluate_arguments(q) -> None:
    q.add_argument("--policy", default=None, help="policy.npz (default: the shipped one)")
    q.add_argument("--lam", type=bounded("--lam", "lam"), nargs="+",
                   default=[0.1, 0.3, 0.5, 0.7, 0.9],
                   help="arrival rates to evaluate at (default 0.1 0.3 0.5 0.7 0.9)")
    q.add_argument("--beta", type=bounded("--beta", "beta"), nargs="+", default=[0.5],
                   help="shares of short jobs (default 0.5)")
    q.add_argument("--c", type=bounded("--c", "estimate_c"), default=4.0,
                   help="estimator accuracy (default 4)")
    q.add_argument("--sequences", type=bounded("--sequences", "rl_count"), default=30,
                   help="unseen job sequences per setting (default 30)")
    q.add_argument("--seed", type=seed, default=1,
                   help="seed of the sequences and of the policy's sampling (default 1)")
    q.add_argument("--out", default="moga-rl-eval", help="output folder (default: moga-rl-eval)")
    q.add_argument("--no-progress", action="store_true",
                   help="no progress line per arrival rate and share")


def _config(lam, beta, c):
    from ..rl import ClusterConfig

    return ClusterConfig(lam=lam, beta=beta, c=c)


def run_train(args) -> int:
    from ..rl.policy import save_params
    from ..rl.schedulers import esjf, mean_edp
    from ..rl.study import plot_learning_curve
    from ..rl.train import TrainConfig, train

    out = prepare_out(args.out, ["policy.npz", "learning_curve.png"], command="rl train")
    cfg = _config(args.lam, args.beta, args.c)
    tc = TrainConfig(iterations=args.iterations, sequences=args.sequences,
                     trajectories=args.trajectories, lr=args.lr, seed=args.seed,
                     mask=args.mask,
                     lams=None if args.across_lams is None else tuple(args.across_lams))
    print(f"training Deep-EAS (lambda {cfg.lam}, beta {cfg.beta}): {tc.iterations} iterations x "
          f"{tc.sequences} sequences x {tc.trajectories} trajectories = {tc.episodes} episodes, "
          f"{tc.fraction_of_paper():.2%} of the paper's budget", flush=True)
    res = train(cfg, tc, out=out, resume=not args.no_resume, progress=not args.no_progress)
    with output_set(out, "rl train", settings(args)) as o:
        save_params(res.params, o / "policy.npz", lam=cfg.lam, beta=cfg.beta, c=cfg.c,
                    iterations=tc.iterations, sequences=tc.sequences,
                    trajectories=tc.trajectories, seed=tc.seed)
        ref = {"ESJF": mean_edp(esjf, cfg, tc.sequences, seed=tc.seed)}
        drawn = plots([("learning_curve.png", lambda: plot_learning_curve(
            res.history, o / "learning_curve.png", ref))])
    print(f"last iteration: mean EDP {res.history[-1]['mean_edp']:.1f} (ESJF on other "
          f"sequences of the same kind: {ref['ESJF']:.1f})")
    print(f"wrote {out}/policy.npz, checkpoint.npz, history.json" + listed(drawn))
    return 0


def run_evaluate(args) -> int:
    from ..rl.policy import load_params, shipped_policy
    from ..rl.study import evaluate_grid, grid_table, plot_edp_vs_lambda

    out = prepare_out(args.out, ["evaluate.md", "evaluate.json", "edp_vs_lambda.png"],
                      command="rl evaluate")
    params, meta = load_params(args.policy) if args.policy else shipped_policy()
    print(f"policy {args.policy or 'shipped with moga'} (trained at lambda {meta.get('lam')}, "
          f"beta {meta.get('beta')}); {args.sequences} unseen sequences per setting", flush=True)
    rows = evaluate_grid(params, args.lam, args.beta, args.sequences, args.seed,
                         base=_config(0.7, 0.5, args.c),
                         progress=step_lines(not args.no_progress, ""))
    for r in rows:
        if not r["n_jobs"]:
            print(f"moga: warning: lambda {r['lam']:g}, beta {r['beta']:g}: the "
                  f"{args.sequences} sequences drew no job; that row is n/a (raise --lam or "
                  "--sequences)", file=sys.stderr)
    table = grid_table(rows)
    with output_set(out, "rl evaluate", settings(args)) as o:
        atomic_write(o / "evaluate.md", f"# Deep-EAS against the heuristics\n\nMean EDP over "
                                         "jobs, with a 95% bootstrap interval over the sequences "
                                         f"in brackets.\n\n{table}\n")
        atomic_write(o / "evaluate.json", json.dumps({"meta": {k: str(v) for k, v in meta.items()},
                                                       "rows": rows}, indent=2) + "\n")
        drawn = plots([("edp_vs_lambda.png", lambda: plot_edp_vs_lambda(
            rows, o / "edp_vs_lambda.png", beta=args.beta[0]))])
    print(table)
    print(f"wrote {out}/evaluate.md, evaluate.json" + listed(drawn))
    return 0
