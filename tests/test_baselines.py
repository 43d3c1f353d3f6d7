"""Baselines and the comparison."""

from __future__ import annotations

import json

import numpy as np
import pytest

import moga
from moga.baselines import HEURISTICS, compare, ga_mf, heuristic, random_search, submit_order
from moga.cli import main


@pytest.fixture(scope="module")
def setup():
    fed = moga.Federation.preset()
    js = moga.load_default().jobset(start=300, n_jobs=60, federation=fed, seed=1)
    return js, fed


@pytest.mark.parametrize("name", list(HEURISTICS))
def test_heuristics_are_decodes_of_the_submit_order(setup, name):
    js, fed = setup
    s = heuristic(js, fed, name)
    backfill, rule = HEURISTICS[name]
    assert (s.backfill, s.rule) == (backfill, rule)
    assert not s.blacklist.any()
    np.testing.assert_array_equal(s.order, submit_order(js))
    if name == "FCFS":
        ref = moga.evaluate(js, fed)
        assert (s.makespan, s.energy) == (ref.makespan, ref.energy)


def test_easy_is_at_least_as_fast_in_flowtime_here(setup):
    js, fed = setup
    assert heuristic(js, fed, "EASY").flowtime <= heuristic(js, fed, "FCFS").flowtime


def test_random_search_budget_and_front(setup):
    js, fed = setup
    fr = random_search(js, fed, n_evals=150, seed=3, batch=40)
    assert fr.n_evals == 150
    F = fr.F
    for i in range(len(F)):
        assert not np.any(np.all(F <= F[i], axis=1) & np.any(F < F[i], axis=1))
    s = fr.schedule(0)
    assert (s.makespan, s.energy) == tuple(F[0])
    again = random_search(js, fed, n_evals=150, seed=3, batch=40)
    np.testing.assert_array_equal(fr.F, again.F)
    with pytest.raises(ValueError):
        random_search(js, fed, n_evals=0)


def test_ga_mf_improves_on_or_keeps_the_submit_order(setup):
    js, fed = setup
    fr = ga_mf(js, fed, pop_size=12, n_gen=6, seed=2)
    s = fr.schedule(0)
    fcfs = heuristic(js, fed, "FCFS")
    assert s.makespan + s.flowtime <= fcfs.makespan + fcfs.flowtime
    assert fr.X.shape == (1, len(js)) and not s.blacklist.any()


def test_moga_without_blacklist_uses_empty_blacklists(setup):
    js, fed = setup
    r = moga.run(js, fed, pop_size=10, n_gen=4, use_blacklist=False)
    assert r.X.shape[1] == len(js)
    for i in range(len(r.F)):
        s = r.schedule(i)
        assert not s.blacklist.any() and (s.makespan, s.energy) == tuple(r.F[i])


def test_compare_table_and_csv(setup):
    js, fed = setup
    c = compare(js, fed, pop_size=10, n_gen=4, seed=1)
    names = [r["algorithm"] for r in c.rows]
    assert names == list(HEURISTICS) + ["MOGA", "MOGA without blacklist", "random search", "GA-MF"]
    fcfs = c.rows[0]
    assert fcfs["hv"] == pytest.approx(0.01)  # the reference schedule itself
    # MOGA's evaluations: pop x gen at most, plus the heuristics' allocation seeds that
    # its archive starts with and the seed candidates it selects from (at most 9 heuristic
    # orders x 27 grid blacklists and their fitted copies); random search gets the same budget.
    assert 40 < c.info["n_evals_budget"] <= 40 + 3 + 9 * 27 * 2
    lines = c.to_csv().splitlines()
    assert lines[0].startswith("algorithm,kind,makespan_h") and len(lines) == 9
    assert "mean BSLD" in c.table()
    with pytest.raises(ValueError, match="unknown algorithm"):
        compare(js, fed, algorithms=["SJF"])


def test_compare_counts_the_jobs_killed_at_their_request():
    js = moga.load_default().jobset(n_jobs=60, federation=moga.Federation.preset(),
                                    batch=False).kill_at_request()
    assert js.killed.any()
    c = compare(js, moga.Federation.preset(), pop_size=8, n_gen=2, seed=1,
                algorithms=["FCFS", "MOGA"])
    fcfs = c.rows[0]
    r = c.results["FCFS"]
    assert fcfs["n_killed"] == int(r.schedule(r.knee()).killed.sum()) > 0
    assert c.to_csv().splitlines()[0].endswith(",n_killed")


def test_compare_cli(tmp_path, capsys):
    out = tmp_path / "c"
    assert main(["compare", "--n-jobs", "30", "--pop", "6", "--gen", "2", "--out", str(out),
                 "--algorithms", "FCFS", "EASY", "MOGA"]) == 0
    d = json.loads((out / "compare.json").read_text())
    assert [r["algorithm"] for r in d["rows"]] == ["FCFS", "EASY", "MOGA"]
    assert (out / "compare.png").stat().st_size > 0
    assert "EASY" in capsys.readouterr().out
