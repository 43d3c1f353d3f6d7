"""Regression tests of the third hostile pass (../shared/reviews/reliability-3.md), one or more
per defect, numbered as there."""

from __future__ import annotations

import errno
import gzip
import json
import signal
import warnings

import numpy as np
import pytest

import moga
from moga.cli import build_parser, main
from moga.errors import InputError
from moga.outputs import OutputError, atomic_write, check_writable

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _fed_toml(path, power_cap=None, fast_cap=None):
    fed = moga.Federation.preset("default")
    lines = ['name = "t"'] + ([f"power_cap = {power_cap}"] if power_cap else [])
    for k, n in enumerate(fed.names):
        lines += ["[[cluster]]", f'name = "{n}"', f"nodes = {int(fed.nodes[k])}",
                  f"speed = {fed.speed[k]}", f"power_busy = {fed.power_busy[k]}",
                  f"power_idle = {fed.power_idle[k]}", f"link = {fed.link[k]}"]
        if fast_cap and n == "fast":
            lines.append(f"power_cap = {fast_cap}")
    path.write_text("\n".join(lines) + "\n")
    return path


# ----------------------------------------------------------------------------- 1. store race
def _tiny_sweep(seeds):
    from moga.experiments.sweep import config_from_dict

    return config_from_dict({"name": "h", "seeds": seeds, "trace": [
        {"name": "h", "path": "bundled", "n_jobs": 12, "starts": [0]}],
        "algorithms": {"FCFS": {}}}, "t.toml")


def test_1_racing_sweeps_cannot_share_a_store(tmp_path, monkeypatch):
    from moga.experiments.sweep import store

    a, b = _tiny_sweep([1]), _tiny_sweep([7])
    out = tmp_path / "S"
    store.open_store(out, a.fingerprint())
    # The other process checked for config.json before this one wrote it: it must still
    # compare with what is there once it tries to create the file.
    real_exists = type(out).exists
    monkeypatch.setattr(type(out), "exists",
                        lambda self: False if self.name == "config.json" else real_exists(self))
    with pytest.raises(store.StoreError, match="different sweep configuration"):
        store.open_store(out, b.fingerprint())
    monkeypatch.undo()
    assert json.loads((out / "config.json").read_text())["fingerprint"]["seeds"] == [1]
    assert not list(out.glob(".config.json.*"))


def test_1_exclusive_create_keeps_the_first_content(tmp_path):
    from moga.experiments.sweep.store import _create_exclusive

    p = tmp_path / "config.json"
    assert _create_exclusive(p, "first")
    assert not _create_exclusive(p, "second")
    assert p.read_text() == "first"
    assert sorted(x.name for x in tmp_path.iterdir()) == ["config.json"]


def test_1_report_leaves_out_rows_of_another_configuration(tmp_path, capsys):
    from moga.experiments.report import make_report
    from moga.experiments.sweep import run_sweep
    from moga.experiments.sweep.store import foreign_runs, load_results

    out, other = tmp_path / "S", tmp_path / "O"
    run_sweep(_tiny_sweep([1, 2]), out, scheduler="synchronous", progress=False)
    run_sweep(_tiny_sweep([7]), other, scheduler="synchronous", progress=False)
    for sub in ("runs", "fronts"):  # a row another sweep wrote into this store
        for p in (other / sub).glob("*.csv"):
            (out / sub / p.name).write_bytes(p.read_bytes())
    assert len(foreign_runs(out)) == 1
    assert len(load_results(out)[0]) == 3
    assert len(load_results(out, foreign="drop")[0]) == 2
    with pytest.raises(ValueError, match="do not belong"):
        load_results(out, foreign="error")
    written = make_report(out)
    assert len(written["foreign"]) == 1
    assert "Left out: 1 run row(s)" in written["report"].read_text()
    assert main(["report", str(out), "--dest", str(tmp_path / "R")]) == 0
    assert "do not belong" in capsys.readouterr().err


# ------------------------------------------------------------------ 2. value decoders and caps
def test_2_value_decoders_refuse_a_capped_federation():
    fed = moga.Federation.preset("default")
    js = moga.value.attach_values(moga.load_default().jobset(
        n_jobs=20, federation=int(fed.nodes.max()), wide="drop", batch=False))
    moga.value.evaluate_value(js, fed)
    capped = fed.with_cap(fraction=0.5)
    for call in (lambda: moga.value.evaluate_value(js, capped),
                 lambda: moga.value.online(js, capped),
                 lambda: moga.value.upper_bound(js, capped)):
        with pytest.raises(InputError, match="power cap"):
            call()


# ---------------------------------------------------------------------- 3. caps compose
def test_3_with_cap_composes_with_the_caps_there():
    fed = moga.Federation.preset()
    cc = [4e3, 6e3, 4e3, 3e3]
    both = fed.with_cap(cluster_caps=cc).with_cap(fraction=0.5)
    np.testing.assert_array_equal(both.cluster_caps, cc)
    assert both.power_cap == pytest.approx(0.5 * fed.peak_power)
    again = fed.with_cap(9000.0).with_cap(cluster_caps=cc)
    assert again.power_cap == 9000.0
    np.testing.assert_array_equal(again.cluster_caps, cc)
    assert not both.without_cap().capped


def test_3_cli_power_cap_keeps_a_tomls_cluster_caps(tmp_path):
    toml = _fed_toml(tmp_path / "ccap.toml", fast_cap=2000.0)
    out = tmp_path / "R"
    assert main(["run", "--n-jobs", "30", "--pop", "8", "--gen", "3", "--federation", str(toml),
                 "--power-cap", "60%", "--out", str(out), "--no-progress"]) == 0
    spec = json.loads((out / "run.json").read_text())["federation_spec"]
    fast = next(c for c in spec["cluster"] if c["name"] == "fast")
    assert fast["power_cap"] == 2000.0
    assert spec["power_cap"] == pytest.approx(0.6 * moga.Federation.preset().peak_power)


# ------------------------------------------------------------ 4. training checkpoints
def _small_cfg():
    from moga.rl import ClusterConfig

    return ClusterConfig(N=4, Q=3, B=6, H=12, L=30, t_arrive=8)


@pytest.mark.rl
def test_4_training_checkpoint_is_one_stamped_file(tmp_path):
    pytest.importorskip("jax")
    from moga.rl.train import TrainConfig, train

    cfg = _small_cfg()
    out = tmp_path / "A"
    train(cfg, TrainConfig(iterations=2, sequences=1, trajectories=2, checkpoint_every=1),
          out=out, progress=False)
    assert sorted(p.name for p in out.iterdir()) == ["checkpoint.npz", "history.json"]
    ck = out / "checkpoint.npz"
    good = ck.read_bytes()

    # Fewer iterations than trained: said, not silently the longer run.
    with pytest.raises(InputError, match="2 iterations are trained already"):
        train(cfg, TrainConfig(iterations=1, sequences=1, trajectories=2), out=out,
              progress=False)
    # Other settings: the setting is named, and so is the CLI flag.
    with pytest.raises(InputError, match=r"train\.lr: 0\.001 in the folder, 0\.01 now.*--no-resume"):
        train(cfg, TrainConfig(iterations=3, sequences=1, trajectories=2, lr=1e-2), out=out,
              progress=False)
    # A cut file and a file whose content does not match its digest name the file.
    ck.write_bytes(good[:2000])
    with pytest.raises(InputError, match="checkpoint.npz: damaged training checkpoint"):
        train(cfg, TrainConfig(iterations=3, sequences=1, trajectories=2), out=out,
              progress=False)
    with np.load(__import__("io").BytesIO(good)) as z:
        arrays = {k: z[k] for k in z.files}
    arrays["p_w1"] = arrays["p_w1"] + 1.0
    np.savez(ck, **arrays)
    with pytest.raises(InputError, match="digest does not match"):
        train(cfg, TrainConfig(iterations=3, sequences=1, trajectories=2), out=out,
              progress=False)
    # An older layout is refused instead of half-read.
    old = tmp_path / "old"
    old.mkdir()
    (old / "history.json").write_text("{}")
    with pytest.raises(InputError, match="without checkpoint.npz"):
        train(cfg, TrainConfig(iterations=1, sequences=1, trajectories=2), out=old,
              progress=False)


# ------------------------------------------------------------------ 5. the exact program
def test_5_exact_program_reports_bad_inputs_as_errors():
    from moga.realtime import min_threshold, solve_milp

    p = np.arange(1, 41)
    z, o, r = np.zeros(40, int), np.ones(40, int), np.arange(40) % 5 == 0
    with pytest.raises(InputError, match="overflow"):
        solve_milp(z, p, o, r, 40, threshold=2.0, time_limit=5)
    with pytest.raises(InputError, match="overflow"):
        min_threshold(z, p, o, r, 40, time_limit=5)
    for tl in (-1, float("nan"), 0):
        with pytest.raises(InputError, match="time_limit"):
            solve_milp([0, 0], [1, 2], [1, 1], [True, False], 1, time_limit=tl)
    with pytest.raises(InputError, match="whole number of slots"):
        solve_milp([0], [1.7], [1], [True], 2)
    with pytest.raises(InputError, match="whole number"):
        solve_milp([0], [float("nan")], [1], [True], 2)
    with pytest.raises(InputError, match="threshold"):
        solve_milp([0], [1], [1], [True], 2, threshold=float("nan"))
    with pytest.raises(InputError, match="lo <= hi"):
        min_threshold([0], [1], [1], [True], 2, lo=3, hi=1)
    with pytest.raises(InputError, match="at least one real-time job"):
        min_threshold([], [], [], [], 2)
    # A sound instance still solves.
    s = solve_milp([0, 0], [1, 2], [1, 1], [True, False], 1, threshold=1.0, time_limit=5)
    assert s.status == "OPTIMAL" and s.rtj_slowdown == 1.0 and s.bj_slowdown == 1.5


def test_5_model_build_counts_against_the_time_limit():
    from moga.realtime import solve_milp

    rng = np.random.default_rng(0)
    J = 200
    s = solve_milp(rng.integers(0, 50, J), np.full(J, 2), rng.integers(1, 5, J),
                   rng.random(J) < 0.1, 8, time_limit=0.2)
    assert s.status == "UNKNOWN"


# -------------------------------------------------------------------- 6. policy files
def test_6_policy_files_are_checked(tmp_path):
    from moga.rl.policy import load_params, save_params, shipped_policy

    p, _ = shipped_policy()
    save_params({**p, "w2": p["w2"][:, :5], "b2": p["b2"][:5]}, tmp_path / "p5.npz")
    with pytest.raises(InputError, match=r"p5.npz: w2 has shape .* needs"):
        load_params(tmp_path / "p5.npz")
    save_params({k: v for k, v in p.items() if k not in ("w2", "b2")}, tmp_path / "nokey.npz")
    with pytest.raises(InputError, match=r"nokey.npz: not a Deep-EAS policy: missing"):
        load_params(tmp_path / "nokey.npz")
    save_params({**p, "w1": np.full_like(p["w1"], np.nan)}, tmp_path / "nan.npz")
    with pytest.raises(InputError, match="nan.npz: w1 holds non-finite"):
        load_params(tmp_path / "nan.npz")
    raw = (tmp_path / "p5.npz").read_bytes()
    (tmp_path / "cut.npz").write_bytes(raw[: len(raw) // 2])
    (tmp_path / "empty.npz").write_bytes(b"")
    (tmp_path / "text.npz").write_text("hello\n")
    np.save(tmp_path / "arr.npy", np.zeros(3))
    for name in ("cut.npz", "empty.npz", "text.npz", "arr.npy", "missing.npz"):
        with pytest.raises(InputError, match=name):
            load_params(tmp_path / name)
    out = tmp_path / "E"
    assert main(["rl", "evaluate", "--policy", str(tmp_path / "p5.npz"), "--lam", "0.7",
                 "--sequences", "1", "--out", str(out)]) == 2


# -------------------------------------------------------------------- 8. caps checked first
def test_8_every_cap_is_checked_before_the_first_dispatch(monkeypatch):
    from moga.powercap import study

    fed = moga.Federation.preset("default")
    js = moga.load_default().jobset(n_jobs=40, federation=fed, batch=False, power="lognormal")
    calls = []
    monkeypatch.setattr(study, "run_dispatcher", lambda *a, **k: calls.append(a))
    with pytest.raises(InputError, match=r"cap 0.1 x peak: job id \d+ \(position \d+"):
        study.cap_study(js, fed, caps=[1.0, 0.8, 0.1], dispatchers=["easy", "prb"])
    assert calls == []


# ----------------------------------------------------------------------------- 9. Ctrl-C
def test_9_ctrl_c_writes_the_front_so_far_and_exits_130(tmp_path, monkeypatch, capsys):
    from moga.evolution.search import Search

    real = Search._on_generation

    def with_ctrl_c(self, n, n_evals, hv):
        if n == 3:
            signal.raise_signal(signal.SIGINT)
        return real(self, n, n_evals, hv)

    monkeypatch.setattr(Search, "_on_generation", with_ctrl_c)
    out = tmp_path / "R"
    before = signal.getsignal(signal.SIGINT)
    rc = main(["run", "--n-jobs", "30", "--pop", "8", "--gen", "500", "--out", str(out),
               "--no-progress"])
    assert rc == 130
    summary = json.loads((out / "run.json").read_text())
    assert summary["partial"] is True and summary["stopped_by"] == "interrupted"
    assert summary["generations"] < 500
    assert len((out / "front.csv").read_text().splitlines()) >= 2
    err = capsys.readouterr().err
    assert "interrupted" in err and "Traceback" not in err
    assert signal.getsignal(signal.SIGINT) is before


def test_9_interrupt_of_the_api():
    fed = moga.Federation.preset()
    js = moga.load_default().jobset(n_jobs=20, federation=fed)
    res = moga.run(js, fed, pop_size=8, n_gen=50, interrupt=lambda: True)
    assert res.info["stopped_by"] == "interrupted" and res.summary()["partial"]
    assert res.history["n_gen"][-1] == 1


# ------------------------------------------------------------------------- 10. full disk
def test_10_failed_writes_leave_no_file_that_looks_like_a_result(tmp_path, monkeypatch):
    import moga.outputs as outputs

    p = tmp_path / "front.csv"
    atomic_write(p, "old\n")

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(outputs.os, "fsync", full)
    with pytest.raises(OutputError, match=r"front.csv: cannot write the file: No space left"):
        atomic_write(p, "new\n")
    assert p.read_text() == "old\n"
    with pytest.raises(OutputError, match=r"--out .*: cannot write there: No space left"):
        check_writable(tmp_path / "out")
    assert sorted(x.name for x in tmp_path.iterdir()) == ["front.csv", "out"]
    assert list((tmp_path / "out").iterdir()) == []


def test_10_a_failed_plot_removes_its_partial_file(tmp_path, monkeypatch):
    import matplotlib.figure

    from moga.plot import plot_front

    def half(self, fname, **kw):
        with open(fname, "wb") as fh:
            fh.write(b"\x89PNG partial")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", half)
    with pytest.raises(OutputError):
        plot_front(np.array([[1.0, 2.0], [2.0, 1.0]]), path=tmp_path / "front.png")
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------------ 11. DeepEASEnv
def test_11_environment_refuses_bad_actions_and_sequences():
    from moga.rl import ClusterConfig, DeepEASEnv
    from moga.rl.cluster import JobSequence

    e = DeepEASEnv()
    with pytest.raises(InputError, match="before reset"):
        e.step(0)
    e.reset(seed=0)
    for bad in (1.7, "3", True, None):
        with pytest.raises(InputError, match="action must be an integer"):
            e.step(bad)
    e.step(np.int64(20))
    empty = JobSequence(np.zeros(0, int), np.zeros(0, int), np.zeros((0, 2)), np.zeros((0, 2), int))
    e.reset(seed=0, options={"jobs": empty})
    assert len(e.jobs) == 0 and e.done
    wide = JobSequence(np.array([0]), np.array([11]), np.array([[1.0, 2.0]]), np.array([[1, 2]]))
    with pytest.raises(InputError, match="job 0 needs 11 processors, a machine has N = 10"):
        DeepEASEnv(jobs=wide)
    with pytest.raises(InputError, match="mu"):
        JobSequence(np.array([0]), np.array([1]), np.array([[0.0, 2.0]]), np.array([[1, 2]]))
    for kw, msg in (({"energy": (np.nan, 1)}, "energy.0. must be a finite number"),
                    ({"energy": (np.inf, 1)}, "energy.0. must be a finite number"),
                    ({"B": 2.5}, "B must be an integer")):
        with pytest.raises(InputError, match=msg):
            ClusterConfig(**kw)
    with pytest.raises(InputError, match=r"lam must be (in|<= 1)"):
        DeepEASEnv(config={"lam": 2})
    with pytest.raises(InputError, match="unknown field"):
        DeepEASEnv(config={"colour": 2})


def test_11_evaluating_episodes_without_jobs(tmp_path):
    out = tmp_path / "E"
    assert main(["rl", "evaluate", "--lam", "1e-9", "--sequences", "2", "--out", str(out)]) == 0
    assert "n/a" in (out / "evaluate.md").read_text()


# ------------------------------------------------------------------------ 12. missing extra
def test_12_a_missing_extra_is_one_line(tmp_path, monkeypatch, capsys):
    import sys

    monkeypatch.setitem(sys.modules, "jax", None)
    assert main(["rl", "train", "--iterations", "1", "--out", str(tmp_path / "X"),
                 "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "training needs the rl extra: pip install 'moga[rl]'" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


# ------------------------------------------------------------------------ 13. reports
def test_13_reports_refuse_impossible_data_and_name_dest(tmp_path, capsys):
    from moga.experiments.report import make_report
    from moga.experiments.sweep import run_sweep
    from moga.experiments.sweep.store import StoreError, load_results

    out = tmp_path / "S"
    run_sweep(_tiny_sweep([1]), out, scheduler="synchronous", progress=False)
    front = next((out / "fronts").glob("*.csv"))
    good = front.read_text()
    n = len(good.splitlines()) - 1
    front.write_text("makespan_s,energy_J\n" + "nan,nan\n" * n)
    with pytest.raises(StoreError, match=f"{front.name}: impossible front"):
        load_results(out)
    front.write_text(good)
    row = next((out / "runs").glob("*.csv"))
    text = row.read_text()
    head, vals = text.splitlines()
    cols = head.split(",")
    cells = next(iter(__import__("csv").reader([vals])))
    cells[cols.index("hv")] = "nan"
    import csv
    import io

    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows([cols, cells])
    row.write_text(buf.getvalue())
    with pytest.raises(StoreError, match="column hv"):
        load_results(out)
    row.write_text(text)
    (tmp_path / "file").write_text("x")
    with pytest.raises(OutputError, match="--out .*file: exists and is not a folder"):
        make_report(out, tmp_path / "file")
    assert main(["report", str(tmp_path / "file")]) == 2
    assert "not a results store" in capsys.readouterr().err


# ------------------------------------------------------------------------ 14. traces
_LINE = "1 0 0 100 4 -1 -1 4 200 -1 1 1 1 1 1 1 -1 -1\n"


def test_14_bad_header_is_noted_and_absurd_times_refused(tmp_path):
    for raw in ("abc", "-5", "0"):
        p = tmp_path / "h.swf"
        p.write_text(f"; MaxProcs: {raw}\n" + _LINE)
        tr = moga.load_swf(p)
        assert tr.report.max_procs == 4
        assert f"MaxProcs '{raw}' is not a positive integer" in str(tr.report)
    for field, value in ((1, "1e300"), (3, "1e300")):
        parts = _LINE.split()
        parts[field] = value
        p = tmp_path / "t.swf"
        p.write_text(" ".join(parts) + "\n")
        with pytest.raises(moga.SWFFormatError, match=r"line 1: field \d .* not a plausible time"):
            moga.load_swf(p)
        assert moga.load_swf(p, skip_malformed=True).report.malformed == 1


def test_14_bom_and_concatenated_gzip_members(tmp_path):
    p = tmp_path / "bom.swf"
    p.write_bytes("\ufeff; MaxProcs: 64\n".encode() + _LINE.encode())
    assert moga.load_swf(p).report.max_procs == 64
    g = tmp_path / "two.swf.gz"
    member = gzip.compress(("; MaxProcs: 64\n" + _LINE).encode())
    g.write_bytes(member + member)
    tr = moga.load_swf(g)
    assert tr.header["MaxProcs"] == "64"


# ------------------------------------------------------------------------ 15. realtime CLI
def test_15_realtime_options(tmp_path, capsys):
    parser = build_parser()
    assert parser.parse_args(["realtime", "--rtj-fraction", "0"]).rtj_fraction == [0.0]
    for opt in (["--federation", "ricc"], ["--power", "lognormal"], ["--rtj-fraction", "1.5"]):
        with pytest.raises(SystemExit):
            parser.parse_args(["realtime", *opt])
    capsys.readouterr()
    assert main(["realtime", "--n-jobs", "2", "--machine", "240", "--rtj-fraction", "0.1",
                 "--schemes", "baseline", "preempt-sys", "--sys-interval", "1e-6",
                 "--out", str(tmp_path / "RT"), "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert "rounds to no real-time job" in err
    assert "SYS-CKPT interval 1e-06 s" in err
    assert main(["realtime", "--n-jobs", "50", "--machine", "8", "--out",
                 str(tmp_path / "W")]) == 2
    err = capsys.readouterr().err
    assert "the machine has 8" in err and "NAME@auto" not in err and "--wide drop" in err


# ------------------------------------------------------------------------ 16. power-cap API
def test_16_power_cap_inputs():
    fed = moga.Federation.preset()
    for kw in ({"power_cap": float("inf")}, {"fraction": float("inf")}, {"fraction": "0.5"},
               {"fraction": float("nan")}):
        with pytest.raises(ValueError, match="power_cap must be a finite|fraction must be"):
            fed.with_cap(**kw)
    with pytest.warns(UserWarning, match="can therefore never bind"):
        fed.with_cap(1e6, [2e3, 3e3, 3e3, 4e3])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fed.with_cap(9000.0, [2e3, 3e3, 3e3, 4e3])
    js = moga.load_default().jobset(n_jobs=5, federation=fed)
    with pytest.raises(ValueError, match=r"power\[0\].*must be in \(0, 10\]"):
        js.with_power(np.full(5, 1e6))
    with pytest.raises(SystemExit):
        build_parser().parse_args(["powercap", "--window", "1"])


def test_16_too_wide_for_the_cap_names_the_job_id():
    fed = moga.Federation.preset()
    js = moga.load_default().jobset(start=5, n_jobs=300, federation=fed)
    tight = fed.with_cap(fraction=0.003 + fed.idle_power / fed.peak_power)
    with pytest.raises(InputError, match=r"job id (\d+) \(position (\d+) of .* in all\)") as e:
        moga.evaluate(js, tight)
    import re

    jid, pos = map(int, re.search(r"job id (\d+) \(position (\d+)", str(e.value)).groups())
    assert int(js.id[pos]) == jid


def test_11_whole_float_sizes_are_stored_as_integers():
    from moga.rl import ClusterConfig, DeepEASEnv

    c = ClusterConfig(K=2.0, N=10.0, B=90.0, energy=[9.809, 1])
    assert (type(c.K), type(c.N), type(c.B), c.energy) == (int, int, int, (9.809, 1.0))
    env = DeepEASEnv(config={"K": 2.0})
    env.reset(seed=0)
    assert env.observation_space.shape == (env.cfg.H, env.cfg.width)
    for kw, msg in (({"Q": 2e20}, "Q must be an integer <="), ({"N": 5000, "Q": 100},
                                                                "observation image would be"),
                    ({"K": 1100, "N": 1, "Q": 1, "B": 0, "H": 3, "energy": (1.0,) * 1100},
                     "L .* must hold")):
        with pytest.raises(InputError, match=msg):
            ClusterConfig(**kw)
