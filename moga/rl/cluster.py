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

from dataclasses import dataclass, fields

import numpy as np

from ..bounds import BOUNDS
from ..errors import InputError
from ..validation import check_int, check_number

__all__ = ["ClusterConfig", "JobSequence", "draw_jobs"]


#: Largest observation image (H x width cells) a configuration may ask for.
MAX_IMAGE_CELLS = 10**7


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
        # Stored as plain ints and floats: 2.0 machines is 2 (Gymnasium's spaces need ints).
        for f in ("K", "N", "H", "Q", "L", "t_arrive", "max_steps"):
            object.__setattr__(self, f, check_int(f, getattr(self, f), 1, 2**31 - 1))
        object.__setattr__(self, "B", check_int("B", self.B, 0, 2**31 - 1))
        cells = self.H * self.width
        if cells > MAX_IMAGE_CELLS:
            raise InputError(f"the observation image would be {self.H} x {self.width} = {cells:,} "
                             f"cells, more than {MAX_IMAGE_CELLS:,}: lower H, K, N, Q or B")
        object.__setattr__(self, "slowdown", check_number("slowdown", self.slowdown))
        for f, key in (("lam", "lam"), ("beta", "beta"), ("c", "estimate_c")):
            object.__setattr__(self, f, BOUNDS[key].check(f, getattr(self, f)))
        try:
            energy = tuple(self.energy)
        except TypeError:
            raise InputError(f"energy must be a sequence of {self.K} numbers, got "
                             f"{self.energy!r}") from None
        if len(energy) != self.K:
            raise InputError(f"energy must give one value per machine ({self.K}), got "
                             f"{len(energy)}")
        for k, e in enumerate(energy):
            check_number(f"energy[{k}]", e)
            if not e > 0:
                raise InputError(f"energy[{k}] must be > 0, got {e}")
        object.__setattr__(self, "energy", tuple(float(e) for e in energy))
        if not 0 < self.lam <= 1 or not 0 <= self.beta <= 1:
            raise InputError(f"lam must be in (0, 1] and beta in [0, 1], got {self.lam}, "
                             f"{self.beta}")
        if not self.c > 0 or not self.slowdown >= 1:
            raise InputError(f"c must be > 0 and slowdown >= 1, got {self.c}, {self.slowdown}")
        try:
            longest = 15 * self.slowdown ** (self.K - 1)
        except OverflowError:
            longest = float("inf")
        if longest > self.L:
            raise InputError(f"L ({self.L}) must hold the longest expected duration "
                             f"({longest:g})")

    @classmethod
    def coerce(cls, config) -> ClusterConfig:
        """``config`` as a ClusterConfig: one, ``None`` (the defaults) or a dict of fields."""
        if config is None:
            return cls()
        if isinstance(config, cls):
            return config
        if isinstance(config, dict):
            unknown = sorted(set(config) - {f.name for f in fields(cls)})
            if unknown:
                raise InputError(f"config: unknown field(s) {unknown}; the fields are "
                                 f"{[f.name for f in fields(cls)]}")
            return cls(**config)
        raise InputError(f"config must be a ClusterConfig or a dict of its fields, got "
                         f"{type(config).__name__}")

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

    def __post_init__(self):
        arrival = np.asarray(self.arrival)
        J = arrival.shape[0] if arrival.ndim == 1 else -1
        if J < 0:
            raise InputError(f"JobSequence: arrival must be one-dimensional, got shape "
                             f"{arrival.shape}")
        for name, ndim in (("n", 1), ("mu", 2), ("d", 2)):
            a = np.asarray(getattr(self, name))
            if a.ndim != ndim or a.shape[0] != J:
                raise InputError(f"JobSequence: {name} must have shape "
                                 f"{'(J,)' if ndim == 1 else '(J, K)'} with J = {J}, got "
                                 f"{a.shape}")
        if np.asarray(self.mu).shape != np.asarray(self.d).shape:
            raise InputError(f"JobSequence: mu and d must have the same shape, got "
                             f"{np.asarray(self.mu).shape} and {np.asarray(self.d).shape}")
        conv = {}
        for name, low in (("arrival", 0), ("n", 1), ("d", 1)):
            a = np.asarray(getattr(self, name))
            if a.size and (a.dtype.kind not in "iuf" or not np.all(np.isfinite(a))
                           or np.any(a != np.round(a))):
                raise InputError(f"JobSequence: {name} must hold integers, got {a.ravel()[:5]}")
            if a.size and a.min() < low:
                j = int(np.flatnonzero((a < low).reshape(J, -1).any(axis=1))[0])
                raise InputError(f"JobSequence: job {j}: {name} must be >= {low}")
            conv[name] = a.astype(np.int64)
        mu = np.asarray(self.mu, dtype=np.float64) if np.asarray(self.mu).dtype.kind in "iuf" \
            else None
        if mu is None or (mu.size and (not np.all(np.isfinite(mu)) or mu.min() <= 0)):
            raise InputError("JobSequence: mu (expected durations) must be finite and > 0")
        if J and np.any(np.diff(conv["arrival"]) < 0):
            raise InputError("JobSequence: arrival times must be non-decreasing")
        for name, a in (*conv.items(), ("mu", mu)):
            object.__setattr__(self, name, a)

    def check(self, cfg: ClusterConfig) -> None:
        """Refuse a sequence that ``cfg``'s cluster cannot run, naming the first bad job."""
        J = len(self)
        if J == 0:
            return
        if self.mu.shape[1] != cfg.K:
            raise InputError(f"JobSequence: durations for {self.mu.shape[1]} machines, the "
                             f"cluster has K = {cfg.K}")
        if self.n.max() > cfg.N:
            j = int(np.argmax(self.n > cfg.N))
            raise InputError(f"JobSequence: job {j} needs {self.n[j]} processors, a machine "
                             f"has N = {cfg.N}")
        if self.d.max() > cfg.L:
            j = int(np.flatnonzero((self.d > cfg.L).any(axis=1))[0])
            raise InputError(f"JobSequence: job {j} lasts {self.d[j].max()} steps, more than "
                             f"L = {cfg.L}")

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
