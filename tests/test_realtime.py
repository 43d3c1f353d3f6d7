"""Real-time jobs (docs/design.md §12): hand-worked schedules, an independent checker on
random and real workloads, the MILP against brute force, metrics and errors."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from conftest import SHARED_TRACES
from hypothesis import given
from hypothesis import strategies as st
from naive import naive_check_realtime, naive_milp_brute_force, naive_realtime

import moga
from moga.errors import InputError
from moga.realtime import (
    CHECKPOINTS,
    Checkpointing,
    JobClasses,
    Machine,
    Thresholds,
    min_threshold,
    realtime_metrics,
    simulate,
    solve_milp,
    tag_realtime,
)
from moga.realtime.workload import RealtimeJobs


def _jobs(submit, runtime, nodes, rtj, machine, requested=None):
    js = moga.JobSet.from_arrays(np.asarray(submit, float), nodes, np.asarray(runtime, float),
                                 sigma=np.zeros(len(nodes)), bw=np.zeros(len(nodes)))
    if requested is not None:
        js = dataclasses.replace(js, requested=np.asarray(requested, float))
    cls = JobClasses().classify(machine.job_nodes(nodes), js.requested, machine.nodes)
    return RealtimeJobs(js, machine, machine.job_nodes(nodes), np.asarray(rtj, bool), cls, 0.0, 0)


SMALL = Machine(4, memory_gb=1.0, pfs_gbps=1.0, pfs_usable=1.0, io_nodes_per=1, io_gbps=1.0)


def _two_jobs():
    # A batch job on the whole machine, then a real-time job that needs half of it.
    return _jobs([0, 10], [100, 20], [4, 2], [False, True], SMALL)


@pytest.mark.parametrize("scheme", ["baseline", "highpq"])
def test_without_preemption_the_rtj_waits(scheme):
    r = simulate(_two_jobs(), scheme)
    assert r.finish.tolist() == [100.0, 120.0] and r.n_preempted.sum() == 0


def test_no_ckpt_restarts_from_scratch():
    r = simulate(_two_jobs(), "preempt", "none")
    assert r.start[1] == 10.0 and r.finish[1] == 30.0
    assert r.finish[0] == 130.0  # restarts at 30, all 100 s again
    m = realtime_metrics(r)
    assert m["system"]["node_hours_lost_preemption"] == pytest.approx(4 * 10 / 3600)
    assert m["RTJ"]["mean_slowdown"] == 1.0 and m["system"]["preemptions"] == 1


def test_jit_ckpt_writes_then_resumes():
    # 4 nodes x 0.5 GB over min(4 x 1, 1) GB/s = 2 s to write, 2 s to read.
    r = simulate(_two_jobs(), "preempt", Checkpointing("jit", data_fraction=0.5))
    assert r.start[1] == 12.0 and r.finish[1] == 32.0  # the RTJ waits for the write
    assert r.finish[0] == 32.0 + 2.0 + 90.0            # resume: read, then the 90 s left
    assert naive_check_realtime(r) == []


def test_a_run_is_the_one_schedule_record():
    r = simulate(_two_jobs(), "preempt", Checkpointing("jit", data_fraction=0.5))
    assert isinstance(r, moga.Schedule) and r.policy == "preempt-jit"
    assert r.schedule() is r and r.federation.n_clusters == 1
    np.testing.assert_array_equal(r.segments.job, [e.job for e in r.executions()])
    assert r.segments.preempted.sum() == r.info["preemptions"] == 1
    assert r.flowtime == pytest.approx(float(np.sum(r.finish - r.jobs.submit)))


def test_sys_ckpt_keeps_the_last_checkpoint():
    ck = Checkpointing("sys", sys_interval=4.0, data_fraction=0.5)  # w = 2 s every 4 s
    r = simulate(_two_jobs(), "preempt", ck)
    # BJ: 10 s = 4 compute + 2 write + 4 compute (lost, the second write had not begun).
    first = [s for s in r.executions() if s.job == 0][0]
    assert (first.compute, first.lost, first.write) == (4.0, 4.0, 2.0)
    rem = 96.0  # then resumes at 30: read 2 s, 96 s in 24 stretches, 23 writes of 2 s
    assert r.finish[0] == 30.0 + 2.0 + rem + 23 * 2.0
    last = [s for s in r.executions() if s.job == 0][-1]
    assert (last.read, last.compute, last.write) == (2.0, 96.0, 46.0)
    assert [s.write for s in r.executions() if s.job == 1] == [0.0]  # the RTJ writes nothing


def test_improved_heuristic_spares_a_protected_batch_job():
    # The batch job is long and narrow-long's threshold (1.3) forbids preempting it late;
    # a real-time job that would wait long is still refused.
    rj = _jobs([0, 90], [100, 20], [4, 2], [False, True], SMALL, requested=[10000, 20])
    plain = simulate(rj, "preempt", "none")
    improved = simulate(rj, "preempt", "none", improved=True)
    assert plain.n_preempted[0] == 1 and improved.n_preempted[0] == 0
    assert improved.finish[1] == 120.0


def test_improved_heuristic_lets_a_rtj_wait_when_that_is_cheap():
    # The RTJ would wait 2 s for 100 s of work: slowdown 1.02 < 1.5, so no preemption.
    rj = _jobs([0, 98], [100, 100], [4, 2], [False, True], SMALL)
    assert simulate(rj, "preempt", "none").n_preempted[0] == 1
    r = simulate(rj, "preempt", "none", improved=True, thresholds=Thresholds(rtj=1.5))
    assert r.n_preempted[0] == 0 and r.start[1] == 100.0


def test_qsim_rtj_turns_preemptive_after_a_tenth_of_its_requested_time():
    # The RTJ (requested 50 s) arrives at 10; it preempts at 10 + 0.1 x 50 = 15, not at once.
    rj = _jobs([0, 10], [100, 20], [4, 2], [False, True], SMALL, requested=[100, 50])
    assert simulate(rj, "preempt", "none", improved=True).start[1] == 10.0
    r = simulate(rj, "preempt", "none", improved="qsim")
    assert r.start[1] == pytest.approx(15.0) and r.n_preempted.tolist() == [1, 0]
    assert r.reading == "qsim" and r.schedule().policy == "preempt-none-qsim"
    r = simulate(rj, "preempt", "none", improved="qsim", thresholds=Thresholds(trigger=1.5))
    assert r.start[1] == pytest.approx(35.0)


def test_qsim_has_no_priority_queue_before_the_trigger():
    # BJ1 arrived before the RTJ, whose trigger (at 1002) is far: first come, first served.
    rj = _jobs([0, 1, 2], [100, 10, 10], [4, 4, 4], [False, False, True], SMALL,
               requested=[100, 10, 10000])
    assert simulate(rj, "preempt", "none", improved="qsim").start.tolist() == [0, 100, 110]
    assert simulate(rj, "highpq", "none").start.tolist() == [0, 110, 100]


def _blocking_case():
    # BJx fills the machine for 10 s, so BJ0 (3 nodes) starts late: expected slowdown
    # (110 - 0) / 100 = 1.1. The RTJ (4 nodes) arrives at 11 and triggers at 12; BJ2
    # (1 node, 5 s) arrives at 13 and could backfill.
    return _jobs([0, 0, 11, 13], [10, 100, 10, 5], [4, 3, 4, 1], [False, False, True, False],
                 SMALL, requested=[10, 100, 10, 5])


def test_qsim_protects_slowed_batch_jobs_and_blocks_the_queue():
    rj = _blocking_case()
    protect = Thresholds(batch=(1.0, 1.0, 1.0, 1.0))   # BJ0's 1.1 is above every class's
    r = simulate(rj, "preempt", "none", improved="qsim", thresholds=protect)
    # No victim, so the RTJ waits for BJ0's end, and nothing starts meanwhile.
    assert r.n_preempted.sum() == 0
    assert r.start.tolist() == [0, 10, 110, 120]
    # Without the blocking, EASY would backfill BJ2 at 13 (it ends before 110).
    assert simulate(rj, "highpq", "none").start[3] == 13.0
    # With the seed's thresholds (wide-short: 10), BJ0 is a victim at the trigger.
    r = simulate(rj, "preempt", "none", improved="qsim")
    assert r.n_preempted.tolist() == [0, 1, 0, 0] and r.start[2] == pytest.approx(12.0)


def test_qsim_victims_spare_a_nearly_finished_job():
    # Two 2-node batch jobs; at the trigger (91) BJb has 9 s left (<= min(25 s, 15 min)),
    # so its score is 5x; BJa (909 s left) is preempted. The project's reading takes the
    # lower index among equal candidates: BJb.
    rj = _jobs([0, 0, 90], [100, 1000, 10], [2, 2, 2], [False, False, True], SMALL)
    assert simulate(rj, "preempt", "none", improved=True).n_preempted.tolist() == [1, 0, 0]
    r = simulate(rj, "preempt", "none", improved="qsim")
    assert r.n_preempted.tolist() == [0, 1, 0] and r.start[2] == pytest.approx(91.0)


@pytest.mark.parametrize("a_run, victims", [(100, [0, 1, 0, 0, 0]), (50, [0, 0, 1, 1, 0])])
def test_qsim_victims_take_the_cheaper_of_one_job_and_a_cover(a_run, victims):
    # F fills 7 nodes until 100; then A (3 nodes, submitted at 0), C (2, submitted at 0,
    # 200 s) and B (2, submitted at 100) run. The RTJ (3 nodes) triggers at 111. Scores:
    # B 2 log2(3) = 3.17, C 2 log2(3.5) = 3.61, so the cover {B, C} costs 6.78; A alone
    # costs 3 log2(2 + 2) = 6 with 100 s of work (slowdown 2) and 3 log2(5) = 6.97 with
    # 50 s (slowdown 3).
    m = Machine(7, memory_gb=1.0, pfs_gbps=1.0, pfs_usable=1.0, io_nodes_per=1, io_gbps=1.0)
    rj = _jobs([0, 0, 0, 100, 110], [100, a_run, 200, 100, 10], [7, 3, 2, 2, 3],
               [False, False, False, False, True], m)
    r = simulate(rj, "preempt", "none", improved="qsim")
    assert r.n_preempted.tolist() == victims and r.start[4] == pytest.approx(111.0)
    assert naive_check_realtime(r) == []


def test_improved_reading_is_checked():
    with pytest.raises(ValueError, match="improved must be"):
        simulate(_two_jobs(), "preempt", "none", improved="authors")
    with pytest.raises(InputError, match="trigger"):
        Thresholds(trigger=0.5)


@st.composite
def workloads(draw, max_jobs=25):
    n = draw(st.integers(1, max_jobs))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    N = int(rng.integers(2, 17))
    m = Machine(N, memory_gb=float(rng.choice([1.0, 16.0])), pfs_gbps=float(rng.choice([1.0, 240.0])),
                io_nodes_per=int(rng.choice([1, 128])))
    submit = np.sort(rng.integers(0, 200, n)).astype(float)
    runtime = rng.integers(1, 120, n).astype(float) if draw(st.booleans()) else \
        rng.uniform(1.0, 300.0, n)
    nodes = rng.integers(1, N + 1, n)
    js = moga.JobSet.from_arrays(submit, nodes, runtime, sigma=np.zeros(n), bw=np.zeros(n))
    if draw(st.booleans()):  # users' requested times above the run times
        js = dataclasses.replace(js, requested=runtime * rng.uniform(1.0, 3.0, n))
    return tag_realtime(js, m, draw(st.sampled_from([0.0, 0.1, 0.3, 0.6])), seed=1)


#: Simulator settings every property test draws: scheme, checkpointing, heuristic, interval.
SETTINGS = dict(scheme=st.sampled_from(["baseline", "highpq", "preempt"]),
                kind=st.sampled_from(CHECKPOINTS),
                improved=st.sampled_from([False, True, "qsim"]),
                interval=st.sampled_from([3.0, 30.0, 3600.0]))


@given(rj=workloads(), **SETTINGS)
def test_every_schedule_passes_the_independent_checker(rj, scheme, kind, improved, interval):
    ck = Checkpointing(kind, sys_interval=interval, app_overhead=0.3)
    r = simulate(rj, scheme, ck, improved)
    w, rd, iv = ck.costs(rj)
    assert naive_check_realtime(r, interval=iv, write=w, read=rd) == []
    if scheme != "preempt":
        assert r.n_preempted.sum() == 0
    assert np.all(r.n_preempted[rj.rtj] == 0)


@given(rj=workloads(max_jobs=18), **SETTINGS)
def test_simulator_equals_its_plain_twin(rj, scheme, kind, improved, interval):
    ck = Checkpointing(kind, sys_interval=interval, app_overhead=0.3)
    r = simulate(rj, scheme, ck, improved)
    w, rd, iv = ck.costs(rj)
    start, finish, npre = naive_realtime(
        rj.submit.tolist(), rj.runtime.tolist(), rj.nodes.tolist(), rj.rtj.tolist(),
        rj.cls.tolist(), rj.machine.nodes, scheme, kind, w.tolist(), rd.tolist(), iv.tolist(),
        improved, reading="qsim" if improved == "qsim" else "project",
        requested=rj.requested.tolist())
    np.testing.assert_allclose(r.start, start, rtol=1e-12)
    np.testing.assert_allclose(r.finish, finish, rtol=1e-12)
    assert r.n_preempted.tolist() == npre


def test_preemption_brings_rtj_slowdown_near_one():
    tr = moga.load_default()
    m = Machine(256, name="hpc2n")
    js = tr.jobset(start=0, n_jobs=600, federation=256, batch=False)
    rj = tag_realtime(js, m, 0.1, seed=0)
    base = realtime_metrics(simulate(rj, "baseline"))
    pre = realtime_metrics(simulate(rj, "preempt", "none"))
    assert pre["RTJ"]["mean_bsld"] < base["RTJ"]["mean_bsld"]
    assert pre["RTJ"]["mean_bsld"] == pytest.approx(1.0, abs=0.05)
    for r in (simulate(rj, "preempt", k) for k in CHECKPOINTS):
        assert naive_check_realtime(r) == []


@pytest.mark.skipif(not (SHARED_TRACES / "RICC-2010-2.swf.gz").exists(),
                    reason="needs ../shared/traces (the shared workload traces)")
def test_real_trace_passes_the_checker():
    tr = moga.load_swf(moga.resolve_trace("RICC-2010-2.swf.gz"), max_procs=8192)
    js = tr.jobset(start=30000, n_jobs=1500, federation=8192, batch=False)
    rj = tag_realtime(js, Machine(8192), 0.2, seed=3)
    for kind in ("none", "jit"):
        r = simulate(rj, "preempt", kind, improved=True)
        assert naive_check_realtime(r) == []


@pytest.mark.skipif(not (SHARED_TRACES / "CTC-SP2-1996-3.1-cln.swf.gz").exists(),
                    reason="needs ../shared/traces (the shared workload traces)")
@pytest.mark.parametrize("kind, improved", [("none", False), ("sys", False), ("jit", False),
                                            ("jit", "qsim")])
def test_the_kernel_equals_its_twin_on_a_trace(kind, improved):
    # A busy real machine: preemptions in numbers while EASY keeps reservations over many
    # events (a preemption must make it plan afresh).
    tr = moga.load_swf(moga.resolve_trace("CTC-SP2-1996-3.1-cln.swf.gz"))
    size = int(tr.auto_nodes)
    js = tr.jobset(start=20000, n_jobs=300, federation=size, batch=False)
    rj = tag_realtime(js, Machine.scaled(size), 0.2, seed=0)
    ck = Checkpointing(kind)
    r = simulate(rj, "preempt", ck, improved)
    assert r.n_preempted.sum() > 10
    w, rd, iv = ck.costs(rj)
    start, finish, npre = naive_realtime(
        rj.submit.tolist(), rj.runtime.tolist(), rj.nodes.tolist(), rj.rtj.tolist(),
        rj.cls.tolist(), size, "preempt", kind, w.tolist(), rd.tolist(), iv.tolist(),
        bool(improved), reading=improved or "project", requested=rj.requested.tolist())
    np.testing.assert_allclose(r.start, start, rtol=1e-12)
    np.testing.assert_allclose(r.finish, finish, rtol=1e-12)
    assert r.n_preempted.tolist() == npre


def test_mira_rounds_to_partitions_and_io_formula():
    m = Machine.mira()
    np.testing.assert_array_equal(m.job_nodes([1, 512, 513, 5000, 49152]),
                                  [512, 512, 1024, 8192, 49152])
    # 8,192 nodes: 64 I/O nodes x 4 GB/s = 256 GB/s > 216 usable: the file system limits.
    assert m.io_time([8192], 8.0)[0] == pytest.approx(8192 * 8.0 / 216.0)
    assert m.io_time([512], 8.0)[0] == pytest.approx(512 * 8.0 / 16.0)
    with pytest.raises(ValueError, match="needs 50000 nodes"):
        m.job_nodes([50000])
    fed = moga.Federation.preset("default")
    assert Machine.from_cluster(fed, "base").nodes == 64


def test_tags_are_seeded_and_counted():
    js = moga.load_default().jobset(n_jobs=200, batch=False)
    a = tag_realtime(js, Machine(256), 0.2, seed=5)
    b = tag_realtime(js, Machine(256), 0.2, seed=5)
    np.testing.assert_array_equal(a.rtj, b.rtj)
    assert a.rtj.sum() == 40
    with pytest.raises(ValueError, match="real-time fraction"):
        tag_realtime(js, Machine(256), 1.5)


def test_errors():
    with pytest.raises(ValueError, match="unknown scheme"):
        simulate(_two_jobs(), "fifo")
    with pytest.raises(ValueError, match="unknown checkpointing"):
        Checkpointing("daily")
    with pytest.raises(ValueError, match="rtj threshold must be >= 1"):
        Thresholds(rtj=0.5)
    with pytest.raises(ValueError, match="partition 512 exceeds"):
        Machine(100, (512,))


# --------------------------------------------------------------------- MILP
@pytest.mark.parametrize("seed", range(6))
def test_milp_equals_brute_force(seed):
    rng = np.random.default_rng(seed)
    J = 3
    cap = int(rng.integers(2, 4))
    release = rng.integers(0, 3, J).tolist()
    p = rng.integers(1, 4, J).tolist()
    nodes = rng.integers(1, cap + 1, J).tolist()
    rtj = [True] + [False] * (J - 1)
    for th in (None, 1.0, 1.5):
        sol = solve_milp(release, p, nodes, rtj, cap, th)
        best = naive_milp_brute_force(release, p, nodes, rtj, cap, th)
        if best is None:
            assert sol.status == "INFEASIBLE"
            continue
        assert sol.status == "OPTIMAL"
        L = int(np.lcm.reduce(p))
        assert round(sum(L // p[j] * sol.completion[j] for j in range(J) if not rtj[j])) == best


def test_milp_schedule_is_feasible_and_threshold_search():
    release, p, nodes, rtj = [0, 0, 1, 2], [4, 3, 2, 1], [2, 1, 2, 1], [False, False, True, True]
    th, sol = min_threshold(release, p, nodes, rtj, 3, tol=0.05)
    assert th is not None and sol.rtj_slowdown <= th + 1e-9
    for t in range(int(max(sol.completion))):
        assert sum(nodes[j] for j in range(4) if t in sol.slots[j]) <= 3
    for j in range(4):
        s = sol.slots[j]
        assert len(s) == p[j] and min(s) >= release[j]
        stretches = 1 + sum(1 for a, b in zip(s, s[1:], strict=False) if b != a + 1)
        assert stretches <= (1 if rtj[j] else 2)


@pytest.mark.parametrize("seed", range(4))
def test_the_kernel_equals_its_twin_on_a_backlogged_machine(seed):
    # Hundreds of jobs on few nodes: long queues exercise the queue tree and the
    # reservation over many running jobs, beyond what the property tests draw.
    rng = np.random.default_rng(seed)
    n, N = 150, 24
    submit = np.sort(rng.integers(0, 2000, n)).astype(float)
    runtime = rng.uniform(5.0, 400.0, n)
    nodes = rng.integers(1, N + 1, n)
    js = moga.JobSet.from_arrays(submit, nodes, runtime, sigma=np.zeros(n), bw=np.zeros(n))
    rj = tag_realtime(js, Machine(N, memory_gb=1.0, pfs_gbps=2.0, io_nodes_per=4, io_gbps=1.0),
                      0.2, seed=seed)
    for scheme, kind, improved in (("baseline", "none", False), ("highpq", "none", False),
                                   ("preempt", "sys", False), ("preempt", "jit", True)):
        ck = Checkpointing(kind, sys_interval=60.0)
        r = simulate(rj, scheme, ck, improved)
        w, rd, iv = ck.costs(rj)
        start, finish, npre = naive_realtime(
            rj.submit.tolist(), rj.runtime.tolist(), rj.nodes.tolist(), rj.rtj.tolist(),
            rj.cls.tolist(), N, scheme, kind, w.tolist(), rd.tolist(), iv.tolist(), improved)
        np.testing.assert_allclose(r.start, start, rtol=1e-12)
        np.testing.assert_allclose(r.finish, finish, rtol=1e-12)
        assert r.n_preempted.tolist() == npre
        assert naive_check_realtime(r, interval=iv, write=w, read=rd) == []


def test_the_schedule_record_holds_every_execution(tmp_path):
    r = simulate(_two_jobs(), "preempt", Checkpointing("jit", data_fraction=0.5))
    s = r.schedule()
    seg = s.segments
    assert seg.job.tolist() == [0, 1, 0] and seg.preempted.tolist() == [True, False, False]
    assert s.start.tolist() == [0.0, 12.0] and s.finish.tolist() == [124.0, 32.0]
    # Busy power only while executing: the batch job's 12 s and 92 s, the RTJ's 20 s.
    fed = s.federation
    busy = fed.power_busy[0] - fed.power_idle[0]
    assert s.energy == pytest.approx(fed.idle_power * 124.0 + busy * (4 * 12 + 2 * 20 + 4 * 92))
    times, watts = s.power_profile()
    assert watts.max() <= fed.peak_power + 1e-9
    s.segments_to_csv(tmp_path / "segments.csv")
    rows = (tmp_path / "segments.csv").read_text().splitlines()
    assert rows[0].startswith("job_id,execution,starting_time") and len(rows) == 4
    assert rows[1].split(",")[:2] == ["0", "1"] and rows[3].split(",")[:2] == ["0", "2"]
    s.to_csv(tmp_path / "schedule.csv")
    assert s.node_assignment()[0][0].size == 4
    with pytest.raises(ValueError, match="no preemptions"):
        dataclasses.replace(s, segments=None).segments_to_csv(tmp_path / "x.csv")
    with pytest.raises(InputError, match="one-cluster federation of 4 nodes"):
        r.schedule(moga.Federation.preset())


def test_rt_schemes_are_registered_policies(tmp_path):
    from moga import POLICIES
    from moga import simulate as run

    fed = moga.Federation.preset("machine").scaled(64)
    js = moga.load_default().jobset(n_jobs=200, federation=64, batch=False)
    tagged = tag_realtime(js, Machine.from_cluster(fed, 0), 0.15, seed=2)
    for label in ("baseline", "preempt-jit-improved"):
        entry = POLICIES[f"rt-{label}"]
        assert entry.twin == "naive_realtime" and "one_machine" in entry.supports
        s = run(tagged.jobset, fed, f"rt-{label}")
        direct = simulate(tagged, *{"baseline": ("baseline", "none", False),
                                    "preempt-jit-improved": ("preempt", "jit", True)}[label])
        np.testing.assert_array_equal(s.finish, direct.finish)
        assert s.policy == f"rt-{label}" and s.federation is fed
    with pytest.raises(InputError, match="one machine"):
        run(js, moga.Federation.preset(), "rt-highpq")
    with pytest.raises(InputError, match="no power cap"):
        run(js, fed.with_cap(fraction=0.5), "rt-highpq")


def test_machine_is_a_one_cluster_federation_and_tags_carry_over():
    fed = moga.Federation.preset()
    m = Machine.from_cluster(fed, "fast")
    f = m.federation()
    assert f.n_clusters == 1 and int(f.nodes[0]) == 32 and f.power_busy[0] == 292.2
    whole = Machine.from_cluster(fed)
    assert whole.power_idle == pytest.approx(10.0) and whole.nodes == fed.total_nodes
    js = moga.load_default().jobset(n_jobs=50, federation=32, wide="drop", batch=False)
    rj = tag_realtime(js, m, 0.2, seed=1)
    again = RealtimeJobs.from_jobset(rj.jobset, m)
    np.testing.assert_array_equal(again.rtj, rj.rtj)
    np.testing.assert_array_equal(again.cls, rj.cls)
    assert again.seed is None and again.fraction == pytest.approx(rj.rtj.mean())
    with pytest.raises(ValueError, match="power_busy"):
        Machine(8, power_busy=5.0, power_idle=10.0)


def test_the_kernel_wrapper_checks_its_inputs():
    from decoders.realtime import simulate_realtime

    one = np.ones(2)
    with pytest.raises(ValueError, match="nodes\\[1\\] must be <= 4"):
        simulate_realtime([0, 1], one, [1, 5], [0, 1], [0, 0], 4)
    with pytest.raises(ValueError, match="runtime\\[0\\] must be > 0"):
        simulate_realtime([0, 1], [0.0, 1.0], [1, 1], [0, 1], [0, 0], 4)
    with pytest.raises(ValueError, match="interval\\[1\\] must be > 0"):
        simulate_realtime([0, 1], one, [1, 1], [0, 1], [0, 0], 4, interval=[1.0, 0.0])
    with pytest.raises(ValueError, match="unknown checkpointing"):
        simulate_realtime([0, 1], one, [1, 1], [0, 1], [0, 0], 4, checkpointing="daily")
    r = simulate_realtime([0.0, 0.5], one, [4, 4], [False, True], [0, 0], 4, "preempt", "none")
    assert r.n_preemptions == 1 and r.finish.tolist() == [2.5, 1.5]


def test_slowdown_on_walltime_divides_by_the_requested_time():
    rj = _jobs([0, 10], [100, 20], [4, 2], [False, True], SMALL, requested=[200, 40])
    r = simulate(rj, "baseline")  # the RTJ waits: 100 -> 120
    run = realtime_metrics(r)
    wall = realtime_metrics(r, slowdown_on="walltime")
    assert run["RTJ"]["mean_slowdown"] == pytest.approx(110 / 20)
    assert wall["RTJ"]["mean_slowdown"] == pytest.approx(110 / 40)
    assert wall["system"]["slowdown_on"] == "walltime"
    with pytest.raises(ValueError, match="slowdown_on"):
        realtime_metrics(r, slowdown_on="cpu")


def test_jobs_keep_their_share_when_scaled_to_mira():
    js = moga.load_default().jobset(n_jobs=40, federation=240, batch=False)
    m = Machine.mira()
    scaled = m.scale_jobs(js, 240)
    np.testing.assert_array_equal(scaled.tasks, np.ceil(js.tasks * 49152 / 240))
    assert scaled.tasks.max() <= m.nodes and m.scale_jobs(js, 49152) is js
    with pytest.raises(InputError, match="at least 1"):
        m.scale_jobs(js, 0)


def test_io_model_gives_every_job_an_io_node_and_scales_to_the_machine():
    mira = Machine.mira()
    # Mira: a 512-node job (4 I/O nodes) writes 8 GB per node at 16 GB/s: 256 s; unchanged by
    # the one-I/O-node floor.
    assert mira.io_time([512], 8.0)[0] == pytest.approx(256.0)
    small = Machine(100)
    # One node: 8 GB at one 4 GB/s I/O node, not at 1/128 of one.
    assert small.io_time([1], 8.0)[0] == pytest.approx(2.0)
    assert Machine(100, min_io_nodes=0).io_time([1], 8.0)[0] == pytest.approx(256.0)
    s = Machine.scaled(8192)
    assert s.pfs_gbps == pytest.approx(240.0 * 8192 / 49152) and s.memory_gb == 16.0
    # A job of half the machine is file-system bound: the time of half of Mira.
    assert s.io_time([4096], 8.0)[0] == pytest.approx(mira.io_time([24576], 8.0)[0])
    assert "at least 1 per job" in s.io_summary() and "40 GB/s" in s.io_summary()
    with pytest.raises(InputError, match="min_io_nodes"):
        Machine(10, min_io_nodes=-1)


def test_a_preempted_jobs_old_finish_is_not_an_event():
    # B0 (4 of 6 nodes) is preempted at 5 by the real-time job R (4 nodes, 200 s), with no
    # checkpoint; W (6 nodes) heads the queue; S (2 nodes, 300 s) cannot backfill behind W.
    # B0's planned finish at 100 is no event any more: nothing starts then, and S waits
    # until R's finish, as the twin has it.
    from decoders.realtime import simulate_realtime
    submit, runtime = [0.0, 1.0, 5.0, 5.0], [100.0, 50.0, 200.0, 300.0]
    nodes, rtj, cls, zeros = [4, 6, 4, 2], [False, False, True, False], [0, 0, 0, 0], [0.0] * 4
    r = simulate_realtime(submit, runtime, nodes, rtj, cls, 6, "preempt", "none")
    start, finish, npre = naive_realtime(submit, runtime, nodes, rtj, cls, 6, "preempt", "none",
                                         zeros, zeros, [math.inf] * 4)
    assert npre == [1, 0, 0, 0] and r.n_preempted.tolist() == npre
    assert r.start.tolist() == start and r.finish.tolist() == finish
    assert 100.0 not in r.start.tolist() and r.start[3] >= 205.0


def test_milp_refuses_a_horizon_it_cannot_build():
    # A release of 6e16 slots once made the build allocate without end.
    from moga.realtime import solve_milp

    with pytest.raises(InputError, match="job-slot pairs"):
        solve_milp([6 * 10**16, 0], [1, 1], [1, 1], [False, False], 2, time_limit=1.0)
