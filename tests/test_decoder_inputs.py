"""The decoder wrappers reject bad input with clear errors."""

from __future__ import annotations

import dataclasses
import os

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import decoders
import moga
from decoders import decode, decode_batch
from moga.value import attach_values, evaluate_value


@pytest.fixture()
def small():
    fed = moga.Federation(names=["a", "b"], nodes=[2, 3], speed=[1.0, 2.0], power_busy=[3, 9],
                          power_idle=[1, 1], link=[10, 10])
    js = moga.JobSet.from_arrays([0.0, 0.0, 1.0], [1, 5, 2], [1.0, 2.0, 3.0])
    return js, fed


def test_wrong_chromosome_length(small):
    js, fed = small
    with pytest.raises(ValueError, match=r"order must have shape \(3,\).*got shape \(2,\)"):
        moga.evaluate(js, fed, [0, 1])
    with pytest.raises(ValueError, match=r"blacklist must have shape \(3, 2\)"):
        moga.evaluate(js, fed, [0, 1, 2], np.zeros((3, 3)))


def test_a_population_is_not_decoded_as_its_first_row(small):
    js, fed = small
    two = np.array([[0, 1, 2], [2, 1, 0]])
    with pytest.raises(ValueError, match=r"order must have shape \(3,\).*got shape \(2, 3\)"):
        moga.evaluate(js, fed, two)
    with pytest.raises(ValueError, match="decode_batch"):
        decoders.decode(*js.arrays(), fed.nodes, fed.speed, fed.power_busy, fed.power_idle,
                        fed.link, two, np.zeros((3, 2)))
    vjs = attach_values(js)
    with pytest.raises(ValueError, match=r"order must have shape \(3,\)"):
        evaluate_value(vjs, fed, two)


def test_not_a_permutation(small):
    js, fed = small
    with pytest.raises(ValueError, match="not a permutation"):
        moga.evaluate(js, fed, [0, 0, 2])
    with pytest.raises(ValueError, match="integer"):
        moga.evaluate(js, fed, [0.5, 1, 2])


def test_blacklist_out_of_range(small):
    js, fed = small
    bl = np.zeros((3, 2))
    bl[1, 1] = 1.5
    with pytest.raises(ValueError, match=r"blacklist entry \(job 1, cluster 1\) = 1.5"):
        moga.evaluate(js, fed, None, bl)
    bl[1, 1] = np.nan
    with pytest.raises(ValueError, match="not in \\[0, 1\\]"):
        moga.evaluate(js, fed, None, bl)
    bl[0, 1] = -0.25  # the first bad entry (job-major) is the one named
    with pytest.raises(ValueError, match=r"\(job 0, cluster 1\) = -0.25 is not in"):
        moga.evaluate(js, fed, None, bl)
    with pytest.raises(ValueError, match=r"blacklist #1 entry \(job 0, cluster 1\) = -0.25 is"):
        moga.evaluate_batch(js, fed, np.array([[0, 1, 2], [2, 1, 0]]),
                            np.stack([np.zeros((3, 2)), bl]))


def test_job_wider_than_federation():
    fed = moga.Federation(names=["a"], nodes=[2], speed=[1.0], power_busy=[3], power_idle=[1],
                          link=[10])
    js = moga.JobSet.from_arrays([0.0, 0.0], [1, 3], [1.0, 2.0])
    with pytest.raises(ValueError, match="job 1 needs 3 tasks but the federation has only 2"):
        moga.evaluate(js, fed)


def test_unknown_model(small):
    js, fed = small
    with pytest.raises(ValueError, match="unknown execution model 'exact'"):
        moga.evaluate(js, fed, model="exact")


def test_plain_array_wrapper_validates_platform():
    args = dict(release=[0.0], tasks=[1], runtime=[1.0], sigma=[0.0], bw=[0.0], nodes=[1],
                speed=[1.0], power_busy=[2.0], power_idle=[1.0], link=[1.0], order=[0],
                blacklist=[[0.0]])
    assert decode(**args).makespan == 1.0
    with pytest.raises(ValueError, match=r"link\[0\] must be > 0"):
        decode(**{**args, "link": [-1.0]})
    with pytest.raises(ValueError, match=r"power_busy \(0.5\) < power_idle"):
        decode(**{**args, "power_busy": [0.5]})
    with pytest.raises(ValueError, match=r"runtime\[0\] must be > 0"):
        decode(**{**args, "runtime": [0.0]})


def test_batch_shapes(small):
    js, fed = small
    arrays = (*js.arrays(), fed.nodes, fed.speed, fed.power_busy, fed.power_idle, fed.link)
    with pytest.raises(ValueError, match="blacklists must have shape"):
        decode_batch(*arrays, np.array([[0, 1, 2]]), np.zeros((2, 3, 2)))
    with pytest.raises(ValueError, match="order #1 is not a permutation"):
        decode_batch(*arrays, np.array([[0, 1, 2], [1, 1, 2]]), np.zeros((2, 3, 2)))
    out = decode_batch(*arrays, np.array([[0, 1, 2], [2, 1, 0]]), np.zeros((2, 3, 2)))
    assert out.makespan.shape == (2,)


def test_empty_blacklist_evaluate_defaults(small):
    js, fed = small
    s = moga.evaluate(js, fed)
    np.testing.assert_array_equal(s.order, [0, 1, 2])
    assert s.blacklist.shape == (3, 2) and not s.blacklist.any()
    assert s.summary()["n_jobs"] == 3


def test_a_stale_kernel_cache_is_dropped(tmp_path, monkeypatch):
    from decoders import _cache

    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    dirs = [d for d in _cache._cache_dirs() if str(d).startswith(str(tmp_path))]
    assert dirs
    for d in dirs:
        d.mkdir(parents=True, exist_ok=True)
        (d / "federated._decode_in_order-1.py311.nbi").write_text("old")
        (d / _cache._STAMP).write_text("another source\n")
    assert _cache.drop_stale_cache() >= len(dirs)
    for d in dirs:
        assert not list(d.glob("*.nbi"))
        assert (d / _cache._STAMP).read_text().strip() == _cache.source_digest()
    assert _cache.drop_stale_cache() == 0  # up to date: nothing more to drop


def test_a_fresh_cache_folder_is_stamped_so_the_next_process_keeps_its_kernels(tmp_path,
                                                                                 monkeypatch):
    from decoders import _cache

    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "fresh"))
    dirs = [d for d in _cache._cache_dirs() if str(d).startswith(str(tmp_path))]
    assert dirs and not any(d.exists() for d in dirs)
    _cache.drop_stale_cache()  # the first process: no cache folder yet
    for d in dirs:
        assert (d / _cache._STAMP).read_text().strip() == _cache.source_digest()
        (d / "federated._decode_in_order-1.py311.nbi").write_text("compiled by the first process")
    assert _cache.drop_stale_cache() == 0  # the second process keeps them
    assert all(list(d.glob("*.nbi")) for d in dirs)


def test_is_cached_looks_where_numba_loads_from(tmp_path):
    """With NUMBA_CACHE_DIR set, Numba reads only that folder: kernels cached beside the
    sources (an editable install) do not count, or the compile notice would stay silent."""
    import subprocess
    import sys
    from pathlib import Path

    code = ("import sys; from pathlib import Path; from decoders import _cache\n"
            "d = _cache._kernel_cache_dir('federated', '_decode_in_order')\n"
            "print(d); print(_cache.is_cached('federated', '_decode_in_order'))\n"
            "d.mkdir(parents=True, exist_ok=True)\n"
            "(d / 'federated._decode_in_order-1.py311.nbi').write_text('index')\n"
            "print(_cache.is_cached('federated', '_decode_in_order'))\n"
            "print(_cache._kernel_cache_dir('loop', '_simulate'))\n")
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    # An index beside the sources, as an editable install leaves it (a line number that
    # no kernel has, so that no process reads it), where the folder is writable.
    beside = Path(decoders.__file__).parent / "__pycache__" / "federated._decode_in_order-1.py311.nbi"
    try:
        beside.parent.mkdir(exist_ok=True)
        beside.write_text("index")
    except OSError:
        beside = None
    try:
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, check=True).stdout.split("\n")
    finally:
        if beside is not None:
            beside.unlink(missing_ok=True)
    assert out[0].startswith(str(tmp_path / "cache"))
    assert out[1:3] == ["False", "True"]
    assert out[3].startswith(str(tmp_path / "cache"))  # a kernel of a subpackage


def _naive_order_problem(row, J):
    """The plain reading of an order row: None when it is a permutation of range(J), else
    what is wrong with it ("integer" or "permutation")."""
    import math

    for v in row:
        if not math.isfinite(v) or v != int(v):
            return "integer"
    return None if sorted(int(v) for v in row) == list(range(J)) else "permutation"


@given(seed=st.integers(0, 2**32 - 1), J=st.integers(1, 12), P=st.integers(1, 5),
       flaw=st.sampled_from(["none", "duplicate", "range", "fraction", "nan", "inf"]),
       as_int=st.booleans())
def test_order_check_equals_its_plain_python_twin(seed, J, P, flaw, as_int):
    from decoders._validate import check_orders

    rng = np.random.default_rng(seed)
    orders = np.array([rng.permutation(J) for _ in range(P)], dtype=float)
    p, i = rng.integers(P), rng.integers(J)
    orders[p, i] = {"none": orders[p, i], "duplicate": orders[p, (i + 1) % J] if J > 1 else -1,
                    "range": rng.choice([-1, J, J + 7]), "fraction": orders[p, i] + 0.5,
                    "nan": np.nan, "inf": -np.inf}[flaw]
    problems = [_naive_order_problem(row, J) for row in orders]
    if as_int and flaw not in ("fraction", "nan", "inf"):
        orders = orders.astype(np.int64)
    bad = [q for q, w in enumerate(problems) if w is not None]
    if not bad:
        np.testing.assert_array_equal(check_orders(orders, J), orders.astype(np.int64))
        return
    message = ("order must hold integer job positions" if problems[bad[0]] == "integer"
               else f"order{'' if P == 1 else f' #{bad[0]}'} is not a permutation")
    with pytest.raises(ValueError, match=message):
        check_orders(orders, J)


def test_decode_takes_a_jobset_and_a_federation_as_the_arrays_give():
    rng = np.random.default_rng(3)
    js = moga.JobSet.from_arrays(np.sort(rng.uniform(0, 500, 60)), rng.integers(1, 6, 60),
                                 rng.uniform(10, 300, 60))
    fed = moga.Federation.preset("default")
    rng = np.random.default_rng(5)
    order = rng.permutation(len(js))
    bl = rng.choice([0.0, 0.5, 1.0], size=(len(js), fed.n_clusters))
    for backfill in ("none", "easy"):
        a = decode(js, fed, order, bl, backfill=backfill)
        b = decoders.decode_arrays(*js.arrays(), fed.nodes, fed.speed, fed.power_busy,
                                   fed.power_idle, fed.link, order, bl, backfill=backfill)
        s = moga.evaluate(js, fed, order, bl, backfill=backfill)
        for x, y in ((a.start, b.start), (a.finish, b.finish), (a.alloc, b.alloc),
                     (a.start, s.start), (a.finish, s.finish)):
            np.testing.assert_array_equal(x, y)
    # defaults: the submit order and no blacklist
    d = decode(js, fed)
    e = decode(js, fed, np.arange(len(js)), np.zeros((len(js), fed.n_clusters)))
    np.testing.assert_array_equal(d.finish, e.finish)


def test_decode_of_a_jobset_reads_its_caps_and_requests():
    rng = np.random.default_rng(8)
    J = 40
    js = moga.JobSet.from_arrays(np.sort(rng.uniform(0, 200, J)), rng.integers(1, 4, J),
                                 rng.uniform(10, 100, J))
    js = dataclasses.replace(js, requested=js.runtime * rng.uniform(1.0, 3.0, J))
    fed = moga.Federation.preset("default")
    capped = fed.with_cap(0.6 * fed.peak_power)
    order = rng.permutation(J)
    bl = np.zeros((J, fed.n_clusters))
    for f in (fed, capped):
        for est in ("exact", "requested"):
            a = decode(js, f, order, bl, backfill="easy", estimates=est)
            s = moga.evaluate(js, f, order, bl, backfill="easy", estimates=est)
            np.testing.assert_array_equal(a.start, s.start)
    kw = dict(power_cap=capped.power_cap, estimate=js.requested, backfill="easy")
    b = decoders.decode_arrays(*js.arrays(), fed.nodes, fed.speed, fed.power_busy,
                               fed.power_idle, fed.link, order, bl, **kw)
    a = decode(js, capped, order, bl, backfill="easy", estimates="requested")
    np.testing.assert_array_equal(a.start, b.start)


def test_decode_of_a_jobset_refuses_array_options(small):
    js, fed = small
    with pytest.raises(TypeError, match="power_cap.*from the job-set or the federation"):
        decode(js, fed, power_cap=10.0)
    with pytest.raises(ValueError, match="estimates must be 'exact' or 'requested'"):
        decode(js, fed, estimates="walltime")

@pytest.mark.parametrize("seed", [0, 1, 2])
def test_batch_decoder_set_up_once_decodes_as_decode_batch(seed):
    """One BatchDecoder, several populations: bit for bit what decode_batch gives each."""
    from decoders.federated import BatchDecoder

    rng = np.random.default_rng(seed)
    fed = moga.Federation(names=["a", "b", "c"], nodes=[4, 6, 8], speed=[1.6, 1.2, 0.8],
                          power_busy=[290.0, 120.0, 40.0], power_idle=[10.0, 10.0, 10.0],
                          link=[100.0, 100.0, 100.0], power_cap=3000.0)
    J = 15
    js = moga.JobSet.from_arrays(np.sort(rng.uniform(0, 50, J)), rng.integers(1, 10, J),
                                 rng.uniform(5, 60, J), sigma=rng.uniform(0, 0.5, J),
                                 bw=rng.uniform(0, 20, J))
    arrays = (*js.arrays(), fed.nodes, fed.speed, fed.power_busy, fed.power_idle, fed.link)
    opts = {"model": ["fluid", "at_start"][seed % 2], "rule": ["fastest", "greenest",
                                                               "consolidate"][seed],
            "power_cap": fed.power_cap}
    dec = BatchDecoder(*arrays, **opts)
    for P in (1, 7, 40, 1, 7, 40):  # one-thread batches reuse the work arrays of the last one
        orders = np.array([rng.permutation(J) for _ in range(P)])
        bls = rng.random((P, J, 3)) * rng.choice([0.0, 0.7], (P, J, 1))
        a = dec(orders, bls, start_orders=True, starts=True, allocations=True)
        b = decode_batch(*arrays, orders, bls, start_orders=True, starts=True, allocations=True,
                         **opts)
        for x, y in zip(a, b, strict=True):
            np.testing.assert_array_equal(x, y)
    with pytest.raises(ValueError, match=r"blacklists must have shape \(1, 15, 3\)"):
        dec(orders[:1], bls)
    with pytest.raises(ValueError, match="order"):
        dec(np.zeros((1, J), dtype=np.int64), bls[:1])


def test_a_kernel_package_above_drops_its_kernels_when_the_decoders_change(tmp_path,
                                                                           monkeypatch):
    """moga.evolution's kernels inline the decoders' helpers: their cache is stamped with
    the sources of both, so an edit of either drops them (numba/numba#1833)."""
    from pathlib import Path

    import moga.evolution
    from decoders import _cache

    evo = Path(moga.evolution.__file__).parent
    assert _cache.source_digest(evo) not in (_cache.source_digest(), "")
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    (d,) = [d for d in _cache._cache_dirs(evo) if str(d).startswith(str(tmp_path))]
    d.mkdir(parents=True)
    (d / "survival._ranked_fronts-1.py311.nbi").write_text("inlines an old helper")
    (d / _cache._STAMP).write_text(_cache.source_digest() + "\n")  # the decoders' alone
    assert _cache.drop_stale_cache(evo) == 1
    assert (d / _cache._STAMP).read_text().strip() == _cache.source_digest(evo)
    assert _cache.drop_stale_cache(evo) == 0


def test_every_folder_of_cached_kernels_is_stamped():
    """Numba's cache does not see the edits of the helpers a kernel inlines (another file):
    each folder of the project with ``njit(cache=True)`` kernels drops its stale ones on
    import (``decoders`` itself, and the packages above that call its helpers)."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    folders = set()
    for f in (root / "moga").rglob("*.py"):
        for node in ast.walk(ast.parse(f.read_text())):
            if (isinstance(node, ast.Call) and getattr(node.func, "id",
                                                        getattr(node.func, "attr", "")) == "njit"
                    and any(k.arg == "cache" and getattr(k.value, "value", False)
                            for k in node.keywords)):
                folders.add(f.parent)
    assert folders  # the search's kernels
    for folder in folders:
        init = (folder / "__init__.py").read_text()
        assert "drop_stale_cache(Path(__file__).parent)" in init, folder
    assert "drop_stale_cache()" in (root / "decoders" / "__init__.py").read_text()
