"""Schedules out (schedule.csv for evalys, schedule.swf) and results saved and loaded."""

from __future__ import annotations

import numpy as np
import pytest

import moga
from moga.cli import main
from moga.errors import InputError
from moga.model.export import BATSIM_COLUMNS, CSV_TICK, jobs_table, node_offsets


@pytest.fixture(scope="module")
def result():
    fed = moga.Federation.preset()
    js = moga.load_default().jobset(start=200, n_jobs=60, federation=fed, batch=False,
                                    power="lognormal")
    return moga.run(js, fed, pop_size=10, n_gen=6, seed=3)


def _nodes(text):
    out = []
    for part in text.split():
        lo, _, hi = part.partition("-")
        out += list(range(int(lo), int(hi or lo) + 1))
    return out


def test_jobs_table_matches_the_schedule(result):
    s = result.schedule(result.knee())
    t = jobs_table(s)
    assert tuple(t) == BATSIM_COLUMNS
    np.testing.assert_array_equal(t["starting_time"], s.start)
    np.testing.assert_array_equal(t["waiting_time"], s.start - s.jobset.release)
    offsets = node_offsets(s.federation)
    bounds = np.r_[offsets, s.federation.total_nodes]
    for j, text in enumerate(t["allocated_resources"]):
        nodes = _nodes(text)
        assert len(nodes) == len(set(nodes)) == s.jobset.tasks[j]
        per_cluster = np.histogram(nodes, bins=bounds)[0]
        np.testing.assert_array_equal(per_cluster, s.alloc[j])
    # No node runs two jobs at once.
    busy = {}
    for j, text in enumerate(t["allocated_resources"]):
        for n in _nodes(text):
            for a, b in busy.get(n, []):
                assert s.finish[j] <= a or b <= s.start[j]
            busy.setdefault(n, []).append((s.start[j], s.finish[j]))
    draw = np.maximum(s.jobset.power[:, None] * s.federation.power_busy,
                      s.federation.power_idle)
    np.testing.assert_allclose(t["consumed_energy"],
                               (s.alloc * draw).sum(axis=1) * (s.finish - s.start))


def test_schedule_swf_round_trips_through_load_swf(result, tmp_path):
    s = result.schedule(0)
    s.to_swf(tmp_path / "s.swf")
    tr = moga.load_swf(tmp_path / "s.swf")
    assert tr.report.kept == len(s.jobset) and tr.report.max_procs == s.federation.total_nodes
    ids = tr.field("job").astype(int)
    start = tr.field("submit") + tr.field("wait")
    by_id = dict(zip(s.jobset.id.tolist(), s.start.tolist(), strict=True))
    # times on the 1/64 s tick of every export (docs/outputs.md, one rule for exported numbers)
    np.testing.assert_allclose(start, [by_id[i] for i in ids], rtol=0, atol=CSV_TICK / 2)
    np.testing.assert_allclose(tr.field("runtime"),
                               [dict(zip(s.jobset.id.tolist(), (s.finish - s.start).tolist(),
                                         strict=True))[i] for i in ids], rtol=0, atol=CSV_TICK)


@pytest.mark.filterwarnings("ignore:The inplace keyword")  # evalys's use of pandas
def test_evalys_reads_schedule_csv_and_draws_its_gantt(result, tmp_path):
    pytest.importorskip("evalys")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from evalys.jobset import JobSet
    from evalys.visu.gantt import plot_gantt

    s = result.schedule(result.knee())
    s.to_csv(tmp_path / "schedule.csv")
    ev = JobSet.from_csv(tmp_path / "schedule.csv")
    assert len(ev.df) == len(s.jobset)
    np.testing.assert_allclose(ev.df["starting_time"].to_numpy(), s.start, rtol=0,
                               atol=CSV_TICK / 2)  # times on 1/64 s ticks (module docstring)
    assert list(ev.df["proc_alloc"]) == s.jobset.tasks.tolist()
    plot_gantt(ev)
    plt.savefig(tmp_path / "gantt.png")
    plt.close("all")
    assert (tmp_path / "gantt.png").stat().st_size > 0


def test_to_dataframe(result):
    pd = pytest.importorskip("pandas")
    df = result.schedule(0).to_dataframe()
    assert isinstance(df, pd.DataFrame) and list(df.columns) == list(BATSIM_COLUMNS)


def test_results_save_and_load(result, tmp_path):
    p = result.save(tmp_path / "r.npz")
    back = moga.load_result(p)
    assert type(back) is type(result)
    np.testing.assert_array_equal(back.F, result.F)
    np.testing.assert_array_equal(back.X, result.X)
    np.testing.assert_array_equal(back.history["hv"], result.history["hv"])
    assert back.params == result.params and back.hv == result.hv
    for i in (0, len(result.F) - 1):
        a, b = result.schedule(i), back.schedule(i)
        np.testing.assert_array_equal(a.start, b.start)
        assert (a.makespan, a.energy) == (b.makespan, b.energy) == tuple(result.F[i])
    (tmp_path / "bad.npz").write_bytes(b"PK\x03\x04 not a zip")
    for bad in ("bad.npz", "missing.npz"):
        with pytest.raises(InputError, match=bad):
            moga.load_result(tmp_path / bad)
    np.savez(tmp_path / "other.npz", a=np.zeros(2))
    with pytest.raises(InputError, match="other.npz: not a moga result"):
        moga.load_result(tmp_path / "other.npz")


def test_baseline_results_save_and_load(tmp_path):
    from moga.baselines import random_search

    fed = moga.Federation.preset()
    js = moga.load_default().jobset(n_jobs=20, federation=fed)
    r = random_search(js, fed, n_evals=20, seed=1)
    back = moga.load_result(r.save(tmp_path / "r.npz"))
    assert type(back) is moga.SearchResult and back.name == r.name
    np.testing.assert_array_equal(back.F, r.F)


def test_cli_run_writes_the_schedule_and_schedule_decodes_any_member(tmp_path):
    out = tmp_path / "R"
    assert main(["run", "--n-jobs", "40", "--pop", "8", "--gen", "4", "--out", str(out),
                 "--no-progress"]) == 0
    for f in ("result.npz", "schedule.csv", "schedule.swf"):
        assert (out / f).stat().st_size > 0
    res = moga.load_result(out / "result.npz")
    assert main(["schedule", str(out), "--point", str(len(res.F) - 1)]) == 0
    d = out / f"schedule-{len(res.F) - 1}"
    tr = moga.load_swf(d / "schedule.swf")
    s = res.schedule(len(res.F) - 1)
    assert tr.report.kept == len(s.jobset)
    assert (d / "gantt.png").stat().st_size > 0
    assert main(["schedule", str(out), "--point", "99"]) == 2
    assert main(["schedule", str(tmp_path / "nowhere")]) == 2


def test_compare_and_powercap_write_their_schedules(tmp_path):
    out = tmp_path / "C"
    assert main(["compare", "--n-jobs", "25", "--pop", "8", "--gen", "2", "--algorithms", "FCFS",
                 "EASY", "MOGA", "--out", str(out), "--no-progress"]) == 0
    assert sorted(p.name for p in (out / "schedules").iterdir()) == ["EASY", "FCFS", "MOGA"]
    tr = moga.load_swf(out / "schedules" / "EASY" / "schedule.swf")
    assert tr.report.kept == 25
    out = tmp_path / "P"
    assert main(["powercap", "--n-jobs", "25", "--caps", "1.0", "60%", "--dispatchers", "prb",
                 "--out", str(out), "--no-progress"]) == 0
    assert sorted(p.name for p in (out / "schedules").iterdir()) == ["prb-cap0.6", "prb-cap1",
                                                                    "prb-uncapped"]
    text = (out / "schedules" / "prb-cap0.6" / "schedule.csv").read_text().splitlines()
    assert text[0].split(",") == list(BATSIM_COLUMNS) and len(text) == 26


def test_powercap_result_is_a_schedule():
    from moga.powercap import run_dispatcher

    fed = moga.Federation.preset()
    js = moga.load_default().jobset(n_jobs=30, federation=fed, batch=False, power="lognormal")
    r = run_dispatcher(js, fed.with_cap(fraction=0.5), "easy")
    s = r.schedule()
    np.testing.assert_array_equal(s.start, r.start)
    assert (s.makespan, s.energy) == (r.metrics.makespan, r.metrics.energy)
    times, watts = s.power_profile()
    assert watts.max() <= fed.with_cap(fraction=0.5).power_cap * (1 + 1e-9)
    s.node_assignment()  # capacity holds


def test_value_schedules_are_schedules_of_the_jobs_run(tmp_path):
    from moga.value import attach_values
    from moga.value.online import online

    fed = moga.Federation.preset()
    js = moga.load_default().jobset(n_jobs=120, federation=int(fed.nodes.max()), batch=False)
    js = attach_values(js, seed=3)
    v = online(js, fed, "Max-Max-Value")
    s = v.schedule()
    ran = v.cluster >= 0
    assert len(s.jobset) == v.n_run and s.info["n_not_run"] == len(js) - v.n_run
    np.testing.assert_array_equal(s.start, v.start[ran])
    np.testing.assert_allclose(s.value_earned(), v.value[ran])
    assert np.all(s.alloc.sum(axis=1) == s.jobset.tasks)
    s.node_assignment()  # capacity holds
    s.to_csv(tmp_path / "schedule.csv")
    s.to_swf(tmp_path / "schedule.swf")
    assert moga.load_swf(tmp_path / "schedule.swf").report.kept == v.n_run


def test_moga_value_writes_its_schedules(tmp_path):
    out = tmp_path / "V"
    assert main(["value", "--n-jobs", "40", "--pop", "6", "--gen", "2", "--out", str(out)]) == 0
    names = sorted(p.name for p in (out / "schedules").iterdir())
    assert "Max-Max-Value" in names and len(names) >= 5
    text = (out / "schedules" / "online-EASY" / "schedule.csv").read_text().splitlines()
    assert text[0].split(",") == list(BATSIM_COLUMNS)


@pytest.mark.filterwarnings("ignore:The inplace keyword")  # evalys's use of pandas
def test_evalys_utilisation_of_schedule_csv_never_exceeds_the_machine(tmp_path):
    """evalys rounds to six decimals and recomputes start and finish from the durations; the
    CSV's times are chosen so that a start at a predecessor's finish stays at that instant."""
    pytest.importorskip("evalys")
    from evalys.jobset import JobSet

    fed = moga.Federation.preset("default").scaled(64)
    js = moga.load_default().jobset(start=400, n_jobs=300, federation=fed, batch=False)
    s = moga.evaluate(js, fed, backfill="easy")
    s.to_csv(tmp_path / "schedule.csv")
    ev = JobSet.from_csv(tmp_path / "schedule.csv")
    df = ev.df
    # the case that matters: jobs that start the instant another one finishes
    assert np.isin(df["starting_time"], df["finish_time"]).sum() > 10
    assert ev.utilisation["load"].max() <= fed.total_nodes
    # the times moved by at most half a tick, and no two jobs overlap on a node
    np.testing.assert_allclose(df["starting_time"], s.start, rtol=0, atol=CSV_TICK / 2)
    np.testing.assert_allclose(df["finish_time"], s.finish, rtol=0, atol=CSV_TICK / 2)
    for node in range(fed.total_nodes):
        on = df[[node in r for r in df["allocated_resources"]]].sort_values("starting_time")
        assert (on["starting_time"].to_numpy()[1:] >= on["finish_time"].to_numpy()[:-1]).all()
