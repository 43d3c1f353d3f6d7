"""Regression tests of the fourth hostile pass (../shared/reviews/reliability-4.md), one or
more per defect, numbered as there, and of the two outside checks of issue 54."""

from __future__ import annotations

import json

import numpy as np
import pytest

import moga
from moga.sim import Session

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture(scope="module")
def small():
    fed = moga.Federation.preset("default")
    js = moga.load_default().jobset(n_jobs=60, federation=fed, batch=True)
    return js, fed


# ------------------------------------------------------------- 4. Session verbs' arguments
def test_4_preempt_refuses_a_repeated_job(small):
    s = Session(*small)
    s.start(s.queued())
    j = int(s.running()[0][0])
    with pytest.raises(ValueError, match=f"preempt got job {j} twice"):
        s.preempt([j, j])
    assert j in s.running()[0]  # nothing stopped


@pytest.mark.parametrize("verb", ["start", "reject"])
def test_4_start_and_reject_refuse_a_repeated_job(small, verb):
    s = Session(*small)
    with pytest.raises(ValueError, match=f"{verb} got job 3 twice"):
        getattr(s, verb)([3, 3])
    assert 3 in s.queued()


def test_4_verbs_refuse_unknown_finished_and_waiting_jobs(small):
    s = Session(*small)
    with pytest.raises(ValueError, match="not a job of the set"):
        s.preempt([10**6])
    with pytest.raises(ValueError, match="not a job of the set"):
        s.current_start([10**6])
    with pytest.raises(ValueError, match="current_start: job 0 is not running"):
        s.current_start([0])
    with pytest.raises(ValueError, match="preempt: job 0 is not running"):
        s.preempt([0])
    s.start([0])
    while 0 in s.running()[0]:
        s.advance()
    with pytest.raises(ValueError, match="preempt: job 0 is not running"):
        s.preempt([0])
    with pytest.raises(ValueError, match="is not waiting"):
        s.reject([0])


def test_4_verbs_refuse_2d_positions_and_absurd_restarts(small):
    s = Session(*small)
    with pytest.raises(ValueError, match="1-D sequence"):
        s.start(np.array([[1], [2]]))
    s.start([1])
    with pytest.raises(ValueError, match="restart must be <="):
        s.preempt([1], restart=1e300)


# ------------------------------------------------------ 1. names never leave their folder
@pytest.mark.parametrize("name", ["..", ".", "", "../../escaped", "/abs/x", "a/b", ".hidden",
                                  "a\\..\\b", "x" * 300, "é\0"])
def test_1_safe_name_is_one_harmless_component(name):
    from moga.outputs import safe_name

    s = safe_name(name)
    assert s and "/" not in s and "\\" not in s and not s.startswith(".") and len(s) < 120
    assert safe_name(name) == s


def test_1_distinct_names_stay_distinct():
    from moga.outputs import safe_name

    assert safe_name("a/b") != safe_name("a_b") and safe_name("EASY") == "EASY"


def test_1_inside_refuses_paths_that_climb_out(tmp_path):
    from moga.outputs import OutputError, inside

    inside(tmp_path, tmp_path / "a" / "b.png")
    with pytest.raises(OutputError, match="outside the output folder"):
        inside(tmp_path / "d", tmp_path / "d" / ".." / "escaped.png")
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "link").symlink_to(tmp_path)
    with pytest.raises(OutputError, match="outside the output folder"):
        inside(tmp_path / "d", tmp_path / "d" / "link" / "x.png")


def test_1_report_keeps_a_climbing_trace_name_inside_the_report(tmp_path):
    from moga.experiments.report import make_report
    from moga.experiments.sweep import config_from_dict, run_sweep

    cfg = config_from_dict({"name": "s", "seeds": [1], "trace": [
        {"name": "../../../../escaped", "path": "bundled", "n_jobs": 12, "starts": [0]}],
        "algorithms": {"FCFS": {}, "EASY": {}}}, str(tmp_path / "esc.toml"))
    store = tmp_path / "deep" / "er" / "S"
    run_sweep(cfg, store, scheduler="synchronous", progress=False)
    written = make_report(store)
    everything = {p for p in tmp_path.rglob("*") if p.is_file()}
    report = (store / "report").resolve()
    assert all(report in p.resolve().parents for p in written["plots"])
    assert everything - {tmp_path / "esc.toml"} <= {p for p in everything
                                                     if store.resolve() in p.resolve().parents}
    assert not [p for p in everything if "escaped" in p.name and p.name.endswith(".png")
                and report not in p.parents]
    assert not [p for p in store.rglob("*.csv") if p.name.startswith(".")]  # no hidden runs
    assert [p for p in (store / "report").iterdir() if p.name.startswith("hv_")]


# ------------------------------------------------ 2, 3. each command's outputs are one set
def test_2_a_set_replaces_the_previous_one_whole(tmp_path):
    from moga.outputs import check_set, output_set, read_manifest

    with output_set(tmp_path, "t", {"seed": 1}) as o:
        (o / "a.csv").write_text("1")
        (o.path("schedules", "x/y", "s.csv")).write_text("1")
        (o / "gantt.png").write_text("1")
    assert (tmp_path / "gantt.png").exists()
    with output_set(tmp_path, "t", {"seed": 2}) as o:
        (o / "a.csv").write_text("2")
    left = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*"))
    assert left == [".moga-set.json", "a.csv"]  # the old gantt and schedules/ are gone
    doc = read_manifest(tmp_path)
    assert doc["complete"] and doc["files"] == ["a.csv"] and doc["settings"] == {"seed": 2}
    check_set(tmp_path, "a.csv")


def test_2_a_set_that_fails_half_way_leaves_the_previous_one(tmp_path):
    from moga.outputs import OutputError, atomic_write, output_set

    with output_set(tmp_path, "t") as o:
        atomic_write(o / "a.csv", "old a")
        atomic_write(o / "b.csv", "old b")
    with pytest.raises(OutputError), output_set(tmp_path, "t") as o:
        atomic_write(o / "a.csv", "new a")
        raise OutputError("b.csv: cannot write the file: No space left on device")
    assert (tmp_path / "a.csv").read_text() == "old a" and (tmp_path / "b.csv").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == [".moga-set.json", "a.csv", "b.csv"]


def test_2_interleaved_commands_leave_one_set(tmp_path):
    from moga.outputs import output_set, read_manifest

    a = output_set(tmp_path, "run", {"seed": 1})
    oa = a.__enter__()
    (oa / "front.csv").write_text("A")
    with output_set(tmp_path, "run", {"seed": 2}) as ob:  # B runs whole while A waits
        for n in ("front.csv", "run.json", "result.npz"):
            (ob / n).write_text("B")
    for n in ("run.json", "result.npz"):
        (oa / n).write_text("A")
    a.__exit__(None, None, None)
    assert {(tmp_path / n).read_text() for n in ("front.csv", "run.json", "result.npz")} == {"A"}
    assert read_manifest(tmp_path)["settings"] == {"seed": 1}


def test_2_an_unfinished_move_is_refused_by_readers(tmp_path):
    from moga.errors import InputError
    from moga.outputs import MANIFEST, check_set

    (tmp_path / MANIFEST).write_text(json.dumps({"command": "run", "complete": False,
                                                 "files": ["result.npz"]}))
    with pytest.raises(InputError, match="incomplete set of outputs"):
        check_set(tmp_path, "result.npz")
    (tmp_path / MANIFEST).write_text(json.dumps({"command": "run", "complete": True,
                                                 "files": ["front.csv"]}))
    with pytest.raises(InputError, match="not part of the folder's outputs"):
        check_set(tmp_path, "result.npz")


def test_2_a_manifest_cannot_make_a_set_remove_files_outside(tmp_path):
    from moga.outputs import MANIFEST, output_set

    victim = tmp_path / "victim.txt"
    victim.write_text("keep")
    out = tmp_path / "out"
    out.mkdir()
    (out / MANIFEST).write_text(json.dumps({"complete": True, "files": ["../victim.txt"]}))
    with output_set(out, "t") as o:
        (o / "a").write_text("1")
    assert victim.read_text() == "keep"


def test_2_a_stale_lock_of_a_dead_process_is_broken(tmp_path):
    import subprocess
    import sys

    from moga.outputs import output_set

    p = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                       capture_output=True, text=True, check=True)
    (tmp_path / ".moga-set.lock").write_text(p.stdout.strip())
    with output_set(tmp_path, "t") as o:
        (o / "a").write_text("1")
    assert (tmp_path / "a").exists() and not (tmp_path / ".moga-set.lock").exists()


def _main(argv):
    from moga.cli import main

    return main([str(a) for a in argv])


def test_3_a_new_simulate_clears_the_old_gantt_and_segments(tmp_path):
    out = tmp_path / "D"
    assert _main(["simulate", "--policy", "fcfs", "--n-jobs", 30, "--out", out]) == 0
    assert (out / "gantt.png").exists()
    assert _main(["simulate", "--policy", "easy", "--n-jobs", 40, "--no-gantt", "--out",
                  out]) == 0
    assert sorted(p.name for p in out.iterdir()) == [".moga-set.json", "metrics.json",
                                                     "schedule.csv", "schedule.swf"]
    assert json.loads((out / ".moga-set.json").read_text())["settings"]["policy"] == "easy"


def test_3_realtime_without_schedules_removes_the_old_ones(tmp_path):
    out = tmp_path / "RT"
    assert _main(["realtime", "--n-jobs", 30, "--machine", 64, "--wide", "clip",
                  "--schemes", "baseline", "--no-progress", "--out", out]) == 0
    assert (out / "schedules").is_dir()
    assert _main(["realtime", "--n-jobs", 30, "--machine", 64, "--wide", "clip",
                  "--schemes", "baseline", "--no-schedules", "--no-progress", "--out",
                  out]) == 0
    assert not (out / "schedules").exists() and (out / "realtime.md").exists()


def test_2_schedule_refuses_an_incomplete_run_folder(tmp_path):
    from moga.outputs import MANIFEST

    out = tmp_path / "R"
    assert _main(["run", "--n-jobs", 20, "--pop", 8, "--gen", 2, "--no-progress", "--out",
                  out]) == 0
    doc = json.loads((out / MANIFEST).read_text())
    assert doc["complete"] and "result.npz" in doc["files"] and doc["command"] == "run"
    assert _main(["schedule", out, "--out", tmp_path / "k"]) == 0
    (out / MANIFEST).write_text(json.dumps(dict(doc, complete=False)))
    assert _main(["schedule", out, "--out", tmp_path / "k"]) == 2


# ------------------------- outside check 1: the improved heuristic's held-job reservation
def test_improved_reservation_counts_a_victims_nodes_once():
    """Machine(18): batch A (10 nodes, checkpoint write 20 s) and B (8 nodes, 16 s) run from
    0; real-time job R1 (10 nodes) arrives at 100, preempts A and is held until A's write
    ends at 120. Real-time job R2 (8 nodes, 100 s) arrives at 110: A's nodes pass to R1,
    so the first nodes to come back are R1's at 320 and R2's slowdown by waiting would be
    (320 + 100 - 110) / 100 = 3.1 > 1.5: it preempts B at once and starts when B's write
    ends, at 126, as under plain preempt."""
    import sys
    from pathlib import Path

    from decoders.realtime import simulate_realtime

    sys.path.insert(0, str(Path(__file__).parent))
    from naive import naive_realtime

    sub = np.array([0.0, 0.0, 100.0, 110.0])
    run = np.array([1000.0, 1000.0, 200.0, 100.0])
    nodes = np.array([10, 8, 10, 8])
    rtj = np.array([False, False, True, True])
    cls, write, read = np.zeros(4, int), np.array([20.0, 16.0, 0.0, 0.0]), np.zeros(4)
    for improved in (False, True):
        r = simulate_realtime(sub, run, nodes, rtj, cls, 18, "preempt", "jit", write=write,
                              read=read, improved=improved)
        assert r.start.tolist() == [0.0, 0.0, 120.0, 126.0] and r.n_preemptions == 2
        start = naive_realtime(sub, run, nodes, rtj, cls, 18, "preempt", "jit", write, read,
                               np.full(4, np.inf), improved=improved)[0]
        assert [float(x) for x in start] == [0.0, 0.0, 120.0, 126.0]


def test_improved_reservation_returns_a_held_jobs_surplus_at_its_start():
    """R1 needs 4 nodes and preempts B (8 nodes, write 16 s), the smallest that frees
    enough: the 4 nodes beyond its need come back when it starts at 116, so R2 (4 nodes,
    100 s, arriving at 110) waits for them rather than preempting A:
    (116 + 100 - 110) / 100 = 1.06 <= 1.5."""
    from decoders.realtime import simulate_realtime

    sub = np.array([0.0, 0.0, 100.0, 110.0])
    run = np.array([1000.0, 1000.0, 200.0, 100.0])
    nodes = np.array([10, 8, 4, 4])
    rtj = np.array([False, False, True, True])
    r = simulate_realtime(sub, run, nodes, rtj, np.zeros(4, int), 18, "preempt", "jit",
                          write=np.array([20.0, 16.0, 0.0, 0.0]), read=np.zeros(4),
                          improved=True)
    assert r.start.tolist() == [0.0, 0.0, 116.0, 116.0] and r.n_preemptions == 1


# ------------------------------------------------- outside check 2: preempted, then rejected
def test_a_job_preempted_then_rejected_has_a_row_without_nodes_or_energy(tmp_path):
    import csv

    fed = moga.Federation.from_clusters([{"name": "c", "nodes": 4, "speed": 1.0,
                                          "power_busy": 200.0, "power_idle": 50.0,
                                          "link": 1e9}])
    js = moga.JobSet.from_arrays([0.0, 100.0], [2, 1], [1000.0, 50.0], sigma=[0.0, 0.0],
                                 bw=[0.0, 0.0])
    s = Session(js, fed, estimates="exact")
    s.start([0])
    assert s.advance() == 100.0
    s.preempt([0])
    s.reject([0])
    s.start([1])
    while not s.done:
        s.advance()
    r = s.result()
    r.to_csv(tmp_path / "s.csv")
    rows = list(csv.DictReader(open(tmp_path / "s.csv")))
    assert rows[0]["final_state"] == "REJECTED"
    assert rows[0]["allocated_resources"] == "" and rows[0]["metadata"] == ""
    assert float(rows[0]["consumed_energy"]) == 0.0
    # Idle power of 4 nodes for 150 s, and the busy surplus of both executions.
    assert r.energy == pytest.approx(4 * 50 * 150 + 2 * 150 * 100 + 1 * 150 * 50)
    r.segments_to_csv(tmp_path / "seg.csv")
    seg = list(csv.DictReader(open(tmp_path / "seg.csv")))
    assert [int(x["job_id"]) for x in seg] == [0, 1]


# ------------------------------------------------------------ 6. moga schedule's trust
@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("run") / "R"
    assert _main(["run", "--n-jobs", 30, "--pop", 8, "--gen", 3, "--no-progress", "--out",
                  out]) == 0
    return out


def _edit(run_dir, tmp_path, change):
    d = tmp_path / "R"
    d.mkdir()
    z = dict(np.load(run_dir / "result.npz", allow_pickle=False))
    change(z)
    np.savez_compressed(d / "result.npz", **z)
    return d


def _meta_edit(key_path, value):
    def change(z):
        m = json.loads(str(z["meta"]))
        node = m
        for k in key_path[:-1]:
            node = node[k]
        node[key_path[-1]] = value
        z["meta"] = np.asarray(json.dumps(m))
    return change


@pytest.mark.parametrize("change, message", [
    (_meta_edit(("federation", "cluster", 3, "speed"), 0.5), "front member 1 decodes to"),
    (_meta_edit(("model",), "bogus"), "result.npz"),
    (lambda z: z.__setitem__("F", np.full_like(z["F"], np.nan)), "not finite"),
    (lambda z: z.__setitem__("F", z["F"][:1]), "shape"),
    (lambda z: z.__setitem__("X", np.full(z["X"].shape, "a")), "result.npz"),
], ids=["speed", "model", "nan", "rows", "strings"])
def test_6_schedule_refuses_a_result_that_does_not_match_its_front(run_dir, tmp_path, capsys,
                                                                   change, message):
    d = _edit(run_dir, tmp_path, change)
    capsys.readouterr()
    assert _main(["schedule", d, "--out", tmp_path / "k"]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not (tmp_path / "k" / "schedule.csv").exists()


# ------------------------------------------- 5. value heuristics count the jobs not run
def test_5_value_heuristics_count_the_jobs_they_never_run(tmp_path):
    import csv

    out = tmp_path / "V"
    assert _main(["simulate", "--policy", "online-EASY", "--n-jobs", 100, "--no-gantt",
                  "--out", out]) == 0
    doc = json.loads((out / "metrics.json").read_text())
    n_out = doc["info"]["n_not_run"]
    assert n_out > 0  # the default release window leaves some job out
    assert doc["metrics"]["n_jobs"] == 100 and doc["metrics"]["n_rejected"] == n_out
    rows = list(csv.DictReader(open(out / "schedule.csv")))
    assert len(rows) == 100 and sum(r["final_state"] == "REJECTED" for r in rows) == n_out
    lines = [x.split() for x in (out / "schedule.swf").read_text().splitlines()
             if x.strip() and not x.startswith(";")]
    assert len(lines) == 100 and sum(x[10] == "5" for x in lines) == n_out


# ------------------------------------------------------------- 7. absurd magnitudes
@pytest.mark.parametrize("field, value", [("speed", 1e-300), ("speed", 1e300),
                                          ("power_busy", 1e300), ("nodes", 10**12)])
def test_7_federations_refuse_absurd_magnitudes(field, value):
    c = {"name": "c", "nodes": 4, "speed": 1.0, "power_busy": 200.0, "power_idle": 50.0,
         "link": 1e9, field: value}
    with pytest.raises(ValueError, match=f"{field} must be in"):
        moga.Federation.from_clusters([c])


def test_10_a_cluster_named_empty_is_refused():
    with pytest.raises(ValueError, match="must not be empty"):
        moga.Federation.from_clusters([{"name": "", "nodes": 4, "speed": 1.0,
                                        "power_busy": 200.0, "power_idle": 50.0, "link": 1e9}])


# ------------------------------------------------ 8. real-time I/O settings without meaning
def _rt(tmp_path, *extra, n=60):
    return _main(["realtime", "--n-jobs", n, "--machine", 64, "--wide", "clip",
                  "--rtj-fraction", 0.3, "--schemes", "preempt-jit", "--no-progress",
                  "--no-schedules", "--out", tmp_path / "RT", *extra])


def test_8_a_write_longer_than_the_jobs_warns(tmp_path, capsys):
    assert _rt(tmp_path, "--pfs-gbps", 1e-5) == 0
    assert "longer than the job's run time" in capsys.readouterr().err


def test_8_a_simulation_that_cannot_finish_names_the_io_options(tmp_path, capsys):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rc = _rt(tmp_path, "--pfs-gbps", 1e-9, n=600)
    err = capsys.readouterr().err
    assert rc == 2 and "--pfs-gbps" in err and "Traceback" not in err


def test_8_min_io_nodes_is_bounded_by_the_machine():
    from moga.errors import InputError
    from moga.realtime import Machine

    with pytest.raises(InputError, match="at most the machine's 1 I/O node"):
        Machine.scaled(80, min_io_nodes=1e9)


# ------------------------------------------------------ 9. options accepted and ignored
@pytest.mark.parametrize("argv, option", [
    (["simulate", "--policy", "easy", "--rtj-fraction", 0.5], "--rtj-fraction"),
    (["simulate", "--policy", "easy", "--tag-seed", 5], "--tag-seed"),
    (["powercap", "--dispatchers", "easy", "prb", "--cp-passes", 5], "--cp-passes"),
    (["powercap", "--dispatchers", "easy", "--window", 8], "--window"),
    (["powercap", "--dispatchers", "easy", "--cp-time", 1], "--cp-time"),
])
def test_9_options_that_change_nothing_are_refused(tmp_path, capsys, argv, option):
    assert _main([*argv, "--n-jobs", 20, "--out", tmp_path / "o"]) == 2
    err = capsys.readouterr().err
    assert option in err and "Traceback" not in err
    assert not (tmp_path / "o" / "schedule.csv").exists()


def test_9_real_time_options_still_act_where_they_count(tmp_path):
    assert _main(["simulate", "--policy", "realtime-first", "--rtj-fraction", 0.3,
                  "--tag-seed", 5, "--n-jobs", 30, "--no-gantt", "--out", tmp_path / "o"]) == 0


# ------------------------------------------------------------------ 10, 12. moga tune
@pytest.fixture(scope="module")
def tune_sets():
    fed = moga.Federation.preset()
    return [moga.load_default().jobset(n_jobs=20, federation=fed)], fed


def test_10_tune_refuses_a_budget_of_days(tune_sets):
    with pytest.raises(ValueError, match="budget must be at most"):
        moga.tune(*tune_sets, n_trials=1, seeds=1, budget=10**12)


def test_10_tune_timeout_bounds_the_running_trial(tune_sets):
    import time

    from moga.errors import InputError

    t0 = time.perf_counter()
    with pytest.raises(InputError, match="no trial completed"):
        moga.tune(*tune_sets, n_trials=1, seeds=1, budget=10**7, timeout=2)
    assert time.perf_counter() - t0 < 60  # not the hours of 10**7 evaluations


def test_12_ctrl_c_in_a_trial_logs_no_traceback(tune_sets, monkeypatch, capsys):
    from moga.experiments import tuning

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(tuning, "run", interrupted, raising=False)
    monkeypatch.setattr("moga.evolution.runner.run", interrupted)
    with pytest.raises(KeyboardInterrupt):
        moga.tune(*tune_sets, n_trials=2, seeds=1, budget=4000)
    err = capsys.readouterr().err
    assert "Traceback" not in err and "KeyboardInterrupt()" not in err


# ------------------------------------------------------------- 10. smaller silent cases
def test_10_a_cap_above_peak_warns_and_a_wild_power_error_is_refused(tmp_path, capsys):
    assert _main(["powercap", "--n-jobs", 20, "--dispatchers", "easy", "--caps", 60,
                  "--no-uncapped", "--no-progress", "--out", tmp_path / "a"]) == 0
    assert "can never bind" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:  # refused where the option is read (its bound)
        _main(["powercap", "--n-jobs", 20, "--dispatchers", "easy", "--power-error", 50,
               "--out", tmp_path / "b"])
    assert e.value.code == 2
    assert "--power-error" in capsys.readouterr().err


def test_10_knee_needs_two_objectives(tmp_path, capsys):
    assert _main(["simulate", "--policy", "online-moga", "--objectives", "energy",
                  "--preference", "knee", "--n-jobs", 20, "--out", tmp_path / "o"]) == 2
    assert "two objectives" in capsys.readouterr().err


def test_10_mean_edp_refuses_no_sequences():
    from moga.rl import ClusterConfig
    from moga.rl.schedulers import esjf, mean_edp

    with pytest.raises(ValueError, match="n_sequences must be"):
        mean_edp(esjf, ClusterConfig(), 0)


def test_10_simulate_help_says_a_policy_file_is_imported():
    from moga.cli import build_parser

    sub = build_parser()._subparsers._group_actions[0].choices["simulate"]
    import re

    assert "runs with your rights" in re.sub(r"\s+", " ", sub.format_help())


# ----------------------------------------------------------------- 13. negative caps
@pytest.mark.parametrize("argv, message", [
    (["simulate", "--power-cap", "-5%"], "--power-cap must be a finite cap > 0, got '-5%'"),
    (["powercap", "--caps", "-5%"], "--caps must be a finite cap > 0, got '-5%'"),
    (["powercap", "--power-seed", "-1"], "argument --power-seed: a seed must be >= 0"),
])
def test_13_negative_values_are_refused_for_what_they_are(argv, message, capsys):
    from moga.cli import main

    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2 and message in capsys.readouterr().err


# --------------------------------------------------------- 14. huge finite policy weights
def test_14_a_policy_with_huge_weights_is_refused_naming_the_file(tmp_path):
    from moga.errors import InputError
    from moga.rl.policy import PARAM_KEYS, load_params, shipped_policy

    params, _ = shipped_policy()
    path = tmp_path / "big.npz"
    np.savez(path, **{k: np.asarray(params[k]) * 1e30 for k in PARAM_KEYS})
    with pytest.raises(InputError, match="big.npz"):
        load_params(path)


# ---------------------------------------------------------- 11. Session's own arguments
def test_11_a_blacklist_of_strings_is_named(small):
    s = Session(*small)
    K = small[1].n_clusters
    with pytest.raises(ValueError, match="blacklist must hold numbers"):
        s.start([0], blacklist=[["a"] * K])


def test_2_a_link_in_the_folder_is_replaced_and_its_target_untouched(tmp_path):
    from moga.outputs import output_set

    target = tmp_path / "elsewhere.csv"
    target.write_text("keep")
    out = tmp_path / "out"
    out.mkdir()
    (out / "a.csv").symlink_to(target)
    with output_set(out, "t") as o:
        (o / "a.csv").write_text("new")
    assert target.read_text() == "keep"
    assert not (out / "a.csv").is_symlink() and (out / "a.csv").read_text() == "new"
