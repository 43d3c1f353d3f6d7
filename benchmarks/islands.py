"""Island runs (``moga.run(..., islands=N)``) against one population: quality and wall time.

On the quality study's convergence job-sets (``benchmarks/quality.py``: 1,000 jobs
each, default federation sized to its trace) and against its stored reference
fronts (``results/quality/``, which this benchmark does not change):

``evaluations``
    Equal total evaluations: one population of ``2 G`` generations (and of
    ``G``, the default run, for scale) against 2
    islands of ``G`` and 4 islands of ``G / 2`` (``G`` = ``--gen``, default the
    default search's 240), each run in one process with one Numba thread, two
    runs side by side; then 4x: one population of ``4 G`` against 4 islands of
    ``G`` (``--no-4x`` skips it). Hypervolume as a percentage of the
    reference's, medians over ``--seeds`` seeds and the job-sets.
``wall``
    Equal wall time on this machine's 2 workers: 2 islands of ``G``
    generations on a Dask ``LocalCluster`` of 2 worker processes (one thread
    each), against one population in this process with every core's Numba
    threads for as long as the islands took, with each epoch's wall time, the longest
    island's compute time in it, and the size of an island's state.
``estimate``
    From the measured epoch costs, an estimate (not a measurement) of the wall
    time of W islands of ``G`` generations on W workers (8, 16, 64), and of
    their quality from the measured gains of more evaluations.

Writes ``results/islands.md`` and ``results/islands.json``::

    python benchmarks/islands.py                 # about 30 minutes on 2 cores
    python benchmarks/islands.py --seeds 1 --sets HPC2N CTC-SP2 --no-4x
    python benchmarks/islands.py --part wall     # keep the first part, redo the rest
    python benchmarks/islands.py --quick --out /tmp/islands   # a smoke test, a minute

Traces are found through ``moga.resolve_trace`` (``MOGA_TRACES``).
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import platform
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

import quality  # noqa: E402
from quality import CONVERGENCE, _jobset, _load_reference  # noqa: E402

from moga.outputs import atomic_write  # noqa: E402

#: Workers of the estimate.
SCALE = (8, 16, 64)


def _threads(n=1):
    import numba

    numba.set_num_threads(max(1, min(n, numba.config.NUMBA_NUM_THREADS)))


def _pct(res, name) -> float:
    """Hypervolume of ``res`` as a percentage of the reference front of ``name``'s."""
    from moga.metrics import normalized_hypervolume

    return 100 * res.hv / normalized_hypervolume(_load_reference(name), res.reference)


def _quick(out: Path) -> None:
    """Shrink the study to a smoke test (``--quick``): quality's quick job-set (40 jobs of
    the bundled month) and a reference front from one longer run, under ``out``."""
    import types

    import moga

    global CONVERGENCE
    quality._quick(types.SimpleNamespace(), out)
    CONVERGENCE = quality.CONVERGENCE
    name, trace_file, start, release = CONVERGENCE[0]
    js, fed = _jobset(trace_file, start=start, release=release)
    ref = moga.run(js, fed, seed=0, n_gen=32, pop_size=12).F
    quality.STORE.mkdir(parents=True, exist_ok=True)
    np.savetxt(quality._reference_file(name), ref, delimiter=",", header="makespan,energy",
               comments="")


def _sets(names):
    return [c for c in CONVERGENCE if names is None or c[0] in names]


def _task(args):
    """One run: ``(label, set, seed, pct, wall, evaluations)``."""
    label, (name, trace_file, start, release), seed, islands, n_gen, pop = args
    _threads(1)
    import moga

    js, fed = _jobset(trace_file, start=start, release=release)
    r = moga.run(js, fed, seed=seed, n_gen=n_gen, pop_size=pop, islands=islands)
    return label, name, seed, _pct(r, name), r.wall_time, r.n_evals


def evaluations(args, pool) -> list:
    G, P = args.gen, args.pop
    configs = [("one population, G", None, G), ("one population, 2G", None, 2 * G),
               ("2 islands, G", 2, G),
               ("4 islands, G/2", 4, G // 2)]
    if not args.no_4x:
        configs += [("one population, 4G", None, 4 * G), ("4 islands, G", 4, G)]
    tasks = [(label, c, 1 + s, n, g, P) for label, n, g in configs for c in _sets(args.sets)
             for s in range(args.seeds)]
    tasks.sort(key=lambda t: -(t[4] * (t[3] or 1)))  # longest first
    runs = list(pool.map(_task, tasks))
    rows = []
    for label, n, g in configs:
        mine = [r for r in runs if r[0] == label]
        rows.append({"config": label, "islands": n or 1, "generations": g,
                     "pct": {c[0]: [r[3] for r in mine if r[1] == c[0]] for c in _sets(args.sets)},
                     "median": float(np.median([r[3] for r in mine])),
                     "worst": float(min(r[3] for r in mine)),
                     "wall_s": float(np.median([r[4] for r in mine])),
                     "evals": float(np.median([r[5] for r in mine]))})
        print(f"{label}: median {rows[-1]['median']:.2f}%", flush=True)
    return rows


def wall(args) -> dict:
    """One population on every core against 2 islands on a 2-worker LocalCluster."""
    import distributed

    import moga
    from moga.evolution import islands as isl
    from moga.evolution.params import GAParams

    G, P = args.gen, args.pop
    cpus = os.cpu_count() or 1
    out = {"runs": [], "cpus": cpus}
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None,
                                  env={"NUMBA_NUM_THREADS": "1"}) as cluster, \
            distributed.Client(cluster) as client:
        for c in _sets(args.sets):
            name, trace_file, start, release = c
            js, fed = _jobset(trace_file, start=start, release=release)
            moga.run(js, fed, n_gen=2, pop_size=P, islands=2, client=client)  # load the kernels
            for s in range(args.seeds):
                two = moga.run(js, fed, seed=1 + s, n_gen=G, pop_size=P, islands=2,
                               client=client)
                # One population on every core, for as long as the islands took.
                _threads(cpus)
                one = moga.run(js, fed, seed=1 + s, n_gen=100 * G, pop_size=P,
                               time_limit=two.wall_time)
                ew, ec = two.info["epoch_wall_s"], two.info["epoch_compute_s"]
                out["runs"].append({"set": name, "seed": 1 + s, "one_pct": _pct(one, name),
                                    "one_wall_s": one.wall_time,
                                    "one_gen": int(one.history["n_gen"][-1]),
                                    "two_pct": _pct(two, name),
                                    "two_wall_s": two.wall_time, "epoch_wall_s": ew,
                                    "epoch_compute_s": ec})
                r = out["runs"][-1]
                print(f"wall {name} seed {1 + s}: one {r['one_pct']:.2f}% in "
                      f"{one.wall_time:.1f} s ({r['one_gen']} generations), 2 islands "
                      f"{r['two_pct']:.2f}% in {two.wall_time:.1f} s", flush=True)
        # The size of one island's state, as it travels to and from the workers.
        name, trace_file, start, release = _sets(args.sets)[0]
        js, fed = _jobset(trace_file, start=start, release=release)
        params = GAParams(pop_size=P, n_gen=G).for_moga()
        res = moga.run(js, fed, n_gen=2, pop_size=P)
        spec = isl._Spec(token="size", jobset=js, federation=fed, model="fluid",
                         objectives=("makespan", "energy"), use_blacklist=True,
                         backfill="none", params=params, initial=None,
                         reference=res.reference, seed_F=None, seed_X=None)
        state = isl._epoch(spec, {"index": 0, "seed": 1}, None, isl.Migration().interval)
        out["state_bytes"] = len(pickle.dumps(state, protocol=5))
        # Round trips of a state-sized payload through the scheduler: the transfer cost.
        payload = state
        t = []
        for i in range(5):
            t0 = time.perf_counter()
            client.submit(isl._identity, payload, key=f"islands-bench-rt-{i}",
                          pure=False).result()
            t.append(time.perf_counter() - t0)
        out["round_trip_s"] = float(np.median(t))
    return out


def estimate(ev, wl, args) -> list:
    """Wall time and quality of W islands of G generations on W workers: an estimate."""
    from moga.evolution.islands import Migration

    epochs = -(-args.gen // Migration().interval)
    compute = float(np.median([np.median(r["epoch_compute_s"][1:] or r["epoch_compute_s"])
                               for r in wl["runs"]]))
    first = float(np.median([r["epoch_compute_s"][0] for r in wl["runs"]]))
    over = float(np.median([np.median(np.subtract(r["epoch_wall_s"], r["epoch_compute_s"]))
                            for r in wl["runs"]]))
    # Per island, the driver sends and gathers one state: its round trip, serialised.
    rt = wl["round_trip_s"]
    one_wall = float(np.median([r["one_wall_s"] for r in wl["runs"]]))
    # Quality: hv % against log2(W), a line through the measured runs of W islands of G
    # generations each (2 and 4 islands).
    pts = [(np.log2(r["islands"]), r["median"]) for r in ev
           if r["islands"] > 1 and r["generations"] == args.gen]
    slope, icpt = (np.polyfit(*zip(*pts, strict=True), 1) if len({p[0] for p in pts}) > 1
                   else (0.0, pts[0][1]))
    rows = []
    for w in SCALE:
        t = first + (epochs - 1) * compute + epochs * (over + max(0, w - 2) * rt)
        rows.append({"workers": w, "islands": w, "wall_s": t, "one_population_wall_s": one_wall,
                     "pct": float(icpt + slope * np.log2(w))})
    return rows, {"epochs": epochs, "compute_s": compute, "first_s": first, "overhead_s": over,
                  "round_trip_s": rt, "slope": float(slope), "intercept": float(icpt)}


def report(ev, wl, est, model, args, elapsed, ev_from=None) -> str:
    from moga.evolution.islands import Migration

    G = args.gen
    sets = [c[0] for c in _sets(args.sets)]
    lines = ["# Island runs against one population", "",
             f"Generated by `python benchmarks/islands.py{' ' + ' '.join(args.argv) if args.argv else ''}` "
             f"on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
             f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores "
             f"(shared with other work while it ran), {elapsed:.0f} s. Job-sets: "
             f"{', '.join(sets)} of `benchmarks/quality.py` (1,000 jobs each); seeds "
             f"{'1' if args.seeds == 1 else f'1-{args.seeds}'}; G = {G} generations, "
             f"population {args.pop}; migration every 20 generations, 5 migrants, ring. "
             "hv %: the front's hypervolume as a percentage of the stored reference front's.",
             ""]
    if args.seeds < 4 or len(sets) < len(CONVERGENCE):
        lines += [f"Reduced to {args.seeds} seed(s) and {len(sets)} of {len(CONVERGENCE)} "
                  "job-sets to fit the time available; medians of so few runs are rough.", ""]
    lines += ["## Equal total evaluations", "",
              "Each run in one process, one Numba thread (islands one after the other), two "
              "runs side by side.", "",
              "| run | " + " | ".join(sets) + " | median | worst | evaluations | wall s |",
              "|---|" + "---|" * len(sets) + "---|---|---|---|"]
    for r in ev:
        lines.append(f"| {r['config']} ({r['islands']} x {r['generations']}) | "
                     + " | ".join(f"{np.median(r['pct'][s]):.1f}%" for s in sets)
                     + f" | {r['median']:.2f}% | {r['worst']:.1f}% | {r['evals']:.0f} | "
                     f"{r['wall_s']:.1f} |")
    lines += ["", "Percentages above 100% are fronts better than the stored reference fronts "
              "(`results/quality/`), which predate today's optimiser."]
    if ev_from:
        lines += ["", f"This part comes from the run of {ev_from} (`--part wall` reran the "
                  "rest)."]
    lines += ["", "## Equal wall time on this machine's 2 workers", "",
              f"2 islands of {G} generations on a Dask LocalCluster of 2 worker processes, "
              "one thread each, against one population in this process with "
              f"{wl['cpus']} Numba threads for as long as the islands took (`time_limit`).",
              "", "| set | seed | one population: hv % | generations | wall s | 2 islands: hv % "
              "| wall s |", "|---|---|---|---|---|---|---|"]
    for r in wl["runs"]:
        lines.append(f"| {r['set']} | {r['seed']} | {r['one_pct']:.2f}% | {r['one_gen']} | "
                     f"{r['one_wall_s']:.1f} | {r['two_pct']:.2f}% | {r['two_wall_s']:.1f} |")
    lines.append(f"| median | | {np.median([r['one_pct'] for r in wl['runs']]):.2f}% | "
                 f"{np.median([r['one_gen'] for r in wl['runs']]):.0f} | "
                 f"{np.median([r['one_wall_s'] for r in wl['runs']]):.1f} | "
                 f"{np.median([r['two_pct'] for r in wl['runs']]):.2f}% | "
                 f"{np.median([r['two_wall_s'] for r in wl['runs']]):.1f} |")
    lines += ["", "## Epoch costs, and an estimate for more workers", "",
              "Measured on the 2-worker runs above: an epoch "
              f"({min(G, Migration().interval)} generations of one island) "
              f"computes in {model['compute_s']:.2f} s (the first, with the initial "
              f"population, {model['first_s']:.2f} s); the epoch's wall time exceeds its "
              f"longest island's compute time by {model['overhead_s']:.3f} s (scheduling, "
              f"sending and gathering the states, migration, the union's hypervolume). An "
              f"island's state is {wl['state_bytes'] / 1e6:.1f} MB (population and archive "
              f"chromosomes); one round trip of a state through the scheduler took "
              f"{model['round_trip_s'] * 1e3:.0f} ms here.", "",
              "**Estimate, not a measurement**: W islands of G generations on W workers "
              "(one island per worker), wall = first epoch + (epochs - 1) x epoch compute + "
              "epochs x (overhead + (W - 2) x state round trip: the driver sends and "
              "gathers every state); quality from a line through the medians of the runs "
              "of 2 and 4 islands of G generations above against log2(W) (hv % = "
              f"{model['intercept']:.2f} "
              f"+ {model['slope']:.2f} log2(W)); above 100% it only says that the stored "
              "reference front, which today's long runs already pass, no longer measures "
              "the gain. Real clusters add network latency and slower transfers than this "
              "machine's loopback, and an unloaded core computes an epoch faster than this "
              "shared one did.", "",
              "| workers = islands | estimated wall s | estimated hv % |", "|---|---|---|"]
    for r in est:
        lines.append(f"| {r['workers']} | {r['wall_s']:.0f} | {r['pct']:.1f}% |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gen", type=int, default=240, help="G: generations of the default run")
    ap.add_argument("--pop", type=int, default=50, help="population of every run and island")
    ap.add_argument("--seeds", type=int, default=2, help="seeds per job-set")
    ap.add_argument("--sets", nargs="+", default=None, choices=[c[0] for c in CONVERGENCE],
                    help="a subset of the job-sets (default: all five)")
    ap.add_argument("--no-4x", action="store_true", help="skip the 4x-evaluations runs")
    ap.add_argument("--workers", type=int, default=2, help="runs side by side (default 2)")
    ap.add_argument("--quick", action="store_true",
                    help="a smoke test: one set, one seed, G = 8, population 12")
    ap.add_argument("--part", choices=["all", "wall"], default="all",
                    help="wall: rerun the equal-wall part and the estimate only, keeping the "
                         "equal-evaluations part of OUT/islands.json")
    ap.add_argument("--out", default=str(ROOT / "results"))
    args = ap.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    if args.quick:
        args.gen, args.pop, args.seeds, args.sets = 8, 12, 1, ["bundled"]
        if args.out == str(ROOT / "results"):
            args.out = tempfile.mkdtemp(prefix="islands-quick-")
        _quick(Path(args.out))
    t0 = time.perf_counter()
    out = Path(args.out)
    ev_from = None
    if args.part == "wall":
        old = json.loads((out / "islands.json").read_text())
        ev, ev_from = old["evaluations"], old["date"]
    else:
        with (quality._InProcess() if args.quick else ProcessPoolExecutor(args.workers)) as pool:
            ev = evaluations(args, pool)
    wl = wall(args)
    est, model = estimate(ev, wl, args)
    out.mkdir(parents=True, exist_ok=True)
    elapsed = time.perf_counter() - t0
    atomic_write(out / "islands.md", report(ev, wl, est, model, args, elapsed, ev_from))
    atomic_write(out / "islands.json", json.dumps(
        {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
         "machine": platform.processor() or platform.machine(), "cpus": os.cpu_count(),
         "args": {k: v for k, v in vars(args).items()}, "evaluations": ev, "wall": wl,
         "evaluations_from": ev_from, "estimate": est, "model": model}, indent=2, default=str) + "\n")
    print(f"wrote {out}/islands.md and islands.json ({elapsed:.0f} s)")


if __name__ == "__main__":
    main()
