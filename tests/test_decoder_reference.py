"""The federated kernel against the plain-Python reference in tests/naive.py."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import instances
from hypothesis import given, settings
from hypothesis import strategies as st
from naive import naive_decode

import moga


def _naive(js, fed, order, bl, model):
    return naive_decode(js.release, js.tasks, js.runtime, js.sigma, js.bw, fed.nodes, fed.speed,
                        fed.power_busy, fed.power_idle, fed.link, order, bl, model)


def _assert_match(s, ref):
    np.testing.assert_array_equal(s.alloc, np.array(ref["alloc"]).reshape(s.alloc.shape))
    np.testing.assert_allclose(s.start, ref["start"], rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(s.finish, ref["finish"], rtol=1e-9, atol=1e-9)
    for key in ("makespan", "energy", "flowtime"):
        assert getattr(s, key) == pytest.approx(ref[key], rel=1e-9, abs=1e-9), key
    assert s.n_relaxed == ref["n_relaxed"]
    assert s.n_coalloc == ref["n_coalloc"]


@settings(max_examples=200)
@given(inst=instances(), model=st.sampled_from(["fluid", "at_start"]))
def test_kernel_matches_reference(inst, model):
    js, fed, order, bl = inst
    _assert_match(moga.evaluate(js, fed, order, bl, model=model), _naive(js, fed, order, bl, model))


@settings(max_examples=25)
@given(inst=instances(max_jobs=40, max_clusters=4, max_nodes=24),
       model=st.sampled_from(["fluid", "at_start"]))
def test_kernel_matches_reference_larger(inst, model):
    js, fed, order, bl = inst
    _assert_match(moga.evaluate(js, fed, order, bl, model=model), _naive(js, fed, order, bl, model))


@pytest.mark.parametrize("model", ["fluid", "at_start"])
def test_kernel_matches_reference_on_trace(default_trace, default_fed, model):
    js = default_trace.jobset(start=500, n_jobs=150, federation=default_fed, seed=3)
    rng = np.random.default_rng(7)
    for _ in range(3):
        order = rng.permutation(len(js))
        bl = rng.choice([0.0, 0.5, 1.0], (len(js), default_fed.n_clusters), p=[0.6, 0.3, 0.1])
        _assert_match(moga.evaluate(js, default_fed, order, bl, model=model),
                      _naive(js, default_fed, order, bl, model))


@settings(max_examples=30)
@given(inst=instances(), model=st.sampled_from(["fluid", "at_start"]),
       pop=st.integers(1, 5), seed=st.integers(0, 2**31))
def test_batch_equals_single_decodes(inst, model, pop, seed):
    js, fed, _, _ = inst
    rng = np.random.default_rng(seed)
    J, K = len(js), fed.n_clusters
    orders = np.array([rng.permutation(J) for _ in range(pop)])
    bls = rng.uniform(0, 1, (pop, J, K)) * (rng.uniform(size=(pop, J, K)) < 0.5)
    b = moga.evaluate_batch(js, fed, orders, bls, model=model)
    for p in range(pop):
        s = moga.evaluate(js, fed, orders[p], bls[p], model=model)
        assert (b.makespan[p], b.energy[p], b.flowtime[p]) == (s.makespan, s.energy, s.flowtime)
        assert (b.n_relaxed[p], b.n_coalloc[p]) == (s.n_relaxed, s.n_coalloc)


def _batch_in_child(js, fed, orders, bls, queue):
    queue.put(moga.evaluate_batch(js, fed, orders, bls).makespan)


def test_batch_threads_give_the_same_objectives_whatever_their_number(default_fed,
                                                                     monkeypatch):
    import multiprocessing

    import numba

    from decoders import federated

    monkeypatch.setattr(federated, "THREAD_MIN_SLOTS", 0)  # threads even for a small batch

    js = moga.load_default().jobset(n_jobs=80, federation=default_fed)
    rng = np.random.default_rng(5)
    orders = np.array([rng.permutation(80) for _ in range(7)])
    bls = rng.uniform(0, 0.6, (7, 80, 4))
    ref = moga.evaluate_batch(js, default_fed, orders, bls)
    n = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = moga.evaluate_batch(js, default_fed, orders, bls)
    finally:
        numba.set_num_threads(n)
    np.testing.assert_array_equal(one.makespan, ref.makespan)
    np.testing.assert_array_equal(one.energy, ref.energy)
    if "fork" in multiprocessing.get_all_start_methods():
        # A forked child has none of the parent's decode threads: it makes its own.
        ctx = multiprocessing.get_context("fork")
        q = ctx.Queue()
        p = ctx.Process(target=_batch_in_child, args=(js, default_fed, orders, bls, q))
        p.start()
        got = q.get(timeout=120)
        p.join(timeout=60)
        np.testing.assert_array_equal(got, ref.makespan)


def test_fluid_jobs_finishing_before_a_release_re_rate_at_their_own_finish(default_fed):
    # Regression: the in-order kernel once jumped to the next job's release time first and
    # re-rated the co-allocated jobs there, not at the finishes before it (docs/design.md §5).
    fed = default_fed
    js = moga.load_default().jobset(start=2500, n_jobs=300, federation=fed, batch=False)
    rng = np.random.default_rng(3)
    J = len(js)
    order = rng.permutation(J)
    bl = rng.uniform(0, 1, (J, 4)) * (rng.uniform(size=(J, 4)) < 0.4)
    s = moga.evaluate(js, fed, order, bl, model="fluid", rule="greenest")
    ref = naive_decode(js.release, js.tasks, js.runtime, js.sigma, js.bw, fed.nodes, fed.speed,
                       fed.power_busy, fed.power_idle, fed.link, order, bl, "fluid", "greenest")
    np.testing.assert_allclose(s.finish, ref["finish"], rtol=1e-9, atol=1e-6)
