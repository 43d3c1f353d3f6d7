"""GA parameter tuning with Optuna."""

from __future__ import annotations

import numpy as np
import pytest

import moga
from moga.cli import main
from moga.experiments.sweep import config_from_dict
from moga.experiments.tuning import DEFAULT_SPACE, plot_study

#: The default space with populations small enough for the tests' budgets (>= 2 generations).
SMALL = {**DEFAULT_SPACE, "pop_size": ("int", 10, 30, 10)}


@pytest.fixture(scope="module")
def jobsets():
    fed = moga.Federation.preset()
    tr = moga.load_default()
    return [tr.jobset(start=0, n_jobs=40, federation=fed),
            tr.jobset(start=900, n_jobs=40, federation=fed)], fed


def test_small_study_resumes_without_repeating_trials(tmp_path, jobsets):
    jss, fed = jobsets
    store = tmp_path / "study.log"
    r1 = moga.tune(jss, fed, n_trials=4, seeds=1, budget=120, storage=store, study_name="s", space=SMALL)
    first = [(t["number"], t["state"], t["value"]) for t in r1.trials()]
    assert len(first) == 4
    r2 = moga.tune(jss, fed, n_trials=6, seeds=1, budget=120, storage=store, study_name="s", space=SMALL)
    again = [(t["number"], t["state"], t["value"]) for t in r2.trials()]
    assert len(again) == 6 and again[:4] == first
    r3 = moga.tune(jss, fed, n_trials=6, seeds=1, budget=120, storage=store, study_name="s", space=SMALL)
    assert len(r3.trials()) == 6


def test_sqlite_storage(tmp_path, jobsets):
    jss, fed = jobsets
    url = f"sqlite:///{tmp_path / 't.db'}"
    moga.tune(jss[:1], fed, n_trials=2, seeds=1, budget=60, storage=url, study_name="q", space=SMALL)
    r = moga.tune(jss[:1], fed, n_trials=3, seeds=1, budget=60, storage=url, study_name="q", space=SMALL)
    assert len(r.trials()) == 3


def test_best_parameters_run_and_respect_the_budget(tmp_path, jobsets):
    jss, fed = jobsets
    r = moga.tune(jss, fed, n_trials=3, seeds=[1, 2], budget=150, sampler_seed=3, space=SMALL)
    p = r.best_params
    assert p.pop_size * p.n_gen <= 150
    assert set(DEFAULT_SPACE) <= set(r.study.best_trial.params)
    path = tmp_path / "best.toml"
    path.write_text(r.to_toml())
    res = moga.run(jss[0], fed, params=path, seed=5)
    assert res.params == moga.GAParams.from_toml(path).for_moga()  # as the run resolved it
    cfg = config_from_dict({"trace": [{"path": "bundled", "n_jobs": 10, "starts": [0]}],
                            "algorithms": {"MOGA": {"params": str(path)}}}, "t.toml")
    assert cfg.algorithms["MOGA"]["pop_size"] == p.pop_size
    assert r.best_value == pytest.approx(max(t["value"] for t in r.trials()
                                             if t["state"] == "COMPLETE"))


def test_seeded_sampler_repeats(jobsets):
    jss, fed = jobsets
    a = moga.tune(jss[:1], fed, n_trials=3, seeds=1, budget=60, sampler_seed=7, prune=False, space=SMALL)
    b = moga.tune(jss[:1], fed, n_trials=3, seeds=1, budget=60, sampler_seed=7, prune=False, space=SMALL)
    assert [t["value"] for t in a.trials()] == [t["value"] for t in b.trials()]


def test_custom_space_and_errors(jobsets):
    jss, fed = jobsets
    space = {"pop_size": ("int", 10, 20, 10), "blacklist_crossover": ("categorical", ["blend"])}
    r = moga.tune(jss[:1], fed, space=space, n_trials=2, seeds=1, budget=40)
    assert r.best_params.blacklist_crossover == "blend"
    with pytest.raises(ValueError, match="unknown GA parameter 'n_gen'"):
        moga.tune(jss, fed, space={"n_gen": ("int", 1, 5)}, n_trials=1)
    with pytest.raises(ValueError, match="unknown kind"):
        moga.tune(jss, fed, space={"pop_size": ("normal", 1, 5)}, n_trials=1, budget=20)
    with pytest.raises(ValueError, match="budget"):
        moga.tune(jss, fed, budget=2)
    # Trials of one study must have equal budgets: a population above half the budget is
    # refused, naming the largest population the space can draw.
    with pytest.raises(ValueError, match=r"pop_size up to 200: 400 evaluations"):
        moga.tune(jss, fed, budget=399, n_trials=1)
    with pytest.raises(ValueError, match=r"pop_size up to 30"):
        moga.tune(jss, fed, budget=59, n_trials=1, space=SMALL)


def test_plots_and_cli(tmp_path, jobsets):
    jss, fed = jobsets
    r = moga.tune(jss[:1], fed, n_trials=3, seeds=1, budget=60, space=SMALL)
    names = sorted(p.name for p in plot_study(r, tmp_path / "plots"))
    assert names == ["history.png", "importances.png"]
    out = tmp_path / "cli"
    assert main(["tune", "--n-jobs", "30", "--starts", "0", "700", "--trials", "2", "--seeds",
                 "1", "--budget", "400", "--out", str(out)]) == 0
    assert moga.GAParams.from_toml(out / "best.toml").pop_size >= 20
    assert len((out / "trials.csv").read_text().splitlines()) == 3
    assert np.isfinite(float((out / "tune.json").read_text().split('"best_value": ')[1]
                             .split(",")[0]))
