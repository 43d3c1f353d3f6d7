"""Evaluating Deep-EAS against the heuristics over arrival rates and job mixes, and plots."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .cluster import ClusterConfig, draw_jobs
from .policy import policy_scheduler
from .schedulers import SCHEDULERS, edp_interval, edp_mean, edp_per_sequence, random_scheduler

__all__ = ["evaluate_grid", "grid_table", "plot_edp_vs_lambda", "plot_learning_curve"]


def evaluate_grid(params, lams=(0.1, 0.3, 0.5, 0.7, 0.9), betas=(0.5,), n_sequences: int = 30,
                  seed: int = 1, base: ClusterConfig | None = None,
                  progress=None) -> list[dict]:
    """Mean EDP of the policy (sampling its actions, seeded; also with its infeasible actions
    masked, ``Deep-EAS (masked)``) and of every scheduler on the same ``n_sequences`` unseen
    job sequences per (lambda, beta), drawn from ``default_rng([seed, i])``.

    Each row rates the policy against ESJF (``vs_ESJF_pct``) and against the best heuristic
    of the row (``vs_best_pct``, naming it in ``best_heuristic``); ``ci`` holds each
    scheduler's 95% bootstrap interval over the sequences (:func:`edp_interval`).
    ``progress(label)``, if given, is called before each (lambda, beta)."""
    base = base or ClusterConfig()
    rows = []
    for i, (lam, beta) in enumerate((lam, beta) for beta in betas for lam in lams):
        if progress is not None:
            progress(f"lambda {lam:g}, beta {beta:g}")
        cfg = ClusterConfig(**{**base.__dict__, "lam": float(lam), "beta": float(beta)})
        rng = np.random.default_rng([seed, i])
        seqs = [draw_jobs(cfg, rng) for _ in range(n_sequences)]
        row = {"lam": float(lam), "beta": float(beta), "n_sequences": n_sequences,
               "n_jobs": int(sum(len(s) for s in seqs)), "ci": {}}
        scheds = ({"Deep-EAS": policy_scheduler(params, seed=seed),
                   "Deep-EAS (masked)": policy_scheduler(params, seed=seed, mask=True)}
                  if params is not None else {})
        scheds.update(SCHEDULERS)
        scheds["random"] = random_scheduler(seed)
        for name, f in scheds.items():
            sc = edp_per_sequence(f, seqs, cfg)
            row[name] = edp_mean(sc)
            row["ci"][name] = edp_interval(sc, seed=seed)
        if "Deep-EAS" in row:
            best = min(SCHEDULERS, key=lambda n: row[n] if row["n_jobs"] else 0.0)
            row["best_heuristic"] = best
            for key, ref in (("vs_ESJF_pct", "ESJF"), ("vs_best_pct", best)):
                row[key] = (100.0 * (row["Deep-EAS"] / row[ref] - 1.0)
                            if row["n_jobs"] else float("nan"))
        rows.append(row)
    return rows


#: Keys of an :func:`evaluate_grid` row that are not schedulers' mean EDPs.
_NOT_SCHEDULERS = ("lam", "beta", "n_sequences", "n_jobs", "vs_ESJF_pct", "vs_best_pct",
                   "best_heuristic", "ci")


def grid_table(rows: list[dict]) -> str:
    """Markdown: mean EDP per scheduler per (lambda, beta), with its 95% interval in
    brackets where the row has one."""
    names = [k for k in rows[0] if k not in _NOT_SCHEDULERS]
    rated = "vs_ESJF_pct" in rows[0]
    head = "| lambda | beta | jobs | " + " | ".join(names) + (
        " | Deep-EAS vs ESJF | Deep-EAS vs the best heuristic |" if rated else " |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in rows:
        cells = " | ".join(_cell(r, n) for n in names)
        if not rated:
            tail = " |"
        elif np.isnan(r["vs_ESJF_pct"]):
            tail = " | n/a | n/a |"
        else:
            tail = (f" | {r['vs_ESJF_pct']:+.1f}% | {r['vs_best_pct']:+.1f}% "
                    f"({r['best_heuristic']}) |")
        lines.append(f"| {r['lam']:.1f} | {r['beta']:.1f} | {r['n_jobs']} | {cells}{tail}")
    return "\n".join(lines)


def _cell(row, name) -> str:
    v = row[name]
    if np.isnan(v):
        return "n/a"
    lo, hi = row.get("ci", {}).get(name, (np.nan, np.nan))
    return f"{v:.1f}" if np.isnan(lo) else f"{v:.1f} [{lo:.1f}, {hi:.1f}]"


def plot_edp_vs_lambda(rows: list[dict], path, beta: float = 0.5) -> Path:
    """Mean EDP against the arrival rate, one line per scheduler, at one beta."""
    from ..plot import _save, plt

    rs = [r for r in rows if np.isclose(r["beta"], beta)]
    names = [k for k in rs[0] if k not in _NOT_SCHEDULERS]
    fig, ax = plt.subplots(figsize=(6, 4))
    for n in names:
        ax.plot([r["lam"] for r in rs], [r[n] for r in rs], marker="o", label=n)
    ax.set_xlabel("arrival rate lambda")
    ax.set_ylabel("mean normalised energy-delay product")
    ax.set_yscale("log")
    ax.set_title(f"beta = {beta}")
    ax.legend(fontsize=8)
    fig.tight_layout()
    _save(fig, path)
    return Path(path)


def plot_learning_curve(history: list[dict], path, references: dict | None = None) -> Path:
    """Mean EDP of the training episodes per iteration, with horizontal reference lines."""
    from ..plot import _save, plt

    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot([h["iteration"] for h in history], [h["mean_edp"] for h in history], label="Deep-EAS")
    for i, (name, v) in enumerate((references or {}).items()):
        ax.axhline(v, ls="--", color=f"C{i + 1}", label=name)
    ax.set_xlabel("iteration")
    ax.set_ylabel("mean EDP (training episodes)")
    ax.legend()
    fig.tight_layout()
    _save(fig, path)
    return Path(path)
