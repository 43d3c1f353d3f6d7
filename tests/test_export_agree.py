"""One rule for exported numbers: the files of one schedule agree within the tolerances of
docs/outputs.md ("One rule for exported numbers"), read back from the files alone, for
schedules of every kind of maker: a kernel policy, a preempting real-time run, a preempting
Python policy, a value run with power factors, a Python policy whose jobs are killed at their
requests, and a GA run's knee."""

from __future__ import annotations

import csv
import json
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from moga.cli import main
from moga.model.export import CSV_TICK

ROOT = Path(__file__).resolve().parents[1]
SAF = str(ROOT / "docs" / "guide" / "examples" / "saf_easy.py") + ":SmallestAreaFirst"
REL = 1e-9  # energies: computed from the exact times, written with all digits

# A user's policy that preempts, at costs that put its times off whole seconds: shortest
# estimate first; when the shortest waiting job does not fit, the running job planned to
# end last is stopped (once per job), keeping half its work and paying a restart.
PREEMPTING = """
import numpy as np
from moga.sim import OnlinePolicy


class StopLongest(OnlinePolicy):
    name = "stop-longest"

    def reset(self, session):
        self.stopped = set()

    def decide(self, session):
        queued = session.queued()
        head = queued[np.argmin(session.estimate[queued])] if queued.size else None
        if head is not None and not session.start([head]).size:
            running, ends = session.running()
            for j in running[np.argsort(-ends, kind="stable")]:
                if int(j) not in self.stopped:
                    self.stopped.add(int(j))
                    session.preempt([j], keep=0.5, restart=3.3)
                    break
        queued = session.queued()
        for j in queued[np.argsort(session.estimate[queued], kind="stable")]:
            session.start([j])
"""

KINDS = {
    "kernel policy": ["simulate", "--policy", "easy", "--n-jobs", "80", "--power", "lognormal"],
    "preempting real-time": ["simulate", "--policy", "rt-preempt-jit", "--start", "2000",
                             "--n-jobs", "300", "--rtj-fraction", "0.5"],
    "preempting python policy": ["simulate", "--policy", "{tmp}/stop.py:StopLongest",
                                 "--n-jobs", "100", "--power", "lognormal", "--batch"],
    "value run": ["simulate", "--policy", "Max-Max-Value", "--n-jobs", "80", "--value-seed",
                  "3", "--power", "lognormal"],
    "python policy": ["simulate", "--policy", SAF, "--n-jobs", "60", "--kill-at-request"],
    "GA knee": ["run", "--n-jobs", "40", "--pop", "8", "--gen", "3", "--power", "lognormal"],
}


def _csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def _swf(path):
    """SWF rows by job id: (submit, wait, run, status)."""
    rows = {}
    for line in Path(path).read_text().splitlines():
        if line.startswith(";") or not line.strip():
            continue
        f = line.split()
        rows[int(f[0])] = (float(f[1]), float(f[2]), float(f[3]), int(f[10]))
    return rows


def _on_tick(x):
    x = np.asarray(x, dtype=float)
    x = x[np.isfinite(x)]
    return np.array_equal(x * 64, np.round(x * 64))


def _federation(doc):
    cl = doc["cluster"]
    return ({c["name"]: float(c["power_idle"]) for c in cl},
            sum(c["nodes"] * c["power_idle"] for c in cl))


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("agree")
    (root / "stop.py").write_text(PREEMPTING)
    out = {}
    for kind, args in KINDS.items():
        args = [a.format(tmp=root) for a in args]
        d = root / kind.replace(" ", "-")
        extra = ["--no-progress"] if args[0] == "run" else ["--no-gantt", "--no-progress"]
        assert main([*args, *extra, "--out", str(d)]) == 0, kind
        out[kind] = d
    return out


@pytest.mark.parametrize("kind", list(KINDS))
def test_the_files_of_one_schedule_agree(folders, kind):
    d = folders[kind]
    rows = _csv(d / "schedule.csv")
    swf = _swf(d / "schedule.swf")
    num = {c: np.array([float(r[c]) for r in rows]) for c in (
        "submission_time", "starting_time", "finish_time", "execution_time", "waiting_time",
        "turnaround_time", "consumed_energy")}
    done = np.array([r["final_state"] != "REJECTED" for r in rows])
    assert done.any()

    # Times: every one on the 1/64 s tick, one instant one number in every file.
    for c in ("submission_time", "starting_time", "finish_time"):
        assert _on_tick(num[c]), c
    assert np.array_equal(num["starting_time"][done],
                          (num["submission_time"] + num["waiting_time"])[done])
    assert np.array_equal(num["finish_time"][done],
                          (num["starting_time"] + num["execution_time"])[done])
    assert np.array_equal(num["finish_time"][done],
                          (num["submission_time"] + num["turnaround_time"])[done])
    assert set(swf) == {int(r["job_id"]) for r in rows}
    for r, s, e, ok in zip(rows, num["starting_time"], num["finish_time"], done, strict=True):
        submit, wait, run, status = swf[int(r["job_id"])]
        assert submit == float(r["submission_time"])
        if ok:
            assert (submit + wait, submit + wait + run) == (s, e), r["job_id"]
            assert status in (0, 1)
        else:
            assert (wait, run, status) == (-1, -1, 5)

    # Energies: segments add up to their job's row, everything to metrics.json.
    jobs_energy = num["consumed_energy"].sum()
    idle_in = np.zeros(len(rows))  # idle power of each job's nodes, W
    if kind != "GA knee":
        doc = json.loads((d / "metrics.json").read_text())
        idle_of, idle_power = _federation(doc["federation"])
    else:
        doc = json.loads((d / "run.json").read_text())
        idle_of, idle_power = _federation(doc["federation_spec"])
    for i, r in enumerate(rows):
        for part in r["metadata"].split():
            name, _, n = part.rpartition(":")
            idle_in[i] += int(n) * idle_of[name]
    idle_busy_time = (idle_in * np.where(done, num["execution_time"], 0.0)).sum()
    slack = CSV_TICK * (idle_in[done].sum() + idle_power)  # per-execution rounding
    seg_path = d / "segments.csv"
    if kind.startswith("preempting"):
        assert seg_path.exists()
    if seg_path.exists():
        segs = _csv(seg_path)
        assert len(segs) > len(rows)  # some job ran twice
        by_job = defaultdict(list)
        for s in segs:
            by_job[int(s["job_id"])].append(s)
        idle_busy_time, slack = 0.0, CSV_TICK * idle_power
        idle_by_id = {int(r["job_id"]): idle_in[i] for i, r in enumerate(rows)}
        for r, ok, energy in zip(rows, done, num["consumed_energy"], strict=True):
            ex = sorted(by_job[int(r["job_id"])], key=lambda s: int(s["execution"]))
            start = np.array([float(s["starting_time"]) for s in ex])
            end = np.array([float(s["finish_time"]) for s in ex])
            assert _on_tick(start) and _on_tick(end)
            parts = sum(np.array([float(s[c]) for s in ex]) for c in (
                "read_time", "compute_kept", "compute_lost", "checkpoint_write"))
            np.testing.assert_allclose(parts, end - start, rtol=0, atol=CSV_TICK + 1e-9)
            e = np.array([float(s["consumed_energy"]) for s in ex])
            idle_busy_time += idle_by_id[int(r["job_id"])] * (end - start).sum()
            slack += CSV_TICK * idle_by_id[int(r["job_id"])] * len(ex)
            if ok:
                assert (start[0], end[-1]) == (float(r["starting_time"]),
                                               float(r["finish_time"]))
                assert e.sum() == pytest.approx(energy, rel=REL, abs=1e-6)
        jobs_energy = sum(float(s["consumed_energy"]) for s in segs)
    makespan = num["finish_time"][done].max() - num["submission_time"].min()
    if kind != "GA knee":
        m = doc["metrics"]
        assert jobs_energy == pytest.approx(m["jobs_energy_J"], rel=REL)
        energy_J, makespan_s = m["energy_J"], m["makespan_s"]
        assert abs(m["mean_wait_s"] - num["waiting_time"][done].mean()) <= CSV_TICK
        assert abs(m["flowtime_s"] - num["turnaround_time"][done].sum()) <= CSV_TICK * done.sum()
    else:
        makespan_s, energy_J = doc["knee_F"]
        front = _csv(d / "front.csv")
        knee = next(r for r in front if r["knee"] == "1")
        # front.csv: six decimals of s and J
        assert float(knee["makespan_s"]) == pytest.approx(makespan_s, rel=0, abs=1e-6)
        assert float(knee["energy_J"]) == pytest.approx(energy_J, rel=REL)
    assert abs(makespan_s - makespan) <= CSV_TICK
    # energy_J = what the jobs' nodes draw while they run + every node idle outside them
    idle_outside = idle_power * makespan - idle_busy_time
    assert abs(energy_J - (jobs_energy + idle_outside)) <= slack + REL * energy_J
