"""The default ``moga run`` on RICC's 55,103-job month: its CPU, memory and front (not a test).

Three runs of :func:`moga.run` on the coverage month of RICC that
``benchmarks/quality.py`` uses (RICC-2010-2, 30-day window 1, 8,192 nodes,
``default@auto``, fluid model, seed 1), each in its own process with one
Numba thread (so that its peak RSS is its own and its CPU seconds are
comparable), two at a time:

* ``default``: ``moga.run(js, fed, seed=1)``, the size rule's pick
  (:mod:`moga.evolution.sizing`), which stops at the budget;
* ``in-order``: the in-order search at 100 x 700 (``easy_search=False``),
  beside the default, stopped once past 1.05 times the budget;
* ``easy-search``: the EASY search at 50 x 240 (the default before the
  size rule), after them, stopped once it has used ``--cap`` times the
  budget in CPU seconds; its cost per generation gives the estimate of a
  whole run.

A run whose draws are the default's own (the same search, population and
seed pairs: a run's draws do not depend on its generation budget) is not
run again (``_same_draws``): its row is the default's.

The table sets each run's hypervolume at the default's CPU seconds (the
last generation reached within them) beside the default's final one.
Writes ``results/default_budget.md`` and ``.json``::

    python benchmarks/default_budget.py [--budget 900]
    python benchmarks/default_budget.py --quick     # 60 bundled jobs in this process
"""

from __future__ import annotations

import argparse
import datetime
import gc
import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

from _bench import add_options, out_dir

from moga.evolution.params import BUDGET, EASY_BUDGET
from moga.outputs import atomic_write

HERE = Path(__file__).resolve().parent
RUNS = ("default", "easy-search", "in-order")
#: The RICC month: (trace file, days, window, max_procs).
MONTH = ("RICC-2010-2.swf.gz", 30, 1, 8192)


def _jobset(quick: bool):
    import moga

    if quick:
        from moga.model.workload import default_trace_path

        tr = moga.load_swf(default_trace_path())
        fed = moga.Federation.preset("default")
        return tr.jobset(start=0, n_jobs=60, federation=fed), fed
    name, days, window, max_procs = MONTH
    tr = moga.load_swf(moga.resolve_trace(name), max_procs=max_procs)
    fed = moga.Federation.load("default@auto", auto_nodes=tr.auto_nodes)
    return tr.jobset(start=tr.windows(days=days)[window], days=days, federation=fed), fed


def _warm():
    """Compile (or load from the cache) both decoders on a small set: not the runs' cost.

    Called in a process of its own first (``--warm``), then in each run's process, which
    then loads the kernels from Numba's cache."""
    import moga

    fed = moga.Federation.preset("default")
    js = moga.load_default().jobset(n_jobs=30, federation=fed)
    moga.run(js, fed, pop_size=4, n_gen=2, seed=1)
    moga.run(js, fed, pop_size=4, n_gen=2, seed=1, params={"easy_search": False})


def one(kind: str, budget: float, limit: float, quick: bool, progress=None) -> dict:
    """One run in this process, the comparisons stopped after ``limit`` CPU-s: its CPU
    seconds, peak RSS and hypervolume per generation (each generation's ``[n, CPU-s, hv]``
    also appended to the file ``progress`` if given, for a run cut short)."""
    import moga

    js, fed = _jobset(quick)
    _warm()
    gc.collect()
    loaded = _status("VmRSS")
    _reset_peak()
    rows = []
    t0 = time.process_time()

    def hook(n, n_evals, hv):
        rows.append((int(n), time.process_time() - t0, float(hv)))
        if progress is not None:
            with open(progress, "a") as f:  # a log, read only if the run is cut short
                f.write(json.dumps(rows[-1]) + "\n")

    kw = {}
    if kind == "in-order":
        kw["params"] = {"easy_search": False}
    elif kind == "easy-search":
        kw["params"] = {"easy_search": True}
    if kind != "default":
        kw["interrupt"] = lambda: time.process_time() - t0 >= limit
    else:
        kw["cpu_budget"] = budget  # the size rule's; the others are cut at `limit`
    res = moga.run(js, fed, seed=1, on_generation=hook, **kw)
    cpu = time.process_time() - t0
    return {"run": kind, "jobset": js.name, "n_jobs": len(js), "cpu_s": cpu,
            "wall_s": res.wall_time, "rss_before_mb": loaded,
            "run_peak_rss_mb": _status("VmHWM"),
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "hv": res.hv, "generations": int(res.history["n_gen"][-1]),
            "pop_size": res.params.pop_size, "n_gen": res.params.n_gen,
            "stopped_by": res.info["stopped_by"], "default": res.info["default"],
            "per_generation": rows}


def _status(key: str) -> float | None:
    """A ``/proc/self/status`` memory line in MB (None where there is none)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def _reset_peak() -> None:
    """Reset the kernel's peak RSS of this process (Linux), so that ``VmHWM`` is the run's."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        pass


def _at(rows, cpu):
    """``(generation, hv)`` of the last generation finished within ``cpu`` seconds."""
    within = [r for r in rows if r[1] <= cpu]
    return (within[-1][0], within[-1][2]) if within else (0, float("nan"))


def _planned(ch) -> tuple[str, str]:
    """``(generations, note)``: the generations the size rule gave a run (at most ``n_gen``,
    until the CPU budget) and, where the record has it, the estimate's count
    (``estimated_gen``) to open the sentence's bracket with."""
    if ch.get("estimated_gen") is None:
        return f"{ch['n_gen']} generations", ""
    return (f"up to {ch['n_gen']} generations until the budget",
            f"{ch['estimated_gen']} by the estimate; ")


def _table(runs, budget, args) -> str:
    d = runs["default"]
    ch = d["default"]
    gens, note = _planned(ch)
    lines = [f"# The default `moga run` by size: {d['jobset']} ({d['n_jobs']:,} jobs)", "",
             f"Generated by `python benchmarks/default_budget.py{' --quick' if args.quick else ''}"
             f"` on {datetime.date.today().isoformat()} ({platform.machine()}, "
             f"{platform.system()}, Python {platform.python_version()}): runs two at a time, "
             "each in its own process with one Numba thread, seed 1, fluid model; CPU "
             "seconds of the `moga.run` call (decoders compiled before), peak RSS of the "
             "process.", "",
             f"The size rule (`moga.evolution.sizing`, budget {budget:.0f} CPU-s) measured one "
             f"submit-order decode at {ch['easy_decode_s']:.3f} CPU-s with EASY and "
             f"{ch['in_order_decode_s']:.4f} in order, estimated the EASY search at 50 x 240 at "
             f"{ch['easy_search_cpu_s']:.0f} CPU-s and picked the **{ch['search']}**, population "
             f"{ch['pop_size']} x {gens} ({note}seed pairs: "
             f"{ch['seed_candidates'] or 'all'}; estimate {ch['estimated_cpu_s']:.0f} CPU-s).",
             "", "| run | CPU-s | peak RSS MB of the run (process) | generations | "
             "hv at the default's CPU-s | final hv | CPU-s per generation (to the first) | "
             "est. CPU-s of the whole run |",
             "|---|---|---|---|---|---|---|---|"]
    for kind in RUNS:
        derived = kind not in runs
        r = ({**d, "n_gen": (BUDGET if kind == "in-order" else EASY_BUDGET)[1]} if derived
             else runs[kind])
        gens, hv = _at(r["per_generation"], d["cpu_s"])
        rows = r["per_generation"]
        first = rows[0][1] if rows else float("nan")
        per = ((rows[-1][1] - first) / (rows[-1][0] - 1)) if len(rows) > 1 else float("nan")
        whole = first + per * (r["n_gen"] - 1)
        label = {"default": "default (size rule)", "in-order": "in-order search 100 x 700",
                 "easy-search": "EASY search 50 x 240"}[kind] + (" \\*" if derived else "")
        run_peak = "?" if r["run_peak_rss_mb"] is None else f"{r['run_peak_rss_mb']:.0f}"
        lines.append(f"| {label} | {r['cpu_s']:.0f} | {run_peak} ({r['peak_rss_mb']:.0f}) | "
                     f"{r['generations']} (of {r['n_gen']}) | {hv:.4f} (gen {gens}) | "
                     f"{r['hv']:.4f} | {per:.3g} ({first:.3g}) | {whole:.0f} |")
    for kind, (search, (pop, gen)) in (("in-order", ("in-order search", BUDGET)),
                                       ("easy-search", ("EASY search", EASY_BUDGET))):
        if kind not in runs:
            lines += ["", f"\\* Not run: the default picked the {search} at population {pop} "
                      "with every seed pair, and a run's draws do not depend on its generation "
                      f"budget, so up to the default's last generation the {search} at {pop} x "
                      f"{gen} is the default's run itself (the same front at the same CPU-s); "
                      f"its row repeats the default's, with the whole run estimated at {gen} "
                      "generations."]
    lines += ["", "Peak RSS of the run: the process's high-water mark from the call to "
              "`moga.run` on (reset through `/proc/self/clear_refs`), the job-set and the "
              f"decoders loaded before ({d['rss_before_mb']:.0f} MB for the default's process "
              "then); in brackets the whole process's, the trace's loading included.",
              "", "hv: normalised hypervolume of the archive's front (reference 1.1 x the "
              "submit order). The default stops before a generation would pass the budget "
              f"(or at its generations), the EASY search once it has used {args.cap:g} x the "
              "budget, the in-order search (run beside the default) once it has used 1.05 x "
              "the budget; \"est. CPU-s of the whole run\" is the CPU to the "
              "first generation (seeding included) plus the mean CPU per later generation "
              "times the rest of the run's generations.", ""]
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budget", type=float, default=None,
                    help="CPU seconds of the size rule (default moga's, 900)")
    ap.add_argument("--cap", type=float, default=0.6,
                    help="the EASY search stops after this many budgets of CPU (0.6); the "
                         "in-order search after 1.05 budgets")
    ap.add_argument("--limit", type=float, help=argparse.SUPPRESS)
    ap.add_argument("--resume", action="store_true",
                    help="reuse the runs whose part files an interrupted call left in --out")
    ap.add_argument("--one", choices=RUNS, help=argparse.SUPPRESS)
    ap.add_argument("--json", help=argparse.SUPPRESS)
    ap.add_argument("--warm", action="store_true", help=argparse.SUPPRESS)
    add_options(ap, "60 jobs of the bundled month, the measured rule on a 2 CPU-s budget")
    args = ap.parse_args(argv)
    if args.budget is None:
        from moga.evolution.sizing import CPU_BUDGET

        args.budget = 2.0 if args.quick else CPU_BUDGET
    if args.warm:
        _warm()
        return 0
    if args.one:
        atomic_write(Path(args.json), json.dumps(one(args.one, args.budget, args.limit,
                                                     args.quick, args.json + ".log")) + "\n")
        return 0
    out = out_dir(args)
    easy_limit = args.cap * args.budget
    if args.quick:  # in this process, one after the other
        runs = {"default": one("default", args.budget, None, True)}
        for kind, limit in (("in-order", 1.05 * args.budget), ("easy-search", easy_limit)):
            if not _same_draws(runs["default"], kind):
                runs[kind] = one(kind, args.budget, limit, True)
        return _write(out, runs, args)
    env = {**os.environ, "NUMBA_NUM_THREADS": "1"}
    # Compile into Numba's cache in a process of its own: a compile's memory stays resident,
    # and the runs' processes, which only load the kernels, would count it as theirs.
    subprocess.run([sys.executable, str(HERE / "default_budget.py"), "--warm"], env=env,
                   check=True)

    def start(kind, limit):
        part = out / f"default_budget-{kind}.part.json"
        if args.resume and part.exists():
            return part, None
        cmd = [sys.executable, str(HERE / "default_budget.py"), "--one", kind, "--json",
               str(part), "--budget", str(args.budget), "--limit", str(limit)]
        return part, subprocess.Popen(cmd, env=env)

    def finish(kind, part, proc):
        if proc is not None and proc.wait() != 0:
            raise SystemExit(f"the {kind} run failed (exit {proc.returncode})")
        return json.loads(part.read_text())

    # The default and the in-order search side by side: the default stops at the budget,
    # so the in-order search's limit is known before the default ends.
    default = start("default", args.budget)
    beside = start("in-order", 1.05 * args.budget)
    runs = {"default": finish("default", *default)}
    later = None if _same_draws(runs["default"], "easy-search") else start("easy-search",
                                                                           easy_limit)
    if _same_draws(runs["default"], "in-order"):
        beside[1].kill()
        beside[1].wait()
        beside[0].unlink(missing_ok=True)
    else:
        runs["in-order"] = finish("in-order", *beside)
    if later is not None:
        runs["easy-search"] = finish("easy-search", *later)
    _write(out, runs, args)
    for kind in RUNS:  # the parts, now in default_budget.json
        for name in (f"default_budget-{kind}.part.json", f"default_budget-{kind}.part.json.log"):
            (out / name).unlink(missing_ok=True)
    return 0


def _same_draws(default: dict, kind: str) -> bool:
    """Whether the run ``kind`` (the in-order search at 100 x 700 or the EASY search at
    50 x 240) is the default run continued: the default picked that search at the same
    population with every seed pair, and a run's draws do not depend on its generation
    budget (tests/test_sizing.py checks this), so up to the default's last generation the
    two are the same run."""
    ch = default["default"]
    search, pop = (("in-order search", BUDGET[0]) if kind == "in-order"
                   else ("easy search", EASY_BUDGET[0]))
    return ch["search"] == search and ch["pop_size"] == pop and ch["seed_candidates"] is None


def _write(out, runs, args) -> int:
    atomic_write(out / "default_budget.json", json.dumps(
        {"budget": args.budget, "cap": args.cap, "runs": runs}, indent=1) + "\n")
    atomic_write(out / "default_budget.md", _table(runs, args.budget, args))
    print(f"wrote {out}/default_budget.md and .json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
