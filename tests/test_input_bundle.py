"""The one input bundle: a job-set and a federation become the kernels' arrays in one place.

``decoders.federated.array_inputs`` (reached from ``inputs``) alone validates the ten job and
cluster arrays and builds the kernels' job and platform bundles; every decode, population
decode, dispatch and the Session start from its bundle, and the Session reads the loop's
state through the steps' accessors only.
"""

from __future__ import annotations

import ast
import types
from pathlib import Path

import numpy as np
import pytest

import decoders
import moga
from decoders import federated, steps
from decoders.federated import CLUSTER_FIELDS, JOB_FIELDS

ROOT = Path(__file__).resolve().parent.parent
#: The kernels' input bundles and the validation of their arrays, and the one function that
#: may build them.
BUILDERS = ("Jobs", "Platform", "prepare")
BUNDLE = "decoders.federated:array_inputs"


def _name(func) -> str:
    return func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")


def _functions(root: Path, tops):
    """``(module, function, node)`` of every function of the packages ``tops`` under ``root``."""
    for top in tops:
        for path in sorted((root / top).rglob("*.py")):
            mod = ".".join(path.relative_to(root).with_suffix("").parts)
            for fn in ast.walk(ast.parse(path.read_text())):
                if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    yield mod, fn.name, fn


def bundle_builders(root: Path = ROOT) -> list[str]:
    """``module:function`` of every function of ``moga/`` and ``decoders/`` that builds the
    kernels' job or platform bundle or validates their arrays."""
    return sorted({f"{mod}:{name}" for mod, name, fn in _functions(root, ("moga", "decoders"))
                   for node in ast.walk(fn)
                   if isinstance(node, ast.Call) and _name(node.func) in BUILDERS})


def model_unpacks(root: Path = ROOT) -> list[str]:
    """``module:function:line`` of every place in ``moga/`` that hands a model's arrays on one
    by one: a starred ``*js.arrays()`` (the job-set's five), or a call or tuple that reads a
    federation's ``power_idle`` and ``link`` together (other than a ``Federation(...)``)."""
    found = set()
    for mod, name, fn in _functions(root, ("moga",)):
        for node in ast.walk(fn):
            if isinstance(node, ast.Call):
                if _name(node.func) == "Federation":
                    continue
                elts = [*node.args, *(k.value for k in node.keywords)]
            elif isinstance(node, ast.Tuple):
                elts = node.elts
            else:
                continue
            attrs = {e.attr for e in elts if isinstance(e, ast.Attribute)}
            starred = any(isinstance(e, ast.Starred) and isinstance(e.value, ast.Call)
                          and _name(e.value.func) == "arrays" for e in elts)
            if starred or {"power_idle", "link"} <= attrs:
                found.add(f"{mod}:{name}:{node.lineno}")
    return sorted(found)


def test_one_function_builds_the_kernels_inputs():
    assert bundle_builders() == [BUNDLE]


def test_no_model_is_unpacked_into_arrays_outside_the_bundle():
    assert model_unpacks() == []


def test_the_one_place_checks_can_fail(tmp_path):
    (tmp_path / "moga").mkdir()
    (tmp_path / "decoders").mkdir()
    (tmp_path / "moga" / "x.py").write_text(
        "def f(js, fed):\n"
        "    return g(*js.arrays(), fed.nodes, fed.speed, fed.power_busy, fed.power_idle,\n"
        "             fed.link)\n\n\n"
        "def h(fed):\n"
        "    return fed.nodes, fed.speed, fed.power_busy, fed.power_idle, fed.link\n")
    (tmp_path / "decoders" / "y.py").write_text(
        "def k(arrs):\n    return Jobs(*arrs), Platform()\n")
    assert model_unpacks(tmp_path) == ["moga.x:f:2", "moga.x:h:7"]
    assert bundle_builders(tmp_path) == ["decoders.y:k"]


def test_the_session_reads_no_private_layout_of_the_kernels():
    """moga/sim imports nothing from a private module of the kernels (``decoders._*``) and
    names no slot index of the loop's scalars (``E_*``)."""
    bad = []
    for path in sorted((ROOT / "moga" / "sim").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("decoders._"):
                bad.append(f"{path.name}: from {node.module}")
            if isinstance(node, ast.Import):
                bad += [f"{path.name}: import {a.name}" for a in node.names
                        if a.name.startswith("decoders._")]
            name = node.id if isinstance(node, ast.Name) else getattr(node, "attr", "")
            if isinstance(name, str) and name.startswith("E_") and name[2:].isupper():
                bad.append(f"{path.name}: {name}")
    assert bad == []


@pytest.fixture()
def pair():
    fed = moga.Federation.preset().with_cap(fraction=0.8)
    js = moga.load_default().jobset(n_jobs=30, federation=fed, batch=False, power="lognormal")
    return js, fed


def _arrays(js, fed):
    return (*js.arrays(), fed.nodes, fed.speed, fed.power_busy, fed.power_idle, fed.link)


def _caps(js, fed):
    return {"power": js.power, "power_cap": fed.power_cap, "cluster_caps": fed.cluster_caps}


def test_the_bundle_is_read_only_and_reads_what_the_models_hold(pair):
    js, fed = pair
    b = decoders.inputs(js, fed, rule="greenest", estimates="requested")
    assert (b.n_jobs, b.n_clusters) == (len(js), fed.n_clusters)
    for a in (*b.jobs, *b.plat):
        assert not a.flags.writeable
    np.testing.assert_array_equal(b.jobs.est, js.requested)
    np.testing.assert_array_equal(b.jobs.power, js.power)
    assert np.isfinite(b.plat.budget[-1])
    assert np.isinf(decoders.inputs(js, moga.Federation.preset()).plat.budget).all()
    np.testing.assert_array_equal(decoders.inputs(js, fed).jobs.est, js.runtime)
    # a duck-typed job-set and federation: the fields, nothing else
    duck_js = types.SimpleNamespace(**{f: getattr(js, f) for f in JOB_FIELDS})
    duck_fed = types.SimpleNamespace(**{f: getattr(fed, f) for f in CLUSTER_FIELDS})
    d = decoders.inputs(duck_js, duck_fed)
    np.testing.assert_array_equal(d.jobs.power, np.ones(len(js)))
    assert np.isinf(d.plat.budget).all()
    with pytest.raises(ValueError, match="requested times"):
        decoders.inputs(duck_js, duck_fed, estimates="requested")
    with pytest.raises(ValueError, match="allocation rule"):
        decoders.inputs(js, fed, rule="nearest")


def _same(a, b):
    for x, y in zip(a, b, strict=True):
        if isinstance(x, np.ndarray):
            np.testing.assert_array_equal(x, y)
        else:
            assert x == y or (x != x and y != y)


@pytest.mark.parametrize("backfill", ["none", "easy"])
def test_every_form_decodes_the_same_bundle(pair, backfill):
    js, fed = pair
    J, K = len(js), fed.n_clusters
    rng = np.random.default_rng(0)
    orders = np.array([rng.permutation(J) for _ in range(3)])
    bls = rng.choice([0.0, 0.5], (3, J, K))
    b = federated.inputs(js, fed)
    one = federated.decode_inputs(b, orders[1], bls[1], backfill=backfill)
    _same(one, decoders.decode(js, fed, orders[1], bls[1], backfill=backfill))
    _same(one, decoders.decode_arrays(*_arrays(js, fed), orders[1], bls[1], backfill=backfill,
                                      **_caps(js, fed)))
    batch = federated.BatchDecoder.of(b, backfill=backfill)(orders, bls, finishes=True)
    _same(batch, decoders.decode_batch(*_arrays(js, fed), orders, bls, backfill=backfill,
                                       finishes=True, **_caps(js, fed)))
    np.testing.assert_array_equal(batch.finishes[1], one.finish)
    assert batch.makespan[1] == one.makespan and batch.energy[1] == one.energy


@pytest.mark.parametrize("method", ["prb", "saf", "easy"])
def test_dispatch_of_the_bundle_is_dispatch_of_the_arrays(pair, method):
    js, fed = pair
    b = federated.inputs(js, fed, rule="consolidate", estimates="requested")
    _same(federated.dispatch_inputs(b, method),
          federated.dispatch(*_arrays(js, fed), method=method, rule="consolidate",
                             estimate=js.requested, **_caps(js, fed)))


def test_the_steps_accessors_follow_a_session(pair):
    js, fed = pair
    s = moga.sim.Session(js, fed, estimates="exact")
    st = s._st
    assert steps.n_settled(st) == 0 and not steps.status(st).flags.writeable
    q = s.queued()
    np.testing.assert_array_equal(q, steps.queued(st))
    started = s.start(q)
    assert steps.n_settled(st) == started.size
    np.testing.assert_array_equal(steps.status(st)[started], 1)
    run, fin = steps.running(st)
    assert sorted(run.tolist()) == sorted(started.tolist())
    assert (fin > s.now).all() and (steps.slowdowns(st)[run] > 0).all()
    assert steps.free(st).sum() == fed.total_nodes - s.allocation.sum()
    assert steps.power_used(st)[-1] > 0
    assert all(isinstance(a, np.ndarray) for a in steps.state_arrays(st, s._out))
