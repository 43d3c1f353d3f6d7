"""Deep-EAS trained across arrival rates, with several seeds, against the heuristics.

One policy per training seed is trained with REINFORCE on sequences drawn
at every lambda of ``--lams`` in turn (beta 0.5; ``TrainConfig.lams``, one
policy across lambdas), in the paper's setting (infeasible actions wait)
and with infeasible actions masked; ``--per-lam`` adds policies trained at
one lambda only. Every policy (sampling its actions) and every heuristic
(ESJF, SJF, SJF-least-EDP, greedy energy) is evaluated at each lambda on the
same ``--held-out`` unseen sequences; each policy also on its own training
sequences of that lambda, to show how far it overfits them. Means over jobs
come with 95% bootstrap confidence intervals over sequences
(:func:`moga.rl.schedulers.edp_interval`), and each kind of policy is
summarised over the seeds. Writes ``results/deep_eas_lambdas.md`` and
``.json``::

    python benchmarks/deep_eas_lambdas.py        # about 40 min on 2 cores
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

import numpy as np
from _bench import add_options, out_dir

from moga.outputs import atomic_write
from moga.rl import ClusterConfig, draw_jobs
from moga.rl.policy import policy_scheduler
from moga.rl.schedulers import SCHEDULERS, edp_interval, edp_mean, edp_per_sequence
from moga.rl.train import TrainConfig, train, training_sequences

ROOT = Path(__file__).resolve().parents[1]


def mean_ci(scheduler, cfg, sequences):
    """Mean EDP over jobs and its 95% bootstrap interval over the sequences."""
    sc = edp_per_sequence(scheduler, sequences, cfg)
    return (edp_mean(sc), *edp_interval(sc))


def _fmt(m):
    return f"{m[0]:.1f} [{m[1]:.1f}, {m[2]:.1f}]"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lams", type=float, nargs="+", default=[0.1, 0.3, 0.5, 0.7, 0.9])
    ap.add_argument("--beta", type=float, default=0.5)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--iterations", type=int, default=60)
    ap.add_argument("--sequences-per-lam", type=int, default=20)
    ap.add_argument("--trajectories", type=int, default=6)
    ap.add_argument("--held-out", type=int, default=30)
    ap.add_argument("--per-lam", type=float, nargs="*", default=[],
                    help="also train policies at each of these lambdas alone")
    add_options(ap, "2 lambdas, 1 seed, 1 iteration of 2 sequences x 2 trajectories")
    args = ap.parse_args(argv)
    out = out_dir(args)
    if args.quick:
        args.lams, args.seeds, args.iterations = [0.3, 0.7], [0], 1
        args.sequences_per_lam, args.trajectories, args.held_out = 2, 2, 2
    t_all = time.perf_counter()
    cfgs = {lam: ClusterConfig(lam=lam, beta=args.beta) for lam in args.lams}
    held = {}
    heur = {}
    for li, (lam, cfg) in enumerate(cfgs.items()):
        rng = np.random.default_rng([4242, li])
        held[lam] = [draw_jobs(cfg, rng) for _ in range(args.held_out)]
        heur[lam] = {name: mean_ci(f, cfg, held[lam]) for name, f in SCHEDULERS.items()}
        print(f"lambda {lam}: " + ", ".join(f"{k} {v[0]:.1f}" for k, v in heur[lam].items()),
              flush=True)
    L = len(args.lams)
    kinds = [("across", None, False), ("across, masked", None, True)] + \
        [(f"at {lam:g}", lam, False) for lam in args.per_lam]
    rows = []
    for label, only, mask in kinds:
        lams = tuple(args.lams) if only is None else (only,)
        for seed in args.seeds:
            tc = TrainConfig(iterations=args.iterations,
                             sequences=args.sequences_per_lam * len(lams),
                             trajectories=args.trajectories, seed=seed, mask=mask, lams=lams,
                             checkpoint_every=10**6)
            base = ClusterConfig(lam=lams[0], beta=args.beta)
            t0 = time.perf_counter()
            res = train(base, tc, progress=False)
            wall = time.perf_counter() - t0
            train_seqs = training_sequences(base, tc)
            for lam, cfg in cfgs.items():
                own = [s for i, s in enumerate(train_seqs) if np.isclose(lams[i % len(lams)], lam)]
                pol = policy_scheduler(res.params, sample=True, seed=seed, mask=mask)
                on_held = mean_ci(pol, cfg, held[lam])
                on_train = mean_ci(policy_scheduler(res.params, sample=True, seed=seed,
                                                    mask=mask), cfg, own) if own else None
                rows.append({"policy": label, "lam": lam, "beta": args.beta, "seed": seed,
                             "mask": mask, "train_s": wall, "policy_held_out": on_held,
                             "policy_training": on_train, "heuristics": heur[lam]})
            print(f"  {label} seed {seed}: trained in {wall:.0f} s; held-out " + ", ".join(
                f"{r['lam']:g}: {r['policy_held_out'][0]:.1f}" for r in rows[-L:]), flush=True)
    doc = {"machine": platform.processor() or platform.machine(),
           "wall_s": time.perf_counter() - t_all,
           "settings": {k: v for k, v in vars(args).items() if k not in ("out", "quick")},
           "rows": rows}
    atomic_write(out / "deep_eas_lambdas.json", json.dumps(doc, indent=2) + "\n")
    atomic_write(out / "deep_eas_lambdas.md", report(doc))
    print(report(doc))


def report(doc) -> str:
    a = doc["settings"]
    rows = doc["rows"]
    names = list(SCHEDULERS)
    lams = list(dict.fromkeys(r["lam"] for r in rows))
    kinds = list(dict.fromkeys(r["policy"] for r in rows))
    md = ["# Deep-EAS trained across arrival rates", "",
          f"Regenerate: `python benchmarks/deep_eas_lambdas.py` ({doc['machine']}, "
          f"{doc['wall_s'] / 60:.0f} min). beta {a['beta']}. `across`: one policy per training "
          f"seed ({len(a['seeds'])} seeds), trained on {a['sequences_per_lam']} sequences at "
          f"each lambda of {a['lams']} ({a['iterations']} iterations x "
          f"{a['sequences_per_lam'] * len(a['lams'])} sequences x {a['trajectories']} "
          "trajectories); `masked`: the same with infeasible actions masked in training and "
          "evaluation; `at L`: trained at lambda L alone. Each policy samples its actions and "
          f"is evaluated on {a['held_out']} unseen sequences per lambda (the same for every "
          "scheduler) and on its own training sequences of that lambda. Mean EDP over jobs "
          "(lower is better) with a 95% bootstrap interval over sequences in brackets.", "",
          "## Heuristics", "", "| lambda | " + " | ".join(names) + " |",
          "|---|" + "---|" * len(names)]
    for lam in lams:
        h = next(r for r in rows if r["lam"] == lam)["heuristics"]
        md.append(f"| {lam:g} | " + " | ".join(_fmt(h[n]) for n in names) + " |")
    md += ["", "## Policies per seed", "",
           "| lambda | policy | seed | held-out | its training sequences |",
           "|---|---|---|---|---|"]
    for r in rows:
        md.append(f"| {r['lam']:g} | {r['policy']} | {r['seed']} | {_fmt(r['policy_held_out'])}"
                  f" | {_fmt(r['policy_training']) if r['policy_training'] else '-'} |")
    md += ["", "## Summary over seeds", "",
           "| lambda | policy | held-out mean EDP (seeds: min-max) | below ESJF | below the "
           "best heuristic | training / held-out |", "|---|---|---|---|---|---|"]
    for lam in lams:
        for kind in kinds:
            sub = [r for r in rows if r["lam"] == lam and r["policy"] == kind]
            if not sub:
                continue
            v = np.array([r["policy_held_out"][0] for r in sub])
            best = min(sub[0]["heuristics"].items(), key=lambda kv: kv[1][0])
            below_esjf = sum(r["policy_held_out"][2] < r["heuristics"]["ESJF"][1] for r in sub)
            below_best = sum(r["policy_held_out"][2] < best[1][1] for r in sub)
            tr = [r["policy_training"][0] / r["policy_held_out"][0] for r in sub
                  if r["policy_training"]]
            md.append(f"| {lam:g} | {kind} | {v.mean():.1f} ({v.min():.1f}-{v.max():.1f}) | "
                      f"{below_esjf} of {len(sub)} seeds | {below_best} of {len(sub)} seeds "
                      f"({best[0]}) | {np.mean(tr):.2f} |" if tr else " - |")
    md += ["", "\"Below\" counts seeds whose interval lies wholly below the heuristic's. "
           "`training / held-out` near 1 means the policy does not overfit its training "
           "sequences.", ""]
    return "\n".join(md)


if __name__ == "__main__":
    main()
