"""The documentation builds without warnings, its code runs and its names resolve."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_readme import _resolve

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
# docs/results/ is the site's copy of results/ (docs/conf.py), docs/_build/ a build.
PAGES = sorted(p for p in DOCS.rglob("*.md")
               if p.relative_to(DOCS).parts[0] not in ("results", "_build"))
LINK = re.compile(r"\]\(([^)\s]+)\)")
# Public methods the API page must show, per class (issue 53).
API_METHODS = {
    "moga.sim.Session": ["start", "queued", "running", "advance", "reject", "preempt",
                         "result", "free", "now", "estimate"],
    "moga.sim.OnlinePolicy": ["decide", "reset"],
    "moga.Schedule": ["to_csv", "to_swf", "to_dataframe", "power_profile"],
    "moga.RunResult": ["save", "knee", "schedule", "summary"],
    "moga.JobSet": ["take", "with_power", "submit_order", "kill_at_request"],
    "moga.Federation": ["preset", "from_toml", "scaled", "with_cap", "to_toml"],
    "moga.Trace": ["jobset", "windows"],
}
CODE = re.compile(r"```python\n(.*?)```", re.S)
GUIDE = [p for p in sorted((DOCS / "guide").glob("*.md")) if CODE.search(p.read_text())]


@pytest.mark.slow
# myst-parser's own use of Sphinx APIs that Sphinx 11 removes: not the documentation's warnings
@pytest.mark.filterwarnings("ignore:.*is deprecated. Check CHANGES for Sphinx API")
def test_documentation_builds_without_warnings(tmp_path):
    pytest.importorskip("sphinx")
    pytest.importorskip("sphinxarg")
    pytest.importorskip("numpydoc")
    pytest.importorskip("myst_parser")
    from sphinx.cmd.build import build_main

    html = tmp_path / "html"
    assert build_main(["-W", "--keep-going", "-q", "-b", "html", str(DOCS), str(html)]) == 0
    assert (html / "cli.html").read_text().count("moga run") >= 1
    api = (html / "api.html").read_text()
    assert "load_swf" in api
    for cls, methods in API_METHODS.items():
        assert f'id="{cls}"' in api, cls
        missing = [m for m in methods if f'id="{cls}.{m}"' not in api]
        assert not missing, f"the API page shows no {missing} of {cls}"
    # every results page the benchmarks page links to is a page of the site, and a link
    benchmarks = (html / "benchmarks.html").read_text()
    linked = set(re.findall(r'href="results/([a-z_0-9]+)\.html"', benchmarks))
    assert len(linked) >= 20 and all((html / "results" / f"{n}.html").exists() for n in linked)
    for page in html.rglob("*.html"):
        assert 'class="xref myst"' not in page.read_text(), f"a dead link in {page.name}"
    assert (html / "readme.html").exists() and 'href="readme.html"' in (html / "index.html").read_text()


@pytest.mark.filterwarnings("ignore:The inplace keyword")  # evalys's use of pandas
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


def _links(page):
    """The relative link targets of a Markdown page (no URL, no anchor-only link)."""
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)
    return [t.split("#")[0] for t in LINK.findall(text)
            if not re.match(r"[a-z]+:", t) and not t.startswith("#")]


@pytest.mark.parametrize("page", PAGES + [ROOT / "README.md"], ids=lambda p: p.name)
def test_links_resolve(page):
    """Every relative link of a page points at a file that exists; a docs page links only to
    pages of the site: other docs pages, or results/ pages (which the site copies)."""
    for target in _links(page):
        path = (page.parent / target).resolve()
        assert path.exists(), f"{page.name}: the link {target} points at nothing"
        if page.is_relative_to(DOCS) and path.suffix == ".md":
            assert path.is_relative_to(DOCS) or path.is_relative_to(ROOT / "results"), \
                f"{page.name}: {target} is not a page of the site"


def test_every_page_is_in_the_toctree():
    index = (DOCS / "index.md").read_text()
    for p in PAGES:
        rel = p.relative_to(DOCS).with_suffix("").as_posix()
        if rel != "index":
            assert rel in index, f"{rel} is not in docs/index.md's toctree"


def test_readme_is_short():
    assert len((ROOT / "README.md").read_text().splitlines()) <= 250
