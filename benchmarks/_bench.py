"""What the benchmark scripts share: the ``--quick`` and ``--out`` options.

Every script in ``benchmarks/`` (but the ``_``-prefixed helpers) takes
``--quick``: tiny sizes that run in seconds, to check that the script still
works, not to measure anything. A quick run writes to a new temporary folder
(or to ``--out``), never to ``results/``; ``tests/test_benchmarks.py`` runs
every script's quick mode.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "results"


def add_options(ap, quick_help: str = "tiny sizes, seconds: checks the script, measures nothing"):
    """Add ``--quick`` and ``--out`` to the argument parser ``ap``."""
    ap.add_argument("--quick", action="store_true",
                    help=f"{quick_help}; writes to a temporary folder unless --out is given, "
                         "never to results/")
    ap.add_argument("--out", default=None,
                    help="folder of the output files (default: results/, or a temporary "
                         "folder with --quick); made if missing")
    return ap


def out_dir(args) -> Path:
    """The folder the run writes to, made if missing (see :func:`add_options`)."""
    if args.out is None:
        out = Path(tempfile.mkdtemp(prefix="moga-bench-")) if args.quick else RESULTS
    else:
        out = Path(args.out)
    if args.quick and (out.resolve() == RESULTS.resolve()
                       or RESULTS.resolve() in out.resolve().parents):
        raise SystemExit(f"--quick writes no results: choose an --out outside {RESULTS}")
    out.mkdir(parents=True, exist_ok=True)
    return out


def best_of(f, repeat: int, clock=time.perf_counter):
    """``(best time, last result)`` of ``repeat`` calls of ``f``, timed by ``clock``."""
    best, out = float("inf"), None
    for _ in range(repeat):
        t = clock()
        out = f()
        best = min(best, clock() - t)
    return best, out
