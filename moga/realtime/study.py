"""The real-time study: every scheme at several real-time fractions, the MILP comparison on
small instances, tables and plots (``moga realtime``, ``benchmarks/realtime.py``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np

from ..model.jobset import JobSet
from .machine import Machine
from .metrics import realtime_metrics
from .milp import min_threshold, solve_milp
from .simulator import Checkpointing, RealtimeResult, Thresholds, simulate
from .workload import CLASS_NAMES, JobClasses, tag_realtime

__all__ = ["SCHEME_SET", "Scheme", "StudyRun", "realtime_study", "study_table", "plot_slowdowns",
           "milp_comparison"]

class Scheme(NamedTuple):
    """A scheme of the study: the arguments of :func:`simulate` that make it, and one line
    saying what it does."""

    scheme: str
    checkpointing: str
    improved: bool | str
    summary: str


#: The schemes of a study: label -> :class:`Scheme` (scheme, checkpointing, improved
#: heuristic: False, or its reading, ``True`` for the project's and ``"qsim"`` for the
#: authors' Qsim rule, and a summary). The catalogue's ``rt-`` policies are these.
SCHEME_SET = {
    "baseline": Scheme("baseline", "none", False, "one queue, EASY backfilling"),
    "highpq": Scheme("highpq", "none", False, "real-time jobs in a queue ahead of the batch "
                     "queue, EASY behind the head"),
    "preempt-none": Scheme("preempt", "none", False, "highpq, and real-time jobs preempt batch "
                           "jobs (restart from scratch)"),
    "preempt-sys": Scheme("preempt", "sys", False, "highpq, and real-time jobs preempt batch "
                          "jobs (periodic system checkpoints)"),
    "preempt-app": Scheme("preempt", "app", False, "highpq, and real-time jobs preempt batch "
                          "jobs (application checkpoints)"),
    "preempt-jit": Scheme("preempt", "jit", False, "highpq, and real-time jobs preempt batch "
                          "jobs (a checkpoint written at preemption)"),
    "preempt-jit-improved": Scheme("preempt", "jit", True, "preempt-jit limited by slowdown "
                                   "thresholds (the paper's improved heuristic, the project's "
                                   "reading)"),
    "preempt-jit-qsim": Scheme("preempt", "jit", "qsim", "the improved heuristic as the "
                               "authors' Qsim codes it: one queue, real-time jobs preempt after "
                               "waiting 10% of their requested time, blocking, victims by "
                               "score"),
}


@dataclass(frozen=True, eq=False)
class StudyRun:
    fraction: float
    label: str
    result: RealtimeResult
    metrics: dict


def realtime_study(js: JobSet, machine: Machine, fractions=(0.05, 0.1, 0.2, 0.3),
                   schemes=tuple(SCHEME_SET), seed: int = 0, checkpoint: dict | None = None,
                   classes: JobClasses | None = None, progress=None,
                   thresholds: Thresholds | None = None,
                   slowdown_on: str = "runtime") -> list[StudyRun]:
    """Run each scheme (keys of :data:`SCHEME_SET`) at each real-time fraction.

    ``checkpoint`` holds :class:`Checkpointing` parameters other than ``kind``;
    ``progress`` (optional) is called with ``(fraction, label)`` before each run;
    ``thresholds`` are the improved heuristic's (default :class:`Thresholds`);
    ``slowdown_on`` is :func:`realtime_metrics`'s.
    """
    schemes = tuple(SCHEME_SET) if schemes is None else tuple(schemes)
    if any(not 0 <= f <= 1 for f in fractions):
        raise ValueError(f"real-time fractions must lie in [0, 1], got {list(fractions)}")
    bad = [s for s in schemes if s not in SCHEME_SET]
    if bad:
        raise ValueError(f"unknown scheme(s) {bad}; choose from {list(SCHEME_SET)}")
    out = []
    for f in fractions:
        rj = tag_realtime(js, machine, f, seed=seed, classes=classes)
        _warn_settings(rj, f, schemes, checkpoint)
        for label in schemes:
            scheme, kind, improved, _ = SCHEME_SET[label]
            if progress is not None:
                progress(f, label)
            try:
                r = simulate(rj, scheme, Checkpointing(kind, **(checkpoint or {})), improved,
                             thresholds)
            except RuntimeError as e:
                if "unfinished jobs" not in str(e):
                    raise
                from ..errors import InputError

                raise InputError(f"{label} at a real-time share of {f:g}: the simulation "
                                 f"cannot finish with this I/O model ({machine.io_summary()}); "
                                 "checkpoint writes take too long: raise --pfs-gbps or "
                                 "--io-gbps, or lower --ckpt-data") from None
            out.append(StudyRun(float(f), label, r, realtime_metrics(r, slowdown_on)))
    return out


def _warn_settings(rj, fraction, schemes, checkpoint) -> None:
    """Warn about settings that make a study meaningless without being invalid."""
    import warnings

    n_rt = int(np.count_nonzero(rj.rtj))
    if fraction > 0 and n_rt == 0:
        warnings.warn(f"a real-time share of {fraction:g} of {len(rj)} jobs rounds to no "
                      "real-time job; every scheme then runs the same batch workload",
                      UserWarning, stacklevel=3)
    for kind in sorted({SCHEME_SET[s].checkpointing for s in schemes} - {"none"}):
        write = Checkpointing(kind, **(checkpoint or {})).costs(rj)[0]
        slow = int(np.count_nonzero(write > rj.jobset.runtime))
        if slow:
            warnings.warn(f"{kind} checkpoints: for {slow} of {len(rj)} jobs one checkpoint "
                          f"write takes longer than the job's run time (up to "
                          f"{write.max():.3g} s); the I/O model ({rj.machine.io_summary()}) "
                          "makes the study's slowdowns and utilisation meaningless",
                          UserWarning, stacklevel=3)
            break
    if any(SCHEME_SET[s].checkpointing == "sys" for s in schemes):
        write, _, interval = Checkpointing("sys", **(checkpoint or {})).costs(rj)
        slow = int(np.count_nonzero(write >= interval))
        if slow:
            warnings.warn(f"SYS-CKPT interval {interval[0]:g} s: for {slow} of {len(rj)} jobs "
                          f"one checkpoint write takes longer (up to {write.max():.0f} s), so "
                          "they spend more time checkpointing than computing",
                          UserWarning, stacklevel=3)


def study_table(runs: list[StudyRun]) -> str:
    """Markdown: per run, RTJ and BJ mean slowdown and bounded slowdown, BJ bounded slowdown
    per class, utilisation, node-hours lost and preemptions."""
    cls = " | ".join(f"BJ {c} bsld" for c in CLASS_NAMES)
    head = (f"| RTJ share | scheme | RTJ sd | RTJ bsld | BJ sd | BJ bsld | {cls} | utilisation | "
            "node-h lost to preemption | node-h checkpointing | preemptions |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in runs:
        m = r.metrics
        per = " | ".join(f"{m[f'BJ {c}']['mean_bsld']:.2f}" for c in CLASS_NAMES)
        s = m["system"]
        lines.append(
            f"| {r.fraction:.2f} | {r.label} | {m['RTJ']['mean_slowdown']:.2f} | "
            f"{m['RTJ']['mean_bsld']:.2f} | {m['BJ']['mean_slowdown']:.2f} | "
            f"{m['BJ']['mean_bsld']:.2f} | {per} | {s['utilisation']:.3f} | "
            f"{s['node_hours_lost_preemption']:,.0f} | {s['node_hours_checkpointing']:,.0f} | "
            f"{s['preemptions']} |")
    return "\n".join(lines)


def plot_slowdowns(runs: list[StudyRun], path, fraction=None) -> Path:
    """Mean bounded slowdown by kind and class, one bar per scheme, at one fraction."""
    from ..plot import _save, plt

    fraction = runs[0].fraction if fraction is None else fraction
    rs = [r for r in runs if np.isclose(r.fraction, fraction)]
    groups = ["RTJ"] + [f"BJ {c}" for c in CLASS_NAMES]
    fig, ax = plt.subplots(figsize=(10, 4.2))
    width = 0.8 / max(1, len(rs))
    x = np.arange(len(groups))
    for i, r in enumerate(rs):
        ax.bar(x + i * width, [r.metrics[g]["mean_bsld"] for g in groups], width, label=r.label)
    ax.set_xticks(x + 0.4 - width / 2, groups)
    ax.set_yscale("log")
    ax.set_ylabel("mean bounded slowdown")
    ax.set_title(f"{rs[0].result.jobs.jobset.name}, {fraction:.0%} real-time jobs")
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    _save(fig, path)
    return Path(path)


def milp_comparison(n_instances: int = 5, n_jobs: int = 10, capacity: int = 8,
                    rtj_share: float = 0.3, seed: int = 0, time_limit: float = 60.0) -> list[dict]:
    """Each scheme against the integer program on small random instances.

    Instances: ``n_jobs`` jobs with integer run times 1-4 and releases 0-8
    (slots), 1 to ``capacity - 2`` nodes, ``round(rtj_share * n_jobs)``
    real-time. The heuristics see the slots as seconds on a machine whose
    checkpoints cost nothing (so NO-CKPT still loses work, the others lose
    none), and the program bounds every scheme from below. For each scheme:
    its RTJ and BJ mean slowdowns, the program's least BJ mean slowdown with
    the RTJ mean slowdown held to the scheme's, and ``pct_of_optimum``
    (100 x optimum / scheme's BJ slowdown; 100 is optimal); and the smallest
    RTJ bound in [1.1, 2.0] any schedule meets.
    """
    rng = np.random.default_rng(seed)
    fast = Machine(capacity, memory_gb=1e-9, pfs_gbps=1e9, io_gbps=1e9, name=f"{capacity} nodes")
    rows = []
    for i in range(n_instances):
        p = rng.integers(1, 5, n_jobs)
        rel = np.sort(rng.integers(0, 9, n_jobs))
        nodes = rng.integers(1, capacity - 1, n_jobs)
        js = JobSet.from_arrays(rel.astype(float), nodes, p.astype(float), sigma=np.zeros(n_jobs),
                                bw=np.zeros(n_jobs))
        rj = tag_realtime(js, fast, rtj_share, seed=seed + i)
        th, best = min_threshold(rel, p, nodes, rj.rtj, capacity, time_limit=time_limit)
        for label, (scheme, kind, improved, _) in SCHEME_SET.items():
            r = simulate(rj, scheme, kind, improved)
            sd = (r.finish - rel) / p
            rt, bj = float(sd[rj.rtj].mean()), float(sd[~rj.rtj].mean())
            opt = solve_milp(rel, p, nodes, rj.rtj, capacity, max(rt, 1.0) + 1e-9, time_limit)
            rows.append({"instance": i, "scheme": label, "rtj_slowdown": rt, "bj_slowdown": bj,
                         "opt_bj_slowdown": opt.bj_slowdown, "status": opt.status,
                         "pct_of_optimum": 100.0 * opt.bj_slowdown / bj,
                         "min_rtj_bound": th, "bj_at_min_bound": best.bj_slowdown})
    return rows
