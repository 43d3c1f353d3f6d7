"""Regression tests of the fifth hostile pass (../shared/reviews/reliability-5.md), one or
more per defect, numbered as there; each covers the defect's class (every command, every
field, every option), not only the case shown."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

import moga

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
ROOT = Path(__file__).resolve().parents[1]


def _main(argv):
    from moga.cli import main

    return main([str(a) for a in argv])


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("run") / "R"
    assert _main(["run", "--n-jobs", 20, "--pop", 8, "--gen", 2, "--no-progress", "--out",
                  out]) == 0
    return out


def _listing(folder):
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*")
            if p.is_file()}


# ---------------------------------- 1. a command never replaces another command's outputs
def _foreign(folder, command="sweep-like"):
    """``folder`` holding a complete set of another command: one file and its manifest."""
    from moga.outputs import MANIFEST

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "theirs.csv").write_text("keep me")
    (folder / MANIFEST).write_text(json.dumps({"command": command, "settings": {},
                                               "files": ["theirs.csv"], "complete": True}))
    return _listing(folder)


def _args_of_every_command(run_dir, out):
    """The arguments of every command that writes an output set, small, into ``out``."""
    small = ["--n-jobs", 20]
    return {
        "run": ["run", *small, "--pop", 8, "--gen", 2, "--no-progress", "--out", out],
        "compare": ["compare", *small, "--pop", 8, "--gen", 2, "--no-progress", "--out", out],
        "schedule": ["schedule", run_dir, "--out", out],
        "simulate": ["simulate", *small, "--policy", "fcfs", "--no-gantt", "--out", out],
        "powercap": ["powercap", *small, "--out", out],
        "realtime": ["realtime", *small, "--machine", 64, "--wide", "clip", "--schemes",
                     "baseline", "--no-progress", "--out", out],
        "value": ["value", *small, "--out", out],
        "tune": ["tune", *small, "--trials", 1, "--seeds", 1, "--budget", 16, "--no-progress",
                 "--out", out],
        "rl train": ["rl", "train", "--iterations", 1, "--sequences", 2, "--trajectories", 2,
                     "--no-progress", "--out", out],
        "rl evaluate": ["rl", "evaluate", "--sequences", 1, "--out", out],
        "report": ["report", out.parent / "no-store", "--out", out],
    }


def test_1_the_tests_below_cover_every_command_that_writes_a_set(run_dir, tmp_path):
    """Every ``output_set(..., "COMMAND", ...)`` in the package is one of the commands
    tested for the rule, so a new command cannot escape it."""
    found = set()
    for f in (ROOT / "moga").rglob("*.py"):
        found |= set(re.findall(r"output_set\([^,]+,\s*\"([^\"]+)\"", f.read_text()))
    assert found == set(_args_of_every_command(run_dir, tmp_path))


@pytest.mark.parametrize("command", ["run", "compare", "schedule", "simulate", "powercap",
                                     "realtime", "value", "tune", "rl train", "rl evaluate",
                                     "report"])
def test_1_no_command_writes_into_another_commands_set(command, run_dir, tmp_path, capsys):
    out = tmp_path / "theirs"
    before = _foreign(out)
    run_before = _listing(run_dir)
    assert _main(_args_of_every_command(run_dir, out)[command]) == 2
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("moga: error")]
    assert len(errors) == 1 and "Traceback" not in err
    assert f"--out {out}: holds the outputs of moga sweep-like (theirs.csv)" in errors[0]
    assert _listing(out) == before and _listing(run_dir) == run_before


def test_1_output_set_itself_refuses_another_commands_set(tmp_path):
    from moga.outputs import OutputError, output_set

    before = _foreign(tmp_path, "run")
    with pytest.raises(OutputError, match="holds the outputs of moga run"), \
            output_set(tmp_path, "simulate") as o:
        (o / "theirs.csv").write_text("new")
    assert _listing(tmp_path) == before
    # ... also when the other command wrote its set while this one was working
    out = tmp_path / "late"
    with pytest.raises(OutputError, match="incomplete set of outputs of moga run"):
        with output_set(out, "simulate") as o:
            (o / "theirs.csv").write_text("new")
            _foreign(out, "run")
            doc = json.loads((out / ".moga-set.json").read_text())
            (out / ".moga-set.json").write_text(json.dumps(dict(doc, complete=False)))
    assert (out / "theirs.csv").read_text() == "keep me"


def test_1_a_rerun_replaces_its_own_set_and_a_hand_made_folder_keeps_its_files(tmp_path):
    from moga.outputs import output_set

    (tmp_path / "notes.txt").write_text("mine")
    with output_set(tmp_path, "simulate") as o:
        (o / "a.csv").write_text("1")
        (o / "old.csv").write_text("1")
    with output_set(tmp_path, "simulate") as o:
        (o / "a.csv").write_text("2")
    assert sorted(p.name for p in tmp_path.iterdir()) == [".moga-set.json", "a.csv",
                                                          "notes.txt"]


def test_1_schedule_refuses_the_run_folder_it_reads(run_dir, capsys):
    before = _listing(run_dir)
    assert _main(["schedule", run_dir, "--out", run_dir]) == 2
    err = capsys.readouterr().err
    assert f"--out {run_dir}: moga schedule reads its input from this folder" in err
    assert _listing(run_dir) == before
    # a result.npz given directly names the same folder
    assert _main(["schedule", run_dir / "result.npz", "--out", run_dir]) == 2
    assert _listing(run_dir) == before


@pytest.mark.parametrize("command", ["simulate", "value"])
def test_1_other_commands_refuse_a_run_folder(command, run_dir, capsys):
    before = _listing(run_dir)
    argv = {"simulate": ["simulate", "--n-jobs", 20, "--policy", "fcfs", "--out", run_dir],
            "value": ["value", "--n-jobs", 20, "--out", run_dir]}[command]
    assert _main(argv) == 2
    assert "holds the outputs of moga run (convergence.png, front.csv" in capsys.readouterr().err
    assert _listing(run_dir) == before


def test_1_docs_state_the_rule_and_the_manifest():
    text = (ROOT / "docs" / "outputs.md").read_text()
    assert ".moga-set.json" in text
    for word in ("another command", "its own previous set", "complete"):
        assert word in text


# --------------------------------------------- 8. a report never goes among the run rows
@pytest.fixture(scope="module")
def store(tmp_path_factory):
    from moga.experiments.sweep import config_from_dict, run_sweep

    root = tmp_path_factory.mktemp("store")
    cfg = config_from_dict({"name": "s", "seeds": [1], "trace": [
        {"name": "bundled", "path": "bundled", "n_jobs": 12, "starts": [0]}],
        "algorithms": {"FCFS": {}, "EASY": {}}}, str(root / "s.toml"))
    run_sweep(cfg, root / "S", scheduler="synchronous", progress=False)
    return root / "S"


@pytest.mark.parametrize("sub", ["runs", "fronts", "runs/x", "."])
def test_8_report_refuses_an_out_in_the_stores_rows(store, sub, capsys):
    before = _listing(store)
    dest = store / sub
    assert _main(["report", store, "--out", dest]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"moga: error: --out {dest}: ") and err.count("\n") == 1
    assert _listing(store) == before
    assert _main(["report", store]) == 0
    assert "do not belong" not in capsys.readouterr().err


# ---------------------------------------------------- 3. the manifest's fields are typed
WRONG = {
    "files": [5, None, "front.csv", {"a": 1}, [1, 2], [None]],
    "previous": [None, 5, "front.csv", [3]],
    "complete": ["false", "true", 1, 0, None],
    "command": [5, None, ["run"], True],
    "settings": [[], "x", 5],
    "written": [5, [], {}],
}


@pytest.mark.parametrize("field,value", [(f, v) for f, vs in WRONG.items() for v in vs])
def test_3_a_manifest_field_of_the_wrong_type_is_named(field, value, run_dir, tmp_path,
                                                         capsys):
    import shutil

    from moga.outputs import MANIFEST, check_set, manifest_problem, read_manifest

    r = tmp_path / "R"
    shutil.copytree(run_dir, r)
    doc = json.loads((r / MANIFEST).read_text())
    doc[field] = value
    (r / MANIFEST).write_text(json.dumps(doc))
    assert read_manifest(r) is None
    problem = manifest_problem(r)
    assert str(r / MANIFEST) in problem and f"field {field!r} must be" in problem
    from moga.errors import InputError

    with pytest.raises(InputError, match=f"field '{field}' must be"):
        check_set(r, "result.npz")
    # the readers: one line, exit 2
    assert _main(["schedule", r, "--out", tmp_path / "k"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"field '{field}' must be" in err and MANIFEST in err


@pytest.mark.parametrize("field,value", [("files", 5), ("previous", None),
                                         ("complete", "false"), ("command", 5)])
def test_3_a_writer_takes_a_damaged_manifest_as_no_set(field, value, tmp_path):
    """What ``moga run`` met as a traceback: the folder is taken as one without a set, whose
    files are left (none is removed) and replaced only where the new set has the name."""
    from moga.outputs import MANIFEST, output_set, read_manifest

    (tmp_path / "theirs.csv").write_text("keep")
    doc = {"command": "simulate", "settings": {}, "files": ["theirs.csv"], "complete": True}
    (tmp_path / MANIFEST).write_text(json.dumps(dict(doc, **{field: value})))
    with output_set(tmp_path, "run") as o:
        (o / "front.csv").write_text("1")
    assert (tmp_path / "theirs.csv").read_text() == "keep"
    assert read_manifest(tmp_path)["files"] == ["front.csv"]


@pytest.mark.parametrize("field", ["command", "files", "complete"])
def test_3_a_manifest_without_a_required_field_is_unreadable(field, tmp_path):
    from moga.outputs import MANIFEST, manifest_problem, read_manifest

    doc = {"command": "run", "files": ["a"], "complete": True}
    del doc[field]
    (tmp_path / MANIFEST).write_text(json.dumps(doc))
    assert read_manifest(tmp_path) is None
    assert f"has no field {field!r}" in manifest_problem(tmp_path)


def test_3_a_readable_manifest_has_no_problem(run_dir):
    from moga.outputs import manifest_problem

    assert manifest_problem(run_dir) is None
    assert manifest_problem(run_dir / "nowhere") is None



# -------------------------------------------- 5. every number of a federation has a bound
CLUSTER = {"name": "c", "nodes": 16, "speed": 1.0, "power_busy": 200.0, "power_idle": 50.0,
           "link": 1000.0}


def _write_federation(path, clusters):
    lines = ['name = "small"']
    for c in clusters:
        lines.append("[[cluster]]")
        lines += [f"{k} = {v!r}" if not isinstance(v, str) else f'{k} = "{v}"'
                  for k, v in c.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("field", ["nodes", "speed", "power_busy", "power_idle", "link"])
@pytest.mark.parametrize("value", [1e-300, 1e300])
def test_5_every_cluster_number_is_bounded_naming_file_and_key(field, value, tmp_path):
    if field == "nodes":
        value = 10**12 if value > 1 else 0  # nodes are integers
    path = _write_federation(tmp_path / "small.toml", [dict(CLUSTER, name="a"),
                                                       dict(CLUSTER, name="b", **{field: value})])
    with pytest.raises(ValueError) as e:
        moga.Federation.load(str(path))
    msg = str(e.value)
    assert msg.startswith(f"{path}: cluster 'b': {field} must be") and "\n" not in msg


def test_5_the_bounds_cover_every_cluster_field():
    from moga.model.platform import _FIELDS, _PLAUSIBLE

    assert set(_PLAUSIBLE) == set(_FIELDS)


def test_5_a_link_of_1e_minus_300_is_refused_by_simulate(tmp_path, capsys):
    path = _write_federation(tmp_path / "small.toml",
                             [dict(CLUSTER, name=n, speed=s, link=1e-300)
                              for n, s in (("a", 1.6), ("b", 1.0))])
    assert _main(["simulate", "--federation", path, "--n-jobs", 20, "--wide", "clip",
                  "--policy", "fcfs", "--out", tmp_path / "A"]) == 2
    err = capsys.readouterr().err
    assert f"{path}: cluster 'a': link must be in [0.001, 1e+09], got 1e-300" in err


def test_5_presets_resized_to_the_node_bound_keep_their_links_in_bounds():
    for name in ("default", "ricc", "curie", "machine"):
        fed = moga.Federation.preset(name)
        most = int(fed.total_nodes * 10**7 // fed.nodes.max())
        assert fed.scaled(most).link.max() <= 1e9


def test_5_a_cluster_cap_of_nan_in_toml_is_not_read_as_no_cap():
    with pytest.raises(ValueError, match=r"key 'power_cap' must be a number of W .*got nan"):
        moga.Federation.from_clusters([dict(CLUSTER, power_cap=float("nan"))], source="f.toml")


# --------------------------------------------------- 7. a NaN power cap is not "no cap"
@pytest.fixture(scope="module")
def arrays():
    fed = moga.Federation.preset("default")
    js = moga.load_default().jobset(n_jobs=40, federation=fed, batch=True)
    return js, fed, {k: np.array(getattr(fed, k)) for k in
                     ("nodes", "speed", "power_busy", "power_idle", "link")}


@pytest.mark.parametrize("cap", [float("nan"), np.float64("nan"), np.array(float("nan")),
                                 "300000", [1e6], object()])
def test_7_decode_refuses_a_power_cap_that_is_not_a_number(arrays, cap):
    import types

    import decoders

    js, fed, f = arrays
    with pytest.raises(ValueError, match="power_cap must be a finite number of W, got"):
        decoders.decode(js, types.SimpleNamespace(**f, power_cap=cap))
    J = len(js)
    args = [np.asarray(getattr(js, k)) for k in ("release", "tasks", "runtime", "sigma", "bw")]
    with pytest.raises(ValueError, match="power_cap must be a finite number of W, got"):
        decoders.decode_arrays(*args, *f.values(), np.arange(J), np.zeros((J, 4)),
                               power_cap=cap)


def test_7_a_nan_cap_message_says_nan(arrays):
    import types

    import decoders

    js, fed, f = arrays
    with pytest.raises(ValueError, match=r"^power_cap must be a finite number of W, got nan "):
        decoders.decode(js, types.SimpleNamespace(**f, power_cap=float("nan")))


def test_7_an_infinite_cap_is_still_no_cap_and_other_floats_refuse_nan(arrays):
    import types

    import decoders

    js, fed, f = arrays
    free = decoders.decode(js, fed).makespan
    assert decoders.decode(js, types.SimpleNamespace(**f, power_cap=float("inf"))).makespan \
        == free
    J, K = len(js), 4
    args = [np.asarray(getattr(js, k), dtype=float) for k in ("release", "tasks", "runtime",
                                                                 "sigma", "bw")]
    order, bl = np.arange(J), np.zeros((J, K))
    nan_j = np.full(J, np.nan)
    for kw in ({"power": nan_j}, {"cluster_caps": np.full(K, np.nan)},
               {"cluster_caps": ["a"] * K}, {"estimate": nan_j, "backfill": "easy"}):
        with pytest.raises(ValueError):
            decoders.decode_arrays(*args, *f.values(), order, bl, **kw)
    for i in range(5):  # every job array
        bad = list(args)
        bad[i] = bad[i].copy()
        bad[i][3] = np.nan
        with pytest.raises(ValueError, match=r"\[3\]"):
            decoders.decode_arrays(*bad, *f.values(), order, bl)
    for name in f:  # every cluster array
        g = dict(f, **{name: f[name].astype(float)})
        g[name][1] = np.nan
        with pytest.raises(ValueError, match=r"\[1\]|nodes"):
            decoders.decode_arrays(*args, *g.values(), order, bl)
    bl[2, 1] = np.nan
    with pytest.raises(ValueError, match="blacklist"):
        decoders.decode_arrays(*args, *f.values(), order, bl)


# ---------------------------- 11. decode names what a job-set or a federation is missing
@pytest.mark.parametrize("missing", ["release", "tasks", "runtime", "sigma", "bw"])
def test_11_a_job_set_without_a_field_is_named(arrays, missing):
    import types

    import decoders

    js, fed, _ = arrays
    j = types.SimpleNamespace(**{k: np.array(getattr(js, k)) for k in
                                 ("release", "tasks", "runtime", "sigma", "bw") if k != missing})
    with pytest.raises(TypeError, match=f"^decode\\(jobset, federation\\): the job-set has no "
                                        f"attribute '{missing}'"):
        decoders.decode(j, fed)


@pytest.mark.parametrize("missing", ["nodes", "speed", "power_busy", "power_idle", "link"])
def test_11_a_federation_without_a_field_is_named(arrays, missing):
    import types

    import decoders

    js, _, f = arrays
    fd = types.SimpleNamespace(**{k: v for k, v in f.items() if k != missing})
    with pytest.raises(TypeError, match=f"the federation has no attribute '{missing}'"):
        decoders.decode(js, fd)


def test_11_none_swapped_and_scalar_inputs_are_named(arrays):
    import types

    import decoders

    js, fed, _ = arrays
    with pytest.raises(TypeError, match="the federation has no attribute 'nodes'"):
        decoders.decode(js, None)
    with pytest.raises(TypeError, match="the job-set has no attribute 'release'"):
        decoders.decode(None, fed)
    with pytest.raises(TypeError, match="the arguments are swapped"):
        decoders.decode(fed, js)
    with pytest.raises(TypeError, match="no federation given"):
        decoders.decode(js)
    for field in ("release", "bw"):
        j = types.SimpleNamespace(**{k: np.array(getattr(js, k)) for k in
                                     ("release", "tasks", "runtime", "sigma", "bw")})
        setattr(j, field, np.float64(3.0))
        with pytest.raises(ValueError, match=f"the job-set's {field} must be a 1-D array"):
            decoders.decode(j, fed)
    fd = types.SimpleNamespace(**{k: np.array(getattr(fed, k)) for k in
                                  ("nodes", "speed", "power_busy", "power_idle")}, link=5.0)
    with pytest.raises(ValueError, match="the federation's link must be a 1-D array"):
        decoders.decode(js, fd)


# ------------------------------------------------ 9. the help and the guide name moga.POLICIES
def test_9_simulate_help_lists_exactly_the_catalogue():
    from moga.cli import build_parser

    sub = next(a for a in build_parser()._actions if hasattr(a, "choices")
               and isinstance(a.choices, dict) and "simulate" in a.choices)
    help_ = next(a.help for a in sub.choices["simulate"]._actions
                 if "--policy" in a.option_strings)
    listed = re.search(r"moga\.POLICIES: ([^)]*)\)", help_).group(1).split(", ")
    assert listed == list(moga.POLICIES)
    assert "moga.sim." not in help_


def test_9_the_guides_call_no_deprecated_name():
    moved = ("moga.sim.simulate", "moga.sim.POLICIES", "moga.sim.policy_info")
    for f in [ROOT / "README.md", *(ROOT / "docs").rglob("*.md")]:
        text = f.read_text()
        assert not [m for m in moved if m + "(" in text or m + "[" in text], f


# ------------------------------------------ 10. catalogue entries are checked when looked up
def test_10_a_catalogue_entry_that_is_not_a_policy_info_is_named(monkeypatch):
    js = moga.load_default().jobset(n_jobs=20, federation=moga.Federation.preset(),
                                    batch=False)
    monkeypatch.setitem(moga.POLICIES, "mine", "easy")
    with pytest.raises(TypeError, match=r"moga.POLICIES\['mine'\] is a str, not a "
                                        r"moga.sim.PolicyInfo"):
        moga.simulate(js, moga.Federation.preset(), "mine")
    with pytest.raises(TypeError, match="not a moga.sim.PolicyInfo"):
        moga.policies.policy_info("mine")
    import dataclasses

    monkeypatch.setitem(moga.POLICIES, "mine", dataclasses.replace(moga.POLICIES["easy"],
                                                                   name="mine"))
    assert moga.simulate(js, moga.Federation.preset(), "mine").makespan > 0


# ------------------------------- 12. every numeric option reads -inf as a value, not an option
def _parsers():
    """``(argv prefix, parser)`` of every command and sub-command, positionals filled in."""
    import argparse

    from moga.cli import build_parser

    out = []

    def walk(parser, prefix):
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs:
            fill = [("x" if a.nargs in (None, "+") else []) for a in parser._actions
                    if not a.option_strings and a.nargs != "?"]
            out.append((prefix, [f for f in fill if f]))
            return
        for name, sub in subs[0].choices.items():
            walk(sub, [*prefix, name])

    walk(build_parser(), [])
    return out


def _numeric_options():
    import argparse

    from moga.cli import build_parser

    cases = []
    for prefix, fill in _parsers():
        parser = build_parser()
        p = parser
        for name in prefix:
            p = next(a for a in p._actions
                     if isinstance(a, argparse._SubParsersAction)).choices[name]
        for a in p._actions:
            if a.option_strings and a.type not in (None, str) and a.nargs != 0:
                cases.append((prefix, fill, a.option_strings[-1]))
    return cases


def _parse(argv, capsys):
    from moga.cli import build_parser

    try:
        args = build_parser().parse_args(argv)
    except SystemExit as e:
        return e.code, capsys.readouterr().err.strip().splitlines()[-1]
    return 0, {k: repr(v) for k, v in vars(args).items() if not callable(v)}


@pytest.mark.parametrize("value", ["-inf", "-Infinity", "-nan", "-1", "-1e400", "-.5", "-5%",
                                   "-2kW"])
def test_12_every_numeric_option_reads_a_negative_value(value, capsys):
    cases = _numeric_options()
    assert len(cases) > 40 and any(o == "--cpu-budget" for _, _, o in cases)
    for prefix, fill, opt in cases:
        split = _parse([*prefix, *fill, opt, value], capsys)
        joined = _parse([*prefix, *fill, f"{opt}={value}"], capsys)
        assert split == joined, (prefix, opt, value)
        if split[0]:
            assert "expected one argument" not in split[1], (prefix, opt, value)


def test_12_cpu_budget_minus_inf_gets_its_message(capsys):
    with pytest.raises(SystemExit) as e:
        _main(["run", "--n-jobs", 20, "--cpu-budget", "-inf"])
    assert e.value.code == 2
    assert "--cpu-budget must be a finite number > 0, got -inf" in capsys.readouterr().err


# ----------------------------- 2, 6, 10. island runs: bounded, and every wait on Dask ends
@pytest.fixture(scope="module")
def tiny():
    fed = moga.Federation.preset("default")
    return moga.load_default().jobset(n_jobs=30, federation=fed), fed


def test_6_the_number_of_islands_is_bounded_before_any_is_built(tiny, capsys):
    import time

    from moga.evolution.islands import MAX_ISLANDS

    js, fed = tiny
    t0 = time.perf_counter()
    for n in (MAX_ISLANDS + 1, 10**7, 10**9):
        with pytest.raises(ValueError, match=f"islands must be at most {MAX_ISLANDS:,}, got"):
            moga.run(js, fed, pop_size=8, n_gen=4, seed=1, islands=n)
    assert time.perf_counter() - t0 < 5
    for n in (MAX_ISLANDS + 1, 1000000000):
        with pytest.raises(SystemExit) as e:
            _main(["run", "--n-jobs", 20, "--islands", n])
        assert e.value.code == 2
        assert f"--islands must be at most {MAX_ISLANDS:,}" in capsys.readouterr().err


@pytest.fixture
def cluster():
    distributed = pytest.importorskip("distributed")
    made = []

    def make(n_workers=1):
        cl = distributed.LocalCluster(n_workers=n_workers, threads_per_worker=1,
                                      processes=False, dashboard_address=None)
        c = distributed.Client(cl)
        made.append((c, cl))
        return c, cl

    yield make
    for c, cl in made:
        c.close()
        cl.close()


@pytest.mark.dask
def test_10_a_closed_client_is_named(tiny, cluster):
    js, fed = tiny
    c, cl = cluster()
    c.close()
    with pytest.raises(ValueError, match="^the Dask client is closed"):
        moga.run(js, fed, pop_size=8, n_gen=4, seed=1, islands=2, client=c)


@pytest.mark.dask
def test_2_a_scheduler_without_workers_is_an_error_after_a_bounded_wait(tiny, cluster,
                                                                         monkeypatch):
    import time

    from moga.evolution.islands import _Dask

    js, fed = tiny
    monkeypatch.setattr(_Dask, "WORKER_WAIT_S", 1.0)
    c, cl = cluster(n_workers=0)
    t0 = time.perf_counter()
    with pytest.raises(TimeoutError) as e:
        moga.run(js, fed, pop_size=8, n_gen=4, seed=1, islands=2, client=c)
    assert time.perf_counter() - t0 < 10
    assert f"the Dask scheduler at {c.scheduler.address} has 0 workers after 1 s" in str(e.value)


@pytest.mark.dask
@pytest.mark.parametrize("n_workers", [0, 1])
def test_2_ctrl_c_before_the_first_epoch_ends_the_run(tiny, cluster, n_workers):
    """The first Ctrl-C (the caller's flag) ends a run whose first epoch cannot finish (no
    worker) or has not finished yet, within about a second, its futures cancelled."""
    import time

    js, fed = tiny
    c, cl = cluster(n_workers=n_workers)
    t0 = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        # (the time limit ends the epoch that a thread worker cannot cancel, for teardown)
        moga.run(js, fed, pop_size=8, n_gen=10**6, seed=1, islands=2, client=c,
                 migration={"interval": 10**6}, time_limit=4.0,
                 interrupt=lambda: time.perf_counter() - t0 > 1.0)
    assert time.perf_counter() - t0 < 3
    time.sleep(0.5)
    assert not [k for k in c.who_has() if str(k).startswith("moga-islands") and "-e" in str(k)]


@pytest.mark.dask
def test_10_a_cluster_lost_mid_run_is_named_and_the_last_epochs_front_kept(tiny, cluster):
    js, fed = tiny
    c, cl = cluster()
    epochs = []

    def close_after_two(gen, n_evals, hv):
        epochs.append(gen)
        if len(epochs) == 2:
            cl.close()

    with pytest.warns(RuntimeWarning, match=r"the Dask scheduler at \S+ was lost .*: the "
                                            r"island run ends with the front of its last "
                                            r"finished epoch \(2\)") as w:
        res = moga.run(js, fed, pop_size=8, n_gen=10**6, seed=1, islands=2, client=c,
                       migration={"interval": 2}, on_generation=close_after_two)
    assert "\n" not in str(w[0].message)
    assert res.info["stopped_by"] == "cluster lost" and res.info["epochs"] == 2
    assert res.summary()["partial"]
    assert len(res.F) >= 1 and np.isfinite(res.F).all()


# ------------------------------------------- 4. the cluster guide's script runs as written
@pytest.mark.slow
@pytest.mark.dask
def test_4_the_cluster_guides_local_cluster_block_runs_as_a_script(tmp_path):
    import subprocess
    import sys

    pytest.importorskip("distributed")
    text = (ROOT / "docs" / "guide" / "cluster.md").read_text()
    section = text[text.index("## On one machine"):text.index("## On a Slurm cluster")]
    block = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    assert 'if __name__ == "__main__":' in block
    script = tmp_path / "islands.py"
    script.write_text(block.replace("n_gen=200", "n_gen=3").replace("pop_size=100",
                                                                    "pop_size=8"))
    p = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                       cwd=tmp_path, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    assert "the same front without Dask: True" in p.stdout


# ------------------------------------ 13. two moga tune on one storage leave each other be
def _study(tmp_path, name="s"):
    optuna = pytest.importorskip("optuna")
    from moga.experiments.tuning import _open_study, open_storage

    storage = str(tmp_path / "j.log")
    args = (optuna, name, storage, optuna.samplers.RandomSampler(seed=0),
            optuna.pruners.NopPruner(), {"k": 1})
    return optuna, (lambda: _open_study(*args)), open_storage


@pytest.mark.parametrize("owner,stale", [("live", False), ("dead", True), ("other-host", False),
                                         ("none-new", False), ("none-old", True)])
def test_13_resume_fails_only_trials_whose_process_is_gone(tmp_path, owner, stale,
                                                          monkeypatch):
    import subprocess
    import sys

    from moga.experiments import tuning

    optuna, open_, _ = _study(tmp_path)
    study = open_()
    trial = study.ask()
    trial.suggest_float("x", 0, 1)
    if owner == "live":
        trial.set_user_attr(tuning.OWNER, tuning._owner())
    elif owner == "dead":
        p = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                           capture_output=True, text=True, check=True)
        host = tuning._owner().rpartition(":")[0]
        trial.set_user_attr(tuning.OWNER, f"{host}:{p.stdout.strip()}")
    elif owner == "other-host":
        trial.set_user_attr(tuning.OWNER, "elsewhere.example:1")
    elif owner == "none-old":
        monkeypatch.setattr(tuning, "UNOWNED_STALE_S", -1.0)
    again = open_()  # what a second moga tune on the storage does
    states = [t.state for t in again.trials]
    if stale:
        assert states == [optuna.trial.TrialState.FAIL, optuna.trial.TrialState.WAITING]
    else:
        assert states == [optuna.trial.TrialState.RUNNING]
        study.tell(trial, 0.5)  # the first process records its trial
        assert open_().trials[0].state == optuna.trial.TrialState.COMPLETE


def test_13_a_trial_finished_by_another_process_is_one_clear_error(tmp_path, monkeypatch):
    optuna = pytest.importorskip("optuna")
    from moga.experiments import tuning

    fed = moga.Federation.preset()
    js = moga.load_default().jobset(n_jobs=20, federation=fed)

    def hijacked(*args, **kwargs):  # another process fails the trial under way
        study = optuna.load_study(study_name="moga-tune",
                                  storage=tuning.open_storage(str(tmp_path / "j.log")))
        t = next(t for t in study.trials if t.state == optuna.trial.TrialState.RUNNING)
        study._storage.set_trial_state_values(t._trial_id, optuna.trial.TrialState.FAIL)
        return type("R", (), {"info": {}, "hv": 0.5})()

    monkeypatch.setattr(tuning, "run", hijacked)
    from moga.errors import InputError

    with pytest.raises(InputError, match=r"j.log: a trial this run was computing was marked "
                                         r"FAIL by another process sharing the storage"):
        tuning.tune([js], fed, n_trials=2, seeds=1, budget=400, storage=str(tmp_path / "j.log"),
                    progress=False)
