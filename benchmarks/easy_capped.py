"""Power-capped EASY against uncapped EASY on the same chromosome (a benchmark, not a test).

Decodes, on one Numba thread, the submit order with an empty blacklist and a
random chromosome (random order, 30% of blacklist entries drawn in [0, 1])
with EASY backfilling, without a cap and under caps of 0.85 and 0.55 of the
federation's peak power, on batch job-sets of the bundled HPC2N month (its
first 1,000 jobs and the whole month, power factors lognormal(0, 0.25), seed
0, the jobs no cap of the study can run dropped) and, when the shared trace
is found, the first 10,000 jobs of HPC2N from job 40,000; best of
``--repeat`` decodes, in CPU seconds (``time.process_time``: the machine is
shared, and wall time counts the other work on it). Reports each capped
decode's time over the uncapped one's. Writes ``results/easy_capped.json`` and ``results/easy_capped.md``::

    python benchmarks/easy_capped.py           # about a minute once compiled
    python benchmarks/easy_capped.py --quick   # seconds, to a temporary folder
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import time

import numba
import numpy as np
from _bench import add_options, out_dir

import moga
from moga.model.schedule import cap_runnable
from moga.outputs import atomic_write

CAPS = (0.85, 0.55)
SHARED = "HPC2N-2002-2.2-cln.swf.gz"


def _best(f, repeat):
    best = np.inf
    for _ in range(repeat):
        t = time.process_time()
        f()
        best = min(best, time.process_time() - t)
    return best


def _jobsets(fed, quick):
    """``(label, job-set)`` pairs, the jobs no cap of :data:`CAPS` can run dropped."""
    tr = moga.load_default()
    month = tr.jobset(start=tr.windows(days=30)[0], days=30, federation=fed,
                      power="lognormal", seed=0)
    month = month.take(cap_runnable(month, fed.with_cap(fraction=min(CAPS))))
    if quick:
        yield "bundled month, first 200 jobs", month.take(np.arange(200))
        return
    yield "bundled month, first 1,000 jobs", month.take(np.arange(1000))
    yield "bundled month", month
    try:
        big = moga.load_swf(moga.resolve_trace(SHARED))
    except moga.TraceNotFoundError:
        return
    js = big.jobset(start=40000, n_jobs=10000, federation=fed, power="lognormal", seed=0)
    yield "HPC2N, 10,000 jobs from job 40,000", js.take(
        cap_runnable(js, fed.with_cap(fraction=min(CAPS))))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=None, help="decodes per point (default 3)")
    add_options(ap, "200 jobs of the bundled month, one decode per point")
    args = ap.parse_args(argv)
    out = out_dir(args)
    repeat = args.repeat or (1 if args.quick else 3)
    numba.set_num_threads(1)
    fed = moga.Federation.preset("default")
    rows = []
    for label, js in _jobsets(fed, args.quick):
        J, K = len(js), fed.n_clusters
        rng = np.random.default_rng(1)
        chromosomes = {"submit order": (js.submit_order, None),
                       "random": (rng.permutation(J),
                                  np.where(rng.random((J, K)) < 0.3, rng.random((J, K)), 0.0))}
        for name, (order, bl) in chromosomes.items():
            row = {"jobset": label, "n_jobs": J, "chromosome": name}
            for cap in (None, *CAPS):
                f = fed if cap is None else fed.with_cap(fraction=cap)
                moga.evaluate(js, f, order, bl, backfill="easy")  # compile or load
                row["uncapped_s" if cap is None else f"cap_{cap}_s"] = _best(
                    lambda f=f, js=js, o=order, b=bl: moga.evaluate(js, f, o, b, backfill="easy"),
                    repeat)
            for cap in CAPS:
                row[f"cap_{cap}_ratio"] = row[f"cap_{cap}_s"] / row["uncapped_s"]
            rows.append(row)
            print(row, flush=True)
    doc = {"date": datetime.date.today().isoformat(), "federation": fed.name,
           "load_average": round(os.getloadavg()[0], 2),
           "machine": platform.machine(), "numba": numba.__version__, "repeat": repeat,
           "rows": rows}
    atomic_write(out / "easy_capped.json", json.dumps(doc, indent=2) + "\n")
    head = " | ".join(f"cap {c} ms (x uncapped)" for c in CAPS)
    md = ["# Power-capped EASY against uncapped EASY, same chromosome", "",
          f"`python benchmarks/easy_capped.py`, {doc['date']}: federation `{fed.name}`, fluid "
          "model, batch mode, one Numba thread, CPU time (process_time), best of "
          f"{repeat} decodes; caps are fractions of the federation's peak power. Load "
          f"average (1 min) at the end: {doc['load_average']} (other work on the machine "
          "makes the times, and so the ratios, noisy).", "",
          f"| job-set | jobs | chromosome | uncapped ms | {head} |",
          "|---|---|---|---|" + "---|" * len(CAPS)]
    for r in rows:
        cells = " | ".join(f"{1e3 * r[f'cap_{c}_s']:.1f} ({r[f'cap_{c}_ratio']:.1f}x)"
                           for c in CAPS)
        md.append(f"| {r['jobset']} | {r['n_jobs']:,} | {r['chromosome']} | "
                  f"{1e3 * r['uncapped_s']:.1f} | {cells} |")
    atomic_write(out / "easy_capped.md", "\n".join(md) + "\n")
    print("\n".join(md))


if __name__ == "__main__":
    main()
