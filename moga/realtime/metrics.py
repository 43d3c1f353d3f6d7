"""Metrics of a real-time simulation, per kind (RTJ, BJ) and per class."""

from __future__ import annotations

import numpy as np

from decoders._kernels import exact_dot

from ..model.schedule import BSLD_BOUND
from .simulator import RealtimeResult
from .workload import CLASS_NAMES

__all__ = ["realtime_metrics", "BSLD_BOUND", "SLOWDOWN_BASES"]



#: What a slowdown divides by: the run time, or the requested time (the walltime, the
#: checkpointing paper's authors' definition).
SLOWDOWN_BASES = ("runtime", "walltime")


def _rows(r: RealtimeResult, mask, base) -> dict:
    rj = r.jobs
    resp = r.finish[mask] - rj.submit[mask]
    run = (rj.runtime if base == "runtime" else rj.requested)[mask]
    n = int(mask.sum())
    return {"n": n,
            "mean_slowdown": float(np.mean(resp / run)) if n else float("nan"),
            "mean_bsld": float(np.mean(np.maximum(1.0, resp / np.maximum(run, BSLD_BOUND))))
            if n else float("nan"),
            "mean_wait_h": float(np.mean(r.start[mask] - rj.submit[mask]) / 3600) if n
            else float("nan"),
            "preemptions": int(r.n_preempted[mask].sum())}


def realtime_metrics(r: RealtimeResult, slowdown_on: str = "runtime") -> dict:
    """Per kind and class: ``n``, mean slowdown ``(finish - submit) / runtime``, mean bounded
    slowdown (10-minute bound), mean wait (h), preemptions; and overall: utilisation (useful
    node-seconds over machine node-seconds from first submit to last finish), node-hours
    lost to preemption (computation lost and restart reads) and to checkpoint writes.

    Parameters
    ----------
    r : RealtimeResult
    slowdown_on : {"runtime", "walltime"}
        Divide the slowdowns by the run time, or by the requested time (the
        authors' definition in the checkpointing paper).

    Returns a dict: ``{"RTJ": {...}, "BJ": {...}, "BJ narrow-short": {...}, ...,
    "system": {...}}``; ``system`` names the ``slowdown_on`` used.
    """
    if slowdown_on not in SLOWDOWN_BASES:
        raise ValueError(f"slowdown_on must be one of {list(SLOWDOWN_BASES)}, got "
                         f"{slowdown_on!r}")
    rj = r.jobs
    out = {"RTJ": _rows(r, rj.rtj, slowdown_on), "BJ": _rows(r, ~rj.rtj, slowdown_on)}
    for c, name in enumerate(CLASS_NAMES):
        out[f"RTJ {name}"] = _rows(r, rj.rtj & (rj.cls == c), slowdown_on)
        out[f"BJ {name}"] = _rows(r, ~rj.rtj & (rj.cls == c), slowdown_on)
    nodes = rj.nodes
    run = r.run
    on = nodes[run.seg_job]
    lost = float(np.sum(on * (run.seg_lost + run.seg_read)))
    ckpt = float(np.sum(on * run.seg_write))
    span = float(r.finish.max() - rj.submit.min()) if len(rj) else 0.0
    useful = exact_dot(nodes, rj.runtime)
    out["system"] = {"utilisation": useful / (rj.machine.nodes * span) if span > 0 else 0.0,
                     "node_hours_lost_preemption": lost / 3600,
                     "node_hours_checkpointing": ckpt / 3600,
                     "preemptions": int(r.n_preempted.sum()),
                     "makespan_h": span / 3600, "slowdown_on": slowdown_on}
    return out
