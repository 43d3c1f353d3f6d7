"""Online heuristics against the best known value and the upper bound, on one job-set."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..model.chromosome import join
from ..model.export import format_number
from ..model.jobset import JobSet
from ..model.platform import Federation
from .best_known import BestKnown, best_known, upper_bound
from .online import ONLINE_HEURISTICS, online
from .schedule import heuristic_order

__all__ = ["ValueComparison", "compare_value"]


def _pct(v, ref):
    return 100.0 * v / ref if ref > 0 else float("nan")


@dataclass
class ValueComparison:
    """The outcome of :func:`compare_value`.

    Attributes
    ----------
    rows : list of dict
        Per algorithm: ``algorithm``, ``value``, ``pct_of_best_known``,
        ``pct_of_upper_bound``, ``pct_of_max`` (NaN when the reference is 0),
        ``completed``, ``jobs``.
    schedules : dict
        Every schedule by name (the heuristics and the best known).
    best_known : BestKnown
    upper_bound : float
    max_value : float
        Sum of ``v_start``.
    info : dict
    """

    rows: list
    schedules: dict
    best_known: BestKnown
    upper_bound: float
    max_value: float
    info: dict = field(default_factory=dict)

    COLUMNS = ("algorithm", "value", "pct_of_best_known", "pct_of_upper_bound", "pct_of_max",
               "completed", "jobs")

    def to_csv(self) -> str:
        """The table as CSV text, numbers with all their digits
        (:func:`~moga.model.export.format_number`, as the schedules' files)."""
        lines = [",".join(self.COLUMNS)]
        for r in self.rows:
            lines.append(",".join(format_number(r[c]) for c in self.COLUMNS))
        return "\n".join(lines) + "\n"


def compare_value(js: JobSet, fed: Federation, pop_size: int = 100, n_gen: int = 200,
                  seed: int = 1, progress=None) -> ValueComparison:
    """The online heuristics, the best known value (GA) and the upper bound on one job-set.

    The GA's initial population is seeded with the heuristics' orders (jobs by
    start time), so the best known value is at least every heuristic's.
    ``progress(label)``, if given, is called before each step (each heuristic,
    the GA, the bound).
    """
    if len(js) == 0:
        raise ValueError(f"job-set {js.name!r} is empty: nothing to compare")
    say = progress or (lambda label: None)
    schedules = {}
    for h in ONLINE_HEURISTICS:
        say(h)
        schedules[h] = online(js, fed, h)
    K = fed.n_clusters
    initial = np.vstack([join(heuristic_order(s), np.zeros((len(js), K)))
                         for s in schedules.values()])
    say(f"best known value: GA pop {pop_size} x {n_gen} generations")
    bk = best_known(js, fed, pop_size=pop_size, n_gen=n_gen, seed=seed, initial=initial)
    say("upper bound")
    ub = upper_bound(js, fed)
    mx = float(js.v_start.sum())
    rows = []
    for name, s in list(schedules.items()) + [(bk.name, bk.schedule)]:
        rows.append({"algorithm": name, "value": float(s.total_value),
                     "pct_of_best_known": _pct(s.total_value, bk.value),
                     "pct_of_upper_bound": _pct(s.total_value, ub),
                     "pct_of_max": _pct(s.total_value, mx), "completed": int(s.n_run),
                     "jobs": len(js)})
    return ValueComparison(rows, {**schedules, bk.name: bk.schedule}, bk, ub, mx,
                           {"seed": seed, "pop_size": pop_size, "n_gen": n_gen})
