"""Sphinx configuration of moga's documentation (``sphinx-build -W docs docs/_build``)."""

import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
sys.path.insert(0, str(ROOT))
os.environ.setdefault("NUMBA_DISABLE_JIT", "0")

import moga  # noqa: E402

project = "moga"
release = version = moga.__version__
author = "the moga developers"
copyright = "2026, the moga developers"

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "numpydoc",
    "sphinxarg.ext",
]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = ["_build"]
myst_heading_anchors = 3
# Every warning counts (sphinx-build -W): a dead link or a missing page fails the build.
suppress_warnings = []
# Typographic quotes and ellipses, but no dashes: "--gen" in a help text or a page stays
# two hyphens (an en dash would make a copied option wrong).
smartquotes_action = "qe"

# Every public method and documented attribute of a class, in source order.
autodoc_default_options = {"members": True, "member-order": "bysource"}
autodoc_typehints = "none"
numpydoc_show_class_members = False
numpydoc_validation_checks = set()
numpydoc_xref_param_type = False

html_theme = "alabaster"
html_title = f"moga {release}"
html_static_path = ["_static"]
html_css_files = ["moga.css"]
html_theme_options = {"page_width": "1180px", "sidebar_width": "240px"}

# The benchmark results live in the repository's results/ folder, beside docs/, where the
# benchmarks write them and where the Markdown sources link to them (so that the links work
# when the sources are read in the repository). The site copies them into docs/results/
# (ignored by git) and points those links at the copies, so that they render as pages.
RESULTS = ROOT / "results"
SITE_RESULTS = DOCS / "results"
_LINK = re.compile(r"(\]\()([^)\s#]+)([^)]*\))")


def _sync_results():
    """Copy results/*.md (as orphan pages) and the images they show into docs/results/."""
    if not RESULTS.is_dir():
        return
    for src in RESULTS.rglob("*"):
        if src.suffix not in (".md", ".png") or (src.suffix == ".md" and src.parent != RESULTS):
            continue
        dst = SITE_RESULTS / src.relative_to(RESULTS)
        data = src.read_bytes()
        if src.suffix == ".md":
            data = b"---\norphan: true\n---\n\n" + data
        if not dst.exists() or dst.read_bytes() != data:
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.write_bytes(data)
    for dst in list(SITE_RESULTS.rglob("*")):
        if dst.is_file() and not (RESULTS / dst.relative_to(SITE_RESULTS)).exists():
            dst.unlink()


def _point_at_site_results(app, docname, source):
    """Rewrite a page's links into ../results/ to the copies under docs/results/."""
    page_dir = (DOCS / docname).parent

    def repl(m):
        target = (page_dir / m.group(2)).resolve()
        if target.is_relative_to(RESULTS) and not m.group(2).startswith(("http:", "https:")):
            new = os.path.relpath(SITE_RESULTS / target.relative_to(RESULTS), page_dir)
            return m.group(1) + Path(new).as_posix() + m.group(3)
        return m.group(0)

    source[0] = _LINK.sub(repl, source[0])


def _cli_as_its_help_says(app, doctree):
    """The CLI reference (cli.md) as the help texts read on a terminal.

    Docutils makes any ``word@word`` an e-mail link, so ``NAME@auto`` becomes
    ``mailto:NAME%40auto``: such links go back to text. sphinx-argparse adds a
    ``Default: x`` line to every option; where the help text already says its
    default, the line would repeat it and is dropped.
    """
    from docutils import nodes

    if app.env.docname != "cli":
        return
    for ref in list(doctree.findall(nodes.reference)):
        if ref.get("refuri", "").startswith("mailto:"):
            ref.replace_self(nodes.Text(ref.astext()))
    for para in list(doctree.findall(nodes.paragraph)):
        if not para.astext().startswith("Default:"):
            continue
        said = " ".join(p.astext() for p in para.parent.children if p is not para)
        if "default" in said.lower():
            para.parent.remove(para)


def setup(app):
    _sync_results()
    app.connect("source-read", _point_at_site_results)
    app.connect("doctree-read", _cli_as_its_help_says)
