"""Every long command says what it is doing: a start line, then a line per step."""

from __future__ import annotations

import re

import pytest

from moga.cli import main

STEP = re.compile(r"^  \[ *\d+\.\d s\] (.*) \.\.\.$")


def _steps(text: str) -> list[str]:
    return [m.group(1) for m in map(STEP.match, text.splitlines()) if m]


@pytest.mark.parametrize("argv, steps", [
    (["compare", "--n-jobs", "20", "--algorithms", "FCFS", "EASY"], ["FCFS", "EASY"]),
    (["value", "--n-jobs", "20", "--pop", "4", "--gen", "2"],
     ["online-EASY", "online-FCFS-multi", "Max-Max-Value", "Max-Max-VPR",
      "best known value: GA pop 4 x 2 generations", "upper bound"]),
    (["rl", "evaluate", "--lam", "0.5", "0.7", "--sequences", "1"],
     ["lambda 0.5, beta 0.5", "lambda 0.7, beta 0.5"]),
])
def test_a_line_per_step_unless_no_progress(argv, steps, tmp_path, capsys):
    assert main([*argv, "--out", str(tmp_path / "a")]) == 0
    assert _steps(capsys.readouterr().out) == steps
    assert main([*argv, "--out", str(tmp_path / "b"), "--no-progress"]) == 0
    assert _steps(capsys.readouterr().out) == []
