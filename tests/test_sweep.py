"""Sweeps: configuration, resumable store, determinism, Dask, and the report."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from moga.cli import main
from moga.experiments.report import make_report
from moga.experiments.sweep import config_from_dict, finished_runs, load_config, load_results, run_sweep

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "benchmarks" / "sweeps" / "tiny.toml"

BASE = {
    "name": "t", "seeds": [1, 2],
    "trace": [{"name": "b", "path": "bundled", "n_jobs": 40, "starts": [0, 500]}],
    "algorithms": {"MOGA": {"pop_size": 8, "n_gen": 3}, "FCFS": {}, "GA-MF": {"pop_size": 8,
                                                                             "n_gen": 3}},
}


def _cfg(**changes):
    d = {**BASE, **changes}
    return config_from_dict(d, "test.toml")


def _values(rows):
    return {r["run_id"]: (r["makespan_s"], r["energy_J"], r["flowtime_s"], r["hv"],
                          r["front_size"]) for r in rows}


@pytest.mark.parametrize("change, message", [
    ({"seeds": []}, r"test.toml: seeds: must be a non-empty list"),
    ({"seeds": [1, 1]}, "seeds: must not repeat"),
    ({"model": "exact"}, "model: must be 'fluid' or 'at_start'"),
    ({"colour": 1}, "colour: unknown key"),
    ({"trace": []}, r"trace: give at least one \[\[trace\]\]"),
    ({"trace": [{"path": "bundled", "n_jobs": 5}]}, r"trace\[0\].starts: must be"),
    ({"trace": [{"path": "bundled", "days": 3, "n_jobs": 5}]}, "either days"),
    ({"trace": [{"path": "nope.swf", "days": 3, "windows": [0]}]}, r"trace\[0\].path: no such"),
    ({"trace": [{"path": "bundled", "days": 3, "windows": [0], "wide": "x"}]},
     r"trace\[0\].wide"),
    ({"algorithms": {"SJF": {}}}, "algorithms.SJF: unknown algorithm"),
    ({"algorithms": {"FCFS": {"x": 1}}}, "algorithms.FCFS.x: heuristics take no parameters"),
    ({"algorithms": {"MOGA": {"pop": 3}}}, r"algorithms.MOGA: unknown GA parameter"),
    ({"algorithms": {"random search": {"n_evals": 0}}}, "n_evals: must be a positive"),
    ({"federation": "nowhere"}, "federation: federation '.*nowhere' is neither"),
])
def test_config_errors_name_the_key(change, message):
    with pytest.raises(ValueError, match=message):
        _cfg(**change)


def test_shipped_configs_are_valid():
    import re

    import moga

    for f in (ROOT / "benchmarks" / "sweeps").glob("*.toml"):
        names = re.findall(r'^path = "([^"]+)"', f.read_text(), re.M)
        try:
            for n in names:
                moga.resolve_trace(n)
        except moga.TraceNotFoundError:
            with pytest.raises(ValueError, match="not found.*Parallel Workloads Archive"):
                load_config(f)
            continue
        assert len(load_config(f).runs()) > 0


def test_resume_after_interruption_equals_an_uninterrupted_run(tmp_path):
    cfg = _cfg()
    full = tmp_path / "full"
    s = run_sweep(cfg, full, scheduler="synchronous", progress=False)
    assert s["done"] == s["total"] == 12
    part = tmp_path / "part"
    s1 = run_sweep(cfg, part, scheduler="synchronous", max_runs=5, progress=False)
    assert s1["done"] == 5 and len(finished_runs(part)) == 5
    s2 = run_sweep(cfg, part, scheduler="synchronous", progress=False)
    assert s2["skipped"] == 5 and s2["done"] == 7
    s3 = run_sweep(cfg, part, scheduler="synchronous", progress=False)
    assert s3["done"] == 0 and s3["skipped"] == 12
    a, fa = load_results(full)
    b, fb = load_results(part)
    assert len(b) == len({r["run_id"] for r in b}) == 12  # none twice
    assert _values(a) == _values(b)
    for k in fa:
        assert (fa[k] == fb[k]).all()


def test_rows_are_deterministic_per_seed(tmp_path):
    cfg = _cfg()
    run_sweep(cfg, tmp_path / "a", scheduler="synchronous", progress=False)
    run_sweep(cfg, tmp_path / "b", scheduler="synchronous", progress=False)
    a, _ = load_results(tmp_path / "a")
    b, _ = load_results(tmp_path / "b")
    assert _values(a) == _values(b)
    moga_rows = [r for r in a if r["algorithm"] == "MOGA" and r["window"] == 0]
    assert moga_rows[0]["seed"] != moga_rows[1]["seed"]


@pytest.mark.dask
def test_tiny_sweep_on_a_two_worker_local_cluster(tmp_path):
    out = tmp_path / "dask"
    assert main(["sweep", str(TINY), "--workers", "2", "--out", str(out), "--no-progress"]) == 0
    sync = tmp_path / "sync"
    run_sweep(load_config(TINY), sync, scheduler="synchronous", progress=False)
    assert _values(load_results(out)[0]) == _values(load_results(sync)[0])
    assert main(["report", str(out)]) == 0
    report = (out / "report" / "report.md").read_text()
    assert "Wilcoxon" in report and "| bundled | MOGA | 4 |" in report
    assert (out / "report" / "hv_bundled.png").stat().st_size > 0


@pytest.mark.dask
def test_a_task_whose_worker_dies_is_retried(tmp_path):
    marker = str(tmp_path / "crashed")

    def crash_once(spec):
        # Pickled by value to the workers: the first task to run kills its worker process,
        # as a crashing node would; every later one runs normally.
        import os

        from moga.experiments.sweep import run_one

        if not os.path.exists(marker):
            open(marker, "w").close()
            os._exit(1)
        return run_one(spec)

    cfg = _cfg(algorithms={"FCFS": {}, "EASY": {}})
    stats = run_sweep(cfg, tmp_path / "out", workers=2, progress=False, task=crash_once)
    assert os.path.exists(marker)  # a worker did die
    assert stats["done"] == stats["total"] == 8 and stats["failed"] == 0
    assert len(finished_runs(tmp_path / "out")) == 8


def test_report_of_an_empty_store(tmp_path):
    (tmp_path / "runs").mkdir()
    with pytest.raises(ValueError, match="no finished runs"):
        make_report(tmp_path)


def test_store_leaves_no_temporary_files_and_pairs_rows_with_fronts(tmp_path):
    # An interrupted write is tested in test_reliability.py.
    run_sweep(_cfg(algorithms={"FCFS": {}}), tmp_path, scheduler="synchronous", progress=False)
    assert not [p for p in tmp_path.rglob("*") if p.name.endswith(".tmp")]
    assert sorted(os.listdir(tmp_path / "runs")) == sorted(os.listdir(tmp_path / "fronts"))


def test_a_sweep_of_three_objectives_stores_and_reports_them(tmp_path):
    from moga.experiments.sweep.store import OBJECTIVE_FIELDS, load_results

    cfg = _cfg(objectives=["makespan", "energy", "bsld"], seeds=[1],
               algorithms={"MOGA": {"pop_size": 8, "n_gen": 3}, "FCFS": {}, "EASY": {},
                           "random search": {"n_evals": 30}})
    default = _cfg(seeds=[1], algorithms={"FCFS": {}})
    assert "objectives" not in default.fingerprint()  # a makespan-energy store is as before
    assert cfg.fingerprint()["objectives"] == ["makespan", "energy", "bsld"]
    assert {r.run_id for r in default.runs()} & {r.run_id for r in cfg.runs()} == set()
    run_sweep(cfg, tmp_path, scheduler="synchronous", progress=False)
    rows, fronts = load_results(tmp_path)
    assert len(rows) == 8
    for r in rows:
        assert set(OBJECTIVE_FIELDS) <= set(r) and r["objectives"] == "makespan,energy,bsld"
        F = fronts[r["run_id"]]
        assert F.shape[1] == 3 and len(F) == r["front_size"] and len(r["ref"]) == 3
        assert F[:, 2].min() >= 1.0  # bounded slowdowns
    header = next((tmp_path / "fronts").glob("*.csv")).read_text().splitlines()[0]
    assert header == "makespan_s,energy_J,bsld"
    made = make_report(tmp_path)
    assert made["plots"] and (tmp_path / "report" / "report.md").exists()
    with pytest.raises(ValueError, match="objectives"):
        _cfg(objectives=["makespan", "cost"])
