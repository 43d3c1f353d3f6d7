"""The default search by job-set size (moga.evolution.sizing): what it picks, and what wins."""

from __future__ import annotations

import json

import numpy as np
import pytest

import moga
from moga.cli import main
from moga.evolution import sizing
from moga.evolution.operators import ScheduleSampling
from moga.evolution.params import BUDGET, EASY_BUDGET, GAParams
from moga.evolution.problem import SchedulingProblem
from moga.evolution.search import _submit_individual


@pytest.fixture(scope="module")
def setup():
    fed = moga.Federation.preset()
    js = moga.load_default().jobset(start=100, n_jobs=30, federation=fed, seed=2)
    return js, fed


@pytest.fixture
def measured(monkeypatch):
    """The measured rule on the tests' small job-sets."""
    monkeypatch.setattr(sizing, "SMALL_JOBS", 0)


def _choose(setup, budget, params=None):
    js, fed = setup
    problem = SchedulingProblem(js, fed)
    return sizing.choose_default(params or GAParams(), problem, _submit_individual(js, fed),
                                 budget)


def test_a_small_job_set_keeps_todays_default_bit_for_bit(setup):
    js, fed = setup
    res = moga.run(js, fed, seed=3)
    today = moga.run(js, fed, seed=3, pop_size=EASY_BUDGET[0], n_gen=EASY_BUDGET[1],
                     params={"easy_search": True})
    np.testing.assert_array_equal(res.F, today.F)
    np.testing.assert_array_equal(res.X, today.X)
    assert (res.params.pop_size, res.params.n_gen) == EASY_BUDGET and res.params.easy_search
    assert res.params.seed_candidates is None
    d = res.info["default"]
    assert d["rule"] == "small" and d["search"] == "easy search" and d["n_jobs"] == len(js)
    assert today.info["default"]["rule"] == "explicit"


def test_up_to_small_jobs_nothing_is_measured(setup, monkeypatch):
    def boom(*a):
        raise AssertionError("measured a small job-set")

    monkeypatch.setattr(sizing, "_decode_cpu", boom)
    params, choice = _choose(setup, None)
    assert choice.rule == "small" and choice.easy_decode_s is None
    assert (params.pop_size, params.n_gen, params.easy_search) == (*EASY_BUDGET, True)


def test_a_budget_given_binds_a_small_job_set_too(setup, monkeypatch):
    """A CPU budget the caller gives makes the rule measure and pick at any size: a
    generous one gives today's default run bit for bit, a tight one stops it."""
    from types import SimpleNamespace

    from moga.evolution import search as search_mod

    js, fed = setup
    assert len(js) <= sizing.SMALL_JOBS
    _, choice = _choose(setup, 1e9)
    assert choice.rule == "measured" and choice.easy_decode_s > 0
    assert (choice.pop_size, choice.n_gen, choice.seed_candidates) == (*EASY_BUDGET, None)
    monkeypatch.setattr(sizing, "EASY_BUDGET", (EASY_BUDGET[0], 6))
    small = moga.run(js, fed, seed=3)
    roomy = moga.run(js, fed, seed=3, cpu_budget=1e9)
    assert small.info["default"]["rule"] == "small"
    assert roomy.info["default"]["rule"] == "measured"
    assert roomy.info["stopped_by"] == "generations"
    np.testing.assert_array_equal(small.F, roomy.F)
    np.testing.assert_array_equal(small.X, roomy.X)
    # One second per clock reading: a budget of 4 s stops the run at its floor, which
    # this test lowers to 2 generations.
    monkeypatch.setattr(sizing, "MIN_EASY_GEN", 2)
    clock = iter(range(1, 10**6))
    monkeypatch.setattr(search_mod, "time", SimpleNamespace(
        process_time=lambda: float(next(clock)), perf_counter=search_mod.time.perf_counter))
    tight = moga.run(js, fed, seed=3, cpu_budget=4.0)
    assert tight.info["default"]["rule"] == "measured"
    assert tight.info["stopped_by"] == "cpu budget"
    assert 2 <= tight.history["n_gen"][-1] < 6


def test_a_budget_the_easy_search_overruns_gets_the_in_order_search_within_it(setup,
                                                                           measured):
    _, easy = _choose(setup, 1e9)
    assert easy.rule == "measured" and easy.search == "easy search"
    assert (easy.pop_size, easy.n_gen, easy.seed_candidates) == (*EASY_BUDGET, None)
    assert easy.estimated_gen == EASY_BUDGET[1]
    assert easy.easy_decode_s > 0 and easy.in_order_decode_s > 0
    assert easy.estimated_cpu_s <= easy.cpu_budget
    # A budget a tenth of the EASY search's estimate: the in-order search, within it.
    budget = easy.easy_search_cpu_s / 10
    params, inorder = _choose(setup, budget)
    assert inorder.search == "in-order search" and params.easy_search is False
    assert params.pop_size == BUDGET[0] == inorder.pop_size
    assert params.n_gen == inorder.n_gen == BUDGET[1]
    assert sizing.MIN_GEN <= inorder.estimated_gen <= BUDGET[1]
    if inorder.estimated_gen > sizing.MIN_GEN:
        assert inorder.estimated_cpu_s <= budget
    # A budget too small for anything: the fewest generations, the seeding capped.
    params, least = _choose(setup, 1e-6)
    assert least.estimated_gen == sizing.MIN_GEN and least.seed_candidates == 1


@pytest.fixture
def fixed_costs(monkeypatch):
    """The measured rule with the submit order's decodes at fixed CPU seconds (EASY, in
    order) and the seeding uncapped, so that the budgets below fall where the tests mean
    them to."""
    monkeypatch.setattr(sizing, "SMALL_JOBS", 0)
    monkeypatch.setattr(sizing, "SEED_SHARE", 1.0)
    monkeypatch.setattr(sizing, "measure", lambda problem, submit: (0.01, 0.002))
    return 0.01, 0.002


def test_the_estimate_counts_seeding_and_members(fixed_costs):
    te, ti = fixed_costs
    easy, inorder = sizing.member_cost(True, te, ti), sizing.member_cost(False, te, ti)
    assert easy == pytest.approx(sizing.EASY_FACTOR * te + ti)
    assert inorder == pytest.approx(sizing.IN_ORDER_FACTOR * ti)
    seeding = 5 * te + sizing.SEED_FACTOR * sizing.SEED_PAIRS * easy
    assert sizing.estimate(True, te, ti, 0, 0, None) == pytest.approx(seeding)
    assert sizing.estimate(True, te, ti, 50, 7, None) == pytest.approx(seeding + 350 * easy)
    assert sizing.estimate(False, te, ti, 10, 3, 4) == pytest.approx(
        5 * te + sizing.SEED_FACTOR * 4 * inorder + 30 * inorder)
    # The generations a budget buys: the most whose estimate fits it.
    for easy_search in (True, False):
        budget = sizing.estimate(easy_search, te, ti, 50, 123, None) + 1e-9
        gen = sizing.fitted_generations(easy_search, te, ti, 50, None, budget)
        assert gen == 123
        assert sizing.fitted_generations(easy_search, te, ti, 50, None, 1e-6) == 0


def test_a_budget_short_of_the_easy_search_cuts_its_generations(setup, fixed_costs):
    te, ti = fixed_costs
    pop = EASY_BUDGET[0]
    full = sizing.estimate(True, te, ti, pop, EASY_BUDGET[1], None)
    _, whole = _choose(setup, full * 1.001)
    assert whole.search == "easy search" and whole.n_gen == EASY_BUDGET[1]
    assert whole.easy_search_cpu_s == pytest.approx(full)
    for gen in (sizing.MIN_EASY_GEN, 100, EASY_BUDGET[1] - 1):
        budget = sizing.estimate(True, te, ti, pop, gen, None) * 1.0001
        params, cut = _choose(setup, budget)
        assert cut.search == "easy search" and params.easy_search is True
        # The search's full generations, the CPU stop ending it; the estimate's count apart.
        assert (params.pop_size, params.n_gen) == (cut.pop_size, cut.n_gen) == (pop,
                                                                              EASY_BUDGET[1])
        assert cut.estimated_gen == gen
        assert cut.estimated_cpu_s <= budget < cut.easy_search_cpu_s
        assert cut.estimated_cpu_s == pytest.approx(sizing.estimate(True, te, ti, pop, gen,
                                                                    None))
    # Fewer generations than the floor: the in-order search, with all the budget buys.
    budget = sizing.estimate(True, te, ti, pop, sizing.MIN_EASY_GEN - 1, None) * 1.0001
    params, inorder = _choose(setup, budget)
    assert inorder.search == "in-order search" and params.easy_search is False
    assert (params.pop_size, params.n_gen) == BUDGET
    assert sizing.estimate(False, te, ti, BUDGET[0], inorder.estimated_gen, None) <= budget
    assert sizing.estimate(False, te, ti, BUDGET[0], inorder.estimated_gen + 1, None) > budget


def test_an_easy_search_cut_to_the_budget_reaches_the_run(setup, fixed_costs):
    js, fed = setup
    te, ti = fixed_costs
    budget = sizing.estimate(True, te, ti, EASY_BUDGET[0], sizing.MIN_EASY_GEN, None) * 1.0001
    res = moga.run(js, fed, seed=2, cpu_budget=budget)
    d = res.info["default"]
    assert d["rule"] == "measured" and d["search"] == "easy search"
    assert res.params.easy_search is True and res.params.n_gen == d["n_gen"] == EASY_BUDGET[1]
    assert d["estimated_gen"] == sizing.MIN_EASY_GEN
    assert d["estimated_cpu_s"] <= d["cpu_budget"] < d["easy_search_cpu_s"]
    ran = int(res.history["n_gen"][-1])
    assert sizing.MIN_EASY_GEN <= ran <= EASY_BUDGET[1]
    assert res.info["stopped_by"] == ("generations" if ran == EASY_BUDGET[1] else "cpu budget")
    again = moga.run(js, fed, seed=2, pop_size=d["pop_size"], n_gen=ran,
                     params={"easy_search": True, "seed_candidates": d["seed_candidates"]})
    np.testing.assert_array_equal(res.F, again.F)


def test_a_sized_run_stops_before_a_generation_would_pass_its_cpu_budget(setup, fixed_costs,
                                                                          monkeypatch):
    """The run's CPU clock (faked: one second per reading, so a generation costs one second)
    stops a run the rule sized before its budget, whatever the estimate said; the result
    says so, and the generations run repeat it bit for bit."""
    from types import SimpleNamespace

    from moga.evolution import search as search_mod

    js, fed = setup
    te, ti = fixed_costs
    budget = sizing.estimate(True, te, ti, EASY_BUDGET[0], 100, None) * 1.0001
    assert budget > sizing.MIN_EASY_GEN + 1
    clock = iter(range(1, 10**6))
    monkeypatch.setattr(search_mod, "time", SimpleNamespace(
        process_time=lambda: float(next(clock)), perf_counter=search_mod.time.perf_counter))
    res = moga.run(js, fed, seed=2, cpu_budget=budget)
    d, ran = res.info["default"], int(res.history["n_gen"][-1])
    assert d["rule"] == "measured" and d["estimated_gen"] == 100
    assert d["n_gen"] == EASY_BUDGET[1] and res.info["stopped_by"] == "cpu budget"
    # Read at the call's start and after each generation: n generations have used n
    # seconds, and the run stops when one more would pass the budget.
    assert ran <= budget < ran + 1
    monkeypatch.undo()
    again = moga.run(js, fed, seed=2, pop_size=d["pop_size"], n_gen=ran,
                     params={"easy_search": True, "seed_candidates": d["seed_candidates"]})
    np.testing.assert_array_equal(res.F, again.F)
    # Never below the rule's floor (a budget the floor's run overshoots, see below).
    assert sizing.least_generations(sizing.DefaultChoice(
        "measured", "easy search", 50, 100, None, 100, 30)) == sizing.MIN_EASY_GEN
    assert sizing.least_generations(sizing.DefaultChoice(
        "measured", "in-order search", 100, 5, None, 100, 30)) == 5
    # Runs the caller sized are never held to the budget, and the caller is told.
    with pytest.warns(UserWarning, match="this run was given pop_size, n_gen: it ignores"):
        assert moga.run(js, fed, seed=2, pop_size=10, n_gen=3, cpu_budget=1e-6
                        ).info["stopped_by"] == "generations"


def test_the_choice_reaches_the_run_and_run_json(setup, measured, tmp_path, capsys):
    js, fed = setup
    res = moga.run(js, fed, seed=1, cpu_budget=1e-6)  # the floor's run, past the budget
    d = res.info["default"]
    assert d["rule"] == "measured" and d["search"] == "in-order search"
    assert res.params.easy_search is False and res.params.n_gen == d["n_gen"] == BUDGET[1]
    assert d["estimated_gen"] == sizing.MIN_GEN and res.info["stopped_by"] == "cpu budget"
    assert res.history["n_gen"][-1] == sizing.MIN_GEN and res.params.pop_size == BUDGET[0]
    assert moga.load_result(res.save(tmp_path / "r.npz")).info["default"] == d
    # Passing what it reports repeats the run.
    again = moga.run(js, fed, seed=1, pop_size=d["pop_size"], n_gen=sizing.MIN_GEN,
                     params={"easy_search": False, "seed_candidates": d["seed_candidates"]})
    np.testing.assert_array_equal(res.F, again.F)

    out = tmp_path / "cli"
    assert main(["run", "--n-jobs", "30", "--cpu-budget", "0.000001", "--no-progress",
                 "--out", str(out)]) == 0
    summary = json.loads((out / "run.json").read_text())
    assert summary["default"]["rule"] == "measured"
    assert summary["generations"] == summary["default"]["estimated_gen"] == sizing.MIN_GEN
    assert summary["default"]["n_gen"] == BUDGET[1] and summary["stopped_by"] == "cpu budget"
    assert summary["params"]["easy_search"] is False
    assert "picked the in-order search" in capsys.readouterr().out


@pytest.mark.parametrize("explicit", [
    {"pop_size": 6}, {"n_gen": 2}, {"params": {"easy_search": True, "n_gen": 2}},
    {"params": {"easy_search": False, "n_gen": 2}},
])
def test_explicit_arguments_always_win(setup, measured, explicit):
    js, fed = setup
    kw = {"n_gen": 2, **explicit} if "params" not in explicit else explicit
    with pytest.warns(UserWarning, match="cpu_budget bounds only"):
        res = moga.run(js, fed, seed=1, cpu_budget=1e-6, **kw)
    assert res.info["default"]["rule"] == "explicit"
    want = GAParams.coerce(kw.get("params")).replace(pop_size=kw.get("pop_size"),
                                                     n_gen=kw.get("n_gen")).for_moga()
    assert res.params == want


@pytest.mark.parametrize("kw, named", [
    ({"islands": 1, "n_gen": 1}, "islands, n_gen"),
    ({"backfill": "easy", "n_gen": 1}, "backfill='easy', n_gen"),
    ({"params": {"archive_size": 0, "n_gen": 1}}, "archive_size=0, n_gen"),
])
def test_a_budget_the_rule_cannot_apply_is_ignored_with_a_warning(setup, kw, named):
    js, fed = setup
    with pytest.warns(UserWarning, match=f"this run was given {named}: it ignores the budget"):
        res = moga.run(js, fed, seed=1, cpu_budget=1e-6, **kw)
    assert res.history["n_gen"][-1] == 1  # the generations asked for, the budget long spent
    if "islands" not in kw:
        assert res.info["default"]["rule"] == "explicit"


def test_the_cli_says_when_it_ignores_a_cpu_budget(tmp_path, capsys):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the command drops the budget: moga.run never sees it
        assert main(["run", "--n-jobs", "30", "--gen", "2", "--pop", "6", "--cpu-budget", "5",
                     "--no-progress", "--out", str(tmp_path / "a")]) == 0
    err = capsys.readouterr().err
    assert "this run was given --pop, --gen: it ignores the budget" in err
    assert json.loads((tmp_path / "a" / "run.json").read_text())["generations"] == 2
    assert main(["run", "--n-jobs", "30", "--cpu-budget", "1e-6", "--no-progress",
                 "--out", str(tmp_path / "b")]) == 0
    captured = capsys.readouterr()
    assert "--cpu-budget" not in captured.err and "picked the" in captured.out
    assert "picked by size for a budget of 1e-06 CPU-s" in captured.out
    assert json.loads((tmp_path / "b" / "run.json").read_text())["default"]["rule"] == "measured"


def test_the_rule_leaves_other_runs_alone():
    p = GAParams()
    assert sizing.applies(p, "none", None)
    assert not sizing.applies(p, "easy", None)
    assert not sizing.applies(p, "none", 2)
    assert not sizing.applies(GAParams(archive_size=0), "none", None)
    assert not sizing.applies(GAParams(easy_search=False), "none", None)


def test_bad_budgets_and_caps_are_refused(setup):
    js, fed = setup
    for bad in (0, -1.0, float("inf"), "900", True):
        with pytest.raises(ValueError, match="cpu_budget"):
            moga.run(js, fed, cpu_budget=bad)
    for bad in (0, 2.5, True):
        with pytest.raises(ValueError, match="seed_candidates"):
            GAParams(seed_candidates=bad)
        with pytest.raises(ValueError, match="max_candidates"):
            ScheduleSampling(select=True, max_candidates=bad)


def test_the_seed_cap_bounds_the_seeding_decodes(setup):
    js, fed = setup
    problem = SchedulingProblem(js, fed)
    full = ScheduleSampling(select=True)
    full._do(problem, 20, random_state=np.random.default_rng(0))
    n_all = problem.n_decoded
    assert n_all > 20
    for cap in (3, 15):
        problem = SchedulingProblem(js, fed)
        X = ScheduleSampling(select=True, max_candidates=cap)._do(
            problem, 20, random_state=np.random.default_rng(0))
        assert problem.n_decoded == max(cap, 10)  # at least the seeded half
        if cap <= 10:  # every candidate kept: the submit order with the empty blacklist,
            submit = _submit_individual(js, fed)[0]  # first in the precedence, among them
            assert any(np.array_equal(row, submit) for row in X[:10])
    # A cap above the candidates changes nothing.
    a = ScheduleSampling(select=True)._do(problem, 20, random_state=np.random.default_rng(4))
    b = ScheduleSampling(select=True, max_candidates=n_all)._do(
        problem, 20, random_state=np.random.default_rng(4))
    np.testing.assert_array_equal(a, b)


def test_a_shorter_run_is_the_start_of_a_longer_one(setup):
    # benchmarks/default_budget.py reads the in-order search at 100 x 700 off the default's
    # run when the size rule picked that search: the draws must not depend on n_gen.
    js, fed = setup
    kw = {"pop_size": 8, "seed": 5, "params": {"easy_search": False}}
    short, long = moga.run(js, fed, n_gen=4, **kw), moga.run(js, fed, n_gen=9, **kw)
    np.testing.assert_array_equal(short.history["hv"], long.history["hv"][:4])
    np.testing.assert_array_equal(short.history["n_evals"], long.history["n_evals"][:4])


def test_the_memory_rule_shrinks_population_and_archive_of_wide_chromosomes(setup, measured,
                                                                            monkeypatch):
    js, fed = setup
    row = 8 * len(js) * (fed.n_clusters + 1)
    _, roomy = _choose(setup, 1e-6)
    assert (roomy.pop_size, roomy.archive_size) == (BUDGET[0], GAParams().archive_size)
    monkeypatch.setattr(sizing, "ROW_MEMORY", 240 * row)
    params, tight = _choose(setup, 1e-6)
    assert tight.archive_size == params.archive_size == 80
    assert tight.pop_size == params.pop_size == 50  # (240 - 80) // 3, to a multiple of 10
    assert 3 * tight.pop_size + tight.archive_size <= 240
    monkeypatch.setattr(sizing, "ROW_MEMORY", 10 * row)  # the floors
    _, least = _choose(setup, 1e-6)
    assert (least.pop_size, least.archive_size) == (sizing.MIN_POP, 4)
    res = moga.run(js, fed, seed=1, cpu_budget=1e-6)
    assert res.params.archive_size == 4 and res.params.pop_size == sizing.MIN_POP
    assert len(res.F) <= 4
