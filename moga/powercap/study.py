"""The cap study: every dispatcher at several caps, as a table and plots (``moga powercap``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..model.jobset import JobSet
from ..model.platform import Federation
from ..model.schedule import check_power
from .cp import CPOptions
from .dispatchers import DISPATCHERS, PowercapResult, run_dispatcher
from .queues import Queues

__all__ = ["cap_study", "moved_by_cap", "study_table", "plot_power", "plot_wqt"]


def cap_study(js: JobSet, fed: Federation, caps=(1.0, 0.8, 0.6, 0.4),
              dispatchers=tuple(DISPATCHERS),
              queues: Queues | None = None, model: str = "fluid", cp: CPOptions | None = None,
              progress=None, estimates: str = "exact",
              uncapped: bool = True, power_error: float = 0.0,
              power_seed: int = 0, power_margin: float = 0.0,
              rule: str = "fastest") -> list[PowercapResult]:
    """Run each dispatcher at each cap, given as a fraction of ``fed``'s peak power.

    Peak power is every node busy at a power factor of 1, so with drawn
    factors above 1 a cap of 1.0 x peak can still bind, rarely: compare with
    the uncapped runs (:func:`study_table` counts the jobs each cap moves).
    ``uncapped`` (default) first runs each dispatcher without any cap, the
    baseline of the study. ``progress`` (optional) is called with ``(cap,
    dispatcher)`` before each run (``cap`` None for an uncapped one).
    ``estimates`` is what the dispatchers plan with, ``power_error`` and
    ``power_seed`` whether they know the jobs' power or predict it, and
    ``power_margin`` the share of each cap they keep free (see
    :func:`~moga.powercap.run_dispatcher`), and ``rule`` their allocation rule
    (``"fastest"``, ``"greenest"`` or ``"consolidate"``).
    Returns the results, the uncapped ones first, then caps outer, dispatchers inner.
    """
    caps = [float(c) for c in caps]
    if not caps or any(not c > 0 for c in caps):
        raise ValueError(f"caps are fractions of peak power, each > 0; got {caps}")
    bad = [d for d in dispatchers if d not in DISPATCHERS]
    if bad:
        raise ValueError(f"unknown dispatcher(s) {bad}; choose from {list(DISPATCHERS)}")
    low = fed.idle_power / fed.peak_power
    if min(caps) <= low:
        raise ValueError(f"a cap of {min(caps):g} x peak does not exceed the federation's idle "
                         f"power ({low:.3f} x peak): no job could run")
    feds = {c: fed.with_cap(fraction=c) for c in caps}
    for c, capped in feds.items():  # every cap is checked before the first dispatch
        check_power(js, capped, what=f"cap {c:g} x peak: ")
    out = []
    if uncapped:
        feds = {None: fed.without_cap(), **feds}
    for c, capped in feds.items():
        for d in dispatchers:
            if progress is not None:
                progress(c, d)
            out.append(run_dispatcher(js, capped, d, queues=queues, model=model, rule=rule,
                                      cp=cp, estimates=estimates, power_error=power_error,
                                      power_seed=power_seed, power_margin=power_margin))
    return out


def moved_by_cap(result: PowercapResult, baseline: PowercapResult) -> int:
    """How many jobs start at another time under ``result``'s cap than in the uncapped
    ``baseline`` of the same dispatcher: 0 when the cap never binds."""
    tol = 1e-9 * max(1.0, float(np.max(np.abs(baseline.start))))
    return int(np.count_nonzero(np.abs(result.start - baseline.start) > tol))


def study_table(results: list[PowercapResult]) -> str:
    """A markdown table of a cap study; with uncapped runs among the results, each capped
    row counts the jobs its cap moved (:func:`moved_by_cap`)."""
    head = ("| cap (x peak) | dispatcher | weighted queue time (h) | mean wait (h) | mean bsld | "
            "makespan (h) | energy (MWh) | peak power (kW) | time above cap (s) | "
            "jobs moved by the cap | CP solve per event (ms, median / max) | fallbacks |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    free = {r.dispatcher: r for r in results if r.metrics.cap is None}
    for r in results:
        m = r.metrics
        frac = "none" if m.cap is None else f"{m.cap / r.federation.peak_power:.2f}"
        moved = "-"
        if m.cap is not None and r.dispatcher in free:
            moved = str(moved_by_cap(r, free[r.dispatcher]))
        cp = "-"
        fb = "-"
        if r.dispatcher == "hybrid":
            s = r.info["solve_seconds"]
            cp = f"{1e3 * np.median(s):.1f} / {1e3 * s.max():.0f}" if s.size else "no solve"
            fb = f"{r.info['fallbacks']} of {r.info['solves']}"
        lines.append(
            f"| {frac} | {r.dispatcher} | {m.weighted_queue_time / 3600:,.1f} | "
            f"{m.mean_wait / 3600:.2f} | {m.mean_bsld:.2f} | {m.makespan / 3600:.1f} | "
            f"{m.energy / 3.6e9:.3f} | {m.peak_power / 1e3:.2f} | {m.time_above_cap:g} | "
            f"{moved} | {cp} | {fb} |")
    return "\n".join(lines)


def plot_power(results: list[PowercapResult], path) -> Path:
    """Power over time of each result, with its cap line, one panel per result."""
    from ..model.schedule import power_profile
    from ..plot import _save, plt

    n = len(results)
    fig, axes = plt.subplots(n, 1, figsize=(9, 1.9 * n + 0.6), sharex=True, squeeze=False)
    for ax, r in zip(axes[:, 0], results, strict=True):
        t, w = power_profile(r.start, r.finish, r.alloc, r.jobset.power, r.federation)
        ax.step(t / 3600, w / 1e3, where="post", lw=0.8)
        if r.federation.power_cap is not None:
            ax.axhline(r.federation.power_cap / 1e3, color="red", ls="--", lw=1, label="cap")
        ax.set_ylabel("kW")
        cap = r.federation.power_cap
        title = "uncapped" if cap is None else f"cap {cap / r.federation.peak_power:.2f} x peak"
        ax.set_title(f"{r.dispatcher}, {title}", fontsize=9)
    axes[-1, 0].set_xlabel("time (h)")
    fig.tight_layout()
    _save(fig, path)
    return Path(path)


def plot_wqt(results: list[PowercapResult], path) -> Path:
    """Weighted queue time against the cap, one line per dispatcher."""
    from ..plot import _save, plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for d in dict.fromkeys(r.dispatcher for r in results):
        rs = [r for r in results if r.dispatcher == d and r.federation.power_cap is not None]
        x = [r.federation.power_cap / r.federation.peak_power for r in rs]
        y = [r.metrics.weighted_queue_time / 3600 for r in rs]
        line, = ax.plot(x, y, marker="o", label=d)
        for r in results:  # the uncapped baseline, as a level line
            if r.dispatcher == d and r.federation.power_cap is None:
                ax.axhline(r.metrics.weighted_queue_time / 3600, color=line.get_color(), ls=":",
                           lw=1, label=f"{d}, uncapped")
    ax.set_xlabel("power cap (fraction of peak)")
    ax.set_ylabel("weighted queue time (h)")
    ax.set_yscale("symlog")
    ax.invert_xaxis()
    ax.legend()
    fig.tight_layout()
    _save(fig, path)
    return Path(path)
