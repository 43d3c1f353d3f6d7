"""Deep-EAS trained at each arrival rate, with several seeds, against the heuristics.

For each lambda (beta 0.5) and each training seed, a policy is trained with
REINFORCE (``--iterations`` x ``--sequences`` x ``--trajectories``; the
paper's setting, infeasible actions wait), and, at ``--mask-lam``, also with
infeasible actions masked. Every policy (sampling its actions) and every
heuristic (ESJF, SJF, SJF-least-EDP, greedy energy) is evaluated on the same
``--held-out`` unseen sequences of its lambda; the policy also on its own
training sequences, to show how far it overfits them. Means over jobs come
with 95% bootstrap confidence intervals over sequences
(:func:`moga.rl.schedulers.edp_interval`), and each lambda's policies are summarised over the seeds.
Writes ``results/deep_eas_lambdas.md`` and ``.json``::

    python benchmarks/deep_eas_lambdas.py        # about 40 min on 2 cores
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

import numpy as np

from moga.outputs import atomic_write
from moga.rl import ClusterConfig, draw_jobs
from moga.rl.policy import policy_scheduler
from moga.rl.schedulers import SCHEDULERS, edp_interval, edp_per_sequence
from moga.rl.train import TrainConfig, train, training_sequences

ROOT = Path(__file__).resolve().parents[1]


def mean_ci(scheduler, cfg, sequences):
    """Mean EDP over jobs and its 95% bootstrap interval over the sequences."""
    sc = edp_per_sequence(scheduler, sequences, cfg)
    return (float(sc[:, 0].sum() / sc[:, 1].sum()), *edp_interval(sc))


def _fmt(m):
    return f"{m[0]:.1f} [{m[1]:.1f}, {m[2]:.1f}]"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lams", type=float, nargs="+", default=[0.1, 0.3, 0.5, 0.7, 0.9])
    ap.add_argument("--beta", type=float, default=0.5)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--iterations", type=int, default=60)
    ap.add_argument("--sequences", type=int, default=24)
    ap.add_argument("--trajectories", type=int, default=6)
    ap.add_argument("--held-out", type=int, default=30)
    ap.add_argument("--mask-lam", type=float, default=0.7,
                    help="the lambda at which masked training runs too (a negative value: none)")
    ap.add_argument("--out", default=str(ROOT / "results"))
    args = ap.parse_args(argv)
    t_all = time.perf_counter()
    rows = []
    for li, lam in enumerate(args.lams):
        cfg = ClusterConfig(lam=lam, beta=args.beta)
        rng = np.random.default_rng([4242, li])
        held = [draw_jobs(cfg, rng) for _ in range(args.held_out)]
        heur = {name: mean_ci(f, cfg, held) for name, f in SCHEDULERS.items()}
        print(f"lambda {lam}: " + ", ".join(f"{k} {v[0]:.1f}" for k, v in heur.items()),
              flush=True)
        for mask in (False, True) if np.isclose(lam, args.mask_lam) else (False,):
            for seed in args.seeds:
                tc = TrainConfig(iterations=args.iterations, sequences=args.sequences,
                                 trajectories=args.trajectories, seed=seed, mask=mask,
                                 checkpoint_every=10**6)
                t0 = time.perf_counter()
                res = train(cfg, tc, progress=False)
                wall = time.perf_counter() - t0
                pol = policy_scheduler(res.params, sample=True, seed=seed, mask=mask)
                on_held = mean_ci(pol, cfg, held)
                pol = policy_scheduler(res.params, sample=True, seed=seed, mask=mask)
                on_train = mean_ci(pol, cfg, training_sequences(cfg, tc))
                rows.append({"lam": lam, "beta": args.beta, "seed": seed, "mask": mask,
                             "train_s": wall, "policy_held_out": on_held,
                             "policy_training": on_train, "heuristics": heur,
                             "last_training_edp": res.history[-1]["mean_edp"]})
                print(f"  seed {seed}{' masked' if mask else ''}: held-out {on_held[0]:.1f}, "
                      f"training {on_train[0]:.1f} ({wall:.0f} s)", flush=True)
    doc = {"machine": platform.processor() or platform.machine(),
           "wall_s": time.perf_counter() - t_all, "settings": vars(args), "rows": rows}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    atomic_write(out / "deep_eas_lambdas.json", json.dumps(doc, indent=2) + "\n")
    atomic_write(out / "deep_eas_lambdas.md", report(doc))
    print(report(doc))


def report(doc) -> str:
    a = doc["settings"]
    rows = doc["rows"]
    names = list(SCHEDULERS)
    md = ["# Deep-EAS trained at each arrival rate", "",
          f"Regenerate: `python benchmarks/deep_eas_lambdas.py` ({doc['machine']}, "
          f"{doc['wall_s'] / 60:.0f} min). beta {a['beta']}; one policy per lambda and training "
          f"seed, {a['iterations']} iterations x {a['sequences']} training sequences x "
          f"{a['trajectories']} trajectories each; evaluated, sampling its actions, on "
          f"{a['held_out']} unseen sequences of its lambda (the same for every scheduler) "
          "and on its own training sequences. Mean EDP over jobs (lower is better) with a "
          "95% bootstrap interval over sequences in brackets.", "",
          "| lambda | policy | seed | held-out | training sequences | " + " | ".join(names)
          + " |", "|---|---|---|---|---|" + "---|" * len(names)]
    for r in rows:
        md.append(f"| {r['lam']:g} | {'masked' if r['mask'] else 'paper'} | {r['seed']} | "
                  f"{_fmt(r['policy_held_out'])} | {_fmt(r['policy_training'])} | "
                  + " | ".join(_fmt(r["heuristics"][n]) for n in names) + " |")
    md += ["", "## Summary over seeds", "",
           "| lambda | policy | held-out mean EDP over seeds (min-max) | below ESJF (seeds) | "
           "below the best heuristic (seeds) | training / held-out |", "|---|---|---|---|---|---|"]
    for lam in dict.fromkeys(r["lam"] for r in rows):
        for mask in (False, True):
            sub = [r for r in rows if r["lam"] == lam and r["mask"] == mask]
            if not sub:
                continue
            v = np.array([r["policy_held_out"][0] for r in sub])
            best = min(sub[0]["heuristics"].items(), key=lambda kv: kv[1][0])
            below_esjf = sum(r["policy_held_out"][2] < r["heuristics"]["ESJF"][1] for r in sub)
            below_best = sum(r["policy_held_out"][2] < best[1][1] for r in sub)
            ratio = np.mean([r["policy_training"][0] / r["policy_held_out"][0] for r in sub])
            md.append(f"| {lam:g} | {'masked' if mask else 'paper'} | {v.mean():.1f} "
                      f"({v.min():.1f}-{v.max():.1f}) | {below_esjf} of {len(sub)} | "
                      f"{below_best} of {len(sub)} ({best[0]}) | {ratio:.2f} |")
    md += ["", "\"Below\" counts seeds whose interval lies wholly below the heuristic's. "
           "`training / held-out` near 1 means the policy does not overfit its training "
           "sequences.", ""]
    return "\n".join(md)


if __name__ == "__main__":
    main()
