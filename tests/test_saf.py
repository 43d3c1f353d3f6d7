"""Smallest area first, a kernel dispatcher (``decoders.federated.dispatch(method="saf")``),
against its plain-Python twin (``naive_saf``) on random instances."""

from __future__ import annotations

import numpy as np
from conftest import instances
from hypothesis import given
from hypothesis import strategies as st
from naive import naive_saf

from decoders._validate import _idle_least_power
from decoders.federated import dispatch


@given(inst=instances(max_jobs=14), rule=st.sampled_from(["fastest", "greenest", "consolidate"]),
       capped=st.booleans(), planned=st.sampled_from(["exact", "requested"]),
       seed=st.integers(0, 2**32 - 1))
def test_saf_equals_its_twin(inst, rule, capped, planned, seed):
    js, fed, _, _ = inst
    rng = np.random.default_rng(seed)
    J, K = len(js), fed.n_clusters
    power, cap = None, None
    if capped:  # per-job power factors and a budget that binds
        power = rng.uniform(0.5, 1.5, J)
        need = _idle_least_power(js.tasks, power, fed.nodes, fed.power_busy, fed.power_idle,
                                 np.full(K + 1, np.inf))
        cap = fed.idle_power + max(float(need.max()), 1.0) * rng.uniform(1.001, 3.0)
    # Planning on requested times: areas from estimates off the run times, ties included.
    est = None if planned == "exact" else js.runtime * rng.choice([0.5, 1.0, 2.0, 4.0], J)
    d = dispatch(*js.arrays(), fed.nodes, fed.speed, fed.power_busy, fed.power_idle, fed.link,
                 method="saf", power=power, power_cap=cap, model="at_start", rule=rule,
                 estimate=est)
    start, finish, alloc = naive_saf(js.release, js.tasks, js.runtime, js.sigma, js.bw,
                                     fed.nodes, fed.speed, fed.power_busy, fed.power_idle,
                                     fed.link, power=power, cap=cap, rule=rule, estimate=est)
    np.testing.assert_allclose(d.start, start, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(d.finish, finish, rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(d.alloc, alloc)


def test_saf_starts_the_smallest_area_first():
    # One node, three jobs at 0: areas 6, 2 (ties with 2 at release 0) and 3; then by area.
    d = dispatch(np.zeros(4), np.ones(4, dtype=np.int64), np.array([6.0, 2.0, 3.0, 2.0]),
                 np.zeros(4), np.zeros(4), np.array([1]), np.ones(1), np.array([2.0]),
                 np.ones(1), np.ones(1), method="saf", model="at_start")
    np.testing.assert_allclose(d.start, [7.0, 0.0, 4.0, 2.0])
