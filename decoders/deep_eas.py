"""Many Deep-EAS episodes stepped at once (docs/design.md §13): the environment's dynamics
and observation image as Numba kernels over padded per-episode arrays.

The reference is the Gymnasium environment ``moga.rl.env.DeepEASEnv``; the
tests check that these kernels give the same observations, rewards,
terminations and outcomes on random actions. Training steps hundreds of
episodes in lockstep with one batched forward pass of the policy per tick,
which is where this pays: the Python environment spends most of a step
drawing its image.

Episode ``i`` holds ``nj[i]`` jobs in the first columns of the job arrays;
its state is one row of each state array (:class:`BatchState`).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

__all__ = ["BatchJobs", "BatchState", "new_state", "reset", "step", "render", "masks"]


class BatchJobs(NamedTuple):
    """Jobs of M episodes, padded to J columns: ``arrival``, ``n`` (M, J) int64; ``mu``,
    ``d`` (M, J, K) float64 (expected and actual durations); ``nj`` (M,) int64; ``mu_star``
    and ``e_min`` (M, J) float64 (shortest expected duration, least expected energy)."""

    arrival: np.ndarray
    n: np.ndarray
    mu: np.ndarray
    d: np.ndarray
    nj: np.ndarray
    mu_star: np.ndarray
    e_min: np.ndarray


class BatchState(NamedTuple):
    """Per episode: time ``t``, next arrival ``nxt``, the queue (``queue``, ``qlen``; up to
    ``Q + B`` jobs), the running jobs (``run``, ``rlen``), free processors per machine
    (``free``), and per job its ``machine``, ``start``, ``finish`` (-1: not yet) and
    ``energy``."""

    t: np.ndarray
    nxt: np.ndarray
    queue: np.ndarray
    qlen: np.ndarray
    run: np.ndarray
    rlen: np.ndarray
    free: np.ndarray
    machine: np.ndarray
    start: np.ndarray
    finish: np.ndarray
    energy: np.ndarray


def new_state(M: int, J: int, K: int, QB: int) -> BatchState:
    """Uninitialised state arrays for ``M`` episodes of at most ``J`` jobs (fill with
    :func:`reset`)."""
    i8 = np.int64
    return BatchState(np.zeros(M, i8), np.zeros(M, i8), np.zeros((M, max(QB, 1)), i8),
                      np.zeros(M, i8), np.zeros((M, max(J, 1)), i8), np.zeros(M, i8),
                      np.zeros((M, K), i8), np.full((M, J), -1, i8), np.full((M, J), -1, i8),
                      np.full((M, J), -1, i8), np.zeros((M, J)))


@njit(cache=True, error_model="numpy")
def _arrive(i, jobs, st, QB):
    while st.nxt[i] < jobs.nj[i] and jobs.arrival[i, st.nxt[i]] <= st.t[i]:
        if st.qlen[i] < QB:
            st.queue[i, st.qlen[i]] = st.nxt[i]
            st.qlen[i] += 1
        st.nxt[i] += 1


@njit(cache=True, error_model="numpy")
def reset(jobs, st, N, QB):
    """Every episode at time 0: nothing running, the arrivals of step 0 queued."""
    M = st.t.shape[0]
    for i in range(M):
        st.t[i] = 0
        st.nxt[i] = 0
        st.qlen[i] = 0
        st.rlen[i] = 0
        st.free[i, :] = N
        st.machine[i, :] = -1
        st.start[i, :] = -1
        st.finish[i, :] = -1
        st.energy[i, :] = 0.0
        _arrive(i, jobs, st, QB)


@njit(cache=True, error_model="numpy")
def step(idx, actions, jobs, st, energy, Q, QB, max_steps, reward, terminated, truncated):
    """Apply ``actions[a]`` to episode ``idx[a]`` for every ``a``; write its reward and
    whether it terminated or was truncated."""
    K = energy.shape[0]
    for a in range(idx.shape[0]):
        i = idx[a]
        act = actions[a]
        slot, k = act // K, act % K
        if act < Q * K and slot < min(st.qlen[i], Q) and \
                jobs.n[i, st.queue[i, slot]] <= st.free[i, k]:
            j = st.queue[i, slot]
            for s in range(slot, st.qlen[i] - 1):
                st.queue[i, s] = st.queue[i, s + 1]
            st.qlen[i] -= 1
            st.machine[i, j] = k
            st.start[i, j] = st.t[i]
            st.energy[i, j] = jobs.n[i, j] * energy[k] * jobs.d[i, j, k] / jobs.mu_star[i, j]
            st.free[i, k] -= jobs.n[i, j]
            st.run[i, st.rlen[i]] = j
            st.rlen[i] += 1
            waited = st.t[i] - jobs.arrival[i, j]
            reward[a] = -((st.energy[i, j] - jobs.e_min[i, j]) / jobs.mu_star[i, j] * waited)
        else:
            wait_cost = 0.0
            for q in range(st.qlen[i]):
                j = st.queue[i, q]
                wait_cost += jobs.e_min[i, j] / jobs.mu_star[i, j]
            run_cost = 0.0
            for r in range(st.rlen[i]):
                j = st.run[i, r]
                run_cost += st.energy[i, j] / jobs.mu_star[i, j]
            st.t[i] += 1
            kept = 0
            for r in range(st.rlen[i]):
                j = st.run[i, r]
                m = st.machine[i, j]
                if st.start[i, j] + jobs.d[i, j, m] <= st.t[i]:
                    st.finish[i, j] = st.t[i]
                    st.free[i, m] += jobs.n[i, j]
                else:
                    st.run[i, kept] = j
                    kept += 1
            st.rlen[i] = kept
            _arrive(i, jobs, st, QB)
            reward[a] = -(wait_cost + run_cost)
        done = st.nxt[i] >= jobs.nj[i] and st.qlen[i] == 0 and st.rlen[i] == 0
        terminated[a] = done
        truncated[a] = not done and st.t[i] >= max_steps


@njit(cache=True, error_model="numpy")
def render(idx, jobs, st, N, H, Q, B, t_arrive, img):
    """The observation image of episode ``idx[a]`` into ``img[a]`` (H x width, uint8)."""
    K = st.free.shape[1]
    W = img.shape[2]
    nb = -(-B // H)
    order = np.empty(st.run.shape[1], np.int64)
    for a in range(idx.shape[0]):
        i = idx[a]
        img[a, :, :] = 0
        # Running jobs by (start, index), each machine's columns filled from the left.
        nr = st.rlen[i]
        for r in range(nr):
            j = st.run[i, r]
            p = r
            while p > 0 and (st.start[i, order[p - 1]] > st.start[i, j] or (
                    st.start[i, order[p - 1]] == st.start[i, j] and order[p - 1] > j)):
                order[p] = order[p - 1]
                p -= 1
            order[p] = j
        col = np.zeros(K, np.int64)
        for r in range(nr):
            j = order[r]
            k = st.machine[i, j]
            left = int(math.ceil(st.start[i, j] + jobs.mu[i, j, k] - st.t[i]))
            rows = min(H, max(1, left))
            lo = k * N + col[k]
            img[a, :rows, lo:lo + jobs.n[i, j]] = 1
            col[k] += jobs.n[i, j]
        base = K * N
        for s in range(min(st.qlen[i], Q)):
            j = st.queue[i, s]
            for k in range(K):
                lo = base + (s * K + k) * N
                rows = min(H, int(math.ceil(jobs.mu[i, j, k])))
                img[a, :rows, lo:lo + jobs.n[i, j]] = 1
        base += Q * K * N
        backlog = min(max(0, st.qlen[i] - Q), nb * H)
        for c in range(backlog):
            img[a, c % H, base + c // H] = 1
        rows = int(np.rint(H * min(1.0, st.t[i] / t_arrive)))
        img[a, :rows, W - 1] = 1


@njit(cache=True, error_model="numpy")
def masks(idx, jobs, st, Q, out):
    """Which actions episode ``idx[a]`` can carry out now, into ``out[a]`` (bool, Q K + 1):
    the (slot, machine) pairs whose slot holds a job that fits, and "wait"."""
    K = st.free.shape[1]
    for a in range(idx.shape[0]):
        i = idx[a]
        out[a, :] = False
        out[a, Q * K] = True
        for s in range(min(st.qlen[i], Q)):
            j = st.queue[i, s]
            for k in range(K):
                if jobs.n[i, j] <= st.free[i, k]:
                    out[a, s * K + k] = True
