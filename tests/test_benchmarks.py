"""Every benchmark script runs in its quick mode (``--quick``), so a signature change
in the code a benchmark drives breaks this test, not a results file.

Each script in ``benchmarks/`` (the ``_``-prefixed helpers aside) must take
``--quick`` and, given no ``--out``, write to a temporary folder: the test runs
its ``main(["--quick"])`` in this process (the kernels compile once) and
checks that nothing under ``results/`` changed.
"""

from __future__ import annotations

import importlib.util
import sys
import tempfile
from pathlib import Path

import numba
import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks"
SCRIPTS = sorted(p.name for p in BENCH.glob("*.py") if not p.name.startswith("_"))
#: Optional extras (pyproject.toml) a script may need: it is skipped without them.
EXTRAS = {"dask", "distributed", "optuna", "ortools", "gymnasium", "jax", "optax", "pandas"}
#: Scripts that train the Deep-EAS policy (JAX), marked ``rl`` besides ``slow``.
RL = {"deep_eas_lambdas.py", "deep_eas_speed.py"}


def _snapshot(folder: Path) -> dict:
    return {p: p.stat().st_mtime_ns for p in folder.rglob("*") if p.is_file()}


@pytest.mark.slow
@pytest.mark.parametrize("script", [pytest.param(s, marks=pytest.mark.rl) if s in RL else s
                                    for s in SCRIPTS])
def test_quick_mode(script, tmp_path, monkeypatch, capsys):
    monkeypatch.syspath_prepend(str(BENCH))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    threads = numba.get_num_threads()
    spec = importlib.util.spec_from_file_location(f"_bench_{script[:-3]}", BENCH / script)
    mod = importlib.util.module_from_spec(spec)
    before = _snapshot(ROOT / "results")
    try:
        spec.loader.exec_module(mod)
        assert hasattr(mod, "main"), f"{script} has no main(argv)"
        mod.main(["--quick"])
    except ModuleNotFoundError as e:
        if (e.name or "").split(".")[0] not in EXTRAS:
            raise
        pytest.skip(f"{script} needs the optional {e.name}")
    except SystemExit as e:  # argparse: --quick unknown, or a bad option
        pytest.fail(f"{script} --quick exited with {e.code}: {capsys.readouterr().err[-2000:]}")
    finally:
        numba.set_num_threads(threads)
        sys.modules.pop(spec.name, None)
    assert _snapshot(ROOT / "results") == before, f"{script} --quick wrote under results/"
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert written or capsys.readouterr().out.strip(), f"{script} --quick produced nothing"
