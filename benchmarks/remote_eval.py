"""One population's decodes on Dask workers (``moga.run(..., evaluator=client)``): speed.

On one job-set (default a 30-day month of RICC, 55,103 jobs on ``default@auto``; the
bundled HPC2N month when RICC is not at hand), the default search as the size rule picks it
(given a budget that never binds), a fixed number of generations after the first:

``local``
    The run in this process, every core's Numba threads.
``workers``
    The run with ``evaluator=`` a ``LocalCluster`` of 1 and then 2 worker processes, one
    thread each (``NUMBA_NUM_THREADS=1``), the same front checked bit for bit; per
    generation, the wall time, the time the workers decoded and the rest, which is the
    driver's own work (survival, archive, twins, mating) and the transfers.
``transfer``
    The wall time of sending one generation's chromosomes to a worker and back without
    decoding (``np.asarray`` on the worker), and the chromosomes' bytes.
``estimate``
    From those costs, an estimate (not a measurement) of the generations per wall hour
    with 16 and 64 workers: the driver's part and the transfers do not shrink with
    workers, the decodes do.

Writes ``results/remote_eval.md`` and ``results/remote_eval.json``::

    python benchmarks/remote_eval.py                 # about 15 minutes on 2 cores
    python benchmarks/remote_eval.py --gen 4 --trace HPC2N
    python benchmarks/remote_eval.py --quick --out /tmp/remote   # a smoke test
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench import add_options, out_dir  # noqa: E402

import moga  # noqa: E402
from moga.outputs import atomic_write  # noqa: E402

#: Workers of the estimate.
SCALE = (16, 64)


def _jobset(name: str, quick: bool):
    if quick:
        fed = moga.Federation.preset()
        return moga.load_default().jobset(n_jobs=60, federation=fed), fed
    if name == "RICC":
        try:
            path = moga.resolve_trace("RICC-2010-2.swf.gz")
        except moga.TraceNotFoundError:
            name = "HPC2N"
        else:
            # The coverage month of benchmarks/quality.py and default_budget.py.
            tr = moga.load_swf(path, max_procs=8192)
            fed = moga.Federation.load("default@auto", auto_nodes=tr.auto_nodes)
            return tr.jobset(start=tr.windows(days=30)[1], days=30, federation=fed), fed
    fed = moga.Federation.preset()
    return moga.load_default().jobset(days=30, federation=fed), fed


def _timed_run(js, fed, gen, evaluator=None):
    """``(result, wall s per generation after the first, decode s per generation, search)``
    of ``gen + 1`` generations of the default search as the size rule picks it (a budget
    that never binds, so that the generations are the same in every run)."""
    s = moga.Search(js, fed, seed=1, cpu_budget=1e9, evaluator=evaluator)
    s.step()  # the first generation (and the workers' compile, if any) is not timed
    search = s.search
    d0 = search.decode_seconds
    t0 = time.perf_counter()
    for _ in range(gen):
        s.step()
    wall = (time.perf_counter() - t0) / gen
    dec = (search.decode_seconds - d0) / gen
    if s.evaluator is not None:
        s.evaluator.close()
    return s.front(), wall, dec, s


def _transfer(client, X, repeat: int = 3) -> float:
    """Wall seconds of one round trip of ``X`` to a worker and back (the least of ``repeat``)."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        client.submit(np.asarray, X, pure=False).result()
        best = min(best, time.perf_counter() - t0)
    return best


def main(argv=None) -> int:
    ap = add_options(argparse.ArgumentParser(description=__doc__.split("\n\n")[0]))
    ap.add_argument("--trace", default="RICC", choices=["RICC", "HPC2N"])
    ap.add_argument("--gen", type=int, default=6, help="generations timed (after the first)")
    args = ap.parse_args(argv)
    out = out_dir(args)
    from distributed import Client, LocalCluster

    js, fed = _jobset(args.trace, args.quick)
    gen = 2 if args.quick else args.gen
    base, wall_local, dec_local, s = _timed_run(js, fed, gen)
    pop, easy = s.params.pop_size, s.params.easy_search
    rows = {"local": {"wall_s_per_gen": wall_local, "decode_s_per_gen": dec_local}}
    X = s.evolution.pop.X[:pop].copy()
    del s
    transfer = None
    # The workers' processes inherit the environment: one Numba thread each.
    saved = {k: os.environ.get(k) for k in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS")}
    if not args.quick:
        os.environ.update({"NUMBA_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"})
    for workers in (1, 2):
        with LocalCluster(n_workers=workers, threads_per_worker=1,
                          processes=not args.quick, dashboard_address=None) as cl, \
                Client(cl) as c:
            res, wall, dec, _ = _timed_run(js, fed, gen, evaluator=c)
            same = bool(np.array_equal(res[0], base[0]) and np.array_equal(res[1], base[1]))
            if workers == 1:
                transfer = _transfer(c, X)
        rows[f"{workers} worker(s)"] = {"wall_s_per_gen": wall, "decode_s_per_gen": dec,
                                        "same_front": same}
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
    one, two = rows["1 worker(s)"], rows["2 worker(s)"]
    # The workers' decode seconds are summed over workers; per generation on W workers the
    # decodes take about decode / W of wall, the rest stays.
    rest = max(one["wall_s_per_gen"] - one["decode_s_per_gen"], 0.0)
    estimate = {w: 3600.0 / (rest + one["decode_s_per_gen"] / w) for w in SCALE}
    doc = {"jobset": js.name, "n_jobs": len(js), "federation": fed.name, "pop_size": pop,
           "easy_search": bool(easy), "generations_timed": gen, "rows": rows,
           "speedup_2_over_1": one["wall_s_per_gen"] / two["wall_s_per_gen"],
           "gen_per_hour": {k: 3600.0 / v["wall_s_per_gen"] for k, v in rows.items()},
           "transfer_s_per_gen": transfer, "chromosome_bytes_per_gen": int(X.nbytes),
           "driver_and_transfer_s_per_gen": rest,
           "estimate_gen_per_hour": estimate,
           "machine": f"{platform.machine()}, {os.cpu_count()} cores"}
    atomic_write(out / "remote_eval.json", json.dumps(doc, indent=2) + "\n")
    lines = [f"# A population's decodes on Dask workers: {js.name}, {len(js):,} jobs",
             "", f"Regenerate: `python benchmarks/remote_eval.py` ({doc['machine']}). The "
             f"size rule's search: population {pop}, "
             f"{'the EASY search' if easy else 'the in-order search'}; {gen} generations "
             "timed after the first. Worker runs: `LocalCluster` processes, one thread each.",
             "", "| run | wall s / generation | decode s / generation | generations / hour "
             "| same front |", "|---|---|---|---|---|"]
    for k, v in rows.items():
        lines.append(f"| {k} | {v['wall_s_per_gen']:.3f} | {v['decode_s_per_gen']:.3f} | "
                     f"{3600 / v['wall_s_per_gen']:.0f} | {v.get('same_front', '-')} |")
    lines += ["", f"2 workers against 1: {doc['speedup_2_over_1']:.2f}x the generations per "
              "hour.", "", f"Transfer: one generation's chromosomes ({X.nbytes / 1e6:.1f} MB) to "
              f"a worker and back in {transfer:.3f} s; the driver's own work and the "
              f"transfers take {rest:.3f} s of each generation on 1 worker.", "",
              "Estimate, not a measurement (decodes split evenly over the workers, the "
              "driver's part unchanged): " + ", ".join(
                  f"{w} workers about {g:.0f} generations per hour" for w, g in
                  estimate.items()) + "."]
    atomic_write(out / "remote_eval.md", "\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
