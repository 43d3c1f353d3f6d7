"""Sphinx configuration of moga's documentation (``sphinx-build -W docs docs/_build``)."""

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
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
# The guide pages link to the repository's files (results/, benchmarks/) and to each other.
suppress_warnings = ["myst.xref_missing", "myst.header", "myst.domains"]

autodoc_default_options = {"members": False}
autodoc_typehints = "none"
numpydoc_show_class_members = False
numpydoc_validation_checks = set()
numpydoc_xref_param_type = False

html_theme = "alabaster"
html_title = f"moga {release}"
