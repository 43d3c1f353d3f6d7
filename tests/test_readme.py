"""Every README line works as written: its Python code runs and its dotted names resolve."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_runs(tmp_path, monkeypatch):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    assert blocks
    # The same code with a short run: the point is that every line works.
    code = "\n".join(blocks).replace("n_gen=200", "n_gen=3").replace("pop_size=100", "pop_size=8")
    monkeypatch.chdir(tmp_path)
    exec(compile(code, str(README), "exec"), {})
    assert (tmp_path / "front.png").exists() and (tmp_path / "gantt.png").exists()


def _resolve(dotted):
    parts = dotted.split(".")
    obj = importlib.import_module(parts[0])
    for i, p in enumerate(parts[1:], start=1):
        if hasattr(obj, p):
            obj = getattr(obj, p)
        else:
            obj = importlib.import_module(".".join(parts[:i + 1]))
    return obj


@pytest.mark.parametrize("dotted", sorted(set(re.findall(
    r"`((?:moga|decoders)(?:\.[A-Za-z_][A-Za-z0-9_]*)+)", README.read_text()))))
def test_readme_names_resolve(dotted):
    _resolve(dotted)
