"""Schedules must not depend on which CPU kernels the numeric libraries pick.

OpenBLAS (numpy's BLAS) chooses a kernel per CPU, and each sums a dot product in its own
order: a cap's budget or a Python-built schedule's energy computed with ``np.dot`` moved
in its last bits from one machine to another, and with it the schedules compared with
it (15 of the stored digests). Sums of products go through ``decoders._kernels.exact_dot``
instead; these tests hold the class: no BLAS call where schedules are made, and the same
schedules under two OpenBLAS kernels.
"""

from __future__ import annotations

import ast
import os
import platform
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
#: numpy calls that go to BLAS or to einsum's CPU-dispatched sums.
BLAS_CALLS = {"dot", "matmul", "einsum", "inner", "vdot", "tensordot", "linalg"}
#: Where such calls stay: the learned Deep-EAS policy (JAX training, and the network's matrix
#: products in its kernel, whose scores may differ in their last bits from one CPU to
#: another) and the figures.
ALLOWED = ("moga/rl/", "moga/plot.py", "decoders/deep_eas_net.py")


def _blas_uses(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    rel = path.relative_to(ROOT) if ROOT in path.parents else path
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
            found.append(f"{rel}:{node.lineno} @")
        elif (isinstance(node, ast.Attribute) and node.attr in BLAS_CALLS
              and isinstance(node.value, ast.Name) and node.value.id in ("np", "numpy")):
            found.append(f"{rel}:{node.lineno} np.{node.attr}")
        elif isinstance(node, ast.Attribute) and node.attr == "dot" and \
                isinstance(node.ctx, ast.Load) and not isinstance(node.value, ast.Name):
            found.append(f"{rel}:{node.lineno} .dot")
    return found


def test_no_blas_where_schedules_are_made():
    files = [p for d in ("moga", "decoders") for p in sorted((ROOT / d).rglob("*.py"))
             if not str(p.relative_to(ROOT)).startswith(ALLOWED)]
    assert files
    found = [use for p in files for use in _blas_uses(p)]
    assert found == [], "use decoders._kernels.exact_dot: " + ", ".join(found)


def test_the_scan_finds_a_blas_call(tmp_path):
    p = tmp_path / "probe.py"
    p.write_text("import numpy as np\nx = np.dot([1.0], [2.0])\ny = np.ones(2) @ np.ones(2)\n"
                 "z = np.ones(2).dot(np.ones(2))\n")
    assert sorted(u.split(" ", 1)[1] for u in _blas_uses(p)) == [".dot", "@", "np.dot"]


def test_exact_dot_is_the_correctly_rounded_sum_of_products():
    from fractions import Fraction

    from decoders._kernels import exact_dot

    rng = np.random.default_rng(5)
    for n in (0, 1, 4, 1000):
        a = rng.normal(size=n) * 10.0 ** rng.integers(-8, 8, n)
        b = rng.normal(size=n)
        prods = [Fraction(float(x) * float(y)) for x, y in zip(a, b, strict=True)]
        assert exact_dot(a, b) == float(sum(prods, Fraction(0)))
    assert exact_dot(np.array([3, 4]), np.array([0.5, 0.25])) == 2.5


CODE = """
import hashlib, numpy as np, moga
from moga.value import attach_values
fed = moga.Federation.preset()
js = attach_values(moga.load_default().jobset(n_jobs=150, federation=fed, power="lognormal",
                                             seed=3), seed=2)
capped = fed.with_cap(fraction=0.6)
h = hashlib.sha256()
for f, name in ((capped, "prb"), (capped, "fcfs"), (fed, "online-EASY"), (fed, "Max-Max-Value")):
    s = moga.simulate(js, f, name)
    h.update(np.ascontiguousarray(s.start).tobytes())
    h.update(np.array([s.makespan, s.energy]).tobytes())
print(capped.power_cap, h.hexdigest())
"""


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"),
                    reason="OpenBLAS's x86-64 kernel names")
@pytest.mark.parametrize("core", ["Prescott", "Sandybridge"])
def test_schedules_are_the_same_under_another_blas_kernel(core):
    runs = []
    for env_core in (None, core):
        env = dict(os.environ)
        env.pop("OPENBLAS_CORETYPE", None)
        if env_core:
            env["OPENBLAS_CORETYPE"] = env_core
        runs.append(subprocess.run([sys.executable, "-c", CODE], env=env, capture_output=True,
                                   text=True, check=True).stdout)
    assert runs[0] == runs[1]
