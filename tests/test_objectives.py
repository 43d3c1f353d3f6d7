"""The catalogue of objectives (moga.model.objectives): every entry agrees with the schedule's
own metrics, the decode's per-job outputs match the plain-Python twin, a toy objective added
here alone runs end to end, and the command line takes any set."""

from __future__ import annotations

import json

import numpy as np
import pytest
from naive import naive_decode, naive_easy_federated, naive_power_profile

import moga
from moga.cli import main
from moga.evolution.problem import SchedulingProblem
from moga.model.objectives import (
    CATALOGUE,
    Decoded,
    Objective,
    check_objectives,
    register,
    submit_reference,
    values_of_schedule,
)

#: Each built-in entry as the schedule itself reports it (moga.Schedule and its summary),
#: written apart from the catalogue's formulas.
FROM_SCHEDULE = {
    "makespan": lambda s: s.makespan,
    "energy": lambda s: s.energy,
    "flowtime": lambda s: s.flowtime,
    "makespan+flowtime": lambda s: s.makespan + s.flowtime,
    "bsld": lambda s: s.summary()["mean_bounded_slowdown"],
    "wait": lambda s: s.summary()["mean_wait_s"],
    "edp": lambda s: s.energy * s.makespan,
    "peak_power": lambda s: float(np.max(s.power_profile()[1])),
}
BUILT_IN = tuple(FROM_SCHEDULE)


@pytest.fixture(scope="module")
def setup():
    fed = moga.Federation.preset()
    js = moga.load_default().jobset(start=300, n_jobs=90, federation=fed, seed=5)
    return js, fed


def _population(js, fed, P, seed):
    J, K = len(js), fed.n_clusters
    rng = np.random.default_rng(seed)
    orders = np.array([rng.permutation(J) for _ in range(P)], dtype=float)
    bls = rng.random((P, J * K)) * (rng.random((P, J * K)) < 0.3)
    return np.hstack([orders, bls])


def test_the_catalogue_holds_the_offline_objectives():
    assert set(BUILT_IN) <= set(CATALOGUE)
    for name in BUILT_IN:
        o = CATALOGUE[name]
        assert o.direction == "min" and o.name == name and o.description


@pytest.mark.parametrize("backfill", ["none", "easy"])
@pytest.mark.parametrize("model", ["fluid", "at_start"])
def test_every_entry_agrees_with_the_schedule(setup, backfill, model):
    js, fed = setup
    p = SchedulingProblem(js, fed, model=model, objectives=BUILT_IN, backfill=backfill)
    X = _population(js, fed, 6, seed=2 * ("none", "easy").index(backfill) + (model == "fluid"))
    F, _ = p.decode(X)
    assert F.shape == (6, len(BUILT_IN))
    for i in range(len(X)):
        order, bl = p.split(X[i:i + 1])
        s = moga.evaluate(js, fed, order[0], bl[0], model=model, backfill=backfill)
        want = [FROM_SCHEDULE[n](s) for n in BUILT_IN]
        np.testing.assert_allclose(F[i], want, rtol=1e-9, err_msg=f"row {i}")
        np.testing.assert_allclose(values_of_schedule(s, BUILT_IN), want, rtol=1e-12)


@pytest.mark.parametrize("name", ["bsld", "peak_power", "edp"])
def test_each_entry_alone_agrees_with_all_together(setup, name):
    js, fed = setup
    X = _population(js, fed, 4, seed=11)
    together = SchedulingProblem(js, fed, objectives=BUILT_IN).decode(X)[0]
    alone = SchedulingProblem(js, fed, objectives=("energy", name)).decode(X)[0]
    np.testing.assert_array_equal(alone[:, 1], together[:, BUILT_IN.index(name)])


def test_the_default_decode_asks_for_no_per_job_output(setup):
    js, fed = setup
    p = SchedulingProblem(js, fed)
    X = _population(js, fed, 3, seed=2)
    F, b = p.decode(X)
    assert b.starts is None and b.finishes is None and b.alloc is None
    np.testing.assert_array_equal(F, np.column_stack([b.makespan, b.energy]))
    _, b = SchedulingProblem(js, fed, objectives=("makespan", "wait")).decode(X)
    assert b.starts is not None and b.finishes is None and b.alloc is None


@pytest.mark.parametrize("model", ["fluid", "at_start"])
def test_batch_finishes_match_the_twin_in_order(setup, model):
    js, fed = setup
    X = _population(js, fed, 3, seed=4)
    p = SchedulingProblem(js, fed, model=model)
    orders, bls = p.split(X)
    b = moga.evaluate_batch(js, fed, orders, bls, model=model, finishes=True, starts=True,
                            allocations=True)
    for i in range(len(X)):
        ref = naive_decode(js.release, js.tasks, js.runtime, js.sigma, js.bw, fed.nodes,
                           fed.speed, fed.power_busy, fed.power_idle, fed.link, orders[i],
                           bls[i], model)
        np.testing.assert_allclose(b.finishes[i], ref["finish"], rtol=1e-9, atol=1e-9)
        s = moga.evaluate(js, fed, orders[i], bls[i], model=model)
        np.testing.assert_array_equal(b.finishes[i], s.finish)
        # The peak of the twin's power profile (its maxima are at start instants).
        peak = max(total for _, total, _ in naive_power_profile(
            ref["start"], ref["finish"], ref["alloc"], js.power, fed.power_busy,
            fed.power_idle, fed.nodes))
        d = Decoded(js, fed, b.makespan[i:i + 1], b.energy[i:i + 1], b.flowtime[i:i + 1],
                    b.starts[i:i + 1], b.finishes[i:i + 1], b.alloc[i:i + 1])
        assert CATALOGUE["peak_power"].compute(d)[0] == pytest.approx(peak, rel=1e-9)


def test_batch_finishes_match_the_easy_twin(setup):
    js, fed = setup
    X = _population(js, fed, 3, seed=6)
    orders, bls = SchedulingProblem(js, fed).split(X)
    b = moga.evaluate_batch(js, fed, orders, bls, model="at_start", backfill="easy",
                            finishes=True)
    for i in range(len(X)):
        _, finish, _, _ = naive_easy_federated(js.release, js.tasks, js.runtime, js.sigma,
                                               js.bw, fed.nodes, fed.speed, fed.power_busy,
                                               fed.link, orders[i], bls[i],
                                               pidle=fed.power_idle)
        np.testing.assert_allclose(b.finishes[i], finish, rtol=1e-9, atol=1e-6)


def test_unknown_or_repeated_objectives_are_refused_with_the_known_ones(setup):
    js, fed = setup
    with pytest.raises(ValueError, match=r"unknown objectives \['slowness'\]; the catalogue has .*bsld"):
        SchedulingProblem(js, fed, objectives=("makespan", "slowness"))
    with pytest.raises(ValueError, match="distinct"):
        check_objectives(("energy", "energy"))
    with pytest.raises(ValueError, match="give 2 or 3 objectives, got 1"):
        check_objectives("makespan", counts=(2, 3))
    assert check_objectives(" makespan, bsld ") == ("makespan", "bsld")
    with pytest.raises(ValueError, match="direction must be 'min'"):
        Objective("gain", "", lambda d: d.energy, direction="max")
    with pytest.raises(ValueError, match="needs must be among"):
        Objective("x", "", lambda d: d.energy, needs=("reserve",))
    with pytest.raises(ValueError, match="in the catalogue already"):
        register(Objective("makespan", "s", lambda d: d.makespan))


def test_the_submit_reference_is_the_runs(setup):
    js, fed = setup
    names = ("makespan", "energy", "bsld")
    res = moga.run(js, fed, pop_size=8, n_gen=2, seed=3, objectives=names)
    np.testing.assert_allclose(res.reference, submit_reference(js, fed, names), rtol=1e-12)


def _late_jobs(d):
    """A toy objective: jobs finishing more than an hour after their release."""
    late = d.need("finish") - d.jobset.release > 3600.0
    return late.sum(axis=1).astype(float)


def test_a_toy_objective_with_one_entry_runs_end_to_end(setup, monkeypatch):
    js, fed = setup
    toy = Objective("late_jobs", "", _late_jobs, "jobs finished over an hour after release",
                    needs=("finish",))
    monkeypatch.setitem(CATALOGUE, toy.name, toy)
    res = moga.run(js, fed, pop_size=10, n_gen=4, seed=1, objectives=("energy", "late_jobs"))
    assert res.objectives == ("energy", "late_jobs") and res.F.shape[1] == 2
    for i in range(len(res.F)):
        s = res.schedule(i)
        late = int(np.sum(s.finish - js.release > 3600.0))
        assert res.F[i, 1] == late and res.F[i, 0] == pytest.approx(s.energy, rel=1e-9)
    assert 0 < res.hv


def test_three_objectives_run_and_decode_to_their_values(setup):
    js, fed = setup
    names = ("makespan", "energy", "bsld")
    res = moga.run(js, fed, pop_size=10, n_gen=4, seed=2, objectives=names)
    assert res.F.shape[1] == 3 and 0 <= res.knee() < len(res.F)
    for i in range(len(res.F)):
        np.testing.assert_allclose(values_of_schedule(res.schedule(i), names), res.F[i],
                                   rtol=1e-9)


def test_the_command_line_takes_any_set(tmp_path, capsys):
    out = tmp_path / "o"
    assert main(["run", "--n-jobs", "30", "--pop", "8", "--gen", "3", "--out", str(out),
                 "--no-progress", "--objectives", "makespan,energy,bsld"]) == 0
    lines = (out / "front.csv").read_text().splitlines()
    assert lines[0].startswith("index,makespan_s,energy_J,bsld,makespan_h,energy_MWh,")
    assert "bsld_change_pct" in lines[0]
    d = json.loads((out / "run.json").read_text())
    assert d["objectives"] == ["makespan", "energy", "bsld"]
    assert (out / "front.png").stat().st_size > 0
    printed = capsys.readouterr().out
    assert "knee:" in printed and "bsld" in printed
    # moga schedule checks a member of any set against its recorded objectives.
    assert main(["schedule", str(out), "--point", "0", "--out", str(tmp_path / "s")]) == 0


def test_the_command_line_refuses_an_unknown_objective(tmp_path, capsys):
    for bad, says in (("makespan,slowness", "['slowness']; the catalogue has makespan, "),
                      ("makespan", "give 2 or 3 objectives, got 1"),
                      ("makespan,energy,bsld,wait", "give 2 or 3 objectives, got 4")):
        with pytest.raises(SystemExit) as e:
            main(["run", "--n-jobs", "20", "--pop", "6", "--gen", "2", "--out",
                  str(tmp_path / "o"), "--objectives", bad])
        assert e.value.code == 2
        err = capsys.readouterr().err
        assert "argument --objectives" in err and says in err and "Traceback" not in err


def test_an_objective_the_submit_order_brings_to_zero_is_normalised_by_its_floor():
    from moga.model.objectives import CATALOGUE, Objective, submit_reference

    fed = moga.Federation.preset()
    js = moga.load_default().jobset(n_jobs=8, federation=fed, batch=False)
    assert submit_reference(js, fed, ("makespan", "wait"))[1] == 0.0  # no job waits
    res = moga.run(js, fed, pop_size=8, n_gen=3, objectives=("makespan", "wait"))
    assert res.reference[1] == CATALOGUE["wait"].floor > 0
    assert 0 < res.hv < float("inf")
    with pytest.raises(ValueError, match="floor must be a finite number >= 0"):
        Objective("bad", "s", lambda d: d.makespan, floor=-1.0)
