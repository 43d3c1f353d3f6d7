"""The Deep-EAS environment: a Gymnasium ``Env`` over :mod:`moga.rl.cluster` (docs/design.md §13).

One environment step is one decision. Action ``a = slot * K + k`` starts the
job in queue slot ``slot`` on machine ``k`` now, if the slot holds a job and
``k`` has its processors free; action ``Q * K`` ("wait"), or any action that
cannot be carried out, ends the time step: running jobs progress one step,
finished ones leave, arrivals join the queue (the first ``Q`` waiting jobs
are visible in slots, the next ``B`` are the backlog).

Objective: the mean over jobs of ``E_j * D_j / mu*_j`` (energy-delay
product), ``E_j = n_j e_k d_jk / mu*_j`` on the machine k it ran on,
``D_j`` from arrival to completion, ``mu*_j = min_k mu_jk``. Reward: its
per-step decomposition, so that an episode's return is minus the sum of the
jobs' EDPs: every time step charges ``-Emin_j / mu*_j`` for each waiting job
(``Emin_j``: its least expected energy) and ``-E_j / mu*_j`` for each
running one; starting a job charges the difference for the steps it waited,
``-(E_j - Emin_j) / mu*_j * wait``.

Observation: the paper's H x W binary image (30 x 224 by default): per
machine N columns of processors busy over the next H steps (running jobs
drawn with their expected remaining time), per queue slot and machine an N
wide block of the job's processors over its expected duration there, the
backlog as filled cells in ``ceil(B / H)`` columns, and one column that fills
as the arrival period passes.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError, require
from .cluster import ClusterConfig, JobSequence, draw_jobs

gym = require("gymnasium", "the Deep-EAS environment (moga rl)", "gym")
spaces = gym.spaces

__all__ = ["DeepEASEnv", "ENV_ID"]

#: The id under which the environment is registered with Gymnasium.
ENV_ID = "moga/DeepEAS-v0"


def _check_sequence(jobs, cfg: ClusterConfig) -> None:
    if not isinstance(jobs, JobSequence):
        raise InputError(f"jobs must be a JobSequence, got {type(jobs).__name__}")
    jobs.check(cfg)


class DeepEASEnv(gym.Env):
    """Gymnasium environment of Deep-EAS's cluster.

    Parameters
    ----------
    config : ClusterConfig, optional
    jobs : JobSequence, optional
        A fixed job sequence for every episode; otherwise each reset draws one
        from the environment's generator (seeded by ``reset(seed=...)``).
        ``reset(options={"jobs": seq})`` sets it for one episode.
    mask : bool
        False (the paper's setting): an action that cannot be carried out ends
        the time step, as "wait" does. True: such an action is refused, and
        ``info["action_mask"]`` (also :meth:`action_mask`) says which actions
        can be carried out, for agents that mask their choice.
    """

    metadata = {"render_modes": []}

    def __init__(self, config: ClusterConfig | None = None, jobs: JobSequence | None = None,
                 mask: bool = False):
        if not isinstance(mask, bool):
            raise InputError(f"mask must be True or False, got {mask!r}")
        self.mask = mask
        self.cfg = ClusterConfig.coerce(config)
        c = self.cfg
        if jobs is not None:
            _check_sequence(jobs, c)
        self.observation_space = spaces.Box(0, 1, shape=(c.H, c.width), dtype=np.uint8)
        self.action_space = spaces.Discrete(c.n_actions)
        self._fixed = jobs
        self.jobs: JobSequence | None = None

    # -------------------------------------------------------------- episode
    def reset(self, *, seed=None, options=None):
        """Start an episode at time 0 with an empty cluster.

        Parameters
        ----------
        seed : int, optional
            Seeds the generator that draws the episode's job sequence.
        options : dict, optional
            ``{"jobs": seq}`` plays the given :class:`JobSequence` in this episode.

        Returns
        -------
        observation : numpy.ndarray
            The cluster image (``H`` x ``width``, 0 or 1).
        info : dict
            ``t``, ``queued``, ``running`` (and ``action_mask`` when masking).
        """
        super().reset(seed=seed)
        if options is not None and not isinstance(options, dict):
            raise InputError(f"reset: options must be a dict, got {type(options).__name__}")
        jobs = (options or {}).get("jobs")
        if jobs is not None:
            _check_sequence(jobs, self.cfg)
        else:
            jobs = self._fixed
        self.jobs = jobs if jobs is not None else draw_jobs(self.cfg, self.np_random)
        c, J = self.cfg, len(self.jobs)
        self.t = 0
        self.next_arrival = 0
        self.queue: list[int] = []
        self.running: list[int] = []
        self.free = np.full(c.K, c.N, dtype=np.int64)
        self.machine = np.full(J, -1, dtype=np.int64)
        self.start = np.full(J, -1, dtype=np.int64)
        self.finish = np.full(J, -1, dtype=np.int64)
        self.mu_star, self.e_min = job_costs(self.jobs, c.energy)
        self.energy = np.zeros(J)
        self._arrive()
        return self._obs(), self._info()

    def _arrive(self):
        a = self.jobs.arrival
        while self.next_arrival < len(self.jobs) and a[self.next_arrival] <= self.t:
            if len(self.queue) < self.cfg.Q + self.cfg.B:
                self.queue.append(self.next_arrival)
            self.next_arrival += 1

    @property
    def done(self) -> bool:
        return self.next_arrival >= len(self.jobs) and not self.queue and not self.running

    # ---------------------------------------------------------------- steps
    def can_start(self, slot: int, k: int) -> bool:
        """True when queue slot ``slot`` holds a job that fits machine ``k`` now."""
        return slot < min(len(self.queue), self.cfg.Q) and \
            self.jobs.n[self.queue[slot]] <= self.free[k]

    def step(self, action):
        """Carry out one action: start a queued job on a machine, or wait.

        Action ``slot * K + k`` starts the job of queue slot ``slot`` on machine
        ``k``; any other action (and, without masking, one that cannot be
        carried out) ends the time step.

        Returns
        -------
        observation, reward, terminated, truncated, info
            Gymnasium's five values; ``truncated`` is true when the episode
            reaches ``max_steps`` before every job finished.
        """
        c = self.cfg
        if self.jobs is None:
            raise InputError("step() before reset(): call reset() to start an episode")
        if isinstance(action, np.ndarray) and action.ndim == 0:
            action = action.item()
        if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
            raise InputError(f"action must be an integer in [0, {c.n_actions}), got {action!r}")
        a = int(action)
        if not 0 <= a < c.n_actions:
            raise InputError(f"action must be in [0, {c.n_actions}), got {action!r}")
        reward = 0.0
        if self.mask and a < c.Q * c.K and not self.can_start(a // c.K, a % c.K):
            raise InputError(f"action {a} cannot be carried out (queue slot {a // c.K} holds no "
                             f"job that fits machine {a % c.K} now) and the environment masks "
                             "infeasible actions: choose one where action_mask() is True")
        if a < c.Q * c.K and self.can_start(a // c.K, a % c.K):
            reward = self._start(a // c.K, a % c.K)
        else:
            reward = self._advance()
        terminated = self.done
        truncated = not terminated and self.t >= c.max_steps
        return self._obs(), reward, terminated, truncated, self._info()

    def _start(self, slot, k):
        j = self.queue.pop(slot)
        e = self.cfg.energy[k]
        self.machine[j], self.start[j] = k, self.t
        self.energy[j] = self.jobs.n[j] * e * self.jobs.d[j, k] / self.mu_star[j]
        self.free[k] -= self.jobs.n[j]
        self.running.append(j)
        waited = self.t - self.jobs.arrival[j]
        return -float((self.energy[j] - self.e_min[j]) / self.mu_star[j] * waited)

    def _advance(self):
        cost = sum(self.e_min[j] / self.mu_star[j] for j in self.queue) + \
            sum(self.energy[j] / self.mu_star[j] for j in self.running)
        self.t += 1
        still = []
        for j in self.running:
            k = self.machine[j]
            if self.start[j] + self.jobs.d[j, k] <= self.t:
                self.finish[j] = self.t
                self.free[k] += self.jobs.n[j]
            else:
                still.append(j)
        self.running = still
        self._arrive()
        return -float(cost)

    # ----------------------------------------------------------- outcomes
    def edp(self) -> np.ndarray:
        """Each job's ``E_j * D_j / mu*_j``.

        After a truncated episode a job still running counts with its energy and
        its actual end, one still waiting (or not yet arrived) with its least
        expected energy as if it ended now: lower bounds of what it would cost.
        """
        return episode_edp(self.jobs.arrival, self.jobs.d, self.mu_star, self.e_min,
                           self.start, self.finish, self.machine, self.energy, self.t)

    def action_mask(self) -> np.ndarray:
        """Which actions can be carried out now, shape (n_actions,): the (slot, machine) pairs
        whose slot holds a job that fits the machine, and "wait" (always)."""
        c = self.cfg
        m = np.zeros(c.n_actions, dtype=bool)
        m[-1] = True
        for slot, j in enumerate(self.queue[: c.Q]):
            for k in range(c.K):
                if self.jobs.n[j] <= self.free[k]:
                    m[slot * c.K + k] = True
        return m

    def _info(self):
        info = {"t": self.t, "queued": len(self.queue), "running": len(self.running)}
        if self.mask:
            info["action_mask"] = self.action_mask()
        return info

    def _obs(self):
        c = self.cfg
        img = np.zeros((c.H, c.width), dtype=np.uint8)
        col = np.zeros(c.K, dtype=np.int64)
        for j in sorted(self.running, key=lambda j: (self.start[j], j)):
            k = self.machine[j]
            left = int(np.ceil(self.start[j] + self.jobs.mu[j, k] - self.t))
            rows = min(c.H, max(1, left))
            lo = k * c.N + col[k]
            img[:rows, lo:lo + self.jobs.n[j]] = 1
            col[k] += self.jobs.n[j]
        base = c.K * c.N
        for i, j in enumerate(self.queue[: c.Q]):
            for k in range(c.K):
                lo = base + (i * c.K + k) * c.N
                img[: min(c.H, int(np.ceil(self.jobs.mu[j, k]))), lo:lo + self.jobs.n[j]] = 1
        base += c.Q * c.K * c.N
        backlog = max(0, len(self.queue) - c.Q)
        nb = -(-c.B // c.H)
        cells = np.zeros(nb * c.H, dtype=np.uint8)
        cells[:backlog] = 1
        img[:, base:base + nb] = cells.reshape(nb, c.H).T
        img[: int(round(c.H * min(1.0, self.t / c.t_arrive))), -1] = 1
        return img


def job_costs(jobs: JobSequence, energy) -> tuple[np.ndarray, np.ndarray]:
    """Per job ``(mu*, Emin)``: its shortest expected duration over the machines and its least
    expected energy per unit of ``mu*``."""
    if not len(jobs):
        return np.zeros(0), np.zeros(0)
    mu_star = jobs.mu.min(axis=1)
    e = np.asarray(energy)
    e_min = (jobs.n[:, None] * e[None, :] * jobs.mu).min(axis=1) / np.maximum(mu_star, 1e-12)
    return mu_star, e_min


def episode_edp(arrival, d, mu_star, e_min, start, finish, machine, energy, t) -> np.ndarray:
    """Each job's ``E_j * D_j / mu*_j`` from an episode's state at time ``t`` (see
    :meth:`DeepEASEnv.edp` for jobs not finished)."""
    J = len(arrival)
    if not J:
        return np.zeros(0)
    end = finish.astype(float)
    energy = energy.copy()
    run = finish < 0
    started = run & (start >= 0)
    end[started] = start[started] + d[started, machine[started]]
    waiting = run & (start < 0)
    end[waiting] = np.maximum(t, arrival[waiting]) + mu_star[waiting]
    energy[waiting] = e_min[waiting]
    return energy * (end - arrival) / mu_star


def register() -> None:
    """Register :data:`ENV_ID` with Gymnasium (``gymnasium.make("moga/DeepEAS-v0")``)."""
    if ENV_ID not in gym.registry:
        gym.register(id=ENV_ID, entry_point="moga.rl.env:DeepEASEnv")
