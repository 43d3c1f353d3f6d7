"""The cheap paths of one ``decoders.decode`` call give what the long ones give.

A one-row decode reuses its thread's work arrays (``federated.cached_state``)
and ``prepare`` accepts arrays already valid as given in one jitted pass
(``_validate._valid_as_given``); these check both against the paths they
shortcut, bit for bit and error for error.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import decoders
import moga
from decoders import _validate, federated


@pytest.fixture(scope="module")
def case():
    fed = moga.Federation.preset("default")
    js = moga.load_default().jobset(n_jobs=120, federation=fed, seed=1)
    arrs = (*js.arrays(), fed.nodes, fed.speed, fed.power_busy, fed.power_idle, fed.link)
    return js, fed, arrs


def _calls(js, fed, n=24, seed=3):
    """Decodes and dispatches of every rule, interleaved, as ``(kind, args, options)``."""
    rng = np.random.default_rng(seed)
    J, K = len(js), fed.n_clusters
    idle = float(np.dot(fed.nodes, fed.power_idle))
    options = [{}, {"backfill": "easy"}, {"model": "at_start"},
               {"backfill": "easy", "power_cap": 4 * idle, "estimate": np.asarray(js.runtime) * 2},
               {"rule": "consolidate", "cluster_caps": fed.nodes * fed.power_busy * 0.95}]
    out = []
    for r in range(n):
        if r % 7 >= 5:
            out.append(("dispatch", (), {"method": ("prb", "saf", "easy")[r % 3],
                                         "power_cap": 2 * idle}))
        else:
            bl = rng.random((J, K)) * (rng.random((J, K)) < 0.3)
            out.append(("decode", (rng.permutation(J), bl), options[r % 7]))
    return out


def _run(arrs, calls, fresh=False):
    res = []
    for kind, args, opts in calls:
        if fresh:
            federated._CACHE.last = None
        fn = decoders.decode if kind == "decode" else federated.dispatch
        res.append(fn(*arrs, *args, **opts))
    return res


def _same(a, b):
    for x, y in zip(a, b, strict=True):
        for u, v in zip(x, y, strict=True):
            assert np.array_equal(np.asarray(u), np.asarray(v), equal_nan=True)


def test_reused_work_arrays_decode_as_fresh_ones(case):
    js, fed, arrs = case
    calls = _calls(js, fed)
    _same(_run(arrs, calls), _run(arrs, calls, fresh=True))


def test_decodes_in_threads_are_those_of_one_thread(case):
    js, fed, arrs = case
    calls = _calls(js, fed, n=16, seed=5)
    serial = _run(arrs, calls, fresh=True)
    with ThreadPoolExecutor(4) as pool:
        parts = list(pool.map(lambda c: _run(arrs, [c])[0], calls * 3))
    for i in range(3):
        _same(parts[i * len(calls):(i + 1) * len(calls)], serial)


def test_a_result_is_not_overwritten_by_the_next_decode(case):
    js, fed, arrs = case
    rng = np.random.default_rng(0)
    bl = np.zeros((len(js), fed.n_clusters))
    first = decoders.decode(*arrs, rng.permutation(len(js)), bl)
    kept = [np.copy(a) for a in first[:3]]
    decoders.decode(*arrs, rng.permutation(len(js)), bl)
    for a, b in zip(first[:3], kept, strict=True):
        assert np.array_equal(a, b)


def _outcome(args):
    try:
        out = _validate.prepare(*args)
    except Exception as e:  # noqa: BLE001 - the error itself is what is compared
        return type(e).__name__, str(e)
    return "ok", [(a.dtype.str, a.tobytes()) for a in out], [o is a for o, a in zip(out, args, strict=True)]


def test_the_one_pass_accepts_and_refuses_as_the_checks_do(case, monkeypatch):
    js, fed, arrs = case
    base = [np.array(a) for a in arrs]
    rng = np.random.default_rng(0)
    values = [np.nan, np.inf, -np.inf, 0.0, -0.0, -1.0, 1e-3, 1e-4, 1.0, 1.0000001, 1e7,
              1e7 + 1, 1e9 * 1.01, 1e12, 1e13, 1e3 + 1e-9, 5e-324]
    fast = _validate._valid_as_given
    n_fast = 0
    for _ in range(600):
        args = [a.copy() for a in base]
        for _ in range(rng.integers(0, 3)):
            i = int(rng.integers(10))
            k, v = rng.integers(args[i].shape[0]), values[rng.integers(len(values))]
            if args[i].dtype.kind == "i" and not (np.isfinite(v) and v == int(v)):
                args[i] = args[i].astype(float)
            args[i][k] = v
        if rng.random() < 0.1:
            i = int(rng.integers(10))
            args[i] = args[i][:-1]
        if rng.random() < 0.05:
            args[5][:] = 1  # too few nodes for the widest jobs
        if rng.random() < 0.2:
            for a in args[:rng.integers(11)]:
                a.flags.writeable = False
        n_fast += fast(args)
        got = _outcome(args)
        monkeypatch.setattr(_validate, "_valid_as_given", lambda arrs: False)
        assert got == _outcome(args)
        monkeypatch.setattr(_validate, "_valid_as_given", fast)
    assert 100 < n_fast < 500
