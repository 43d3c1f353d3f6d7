"""How an EASY decode's cost grows with the job count: RICC's largest month (not a test).

MOGA's seeding decodes the submit order with EASY backfilling, and
``--backfill easy`` decodes every child that way, so the EASY decode of a
large batch job-set must stay near linear in its job count. This benchmark
takes the 30-day window of RICC-2010-2 (shared traces) with the most jobs,
in batch mode (every job queued at 0, the worst case for the backfill scan),
on ``default@auto``, and times, on one Numba thread, one EASY decode and one
in-order decode of its first 10k, 20k, 40k, 80k jobs and of the whole
window, in the submit order with an empty blacklist, and one EASY decode of
a random chromosome (random order, 30% of blacklist entries drawn in
[0, 1]; at each size the jobs of the whole window's chromosome that the size
holds, in its order). It reports the fitted cost exponents (log-log slopes
of EASY's time against the job count) of both. The schedules are those of the full queue
scan: ``tests/test_decoder_backfill.py`` checks EASY against its twin.

Writes ``results/easy_scaling.json`` and ``results/easy_scaling.md``::

    python benchmarks/easy_scaling.py          # about two minutes once compiled
    python benchmarks/easy_scaling.py --quick  # seconds, to a temporary folder
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

import numba
import numpy as np
from _bench import add_options, out_dir

import moga
from moga.outputs import atomic_write

ROOT = Path(__file__).resolve().parents[1]
SIZES = (10_000, 20_000, 40_000, 80_000)


def _largest_month(trace):
    fed = moga.Federation.load("default@auto", auto_nodes=trace.auto_nodes)
    best = None
    for w in trace.windows(days=30):
        js = trace.jobset(start=w, days=30, federation=fed)
        if best is None or len(js) > len(best):
            best = js
    return best, fed


def _time(js, fed, order, blacklist, backfill, repeat):
    best = np.inf
    for _ in range(repeat):
        t = time.perf_counter()
        s = moga.evaluate(js, fed, order, blacklist, backfill=backfill)
        best = min(best, time.perf_counter() - t)
    return best, s


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=2, help="decodes per point (the best counts)")
    add_options(ap, "the bundled HPC2N month's first 300 jobs")
    args = ap.parse_args(argv)
    out = out_dir(args)
    numba.set_num_threads(1)
    if args.quick:
        trace, sizes = moga.load_default(), (100, 200)
    else:
        trace, sizes = moga.load_swf(moga.resolve_trace("RICC-2010-2.swf.gz")), SIZES
    full, fed = _largest_month(trace)
    if args.quick:
        full = full.take(np.arange(min(300, len(full))))
    moga.evaluate(full.take(np.arange(50)), fed, backfill="easy")  # compile or load
    rng = np.random.default_rng(1)
    J, K = len(full), fed.n_clusters
    order = rng.permutation(J)
    bl = np.where(rng.random((J, K)) < 0.3, rng.random((J, K)), 0.0)
    rows = []
    for n in (*[s for s in sizes if s < len(full)], len(full)):
        js = full.take(np.arange(n))
        t_easy, s = _time(js, fed, js.submit_order, None, "easy", args.repeat)
        t_none, _ = _time(js, fed, js.submit_order, None, "none", args.repeat)
        t_rand, _ = _time(js, fed, order[order < n], bl[:n], "easy", args.repeat)
        rows.append({"jobs": n, "easy_s": t_easy, "in_order_s": t_none, "random_easy_s": t_rand,
                     "makespan_s": s.makespan, "energy_J": s.energy})
        print(f"{n:>7} jobs: EASY {t_easy:7.3f} s, in order {t_none:6.3f} s, EASY random "
              f"{t_rand:7.3f} s", flush=True)
    n = np.array([r["jobs"] for r in rows], dtype=float)
    slope, slope_rand = (float(np.polyfit(np.log(n), np.log([r[k] for r in rows]), 1)[0])
                         for k in ("easy_s", "random_easy_s"))
    t_rand = rows[-1]["random_easy_s"]
    doc = {"trace": "HPC2N (bundled)" if args.quick else "RICC-2010-2", "window": full.name,
           "federation": repr(fed),
           "numba": numba.__version__, "python": platform.python_version(),
           "machine": platform.machine(), "rows": rows, "random_chromosome_easy_s": t_rand,
           "easy_exponent": slope, "random_easy_exponent": slope_rand}
    atomic_write(out / "easy_scaling.json", json.dumps(doc, indent=2) + "\n")
    md = [f"# EASY decode cost against the job count ({doc['trace']}'s largest month, batch "
          "mode)", "",
          f"`python benchmarks/easy_scaling.py`: {full.name} ({len(full):,} jobs) on "
          f"`default@auto` ({fed!r}), fluid model, batch mode, one Numba thread, numba "
          f"{numba.__version__}, Python {platform.python_version()} ({platform.machine()}); "
          f"best of {args.repeat} decodes per point (wall time); the submit order with an empty "
          "blacklist, and a random chromosome (random order, 30% of blacklist entries in "
          "[0, 1]; at each size the jobs it holds of the whole window's chromosome).", "",
          "| jobs | EASY s | in order s | EASY makespan h | EASY s, random chromosome |",
          "|---|---|---|---|---|"]
    md += [f"| {r['jobs']:,} | {r['easy_s']:.4f} | {r['in_order_s']:.4f} | "
           f"{r['makespan_s'] / 3600:.1f} | {r['random_easy_s']:.4f} |" for r in rows]
    md += ["", f"Fitted cost exponent of EASY (log-log slope): {slope:.2f} in the submit order, "
           f"{slope_rand:.2f} for the random chromosome.", ""]
    atomic_write(out / "easy_scaling.md", "\n".join(md))
    print(f"wrote {out}/easy_scaling.md and easy_scaling.json")


if __name__ == "__main__":
    main()
