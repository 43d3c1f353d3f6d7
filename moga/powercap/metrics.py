"""What a power-capped schedule is judged by (docs/design.md §11)."""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from ..model.jobset import JobSet
from ..model.platform import Federation
from ..model.schedule import BSLD_BOUND, power_profile
from .queues import Queues

__all__ = ["PowercapMetrics", "powercap_metrics", "BSLD_BOUND"]


@dataclass(frozen=True)
class PowercapMetrics:
    """Metrics of one schedule.

    Attributes
    ----------
    weighted_queue_time : float
        ``sum_i (max_ewt / ewt_i) * (start_i - release_i)``, s.
    mean_wait : float
        Mean ``start - release``, s.
    mean_bsld : float
        Mean bounded slowdown ``max(1, (finish - release) / max(finish - start, 600 s))``.
    makespan : float
        ``max(finish) - min(release)``, s.
    energy : float
        Idle power of every node over the makespan plus the jobs' busy increments, J.
    peak_power : float
        Highest power drawn, W.
    cap : float or None
        The federation's cap, W.
    time_above_cap : float
        Seconds during which power exceeded the cap (relative tolerance 1e-9): 0 for
        every dispatcher that plans on the jobs' real power, possibly more for one
        that plans on predicted power (``run_dispatcher(power_error=...)``).
    """

    weighted_queue_time: float
    mean_wait: float
    mean_bsld: float
    makespan: float
    energy: float
    peak_power: float
    cap: float | None
    time_above_cap: float

    def as_dict(self) -> dict:
        return asdict(self)


def powercap_metrics(js: JobSet, fed: Federation, start, finish, alloc, energy: float,
                     queues: Queues | None = None) -> PowercapMetrics:
    """The metrics of a schedule of ``js`` on ``fed`` (``energy`` as the decoder computed it)."""
    queues = Queues() if queues is None else queues
    start, finish = np.asarray(start), np.asarray(finish)
    wait = start - js.release
    run = finish - start
    bsld = np.maximum(1.0, (finish - js.release) / np.maximum(run, BSLD_BOUND))
    times, watts = power_profile(start, finish, alloc, js.power, fed)
    above = 0.0
    if fed.power_cap is not None and times.size > 1:
        over = watts[:-1] > fed.power_cap * (1 + 1e-9)
        above = float(np.diff(times)[over].sum())
    return PowercapMetrics(
        weighted_queue_time=queues.weighted_queue_time(js.requested, js.release, start),
        mean_wait=float(wait.mean()) if wait.size else 0.0,
        mean_bsld=float(bsld.mean()) if bsld.size else 0.0,
        makespan=float(finish.max() - js.release.min()) if finish.size else 0.0,
        energy=float(energy),
        peak_power=float(watts.max()) if watts.size else fed.idle_power,
        cap=fed.power_cap,
        time_above_cap=above,
    )
