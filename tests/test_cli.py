"""Smoke tests of the moga command on tiny job-sets."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from moga.cli import main


def test_evaluate_prints_both_models(capsys):
    assert main(["evaluate", "--n-jobs", "50"]) == 0
    out = capsys.readouterr().out
    assert "fluid" in out and "at_start" in out and "3376 lines read" in out


def test_evaluate_json(capsys):
    assert main(["evaluate", "--n-jobs", "20", "--model", "at_start", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["schedules"][0]["model"] == "at_start" and d["schedules"][0]["n_jobs"] == 20


def test_run_writes_all_outputs(tmp_path, capsys):
    out = tmp_path / "o"
    assert main(["run", "--n-jobs", "30", "--pop", "8", "--gen", "3", "--out", str(out),
                 "--no-progress"]) == 0
    for f in ("front.csv", "front.png", "convergence.png", "gantt_knee.png", "run.json"):
        assert (out / f).stat().st_size > 0, f
    d = json.loads((out / "run.json").read_text())
    assert d["n_jobs"] == 30 and d["params"]["pop_size"] == 8 and len(d["hv_history"]) == 3
    lines = (out / "front.csv").read_text().splitlines()
    assert lines[0].startswith("index,makespan_s,energy_J") and len(lines) == d["front_size"] + 1
    assert "knee" in capsys.readouterr().out


def test_run_with_params_file(tmp_path):
    p = tmp_path / "ga.toml"
    p.write_text("pop_size = 6\nn_gen = 2\nblacklist_crossover = \"blend\"\n")
    out = tmp_path / "o"
    assert main(["run", "--n-jobs", "20", "--params", str(p), "--out", str(out)]) == 0
    d = json.loads((out / "run.json").read_text())
    assert d["params"]["blacklist_crossover"] == "blend" and d["params"]["n_gen"] == 2


def test_errors_are_reported_not_raised(capsys):
    assert main(["evaluate", "--n-jobs", "10", "--federation", "nope"]) == 2
    assert "neither a preset" in capsys.readouterr().err
    assert main(["evaluate", "--n-jobs", "100", "--federation", "tiny.toml"]) == 2


def test_trace_report(capsys):
    assert main(["trace"]) == 0
    assert "30-day windows" in capsys.readouterr().out


@pytest.mark.parametrize("args", [["--help"], ["run", "--help"]])
def test_console_script_help(args):
    r = subprocess.run([sys.executable, "-m", "moga.cli", *args], capture_output=True, text=True)
    assert r.returncode == 0 and "usage: moga" in r.stdout


@pytest.mark.slow
def test_powercap_writes_table_and_plots(tmp_path, capsys):
    out = tmp_path / "pc"
    assert main(["powercap", "--n-jobs", "60", "--caps", "1.0", "0.45", "--out", str(out)]) == 0
    for f in ("powercap.md", "powercap.json", "power.png", "wqt.png"):
        assert (out / f).stat().st_size > 0, f
    d = json.loads((out / "powercap.json").read_text())
    assert len(d["runs"]) == 9 and all(r["time_above_cap"] == 0.0 for r in d["runs"])
    assert [r["cap_W"] is None for r in d["runs"]] == [True] * 3 + [False] * 6  # uncapped first
    assert {r["dispatcher"] for r in d["runs"]} == {"easy", "prb", "hybrid"}
    assert d["estimates"] == "exact" and (out / "schedules" / "prb-uncapped").is_dir()
    assert "jobs moved by the cap" in (out / "powercap.md").read_text()
    assert "hybrid" in capsys.readouterr().out
    assert main(["powercap", "--n-jobs", "30", "--caps", "0.6", "--dispatchers", "easy",
                 "--no-uncapped", "--estimates", "requested", "--out", str(tmp_path / "r")]) == 0
    d = json.loads((tmp_path / "r" / "powercap.json").read_text())
    assert len(d["runs"]) == 1 and d["estimates"] == "requested"
    assert "plan on requested run times" in (tmp_path / "r" / "powercap.md").read_text()
    assert main(["powercap", "--n-jobs", "30", "--caps", "0.6", "--dispatchers", "prb",
                 "--no-uncapped", "--power-error", "0.2", "--power-seed", "3", "--out",
                 str(tmp_path / "p")]) == 0
    d = json.loads((tmp_path / "p" / "powercap.json").read_text())
    assert d["power_error"] == 0.2 and d["runs"][0]["power_seed"] == 3
    assert "predicted with a log-normal error of 0.2" in (tmp_path / "p" / "powercap.md").read_text()
    assert main(["powercap", "--n-jobs", "20", "--caps", "0.01", "--out", str(out)]) == 2


def test_run_under_a_power_cap(tmp_path, capsys):
    out = tmp_path / "o"
    assert main(["run", "--n-jobs", "40", "--pop", "8", "--gen", "3", "--power-cap", "40%",
                 "--power", "lognormal", "--out", str(out), "--no-progress"]) == 0
    d = json.loads((out / "run.json").read_text())
    cap = d["federation_spec"]["power_cap"]
    assert cap == pytest.approx(0.4 * 27308.8)
    assert "power cap 10.92 kW (40% of peak)" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["run", "--power-cap", "lots"])


def test_realtime_writes_table_and_plot(tmp_path, capsys):
    out = tmp_path / "rt"
    assert main(["realtime", "--n-jobs", "150", "--rtj-fraction", "0.2", "--schemes", "baseline",
                 "preempt-jit", "--out", str(out)]) == 0
    for f in ("realtime.md", "realtime.json", "slowdown.png"):
        assert (out / f).stat().st_size > 0, f
    d = json.loads((out / "realtime.json").read_text())
    assert [r["scheme"] for r in d["runs"]] == ["baseline", "preempt-jit"]
    assert d["runs"][1]["RTJ"]["mean_bsld"] <= d["runs"][0]["RTJ"]["mean_bsld"]
    jit = out / "schedules" / "rtj0.2-preempt-jit"
    assert (jit / "schedule.csv").read_text().count("\n") == 151
    segs = (jit / "segments.csv").read_text().splitlines()
    assert len(segs) - 1 == 150 + d["runs"][1]["system"]["preemptions"]
    assert (jit / "schedule.swf").stat().st_size > 0
    assert main(["realtime", "--n-jobs", "20", "--machine", "tiny", "--out", str(out)]) == 2
    assert "--machine takes mira" in capsys.readouterr().err


def test_realtime_exposes_thresholds_and_io_and_refuses_idle_options(tmp_path, capsys):
    out = tmp_path / "rt"
    args = ["realtime", "--n-jobs", "120", "--rtj-fraction", "0.2", "--no-schedules", "--machine",
            "64", "--wide", "clip",
            "--out", str(out)]
    assert main([*args, "--schemes", "preempt-jit", "--memory-gb", "1", "--io-gbps", "100"]) == 0
    fast = json.loads((out / "realtime.json").read_text())["runs"][0]["system"]
    assert main([*args, "--schemes", "preempt-jit", "--slowdown-on", "walltime"]) == 0
    slow = json.loads((out / "realtime.json").read_text())["runs"][0]["system"]
    assert slow["slowdown_on"] == "walltime"
    assert "Slowdowns on walltime" in (out / "realtime.md").read_text()
    assert "I/O: 16 GB per node; one 4 GB/s I/O node per 128 nodes (at least 1 per job); a " \
        "0.3125 GB/s file system" in (out / "realtime.md").read_text()   # Mira's, scaled to 64
    assert fast["node_hours_checkpointing"] < slow["node_hours_checkpointing"]
    assert main([*args, "--schemes", "preempt-jit-improved", "--rtj-threshold", "1.0",
                 "--batch-thresholds", "1", "1", "1", "1"]) == 0
    assert json.loads((out / "realtime.json").read_text())["runs"][0]["system"][
        "preemptions"] == 0  # every batch job is protected
    capsys.readouterr()
    assert main(["realtime", "--machine", "mira", "--n-jobs", "60", "--schemes", "baseline",
                 "--no-schedules", "--out", str(out)]) == 0
    assert "job sizes scaled from the trace's 240 nodes to Mira's 49152" in \
        capsys.readouterr().err
    assert main([*args, "--schemes", "baseline", "--rtj-threshold", "2"]) == 2
    assert "--rtj-threshold changes no scheme" in capsys.readouterr().err
    assert main([*args, "--schemes", "preempt-jit-improved", "--trigger", "1.2"]) == 2
    assert "--trigger changes no scheme" in capsys.readouterr().err
    assert main([*args, "--schemes", "preempt-jit-qsim", "--trigger", "1.2",
                 "--batch-thresholds", "1", "1", "1", "1"]) == 0
    assert json.loads((out / "realtime.json").read_text())["runs"][0]["scheme"] == \
        "preempt-jit-qsim"
    assert main([*args, "--schemes", "preempt-jit", "--app-overhead", "0.1"]) == 2
    assert "--app-overhead changes no scheme" in capsys.readouterr().err
