"""Many Deep-EAS episodes at once: the training loop's fast environment.

:class:`BatchEnv` steps ``M`` episodes of :class:`~moga.rl.env.DeepEASEnv`'s
cluster in lockstep through the Numba kernels of :mod:`decoders.deep_eas`:
the same dynamics, rewards and observation image (the tests check them
against the Gymnasium environment), without a Python object per episode.
"""

from __future__ import annotations

import numpy as np

from decoders import deep_eas as _k

from .cluster import ClusterConfig
from .env import _check_sequence, episode_edp, job_costs

__all__ = ["BatchEnv"]


class BatchEnv:
    """``M`` episodes of the Deep-EAS cluster, one per job sequence.

    Parameters
    ----------
    config : ClusterConfig
    sequences : list of JobSequence
        Episode ``i`` runs ``sequences[i]`` (the same sequence may appear
        several times, one episode each).

    Use :meth:`reset`, then :meth:`observe`, :meth:`action_masks` and
    :meth:`step` on the indices of the episodes still running.
    """

    def __init__(self, config: ClusterConfig, sequences: list):
        self.cfg = c = ClusterConfig.coerce(config)
        if not sequences:
            raise ValueError("BatchEnv needs at least one job sequence")
        for s in sequences:
            _check_sequence(s, c)
        M, K = len(sequences), c.K
        J = max(1, max(len(s) for s in sequences))
        arrival = np.zeros((M, J), np.int64)
        n = np.ones((M, J), np.int64)
        mu = np.ones((M, J, K))
        d = np.ones((M, J, K))
        nj = np.zeros(M, np.int64)
        mu_star = np.ones((M, J))
        e_min = np.zeros((M, J))
        e = np.asarray(c.energy)
        for i, s in enumerate(sequences):
            m = len(s)
            nj[i] = m
            if not m:
                continue
            arrival[i, :m], n[i, :m], mu[i, :m], d[i, :m] = s.arrival, s.n, s.mu, s.d
            mu_star[i, :m], e_min[i, :m] = job_costs(s, c.energy)
        self.sequences = list(sequences)
        self.jobs = _k.BatchJobs(arrival, n, mu, d, nj, mu_star, e_min)
        self.state = _k.new_state(M, J, K, c.Q + c.B)
        self._energy = e

    def __len__(self) -> int:
        return len(self.sequences)

    def reset(self) -> np.ndarray:
        """Start every episode; returns the indices of those not over at once."""
        c = self.cfg
        _k.reset(self.jobs, self.state, c.N, c.Q + c.B)
        st, jobs = self.state, self.jobs
        done = (st.nxt >= jobs.nj) & (st.qlen == 0) & (st.rlen == 0)
        return np.flatnonzero(~done).astype(np.int64)

    def observe(self, idx) -> np.ndarray:
        """The observation images of episodes ``idx``, shape (len(idx), H, width), uint8."""
        c = self.cfg
        idx = np.ascontiguousarray(idx, dtype=np.int64)
        img = np.empty((idx.size, c.H, c.width), np.uint8)
        _k.render(idx, self.jobs, self.state, c.N, c.H, c.Q, c.B, float(c.t_arrive), img)
        return img

    def action_masks(self, idx) -> np.ndarray:
        """Which actions episodes ``idx`` can carry out now, shape (len(idx), n_actions)."""
        c = self.cfg
        idx = np.ascontiguousarray(idx, dtype=np.int64)
        out = np.empty((idx.size, c.n_actions), np.bool_)
        _k.masks(idx, self.jobs, self.state, c.Q, out)
        return out

    def step(self, idx, actions):
        """Apply ``actions`` (one per episode of ``idx``, integers in [0, n_actions));
        returns ``(reward, terminated, truncated)`` arrays."""
        c = self.cfg
        idx = np.ascontiguousarray(idx, dtype=np.int64)
        actions = np.ascontiguousarray(actions, dtype=np.int64)
        if actions.shape != idx.shape:
            raise ValueError(f"one action per episode: {idx.size} episodes, {actions.shape} "
                             "actions")
        if actions.size and (actions.min() < 0 or actions.max() >= c.n_actions):
            raise ValueError(f"actions must be in [0, {c.n_actions})")
        r = np.empty(idx.size)
        term = np.empty(idx.size, np.bool_)
        trunc = np.empty(idx.size, np.bool_)
        _k.step(idx, actions, self.jobs, self.state, self._energy, c.Q, c.Q + c.B,
                c.max_steps, r, term, trunc)
        return r, term, trunc

    def edp(self, i: int) -> np.ndarray:
        """Episode ``i``'s per-job EDP, as :meth:`DeepEASEnv.edp`."""
        s, st, m = self.sequences[i], self.state, int(self.jobs.nj[i])
        return episode_edp(s.arrival, s.d, self.jobs.mu_star[i, :m], self.jobs.e_min[i, :m],
                           st.start[i, :m], st.finish[i, :m], st.machine[i, :m],
                           st.energy[i, :m], int(st.t[i]))
