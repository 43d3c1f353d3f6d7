"""The documentation builds without warnings, its code runs and its names resolve."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_readme import _resolve

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.rglob("*.md"))
CODE = re.compile(r"```python\n(.*?)```", re.S)
GUIDE = [p for p in sorted((DOCS / "guide").glob("*.md")) if CODE.search(p.read_text())]


@pytest.mark.slow
def test_documentation_builds_without_warnings(tmp_path):
    pytest.importorskip("sphinx")
    pytest.importorskip("sphinxarg")
    pytest.importorskip("numpydoc")
    pytest.importorskip("myst_parser")
    from sphinx.cmd.build import build_main

    assert build_main(["-W", "--keep-going", "-q", "-b", "html", str(DOCS),
                       str(tmp_path / "html")]) == 0
    assert (tmp_path / "html" / "cli.html").read_text().count("moga run") >= 1
    assert "load_swf" in (tmp_path / "html" / "api.html").read_text()


@pytest.mark.parametrize("page", GUIDE, ids=lambda p: p.name)
def test_guide_code_runs(page, tmp_path, monkeypatch):
    blocks = CODE.findall(page.read_text())
    code = "\n".join(blocks).replace("n_gen=200", "n_gen=3").replace("pop_size=100", "pop_size=8")
    monkeypatch.chdir(tmp_path)
    exec(compile(code, str(page), "exec"), {})


@pytest.mark.parametrize("dotted", sorted({n for p in PAGES for n in re.findall(
    r"`((?:moga|decoders)(?:\.[A-Za-z_][A-Za-z0-9_]*)+)", p.read_text())}))
def test_doc_names_resolve(dotted):
    _resolve(dotted)


def test_every_page_is_in_the_toctree():
    index = (DOCS / "index.md").read_text()
    for p in PAGES:
        rel = p.relative_to(DOCS).with_suffix("").as_posix()
        if rel != "index":
            assert rel in index, f"{rel} is not in docs/index.md's toctree"


def test_readme_is_short():
    assert len((ROOT / "README.md").read_text().splitlines()) <= 250
