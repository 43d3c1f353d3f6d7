"""MOGA's solution quality: convergence to a reference front, and coverage of the baselines.

Two parts (a benchmark, not a test; runs in parallel processes):

``convergence``
    1,000-job batch job-sets from three traces (HPC2N, CTC-SP2, NASA-iPSC) and
    two in release mode (jobs arrive at their submit times: HPC2N, CTC-SP2),
    each on the default federation sized to its trace (``default@auto``). A
    reference front per job-set is the non-dominated union of long runs
    (``--ref-seeds`` seeds of each kind of ``--ref-backfill``: ``--ref-gen``
    generations in order and in EASY's space, ``--ref-search-gen`` of the EASY
    search) and of every run ever measured against it; it is stored in
    ``results/quality/``,
    ``--long-runs`` adds long runs of the current optimiser to it, and
    ``--reference`` starts it afresh from them.
    The in-order search (``easy_search=False``, 100 x :data:`DEFAULT_GEN`, the MOGA
    paper's search and ``moga.run``'s default before the EASY search; "default run"
    in the tables) runs with ``--seeds`` seeds, and so do runs of ``--matched-gen``
    generations (default 200, an earlier default); the table gives their hypervolume as a percentage of
    the reference's (objectives divided by the submit order's, reference
    point 1.1) and their wall time, and the wall time of one default run
    alone on the machine (all cores: the issue's budget is about 10 s on 2).
    A second table has runs searched in EASY's space (``backfill="easy"``,
    ``--easy-pop`` x ``--easy-gen``, about the default run's wall time) with
    the same seeds; every hypervolume takes the in-order submit order as base.
    A third table has in-order runs that search through EASY
    (``GAParams.easy_search``, the same population and generations as the
    EASY-space runs; at 50 x 240 this is ``moga.run``'s default): in-order
    fronts, measured like the default run's.
    The baselines (FCFS, EASY, FCFS-greenest, EASY-greenest, GA-MF seed 1)
    run once per job-set, and the table counts the baseline points that every
    default run's front weakly dominates. The second and third tables test
    each set's percentages against the default run's (two-sided
    Mann-Whitney U), and a figure draws each table's 50% attainment surface
    (the front that half of the seeds reach) against the reference.
``coverage``
    One monthly job-set of each shared trace (30 days; 1 day of LCG, whose
    11 days hold 188,041 jobs), federation ``default@auto``: FCFS, EASY,
    FCFS-greenest, EASY-greenest and GA-MF, MOGA and MOGA without blacklist
    (seed 1). The table counts the baseline points MOGA's front weakly
    dominates and compares the hypervolumes (objectives divided by FCFS's).

``ablation``
    The default run on the convergence job-sets with this optimiser's parts
    switched off one by one (:data:`ABLATION`), ``--seeds`` seeds, against
    the stored reference fronts (which it does not change).
``budget``
    ``moga.run``'s default search (the EASY search, population 50) on the
    convergence job-sets at ``--budget-gen`` generations (default: the
    default budget's, twice and four times as many), ``--budget-seeds``
    seeds, against the stored reference fronts (which it does not change):
    how the quality grows with the budget.

Writes ``results/quality.md`` and ``results/quality.json``, and with the convergence part
``results/quality_attainment.png`` (the median runs' fronts against the references)::

    python benchmarks/quality.py                      # both parts, stored references
    python benchmarks/quality.py --reference          # recompute the reference fronts too
    python benchmarks/quality.py --part convergence --long-runs --seeds 0   # raise them
    python benchmarks/quality.py --part convergence --seeds 10
    python benchmarks/quality.py --part ablation
    python benchmarks/quality.py --part budget
    python benchmarks/quality.py --quick              # every part, seconds, to a temporary folder

Traces are found through ``moga.resolve_trace`` (``MOGA_TRACES``).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
from _bench import add_options, out_dir

from moga.evolution.params import BUDGET, EASY_BUDGET
from moga.evolution.parts import MOGA_CLUSTER_RATE
from moga.outputs import atomic_path, atomic_write

ROOT = Path(__file__).resolve().parents[1]
STORE = ROOT / "results" / "quality"

#: The convergence job-sets: (name, trace file, first job, release mode).
CONVERGENCE = (
    ("HPC2N", "HPC2N-2002-2.2-cln.swf.gz", 0, False),
    ("CTC-SP2", "CTC-SP2-1996-3.1-cln.swf.gz", 10000, False),
    ("NASA-iPSC", "NASA-iPSC-1993-3.1-cln.swf.gz", 5000, False),
    ("HPC2N-release", "HPC2N-2002-2.2-cln.swf.gz", 20000, True),
    ("CTC-SP2-release", "CTC-SP2-1996-3.1-cln.swf.gz", 10000, True),
)
#: The coverage job-sets: (name, trace file, days, which window, max_procs if headerless).
COVERAGE = (
    ("HPC2N", "HPC2N-2002-2.2-cln.swf.gz", 30, 1, None),
    ("RICC", "RICC-2010-2.swf.gz", 30, 1, 8192),
    ("CEA-Curie", "CEA-Curie-2011-2.1-cln.swf.gz", 30, 1, None),
    ("CTC-SP2", "CTC-SP2-1996-3.1-cln.swf.gz", 30, 1, None),
    ("NASA-iPSC", "NASA-iPSC-1993-3.1-cln.swf.gz", 30, 1, None),
    ("METACENTRUM", "METACENTRUM-2009-2.swf.gz", 30, 1, None),
    ("LCG", "LCG.swf.gz", 1, 1, None),
)
BASELINES = ("FCFS", "EASY", "FCFS-greenest", "EASY-greenest", "GA-MF")
#: Generations of the coverage runs (population 100).
COVERAGE_GEN = 200
#: Generations of the in-order search (``easy_search=False``), the tables' "default run".
DEFAULT_GEN = BUDGET[1]
#: The ablation's variants: (label, GA parameters, generations), from the first optimiser
#: of issue 10 to today's default.
_FIXED_SEEDS = {"select_seeds": False}
#: The rate of whole-cluster moves in every step of the ablation but the last.
_CLUSTER_MOVES = {"cluster_rate": 0.2}
_ABLATION_STEPS = (
    ("random mating, crossover 0.9, no archive (the previous optimiser)",
     {"mating_neighbours": 0, "prob_order_crossover": 0.9, "prob_blacklist_crossover": 0.9,
      "archive_size": 0, "resequence_rate": 0, **_FIXED_SEEDS}, 200),
    ("+ neighbourhood mating",
     {"prob_order_crossover": 0.9, "prob_blacklist_crossover": 0.9, "archive_size": 0,
      "resequence_rate": 0, **_FIXED_SEEDS}, 200),
    ("+ crossover probability 0.5", {"archive_size": 0, "resequence_rate": 0, **_FIXED_SEEDS},
     200),
    ("+ archive with the heuristics' allocation seeds", {"resequence_rate": 0, **_FIXED_SEEDS},
     200),
    ("+ re-sequencing (rate 0.03)", dict(_FIXED_SEEDS), 200),
    (f"+ {DEFAULT_GEN} generations", dict(_FIXED_SEEDS), None),
    ("+ seeds picked by survival", {"fit_seeds": False}, None),
    ("+ grid blacklists fitted to wide jobs", {}, None),
)
ABLATION = (*((label, {**params, **_CLUSTER_MOVES}, n_gen)
              for label, params, n_gen in _ABLATION_STEPS),
            ("+ whole-cluster moves for 80% of the children, not 20% (the default)", {}, None))


#: Jobs of a convergence job-set.
N_JOBS = 1000
#: Generations of :func:`_alone`'s runs (None: ``moga.run``'s defaults).
ALONE_GEN = None


def _quick(args, out):
    """Shrink the study to seconds (``--quick``): 40 jobs of the bundled month, 2 generations,
    every part, reference fronts under ``out`` (module globals, so one process only)."""
    from moga.model.workload import default_trace_path

    global STORE, CONVERGENCE, COVERAGE, COVERAGE_GEN, DEFAULT_GEN, N_JOBS, ALONE_GEN, ABLATION
    path = str(default_trace_path())
    STORE = out / "quality"
    CONVERGENCE = (("bundled", path, 0, False),)
    COVERAGE = (("bundled", path, 1, 0, None),)
    COVERAGE_GEN = DEFAULT_GEN = ALONE_GEN = 2
    N_JOBS = 40
    ABLATION = tuple((label, params, None) for label, params, _ in ABLATION[-2:])
    args.part, args.workers = "all", 1
    args.ref_gen = args.ref_search_gen = args.easy_gen = args.matched_gen = 2
    args.ref_seeds, args.seeds, args.easy_pop, args.budget_seeds = 1, 2, 8, 1
    args.budget_gen = [2]


class _InProcess:
    """A stand-in for ``ProcessPoolExecutor`` that maps in this process (``--quick``)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def map(self, fn, items):
        return map(fn, items)


def _threads():
    import numba

    numba.set_num_threads(1)


def _jobset(trace_file, n_jobs=None, start=0, days=None, window=None, max_procs=None,
            release=False):
    import moga

    n_jobs = N_JOBS if n_jobs is None else n_jobs

    tr = moga.load_swf(moga.resolve_trace(trace_file), max_procs=max_procs)
    fed = moga.Federation.load("default@auto", auto_nodes=tr.auto_nodes)
    if days is not None:
        start = tr.windows(days=days)[window]
        return tr.jobset(start=start, days=days, federation=fed), fed
    return tr.jobset(start=start, n_jobs=n_jobs, federation=fed, batch=not release), fed


def _moga_task(args):
    """One MOGA run: ``(name, kind, seed, F, hv, wall, reference objectives)``.

    ``args`` is ``(name, trace file, first job, release, seed, generations, kind[, GA
    parameters[, backfill]])``; with the in-order decoder the run searches in order
    (``easy_search=False``) unless the parameters say otherwise. The hypervolume and the
    reference objectives are those of the in-order submit order whatever the decoder
    searched, so that runs of both decoders are measured on one scale.
    """
    name, trace_file, start, release, seed, n_gen, kind, *rest = args
    params = rest[0] if rest else None
    backfill = rest[1] if len(rest) > 1 else "none"
    if backfill == "none":
        # In order unless the parameters ask for the EASY search (moga.run's default).
        params = {"easy_search": False, **(params or {})}
    _threads()
    import moga
    from moga.metrics import normalized_hypervolume

    js, fed = _jobset(trace_file, start=start, release=release)
    r = moga.run(js, fed, seed=seed, n_gen=n_gen, params=params, backfill=backfill)
    if backfill == "none":
        return name, kind, seed, r.F, r.hv, r.wall_time, r.reference
    s = moga.evaluate(js, fed)
    base = np.array([s.makespan, s.energy])
    return name, kind, seed, r.F, normalized_hypervolume(r.F, base), r.wall_time, base


def _baselines_task(args):
    """The baselines' points on a convergence job-set: ``(name, {baseline: [ms, energy]})``."""
    name, trace_file, start, release = args
    _threads()
    from moga.baselines import run_algorithm

    js, fed = _jobset(trace_file, start=start, release=release)
    return name, {a: run_algorithm(a, js, fed, seed=1).F[0].tolist() for a in BASELINES}


def _older_rate(rows) -> str:
    """A sentence for a table whose runs predate MOGA's current cluster-move rate, else ''."""
    rate = MOGA_CLUSTER_RATE
    # Rows without the record ran before it was kept, at the former rate 0.2.
    used = sorted({r.get("moga_cluster_rate", 0.2) for r in rows} - {rate})
    if not used:
        return ""
    return (f" These runs predate MOGA's default rate of whole-cluster moves {rate} (they "
            f"used {', '.join(map(str, used))}); rerun this part to refresh them.")


def _long_rows(abl) -> int:
    """Rows of the ablation table from its step to the default generations on."""
    first = next((i for i, r in enumerate(abl)
                  if r["variant"].startswith(f"+ {DEFAULT_GEN} generations")), len(abl))
    return len(abl) - first


def _reference_file(name) -> Path:
    """The stored reference front of convergence job-set ``name``."""
    return STORE / f"reference_{name}.csv"


def _load_reference(name) -> np.ndarray:
    """The stored reference front of ``name`` (makespan, energy), one row per point."""
    return np.loadtxt(_reference_file(name), delimiter=",", skiprows=1, ndmin=2)


def _covered(front, point) -> bool:
    """Whether ``front`` weakly dominates ``point`` (relative tolerance 1e-12)."""
    return bool(np.any(np.all(np.asarray(front) <= np.asarray(point) * (1 + 1e-12), axis=1)))


def _long_run(args, kind) -> tuple:
    """``(generations, kind, GA parameters, backfill)`` of a long run for the references:
    ``kind`` "none" (in order, pop 100), "easy" (EASY's space, pop 100) or "search" (in
    order searched through EASY, pop 50)."""
    if kind == "search":
        return (args.ref_search_gen, "reference",
                {"easy_search": True, "pop_size": EASY_BUDGET[0]}, "none")
    return args.ref_gen, "reference", {"pop_size": BUDGET[0]}, kind


def _alone(trace_file, start, release=False) -> tuple:
    """Wall times of one in-order run (the tables' default run) and one ``moga.run`` with
    its defaults (the EASY search), seed 1, each alone on the machine, all Numba threads."""
    import moga

    js, fed = _jobset(trace_file, start=start, release=release)
    in_order = {"easy_search": False}
    moga.run(js, fed, seed=1, n_gen=2, params=in_order)  # load the kernels
    moga.run(js, fed, seed=1, n_gen=2)
    return (moga.run(js, fed, seed=1, n_gen=ALONE_GEN, params=in_order).wall_time,
            moga.run(js, fed, seed=1, n_gen=ALONE_GEN).wall_time)


def _coverage_task(args):
    name, trace_file, days, window, max_procs = args
    _threads()
    from moga.baselines import run_algorithm
    from moga.metrics import normalized_hypervolume

    js, fed = _jobset(trace_file, days=days, window=window, max_procs=max_procs)
    t0 = time.perf_counter()
    # COVERAGE_GEN generations for MOGA, the ablation and GA-MF (each at its own
    # population), fewer than their defaults, to bound the time of the largest months.
    params = {"n_gen": COVERAGE_GEN}
    res = {a: run_algorithm(a, js, fed, seed=1, params=params)
           for a in (*BASELINES, "MOGA", "MOGA without blacklist")}
    fcfs = res["FCFS"].F[0]
    points = {a: res[a].F[0] for a in BASELINES}
    front = res["MOGA"].F
    covered = {a: _covered(front, p) for a, p in points.items()}
    hv = {a: normalized_hypervolume(r.F, fcfs) for a, r in res.items()}
    return {"trace": name, "jobset": js.name, "n_jobs": len(js), "federation": fed.name,
            "covered": covered, "hv": hv, "points": {a: p.tolist() for a, p in points.items()},
            "moga_front": front.tolist(), "wall_s": time.perf_counter() - t0,
            "moga_s": res["MOGA"].wall_time, "moga_cluster_rate": MOGA_CLUSTER_RATE,
            "moga_search": _search_words(res["MOGA"].params)}


def _search_words(p) -> str:
    """MOGA's search and budget (resolved :class:`GAParams`) in words."""
    kind = "the EASY search" if p.easy_search else "the in-order search"
    return f"{kind}, pop {p.pop_size} x {p.n_gen}"


def convergence(args, pool):
    from moga.metrics import (
        attainment_surface,
        missing_hypervolume_by_range,
        normalized_hypervolume,
        reference_front,
    )

    STORE.mkdir(parents=True, exist_ok=True)
    tasks = []
    for name, trace_file, start, release in CONVERGENCE:
        if args.reference or args.long_runs or not _reference_file(name).exists():
            tasks += [(name, trace_file, start, release, 100 + s, *_long_run(args, kind))
                      for kind in args.ref_backfill for s in range(args.ref_seeds)]
        tasks += [(name, trace_file, start, release, 1 + s, DEFAULT_GEN, "default")
                  for s in range(args.seeds)]
        tasks += [(name, trace_file, start, release, 1 + s, args.matched_gen, "matched")
                  for s in range(args.seeds)]
        if args.easy_gen:
            tasks += [(name, trace_file, start, release, 1 + s, args.easy_gen, "easy",
                       {"pop_size": args.easy_pop}, "easy") for s in range(args.seeds)]
            tasks += [(name, trace_file, start, release, 1 + s, args.easy_gen, "twin",
                       {"pop_size": args.easy_pop, "easy_search": True}, "none")
                      for s in range(args.seeds)]
    base_points = dict(pool.map(_baselines_task, list(CONVERGENCE) if args.seeds else []))
    runs = list(pool.map(_moga_task, tasks))
    rows = []
    for name, trace_file, start, release in CONVERGENCE:
        mine = [r for r in runs if r[0] == name]
        base = mine[0][6]
        ref_file = _reference_file(name)
        fronts = [r[3] for r in mine]
        if ref_file.exists() and not args.reference:
            fronts.append(_load_reference(name))
        # Distinct points only: the stored reference is merged again at every run of this
        # benchmark, and the default runs' points, the same each time, used to pile up.
        # Sorted by makespan, then energy, as the file has always been.
        union = reference_front(fronts)
        with atomic_path(ref_file) as tmp:
            np.savetxt(tmp, union, delimiter=",", header="makespan_s,energy_J", comments="")
        ref_hv = normalized_hypervolume(union, base)
        if not args.seeds:
            print(f"{name}: reference hv {ref_hv:.4f} ({len(union)} points)", flush=True)
            continue
        defaults = [r for r in mine if r[1] == "default"]
        pct = [100 * r[4] / ref_hv for r in defaults]
        matched = [r for r in mine if r[1] == "matched"]
        easy = [r for r in mine if r[1] == "easy"]
        twin = [r for r in mine if r[1] == "twin"]
        long_runs = [r for r in mine if r[1] == "reference"]
        points = base_points[name]
        rows.append({"jobset": name, "trace": trace_file, "start": start, "release": release,
                     "base": np.asarray(base).tolist(),
                     "reference_hv": ref_hv, "reference_points": len(union),
                     "baselines": points,
                     "covered_by_seed": {a: [_covered(r[3], p) for r in defaults]
                                         for a, p in points.items()},
                     "default_hv": [r[4] for r in defaults], "default_pct": pct,
                     "default_missing_by_third": [
                         missing_hypervolume_by_range(r[3], union, base).tolist()
                         for r in defaults],
                     "default_wall_s": [r[5] for r in defaults],
                     "default_eaf50": attainment_surface([r[3] / base for r in defaults]).tolist(),
                     "matched_gen": args.matched_gen,
                     "matched_pct": [100 * r[4] / ref_hv for r in matched],
                     "matched_wall_s": [r[5] for r in matched],
                     "easy_gen": args.easy_gen, "easy_pop": args.easy_pop,
                     **_search_fields("easy", easy, union, base, points, ref_hv),
                     **_search_fields("twin", twin, union, base, points, ref_hv),
                     "long_runs": [{"seed": r[2], "hv": r[4], "wall_s": r[5]} for r in long_runs]})
        rows[-1]["alone_wall_s"], rows[-1]["alone_default_wall_s"] = _alone(
            trace_file, start, release)
        print(f"{name}: reference hv {ref_hv:.4f}; default runs "
              f"{', '.join(f'{p:.1f}%' for p in pct)}", flush=True)
    return rows


def _search_fields(kind, runs, union, base, points, ref_hv) -> dict:
    """A convergence row's record of the ``kind`` runs (hv %, thirds, wall, coverage, and
    their 50% attainment surface with objectives divided by ``base``)."""
    from moga.metrics import attainment_surface, missing_hypervolume_by_range

    if not runs:
        return {}
    return {f"{kind}_pct": [100 * r[4] / ref_hv for r in runs],
            f"{kind}_eaf50": attainment_surface([r[3] / base for r in runs]).tolist(),
            f"{kind}_missing_by_third": [
                missing_hypervolume_by_range(r[3], union, base).tolist() for r in runs],
            f"{kind}_wall_s": [r[5] for r in runs],
            f"covered_by_{kind}_seed": {a: [_covered(r[3], p) for r in runs]
                                        for a, p in points.items()}}


def ablation(args, pool):
    from moga.metrics import normalized_hypervolume

    tasks = [(name, trace_file, start, release, 1 + s, n_gen or DEFAULT_GEN, label, params)
             for label, params, n_gen in ABLATION
             for name, trace_file, start, release in CONVERGENCE for s in range(args.seeds)]
    runs = list(pool.map(_moga_task, tasks))
    refs = {name: _load_reference(name) for name, *_ in CONVERGENCE}
    rows = []
    for label, params, _ in ABLATION:
        mine = [r for r in runs if r[1] == label]
        pct = {name: [100 * r[4] / normalized_hypervolume(refs[name], r[6])
                      for r in mine if r[0] == name] for name, *_ in CONVERGENCE}
        rows.append({"variant": label, "params": params, "pct": pct,
                     "moga_cluster_rate": MOGA_CLUSTER_RATE,
                     "median": float(np.median([p for v in pct.values() for p in v])),
                     "wall_s": float(np.median([r[5] for r in mine]))})
        print(f"{label}: median {rows[-1]['median']:.1f}%", flush=True)
    return rows


def budget(args, pool):
    """``moga.run``'s default search at each of ``args.budget_gen`` generations."""
    from moga.metrics import normalized_hypervolume

    params = {"easy_search": True, "pop_size": EASY_BUDGET[0]}
    tasks = [(name, trace_file, start, release, 1 + s, g, f"budget {g}", params)
             for g in args.budget_gen
             for name, trace_file, start, release in CONVERGENCE
             for s in range(args.budget_seeds)]
    runs = list(pool.map(_moga_task, tasks))
    refs = {name: _load_reference(name) for name, *_ in CONVERGENCE}
    rows = []
    for g in args.budget_gen:
        mine = [r for r in runs if r[1] == f"budget {g}"]
        pct = {name: [100 * r[4] / normalized_hypervolume(refs[name], r[6])
                      for r in mine if r[0] == name] for name, *_ in CONVERGENCE}
        every = [p for v in pct.values() for p in v]
        rows.append({"pop_size": EASY_BUDGET[0], "n_gen": g, "pct": pct,
                     "median": float(np.median(every)), "worst": float(min(every)),
                     "mean": float(np.mean(every)),
                     "wall_s": float(np.median([r[5] for r in mine]))})
        print(f"budget {g} generations: median {rows[-1]['median']:.1f}%, worst "
              f"{rows[-1]['worst']:.1f}%", flush=True)
    return rows


def coverage(args, pool):
    return list(pool.map(_coverage_task, COVERAGE))


def _coverage_cell(by_seed) -> str:
    """``k/n`` baselines covered by every seed, naming the others and how many seeds miss them."""
    if not by_seed:
        return "n/a"
    missed = [f"{a} ({len(v) - sum(v)} seeds)" for a, v in by_seed.items() if not all(v)]
    return (f"{len(by_seed) - len(missed)}/{len(by_seed)}"
            + (": not " + ", ".join(missed) if missed else ""))


def _search_table(rows, kind) -> list:
    """Lines of the per-set table of the ``kind`` runs (``"easy"`` or ``"twin"``)."""
    from scipy.stats import mannwhitneyu

    # The EASY search at moga.run's defaults is moga.run's default run: its time alone.
    alone = kind == "twin" and all("alone_default_wall_s" in r for r in rows)
    lines = ["| job-set | hv % of reference per seed | median | worst | missing by third, "
             "fast / middle / green (median points) | wall s | "
             + ("alone, all cores: s | " if alone else "")
             + "baselines covered by every seed | against the default run: p |",
             "|---|---|---|---|---|---|---|" + ("---|" if alone else "") + "---|"]
    for r in rows:
        pct = r[f"{kind}_pct"]
        p_value = mannwhitneyu(pct, r["default_pct"], alternative="two-sided").pvalue
        thirds = np.median(np.array(r[f"{kind}_missing_by_third"]), axis=0)
        lines.append(f"| {r['jobset']} | " + ", ".join(f"{p:.1f}" for p in pct)
                     + f" | {np.median(pct):.1f}% | {np.min(pct):.1f}% | "
                     + " / ".join(f"{m:.2f}" for m in thirds) + " | "
                     f"{np.median(r[f'{kind}_wall_s']):.1f} | "
                     + (f"{r['alone_default_wall_s']:.1f} | " if alone else "")
                     + _coverage_cell(r[f"covered_by_{kind}_seed"]) + f" | {p_value:.2g} |")
    return lines


#: The figure of the convergence part, beside ``quality.md``.
ATTAINMENT_PNG = "quality_attainment.png"
#: Line styles of the runs in that figure: (key prefix, label, colour, line style).
_SURFACES = (("default", "in-order search (easy_search=False)", "tab:blue", "-"),
             ("twin", "EASY search, in order (moga.run's default)", "tab:green", "-"),
             ("easy", "EASY space (EASY's schedules)", "tab:orange", "--"))


def plot_attainment(conv, path) -> None:
    """One panel per convergence set: the reference front, each kind's 50% attainment
    surface and the baselines, objectives divided by the submit order's (written atomically)."""
    import matplotlib.pyplot as plt

    from moga.plot import _save

    fig, axes = plt.subplots(1, len(conv), figsize=(4.2 * len(conv), 4.0), squeeze=False)
    for ax, r in zip(axes[0], conv, strict=True):
        base = np.asarray(r["base"])
        ref = _load_reference(r["jobset"]) / base
        ax.step(ref[:, 0], ref[:, 1], where="post", color="0.5", lw=2.5, alpha=0.6,
                label="reference")
        for key, label, colour, style in _SURFACES:
            S = np.asarray(r.get(f"{key}_eaf50") or np.empty((0, 2)))
            if len(S):
                ax.step(S[:, 0], S[:, 1], where="post", color=colour, ls=style, lw=1.2,
                        label=label)
        for name, point in r["baselines"].items():
            q = np.asarray(point) / base
            ax.plot(*q, "k.", ms=5)
            ax.annotate(name, q, fontsize=6, xytext=(2, 2), textcoords="offset points")
        ax.set_xlim(0.98 * ref[:, 0].min(), 1.12)
        ax.set_ylim(0.98 * ref[:, 1].min(), 1.12)
        ax.set_title(r["jobset"], fontsize=9)
        ax.set_xlabel("makespan / submit order's")
    axes[0][0].set_ylabel("energy / submit order's")
    axes[0][0].legend(fontsize=7, loc="upper right")
    fig.tight_layout()
    _save(fig, path, dpi=110)


def _has_surfaces(conv) -> bool:
    """Whether every convergence row holds its attainment surfaces (rows stored before
    they were recorded do not)."""
    return bool(conv) and all(r.get("default_eaf50") for r in conv)


def _budget_lines(bud) -> list:
    """The budget part's section of the report."""
    names = list(bud[0]["pct"])
    n_seeds = len(bud[0]["pct"][names[0]])
    lines = ["## Budget: the default search with more generations", "",
             f"`moga.run`'s default search (the EASY search, population {bud[0]['pop_size']}) "
             f"at its default {EASY_BUDGET[1]} generations and at more, seeds "
             f"{'1' if n_seeds == 1 else f'1-{n_seeds}'} of each convergence job-set; hv % of "
             "the reference fronts as they stood when `--part budget` last ran (these runs "
             "do not join them); wall time: the median run, two side by side, one Numba "
             "thread each.", "",
             "| generations | " + " | ".join(f"{n}: median" for n in names)
             + " | median | worst | mean | wall s |",
             "|---|" + "---|" * len(names) + "---|---|---|---|"]
    for r in bud:
        lines.append(f"| {r['n_gen']} | "
                     + " | ".join(f"{np.median(r['pct'][n]):.1f}%" for n in names)
                     + f" | {r['median']:.1f}% | {r['worst']:.1f}% | {r['mean']:.2f}% | "
                     f"{r['wall_s']:.1f} |")
    return lines + [""]


def report(conv, cov, args, abl=(), bud=()) -> str:
    lines = ["# MOGA's solution quality", "",
             "`python benchmarks/quality.py` (convergence and coverage; `--part ablation` "
             "adds the ablation; reference fronts in `results/quality/`, restarted from long "
             "runs with `--reference`). "
             "Federation `default@auto` (the default preset sized to each trace's MaxProcs), "
             "fluid model, batch mode.", ""]
    if conv:
        lines += ["## Convergence: the default run against a reference front", "",
                  "Reference: the non-dominated union of long runs and of every run measured "
                  "against it; hypervolume with objectives divided by the submit order's, "
                  "reference point 1.1. Wall times: two runs side by side, one Numba thread "
                  "each; \"alone\": one default run (seed 1) on the otherwise idle machine. "
                  "Baselines covered: of FCFS, EASY, FCFS-greenest, EASY-greenest and GA-MF, "
                  "those whose point every seed's front weakly dominates. \"Default run\": "
                  "the MOGA paper's search over strict orders (`easy_search=False`, pop 100), "
                  "`moga.run`'s default before the EASY search; today's default is the EASY "
                  "search at 50 x 240, the third table.", "",
                  f"| job-set | reference hv | default run ({DEFAULT_GEN} generations): hv % of "
                  "reference per seed | median | worst | missing by third of the makespan "
                  "range, fast / middle / green (median points) | wall s | alone, all cores: "
                  f"wall s | {conv[0]['matched_gen']} generations: median % | wall s | "
                  "baselines covered by every seed |",
                  "|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in conv:
            thirds = np.median(np.array(r.get("default_missing_by_third",
                                              [[np.nan] * 3])), axis=0)
            cov_cell = _coverage_cell(r.get("covered_by_seed", {}))
            mode = "release mode" if r.get("release") else "batch"
            lines.append(f"| {r['jobset']} (first job {r['start']}, 1,000 jobs, {mode}) | "
                         f"{r['reference_hv']:.4f} | "
                         + ", ".join(f"{p:.1f}" for p in r["default_pct"])
                         + f" | {np.median(r['default_pct']):.1f}% | "
                         f"{np.min(r['default_pct']):.1f}% | "
                         + " / ".join(f"{m:.2f}" for m in thirds) + " | "
                         f"{np.median(r['default_wall_s']):.1f} | "
                         f"{r.get('alone_wall_s', float('nan')):.1f} | "
                         f"{np.median(r['matched_pct']):.1f}% | "
                         f"{np.median(r['matched_wall_s']):.1f} | {cov_cell} |")
        easy_rows = [r for r in conv if r.get("easy_pct")]
        if easy_rows:
            pop, gen = easy_rows[0].get("easy_pop", 100), easy_rows[0]["easy_gen"]
            lines += ["", f"The same sets searched in EASY's space (`moga.run(..., "
                      f"backfill=\"easy\", pop_size={pop}, n_gen={gen})`: the order is EASY's "
                      "queue priority; population and generations chosen to take about the "
                      "default run's wall time), the same seeds and reference fronts:", ""]
            lines += _search_table(easy_rows, "easy")
        twin_rows = [r for r in conv if r.get("twin_pct")]
        if twin_rows:
            pop, gen = twin_rows[0]["easy_pop"], twin_rows[0]["easy_gen"]
            lines += ["", "In-order runs that search through EASY (`moga.run(..., params="
                      f"{{\"easy_search\": True, \"pop_size\": {pop}, \"n_gen\": {gen}}})`: "
                      "the population evolves in EASY's space and the archive gathers the "
                      "in-order twin of each chromosome whose EASY point it admits, its EASY "
                      "start order decoded in order with each job pinned to its EASY nodes; the "
                      "front is in-order, as the default run's), the same seeds and reference "
                      "fronts:", ""]
            lines += _search_table(twin_rows, "twin")
        allp = [p for r in conv for p in r["default_pct"]]
        allm = [p for r in conv for p in r["matched_pct"]]
        alle = [p for r in easy_rows for p in r["easy_pct"]]
        allt = [p for r in twin_rows for p in r["twin_pct"]]
        lines += ["", f"Median over job-sets and seeds: {np.median(allp):.1f}% of the reference "
                  f"with the default {DEFAULT_GEN} generations (worst seed {np.min(allp):.1f}%), "
                  f"{np.median(allm):.1f}% with {conv[0]['matched_gen']} generations (goal: a "
                  "median of at least 97%, every seed at least 93%). The missing hypervolume "
                  "per third of the reference's makespan range "
                  "(`moga.metrics.missing_hypervolume_by_range`) sums to the run's shortfall; "
                  "the first third is the fast end."
                  + (f" In EASY's space: a median of {np.median(alle):.1f}% (worst seed "
                     f"{np.min(alle):.1f}%)." if alle else "")
                  + (f" In order, searched through EASY: a median of {np.median(allt):.1f}% "
                     f"(worst seed {np.min(allt):.1f}%)." if allt else "")
                  + " The p values are two-sided Mann-Whitney U tests of a table's "
                  f"{len(conv[0]['default_pct'])} percentages per set against the default "
                  "run's on the same set.", ""]
        if _has_surfaces(conv):
            lines += [f"![The median runs' fronts]({ATTAINMENT_PNG})", "",
                      f"`{ATTAINMENT_PNG}`: per job-set, the reference front and the 50% "
                      "attainment surface of each table's runs (`moga.metrics."
                      "attainment_surface`: the points that half of the seeds' fronts reach), "
                      "with the baselines; objectives divided by the submit order's, the "
                      "hypervolume's bounding point at (1.1, 1.1) in the corner.", ""]
    if abl:
        names = list(abl[0]["pct"])
        lines += ["## Ablation: what each part of the optimiser adds", "",
                  "The default run on the convergence job-sets, pop 100 x 200 generations "
                  f"(the last {_long_rows(abl)} rows: {DEFAULT_GEN}), "
                  "parts added one by one; hv % of the reference fronts as they stood when "
                  "`--part ablation` last ran (the references have grown since, so these "
                  "percentages are higher than the convergence table's), median over the "
                  "seeds of each job-set and over all runs." + _older_rate(abl), "",
                  "| variant | " + " | ".join(names) + " | median | wall s |",
                  "|---|" + "---|" * len(names) + "---|---|"]
        for r in abl:
            lines.append(f"| {r['variant']} | "
                         + " | ".join(f"{np.median(r['pct'][n]):.1f}%" for n in names)
                         + f" | {r['median']:.1f}% | {r['wall_s']:.1f} |")
        lines.append("")
    if bud:
        lines += _budget_lines(bud)
    if cov:
        lines += ["## Coverage: baseline points MOGA's front weakly dominates", "",
                  "One monthly job-set per trace (LCG: one day), MOGA and the ablation with "
                  f"{cov[0].get('moga_search', 'the in-order search, pop 100 x 200')}, seed 1; "
                  "hypervolume with objectives divided by FCFS's."
                  + _older_rate(cov), "",
                  "| trace | jobs | " + " | ".join(BASELINES) + " | covered | hv MOGA | "
                  "hv without blacklist | MOGA s |",
                  "|---|---|" + "---|" * len(BASELINES) + "---|---|---|---|"]
        for r in cov:
            cells = ["yes" if r["covered"][a] else "**no**" for a in BASELINES]
            lines.append(f"| {r['trace']} | {r['n_jobs']} | " + " | ".join(cells)
                         + f" | {sum(r['covered'].values())}/{len(BASELINES)} | "
                         f"{r['hv']['MOGA']:.4f} | {r['hv']['MOGA without blacklist']:.4f} | "
                         f"{r['moga_s']:.0f} |")
        n_cov = sum(sum(r["covered"].values()) for r in cov)
        n_all = len(BASELINES) * len(cov)
        better = sum(r["hv"]["MOGA"] > r["hv"]["MOGA without blacklist"] for r in cov)
        lines += ["", f"{n_cov} of {n_all} baseline points covered; MOGA's hypervolume above "
                  f"the ablation's on {better} of {len(cov)} traces.", ""]
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", choices=["convergence", "coverage", "ablation", "budget", "both"],
                    default="both", help="both: convergence and coverage")
    ap.add_argument("--reference", action="store_true",
                    help="recompute the reference fronts from long runs")
    ap.add_argument("--long-runs", action="store_true",
                    help="add long runs of the current optimiser to the stored reference fronts")
    ap.add_argument("--ref-gen", type=int, default=3000, help="generations of a long run")
    ap.add_argument("--ref-seeds", type=int, default=2,
                    help="long runs per job-set and decoder")
    ap.add_argument("--ref-backfill", nargs="+", choices=["none", "easy", "search"],
                    default=["none", "easy", "search"],
                    help="the long runs: in order, in EASY's space, and in order searched "
                         "through EASY (default all three)")
    ap.add_argument("--ref-search-gen", type=int, default=1200,
                    help="generations of a long EASY search (population 50)")
    ap.add_argument("--easy-gen", type=int, default=240,
                    help="generations of the EASY-space runs (backfill='easy'), chosen with "
                         "--easy-pop to take about the default run's wall time; 0 skips them")
    ap.add_argument("--easy-pop", type=int, default=50,
                    help="population of the EASY-space runs")
    ap.add_argument("--seeds", type=int, default=10, help="default runs per job-set")
    ap.add_argument("--matched-gen", type=int, default=200,
                    help="generations of the second column (default: the previous default, 200)")
    ap.add_argument("--budget-gen", type=int, nargs="+",
                    default=[EASY_BUDGET[1], 2 * EASY_BUDGET[1], 4 * EASY_BUDGET[1]],
                    help="generations of the budget part's runs")
    ap.add_argument("--budget-seeds", type=int, default=4,
                    help="runs per job-set and generation count of the budget part")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    add_options(ap, "every part on 40 bundled jobs, 2 generations, in this process")
    args = ap.parse_args(argv)
    out = out_dir(args)
    if args.quick:
        _quick(args, out)
    t0 = time.perf_counter()
    pool_of = _InProcess if args.quick else (lambda: ProcessPoolExecutor(args.workers))
    if args.seeds == 0 and args.part in ("convergence", "both"):
        # Only long runs: they raise the stored reference fronts; the report stays as it is.
        with pool_of() as pool:
            convergence(args, pool)
        return
    with pool_of() as pool:
        conv = convergence(args, pool) if args.part in ("convergence", "both", "all") else []
        cov = coverage(args, pool) if args.part in ("coverage", "both", "all") else []
        abl = ablation(args, pool) if args.part in ("ablation", "all") else []
        bud = budget(args, pool) if args.part in ("budget", "all") else []
    old = {}
    if (out / "quality.json").exists():
        old = json.loads((out / "quality.json").read_text())
    record = {"convergence": conv or old.get("convergence", []),
              "coverage": cov or old.get("coverage", []),
              "ablation": abl or old.get("ablation", []),
              "budget": bud or old.get("budget", []),
              "wall_s": time.perf_counter() - t0}
    atomic_write(out / "quality.json", json.dumps(record, indent=1, default=float) + "\n")
    if _has_surfaces(record["convergence"]):
        plot_attainment(record["convergence"], out / ATTAINMENT_PNG)
    text = report(record["convergence"], record["coverage"], args, record["ablation"],
                  record["budget"])
    atomic_write(out / "quality.md", text + "\n")
    print(text)


if __name__ == "__main__":
    main()
