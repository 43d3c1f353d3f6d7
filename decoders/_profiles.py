"""Availability profiles and value functions, shared by the value decoders (Numba, inlined).

A profile is a step function of free nodes in one cluster: breakpoints
``times[:m]`` (``times[0] = 0``) and ``free[i]``, the free nodes on
``[times[i], times[i+1])``; the last step lasts forever.

The value decoders' bundles (named tuples of arrays; nothing is copied),
beside the federated core's ``Jobs`` and ``Platform``
(:mod:`decoders._federated_core`), under names of their own:

``jobs`` (:data:`ValueJobs`)
    Per job, shape (J,): ``release``, ``tasks``, ``runtime`` (s on a speed-1.0
    node) and the value function ``v_start``, ``v_final``, ``soft``, ``hard``.
``plat`` (:data:`ProfilePlatform`)
    Per cluster, shape (K,): ``nodes`` and ``speed``.
``prof`` (:data:`Profiles`)
    The availability profiles, one per cluster: breakpoints ``times`` (K, n),
    free nodes ``free`` on each step (K, n), and the step counts ``m`` (K,).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

ValueJobs = namedtuple("ValueJobs", "release tasks runtime v_start v_final soft hard")
ProfilePlatform = namedtuple("ProfilePlatform", "nodes speed")
Profiles = namedtuple("Profiles", "times free m")


def new_profiles(K, n):
    """Empty profiles of K clusters with room for ``n`` breakpoints each."""
    return Profiles(times=np.empty((K, n)), free=np.empty((K, n), dtype=np.int64),
                    m=np.empty(K, dtype=np.int64))


@njit(cache=True, forceinline=True, error_model="numpy", _nrt=False)
def job_value(f, v_start, v_final, soft, hard):
    """Value of completing at ``f``: constant, then linear decay, then 0 after ``hard``."""
    if f <= soft:
        return v_start
    if f <= hard:
        if hard <= soft:
            return v_final
        return v_start + (v_final - v_start) * (f - soft) / (hard - soft)
    return 0.0


@njit(cache=True, forceinline=True, error_model="numpy", _nrt=False)
def earliest_fit(times, free, m, t0, need, dur):
    """Earliest start >= ``t0`` with ``need`` free nodes throughout ``[s, s + dur)``.

    ``times[:m]`` are the profile's breakpoints (``times[0] = 0``), ``free[i]``
    the free nodes on ``[times[i], times[i+1])``, the last step lasting forever.
    """
    # The step containing t0.
    i = 0
    while i + 1 < m and times[i + 1] <= t0:
        i += 1
    s = t0
    while True:
        # Extend from step i while the nodes suffice, up to s + dur.
        ok = True
        q = i
        while True:
            if free[q] < need:
                ok = False
                break
            if q + 1 >= m or times[q + 1] >= s + dur:
                break
            q += 1
        if ok:
            return s
        # Restart after the blocking step q.
        i = q + 1
        s = times[i]


@njit(cache=True, forceinline=True, error_model="numpy", _nrt=False)
def split_at(times, free, m, t):
    """Make ``t`` a breakpoint; returns ``(index of the step starting at t, new m)``."""
    i = 0
    while i + 1 < m and times[i + 1] <= t:
        i += 1
    if times[i] == t:
        return i, m
    for q in range(m, i + 1, -1):
        times[q] = times[q - 1]
        free[q] = free[q - 1]
    times[i + 1] = t
    free[i + 1] = free[i]
    return i + 1, m + 1




@njit(cache=True, forceinline=True, error_model="numpy", _nrt=False)
def trim_before(times, free, m, t):
    """Drop the steps that end at or before ``t`` (nothing can be placed there any more).

    The step containing ``t`` becomes the first one. Returns the new length.
    """
    i = 0
    while i + 1 < m and times[i + 1] <= t:
        i += 1
    if i == 0:
        return m
    for q in range(i, m):
        times[q - i] = times[q]
        free[q - i] = free[q]
    return m - i


@njit(cache=True, forceinline=True, error_model="numpy", _nrt=False)
def occupy(times, free, m, s, f, need):
    """Take ``need`` nodes of a profile over ``[s, f)``; returns the new length."""
    a, mk = split_at(times, free, m, s)
    b, mk = split_at(times, free, mk, f)
    for q in range(a, b):
        free[q] -= need
    return mk


@njit(cache=True, forceinline=True, error_model="numpy", _nrt=False)
def init_profiles(times, free, m, nodes):
    """Every cluster's profile: one step from time 0 with all its nodes free."""
    for k in range(nodes.shape[0]):
        times[k, 0] = 0.0
        free[k, 0] = nodes[k]
        m[k] = 1
