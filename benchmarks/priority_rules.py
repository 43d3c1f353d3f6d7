"""A user's priority rule at kernel speed against the built-in EASY and a Python policy (not a test).

On the first 10,000 jobs of RICC-2010-2 (shared traces; the bundled HPC2N
excerpt with ``--quick``) in release mode on ``default@auto``, planning on
requested times, prints the best of ``--repeat`` runs of: the built-in
``easy``; a rule returning ``submit`` (the same schedule, checked); the WFP3
rule of docs/guide/examples/wfp3.py; and, on the first ``--python-jobs`` jobs,
the same WFP3 as a Python policy on a Session (``WFP3Policy``) against the
rule on those jobs (the same schedule, checked). Run it once to compile::

    python benchmarks/priority_rules.py
    python benchmarks/priority_rules.py --quick
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numba
import numpy as np
from _bench import best_of

import moga

EXAMPLE = Path(__file__).resolve().parents[1] / "docs" / "guide" / "examples" / "wfp3.py"


@numba.njit
def fifo(now, submit, tasks, estimate):
    return submit


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the bundled trace, 2,000 jobs")
    ap.add_argument("--jobs", type=int, default=10_000)
    ap.add_argument("--python-jobs", type=int, default=2_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    if args.quick:
        tr, n = moga.load_default(), 2_000
    else:
        tr, n = moga.load_swf(moga.resolve_trace("RICC-2010-2.swf.gz")), args.jobs
    fed = moga.Federation.load("default@auto", auto_nodes=tr.auto_nodes)
    js = tr.jobset(n_jobs=n, federation=fed, batch=False)
    wfp3 = f"{EXAMPLE}:score"
    moga.simulate(js, fed, fifo)  # compile (or load) before timing
    moga.simulate(js, fed, wfp3)
    t_easy, easy = best_of(lambda: moga.simulate(js, fed, "easy"), args.repeat)
    t_fifo, rule = best_of(lambda: moga.simulate(js, fed, fifo), args.repeat)
    t_wfp3, _ = best_of(lambda: moga.simulate(js, fed, wfp3), args.repeat)
    same = all(np.array_equal(getattr(easy, a), getattr(rule, a))
               for a in ("start", "finish", "alloc"))
    print(f"{js.name}: {len(js)} jobs on {fed!r}, requested times")
    print(f"  built-in easy        {t_easy:8.3f} s")
    print(f"  rule submit (=easy)  {t_fifo:8.3f} s  x{t_fifo / t_easy:.2f} of easy; "
          f"same schedule: {same}")
    print(f"  rule WFP3            {t_wfp3:8.3f} s  x{t_wfp3 / t_easy:.2f} of easy")
    small = js.take(np.arange(min(args.python_jobs, len(js))))
    moga.simulate(small.take(np.arange(20)), fed, f"{EXAMPLE}:WFP3Policy")  # its steps' compile
    t_rule, a = best_of(lambda: moga.simulate(small, fed, wfp3), args.repeat)
    t_py, b = best_of(lambda: moga.simulate(small, fed, f"{EXAMPLE}:WFP3Policy"), 1)
    same = all(np.array_equal(getattr(a, x), getattr(b, x)) for x in ("start", "finish", "alloc"))
    print(f"  {len(small)} jobs: rule WFP3 {t_rule:.3f} s, Python policy {t_py:.3f} s "
          f"(x{t_py / t_rule:.0f} faster as a rule); same schedule: {same}")


if __name__ == "__main__":
    main()
