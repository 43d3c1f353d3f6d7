"""Users' priority rules at kernel speed (``decoders.priority``, ``moga.sim.PriorityRule``):
the built-in EASY and FCFS bit for bit, the plain-Python twin, the same rule as a Python
policy on a Session, the checks on the input, and the CLI."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numba
import numpy as np
import pytest
from conftest import instances
from hypothesis import given, settings
from hypothesis import strategies as st
from naive import naive_priority_easy

import moga
from decoders._validate import _idle_least_power
from moga.cli import main
from moga.errors import InputError
from moga.sim import PriorityRule, load_policy

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "docs" / "guide" / "examples" / "wfp3.py"


@numba.njit
def fifo(now, submit, tasks, estimate):
    return submit


@numba.njit
def wfp3(now, submit, tasks, estimate):
    return -((now - submit) / estimate) ** 3 * tasks


@numba.njit
def widest(now, submit, tasks, estimate):
    return -tasks  # an int: taken as a float; many ties


def _with_requested(js, rng):
    """``js`` with requested times off the run times (ties and overruns included)."""
    import dataclasses

    return dataclasses.replace(js, requested=js.runtime * rng.choice([0.5, 1.0, 2.0, 4.0],
                                                                     len(js)))


def _capped(js, fed, rng):
    """Power factors and a federation cap that binds."""
    J, K = len(js), fed.n_clusters
    power = rng.uniform(0.5, 1.5, J)
    need = _idle_least_power(js.tasks, power, fed.nodes, fed.power_busy, fed.power_idle,
                             np.full(K + 1, np.inf))
    cap = fed.idle_power + max(float(need.max()), 1.0) * rng.uniform(1.001, 3.0)
    return js.with_power(power), fed.with_cap(cap)


def _prepared(inst, seed, capped):
    """The instance's job-set with requested times drawn from ``seed``, capped or not."""
    js, fed, _, _ = inst
    rng = np.random.default_rng(seed)
    js = _with_requested(js, rng)
    if capped:
        js, fed = _capped(js, fed, rng)
    return js, fed


def _same(a, b):
    np.testing.assert_array_equal(a.start, b.start)
    np.testing.assert_array_equal(a.finish, b.finish)
    np.testing.assert_array_equal(a.alloc, b.alloc)


@settings(max_examples=60, deadline=None)
@given(inst=instances(max_jobs=14, release=True), model=st.sampled_from(["fluid", "at_start"]),
       rule=st.sampled_from(["fastest", "greenest"]), capped=st.booleans(),
       estimates=st.sampled_from(["requested", "exact"]), seed=st.integers(0, 2**32 - 1))
def test_a_rule_by_submit_time_is_the_built_in_easy_and_fcfs(inst, model, rule, capped,
                                                             estimates, seed):
    js, fed = _prepared(inst, seed, capped)
    kw = {"model": model, "rule": rule, "estimates": estimates}
    s = moga.simulate(js, fed, fifo, **kw)
    _same(s, moga.simulate(js, fed, "easy", **kw))
    assert (s.policy, s.backfill) == ("fifo", "easy")
    n = moga.simulate(js, fed, PriorityRule(fifo, backfill="none"), **kw)
    _same(n, moga.simulate(js, fed, "fcfs", **kw))
    assert n.backfill == "none"


@settings(max_examples=60, deadline=None)
@given(inst=instances(max_jobs=12, release=True), rule=st.sampled_from(["fastest", "greenest"]),
       capped=st.booleans(), which=st.sampled_from(["wfp3", "widest"]),
       backfill=st.sampled_from(["easy", "none"]), seed=st.integers(0, 2**32 - 1))
def test_a_rule_equals_its_twin(inst, rule, capped, which, backfill, seed):
    js, fed = _prepared(inst, seed, capped)
    score = {"wfp3": wfp3, "widest": widest}[which]
    s = moga.simulate(js, fed, PriorityRule(score, backfill=backfill), model="at_start",
                      rule=rule)
    start, finish, alloc, reservation = naive_priority_easy(
        js.release, js.tasks, js.runtime, js.sigma, js.bw, fed.nodes, fed.speed, fed.power_busy,
        fed.power_idle, fed.link, score.py_func, estimate=js.requested, rule=rule,
        power=js.power, cap=fed.power_cap, backfill=backfill == "easy")
    np.testing.assert_allclose(s.start, start, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(s.finish, finish, rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(s.alloc, alloc)
    if backfill == "easy":
        np.testing.assert_allclose(s.reservation, [np.nan if r is None else r
                                                   for r in reservation], rtol=1e-9, atol=1e-9)


class _ArrivalOrder(moga.sim.OnlinePolicy):
    """EASY through a Session: the queue in arrival order, handed to ``start_easy``."""

    backfill = "easy"

    def decide(self, session):
        session.start_easy(session.queued())


@settings(max_examples=40, deadline=None)
@given(inst=instances(max_jobs=12, release=True), model=st.sampled_from(["fluid", "at_start"]),
       rule=st.sampled_from(["fastest", "greenest"]), capped=st.booleans(),
       estimates=st.sampled_from(["requested", "exact"]), seed=st.integers(0, 2**32 - 1))
def test_session_start_easy_in_arrival_order_is_the_built_in_easy(inst, model, rule, capped,
                                                                  estimates, seed):
    js, fed = _prepared(inst, seed, capped)
    kw = {"model": model, "rule": rule, "estimates": estimates}
    _same(moga.simulate(js, fed, _ArrivalOrder(), **kw), moga.simulate(js, fed, "easy", **kw))


def test_a_rule_worked_by_hand():
    # One cluster of 4 nodes. Job 0 (4 tasks, 10 s) runs from 0; at 1 arrive job 1 (4 tasks)
    # and job 2 (1 task, 5 s). The widest-first rule ranks job 1 first: it gets the
    # reservation at 10, and job 2 cannot start before it, nothing being free.
    js = moga.JobSet.from_arrays(np.array([0.0, 1.0, 1.0]), np.array([4, 4, 1]),
                                 np.array([10.0, 10.0, 5.0]), sigma=np.zeros(3), bw=np.zeros(3))
    fed = moga.Federation.load("machine@4")
    s = moga.simulate(js, fed, widest, estimates="exact")
    speed = float(fed.speed[0])
    np.testing.assert_allclose(s.start, [0.0, 10.0 / speed, 20.0 / speed])
    assert s.reservation[1] == pytest.approx(10.0 / speed)


def test_the_rule_and_the_python_policy_give_one_schedule():
    # The example's rule, and the same rule as a Python policy through a Session.
    tr = moga.load_default()
    fed = moga.Federation.load("default@auto", auto_nodes=tr.auto_nodes)
    js = tr.jobset(n_jobs=300, federation=fed, batch=False)
    for model in ("fluid", "at_start"):
        for est in ("requested", "exact"):
            a = moga.simulate(js, fed, f"{EXAMPLE}:score", model=model, estimates=est)
            b = moga.simulate(js, fed, f"{EXAMPLE}:WFP3Policy", model=model, estimates=est)
            _same(a, b)
            assert (a.policy, a.backfill, b.backfill) == (f"{EXAMPLE}:score", "easy", "easy")


def test_a_rule_is_loaded_from_its_file_and_run_as_a_function(tmp_path):
    rule = load_policy(f"{EXAMPLE}:score")
    assert isinstance(rule, PriorityRule) and rule.backfill == "easy"
    tr = moga.load_default()
    fed = moga.Federation.load("default@auto", auto_nodes=tr.auto_nodes)
    js = tr.jobset(n_jobs=100, federation=fed, batch=False)
    a = moga.simulate(js, fed, rule)
    b = moga.simulate(js, fed, rule.score)  # the jitted function itself
    _same(a, b)
    assert b.policy == "score" and "compile_s" in b.info


def _rules(tmp_path, body: str) -> str:
    path = tmp_path / "rules.py"
    path.write_text("import numba\n\n" + body)
    return str(path)


BAD = """
@numba.njit
def two(now, submit):
    return now


@numba.njit
def pair(now, submit, tasks, estimate):
    return (now, submit)


@numba.njit
def broken(now, submit, tasks, estimate):
    return now.nothing


@numba.njit
def nan(now, submit, tasks, estimate):
    return (now - submit) / (now - submit)


def plain(now, submit, tasks, estimate):
    return submit


value = 3
"""


@pytest.mark.parametrize("name, words", [
    ("two", "must be score(now: float, submit: float, tasks: int, estimate: float) -> float"),
    ("pair", "returns UniTuple(float64 x 2), not a number"),
    ("broken", "does not compile as score(now"),
    ("value", "neither a class (an OnlinePolicy) nor a function (a priority rule)"),
])
def test_a_bad_rule_is_refused_naming_it(tmp_path, name, words):
    path = _rules(tmp_path, BAD)
    js = moga.load_default().jobset(n_jobs=10, federation=64, batch=False)
    with pytest.raises(InputError) as e:
        moga.simulate(js, moga.Federation.load("machine@64"), f"{path}:{name}")
    assert words in str(e.value)
    assert name in str(e.value)


class _Callable:
    def __call__(self, now, submit, tasks, estimate):
        return submit


@pytest.mark.parametrize("score", [_Callable(), _Callable, 3.0])
def test_a_rule_that_is_not_a_function_is_refused(score):
    with pytest.raises(InputError, match="a priority rule is a function"):
        PriorityRule(score)


def _plain_fifo(now, submit, tasks, estimate):
    return submit


def test_a_plain_function_compiles_once_per_process():
    from moga.sim import rules

    js = moga.load_default().jobset(n_jobs=10, federation=64, batch=False)
    fed = moga.Federation.load("machine@64")
    with pytest.warns(UserWarning):
        moga.simulate(js, fed, _plain_fifo)
    n = len(rules._DRIVERS)
    with pytest.warns(UserWarning):
        again = moga.simulate(js, fed, _plain_fifo)
    assert len(rules._DRIVERS) == n
    assert again.info["compile_s"] < 0.05


@numba.njit("int64(int64, int64, int64, int64)")
def _halved(now, submit, tasks, estimate):
    return submit >> 1  # no float64 submit: the rule's signature does not type


@numba.njit("float64(float64, float64, int64, float64)")
def _signed_fifo(now, submit, tasks, estimate):
    return submit


def test_explicit_signatures_are_checked_at_the_rule_signature():
    js = moga.load_default().jobset(n_jobs=10, federation=64, batch=False)
    fed = moga.Federation.load("machine@64")
    with pytest.raises(InputError, match="_halved does not compile as score"):
        moga.simulate(js, fed, PriorityRule(_halved))
    np.testing.assert_array_equal(moga.simulate(js, fed, PriorityRule(_signed_fifo)).start,
                                  moga.simulate(js, fed, "easy").start)


def test_a_nan_score_names_the_job(tmp_path):
    path = _rules(tmp_path, BAD)
    js = moga.load_default().jobset(n_jobs=10, federation=64, batch=False)
    with pytest.raises(InputError, match=r"rules.py:nan scored job id \d+ \(position \d+ .*NaN "
                                         r"at t=\S+ s"):
        moga.simulate(js, moga.Federation.load("machine@64"), f"{path}:nan")


@numba.njit
def _raises_on_wide(now, submit, tasks, estimate):
    if tasks > 2:
        raise ValueError("wide")
    return submit


def test_a_score_that_raises_is_refused_not_ignored():
    # A C function cannot raise: the pass reports it, and no schedule comes back.
    js = moga.load_default().jobset(n_jobs=30, federation=64, batch=False)
    assert (js.tasks > 2).any()
    with pytest.raises(InputError, match=r"_raises_on_wide failed at t=\S+ s \(its compiled "
                                         r"score raised an error\)"):
        moga.simulate(js, moga.Federation.load("machine@64"), PriorityRule(_raises_on_wide))


def test_an_edited_rule_file_is_not_run_stale(tmp_path, monkeypatch):
    # Two texts of one size, the second given the first's mtime (a coarse clock): a cache
    # by mtime and size (the compiled rules', or Python's bytecode cache) runs the first.
    import os
    import sys

    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    path = tmp_path / "r.py"
    head = "import numba\n\n\n@numba.njit\ndef score(now, submit, tasks, estimate):\n"
    path.write_text(head + "    return +tasks\n")
    st = path.stat()
    js = moga.load_default().jobset(n_jobs=30, federation=64, batch=True)
    fed = moga.Federation.load("machine@64")
    first = moga.simulate(js, fed, load_policy(f"{path}:score"))
    path.write_text(head + "    return -tasks\n")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_size == st.st_size
    second = moga.simulate(js, fed, load_policy(f"{path}:score"))
    assert not np.array_equal(first.start, second.start)
    np.testing.assert_array_equal(second.start, moga.simulate(js, fed, PriorityRule(widest)).start)


def test_a_plain_function_is_compiled_with_a_note(tmp_path):
    path = _rules(tmp_path, BAD)
    js = moga.load_default().jobset(n_jobs=10, federation=64, batch=False)
    fed = moga.Federation.load("machine@64")
    with pytest.warns(UserWarning, match="plain Python function; moga compiles it"):
        s = moga.simulate(js, fed, f"{path}:plain")
    _same(s, moga.simulate(js, fed, "easy"))


def test_cli_runs_a_rule_with_or_without_backfilling(tmp_path, capsys):
    out = tmp_path / "o"
    for bf in ("easy", "none"):
        assert main(["simulate", "--policy", f"{EXAMPLE}:score", "--backfill", bf,
                     "--n-jobs", "40", "--no-gantt", "--no-progress", "--out", str(out)]) == 0
        m = json.loads((out / "metrics.json").read_text())
        assert m["policy"] == f"{EXAMPLE}:score"
    assert main(["simulate", "--policy", "easy", "--backfill", "none", "--n-jobs", "5",
                 "--no-gantt", "--out", str(out)]) == 2
    assert "--backfill is for a priority rule" in capsys.readouterr().err


def test_session_start_easy_refuses_what_is_not_waiting():
    js = moga.load_default().jobset(n_jobs=5, federation=64, batch=True)
    s = moga.sim.Session(js, moga.Federation.load("machine@64"))
    with pytest.raises(ValueError, match="backfill must be one of"):
        s.start_easy(s.queued(), backfill="x")
    started = s.start_easy(s.queued())
    with pytest.raises(ValueError, match="is not waiting"):
        s.start_easy(started[:1])


def test_session_start_easy_after_a_preemption_plans_as_running():
    # A (2 of 3 nodes) runs from 0, is preempted at 10 (90 s left of 100, requested 200)
    # and restarts; running() plans its end at 10 + 90 * 200 / 100 = 190. B (3 nodes) waits,
    # so C (1 node, planned to end at 10 + 190 = 200) would delay B's reservation at 190.
    import dataclasses

    js = moga.JobSet.from_arrays([0.0, 0.0, 0.0, 10.0], [2, 3, 1, 1], [100.0, 50.0, 95.0, 5.0],
                                 sigma=np.zeros(4), bw=np.zeros(4))
    js = dataclasses.replace(js, requested=np.array([200.0, 50.0, 190.0, 5.0]))
    fed = moga.Federation(names=["a"], nodes=[3], speed=[1.0], power_busy=[2.0],
                          power_idle=[1.0], link=[1e3])
    s = moga.sim.Session(js, fed, model="at_start", estimates="requested")
    s.start_easy([0])
    assert s.advance() == 10.0
    s.preempt([0])
    s.start_easy([0])
    jobs, planned = s.running()
    assert planned[list(jobs).index(0)] == 190.0
    assert list(s.start_easy([1, 2])) == []


def _help_policies() -> str:
    import argparse

    from moga.cli import simulate

    p = argparse.ArgumentParser()
    simulate.add_arguments(p)
    return " ".join(next(a.help for a in p._actions if "--policy" in a.option_strings).split())


def test_every_catalogue_entry_is_in_the_help_and_the_guide_and_back():
    from moga.policies import POLICIES

    help_text = _help_policies()
    listed = re.search(r"moga\.POLICIES: ([^)]*)\)", help_text).group(1).split(", ")
    assert listed == list(POLICIES)
    guide = (ROOT / "docs" / "guide" / "policies.md").read_text()
    rows = [[c.strip() for c in line.split("|")[1:3]] for line in guide.splitlines()
            if line.startswith("| `")]
    kinds = {n: kind for cell, kind in rows for n in re.findall(r"`([^`]+)`", cell)}
    own = {"path.py:Class": "Python", "path.py:function": "rule"}
    assert set(kinds) - set(own) == set(POLICIES), "the guide's table and moga.POLICIES differ"
    for name, kind in kinds.items():
        want = own.get(name) or POLICIES[name].kind
        assert kind.lower() == want.lower(), f"{name}: the guide says {kind}, not {want}"
