"""Every key a command writes into its JSON outputs is documented in docs/outputs.md."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

import moga
from moga.cli import main

ROOT = Path(__file__).resolve().parents[1]
OUTPUTS = (ROOT / "docs" / "outputs.md").read_text()
DOCUMENTED = set(re.findall(r"`([^`\n]+)`", OUTPUTS))
IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
# Keys whose children are names of things (algorithms, schedulers), not fixed keys.
NAMED = {"fronts", "by_class", "ci", "meta", "dropped"}
# Keys whose children are GA parameters: moga.GAParams's fields, documented there.
GA_PARAMS = {"params", "best_params"}
GA_FIELDS = {f.name for f in dataclasses.fields(moga.GAParams)}
SAF = str(ROOT / "docs" / "guide" / "examples" / "saf_easy.py") + ":SmallestAreaFirst"


def _undocumented(obj, path=()):
    """Paths to the keys of a JSON document that docs/outputs.md does not name."""
    out = []
    if isinstance(obj, dict):
        for k, v in obj.items():
            parent = path[-1] if path else None
            if parent in GA_PARAMS:
                if k not in GA_FIELDS:
                    out.append(".".join((*path, k)))
                continue
            if parent not in NAMED and IDENT.match(k) and k not in DOCUMENTED:
                out.append(".".join((*path, k)))
            out += _undocumented(v, (*path, k))
    elif isinstance(obj, list):
        for v in obj:
            out += _undocumented(v, (*path, "[]"))
    return out


def _check(folder, *files):
    for name in files:
        doc = json.loads((folder / name).read_text())
        missing = sorted(set(_undocumented(doc)))
        assert not missing, f"{name}: keys missing from docs/outputs.md: {missing}"


SMALL = ["--n-jobs", "30"]


@pytest.mark.parametrize("policy", ["easy", "fcfs", SAF], ids=["easy", "fcfs", "own"])
def test_simulate_metrics_json_is_documented(policy, tmp_path):
    assert main(["simulate", *SMALL, "--policy", policy, "--no-gantt",
                 "--out", str(tmp_path)]) == 0
    _check(tmp_path, "metrics.json")


@pytest.mark.slow
@pytest.mark.parametrize("args", [
    ["--policy", "online-moga", "--pop", "8", "--gen", "2"], ["--policy", "value-density"],
    ["--policy", "realtime-preempt"], ["--policy", "online-EASY"], ["--policy", "prb"],
    ["--policy", "rt-preempt-jit"], ["--policy", "hybrid"], ["--policy", "easy", "--power-cap",
                                                             "60%"]],
    ids=lambda a: a[1] + ("-cap" if "--power-cap" in a else ""))
def test_simulate_metrics_json_of_every_kind_of_policy_is_documented(args, tmp_path):
    if "hybrid" in args:
        pytest.importorskip("ortools")
    assert main(["simulate", *SMALL, *args, "--no-gantt", "--out", str(tmp_path)]) == 0
    _check(tmp_path, "metrics.json")


def test_run_and_compare_json_are_documented(tmp_path):
    assert main(["run", *SMALL, "--pop", "8", "--gen", "2", "--no-progress",
                 "--out", str(tmp_path / "run")]) == 0
    _check(tmp_path / "run", "run.json")
    assert main(["compare", *SMALL, "--pop", "8", "--gen", "2", "--no-progress",
                 "--out", str(tmp_path / "compare")]) == 0
    _check(tmp_path / "compare", "compare.json")


@pytest.mark.slow
def test_value_powercap_and_realtime_json_are_documented(tmp_path):
    assert main(["value", "--n-jobs", "40", "--pop", "8", "--gen", "2",
                 "--out", str(tmp_path / "value")]) == 0
    _check(tmp_path / "value", "value.json")
    assert main(["powercap", *SMALL, "--caps", "0.8", "--dispatchers", "easy", "prb",
                 "--out", str(tmp_path / "powercap")]) == 0
    _check(tmp_path / "powercap", "powercap.json")
    assert main(["realtime", "--n-jobs", "60", "--rtj-fraction", "0.1", "--schemes", "baseline",
                 "preempt-jit", "--no-schedules", "--out", str(tmp_path / "realtime")]) == 0
    _check(tmp_path / "realtime", "realtime.json")


def test_the_check_finds_an_undocumented_key():
    assert _undocumented({"metrics": {"makespan_s": 1.0, "surely_not_documented_key": 2}}) == [
        "metrics.surely_not_documented_key"]


@pytest.mark.slow
def test_tune_and_rl_evaluate_json_are_documented(tmp_path):
    pytest.importorskip("optuna")
    pytest.importorskip("gymnasium")
    assert main(["tune", *SMALL, "--trials", "2", "--seeds", "1", "--budget", "400",
                 "--no-progress", "--out", str(tmp_path / "tune")]) == 0
    _check(tmp_path / "tune", "tune.json")
    assert main(["rl", "evaluate", "--sequences", "2", "--lam", "0.7", "--beta", "0.5",
                 "--out", str(tmp_path / "rl")]) == 0
    _check(tmp_path / "rl", "evaluate.json")
