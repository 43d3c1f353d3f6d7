"""Deep-EAS's heterogeneous cluster and its job sequences (docs/design.md §13).

K machines of N processors in discrete time steps. Machine 0 is fast and
energy-hungry, machine 1 takes ``slowdown`` times as long and far less
energy per processor-step (``energy = (9.809, 1)``: ``2 ** 3.2941``, the
dynamic-power ratio of a processor at twice the frequency). Jobs arrive by
Bernoulli(``lam``) per step until step ``t_arrive``; a job needs ``n`` ~
U{1..N} processors; with probability ``beta`` it is short (``mu_0`` ~ U{1..3}),
else long (U{10..15}); ``mu_k = mu_0 * slowdown**k``; its actual duration on
machine k is ``round(N(mu_k, mu_k / c))``, at least 1 and at most ``L``, which
schedulers do not see (they see ``mu``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["ClusterConfig", "JobSequence", "draw_jobs"]


@dataclass(frozen=True)
class ClusterConfig:
    """The paper's set-up (all defaults are its values).

    Parameters
    ----------
    K, N : int
        Machines and processors per machine.
    H : int
        Time steps in the observation image.
    Q, B : int
        Visible queue slots and backlog capacity.
    L : int
        Longest actual duration, steps.
    energy : tuple of float
        Energy per processor-step on each machine.
    slowdown : float
        Machine k takes ``slowdown**k`` times machine 0's time.
    lam, beta : float
        Arrival probability per step; share of short jobs.
    c : float
        Estimator accuracy: actual durations have variance ``mu / c`` (inf:
        exact).
    t_arrive : int
        Jobs arrive in steps ``0 .. t_arrive - 1``.
    max_steps : int
        An episode is truncated after this many time steps.
    """

    K: int = 2
    N: int = 10
    H: int = 30
    Q: int = 10
    B: int = 90
    L: int = 30
    energy: tuple = (9.809, 1.0)
    slowdown: float = 2.0
    lam: float = 0.7
    beta: float = 0.5
    c: float = 4.0
    t_arrive: int = 60
    max_steps: int = 2000

    def __post_init__(self):
        for f in ("K", "N", "H", "Q", "L", "t_arrive", "max_steps"):
            if int(getattr(self, f)) != getattr(self, f) or getattr(self, f) < 1:
                raise ValueError(f"{f} must be a positive integer, got {getattr(self, f)}")
        if self.B < 0 or len(self.energy) != self.K or any(e <= 0 for e in self.energy):
            raise ValueError("B must be >= 0 and energy must give one positive value per machine")
        if not 0 < self.lam <= 1 or not 0 <= self.beta <= 1:
            raise ValueError(f"lam must be in (0, 1] and beta in [0, 1], got {self.lam}, {self.beta}")
        if not self.c > 0 or not self.slowdown >= 1:
            raise ValueError(f"c must be > 0 and slowdown >= 1, got {self.c}, {self.slowdown}")
        if 15 * self.slowdown ** (self.K - 1) > self.L:
            raise ValueError(f"L ({self.L}) must hold the longest expected duration "
                             f"({15 * self.slowdown ** (self.K - 1):g})")

    @property
    def n_actions(self) -> int:
        """``Q * K`` (queue slot, machine) pairs plus "wait"."""
        return self.Q * self.K + 1

    @property
    def width(self) -> int:
        """Columns of the observation: cluster, job slots, backlog, one extra."""
        return self.K * self.N + self.Q * self.K * self.N + -(-self.B // self.H) + 1


@dataclass(frozen=True, eq=False)
class JobSequence:
    """One episode's jobs: ``arrival`` (J,), ``n`` (J,), ``mu`` (J, K) expected and ``d``
    (J, K) actual durations, in steps."""

    arrival: np.ndarray
    n: np.ndarray
    mu: np.ndarray
    d: np.ndarray

    def __len__(self) -> int:
        return int(self.arrival.shape[0])


def draw_jobs(cfg: ClusterConfig, rng) -> JobSequence:
    """A job sequence drawn from ``rng`` (a seed or a numpy Generator)."""
    rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    arrive = np.flatnonzero(rng.random(cfg.t_arrive) < cfg.lam)
    J = arrive.size
    n = rng.integers(1, cfg.N + 1, J)
    short = rng.random(J) < cfg.beta
    mu0 = np.where(short, rng.integers(1, 4, J), rng.integers(10, 16, J)).astype(float)
    mu = mu0[:, None] * cfg.slowdown ** np.arange(cfg.K)[None, :]
    if np.isinf(cfg.c):
        d = mu.copy()
    else:
        d = rng.normal(mu, np.sqrt(mu / cfg.c))
    d = np.clip(np.rint(d), 1, cfg.L).astype(np.int64)
    return JobSequence(arrive.astype(np.int64), n.astype(np.int64), mu, d)
