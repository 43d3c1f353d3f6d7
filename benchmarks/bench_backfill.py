"""Benchmark of EASY backfilling against in-order decoding on batch job-sets (not a test).

MOGA's re-sequencing (:mod:`moga.evolution.resequencing`) decodes a few
children per generation with EASY backfilling, so its cost per generation is
set by how much dearer an EASY decode is than an in-order one. In a batch
job-set every job waits from time 0, and EASY scans the whole queue for
backfill candidates at every event. This benchmark measures, on one thread:

* milliseconds per decode with ``backfill="easy"`` and ``backfill="none"`` on
  batch job-sets of growing size: the first 1,000 jobs and one month of the
  bundled HPC2N excerpt, and one month of each shared trace that is present
  (``moga.resolve_trace``; missing ones are skipped and reported);
* their ratio, on random chromosomes (random orders, 30% of blacklist entries
  drawn in [0, 1]) and on the submit order with an empty blacklist;
* the same on evolved chromosomes, the kind re-sequencing decodes: the final
  fronts of default MOGA runs (``--evolved-gens`` generations, seed 1) on
  the 1,000-job convergence sets of ``benchmarks/quality.py`` (shared traces;
  skipped when missing). Their blacklists keep most backfill candidates off
  the free nodes, which random chromosomes rarely do.

Writes ``results/bench_backfill.json`` and ``results/bench_backfill.md``::

    python benchmarks/bench_backfill.py            # about two minutes
    python benchmarks/bench_backfill.py --quick    # seconds, to a temporary folder
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

#: Shared traces measured when present: (name, file, max_procs).
TRACES = (
    ("CTC-SP2", "CTC-SP2-1996-3.1-cln.swf.gz", None),
    ("METACENTRUM", "METACENTRUM-2009-2.swf.gz", None),
    ("CEA-Curie", "CEA-Curie-2011-2.1-cln.swf.gz", None),
)


def _jobsets(skipped, quick=False):
    """(label, job-set, federation) of growing size; traces not found go to ``skipped``."""
    tr = moga.load_default()
    fed = moga.Federation.load("default@auto", auto_nodes=tr.auto_nodes)
    if quick:
        yield "HPC2N excerpt, first 100 jobs", tr.jobset(n_jobs=100, federation=fed), fed
        return
    yield "HPC2N excerpt, first 1,000 jobs", tr.jobset(n_jobs=1000, federation=fed), fed
    yield "HPC2N excerpt, one month", tr.jobset(start=tr.windows(days=30)[0], days=30,
                                                 federation=fed), fed
    for name, file, max_procs in TRACES:
        try:
            path = moga.resolve_trace(file)
        except FileNotFoundError:
            skipped.append(name)
            continue
        tr = moga.load_swf(path, max_procs=max_procs)
        fed = moga.Federation.load("default@auto", auto_nodes=tr.auto_nodes)
        yield f"{name}, one month", tr.jobset(start=tr.windows(days=30)[1], days=30,
                                               federation=fed), fed


def _ms(js, fed, orders, bls, backfill, repeat):
    """Median milliseconds per decode of ``orders``/``bls`` (each decoded ``repeat`` times)."""
    times = []
    for o, b in zip(orders, bls, strict=True):
        for _ in range(repeat):
            t = time.perf_counter()
            moga.evaluate(js, fed, o, b, backfill=backfill)
            times.append(time.perf_counter() - t)
    return float(np.median(times) * 1e3)


#: Front members decoded per convergence set.
N_EVOLVED = 20


def _evolved(n_gen, skipped, quick=False):
    """EASY against in-order ms per decode of front members of default runs (see the docstring)."""
    from quality import CONVERGENCE, _jobset

    from moga.model.workload import default_trace_path

    rows = []
    sets = [("HPC2N", default_trace_path(), 0, False)] if quick else CONVERGENCE
    for name, file, start, release in sets:
        try:
            js, fed = _jobset(file, n_jobs=100 if quick else 1000, start=start, release=release)
        except FileNotFoundError:
            skipped.append(f"{name} (evolved)")
            continue
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)  # the run itself on every core
        r = moga.run(js, fed, seed=1, n_gen=n_gen, pop_size=10 if quick else None)
        numba.set_num_threads(1)
        pick = np.unique(np.linspace(0, len(r.F) - 1, N_EVOLVED).round().astype(int))
        chrom = [r.chromosome(int(i)) for i in pick]
        orders, bls = [c[0] for c in chrom], [c[1] for c in chrom]
        easy = _ms(js, fed, orders, bls, "easy", 3)
        none = _ms(js, fed, orders, bls, "none", 9)
        rows.append({"jobset": f"{name} (1,000 jobs from job {start})", "chromosomes": len(pick),
                     "easy_ms": easy, "in_order_ms": none, "ratio": easy / none})
        print(f"{name} evolved: easy {easy:.3g} ms, in order {none:.3g} ms", flush=True)
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chromosomes", type=int, default=None,
                    help="random chromosomes per job-set (default 4)")
    ap.add_argument("--evolved-gens", type=int, default=None,
                    help="generations of the runs whose fronts are the evolved chromosomes "
                         "(default 200; 0 skips them)")
    add_options(ap, "100 jobs of the bundled month, 2 chromosomes, 2 generations")
    args = ap.parse_args(argv)
    out = out_dir(args)
    if args.chromosomes is None:
        args.chromosomes = 2 if args.quick else 4
    if args.evolved_gens is None:
        args.evolved_gens = 2 if args.quick else 200
    numba.set_num_threads(1)
    skipped = []
    rows = []
    for label, js, fed in _jobsets(skipped, args.quick):
        J, K = len(js), fed.n_clusters
        rng = np.random.default_rng(0)
        orders = [rng.permutation(J) for _ in range(args.chromosomes)]
        bls = [rng.uniform(0, 1, (J, K)) * (rng.uniform(size=(J, K)) < 0.3)
               for _ in range(args.chromosomes)]
        submit = [np.lexsort((np.arange(J), js.release))]
        empty = [np.zeros((J, K))]
        moga.evaluate(js, fed, backfill="easy")  # compile / load the cache
        moga.evaluate(js, fed)
        rep = 1 if args.quick or J > 5000 else 3
        row = {"jobset": label, "n_jobs": J, "nodes": int(fed.nodes.sum())}
        for kind, o, b in (("random", orders, bls), ("submit", submit, empty)):
            easy = _ms(js, fed, o, b, "easy", rep)
            none = _ms(js, fed, o, b, "none", 3 * rep)
            row[kind] = {"easy_ms": easy, "in_order_ms": none, "ratio": easy / none}
        rows.append(row)
        print(f"{label}: " + ", ".join(
            f"{k} easy {row[k]['easy_ms']:.3g} ms, in order {row[k]['in_order_ms']:.3g} ms, "
            f"x{row[k]['ratio']:.0f}" for k in ("random", "submit")), flush=True)

    evolved = _evolved(args.evolved_gens, skipped, args.quick) if args.evolved_gens > 0 else []
    res = {"rows": rows, "evolved": evolved, "evolved_gens": args.evolved_gens,
           "skipped": skipped, "threads": 1, "machine": platform.machine(),
           "python": platform.python_version(), "numba": numba.__version__}
    atomic_write(out / "bench_backfill.json", json.dumps(res, indent=2) + "\n")
    lines = [
        "# EASY backfilling against in-order decoding (batch job-sets)",
        "",
        "`python benchmarks/bench_backfill.py`: federation `default@auto` sized to each "
        f"trace, fluid model, batch mode, one Numba thread, numba {res['numba']}, Python "
        f"{res['python']} ({res['machine']}). Medians per decode; random chromosomes: "
        f"{args.chromosomes} random orders with 30% of blacklist entries drawn in [0, 1].",
        "",
        "| job-set | jobs | nodes | random: EASY ms | in order ms | ratio "
        "| submit order: EASY ms | in order ms | ratio |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        a, s = r["random"], r["submit"]
        lines.append(f"| {r['jobset']} | {r['n_jobs']:,} | {r['nodes']:,} | {a['easy_ms']:.3g} | "
                     f"{a['in_order_ms']:.3g} | {a['ratio']:.0f} | {s['easy_ms']:.3g} | "
                     f"{s['in_order_ms']:.3g} | {s['ratio']:.0f} |")
    if evolved:
        lines += ["", f"Evolved chromosomes: up to {N_EVOLVED} members of the front of a "
                  f"default {args.evolved_gens}-generation MOGA run (seed 1) on each 1,000-job "
                  "convergence set of `benchmarks/quality.py`, each decoded alone.", "",
                  "| job-set | chromosomes | EASY ms | in order ms | ratio |", "|---|---|---|---|---|"]
        for r in evolved:
            lines.append(f"| {r['jobset']} | {r['chromosomes']} | {r['easy_ms']:.3g} | "
                         f"{r['in_order_ms']:.3g} | {r['ratio']:.0f} |")
    if skipped:
        lines += ["", "Not found (skipped): " + ", ".join(skipped) + "."]
    atomic_write(out / "bench_backfill.md", "\n".join(lines) + "\n")
    print(f"wrote {out / 'bench_backfill.md'}")


if __name__ == "__main__":
    main()
