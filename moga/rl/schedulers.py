"""Schedulers over the Deep-EAS environment: ESJF (the paper's heuristic), SJF, greedy energy,
random, and episode runners (docs/design.md §13).

A scheduler is a function ``scheduler(env) -> action`` of the environment's
current state; it is called until the episode ends, so "keep starting jobs
until none fits, then wait" is one start per call and a wait at the end.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from .cluster import ClusterConfig, JobSequence, draw_jobs
from .env import DeepEASEnv

__all__ = ["esjf", "sjf", "sjf_least_edp", "greedy_energy", "random_scheduler", "run_episode",
           "mean_edp", "edp_per_sequence", "edp_mean", "edp_interval", "expected_edp", "SCHEDULERS"]


def _candidates(env):
    c = env.cfg
    for slot, j in enumerate(env.queue[: c.Q]):
        for k in range(c.K):
            if env.jobs.n[j] <= env.free[k]:
                yield slot, j, k


def _wait(env):
    return env.cfg.Q * env.cfg.K


def expected_edp(env, j, k) -> Fraction:
    """Job ``j``'s estimated normalised EDP if it starts on machine ``k`` now,
    ``n e_k mu_jk / mu* * (t - arrival + mu_jk) / mu*``, in exact arithmetic (the floats
    read exactly as fractions), so that equal estimates tie exactly."""
    mu = Fraction(float(env.jobs.mu[j, k]))
    ms = Fraction(float(env.mu_star[j]))
    wait = Fraction(int(env.t) - int(env.jobs.arrival[j]))
    return (int(env.jobs.n[j]) * Fraction(float(env.cfg.energy[k])) * mu * (wait + mu)
            / (ms * ms))


def esjf(env) -> int:
    """Energy-aware shortest job first: the (visible job, machine with room) pair of least
    estimated normalised EDP (:func:`expected_edp`, exact); ties to the lower slot, then
    machine; wait when nothing fits."""
    best, act = None, _wait(env)
    for slot, j, k in _candidates(env):
        edp = expected_edp(env, j, k)
        if best is None or edp < best:
            best, act = edp, slot * env.cfg.K + k
    return act


def sjf_least_edp(env) -> int:
    """Shortest job first (least ``mu*``, ties to the lower slot), started on the machine with
    room of least estimated EDP (:func:`expected_edp`; ties to the lower index): the strongest
    simple heuristic of the fidelity review."""
    best, act = None, _wait(env)
    for slot, j, k in _candidates(env):
        key = (float(env.mu_star[j]), slot, expected_edp(env, j, k), k)
        if best is None or key < best:
            best, act = key, slot * env.cfg.K + k
    return act


def sjf(env) -> int:
    """Shortest job first (least ``mu*``, ties to the lower slot) on the machine that would
    finish it first (ties to the lower index); energy-blind."""
    best, act = None, _wait(env)
    for slot, j, k in _candidates(env):
        key = (env.mu_star[j], slot, env.jobs.mu[j, k], k)
        if best is None or key < best:
            best, act = key, slot * env.cfg.K + k
    return act


def greedy_energy(env) -> int:
    """First come first served, each job on the machine of least expected energy that has
    room (delay-blind)."""
    e = env.cfg.energy
    best, act = None, _wait(env)
    for slot, j, k in _candidates(env):
        key = (slot, e[k] * env.jobs.mu[j, k], k)
        if best is None or key < best:
            best, act = key, slot * env.cfg.K + k
    return act


def random_scheduler(seed=0):
    """A scheduler that picks uniformly among the startable pairs and "wait" (seeded)."""
    rng = np.random.default_rng(seed)

    def act(env) -> int:
        acts = [slot * env.cfg.K + k for slot, _, k in _candidates(env)] + [_wait(env)]
        return int(acts[rng.integers(len(acts))])

    return act


#: The heuristic schedulers by name.
SCHEDULERS = {"ESJF": esjf, "SJF": sjf, "SJF-least-EDP": sjf_least_edp,
              "greedy-energy": greedy_energy}


def run_episode(scheduler, jobs: JobSequence, config: ClusterConfig | None = None) -> np.ndarray:
    """Run one episode of ``jobs``; returns each job's EDP (see :meth:`DeepEASEnv.edp` for
    episodes truncated at ``max_steps``)."""
    env = DeepEASEnv(config, jobs)
    env.reset()
    done = env.done
    while not done:
        _, _, term, trunc, _ = env.step(scheduler(env))
        done = term or trunc
    return env.edp()


def edp_per_sequence(scheduler, sequences, config: ClusterConfig | None = None) -> np.ndarray:
    """Per sequence, the sum of its jobs' EDPs and its job count, shape (len(sequences), 2)."""
    cfg = config or ClusterConfig()
    out = np.zeros((len(sequences), 2))
    for i, s in enumerate(sequences):
        v = run_episode(scheduler, s, cfg)
        ok = np.isfinite(v)
        out[i] = float(v[ok].sum()), int(ok.sum())
    return out


def mean_edp(scheduler, config: ClusterConfig | None = None, n_sequences: int = 20,
             seed: int = 0, sequences=None) -> float:
    """Mean EDP over the jobs of ``n_sequences`` sequences drawn from ``seed`` (or given)."""
    cfg = config or ClusterConfig()
    if sequences is None:
        if isinstance(n_sequences, bool) or not isinstance(n_sequences, (int, np.integer)) \
                or n_sequences < 1:
            raise ValueError(f"n_sequences must be an integer >= 1, got {n_sequences!r}")
        rng = np.random.default_rng(seed)
        sequences = [draw_jobs(cfg, rng) for _ in range(n_sequences)]
    return edp_mean(edp_per_sequence(scheduler, sequences, cfg))


def edp_mean(per_sequence) -> float:
    """The mean EDP over jobs from :func:`edp_per_sequence`'s rows (nan without jobs)."""
    sc = np.asarray(per_sequence, dtype=float).reshape(-1, 2)
    return float(sc[:, 0].sum() / sc[:, 1].sum()) if sc[:, 1].sum() else float("nan")


def edp_interval(per_sequence, confidence: float = 0.95, n_resamples: int = 2000,
                 seed: int = 0) -> tuple[float, float]:
    """A bootstrap confidence interval (percentile, over sequences) of the mean EDP over
    jobs, from :func:`edp_per_sequence`'s rows; ``(nan, nan)`` with fewer than two
    sequences that hold jobs."""
    from scipy import stats

    sc = np.asarray(per_sequence, dtype=float)
    sc = sc[sc[:, 1] > 0] if sc.size else sc.reshape(0, 2)
    if len(sc) < 2:
        return float("nan"), float("nan")
    res = stats.bootstrap((sc[:, 0], sc[:, 1]), lambda a, b: np.sum(a) / np.sum(b),
                          paired=True, vectorized=False, n_resamples=n_resamples,
                          confidence_level=confidence, method="percentile",
                          random_state=np.random.default_rng(seed))
    return float(res.confidence_interval.low), float(res.confidence_interval.high)
