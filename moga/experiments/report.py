"""``moga report``: statistics of a sweep's results store.

Per job-set, the objectives of every run are divided by the FCFS schedule's,
the union of all fronts of that job-set gives the reference front for IGD+,
and the hypervolume is taken against (1.1, 1.1). Tables give the median and
interquartile range per trace and algorithm; a Wilcoxon signed-rank test
(scipy) compares each algorithm's hypervolume with MOGA's, paired by job-set
and seed.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import numpy as np

from ..metrics import igd_plus, normalized_hypervolume, reference_front, spread
from ..model.export import format_number
from ..outputs import atomic_write, check_out, check_writable, output_set, safe_name
from .sweep.store import StoreError, foreign_runs, load_results

__all__ = ["run_metrics", "summarize", "wilcoxon_vs", "make_report"]

_METRICS = ("hv", "igd_plus", "spread", "makespan_change_pct", "energy_change_pct",
            "wall_time_s")


def run_metrics(rows, fronts) -> list[dict]:
    """One dict per run: ids and the metrics of ``_METRICS``."""
    by_jobset = defaultdict(list)
    for r in rows:
        by_jobset[(r["trace"], r["jobset"])].append(r)
    out = []
    for (_trace, _js), runs in sorted(by_jobset.items()):
        ref = _ref(runs[0])
        normed = {r["run_id"]: fronts[r["run_id"]] / ref for r in runs}
        R = reference_front(list(normed.values()))
        for r in runs:
            F = normed[r["run_id"]]
            out.append({
                "run_id": r["run_id"], "trace": r["trace"], "jobset": r["jobset"],
                "algorithm": r["algorithm"], "seed": r["seed"],
                "hv": normalized_hypervolume(fronts[r["run_id"]], ref),
                # Deb's spread is a two-objective measure: NaN for three.
                "igd_plus": igd_plus(F, R),
                "spread": spread(F, R) if F.shape[1] == 2 else float("nan"),
                "makespan_change_pct": 100 * (r["makespan_s"] / ref[0] - 1),
                "energy_change_pct": 100 * (r["energy_J"] / ref[1] - 1),
                "wall_time_s": r["wall_time_s"],
            })
    return out


def _ref(row) -> np.ndarray:
    """The FCFS values a run's objectives are divided by (``ref`` of a sweep of other
    objectives than makespan and energy)."""
    if "ref" in row:
        return np.asarray(row["ref"], dtype=float)
    return np.array([row["ref_makespan_s"], row["ref_energy_J"]])


def summarize(metrics) -> list[dict]:
    """Median and IQR of every metric per (trace, algorithm)."""
    groups = defaultdict(list)
    for m in metrics:
        groups[(m["trace"], m["algorithm"])].append(m)
    out = []
    for (trace, algo), ms in sorted(groups.items()):
        row = {"trace": trace, "algorithm": algo, "runs": len(ms)}
        for k in _METRICS:
            v = np.array([m[k] for m in ms], dtype=float)
            q1, med, q3 = np.percentile(v, [25, 50, 75])
            row[f"{k}_median"] = float(med)
            row[f"{k}_iqr"] = float(q3 - q1)
        out.append(row)
    return out


def wilcoxon_vs(metrics, baseline="MOGA", key="hv") -> list[dict]:
    """Wilcoxon signed-rank test of each algorithm's ``key`` against ``baseline``'s, per trace.

    Pairs are (job-set, seed). ``p`` is None when there are fewer than two
    non-zero differences.
    """
    from scipy.stats import wilcoxon

    by = defaultdict(dict)
    for m in metrics:
        by[(m["trace"], m["algorithm"])][(m["jobset"], m["seed"])] = m[key]
    out = []
    for (trace, algo), vals in sorted(by.items()):
        base = by.get((trace, baseline))
        if algo == baseline or base is None:
            continue
        pairs = sorted(set(vals) & set(base))
        a = np.array([vals[p] for p in pairs])
        b = np.array([base[p] for p in pairs])
        diff = a - b
        p = None
        stat = None
        if np.count_nonzero(diff) >= 2:
            res = wilcoxon(a, b)
            p, stat = float(res.pvalue), float(res.statistic)
        out.append({"trace": trace, "algorithm": algo, "versus": baseline, "metric": key,
                    "pairs": len(pairs), "median_difference": float(np.median(diff)) if pairs
                    else float("nan"), "statistic": stat, "p_value": p})
    return out


def _write_csv(path, rows):
    if not rows:
        atomic_write(path, "")
        return
    keys = list(rows[0])
    lines = [",".join(keys)]
    for r in rows:
        lines.append(",".join("" if r[k] is None else format_number(r[k]) for k in keys))
    atomic_write(path, "\n".join(lines) + "\n")


def make_report(out, dest=None) -> dict:
    """Write the report of a results store: report.md, CSV tables and plots.

    Returns the paths written, by kind.
    """

    out = Path(out)
    # The report is refused in the store's root and run rows, where its tables would sit
    # among the rows it reads; its default folder, STORE/report, is its own.
    reads, within = [out], [out / "runs", out / "fronts"]
    if dest is not None:
        check_out(dest, "report", reads, within)
    if not out.is_dir():
        raise StoreError(f"{out}: not a results store ({'a file' if out.exists() else 'no such folder'}"
                         "); give the --out folder of moga sweep")
    if not (out / "runs").is_dir():
        raise StoreError(f"{out}: not a results store (no runs/ folder); give the --out folder "
                         "of moga sweep")
    foreign = foreign_runs(out)
    rows, fronts = load_results(out, foreign="drop")
    if not rows:
        raise ValueError(f"{out}: no finished runs of the recorded configuration in this "
                         "results store")
    dest = check_writable(Path(dest) if dest else out / "report",
                          "--out" if dest else "report folder")
    metrics = run_metrics(rows, fronts)
    with output_set(dest, "report", {"store": str(out)}, reads, within) as oset:
        written = _write_report(oset, out, dest, rows, fronts, metrics, foreign)
    return written


def _write_report(oset, out, dest, rows, fronts, metrics, foreign) -> dict:
    """The report's files, written through the output set ``oset`` of ``dest``."""
    from ..plot import plot_box, plot_front

    summary = summarize(metrics)
    tests = wilcoxon_vs(metrics)
    _write_csv(oset / "metrics.csv", metrics)
    _write_csv(oset / "summary.csv", summary)
    _write_csv(oset / "wilcoxon.csv", tests)
    written = {"tables": [dest / "metrics.csv", dest / "summary.csv", dest / "wilcoxon.csv"],
               "plots": [], "foreign": foreign}
    traces = sorted({m["trace"] for m in metrics})
    algos = list(dict.fromkeys(r["algorithm"] for r in rows))
    for trace in traces:
        data = {a: [m["hv"] for m in metrics if m["trace"] == trace and m["algorithm"] == a]
                for a in algos}
        name = f"hv_{safe_name(trace)}.png"
        plot_box({a: v for a, v in data.items() if v}, ylabel="hypervolume (FCFS = 0.01)",
                 title=f"{trace}: hypervolume per run", path=oset / name)
        written["plots"].append(dest / name)
    by_js = defaultdict(list)
    for r in rows:
        by_js[r["jobset"]].append(r)
    for js, runs in sorted(by_js.items()):
        seed = min(r["seed"] for r in runs)
        ref = _ref(runs[0])
        sel = {r["algorithm"]: fronts[r["run_id"]] for r in runs if r["seed"] == seed}
        main = sel.pop("MOGA", None)
        points = {a: tuple(F[0]) for a, F in sel.items() if len(F) == 1}
        others = {a: F for a, F in sel.items() if len(F) > 1}
        if main is None:
            main = reference_front(list(sel.values()))
        name = f"fronts_{safe_name(js)}.png"
        if len(ref) == 2 and "objectives" not in runs[0]:
            plot_front(main, baselines={"FCFS": tuple(ref), **points}, fronts=others,
                       path=oset / name, title=f"{js} (seed {seed})")
        else:  # other objectives: the front as a scatter matrix, the others as points
            from ..plot import plot_front_matrix

            plot_front_matrix(main, runs[0]["objectives"].split(","),
                              baselines={"FCFS": tuple(ref), **points}, path=oset / name,
                              title=f"{js} (seed {seed})")
        written["plots"].append(dest / name)
    md = ["# Sweep report", "", f"Results store `{out}`: {len(rows)} runs, "
          f"{len(by_js)} job-sets, algorithms {', '.join(algos)}."
          + (f" Left out: {len(foreign)} run row(s) that do not belong to the store's recorded "
             f"configuration (written by another sweep into the same folder)."
             if foreign else ""), "",
          "Objectives divided by FCFS's on the same job-set; hv against (1.1, 1.1) (FCFS alone: "
          "0.0100); IGD+ against the union of all fronts of the job-set; spread: Deb's Delta. "
          "Front algorithms are represented by their knee in the makespan and energy changes.",
          ""]
    md += ["| trace | algorithm | runs | hv median (IQR) | IGD+ median (IQR) | spread median "
           "| Δ makespan % | Δ energy % | time s |", "|---|---|---|---|---|---|---|---|---|"]
    for s in summary:
        md.append(f"| {s['trace']} | {s['algorithm']} | {s['runs']} | {s['hv_median']:.4f} "
                  f"({s['hv_iqr']:.4f}) | {s['igd_plus_median']:.4f} ({s['igd_plus_iqr']:.4f}) | "
                  f"{s['spread_median']:.3f} | {s['makespan_change_pct_median']:+.1f} | "
                  f"{s['energy_change_pct_median']:+.1f} | {s['wall_time_s_median']:.1f} |")
    if tests:
        md += ["", "Wilcoxon signed-rank test of hypervolume against MOGA (pairs: job-set x seed):",
               "", "| trace | algorithm | pairs | median difference | p-value |",
               "|---|---|---|---|---|"]
        for t in tests:
            pv = "n/a" if t["p_value"] is None else f"{t['p_value']:.3g}"
            md.append(f"| {t['trace']} | {t['algorithm']} | {t['pairs']} | "
                      f"{t['median_difference']:+.4f} | {pv} |")
    md += [""] + [f"![{p.stem}]({p.name})" for p in written["plots"]] + [""]
    atomic_write(oset / "report.md", "\n".join(md))
    written["report"] = dest / "report.md"
    atomic_write(oset / "report.json", json.dumps({"summary": summary, "wilcoxon": tests,
                                                   "foreign_runs": foreign}, indent=2) + "\n")
    return written
