"""``moga simulate``: progress on stderr, and a user's policy that fails ends in one line."""

from __future__ import annotations

import io
import json

import pytest

import moga
from moga.cli import main
from moga.progress import Progress

GREEDY = """
from moga.sim import OnlinePolicy


class P(OnlinePolicy):
    name = "greedy"

    def decide(self, s):
        for j in s.queued():
            if s.would_start([j]).size:
                s.start([j])
"""


def _policy(tmp_path, body: str, name="pol.py"):
    path = tmp_path / name
    path.write_text(body)
    return f"{path}:P"


def _decide(body: str) -> str:
    """A policy file whose ``decide`` runs ``body`` (indented by the caller's lines)."""
    return ("from moga.sim import OnlinePolicy\n\n\nclass P(OnlinePolicy):\n"
            "    def decide(self, s):\n" + "".join(f"        {line}\n" for line in body.split("\n")))


def test_progress_counts_may_jump_and_print_once_per_tenth_off_a_terminal():
    out = io.StringIO()
    bar = Progress(100, stream=out, every=10)
    for n in (3, 9, 12, 14, 35, 36, 99, 100, 100):
        bar.update(n, "jobs")
    lines = out.getvalue().splitlines()
    assert [line.split("] ")[1].split()[0] for line in lines] == ["12/100", "35/100", "99/100",
                                                                 "100/100"]
    out = io.StringIO()
    bar = Progress(25, stream=out, every=10)
    for _ in range(25):
        bar.step("x")
    assert [line.split("] ")[1].split()[0] for line in out.getvalue().splitlines()] == [
        "10/25", "20/25", "25/25"]


def test_run_policy_reports_jobs_started(monkeypatch, tmp_path):
    import sys

    from moga import simulate
    from moga.sim import load_policy, run_policy

    monkeypatch.setattr(sys.modules[run_policy.__module__], "PROGRESS_INTERVAL_S", 0.0)
    fed = moga.Federation.preset()
    js = moga.load_default().jobset(n_jobs=40, federation=fed, batch=False)
    calls = []
    s = simulate(js, fed, load_policy(_policy(tmp_path, GREEDY)),
                 progress=lambda done, total: calls.append((done, total)))
    assert len(calls) > 5 and calls[-1] == (40, 40)
    assert all(0 <= d <= t == 40 for d, t in calls)
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)  # no preemption: only rises
    plain = simulate(js, fed, load_policy(_policy(tmp_path, GREEDY)))
    assert (s.start == plain.start).all()  # progress changes nothing


@pytest.mark.parametrize("policy", ["fcfs", "user"])
def test_simulate_prints_a_start_and_an_end_line(policy, tmp_path, capsys):
    spec = _policy(tmp_path, GREEDY) if policy == "user" else "fcfs"
    assert main(["simulate", "--policy", spec, "--n-jobs", "30", "--no-gantt",
                 "--out", str(tmp_path / "o")]) == 0
    err = capsys.readouterr().err.splitlines()
    assert any(line.startswith(f"moga: simulating 30 jobs with {spec}") for line in err)
    assert any("30/30" in line for line in err)
    assert main(["simulate", "--policy", spec, "--n-jobs", "30", "--no-gantt", "--no-progress",
                 "--out", str(tmp_path / "o")]) == 0
    err = capsys.readouterr().err
    assert "simulating" not in err and "30/30" not in err


def _one_line_error(capsys, *names):
    err = [line for line in capsys.readouterr().err.splitlines()
           if not line.startswith("moga: compiling")]
    assert len(err) == 1, err
    assert err[0].startswith("moga: error: policy ") and "Traceback" not in err[0]
    for name in names:
        assert name in err[0], err[0]
    return err[0]


@pytest.mark.parametrize("body, words", [
    ("x = 1 / 0", ["decide() at t=", "ZeroDivisionError: division by zero", "line 6"]),
    ("import sys\nsys.exit(3)", ["decide() at t=", "called sys.exit(3)", "line 7"]),
    ("s.result()", ["decide() at t=", "RuntimeError"]),
    ("s.start([10**6])", ["decide() at t=", "line 6"]),
    ("pass", ["stalled", "wait on an idle federation"]),
])
def test_a_failing_policy_is_one_line_naming_its_file(body, words, tmp_path, capsys):
    spec = _policy(tmp_path, _decide(body), name="mine.py")
    assert main(["simulate", "--policy", spec, "--n-jobs", "20", "--batch", "--no-gantt",
                 "--no-progress", "--out", str(tmp_path / "o")]) == 2
    _one_line_error(capsys, "mine.py", *words)


def test_reset_summary_import_and_the_base_class_are_guarded(tmp_path, capsys):
    out = ["--n-jobs", "20", "--batch", "--no-gantt", "--no-progress", "--out", str(tmp_path / "o")]
    reset = GREEDY + "\n    def reset(self, s):\n        raise KeyError('k')\n"
    assert main(["simulate", "--policy", _policy(tmp_path, reset, "r.py"), *out]) == 2
    _one_line_error(capsys, "r.py", "reset() at t=", "KeyError")
    summ = GREEDY + "\n    def summary(self):\n        return {}['x']\n"
    assert main(["simulate", "--policy", _policy(tmp_path, summ, "s.py"), *out]) == 2
    _one_line_error(capsys, "s.py", "summary()", "KeyError")
    ex = _policy(tmp_path, "import sys\nsys.exit(4)\n", "ex.py")
    assert main(["simulate", "--policy", ex, *out]) == 2
    _one_line_error(capsys, "ex.py", "sys.exit(4)")
    base = _policy(tmp_path, GREEDY, "b.py").replace(":P", ":OnlinePolicy")
    assert main(["simulate", "--policy", base, *out]) == 2
    _one_line_error(capsys, "b.py", "NotImplementedError")


def test_ctrl_c_in_a_policy_is_an_interruption(tmp_path, capsys):
    spec = _policy(tmp_path, _decide("raise KeyboardInterrupt"))
    assert main(["simulate", "--policy", spec, "--n-jobs", "20", "--no-gantt", "--no-progress",
                 "--out", str(tmp_path / "o")]) == 130
    assert capsys.readouterr().err.strip().splitlines()[-1] == "moga: interrupted"


def test_a_guarded_policy_keeps_its_name_and_summary(tmp_path):
    body = GREEDY + "\n    def summary(self):\n        return {'mine': 1}\n"
    assert main(["simulate", "--policy", _policy(tmp_path, body), "--n-jobs", "20",
                 "--no-gantt", "--no-progress", "--out", str(tmp_path / "o")]) == 0
    doc = json.loads((tmp_path / "o" / "metrics.json").read_text())
    assert doc["policy"] == "greedy" and doc["info"]["mine"] == 1
