"""Regression tests of the reliability review: no silent loss, no hangs, clear errors."""

from __future__ import annotations

import gzip
import json
import os
import stat
from pathlib import Path

import numpy as np
import pytest

import decoders
import moga
from moga.cli import main
from moga.experiments.sweep import (
    StoreError,
    config_from_dict,
    finished_runs,
    load_config,
    load_results,
    run_sweep,
)
from moga.model.workload import SWFFormatError
from moga.value import attach_values, compare_value

LINE = "{id} {sub} 0 {rt} {size} -1 -1 {size} {rt} -1 1 1 1 -1 1 -1 -1 -1\n"


def _swf(path, rows, header="; MaxProcs: 64\n"):
    text = header + "".join(LINE.format(id=i + 1, sub=10 * i, rt=100, size=s)
                            for i, s in enumerate(rows))
    Path(path).write_text(text)
    return path


def _cfg(**changes):
    base = {"name": "t", "seeds": [1],
            "trace": [{"name": "b", "path": "bundled", "n_jobs": 20, "starts": [0]}],
            "algorithms": {"FCFS": {}}}
    return config_from_dict({**base, **changes}, "test.toml")


# ------------------------------------------------------------ data loss and stale results
def test_run_ids_of_distinct_traces_never_collide(tmp_path):
    cfg = _cfg(trace=[{"name": "a b", "path": "bundled", "n_jobs": 20, "starts": [0]},
                      {"name": "a_b", "path": "bundled", "n_jobs": 20, "starts": [0],
                       "federation": "ricc"}])
    ids = [s.run_id for s in cfg.runs()]
    assert len(set(ids)) == 2
    stats = run_sweep(cfg, tmp_path, scheduler="synchronous", progress=False)
    assert stats["done"] == 2 and len(finished_runs(tmp_path)) == 2
    rows, _ = load_results(tmp_path)
    assert sorted(r["trace"] for r in rows) == ["a b", "a_b"]


def test_run_id_covers_everything_that_changes_the_result():
    base = _cfg(algorithms={"MOGA": {"pop_size": 8, "n_gen": 2}}).runs()[0].run_id
    for change in ({"algorithms": {"MOGA": {"pop_size": 10, "n_gen": 2}}},
                   {"algorithms": {"MOGA": {"pop_size": 8, "n_gen": 2}}, "model": "at_start"},
                   {"algorithms": {"MOGA": {"pop_size": 8, "n_gen": 2}}, "federation": "ricc"},
                   {"algorithms": {"MOGA": {"pop_size": 8, "n_gen": 2}},
                    "trace": [{"name": "b", "path": "bundled", "n_jobs": 21, "starts": [0]}]}):
        assert _cfg(**change).runs()[0].run_id != base, change


def test_a_store_refuses_a_changed_configuration_and_keeps_its_own(tmp_path):
    run_sweep(_cfg(), tmp_path, scheduler="synchronous", progress=False)
    before = (tmp_path / "config.json").read_text()
    changed = _cfg(trace=[{"name": "b", "path": "bundled", "n_jobs": 30, "starts": [0]}])
    with pytest.raises(StoreError, match=r"different sweep configuration.*n_jobs: 20 in the "
                                         r"store, 30 now"):
        run_sweep(changed, tmp_path, scheduler="synchronous", progress=False)
    assert (tmp_path / "config.json").read_text() == before
    assert len(finished_runs(tmp_path)) == 1
    # The same configuration resumes as before.
    assert run_sweep(_cfg(), tmp_path, scheduler="synchronous", progress=False)["skipped"] == 1


def test_report_names_a_damaged_row(tmp_path):
    run_sweep(_cfg(), tmp_path, scheduler="synchronous", progress=False)
    row = next((tmp_path / "runs").glob("*.csv"))
    row.write_text(row.read_text().splitlines()[0] + "\nbroken,row\n")
    with pytest.raises(StoreError, match=f"{row.name}: damaged run row"):
        load_results(tmp_path)
    assert main(["report", str(tmp_path)]) == 2


def test_store_writes_survive_an_interrupted_write(tmp_path, monkeypatch):
    from moga.experiments.sweep import store

    run_sweep(_cfg(), tmp_path, scheduler="synchronous", progress=False)
    good = {p.name: p.read_text() for p in (tmp_path / "runs").glob("*.csv")}
    real_fsync = os.fsync

    def die(fd):  # the process dies after writing the temporary file, before the rename
        real_fsync(fd)
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", die)
    row = next(iter(good))
    with pytest.raises(KeyboardInterrupt):
        store.atomic_write(tmp_path / "runs" / row, "half")
    monkeypatch.undo()
    assert {p.name: p.read_text() for p in (tmp_path / "runs").glob("*.csv")} == good
    assert not list(tmp_path.rglob("*.tmp"))


def _tiny_jobset():
    fed = moga.Federation.preset()
    return moga.load_default().jobset(n_jobs=15, federation=fed), fed


def test_tune_refuses_to_resume_a_study_with_other_settings(tmp_path):
    js, fed = _tiny_jobset()
    db = tmp_path / "j.log"
    moga.tune(js, fed, n_trials=1, seeds=1, budget=16, storage=db, prune=False,
              space={"pop_size": ("int", 4, 8, 4)})
    for kw in ({"budget": 24}, {"model": "at_start"}):
        with pytest.raises(ValueError, match="other settings"):
            moga.tune(js, fed, n_trials=2, seeds=1, storage=db, prune=False,
                      space={"pop_size": ("int", 4, 8, 4)}, **{"budget": 16, **kw})
    other = moga.load_default().jobset(start=100, n_jobs=15, federation=fed)
    with pytest.raises(ValueError, match="jobsets"):
        moga.tune(other, fed, n_trials=2, seeds=1, budget=16, storage=db, prune=False,
                  space={"pop_size": ("int", 4, 8, 4)})


def test_tune_fails_and_reruns_trials_left_running_and_repairs_a_cut_journal(tmp_path):
    import optuna

    js, fed = _tiny_jobset()
    db = tmp_path / "j.log"
    space = {"pop_size": ("int", 4, 8, 4)}
    moga.tune(js, fed, n_trials=1, seeds=1, budget=16, storage=db, prune=False, space=space)
    # A process killed mid-trial leaves a RUNNING trial behind ...
    study = optuna.load_study(study_name="moga-tune", storage=moga.experiments.tuning
                              .open_storage(db))
    stale = study.ask({"pop_size": optuna.distributions.IntDistribution(4, 8, step=4)})
    # ... owned by that process, now gone (a finished child's pid) ...
    import socket
    import subprocess
    import sys

    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    stale.set_user_attr(moga.experiments.tuning.OWNER, f"{socket.gethostname()}:{gone.pid}")
    # ... and a partial last line in the journal.
    with open(db, "ab") as fh:
        fh.write(b'{"op_code": 5, "worker_id"')
    with pytest.warns(RuntimeWarning, match="partial last line"):
        res = moga.tune(js, fed, n_trials=2, seeds=1, budget=16, storage=db, prune=False,
                        space=space)
    states = {t.number: t.state.name for t in res.study.trials}
    assert states[stale.number] == "FAIL"
    done = [t for t in res.study.trials if t.state.name == "COMPLETE"]
    assert len(done) == 2
    assert done[-1].params == stale.params  # the failed trial's parameters ran again


@pytest.mark.parametrize("storage, message", [
    ("nosuchdb://x", "cannot open study"),
    ("sqlite:////nonexistent-dir/x/y.db", "cannot open study"),
])
def test_tune_bad_storage_is_a_clear_error(storage, message):
    js, fed = _tiny_jobset()
    with pytest.raises(ValueError, match=message):
        moga.tune(js, fed, n_trials=1, seeds=1, budget=16, storage=storage,
                  space={"pop_size": ("int", 4, 8, 4)})


def test_tune_garbage_storage_files(tmp_path):
    js, fed = _tiny_jobset()
    db = tmp_path / "g.db"
    db.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(ValueError, match="cannot open study"):
        moga.tune(js, fed, n_trials=1, seeds=1, budget=16, storage=f"sqlite:///{db}",
                  space={"pop_size": ("int", 4, 8, 4)})
    j = tmp_path / "g.log"
    j.write_text("garbage\n")
    with pytest.raises(ValueError, match="cannot open study"):
        moga.tune(js, fed, n_trials=1, seeds=1, budget=16, storage=j,
                  space={"pop_size": ("int", 4, 8, 4)})


@pytest.mark.parametrize("argv, message", [
    (["tune", "--trials", "0"], "--trials must be >= 1"),
    (["tune", "--timeout", "0"], "--timeout must be a finite number > 0"),
    (["run", "--seed", "-1"], "argument --seed: a seed must be >= 0"),
    (["sweep", "x.toml", "--workers", "-1"], "--workers must be >= 1"),
    (["sweep", "x.toml", "--max-runs", "-3"], "--max-runs must be >= 0"),
])
def test_cli_arguments_are_checked_and_named(argv, message, capsys):
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    assert message in capsys.readouterr().err


def test_run_sweep_arguments_are_checked():
    for kw, msg in (({"workers": -1}, "workers must be"), ({"max_runs": -3}, "max_runs must be")):
        with pytest.raises(ValueError, match=msg):
            run_sweep(_cfg(), "unused", progress=False, **kw)


# ---------------------------------------------------------------------------- hangs
def test_tiny_windows_return():
    tr = moga.load_default()
    starts = tr.windows(days=1e-15)
    assert starts[0] == 0 and len(starts) <= len(tr)
    for bad in (0, -1, float("nan"), float("inf")):
        with pytest.raises(ValueError, match=r"days must be a finite number (> 0|in \(0, )"):
            tr.windows(days=bad)


def test_nan_runtime_is_refused_even_unchecked():
    fed = moga.Federation.preset()
    rt = np.array([10.0, np.nan])
    with pytest.raises(ValueError, match=r"runtime\[1\] must be finite"):
        decoders.decode(np.zeros(2), [1, 1], rt, np.zeros(2), np.zeros(2), fed.nodes, fed.speed,
                        fed.power_busy, fed.power_idle, fed.link, [0, 1], np.zeros((2, 4)),
                        check=False)


# -------------------------------------------------------------------- trace files
def test_damaged_gzip_traces_name_the_file(tmp_path):
    good = _swf(tmp_path / "t.swf", [1, 2, 3])
    data = gzip.compress(good.read_bytes())
    cut = tmp_path / "cut.swf.gz"
    cut.write_bytes(data[:len(data) // 2])
    with pytest.raises(SWFFormatError, match=r"cut\.swf\.gz: the gzip stream is truncated"):
        moga.load_swf(cut)
    body = tmp_path / "body.swf.gz"
    body.write_bytes(data[:10] + b"\x00garbage" * 20 + data[-8:])
    with pytest.raises(SWFFormatError, match=r"body\.swf\.gz: not a readable gzip file"):
        moga.load_swf(body)
    tail = tmp_path / "tail.swf.gz"
    tail.write_bytes(data + b"trailing junk")
    with pytest.raises(SWFFormatError, match=r"tail\.swf\.gz: not a readable gzip file"):
        moga.load_swf(tail)


def test_empty_and_header_only_traces(tmp_path):
    for name, text in (("empty.swf", ""), ("header.swf", "; MaxProcs: 8\n; Note: nothing\n")):
        p = tmp_path / name
        p.write_text(text)
        tr = moga.load_swf(p)
        assert len(tr) == 0 and tr.report.balanced
        with pytest.raises(ValueError, match=f"trace '{p.stem}' holds no jobs"):
            _ = tr.jobs
        with pytest.raises(ValueError, match="holds no jobs"):
            tr.jobset(n_jobs=1, federation=8)


def test_sizes_must_be_integers(tmp_path):
    p = tmp_path / "sizes.swf"
    _swf(p, [4, 2.5, 1e30, 8])
    with pytest.raises(SWFFormatError, match=r"sizes\.swf, line 3: field 5 \(alloc_procs\) is not "
                                             r"an integer: 2\.5"):
        moga.load_swf(p)
    tr = moga.load_swf(p, skip_malformed=True)
    assert tr.report.malformed == 2 and len(tr) == 2 and tr.report.balanced
    assert "too large" in tr.report.malformed_examples[1]


def test_duplicated_lines_and_ids_are_counted(tmp_path):
    p = tmp_path / "twice.swf"
    _swf(p, [1, 2, 3])
    text = p.read_text()
    p.write_text(text + text.split("\n", 1)[1])  # two concatenated copies
    tr = moga.load_swf(p)
    assert len(tr) == 3 and tr.report.dropped["duplicate line"] == 3 and tr.report.balanced
    assert "duplicate line: 3" in str(tr.report)
    q = tmp_path / "ids.swf"
    q.write_text("".join(LINE.format(id=1, sub=s, rt=50, size=1) for s in (0, 5)))
    tr = moga.load_swf(q)
    assert len(tr) == 2 and tr.report.duplicate_ids == 1
    assert "1 kept jobs repeat an earlier job id" in str(tr.report)


# ---------------------------------------------------------------- sweep configuration
@pytest.mark.parametrize("change, message", [
    ({"federation": 5}, "federation: must be a non-empty string"),
    ({"trace": [{"path": 5, "n_jobs": 5, "starts": [0]}]}, r"trace\[0\].path: must be a non-empty"),
    ({"algorithms": {"MOGA": {"params": 5}}}, "algorithms.MOGA.params: must be a non-empty"),
    ({"algorithms": {"FCFS": 5}}, r"algorithms.FCFS: must be a table"),
    ({"algorithms": {"MOGA": {"pop_size": 10.0}}}, "pop_size must be an integer >= 2, got 10.0"),
    ({"trace": [{"path": "bundled", "n_jobs": 5, "starts": [0], "release": "false"}]},
     r"trace\[0\].release: must be true or false"),
    ({"trace": [{"path": "bundled", "n_jobs": 5, "starts": [0], "max_procs": True}]},
     r"trace\[0\].max_procs: must be a positive integer"),
    ({"seeds": [-1]}, r"seeds: must be a non-empty list of integers in \[0, 2\*\*32\)"),
    ({"trace": [{"path": "bundled", "days": float("nan"), "windows": [0]}]},
     r"trace\[0\].days: must be a finite number"),
])
def test_sweep_config_types_are_checked(change, message):
    with pytest.raises(ValueError, match=message):
        _cfg(**change)


def test_sweep_windows_past_the_end_fail_before_any_run(tmp_path):
    for tr, msg in (({"path": "bundled", "n_jobs": 5, "starts": [10**6]}, "past the end"),
                    ({"path": "bundled", "days": 30, "windows": [99]}, "does not exist")):
        with pytest.raises(ValueError, match=msg):
            run_sweep(_cfg(trace=[tr]), tmp_path / "s", scheduler="synchronous", progress=False)
        assert not (tmp_path / "s" / "runs").exists() or not finished_runs(tmp_path / "s")


def test_sweep_toml_syntax_error_names_the_file(tmp_path):
    p = tmp_path / "bad.toml"
    p.write_text("name = \n")
    with pytest.raises(ValueError, match=r"bad\.toml: not valid TOML"):
        load_config(p)


# ------------------------------------------------------------------- GA parameters
@pytest.mark.parametrize("text, message", [
    ("pop_size = 10.0\n", "pop_size must be an integer >= 2, got 10.0"),
    ("ga = 5\n", "ga: must be a table"),
    ("pop_size = \n", "not valid TOML"),
    ("blend_alpha = nan\n", "blend_alpha must be a finite number"),
    ("blend_alpha = inf\n", "blend_alpha must be a finite number"),
    ('seeded = "false"\n', "seeded must be true or false"),
])
def test_params_files_are_checked(tmp_path, text, message):
    p = tmp_path / "params.toml"
    p.write_text(text)
    with pytest.raises(ValueError, match=message) as e:
        moga.GAParams.from_toml(p)
    assert "params.toml" in str(e.value)


# --------------------------------------------------------------------- value workloads
@pytest.mark.slow
def test_compare_value_on_empty_and_worthless_job_sets():
    fed = moga.Federation.preset()
    js = attach_values(moga.load_default().jobset(n_jobs=10, federation=fed, batch=False))
    with pytest.raises(ValueError, match="is empty"):
        compare_value(js.take(np.arange(0)), fed, pop_size=4, n_gen=1)
    # Deadlines so tight that nothing can earn value: percentages are NaN, not a crash.
    late = moga.JobSet(id=js.id, release=js.release, tasks=js.tasks, runtime=js.runtime,
                       sigma=js.sigma, bw=js.bw, name="late", v_start=js.v_start,
                       v_final=js.v_final, soft=js.release, hard=js.release, priority=js.priority)
    c = compare_value(late, fed, pop_size=4, n_gen=1)
    assert c.upper_bound == 0.0 and all(np.isnan(r["pct_of_upper_bound"]) for r in c.rows)


# ------------------------------------------------------------- late failures lose nothing
def test_unwritable_outputs_fail_before_the_search(tmp_path, capsys):
    out = tmp_path / "o"
    (out / "front.csv").mkdir(parents=True)
    assert main(["run", "--n-jobs", "20", "--gen", "2", "--pop", "4", "--out", str(out),
                 "--no-progress"]) == 2
    assert "front.csv is a folder" in capsys.readouterr().err
    assert not (out / "run.json").exists()
    afile = tmp_path / "afile"
    afile.write_text("")
    assert main(["run", "--n-jobs", "20", "--out", str(afile), "--no-progress"]) == 2
    assert "exists and is not a folder" in capsys.readouterr().err
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        if os.access(ro, os.W_OK):
            pytest.skip("running as a user who can write anywhere (root)")
        assert main(["run", "--n-jobs", "20", "--gen", "2", "--pop", "4", "--out", str(ro),
                     "--no-progress"]) == 2
        assert "cannot write there" in capsys.readouterr().err
    finally:
        ro.chmod(stat.S_IRWXU)


def test_a_failing_plot_keeps_the_data(tmp_path, monkeypatch, capsys):
    import moga.plot

    def boom(*a, **k):
        raise MemoryError("too many nodes to draw")

    monkeypatch.setattr(moga.plot, "plot_gantt", boom)
    out = tmp_path / "o"
    assert main(["run", "--n-jobs", "20", "--gen", "2", "--pop", "4", "--out", str(out),
                 "--no-progress"]) == 0
    assert "plot gantt_knee.png failed" in capsys.readouterr().err
    summary = json.loads((out / "run.json").read_text())
    assert summary["front_size"] >= 1 and (out / "front.csv").exists()
