"""The simulation core's Python seam: Session, the policy registry, simulate, moga simulate."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import moga
from moga import POLICIES, simulate
from moga.cli import main
from moga.errors import InputError
from moga.sim import OnlinePolicy, PolicyStalled, Session, load_policy

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "docs" / "guide" / "examples" / "saf_easy.py"


def one_cluster(nodes=4):
    return moga.Federation(names=["c"], nodes=[nodes], speed=[1.0], power_busy=[50.0],
                           power_idle=[10.0], link=[100.0])


def jobs(release, tasks, runtime, requested=None):
    js = moga.JobSet.from_arrays(np.array(release, float), np.array(tasks), np.array(runtime, float),
                                 sigma=np.zeros(len(tasks)), bw=np.zeros(len(tasks)))
    if requested is None:
        return js
    import dataclasses

    return dataclasses.replace(js, requested=np.array(requested, float))


class InOrder(OnlinePolicy):
    """First come, first served written on the Session: start in arrival order, stop at the
    first job that does not fit."""

    name = "fcfs-python"

    def decide(self, session):
        for j in session.queued():
            if not session.start([j]).size:
                break


def workload(n=120, release=True):
    tr = moga.load_default()
    fed = moga.Federation.load("default@auto", auto_nodes=tr.auto_nodes)
    return tr.jobset(n_jobs=n, federation=fed, batch=not release), fed


@pytest.mark.parametrize("release", [True, False])
def test_a_python_fcfs_on_the_session_equals_the_fcfs_kernel(release):
    js, fed = workload(release=release)
    kernel = simulate(js, fed, "fcfs")
    python = simulate(js, fed, InOrder(), estimates="exact")
    np.testing.assert_array_equal(python.start, kernel.start)
    np.testing.assert_array_equal(python.finish, kernel.finish)
    np.testing.assert_array_equal(python.alloc, kernel.alloc)
    assert python.energy == pytest.approx(kernel.energy, rel=1e-12)
    assert python.policy == "fcfs-python" and kernel.policy == "fcfs"
    assert python.info["estimates"] == "exact" and python.info["events"] >= 2


def test_kernel_policies_are_the_kernels():
    js, fed = workload()
    easy = simulate(js, fed, "easy", estimates="exact")
    ref = moga.evaluate(js, fed, js.submit_order, backfill="easy")
    np.testing.assert_array_equal(easy.start, ref.start)
    from moga.powercap import run_dispatcher

    prb = simulate(js, fed, "prb", estimates="exact")
    np.testing.assert_array_equal(prb.start, run_dispatcher(js, fed, "prb").start)
    assert easy.info["estimates"] == "exact" and easy.info["wall_s"] >= 0
    planned = simulate(js, fed, "easy")
    np.testing.assert_array_equal(planned.start, moga.evaluate(
        js, fed, js.submit_order, backfill="easy", estimates="requested").start)
    assert planned.info["estimates"] == "requested"
    # fcfs plans nothing: either estimate gives the same schedule
    np.testing.assert_array_equal(simulate(js, fed, "fcfs").start,
                                  simulate(js, fed, "fcfs", estimates="exact").start)
    with pytest.raises(ValueError, match="plans on exact run times only"):
        simulate(js, fed, "rt-baseline", estimates="requested")
    with pytest.raises(ValueError, match="unknown policy 'nope'"):
        simulate(js, fed, "nope")


def test_every_policy_plans_on_the_requested_times_by_default_where_it_can():
    """A fair comparison: each policy that can plan on requested times does by default, as a
    user's policy does; the others say they plan on exact times only."""
    exact_only = {n for n, p in POLICIES.items() if p.estimates == ("exact",)}
    assert exact_only == {n for n in POLICIES if n.startswith("rt-")} | {
        "online-EASY", "online-FCFS-multi", "Max-Max-Value", "Max-Max-VPR"}
    for p in POLICIES.values():
        assert p.estimates[0] == "requested" or p.estimates == ("exact",), p.name
        assert "exact run times" in p.summary or p.name not in exact_only, p.name
    js, fed = workload(300)
    for name in ("easy", "prb", "realtime-first", f"{EXAMPLE}:SmallestAreaFirst"):
        assert simulate(js, fed, name).info["estimates"] == "requested", name
    exact = simulate(js, fed, "easy", estimates="exact")
    assert not np.array_equal(simulate(js, fed, "easy").start, exact.start)


def test_the_guide_table_states_what_each_policy_plans_with():
    rows = [line for line in (ROOT / "docs" / "guide" / "policies.md").read_text().splitlines()
            if line.startswith("| `")]
    for name, p in POLICIES.items():
        row = [r for r in rows if f"`{name}`" in r.split("|")[1]]
        assert len(row) == 1, name
        plans = row[0].rstrip(" |").rsplit("|", 1)[1]
        if p.estimates == ("exact",):
            assert "exact run times only" in plans, name
        else:
            assert "requested times by default" in plans or "plans nothing" in plans, name


def test_the_catalogue_runs_what_it_lists():
    """Each entry's run is what simulate calls; its kernels are compile groups; its options are
    what it takes."""
    from moga.warmup import KERNEL_GROUPS, command_groups

    js, fed = workload(60)
    for name, p in POLICIES.items():
        assert callable(p.run) and p.kernels and set(p.kernels) <= set(KERNEL_GROUPS), name
        assert command_groups("simulate", name) == p.kernels
    direct = POLICIES["easy"].run(js, fed, model="fluid", rule="fastest", estimates="requested")
    np.testing.assert_array_equal(direct.start, simulate(js, fed, "easy").start)
    from moga.powercap import DISPATCHERS
    from moga.realtime.study import SCHEME_SET
    from moga.value import ONLINE_HEURISTICS

    # the studies' tables are the catalogue's entries, bound by name
    assert {n for n in POLICIES if n.startswith("rt-")} == {f"rt-{s}" for s in SCHEME_SET}
    assert {n for n, p in POLICIES.items() if p.kind == "kernel" and "values" in p.supports} \
        == set(ONLINE_HEURISTICS)
    assert set(DISPATCHERS) <= set(POLICIES)
    assert POLICIES["online-moga"].options[:2] == ("preference", "objectives")
    assert POLICIES["realtime-preempt"].options == ("checkpoint", "restart")
    with pytest.raises(ValueError, match="takes no options"):
        simulate(js, fed, "easy", options={"reject": True})
    with pytest.raises(ValueError, match="unknown option"):
        simulate(js, fed, "realtime-preempt", options={"reject": True})


def test_the_registry_names_code_and_twin():
    import importlib

    import naive

    for p in POLICIES.values():
        assert p.kind in ("kernel", "python") and p.estimates
        assert hasattr(naive, p.twin), p.twin
        module, func = p.code.rsplit(".", 1)
        assert hasattr(importlib.import_module(module), func), p.code
    assert {"fcfs", "easy", "prb", "online-EASY", "Max-Max-VPR"} <= set(POLICIES)


def test_the_value_heuristics_are_registered_policies():
    from moga.value import attach_values
    from moga.value.online import online

    fed = moga.Federation.preset()
    js = moga.load_default().jobset(n_jobs=80, federation=int(fed.nodes.max()), batch=False)
    js = attach_values(js, seed=4)
    s = simulate(js, fed, "Max-Max-Value")
    v = online(js, fed, "Max-Max-Value")
    np.testing.assert_array_equal(s.start, v.start[v.cluster >= 0])
    assert s.policy == "Max-Max-Value" and s.summary()["value_earned"] == pytest.approx(
        v.total_value)
    with pytest.raises(InputError, match="power cap"):
        simulate(js, fed.with_cap(fraction=0.5), "online-EASY")


def test_the_guide_example_by_hand():
    """Smallest area first with a reservation, on four nodes: j1 (area 4) is the head at t=1
    with its reservation at 10; j2 ends by then and jumps ahead; j3 (20 s) may not."""
    fed = one_cluster(4)
    js = jobs([0, 1, 1, 1], [3, 4, 1, 1], [10, 1, 5, 20])
    s = simulate(js, fed, f"{EXAMPLE}:SmallestAreaFirst")
    np.testing.assert_array_equal(s.start, [0, 10, 1, 11])
    assert s.policy == "saf-easy" and s.info["estimates"] == "requested"
    s.node_assignment()  # never over capacity
    # With a request of 15 s, j2 could delay the head: it waits, unless the policy plans on
    # the exact run time.
    js = jobs([0, 1, 1, 1], [3, 4, 1, 1], [10, 1, 5, 20], requested=[10, 1, 15, 20])
    assert simulate(js, fed, f"{EXAMPLE}:SmallestAreaFirst").start[2] > 1
    assert simulate(js, fed, f"{EXAMPLE}:SmallestAreaFirst", estimates="exact").start[2] == 1


def test_the_guide_example_on_a_trace_keeps_every_invariant():
    js, fed = workload(300)
    s = simulate(js, fed, f"{EXAMPLE}:SmallestAreaFirst")
    assert np.all(s.start >= js.release) and np.all(s.finish > s.start)
    s.node_assignment()
    assert np.all(s.alloc.sum(axis=1) == js.tasks)
    fcfs = simulate(js, fed, "fcfs")
    assert s.summary()["mean_wait_s"] <= fcfs.summary()["mean_wait_s"]


def test_session_planned_ends_follow_the_estimate():
    fed = one_cluster(4)
    js = jobs([0, 0, 7], [2, 2, 1], [10, 10, 1], requested=[30, 5, 1])
    s = Session(js, fed)
    assert set(s.start([0, 1]).tolist()) == {0, 1}
    run, ends = s.running()
    np.testing.assert_allclose(ends[np.argsort(run)], [30, 5])
    assert s.advance() == 7  # the arrival; job 1 overruns its request
    run, ends = s.running()
    np.testing.assert_allclose(ends[np.argsort(run)], [30, 7])  # an overrun ends "now"
    np.testing.assert_array_equal(s.estimate, [30, 5, 1])
    exact = Session(js, fed, estimates="exact")
    assert exact.estimate.tolist() == [10, 10, 1]
    exact.start([0, 1])
    np.testing.assert_allclose(np.sort(exact.running()[1]), [10, 10])


def test_session_refuses_what_it_cannot_do():
    fed = one_cluster(4)
    js = jobs([0, 5], [2, 2], [10, 10])
    s = Session(js, fed)
    with pytest.raises(ValueError, match="job 1 is not waiting"):
        s.start([1])  # not arrived
    s.start([0])
    with pytest.raises(ValueError, match="job 0 is not waiting"):
        s.start([0])  # already started
    with pytest.raises(ValueError, match="estimates must be one of"):
        Session(js, fed, estimates="guess")

    class Idle(OnlinePolicy):
        def decide(self, session):
            pass

    with pytest.raises(PolicyStalled, match="wait on an idle federation"):
        simulate(js, fed, Idle())


def test_a_capped_federation_holds_under_a_python_policy():
    js, fed = workload(150)
    js = js.with_power(seed=3)
    capped = fed.with_cap(fraction=0.5)
    s = simulate(js, capped, InOrder())
    _, watts = s.power_profile()
    assert watts.max() <= capped.power_cap * (1 + 1e-9)


def test_load_policy_names_the_problem(tmp_path):
    with pytest.raises(InputError, match="path.py:ClassName"):
        load_policy("policy")
    with pytest.raises(InputError, match="does not exist"):
        load_policy(str(tmp_path / "none.py") + ":P")
    bad = tmp_path / "bad.py"
    bad.write_text("raise RuntimeError('boom')\n")
    with pytest.raises(InputError, match="failed to import: RuntimeError: boom"):
        load_policy(f"{bad}:P")
    ok = tmp_path / "ok.py"
    ok.write_text("class P:\n    pass\n")
    with pytest.raises(InputError, match="defines no 'Q'"):
        load_policy(f"{ok}:Q")
    with pytest.raises(InputError, match="no decide"):
        load_policy(f"{ok}:P")


def test_moga_simulate_writes_schedule_and_metrics(tmp_path, capsys):
    out = tmp_path / "sim"
    assert main(["simulate", "--policy", f"{EXAMPLE}:SmallestAreaFirst", "--n-jobs", "150",
                 "--no-gantt", "--out", str(out)]) == 0
    doc = json.loads((out / "metrics.json").read_text())
    assert doc["policy"] == "saf-easy" and doc["info"]["estimates"] == "requested"
    assert doc["metrics"]["n_jobs"] == 150 and doc["info"]["decision_s"] >= 0
    assert (out / "schedule.csv").read_text().count("\n") == 151
    assert "planned on requested times" in capsys.readouterr().out
    assert main(["simulate", "--policy", "easy", "--n-jobs", "20",
                 "--no-gantt", "--out", str(tmp_path / "e")]) == 0
    assert "planned on requested times" in capsys.readouterr().out  # the default, as saf-easy's
    assert main(["simulate", "--policy", "easy", "--estimates", "exact", "--n-jobs", "20",
                 "--no-gantt", "--out", str(tmp_path / "x")]) == 0
    assert "planned on exact times" in capsys.readouterr().out
    assert main(["simulate", "--policy", "Max-Max-Value", "--estimates", "requested",
                 "--n-jobs", "20", "--no-gantt", "--out", str(tmp_path / "f")]) == 2
    assert main(["simulate", "--policy", "prb", "--batch", "--n-jobs", "40", "--power-cap", "70%",
                 "--no-gantt", "--out", str(tmp_path / "p")]) == 0


def _random_one_cluster(seed, J=25, nodes=8):
    rng = np.random.default_rng(seed)
    release = np.sort(rng.integers(0, 40, J)).astype(float)
    tasks = rng.integers(1, nodes + 1, J)
    runtime = rng.integers(1, 30, J).astype(float)
    return one_cluster(nodes), jobs(release, tasks, runtime), rng


@pytest.mark.parametrize("seed", range(8))
def test_realtime_first_matches_its_twin(seed):
    import dataclasses

    from naive import naive_greedy

    fed, js, rng = _random_one_cluster(seed)
    js = dataclasses.replace(js, realtime=rng.random(len(js)) < 0.3)
    s = simulate(js, fed, "realtime-first")
    rt = js.realtime
    want = naive_greedy(js.release, js.tasks, js.runtime, 8,
                        lambda t, w: [j for j in w if rt[j]] + [j for j in w if not rt[j]])
    np.testing.assert_allclose(s.start, want)
    assert s.policy == "realtime-first" and s.info["estimates"] == "requested"


@pytest.mark.parametrize("seed", range(8))
def test_value_density_matches_its_twin(seed):
    from naive import naive_greedy

    from moga.value import attach_values

    fed, js, _ = _random_one_cluster(seed)
    js = attach_values(js, seed=seed)

    def rank(t, waiting):
        def density(j):
            f = t + js.runtime[j]
            if f <= js.soft[j]:
                v = js.v_start[j]
            elif f <= js.hard[j]:
                v = js.v_start[j] + (js.v_final[j] - js.v_start[j]) * (f - js.soft[j]) / (
                    js.hard[j] - js.soft[j])
            else:
                v = 0.0
            return v / (js.tasks[j] * js.runtime[j])
        return sorted(waiting, key=lambda j: (-density(j), j))

    s = simulate(js, fed, "value-density")
    np.testing.assert_allclose(s.start, naive_greedy(js.release, js.tasks, js.runtime, 8, rank))
    assert s.summary()["value_earned"] == pytest.approx(float(s.value_earned().sum()))


def _capped_run(jobset, fed, name):
    capped = fed.with_cap(fraction=0.45)
    s = simulate(jobset, capped, name)
    _, watts = s.power_profile()
    assert watts.max() <= capped.power_cap * (1 + 1e-9), name
    s.node_assignment()
    assert np.all(s.start >= jobset.release)
    return s


def test_realtime_jobs_run_under_a_power_cap():
    from moga.realtime import Machine, tag_realtime

    js, fed = workload(200)
    js = js.with_power(seed=5)
    tagged = tag_realtime(js, Machine(nodes=int(fed.total_nodes)), fraction=0.2, seed=1).jobset
    assert tagged.realtime.sum() == 40 and tagged.take(np.arange(10)).realtime.shape == (10,)
    s = _capped_run(tagged, fed, "realtime-first")
    rt = tagged.realtime
    assert s.wait[rt].mean() <= s.wait[~rt].mean()


def test_value_functions_run_under_a_power_cap():
    from moga.value import attach_values

    js, fed = workload(200)
    valued = attach_values(js.with_power(seed=5), seed=2)
    s = _capped_run(valued, fed, "value-density")
    assert 0 < s.summary()["value_earned"] <= valued.v_start.sum()
    with pytest.raises(ValueError, match="needs value functions"):
        simulate(js, fed, "value-density")


def test_moga_simulate_attaches_values_and_tags(tmp_path):
    for policy, extra in (("value-density", ["--value-seed", "3"]), ("Max-Max-Value", []),
                          ("realtime-first", ["--rtj-fraction", "0.25"])):
        out = tmp_path / policy
        assert main(["simulate", "--policy", policy, "--n-jobs", "60", "--no-gantt", "--out",
                     str(out), *extra]) == 0, policy
        doc = json.loads((out / "metrics.json").read_text())
        assert doc["policy"] == policy
        if policy != "realtime-first":
            assert doc["metrics"]["value_earned"] > 0


def test_moga_simulate_runs_a_preempting_scheme(tmp_path, capsys):
    out = tmp_path / "rt"
    assert main(["simulate", "--policy", "rt-preempt-jit", "--n-jobs", "120", "--rtj-fraction",
                 "0.2", "--no-gantt", "--out", str(out)]) == 0
    assert "machine@auto" in capsys.readouterr().err
    doc = json.loads((out / "metrics.json").read_text())
    assert doc["policy"] == "rt-preempt-jit" and len(doc["federation"]["cluster"]) == 1
    rows = (out / "segments.csv").read_text().splitlines()
    assert len(rows) - 1 == 120 + doc["info"]["preemptions"]
    # A run without preemptions leaves no segments.csv of an earlier run behind.
    assert main(["simulate", "--policy", "fcfs", "--n-jobs", "30", "--no-gantt", "--out",
                 str(out)]) == 0
    assert not (out / "segments.csv").exists()
